/* kfuncs the running kernel has, called as their kernel prototypes say: libbpf resolves each to the
 * kernel's FUNC and the load succeeds; `btfslim check` reports every one ok.
 *   bpf_rcu_read_lock/unlock  void (void)
 *   bpf_task_acquire/release  struct task_struct *(struct task_struct *), void (struct task_struct *)
 * tp_btf/task_newtask gives a trusted task pointer, which bpf_task_acquire takes. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

extern void bpf_rcu_read_lock(void) __ksym;
extern void bpf_rcu_read_unlock(void) __ksym;
extern struct task_struct *bpf_task_acquire(struct task_struct *p) __ksym;
extern void bpf_task_release(struct task_struct *p) __ksym;

int seen_pid;

SEC("tp_btf/task_newtask")
int BPF_PROG(new_task, struct task_struct *task, u64 clone_flags)
{
	struct task_struct *held;

	bpf_rcu_read_lock();
	seen_pid = task->pid;
	bpf_rcu_read_unlock();
	held = bpf_task_acquire(task);
	if (held)
		bpf_task_release(held);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
