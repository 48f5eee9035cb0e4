/* A plain tracepoint: its context laid out by hand as the tracepoint's format file says (the syscall
 * number, then the arguments), no vmlinux.h and no CO-RE; loading it needs no kernel BTF. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct sys_enter_openat {
	unsigned long long common;
	long syscall_nr;
	long dfd;
	const char *filename;
	long flags;
	long mode;
};

long last_flags;

SEC("tracepoint/syscalls/sys_enter_openat")
int on_openat(struct sys_enter_openat *ctx)
{
	last_flags = ctx->flags;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
