/* SPDX-License-Identifier: MIT */
/*
 * hpm bench compare REF.json OTHER.json...: per case, the value in each file
 * and OTHER/REF ratios (seed 001 figure 6's "A/R"), plus the geometric mean
 * of the ratios per benchmark. In C, with a small JSON reader, so it runs on
 * the boards that produced the files.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "bench_def.h"

/* ---- a minimal JSON reader (enough for hpm-bench files) ------------------- */
enum jtype { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };
struct jval {
	enum jtype t;
	double num;
	char *str;           /* J_STR */
	struct jval *items;  /* J_ARR, J_OBJ (values) */
	char **keys;         /* J_OBJ */
	int n;
};

struct jparser {
	const char *s, *p, *file;
	char err[300];
};

static int jfail(struct jparser *jp, const char *what)
{
	if (!jp->err[0])
		snprintf(jp->err, sizeof(jp->err), "%s: byte %ld: %s", jp->file, (long)(jp->p - jp->s),
			 what);
	return -1;
}

static void jskip(struct jparser *jp)
{
	while (*jp->p == ' ' || *jp->p == '\n' || *jp->p == '\r' || *jp->p == '\t')
		jp->p++;
}

static void jfree(struct jval *v)
{
	free(v->str);
	for (int i = 0; i < v->n; i++) {
		jfree(&v->items[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->items);
	free(v->keys);
	memset(v, 0, sizeof(*v));
}

static int jstring(struct jparser *jp, char **out)
{
	jp->p++; /* opening quote */
	size_t cap = 32, n = 0;
	char *b = malloc(cap);
	if (!b)
		return jfail(jp, "out of memory");
	for (;;) {
		char c = *jp->p++;
		if (!c) {
			free(b);
			jp->p--;
			return jfail(jp, "unterminated string");
		}
		if (c == '"')
			break;
		if (c == '\\') {
			char e = *jp->p++;
			switch (e) {
			case 'n': c = '\n'; break;
			case 't': c = '\t'; break;
			case 'r': c = '\r'; break;
			case 'b': c = '\b'; break;
			case 'f': c = '\f'; break;
			case 'u': {
				unsigned u = 0;
				for (int i = 0; i < 4; i++) {
					char h = *jp->p++;
					u = u * 16 + (unsigned)(h >= '0' && h <= '9' ? h - '0'
							  : h >= 'a' && h <= 'f' ? h - 'a' + 10
							  : h >= 'A' && h <= 'F' ? h - 'A' + 10 : 0);
				}
				c = u < 0x80 ? (char)u : '?'; /* our files only escape control chars */
				break;
			}
			case '"': case '\\': case '/': c = e; break;
			default:
				free(b);
				return jfail(jp, "bad escape in string");
			}
		}
		if (n + 2 > cap) {
			char *nb = realloc(b, cap *= 2);
			if (!nb) {
				free(b);
				return jfail(jp, "out of memory");
			}
			b = nb;
		}
		b[n++] = c;
	}
	b[n] = 0;
	*out = b;
	return 0;
}

static int jvalue(struct jparser *jp, struct jval *v, int depth)
{
	memset(v, 0, sizeof(*v));
	if (depth > 64)
		return jfail(jp, "nested too deeply");
	jskip(jp);
	char c = *jp->p;
	if (c == '{' || c == '[') {
		bool obj = c == '{';
		v->t = obj ? J_OBJ : J_ARR;
		jp->p++;
		jskip(jp);
		if (*jp->p == (obj ? '}' : ']')) {
			jp->p++;
			return 0;
		}
		int cap = 0;
		for (;;) {
			if (v->n == cap) {
				cap = cap ? cap * 2 : 8;
				struct jval *ni = realloc(v->items, sizeof(*ni) * (size_t)cap);
				if (!ni)
					return jfail(jp, "out of memory");
				v->items = ni;
				if (obj) {
					char **nk = realloc(v->keys, sizeof(*nk) * (size_t)cap);
					if (!nk)
						return jfail(jp, "out of memory");
					v->keys = nk;
				}
			}
			if (obj) {
				jskip(jp);
				if (*jp->p != '"')
					return jfail(jp, "expected a quoted key");
				if (jstring(jp, &v->keys[v->n]) < 0)
					return -1;
				jskip(jp);
				if (*jp->p != ':') {
					free(v->keys[v->n]);
					return jfail(jp, "expected ':' after a key");
				}
				jp->p++;
			}
			if (jvalue(jp, &v->items[v->n], depth + 1) < 0) {
				if (obj)
					free(v->keys[v->n]);
				return -1;
			}
			v->n++;
			jskip(jp);
			if (*jp->p == ',') {
				jp->p++;
				continue;
			}
			if (*jp->p == (obj ? '}' : ']')) {
				jp->p++;
				return 0;
			}
			return jfail(jp, obj ? "expected ',' or '}'" : "expected ',' or ']'");
		}
	}
	if (c == '"') {
		v->t = J_STR;
		return jstring(jp, &v->str);
	}
	if (!strncmp(jp->p, "true", 4) || !strncmp(jp->p, "false", 5)) {
		v->t = J_BOOL;
		v->num = *jp->p == 't';
		jp->p += *jp->p == 't' ? 4 : 5;
		return 0;
	}
	if (!strncmp(jp->p, "null", 4)) {
		jp->p += 4;
		return 0;
	}
	char *end;
	errno = 0;
	v->num = strtod(jp->p, &end);
	if (end == jp->p || errno)
		return jfail(jp, "expected a value");
	v->t = J_NUM;
	jp->p = end;
	return 0;
}

static const struct jval *jget(const struct jval *o, const char *key)
{
	if (!o || o->t != J_OBJ)
		return NULL;
	for (int i = 0; i < o->n; i++)
		if (!strcmp(o->keys[i], key))
			return &o->items[i];
	return NULL;
}

static const char *jstr(const struct jval *o, const char *key)
{
	const struct jval *v = jget(o, key);
	return v && v->t == J_STR ? v->str : NULL;
}

/* ---- compare -------------------------------------------------------------- */
struct bfile {
	const char *path;
	struct jval root;
	const struct jval *results;
	char label[128];
	char tag[48]; /* column name: the arch, "#k" added when two files share it */
};

static int load(struct bfile *f, char *err, size_t len)
{
	FILE *fp = fopen(f->path, "rb");
	if (!fp) {
		snprintf(err, len, "%s: %s", f->path, strerror(errno));
		return -1;
	}
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);
	for (;;) {
		if (!buf) {
			fclose(fp);
			snprintf(err, len, "%s: out of memory", f->path);
			return -1;
		}
		n += fread(buf + n, 1, cap - n - 1, fp);
		if (n < cap - 1)
			break;
		char *nb = realloc(buf, cap *= 2);
		if (!nb)
			free(buf);
		buf = nb;
	}
	fclose(fp);
	buf[n] = 0;
	struct jparser jp = { .s = buf, .p = buf, .file = f->path };
	int r = jvalue(&jp, &f->root, 0);
	if (r == 0) {
		jskip(&jp);
		if (*jp.p)
			r = jfail(&jp, "extra data after the JSON value");
	}
	free(buf);
	if (r < 0) {
		snprintf(err, len, "%s (not a complete JSON file; re-run hpm bench run --json)", jp.err);
		jfree(&f->root);
		return -1;
	}
	const char *fmt = jstr(&f->root, "format");
	const struct jval *ver = jget(&f->root, "version");
	if (!fmt || strcmp(fmt, "hpm-bench") || !ver || ver->t != J_NUM) {
		snprintf(err, len, "%s: not an hpm-bench file (no \"format\":\"hpm-bench\"); "
				   "make one with 'hpm bench run --json FILE'",
			 f->path);
		return -1;
	}
	if (ver->num != 1) {
		snprintf(err, len, "%s: hpm-bench version %g; this hpm reads version 1", f->path,
			 ver->num);
		return -1;
	}
	f->results = jget(&f->root, "results");
	if (!f->results || f->results->t != J_ARR) {
		snprintf(err, len, "%s: no \"results\" array", f->path);
		return -1;
	}
	const struct jval *m = jget(&f->root, "machine");
	const char *arch = jstr(m, "arch"), *host = jstr(m, "hostname");
	snprintf(f->label, sizeof(f->label), "%s@%s", arch ? arch : "?", host ? host : "?");
	snprintf(f->tag, sizeof(f->tag), "%.30s", arch ? arch : "?");
	return 0;
}

/* the metric's median in result r, or NAN */
static double metric_of(const struct jval *r, const char *metric)
{
	const struct jval *v;
	if (!strcmp(metric, "gbps")) {
		v = jget(r, "gbps");
		return v && v->t == J_NUM ? v->num : NAN;
	}
	if (!strcmp(metric, "ns") || !strcmp(metric, "ticks"))
		v = jget(r, metric);
	else
		v = jget(jget(r, "counters"), metric);
	const struct jval *med = jget(v, "median");
	return med && med->t == J_NUM ? med->num : NAN;
}

static const struct jval *find_case(const struct jval *results, const char *name)
{
	for (int i = 0; i < results->n; i++) {
		const char *c = jstr(&results->items[i], "case");
		if (c && !strcmp(c, name))
			return &results->items[i];
	}
	return NULL;
}

int bench_compare(int argc, char **argv)
{
	const char *metric = "ns";
	bool md = false;
	static const struct option lo[] = { { "metric", required_argument, 0, 'm' },
					    { "markdown", no_argument, 0, 'M' },
					    { "help", no_argument, 0, 'h' },
					    { 0, 0, 0, 0 } };
	optind = 1;
	int c;
	while ((c = getopt_long(argc, argv, "m:h", lo, NULL)) != -1) {
		if (c == 'm')
			metric = optarg;
		else if (c == 'M')
			md = true;
		else if (c == 'h') {
			printf("usage: hpm bench compare [--metric ns|ticks|gbps|EVENT] [--markdown] "
			       "REF.json OTHER.json...\n"
			       "Per case: the median in each file and OTHER/REF ratios; per benchmark "
			       "the geometric mean of the ratios.\n"
			       "example: hpm bench compare --markdown arm.json riscv.json\n");
			return 0;
		} else {
			fprintf(stderr, "hpm bench compare: see 'hpm bench compare --help'\n");
			return 2;
		}
	}
	int nf = argc - optind;
	if (nf < 2) {
		fprintf(stderr, "hpm bench compare: give at least two result files (REF first)\n");
		return 2;
	}
	struct bfile *f = calloc((size_t)nf, sizeof(*f));
	if (!f)
		return 1;
	char err[512];
	for (int i = 0; i < nf; i++) {
		f[i].path = argv[optind + i];
		if (load(&f[i], err, sizeof(err)) < 0) {
			fprintf(stderr, "hpm bench compare: %s\n", err);
			for (int k = 0; k <= i; k++)
				jfree(&f[k].root);
			free(f);
			return 1;
		}
	}
	for (int i = 0; i < nf; i++)
		for (int k = 0; k < nf; k++)
			if (k != i && !strcmp(f[k].tag, f[i].tag)) {
				char t[48];
				snprintf(t, sizeof(t), "%.30s#%d", f[i].tag, (i + 1) % 1000);
				memcpy(f[i].tag, t, sizeof(t));
				break;
			}
	const char *sep = md ? " | " : "  ";
	if (md) {
		printf("| case");
		for (int i = 0; i < nf; i++)
			printf(" | %s", f[i].tag);
		for (int i = 1; i < nf; i++)
			printf(" | %s/%s", f[i].tag, f[0].tag);
		printf(" |\n|---");
		for (int i = 0; i < 2 * nf - 1; i++)
			printf("|---:");
		printf("|\n");
	} else {
		for (int i = 0; i < nf; i++)
			printf("%-16s %s (%s)%s\n", f[i].tag, f[i].label, f[i].path, i ? "" : "  reference");
		printf("metric: %s (median per unit)\n\n%-44s", metric, "case");
		for (int i = 0; i < nf; i++)
			printf("%s%12.12s", sep, f[i].tag);
		for (int i = 1; i < nf; i++) {
			char t[96];
			snprintf(t, sizeof(t), "%s/%s", f[i].tag, f[0].tag);
			printf("%s%16.16s", sep, t);
		}
		printf("\n");
	}
	/* per benchmark: sum of log ratios for the geometric mean */
	struct gm {
		char bench[32];
		double sumlog[8];
		int n[8];
	} gms[32];
	int ngm = 0, only_some = 0, no_metric = 0, shown = 0;
	const struct jval *ref = f[0].results;
	for (int i = 0; i < ref->n; i++) {
		const char *name = jstr(&ref->items[i], "case");
		const char *bench = jstr(&ref->items[i], "bench");
		if (!name || !bench)
			continue;
		double v[16];
		int have = 1;
		for (int k = 0; k < nf && k < 16; k++) {
			const struct jval *r = k ? find_case(f[k].results, name) : &ref->items[i];
			if (!r) {
				have = 0;
				break;
			}
			v[k] = metric_of(r, metric);
		}
		if (!have) {
			only_some++;
			continue;
		}
		bool nan = false;
		for (int k = 0; k < nf && k < 16; k++)
			nan |= isnan(v[k]);
		if (nan) {
			no_metric++;
			continue;
		}
		shown++;
		printf(md ? "| %s" : "%-44s", name);
		for (int k = 0; k < nf && k < 16; k++)
			printf(md ? "%s%.4g" : "%s%12.4g", sep, v[k]);
		struct gm *g = NULL;
		for (int k = 0; k < ngm; k++)
			if (!strcmp(gms[k].bench, bench))
				g = &gms[k];
		if (!g && ngm < 32) {
			g = &gms[ngm++];
			memset(g, 0, sizeof(*g));
			snprintf(g->bench, sizeof(g->bench), "%s", bench);
		}
		for (int k = 1; k < nf && k < 9; k++) {
			double ratio = v[0] > 0 ? v[k] / v[0] : NAN;
			printf(md ? "%s%.2f" : "%s%16.2f", sep, ratio);
			if (g && ratio > 0) {
				g->sumlog[k - 1] += log(ratio);
				g->n[k - 1]++;
			}
		}
		printf(md ? " |\n" : "\n");
	}
	printf(md ? "\n| geometric mean of ratios" : "\ngeometric mean of ratios per benchmark:\n");
	if (md) {
		for (int k = 1; k < nf; k++)
			printf(" | %s/%s", f[k].tag, f[0].tag);
		printf(" |\n|---");
		for (int k = 1; k < nf; k++)
			printf("|---:");
		printf("|\n");
	}
	for (int g = 0; g < ngm; g++) {
		printf(md ? "| %s" : "  %-42s", gms[g].bench);
		if (!md)
			for (int k = 0; k < nf; k++)
				printf("%s%12s", sep, "");
		for (int k = 1; k < nf && k < 9; k++)
			printf(md ? "%s%.2f" : "%s%16.2f", sep,
			       gms[g].n[k - 1] ? exp(gms[g].sumlog[k - 1] / gms[g].n[k - 1]) : NAN);
		printf(md ? " |\n" : "\n");
	}
	int extra = 0; /* cases only in the other files */
	for (int k = 1; k < nf; k++)
		for (int i = 0; i < f[k].results->n; i++) {
			const char *name = jstr(&f[k].results->items[i], "case");
			if (name && !find_case(ref, name))
				extra++;
		}
	if (only_some || extra || no_metric)
		fprintf(stderr,
			"hpm bench compare: %d cases compared; skipped %d cases missing from some "
			"files, %d only in the others, %d without '%s'\n",
			shown, only_some, extra, no_metric, metric);
	for (int i = 0; i < nf; i++)
		jfree(&f[i].root);
	free(f);
	return shown ? 0 : 1;
}
