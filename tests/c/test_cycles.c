/* SPDX-License-Identifier: MIT */
/* The direct cycle counter API (include/hpm/cycles.h). */
#include <errno.h>
#include <time.h>
#include "check.h"
#include "hpm/cycles.h"

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

TEST(cycles_probe_reports_every_source)
{
	struct hpm_cc_status st[HPM_CC_NSOURCES];
	int n = hpm_cycles__probe(st, HPM_CC_NSOURCES);
	CHECK_EQ_INT(n, HPM_CC_NSOURCES - 1);
	for (int i = 0; i < n; i++) {
		CHECK_EQ_INT(st[i].source, i + 1); /* enum order, AUTO excluded */
		CHECK(st[i].name != NULL);
		/* every source says something: why not, or what it is */
		CHECK(st[i].why[0] != 0);
		if (st[i].available) {
			CHECK(st[i].hz > 0);
			CHECK(st[i].read_ns > 0);
		}
	}
	/* the clock always works */
	CHECK(st[HPM_CC_CLOCK - 1].available);
	CHECK(st[HPM_CC_CLOCK - 1].hz == 1e9);
#if defined(__x86_64__) || defined(__aarch64__) || (defined(__riscv) && __riscv_xlen == 64)
	/* rdtsc, cntvct_el0 and rdtime are readable by every process */
	CHECK(st[HPM_CC_TIMESTAMP - 1].available);
	CHECK(!st[HPM_CC_TIMESTAMP - 1].core_cycles);
#endif
#if defined(__aarch64__)
	CHECK_EQ_STR(st[HPM_CC_PMU_DIRECT - 1].name, "pmccntr_el0");
	CHECK_EQ_STR(st[HPM_CC_TIMESTAMP - 1].name, "cntvct_el0");
	/* cntfrq_el0 states the rate: not measured; where it reads 0 (qemu-user 10 leaves it
	 * unset), hpm measures the rate instead */
	{
		unsigned long frq;
		__asm__ __volatile__("mrs %0, cntfrq_el0" : "=r"(frq));
		CHECK(st[HPM_CC_TIMESTAMP - 1].hz_measured == (frq == 0));
	}
#elif defined(__riscv)
	CHECK_EQ_STR(st[HPM_CC_PMU_DIRECT - 1].name, "rdcycle");
	CHECK_EQ_STR(st[HPM_CC_TIMESTAMP - 1].name, "rdtime");
#elif defined(__x86_64__)
	CHECK_EQ_STR(st[HPM_CC_PMU_DIRECT - 1].name, "rdpmc 0x40000001");
	CHECK_EQ_STR(st[HPM_CC_TIMESTAMP - 1].name, "rdtsc");
#endif
	/* a source that is not available names a reason with a setting or a cause */
	for (int i = 0; i < n; i++)
		if (!st[i].available)
			CHECK(strlen(st[i].why) > 20);
	CHECK_EQ_INT(hpm_cycles__probe(NULL, 3), -EINVAL);
	CHECK_EQ_INT(hpm_cycles__probe(st, 0), 0);
}

TEST(cycles_auto_is_monotonic_and_converts)
{
	struct hpm_cycles *cc = NULL;
	CHECK_EQ_INT(hpm_cycles__open(&cc, HPM_CC_AUTO), 0);
	if (!cc)
		return;
	const struct hpm_cc_status *st = hpm_cycles__status(cc);
	CHECK(st->available);
	CHECK(st->source != HPM_CC_PERF_READ); /* auto never picks a syscall per read */
	uint64_t prev = hpm_cycles__read(cc), t0 = mono_ns();
	for (int i = 0; i < 1000; i++) {
		uint64_t v = hpm_cycles__read(cc);
		CHECK(v >= prev);
		prev = v;
	}
	/* 20 ms of busy work: the counter's ns agree with CLOCK_MONOTONIC within 10 % */
	uint64_t a = hpm_cycles__read(cc);
	uint64_t m0 = mono_ns();
	while (mono_ns() - m0 < 20000000)
		;
	uint64_t b = hpm_cycles__read(cc);
	double ns = hpm_cycles__to_ns(cc, b - a), mono = (double)(mono_ns() - m0);
	if (!st->core_cycles) /* core cycles follow the clock frequency, not time */
		CHECK(ns > 0.9 * mono && ns < 1.1 * mono);
	CHECK(mono_ns() > t0);
	const char *u = hpm_cycles__unit(cc);
	CHECK(!strcmp(u, "cycles") || !strcmp(u, "ticks") || !strcmp(u, "ns"));
	hpm_cycles__close(cc);
}

TEST(cycles_unavailable_source_says_why)
{
	struct hpm_cc_status st[HPM_CC_NSOURCES];
	int n = hpm_cycles__probe(st, HPM_CC_NSOURCES);
	for (int i = 0; i < n; i++) {
		struct hpm_cycles *cc = (struct hpm_cycles *)1;
		int r = hpm_cycles__open(&cc, st[i].source);
		if (st[i].available) {
			CHECK_EQ_INT(r, 0);
			hpm_cycles__close(cc);
			continue;
		}
		CHECK_EQ_INT(r, -ENOTSUP);
		CHECK(cc == NULL);
		/* "pmu-direct: <reason>" */
		CHECK_CONTAINS(hpm_cycles__error(), hpm_cc_source_name(st[i].source));
	}
	struct hpm_cycles *cc;
	CHECK_EQ_INT(hpm_cycles__open(&cc, 99), -EINVAL);
	CHECK_EQ_INT(hpm_cycles__open(NULL, HPM_CC_AUTO), -EINVAL);
	hpm_cycles__close(NULL);
	CHECK_EQ_STR(hpm_cc_source_name(HPM_CC_PMU_MMAP), "pmu-mmap");
	CHECK_EQ_STR(hpm_cc_source_name(42), "?");
}

TEST(cycles_inline_timestamps_order)
{
#if defined(__x86_64__) || defined(__aarch64__) || (defined(__riscv) && __riscv_xlen == 64)
	uint64_t a = hpm_ts_begin(), b = hpm_ts_end();
	CHECK(b >= a);
	uint64_t m0 = mono_ns();
	while (mono_ns() - m0 < 2000000)
		;
	CHECK(hpm_ts_end() > b); /* 2 ms later: every timestamp counter moved */
#endif
}
