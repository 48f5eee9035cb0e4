/* A kernel module of fuzz/data/kernel_small.c's image, for fuzz_kernel: compiled (not linked, as a .ko is
 * not), its .modinfo naming the image's release, its BTF split on the image's (pahole -J --btf_base), and
 * a .BTF_ids of slots naming its own types and the image's. */
#include "../../tests/data/core_target_moved.c"

struct fuzzmod_state {
	struct flavored *flavored;
	union types_union u;
	int count;
	struct fuzzmod_state *next;
};

struct fuzzmod_state fuzzmod_v;

int fuzzmod_fn(struct fuzzmod_state *s, struct nesting *n) { return s->count + (n != 0); }

__attribute__((section(".modinfo"), used)) static const char fuzzmod_vermagic[] =
	"vermagic=6.1.0-57-cloud-amd64 SMP preempt mod_unload modversions ";
__attribute__((section(".modinfo"), used)) static const char fuzzmod_name[] = "name=fuzzmod";

#define SLOT(kind, name, n)                                                  \
	".global __BTF_ID__" #kind "__" #name "__" #n "\n"                   \
	".type __BTF_ID__" #kind "__" #name "__" #n ", @object\n"            \
	".size __BTF_ID__" #kind "__" #name "__" #n ", 4\n"                  \
	"__BTF_ID__" #kind "__" #name "__" #n ":\n"                          \
	".zero 4\n"

asm(".pushsection .BTF_ids,\"a\"\n"
    ".balign 4\n"
    SLOT(struct, fuzzmod_state, 1)
    SLOT(struct, flavored, 2)
    SLOT(func, fuzzmod_fn, 3)
    ".global __BTF_ID__set__fuzzmod_set\n"
    ".type __BTF_ID__set__fuzzmod_set, @object\n"
    ".size __BTF_ID__set__fuzzmod_set, 12\n"
    "__BTF_ID__set__fuzzmod_set:\n"
    ".zero 4\n"
    SLOT(func, fuzzmod_fn, 4)
    SLOT(struct, nesting, 5)
    ".popsection\n");
