/* TCP retransmits against the running kernel: tcp_retransmit_skb(struct sock *, struct sk_buff *,
 * int), as tcpretrans reports them. sock -> skc_state, sk_protocol (a bitfield before Linux 5.6, a
 * u16 since: read with BPF_CORE_READ_BITFIELD_PROBED, which handles both), tcp_sock -> total_retrans,
 * sk_buff -> len. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

struct retrans_event {
	unsigned int state;
	unsigned int protocol;
	unsigned int total_retrans;
	unsigned int skb_len;
	unsigned long long count;
};

struct retrans_event last_retrans;

SEC("kprobe/tcp_retransmit_skb")
int BPF_KPROBE(trace_tcp_retransmit, struct sock *sk, struct sk_buff *skb)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;

	last_retrans.state = BPF_CORE_READ(sk, __sk_common.skc_state);
	last_retrans.protocol = BPF_CORE_READ_BITFIELD_PROBED(sk, sk_protocol);
	last_retrans.total_retrans = BPF_CORE_READ(tp, total_retrans);
	last_retrans.skb_len = BPF_CORE_READ(skb, len);
	__sync_fetch_and_add(&last_retrans.count, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
