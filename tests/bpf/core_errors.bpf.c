/* CO-RE relocations that go wrong, and two that look as if they should but do not.
 *
 * Against tests/data/core_target_errors.c:
 *   errors_wrong_field       a field no target has (renamed): poisoned, not an error;
 *   errors_ambiguous         two target flavors with the field at different offsets: libbpf fails
 *                            ("field offset ambiguity");
 *   errors_size_ambiguity    two flavors with the field at one offset but of different sizes: the
 *                            field_size results disagree ("relocation decision ambiguity");
 *   errors_big_bitfield      a bitfield that no load of at most 8 bytes covers in the target (it
 *                            straddles an 8-byte boundary in a packed struct): libbpf fails (-E2BIG);
 *   errors_same_offset       two flavors that agree: no error (deduplication leftovers are normal);
 *   errors_pruned            libbpf's candidate cache: the first relocation of a local type drops
 *                            the target flavors that do not match it, for every later relocation of
 *                            that type. Here flavor ___one has a and b, flavor ___two only b at
 *                            another offset: reading a first prunes ___two, so reading b is not
 *                            ambiguous. An engine that evaluates each relocation on its own would
 *                            call the second one ambiguous.
 * Against the moved target all of them resolve but the renamed field; against the missing one they are
 * poisoned.
 *
 * libbpf stops relocating an object at its first failure, so every case is its own program in its own
 * section and uses its own local types: the oracle can load them one at a time (autoload) and the
 * result of one never depends on another.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

#define __core __attribute__((preserve_access_index))

struct err_prune {
	int a;
	int b;
} __core;

struct err_same {
	int x;
} __core;

struct err_field {
	int field;
	int renamed;
} __core;

struct err_amb {
	int x;
} __core;

struct err_size {
	int y;
} __core;

struct err_bits {
	unsigned long long x : 60;
	unsigned long long y : 4;
} __core;

long long errors_out[8];

SEC("raw_tp/sys_enter")
int errors_pruned(struct bpf_raw_tracepoint_args *ctx)
{
	struct err_prune *p = (void *)ctx->args[0];

	errors_out[0] = BPF_CORE_READ(p, a);
	errors_out[1] = BPF_CORE_READ(p, b);
	return 0;
}

SEC("raw_tp/sys_exit")
int errors_same_offset(struct bpf_raw_tracepoint_args *ctx)
{
	struct err_same *s = (void *)ctx->args[0];

	errors_out[2] = BPF_CORE_READ(s, x);
	return 0;
}

SEC("raw_tp/sched_switch")
int errors_wrong_field(struct bpf_raw_tracepoint_args *ctx)
{
	struct err_field *f = (void *)ctx->args[0];

	errors_out[3] = BPF_CORE_READ(f, field);
	errors_out[4] = BPF_CORE_READ(f, renamed);
	return 0;
}

SEC("raw_tp/sched_wakeup")
int errors_ambiguous(struct bpf_raw_tracepoint_args *ctx)
{
	struct err_amb *a = (void *)ctx->args[0];

	errors_out[5] = BPF_CORE_READ(a, x);
	return 0;
}

SEC("raw_tp/sched_waking")
int errors_size_ambiguity(struct bpf_raw_tracepoint_args *ctx)
{
	struct err_size *s = (void *)ctx->args[0];

	errors_out[6] = bpf_core_field_size(s->y);
	return 0;
}

SEC("raw_tp/sched_process_fork")
int errors_big_bitfield(struct bpf_raw_tracepoint_args *ctx)
{
	struct err_bits *b = (void *)ctx->args[0];

	errors_out[7] = BPF_CORE_READ_BITFIELD_PROBED(b, x);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
