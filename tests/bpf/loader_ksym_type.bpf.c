/* A typed ksym the kernel has, declared with a type it does not have: the kernel's bpf_prog_active is
 * an int, this one a struct. libbpf fails the load ("extern (var ksym) 'bpf_prog_active': incompatible
 * types"); `btfslim check` reports it incompatible. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

extern const struct rq bpf_prog_active __ksym;

int value;

SEC("tp_btf/task_newtask")
int BPF_PROG(new_task, struct task_struct *task, u64 clone_flags)
{
	const struct rq *rq = bpf_this_cpu_ptr(&bpf_prog_active);

	value = rq->nr_running;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
