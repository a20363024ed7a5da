/* SPDX-License-Identifier: MIT */
/*
 * papi-ctest-run DIR TEST...: run PAPI's ctests the way PAPI's run_tests.sh
 * does (each as "./TEST TESTS_QUIET" from DIR), for lab guests, which have no
 * shell. For each test it prints
 *
 *   @@CTEST <name> <exit status | -signal | timeout> <seconds> <cpu seconds>@@
 *   <what the test printed, stdout and stderr>
 *   @@CTEST-END@@
 *
 * The result is taken when the test itself exits (a child it leaves stopped
 * must not hold the report up); its process group is killed then. A test that
 * outlives the time limit (guest seconds, default 120, env PAPI_CTEST_TIMEOUT)
 * is killed the same way and reported as "timeout": a hang is a result, not
 * a lost boot. Under -icount the CPU seconds are instructions / 10^9.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void run_one(const char *dir, const char *name, double limit)
{
	int pfd[2];
	if (pipe(pfd) < 0) {
		printf("@@CTEST %s -%d 0 0@@\npipe: %s\n@@CTEST-END@@\n", name, 0, strerror(errno));
		return;
	}
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		setpgid(0, 0);
		dup2(pfd[1], 1);
		dup2(pfd[1], 2);
		close(pfd[0]);
		close(pfd[1]);
		if (chdir(dir) < 0)
			_exit(126);
		char path[512];
		snprintf(path, sizeof(path), "./%s", name);
		execl(path, path, "TESTS_QUIET", (char *)NULL);
		fprintf(stderr, "cannot run %s: %s\n", path, strerror(errno));
		_exit(127);
	}
	setpgid(pid, pid); /* also here: no race with a kill at timeout */
	close(pfd[1]);
	fcntl(pfd[0], F_SETFL, O_NONBLOCK);
	size_t cap = 65536, len = 0;
	char *out = malloc(cap);
	double t0 = now();
	int timed_out = 0, st = 0, done = 0;
	struct rusage ru;
	memset(&ru, 0, sizeof(ru));
	/* until the test exits: a child it leaves behind (stopped, say) may hold the pipe */
	while (!done) {
		struct pollfd p = { pfd[0], POLLIN, 0 };
		if (now() - t0 > limit) {
			timed_out = 1;
			kill(-pid, SIGKILL);
		}
		poll(&p, 1, 100);
		for (;;) {
			if (len + 4096 > cap)
				out = realloc(out, cap *= 2);
			ssize_t n = read(pfd[0], out + len, 4096);
			if (n <= 0)
				break;
			len += (size_t)n;
		}
		done = wait4(pid, &st, WNOHANG, &ru) == pid;
	}
	kill(-pid, SIGKILL); /* anything the test left behind */
	close(pfd[0]);
	double secs = now() - t0;
	double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
		     (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	if (timed_out)
		printf("@@CTEST %s timeout %.3f %.3f@@\n", name, secs, cpu);
	else if (WIFSIGNALED(st))
		printf("@@CTEST %s -%d %.3f %.3f@@\n", name, WTERMSIG(st), secs, cpu);
	else
		printf("@@CTEST %s %d %.3f %.3f@@\n", name, WEXITSTATUS(st), secs, cpu);
	fwrite(out, 1, len, stdout);
	if (len && out[len - 1] != '\n')
		putchar('\n');
	printf("@@CTEST-END@@\n");
	fflush(stdout);
	free(out);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: papi-ctest-run DIR TEST...\n");
		return 2;
	}
	const char *t = getenv("PAPI_CTEST_TIMEOUT");
	double limit = t ? atof(t) : 120;
	signal(SIGPIPE, SIG_IGN);
	for (int i = 2; i < argc; i++)
		run_one(argv[1], argv[i], limit);
	return 0;
}
