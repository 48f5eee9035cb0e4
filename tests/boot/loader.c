/* The guest's BPF loader: opens and loads each BPF object named on the command line with libbpf, as an
 * application would (bpf_object__open_file + bpf_object__load, nothing attached), against the kernel it
 * runs on, and prints one line per object:
 *
 *   LOAD <basename> ok
 *   LOAD <basename> fail <errno name or number> <why, one line>
 *
 * "why" is the last line libbpf printed at warning level that says something about this object: the
 * verifier's complaint when the kernel refused a program (the line before the log's statistics), or
 * libbpf's own error (an extern not found, a failed CO-RE relocation). libbpf's closing summaries ("prog
 * 'x': failed to load: -22", "failed to load object 'x'") are passed over: they name no reason.
 *
 * `loader --insmod MODULE...` inserts kernel modules instead, one line each:
 *
 *   INSMOD <basename> ok
 *   INSMOD <basename> fail <errno name>
 *
 * with finit_module(2), which hands a compressed module (.ko.xz, .ko.zst, .ko.gz) to the kernel's own
 * decompressor (MODULE_INIT_COMPRESSED_FILE, CONFIG_MODULE_DECOMPRESS) as kmod does: the kernel, not a
 * tool of ours, says whether it can read what btfslim wrote.
 *
 * It is linked statically (libbpf, libelf, zlib, glibc) so that the initramfs needs nothing but it and
 * busybox. -v copies everything libbpf prints to stderr, for debugging a program that fails. */
#define _GNU_SOURCE
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef MODULE_INIT_COMPRESSED_FILE
#define MODULE_INIT_COMPRESSED_FILE 4
#endif

static int verbose;
static char last_reason[4096];
static char pending[4096]; /* a line libbpf has not finished yet */
static int in_verifier_log;

static int starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* One complete line of libbpf's output at warning level. */
static void take_line(char *line)
{
	size_t n = strlen(line);

	while (n > 0 && (line[n - 1] == '\r' || line[n - 1] == ' ' || line[n - 1] == '\t'))
		line[--n] = '\0';
	if (starts_with(line, "libbpf: "))
		line += strlen("libbpf: ");
	if (*line == '\0')
		return;
	if (strstr(line, "-- BEGIN PROG LOAD LOG --")) {
		in_verifier_log = 1;
		return;
	}
	if (strstr(line, "-- END PROG LOAD LOG --")) {
		in_verifier_log = 0;
		return;
	}
	if (in_verifier_log && (starts_with(line, "processed ") || starts_with(line, "verification time ") ||
				starts_with(line, "stack depth ")))
		return;
	if (!in_verifier_log && (starts_with(line, "failed to load object ") ||
				 (starts_with(line, "prog '") && (strstr(line, "': failed to load: ") ||
							     strstr(line, "': failed to prepare load attributes: ")))))
		return;
	snprintf(last_reason, sizeof last_reason, "%s", line);
}

static int print(enum libbpf_print_level level, const char *format, va_list args)
{
	char text[8192];
	char *line, *newline;

	vsnprintf(text, sizeof text, format, args);
	if (verbose)
		fputs(text, stderr);
	if (level != LIBBPF_WARN)
		return 0;
	/* libbpf may print a line in pieces, and the verifier's log as one piece of many lines. */
	line = text;
	while ((newline = strchr(line, '\n'))) {
		*newline = '\0';
		strncat(pending, line, sizeof pending - strlen(pending) - 1);
		take_line(pending);
		pending[0] = '\0';
		line = newline + 1;
	}
	strncat(pending, line, sizeof pending - strlen(pending) - 1);
	return 0;
}

static const char *error_name(int err, char *buf, size_t size)
{
	const char *name = strerrorname_np(err);

	if (name)
		return name;
	snprintf(buf, size, "%d", err);
	return buf;
}

static int load(const char *path)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	struct bpf_object *obj;
	char number[16];
	int err;

	last_reason[0] = pending[0] = '\0';
	in_verifier_log = 0;
	obj = bpf_object__open_file(path, NULL);
	err = libbpf_get_error(obj);
	if (!err)
		err = bpf_object__load(obj);
	if (pending[0])
		take_line(pending);
	if (!err) {
		printf("LOAD %s ok\n", base);
	} else {
		err = err < 0 ? -err : err;
		printf("LOAD %s fail %s %s\n", base, error_name(err, number, sizeof number),
		       last_reason[0] ? last_reason : "(libbpf printed no reason)");
	}
	fflush(stdout);
	if (obj && !libbpf_get_error(obj))
		bpf_object__close(obj);
	return err ? 1 : 0;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int insmod(const char *path)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	int compressed = ends_with(path, ".xz") || ends_with(path, ".zst") || ends_with(path, ".gz");
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int err = 0;

	if (fd < 0 || syscall(SYS_finit_module, fd, "", compressed ? MODULE_INIT_COMPRESSED_FILE : 0) != 0)
		err = errno;
	if (fd >= 0)
		close(fd);
	if (err)
		printf("INSMOD %s fail %s\n", base, strerrorname_np(err) ? strerrorname_np(err) : strerror(err));
	else
		printf("INSMOD %s ok\n", base);
	fflush(stdout);
	return err ? 1 : 0;
}

int main(int argc, char **argv)
{
	int i = 1, failed = 0;

	if (argc > 1 && strcmp(argv[1], "--insmod") == 0) {
		for (i = 2; i < argc; i++)
			failed += insmod(argv[i]);
		return failed ? 1 : 0;
	}

	if (argc > 1 && strcmp(argv[1], "-v") == 0) {
		verbose = 1;
		i++;
	}
	if (i >= argc) {
		fprintf(stderr, "usage: %s [-v] OBJECT...\n", argv[0]);
		return 2;
	}
	libbpf_set_strict_mode(LIBBPF_STRICT_ALL);
	libbpf_set_print(print);
	for (; i < argc; i++)
		failed += load(argv[i]);
	return failed ? 1 : 0;
}
