/* sk_buff's control block read as the structure a layer keeps there: TCP's struct tcp_skb_cb lives in
 * skb->cb (char[48]); the verifier checks the load against the array, which it lets a program read as
 * scratch space, whatever struct the program casts it to. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

__u32 last_seq;
__u32 last_len;

SEC("fentry/tcp_rcv_established")
int BPF_PROG(on_established, struct sock *sk, struct sk_buff *skb)
{
	const struct tcp_skb_cb *cb = (const struct tcp_skb_cb *)&skb->cb[0];

	last_seq = cb->seq;
	last_len = skb->len;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
