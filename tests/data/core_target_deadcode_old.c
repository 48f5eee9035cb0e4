/* The "old kernel" of tests/bpf/core_deadcode.bpf.c: nothing its guards test for is here. struct
 * dc_task has old_field, not new_field or wide_only, and an int size_field; no struct dc_extra; enum
 * dc_state without DC_NEW; a struct dc_match of another layout (TYPE_MATCHES fails, b is missing).
 *
 * Built like core_target_moved.c: gcc -g, pahole -J; every type used by a global variable.
 */

struct dc_task {
	int pid;
	int old_field;
	int size_field; /* 4 bytes */
};

enum dc_state {
	DC_A,
	DC_B,
};

struct dc_match {
	int a;
	long c;
};

struct dc_task task;
enum dc_state state;
struct dc_match match;
