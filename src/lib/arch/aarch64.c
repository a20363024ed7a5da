/* SPDX-License-Identifier: MIT */
/*
 * arm64: PMU registers are readable at EL0 only when the kernel sets
 * PMUSERENR_EL0 for this task, which Linux does (>= 5.17) for self-monitoring
 * events when kernel.perf_user_access=1. Index 31 is the cycle counter;
 * others are selected through PMSELR_EL0 and read with PMXEVCNTR_EL0.
 */
#include <stdlib.h>
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

static int user_access_sysctl(void)
{
	char buf[16];
	return read_small_file("/proc/sys/kernel/perf_user_access", buf, sizeof(buf)) > 0 ? atoi(buf)
											     : -1;
}

const char *arch_user_access_hint(void)
{
	switch (user_access_sysctl()) {
	case -1:
		return "this kernel has no kernel.perf_user_access (Linux < 5.17)";
	case 0:
		return "kernel.perf_user_access is 0 (an administrator may set it to 1 with "
		       "'sysctl kernel.perf_user_access=1')";
	default:
		return "kernel.perf_user_access is 1 but the kernel did not grant this event "
		       "(64-bit chained counter, or not an armv8 PMU event)";
	}
}

void arch_prepare_self_attr(struct perf_event_attr *attr)
{
	/* the armv8 PMU's "rdpmc" format bit (config1:1); asking while the
	 * sysctl is 0 gains nothing, so only then */
	if (user_access_sysctl() == 1)
		attr->config1 |= 2;
}

/* ---- cycle counter (cycles.c) ----------------------------------------- */
#include <stdio.h>

const char *arch_cc_timestamp_name(void)
{
	return "cntvct_el0";
}

/* isb on both sides: the generic timer read is not ordered with respect to
 * surrounding instructions otherwise. */
uint64_t arch_cc_timestamp(void)
{
	uint64_t v;
	__asm__ __volatile__("isb\n\tmrs %0, cntvct_el0\n\tisb" : "=r"(v)::"memory");
	return v;
}

/* cntfrq_el0: the generic timer's frequency, set by firmware, readable at EL0. */
double arch_cc_timestamp_hz(void)
{
	uint64_t f;
	__asm__ __volatile__("mrs %0, cntfrq_el0" : "=r"(f));
	return (double)f;
}

void arch_cc_fence(void)
{
	__asm__ __volatile__("isb" ::: "memory");
}

const char *arch_cc_direct_name(void)
{
	return "pmccntr_el0";
}

uint64_t arch_cc_direct(void)
{
	uint64_t v;
	__asm__ __volatile__("isb\n\tmrs %0, pmccntr_el0" : "=r"(v)::"memory");
	return v;
}

/* EL0 access depends on PMUSERENR_EL0, which only the kernel (or a module)
 * sets; nothing readable tells us, so always probe. */
int arch_cc_direct_allowed(char *why, size_t len)
{
	snprintf(why, len,
		 "pmccntr_el0 at EL0 needs PMUSERENR_EL0.EN/CR set for every task, which Linux "
		 "does not do (kernel.perf_user_access=1 grants it only to tasks with a perf "
		 "mmap: pmu-mmap); a kernel module that sets it is the only way");
	return 1;
}

const char *arch_cc_mmap_hint(void)
{
	return arch_user_access_hint();
}
