// fentry on a function of a kernel module, nf_nat's nf_nat_packet (ptcpdump traces it so): libbpf
// finds the target in the module's BTF when vmlinux has none of that name, and so must `check --modules`
// and `minimize --kernel --modules`. The program reads the connection's status through the pointer the
// verifier types from that BTF. Local types only: it builds without a kernel's vmlinux.h.
#include <linux/types.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

struct nf_conn {
	unsigned long status;
} __attribute__((preserve_access_index));

__u64 last_status;

SEC("fentry/nf_nat_packet")
int on_nat_packet(unsigned long long *ctx)
{
	struct nf_conn *ct = (struct nf_conn *)ctx[0];

	last_status = ct->status;
	return 0;
}
