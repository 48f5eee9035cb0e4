/* A union read through another of its members, and an array indexed within it: an IPv6 peer address
 * read as four words (in6_u.u6_addr32) where the kernel's walk of union in6_u takes its first member,
 * u6_addr8, and a socket reached through the BTF pointer a helper returns (bpf_skc_to_tcp_sock), read as
 * the inet_sock it begins with. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

__u32 last_daddr_word;
__u16 last_sport;
__u32 last_cwnd;

SEC("fentry/tcp_connect")
int BPF_PROG(on_connect, struct sock *sk)
{
	last_daddr_word = sk->__sk_common.skc_v6_daddr.in6_u.u6_addr32[3];

	struct tcp_sock *tp = bpf_skc_to_tcp_sock(sk);
	if (!tp)
		return 0;
	struct inet_sock *inet = (struct inet_sock *)tp;
	last_sport = inet->inet_sport;
	last_cwnd = tp->snd_cwnd;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
