/* SPDX-License-Identifier: MIT */
/*
 * An Arm core's PMU decides which common events its table offers (src/lib/pmceid.c), and a
 * metric group carries on past the events the kernel refuses (evset.c). The machine is
 * QEMU's aarch64 `-cpu max` as the lab guest's kernel shows it (HPM_SYSROOT): implementer
 * 0, the generic armv8_pmuv3 table, and five events in sysfs. Opens are imitated: the
 * kernel refuses perf's generic branch and cache events there, as it does in the guest.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"
#include "internal.h"

static char root[64];

#define PMUS "/sys/bus/event_source/devices/"

/* The guest kernel's answer: generic branch and cache events are ENOENT (EINVAL for
 * branch-misses, as some PMUs answer), the rest open (the fd is /dev/null: nothing here
 * reads a count). */
static bool refuse_cycles;

static int qemu_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
		     unsigned long flags)
{
	(void)pid, (void)cpu, (void)group_fd, (void)flags;
	if (attr->type == PERF_TYPE_HARDWARE && attr->config == PERF_COUNT_HW_BRANCH_MISSES)
		return -EINVAL;
	if (refuse_cycles && attr->type == PERF_TYPE_RAW && attr->config == 0x11)
		return -EINVAL; /* CPU_CYCLES, for the group test below */
	if (attr->type == PERF_TYPE_HW_CACHE ||
	    (attr->type == PERF_TYPE_HARDWARE && attr->config == PERF_COUNT_HW_BRANCH_INSTRUCTIONS))
		return -ENOENT;
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

static struct hpm_ctx *qemu_max(bool events_folder)
{
	static const struct {
		const char *name, *code;
	} ev[] = { { "cpu_cycles", "0x0011" }, { "inst_retired", "0x0008" },
		   { "stall", "0x003c" },	   { "stall_backend", "0x0024" },
		   { "stall_frontend", "0x0023" } };
	snprintf(root, sizeof(root), "/tmp/hpmpmceid.XXXXXX");
	if (!mkdtemp(root))
		return NULL;
	test_put(root, "/isa", "aarch64");
	test_put(root, "/proc/cpuinfo", "processor\t: 0\nCPU implementer\t: 0x00\nCPU part\t: 0x051\n");
	test_put(root, "/sys/devices/system/cpu/cpu0/regs/identification/midr_el1",
		 "0x00000000000f0510\n");
	test_put(root, PMUS "armv8_pmuv3/type", "8\n");
	test_put(root, PMUS "armv8_pmuv3/format/event", "config:0-15\n");
	test_put(root, PMUS "software/type", "1\n");
	for (unsigned i = 0; events_folder && i < ARRAY_SIZE(ev); i++) {
		char rel[200], text[40];
		snprintf(rel, sizeof(rel), PMUS "armv8_pmuv3/events/%s", ev[i].name);
		snprintf(text, sizeof(text), "event=%s\n", ev[i].code);
		test_put(root, rel, text);
	}
	perf_open_fn = qemu_open;
	return test_sysroot_ctx(root);
}

static void done(struct hpm_ctx *ctx)
{
	test_sysroot_done(ctx, root);
	perf_open_fn = sys_perf_event_open;
}

TEST(pmceid_drops_what_the_pmu_lacks)
{
	struct hpm_ctx *ctx = qemu_max(true);
	struct hpm_event_info i;
	CHECK(ctx != NULL);
	if (!ctx)
		return;
	CHECK(hpm_ctx__pmu(ctx) && !strcmp(hpm_ctx__pmu(ctx), "armv8_pmuv3"));
	CHECK_EQ_INT(hpm_ctx__resolve(ctx, "INST_RETIRED", &i), 0);
	CHECK_EQ_INT(i.config, 0x08);
	CHECK_EQ_INT(hpm_ctx__resolve(ctx, "PAPI_TOT_CYC", &i), 0);
	CHECK_EQ_INT(i.config, 0x11);
	CHECK_EQ_INT(hpm_ctx__resolve(ctx, "BR_RETIRED", &i), -ENOENT);
	CHECK(strstr(hpm_ctx__last_error(ctx), "BR_RETIRED (0x21)") != NULL);
	CHECK(strstr(hpm_ctx__last_error(ctx), "PMCEID") != NULL);
	CHECK_EQ_INT(hpm_ctx__resolve(ctx, "PAPI_BR_INS", &i), -ENOENT);
	CHECK_EQ_INT(hpm_ctx__resolve(ctx, "armv8_pmuv3::L1D_CACHE", &i), -ENOENT);
	/* sysfs never shows SW_INCR (0x00) or CHAIN (0x1e): its silence says nothing */
	CHECK_EQ_INT(hpm_ctx__resolve(ctx, "SW_INCR", &i), 0);
	CHECK_EQ_INT(hpm_ctx__resolve(ctx, "CHAIN", &i), 0);
	CHECK_EQ_INT(i.config, 0x1e);
	/* raw numbers stay raw: the user asked for that code */
	CHECK_EQ_INT(hpm_ctx__resolve(ctx, "r21", &i), 0);
	done(ctx);
	/* no events folder (no sysfs listing): the table decides */
	ctx = qemu_max(false);
	CHECK_EQ_INT(hpm_ctx__resolve(ctx, "BR_RETIRED", &i), 0);
	CHECK_EQ_INT(i.config, 0x21);
	done(ctx);
}

struct groups_seen {
	char pmu[8][32];
	char group[8][32];
	int n;
};

static int seen_cb(const struct hpm_metric_info *mi, void *arg)
{
	struct groups_seen *g = arg;
	if (g->n < 8) {
		snprintf(g->pmu[g->n], sizeof(g->pmu[0]), "%s", mi->pmu);
		snprintf(g->group[g->n], sizeof(g->group[0]), "%s", mi->name);
		g->n++;
	}
	return 0;
}

TEST(pmceid_metric_groups_give_way_to_generic)
{
	struct hpm_ctx *ctx = qemu_max(true);
	if (!ctx)
		return;
	struct groups_seen g = { .n = 0 };
	/* every armv8_pmuv3 mpki metric needs an event the core lacks: the generic group */
	CHECK_EQ_INT(hpm_ctx__for_each_metric(ctx, NULL, "mpki", seen_cb, &g), 0);
	CHECK(g.n > 0);
	for (int k = 0; k < g.n; k++)
		CHECK(!strcmp(g.pmu[k], "generic"));
	/* cycle_accounting needs what the core has: the table's own group */
	g.n = 0;
	CHECK_EQ_INT(hpm_ctx__for_each_metric(ctx, NULL, "cycle_accounting", seen_cb, &g), 0);
	CHECK_EQ_INT(g.n, 3);
	CHECK(!strcmp(g.pmu[0], "armv8_pmuv3"));
	/* a listing of the table names the table as written */
	g.n = 0;
	CHECK_EQ_INT(hpm_ctx__for_each_metric(ctx, "armv8_pmuv3", "mpki", seen_cb, &g), 0);
	CHECK(g.n > 0 && !strcmp(g.pmu[0], "armv8_pmuv3"));
	done(ctx);
}

TEST(metric_group_carries_on_past_refused_events)
{
	struct hpm_ctx *ctx = qemu_max(true);
	struct hpm_evset *set;
	if (!ctx)
		return;
	CHECK_EQ_INT(hpm_evset__new(ctx, &set), 0);
	/* generic miss_ratio: branch-misses / branches, cache ratios, ...: the kernel refuses
	 * every event but cache-misses and cache-references (PERF_TYPE_HARDWARE) */
	int nmet = hpm_evset__add_metric_group(set, "miss_ratio");
	CHECK(nmet >= 5);
	int nmiss = hpm_evset__nr_missing(set);
	CHECK(nmiss >= 3);
	const char *why = NULL;
	CHECK(!strcmp(hpm_evset__missing(set, 0, &why), "branch-misses"));
	CHECK(why && *why);
	CHECK(hpm_evset__missing(set, nmiss, &why) == NULL);
	CHECK_EQ_INT(hpm_evset__nr(set), 2);
	CHECK(!strcmp(hpm_evset__name(set, 0), "cache-misses"));
	CHECK(!strcmp(hpm_evset__name(set, 1), "cache-references"));
	CHECK_EQ_INT(hpm_evset__group_of(set, 0), hpm_evset__group_of(set, 1));
	struct hpm_value vals[2] = { { .raw = 5, .enabled = 10, .running = 10, .scaled = 5 },
				     { .raw = 50, .enabled = 10, .running = 10, .scaled = 50 } };
	const char *name;
	double v = 0;
	int computed = 0, refused = 0;
	for (int m = 0; m < nmet; m++) {
		int r = hpm_evset__metric(set, m, vals, &name, NULL, &v);
		if (r == 0) {
			computed++;
			CHECK(!strcmp(name, "cache_miss_ratio"));
			CHECK(v > 0.0999 && v < 0.1001);
		} else {
			refused++;
			CHECK_EQ_INT(r, -EOPNOTSUPP);
			CHECK(strstr(hpm_ctx__last_error(ctx), "which this machine cannot count"));
		}
	}
	CHECK_EQ_INT(computed, 1);
	CHECK_EQ_INT(refused, nmet - 1);
	hpm_evset__delete(set);
	done(ctx);
}

TEST(refused_event_does_not_split_its_metric_group)
{
	/* cycle_accounting: STALL_FRONTEND, CPU_CYCLES, STALL_BACKEND. The kernel answers
	 * EINVAL for CPU_CYCLES, which is also how it refuses a group it cannot schedule:
	 * libhpm tries the event alone, and when that fails too the event was the problem,
	 * so the two stall events stay in one group */
	struct hpm_ctx *ctx = qemu_max(true);
	struct hpm_evset *set;
	if (!ctx)
		return;
	refuse_cycles = true;
	CHECK_EQ_INT(hpm_evset__new(ctx, &set), 0);
	CHECK_EQ_INT(hpm_evset__add_metric_group(set, "cycle_accounting"), 3);
	CHECK_EQ_INT(hpm_evset__nr_missing(set), 1);
	CHECK(!strcmp(hpm_evset__missing(set, 0, NULL), "CPU_CYCLES"));
	CHECK_EQ_INT(hpm_evset__nr(set), 2);
	CHECK_EQ_INT(hpm_evset__nr_groups(set), 1);
	hpm_evset__delete(set);
	refuse_cycles = false;
	done(ctx);
}
