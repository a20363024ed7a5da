/* SPDX-License-Identifier: MIT */
/*
 * hpm stat --per-thread -- COMMAND: each thread and child process of the
 * command counted on its own, from its first instruction to its exit, with no
 * polling. The command is traced (PTRACE_SEIZE, TRACECLONE/FORK/VFORK/EXEC):
 * a new task stops before it runs, its counters (this task only, no inherit)
 * are opened then, and it is let go. When a task exits, the kernel has
 * already closed its counts (perf_event_exit_task runs before the tracer is
 * told): they are read, and the counters closed. With -i only the command's
 * first thread is counted, and nothing is traced.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "stat.h"

struct follow {
	pid_t child;
	bool traced;          /* false with -i */
	int *live;            /* units of the tasks that have not exited */
	int nlive, cap;
	pid_t *unborn;        /* announced by their parent, first stop not seen yet */
	int nunborn, capu;
	struct rlimit nofile; /* as the command got it; restored at the end */
	bool nofile_raised;
};

static int live_find(struct follow *fw, struct stat_state *st, pid_t tid)
{
	for (int i = fw->nlive - 1; i >= 0; i--)
		if (st->units[fw->live[i]].tid == tid)
			return i;
	return -1;
}

static int live_push(struct follow *fw, int u)
{
	if (fw->nlive == fw->cap) {
		int cap = fw->cap ? fw->cap * 2 : 16;
		int *nv = realloc(fw->live, sizeof(int) * (size_t)cap);
		if (!nv) {
			fprintf(stderr, "hpm stat: out of memory\n");
			return -1;
		}
		fw->live = nv;
		fw->cap = cap;
	}
	fw->live[fw->nlive++] = u;
	return 0;
}

static int unborn_add(struct follow *fw, pid_t t)
{
	for (int i = 0; i < fw->nunborn; i++)
		if (fw->unborn[i] == t)
			return 0;
	if (fw->nunborn == fw->capu) {
		int cap = fw->capu ? fw->capu * 2 : 16;
		pid_t *nv = realloc(fw->unborn, sizeof(pid_t) * (size_t)cap);
		if (!nv) {
			fprintf(stderr, "hpm stat: out of memory\n");
			return -1;
		}
		fw->unborn = nv;
		fw->capu = cap;
	}
	fw->unborn[fw->nunborn++] = t;
	return 0;
}

static void unborn_drop(struct follow *fw, pid_t t)
{
	for (int i = 0; i < fw->nunborn; i++)
		if (fw->unborn[i] == t) {
			fw->unborn[i] = fw->unborn[--fw->nunborn];
			return;
		}
}

static int read_scope(void)
{
	FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
	int v = -1;
	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/* One line: what refused, and what to do instead. */
static void refused(int err)
{
	char why[200];
	int scope = read_scope();
	if (scope == 3)
		snprintf(why, sizeof(why), "kernel.yama.ptrace_scope is 3 (no process may trace, "
					   "until reboot)");
	else if (scope == 2 && (err == EPERM || err == EACCES))
		snprintf(why, sizeof(why), "kernel.yama.ptrace_scope is 2 (only CAP_SYS_PTRACE may "
					   "trace)");
	else if (err == EPERM || err == EACCES || err == ENOSYS)
		snprintf(why, sizeof(why), "ptrace is refused here (%s: a container's seccomp "
					   "profile or a security module)", strerror(err));
	else
		snprintf(why, sizeof(why), "ptrace failed (%s)", strerror(err));
	fprintf(stderr, "hpm stat: --per-thread of a command follows its threads with ptrace(2), "
			"and %s; count the command without --per-thread, or start it and use "
			"--per-thread -p PID\n", why);
}

int follow_start(struct stat_state *st, struct stat_opts *o, pid_t child)
{
	struct follow *fw = calloc(1, sizeof(*fw));
	if (!fw) {
		fprintf(stderr, "hpm stat: out of memory\n");
		return -1;
	}
	fw->child = child;
	fw->traced = !o->no_inherit;
	/* the child waits in spawn() for its counters: seizing does not stop it */
	long opts = PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |
		    PTRACE_O_TRACEEXEC;
	if (fw->traced && ptrace(PTRACE_SEIZE, child, NULL, (void *)opts)) {
		refused(errno);
		free(fw);
		return -1;
	}
	st->units[0].tid = child;
	task_comm(child, st->units[0].comm, sizeof(st->units[0].comm));
	if (live_push(fw, 0)) {
		free(fw);
		return -1;
	}
	/* one set of fds per running task: like perf, use the hard limit (the
	 * command was forked before, and keeps its own) */
	if (getrlimit(RLIMIT_NOFILE, &fw->nofile) == 0 && fw->nofile.rlim_cur < fw->nofile.rlim_max) {
		struct rlimit r = { fw->nofile.rlim_max, fw->nofile.rlim_max };
		fw->nofile_raised = setrlimit(RLIMIT_NOFILE, &r) == 0;
	}
	st->follow = fw;
	return 0;
}

/* A new task, stopped before its first instruction: its own counters. */
static int born(struct follow *fw, struct stat_state *st, struct stat_opts *o, pid_t tid,
		bool enabled)
{
	struct unit *nv = realloc(st->units, sizeof(*nv) * (size_t)(st->nunits + 1));
	if (!nv) {
		fprintf(stderr, "hpm stat: out of memory\n");
		return -1;
	}
	st->units = nv;
	int u = st->nunits++;
	st->units[u] = (struct unit){ .tid = tid, .cpu = -1 };
	task_comm(tid, st->units[u].comm, sizeof(st->units[u].comm));
	int r = stat_open_unit(st, o, u, 0);
	if (r) {
		st->nunits--;
		if (r > 0) { /* killed before it could run */
			st->gone++;
			return 0;
		}
		fprintf(stderr, "hpm stat: cannot count task %d of the command, so the command "
				"was killed\n", (int)tid);
		return -1;
	}
	if (enabled && hpm_evset__start(st->units[u].set) < 0) {
		fprintf(stderr, "hpm stat: %s\n", hpm_ctx__last_error(st->ctx));
		return -1;
	}
	return live_push(fw, u);
}

/* Live entry i exited: its final counts, then its counters closed (the
 * command's first set stays open: the report reads names and metrics from it). */
static int ended(struct follow *fw, struct stat_state *st, int i, const char *comm)
{
	int u = fw->live[i];
	struct unit *un = &st->units[u];
	if (comm && comm[0] && strcmp(comm, "?"))
		snprintf(un->comm, sizeof(un->comm), "%s", comm);
	fw->live[i] = fw->live[--fw->nlive];
	if (hpm_evset__read_all(un->set, un->now) < 0) {
		fprintf(stderr, "hpm stat: %s\n", hpm_ctx__last_error(st->ctx));
		return -1;
	}
	if (u) {
		hpm_evset__delete(un->set);
		un->set = NULL;
	}
	return 0;
}

static bool job_stop(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/* One wait status of task t (comm: its name if it ended). */
static int handle(struct follow *fw, struct stat_state *st, struct stat_opts *o, pid_t t,
		  int ws, const char *comm, bool enabled)
{
	int i = live_find(fw, st, t);
	if (WIFEXITED(ws) || WIFSIGNALED(ws)) {
		unborn_drop(fw, t);
		return i >= 0 ? ended(fw, st, i, comm) : 0;
	}
	if (!WIFSTOPPED(ws))
		return 0;
	/* A new task's first stop (before or after its parent reports the
	 * clone): its counters are opened here, always here, so a row is the
	 * same from run to run. What the kernel did in the new task before it
	 * could stop is in no row: for a fork() of glibc, the child's TID
	 * written to a copy-on-write page (CLONE_CHILD_SETTID), one page fault
	 * that perf's inherited counters give the child. */
	if (i < 0) {
		unborn_drop(fw, t);
		if (born(fw, st, o, t, enabled))
			return -1;
	}
	int ev = ws >> 16, sig = WSTOPSIG(ws);
	unsigned long msg = 0;
	switch (ev) {
	case PTRACE_EVENT_CLONE:
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
		/* the new task is stopped (or about to be): remembered in case
		 * the command ends before its first stop is seen */
		if (!ptrace(PTRACE_GETEVENTMSG, t, NULL, &msg) && live_find(fw, st, (pid_t)msg) < 0 &&
		    unborn_add(fw, (pid_t)msg))
			return -1;
		sig = 0;
		break;
	case PTRACE_EVENT_EXEC:
		/* a thread other than the leader ran execve: the leader is gone
		 * (unreported), and that thread now has the leader's id */
		if (!ptrace(PTRACE_GETEVENTMSG, t, NULL, &msg) && (pid_t)msg != t) {
			int old = live_find(fw, st, t);
			if (old >= 0 && ended(fw, st, old, NULL))
				return -1;
			int j = live_find(fw, st, (pid_t)msg);
			if (j >= 0)
				st->units[fw->live[j]].tid = t;
		}
		i = live_find(fw, st, t);
		if (i >= 0) /* its new name (the leader's, should it end unreported) */
			task_comm(t, st->units[fw->live[i]].comm, sizeof(st->units[0].comm));
		sig = 0;
		break;
	case PTRACE_EVENT_STOP:
		if (job_stop(sig)) { /* a group-stop: stopped as it would be without hpm */
			ptrace(PTRACE_LISTEN, t, NULL, NULL);
			return 0;
		}
		sig = 0; /* its first stop, or a group-stop ended (SIGCONT) */
		break;
	case 0: break; /* a signal for the task: delivered */
	default: sig = 0; break;
	}
	ptrace(PTRACE_CONT, t, NULL, (void *)(long)sig);
	return 0;
}

int follow_events(struct stat_state *st, struct stat_opts *o, bool enabled, bool *done,
		  int *status)
{
	struct follow *fw = st->follow;
	for (;;) {
		siginfo_t si;
		memset(&si, 0, sizeof(si));
		/* look first: a task that ended still has its name until it is reaped.
		 * Ptrace stops are reported without WSTOPPED; with it, a job-control
		 * stop of an untraced command (-i) would be seen here but not by the
		 * waitpid below. */
		if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT | __WALL) < 0 || !si.si_pid)
			return 0;
		pid_t t = si.si_pid;
		char comm[16] = "";
		if (si.si_code == CLD_EXITED || si.si_code == CLD_KILLED || si.si_code == CLD_DUMPED)
			task_comm(t, comm, sizeof(comm));
		int ws;
		if (waitpid(t, &ws, __WALL) != t)
			return 0;
		if (handle(fw, st, o, t, ws, comm, enabled))
			return -1;
		if (t == fw->child && (WIFEXITED(ws) || WIFSIGNALED(ws))) {
			*done = true;
			*status = ws;
		}
	}
}

static double mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static bool in_list(const pid_t *v, int n, pid_t t)
{
	for (int i = 0; i < n; i++)
		if (v[i] == t)
			return true;
	return false;
}

/* Tasks of the command still running when it ended go on untraced, as they
 * would without hpm. Each is interrupted and detached at its next stop;
 * those that do not stop within 2 s are detached when hpm exits. */
static void detach_all(struct follow *fw, struct stat_state *st)
{
	int cap = fw->nlive + fw->nunborn + 16, n = 0, nd = 0;
	pid_t *pend = malloc(sizeof(pid_t) * (size_t)cap), *det = malloc(sizeof(pid_t) * (size_t)cap);
	if (!pend || !det)
		goto out;
	for (int i = 0; i < fw->nlive; i++) {
		pid_t t = st->units[fw->live[i]].tid;
		if (!ptrace(PTRACE_INTERRUPT, t, NULL, NULL))
			pend[n++] = t;
	}
	for (int i = 0; i < fw->nunborn; i++) /* they stop at birth by themselves */
		pend[n++] = fw->unborn[i];
	double end = mono() + 2.0;
	while (n > 0) {
		int ws;
		pid_t t = waitpid(-1, &ws, __WALL | WNOHANG);
		if (t < 0)
			break;
		if (t == 0) {
			if (mono() > end)
				break;
			struct timespec ms = { 0, 1000000 };
			nanosleep(&ms, NULL);
			continue;
		}
		if (WIFSTOPPED(ws)) {
			int ev = ws >> 16;
			unsigned long msg = 0;
			if ((ev == PTRACE_EVENT_CLONE || ev == PTRACE_EVENT_FORK ||
			     ev == PTRACE_EVENT_VFORK) &&
			    !ptrace(PTRACE_GETEVENTMSG, t, NULL, &msg) && !in_list(pend, n, (pid_t)msg) &&
			    !in_list(det, nd, (pid_t)msg)) {
				if (n == cap || nd == cap) {
					int c2 = cap * 2;
					pid_t *p2 = realloc(pend, sizeof(pid_t) * (size_t)c2);
					if (p2)
						pend = p2;
					pid_t *d2 = realloc(det, sizeof(pid_t) * (size_t)c2);
					if (d2)
						det = d2;
					if (!p2 || !d2)
						goto out;
					cap = c2;
				}
				pend[n++] = (pid_t)msg; /* born meanwhile: detached at its first stop */
			}
			ptrace(PTRACE_DETACH, t, NULL, (void *)(long)(ev == 0 ? WSTOPSIG(ws) : 0));
			if (nd < cap)
				det[nd++] = t;
		}
		for (int k = 0; k < n; k++)
			if (pend[k] == t) {
				pend[k] = pend[--n];
				break;
			}
	}
out:
	free(pend);
	free(det);
}

struct order {
	pid_t tid;
	int i;
};

static int cmp_order(const void *a, const void *b)
{
	const struct order *x = a, *y = b;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->i - y->i; /* a thread id seen twice (leader replaced at exec) keeps its order */
}

/* Rows in thread id order, as perf lists a process's threads; the command's
 * first thread stays first (the report reads the event names from its set). */
static void sort_units(struct stat_state *st)
{
	int n = st->nunits - 1;
	if (n < 2)
		return;
	struct unit *v = st->units + 1;
	struct order *ord = malloc(sizeof(*ord) * (size_t)n);
	struct unit *tmp = malloc(sizeof(*tmp) * (size_t)n);
	if (ord && tmp) {
		for (int i = 0; i < n; i++)
			ord[i] = (struct order){ v[i].tid, i };
		qsort(ord, (size_t)n, sizeof(*ord), cmp_order);
		for (int i = 0; i < n; i++)
			tmp[i] = v[ord[i].i];
		memcpy(v, tmp, sizeof(*tmp) * (size_t)n);
	}
	free(ord);
	free(tmp);
}

void follow_end(struct stat_state *st)
{
	struct follow *fw = st->follow;
	if (!fw)
		return;
	st->follow = NULL;
	for (int i = 0; i < fw->nlive; i++) {
		struct unit *un = &st->units[fw->live[i]];
		char comm[16];
		task_comm(un->tid, comm, sizeof(comm));
		if (strcmp(comm, "?"))
			snprintf(un->comm, sizeof(un->comm), "%s", comm);
	}
	if (fw->traced && (fw->nlive || fw->nunborn))
		detach_all(fw, st);
	if (fw->nofile_raised)
		setrlimit(RLIMIT_NOFILE, &fw->nofile);
	free(fw->live);
	free(fw->unborn);
	free(fw);
	sort_units(st);
}

void follow_kill(struct stat_state *st)
{
	struct follow *fw = st->follow;
	if (!fw)
		return;
	for (int i = 0; i < fw->nlive; i++)
		kill(st->units[fw->live[i]].tid, SIGKILL);
	for (int i = 0; i < fw->nunborn; i++)
		kill(fw->unborn[i], SIGKILL);
	kill(fw->child, SIGKILL);
	/* traced tasks report their end to hpm; one born meanwhile is stopped
	 * at birth, or its parent at the clone: they are killed too */
	int ws;
	pid_t t;
	while ((t = waitpid(-1, &ws, __WALL)) > 0)
		if (WIFSTOPPED(ws)) {
			int ev = ws >> 16;
			unsigned long msg = 0;
			if ((ev == PTRACE_EVENT_CLONE || ev == PTRACE_EVENT_FORK ||
			     ev == PTRACE_EVENT_VFORK) && !ptrace(PTRACE_GETEVENTMSG, t, NULL, &msg))
				kill((pid_t)msg, SIGKILL);
			kill(t, SIGKILL);
		}
	fw->nlive = fw->nunborn = 0;
	follow_end(st);
}
