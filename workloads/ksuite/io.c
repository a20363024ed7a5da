/* SPDX-License-Identifier: MIT */
/*
 * Syscall entry/exit and data copies: small syscalls, misaligned user buffers
 * through a pipe and a tmpfs file (copy_to_user / copy_from_user), and sendfile
 * between tmpfs files at mutually misaligned offsets (kernel memcpy between page
 * cache pages).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ksuite.h"

/*
 * syscalls: five cheap syscalls, all through syscall(2) or plain read/write so
 * no vDSO or libc cache answers in user space.
 */
int ks_syscalls(long n)
{
	int z = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	if (z < 0)
		return ks_fail_errno("open /dev/zero");
	int nul = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (nul < 0)
		return ks_fail_errno("open /dev/null");
	long pid = syscall(SYS_getpid), ppid = syscall(SYS_getppid);
	struct timespec prev = {0, 0};
	for (long i = 0; i < n; i++) {
		struct timespec ts;
		unsigned char c = 0xa5;
		if (syscall(SYS_getpid) != pid || syscall(SYS_getppid) != ppid)
			return ks_fail("iteration %ld: getpid/getppid changed", i);
		if (syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts))
			return ks_fail_errno("clock_gettime");
		if (ts.tv_sec < prev.tv_sec || (ts.tv_sec == prev.tv_sec && ts.tv_nsec < prev.tv_nsec))
			return ks_fail("iteration %ld: CLOCK_MONOTONIC went backwards", i);
		prev = ts;
		if (read(z, &c, 1) != 1 || c != 0)
			return ks_fail("iteration %ld: read of 1 byte from /dev/zero did not give 0", i);
		if (write(nul, &c, 1) != 1)
			return ks_fail_errno("write to /dev/null");
	}
	close(z);
	close(nul);
	return 0;
}

/*
 * Sizes cycle through small copies (below riscv's 72-byte byte-copy threshold in
 * __asm_copy_*_user and the 128-byte one in memcpy), odd middle sizes and
 * multi-page ones; offsets cycle through all 8x8 user-source/user-destination
 * misalignments. 53 sizes x 64 offset pairs: coprime, so every combination
 * comes round within 3392 iterations.
 */
static const unsigned copy_sizes[] = {
	1,    2,    3,    5,    7,    8,    9,    15,   16,   17,   24,   31,   33,   40,
	47,   56,   63,   64,   65,   71,   72,   73,   80,   96,   100,  127,  128,  129,
	200,  255,  256,  257,  300,  511,  513,  700,  1000, 1023, 1025, 1500, 2047, 2049,
	3000, 4000, 4095, 4096, 4097, 5000, 6000, 7000, 8191, 8193, 9000,
};
#define NSIZES (sizeof(copy_sizes) / sizeof(copy_sizes[0]))
#define COPY_MAX (9000 + 64)

struct bufs {
	unsigned char *src, *dst;
};

static int bufs_new(struct bufs *b)
{
	/* 64-byte aligned bases: the offsets below are the only misalignment */
	if (posix_memalign((void **)&b->src, 64, COPY_MAX + 64) ||
	    posix_memalign((void **)&b->dst, 64, COPY_MAX + 64))
		return ks_fail("out of memory");
	for (size_t i = 0; i < COPY_MAX + 64; i++)
		b->src[i] = ks_pattern(i);
	return 0;
}

static void bufs_free(struct bufs *b)
{
	free(b->src);
	free(b->dst);
}

static void combo(long i, unsigned *len, unsigned *so, unsigned *do_)
{
	*so = (unsigned)(i & 7);
	*do_ = (unsigned)((i >> 3) & 7);
	*len = copy_sizes[i % (long)NSIZES];
}

/*
 * copy-pipe: a small head write first, so the main write lands in the same pipe
 * page at a misaligned kernel offset too; then one read of everything into a
 * misaligned user buffer.
 */
int ks_copy_pipe(long n)
{
	int p[2];
	if (pipe(p))
		return ks_fail_errno("pipe");
	struct bufs b;
	if (bufs_new(&b))
		return 1;
	int rc = 0;
	for (long i = 0; i < n && !rc; i++) {
		unsigned len, so, dof, head = (unsigned)(i % 5) + 1;
		combo(i, &len, &so, &dof);
		int e = ks_write_all(p[1], b.src + 64 - head, head);
		if (!e)
			e = ks_write_all(p[1], b.src + 64 + so, len);
		if (!e)
			e = ks_read_all(p[0], b.dst + dof, head + len);
		if (e) {
			errno = -e;
			rc = ks_fail_errno("pipe copy of %u+%u bytes (iteration %ld)", head, len, i);
		} else if (memcmp(b.dst + dof, b.src + 64 - head, head) ||
			   memcmp(b.dst + dof + head, b.src + 64 + so, len)) {
			rc = ks_fail("iteration %ld: %u bytes read back from the pipe differ from "
				     "those written (src offset %u, dst offset %u)", i, len, so, dof);
		}
	}
	close(p[0]);
	close(p[1]);
	bufs_free(&b);
	return rc;
}

/* An unlinked scratch file in ks_tmpdir() (tmpfs in the lab). */
static int scratch_file(void)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/ksuite-XXXXXX", ks_tmpdir());
	int fd = mkostemp(path, O_CLOEXEC);
	if (fd < 0) {
		ks_fail_errno("cannot create a scratch file in %s (set TMPDIR)", ks_tmpdir());
		return -1;
	}
	unlink(path);
	return fd;
}

/* copy-file: pwrite then pread at file offset (i*3)%8 + page multiple, user buffers misaligned. */
int ks_copy_file(long n)
{
	int fd = scratch_file();
	if (fd < 0)
		return 1;
	struct bufs b;
	if (bufs_new(&b))
		return 1;
	int rc = 0;
	for (long i = 0; i < n && !rc; i++) {
		unsigned len, so, dof;
		combo(i, &len, &so, &dof);
		off_t off = (off_t)((i * 3) & 7) + (off_t)(i % 4) * 4096;
		ssize_t w = pwrite(fd, b.src + 64 + so, len, off);
		if (w != (ssize_t)len) {
			rc = w < 0 ? ks_fail_errno("pwrite %u bytes at %lld", len, (long long)off)
				   : ks_fail("short pwrite: %zd of %u bytes", w, len);
			break;
		}
		ssize_t r = pread(fd, b.dst + dof, len, off);
		if (r != (ssize_t)len)
			rc = r < 0 ? ks_fail_errno("pread %u bytes at %lld", len, (long long)off)
				   : ks_fail("short pread: %zd of %u bytes", r, len);
		else if (memcmp(b.dst + dof, b.src + 64 + so, len))
			rc = ks_fail("iteration %ld: %u bytes read back at file offset %lld differ",
				     i, len, (long long)off);
	}
	close(fd);
	bufs_free(&b);
	return rc;
}

/*
 * sendfile: source file of 64 KiB pattern; per iteration copy LEN bytes from
 * source offset A to destination offset B with (A - B) % 8 != 0, so the kernel's
 * page-cache to page-cache memcpy (splice to an internal pipe, then a bvec write)
 * has mutually misaligned buffers. Checked with a pread of the destination.
 */
#define SF_SRC (64 * 1024)

int ks_sendfile(long n)
{
	int in = scratch_file(), out = in < 0 ? -1 : scratch_file();
	if (in < 0 || out < 0)
		return 1;
	unsigned char *pat = malloc(SF_SRC), *chk = malloc(8192);
	if (!pat || !chk)
		return ks_fail("out of memory");
	for (size_t i = 0; i < SF_SRC; i++)
		pat[i] = ks_pattern(i);
	if (pwrite(in, pat, SF_SRC, 0) != SF_SRC)
		return ks_fail_errno("filling the source file");
	int rc = 0;
	for (long i = 0; i < n && !rc; i++) {
		size_t len = 1000 + (size_t)(i % 7) * 1000;	/* 1000..7000 bytes */
		off_t a = (off_t)(i % 8) * 4096 + (off_t)((i * 5) % 8);
		off_t bpos = (off_t)((i * 3) % 4) * 4096 + (off_t)((i * 5 + 1 + (i % 7)) % 8);
		if ((a - bpos) % 8 == 0)	/* keep the two mutually misaligned */
			bpos += 3;
		if (lseek(out, bpos, SEEK_SET) != bpos)
			return ks_fail_errno("lseek");
		off_t ia = a;
		ssize_t s = sendfile(out, in, &ia, len);
		if (s != (ssize_t)len) {
			rc = s < 0 ? ks_fail_errno("sendfile %zu bytes", len)
				   : ks_fail("short sendfile: %zd of %zu bytes", s, len);
			break;
		}
		if (ia != a + (off_t)len) {
			rc = ks_fail("sendfile moved the source offset to %lld, expected %lld",
				     (long long)ia, (long long)(a + (off_t)len));
			break;
		}
		if (pread(out, chk, len, bpos) != (ssize_t)len || memcmp(chk, pat + a, len))
			rc = ks_fail("iteration %ld: destination bytes at %lld differ from source "
				     "bytes at %lld (%zu bytes)", i, (long long)bpos, (long long)a, len);
	}
	close(in);
	close(out);
	free(pat);
	free(chk);
	return rc;
}
