/* A struct_ops map of a struct the kernel does not have: libbpf fails the load ("struct_ops init_kern:
 * struct btfslim_absent_ops is not found in kernel BTF"); `btfslim check` reports it missing. */
#include <linux/types.h>
#include <bpf/bpf_helpers.h>

struct btfslim_absent_ops {
	int (*op)(void);
	char name[16];
};

SEC("struct_ops/btfslim_op")
int btfslim_op(unsigned long long *ctx)
{
	return 0;
}

SEC(".struct_ops")
struct btfslim_absent_ops btfslim_ops = {
	.op = (void *)btfslim_op,
	.name = "btfslim_ops",
};

char LICENSE[] SEC("license") = "GPL";
