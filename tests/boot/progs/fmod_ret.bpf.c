/* fmod_ret may change what a function returns; the kernel allows it on security_* functions and on
 * those on the error-injection list. security_file_open is one. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

int denied_pid;

SEC("fmod_ret/security_file_open")
int BPF_PROG(deny_open, struct file *file, int ret)
{
	if (ret)
		return ret;
	if (denied_pid && (bpf_get_current_pid_tgid() >> 32) == denied_pid)
		return -1; /* -EPERM */
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
