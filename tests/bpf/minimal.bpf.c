/* A small CO-RE BPF program with its own types (no vmlinux.h): the .bpf.o input. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

struct task_struct {
	int pid;
	int tgid;
	struct task_struct *parent;
} __attribute__((preserve_access_index));

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

int seen_pid = 0;

SEC("tp_btf/sched_switch")
int on_switch(__u64 *ctx)
{
	struct task_struct *task = (void *)bpf_get_current_task();
	__u32 key = 0;
	__u64 *v = bpf_map_lookup_elem(&counts, &key);

	seen_pid = BPF_CORE_READ(task, parent, tgid);
	if (v)
		__sync_fetch_and_add(v, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
