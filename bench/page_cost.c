// What fresh memory costs on this machine, printed by bench/run beside its ratios: libbpf's btf__parse
// spends much of its time faulting in 4 KiB pages (some 2,900 for a kernel's BTF), btfslim's `measure`
// little (its arrays come from huge pages, memory.cc), so the measure / btf__parse ratios move with
// these figures from one machine to another. One line:
//   pages: 4 KiB: N us per page first written; 2 MiB huge pages: N ms faulted in (median), N ms (slowest)
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define MIB (1024ul * 1024)
#define HUGE_PAGE (2 * MIB)

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int by_value(const void *a, const void *b)
{
	const double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

// Microseconds per 4 KiB page to write the first byte of each page of a fresh 8 MiB mapping.
static double small_page_us(void)
{
	const size_t bytes = 8 * MIB;
	char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	double start;

	if (p == MAP_FAILED)
		return -1;
	madvise(p, bytes, MADV_NOHUGEPAGE);
	start = now_us();
	for (size_t at = 0; at < bytes; at += 4096)
		p[at] = 1;
	start = (now_us() - start) / (bytes / 4096);
	munmap(p, bytes);
	return start;
}

int main(void)
{
	enum { kSmallRuns = 5, kHugePages = 8 };
	double small[kSmallRuns], huge[kHugePages];
	const size_t bytes = kHugePages * HUGE_PAGE;
	char *raw, *p;

	for (int i = 0; i < kSmallRuns; i++)
		small[i] = small_page_us();
	qsort(small, kSmallRuns, sizeof *small, by_value);
	printf("pages: 4 KiB: %.2f us per page first written", small[kSmallRuns / 2]);

	// Huge pages as the pool asks for them: advised, then each one written once.
	raw = mmap(NULL, bytes + HUGE_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED) {
		printf("; 2 MiB huge pages: no memory for them\n");
		return 0;
	}
	p = (char *)(((uintptr_t)raw + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
	if (madvise(p, bytes, MADV_HUGEPAGE) != 0) {
		printf("; 2 MiB huge pages: none (no transparent huge pages)\n");
		return 0;
	}
	for (int i = 0; i < kHugePages; i++) {
		const double start = now_us();

		memset(p + i * HUGE_PAGE, 1, 4096);
		huge[i] = (now_us() - start) / 1e3;
	}
	qsort(huge, kHugePages, sizeof *huge, by_value);
	printf("; 2 MiB huge pages: %.2f ms faulted in (median), %.2f ms (slowest)\n", huge[kHugePages / 2],
	       huge[kHugePages - 1]);
	return 0;
}
