/* Context switches against the running kernel, without the runqueue: the sched:sched_switch record
 * (prev_pid, next_pid, prev_state) and the outgoing task's scheduling fields — se (sched_entity):
 * vruntime, sum_exec_runtime, exec_start; prio, policy, nr_cpus_allowed.
 *
 * The task's state field was renamed from `state` to `__state` (and narrowed from long to unsigned
 * int) in Linux 5.14: the program reads whichever the kernel has through two local flavors of
 * task_struct, the usual CO-RE idiom. On the running kernel one of the two is poisoned (dead code). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

struct task_struct___pre514 {
	long state;
} __attribute__((preserve_access_index));

struct task_struct___since514 {
	unsigned int __state;
} __attribute__((preserve_access_index));

struct switch_stats {
	unsigned long long switches;
	unsigned long long vruntime;
	unsigned long long runtime;
	unsigned long long exec_start;
	long long state;
	int prio;
	unsigned int policy;
	int nr_cpus_allowed;
	int prev_pid;
	int next_pid;
	long long prev_state;
};

struct switch_stats last_switch;

static __attribute__((noinline)) long long task_state(struct task_struct *task)
{
	struct task_struct___since514 *t = (void *)task;
	struct task_struct___pre514 *o = (void *)task;

	if (bpf_core_field_exists(t->__state))
		return BPF_CORE_READ(t, __state);
	return BPF_CORE_READ(o, state);
}

SEC("tp/sched/sched_switch")
int trace_sched_switch(struct trace_event_raw_sched_switch *ctx)
{
	struct task_struct *prev = (struct task_struct *)bpf_get_current_task();

	last_switch.prev_pid = BPF_CORE_READ(ctx, prev_pid);
	last_switch.next_pid = BPF_CORE_READ(ctx, next_pid);
	last_switch.prev_state = BPF_CORE_READ(ctx, prev_state);
	last_switch.vruntime = BPF_CORE_READ(prev, se.vruntime);
	last_switch.runtime = BPF_CORE_READ(prev, se.sum_exec_runtime);
	last_switch.exec_start = BPF_CORE_READ(prev, se.exec_start);
	last_switch.prio = BPF_CORE_READ(prev, prio);
	last_switch.policy = BPF_CORE_READ(prev, policy);
	last_switch.nr_cpus_allowed = BPF_CORE_READ(prev, nr_cpus_allowed);
	last_switch.state = task_state(prev);
	__sync_fetch_and_add(&last_switch.switches, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
