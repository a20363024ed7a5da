/* SPDX-License-Identifier: MIT */
/* Region-marker test program: touches a known number of pages inside
 * region "touch" (argv[1] pages, twice as two calls) and nothing in "idle". */
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include "hpm/region.h"

int main(int argc, char **argv)
{
	long pages = argc > 1 ? atol(argv[1]) : 64, psz = sysconf(_SC_PAGESIZE);
	for (int call = 0; call < 2; call++) {
		char *p = mmap(NULL, (size_t)(pages * psz), PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return 1;
		HPM_REGION_BEGIN("touch");
		for (long i = 0; i < pages; i++)
			p[i * psz] = 1;
		HPM_REGION_END("touch");
		munmap(p, (size_t)(pages * psz));
	}
	HPM_REGION_BEGIN("idle");
	HPM_REGION_END("idle");
	return 0;
}
