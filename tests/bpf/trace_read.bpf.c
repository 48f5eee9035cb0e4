/* File reads against the running kernel: vfs_read(struct file *, char *, size_t, loff_t *), as
 * filetop counts them. file -> f_inode -> i_ino, i_sb -> s_dev; file -> f_path.dentry -> d_name;
 * file -> f_pos. Counted per inode in a hash map. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

struct read_key {
	unsigned int dev;
	unsigned long ino;
};

struct read_stats {
	unsigned long long reads;
	unsigned long long bytes;
	long long last_pos;
	char name[32];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct read_key);
	__type(value, struct read_stats);
} reads SEC(".maps");

SEC("kprobe/vfs_read")
int BPF_KPROBE(trace_read, struct file *file, char *buf, size_t count)
{
	struct read_key key = {};
	struct read_stats zero = {}, *stats;

	key.dev = BPF_CORE_READ(file, f_inode, i_sb, s_dev);
	key.ino = BPF_CORE_READ(file, f_inode, i_ino);
	stats = bpf_map_lookup_elem(&reads, &key);
	if (!stats) {
		bpf_probe_read_kernel_str(zero.name, sizeof(zero.name), BPF_CORE_READ(file, f_path.dentry, d_name.name));
		bpf_map_update_elem(&reads, &key, &zero, BPF_NOEXIST);
		stats = bpf_map_lookup_elem(&reads, &key);
		if (!stats)
			return 0;
	}
	__sync_fetch_and_add(&stats->reads, 1);
	__sync_fetch_and_add(&stats->bytes, count);
	stats->last_pos = BPF_CORE_READ(file, f_pos);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
