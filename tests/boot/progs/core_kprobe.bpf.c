/* A kprobe reading kernel memory with CO-RE (BPF_CORE_READ): libbpf relocates each field offset against
 * the kernel's BTF before the load; the verifier needs no BTF for a kprobe. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

int parent_tgid;
char name[64];

SEC("kprobe/do_unlinkat")
int BPF_KPROBE(on_unlinkat, int dfd, struct filename *filename)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();

	parent_tgid = BPF_CORE_READ(task, real_parent, tgid);
	bpf_probe_read_kernel_str(name, sizeof name, BPF_CORE_READ(filename, name));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
