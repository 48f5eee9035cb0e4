/* File open against the running kernel: vfs_open(const struct path *, struct file *), as opensnoop
 * with inode details. path -> dentry -> d_name, d_inode -> i_ino / i_mode / i_size; path -> mnt;
 * file -> f_flags, f_mode. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

struct open_event {
	unsigned long ino;
	unsigned int mode;
	long long size;
	unsigned int flags;
	unsigned int fmode;
	int mnt_flags;
	char name[32];
};

struct open_event last_open;

SEC("kprobe/vfs_open")
int BPF_KPROBE(trace_open, const struct path *path, struct file *file)
{
	struct dentry *dentry = BPF_CORE_READ(path, dentry);
	const unsigned char *name = BPF_CORE_READ(dentry, d_name.name);

	last_open.ino = BPF_CORE_READ(dentry, d_inode, i_ino);
	last_open.mode = BPF_CORE_READ(dentry, d_inode, i_mode);
	last_open.size = BPF_CORE_READ(dentry, d_inode, i_size);
	last_open.flags = BPF_CORE_READ(file, f_flags);
	last_open.fmode = BPF_CORE_READ(file, f_mode);
	last_open.mnt_flags = BPF_CORE_READ(path, mnt, mnt_flags);
	bpf_probe_read_kernel_str(last_open.name, sizeof(last_open.name), name);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
