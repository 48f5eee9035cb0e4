/* User-space types whose DWARF pahole -J turns into .BTF: the "user-space binary" input. */
struct list_node {
	struct list_node *next, *prev;
};

struct request {
	unsigned long id;
	const char *path;
	unsigned int flags : 3;
	unsigned int state : 5;
	struct list_node link;
	union {
		int fd;
		void *handle;
	};
	char tag[16];
};

enum request_kind { REQ_READ, REQ_WRITE = 4, REQ_SYNC = -1 };

typedef struct request request_t;

int submit(request_t *req, enum request_kind kind)
{
	return req->flags + (int)kind;
}
