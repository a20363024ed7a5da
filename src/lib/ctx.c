/* SPDX-License-Identifier: MIT */
/* Context: error text, lazily loaded event tables, lazily detected PMU. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "internal.h"

HPM_API const char *hpm_version(void)
{
	return "0.1.0";
}

/* Creating a context costs one allocation: tables and detection wait until a
 * name needs them, so a program that counts "cycles" never parses a table. */
HPM_API int hpm_ctx__new(struct hpm_ctx **ctx)
{
	if (!ctx)
		return -EINVAL;
	*ctx = calloc(1, sizeof(**ctx));
	if (!*ctx)
		return -ENOMEM;
	(*ctx)->paranoid_cache = -100;
	return 0;
}

HPM_API void hpm_ctx__delete(struct hpm_ctx *ctx)
{
	if (!ctx)
		return;
	for (int i = 0; i < ctx->ntabs; i++)
		evtab_free(&ctx->tabs[i]);
	free(ctx->tabs);
	free(ctx->ident);
	free(ctx);
}

HPM_API const char *hpm_ctx__last_error(const struct hpm_ctx *ctx)
{
	return ctx ? ctx->err : "no context";
}

int hpm__err(struct hpm_ctx *ctx, int err, const char *fmt, ...)
{
	if (ctx) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(ctx->err, sizeof(ctx->err), fmt, ap);
		va_end(ap);
	}
	return err;
}

const char *sysroot_path(const char *path, char *buf, size_t len)
{
	const char *root = getenv("HPM_SYSROOT");
	if (!root || !*root)
		return path;
	snprintf(buf, len, "%s%s", root, path);
	return buf;
}

int read_small_file(const char *path, char *buf, size_t len)
{
	char tmp[512];
	int fd = open(sysroot_path(path, tmp, sizeof(tmp)), O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t got = 0;
	while (got + 1 < len) {
		ssize_t n = read(fd, buf + got, len - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	buf[got] = 0;
	close(fd);
	return (int)got;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return NULL;
	size_t cap = 8192, n = 0;
	char *buf = malloc(cap);
	while (buf) {
		size_t r = fread(buf + n, 1, cap - n - 1, f);
		n += r;
		if (n + 1 < cap)
			break;
		char *nb = realloc(buf, cap *= 2);
		if (!nb) {
			free(buf);
			buf = NULL;
		} else
			buf = nb;
	}
	fclose(f);
	if (buf)
		buf[n] = 0;
	return buf;
}

static struct evtab *table_slot(struct hpm_ctx *ctx, const char *pmu)
{
	for (int i = 0; i < ctx->ntabs; i++)
		if (!strcmp(ctx->tabs[i].pmu, pmu))
			return &ctx->tabs[i];
	struct evtab *t = realloc(ctx->tabs, (size_t)(ctx->ntabs + 1) * sizeof(*t));
	if (!t)
		return NULL;
	ctx->tabs = t;
	t = &ctx->tabs[ctx->ntabs++];
	memset(t, 0, sizeof(*t));
	t->pmu = strdup(pmu);
	return t;
}

/* Parse one file's text and merge it into the table registry. An embedded table's
 * event and alias lines wait until a name needs them (lazy): most of the tables are
 * other CPUs', and parsing all of them would cost every resolution milliseconds. */
static int load_one(struct hpm_ctx *ctx, const char *name, const char *text, bool lazy)
{
	char err[400];
	const char *base = strrchr(name, '/');
	base = base ? base + 1 : name;
	size_t bl = strlen(base);
	char kind = bl > 4 && !strcmp(base + bl - 4, ".evt") ? 'e'
		    : bl > 3 && !strcmp(base + bl - 3, ".mg") ? 'm'
							       : 0;
	if (!kind)
		return 0;
	struct evtab tmp = { 0 };
	bool put_off = lazy && kind == 'e';
	int r = evtab_parse(&tmp, text, name, put_off ? 'h' : kind, err, sizeof(err));
	if (r < 0) {
		evtab_free(&tmp);
		return hpm__err(ctx, r, "bad data file %s", err);
	}
	if (put_off) {
		tmp.body_text = text;
		tmp.body_file = name;
	}
	char stem[128];
	snprintf(stem, sizeof(stem), "%.*s", (int)(bl - (kind == 'e' ? 4 : 3)), base);
	if (strcmp(stem, tmp.pmu)) {
		hpm__err(ctx, -EINVAL, "bad data file %s: pmu '%s' must match its file name", name,
			 tmp.pmu);
		evtab_free(&tmp);
		return -EINVAL;
	}
	struct evtab *t = table_slot(ctx, tmp.pmu);
	if (!t) {
		evtab_free(&tmp);
		return -ENOMEM;
	}
	if (kind == 'm') {
		/* move metrics over; metrics of an earlier load (tables are loaded again after
		 * a load that failed) are freed with their strings */
		struct evtab old = { 0 };
		old.metrics = t->metrics;
		old.nmetrics = t->nmetrics;
		evtab_free(&old);
		t->metrics = tmp.metrics;
		t->nmetrics = tmp.nmetrics;
		tmp.metrics = NULL;
		tmp.nmetrics = 0;
		t->is_generic_metrics = !strcmp(tmp.pmu, "generic");
		evtab_free(&tmp);
	} else {
		/* keep metrics possibly loaded earlier */
		struct evtab_metric *m = t->metrics;
		int nm = t->nmetrics;
		t->metrics = NULL;
		t->nmetrics = 0;
		evtab_free(t);
		*t = tmp;
		t->metrics = m;
		t->nmetrics = nm;
	}
	return 0;
}

static int load_dir(struct hpm_ctx *ctx, const char *dir, const char *sub)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/%s", dir, sub);
	struct dirent *de, **list;
	int r = 0;
	/* sorted order keeps errors reproducible */
	int n = scandir(path, &list, NULL, alphasort);
	if (n < 0)
		return hpm__err(ctx, -ENOENT, "HPM_DATA_DIR=%s has no %s/ folder", dir, sub);
	for (int i = 0; i < n; i++) {
		de = list[i];
		if (de->d_name[0] != '.' && !r) {
			char f[1400];
			snprintf(f, sizeof(f), "%s/%s", path, de->d_name);
			char *text = slurp(f);
			if (!text)
				r = hpm__err(ctx, -errno ? -errno : -EIO, "cannot read %s", f);
			else
				r = load_one(ctx, f, text, false);
			free(text);
		}
		free(list[i]);
	}
	free(list);
	return r;
}

int ctx_load_tables(struct hpm_ctx *ctx)
{
	if (ctx->tables_loaded)
		return 0;
	const char *dir = getenv("HPM_DATA_DIR");
	int r = 0;
	if (dir && *dir) {
		r = load_dir(ctx, dir, "events");
		if (!r)
			r = load_dir(ctx, dir, "metrics");
	} else {
		for (int i = 0; i < hpm_embedded_nfiles && !r; i++)
			r = load_one(ctx, hpm_embedded_files[i].name, hpm_embedded_files[i].text, true);
	}
	if (r < 0)
		return r;
	/* a metric file without an event table is an error, except generic */
	for (int i = 0; i < ctx->ntabs; i++) {
		struct evtab *t = &ctx->tabs[i];
		if (!t->sources && strcmp(t->pmu, "generic"))
			return hpm__err(ctx, -EINVAL, "metric file for unknown pmu '%s'", t->pmu);
		for (int k = 0; k < t->nincludes; k++)
			if (!ctx_find_table(ctx, t->includes[k]))
				return hpm__err(ctx, -EINVAL, "table %s includes unknown table %s",
						t->pmu, t->includes[k]);
	}
	/* a 'lacks' name must be an event of an included table (a typo hides nothing) */
	for (int i = 0; i < ctx->ntabs; i++) {
		struct evtab *t = &ctx->tabs[i], *owner;
		for (int k = 0; k < t->nlacks; k++) {
			bool found = false;
			for (int j = 0; j < t->nincludes && !found; j++)
				found = evtab_find_event(ctx, ctx_find_table(ctx, t->includes[j]),
							 t->lacks[k], 0, &owner) != NULL;
			if (!found)
				return hpm__err(ctx, -EINVAL,
						"table %s lacks %s, an event none of its included "
						"tables has",
						t->pmu, t->lacks[k]);
		}
	}
	ctx->tables_loaded = true;
	return 0;
}

int ctx_table_body(struct hpm_ctx *ctx, struct evtab *t)
{
	if (!t || !t->body_text)
		return 0;
	char err[400];
	struct evtab tmp = { 0 };
	int r = evtab_parse(&tmp, t->body_text, t->body_file, 'e', err, sizeof(err));
	t->body_text = NULL;
	if (r == 0) {
		t->events = tmp.events;
		t->nevents = tmp.nevents;
		t->aliases = tmp.aliases;
		t->naliases = tmp.naliases;
		tmp.events = NULL;
		tmp.aliases = NULL;
		tmp.nevents = tmp.naliases = 0;
	}
	evtab_free(&tmp);
	return r < 0 ? hpm__err(ctx, r, "bad data file %s", err) : 0;
}

struct evtab *ctx_find_table(struct hpm_ctx *ctx, const char *pmu)
{
	for (int i = 0; i < ctx->ntabs; i++)
		if (streq_nocase(ctx->tabs[i].pmu, pmu))
			return &ctx->tabs[i];
	return NULL;
}

void ctx_detect(struct hpm_ctx *ctx)
{
	if (ctx->detected)
		return;
	ctx->detected = true;
	if (ctx_load_tables(ctx) < 0)
		return;
	ctx->ident = calloc(1, sizeof(*ctx->ident));
	if (!ctx->ident)
		return;
	cpu_ident_read(ctx->ident);
	struct cpu_ident *id = ctx->ident;
	if (id->have_midr)
		snprintf(ctx->cpu_id, sizeof(ctx->cpu_id), "arm midr=0x%x:0x%x", id->implementer,
			 id->part);
	else if (id->have_riscv_ids)
		snprintf(ctx->cpu_id, sizeof(ctx->cpu_id),
			 "riscv mvendorid=0x%llx marchid=0x%llx mimpid=0x%llx",
			 (unsigned long long)id->mvendorid, (unsigned long long)id->marchid,
			 (unsigned long long)id->mimpid);
	else if (id->vendor[0])
		snprintf(ctx->cpu_id, sizeof(ctx->cpu_id), "x86 vendor=%s family=%d model=0x%x",
			 id->vendor, id->family, id->model);
	else
		snprintf(ctx->cpu_id, sizeof(ctx->cpu_id), "%s (no identification found)",
			 id->isa[0] ? id->isa : "unknown");
	int best = -1;
	for (int i = 0; i < ctx->ntabs; i++) {
		struct evtab *t = &ctx->tabs[i];
		for (int k = 0; k < t->ndetect; k++) {
			int spec = 0;
			if (evtab_detect_matches(&t->detect[k], t, id, &spec) && spec > best) {
				best = spec;
				ctx->cpu_tab = t;
			}
		}
	}
}

HPM_API const char *hpm_ctx__pmu(struct hpm_ctx *ctx)
{
	ctx_detect(ctx);
	return ctx->cpu_tab ? ctx->cpu_tab->pmu : NULL;
}

HPM_API const char *hpm_ctx__cpu_id(struct hpm_ctx *ctx)
{
	ctx_detect(ctx);
	return ctx->cpu_id;
}

HPM_API int hpm_ctx__for_each_pmu(struct hpm_ctx *ctx, hpm_pmu_cb cb, void *arg)
{
	int r = ctx_load_tables(ctx);
	if (r < 0)
		return r;
	for (int i = 0; i < ctx->ntabs; i++) {
		struct evtab *t = &ctx->tabs[i];
		if (!t->sources)
			continue; /* generic metrics only */
		r = cb(t->pmu, t->title ? t->title : "", t->isa ? t->isa : "any", arg);
		if (r)
			return r;
	}
	return 0;
}

struct live_check {
	struct hpm_ctx *ctx;
	struct evtab *cpu;
	bool lacking;
	int dropped; /* metrics left out: they need an event the core lacks */
};

static int lacked_ident(const char *ident, void *arg)
{
	struct live_check *lc = arg;
	if (names_live_lacked(lc->ctx, lc->cpu, ident))
		lc->lacking = true;
	return 0;
}

/* live: this CPU's metrics (cpu is its table), so a metric naming an event the running
 * core's PMU lacks (pmceid.c) is left out, as an event of it would be; NULL lists the
 * table as written. */
static int metrics_of(struct evtab *t, const char *group, hpm_metric_cb cb, void *arg, int *found,
		      struct live_check *live)
{
	for (int i = 0; i < t->nmetrics; i++) {
		struct evtab_metric *m = &t->metrics[i];
		if (group && !streq_nocase(group, m->group))
			continue;
		if (live && live->cpu) {
			live->lacking = false;
			expr_identifiers(m->expr, lacked_ident, live);
			if (live->lacking) {
				live->dropped++;
				continue;
			}
		}
		struct hpm_metric_info mi = { t->pmu, m->group, m->group_desc, m->name, m->unit,
					      m->expr };
		(*found)++;
		int r = cb ? cb(&mi, arg) : 0;
		if (r)
			return r;
	}
	return 0;
}

HPM_API int hpm_ctx__for_each_metric(struct hpm_ctx *ctx, const char *pmu, const char *group,
				     hpm_metric_cb cb, void *arg)
{
	int r = ctx_load_tables(ctx), found = 0;
	if (r < 0)
		return r;
	struct live_check live = { ctx, NULL, false, 0 };
	if (pmu) {
		struct evtab *t = ctx_find_table(ctx, pmu);
		if (!t)
			return hpm__err(ctx, -ENOENT, "no event table for PMU '%s' (hpm list --pmus)",
					pmu);
		r = metrics_of(t, group, cb, arg, &found, NULL);
	} else {
		/* the CPU's own table first: its groups override generic ones of the same name;
		 * the table event names resolve in (HPM_PMU wins over detection), so a forced
		 * table's metrics name events that resolve */
		struct evtab *cpu = ctx_active_table(ctx);
		struct evtab *g = ctx_find_table(ctx, "generic");
		live.cpu = cpu;
		bool own = false;
		if (cpu) {
			r = metrics_of(cpu, group, cb, arg, &found, &live);
			own = found > 0;
			for (int k = 0; !r && !own && k < cpu->nincludes; k++) {
				struct evtab *inc = ctx_find_table(ctx, cpu->includes[k]);
				if (inc)
					r = metrics_of(inc, group, cb, arg, &found, &live);
				own = found > 0;
			}
		}
		/* a group of the CPU's table whose every metric needs an event this core lacks
		 * gives way to the generic group of that name (perf's events: the kernel says
		 * what it cannot count) */
		if (!r && g && !(group && own))
			r = metrics_of(g, group, cb, arg, &found, NULL);
	}
	if (r)
		return r;
	if (group && !found && live.dropped)
		return hpm__err(ctx, -ENOENT,
				"metric group '%s' of %s needs events this core does not implement "
				"(its PMU does not list them: PMCEID); hpm list --metrics --pmu %s "
				"shows the group",
				group, live.cpu->pmu, live.cpu->pmu);
	if (group && !found)
		return hpm__err(ctx, -ENOENT, "no metric group '%s' for this PMU (hpm list --metrics)",
				group);
	return 0;
}

bool streq_nocase(const char *a, const char *b)
{
	return strcasecmp(a, b) == 0;
}

int levenshtein(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 63 || lb > 63)
		return 99;
	int prev[64], cur[64];
	for (size_t j = 0; j <= lb; j++)
		prev[j] = (int)j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = (int)i;
		for (size_t j = 1; j <= lb; j++) {
			char ca = a[i - 1], cb = b[j - 1];
			if (ca >= 'A' && ca <= 'Z')
				ca += 32;
			if (cb >= 'A' && cb <= 'Z')
				cb += 32;
			int c = prev[j - 1] + (ca != cb);
			if (prev[j] + 1 < c)
				c = prev[j] + 1;
			if (cur[j - 1] + 1 < c)
				c = cur[j - 1] + 1;
			cur[j] = c;
		}
		memcpy(prev, cur, sizeof(int) * (lb + 1));
	}
	return prev[lb];
}
