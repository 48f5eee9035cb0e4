/* CO-RE relocations against a kernel module's types and vmlinux's at once: tests/data/kmod_types.c is
 * the "module" (its BTF split on the running kernel's), struct task_struct is vmlinux's. The minimize
 * tests make split BTF of what this program needs: the module's types on vmlinux or on a minimized
 * vmlinux. Never loaded; only its relocations matter. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

#define __core __attribute__((preserve_access_index))

struct nf_demo_conn {
	unsigned long mark;
	struct task_struct *owner;
	unsigned int state : 4;
} __core;

struct task_struct {
	int pid;
	int tgid;
} __core;

long module_out[6];

SEC("raw_tp/nf_demo")
int read_conn(struct nf_demo_conn *conn)
{
	struct task_struct *owner = BPF_CORE_READ(conn, owner);

	module_out[0] = BPF_CORE_READ(conn, mark);
	module_out[1] = BPF_CORE_READ_BITFIELD_PROBED(conn, state);
	module_out[2] = BPF_CORE_READ(owner, pid);
	module_out[3] = bpf_core_field_exists(owner->tgid);
	module_out[4] = bpf_core_type_exists(struct nf_demo_conn);
	module_out[5] = bpf_core_type_size(struct task_struct);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
