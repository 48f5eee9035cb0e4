/* A strong kfunc the kernel does not have: libbpf fails the load ("extern (func ksym)
 * 'bpf_btfslim_absent_kfunc': not found in kernel or module BTFs"); `btfslim check` reports it missing. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

extern void bpf_btfslim_absent_kfunc(void) __ksym;

SEC("tp_btf/task_newtask")
int BPF_PROG(new_task, struct task_struct *task, u64 clone_flags)
{
	bpf_btfslim_absent_kfunc();
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
