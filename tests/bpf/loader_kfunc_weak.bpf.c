/* Weak externs the kernel does not have: libbpf sets each to 0 and the load succeeds, as long as the
 * program cannot reach a use (here the test of the address makes the call dead code). `btfslim check`
 * reports them absent, not failing. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

extern void bpf_btfslim_absent_kfunc(void) __ksym __weak;
extern const int btfslim_absent_weak_var __ksym __weak;

int calls;

SEC("tp_btf/task_newtask")
int BPF_PROG(new_task, struct task_struct *task, u64 clone_flags)
{
	if (bpf_btfslim_absent_kfunc) {
		bpf_btfslim_absent_kfunc();
		calls++;
	}
	if (&btfslim_absent_weak_var)
		calls++;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
