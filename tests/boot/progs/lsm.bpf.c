/* A BPF LSM program: the hook is the FUNC bpf_lsm_file_open, which must be in the kernel's set of
 * hooks (bpf_lsm_hooks in .BTF_ids). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

unsigned int last_mode;

SEC("lsm/file_open")
int BPF_PROG(check_open, struct file *file, int ret)
{
	if (ret)
		return ret;
	last_mode = file->f_mode;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
