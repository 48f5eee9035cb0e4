/* Page faults against the running kernel: handle_mm_fault(struct vm_area_struct *, unsigned long
 * address, unsigned int flags, ...). vm_area_struct -> vm_start, vm_end, vm_flags (a plain field
 * before Linux 6.3, then a const member of an anonymous union), vm_mm -> total_vm, map_count,
 * vm_file -> f_inode -> i_ino (file-backed or anonymous). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

struct fault_stats {
	unsigned long long faults;
	unsigned long long file_faults;
	unsigned long long last_address;
	unsigned long vma_len;
	unsigned long vm_flags;
	unsigned long total_vm;
	int map_count;
	unsigned long ino;
};

struct fault_stats faults;

SEC("kprobe/handle_mm_fault")
int BPF_KPROBE(trace_page_fault, struct vm_area_struct *vma, unsigned long address)
{
	struct file *file = BPF_CORE_READ(vma, vm_file);

	faults.last_address = address;
	faults.vma_len = BPF_CORE_READ(vma, vm_end) - BPF_CORE_READ(vma, vm_start);
	faults.vm_flags = BPF_CORE_READ(vma, vm_flags);
	faults.total_vm = BPF_CORE_READ(vma, vm_mm, total_vm);
	faults.map_count = BPF_CORE_READ(vma, vm_mm, map_count);
	if (file) {
		faults.ino = BPF_CORE_READ(file, f_inode, i_ino);
		__sync_fetch_and_add(&faults.file_faults, 1);
	}
	__sync_fetch_and_add(&faults.faults, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
