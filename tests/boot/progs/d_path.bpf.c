/* bpf_d_path from fentry on filp_close, one of the functions the kernel allows it on
 * (btf_allowlist_d_path in .BTF_ids); its argument is a struct path from the kernel's BTF. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char path[256];
long len;

SEC("fentry/filp_close")
int BPF_PROG(on_close, struct file *file, void *id)
{
	len = bpf_d_path(&file->f_path, path, sizeof path);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
