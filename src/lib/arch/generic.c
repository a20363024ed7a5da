/* SPDX-License-Identifier: MIT */
/* Other ISAs: no user-space counter reads; everything goes through read(2). */
#include "../internal.h"

uint64_t arch_read_pmc(unsigned idx)
{
	(void)idx;
	return 0;
}

bool arch_has_user_pmc(void)
{
	return false;
}

bool arch_read_timestamp(uint64_t *tsc)
{
	*tsc = 0;
	return false;
}

const char *arch_user_access_hint(void)
{
	return "not implemented for this ISA";
}

void arch_prepare_self_attr(struct perf_event_attr *attr)
{
	(void)attr;
}

/* ---- cycle counter (cycles.c) ----------------------------------------- */
#include <stdio.h>

const char *arch_cc_timestamp_name(void)
{
	return NULL; /* no timestamp instruction known for this ISA */
}

uint64_t arch_cc_timestamp(void)
{
	return 0;
}

double arch_cc_timestamp_hz(void)
{
	return 0;
}

void arch_cc_fence(void)
{
	__asm__ __volatile__("" ::: "memory");
}

const char *arch_cc_direct_name(void)
{
	return NULL;
}

uint64_t arch_cc_direct(void)
{
	return 0;
}

int arch_cc_direct_allowed(char *why, size_t len)
{
	snprintf(why, len, "no direct cycle counter instruction is built for this ISA");
	return 0;
}

const char *arch_cc_mmap_hint(void)
{
	return arch_user_access_hint();
}
