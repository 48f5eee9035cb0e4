/* CO-RE reads the verifier never reaches: each program is one idiom of guarding a read with an
 * existence, size or match check, for `btfslim check`'s reachability (src/core/reach.cc).
 *
 * The targets are two "kernels" (tests/data/core_target_deadcode_*.c):
 *   new  has struct dc_task with new_field, a long size_field and wide_only; struct dc_extra; enum
 *        dc_state's DC_NEW; struct dc_match as here;
 *   old  has struct dc_task with old_field and an int size_field; no dc_extra, no DC_NEW; a dc_match
 *        with another layout (no b).
 * On old every read of new_field, wide_only, dc_extra, DC_NEW and dc_match.b is poisoned, on new every
 * read of old_field. The programs named *_fails reach a poisoned read on old (the kernel's verifier
 * rejects them there); every other program loads on both. The context is read outside BPF_CORE_READ:
 * inside, its fields would be relocated too, against targets that do not have them. The programs are raw tracepoints reading
 * through bpf_probe_read_kernel, so that offsets from a made-up BTF cannot fail the verifier for any
 * other reason: what decides is whether a poisoned instruction is reached.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

struct dc_task {
	int pid;
	int new_field;
	long size_field;
	int wide_only;
} __attribute__((preserve_access_index));

/* Flavors for the else-branch idiom: both are struct dc_task on the target. */
struct dc_task___new {
	int new_field;
} __attribute__((preserve_access_index));

struct dc_task___old {
	int old_field;
} __attribute__((preserve_access_index));

struct dc_extra {
	int x;
} __attribute__((preserve_access_index));

enum dc_state {
	DC_A,
	DC_B,
	DC_NEW,
};

struct dc_match {
	int a;
	int b;
} __attribute__((preserve_access_index));

long out[32];
const volatile int enable_new = 0; /* .rodata: a loader may set it; the file says 0 */

#define TASK(ctx) ((struct dc_task *)(ctx)->args[0])

/* if (exists) read */
SEC("raw_tp/sys_enter")
int guard_exists(struct bpf_raw_tracepoint_args *ctx)
{
	struct dc_task *t = TASK(ctx);

	if (bpf_core_field_exists(t->new_field))
		out[0] = BPF_CORE_READ(t, new_field);
	return 0;
}

/* if (!exists) return; read */
SEC("raw_tp/sys_enter")
int guard_not_exists(struct bpf_raw_tracepoint_args *ctx)
{
	struct dc_task *t = TASK(ctx);

	if (!bpf_core_field_exists(t->new_field))
		return 0;
	out[1] = BPF_CORE_READ(t, new_field);
	return 0;
}

/* if (exists(new->f)) read new; else read old; */
SEC("raw_tp/sys_enter")
int else_branch(struct bpf_raw_tracepoint_args *ctx)
{
	void *t = (void *)ctx->args[0];

	if (bpf_core_field_exists(((struct dc_task___new *)t)->new_field))
		out[2] = BPF_CORE_READ((struct dc_task___new *)t, new_field);
	else
		out[2] = BPF_CORE_READ((struct dc_task___old *)t, old_field);
	return 0;
}

SEC("raw_tp/sys_enter")
int type_exists(struct bpf_raw_tracepoint_args *ctx)
{
	struct dc_extra *e = (void *)ctx->args[1];

	if (bpf_core_type_exists(struct dc_extra))
		out[3] = BPF_CORE_READ(e, x);
	return 0;
}

SEC("raw_tp/sys_enter")
int enumval_exists(struct bpf_raw_tracepoint_args *ctx)
{
	if (bpf_core_enum_value_exists(enum dc_state, DC_NEW))
		out[4] = bpf_core_enum_value(enum dc_state, DC_NEW);
	return 0;
}

SEC("raw_tp/sys_enter")
int type_matches(struct bpf_raw_tracepoint_args *ctx)
{
	struct dc_match *m = (void *)ctx->args[1];

	if (bpf_core_type_matches(struct dc_match))
		out[5] = BPF_CORE_READ(m, b);
	return 0;
}

/* if (field_size(size_field) == 8) read wide_only */
SEC("raw_tp/sys_enter")
int field_size(struct bpf_raw_tracepoint_args *ctx)
{
	struct dc_task *t = TASK(ctx);

	if (bpf_core_field_size(t->size_field) == 8)
		out[6] = BPF_CORE_READ(t, wide_only);
	return 0;
}

/* x = exists ? 10 : 20; ...; if (x == 10) read: the value goes through registers. */
SEC("raw_tp/sys_enter")
int ternary(struct bpf_raw_tracepoint_args *ctx)
{
	struct dc_task *t = TASK(ctx);
	int x = bpf_core_field_exists(t->new_field) ? 10 : 20;

	barrier_var(x);
	out[7] = ctx->args[2];
	if (x == 10)
		out[7] = BPF_CORE_READ(t, new_field);
	return 0;
}

/* The check's result spilled to the stack (8 bytes) and read back after a helper call. */
SEC("raw_tp/sys_enter")
int spilled(struct bpf_raw_tracepoint_args *ctx)
{
	struct dc_task *t = TASK(ctx);
	volatile long has = bpf_core_field_exists(t->new_field);

	out[8] = bpf_ktime_get_ns();
	if (has)
		out[8] = BPF_CORE_READ(t, new_field);
	return 0;
}

/* The same in 4 bytes: a 0 the verifier knows as zeroed bytes. */
SEC("raw_tp/sys_enter")
int spilled_int(struct bpf_raw_tracepoint_args *ctx)
{
	struct dc_task *t = TASK(ctx);
	volatile int pad = 7;
	volatile int has = bpf_core_field_exists(t->new_field);

	out[9] = bpf_ktime_get_ns() + pad;
	if (has)
		out[9] = BPF_CORE_READ(t, new_field);
	return 0;
}

static __noinline long read_guarded(struct dc_task *t)
{
	if (bpf_core_field_exists(t->new_field))
		return BPF_CORE_READ(t, new_field);
	return 0;
}

/* The guard in a static subprogram. */
SEC("raw_tp/sys_enter")
int in_subprog(struct bpf_raw_tracepoint_args *ctx)
{
	out[10] = read_guarded(TASK(ctx));
	return 0;
}

__noinline int global_guarded(unsigned long p)
{
	struct dc_task *t = (void *)p;

	if (bpf_core_field_exists(t->new_field))
		return BPF_CORE_READ(t, new_field);
	return 0;
}

/* The guard in a global subprogram, which the verifier checks on its own. */
SEC("raw_tp/sys_enter")
int in_global(struct bpf_raw_tracepoint_args *ctx)
{
	out[11] = global_guarded(ctx->args[0]);
	return 0;
}

static __noinline long read_if(struct dc_task *t, int has)
{
	if (has)
		return BPF_CORE_READ(t, new_field);
	return 0;
}

/* The check's result passed to a static subprogram: the verifier follows the constant into it. */
SEC("raw_tp/sys_enter")
int flag_to_subprog(struct bpf_raw_tracepoint_args *ctx)
{
	struct dc_task *t = TASK(ctx);

	out[12] = read_if(t, bpf_core_field_exists(t->new_field));
	return 0;
}

__noinline int global_read_if(unsigned long p, int has)
{
	struct dc_task *t = (void *)p;

	if (has)
		return BPF_CORE_READ(t, new_field);
	return 0;
}

/* The same into a global subprogram: checked on its own, `has` is unknown there, the read reached. */
SEC("raw_tp/sys_enter")
int flag_to_global_fails(struct bpf_raw_tracepoint_args *ctx)
{
	struct dc_task *t = TASK(ctx);

	out[13] = global_read_if(ctx->args[0], bpf_core_field_exists(t->new_field));
	return 0;
}

/* A guard in a bounded loop: clang hoists the read's address computation, the relocated instruction,
 * out of the loop and above the guard, so it is reached on old. */
SEC("raw_tp/sys_enter")
int in_loop_hoisted_fails(struct bpf_raw_tracepoint_args *ctx)
{
	struct dc_task *t = TASK(ctx);
	long sum = 0;

#pragma clang loop unroll(disable)
	for (int i = 0; i < 6; i++) {
		if (bpf_core_field_exists(t->new_field))
			sum += BPF_CORE_READ(t, new_field);
		else
			sum += i;
	}
	out[14] = sum;
	return 0;
}

/* A read behind a .rodata constant that is 0 in the file: the verifier reads it from the frozen map. */
SEC("raw_tp/sys_enter")
int rodata_off(struct bpf_raw_tracepoint_args *ctx)
{
	struct dc_task *t = TASK(ctx);

	if (enable_new)
		out[15] = BPF_CORE_READ(t, new_field);
	return 0;
}

/* No guard at all. */
SEC("raw_tp/sys_enter")
int unguarded_fails(struct bpf_raw_tracepoint_args *ctx)
{
	struct dc_task *t = TASK(ctx);

	out[16] = BPF_CORE_READ(t, new_field);
	return 0;
}

/* A check whose result is not used: the read is reached. */
SEC("raw_tp/sys_enter")
int ignored_fails(struct bpf_raw_tracepoint_args *ctx)
{
	struct dc_task *t = TASK(ctx);
	int e = bpf_core_field_exists(t->new_field);

	barrier_var(e);
	out[17] = e;
	out[18] = BPF_CORE_READ(t, new_field);
	return 0;
}

/* The guard tests another field: the read of new_field is reached. */
SEC("raw_tp/sys_enter")
int wrong_guard_fails(struct bpf_raw_tracepoint_args *ctx)
{
	struct dc_task *t = TASK(ctx);

	if (bpf_core_field_exists(t->pid))
		out[19] = BPF_CORE_READ(t, new_field);
	return 0;
}

/* The guard depends on data: both ways are explored. */
SEC("raw_tp/sys_enter")
int data_guard_fails(struct bpf_raw_tracepoint_args *ctx)
{
	struct dc_task *t = TASK(ctx);

	if (ctx->args[2] == 42)
		out[20] = BPF_CORE_READ(t, new_field);
	return 0;
}

static __noinline long scaled(long v)
{
	return v * 3 + 1;
}

/* An unguarded read after a call of a subprogram that reads nothing relocated: what lies past the
 * callee's return is reached (a walk that gave up inside the callee would miss it). */
SEC("raw_tp/sys_enter")
int after_call_fails(struct bpf_raw_tracepoint_args *ctx)
{
	struct dc_task *t = TASK(ctx);

	out[21] = scaled(ctx->args[1]);
	out[22] = BPF_CORE_READ(t, new_field);
	return 0;
}

static __noinline int has_new_field(struct dc_task *t)
{
	return bpf_core_field_exists(t->new_field);
}

/* The guard's value returned by a static subprogram: the verifier knows r0 after the call. */
SEC("raw_tp/sys_enter")
int guard_returned(struct bpf_raw_tracepoint_args *ctx)
{
	struct dc_task *t = TASK(ctx);

	if (has_new_field(t))
		out[23] = BPF_CORE_READ(t, new_field);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
