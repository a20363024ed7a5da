/* SPDX-License-Identifier: MIT */
/*
 * PAPI's clocks. Real time is CLOCK_MONOTONIC; virtual time is the calling
 * thread's CPU time (CLOCK_THREAD_CPUTIME_ID), as PAPI's perf_event
 * component reports it. "Cycles" are those times at the CPU's nominal clock
 * (PAPI_hw_info_t.cpu_max_mhz); a CPU that reports no frequency (QEMU's
 * virt boards) counts one cycle per nanosecond. These are not PMU cycles:
 * for those, count PAPI_TOT_CYC.
 */
#include <time.h>
#include "papi_int.h"

static long long ns_of(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long long cycles_of(long long ns)
{
	static int mhz = -1;
	if (mhz < 0) {
		const PAPI_hw_info_t *hw = PAPI_get_hardware_info();
		if (!hw) /* before init: do not cache */
			return ns;
		mhz = hw->cpu_max_mhz > 0 ? hw->cpu_max_mhz : 1000;
	}
	return mhz == 1000 ? ns : (long long)((double)ns * mhz / 1000.0);
}

PAPI_API long long PAPI_get_real_nsec(void)
{
	return ns_of(CLOCK_MONOTONIC);
}

PAPI_API long long PAPI_get_real_usec(void)
{
	return ns_of(CLOCK_MONOTONIC) / 1000;
}

PAPI_API long long PAPI_get_real_cyc(void)
{
	return cycles_of(ns_of(CLOCK_MONOTONIC));
}

PAPI_API long long PAPI_get_virt_nsec(void)
{
	return ns_of(CLOCK_THREAD_CPUTIME_ID);
}

PAPI_API long long PAPI_get_virt_usec(void)
{
	return ns_of(CLOCK_THREAD_CPUTIME_ID) / 1000;
}

PAPI_API long long PAPI_get_virt_cyc(void)
{
	return cycles_of(ns_of(CLOCK_THREAD_CPUTIME_ID));
}
