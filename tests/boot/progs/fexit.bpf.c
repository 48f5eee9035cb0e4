/* fexit on a kernel function: the arguments and the return value, typed by the FUNC_PROTO of
 * do_unlinkat in the kernel's BTF. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

long last_ret;

SEC("fexit/do_unlinkat")
int BPF_PROG(after_unlinkat, int dfd, struct filename *name, long ret)
{
	last_ret = ret;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
