/* Process exec against the running kernel: who ran what, as execsnoop reports it.
 * task_struct -> real_parent, mm (argument area), cred (uids), comm; the tracepoint's own record
 * (trace_event_raw_sched_process_exec) with its __data_loc filename. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

struct exec_event {
	int pid;
	int ppid;
	unsigned int uid;
	unsigned int euid;
	unsigned long args_size;
	char comm[16];
	char filename[64];
};

struct exec_event last_exec;

SEC("tp/sched/sched_process_exec")
int trace_exec(struct trace_event_raw_sched_process_exec *ctx)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	unsigned int filename_loc = BPF_CORE_READ(ctx, __data_loc_filename) & 0xffff;

	last_exec.pid = BPF_CORE_READ(task, tgid);
	last_exec.ppid = BPF_CORE_READ(task, real_parent, tgid);
	last_exec.uid = BPF_CORE_READ(task, cred, uid.val);
	last_exec.euid = BPF_CORE_READ(task, cred, euid.val);
	last_exec.args_size = BPF_CORE_READ(task, mm, arg_end) - BPF_CORE_READ(task, mm, arg_start);
	BPF_CORE_READ_STR_INTO(&last_exec.comm, task, comm);
	bpf_probe_read_kernel_str(last_exec.filename, sizeof(last_exec.filename), (void *)ctx + filename_loc);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
