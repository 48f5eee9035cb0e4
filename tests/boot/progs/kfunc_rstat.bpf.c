/* kfuncs of the kernel's bpf_rstat_kfunc_ids set (.BTF_ids): cgroup_rstat_updated from a raw
 * tracepoint, and the sleepable cgroup_rstat_flush from a sleepable cgroup iterator, as the kernel's
 * selftest for hierarchical cgroup statistics does. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

extern void cgroup_rstat_updated(struct cgroup *cgrp, int cpu) __ksym;
extern void cgroup_rstat_flush(struct cgroup *cgrp) __ksym;

SEC("tp_btf/cgroup_attach_task")
int BPF_PROG(on_attach, struct cgroup *dst_cgrp, const char *path, struct task_struct *task, bool threadgroup)
{
	cgroup_rstat_updated(dst_cgrp, bpf_get_smp_processor_id());
	return 0;
}

SEC("iter.s/cgroup")
int flush(struct bpf_iter__cgroup *ctx)
{
	struct cgroup *cgrp = ctx->cgroup;

	if (!cgrp)
		return 1;
	cgroup_rstat_flush(cgrp);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
