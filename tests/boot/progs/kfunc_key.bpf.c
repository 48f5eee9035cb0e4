/* kfuncs of the kernel's key_sig_kfunc_set (.BTF_ids): bpf_lookup_user_key (acquiring, may return
 * NULL, sleepable) and bpf_key_put (releasing), from a sleepable LSM program, as the kernel's selftest
 * test_lookup_key does. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

extern struct bpf_key *bpf_lookup_user_key(__u32 serial, __u64 flags) __ksym;
extern void bpf_key_put(struct bpf_key *key) __ksym;

__u32 key_serial;
int found;

SEC("lsm.s/bpf")
int BPF_PROG(on_bpf, int cmd, union bpf_attr *attr, unsigned int size)
{
	struct bpf_key *key;

	if (!key_serial)
		return 0;
	key = bpf_lookup_user_key(key_serial, 0);
	if (!key)
		return 0;
	found++;
	bpf_key_put(key);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
