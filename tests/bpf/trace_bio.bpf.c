/* Bios submitted against the running kernel: submit_bio(struct bio *), as biotop groups them.
 * bio -> bi_iter (bvec_iter: bi_sector, bi_size), bi_opf, bi_bdev (Linux 5.12+) -> bd_dev, bd_disk ->
 * disk_name, major, first_minor; older kernels had bio -> bi_disk, reached through a local flavor. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

struct bio___with_bi_disk {
	struct gendisk *bi_disk;
} __attribute__((preserve_access_index));

/* Declared here rather than taken from vmlinux.h, so that the program also builds on kernels that
 * predate bi_bdev. */
struct bio___with_bi_bdev {
	struct block_device *bi_bdev;
} __attribute__((preserve_access_index));

struct bio_key {
	int major;
	int minor;
	unsigned int write;
};

struct bio_stats {
	unsigned long long bios;
	unsigned long long bytes;
	unsigned long long last_sector;
	unsigned int bd_dev;
	char disk[32];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, struct bio_key);
	__type(value, struct bio_stats);
} bios SEC(".maps");

SEC("kprobe/submit_bio")
int BPF_KPROBE(trace_bio, struct bio *bio)
{
	struct bio___with_bi_disk *old = (void *)bio;
	struct bio___with_bi_bdev *new = (void *)bio;
	struct gendisk *disk;
	struct bio_key key = {};
	struct bio_stats zero = {}, *stats;

	if (bpf_core_field_exists(old->bi_disk))
		disk = BPF_CORE_READ(old, bi_disk);
	else
		disk = BPF_CORE_READ(new, bi_bdev, bd_disk);
	key.major = BPF_CORE_READ(disk, major);
	key.minor = BPF_CORE_READ(disk, first_minor);
	key.write = BPF_CORE_READ(bio, bi_opf) & 1;
	stats = bpf_map_lookup_elem(&bios, &key);
	if (!stats) {
		BPF_CORE_READ_STR_INTO(&zero.disk, disk, disk_name);
		bpf_map_update_elem(&bios, &key, &zero, BPF_NOEXIST);
		stats = bpf_map_lookup_elem(&bios, &key);
		if (!stats)
			return 0;
	}
	__sync_fetch_and_add(&stats->bios, 1);
	__sync_fetch_and_add(&stats->bytes, BPF_CORE_READ(bio, bi_iter.bi_size));
	stats->last_sector = BPF_CORE_READ(bio, bi_iter.bi_sector);
	stats->bd_dev = BPF_CORE_READ(new, bi_bdev, bd_dev);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
