/* A BTF-typed raw tracepoint: libbpf finds the TYPEDEF btf_trace_sched_switch, the verifier types the
 * arguments (trusted task_struct pointers) from the prototype it names. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

int last_next_pid;

SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	last_next_pid = next->pid;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
