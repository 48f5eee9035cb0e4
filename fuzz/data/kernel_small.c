/* A kernel image for fuzz_kernel, small enough to slim thousands of times a second: the types of the
 * CO-RE corpus' "moved" kernel (tests/data/core_target_moved.c), a few functions, a linux_banner, and a
 * .BTF_ids section laid out as include/linux/btf_ids.h lays it out: `__BTF_ID__<kind>__<name>__<n>`
 * slots of 4 bytes, a `__BTF_ID__set__<name>` (u32 count, then ids) and a `__BTF_ID__set8__<name>`
 * (u32 count, u32 flags, then {id, flags} pairs), whose entries are slots of their own.
 *
 * Linked (so that every section has an address, as a vmlinux's do) with -nostdlib, then pahole -J adds
 * .BTF. The slots hold zeros here: fuzz_kernel fills them as resolve_btfids would before it mutates the
 * image. */
#include "../../tests/data/core_target_moved.c"

int bpf_fuzz_first(struct flavored *f) { return f->a; }
int bpf_fuzz_second(struct nesting *n, int x) { return x + (n != 0); }
long bpf_fuzz_third(union types_union *u) { return (long)u; }

const char linux_banner[] = "Linux version 6.1.0-57-cloud-amd64 (fuzz@btfslim) #1 SMP PREEMPT_DYNAMIC\n";

#define SLOT(kind, name, n)                                                  \
	".global __BTF_ID__" #kind "__" #name "__" #n "\n"                   \
	".type __BTF_ID__" #kind "__" #name "__" #n ", @object\n"            \
	".size __BTF_ID__" #kind "__" #name "__" #n ", 4\n"                  \
	"__BTF_ID__" #kind "__" #name "__" #n ":\n"                          \
	".zero 4\n"

asm(".pushsection .BTF_ids,\"a\"\n"
    ".balign 4\n"
    SLOT(struct, flavored, 1)
    SLOT(struct, nesting, 2)
    SLOT(union, types_union, 3)
    SLOT(typedef, mods_t, 4)
    SLOT(func, bpf_fuzz_first, 5)
    SLOT(struct, no_such_struct, 6)
    ".global __BTF_ID__set__fuzz_set\n"
    ".type __BTF_ID__set__fuzz_set, @object\n"
    ".size __BTF_ID__set__fuzz_set, 16\n"
    "__BTF_ID__set__fuzz_set:\n"
    ".zero 4\n"
    SLOT(func, bpf_fuzz_third, 7)
    SLOT(func, bpf_fuzz_first, 8)
    SLOT(func, bpf_fuzz_second, 9)
    ".global __BTF_ID__set8__fuzz_set8\n"
    ".type __BTF_ID__set8__fuzz_set8, @object\n"
    ".size __BTF_ID__set8__fuzz_set8, 24\n"
    "__BTF_ID__set8__fuzz_set8:\n"
    ".zero 8\n"
    SLOT(func, bpf_fuzz_second, 10)
    ".zero 4\n"
    SLOT(func, bpf_fuzz_first, 11)
    ".zero 4\n"
    ".popsection\n");

void _start(void) {}
