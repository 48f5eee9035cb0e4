/* Every kind of BTF attach target, on a target the running kernel has and on one it does not. libbpf
 * resolves a program's target when it loads that program (libbpf_find_attach_btf_id): a missing one fails
 * the load of the program ("failed to find kernel BTF type ID of '...'"). The test loads one program at a
 * time and compares with the attach row `btfslim check` gives that program.
 *   fentry/fexit/fmod_ret F, fentry.s ...   a FUNC F (fmod_ret: one whose return may be changed)
 *   lsm/H, lsm.s/H                          a FUNC bpf_lsm_H
 *   tp_btf/T                                a TYPEDEF btf_trace_T
 *   iter/T                                  a FUNC bpf_iter_T */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

SEC("fentry/do_unlinkat")
int BPF_PROG(fentry_ok, int dfd, struct filename *name)
{
	return 0;
}

SEC("fentry/btfslim_absent_function")
int BPF_PROG(fentry_missing)
{
	return 0;
}

SEC("fexit/do_unlinkat")
int BPF_PROG(fexit_ok, int dfd, struct filename *name, long ret)
{
	return 0;
}

SEC("fexit/btfslim_absent_function")
int BPF_PROG(fexit_missing)
{
	return 0;
}

SEC("fmod_ret/security_file_open")
int BPF_PROG(fmod_ret_ok, struct file *file, int ret)
{
	return 0;
}

SEC("fmod_ret/btfslim_absent_function")
int BPF_PROG(fmod_ret_missing)
{
	return 0;
}

SEC("lsm/file_open")
int BPF_PROG(lsm_ok, struct file *file, int ret)
{
	return 0;
}

SEC("lsm/btfslim_absent_hook")
int BPF_PROG(lsm_missing)
{
	return 0;
}

SEC("lsm.s/bprm_committed_creds")
int BPF_PROG(lsm_sleepable_ok, struct linux_binprm *bprm)
{
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(tp_btf_ok, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return 0;
}

SEC("tp_btf/btfslim_absent_tracepoint")
int BPF_PROG(tp_btf_missing)
{
	return 0;
}

SEC("iter/task")
int iter_ok(struct bpf_iter__task *ctx)
{
	return 0;
}

SEC("iter/btfslim_absent_iter")
int iter_missing(struct bpf_iter__task *ctx)
{
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
