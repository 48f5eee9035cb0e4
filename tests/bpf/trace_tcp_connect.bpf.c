/* TCP connects against the running kernel: tcp_connect(struct sock *), as tcpconnect reports them.
 * sock -> __sk_common (skc_family, skc_daddr, skc_rcv_saddr, skc_dport), inet_sock -> inet_sport,
 * tcp_sock -> srtt_us, snd_cwnd, mss_cache (the casts are the kernel's inet_sk()/tcp_sk()). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#define AF_INET 2

struct connect_event {
	unsigned int saddr;
	unsigned int daddr;
	unsigned short sport;
	unsigned short dport;
	unsigned int srtt_us;
	unsigned int snd_cwnd;
	unsigned int mss;
};

struct connect_event last_connect;

SEC("kprobe/tcp_connect")
int BPF_KPROBE(trace_tcp_connect, struct sock *sk)
{
	struct inet_sock *inet = (struct inet_sock *)sk;
	struct tcp_sock *tp = (struct tcp_sock *)sk;

	if (BPF_CORE_READ(sk, __sk_common.skc_family) != AF_INET)
		return 0;
	last_connect.saddr = BPF_CORE_READ(sk, __sk_common.skc_rcv_saddr);
	last_connect.daddr = BPF_CORE_READ(sk, __sk_common.skc_daddr);
	last_connect.dport = __builtin_bswap16(BPF_CORE_READ(sk, __sk_common.skc_dport));
	last_connect.sport = __builtin_bswap16(BPF_CORE_READ(inet, inet_sport));
	last_connect.srtt_us = BPF_CORE_READ(tp, srtt_us) >> 3;
	last_connect.snd_cwnd = BPF_CORE_READ(tp, snd_cwnd);
	last_connect.mss = BPF_CORE_READ(tp, mss_cache);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
