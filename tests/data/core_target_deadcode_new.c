/* The "new kernel" of tests/bpf/core_deadcode.bpf.c: everything its guards test for is here, and the
 * old flavor's old_field is not (so the else-branch idiom's other branch is poisoned here).
 *
 * Built like core_target_moved.c: gcc -g, pahole -J; every type used by a global variable.
 */

struct dc_task {
	int pid;
	int other;
	long size_field; /* 8 bytes: field_size's branch reads wide_only */
	int new_field;
	int wide_only;
};

struct dc_extra {
	long pad;
	int x;
};

enum dc_state {
	DC_A,
	DC_B,
	DC_NEW,
};

struct dc_match {
	int a;
	int b;
};

struct dc_task task;
struct dc_extra extra;
enum dc_state state;
struct dc_match match;
