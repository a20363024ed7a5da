/* SPDX-License-Identifier: MIT */
/*
 * Event names and codes.
 *
 * Presets are PAPI_PRESET_MASK | index (presets.def). A preset is available
 * when libhpm resolves its name on this CPU (the PMU table's alias, or the
 * generic perf alias) and the kernel opens it: the same rule as `hpm
 * papi-avail` and `hpm list`'s '*'.
 *
 * Native codes are PAPI_NATIVE_MASK | index into a table of names seen so
 * far (looked up by name, enumerated, or the target of a preset). Names are
 * libhpm's own (generic perf names, the CPU table's events, "pmu::EVENT",
 * raw rNNNN, perf's :u/:k/:h modifiers) or libpfm's perf namespace that PAPI
 * programs use: "perf::TASK-CLOCK", "perf::PERF_COUNT_SW_TASK_CLOCK",
 * "perf::PERF_COUNT_HW_CACHE_L1D:READ:MISS", modifiers ":u", ":k=1".
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "papi_int.h"

/* ---- presets ------------------------------------------------------------ */
#define C_MSC PAPI_PRESET_BIT_MSC
#define C_INS PAPI_PRESET_BIT_INS
#define C_IDL PAPI_PRESET_BIT_IDL
#define C_BR PAPI_PRESET_BIT_BR
#define C_CND PAPI_PRESET_BIT_CND
#define C_MEM PAPI_PRESET_BIT_MEM
#define C_CACH PAPI_PRESET_BIT_CACH
#define C_L1 PAPI_PRESET_BIT_L1
#define C_L2 PAPI_PRESET_BIT_L2
#define C_L3 PAPI_PRESET_BIT_L3
#define C_TLB PAPI_PRESET_BIT_TLB
#define C_FP PAPI_PRESET_BIT_FP

struct preset {
	const char *name;
	unsigned cats;
	const char *desc;
};

static const struct preset presets[] = {
#define PRESET(idx, name, cats, desc) [idx] = { #name, cats, desc },
#include "presets.def"
#undef PRESET
};
#define NPRESETS ((int)(sizeof(presets) / sizeof(presets[0])))

/* What this CPU makes of each preset, found on first use. */
struct preset_state {
	bool checked;
	bool avail;
	int target;   /* native code of the event it counts, or 0 */
	bool is_hw;
};
static struct preset_state pstate[NPRESETS];

int hpapi_preset_count(void)
{
	return NPRESETS;
}

/* ---- natives ------------------------------------------------------------ */
struct native {
	char *name;   /* as PAPI programs spell it */
	char *hpm;    /* what libhpm opens (modifiers included if the name had any) */
	bool mods;    /* the name carries its own privilege-level modifiers */
	bool is_hw;
	char *desc;
};
static struct native *natives;
static int nnatives, cap_natives;
static bool natives_enumerated;
static int nenumerated; /* natives [0, nenumerated) are the enumerable list */

/* perf's generic event numbers as libpfm names them, to libhpm's names */
static const struct {
	const char *pfm, *hpm;
} pfm_generic[] = {
	{ "PERF_COUNT_HW_CPU_CYCLES", "cycles" },
	{ "PERF_COUNT_HW_INSTRUCTIONS", "instructions" },
	{ "PERF_COUNT_HW_CACHE_REFERENCES", "cache-references" },
	{ "PERF_COUNT_HW_CACHE_MISSES", "cache-misses" },
	{ "PERF_COUNT_HW_BRANCH_INSTRUCTIONS", "branch-instructions" },
	{ "PERF_COUNT_HW_BRANCH_MISSES", "branch-misses" },
	{ "PERF_COUNT_HW_BUS_CYCLES", "bus-cycles" },
	{ "PERF_COUNT_HW_STALLED_CYCLES_FRONTEND", "stalled-cycles-frontend" },
	{ "PERF_COUNT_HW_STALLED_CYCLES_BACKEND", "stalled-cycles-backend" },
	{ "PERF_COUNT_HW_REF_CPU_CYCLES", "ref-cycles" },
	{ "PERF_COUNT_SW_CPU_CLOCK", "cpu-clock" },
	{ "PERF_COUNT_SW_TASK_CLOCK", "task-clock" },
	{ "PERF_COUNT_SW_PAGE_FAULTS", "page-faults" },
	{ "PERF_COUNT_SW_CONTEXT_SWITCHES", "context-switches" },
	{ "PERF_COUNT_SW_CPU_MIGRATIONS", "cpu-migrations" },
	{ "PERF_COUNT_SW_PAGE_FAULTS_MIN", "minor-faults" },
	{ "PERF_COUNT_SW_PAGE_FAULTS_MAJ", "major-faults" },
	{ "PERF_COUNT_SW_ALIGNMENT_FAULTS", "alignment-faults" },
	{ "PERF_COUNT_SW_EMULATION_FAULTS", "emulation-faults" },
	{ "PERF_COUNT_SW_DUMMY", "dummy" },
};

/* libpfm's generic cache event names: PERF_COUNT_HW_CACHE_<unit>:<op>:<result> */
static const struct {
	const char *pfm, *hpm;
} pfm_cache_units[] = {
	{ "L1D", "L1-dcache" }, { "L1I", "L1-icache" }, { "LL", "LLC" }, { "DTLB", "dTLB" },
	{ "ITLB", "iTLB" },     { "BPU", "branch" },    { "NODE", "node" },
};

static int grow_natives(void)
{
	if (nnatives < cap_natives)
		return 0;
	int nc = cap_natives ? cap_natives * 2 : 64;
	struct native *n = realloc(natives, sizeof(*n) * (size_t)nc);
	if (!n)
		return -ENOMEM;
	natives = n;
	cap_natives = nc;
	return 0;
}

/* Translate a libpfm-style "perf::..." name into libhpm's spelling.
 * Returns 0, or a PAPI error with the reason in why. */
static int translate_perf(const char *rest, char *out, size_t len, bool *mods, char *why,
			  size_t wlen)
{
	char base[160], modstr[16] = "";
	const char *colon = strchr(rest, ':');
	size_t bl = colon ? (size_t)(colon - rest) : strlen(rest);
	if (!bl || bl >= sizeof(base)) {
		snprintf(why, wlen, "bad event name");
		return PAPI_ENOEVNT;
	}
	memcpy(base, rest, bl);
	base[bl] = 0;
	const char *hpm = NULL;
	char cache[64] = "";
	const char *cache_op = NULL, *cache_res = NULL;
	for (unsigned i = 0; i < sizeof(pfm_generic) / sizeof(pfm_generic[0]); i++)
		if (!strcasecmp(base, pfm_generic[i].pfm))
			hpm = pfm_generic[i].hpm;
	bool is_cache = !strncasecmp(base, "PERF_COUNT_HW_CACHE_", 20) && !hpm;
	if (is_cache) {
		for (unsigned i = 0; i < sizeof(pfm_cache_units) / sizeof(pfm_cache_units[0]); i++)
			if (!strcasecmp(base + 20, pfm_cache_units[i].pfm))
				hpm = pfm_cache_units[i].hpm;
		if (!hpm) {
			snprintf(why, wlen, "unknown cache '%s'", base + 20);
			return PAPI_ENOEVNT;
		}
	}
	/* the attributes after the name: cache op/result, privilege levels */
	for (const char *p = colon; p && *p == ':';) {
		const char *q = p + 1;
		const char *e = strchr(q, ':');
		size_t n = e ? (size_t)(e - q) : strlen(q);
		char tok[32];
		if (n >= sizeof(tok)) {
			snprintf(why, wlen, "bad attribute");
			return PAPI_ENOEVNT;
		}
		memcpy(tok, q, n);
		tok[n] = 0;
		char *eq = strchr(tok, '=');
		int val = 1;
		if (eq) {
			*eq = 0;
			if (strcmp(eq + 1, "0") && strcmp(eq + 1, "1")) {
				snprintf(why, wlen, "attribute '%s' takes 0 or 1", tok);
				return PAPI_ENOEVNT;
			}
			val = eq[1] == '1';
		}
		if (is_cache && !eq && (!strcasecmp(tok, "READ") || !strcasecmp(tok, "WRITE") ||
					!strcasecmp(tok, "PREFETCH")))
			cache_op = !strcasecmp(tok, "READ") ? "load" : !strcasecmp(tok, "WRITE") ? "store"
												  : "prefetch";
		else if (is_cache && !eq && (!strcasecmp(tok, "ACCESS") || !strcasecmp(tok, "MISS")))
			cache_res = !strcasecmp(tok, "MISS") ? "misses" : "s";
		else if (!strcasecmp(tok, "u") || !strcasecmp(tok, "k") || !strcasecmp(tok, "h")) {
			if (val && !strchr(modstr, tolower((unsigned char)tok[0]))) {
				size_t ml = strlen(modstr);
				modstr[ml] = (char)tolower((unsigned char)tok[0]);
				modstr[ml + 1] = 0;
			}
			*mods = true;
		} else {
			snprintf(why, wlen, "attribute ':%s' is not supported (libhpm-papi takes "
				 ":u, :k, :h)", tok);
			return PAPI_ENOEVNT;
		}
		p = e;
	}
	if (is_cache) {
		if (!cache_op || !cache_res) {
			snprintf(why, wlen, "a cache event needs :READ|:WRITE|:PREFETCH and :ACCESS|:MISS");
			return PAPI_ENOEVNT;
		}
		snprintf(cache, sizeof(cache), "%s-%s%s%s", hpm, cache_op,
			 cache_res[0] == 's' ? "" : "-", cache_res);
		hpm = cache;
	}
	char lower[160];
	if (!hpm) {
		/* libpfm's aliases are perf's names upper-cased: TASK-CLOCK, CYCLES */
		for (size_t i = 0; i <= bl; i++)
			lower[i] = (char)tolower((unsigned char)base[i]);
		hpm = lower;
	}
	if (*mods && !modstr[0]) {
		snprintf(why, wlen, "every privilege level excluded");
		return PAPI_ENOEVNT;
	}
	snprintf(out, len, "%s%s%s", hpm, modstr[0] ? ":" : "", modstr);
	return PAPI_OK;
}

/* Does a libhpm name end in perf modifiers (":u", ":uk")? */
static bool has_hpm_mods(const char *name)
{
	const char *colon = NULL;
	for (const char *p = name; *p; p++)
		if (p[0] == ':' && p[1] != ':' && (p == name || p[-1] != ':'))
			colon = p;
	if (!colon || !colon[1])
		return false;
	for (const char *m = colon + 1; *m; m++)
		if (!strchr("ukhpPGHSID", *m))
			return false;
	return true;
}

/* Register a native event (caller holds hpapi_lock). Returns its code or a
 * PAPI error. */
static int add_native(const char *papi_name, const char *hpm_name, bool mods,
		      const struct hpm_event_info *info)
{
	if (grow_natives() < 0)
		return PAPI_ENOMEM;
	struct native *n = &natives[nnatives];
	n->name = strdup(papi_name);
	n->hpm = strdup(hpm_name);
	n->desc = strdup(info && info->desc ? info->desc : "");
	n->mods = mods;
	n->is_hw = info && info->type != 1 /* PERF_TYPE_SOFTWARE */ && info->type != 2 /* TRACEPOINT */;
	if (!n->name || !n->hpm || !n->desc) {
		free(n->name);
		free(n->hpm);
		free(n->desc);
		return PAPI_ENOMEM;
	}
	return PAPI_NATIVE_MASK | nnatives++;
}

static int find_native(const char *name)
{
	for (int i = 0; i < nnatives; i++)
		if (!strcmp(natives[i].name, name))
			return PAPI_NATIVE_MASK | i;
	return 0;
}

/* Look up or register native `name` (caller holds hpapi_lock). */
static int native_code(const char *name, int *code)
{
	/* libpfm's names are case-blind: perf::task-clock is perf::TASK-CLOCK */
	char canon[256];
	if (!strncasecmp(name, "perf::", 6) && strlen(name) < sizeof(canon)) {
		size_t i = 0;
		memcpy(canon, "perf::", 6);
		for (i = 6; name[i] && name[i] != ':'; i++)
			canon[i] = (char)toupper((unsigned char)name[i]);
		snprintf(canon + i, sizeof(canon) - i, "%s", name + i);
		name = canon;
	}
	int c = find_native(name);
	if (c) {
		*code = c;
		return PAPI_OK;
	}
	char hpm[256], why[160] = "";
	bool mods = false;
	if (!strncasecmp(name, "perf::", 6)) {
		int r = translate_perf(name + 6, hpm, sizeof(hpm), &mods, why, sizeof(why));
		if (r != PAPI_OK)
			return hpapi_err(r, "PAPI_event_name_to_code", "'%s': %s", name, why);
	} else {
		if (strlen(name) >= sizeof(hpm))
			return hpapi_err(PAPI_ENOEVNT, "PAPI_event_name_to_code", "name too long");
		snprintf(hpm, sizeof(hpm), "%s", name);
		mods = has_hpm_mods(name);
	}
	struct hpm_event_info info;
	int r = hpm_ctx__resolve(hpapi_ctx, hpm, &info);
	if (r < 0)
		return hpapi_err(PAPI_ENOEVNT, "PAPI_event_name_to_code", "'%s': %s", name,
				 hpm_ctx__last_error(hpapi_ctx));
	c = add_native(name, hpm, mods, &info);
	if (c < 0)
		return hpapi_err(c, "PAPI_event_name_to_code", NULL);
	*code = c;
	return PAPI_OK;
}

static int preset_index(const char *name)
{
	for (int i = 0; i < NPRESETS; i++)
		if (presets[i].name && !strcmp(presets[i].name, name))
			return i;
	return -1;
}

/* PAPI spelling of a libhpm event as papi_native_avail would list it:
 * generic perf events in libpfm's perf namespace, table events as pmu::NAME. */
static void papi_spelling(const struct hpm_event_info *info, char *out, size_t len)
{
	if (!strcmp(info->pmu, "generic")) {
		size_t o = (size_t)snprintf(out, len, "perf::");
		for (const char *p = info->name; *p && o + 1 < len; p++)
			out[o++] = (char)toupper((unsigned char)*p);
		out[o < len ? o : len - 1] = 0;
	} else {
		snprintf(out, len, "%s::%s", info->pmu, info->name);
	}
}

/* Find out (once) what preset i counts here (caller holds hpapi_lock). */
static void check_preset(int i)
{
	struct preset_state *ps = &pstate[i];
	if (ps->checked || !hpapi_ctx)
		return;
	ps->checked = true;
	struct hpm_event_info info;
	if (hpm_ctx__resolve(hpapi_ctx, presets[i].name, &info) < 0)
		return;
	ps->is_hw = info.type != 1 && info.type != 2;
	char tname[256], hname[256];
	papi_spelling(&info, tname, sizeof(tname));
	snprintf(hname, sizeof(hname), "%s%s%s", strcmp(info.pmu, "generic") ? info.pmu : "",
		 strcmp(info.pmu, "generic") ? "::" : "", info.name);
	int c = find_native(tname);
	if (!c)
		c = add_native(tname, hname, false, &info);
	ps->target = c > 0 ? c : 0;
	/* counted here: the kernel opens it, counting user space (PAPI's default) */
	char probe[160];
	snprintf(probe, sizeof(probe), "%s:u", presets[i].name);
	ps->avail = hpm_ctx__probe(hpapi_ctx, probe) == 0;
}

/* ---- public calls ------------------------------------------------------- */
#define NEED_INIT(call)                                                   \
	do {                                                              \
		if (!(hpapi_inited & PAPI_LOW_LEVEL_INITED))              \
			return hpapi_err(PAPI_ENOINIT, call, NULL);       \
	} while (0)

static bool valid_preset(int code)
{
	return IS_PRESET(code) && (code & PAPI_PRESET_AND_MASK) < NPRESETS;
}

static bool valid_native(int code)
{
	return IS_NATIVE(code) && (int)(code & PAPI_NATIVE_AND_MASK) < nnatives;
}

PAPI_API int PAPI_event_name_to_code(const char *in, int *out)
{
	NEED_INIT("PAPI_event_name_to_code");
	if (!in || !out)
		return hpapi_err(PAPI_EINVAL, "PAPI_event_name_to_code", "NULL argument");
	int i = preset_index(in);
	if (i >= 0) {
		/* PAPI hands out preset codes whether or not they count here */
		*out = PAPI_PRESET_MASK | i;
		return PAPI_OK;
	}
	if (!strncasecmp(in, "PAPI_", 5))
		return hpapi_err(PAPI_ENOEVNT, "PAPI_event_name_to_code",
				 "'%s' is not a PAPI preset (names are upper case)", in);
	pthread_mutex_lock(&hpapi_lock);
	int r = native_code(in, out);
	pthread_mutex_unlock(&hpapi_lock);
	return r;
}

const char *hpapi_code_name(int code)
{
	if (valid_preset(code))
		return presets[code & PAPI_PRESET_AND_MASK].name;
	if (valid_native(code))
		return natives[code & PAPI_NATIVE_AND_MASK].name;
	return NULL;
}

PAPI_API int PAPI_event_code_to_name(int EventCode, char *out)
{
	NEED_INIT("PAPI_event_code_to_name");
	if (!out)
		return hpapi_err(PAPI_EINVAL, "PAPI_event_code_to_name", "NULL argument");
	pthread_mutex_lock(&hpapi_lock);
	const char *n = hpapi_code_name(EventCode);
	if (n)
		snprintf(out, PAPI_MAX_STR_LEN, "%s", n);
	pthread_mutex_unlock(&hpapi_lock);
	if (n)
		return PAPI_OK;
	return hpapi_err(IS_PRESET(EventCode) ? PAPI_ENOTPRESET : PAPI_ENOEVNT,
			 "PAPI_event_code_to_name", "code %#x", EventCode);
}

bool hpapi_code_is_hw(int code)
{
	bool hw = false;
	pthread_mutex_lock(&hpapi_lock);
	if (valid_preset(code)) {
		check_preset(code & PAPI_PRESET_AND_MASK);
		hw = pstate[code & PAPI_PRESET_AND_MASK].is_hw;
	} else if (valid_native(code)) {
		hw = natives[code & PAPI_NATIVE_AND_MASK].is_hw;
	}
	pthread_mutex_unlock(&hpapi_lock);
	return hw;
}

int hpapi_hpm_name(int code, int dom, char *buf, size_t len)
{
	char mods[4] = "";
	size_t m = 0;
	if (dom & PAPI_DOM_USER)
		mods[m++] = 'u';
	if (dom & PAPI_DOM_KERNEL)
		mods[m++] = 'k';
	if (dom & PAPI_DOM_SUPERVISOR)
		mods[m++] = 'h';
	mods[m] = 0;
	int r = PAPI_OK;
	pthread_mutex_lock(&hpapi_lock);
	if (valid_preset(code)) {
		int i = code & PAPI_PRESET_AND_MASK;
		snprintf(buf, len, "%s:%s", presets[i].name, mods);
	} else if (valid_native(code)) {
		struct native *n = &natives[code & PAPI_NATIVE_AND_MASK];
		if (n->mods)
			snprintf(buf, len, "%s", n->hpm);
		else
			snprintf(buf, len, "%s:%s", n->hpm, mods);
	} else {
		r = PAPI_ENOEVNT;
	}
	pthread_mutex_unlock(&hpapi_lock);
	return r;
}

PAPI_API int PAPI_query_event(int EventCode)
{
	NEED_INIT("PAPI_query_event");
	int r = PAPI_ENOEVNT;
	pthread_mutex_lock(&hpapi_lock);
	if (valid_preset(EventCode)) {
		check_preset(EventCode & PAPI_PRESET_AND_MASK);
		if (pstate[EventCode & PAPI_PRESET_AND_MASK].avail)
			r = PAPI_OK;
	} else if (valid_native(EventCode)) {
		r = PAPI_OK; /* natives exist once their name resolved */
	}
	pthread_mutex_unlock(&hpapi_lock);
	/* quiet: asking is not an error */
	return r;
}

PAPI_API int PAPI_query_named_event(const char *EventName)
{
	NEED_INIT("PAPI_query_named_event");
	int code;
	hpapi_quiet++; /* a name that does not resolve is an answer, not an error */
	int r = EventName ? PAPI_event_name_to_code(EventName, &code) : PAPI_EINVAL;
	hpapi_quiet--;
	if (r != PAPI_OK)
		return r == PAPI_EINVAL ? r : PAPI_ENOEVNT;
	return PAPI_query_event(code);
}

PAPI_API int PAPI_get_event_info(int EventCode, PAPI_event_info_t *info)
{
	NEED_INIT("PAPI_get_event_info");
	if (!info)
		return hpapi_err(PAPI_EINVAL, "PAPI_get_event_info", "NULL info");
	memset(info, 0, sizeof(*info));
	pthread_mutex_lock(&hpapi_lock);
	int r = PAPI_OK;
	if (valid_preset(EventCode)) {
		int i = EventCode & PAPI_PRESET_AND_MASK;
		const struct preset *p = &presets[i];
		check_preset(i);
		info->event_code = (unsigned)EventCode;
		snprintf(info->symbol, sizeof(info->symbol), "%s", p->name);
		snprintf(info->short_descr, sizeof(info->short_descr), "%s", p->desc);
		snprintf(info->long_descr, sizeof(info->long_descr), "%s", p->desc);
		info->event_type = p->cats;
		snprintf(info->derived, sizeof(info->derived), "NOT_DERIVED");
		if (pstate[i].avail && pstate[i].target) {
			struct native *n = &natives[pstate[i].target & PAPI_NATIVE_AND_MASK];
			info->count = 1;
			info->code[0] = (unsigned)pstate[i].target;
			snprintf(info->name[0], sizeof(info->name[0]), "%s", n->name);
			snprintf(info->note, sizeof(info->note), "libhpm: %s", n->hpm);
		}
	} else if (valid_native(EventCode)) {
		struct native *n = &natives[EventCode & PAPI_NATIVE_AND_MASK];
		info->event_code = (unsigned)EventCode;
		snprintf(info->symbol, sizeof(info->symbol), "%s", n->name);
		snprintf(info->short_descr, sizeof(info->short_descr), "%s", n->desc);
		snprintf(info->long_descr, sizeof(info->long_descr), "%s", n->desc);
		if (strcmp(n->hpm, n->name))
			snprintf(info->note, sizeof(info->note), "libhpm: %s", n->hpm);
	} else {
		r = PAPI_ENOEVNT;
	}
	if (r == PAPI_OK) {
		info->component_index = HPAPI_CIDX;
		info->data_type = PAPI_DATATYPE_INT64;
		info->value_type = PAPI_VALUETYPE_RUNNING_SUM;
		info->timescope = PAPI_TIMESCOPE_SINCE_START;
		info->location = PAPI_LOCATION_CPU;
	}
	pthread_mutex_unlock(&hpapi_lock);
	return r == PAPI_OK ? r : hpapi_err(r, "PAPI_get_event_info", "code %#x", EventCode);
}

PAPI_API int PAPI_get_event_component(int EventCode)
{
	NEED_INIT("PAPI_get_event_component");
	if (valid_preset(EventCode) || valid_native(EventCode))
		return HPAPI_CIDX;
	return hpapi_err(PAPI_ENOEVNT, "PAPI_get_event_component", "code %#x", EventCode);
}

/* ---- enumeration -------------------------------------------------------- */
static int enum_cb(const struct hpm_event_info *info, void *arg)
{
	(void)arg;
	if (info->alias_of)
		return 0; /* aliases are the presets, listed as presets */
	char name[256];
	papi_spelling(info, name, sizeof(name));
	if (find_native(name))
		return 0;
	char hname[256];
	snprintf(hname, sizeof(hname), "%s%s%s", strcmp(info->pmu, "generic") ? info->pmu : "",
		 strcmp(info->pmu, "generic") ? "::" : "", info->name);
	return add_native(name, hname, false, info) < 0;
}

/* The enumerable natives come first in the table once listed: generic perf
 * events, then the detected PMU table's events (caller holds hpapi_lock). */
static void enumerate_natives(void)
{
	if (natives_enumerated || !hpapi_ctx)
		return;
	natives_enumerated = true;
	hpm_ctx__for_each_event(hpapi_ctx, NULL, enum_cb, NULL);
	nenumerated = nnatives;
}

static int enum_natives(int *code, int modifier)
{
	int r = PAPI_ENOEVNT;
	pthread_mutex_lock(&hpapi_lock);
	enumerate_natives();
	/* every registered native is listed, those seen before enumeration too */
	int i = *code & PAPI_NATIVE_AND_MASK;
	if (modifier == PAPI_ENUM_FIRST) {
		if (nnatives > 0) {
			*code = PAPI_NATIVE_MASK;
			r = PAPI_OK;
		}
	} else if (modifier == PAPI_ENUM_EVENTS) {
		if (i + 1 < nnatives) {
			*code = PAPI_NATIVE_MASK | (i + 1);
			r = PAPI_OK;
		}
	} else if (modifier == PAPI_NTV_ENUM_UMASKS || modifier == PAPI_NTV_ENUM_UMASK_COMBOS) {
		r = PAPI_ENOEVNT; /* libhpm's events have no unit masks to list */
	} else {
		r = PAPI_EINVAL;
	}
	pthread_mutex_unlock(&hpapi_lock);
	return r;
}

static int enum_presets(int *code, int modifier)
{
	int i = *code & PAPI_PRESET_AND_MASK;
	if (modifier == PAPI_ENUM_FIRST) {
		*code = PAPI_PRESET_MASK;
		return PAPI_OK;
	}
	unsigned cat = 0;
	if (modifier >= PAPI_PRESET_ENUM_MSC && modifier <= PAPI_PRESET_ENUM_FP)
		cat = 1u << modifier;
	else if (modifier != PAPI_ENUM_EVENTS && modifier != PAPI_PRESET_ENUM_AVAIL)
		return PAPI_EINVAL;
	for (int j = i + 1; j < NPRESETS; j++) {
		if (cat && !(presets[j].cats & cat))
			continue;
		if (modifier == PAPI_PRESET_ENUM_AVAIL) {
			pthread_mutex_lock(&hpapi_lock);
			check_preset(j);
			bool a = pstate[j].avail;
			pthread_mutex_unlock(&hpapi_lock);
			if (!a)
				continue;
		}
		*code = PAPI_PRESET_MASK | j;
		return PAPI_OK;
	}
	return PAPI_ENOEVNT;
}

PAPI_API int PAPI_enum_event(int *EventCode, int modifier)
{
	NEED_INIT("PAPI_enum_event");
	if (!EventCode)
		return hpapi_err(PAPI_EINVAL, "PAPI_enum_event", "NULL code");
	if (IS_PRESET(*EventCode))
		return enum_presets(EventCode, modifier);
	if (IS_NATIVE(*EventCode))
		return enum_natives(EventCode, modifier);
	return PAPI_ENOEVNT;
}

PAPI_API int PAPI_enum_cmp_event(int *EventCode, int modifier, int cidx)
{
	NEED_INIT("PAPI_enum_cmp_event");
	if (cidx != HPAPI_CIDX)
		return hpapi_err(PAPI_ENOCMP, "PAPI_enum_cmp_event", "component %d", cidx);
	return PAPI_enum_event(EventCode, modifier);
}

/* Number of native events known once enumerated (component info). */
int hpapi_native_count(void)
{
	pthread_mutex_lock(&hpapi_lock);
	enumerate_natives();
	int n = nenumerated;
	pthread_mutex_unlock(&hpapi_lock);
	return n;
}

/* Presets available here (component info). */
int hpapi_preset_avail_count(void)
{
	int n = 0;
	pthread_mutex_lock(&hpapi_lock);
	for (int i = 0; i < NPRESETS; i++) {
		check_preset(i);
		n += pstate[i].avail;
	}
	pthread_mutex_unlock(&hpapi_lock);
	return n;
}

/* PAPI_shutdown forgets every code (caller holds hpapi_lock). */
void hpapi_events_reset(void)
{
	for (int i = 0; i < nnatives; i++) {
		free(natives[i].name);
		free(natives[i].hpm);
		free(natives[i].desc);
	}
	free(natives);
	natives = NULL;
	nnatives = cap_natives = nenumerated = 0;
	natives_enumerated = false;
	memset(pstate, 0, sizeof(pstate));
}

/* A PAPI event name in libhpm's spelling (perf:: names translated, the
 * rest as written), for lists handed to libhpm whole (PAPI_EVENTS). */
int hpapi_translate(const char *name, char *out, size_t len, bool *mods)
{
	char why[160];
	*mods = false;
	if (!strncasecmp(name, "perf::", 6))
		return translate_perf(name + 6, out, len, mods, why, sizeof(why));
	snprintf(out, len, "%s", name);
	*mods = has_hpm_mods(name);
	return PAPI_OK;
}
