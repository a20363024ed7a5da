/* SPDX-License-Identifier: MIT */
/* Test workload for per-thread counting: two named threads ("worker1",
 * "worker2") wait until a line arrives on the fifo GO, then each faults in
 * N1 or N2 fresh pages; the main thread joins them, writes a line to the fifo
 * DONE and waits on GO again before it exits, so an attached counter sees the
 * whole run. usage: threads GO DONE N1 N2 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

static pthread_barrier_t start;

static void *worker(void *arg)
{
	long pages = (long)arg;
	long psz = sysconf(_SC_PAGESIZE);
	pthread_barrier_wait(&start);
	volatile char *p = mmap(NULL, (size_t)(pages * psz), PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	for (long i = 0; i < pages; i++)
		p[i * psz] = 1;
	return NULL;
}

static void wait_line(const char *fifo)
{
	char line[16];
	FILE *f = fopen(fifo, "r");
	if (f) {
		if (!fgets(line, sizeof(line), f))
			line[0] = 0;
		fclose(f);
	}
}

int main(int argc, char **argv)
{
	if (argc != 5)
		return 2;
	pthread_t t[2];
	pthread_barrier_init(&start, NULL, 3);
	pthread_create(&t[0], NULL, worker, (void *)atol(argv[3]));
	pthread_create(&t[1], NULL, worker, (void *)atol(argv[4]));
	pthread_setname_np(t[0], "worker1");
	pthread_setname_np(t[1], "worker2");
	printf("ready\n");
	fflush(stdout);
	wait_line(argv[1]);
	pthread_barrier_wait(&start);
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	FILE *d = fopen(argv[2], "w");
	if (d) {
		fputs("done\n", d);
		fclose(d);
	}
	wait_line(argv[1]);
	return 0;
}
