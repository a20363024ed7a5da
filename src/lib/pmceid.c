/* SPDX-License-Identifier: MIT */
/*
 * Which Arm common events does this core implement? An Armv8/Armv9 PMU says so in
 * PMCEID0/1_EL0 (one bit per common event 0x00-0x3f), and Linux publishes exactly the
 * implemented ones it can name under /sys/bus/event_source/devices/armv8_* and armv9_*
 * /events/ (armv8pmu_event_attr_is_visible). The kernel refuses a generic perf event the
 * core lacks, but opens a raw number it lacks, and that counts 0 for ever: QEMU's CPUs
 * implement cycles, instructions and the stall events only, yet the architectural table
 * maps branch and cache presets to raw numbers. So the live PMU, when sysfs shows it,
 * decides for the common events of the CPU's own table.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "internal.h"

#define PMU_DIR "/sys/bus/event_source/devices"

/* Codes 0x31-0x3f (Armv8.1-8.4 events) are named by Linux 5.x kernels onwards; an older
 * kernel's sysfs cannot show them, so its silence says nothing about those. */
static uint64_t codes_the_kernel_names(void)
{
	struct utsname u;
	int major = 0, minor = 0;
	if (uname(&u) == 0)
		sscanf(u.release, "%d.%d", &major, &minor);
	if (major > 5 || (major == 5 && minor >= 10))
		return ~0ull;
	return (1ull << 0x31) - 1;
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
	return ctx->pmceid_state > 0 && (codes_the_kernel_names() >> code & 1) &&
	       !(ctx->pmceid >> code & 1);
}
