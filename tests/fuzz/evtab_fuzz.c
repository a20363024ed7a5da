/* libFuzzer harness for libhpm's data files and names: the event-table (.evt) and metric-group
 * (.mg) parsers, table includes/aliases/lacks, metric expressions and the event-list grammar,
 * through the public API a user reaches with HPM_DATA_DIR (docs/formats/event-tables.md).
 *
 *   make fuzz-build && build/fuzz/evtab_fuzz tests/data/fuzz/evtab    (docs/fuzzing.md)
 *
 * Input: up to four parts separated by a line "%%": an event table, a second event table (for
 * `include`), a metric-group file for the first table, and an event list in perf's syntax. Each
 * table is written to HPM_DATA_DIR/events/<its pmu line's name>.evt (so the file-name check
 * passes and the parser gets past it), the metric file to metrics/<name>.mg. Then: every table
 * listed, every event of each resolved and encoded, every metric's expression evaluated, the
 * event list split and resolved with HPM_PMU forcing the first table. Errors are expected (bad
 * tables are refused with a message); memory errors, hangs and empty error messages are not.
 */
#include <errno.h>
#include <glob.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include "hpm/hpm.h"

static char dir[64];

static void put(const char *sub, const char *name, const char *ext, const char *text, size_t n)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%s/%s%s", dir, sub, name, ext);
	FILE *f = fopen(path, "wb");
	if (!f)
		abort();
	fwrite(text, 1, n, f);
	fclose(f);
}

/* The table name a part declares (`pmu NAME`), cleaned to a file name; "" if none. */
static void pmu_name(const char *text, size_t n, char *out, size_t cap)
{
	out[0] = 0;
	for (size_t i = 0; i < n; i++) {
		if ((i == 0 || text[i - 1] == '\n') && n - i > 4 && !memcmp(text + i, "pmu", 3) &&
		    (text[i + 3] == ' ' || text[i + 3] == '\t')) {
			size_t j = i + 3, k = 0;
			while (j < n && (text[j] == ' ' || text[j] == '\t'))
				j++;
			while (j < n && k + 1 < cap && (text[j] == '_' || (text[j] >= 'a' && text[j] <= 'z') ||
							 (text[j] >= 'A' && text[j] <= 'Z') ||
							 (text[j] >= '0' && text[j] <= '9')))
				out[k++] = text[j++];
			out[k] = 0;
			return;
		}
	}
}

static void remove_dir(void)
{
	char p[128];
	snprintf(p, sizeof(p), "%s/events", dir);
	rmdir(p);
	snprintf(p, sizeof(p), "%s/metrics", dir);
	rmdir(p);
	rmdir(dir);
}

/* libFuzzer ends its processes with _exit (no atexit): folders of processes gone go now */
static void remove_stale(void)
{
	glob_t g;
	if (glob("/tmp/hpm-evtab-fuzz.*", 0, NULL, &g))
		return;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		char proc[64];
		snprintf(proc, sizeof(proc), "/proc/%s", strrchr(g.gl_pathv[i], '.') + 1);
		if (access(proc, F_OK)) {
			snprintf(dir, sizeof(dir), "%s", g.gl_pathv[i]);
			remove_dir();
		}
	}
	globfree(&g);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	remove_stale();
	atexit(remove_dir); /* each input's files are removed after it; the folders at exit */
	snprintf(dir, sizeof(dir), "/tmp/hpm-evtab-fuzz.%d", (int)getpid());
	char p[128];
	mkdir(dir, 0700);
	snprintf(p, sizeof(p), "%s/events", dir);
	mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/metrics", dir);
	mkdir(p, 0700);
	setenv("HPM_DATA_DIR", dir, 1);
	return 0;
}

static int one_lookup(const char *name, double *v, void *arg)
{
	*v = (double)(strlen(name) % 5); /* zero now and then: division by zero is -EDOM */
	return 0;
}

struct walk { struct hpm_ctx *ctx; int n; };

static int on_event(const struct hpm_event_info *e, void *arg)
{
	struct walk *w = arg;
	struct hpm_event_info info;
	struct perf_event_attr attr;
	char canon[256], full[512];
	if (!e->name || !e->pmu)
		abort();
	snprintf(full, sizeof(full), "%s::%s", e->pmu, e->name);
	if (hpm_ctx__resolve(w->ctx, full, &info) < 0 && !*hpm_ctx__last_error(w->ctx))
		abort();
	if (hpm_ctx__event_attr(w->ctx, full, &attr, canon, sizeof(canon)) < 0 && !*hpm_ctx__last_error(w->ctx))
		abort();
	return ++w->n > 2000;
}

static int on_metric(const struct hpm_metric_info *m, void *arg)
{
	double v;
	if (!m->expr || !m->name)
		abort();
	hpm_expr__eval(m->expr, one_lookup, NULL, &v);
	return 0;
}

static int on_pmu(const char *pmu, const char *title, const char *isa, void *arg)
{
	struct walk *w = arg;
	hpm_ctx__for_each_event(w->ctx, pmu, on_event, w);
	hpm_ctx__for_each_metric(w->ctx, pmu, NULL, on_metric, NULL);
	return 0;
}

static int on_name(const char *name, unsigned flags, void *arg)
{
	struct walk *w = arg;
	struct hpm_event_info info;
	if (hpm_ctx__resolve(w->ctx, name, &info) < 0 && !*hpm_ctx__last_error(w->ctx))
		abort();
	return ++w->n > 2000 ? -E2BIG : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *parts[4] = {0};
	size_t lens[4] = {0};
	int np = 0;
	const char *p = (const char *)data, *end = p + size;
	if (size > 64 * 1024)
		return 0;
	while (np < 4) {
		const char *sep = NULL;
		for (const char *q = p; q + 4 <= end; q++)
			if (!memcmp(q, "\n%%\n", 4)) {
				sep = q;
				break;
			}
		parts[np] = p;
		lens[np] = (size_t)((sep ? sep : end) - p);
		np++;
		if (!sep)
			break;
		p = sep + 4;
	}
	char names[2][48] = {"f0", "f1"};
	for (int i = 0; i < 2 && i < np; i++) {
		char nm[48];
		pmu_name(parts[i], lens[i], nm, sizeof(nm));
		if (*nm && strcmp(nm, names[0]))
			snprintf(names[i], sizeof(names[i]), "%s", nm);
		put("events", names[i], ".evt", parts[i], lens[i]);
	}
	if (np > 2)
		put("metrics", names[0], ".mg", parts[2], lens[2]);
	char *list = NULL;
	if (np > 3) {
		list = malloc(lens[3] + 1);
		memcpy(list, parts[3], lens[3]);
		list[lens[3]] = 0;
	}
	setenv("HPM_PMU", names[0], 1);

	struct hpm_ctx *ctx;
	if (hpm_ctx__new(&ctx) < 0)
		abort();
	struct walk w = {ctx, 0};
	if (hpm_ctx__for_each_pmu(ctx, on_pmu, &w) < 0 && !*hpm_ctx__last_error(ctx))
		abort();
	hpm_ctx__for_each_metric(ctx, NULL, NULL, on_metric, NULL);
	if (list) {
		w.n = 0;
		hpm_ctx__parse_list(ctx, list, on_name, &w);
		free(list);
	}
	hpm_ctx__delete(ctx);
	/* the files of this input go; names from the table lines are removed by name */
	for (int i = 0; i < 2 && i < np; i++) {
		char path[256];
		snprintf(path, sizeof(path), "%s/events/%s.evt", dir, names[i]);
		unlink(path);
	}
	if (np > 2) {
		char path[256];
		snprintf(path, sizeof(path), "%s/metrics/%s.mg", dir, names[0]);
		unlink(path);
	}
	return 0;
}
