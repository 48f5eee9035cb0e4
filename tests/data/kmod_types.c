/* A kernel module's own types: the test compiles it with -g, encodes its DWARF as BTF split on the
 * running kernel's (pahole -J --btf_base /sys/kernel/btf/vmlinux) and adds a .modinfo section, which
 * is what makes an ELF file a .ko. It is built at test time because its type ids continue the running
 * kernel's. */
struct sk_buff;
struct task_struct;

struct nf_demo_conn {
	unsigned long mark;
	struct sk_buff *skb;
	struct task_struct *owner;
	unsigned int state : 4;
	unsigned int flags : 12;
};

typedef struct nf_demo_conn nf_demo_conn_t;

int nf_demo_mark(nf_demo_conn_t *conn)
{
	return (int)conn->mark + conn->state;
}
