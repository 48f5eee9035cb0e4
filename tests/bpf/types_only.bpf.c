/* A BPF object with types and no programs: clang -target bpf -g writes .BTF, and no .BTF.ext (no function
 * has line info), so there is nothing to relocate: the tests' object that `check` and `minimize` note as
 * such, and that a BPF object of the right machine (EM_BPF) must be for them to read it at all. */
struct list_node {
	struct list_node *next, *prev;
};

struct request {
	unsigned long id;
	struct list_node link;
	char tag[16];
};

enum request_kind { REQ_READ, REQ_WRITE = 4 };

struct request last_request;
enum request_kind last_kind;
