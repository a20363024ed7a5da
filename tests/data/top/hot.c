/* SPDX-License-Identifier: MIT */
/* Test workload for hpm top with exact answers: fault_user() writes to N
 * fresh pages (N user-mode page faults, all in fault_user), fault_kernel()
 * read(2)s M pages of /dev/zero into a fresh mapping (M page faults taken
 * inside the kernel's copy routine), spin() burns CPU for S iterations (a
 * cpu-clock hot spot). usage: hot N M S */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

static char *fresh(long pages, long psz)
{
	char *p = mmap(NULL, (size_t)(pages * psz), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		exit(1);
	/* one fault per page: no transparent huge pages */
	madvise(p, (size_t)(pages * psz), MADV_NOHUGEPAGE);
	return p;
}

__attribute__((noinline)) void fault_user(long pages, long psz)
{
	if (pages <= 0)
		return;
	volatile char *p = fresh(pages, psz);
	for (long i = 0; i < pages; i++)
		p[i * psz] = 1;
}

__attribute__((noinline)) void fault_kernel(long pages, long psz)
{
	if (pages <= 0)
		return;
	char *p = fresh(pages, psz);
	int fd = open("/dev/zero", O_RDONLY);
	if (fd < 0 || read(fd, p, (size_t)(pages * psz)) != pages * psz)
		exit(1);
	close(fd);
}

__attribute__((noinline)) unsigned long spin(long n)
{
	volatile unsigned long x = 0;
	for (long i = 0; i < n; i++)
		x += (unsigned long)i * 7;
	return x;
}

int main(int argc, char **argv)
{
	if (argc != 4)
		return 2;
	long psz = sysconf(_SC_PAGESIZE);
	fault_user(atol(argv[1]), psz);
	fault_kernel(atol(argv[2]), psz);
	spin(atol(argv[3]));
	return 0;
}
