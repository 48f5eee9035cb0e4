/* A task iterator: the target is the FUNC bpf_iter_task, its context struct bpf_iter__task. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

SEC("iter/task")
int dump_task(struct bpf_iter__task *ctx)
{
	struct seq_file *seq = ctx->meta->seq;
	struct task_struct *task = ctx->task;

	if (!task)
		return 0;
	BPF_SEQ_PRINTF(seq, "%d %s\n", task->pid, task->comm);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
