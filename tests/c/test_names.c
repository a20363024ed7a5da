/* SPDX-License-Identifier: MIT */
/* Name resolution: generic, cache, raw, modifiers, pmu::EVENT, PAPI aliases,
 * suggestions for typos. */
#include <errno.h>
#include <stdlib.h>
#include "check.h"
#include "internal.h"

static struct hpm_ctx *ctx;

static int res(const char *name, struct resolved *r)
{
	if (!ctx)
		hpm_ctx__new(&ctx);
	return names_resolve(ctx, name, r);
}

TEST(generic_names)
{
	struct resolved r;
	CHECK_EQ_INT(res("cycles", &r), 0);
	CHECK_EQ_INT(r.attr.type, PERF_TYPE_HARDWARE);
	CHECK_EQ_INT(r.attr.config, PERF_COUNT_HW_CPU_CYCLES);
	CHECK(r.is_hw);
	CHECK_EQ_INT(res("Task-Clock", &r), 0);
	CHECK_EQ_INT(r.attr.type, PERF_TYPE_SOFTWARE);
	CHECK_EQ_INT(r.attr.config, PERF_COUNT_SW_TASK_CLOCK);
	CHECK(!r.is_hw);
	CHECK_EQ_INT(r.attr.exclude_kernel, 0);
}

TEST(cache_names)
{
	struct resolved r;
	CHECK_EQ_INT(res("L1-dcache-load-misses", &r), 0);
	CHECK_EQ_INT(r.attr.type, PERF_TYPE_HW_CACHE);
	CHECK_EQ_INT(r.attr.config, 0x10000);
	CHECK_EQ_INT(res("LLC-store-misses", &r), 0);
	CHECK_EQ_INT(r.attr.config, 2 | (1 << 8) | (1 << 16));
	CHECK_EQ_INT(res("dTLB-prefetches", &r), 0);
	CHECK_EQ_INT(r.attr.config, 3 | (2 << 8));
	CHECK(res("L1-dcache-frobs", &r) < 0);
}

TEST(raw_and_modifiers)
{
	struct resolved r;
	CHECK_EQ_INT(res("r1a2b", &r), 0);
	CHECK_EQ_INT(r.attr.type, PERF_TYPE_RAW);
	CHECK_EQ_INT(r.attr.config, 0x1a2b);
	CHECK_EQ_INT(res("instructions:u", &r), 0);
	CHECK_EQ_INT(r.attr.exclude_user, 0);
	CHECK_EQ_INT(r.attr.exclude_kernel, 1);
	CHECK_EQ_INT(r.attr.exclude_hv, 1);
	CHECK_EQ_STR(r.canon, "instructions:u");
	CHECK_EQ_INT(res("cycles:k", &r), 0);
	CHECK_EQ_INT(r.attr.exclude_user, 1);
	CHECK_EQ_INT(r.attr.exclude_kernel, 0);
	CHECK_EQ_INT(res("cycles:uk", &r), 0);
	CHECK_EQ_INT(r.attr.exclude_user, 0);
	CHECK_EQ_INT(r.attr.exclude_kernel, 0);
	CHECK_EQ_INT(res("cycles:z", &r), -EINVAL);
	CHECK_CONTAINS(hpm_ctx__last_error(ctx), "bad modifier ':z'");
	CHECK_EQ_INT(res("r12:u", &r), 0);
	CHECK_EQ_INT(r.attr.config, 0x12);
	CHECK_EQ_INT(r.attr.exclude_kernel, 1);
}

TEST(papi_presets_follow_the_pmu)
{
	struct resolved r;
	struct hpm_ctx *c;
	test_tables_only("sifive_u74");
	hpm_ctx__new(&c);
	CHECK_EQ_INT(names_resolve(c, "PAPI_L1_DCM", &r), 0);
	CHECK_EQ_INT(r.attr.type, PERF_TYPE_RAW);
	CHECK_EQ_INT(r.attr.config, 0x202);
	CHECK_EQ_INT(names_resolve(c, "PAPI_TOT_CYC", &r), 0);
	CHECK_EQ_INT(r.attr.type, PERF_TYPE_HARDWARE);
	CHECK_EQ_INT(names_resolve(c, "PAPI_BR_MSP:u", &r), 0);
	CHECK_EQ_INT(r.attr.config, 0x2001);
	CHECK_EQ_INT(r.attr.exclude_kernel, 1);
	hpm_ctx__delete(c);
	test_tables_only("neoverse_n1");
	hpm_ctx__new(&c);
	CHECK_EQ_INT(names_resolve(c, "PAPI_L1_DCM", &r), 0);
	CHECK_EQ_INT(r.attr.config, 0x3); /* L1D_CACHE_REFILL */
	CHECK_EQ_INT(names_resolve(c, "SAMPLE_POP", &r), 0);
	CHECK_EQ_INT(r.attr.config, 0x4000);
	CHECK_EQ_INT(names_resolve(c, "PAPI_TOT_INS", &r), 0);
	CHECK_EQ_INT(r.attr.config, 0x8); /* INST_RETIRED */
	hpm_ctx__delete(c);
	test_tables_only("intel_arch");
	hpm_ctx__new(&c);
	CHECK_EQ_INT(names_resolve(c, "PAPI_BR_MSP", &r), 0);
	CHECK(r.attr.type == PERF_TYPE_RAW ? r.attr.config == 0x00c5
					   : r.attr.config == PERF_COUNT_HW_BRANCH_MISSES);
	hpm_ctx__delete(c);
	test_tables_only(NULL);
}

TEST(native_names_belong_to_their_pmu)
{
	struct resolved r;
	struct hpm_ctx *c;
	test_tables_only("neoverse_n1");
	hpm_ctx__new(&c);
	/* a U74 event on an N1: refused, and the message names the owner */
	CHECK_EQ_INT(names_resolve(c, "INT_LOAD_RETIRED", &r), -ENOENT);
	CHECK_CONTAINS(hpm_ctx__last_error(c), "belongs to table 'sifive_u74'");
	CHECK_EQ_INT(names_resolve(c, "sifive_u74::INT_LOAD_RETIRED", &r), -ENODEV);
	CHECK_CONTAINS(hpm_ctx__last_error(c), "is for PMU 'sifive_u74'");
	CHECK_EQ_INT(names_resolve(c, "neoverse_n1::STALL_BACKEND", &r), 0);
	CHECK_EQ_INT(r.attr.config, 0x24);
	CHECK_EQ_INT(names_resolve(c, "nosuch::X", &r), -ENOENT);
	CHECK_CONTAINS(hpm_ctx__last_error(c), "no event table for PMU 'nosuch'");
	hpm_ctx__delete(c);
	test_tables_only(NULL);
}

TEST(unknown_names_get_suggestions)
{
	struct resolved r;
	CHECK_EQ_INT(res("instructons", &r), -ENOENT);
	CHECK_CONTAINS(hpm_ctx__last_error(ctx), "unknown event 'instructons'; did you mean: instructions");
	CHECK_EQ_INT(res("page-fault", &r), -ENOENT);
	CHECK_CONTAINS(hpm_ctx__last_error(ctx), "page-faults");
	CHECK_EQ_INT(res("zzzzzzzzzzzzzzzz", &r), -ENOENT);
	CHECK_CONTAINS(hpm_ctx__last_error(ctx), "hpm list shows");
	CHECK_EQ_INT(res("", &r), -EINVAL);
}
