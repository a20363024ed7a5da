/* SPDX-License-Identifier: MIT */
/*
 * ksuite: the workload table, command line, and shared helpers.
 *
 *   ksuite list                       names, default and lab counts, what each does
 *   ksuite [--lab] WORKLOAD [N]       run one workload N times (default count, or the
 *                                     lab count with --lab); prints
 *                                     "ksuite: WORKLOAD iterations=N ok"
 *   ksuite [--lab] all [N]            every workload in turn, at N or its default (lab) count
 *   ksuite --child-exit CODE          the trivial program the exec workloads start
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ksuite.h"

const char *ks_name = "ksuite";
const char *ks_self = "/proc/self/exe";

/*
 * Counts: def_iters ~0.3-1 s natively (x86-64, 2020s core); lab_iters chosen from
 * guest times measured in the lab (docs/ksuite.md has the table) so that each
 * workload takes ~0.5 s of guest time on the slower of riscv64/aarch64.
 */
static const struct ks_workload table[] = {
	{"pipe", "ipc", 100000, 30000, ks_pipe,
	 "two processes pass a counter back and forth over two pipes (context1)"},
	{"ctxswitch", "sched", 100000, 80000, ks_ctxswitch,
	 "two threads on one CPU hand a turn over with sched_yield"},
	{"futex", "ipc", 100000, 40000, ks_futex,
	 "two threads ping-pong on a futex word (FUTEX_WAIT, FUTEX_WAKE, FUTEX_WAKE_OP)"},
	{"sem-sysv", "ipc", 100000, 40000, ks_sem_sysv,
	 "two processes ping-pong on a SysV semaphore set (semop)"},
	{"sem-posix", "ipc", 100000, 40000, ks_sem_posix,
	 "two processes ping-pong on process-shared POSIX semaphores (shared futexes)"},
	{"signals", "signal", 100000, 30000, ks_signals,
	 "kill(self) with a handler, and a blocked signal released by sigprocmask"},
	{"fork", "process", 5000, 3000, ks_fork,
	 "fork, child _exit(code), waitpid checks the code"},
	{"exec", "process", 1500, 1000, ks_exec,
	 "fork + execve of ksuite's trivial child mode, waitpid"},
	{"vfork", "process", 2000, 1200, ks_vfork,
	 "vfork + execve of ksuite's trivial child mode, waitpid"},
	{"posix-spawn", "process", 2000, 1000, ks_posix_spawn,
	 "posix_spawn of ksuite's trivial child mode, waitpid"},
	{"mmap", "mm", 5000, 2000, ks_mmap,
	 "mmap 64 anonymous pages, write each (page faults), munmap"},
	{"mprotect", "mm", 20000, 1500, ks_mprotect,
	 "mprotect alternate pages read-only and back (VMA split/merge, TLB flush), write"},
	{"pagefault", "mm", 1500, 400, ks_pagefault,
	 "MADV_DONTNEED 256 pages, fault each back in with a write"},
	{"syscalls", "entry", 500000, 150000, ks_syscalls,
	 "getpid, getppid, clock_gettime (syscall), read 1 byte /dev/zero, write /dev/null"},
	{"copy-pipe", "uaccess", 300000, 60000, ks_copy_pipe,
	 "write/read through a pipe with user buffers at offsets 0..7, sizes 1..9000"},
	{"copy-file", "uaccess", 300000, 60000, ks_copy_file,
	 "pwrite/pread a tmpfs file with user buffers and file offsets at 0..7"},
	{"sendfile", "memcpy", 100000, 15000, ks_sendfile,
	 "sendfile tmpfs->tmpfs with mutually misaligned offsets (kernel memcpy)"},
	{"fd-alloc", "bitmap", 1000000, 300000, ks_fd_alloc,
	 "close a hole among 900 fds and dup into it (lowest-free-fd bit search)"},
	{"poll", "bitmap", 30000, 5000, ks_poll,
	 "select and poll over 256 pipe fds, every third readable"},
	{"path", "vfs", 200000, 30000, ks_path,
	 "stat a deep path from misaligned string copies, getcwd in a deep directory"},
	{"unix-stream", "net", 200000, 60000, ks_unix_stream,
	 "a writer process streams 100-byte messages over an AF_UNIX socketpair (hackbench)"},
	{"udp-loopback", "net", 100000, 8000, ks_udp_loopback,
	 "sendto/recvfrom 6,500-byte datagrams over 127.0.0.1, misaligned buffers (iperf3 -u)"},
	{"tcp-loopback", "net", 30000, 8000, ks_tcp_loopback,
	 "a child streams 16 KiB chunks over a loopback TCP connection (iperf3)"},
};
#define NWORK (sizeof(table) / sizeof(table[0]))

int ks_fail(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "ksuite: %s: ", ks_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

int ks_fail_errno(const char *fmt, ...)
{
	int e = errno;
	va_list ap;
	fprintf(stderr, "ksuite: %s: ", ks_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, ": %s\n", strerror(e));
	return 1;
}

int ks_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len) {
		ssize_t w = write(fd, p, len);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

int ks_read_all(int fd, void *buf, size_t len)
{
	char *p = buf;
	while (len) {
		ssize_t r = read(fd, p, len);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			return -EPIPE;
		p += r;
		len -= (size_t)r;
	}
	return 0;
}

int ks_reap(pid_t pid, int want, const char *who)
{
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return ks_fail_errno("waitpid(%s)", who);
	if (WIFSIGNALED(st))
		return ks_fail("%s was killed by signal %d", who, WTERMSIG(st));
	if (WEXITSTATUS(st) != want)
		return ks_fail("%s exited with %d, expected %d", who, WEXITSTATUS(st), want);
	return 0;
}

const char *ks_tmpdir(void)
{
	const char *t = getenv("TMPDIR");
	return t && *t ? t : "/tmp";
}

static void usage(void)
{
	printf(
		"usage: ksuite list\n"
		"       ksuite [--lab] WORKLOAD [ITERATIONS]\n"
		"       ksuite [--lab] all [ITERATIONS]\n"
		"\n"
		"Kernel-exercising workloads for cross-ISA kernel profiles (hpmkit compare).\n"
		"Each runs a fixed number of iterations, checks its results, and prints\n"
		"\"ksuite: WORKLOAD iterations=N ok\" (exit 0); a failed check is one line on\n"
		"stderr and exit 1; a bad name or count, exit 2.\n"
		"ITERATIONS defaults to the workload's native count (~0.2-1 s on a recent\n"
		"x86-64); --lab picks the smaller count sized for QEMU TCG guests (~1 ns per\n"
		"guest instruction). `ksuite list` shows both.\n"
		"\n"
		"examples:\n"
		"  ksuite list\n"
		"  ksuite pipe                  # 100000 round trips\n"
		"  ksuite --lab copy-pipe       # the lab count\n"
		"  ksuite fd-alloc 5000\n"
		"  hpm record -g -- ksuite --lab sendfile\n"
		"  ksuite all 10                # smoke test: every workload, 10 iterations\n"
		"  hpmkit lab run --arch both -- ksuite --lab all\n");
}

static void list(void)
{
	printf("%-12s %-8s %8s %6s  %s\n", "WORKLOAD", "AREA", "DEFAULT", "LAB", "WHAT");
	for (size_t i = 0; i < NWORK; i++)
		printf("%-12s %-8s %8ld %6ld  %s\n", table[i].name, table[i].group,
		       table[i].def_iters, table[i].lab_iters, table[i].what);
}

static const struct ks_workload *find(const char *name)
{
	for (size_t i = 0; i < NWORK; i++)
		if (!strcmp(table[i].name, name))
			return &table[i];
	return NULL;
}

static int run_one(const struct ks_workload *w, long n)
{
	ks_name = w->name;
	fflush(stdout); /* children created by fork must not repeat buffered output */
	int rc = w->run(n);
	ks_name = "ksuite";
	if (rc)
		return 1;
	printf("ksuite: %s iterations=%ld ok\n", w->name, n);
	fflush(stdout);
	return 0;
}

/*
 * All processes and threads of a workload share one CPU (the one we start on),
 * as in the single-CPU lab guests: ping-pong then means a context switch per
 * hand-over on every machine, and the kernel paths (no cross-CPU wake-ups, no
 * IPIs) are the same natively and in the lab. Failure (e.g. a cpuset that
 * forbids it) leaves the default affinity: the results are still correct.
 */
static void pin_to_current_cpu(void)
{
	int cpu = sched_getcpu();
	if (cpu < 0)
		return;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--child-exit")) {
		/* trivial program for the exec workloads: exit with the given code */
		return atoi(argv[2]) & 0x7f;
	}
	int lab = 0, a = 1;
	if (a < argc && !strcmp(argv[a], "--lab")) {
		lab = 1;
		a++;
	}
	if (a >= argc) {
		fprintf(stderr, "ksuite: no workload named (`ksuite list` shows them, `ksuite --help` "
				"the usage)\n");
		return 2;
	}
	const char *name = argv[a++];
	if (!strcmp(name, "--help") || !strcmp(name, "-h") || !strcmp(name, "help")) {
		usage();
		return 0;
	}
	if (!strcmp(name, "list")) {
		if (a != argc || lab) {
			fprintf(stderr, "ksuite: 'list' takes no arguments\n");
			return 2;
		}
		list();
		return 0;
	}
	const struct ks_workload *w = strcmp(name, "all") ? find(name) : NULL;
	if (!w && strcmp(name, "all")) {
		fprintf(stderr, "ksuite: unknown workload '%s' (`ksuite list` shows the %zu names)\n",
			name, NWORK);
		return 2;
	}
	long n = 0;
	if (a < argc) {
		char *end;
		errno = 0;
		n = strtol(argv[a], &end, 10);
		if (errno || *end || end == argv[a] || n < 1 || a + 1 != argc) {
			if (a + 1 != argc)
				fprintf(stderr, "ksuite: too many arguments after '%s %s'\n", name, argv[a]);
			else
				fprintf(stderr, "ksuite: bad iteration count '%s' for %s (a positive "
						"integer)\n", argv[a], w ? w->name : "all");
			return 2;
		}
	}
	pin_to_current_cpu();
	if (w)
		return run_one(w, n ? n : lab ? w->lab_iters : w->def_iters);
	for (size_t i = 0; i < NWORK; i++)
		if (run_one(&table[i], n ? n : lab ? table[i].lab_iters : table[i].def_iters))
			return 1;
	return 0;
}
