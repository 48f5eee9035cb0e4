/* CO-RE reads guarded by existence checks, for `btfslim check`'s dead code.
 *
 * libbpf poisons a read of a field the target lacks, and the verifier rejects the program only if it
 * can reach the poisoned instruction. A read behind a failing bpf_core_field_exists of the same field
 * is dead code on that target: check reports it as "poisoned (dead code)" and does not fail on it
 * (--strict does). tests/bpf/core_deadcode.bpf.c has the other idioms.
 *
 * The local types are flavors of struct existence and struct sizes (tests/data/core_target_*.c):
 *   moved    has both, with a and c: everything resolves;
 *   missing  has existence with a, not c, and no sizes: guarded_read's read of c is poisoned behind its
 *            failing field check, type_guarded_read's read behind its failing type check, the rest
 *            resolves (exit 0, or 1 with --strict);
 *   errors   has neither: every read is poisoned; guarded_read's and type_guarded_read's are dead,
 *            while unguarded_read's read of a is reached, though guarded_read checks a (exit 1 either way).
 * type_guarded_read shares guarded_read's section: each program is followed on its own.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

struct existence___guarded {
	int a;
	int c;
} __attribute__((preserve_access_index));

struct sizes___guarded {
	void *ptr_field;
} __attribute__((preserve_access_index));

int guarded_out[3];
void *guarded_ptr_out;

SEC("raw_tp/sys_enter")
int guarded_read(struct bpf_raw_tracepoint_args *ctx)
{
	struct existence___guarded *s = (void *)ctx->args[0];

	if (bpf_core_field_exists(s->c))
		guarded_out[0] = BPF_CORE_READ(s, c);
	if (bpf_core_field_exists(s->a))
		guarded_out[1] = BPF_CORE_READ(s, a);
	return 0;
}

SEC("raw_tp/sys_enter")
int type_guarded_read(struct bpf_raw_tracepoint_args *ctx)
{
	struct sizes___guarded *z = (void *)ctx->args[1];

	if (bpf_core_type_exists(struct sizes___guarded))
		guarded_ptr_out = BPF_CORE_READ(z, ptr_field);
	return 0;
}

SEC("raw_tp/sys_exit")
int unguarded_read(struct bpf_raw_tracepoint_args *ctx)
{
	struct existence___guarded *s = (void *)ctx->args[0];

	guarded_out[2] = BPF_CORE_READ(s, a);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
