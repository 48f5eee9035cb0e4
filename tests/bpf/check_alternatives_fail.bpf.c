/* A handler as fentry and as kprobe (libbpf-tools' tcpconnlat naming) where both variants read a field no
 * kernel has: whichever one its loader keeps, the object does not load. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

struct sock___btfslim_future {
	int sk_btfslim_absent;
	int sk_btfslim_absent_too;
} __attribute__((preserve_access_index));

__u64 future;

SEC("fentry/tcp_v4_connect")
int BPF_PROG(fentry_tcp_v4_connect, struct sock *sk)
{
	future += BPF_CORE_READ((struct sock___btfslim_future *)sk, sk_btfslim_absent);
	return 0;
}

SEC("kprobe/tcp_v4_connect")
int BPF_KPROBE(tcp_v4_connect, struct sock *sk)
{
	future += BPF_CORE_READ((struct sock___btfslim_future *)sk, sk_btfslim_absent_too);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
