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

/* ---- cycle counter (cycles.c) ----------------------------------------- */
#include <cpuid.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *arch_cc_timestamp_name(void)
{
	return "rdtsc";
}

/* lfence before: earlier instructions complete before the TSC is sampled
 * (rdtsc alone may execute early, out of order). */
uint64_t arch_cc_timestamp(void)
{
	uint32_t lo, hi;
	__asm__ __volatile__("lfence\n\trdtsc\n\tlfence" : "=a"(lo), "=d"(hi)::"memory");
	return (uint64_t)hi << 32 | lo;
}

/* CPUID 0x15 gives the TSC/crystal ratio and, on newer Intel parts, the
 * crystal frequency. Hypervisors and AMD mostly leave it 0: the caller then
 * measures the rate against CLOCK_MONOTONIC. */
double arch_cc_timestamp_hz(void)
{
	unsigned a, b, c, d;
	if (__get_cpuid_max(0, NULL) >= 0x15) {
		__cpuid(0x15, a, b, c, d);
		if (a && b && c)
			return (double)c * b / a;
	}
	return 0;
}

void arch_cc_fence(void)
{
	__asm__ __volatile__("lfence" ::: "memory");
}

const char *arch_cc_direct_name(void)
{
	return "rdpmc 0x40000001";
}

/* Intel's fixed-function counter 1 (unhalted core cycles): bit 30 of ECX
 * selects the fixed counters. #GP (SIGSEGV) unless CR4.PCE is set for us. */
uint64_t arch_cc_direct(void)
{
	uint32_t lo, hi;
	__asm__ __volatile__("lfence\n\trdpmc" : "=a"(lo), "=d"(hi) : "c"(0x40000001u) : "memory");
	return (uint64_t)hi << 32 | lo;
}

/* 0 when we know the direct read cannot work (why says what would change
 * that), 1 when it may: the caller probes it in a child process. */
int arch_cc_direct_allowed(char *why, size_t len)
{
	unsigned a, b, c, d;
	char vendor[13] = { 0 };
	__cpuid(0, a, b, c, d);
	memcpy(vendor, &b, 4);
	memcpy(vendor + 4, &d, 4);
	memcpy(vendor + 8, &c, 4);
	if (strcmp(vendor, "GenuineIntel")) {
		snprintf(why, len,
			 "rdpmc 0x40000001 is Intel's fixed cycle counter; this CPU is %s, whose "
			 "counters are read through the perf mmap page instead (pmu-mmap)",
			 vendor);
		return 0;
	}
	char buf[16];
	if (read_small_file("/sys/bus/event_source/devices/cpu/rdpmc", buf, sizeof(buf)) <= 0) {
		snprintf(why, len,
			 "/sys/bus/event_source/devices/cpu/rdpmc does not exist: the kernel has no "
			 "core PMU driver here (a VM without a virtual PMU?)");
		return 0;
	}
	if (atoi(buf) != 2) {
		snprintf(why, len,
			 "/sys/bus/event_source/devices/cpu/rdpmc is %d; 2 lets every process run "
			 "rdpmc (on a single-user machine: echo 2 > "
			 "/sys/bus/event_source/devices/cpu/rdpmc as root)",
			 atoi(buf));
		return 0;
	}
	snprintf(why, len, "/sys/bus/event_source/devices/cpu/rdpmc is 2");
	return 1;
}

/* Why a perf "cycles" event cannot be read through its user page. */
const char *arch_cc_mmap_hint(void)
{
	char buf[16];
	if (read_small_file("/sys/bus/event_source/devices/cpu/rdpmc", buf, sizeof(buf)) <= 0)
		return "/sys/bus/event_source/devices/cpu/rdpmc does not exist: no core PMU "
		       "driver (a VM without a virtual PMU?)";
	return arch_user_access_hint();
}
