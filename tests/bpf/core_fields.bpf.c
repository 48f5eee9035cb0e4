/* CO-RE field relocations: byte offsets, sizes, existence and signedness of fields.
 *
 * One program per category of the kernel's CO-RE selftests (progs/core_reloc_types.h): flavors, nesting,
 * arrays, primitives, modifiers and typedefs, pointer-as-array, ints, existence and sizes. Every type
 * here is the program's own, as a BPF program that does not include vmlinux.h would write it; the
 * "kernel side" is in tests/data/core_target_{moved,missing,errors}.c.
 *
 * Shapes of relocation the corpus needs, and where they are:
 *   - BPF_CORE_READ (bpf_probe_read_kernel of &p->f): the offset lands in an ALU instruction;
 *   - direct dereference p->f: the offset lands in the LDX itself, and a different target size
 *     changes the load's size (unsigned) or poisons it (signed) — fields_ints;
 *   - several programs in one ELF section (relo # counts across them) and a relocation inside a
 *     static subprogram in .text (libbpf names the subprogram) — fields_nesting / read_nested.
 *
 * Results go to global variables so that nothing is optimized away. The programs are never attached;
 * several would not pass the verifier (direct reads through raw_tp arguments) — only libbpf's
 * relocation of them matters.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

#define __core __attribute__((preserve_access_index))

/* ---- flavors: the local name carries a ___flavor suffix; libbpf matches on the essential name ---- */
struct flavored___old {
	int a;
	int b;
	int c;
} __core;

/* The same essential name twice in one program: each flavor is its own local type with its own
 * candidate list. */
struct flavored___new {
	int a;
	long long d;
} __core;

long long flavors_out[5];

SEC("raw_tp/sys_enter")
int fields_flavors(struct bpf_raw_tracepoint_args *ctx)
{
	struct flavored___old *o = (void *)ctx->args[0];
	struct flavored___new *n = (void *)ctx->args[1];

	flavors_out[0] = BPF_CORE_READ(o, a);
	flavors_out[1] = BPF_CORE_READ(o, b);
	flavors_out[2] = BPF_CORE_READ(o, c);
	flavors_out[3] = BPF_CORE_READ(n, a);
	flavors_out[4] = BPF_CORE_READ(n, d);
	return 0;
}

/* ---- nesting: anonymous structs and unions (they appear only in the raw access string), a named
 * embedded struct, and a union the target declares as a struct (composites match any composite) ---- */
struct nest_inner {
	int x;
	int y;
} __core;

union nest_mix {
	int p;
	int q;
} __core;

struct nesting {
	union {
		struct {
			int a;
			int b;
		} s;
		int u;
	};
	struct {
		int c;
		int d;
	};
	struct nest_inner in;
	union nest_mix mix;
} __core;

int nesting_out[5];

/* A relocation inside a static subprogram: .BTF.ext files it under .text, and libbpf reports it under
 * the subprogram's name with the instruction index counted from the subprogram's first instruction. */
static __attribute__((noinline)) int read_nested(struct nesting *n)
{
	return BPF_CORE_READ(n, in.y);
}

SEC("raw_tp/sys_enter")
int fields_nesting(struct bpf_raw_tracepoint_args *ctx)
{
	struct nesting *n = (void *)ctx->args[0];

	nesting_out[0] = BPF_CORE_READ(n, s.b);
	nesting_out[1] = BPF_CORE_READ(n, d);
	nesting_out[2] = BPF_CORE_READ(n, in.x);
	nesting_out[3] = BPF_CORE_READ(n, mix.q);
	nesting_out[4] = read_nested(n);
	return 0;
}

/* ---- arrays: one to three dimensions, element sizes that change, a zero-size array in the middle
 * (only its size is asked: an index into it would not parse locally), a flexible array at the end
 * (any index is in bounds) ---- */
struct arrays_elem {
	int v;
	int w;
} __core;

struct arrays {
	int a[5];
	char b[2][3][4];
	struct arrays_elem c[3];
	int z[0];
	struct arrays_elem d[1][2];
	struct arrays_elem f[];
} __core;

long long arrays_out[8];

SEC("raw_tp/sys_enter")
int fields_arrays(struct bpf_raw_tracepoint_args *ctx)
{
	struct arrays *arr = (void *)ctx->args[0];

	arrays_out[0] = BPF_CORE_READ(arr, a[2]);
	arrays_out[1] = BPF_CORE_READ(arr, b[1][2][3]);
	arrays_out[2] = BPF_CORE_READ(arr, c[1].w);
	arrays_out[3] = BPF_CORE_READ(arr, d[0][1].v);
	arrays_out[4] = BPF_CORE_READ(arr, f[3].w);
	arrays_out[5] = bpf_core_field_size(arr->z);
	arrays_out[6] = bpf_core_field_size(arr->c[1]);
	arrays_out[7] = bpf_core_field_size(arr->b[1]);
	return 0;
}

/* ---- primitives: an enum field (enum names must agree), pointers to data and to functions (any
 * pointer matches any pointer), a char ---- */
enum prim_enum {
	PRIM_ZERO,
	PRIM_ONE,
};

typedef int (*prim_fn_t)(int);

struct primitives {
	char f1;
	enum prim_enum f2;
	void *f3;
	int (*f4)(void);
	prim_fn_t f5;
} __core;

long long primitives_out[5];

SEC("raw_tp/sys_enter")
int fields_primitives(struct bpf_raw_tracepoint_args *ctx)
{
	struct primitives *p = (void *)ctx->args[0];

	primitives_out[0] = BPF_CORE_READ(p, f1);
	primitives_out[1] = BPF_CORE_READ(p, f2);
	primitives_out[2] = (long long)BPF_CORE_READ(p, f3);
	primitives_out[3] = (long long)BPF_CORE_READ(p, f4);
	primitives_out[4] = (long long)BPF_CORE_READ(p, f5);
	return 0;
}

/* ---- modifiers and typedefs: const/volatile and typedef chains are skipped on both sides ---- */
typedef int mods_int_t;
typedef mods_int_t mods_int2_t;
typedef int *mods_intptr_t;

struct mods {
	const int a;
	volatile int b;
	mods_int_t c;
	mods_int2_t d;
	const volatile mods_intptr_t e;
	int *f;
} __core;

typedef struct mods mods_t;

long long mods_out[6];

SEC("raw_tp/sys_exit")
int fields_mods(struct bpf_raw_tracepoint_args *ctx)
{
	const volatile mods_t *m = (void *)ctx->args[0];

	mods_out[0] = BPF_CORE_READ(m, a);
	mods_out[1] = BPF_CORE_READ(m, b);
	mods_out[2] = BPF_CORE_READ(m, c);
	mods_out[3] = BPF_CORE_READ(m, d);
	mods_out[4] = (long long)BPF_CORE_READ(m, e);
	mods_out[5] = (long long)BPF_CORE_READ(m, f);
	return 0;
}

/* ---- pointer as array: the access string starts with a non-zero index (p[1], p[2]) that scales by
 * the target's size of the whole struct ---- */
struct ptr_as_arr {
	int a;
} __core;

int ptr_as_arr_out[3];

SEC("raw_tp/sys_exit")
int fields_ptr_as_array(struct bpf_raw_tracepoint_args *ctx)
{
	struct ptr_as_arr *p = (void *)ctx->args[0];

	bpf_core_read(&ptr_as_arr_out[0], sizeof(int), &p[0].a);
	bpf_core_read(&ptr_as_arr_out[1], sizeof(int), &p[1].a);
	bpf_core_read(&ptr_as_arr_out[2], sizeof(int), &p[2].a);
	return 0;
}

/* ---- ints: bool, both signednesses, every size; read directly (LDX relocations whose load size
 * follows the target's: widened for unsigned fields, poisoned for signed ones), plus their size and
 * signedness ---- */
struct ints {
	_Bool b;
	unsigned char u8f;
	signed char s8f;
	unsigned short u16f;
	short s16f;
	unsigned int u32f;
	int s32f;
	unsigned long long u64f;
	long long s64f;
} __core;

long long ints_out[9];
unsigned int ints_size[9];
unsigned int ints_signed[9];

SEC("socket")
int fields_ints(struct __sk_buff *skb)
{
	struct ints *in = (void *)(long)skb->data;

	ints_out[0] = in->b;
	ints_out[1] = in->u8f;
	ints_out[2] = in->s8f;
	ints_out[3] = in->u16f;
	ints_out[4] = in->s16f;
	ints_out[5] = in->u32f;
	ints_out[6] = in->s32f;
	ints_out[7] = in->u64f;
	ints_out[8] = in->s64f;

	ints_size[0] = bpf_core_field_size(in->b);
	ints_size[1] = bpf_core_field_size(in->u8f);
	ints_size[2] = bpf_core_field_size(in->s8f);
	ints_size[3] = bpf_core_field_size(in->u16f);
	ints_size[4] = bpf_core_field_size(in->s16f);
	ints_size[5] = bpf_core_field_size(in->u32f);
	ints_size[6] = bpf_core_field_size(in->s32f);
	ints_size[7] = bpf_core_field_size(in->u64f);
	ints_size[8] = bpf_core_field_size(in->s64f);

	ints_signed[0] = __CORE_RELO(in, b, SIGNED);
	ints_signed[1] = __CORE_RELO(in, u8f, SIGNED);
	ints_signed[2] = __CORE_RELO(in, s8f, SIGNED);
	ints_signed[3] = __CORE_RELO(in, u16f, SIGNED);
	ints_signed[4] = __CORE_RELO(in, s16f, SIGNED);
	ints_signed[5] = __CORE_RELO(in, u32f, SIGNED);
	ints_signed[6] = __CORE_RELO(in, s32f, SIGNED);
	ints_signed[7] = __CORE_RELO(in, u64f, SIGNED);
	ints_signed[8] = __CORE_RELO(in, s64f, SIGNED);
	return 0;
}

/* ---- existence: fields present, missing, of an incompatible type, and an array index past the
 * target's bound; the existence of a field through a flavor ---- */
struct existence {
	int a;
	int b;
	int c;
	int arr[4];
	struct {
		int x;
	} s;
	enum prim_enum e;
} __core;

struct existence___minimal {
	int a;
	long long only_in_flavor;
} __core;

int exists_out[9];

SEC("tp/sched/sched_process_exec")
int fields_existence(void *ctx)
{
	struct existence *e = (void *)0;
	struct existence___minimal *m = (void *)0;

	exists_out[0] = bpf_core_field_exists(e->a);
	exists_out[1] = bpf_core_field_exists(e->b);
	exists_out[2] = bpf_core_field_exists(e->c);
	exists_out[3] = bpf_core_field_exists(e->arr);
	exists_out[4] = bpf_core_field_exists(e->arr[3]);
	exists_out[5] = bpf_core_field_exists(e->s.x);
	exists_out[6] = bpf_core_field_exists(struct existence, e);
	exists_out[7] = bpf_core_field_exists(m->a);
	exists_out[8] = bpf_core_field_exists(m->only_in_flavor);
	return 0;
}

/* ---- sizes of fields of every kind: int, pointer, struct, array, enum; and their offsets asked
 * directly (bpf_core_field_offset) ---- */
struct sizes {
	int int_field;
	void *ptr_field;
	struct nest_inner struct_field;
	char arr_field[10];
	enum prim_enum enum_field;
} __core;

unsigned int sizes_out[10];

SEC("tp/sched/sched_process_exec")
int fields_sizes(void *ctx)
{
	struct sizes *s = (void *)0;

	sizes_out[0] = bpf_core_field_size(s->int_field);
	sizes_out[1] = bpf_core_field_size(s->ptr_field);
	sizes_out[2] = bpf_core_field_size(s->struct_field);
	sizes_out[3] = bpf_core_field_size(s->arr_field);
	sizes_out[4] = bpf_core_field_size(s->enum_field);
	sizes_out[5] = bpf_core_field_offset(s->int_field);
	sizes_out[6] = bpf_core_field_offset(s->ptr_field);
	sizes_out[7] = bpf_core_field_offset(s->struct_field);
	sizes_out[8] = bpf_core_field_offset(s->arr_field);
	sizes_out[9] = bpf_core_field_offset(s->enum_field);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
