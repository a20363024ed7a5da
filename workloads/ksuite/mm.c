/* SPDX-License-Identifier: MIT */
/* Memory management: mmap/munmap with faults, mprotect split/merge, MADV_DONTNEED refaults. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "ksuite.h"

static long minflt(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

/* Anonymous private read/write mapping without transparent huge pages: every page
 * written is one 4 KiB fault, on every machine. */
static char *anon(size_t len)
{
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	madvise(p, len, MADV_NOHUGEPAGE); /* EINVAL without THP support: nothing to turn off */
	return p;
}

#define MMAP_PAGES 64

int ks_mmap(long n)
{
	long psz = sysconf(_SC_PAGESIZE);
	size_t len = (size_t)MMAP_PAGES * (size_t)psz;
	long f0 = minflt();
	for (long i = 0; i < n; i++) {
		char *p = anon(len);
		if (!p)
			return ks_fail_errno("mmap %zu bytes (iteration %ld)", len, i);
		for (long k = 0; k < MMAP_PAGES; k++)
			((volatile char *)p)[k * psz + (k & 7)] = (char)(i + k);
		for (long k = 0; k < MMAP_PAGES; k++)
			if (p[k * psz + (k & 7)] != (char)(i + k) || p[k * psz + 8 + (k & 7)])
				return ks_fail("iteration %ld: page %ld does not hold what was written "
					       "(or is not zero-filled)", i, k);
		if (munmap(p, len))
			return ks_fail_errno("munmap (iteration %ld)", i);
	}
	long faults = minflt() - f0;
	if (faults < n * MMAP_PAGES)
		return ks_fail("%ld minor faults for %ld fresh pages", faults, n * MMAP_PAGES);
	return 0;
}

#define MPROT_PAGES 16

/*
 * mprotect: a 16-page window; per iteration every other page goes read-only
 * (the VMA splits into 16) and back to read-write (they merge into one), then
 * one page is written. Each mprotect changes PTEs and flushes the TLB range.
 */
int ks_mprotect(long n)
{
	long psz = sysconf(_SC_PAGESIZE);
	size_t len = (size_t)MPROT_PAGES * (size_t)psz;
	char *p = anon(len);
	if (!p)
		return ks_fail_errno("mmap");
	for (long k = 0; k < MPROT_PAGES; k++)
		p[k * psz] = 1;
	for (long i = 0; i < n; i++) {
		for (long k = 1; k < MPROT_PAGES; k += 2)
			if (mprotect(p + k * psz, (size_t)psz, PROT_READ))
				return ks_fail_errno("mprotect read-only (iteration %ld)", i);
		if (mprotect(p, len, PROT_READ | PROT_WRITE))
			return ks_fail_errno("mprotect read-write (iteration %ld)", i);
		long k = i % MPROT_PAGES;
		p[k * psz + 1]++;
	}
	/* page k was incremented once per iteration with i % 16 == k */
	for (long k = 0; k < MPROT_PAGES; k++) {
		long want = n / MPROT_PAGES + (k < n % MPROT_PAGES);
		if (p[k * psz + 1] != (char)want)
			return ks_fail("page %ld holds %d, expected %ld increments", k, p[k * psz + 1],
				       want);
	}
	munmap(p, len);
	return 0;
}

#define PF_PAGES 256

/* pagefault: drop all pages with MADV_DONTNEED and fault each back with a write. */
int ks_pagefault(long n)
{
	long psz = sysconf(_SC_PAGESIZE);
	size_t len = (size_t)PF_PAGES * (size_t)psz;
	char *p = anon(len);
	if (!p)
		return ks_fail_errno("mmap");
	long f0 = minflt();
	for (long i = 0; i < n; i++) {
		if (madvise(p, len, MADV_DONTNEED))
			return ks_fail_errno("madvise(MADV_DONTNEED) (iteration %ld)", i);
		for (long k = 0; k < PF_PAGES; k++) {
			volatile char *q = p + k * psz;
			if (*q)	/* MADV_DONTNEED on private anonymous memory: zero-fill again */
				return ks_fail("iteration %ld: page %ld not zero after MADV_DONTNEED",
					       i, k);
			*q = 1;
		}
	}
	long faults = minflt() - f0;
	munmap(p, len);
	/* the read after DONTNEED maps the zero page, the write then faults again (2 per page),
	 * unless the architecture maps a fresh page on the read already (>= 1 per page) */
	if (faults < n * PF_PAGES)
		return ks_fail("%ld minor faults for %ld dropped pages", faults, n * PF_PAGES);
	return 0;
}
