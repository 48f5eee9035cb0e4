/* fentry on a kernel function: libbpf finds the FUNC do_unlinkat in the kernel's BTF, the verifier
 * types the arguments from its prototype (name is a trusted struct filename *). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

int refcnt;

SEC("fentry/do_unlinkat")
int BPF_PROG(on_unlinkat, int dfd, struct filename *name)
{
	refcnt = name->refcnt.counter;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
