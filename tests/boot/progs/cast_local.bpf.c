/* A program that declares its own view of a kernel struct, without preserve_access_index: no CO-RE
 * relocation names what it reads, but the verifier checks the load against the kernel's struct filename
 * (its uptr, 8 bytes in on 6.1 and 6.12), as it checks every load through the typed argument. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

struct filename_head {
	const char *name;
	const char *uptr;
	int refcnt;
};

unsigned long seen_uptr;

SEC("fentry/do_unlinkat")
int BPF_PROG(on_unlinkat_local, int dfd, struct filename *name)
{
	const struct filename_head *head = (const void *)name;

	seen_uptr = (unsigned long)head->uptr;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
