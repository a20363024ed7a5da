/* SPDX-License-Identifier: MIT */
/* hpm list: events this machine can count (marked), any PMU table, metric groups. */
#include <getopt.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "usage_error.h"

static const char list_help[] =
	"usage: hpm list [--pmu NAME] [--pmus] [--metrics] [--json] [--grep TEXT] [PATTERN]\n"
	"       hpm list tracepoint [PATTERN]\n"
	"\n"
	"Lists the generic perf events and the events of this CPU's PMU table. A '*'\n"
	"marks events that can be opened on this machine now. On an Arm core, the\n"
	"common events its PMU does not implement (PMCEID: Linux lists the others in\n"
	"/sys/bus/event_source/devices/armv8_*/events) are left out of this CPU's table,\n"
	"its presets and its metric groups.\n"
	"\n"
	"  --pmu NAME   list the table NAME (any CPU), e.g. sifive_u74, neoverse_n1\n"
	"  --pmus       list the PMU tables hpm knows and which one this CPU uses\n"
	"  --metrics    list metric groups (for 'hpm stat -M GROUP')\n"
	"  --json       one JSON array of objects: name, pmu, code (hex), type, desc,\n"
	"               alias_of, available (true/false, or null when not probed)\n"
	"  PATTERN      only names containing PATTERN (case-insensitive), e.g. 'cache'\n"
	"  --grep TEXT  only events whose name or description contains TEXT\n"
	"               (case-insensitive; metrics: name, group or formula)\n"
	"  tracepoint   the kernel's tracepoints (from tracefs), as 'subsys:name' (not\n"
	"               probed: opening each takes the kernel tens of milliseconds)\n"
	"\n"
	"examples:\n"
	"  hpm list                      what this machine can count\n"
	"  hpm list --pmu sifive_u74     the SiFive U74 events and their mhpmevent codes\n"
	"  hpm list --metrics            metric groups of this CPU\n"
	"  hpm list --json cache         cache events as JSON\n"
	"  hpm list --grep stall         events that mention stalls, in name or description\n"
	"  hpm list tracepoint sched     scheduler tracepoints (hpm stat -e sched:sched_switch)\n";

struct list_state {
	struct hpm_ctx *ctx;
	const char *pattern, *grep;
	bool json, probe;
	int n;
	const char *last_pmu;
	/* hardware events listed and marked: when none is marked, say why once */
	int hw_listed, hw_marked;
	char hw_why[512];
};

/* software, tracepoint and breakpoint events count on any kernel; the rest needs a PMU */
static bool is_hardware(uint32_t type)
{
	return type != PERF_TYPE_SOFTWARE && type != PERF_TYPE_TRACEPOINT &&
	       type != PERF_TYPE_BREAKPOINT;
}

static int print_event(const struct hpm_event_info *ev, void *arg)
{
	struct list_state *st = arg;
	if (st->pattern && !strcasestr(ev->name, st->pattern))
		return 0;
	if (st->grep && !strcasestr(ev->name, st->grep) && !(ev->desc && strcasestr(ev->desc, st->grep)))
		return 0;
	int avail = -1;
	if (st->probe) {
		avail = hpm_ctx__probe(st->ctx, ev->name) == 0;
		if (is_hardware(ev->type)) {
			st->hw_listed++;
			st->hw_marked += avail;
			if (!avail && !st->hw_why[0])
				snprintf(st->hw_why, sizeof(st->hw_why), "%s",
					 hpm_ctx__last_error(st->ctx));
		}
	}
	char code[32];
	snprintf(code, sizeof(code), "0x%llx", (unsigned long long)ev->config);
	if (st->json) {
		printf("%s\n  {\"name\": ", st->n ? "," : "");
		json_string(stdout, ev->name);
		printf(", \"pmu\": ");
		json_string(stdout, ev->pmu);
		printf(", \"code\": \"%s\", \"type\": %u, \"desc\": ", code, ev->type);
		json_string(stdout, ev->desc);
		printf(", \"alias_of\": ");
		if (ev->alias_of)
			json_string(stdout, ev->alias_of);
		else
			printf("null");
		printf(", \"available\": %s}", avail < 0 ? "null" : avail ? "true" : "false");
	} else {
		if (!st->last_pmu || strcmp(st->last_pmu, ev->pmu))
			printf("\n%s events:\n", ev->pmu);
		st->last_pmu = ev->pmu;
		printf("  %c %-34s %-20s %s\n", avail > 0 ? '*' : ' ', ev->name, code, ev->desc);
	}
	st->n++;
	return 0;
}

static int print_pmu(const char *pmu, const char *title, const char *isa, void *arg)
{
	struct list_state *st = arg;
	const char *mine = hpm_ctx__pmu(st->ctx);
	if (st->json) {
		printf("%s\n  {\"pmu\": ", st->n ? "," : "");
		json_string(stdout, pmu);
		printf(", \"isa\": ");
		json_string(stdout, isa);
		printf(", \"title\": ");
		json_string(stdout, title);
		printf(", \"this_cpu\": %s}", mine && !strcmp(mine, pmu) ? "true" : "false");
	} else {
		printf("%c %-18s %-8s %s\n", mine && !strcmp(mine, pmu) ? '*' : ' ', pmu, isa, title);
	}
	st->n++;
	return 0;
}

static int print_metric(const struct hpm_metric_info *m, void *arg)
{
	struct list_state *st = arg;
	if (st->pattern && !strcasestr(m->group, st->pattern) && !strcasestr(m->name, st->pattern))
		return 0;
	if (st->grep && !strcasestr(m->group, st->grep) && !strcasestr(m->name, st->grep) &&
	    !strcasestr(m->expr, st->grep))
		return 0;
	if (st->json) {
		printf("%s\n  {\"pmu\": ", st->n ? "," : "");
		json_string(stdout, m->pmu);
		printf(", \"group\": ");
		json_string(stdout, m->group);
		printf(", \"name\": ");
		json_string(stdout, m->name);
		printf(", \"unit\": ");
		json_string(stdout, m->unit);
		printf(", \"expr\": ");
		json_string(stdout, m->expr);
		printf("}");
	} else {
		if (!st->last_pmu || strcmp(st->last_pmu, m->group))
			printf("\n%s (%s) — %s\n", m->group, m->pmu, m->group_desc);
		st->last_pmu = m->group;
		printf("    %-32s %-6s = %s\n", m->name, m->unit, m->expr);
	}
	st->n++;
	return 0;
}

int cmd_list(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "pmu", required_argument, 0, 'P' }, { "pmus", no_argument, 0, 'L' },
		{ "metrics", no_argument, 0, 'M' },   { "json", no_argument, 0, 'j' },
		{ "grep", required_argument, 0, 'g' }, { "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 }
	};
	const char *pmu = NULL, *grep = NULL;
	bool pmus = false, metrics = false, json = false;
	int c;
	optind = 1;
	opterr = 0; /* usage_error() says it in one line */
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'P': pmu = optarg; break;
		case 'L': pmus = true; break;
		case 'M': metrics = true; break;
		case 'j': json = true; break;
		case 'g': grep = optarg; break;
		case 'h': fputs(list_help, stdout); return 0;
		default: return usage_error("list", "h", argv);
		}
	}
	struct hpm_ctx *ctx;
	if (hpm_ctx__new(&ctx))
		return 1;
	struct list_state st = { .ctx = ctx, .pattern = optind < argc ? argv[optind] : NULL,
				 .grep = grep, .json = json };
	/* perf's event class keyword: "hpm list tracepoint [PATTERN]" */
	if (st.pattern && !strcmp(st.pattern, "tracepoint") && !pmu) {
		pmu = "tracepoint";
		st.pattern = optind + 1 < argc ? argv[optind + 1] : NULL;
	}
	int r;
	if (pmu) {
		/* fail before printing anything: no half-written output */
		r = metrics ? hpm_ctx__for_each_metric(ctx, pmu, NULL, NULL, NULL)
			    : hpm_ctx__for_each_event(ctx, pmu, NULL, NULL);
		if (r < 0) {
			fprintf(stderr, "hpm list: %s\n", hpm_ctx__last_error(ctx));
			hpm_ctx__delete(ctx);
			return 1;
		}
	}
	if (json)
		printf("[");
	if (pmus) {
		r = hpm_ctx__for_each_pmu(ctx, print_pmu, &st);
	} else if (metrics) {
		r = hpm_ctx__for_each_metric(ctx, pmu, NULL, print_metric, &st);
	} else {
		const char *mine = hpm_ctx__pmu(ctx);
		/* availability is only meaningful for this CPU's own table */
		/* not tracepoints: the kernel takes ~40 ms to open each one */
		st.probe = !pmu || !strcmp(pmu, "generic") || (mine && !strcmp(pmu, mine));
		/* HPM_PMU picks the table names resolve in: say so, detection says otherwise */
		const char *forced = getenv("HPM_PMU");
		if (!json && !pmu && forced && *forced)
			printf("CPU: %s; PMU table: %s (HPM_PMU; detected: %s)\n"
			       "('*' = can be counted here now)\n",
			       hpm_ctx__cpu_id(ctx), forced, mine ? mine : "none");
		else if (!json && !pmu)
			printf("CPU: %s; PMU table: %s\n('*' = can be counted here now)\n",
			       hpm_ctx__cpu_id(ctx), mine ? mine : "none (generic events only)");
		r = hpm_ctx__for_each_event(ctx, pmu, print_event, &st);
	}
	if (json)
		printf("%s]\n", st.n ? "\n" : "");
	if (r < 0) {
		fprintf(stderr, "hpm list: %s\n", hpm_ctx__last_error(ctx));
		hpm_ctx__delete(ctx);
		return 1;
	}
	if (!st.n && (st.pattern || st.grep) && !json)
		printf("no %s matches '%s'\n", metrics ? "metric" : "event",
		       st.pattern ? st.pattern : st.grep);
	/* an unmarked list must not look like an oversight: the first refusal says why */
	if (!json && st.probe && st.hw_listed && !st.hw_marked)
		printf("\nno hardware event is marked: %s\n", st.hw_why);
	hpm_ctx__delete(ctx);
	return 0;
}
