/* A TCP congestion control in BPF (struct_ops of struct tcp_congestion_ops): Reno, from the kernel's
 * own kfuncs for it (bpf_tcp_ca_check_kfunc_ids). Loading creates the struct_ops map and verifies each
 * member's program against the member's prototype; registering it would be attaching, not done here. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

extern __u32 tcp_reno_ssthresh(struct sock *sk) __ksym;
extern __u32 tcp_reno_undo_cwnd(struct sock *sk) __ksym;
extern __u32 tcp_slow_start(struct tcp_sock *tp, __u32 acked) __ksym;
extern void tcp_cong_avoid_ai(struct tcp_sock *tp, __u32 w, __u32 acked) __ksym;

SEC("struct_ops/btfslim_ssthresh")
__u32 BPF_PROG(btfslim_ssthresh, struct sock *sk)
{
	return tcp_reno_ssthresh(sk);
}

SEC("struct_ops/btfslim_undo_cwnd")
__u32 BPF_PROG(btfslim_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC("struct_ops/btfslim_cong_avoid")
void BPF_PROG(btfslim_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;

	if (tp->snd_cwnd < tp->snd_ssthresh) {
		acked = tcp_slow_start(tp, acked);
		if (!acked)
			return;
	}
	tcp_cong_avoid_ai(tp, tp->snd_cwnd, acked);
}

SEC(".struct_ops")
struct tcp_congestion_ops btfslim_reno = {
	.ssthresh = (void *)btfslim_ssthresh,
	.undo_cwnd = (void *)btfslim_undo_cwnd,
	.cong_avoid = (void *)btfslim_cong_avoid,
	.name = "btfslim_reno",
};

char LICENSE[] SEC("license") = "GPL";
