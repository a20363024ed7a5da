/* Fork + exec across CPUs: the parent, on CPU 1, forks 20 children; each moves to CPU 0,
 * touches 256 pages (page faults under the parent's name) and execs /bin/true (faults under
 * the name "true"). perf record drains one buffer per CPU, so a child's faults on CPU 0 can
 * sit in the file before the FORK record CPU 1 wrote: only time order attributes them right.
 * Usage: forkexec [children] [pages] */
#define _GNU_SOURCE
#include <sched.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static void pin(int cpu)
{
	cpu_set_t s;
	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	sched_setaffinity(0, sizeof(s), &s);   /* best effort: one CPU machines still work */
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 20, pages = argc > 2 ? atoi(argv[2]) : 256;
	long psz = sysconf(_SC_PAGESIZE);
	pin(1);
	for (int i = 0; i < n; i++) {
		pid_t p = fork();
		if (p == 0) {
			pin(0);
			char *m = mmap(NULL, pages * psz, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (m == MAP_FAILED)
				_exit(1);
			for (int k = 0; k < pages; k++)
				m[k * psz] = 1;
			execl("/bin/true", "true", (char *)NULL);
			_exit(127);
		}
		if (p > 0)
			waitpid(p, NULL, 0);
	}
	return 0;
}
