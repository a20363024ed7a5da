/* SPDX-License-Identifier: MIT */
/*
 * read()/write() with misaligned user buffers: the kernel's copy_from_user
 * (write, pwrite) and copy_to_user (read, pread) on a pipe and on a tmpfs
 * file (seed 001 table 8; seed 004: the RISC-V uaccess shift-copy).
 *   pipe/rw      write n bytes into a pipe, read them back (both copies)
 *   tmpfs/write  pwrite n bytes at offset 0 (copy_from_user into the page cache)
 *   tmpfs/read   pread n bytes at offset 0 (copy_to_user from the page cache)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>
#include "bench_def.h"

#define TMPFS_MAGIC_ 0x01021994
#define RAMFS_MAGIC_ 0x858458f6

struct io_state {
	unsigned char *wbuf, *rbuf;
	size_t len;
	int fd[2];
	char path[4200];
};

enum { IO_PIPE, IO_TMPFS_WRITE, IO_TMPFS_READ };
static const char *const io_names[] = { "pipe/rw", "tmpfs/write", "tmpfs/read" };

static void io_teardown(struct bench_case *c)
{
	struct io_state *st = c->state;
	if (!st)
		return;
	for (int i = 0; i < 2; i++)
		if (st->fd[i] >= 0)
			close(st->fd[i]);
	if (st->path[0])
		unlink(st->path);
	bench_free(st->wbuf, st->len);
	bench_free(st->rbuf, st->len);
	free(st);
	c->state = NULL;
}

static int is_ramfs(const char *dir)
{
	struct statfs sf;
	return statfs(dir, &sf) == 0 &&
	       ((unsigned long)sf.f_type == TMPFS_MAGIC_ || (unsigned long)sf.f_type == RAMFS_MAGIC_);
}

static const char *tmpfs_dir(const struct bench_opts *o)
{
	if (o->tmpfs_dir)
		return o->tmpfs_dir;
	static const char *const cand[] = { "/dev/shm", "/tmp", "/run" };
	for (unsigned i = 0; i < sizeof(cand) / sizeof(cand[0]); i++)
		if (is_ramfs(cand[i]))
			return cand[i];
	return NULL;
}

static int io_setup(struct bench_case *c, char *why, size_t len)
{
	struct io_state *st = case_state(c, sizeof(*st), why, len);
	if (!st)
		return -1;
	st->fd[0] = st->fd[1] = -1;
	st->len = c->n + 64;
	st->wbuf = bench_alloc(st->len);
	st->rbuf = bench_alloc(st->len);
	if (!st->wbuf || !st->rbuf) {
		snprintf(why, len, "cannot map 2 x %zu bytes", st->len);
		goto fail;
	}
	for (size_t i = 0; i < st->len; i++)
		st->wbuf[i] = (unsigned char)(i * 131 + 7);
	if (c->p[0] == IO_PIPE) {
		if (pipe(st->fd) < 0) {
			snprintf(why, len, "pipe: %s", strerror(errno));
			goto fail;
		}
		/* the whole write must fit, or write() would block with nobody reading */
		if (c->n > 65536 && fcntl(st->fd[1], F_SETPIPE_SZ, (int)c->n) < (int)c->n) {
			snprintf(why, len,
				 "a pipe cannot hold %zu bytes here (/proc/sys/fs/pipe-max-size)", c->n);
			goto fail;
		}
	} else {
		if (!c->str) {
			snprintf(why, len,
				 "no tmpfs mounted at /dev/shm, /tmp or /run; name one with --tmpfs DIR");
			goto fail;
		}
		snprintf(st->path, sizeof(st->path), "%s/hpm-bench-%d", c->str, (int)getpid());
		st->fd[0] = open(st->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (st->fd[0] < 0) {
			snprintf(why, len, "cannot create %s: %s", st->path, strerror(errno));
			st->path[0] = 0;
			goto fail;
		}
		if (pwrite(st->fd[0], st->wbuf, c->n, 0) != (ssize_t)c->n) {
			snprintf(why, len, "cannot write %zu bytes to %s", c->n, st->path);
			goto fail;
		}
	}
	return 0;
fail:
	io_teardown(c);
	return -1;
}

static void run_io(struct bench_case *c, uint64_t iters)
{
	struct io_state *st = c->state;
	unsigned char *w = st->wbuf + c->p[1], *r = st->rbuf + c->p[2];
	size_t n = c->n;
	switch (c->p[0]) {
	case IO_PIPE:
		for (uint64_t i = 0; i < iters; i++) {
			size_t done = 0;
			if (write(st->fd[1], w, n) != (ssize_t)n)
				abort(); /* a pipe we sized ourselves: cannot happen */
			while (done < n) {
				ssize_t k = read(st->fd[0], r + done, n - done);
				if (k <= 0)
					abort();
				done += (size_t)k;
			}
		}
		break;
	case IO_TMPFS_WRITE:
		for (uint64_t i = 0; i < iters; i++)
			if (pwrite(st->fd[0], w, n, 0) != (ssize_t)n)
				abort();
		break;
	case IO_TMPFS_READ:
		for (uint64_t i = 0; i < iters; i++)
			if (pread(st->fd[0], r, n, 0) != (ssize_t)n)
				abort();
		break;
	}
}

static int gen_io(const struct bench_opts *o, struct case_list *l)
{
	const char *dir = tmpfs_dir(o);
	for (int kind = 0; kind < 3; kind++)
		for (int si = 0; si < o->nsizes; si++)
			for (int a = 0; a < o->nalign; a++) {
				struct bench_case *c = case_add(l, "io", run_io);
				if (!c)
					return -1;
				c->n = o->sizes[si];
				c->bytes = (double)c->n;
				c->unit = kind == IO_PIPE ? "round trip" : "call";
				c->p[0] = kind;
				c->p[1] = o->align[a][0];
				c->p[2] = o->align[a][1];
				c->setup = io_setup;
				c->teardown = io_teardown;
				snprintf(c->name, sizeof(c->name), "io/%s/n=%zu/s%d-d%d", io_names[kind],
					 c->n, c->p[1], c->p[2]);
				snprintf(c->params, sizeof(c->params),
					 "\"kind\":\"%s\",\"size\":%zu,\"src_off\":%d,\"dst_off\":%d",
					 io_names[kind], c->n, c->p[1], c->p[2]);
				c->str = dir;
			}
	return 0;
}

const struct bench_def bench_io_defs[] = {
	{ "io", "read()/write() through a pipe and pread()/pwrite() on tmpfs, misaligned user buffers",
	  gen_io, NULL },
	{ NULL, NULL, NULL, NULL },
};
