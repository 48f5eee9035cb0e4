/* The "kernel" where much of what the CO-RE corpus (tests/bpf/core_*.bpf.c) asks for is missing:
 * fields renamed away or of an incompatible type, array indexes past a smaller bound, enumerators
 * and whole types absent, a struct present without the typedef the program names it by. Existence
 * relocations then give 0, type-based ones 0, and reads are poisoned.
 *
 * Types of the corpus that this file does not define at all: flavored___new's d, ptr_as_arr, sizes,
 * enums_signed, enums_grows, and every err_* type.
 *
 * Built like core_target_moved.c: gcc -g, pahole -J; every type used by a global variable.
 */

/* ---- core_fields ---- */

/* Only a flavor, with only a: b, c (and flavored___new's d) are poisoned. */
struct flavored___v1 {
	int a;
};

struct nest_inner {
	int x;
};

struct nesting {
	int u;
	struct {
		int c;
	};
	struct nest_inner in; /* in.x resolves, in.y does not */
};

struct arrays_elem {
	int v;
	int w;
};

struct arrays {
	int a[2];                  /* a[2] is past the bound */
	char b[2][3][4];           /* pahole flattens it to char[24]: b[1][2][3] cannot index it */
	struct arrays_elem c[3];
	struct arrays_elem f[2];   /* no longer flexible: f[3] is past the bound */
};

/* Renamed: an enum field matches only an enum of the same essential name. */
enum prim_enum_renamed {
	PRIM_OTHER,
};

struct primitives {
	char f1[4];                    /* an array, not an int */
	enum prim_enum_renamed f2;
	void *f3;
	long f5;                       /* an int, not a pointer */
};

/* The struct without the typedef mods_t that the program's relocations start from. */
struct mods {
	const int a;
	volatile int b;
};

struct ints {
	long long s64f;
	unsigned char u8f[2];
};

struct existence {
	int a;
	char b[4]; /* an array where the program has an int: does not exist */
	int arr[2];
};

/* ---- core_bitfields ---- */

struct bitfields {
	unsigned int ub1 : 1;
	int sb4 : 4;
};

/* ---- core_types ---- */

struct types_struct {
	int a;
	char b[8];
	struct types_struct *next;
};

enum types_enum {
	TYPES_X, /* TYPES_Y is missing: exists, does not match */
};

typedef int types_u32_t;                 /* signed: exists, does not match */
typedef int (*types_fn_t)(int, int);     /* another arity: exists, does not match */

struct types_mismatch {
	int a;
};

/* ---- core_enums ---- */

enum enums_named {
	EN_A = 5,
	EN_C = 6, /* EN_B is missing */
};

typedef enum {
	TE_X,
	TE_Y, /* TE_Z is missing */
} enums_typedef_t;

/* 64-bit in the program, 32-bit here; EW_HUGE is missing. */
enum enums_wide {
	EW_SMALL = 1,
	EW_BIG = 2,
};

enum enums_flavor {
	ENF_A, /* ENF_B is missing */
};

/* Uses of every type, so that gcc keeps them. */
struct flavored___v1 flavored_v;
struct nesting nesting_v;
struct arrays arrays_v;
struct primitives primitives_v;
struct mods mods_v;
struct ints ints_v;
struct existence existence_v;
struct bitfields bitfields_v;
struct types_struct types_struct_v;
enum types_enum types_enum_v;
types_u32_t types_u32_v;
types_fn_t types_fn_v;
struct types_mismatch types_mismatch_v;
enum enums_named enums_named_v;
enums_typedef_t enums_typedef_v;
enum enums_wide enums_wide_v;
enum enums_flavor enums_flavor_v;
