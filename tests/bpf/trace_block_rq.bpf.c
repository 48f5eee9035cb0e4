/* Block requests against the running kernel, as biosnoop tracks them: blk_mq_start_request(struct
 * request *) stamps the request; the block:block_rq_complete record reports it. request -> __sector,
 * __data_len, cmd_flags, q; the disk's name through request -> q -> disk (Linux 5.15+) or the older
 * request -> rq_disk (removed in 6.0), chosen by field existence on local flavors. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

struct request___with_rq_disk {
	struct gendisk *rq_disk;
} __attribute__((preserve_access_index));

struct request_queue___with_disk {
	struct gendisk *disk;
} __attribute__((preserve_access_index));

/* The block_rq_complete record as Linux 5.x-6.x lays it out (its struct was named after the event, then
 * after the event class): declared here so that the program builds on either, and relocated against
 * whichever the kernel has. */
struct trace_event_raw_block_rq_completion___local {
	unsigned int dev;
	unsigned long long sector;
	unsigned int nr_sector;
	int error;
} __attribute__((preserve_access_index));

struct rq_start {
	unsigned long long ts;
	unsigned long long sector;
	unsigned int len;
	unsigned int cmd_flags;
	char disk[32];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct request *);
	__type(value, struct rq_start);
} starts SEC(".maps");

unsigned long long completed_sectors;
int completed_error;

static __attribute__((noinline)) struct gendisk *request_disk(struct request *rq)
{
	struct request___with_rq_disk *old = (void *)rq;
	struct request_queue___with_disk *q = (void *)BPF_CORE_READ(rq, q);

	if (bpf_core_field_exists(old->rq_disk))
		return BPF_CORE_READ(old, rq_disk);
	return BPF_CORE_READ(q, disk);
}

SEC("kprobe/blk_mq_start_request")
int BPF_KPROBE(trace_rq_start, struct request *rq)
{
	struct rq_start start = {};
	struct gendisk *disk = request_disk(rq);

	start.ts = bpf_ktime_get_ns();
	start.sector = BPF_CORE_READ(rq, __sector);
	start.len = BPF_CORE_READ(rq, __data_len);
	start.cmd_flags = BPF_CORE_READ(rq, cmd_flags);
	bpf_probe_read_kernel_str(start.disk, sizeof(start.disk), disk->disk_name);
	bpf_map_update_elem(&starts, &rq, &start, BPF_ANY);
	return 0;
}

SEC("tp/block/block_rq_complete")
int trace_rq_complete(struct trace_event_raw_block_rq_completion___local *ctx)
{
	completed_error = BPF_CORE_READ(ctx, error);
	completed_sectors = BPF_CORE_READ(ctx, nr_sector);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
