/* A typed ksym the kernel does not have: libbpf fails the load ("extern (var ksym)
 * 'btfslim_absent_var': not found in kernel BTF"); `btfslim check` reports it missing. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

extern const int btfslim_absent_var __ksym;

int value;

SEC("tp_btf/task_newtask")
int BPF_PROG(new_task, struct task_struct *task, u64 clone_flags)
{
	value = *(const int *)bpf_this_cpu_ptr(&btfslim_absent_var);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
