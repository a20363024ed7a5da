/* SPDX-License-Identifier: MIT */
/*
 * hpm papi-avail: the PAPI preset events and whether they count here, in the
 * columns of PAPI's papi_avail (name, code, available, derived, description).
 * Available means what libhpm-papi's PAPI_query_event means: libhpm resolves
 * the preset on this CPU (its PMU table's alias) and the kernel opens it for
 * user-space counting. libhpm-papi has no derived presets.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "hpm/hpm.h"
#include "../util/out.h"

int cmd_papi_avail(int argc, char **argv);

#define C_MSC 0
#define C_INS 0
#define C_IDL 0
#define C_BR 0
#define C_CND 0
#define C_MEM 0
#define C_CACH 0
#define C_L1 0
#define C_L2 0
#define C_L3 0
#define C_TLB 0
#define C_FP 0

static const struct {
	unsigned idx;
	const char *name, *desc;
} presets[] = {
#define PRESET(idx, name, cats, desc) { idx, #name, desc },
#include "../papi/presets.def"
#undef PRESET
};

#define PRESET_MASK 0x80000000u

static void usage(FILE *f)
{
	fprintf(f, "usage: hpm papi-avail [-a] [--json]\n"
		   "  PAPI's preset events as libhpm-papi counts them on this CPU\n"
		   "  (the columns of PAPI's papi_avail)\n"
		   "  -a, --avail   only the presets available here\n"
		   "  --json        one object per preset, with the event it counts\n");
}

int cmd_papi_avail(int argc, char **argv)
{
	bool only_avail = false, json = false;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-a") || !strcmp(argv[i], "--avail")) {
			only_avail = true;
		} else if (!strcmp(argv[i], "--json")) {
			json = true;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		} else {
			fprintf(stderr, "hpm papi-avail: unknown option '%s' (hpm papi-avail --help)\n",
				argv[i]);
			return 2;
		}
	}
	struct hpm_ctx *ctx;
	int r = hpm_ctx__new(&ctx);
	if (r < 0) {
		fprintf(stderr, "hpm papi-avail: cannot start libhpm: %s\n", strerror(-r));
		return 1;
	}
	const char *pmu = hpm_ctx__pmu(ctx);
	int n = (int)(sizeof(presets) / sizeof(presets[0])), navail = 0;
	if (json)
		printf("[");
	else
		printf("PAPI preset events through libhpm-papi; CPU: %s; PMU table: %s\n"
		       "--------------------------------------------------------------------------------\n"
		       "    Name        Code    Avail Deriv Description (Note)\n",
		       hpm_ctx__cpu_id(ctx), pmu ? pmu : "none (generic perf events only)");
	bool first = true;
	for (int i = 0; i < n; i++) {
		struct hpm_event_info info;
		char target[256] = "", probe[160];
		bool avail = false;
		if (hpm_ctx__resolve(ctx, presets[i].name, &info) == 0) {
			snprintf(target, sizeof(target), "%s%s%s",
				 strcmp(info.pmu, "generic") ? info.pmu : "",
				 strcmp(info.pmu, "generic") ? "::" : "", info.name);
			snprintf(probe, sizeof(probe), "%s:u", presets[i].name);
			avail = hpm_ctx__probe(ctx, probe) == 0;
		}
		navail += avail;
		if (only_avail && !avail)
			continue;
		unsigned code = PRESET_MASK | presets[i].idx;
		if (json) {
			printf("%s\n  {\"name\": \"%s\", \"code\": \"%#x\", \"available\": %s, "
			       "\"derived\": false, \"description\": ",
			       first ? "" : ",", presets[i].name, code, avail ? "true" : "false");
			json_string(stdout, presets[i].desc);
			printf(", \"event\": ");
			if (target[0])
				json_string(stdout, target);
			else
				printf("null");
			printf("}");
		} else {
			printf("%-13s%#x  %-5s %-4s %s\n", presets[i].name, code, avail ? "Yes" : "No", "No",
			       presets[i].desc);
		}
		first = false;
	}
	if (json)
		printf("%s]\n", first ? "" : "\n");
	else
		printf("--------------------------------------------------------------------------------\n"
		       "Of %d possible events, %d are available, of which 0 are derived.\n",
		       n, navail);
	hpm_ctx__delete(ctx);
	return 0;
}
