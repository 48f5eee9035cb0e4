/* A typed ksym: the per-CPU variable runqueues, found as a VAR in the kernel's BTF; the verifier types
 * what bpf_per_cpu_ptr gives from its type, struct rq. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

extern const struct rq runqueues __ksym;

unsigned int nr_running;

SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	const struct rq *rq = bpf_per_cpu_ptr(&runqueues, 0);

	if (rq)
		nr_running = rq->nr_running;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
