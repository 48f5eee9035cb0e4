/* Attach targets a loader decides at run time. `bare` names none (SEC("fentry")): libbpf refuses to
 * load it unless bpf_program__set_attach_target names one, so `btfslim check` reports it unchecked unless
 * told the target with --attach-target bare=FUNC. `optional` is SEC("?..."): libbpf does not load it
 * unless its loader turns autoload on, so its missing target does not fail the load. `placeholder`
 * names dummy_file_read, as libbpf-tools' fsslower and fsdist do: a function no kernel has, replaced at
 * run time by bpf_program__set_attach_target with the file system's own, so it is unchecked too. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

SEC("fentry")
int BPF_PROG(bare)
{
	return 0;
}

SEC("fentry/dummy_file_read")
int BPF_PROG(placeholder)
{
	return 0;
}

SEC("?fentry/btfslim_absent_function")
int BPF_PROG(optional)
{
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
