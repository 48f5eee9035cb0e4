/* Alternatives by other means than fentry/kprobe: a syscall handler as fentry on the syscall's
 * arch-specific function and as ksyscall (libbpf finds that function itself), and a handler as fentry and
 * as a one-function kprobe.multi (what tools on 5.18+ use instead of kprobe). In each pair the fentry
 * variant reads a field no kernel has, so the other one is used everywhere:
 *   syscall openat entry    fentry_openat (fentry/__x64_sys_openat) or ksyscall_openat (ksyscall/openat)
 *   tcp_v4_connect entry    fentry_connect (fentry) or multi_connect (kprobe.multi/tcp_v4_connect)
 * A kprobe.multi on a pattern (tcp_v4_*) hooks many functions: it is no variant of anything. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

struct sock___btfslim_future {
	int sk_btfslim_absent;
} __attribute__((preserve_access_index));

struct task_struct___btfslim_future {
	int btfslim_absent;
} __attribute__((preserve_access_index));

__u64 opens, connects, future, hits;

#if defined(__TARGET_ARCH_arm64)
#define SYS_OPENAT "__arm64_sys_openat"
#else
#define SYS_OPENAT "__x64_sys_openat"
#endif

SEC("fentry/" SYS_OPENAT)
int BPF_PROG(fentry_openat, struct pt_regs *regs)
{
	struct task_struct___btfslim_future *t = (void *)bpf_get_current_task();

	future += BPF_CORE_READ(t, btfslim_absent);
	return 0;
}

SEC("ksyscall/openat")
int BPF_KSYSCALL(ksyscall_openat, int dfd, const char *filename)
{
	__sync_fetch_and_add(&opens, 1);
	return 0;
}

SEC("fentry/tcp_v4_connect")
int BPF_PROG(fentry_connect, struct sock *sk)
{
	future += BPF_CORE_READ((struct sock___btfslim_future *)sk, sk_btfslim_absent);
	return 0;
}

SEC("kprobe.multi/tcp_v4_connect")
int multi_connect(struct pt_regs *ctx)
{
	__sync_fetch_and_add(&connects, 1);
	return 0;
}

SEC("kprobe.multi/tcp_v4_*")
int multi_tcp(struct pt_regs *ctx)
{
	__sync_fetch_and_add(&hits, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
