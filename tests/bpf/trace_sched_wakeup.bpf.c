/* Wakeup latency against the running kernel, as runqlat measures it: the sched:sched_wakeup record
 * (pid, prio, target_cpu) stamps the wakeup; sched_switch subtracts it. Also the type-based and
 * enum relocations a real tool makes: whether the kernel has a type at all, its size, the kernel's
 * value of an enumerator, the type ids of task_struct, and whether two types match the kernel's. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, int);
	__type(value, unsigned long long);
} wakeups SEC(".maps");

unsigned long long latency_slots[32];
unsigned int has_sched_entity;
unsigned int task_struct_size;
unsigned long long pidtype_tgid;
unsigned int has_pidtype_max;
unsigned int task_struct_kernel_id;
unsigned int task_struct_local_id;
unsigned int list_head_matches;
unsigned int sched_entity_matches;

SEC("tp/sched/sched_wakeup")
int trace_wakeup(struct trace_event_raw_sched_wakeup_template *ctx)
{
	int pid = BPF_CORE_READ(ctx, pid);
	unsigned long long now = bpf_ktime_get_ns();

	bpf_map_update_elem(&wakeups, &pid, &now, BPF_ANY);
	has_sched_entity = bpf_core_type_exists(struct sched_entity);
	task_struct_size = bpf_core_type_size(struct task_struct);
	pidtype_tgid = bpf_core_enum_value(enum pid_type, PIDTYPE_TGID);
	has_pidtype_max = bpf_core_enum_value_exists(enum pid_type, PIDTYPE_MAX);
	task_struct_kernel_id = bpf_core_type_id_kernel(struct task_struct);
	task_struct_local_id = bpf_core_type_id_local(struct task_struct);
	/* Pointers only: matches. sched_entity has u64 members, and clang names the int under u64
	 * "unsigned long long" where the kernel's gcc said "long long unsigned int": libbpf 1.1.2
	 * compares int names in type_matches, so it does not match. */
	list_head_matches = bpf_core_type_matches(struct list_head);
	sched_entity_matches = bpf_core_type_matches(struct sched_entity);
	return 0;
}

SEC("tp/sched/sched_switch")
int trace_wakeup_switch(struct trace_event_raw_sched_switch *ctx)
{
	int pid = BPF_CORE_READ(ctx, next_pid);
	unsigned long long *start = bpf_map_lookup_elem(&wakeups, &pid);
	unsigned long long delta;
	unsigned int slot = 0;

	if (!start)
		return 0;
	delta = (bpf_ktime_get_ns() - *start) / 1000;
	while (delta > 1 && slot < 31) {
		delta >>= 1;
		slot++;
	}
	__sync_fetch_and_add(&latency_slots[slot], 1);
	bpf_map_delete_elem(&wakeups, &pid);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
