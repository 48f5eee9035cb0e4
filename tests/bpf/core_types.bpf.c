/* CO-RE type-based relocations: type_exists, type_size, type_matches, local_type_id, target_type_id.
 *
 * The local roots are every kind a type-based relocation accepts by name: struct, union, enum,
 * typedefs (of a struct, an int and a function pointer), and a struct flavor. The targets keep some
 * types as they are, change others so that they still exist (same kind, same essential name) but no
 * longer match (a member missing, an int of another size, an enumerator missing, another arity),
 * change sizes, and drop some. type_matches is the stricter relation: every local member must be in
 * the target, at every level names must agree — ints included, so clang's "long long" in types_union
 * does not match gcc's "long long int" — and int sizes and signedness must agree.
 *
 * local_type_id is answered from the program's own BTF (libbpf checks no candidate); target_type_id
 * is the id of the matching type in the target BTF (0 when none matches).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

struct types_struct {
	int a;
	char b[8];
	struct types_struct *next;
};

union types_union {
	int i;
	long long l;
};

enum types_enum {
	TYPES_X,
	TYPES_Y,
};

typedef struct types_struct types_struct_t;
typedef unsigned int types_u32_t;
typedef int (*types_fn_t)(int);

/* Exists in every target with one member fewer: exists, but does not match. */
struct types_mismatch {
	int a;
	int b;
};

/* A flavor: type-based relocations also match on the essential name. */
struct types_struct___flavor {
	int a;
};

/* In no target at all. */
struct types_only_local {
	int x;
};

unsigned int exists_out[9];
unsigned int size_out[9];
unsigned int matches_out[9];

SEC("raw_tp/sys_enter")
int types_based(void *ctx)
{
	exists_out[0] = bpf_core_type_exists(struct types_struct);
	exists_out[1] = bpf_core_type_exists(union types_union);
	exists_out[2] = bpf_core_type_exists(enum types_enum);
	exists_out[3] = bpf_core_type_exists(types_struct_t);
	exists_out[4] = bpf_core_type_exists(types_u32_t);
	exists_out[5] = bpf_core_type_exists(types_fn_t);
	exists_out[6] = bpf_core_type_exists(struct types_mismatch);
	exists_out[7] = bpf_core_type_exists(struct types_struct___flavor);
	exists_out[8] = bpf_core_type_exists(struct types_only_local);

	size_out[0] = bpf_core_type_size(struct types_struct);
	size_out[1] = bpf_core_type_size(union types_union);
	size_out[2] = bpf_core_type_size(enum types_enum);
	size_out[3] = bpf_core_type_size(types_struct_t);
	size_out[4] = bpf_core_type_size(types_u32_t);
	size_out[5] = bpf_core_type_size(types_fn_t);
	size_out[6] = bpf_core_type_size(struct types_mismatch);
	size_out[7] = bpf_core_type_size(struct types_struct___flavor);
	size_out[8] = bpf_core_type_size(struct types_only_local);

	matches_out[0] = bpf_core_type_matches(struct types_struct);
	matches_out[1] = bpf_core_type_matches(union types_union);
	matches_out[2] = bpf_core_type_matches(enum types_enum);
	matches_out[3] = bpf_core_type_matches(types_struct_t);
	matches_out[4] = bpf_core_type_matches(types_u32_t);
	matches_out[5] = bpf_core_type_matches(types_fn_t);
	matches_out[6] = bpf_core_type_matches(struct types_mismatch);
	matches_out[7] = bpf_core_type_matches(struct types_struct___flavor);
	matches_out[8] = bpf_core_type_matches(struct types_only_local);
	return 0;
}

unsigned long long local_id_out[4];
unsigned long long target_id_out[4];

SEC("raw_tp/sys_exit")
int types_ids(void *ctx)
{
	local_id_out[0] = bpf_core_type_id_local(struct types_struct);
	local_id_out[1] = bpf_core_type_id_local(union types_union);
	local_id_out[2] = bpf_core_type_id_local(types_u32_t);
	local_id_out[3] = bpf_core_type_id_local(struct types_only_local);

	target_id_out[0] = bpf_core_type_id_kernel(struct types_struct);
	target_id_out[1] = bpf_core_type_id_kernel(union types_union);
	target_id_out[2] = bpf_core_type_id_kernel(types_u32_t);
	target_id_out[3] = bpf_core_type_id_kernel(struct types_only_local);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
