/* SPDX-License-Identifier: MIT */
/* Ping-pong workloads: pipes, sched_yield, futexes, SysV and POSIX semaphores. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/sem.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ksuite.h"

/*
 * pipe: parent sends k, child checks it and answers k+1, parent checks that
 * (UnixBench context1). Every hand-over blocks one side in pipe_read: one
 * context switch each way.
 */
int ks_pipe(long n)
{
	int down[2], up[2];
	if (pipe(down) || pipe(up))
		return ks_fail_errno("pipe");
	pid_t pid = fork();
	if (pid < 0)
		return ks_fail_errno("fork");
	if (pid == 0) {
		close(down[1]);
		close(up[0]);
		for (long i = 0; i < n; i++) {
			uint64_t v;
			int e = ks_read_all(down[0], &v, sizeof(v));
			if (e || v != (uint64_t)2 * i)
				_exit(e ? 3 : 4);
			v++;
			if (ks_write_all(up[1], &v, sizeof(v)))
				_exit(5);
		}
		_exit(0);
	}
	close(down[0]);
	close(up[1]);
	int rc = 0;
	for (long i = 0; i < n && !rc; i++) {
		uint64_t v = (uint64_t)2 * i;
		int e = ks_write_all(down[1], &v, sizeof(v));
		if (!e)
			e = ks_read_all(up[0], &v, sizeof(v));
		if (e)
			rc = ks_fail("round trip %ld: %s", i, e == -EPIPE ? "child closed the pipe" :
				     "read/write failed");
		else if (v != (uint64_t)2 * i + 1)
			rc = ks_fail("round trip %ld: got %llu, expected %llu", i,
				     (unsigned long long)v, (unsigned long long)(2 * i + 1));
	}
	close(down[1]);
	close(up[0]);
	int crc = ks_reap(pid, 0, "the pipe child");
	return rc ? rc : crc;
}

/* ctxswitch: a turn variable handed between two threads; the waiting one yields. */
struct turn {
	volatile long turn;
	long n;
};

static void *yield_side(void *arg, int me)
{
	struct turn *t = arg;
	for (long i = 0; i < t->n; i++) {
		long want = 2 * i + me;
		/* how often this spins is up to the scheduler; the hand-overs are exact */
		while (__atomic_load_n(&t->turn, __ATOMIC_ACQUIRE) != want)
			sched_yield();
		__atomic_store_n(&t->turn, want + 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

static void *yield_b(void *arg)
{
	return yield_side(arg, 1);
}

int ks_ctxswitch(long n)
{
	struct turn t = {.turn = 0, .n = n};
	pthread_t th;
	int e = pthread_create(&th, NULL, yield_b, &t);
	if (e) {
		errno = e;
		return ks_fail_errno("pthread_create");
	}
	yield_side(&t, 0);
	pthread_join(th, NULL);
	if (t.turn != 2 * n)
		return ks_fail("turn is %ld after %ld hand-overs, expected %ld", t.turn, n, 2 * n);
	return 0;
}

/*
 * futex: same turn protocol, but waiting sleeps in FUTEX_WAIT. Even hand-overs
 * store the new value in user space and FUTEX_WAKE; odd ones let the kernel do
 * the increment with FUTEX_WAKE_OP (arch_futex_atomic_op_inuser), which also
 * wakes the waiter.
 */
static long futex(volatile int *uaddr, int op, int val, volatile int *uaddr2, int val3)
{
	return syscall(SYS_futex, uaddr, op | FUTEX_PRIVATE_FLAG, val, NULL, uaddr2, val3);
}

struct fturn {
	volatile int word;
	long n;
	int err;
	volatile int dead;	/* one side failed: the other must not wait for ever */
};

static void *futex_side(void *arg, int me)
{
	struct fturn *t = arg;
	for (long i = 0; i < t->n; i++) {
		int want = (int)(2 * i + me);
		int cur;
		while ((cur = __atomic_load_n(&t->word, __ATOMIC_ACQUIRE)) != want) {
			if (t->dead)
				return NULL;
			if (futex(&t->word, FUTEX_WAIT, cur, NULL, 0) < 0 && errno != EAGAIN &&
			    errno != EINTR)
				goto fail;
		}
		long r;
		if (i & 1) {
			/* *word += 1 in the kernel, then wake one waiter on word */
			r = futex(&t->word, FUTEX_WAKE_OP, 1, &t->word,
				  FUTEX_OP(FUTEX_OP_ADD, 1, FUTEX_OP_CMP_EQ, 0));
		} else {
			__atomic_store_n(&t->word, want + 1, __ATOMIC_RELEASE);
			r = futex(&t->word, FUTEX_WAKE, 1, NULL, 0);
		}
		if (r < 0)
			goto fail;
	}
	return NULL;
fail:
	t->err = errno;
	t->dead = 1;
	__atomic_store_n(&t->word, -1, __ATOMIC_RELEASE); /* a sleeper's FUTEX_WAIT fails */
	futex(&t->word, FUTEX_WAKE, 0x7fffffff, NULL, 0);
	return NULL;
}

static void *futex_b(void *arg)
{
	return futex_side(arg, 1);
}

int ks_futex(long n)
{
	if (n > 0x3fffffff)
		return ks_fail("at most %d iterations (the futex word is 32 bits)", 0x3fffffff);
	struct fturn t = {.word = 0, .n = n};
	pthread_t th;
	int e = pthread_create(&th, NULL, futex_b, &t);
	if (e) {
		errno = e;
		return ks_fail_errno("pthread_create");
	}
	futex_side(&t, 0);
	pthread_join(th, NULL);
	if (t.err) {
		errno = t.err;
		return ks_fail_errno("futex");
	}
	if (t.word != 2 * n)
		return ks_fail("futex word is %d after %ld hand-overs, expected %ld", t.word, n, 2 * n);
	return 0;
}

/* sem-sysv: sem 0 = "child's turn", sem 1 = "parent's turn". */
static int semop1(int id, unsigned short num, short op)
{
	struct sembuf b = {.sem_num = num, .sem_op = op, .sem_flg = 0};
	while (semop(id, &b, 1) < 0)
		if (errno != EINTR)
			return -errno;
	return 0;
}

int ks_sem_sysv(long n)
{
	int id = semget(IPC_PRIVATE, 2, IPC_CREAT | 0600);
	if (id < 0)
		return ks_fail_errno("semget");
	pid_t pid = fork();
	if (pid < 0) {
		semctl(id, 0, IPC_RMID);
		return ks_fail_errno("fork");
	}
	if (pid == 0) {
		for (long i = 0; i < n; i++)
			if (semop1(id, 0, -1) || semop1(id, 1, 1))
				_exit(3);
		_exit(0);
	}
	int rc = 0;
	for (long i = 0; i < n && !rc; i++) {
		int e = semop1(id, 0, 1);
		if (!e)
			e = semop1(id, 1, -1);
		if (e) {
			errno = -e;
			rc = ks_fail_errno("semop in round %ld", i);
		}
	}
	if (rc)
		kill(pid, SIGKILL);
	int crc = ks_reap(pid, 0, "the semaphore child");
	int v0 = semctl(id, 0, GETVAL), v1 = semctl(id, 1, GETVAL);
	semctl(id, 0, IPC_RMID);
	if (rc || crc)
		return 1;
	if (v0 != 0 || v1 != 0)
		return ks_fail("semaphore values %d,%d after the run, expected 0,0", v0, v1);
	return 0;
}

/* sem-posix: unnamed process-shared semaphores in a shared anonymous mapping. */
int ks_sem_posix(long n)
{
	sem_t *s = mmap(NULL, 2 * sizeof(sem_t), PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (s == MAP_FAILED)
		return ks_fail_errno("mmap(MAP_SHARED)");
	if (sem_init(&s[0], 1, 0) || sem_init(&s[1], 1, 0))
		return ks_fail_errno("sem_init");
	pid_t pid = fork();
	if (pid < 0)
		return ks_fail_errno("fork");
	if (pid == 0) {
		for (long i = 0; i < n; i++) {
			while (sem_wait(&s[0]))
				if (errno != EINTR)
					_exit(3);
			if (sem_post(&s[1]))
				_exit(4);
		}
		_exit(0);
	}
	int rc = 0;
	for (long i = 0; i < n && !rc; i++) {
		if (sem_post(&s[0])) {
			rc = ks_fail_errno("sem_post in round %ld", i);
			break;
		}
		while (sem_wait(&s[1]))
			if (errno != EINTR) {
				rc = ks_fail_errno("sem_wait in round %ld", i);
				break;
			}
	}
	if (rc)
		kill(pid, SIGKILL);
	int crc = ks_reap(pid, 0, "the semaphore child");
	int v0 = -1, v1 = -1;
	sem_getvalue(&s[0], &v0);
	sem_getvalue(&s[1], &v1);
	munmap(s, 2 * sizeof(sem_t));
	if (rc || crc)
		return 1;
	if (v0 != 0 || v1 != 0)
		return ks_fail("semaphore values %d,%d after the run, expected 0,0", v0, v1);
	return 0;
}
