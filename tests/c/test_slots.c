/* SPDX-License-Identifier: MIT */
/*
 * #slots in metric expressions: the issue slots per cycle of the core, which Linux
 * publishes as caps/slots of the core PMU (Arm: PMMIR_EL1.SLOTS, "0x%08x"). Checked on
 * an imitated Neoverse V1 (HPM_SYSROOT): its top-down level 1 from fixed counts against
 * a hand computation, and every way the width can be missing (never a guessed width).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <unistd.h>
#include "check.h"
#include "internal.h"

static char root[64];

static void put(const char *rel, const char *text)
{
	test_put(root, rel, text);
}

#define PMUS "/sys/bus/event_source/devices/"

/* The imitated V1's events "open" (this host's PMU cannot count Arm codes): metrics
 * are evaluated from the counts the test gives, never from a read. */
static int null_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
		     unsigned long flags)
{
	(void)attr, (void)pid, (void)cpu, (void)group_fd, (void)flags;
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* A Neoverse V1 r1p1 (MIDR 0x411fd401) whose core PMU is armv8_neoverse_v1; slots is
 * what its caps/slots holds, NULL for a kernel that has no caps/slots file. */
static struct hpm_ctx *v1_machine(const char *slots)
{
	snprintf(root, sizeof(root), "/tmp/hpmslots.XXXXXX");
	if (!mkdtemp(root))
		return NULL;
	put("/isa", "aarch64");
	put("/proc/cpuinfo", "processor\t: 0\nCPU implementer\t: 0x41\nCPU part\t: 0xd40\n");
	put("/sys/devices/system/cpu/cpu0/regs/identification/midr_el1", "0x00000000411fd401\n");
	put(PMUS "armv8_neoverse_v1/type", "8\n");
	put(PMUS "armv8_neoverse_v1/cpus", "0-3\n");
	put(PMUS "armv8_neoverse_v1/format/event", "config:0-15\n");
	if (slots)
		put(PMUS "armv8_neoverse_v1/caps/slots", slots);
	put(PMUS "software/type", "1\n");
	perf_open_fn = null_open;
	return test_sysroot_ctx(root);
}

static void done(struct hpm_ctx *ctx)
{
	test_sysroot_done(ctx, root);
	perf_open_fn = sys_perf_event_open;
}

/* Fixed counts of one run. STALL_SLOT = frontend + backend stalled slots, as on the
 * core, so the four level-1 shares add up to 100 when the width is the core's. */
static const struct {
	const char *name;
	double count;
} counts[] = {
	{ "CPU_CYCLES", 1000000 },	 { "STALL_SLOT", 3000000 },  { "STALL_SLOT_FRONTEND", 600000 },
	{ "STALL_SLOT_BACKEND", 2400000 }, { "OP_RETIRED", 4000000 }, { "OP_SPEC", 5000000 },
	{ "BR_MIS_PRED", 10000 },
};

/* The topdownl1 group of the machine's table, the counts filled in by event name. */
static struct hpm_evset *topdown(struct hpm_ctx *ctx, struct hpm_value *vals, int *nmet)
{
	struct hpm_evset *set;
	if (hpm_evset__new(ctx, &set))
		return NULL;
	*nmet = hpm_evset__add_metric_group(set, "topdownl1");
	int n = hpm_evset__nr(set), filled = 0;
	CHECK_EQ_INT(n, (int)ARRAY_SIZE(counts));
	for (int i = 0; i < n && i < 16; i++) {
		memset(&vals[i], 0, sizeof(vals[i]));
		for (unsigned k = 0; k < ARRAY_SIZE(counts); k++)
			if (!strcmp(hpm_evset__name(set, i), counts[k].name)) {
				vals[i].raw = (uint64_t)counts[k].count;
				vals[i].enabled = vals[i].running = 1000;
				vals[i].scaled = counts[k].count;
				filled++;
			}
	}
	CHECK_EQ_INT(filled, n);
	return set;
}

/* value of the metric called name, or the error; NAN when not in the set */
static double metric(struct hpm_evset *set, const struct hpm_value *vals, const char *want,
		     int *ret)
{
	for (int i = 0; i < hpm_evset__nr_metrics(set); i++) {
		const char *name;
		double v = NAN;
		hpm_evset__metric(set, i, vals, &name, NULL, NULL);
		if (!strcmp(name, want)) {
			*ret = hpm_evset__metric(set, i, vals, NULL, NULL, &v);
			return v;
		}
	}
	*ret = -ENOENT;
	return NAN;
}

#define NEAR(a, b) (fabs((a) - (b)) < 1e-9)

TEST(slots_metrics_use_the_core_pmus_caps_slots)
{
	struct hpm_ctx *ctx = v1_machine("0x00000008\n"); /* the kernel's spelling */
	CHECK_EQ_STR(hpm_ctx__pmu(ctx), "neoverse_v1");
	struct hpm_value vals[16];
	int nmet, r;
	struct hpm_evset *set = topdown(ctx, vals, &nmet);
	CHECK_EQ_INT(nmet, 4);
	/* by hand, slots = 8 (cycles 1e6: 8e6 slots):
	 *   backend_bound   = 100 * 2.4e6 / 8e6                       = 30
	 *   retiring        = 100 * (4e6 / 5e6) * (1 - 3e6 / 8e6)     = 100 * 0.8 * 0.625 = 50
	 * and the V1's own formulas, which write the 8 themselves:
	 *   frontend_bound  = 100 * (0.6e6 / 8e6 - 4 * 1e4 / 1e6)     = 100 * (0.075 - 0.04) = 3.5
	 *   bad_speculation = 100 * ((1 - 0.8) * (1 - 0.375) + 0.04)  = 16.5 */
	double be = metric(set, vals, "backend_bound", &r);
	CHECK(r == 0 && NEAR(be, 30.0));
	double ret = metric(set, vals, "retiring", &r);
	CHECK(r == 0 && NEAR(ret, 50.0));
	double fe = metric(set, vals, "frontend_bound", &r);
	CHECK(r == 0 && NEAR(fe, 3.5));
	double bs = metric(set, vals, "bad_speculation", &r);
	CHECK(r == 0 && NEAR(bs, 16.5));
	/* every slot is in exactly one class */
	CHECK(NEAR(be + ret + fe + bs, 100.0));
	hpm_evset__delete(set);
	done(ctx);

	/* decimal is read too; the width is the file's, not the V1's 8 */
	ctx = v1_machine("4\n");
	set = topdown(ctx, vals, &nmet);
	be = metric(set, vals, "backend_bound", &r);
	CHECK(r == 0 && NEAR(be, 60.0)); /* 100 * 2.4e6 / 4e6 */
	hpm_evset__delete(set);
	done(ctx);
}

/* caps/slots missing or 0: the #slots metrics are unavailable with the reason; the
 * group's other metrics are still computed. */
static void unavailable(const char *slots, const char *why)
{
	struct hpm_ctx *ctx = v1_machine(slots);
	struct hpm_value vals[16];
	int nmet, r;
	struct hpm_evset *set = topdown(ctx, vals, &nmet);
	CHECK_EQ_INT(nmet, 4);
	double v = metric(set, vals, "backend_bound", &r);
	CHECK_EQ_INT(r, -ENODATA);
	CHECK(isnan(v)); /* *value untouched */
	CHECK_EQ_STR(hpm_ctx__last_error(ctx), why);
	metric(set, vals, "retiring", &r);
	CHECK_EQ_INT(r, -ENODATA);
	v = metric(set, vals, "frontend_bound", &r);
	CHECK(r == 0 && NEAR(v, 3.5));
	hpm_evset__delete(set);
	done(ctx);
}

TEST(slots_metrics_without_caps_slots_are_unavailable)
{
	unavailable(NULL, "needs #slots, the core's issue width: the core PMU armv8_neoverse_v1 "
			  "has no caps/slots in sysfs");
	unavailable("0x00000000\n", "needs #slots, the core's issue width: the core PMU "
				    "armv8_neoverse_v1's caps/slots is 0: the CPU does not say its "
				    "width (PMMIR_EL1.SLOTS, read by Linux from PMUv3.4 on)");
	unavailable("eight\n", "needs #slots, the core's issue width: the core PMU "
			       "armv8_neoverse_v1's caps/slots is 'eight', not a number");
}

TEST(slots_need_one_core_pmu_width)
{
	double slots = -1;
	char why[200];
	/* big.LITTLE: which PMU counts a raw event depends on the CPU the task is on */
	struct hpm_ctx *ctx = v1_machine("0x00000008\n");
	put(PMUS "armv8_cortex_a55/cpus", "4-7\n");
	put(PMUS "armv8_cortex_a55/caps/slots", "0x00000002\n");
	CHECK_EQ_INT(core_pmu_slots(&slots, why, sizeof(why)), -ENODATA);
	CHECK_EQ_STR(why, "the core PMUs armv8_cortex_a55 (slots 2) and armv8_neoverse_v1 "
			  "(slots 8) differ");
	CHECK(slots == -1);
	/* the same width on both: that width */
	put(PMUS "armv8_cortex_a55/caps/slots", "0x00000008\n");
	CHECK_EQ_INT(core_pmu_slots(&slots, why, sizeof(why)), 0);
	CHECK(slots == 8);
	done(ctx);
	/* PMUs without a cpus file are not the cores' (perf's rule), "cpu" is */
	ctx = v1_machine(NULL);
	unlink(strcat(strcpy(why, root), PMUS "armv8_neoverse_v1/cpus"));
	put(PMUS "arm_cmn_0/caps/slots", "0x00000010\n");
	CHECK_EQ_INT(core_pmu_slots(&slots, why, sizeof(why)), -ENODATA);
	CHECK_EQ_STR(why, "sysfs lists no core PMU in /sys/bus/event_source/devices");
	put(PMUS "cpu/caps/slots", "6\n");
	CHECK_EQ_INT(core_pmu_slots(&slots, why, sizeof(why)), 0);
	CHECK(slots == 6);
	done(ctx);
}
