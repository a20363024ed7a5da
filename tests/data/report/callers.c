/* The report tests' workload (tests/py/test_report.py): known call paths for perf report's
 * Children/Self and call graphs. Built at -O0 with frame pointers (gcc gives leaf functions
 * no frame at -O1, and the unwinder then skips their caller) and without PLT stubs
 * (-fno-plt: calls into libc go straight to their function, which keeps the expected call
 * graphs simple; PLT names are tested in tests/py/test_symbols_plt.py).
 *
 *   callers N     main -> run -> phase_a -> spin          (half of N)
 *                 main -> run -> phase_b -> spin          (a quarter)
 *                 main -> run -> recurse x5 -> spin       (a quarter, recursion)
 *                 main -> run -> syscalls -> write(2)     (kernel frames under user ones)
 *                 a thread named "helper" and a child process named "child" doing the same
 * Project licence (MIT).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((noinline)) static void spin(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i * 7;
}

__attribute__((noinline)) static void phase_a(unsigned long n) { spin(n); sink++; }
__attribute__((noinline)) static void phase_b(unsigned long n) { spin(n); sink++; }

__attribute__((noinline)) static void recurse(int depth, unsigned long n)
{
	if (depth > 0)
		recurse(depth - 1, n);
	else
		spin(n);
	sink++;
}

__attribute__((noinline)) static void syscalls(int rounds)
{
	static char buf[4096];
	int fd = open("/dev/null", O_WRONLY);
	for (int i = 0; i < rounds; i++)
		if (write(fd, buf, sizeof(buf)) < 0)
			break;
	close(fd);
}

__attribute__((noinline)) static void run(unsigned long n)
{
	phase_a(n / 2);
	phase_b(n / 4);
	recurse(5, n / 4);
	syscalls((int)(n / 2000));
}

static void *helper(void *arg)
{
	prctl(PR_SET_NAME, "helper");
	run(*(unsigned long *)arg / 4);
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 100000000;
	unsigned long quarter = n;
	pthread_t t;
	pid_t child = fork();
	if (child == 0) {
		prctl(PR_SET_NAME, "child");
		run(n / 4);
		_exit(0);
	}
	if (pthread_create(&t, NULL, helper, &quarter) != 0)
		return 1;
	run(n);
	pthread_join(t, NULL);
	if (child > 0)
		waitpid(child, NULL, 0);
	return 0;
}
