/* SPDX-License-Identifier: MIT */
/* perf's event grammar in libhpm: pmu/term=value/ against a machine's sysfs
 * (HPM_SYSROOT), tracepoints against its tracefs, modifiers, list splitting.
 * The sysfs format lines are the ones Linux publishes for these PMUs (x86
 * "cpu": event 0-7, umask 8-15, edge 18, inv 23, cmask 24-31; arm64
 * "armv8_pmuv3_0": event 0-15, long config1:0). */
#include <errno.h>
#include <stdlib.h>
#include "check.h"
#include "internal.h"

static char root[64];

static void put(const char *rel, const char *text)
{
	test_put(root, rel, text);
}

static struct hpm_ctx *machine(bool tracefs)
{
	snprintf(root, sizeof(root), "/tmp/hpmgrammar.XXXXXX");
	if (!mkdtemp(root))
		return NULL;
	put("/isa", "x86_64");
	put("/proc/cpuinfo", "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\n");
	put("/sys/bus/event_source/devices/cpu/type", "4\n");
	put("/sys/bus/event_source/devices/cpu/format/event", "config:0-7\n");
	put("/sys/bus/event_source/devices/cpu/format/umask", "config:8-15\n");
	put("/sys/bus/event_source/devices/cpu/format/edge", "config:18\n");
	put("/sys/bus/event_source/devices/cpu/format/inv", "config:23\n");
	put("/sys/bus/event_source/devices/cpu/format/cmask", "config:24-31\n");
	put("/sys/bus/event_source/devices/cpu/format/split", "config1:0-3,32-35\n");
	put("/sys/bus/event_source/devices/cpu/events/cycles", "event=0x3c\n");
	put("/sys/bus/event_source/devices/cpu/events/mem-loads", "event=0xcd,umask=0x1\n");
	put("/sys/bus/event_source/devices/armv8_pmuv3_0/type", "8\n");
	put("/sys/bus/event_source/devices/armv8_pmuv3_0/format/event", "config:0-15\n");
	put("/sys/bus/event_source/devices/armv8_pmuv3_0/format/long", "config1:0\n");
	put("/sys/bus/event_source/devices/software/type", "1\n");
	if (tracefs) {
		put("/sys/kernel/tracing/events/header_page", "x\n");
		put("/sys/kernel/tracing/events/sched/sched_switch/id", "316\n");
		put("/sys/kernel/tracing/events/sched/sched_wakeup/id", "318\n");
		put("/sys/kernel/tracing/events/sched/sched_waking/id", "319\n");
		put("/sys/kernel/tracing/events/sched/enable", "0\n");
		put("/sys/kernel/tracing/events/irq/irq_handler_entry/id", "120\n");
	}
	return test_sysroot_ctx(root);
}

static void done(struct hpm_ctx *ctx)
{
	test_sysroot_done(ctx, root);
}

TEST(pmu_terms_fill_the_published_bit_ranges)
{
	struct hpm_ctx *ctx = machine(false);
	struct resolved r;
	CHECK_EQ_INT(names_resolve(ctx, "cpu/event=0x3c,umask=0x0/", &r), 0);
	CHECK_EQ_INT(r.attr.type, 4);
	CHECK_EQ_INT(r.attr.config, 0x3c);
	CHECK_EQ_STR(r.canon, "cpu/event=0x3c,umask=0x0/");
	CHECK_EQ_INT(names_resolve(ctx, "cpu/event=0xc0,umask=0x1,edge,inv,cmask=2/", &r), 0);
	CHECK_EQ_INT(r.attr.config, 0xc0 | 0x1 << 8 | 1 << 18 | 1 << 23 | 2ULL << 24);
	/* a value split over two ranges: low 4 bits to 0-3, the next 4 to 32-35 */
	CHECK_EQ_INT(names_resolve(ctx, "cpu/split=0xab/", &r), 0);
	CHECK_EQ_INT(r.attr.config1, 0xbULL | 0xaULL << 32);
	CHECK_EQ_INT(names_resolve(ctx, "armv8_pmuv3_0/event=0x11/", &r), 0);
	CHECK_EQ_INT(r.attr.type, 8);
	CHECK_EQ_INT(r.attr.config, 0x11);
	CHECK_EQ_INT(names_resolve(ctx, "armv8_pmuv3_0/event=0x11,long/", &r), 0);
	CHECK_EQ_INT(r.attr.config1, 1);
	/* the kernel's aliases, built-in terms, name=, modifiers after the slash */
	CHECK_EQ_INT(names_resolve(ctx, "cpu/cycles/", &r), 0);
	CHECK_EQ_INT(r.attr.config, 0x3c);
	CHECK_EQ_INT(names_resolve(ctx, "cpu/mem-loads,cmask=3/", &r), 0);
	CHECK_EQ_INT(r.attr.config, 0xcd | 1 << 8 | 3ULL << 24);
	CHECK_EQ_INT(names_resolve(ctx, "cpu/config=0x1234,config1=5,period=1000,name=mine/", &r), 0);
	CHECK_EQ_INT(r.attr.config, 0x1234);
	CHECK_EQ_INT(r.attr.config1, 5);
	CHECK_EQ_INT(r.attr.sample_period, 1000);
	CHECK_EQ_STR(r.canon, "mine");
	CHECK_EQ_INT(names_resolve(ctx, "cpu/event=0x3c/u", &r), 0);
	CHECK_EQ_INT(r.attr.exclude_kernel, 1);
	CHECK_EQ_STR(r.canon, "cpu/event=0x3c/u");
	CHECK_EQ_INT(names_resolve(ctx, "cpu/event=0x3c,name=c/:k", &r), 0);
	CHECK_EQ_INT(r.attr.exclude_user, 1);
	CHECK_EQ_STR(r.canon, "c:k");
	CHECK_EQ_INT(names_resolve(ctx, "software/config=1/", &r), 0);
	CHECK_EQ_INT(r.attr.type, 1);
	CHECK(!r.is_hw);
	done(ctx);
}

TEST(pmu_terms_errors_say_what_is_valid)
{
	struct hpm_ctx *ctx = machine(false);
	struct resolved r;
	CHECK_EQ_INT(names_resolve(ctx, "cpu/umask=0x100/", &r), -ERANGE);
	CHECK_CONTAINS(hpm_ctx__last_error(ctx), "does not fit term 'umask' (8 bits");
	CHECK_EQ_INT(names_resolve(ctx, "cpu/evnt=1/", &r), -EINVAL);
	CHECK_CONTAINS(hpm_ctx__last_error(ctx), "unknown term 'evnt' for PMU 'cpu'");
	CHECK_CONTAINS(hpm_ctx__last_error(ctx), "umask");
	CHECK_EQ_INT(names_resolve(ctx, "cpu/event=zz/", &r), -EINVAL);
	CHECK_CONTAINS(hpm_ctx__last_error(ctx), "needs a number");
	CHECK_EQ_INT(names_resolve(ctx, "nopmu/event=1/", &r), -ENODEV);
	CHECK_CONTAINS(hpm_ctx__last_error(ctx),
		       "no PMU 'nopmu' on this machine for 'nopmu/event=1/' (PMUs here: "
		       "armv8_pmuv3_0, cpu, software)");
	CHECK_EQ_INT(names_resolve(ctx, "cpu/event=1/x", &r), -EINVAL);
	CHECK_CONTAINS(hpm_ctx__last_error(ctx), "bad modifier");
	done(ctx);
}

TEST(perf_modifiers)
{
	struct hpm_ctx *ctx;
	hpm_ctx__new(&ctx);
	struct resolved r;
	CHECK_EQ_INT(names_resolve(ctx, "cycles:pp", &r), 0);
	CHECK_EQ_INT(r.attr.precise_ip, 2);
	CHECK_EQ_INT(r.attr.exclude_kernel, 0);
	CHECK_EQ_INT(names_resolve(ctx, "cycles:uppp", &r), 0);
	CHECK_EQ_INT(r.attr.precise_ip, 3);
	CHECK_EQ_INT(r.attr.exclude_kernel, 1);
	CHECK_EQ_INT(names_resolve(ctx, "cycles:pppp", &r), -EINVAL);
	CHECK_EQ_INT(names_resolve(ctx, "cycles:P", &r), 0);
	CHECK(r.precise_max);
	CHECK_EQ_INT(r.attr.precise_ip, 3);
	CHECK_EQ_INT(names_resolve(ctx, "task-clock:G", &r), 0);
	CHECK_EQ_INT(r.attr.exclude_host, 1);
	CHECK_EQ_INT(r.attr.exclude_guest, 0);
	CHECK_EQ_INT(names_resolve(ctx, "task-clock:H", &r), 0);
	CHECK_EQ_INT(r.attr.exclude_guest, 1);
	CHECK_EQ_INT(names_resolve(ctx, "task-clock:GH", &r), 0);
	CHECK_EQ_INT(r.attr.exclude_guest + r.attr.exclude_host, 0);
	CHECK_EQ_INT(names_resolve(ctx, "task-clock:IDS", &r), 0);
	CHECK_EQ_INT(r.attr.exclude_idle, 1);
	CHECK_EQ_INT(r.attr.pinned, 1);
	CHECK(r.sample_read);
	CHECK_EQ_STR(r.canon, "task-clock:IDS");
	CHECK_EQ_INT(names_resolve(ctx, "task-clock:q", &r), -EINVAL);
	CHECK_CONTAINS(hpm_ctx__last_error(ctx), "p/pp/ppp precise");
	hpm_ctx__delete(ctx);
}

TEST(tracepoints_from_tracefs)
{
	struct hpm_ctx *ctx = machine(true);
	struct resolved r;
	CHECK_EQ_INT(names_resolve(ctx, "sched:sched_switch", &r), 0);
	CHECK_EQ_INT(r.attr.type, PERF_TYPE_TRACEPOINT);
	CHECK_EQ_INT(r.attr.config, 316);
	CHECK_EQ_STR(r.canon, "sched:sched_switch");
	CHECK(!r.is_hw);
	CHECK_EQ_INT(names_resolve(ctx, "sched:sched_switch:u", &r), 0);
	CHECK_EQ_INT(r.attr.exclude_kernel, 1);
	CHECK_EQ_STR(r.canon, "sched:sched_switch:u");
	CHECK_EQ_INT(names_resolve(ctx, "sched:sched_swich", &r), -ENOENT);
	CHECK_EQ_STR(hpm_ctx__last_error(ctx),
		     "unknown tracepoint 'sched:sched_swich'; did you mean: sched:sched_switch? "
		     "(hpm list tracepoint)");
	CHECK_EQ_INT(names_resolve(ctx, "schd:sched_switch", &r), -ENOENT);
	CHECK_CONTAINS(hpm_ctx__last_error(ctx), "unknown tracepoint subsystem 'schd'");
	/* event names with modifiers are still events */
	CHECK_EQ_INT(names_resolve(ctx, "task-clock:u", &r), 0);
	CHECK_EQ_INT(r.attr.type, PERF_TYPE_SOFTWARE);
	done(ctx);
	ctx = machine(false);
	CHECK_EQ_INT(names_resolve(ctx, "sched:sched_switch", &r), -ENOENT);
	CHECK_CONTAINS(hpm_ctx__last_error(ctx), "tracefs is not mounted");
	done(ctx);
}

struct seen {
	char names[16][128];
	unsigned flags[16];
	int n;
};

static int note(const char *name, unsigned flags, void *arg)
{
	struct seen *s = arg;
	if (s->n < 16) {
		snprintf(s->names[s->n], 128, "%s", name);
		s->flags[s->n++] = flags;
	}
	return 0;
}

TEST(event_lists_split_like_perf)
{
	struct hpm_ctx *ctx = machine(true);
	struct seen s = { .n = 0 };
	CHECK_EQ_INT(hpm_ctx__parse_list(ctx, "{cycles,instructions:k}:u,cpu/event=1,umask=2/,"
					 "sched:sched_wak*,cs",
					 note, &s),
		     6);
	CHECK_EQ_STR(s.names[0], "cycles:u");
	CHECK_EQ_INT(s.flags[0], HPM_LIST_GROUP_START | HPM_LIST_IN_GROUP);
	CHECK_EQ_STR(s.names[1], "instructions:ku");
	CHECK_EQ_INT(s.flags[1], HPM_LIST_IN_GROUP | HPM_LIST_GROUP_END);
	CHECK_EQ_STR(s.names[2], "cpu/event=1,umask=2/");
	CHECK_EQ_INT(s.flags[2], 0);
	/* a glob: every match, in name order */
	CHECK_EQ_STR(s.names[3], "sched:sched_wakeup");
	CHECK_EQ_STR(s.names[4], "sched:sched_waking");
	CHECK_EQ_STR(s.names[5], "cs");
	s.n = 0;
	CHECK_EQ_INT(hpm_ctx__parse_list(ctx, "{task-clock}", note, &s), 1);
	CHECK_EQ_INT(s.flags[0], HPM_LIST_GROUP_START | HPM_LIST_IN_GROUP | HPM_LIST_GROUP_END);
	CHECK_EQ_INT(hpm_ctx__parse_list(ctx, "sched:nothing*", note, &s), -ENOENT);
	CHECK_CONTAINS(hpm_ctx__last_error(ctx), "no tracepoint matches 'sched:nothing*'");
	CHECK_EQ_INT(hpm_ctx__parse_list(ctx, "cpu/event=1", note, &s), -EINVAL);
	CHECK_CONTAINS(hpm_ctx__last_error(ctx), "missing '/'");
	CHECK_EQ_INT(hpm_ctx__parse_list(ctx, "{a,{b}}", note, &s), -EINVAL);
	CHECK_EQ_INT(hpm_ctx__parse_list(ctx, "a,,b,", note, &s), 2);
	s.n = 0;
	CHECK_EQ_INT(hpm_ctx__parse_list(ctx, "{ a , b }:k", note, &s), 2);
	CHECK_EQ_STR(s.names[0], "a:k");
	CHECK_EQ_STR(s.names[1], "b:k");
	done(ctx);
}

static int note_event(const struct hpm_event_info *info, void *arg)
{
	struct seen *s = arg;
	if (s->n < 16)
		snprintf(s->names[s->n++], 128, "%s=%llu", info->name,
			 (unsigned long long)info->config);
	return 0;
}

TEST(tracepoint_listing)
{
	struct hpm_ctx *ctx = machine(true);
	struct seen s = { .n = 0 };
	CHECK_EQ_INT(hpm_ctx__for_each_event(ctx, "tracepoint", note_event, &s), 0);
	CHECK_EQ_INT(s.n, 4);
	CHECK_EQ_STR(s.names[0], "irq:irq_handler_entry=120");
	CHECK_EQ_STR(s.names[1], "sched:sched_switch=316");
	CHECK_EQ_STR(s.names[3], "sched:sched_waking=319");
	done(ctx);
}
