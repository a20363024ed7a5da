/* SPDX-License-Identifier: MIT */
/*
 * PAPI's high-level regions on libhpm's region markers: PAPI_hl_region_begin
 * and _end are hpm_region__begin/_end, so the results are libhpm's region
 * output (per-region totals as JSON at exit, docs/formats/hpm-json.md), not
 * PAPI's papi_hl_output directory.
 *
 * Events: HPM_REGION_EVENTS if set (libhpm's names, as written), else
 * PAPI_EVENTS (PAPI's variable: perf:: names translated, user space only
 * unless a name has modifiers, like PAPI's default domain), else task-clock
 * plus PAPI_TOT_INS and PAPI_TOT_CYC where they count, user space only.
 * Output file: HPM_REGION_OUT, else PAPI_OUTPUT_DIRECTORY/hpm-regions.json,
 * else ./hpm-regions.json.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hpm/region.h"
#include "papi_int.h"

static pthread_once_t setup_once = PTHREAD_ONCE_INIT;
static int setup_err;

static void setup(void)
{
	if (!(hpapi_inited & PAPI_LOW_LEVEL_INITED) &&
	    PAPI_library_init(PAPI_VER_CURRENT) != PAPI_VER_CURRENT) {
		setup_err = PAPI_ENOINIT;
		return;
	}
	hpapi_inited |= PAPI_HIGH_LEVEL_INITED;
	const char *dir = getenv("PAPI_OUTPUT_DIRECTORY");
	if (!getenv("HPM_REGION_OUT") && dir && *dir) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/hpm-regions.json", dir);
		setenv("HPM_REGION_OUT", path, 0);
	}
	if (getenv("HPM_REGION_EVENTS"))
		return;
	char list[2048] = "";
	const char *pe = getenv("PAPI_EVENTS");
	if (pe && *pe) {
		char *copy = strdup(pe), *save = NULL;
		for (char *t = copy ? strtok_r(copy, ",", &save) : NULL; t; t = strtok_r(NULL, ",", &save)) {
			char one[320];
			bool mods = false;
			if (hpapi_translate(t, one, sizeof(one), &mods) != PAPI_OK) {
				/* libhpm names the problem when the region opens it */
				snprintf(one, sizeof(one), "%s", t);
				mods = true;
			}
			/* PAPI's default domain, user space, unless the name says otherwise */
			size_t l = strlen(list);
			snprintf(list + l, sizeof(list) - l, "%s%s%s", l ? "," : "", one, mods ? "" : ":u");
		}
		free(copy);
	} else {
		snprintf(list, sizeof(list), "task-clock:u");
		const char *hw[] = { "PAPI_TOT_INS:u", "PAPI_TOT_CYC:u" };
		for (int i = 0; i < 2; i++)
			if (hpm_ctx__probe(hpapi_ctx, hw[i]) == 0) {
				size_t l = strlen(list);
				snprintf(list + l, sizeof(list) - l, ",%s", hw[i]);
			}
	}
	setenv("HPM_REGION_EVENTS", list, 0);
}

static int region_code(int r, const char *call, const char *region)
{
	switch (r) {
	case 0:
		return PAPI_OK;
	case -ENODEV: /* libhpm printed why its region events could not be opened */
		return hpapi_err(PAPI_EMISC, call, "regions are disabled (see the line above)");
	case -EINVAL:
		return hpapi_err(PAPI_ENOTRUN, call, "'%s' was not begun on this thread", region);
	case -E2BIG:
		return hpapi_err(PAPI_ENOMEM, call, "regions nested too deep");
	default:
		return hpapi_err(PAPI_ESYS, call, "%s", strerror(-r));
	}
}

PAPI_API int PAPI_hl_region_begin(const char *region)
{
	if (!region || !*region)
		return hpapi_err(PAPI_EINVAL, "PAPI_hl_region_begin", "no region name");
	pthread_once(&setup_once, setup);
	if (setup_err)
		return hpapi_err(setup_err, "PAPI_hl_region_begin", NULL);
	return region_code(hpm_region__begin(region), "PAPI_hl_region_begin", region);
}

PAPI_API int PAPI_hl_region_end(const char *region)
{
	if (!region || !*region)
		return hpapi_err(PAPI_EINVAL, "PAPI_hl_region_end", "no region name");
	pthread_once(&setup_once, setup);
	if (setup_err)
		return hpapi_err(setup_err, "PAPI_hl_region_end", NULL);
	return region_code(hpm_region__end(region), "PAPI_hl_region_end", region);
}
