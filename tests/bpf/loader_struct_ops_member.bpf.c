/* A struct_ops map of struct tcp_congestion_ops as a newer kernel might declare it: with a member the
 * running kernel's struct lacks, set to a program. libbpf fails the load ("struct_ops init_kern
 * btfslim_ca: Cannot find member btfslim_absent_op in kernel BTF"); `btfslim check` names the member.
 * The struct is the object's own (no vmlinux.h): libbpf matches members by name. */
#include <linux/types.h>
#include <bpf/bpf_helpers.h>

struct sock;

struct tcp_congestion_ops {
	__u32 (*ssthresh)(struct sock *sk);
	void (*cong_avoid)(struct sock *sk, __u32 ack, __u32 acked);
	__u32 (*undo_cwnd)(struct sock *sk);
	void (*btfslim_absent_op)(struct sock *sk);
	char name[16];
};

SEC("struct_ops/btfslim_ssthresh")
__u32 btfslim_ssthresh(unsigned long long *ctx)
{
	return 2;
}

SEC("struct_ops/btfslim_undo_cwnd")
__u32 btfslim_undo_cwnd(unsigned long long *ctx)
{
	return 2;
}

SEC("struct_ops/btfslim_cong_avoid")
void btfslim_cong_avoid(unsigned long long *ctx)
{
}

SEC("struct_ops/btfslim_absent_op")
void btfslim_absent_op(unsigned long long *ctx)
{
}

SEC(".struct_ops")
struct tcp_congestion_ops btfslim_ca = {
	.ssthresh = (void *)btfslim_ssthresh,
	.cong_avoid = (void *)btfslim_cong_avoid,
	.undo_cwnd = (void *)btfslim_undo_cwnd,
	.btfslim_absent_op = (void *)btfslim_absent_op,
	.name = "btfslim_ca",
};

char LICENSE[] SEC("license") = "GPL";
