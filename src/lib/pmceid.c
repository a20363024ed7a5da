/* SPDX-License-Identifier: MIT */
/*
 * Which Arm common events does this core implement? An Armv8/Armv9 PMU says so in
 * PMCEID0/1_EL0 (one bit per common event 0x00-0x3f), and Linux publishes the implemented
 * ones it names in the events folder of each armv8_ and armv9_ PMU under
 * /sys/bus/event_source/devices (armv8pmu_event_attr_is_visible), except CHAIN (0x1e,
 * hidden since 2018) and SW_INCR (0x00, hidden since late 2023, also in 6.1-stable):
 * sysfs is silent on those two, which says nothing about them. The kernel refuses a
 * generic perf event the core lacks, but opens a raw number it lacks, and that counts 0
 * for ever: QEMU's CPUs implement cycles, instructions and the stall events only, yet the
 * architectural table maps branch and cache presets to raw numbers. So the live PMU, when
 * sysfs shows it, decides for the common events of the CPU's own table.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "internal.h"

#define PMU_DIR "/sys/bus/event_source/devices"

#define SW_INCR 0x00
#define CHAIN 0x1e

/* The common events whose absence from sysfs means the core lacks them: not SW_INCR and
 * CHAIN (never shown), and not 0x31-0x3f (Armv8.1-8.4 events) on kernels before 5.10,
 * which do not name them. */
static uint64_t codes_sysfs_would_show(void)
{
	struct utsname u;
	int major = 0, minor = 0;
	uint64_t all = ~0ull;
	if (uname(&u) == 0)
		sscanf(u.release, "%d.%d", &major, &minor);
	if (!(major > 5 || (major == 5 && minor >= 10)))
		all = (1ull << 0x31) - 1;
	return all & ~(1ull << SW_INCR) & ~(1ull << CHAIN);
}

static void read_pmu_events(const char *pmu, uint64_t *seen, bool *any)
{
	char rel[300], path[600];
	snprintf(rel, sizeof(rel), PMU_DIR "/%s/events", pmu);
	DIR *d = opendir(sysroot_path(rel, path, sizeof(path)));
	if (!d)
		return;
	for (struct dirent *de; (de = readdir(d));) {
		char file[600], text[64];
		unsigned code;
		if (de->d_name[0] == '.')
			continue;
		snprintf(file, sizeof(file), "%s/%s", rel, de->d_name);
		if (read_small_file(file, text, sizeof(text)) < 0 ||
		    sscanf(text, "event=%x", &code) != 1)
			continue;
		*any = true;
		if (code < 64)
			*seen |= 1ull << code;
	}
	closedir(d);
}

/* Load once: state 1 with the union over the core PMUs (big.LITTLE has one per cluster),
 * or state -1 when no Arm core PMU shows an events folder (not Arm, or no sysfs). */
static void load(struct hpm_ctx *ctx)
{
	char path[512];
	ctx->pmceid_state = -1;
	DIR *d = opendir(sysroot_path(PMU_DIR, path, sizeof(path)));
	if (!d)
		return;
	uint64_t seen = 0;
	bool any = false;
	for (struct dirent *de; (de = readdir(d));)
		if (!strncmp(de->d_name, "armv8_", 6) || !strncmp(de->d_name, "armv9_", 6))
			read_pmu_events(de->d_name, &seen, &any);
	closedir(d);
	if (any) {
		ctx->pmceid = seen;
		ctx->pmceid_shown = codes_sysfs_would_show();
		ctx->pmceid_state = 1;
	}
}

bool ctx_pmu_lacks_common_event(struct hpm_ctx *ctx, const struct evtab *t, uint64_t code)
{
	if (code >= 64 || !t || !t->isa || strcmp(t->isa, "aarch64") ||
	    t != ctx_active_table(ctx))
		return false;
	if (!ctx->pmceid_state)
		load(ctx);
	return ctx->pmceid_state > 0 && (ctx->pmceid_shown >> code & 1) &&
	       !(ctx->pmceid >> code & 1);
}
