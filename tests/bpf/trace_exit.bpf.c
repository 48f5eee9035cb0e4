/* Process exit against the running kernel: exit code, lifetime and CPU time, as exitsnoop reports it.
 * task_struct -> exit_code, start_time, se.sum_exec_runtime (sched_entity), signal -> nr_threads,
 * and the task's flags (PF_EXITING, PF_KTHREAD). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

#define PF_KTHREAD 0x00200000

struct exit_event {
	int pid;
	int tid;
	int exit_code;
	int nr_threads;
	unsigned long long start_ns;
	unsigned long long runtime_ns;
	unsigned int is_kthread;
};

struct exit_event last_exit;

SEC("tp/sched/sched_process_exit")
int trace_exit(void *ctx)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();

	last_exit.pid = BPF_CORE_READ(task, tgid);
	last_exit.tid = BPF_CORE_READ(task, pid);
	last_exit.exit_code = BPF_CORE_READ(task, exit_code) >> 8;
	last_exit.nr_threads = BPF_CORE_READ(task, signal, nr_threads);
	last_exit.start_ns = BPF_CORE_READ(task, start_time);
	last_exit.runtime_ns = BPF_CORE_READ(task, se.sum_exec_runtime);
	last_exit.is_kthread = !!(BPF_CORE_READ(task, flags) & PF_KTHREAD);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
