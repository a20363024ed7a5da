/* SPDX-License-Identifier: MIT */
/* x86-64: rdpmc reads the counter the kernel names in the user page. */
#include "../internal.h"

uint64_t arch_read_pmc(unsigned idx)
{
	uint32_t lo, hi;
	__asm__ __volatile__("rdpmc" : "=a"(lo), "=d"(hi) : "c"(idx));
	return (uint64_t)hi << 32 | lo;
}

bool arch_has_user_pmc(void)
{
	return true;
}

bool arch_read_timestamp(uint64_t *tsc)
{
	uint32_t lo, hi;
	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	*tsc = (uint64_t)hi << 32 | lo;
	return true;
}

const char *arch_user_access_hint(void)
{
	return "/sys/bus/event_source/devices/cpu/rdpmc is 0 (1 allows rdpmc for "
	       "self-monitoring events; an administrator may set it)";
}

void arch_prepare_self_attr(struct perf_event_attr *attr)
{
	(void)attr;
}
