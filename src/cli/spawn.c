/* SPDX-License-Identifier: MIT */
/* Start a command stopped just before exec, so counters can be attached to its
 * pid first (hpm stat, hpm record). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
#include "cli.h"

pid_t spawn(char **cmd, int *go_fd, int *err_fd)
{
	int go[2], err[2];
	if (pipe(go))
		return -1;
	if (pipe2(err, O_CLOEXEC)) {
		close(go[0]);
		close(go[1]);
		return -1;
	}
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		char c;
		close(go[1]);
		close(err[0]);
		/* wait until the counters are attached */
		if (read(go[0], &c, 1) != 1)
			_exit(126);
		close(go[0]);
		/* hpm waits for signals with them blocked; the command gets its own */
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		execvp(cmd[0], cmd);
		int e = errno;
		if (write(err[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(err[1]);
	*go_fd = go[1];
	*err_fd = err[0];
	return pid;
}

int spawn_release(pid_t child, int go, int errfd)
{
	(void)child;
	if (write(go, "x", 1) != 1)
		return -1;
	close(go);
	int e = 0;
	/* the error pipe closes on a successful exec (O_CLOEXEC) */
	ssize_t got = read(errfd, &e, sizeof(e));
	close(errfd);
	return got == (ssize_t)sizeof(e) ? e : 0;
}

void end_by_signal(int sig)
{
	/* what is buffered is part of the report; the default action ends the process
	 * without flushing stdio */
	fflush(NULL);
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	sigemptyset(&dfl.sa_mask);
	sigaction(sig, &dfl, NULL);
	sigset_t one;
	sigemptyset(&one);
	sigaddset(&one, sig);
	sigprocmask(SIG_UNBLOCK, &one, NULL);
	raise(sig);
}
