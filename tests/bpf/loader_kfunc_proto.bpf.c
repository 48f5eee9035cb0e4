/* A kfunc the kernel has, declared with a prototype it does not have: libbpf fails the load ("extern
 * (func ksym) 'bpf_task_acquire': func_proto [N] incompatible with kernel [M]"); `btfslim check` says
 * which parameter differs. The kernel's takes one parameter, this declaration two. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

extern struct task_struct *bpf_task_acquire(struct task_struct *p, int extra) __ksym;
extern void bpf_task_release(struct task_struct *p) __ksym;

SEC("tp_btf/task_newtask")
int BPF_PROG(new_task, struct task_struct *task, u64 clone_flags)
{
	struct task_struct *held = bpf_task_acquire(task, 1);

	if (held)
		bpf_task_release(held);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
