/* A plain kprobe: no vmlinux.h and no CO-RE, registers as the UAPI's struct pt_regs lays them out.
 * Neither libbpf nor the kernel reads kernel BTF to load it. */
#include <linux/bpf.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

long calls;
long last_dfd;

SEC("kprobe/do_unlinkat")
int on_unlinkat(struct pt_regs *ctx)
{
	last_dfd = PT_REGS_PARM1(ctx);
	__sync_fetch_and_add(&calls, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
