// The libbpf baseline for `btfslim dedup`: what a libbpf-based tool must do to deduplicate BTF and
// write it, nothing more. It parses the first input (btf__parse: raw BTF or an ELF's .BTF), appends
// the others with btf__add_btf, runs btf__dedup, and writes btf__raw_data to OUT, so that bench/run
// times process start-up plus libbpf's own work, with nothing of btfslim's reading or reporting.
//
//   btf_dedup [--merge-only] OUT IN [IN...]
//
// --merge-only skips btf__dedup: the merged inputs are written as they are, which is how bench/run
// makes an input full of duplicates (vmlinux merged with itself) for both tools to deduplicate.
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

static int fail(const char *what, const char *path, int err)
{
	char msg[128];

	libbpf_strerror(err, msg, sizeof(msg));
	fprintf(stderr, "btf_dedup: %s: %s: %s\n", path, what, msg);
	return 1;
}

int main(int argc, char **argv)
{
	int merge_only = argc > 1 && strcmp(argv[1], "--merge-only") == 0;
	int first = 1 + merge_only;
	struct btf *btf;
	const void *data;
	__u32 size;
	FILE *out;
	int err;

	if (argc < first + 2) {
		fprintf(stderr, "usage: btf_dedup [--merge-only] OUT IN [IN...]\n");
		return 2;
	}
	btf = btf__parse(argv[first + 1], NULL);
	if (!btf)
		return fail("cannot parse", argv[first + 1], errno);
	for (int i = first + 2; i < argc; i++) {
		struct btf *more = btf__parse(argv[i], NULL);

		if (!more)
			return fail("cannot parse", argv[i], errno);
		err = btf__add_btf(btf, more);
		btf__free(more);
		if (err < 0)
			return fail("cannot append", argv[i], -err);
	}
	if (!merge_only) {
		err = btf__dedup(btf, NULL);
		if (err)
			return fail("cannot deduplicate", argv[first + 1], -err);
	}
	data = btf__raw_data(btf, &size);
	out = fopen(argv[first], "wb");
	if (!data || !out || fwrite(data, 1, size, out) != size || fclose(out) != 0)
		return fail("cannot write", argv[first], errno);
	btf__free(btf);
	return 0;
}
