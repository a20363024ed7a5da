/* SPDX-License-Identifier: MIT */
/*
 * PMU-qualified events "pmu/term=value,.../" as perf writes them. The kernel
 * publishes each PMU under /sys/bus/event_source/devices/<pmu>: its
 * perf_event_attr.type in "type", and for every named term the attr field and
 * bit ranges it fills in "format/<term>" (e.g. "config:8-15", or
 * "config:0-7,32-35" for a value split over two ranges). "events/<alias>"
 * holds named encodings made of the same terms ("event=0x11").
 *
 * Terms every PMU takes, with or without a format directory: config,
 * config1, config2 (whole fields), period, freq, name.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "internal.h"

#define PMU_DIR "/sys/bus/event_source/devices"

/* The PMUs sysfs lists, sorted so messages and choices are the same on every run;
 * returns how many (names to free) or -errno. */
static int pmu_names(char **names, int max)
{
	char path[512];
	DIR *d = opendir(sysroot_path(PMU_DIR, path, sizeof(path)));
	if (!d)
		return -errno;
	int n = 0;
	for (struct dirent *de; (de = readdir(d)) && n < max;)
		if (de->d_name[0] != '.' && (names[n] = strdup(de->d_name)))
			n++;
	closedir(d);
	for (int i = 1; i < n; i++)
		for (int k = i; k > 0 && strcmp(names[k - 1], names[k]) > 0; k--) {
			char *t = names[k];
			names[k] = names[k - 1];
			names[k - 1] = t;
		}
	return n;
}

static int list_pmus(char *out, size_t len)
{
	char *names[128];
	int n = pmu_names(names, 128);
	out[0] = 0;
	if (n < 0)
		return n;
	for (int i = 0; i < n; i++) {
		size_t o = strlen(out);
		snprintf(out + o, len - o, "%s%s", o ? ", " : "", names[i]);
		free(names[i]);
	}
	return 0;
}

/* A PMU of the cores, as perf tells them apart: "cpu" (x86 and others), or one whose
 * sysfs folder has a "cpus" file (Arm's armv8_* PMUs, hybrid x86's cpu_core/cpu_atom). */
static bool is_core_pmu(const char *name)
{
	char rel[512], path[600];
	if (!strcmp(name, "cpu"))
		return true;
	snprintf(rel, sizeof(rel), PMU_DIR "/%s/cpus", name);
	return access(sysroot_path(rel, path, sizeof(path)), F_OK) == 0;
}

int core_pmu_slots(double *slots, char *why, size_t len)
{
	char *names[128];
	int n = pmu_names(names, 128), ncore = 0, ret = -ENODATA;
	unsigned long long first = 0;
	char first_pmu[64] = "";
	why[0] = 0;
	for (int i = 0; i < n; i++) {
		if (!is_core_pmu(names[i]) || why[0])
			continue;
		ncore++;
		char rel[512], buf[64], *end;
		snprintf(rel, sizeof(rel), PMU_DIR "/%s/caps/slots", names[i]);
		int got = read_small_file(rel, buf, sizeof(buf));
		while (got > 0 && isspace((unsigned char)buf[got - 1]))
			buf[--got] = 0;
		/* the kernel writes "0x%08x" (Arm: PMMIR_EL1.SLOTS) */
		unsigned long long v = got > 0 ? strtoull(buf, &end, 0) : 0;
		if (got <= 0)
			snprintf(why, len, "the core PMU %s has no caps/slots in sysfs", names[i]);
		else if (end == buf || *end || buf[0] == '-')
			snprintf(why, len, "the core PMU %s's caps/slots is '%.20s', not a number",
				 names[i], buf);
		else if (v == 0)
			snprintf(why, len, "the core PMU %s's caps/slots is 0: the CPU does not say "
				 "its width (PMMIR_EL1.SLOTS, read by Linux from PMUv3.4 on)", names[i]);
		else if (ncore == 1) {
			first = v;
			snprintf(first_pmu, sizeof(first_pmu), "%s", names[i]);
		} else if (v != first)
			/* which PMU counts a raw event then depends on the CPU it runs on */
			snprintf(why, len, "the core PMUs %s (slots %llu) and %s (slots %llu) differ",
				 first_pmu, first, names[i], v);
	}
	for (int i = 0; i < n; i++)
		free(names[i]);
	if (!why[0] && ncore == 0)
		snprintf(why, len, "sysfs lists no core PMU in " PMU_DIR);
	if (!why[0]) {
		*slots = (double)first;
		ret = 0;
	}
	return ret;
}

static uint64_t *attr_field(struct perf_event_attr *a, const char *field)
{
	if (!strcmp(field, "config"))
		return (uint64_t *)&a->config;
	if (!strcmp(field, "config1"))
		return (uint64_t *)&a->config1;
	if (!strcmp(field, "config2"))
		return (uint64_t *)&a->config2;
	return NULL;
}

/* Deposit value into the bit ranges of a format line "config:0-7,21". */
static int deposit(struct hpm_ctx *ctx, const char *spec, const char *fmt, const char *term,
		   uint64_t value, struct perf_event_attr *a)
{
	char field[32];
	const char *c = strchr(fmt, ':');
	if (!c || (size_t)(c - fmt) >= sizeof(field))
		return hpm__err(ctx, -EINVAL, "'%s': the kernel's format of term '%s' is '%s', "
				"which hpm does not understand", spec, term, fmt);
	memcpy(field, fmt, (size_t)(c - fmt));
	field[c - fmt] = 0;
	uint64_t *dst = attr_field(a, field);
	if (!dst)
		return hpm__err(ctx, -EINVAL, "'%s': term '%s' fills attr field '%s', which hpm "
				"cannot set", spec, term, field);
	uint64_t v = value;
	int width = 0;
	for (const char *p = c + 1; *p;) {
		char *end;
		long lo = strtol(p, &end, 10), hi = lo;
		if (end == p || lo < 0 || lo > 63)
			return hpm__err(ctx, -EINVAL, "'%s': bad bit range in format '%s' of term "
					"'%s'", spec, fmt, term);
		p = end;
		if (*p == '-') {
			hi = strtol(p + 1, &end, 10);
			if (end == p + 1 || hi < lo || hi > 63)
				return hpm__err(ctx, -EINVAL, "'%s': bad bit range in format '%s' "
						"of term '%s'", spec, fmt, term);
			p = end;
		}
		for (long b = lo; b <= hi; b++, width++) {
			*dst &= ~(1ULL << b);
			*dst |= (v & 1) << b;
			v >>= 1;
		}
		while (*p == ',' || isspace((unsigned char)*p))
			p++;
	}
	if (v)
		return hpm__err(ctx, -ERANGE, "'%s': value 0x%llx does not fit term '%s' (%d bits: "
				"%s)", spec, (unsigned long long)value, term, width, fmt);
	return 0;
}

static int valid_terms(const char *pmu, char *out, size_t len)
{
	char path[512], buf[512];
	snprintf(buf, sizeof(buf), PMU_DIR "/%s/format", pmu);
	snprintf(out, len, "config,config1,config2,period,freq,name");
	DIR *d = opendir(sysroot_path(buf, path, sizeof(path)));
	if (!d)
		return 0;
	for (struct dirent *de; (de = readdir(d));)
		if (de->d_name[0] != '.') {
			size_t o = strlen(out);
			snprintf(out + o, len - o, ",%s", de->d_name);
		}
	closedir(d);
	return 0;
}

static int apply_terms(struct hpm_ctx *ctx, const char *spec, const char *pmu, char *terms,
		       struct resolved *r, int depth);

static int apply_term(struct hpm_ctx *ctx, const char *spec, const char *pmu, char *term,
		      struct resolved *r, int depth)
{
	char *eq = strchr(term, '=');
	const char *key = term, *val = eq ? eq + 1 : NULL;
	if (eq)
		*eq = 0;
	if (!*key)
		return hpm__err(ctx, -EINVAL, "empty term in '%s'", spec);
	if (!strcmp(key, "name")) {
		if (!val || !*val)
			return hpm__err(ctx, -EINVAL, "'%s': name= needs a value", spec);
		/* perf allows the name in quotes */
		size_t n = strlen(val);
		if (n >= 2 && (val[0] == '\'' || val[0] == '"') && val[n - 1] == val[0])
			snprintf(r->canon, sizeof(r->canon), "%.*s", (int)n - 2, val + 1);
		else
			copy_str(r->canon, sizeof(r->canon), val);
		return 0;
	}
	uint64_t v = 1; /* a bare term sets a one-bit flag ("edge") */
	if (val) {
		char *end;
		errno = 0;
		v = strtoull(val, &end, 0);
		if (!*val || *end || errno)
			return hpm__err(ctx, -EINVAL, "'%s': term '%s' needs a number, got '%s'",
					spec, key, val);
	}
	uint64_t *whole = attr_field(&r->attr, key);
	if (whole) {
		*whole = v;
		return 0;
	}
	if (!strcmp(key, "period")) {
		r->attr.sample_period = v;
		r->attr.freq = 0;
		return 0;
	}
	if (!strcmp(key, "freq")) {
		r->attr.sample_freq = v;
		r->attr.freq = 1;
		return 0;
	}
	char path[768], rel[512], fmt[256];
	snprintf(rel, sizeof(rel), PMU_DIR "/%s/format/%s", pmu, key);
	if (read_small_file(rel, fmt, sizeof(fmt)) > 0) {
		fmt[strcspn(fmt, "\n")] = 0;
		return deposit(ctx, spec, fmt, key, v, &r->attr);
	}
	/* an alias the PMU publishes (events/<key>), made of the same terms */
	snprintf(rel, sizeof(rel), PMU_DIR "/%s/events/%s", pmu, key);
	char alias[512];
	if (!val && depth < 2 && read_small_file(rel, alias, sizeof(alias)) > 0) {
		alias[strcspn(alias, "\n")] = 0;
		return apply_terms(ctx, spec, pmu, alias, r, depth + 1);
	}
	(void)path;
	char terms[1024];
	valid_terms(pmu, terms, sizeof(terms));
	return hpm__err(ctx, -EINVAL, "unknown term '%s' for PMU '%s' in '%s'; valid terms: %s",
			key, pmu, spec, terms);
}

static int apply_terms(struct hpm_ctx *ctx, const char *spec, const char *pmu, char *terms,
		       struct resolved *r, int depth)
{
	for (char *save, *t = strtok_r(terms, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		while (isspace((unsigned char)*t))
			t++;
		int ret = apply_term(ctx, spec, pmu, t, r, depth);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* Where the modifiers of "pmu/terms/mods" start (after the closing '/'), or
 * NULL when s is not of that shape. */
const char *pmu_spec_end(const char *s)
{
	const char *a = strchr(s, '/');
	if (!a || a == s)
		return NULL;
	const char *b = strchr(a + 1, '/');
	return b ? b + 1 : NULL;
}

bool pmu_terms_is_pmu(const char *spec)
{
	char rel[512], buf[32];
	size_t pl = strcspn(spec, "/");
	if (!pl || pl >= 64)
		return false;
	snprintf(rel, sizeof(rel), PMU_DIR "/%.*s/type", (int)pl, spec);
	return read_small_file(rel, buf, sizeof(buf)) > 0;
}

int pmu_terms_named(struct hpm_ctx *ctx, const char *spec, size_t n, struct resolved *r)
{
	char full[256];
	if (n >= sizeof(full))
		return hpm__err(ctx, -EINVAL, "event '%.40s...' is too long", spec);
	memcpy(full, spec, n);
	full[n] = 0;
	char *a = strchr(full, '/');
	if (!a || full[n - 1] != '/')
		return hpm__err(ctx, -EINVAL, "bad event '%s' (perf syntax: event/term=value,.../)",
				full);
	full[n - 1] = 0;
	char canon[sizeof(r->canon)];
	copy_str(canon, sizeof(canon), spec);
	canon[n < sizeof(canon) ? n : sizeof(canon) - 1] = 0;
	copy_str(r->canon, sizeof(r->canon), canon);
	for (char *save, *t = strtok_r(a + 1, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		while (isspace((unsigned char)*t))
			t++;
		size_t kl = strcspn(t, "=");
		/* a named event's encoding is fixed: only what perf lets such a term change */
		if (!((kl == 4 && !strncmp(t, "name", 4)) || (kl == 6 && !strncmp(t, "period", 6)) ||
		      (kl == 4 && !strncmp(t, "freq", 4)))) {
			char ev[64];
			snprintf(ev, sizeof(ev), "%.*s", (int)(a - full), full);
			return hpm__err(ctx, -EINVAL, "unknown term '%.*s' for event '%s' in '%.*s'; "
					"a named event takes period, freq and name", (int)kl, t, ev,
					(int)n, spec);
		}
		int ret = apply_term(ctx, canon, "", t, r, 0);
		if (ret < 0)
			return ret;
	}
	return 0;
}

int pmu_terms_resolve(struct hpm_ctx *ctx, const char *spec, size_t n, struct resolved *r)
{
	char full[256], pmu[64], terms[256];
	if (n >= sizeof(full))
		return hpm__err(ctx, -EINVAL, "event '%.40s...' is too long", spec);
	memcpy(full, spec, n);
	full[n] = 0;
	const char *a = strchr(full, '/');
	size_t pl = (size_t)(a - full), tl = n - pl - 2;
	if (pl >= sizeof(pmu) || full[n - 1] != '/')
		return hpm__err(ctx, -EINVAL, "bad PMU event '%s' (perf syntax: pmu/term=value,.../)",
				full);
	memcpy(pmu, full, pl);
	pmu[pl] = 0;
	memcpy(terms, a + 1, tl);
	terms[tl] = 0;
	char rel[512], buf[32];
	snprintf(rel, sizeof(rel), PMU_DIR "/%s/type", pmu);
	if (read_small_file(rel, buf, sizeof(buf)) <= 0) {
		char pmus[512];
		list_pmus(pmus, sizeof(pmus));
		return hpm__err(ctx, -ENODEV,
				"no PMU '%s' on this machine for '%s' (PMUs here: %s)", pmu, full,
				pmus[0] ? pmus : "none");
	}
	r->attr.type = (uint32_t)strtoul(buf, NULL, 10);
	copy_str(r->canon, sizeof(r->canon), full);
	r->pmu = "sysfs";
	r->desc = "PMU event from sysfs terms";
	r->is_hw = r->attr.type != PERF_TYPE_SOFTWARE && r->attr.type != PERF_TYPE_TRACEPOINT &&
		   r->attr.type != PERF_TYPE_BREAKPOINT;
	int ret = apply_terms(ctx, full, pmu, terms, r, 0);
	if (ret < 0)
		return ret;
	return 0;
}
