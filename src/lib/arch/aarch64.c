/* SPDX-License-Identifier: MIT */
/*
 * arm64: PMU registers are readable at EL0 only when the kernel sets
 * PMUSERENR_EL0 for this task, which Linux does (>= 5.17) for self-monitoring
 * events when kernel.perf_user_access=1. Index 31 is the cycle counter;
 * others are selected through PMSELR_EL0 and read with PMXEVCNTR_EL0.
 */
#include "../internal.h"

uint64_t arch_read_pmc(unsigned idx)
{
	uint64_t v;
	if (idx == 31) {
		__asm__ __volatile__("mrs %0, pmccntr_el0" : "=r"(v));
		return v;
	}
	__asm__ __volatile__("msr pmselr_el0, %0\n\tisb" : : "r"((uint64_t)idx) : "memory");
	__asm__ __volatile__("mrs %0, pmxevcntr_el0" : "=r"(v));
	return v;
}

bool arch_has_user_pmc(void)
{
	return true;
}

bool arch_read_timestamp(uint64_t *tsc)
{
	uint64_t v;
	__asm__ __volatile__("isb\n\tmrs %0, cntvct_el0" : "=r"(v));
	*tsc = v;
	return true;
}

const char *arch_user_access_hint(void)
{
	return "kernel.perf_user_access is 0 (an administrator may set it to 1 with "
	       "'sysctl kernel.perf_user_access=1' on Linux >= 5.17)";
}
