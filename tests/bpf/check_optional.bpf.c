/* Programs a loader may leave out: trace_unlink, which its loader turns off where it does not load (check
 * --optional trace_unlink says so), and trace_rmdir, which libbpf loads only when the loader turns it on
 * (SEC("?...")). Both read a field no kernel has; handle_exec loads everywhere. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

struct task_struct___btfslim_future {
	int btfslim_absent;
} __attribute__((preserve_access_index));

__u64 execs, future;

SEC("tp_btf/sched_process_exec")
int BPF_PROG(handle_exec, struct task_struct *p)
{
	__sync_fetch_and_add(&execs, 1);
	return 0;
}

SEC("fentry/do_unlinkat")
int BPF_PROG(trace_unlink, int dfd, struct filename *name)
{
	struct task_struct___btfslim_future *t = (void *)bpf_get_current_task();

	future += BPF_CORE_READ(t, btfslim_absent);
	return 0;
}

SEC("?fentry/do_rmdir")
int BPF_PROG(trace_rmdir, int dfd, struct filename *name)
{
	struct task_struct___btfslim_future *t = (void *)bpf_get_current_task();

	future += BPF_CORE_READ(t, btfslim_absent);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
