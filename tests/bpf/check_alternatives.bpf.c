/* One tool's handlers compiled several ways, as libbpf-tools does (tcpconnlat, syncsnoop, biolatency): its
 * loader asks the kernel which way works (fentry_can_attach, probe_tp_btf) and turns the others off with
 * bpf_program__set_autoload(false) before loading. check sees the alternatives by what they attach to:
 *   tcp_v4_connect entry    fentry_tcp_v4_connect (fentry) or tcp_v4_connect (kprobe); the fentry variant
 *                           reads a field no kernel has, so the kprobe one is used everywhere
 *   do_fsync entry, exit    fentry_do_fsync or kprobe_do_fsync, fexit_do_fsync or kretprobe_do_fsync; Debian's
 *                           6.1 has no do_fsync in its BTF (inlined), so the kprobes are used there
 *   sched_process_exit      sched_process_exit_btf (tp_btf) or sched_process_exit_raw (raw_tp)
 * On every kernel some variant of each loads: the object loads, with a failure in an unused alternative. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

/* A field from a kernel that does not exist (the flavour is dropped when matching: struct sock). */
struct sock___btfslim_future {
	int sk_btfslim_absent;
} __attribute__((preserve_access_index));

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, u32);
	__type(value, u64);
} starts SEC(".maps");

__u64 connects, fsyncs, exits, future;

static int record_start(void)
{
	u32 tid = (u32)bpf_get_current_pid_tgid();
	u64 ts = bpf_ktime_get_ns();

	bpf_map_update_elem(&starts, &tid, &ts, BPF_ANY);
	return 0;
}

static int record_end(void)
{
	u32 tid = (u32)bpf_get_current_pid_tgid();

	if (bpf_map_lookup_elem(&starts, &tid))
		__sync_fetch_and_add(&fsyncs, 1);
	bpf_map_delete_elem(&starts, &tid);
	return 0;
}

SEC("fentry/tcp_v4_connect")
int BPF_PROG(fentry_tcp_v4_connect, struct sock *sk)
{
	future += BPF_CORE_READ((struct sock___btfslim_future *)sk, sk_btfslim_absent);
	return 0;
}

SEC("kprobe/tcp_v4_connect")
int BPF_KPROBE(tcp_v4_connect, struct sock *sk)
{
	if (BPF_CORE_READ(sk, __sk_common.skc_family) == 2)
		__sync_fetch_and_add(&connects, 1);
	return 0;
}

SEC("fentry/do_fsync")
int BPF_PROG(fentry_do_fsync, unsigned int fd, int datasync)
{
	return record_start();
}

SEC("kprobe/do_fsync")
int BPF_KPROBE(kprobe_do_fsync, unsigned int fd, int datasync)
{
	return record_start();
}

SEC("fexit/do_fsync")
int BPF_PROG(fexit_do_fsync, unsigned int fd, int datasync, int ret)
{
	return record_end();
}

SEC("kretprobe/do_fsync")
int BPF_KRETPROBE(kretprobe_do_fsync, int ret)
{
	return record_end();
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(sched_process_exit_btf, struct task_struct *p)
{
	__sync_fetch_and_add(&exits, 1);
	return 0;
}

SEC("raw_tp/sched_process_exit")
int BPF_PROG(sched_process_exit_raw)
{
	__sync_fetch_and_add(&exits, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
