/* Credential changes against the running kernel: commit_creds(struct cred *new) compared with the
 * current task's cred, as a privilege-escalation detector does. cred -> uid, euid, gid (kuid_t
 * wrappers), cap_effective — a struct of two u32 words before Linux 6.3 and of one u64 since: read
 * through two local flavors of kernel_cap_t chosen by field existence. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

struct kernel_cap_t___words {
	unsigned int cap[2];
} __attribute__((preserve_access_index));

struct kernel_cap_t___u64 {
	unsigned long long val;
} __attribute__((preserve_access_index));

struct cred___caps {
	struct kernel_cap_t___words cap_effective;
} __attribute__((preserve_access_index));

struct cred___caps64 {
	struct kernel_cap_t___u64 cap_effective;
} __attribute__((preserve_access_index));

struct cred_change {
	unsigned int old_uid;
	unsigned int new_uid;
	unsigned int new_euid;
	unsigned int new_gid;
	unsigned long long new_caps;
	unsigned long long changes;
};

struct cred_change last_change;

static __attribute__((noinline)) unsigned long long effective_caps(const struct cred *cred)
{
	struct cred___caps64 *c64 = (void *)cred;
	struct cred___caps *c32 = (void *)cred;

	if (bpf_core_field_exists(c64->cap_effective.val))
		return BPF_CORE_READ(c64, cap_effective.val);
	return BPF_CORE_READ(c32, cap_effective.cap[0]) |
	       ((unsigned long long)BPF_CORE_READ(c32, cap_effective.cap[1]) << 32);
}

SEC("kprobe/commit_creds")
int BPF_KPROBE(trace_creds, struct cred *new)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();

	last_change.old_uid = BPF_CORE_READ(task, cred, uid.val);
	last_change.new_uid = BPF_CORE_READ(new, uid.val);
	last_change.new_euid = BPF_CORE_READ(new, euid.val);
	last_change.new_gid = BPF_CORE_READ(new, gid.val);
	last_change.new_caps = effective_caps(new);
	__sync_fetch_and_add(&last_change.changes, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
