/* SPDX-License-Identifier: MIT */
/* touch-pages N: fault in N fresh anonymous pages (one write each), so the
 * process's page-fault count grows by exactly N. Used to compare hpm stat
 * with perf stat on a deterministic software event. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: touch-pages N\n");
		return 2;
	}
	long n = atol(argv[1]), psz = sysconf(_SC_PAGESIZE);
	if (n < 0) {
		fprintf(stderr, "touch-pages: N must be >= 0\n");
		return 2;
	}
	if (!n)
		return 0;
	char *p = mmap(NULL, (size_t)(n * psz), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 1;
	/* 4 KiB faults only: a transparent huge page would satisfy 512 touches at once */
	madvise(p, (size_t)(n * psz), MADV_NOHUGEPAGE);
	for (long i = 0; i < n; i++)
		((volatile char *)p)[i * psz] = 1;
	return 0;
}
