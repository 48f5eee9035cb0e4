/* Outside the profile: the boot test minimizes the kernel's BTF for the other objects only, and this
 * one's attach target, the FUNC vfs_fsync_range, is one none of them needs. On the minimized kernel
 * libbpf cannot find it and the load fails; on the original kernel it loads. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

long syncs;

SEC("fentry/vfs_fsync_range")
int BPF_PROG(on_fsync, struct file *file, loff_t start, loff_t end, int datasync)
{
	syncs++;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
