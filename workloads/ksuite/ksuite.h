/* SPDX-License-Identifier: MIT */
/*
 * ksuite: kernel-exercising workloads for cross-ISA profiles (see docs/ksuite.md).
 *
 * Every workload runs a fixed number of iterations (no time-based loops, no
 * unseeded randomness), checks what can be checked (bytes moved, signals
 * handled, children reaped, fds returned) and returns 0, or prints one line
 * "ksuite: WORKLOAD: what went wrong" on stderr and returns 1.
 */
#ifndef KSUITE_H
#define KSUITE_H

#include <stddef.h>
#include <sys/types.h>

struct ks_workload {
	const char *name;
	const char *group;	/* kernel area, shown by `ksuite list` */
	long def_iters;		/* ~0.2-1 s natively on a 2020s x86-64 core */
	long lab_iters;		/* ~0.5 s of guest time in the lab (QEMU TCG -icount shift=0) */
	int (*run)(long iters);
	const char *what;	/* one line for `ksuite list` */
};

/* name of the running workload, for error lines */
extern const char *ks_name;
/* argv[0]-independent path the exec workloads re-run (the trivial child mode) */
extern const char *ks_self;

/* Print "ksuite: WORKLOAD: <message>" on stderr; returns 1 (the workload's status). */
int ks_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Same, with ": strerror(errno)" appended. */
int ks_fail_errno(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Full-length read/write (pipes may return short counts); 0 or -errno / -EPIPE on EOF. */
int ks_write_all(int fd, const void *buf, size_t len);
int ks_read_all(int fd, void *buf, size_t len);

/* Wait for child pid; 0 if it exited with `want`, else a ks_fail() status. */
int ks_reap(pid_t pid, int want, const char *who);

/* Deterministic pattern byte for position i (no randomness: same on every run and ISA). */
static inline unsigned char ks_pattern(size_t i)
{
	return (unsigned char)(i * 131u + (i >> 8) * 7u + 1u);
}

/* Directory for scratch files: $TMPDIR or /tmp (a tmpfs in the lab guests). */
const char *ks_tmpdir(void);

/* workloads, one file per kernel area */
int ks_pipe(long n);
int ks_ctxswitch(long n);
int ks_futex(long n);
int ks_sem_sysv(long n);
int ks_sem_posix(long n);
int ks_signals(long n);
int ks_fork(long n);
int ks_exec(long n);
int ks_vfork(long n);
int ks_posix_spawn(long n);
int ks_mmap(long n);
int ks_mprotect(long n);
int ks_pagefault(long n);
int ks_syscalls(long n);
int ks_copy_pipe(long n);
int ks_copy_file(long n);
int ks_sendfile(long n);
int ks_fd_alloc(long n);
int ks_poll(long n);
int ks_path(long n);
int ks_unix_stream(long n);
int ks_udp_loopback(long n);
int ks_tcp_loopback(long n);

#endif
