// The libbpf baseline for `btfslim measure`: the least a libbpf-based tool must do before it can say
// anything about a BTF file, which is to parse it. Nothing is printed, so what bench/run times is
// process start-up plus btf__parse() and btf__free(), with nothing of btfslim's work on top.
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : "/sys/kernel/btf/vmlinux";
	struct btf *btf = btf__parse(path, NULL);

	if (!btf) {
		char msg[128];

		libbpf_strerror(errno, msg, sizeof(msg));
		fprintf(stderr, "btf_parse: %s: %s\n", path, msg);
		return 1;
	}
	btf__free(btf);
	return 0;
}
