/* SPDX-License-Identifier: MIT */
/*
 * Event names -> perf_event_attr.
 *
 * Order: generic perf names (kernel ABI: no table needed, so the common case
 * parses nothing), raw rNNNN, "pmu::EVENT", then the detected CPU table and
 * the tables it includes, then aliases (PAPI presets). Modifiers :u :k :h
 * follow perf. An unknown name gets the closest known names as suggestions.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

struct generic_event {
	const char *name;
	uint32_t type;
	uint64_t config;
	const char *desc;
};

/* The generic events Linux defines in include/uapi/linux/perf_event.h. */
static const struct generic_event generic_events[] = {
	{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, "CPU cycles" },
	{ "cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, "CPU cycles" },
	{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, "instructions retired" },
	{ "cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES,
	  "cache accesses (usually last level)" },
	{ "cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES,
	  "cache misses (usually last level)" },
	{ "branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, "branches retired" },
	{ "branch-instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS,
	  "branches retired" },
	{ "branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, "mispredicted branches" },
	{ "bus-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES, "bus cycles" },
	{ "stalled-cycles-frontend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND,
	  "cycles the frontend delivered nothing" },
	{ "stalled-cycles-backend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND,
	  "cycles the backend accepted nothing" },
	{ "ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES,
	  "reference cycles (not scaled by frequency)" },
	{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, "per-CPU clock (ns)" },
	{ "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, "time the task ran (ns)" },
	{ "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, "page faults" },
	{ "faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, "page faults" },
	{ "minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN,
	  "page faults served without I/O" },
	{ "major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ,
	  "page faults that needed I/O" },
	{ "context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES,
	  "context switches" },
	{ "cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, "context switches" },
	{ "cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS,
	  "moves to another CPU" },
	{ "migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, "moves to another CPU" },
	{ "alignment-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS,
	  "misaligned accesses fixed up by the kernel" },
	{ "emulation-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS,
	  "instructions emulated by the kernel" },
	{ "dummy", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY, "counts nothing (placeholder)" },
};

static const char *const cache_ids[] = { "L1-dcache", "L1-icache", "LLC", "dTLB",
					 "iTLB", "branch", "node" };
static const char *const cache_ops[] = { "load", "store", "prefetch" };

/* "L1-dcache-load-misses" -> config; also "L1-dcache-loads". */
static bool parse_cache_name(const char *name, uint64_t *config)
{
	for (unsigned id = 0; id < ARRAY_SIZE(cache_ids); id++) {
		size_t il = strlen(cache_ids[id]);
		if (strncasecmp(name, cache_ids[id], il) || name[il] != '-') /* no read past a short name */
			continue;
		const char *rest = name + il + 1;
		for (unsigned op = 0; op < ARRAY_SIZE(cache_ops); op++) {
			size_t ol = strlen(cache_ops[op]);
			if (strncasecmp(rest, cache_ops[op], ol))
				continue;
			const char *tail = rest + ol;
			unsigned result;
			if (!ascii_casecmp(tail, op == 2 ? "es" : "s"))
				result = PERF_COUNT_HW_CACHE_RESULT_ACCESS;
			else if (!ascii_casecmp(tail, "-misses"))
				result = PERF_COUNT_HW_CACHE_RESULT_MISS;
			else
				continue;
			*config = id | (op << 8) | ((uint64_t)result << 16);
			return true;
		}
	}
	return false;
}

static const struct generic_event *find_generic(const char *name)
{
	for (unsigned i = 0; i < ARRAY_SIZE(generic_events); i++)
		if (!ascii_casecmp(generic_events[i].name, name))
			return &generic_events[i];
	return NULL;
}

bool names_is_generic(const char *name)
{
	uint64_t c;
	return find_generic(name) || parse_cache_name(name, &c);
}

int names_for_each_generic(hpm_event_cb cb, void *arg)
{
	for (unsigned i = 0; i < ARRAY_SIZE(generic_events); i++) {
		const struct generic_event *g = &generic_events[i];
		struct hpm_event_info info = { g->name, "generic", g->desc, NULL, g->type, g->config };
		int r = cb(&info, arg);
		if (r)
			return r;
	}
	static const char *const res[] = { "s", "-misses" };
	for (unsigned id = 0; id < ARRAY_SIZE(cache_ids); id++)
		for (unsigned op = 0; op < ARRAY_SIZE(cache_ops); op++)
			for (unsigned k = 0; k < 2; k++) {
				char name[64], desc[96];
				snprintf(name, sizeof(name), "%s-%s%s", cache_ids[id], cache_ops[op],
					 k == 0 && op == 2 ? "es" : res[k]);
				snprintf(desc, sizeof(desc), "%s %s %s (generic cache event)",
					 cache_ids[id], cache_ops[op], k ? "misses" : "accesses");
				struct hpm_event_info info = {
					name, "generic", desc, NULL, PERF_TYPE_HW_CACHE,
					id | (op << 8) | ((uint64_t)k << 16)
				};
				int r = cb(&info, arg);
				if (r)
					return r;
			}
	return 0;
}

/* Does t say its core lacks this event of an included table? */
static bool table_lacks(const struct evtab *t, const char *name)
{
	for (int i = 0; i < t->nlacks; i++)
		if (streq_nocase(t->lacks[i], name))
			return true;
	return false;
}

/* Table lookup: own events, then the included tables' (depth-limited), minus the
 * events the table lacks: an event the core does not implement is not offered. */
struct evtab_event *evtab_find_event(struct hpm_ctx *ctx, struct evtab *t, const char *name,
				     int depth, struct evtab **owner)
{
	ctx_table_body(ctx, t);
	for (int i = 0; i < t->nevents; i++)
		if (streq_nocase(t->events[i].name, name)) {
			*owner = t;
			return &t->events[i];
		}
	if (table_lacks(t, name))
		return NULL;
	for (int k = 0; depth < 4 && k < t->nincludes; k++) {
		struct evtab *inc = ctx_find_table(ctx, t->includes[k]);
		struct evtab_event *e = inc ? evtab_find_event(ctx, inc, name, depth + 1, owner) : NULL;
		if (e)
			return e;
	}
	return NULL;
}

/* The table along t's include chain that lacks name, or NULL. */
static struct evtab *lacked_by(struct hpm_ctx *ctx, struct evtab *t, const char *name, int depth)
{
	if (table_lacks(t, name))
		return t;
	for (int k = 0; depth < 4 && k < t->nincludes; k++) {
		struct evtab *inc = ctx_find_table(ctx, t->includes[k]);
		struct evtab *by = inc ? lacked_by(ctx, inc, name, depth + 1) : NULL;
		if (by)
			return by;
	}
	return NULL;
}

static struct evtab_alias *table_alias(struct hpm_ctx *ctx, struct evtab *t, const char *name,
				       int depth, struct evtab **owner)
{
	ctx_table_body(ctx, t);
	for (int i = 0; i < t->naliases; i++)
		if (streq_nocase(t->aliases[i].name, name)) {
			*owner = t;
			return &t->aliases[i];
		}
	for (int k = 0; depth < 4 && k < t->nincludes; k++) {
		struct evtab *inc = ctx_find_table(ctx, t->includes[k]);
		struct evtab_alias *a = inc ? table_alias(ctx, inc, name, depth + 1, owner) : NULL;
		if (a)
			return a;
	}
	return NULL;
}

/* An alias (a PAPI preset, a kernel's spelling) stands for an event of the core, a
 * generic perf event, or another alias; one whose event the core lacks is unavailable
 * (a preset inherited from the architectural table may name such an event). */
static bool alias_available(struct hpm_ctx *ctx, struct evtab *t, const struct evtab_alias *a,
			    int depth)
{
	struct evtab *owner;
	if (names_is_generic(a->target) || find_pmu_sep(a->target))
		return true;
	if ((a->target[0] == 'r' || a->target[0] == 'R') && a->target[1] &&
	    strspn(a->target + 1, "0123456789abcdefABCDEF") == strlen(a->target + 1))
		return true;
	struct evtab_event *e = evtab_find_event(ctx, t, a->target, 0, &owner);
	if (e)
		return !ctx_pmu_lacks_common_event(ctx, t, e->code);
	struct evtab_alias *next = table_alias(ctx, t, a->target, 0, &owner);
	return next && next != a && depth < 4 && alias_available(ctx, t, next, depth + 1);
}

/* The CPU's table has the event, the live PMU does not implement it. */
static int not_in_pmu(struct hpm_ctx *ctx, const char *name, const struct evtab_event *e)
{
	return hpm__err(ctx, -ENOENT,
			"'%s' is not implemented by this CPU: its PMU does not list %s (0x%02llx) "
			"under /sys/bus/event_source/devices/armv8_*/events (PMCEID); raw r%llx "
			"would open but count nothing",
			name, e->name, (unsigned long long)e->code, (unsigned long long)e->code);
}

struct evtab_event *names_live_lacked(struct hpm_ctx *ctx, struct evtab *t, const char *name)
{
	struct evtab *owner;
	const char *want = name;
	const struct evtab_alias *prev = NULL;
	for (int hop = 0; t && hop < 5; hop++) {
		struct evtab_event *e = evtab_find_event(ctx, t, want, 0, &owner);
		if (e)
			return ctx_pmu_lacks_common_event(ctx, t, e->code) ? e : NULL;
		const struct evtab_alias *next = table_alias(ctx, t, want, 0, &owner);
		if (!next || next == prev)
			return NULL;
		prev = next;
		want = next->target;
	}
	return NULL;
}

static int alias_unavailable(struct hpm_ctx *ctx, struct evtab *t, const char *name,
			     const struct evtab_alias *a)
{
	struct evtab_event *lacked = names_live_lacked(ctx, t, a->target);
	if (lacked)
		return not_in_pmu(ctx, name, lacked);
	struct evtab *by = lacked_by(ctx, t, a->target, 0);
	if (by)
		return hpm__err(ctx, -ENOENT,
				"'%s' is not available on %s: it stands for %s, which this core "
				"does not implement (table %s lacks it; hpm list --pmu %s)",
				name, t->pmu, a->target, by->pmu, t->pmu);
	return hpm__err(ctx, -ENOENT,
			"'%s' is not available on %s: it stands for %s, which is no event of "
			"that table (hpm list --pmu %s)",
			name, t->pmu, a->target, t->pmu);
}

/* The table bare names resolve in: HPM_PMU overrides detection. */
struct evtab *ctx_active_table(struct hpm_ctx *ctx)
{
	const char *force = getenv("HPM_PMU");
	if (force && *force && !ctx_load_tables(ctx))
		return ctx_find_table(ctx, force);
	ctx_detect(ctx);
	return ctx->cpu_tab;
}

struct suggest {
	const char *want;
	char best[3][96];
	int dist[3];
};

static void suggest_add(struct suggest *s, const char *cand)
{
	int d = levenshtein(s->want, cand);
	/* a candidate containing the typed text is as good as a one-letter typo */
	if (strlen(s->want) >= 4 && strcasestr(cand, s->want))
		d = d < 2 ? d : 2;
	for (int i = 0; i < 3; i++) {
		if (!strcasecmp(s->best[i], cand))
			return;
		if (d < s->dist[i]) {
			for (int k = 2; k > i; k--) {
				s->dist[k] = s->dist[k - 1];
				memcpy(s->best[k], s->best[k - 1], sizeof(s->best[k]));
			}
			s->dist[i] = d;
			snprintf(s->best[i], sizeof(s->best[i]), "%s", cand);
			return;
		}
	}
}

static int suggest_generic_cb(const struct hpm_event_info *info, void *arg)
{
	suggest_add(arg, info->name);
	return 0;
}

static void suggest_table(struct hpm_ctx *ctx, struct suggest *s, struct evtab *root,
			  struct evtab *t, int depth)
{
	struct evtab *owner;
	ctx_table_body(ctx, t);
	for (int i = 0; i < t->nevents; i++)
		if (t == root || evtab_find_event(ctx, root, t->events[i].name, 0, &owner))
			suggest_add(s, t->events[i].name);
	for (int i = 0; i < t->naliases; i++)
		suggest_add(s, t->aliases[i].name);
	for (int k = 0; depth < 4 && k < t->nincludes; k++) {
		struct evtab *inc = ctx_find_table(ctx, t->includes[k]);
		if (inc)
			suggest_table(ctx, s, root, inc, depth + 1);
	}
}

static int unknown_event(struct hpm_ctx *ctx, const char *name, struct evtab *tab)
{
	struct suggest s = { .want = name, .dist = { 99, 99, 99 } };
	names_for_each_generic(suggest_generic_cb, &s);
	if (tab)
		suggest_table(ctx, &s, tab, tab, 0);
	/* an event of the architecture this core does not implement */
	struct evtab *by = tab ? lacked_by(ctx, tab, name, 0) : NULL;
	if (by)
		return hpm__err(ctx, -ENOENT,
				"event '%s' is not implemented by this core (table %s lacks it; hpm "
				"list --pmu %s shows what it has)",
				name, by->pmu, tab->pmu);
	/* exists on another PMU? name the first table that has it, and how many more do */
	struct evtab *first = NULL;
	int more = 0;
	for (int i = 0; i < ctx->ntabs; i++) {
		struct evtab *owner;
		struct evtab *t = &ctx->tabs[i];
		if (t == tab || !t->sources)
			continue;
		if (evtab_find_event(ctx, t, name, 3, &owner) || table_alias(ctx, t, name, 3, &owner)) {
			if (!first)
				first = owner;
			else if (owner != first)
				more++;
		}
	}
	if (first)
		return hpm__err(ctx, -ENOENT,
				"event '%s' is not available on this PMU (%s); it belongs to "
				"table '%s'%s (HPM_PMU=%s forces that table)",
				name, tab ? tab->pmu : "no table for this CPU", first->pmu,
				more ? " and others" : "", first->pmu);
	char sug[400] = "";
	size_t len = strlen(name);
	int limit = len < 6 ? 2 : (int)len / 3 + 1;
	for (int i = 0; i < 3; i++)
		if (s.dist[i] <= limit) {
			size_t o = strlen(sug);
			snprintf(sug + o, sizeof(sug) - o, "%s%s", o ? ", " : "", s.best[i]);
		}
	if (sug[0])
		return hpm__err(ctx, -ENOENT, "unknown event '%s'; did you mean: %s? (hpm list)", name,
				sug);
	return hpm__err(ctx, -ENOENT, "unknown event '%s' (hpm list shows the events of this CPU)",
			name);
}

/* perf's event modifiers. */
static const char modifier_letters[] = "ukhpPGHSID";

static bool is_modifier_string(const char *m, size_t n)
{
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!strchr(modifier_letters, m[i]) || !m[i])
			return false;
	return true;
}

/* Apply modifiers as perf defines them: u/k/h choose the privilege levels
 * counted (any given: the others are excluded), p/pp/ppp the precise_ip
 * level, P the highest level the PMU accepts, G guest only, H host only,
 * I not while idle, D pinned to the PMU, S samples read the group. */
static int apply_modifiers(struct hpm_ctx *ctx, const char *full, const char *mods,
			   struct resolved *r)
{
	struct perf_event_attr *a = &r->attr;
	bool u = false, k = false, h = false, G = false, H = false;
	int p = 0;
	for (const char *m = mods; *m; m++) {
		switch (*m) {
		case 'u': u = true; break;
		case 'k': k = true; break;
		case 'h': h = true; break;
		case 'p': p++; break;
		case 'P': r->precise_max = true; break;
		case 'G': G = true; break;
		case 'H': H = true; break;
		case 'S': r->sample_read = true; break;
		case 'I': a->exclude_idle = 1; break;
		case 'D': a->pinned = 1; break;
		default:
			return hpm__err(ctx, -EINVAL,
					"bad modifier ':%s' in '%s' (perf modifiers: u user, k kernel, "
					"h hypervisor, p/pp/ppp precise, P most precise, G guest, H host, "
					"I not idle, D pinned, S sample read)",
					mods, full);
		}
	}
	if (p > 3)
		return hpm__err(ctx, -EINVAL, "bad modifier ':%s' in '%s': at most 3 p (ppp)", mods,
				full);
	if (u || k || h) {
		a->exclude_user = !u;
		a->exclude_kernel = !k;
		a->exclude_hv = !h;
	}
	if (p)
		a->precise_ip = (unsigned)p;
	if (r->precise_max)
		a->precise_ip = 3; /* lowered by the opener until the PMU accepts it */
	if (G && !H)
		a->exclude_host = 1;
	if (H && !G)
		a->exclude_guest = 1;
	return 0;
}

static int resolve_depth(struct hpm_ctx *ctx, const char *name, struct resolved *r, int depth);

static void fill(struct resolved *r, uint32_t type, uint64_t config, const char *canon,
		 const char *pmu, const char *desc)
{
	r->attr.type = type;
	r->attr.config = config;
	copy_str(r->canon, sizeof(r->canon), canon);
	r->pmu = pmu;
	r->desc = desc;
	r->is_hw = type != PERF_TYPE_SOFTWARE && type != PERF_TYPE_TRACEPOINT;
}

static int resolve_base(struct hpm_ctx *ctx, const char *base, struct resolved *r, int depth)
{
	const struct generic_event *g = find_generic(base);
	uint64_t config;
	if (g) {
		fill(r, g->type, g->config, g->name, "generic", g->desc);
		return 0;
	}
	if (parse_cache_name(base, &config)) {
		fill(r, PERF_TYPE_HW_CACHE, config, base, "generic", "generic cache event");
		return 0;
	}
	if ((base[0] == 'r' || base[0] == 'R') && base[1]) {
		char *end;
		errno = 0;
		config = strtoull(base + 1, &end, 16);
		if (!*end && !errno) {
			fill(r, PERF_TYPE_RAW, config, base, "raw", "raw PMU event code");
			return 0;
		}
	}
	int ret = ctx_load_tables(ctx);
	if (ret < 0)
		return ret;
	struct evtab *tab = ctx_active_table(ctx), *owner = NULL;
	ret = ctx_table_body(ctx, tab);
	if (ret < 0)
		return ret;
	const char *sep = find_pmu_sep(base);
	if (sep) {
		char pmu[64];
		snprintf(pmu, sizeof(pmu), "%.*s", (int)(sep - base), base);
		struct evtab *t = ctx_find_table(ctx, pmu);
		if (!t)
			return hpm__err(ctx, -ENOENT, "no event table for PMU '%s' in '%s' (hpm list --pmus)",
					pmu, base);
		struct evtab_event *e = evtab_find_event(ctx, t, sep + 2, 0, &owner);
		if (!e) {
			struct evtab_alias *a = table_alias(ctx, t, sep + 2, 0, &owner);
			if (a && !alias_available(ctx, t, a, 0))
				return alias_unavailable(ctx, t, base, a);
			if (a && depth < 4)
				return resolve_depth(ctx, a->target, r, depth + 1);
			return unknown_event(ctx, base, t);
		}
		/* a table of another CPU: its codes would count something else here */
		struct evtab *o2;
		if (!tab || evtab_find_event(ctx, tab, sep + 2, 0, &o2) != e)
			return hpm__err(ctx, -ENODEV,
					"event '%s' is for PMU '%s' but this CPU is %s (%s); "
					"set HPM_PMU=%s if you know better",
					base, t->pmu, tab ? tab->pmu : "not in any table",
					hpm_ctx__cpu_id(ctx), t->pmu);
		if (ctx_pmu_lacks_common_event(ctx, tab, e->code))
			return not_in_pmu(ctx, base, e);
		fill(r, PERF_TYPE_RAW, e->code, e->name, owner->pmu, e->desc);
		return 0;
	}
	if (tab) {
		struct evtab_event *e = evtab_find_event(ctx, tab, base, 0, &owner);
		if (e) {
			if (ctx_pmu_lacks_common_event(ctx, tab, e->code))
				return not_in_pmu(ctx, base, e);
			fill(r, PERF_TYPE_RAW, e->code, e->name, owner->pmu, e->desc);
			return 0;
		}
		struct evtab_alias *a = table_alias(ctx, tab, base, 0, &owner);
		if (a && !alias_available(ctx, tab, a, 0))
			return alias_unavailable(ctx, tab, base, a);
		if (a && depth < 4) {
			ret = resolve_depth(ctx, a->target, r, depth + 1);
			return ret;
		}
	}
	return unknown_event(ctx, base, tab);
}

/* "sys:name[:mods]" is a tracepoint when "sys" is no event name and tracefs
 * has that subsystem, or when what follows the colon cannot be modifiers
 * (then the error says what is missing: tracefs, the subsystem, the name). */
static int try_tracepoint(struct hpm_ctx *ctx, const char *name, struct resolved *r)
{
	const char *c1 = NULL, *c2 = NULL;
	for (const char *p = name; *p; p++)
		if (p[0] == ':') {
			if (p[1] == ':' || (p > name && p[-1] == ':'))
				return 1; /* pmu::EVENT */
			if (!c1)
				c1 = p;
			else if (!c2)
				c2 = p;
		}
	if (!c1)
		return 1;
	size_t al = (size_t)(c1 - name), bl = c2 ? (size_t)(c2 - c1 - 1) : strlen(c1 + 1);
	char sys[128], ev[128];
	if (!tracepoint_split(name, (size_t)((c2 ? c2 : c1 + 1 + bl) - name), sys, sizeof(sys), ev,
			      sizeof(ev)))
		return 1;
	uint64_t cfg;
	if (al < sizeof(sys) && (find_generic(sys) || parse_cache_name(sys, &cfg)))
		return 1;
	if (!c2 && is_modifier_string(c1 + 1, bl) && !tracepoint_subsys_exists(sys))
		return 1;
	uint64_t id;
	int ret = tracepoint_resolve(ctx, sys, ev, &id);
	if (ret < 0)
		return ret;
	r->attr.type = PERF_TYPE_TRACEPOINT;
	r->attr.config = id;
	/* the whole "sys:name" came from a string shorter than canon */
	size_t sl = strlen(sys);
	copy_str(r->canon, sizeof(r->canon), sys);
	r->canon[sl] = ':';
	copy_str(r->canon + sl + 1, sizeof(r->canon) - sl - 1, ev);
	r->pmu = "tracepoint";
	r->desc = "kernel tracepoint";
	r->is_hw = false;
	if (c2) {
		ret = apply_modifiers(ctx, name, c2 + 1, r);
		if (ret < 0)
			return ret;
		size_t cl = strlen(r->canon);
		copy_str(r->canon + cl, sizeof(r->canon) - cl, c2);
	}
	return 0;
}

static int resolve_depth(struct hpm_ctx *ctx, const char *name, struct resolved *r, int depth)
{
	char base[128];
	const char *colon = NULL;
	const char *pmu_end = strchr(name, '/') ? pmu_spec_end(name) : NULL;
	if (pmu_end) {
		/* pmu/term=value,.../ with modifiers after the slash, ':' optional; or, as perf
		 * reads it when no PMU has that name, a named event with terms (cycles/period=N/) */
		int ret;
		size_t hl = strcspn(name, "/");
		if (hl < sizeof(base) && !pmu_terms_is_pmu(name)) {
			memcpy(base, name, hl);
			base[hl] = 0;
			struct resolved save = *r;
			if (resolve_base(ctx, base, r, depth) == 0)
				ret = pmu_terms_named(ctx, name, (size_t)(pmu_end - name), r);
			else {
				*r = save; /* not an event either: the PMU message says what is here */
				ret = pmu_terms_resolve(ctx, name, (size_t)(pmu_end - name), r);
			}
		} else {
			ret = pmu_terms_resolve(ctx, name, (size_t)(pmu_end - name), r);
		}
		if (ret < 0)
			return ret;
		const char *mods = *pmu_end == ':' ? pmu_end + 1 : pmu_end;
		if (*mods) {
			ret = apply_modifiers(ctx, name, mods, r);
			if (ret < 0)
				return ret;
			if (strcmp(r->canon, name) && !strchr(r->canon, '/')) {
				/* name=... given: keep the modifiers visible */
				size_t cl = strlen(r->canon);
				snprintf(r->canon + cl, sizeof(r->canon) - cl, ":%s", mods);
			} else {
				copy_str(r->canon, sizeof(r->canon), name);
			}
		}
		return 0;
	}
	if (strchr(name, ':')) {
		int ret = try_tracepoint(ctx, name, r);
		if (ret <= 0)
			return ret;
	}
	/* the modifier colon is the last ':' not part of "::" */
	for (const char *p = name; *p; p++)
		if (p[0] == ':' && p[1] != ':' && (p == name || p[-1] != ':'))
			colon = p;
	size_t n = colon ? (size_t)(colon - name) : strlen(name);
	if (!n || n >= sizeof(base))
		return hpm__err(ctx, -EINVAL, "bad event name '%s'", name);
	memcpy(base, name, n);
	base[n] = 0;
	int ret = resolve_base(ctx, base, r, depth);
	if (ret < 0)
		return ret;
	if (colon) {
		ret = apply_modifiers(ctx, name, colon + 1, r);
		if (ret < 0)
			return ret;
		size_t cl = strlen(r->canon);
		copy_str(r->canon + cl, sizeof(r->canon) - cl, colon);
	}
	return 0;
}

int names_resolve(struct hpm_ctx *ctx, const char *name, struct resolved *r)
{
	memset(r, 0, sizeof(*r));
	r->attr.size = sizeof(r->attr);
	return resolve_depth(ctx, name, r, 0);
}

HPM_API int hpm_ctx__resolve(struct hpm_ctx *ctx, const char *name, struct hpm_event_info *info)
{
	struct resolved r;
	int ret = names_resolve(ctx, name, &r);
	if (ret < 0)
		return ret;
	static __thread char canon[128];
	memcpy(canon, r.canon, sizeof(canon));
	info->name = canon;
	info->pmu = r.pmu;
	info->desc = r.desc;
	info->alias_of = NULL;
	info->type = r.attr.type;
	info->config = r.attr.config;
	return 0;
}

HPM_API int hpm_ctx__event_attr(struct hpm_ctx *ctx, const char *name, struct perf_event_attr *attr,
				char *canon, size_t len)
{
	struct resolved r;
	int ret = names_resolve(ctx, name, &r);
	if (ret < 0)
		return ret;
	*attr = r.attr;
	attr->size = sizeof(*attr);
	if (canon && len)
		copy_str(canon, len, r.canon);
	return 0;
}

struct each_ctx {
	struct hpm_ctx *ctx;
	hpm_event_cb cb;
	void *arg;
};

/* What a table offers: its events and those of its includes that it does not lack,
 * its aliases and the includes' it does not override, and no alias whose event the core
 * lacks. root is the table listed, t the one being walked. */
static int each_table(struct hpm_ctx *ctx, struct evtab *root, struct evtab *t, hpm_event_cb cb,
		      void *arg, int depth)
{
	struct evtab *owner;
	int ret = ctx_table_body(ctx, t);
	if (ret < 0)
		return ret;
	for (int i = 0; i < t->nevents; i++) {
		if (t != root && evtab_find_event(ctx, root, t->events[i].name, 0, &owner) != &t->events[i])
			continue;
		if (ctx_pmu_lacks_common_event(ctx, root, t->events[i].code))
			continue; /* the live PMU does not implement it (pmceid.c) */
		struct hpm_event_info info = { t->events[i].name, t->pmu, t->events[i].desc, NULL,
					       PERF_TYPE_RAW, t->events[i].code };
		int r = cb(&info, arg);
		if (r)
			return r;
	}
	for (int i = 0; i < t->naliases; i++) {
		struct evtab_alias *a = &t->aliases[i];
		if (table_alias(ctx, root, a->name, 0, &owner) != a || !alias_available(ctx, root, a, 0))
			continue;
		/* the alias's event in the listed table, not in this CPU's: a listing of
		 * another core's table shows that core's codes */
		const struct evtab_alias *end = a;
		struct evtab_event *ev = NULL;
		for (int hop = 0; hop < 4 && !ev; hop++) {
			ev = evtab_find_event(ctx, root, end->target, 0, &owner);
			const struct evtab_alias *next =
				ev ? NULL : table_alias(ctx, root, end->target, 0, &owner);
			if (!next || next == end)
				break;
			end = next;
		}
		struct resolved rs;
		char desc[160];
		int ok = ev ? 1 : names_resolve(ctx, end->target, &rs) == 0;
		const char *tdesc = ev ? ev->desc : ok ? rs.desc : NULL;
		snprintf(desc, sizeof(desc), "alias of %s%s%s", a->target, tdesc ? ": " : "",
			 tdesc ? tdesc : "");
		struct hpm_event_info info = { a->name, t->pmu, desc, a->target,
					       ev ? PERF_TYPE_RAW : ok ? rs.attr.type : 0,
					       ev ? ev->code : ok ? rs.attr.config : 0 };
		int r = cb(&info, arg);
		if (r)
			return r;
	}
	for (int k = 0; depth < 4 && k < t->nincludes; k++) {
		struct evtab *inc = ctx_find_table(ctx, t->includes[k]);
		int r = inc ? each_table(ctx, root, inc, cb, arg, depth + 1) : 0;
		if (r)
			return r;
	}
	return 0;
}

struct each_tp {
	hpm_event_cb cb;
	void *arg;
};

static int each_tracepoint(const char *sys, const char *name, uint64_t id, void *arg)
{
	struct each_tp *etp = arg;
	char full[256];
	snprintf(full, sizeof(full), "%s:%s", sys, name);
	struct hpm_event_info info = { full, "tracepoint", "kernel tracepoint", NULL,
				       PERF_TYPE_TRACEPOINT, id };
	return etp->cb(&info, etp->arg);
}

static int count_tracepoint(const char *sys, const char *name, uint64_t id, void *arg)
{
	(void)sys, (void)name, (void)id, (void)arg;
	return 0;
}

HPM_API int hpm_ctx__for_each_event(struct hpm_ctx *ctx, const char *pmu, hpm_event_cb cb,
				    void *arg)
{
	int r = ctx_load_tables(ctx);
	if (r < 0)
		return r;
	if (pmu && !strcmp(pmu, "generic"))
		return names_for_each_generic(cb, arg);
	if (pmu && !strcmp(pmu, "tracepoint")) {
		struct each_tp etp = { cb, arg };
		return tracepoint_for_each(ctx, NULL, cb ? each_tracepoint : count_tracepoint, &etp);
	}
	if (pmu) {
		struct evtab *t = ctx_find_table(ctx, pmu);
		if (!t || !t->sources) {
			char known[512] = "";
			for (int i = 0; i < ctx->ntabs; i++) {
				if (!ctx->tabs[i].sources)
					continue;
				size_t o = strlen(known);
				snprintf(known + o, sizeof(known) - o, "%s%s", o ? ", " : "",
					 ctx->tabs[i].pmu);
			}
			return hpm__err(ctx, -ENOENT, "no event table for PMU '%s'; known: %s", pmu,
					known);
		}
		return cb ? each_table(ctx, t, t, cb, arg, 0) : 0;
	}
	if (!cb)
		return 0;
	r = names_for_each_generic(cb, arg);
	struct evtab *t = ctx_active_table(ctx);
	if (!r && t)
		r = each_table(ctx, t, t, cb, arg, 0);
	return r;
}
