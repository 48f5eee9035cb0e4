/* A struct_ops map of the kernel's struct tcp_congestion_ops, as the kernel declares it (vmlinux.h):
 * the kernel has struct tcp_congestion_ops and struct bpf_struct_ops_tcp_congestion_ops, and every
 * member. libbpf loads it (creating the map; registering it is attaching, which the test does not do). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

SEC("struct_ops/btfslim_ssthresh")
__u32 BPF_PROG(btfslim_ssthresh, struct sock *sk)
{
	return 2;
}

SEC("struct_ops/btfslim_undo_cwnd")
__u32 BPF_PROG(btfslim_undo_cwnd, struct sock *sk)
{
	return 2;
}

SEC("struct_ops/btfslim_cong_avoid")
void BPF_PROG(btfslim_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
}

SEC(".struct_ops")
struct tcp_congestion_ops btfslim_ca = {
	.ssthresh = (void *)btfslim_ssthresh,
	.undo_cwnd = (void *)btfslim_undo_cwnd,
	.cong_avoid = (void *)btfslim_cong_avoid,
	.name = "btfslim_ca",
};

char LICENSE[] SEC("license") = "GPL";
