/* Typed ksyms the kernel has (per-CPU variables of its BTF), and a typeless one: libbpf resolves the
 * typed ones to the kernel's VARs and the typeless one through /proc/kallsyms (a function here: this
 * kind of kernel may list no data symbols there). `btfslim check` reports the typed ones ok and the
 * typeless one unchecked: BTF does not decide it. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

extern const struct rq runqueues __ksym;
extern const int bpf_prog_active __ksym;
extern const void vfs_read __ksym;

int cpu_nr_running;
int active;
unsigned long vfs_read_address;

SEC("tp_btf/task_newtask")
int BPF_PROG(new_task, struct task_struct *task, u64 clone_flags)
{
	const struct rq *rq = bpf_per_cpu_ptr(&runqueues, 0);
	const int *a = bpf_this_cpu_ptr(&bpf_prog_active);

	if (rq)
		cpu_nr_running = rq->nr_running;
	active = *a;
	vfs_read_address = (unsigned long)&vfs_read;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
