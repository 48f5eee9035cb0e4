/* The "kernel" on which the cases of tests/bpf/core_errors.bpf.c go wrong (see that file): several
 * flavors of one struct, as a BTF with leftovers of deduplication or a program's own flavors would
 * have, and a packed struct whose bitfield straddles 8 bytes. No type of the other corpus objects is
 * here, so against this target their reads are poisoned and their existence checks give 0.
 *
 * Built like core_target_moved.c: gcc -g, pahole -J; every type used by a global variable.
 */

/* err_prune: ___one matches a and b; ___two has only b, at another offset. Relocating a first
 * leaves ___one the only candidate for b. */
struct err_prune___one {
	int a;
	int b; /* 4 */
};

struct err_prune___two {
	long long pad;
	int b; /* 8 */
};

/* err_same: two flavors that agree on x (at 8): not ambiguous. */
struct err_same___a {
	long long pad;
	int x;
};

struct err_same___b {
	long long pad;
	int x;
	int more;
};

/* err_field: has `field` but not `renamed`. */
struct err_field {
	int field;
};

/* err_amb: x at 0 in one flavor and at 8 in the other: "field offset ambiguity". */
struct err_amb___a {
	int x;
};

struct err_amb___b {
	long long pad;
	int x;
};

/* err_size: y at 0 in both, 4 bytes in one and 8 in the other: the field_size results disagree,
 * "relocation decision ambiguity". */
struct err_size___a {
	int y;
};

struct err_size___b {
	long long y;
};

/* err_bits: x occupies bits 8..67; from its 8-byte type libbpf tries one aligned 8-byte load, which
 * ends at bit 64: "can't be satisfied for bitfield" (-E2BIG). */
struct err_bits {
	unsigned char lead;
	unsigned long long x : 60;
	unsigned long long y : 4;
} __attribute__((packed));

/* Uses of every type, so that gcc keeps them. */
struct err_prune___one err_prune_one_v;
struct err_prune___two err_prune_two_v;
struct err_same___a err_same_a_v;
struct err_same___b err_same_b_v;
struct err_field err_field_v;
struct err_amb___a err_amb_a_v;
struct err_amb___b err_amb_b_v;
struct err_size___a err_size_a_v;
struct err_size___b err_size_b_v;
struct err_bits err_bits_v;
