/* SPDX-License-Identifier: MIT */
/*
 * Region markers: count named regions of user code.
 *
 *   #include <hpm/region.h>
 *   HPM_REGION_BEGIN("solve");  ...  HPM_REGION_END("solve");
 *
 * Events come from HPM_REGION_EVENTS (default "task-clock,page-faults"),
 * results are aggregated per (region, thread-agnostic) and written as JSON at
 * exit to HPM_REGION_OUT (default "hpm-regions.json"). Regions may nest; a
 * region counts everything between its begin and end on the calling thread.
 * Compile with -DHPM_REGIONS_DISABLE and the markers vanish (no call, no
 * link dependency).
 */
#ifndef HPM_REGION_H
#define HPM_REGION_H

#ifdef __cplusplus
extern "C" {
#endif

int hpm_region__begin(const char *name);
int hpm_region__end(const char *name);
/* Write the JSON now (also done at exit); returns -errno on failure. */
int hpm_region__flush(const char *path);

#ifdef __cplusplus
}
#endif

#ifdef HPM_REGIONS_DISABLE
#define HPM_REGION_BEGIN(name) ((void)0)
#define HPM_REGION_END(name) ((void)0)
#else
#define HPM_REGION_BEGIN(name) ((void)hpm_region__begin(name))
#define HPM_REGION_END(name) ((void)hpm_region__end(name))
#endif

#endif
