/* SPDX-License-Identifier: MIT */
/* Signals and process creation: kill/sigprocmask, fork, fork+exec, vfork+exec, posix_spawn. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ksuite.h"

extern char **environ;

static volatile sig_atomic_t got_usr1, got_usr2;

static void on_usr1(int sig)
{
	(void)sig;
	got_usr1++;
}

static void on_usr2(int sig)
{
	(void)sig;
	got_usr2++;
}

/*
 * signals: per iteration, one signal delivered at once (kill to self: the
 * handler runs on the way out of the syscall: signal frame set-up, rt_sigreturn)
 * and one sent while blocked and delivered by the sigprocmask that unblocks it.
 */
int ks_signals(long n)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_usr1;
	if (sigaction(SIGUSR1, &sa, NULL))
		return ks_fail_errno("sigaction(SIGUSR1)");
	sa.sa_handler = on_usr2;
	if (sigaction(SIGUSR2, &sa, NULL))
		return ks_fail_errno("sigaction(SIGUSR2)");
	sigset_t usr2;
	sigemptyset(&usr2);
	sigaddset(&usr2, SIGUSR2);
	pid_t me = getpid();
	got_usr1 = got_usr2 = 0;
	for (long i = 0; i < n; i++) {
		if (kill(me, SIGUSR1))
			return ks_fail_errno("kill(SIGUSR1)");
		if (got_usr1 != (sig_atomic_t)(i + 1))
			return ks_fail("iteration %ld: SIGUSR1 handled %ld times, expected %ld", i,
				       (long)got_usr1, i + 1);
		if (sigprocmask(SIG_BLOCK, &usr2, NULL) || kill(me, SIGUSR2))
			return ks_fail_errno("block + kill(SIGUSR2)");
		if (got_usr2 != (sig_atomic_t)i)
			return ks_fail("iteration %ld: blocked SIGUSR2 was delivered", i);
		if (sigprocmask(SIG_UNBLOCK, &usr2, NULL))
			return ks_fail_errno("sigprocmask(SIG_UNBLOCK)");
		if (got_usr2 != (sig_atomic_t)(i + 1))
			return ks_fail("iteration %ld: SIGUSR2 not delivered on unblock", i);
	}
	signal(SIGUSR1, SIG_DFL);
	signal(SIGUSR2, SIG_DFL);
	return 0;
}

/* fork: the child exits at once with a code the parent checks. */
int ks_fork(long n)
{
	for (long i = 0; i < n; i++) {
		pid_t pid = fork();
		if (pid < 0)
			return ks_fail_errno("fork (iteration %ld)", i);
		if (pid == 0)
			_exit((int)(i & 0x7f));
		if (ks_reap(pid, (int)(i & 0x7f), "the forked child"))
			return 1;
	}
	return 0;
}

/*
 * The exec workloads re-run this binary through /proc/self/exe in its trivial
 * mode (`ksuite --child-exit CODE`). One checked exec first, with an error
 * pipe, so a failing exec (no /proc, qemu-user without binfmt_misc) is named.
 */
static int exec_preflight(void)
{
	int ep[2];
	if (pipe2(ep, O_CLOEXEC))
		return ks_fail_errno("pipe2");
	pid_t pid = fork();
	if (pid < 0)
		return ks_fail_errno("fork");
	if (pid == 0) {
		char *argv[] = {"ksuite", "--child-exit", "0", NULL};
		execve(ks_self, argv, environ);
		int e = errno;
		if (write(ep[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(ep[1]);
	int e = 0;
	ssize_t got = read(ep[0], &e, sizeof(e));
	close(ep[0]);
	int rc = ks_reap(pid, got == (ssize_t)sizeof(e) ? 127 : 0, "the exec preflight child");
	if (got == (ssize_t)sizeof(e)) {
		errno = e;
		return ks_fail_errno("cannot execve %s (the exec workloads need /proc and a "
				     "kernel that runs this binary)", ks_self);
	}
	return rc;
}

/* The child never returns from here: it execs or _exits (vfork's rule). */
__attribute__((noinline)) static pid_t start_child(char **argv, int use_vfork)
{
	pid_t pid = use_vfork ? vfork() : fork();
	if (pid == 0) {
		execve(ks_self, argv, environ);
		_exit(127);
	}
	return pid;
}

static int exec_loop(long n, int use_vfork)
{
	if (exec_preflight())
		return 1;
	for (long i = 0; i < n; i++) {
		char code[8];
		snprintf(code, sizeof(code), "%d", (int)(i & 0x7f));
		char *argv[] = {"ksuite", "--child-exit", code, NULL};
		pid_t pid = start_child(argv, use_vfork);
		if (pid < 0)
			return ks_fail_errno("%s (iteration %ld)", use_vfork ? "vfork" : "fork", i);
		if (ks_reap(pid, (int)(i & 0x7f), "the exec'd child"))
			return 1;
	}
	return 0;
}

int ks_exec(long n)
{
	return exec_loop(n, 0);
}

int ks_vfork(long n)
{
	return exec_loop(n, 1);
}

int ks_posix_spawn(long n)
{
	/* posix_spawn reports exec failures itself, except where CLONE_VFORK is not honoured
	 * (qemu-user): the preflight names the problem there too */
	if (exec_preflight())
		return 1;
	for (long i = 0; i < n; i++) {
		char code[8];
		snprintf(code, sizeof(code), "%d", (int)(i & 0x7f));
		char *argv[] = {"ksuite", "--child-exit", code, NULL};
		pid_t pid;
		int e = posix_spawn(&pid, ks_self, NULL, NULL, argv, environ);
		if (e) {
			errno = e;
			return ks_fail_errno("posix_spawn %s (iteration %ld)", ks_self, i);
		}
		if (ks_reap(pid, (int)(i & 0x7f), "the spawned child"))
			return 1;
	}
	return 0;
}
