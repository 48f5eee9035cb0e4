/* The "kernel" the CO-RE corpus (tests/bpf/core_*.bpf.c) relocates against, where everything is still
 * there but somewhere else: fields reordered and grown, embedded in other anonymous members, arrays
 * with more dimensions and wider elements, ints of other sizes and signedness, bitfields moved across
 * storage units and turned into plain ints and back, enums renumbered and grown to 64 bits, one
 * struct present only as a flavor (ptr_as_arr___kernel).
 *
 * gcc -g and pahole -J turn this into the target BTF (tests/tools/pahole-elf.sh). Every type is used
 * by a global variable at the end, because gcc drops the DWARF of types nothing uses. The comments
 * give the x86-64 offsets the relocations should come to; tests/e2e/test_core_oracle.cc checks them
 * with offsetof on this very file rather than trusting these comments.
 */

/* ---- core_fields ---- */

/* flavored___old and flavored___new both find this one (the essential name is "flavored"). */
struct flavored {
	long long pad;
	long long d; /* 8 */
	int c;       /* 16 */
	int b;       /* 20 */
	int a;       /* 24 */
};

struct nest_inner {
	long long pad;
	int y; /* 8 */
	int x; /* 12 */
};

/* A struct here, a union in the program. */
struct nest_mix {
	int p;
	int q; /* 4 */
};

struct nesting {
	struct nest_mix mix; /* 0 */
	struct {
		int d; /* 8 */
		union {
			int c;
			struct {
				int b; /* 12 */
				int a;
			} s;
		};
	};
	int u;
	struct nest_inner in; /* 24: in.y 32, in.x 36 */
};

struct arrays_elem {
	long long pad;
	int w; /* 8 */
	int v; /* 12 */
};

/* pahole flattens a C multi-dimensional array into one BTF array (char[3][4][5] becomes char[60]; gcc
 * leaves no typedef'd rows to keep it nested), so in the pahole-made target the accesses b[1][2][3]
 * and d[0][1].v find no array to index at their second level and are poisoned, as they would be
 * against kernel BTF. clang's BTF of this same file (core_target_moved.clang.o) keeps the nesting,
 * and there they resolve. */
struct arrays {
	char b[3][4][5];           /* b[1][2][3] at 20 + 10 + 3 */
	int z[3];                  /* zero-size in the program */
	long long a[6];            /* 8-byte elements */
	struct arrays_elem c[4];   /* 16-byte elements */
	struct arrays_elem d[2][3];
	struct arrays_elem f[];    /* still flexible */
};

enum prim_enum {
	PRIM_ONE = 1,
	PRIM_ZERO = 0,
	PRIM_BIG = 0x100000000LL, /* makes it an 8-byte enum: ENUM64 in BTF */
};

typedef long (*prim_fn_t)(long, long);

struct primitives {
	void (*f4)(int);   /* 0 */
	prim_fn_t f5;      /* 8 */
	void *f3;          /* 16 */
	enum prim_enum f2; /* 24 */
	char f1;           /* 32 */
};

typedef int *mods_intptr_t;
typedef const mods_intptr_t mods_cptr_t;
typedef long long mods_wide_t;

struct mods {
	int *f;                      /* 0 */
	volatile mods_cptr_t e;      /* 8 */
	mods_wide_t d;               /* 16 */
	const volatile long long c;  /* 24 */
	int b;                       /* 32 */
	const int a;                 /* 36 */
};

/* The program's relocations have this typedef as their root. */
typedef struct mods mods_t;

/* Only a flavor of ptr_as_arr exists: size 16, so p[1].a is at 16 + 8. */
struct ptr_as_arr___kernel {
	long long pad;
	int a; /* 8 */
};

/* Loads through these change size: unsigned ones are widened or narrowed, signed ones poisoned. */
struct ints {
	long long s64f;          /* 0 */
	unsigned int u64f;       /* 8: 8 -> 4 bytes */
	unsigned short u8f;      /* 12: 1 -> 2 */
	short s16f;              /* 14 */
	unsigned long long u32f; /* 16: 4 -> 8 */
	long long s32f;          /* 24: 4 -> 8, signed */
	unsigned int u16f;       /* 32: 2 -> 4 */
	short s8f;               /* 36: 1 -> 2, signed */
	_Bool b;                 /* 38 */
};

struct existence {
	enum prim_enum e;
	long long only_in_flavor;
	struct {
		int x;
	} s;
	int arr[6];
	int c;
	int b;
	int a;
};

struct sizes {
	char arr_field[16];
	struct nest_inner struct_field;
	enum prim_enum enum_field;
	void *ptr_field;
	long long int_field;
};

/* ---- core_bitfields ---- */

struct bitfields {
	unsigned long long pad : 62;
	unsigned long long ub2 : 2; /* the top of the first 8 bytes */
	unsigned char ub1;          /* a bitfield in the program, a plain int here */
	unsigned short ub7 : 9;     /* grown, on a 2-byte base */
	unsigned int sb4 : 6;       /* grown, no longer signed */
	long long sb20 : 40;        /* grown, on an 8-byte base */
	unsigned int u32 : 24;      /* a plain int in the program, a bitfield here */
	short s32;                  /* shrunk to 2 bytes */
};

/* ---- core_types ---- */

struct types_struct {
	int a;
	char b[8];
	struct types_struct *next;
	long long extra; /* more members than the program's: still matches */
};

/* Would match but for the name of an int: type_matches compares names at every level, ints included,
 * and gcc calls the program's (clang's) "long long" "long long int". */
union types_union {
	int i;
	long long l;
	char c[16];
};

enum types_enum {
	TYPES_Y = 3,
	TYPES_X = 7,
	TYPES_Z,
};

typedef struct types_struct types_struct_t;
typedef unsigned long types_u32_t; /* 8 bytes: exists, does not match */
typedef int (*types_fn_t)(int);

struct types_mismatch {
	int a;
};

/* ---- core_enums ---- */

/* An unsigned 32-bit enum (kflag 0) with a value above INT32_MAX: libbpf 1.1.2 reads enumerator values
 * through the signed __s32 of struct btf_enum, so it patches EN_C as 0xffffffff80000001. */
enum enums_named {
	EN_C = 0x80000001U,
	EN_B = 2,
	EN_A = 3,
};

enum enums_signed {
	ES_POS = -7,
	ES_NEG = 5,
};

typedef enum {
	TE_Z = 100,
	TE_Y = 200,
	TE_X = 300,
} enums_typedef_t;

enum enums_wide {
	EW_HUGE = 0xfffffffffffffff0ULL,
	EW_BIG = 0x1122334455667788ULL,
	EW_SMALL = 2,
};

/* The program's enums_flavor___local, and its enumerator ENF_B___v2. */
enum enums_flavor {
	ENF_B = 42,
	ENF_A = 43,
};

/* 32-bit in the program, 64-bit here. */
enum enums_grows {
	EG_TWO = 0x200000000LL,
	EG_ONE = 0x100000000LL,
};

/* ---- core_errors: here every case resolves (except the renamed field, which no target has) ---- */

struct err_prune {
	long long pad;
	int b; /* 8 */
	int a; /* 12 */
};

struct err_same {
	long long pad;
	int x; /* 8 */
};

struct err_field {
	long long pad;
	int field; /* 8 */
};

struct err_amb {
	int pad;
	int x; /* 4 */
};

struct err_size {
	long long y; /* 8 bytes */
};

struct err_bits {
	unsigned long long pad : 3;
	unsigned long long x : 60; /* bits 3..62: one 8-byte load */
	unsigned long long y : 1;
};

/* Uses of every type, so that gcc keeps them. */
struct flavored flavored_v;
struct nesting nesting_v;
struct arrays arrays_v;
struct primitives primitives_v;
mods_t mods_v;
struct ptr_as_arr___kernel ptr_as_arr_v;
struct ints ints_v;
struct existence existence_v;
struct sizes sizes_v;
struct bitfields bitfields_v;
types_struct_t types_struct_v;
union types_union types_union_v;
enum types_enum types_enum_v;
types_u32_t types_u32_v;
types_fn_t types_fn_v;
struct types_mismatch types_mismatch_v;
enum enums_named enums_named_v;
enum enums_signed enums_signed_v;
enums_typedef_t enums_typedef_v;
enum enums_wide enums_wide_v;
enum enums_flavor enums_flavor_v;
enum enums_grows enums_grows_v;
struct err_prune err_prune_v;
struct err_same err_same_v;
struct err_field err_field_v;
struct err_amb err_amb_v;
struct err_size err_size_v;
struct err_bits err_bits_v;
