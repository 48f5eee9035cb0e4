// fentry on a function of a module (nf_conntrack's nf_ct_delete): libbpf finds the target in the module's
// BTF, which the kernel must have read (/sys/kernel/btf/nf_conntrack), and the verifier types the
// arguments from it.
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

SEC("fentry/nf_ct_delete")
int BPF_PROG(on_ct_delete, void *ct, u32 portid, int report)
{
	return 0;
}
