/* bpf_get_current_task_btf() gives a task_struct pointer the verifier types from the kernel's BTF
 * (btf_tracing_ids in .BTF_ids); plain loads then walk pointer chains through it, each typed by BTF:
 * task->mm->..., task->real_parent->tgid. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

int parent_tgid;
unsigned long total_vm;
unsigned long start_stack;

SEC("fentry/do_unlinkat")
int BPF_PROG(on_unlinkat, int dfd, struct filename *name)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct mm_struct *mm = task->mm;

	parent_tgid = task->real_parent->tgid;
	if (mm) {
		total_vm = mm->total_vm;
		start_stack = mm->start_stack;
	}
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
