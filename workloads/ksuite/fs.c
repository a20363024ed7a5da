/* SPDX-License-Identifier: MIT */
/*
 * File-descriptor bitmaps and path handling: lowest-free-fd allocation among
 * many open fds, select/poll over a large fd set, path lookup from misaligned
 * user strings and getcwd/readlink in a deep directory.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ksuite.h"

#define NFDS 900

/* Fixed-seed LCG (Numerical Recipes constants): the same holes on every run and ISA. */
static uint32_t lcg(uint32_t *s)
{
	*s = *s * 1664525u + 1013904223u;
	return *s >> 8;
}

static int raise_nofile(rlim_t want)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl))
		return ks_fail_errno("getrlimit(RLIMIT_NOFILE)");
	if (rl.rlim_cur >= want)
		return 0;
	if (rl.rlim_max < want)
		return ks_fail("needs %llu open files, RLIMIT_NOFILE hard limit is %llu",
			       (unsigned long long)want, (unsigned long long)rl.rlim_max);
	rl.rlim_cur = want;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		return ks_fail_errno("setrlimit(RLIMIT_NOFILE)");
	return 0;
}

/*
 * fd-alloc: NFDS dups of /dev/null fill the table densely from the lowest free
 * slot up; then per iteration one of them is closed and dup() must return exactly
 * that number (POSIX: lowest free fd) — found by the kernel's bitmap search
 * (find_next_fd: full_fds_bits, then open_fds).
 */
int ks_fd_alloc(long n)
{
	if (raise_nofile(NFDS + 64))
		return 1;
	int base = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (base < 0)
		return ks_fail_errno("open /dev/null");
	static int fds[NFDS];
	for (int k = 0; k < NFDS; k++) {
		fds[k] = dup(base);
		if (fds[k] < 0)
			return ks_fail_errno("dup #%d", k);
	}
	uint32_t seed = 12345;
	int rc = 0;
	for (long i = 0; i < n && !rc; i++) {
		int h = (int)(lcg(&seed) % NFDS);
		if (close(fds[h]))
			rc = ks_fail_errno("close(%d)", fds[h]);
		else {
			int got = dup(base);
			if (got < 0)
				rc = ks_fail_errno("dup");
			else if (got != fds[h])
				rc = ks_fail("iteration %ld: dup returned fd %d, the lowest free fd is %d",
					     i, got, fds[h]);
		}
	}
	for (int k = 0; k < NFDS; k++)
		close(fds[k]);
	close(base);
	return rc;
}

#define NPIPES 128

/*
 * poll: 128 pipes (256 fds); every third pipe holds one byte. Each iteration
 * selects (read ends for reading, write ends for writing, zero timeout) and
 * polls the same 256 fds: exactly 43 readable + 128 writable each time.
 */
int ks_poll(long n)
{
	if (raise_nofile(2 * NPIPES + 64))
		return 1;
	static int rd[NPIPES], wr[NPIPES];
	static struct pollfd pf[2 * NPIPES];
	int maxfd = -1, want_rd = 0;
	for (int k = 0; k < NPIPES; k++) {
		int p[2];
		if (pipe(p))
			return ks_fail_errno("pipe #%d", k);
		rd[k] = p[0];
		wr[k] = p[1];
		if (p[1] >= FD_SETSIZE)
			return ks_fail("fd %d does not fit select's fd_set (%d)", p[1], FD_SETSIZE);
		maxfd = p[0] > maxfd ? p[0] : maxfd;
		maxfd = p[1] > maxfd ? p[1] : maxfd;
		if (k % 3 == 0) {
			if (write(p[1], "x", 1) != 1)
				return ks_fail_errno("write to pipe #%d", k);
			want_rd++;
		}
	}
	int rc = 0;
	for (long i = 0; i < n && !rc; i++) {
		fd_set r, w;
		FD_ZERO(&r);
		FD_ZERO(&w);
		for (int k = 0; k < NPIPES; k++) {
			FD_SET(rd[k], &r);
			FD_SET(wr[k], &w);
		}
		struct timeval tv = {0, 0};
		int got = select(maxfd + 1, &r, &w, NULL, &tv);
		if (got < 0) {
			rc = ks_fail_errno("select");
			break;
		}
		if (got != want_rd + NPIPES) {
			rc = ks_fail("iteration %ld: select found %d ready fds, expected %d", i, got,
				     want_rd + NPIPES);
			break;
		}
		for (int k = 0; k < NPIPES; k++)
			if (!!FD_ISSET(rd[k], &r) != (k % 3 == 0) || !FD_ISSET(wr[k], &w)) {
				rc = ks_fail("iteration %ld: select reported pipe #%d wrongly", i, k);
				break;
			}
		for (int k = 0; k < NPIPES; k++) {
			pf[2 * k] = (struct pollfd){.fd = rd[k], .events = POLLIN};
			pf[2 * k + 1] = (struct pollfd){.fd = wr[k], .events = POLLOUT};
		}
		got = poll(pf, 2 * NPIPES, 0);
		if (got < 0)
			rc = ks_fail_errno("poll");
		else if (got != want_rd + NPIPES)
			rc = ks_fail("iteration %ld: poll found %d ready fds, expected %d", i, got,
				     want_rd + NPIPES);
	}
	for (int k = 0; k < NPIPES; k++) {
		close(rd[k]);
		close(wr[k]);
	}
	return rc;
}

/* odd-length names: the kernel's name hashing and d_path copies see every alignment */
static const char *const comps[] = {"a", "bcd", "efghijk", "lmnopqrstuvwx", "yzABC",
				    "DEFGHIJKLMN", "OPQRSTUVW", "XYZabcdefghijklmn"};
#define NCOMPS (sizeof(comps) / sizeof(comps[0]))
#define LINK_TARGET "../../somewhere/else/entirely-odd"

/*
 * path: in <tmpdir>/ksuite-path-PID/a/bcd/.../XYZ...mn: per iteration, stat
 * the file's absolute path from a string copy at a misaligned address
 * (strncpy_from_user, path walk and name hashing), getcwd from inside (d_path's
 * prepend copies), readlink of a symlink. Results compared with set-up values.
 */
int ks_path(long n)
{
	char root[512], dir[1024], file[1100], link[1100];
	snprintf(root, sizeof(root), "%s/ksuite-path-%d", ks_tmpdir(), (int)getpid());
	size_t dl = (size_t)snprintf(dir, sizeof(dir), "%s", root);
	if (mkdir(root, 0700))
		return ks_fail_errno("mkdir %s (set TMPDIR to a writable directory)", root);
	size_t made = 0;
	int rc = 0, cwd0 = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (; made < NCOMPS; made++) {
		dl += (size_t)snprintf(dir + dl, sizeof(dir) - dl, "/%s", comps[made]);
		if (mkdir(dir, 0700)) {
			rc = ks_fail_errno("mkdir %s", dir);
			*strrchr(dir, '/') = 0; /* not made: the clean-up starts one level up */
			goto out;
		}
	}
	snprintf(file, sizeof(file), "%s/f", dir);
	snprintf(link, sizeof(link), "%s/l", dir);
	int fd = open(file, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	if (fd < 0 || symlink(LINK_TARGET, link)) {
		rc = ks_fail_errno("creating %s and %s", file, link);
		if (fd >= 0)
			close(fd);
		goto out;
	}
	struct stat st0;
	fstat(fd, &st0);
	close(fd);
	char cwd_want[1100], cwd[1100], lbuf[256];
	if (chdir(dir) || !getcwd(cwd_want, sizeof(cwd_want))) {
		rc = ks_fail_errno("chdir/getcwd in %s", dir);
		goto out;
	}
	size_t flen = strlen(file) + 1;
	static char shifted[1200];
	for (long i = 0; i < n && !rc; i++) {
		char *p = shifted + 1 + (i & 7);
		memcpy(p, file, flen);
		struct stat st;
		if (stat(p, &st)) {
			rc = ks_fail_errno("stat %s", p);
			break;
		}
		if (st.st_ino != st0.st_ino || st.st_dev != st0.st_dev) {
			rc = ks_fail("iteration %ld: stat found another file (inode %llu, expected "
				     "%llu)", i, (unsigned long long)st.st_ino,
				     (unsigned long long)st0.st_ino);
			break;
		}
		if (!getcwd(cwd, sizeof(cwd)) || strcmp(cwd, cwd_want)) {
			rc = ks_fail("iteration %ld: getcwd gave '%s', expected '%s'", i, cwd, cwd_want);
			break;
		}
		ssize_t ll = readlink("l", lbuf + (i & 7), sizeof(lbuf) - 8);
		if (ll != (ssize_t)strlen(LINK_TARGET) || memcmp(lbuf + (i & 7), LINK_TARGET, (size_t)ll))
			rc = ks_fail("iteration %ld: readlink gave %zd bytes, not the link target", i, ll);
	}
	unlink(link);
	unlink(file);
out:
	if (cwd0 >= 0) {
		if (fchdir(cwd0))
			rc = rc ? rc : ks_fail_errno("returning to the start directory");
		close(cwd0);
	}
	while (made > 0) {	/* remove what was made, deepest first */
		rmdir(dir);
		char *s = strrchr(dir, '/');
		if (s)
			*s = 0;
		made--;
	}
	if (rmdir(root) && !rc)
		rc = ks_fail_errno("removing %s", root);
	return rc;
}
