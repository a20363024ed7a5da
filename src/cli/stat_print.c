/* SPDX-License-Identifier: MIT */
/*
 * hpm stat output: perf's text layout (plus the read path of each count),
 * perf's CSV fields (plus the read path), and one JSON document (format
 * hpm-stat v1, docs/formats/hpm-json.md). Intervals (-I) print as they come
 * in text and CSV, like perf; JSON collects them into the document.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "stat.h"

static bool is_msec(const char *name)
{
	return !strncmp(name, "task-clock", 10) || !strncmp(name, "cpu-clock", 9);
}

static const char *path_name(int p)
{
	return p == HPM_READ_MMAP ? "mmap" : p == HPM_READ_SYSCALL ? "read" : "none";
}

/* Sum of the bin's units: the latest read, or what changed since the last one. */
void stat_sum(struct stat_state *st, const struct bin *b, bool delta, struct hpm_value *out)
{
	memset(out, 0, sizeof(*out) * (size_t)st->nev);
	for (int k = 0; k < b->nunits; k++) {
		struct unit *u = &st->units[b->units[k]];
		for (int i = 0; i < st->nev; i++) {
			struct hpm_value *n = &u->now[i], *p = &u->prev[i];
			uint64_t raw = n->raw - (delta ? p->raw : 0);
			uint64_t en = n->enabled - (delta ? p->enabled : 0);
			uint64_t run = n->running - (delta ? p->running : 0);
			out[i].raw += raw;
			out[i].enabled += en;
			out[i].running += run;
			out[i].scaled += delta ? hpm_scale(raw, en, run) : n->scaled;
			out[i].path = n->path;
		}
	}
}

/* perf's title: 'cmd args', process id '1,2', thread id '3', 'system wide',
 * 'CPU(s) 0-1' (quotes as perf places them, or none for JSON) */
const char *stat_target_title(struct stat_opts *o, char *buf, size_t len, bool quoted)
{
	const char *q = quoted ? "'" : "";
	char what[512] = "";
	if (o->npids || o->ntids) {
		pid_t *v = o->npids ? o->pids : o->tids;
		int n = o->npids ? o->npids : o->ntids;
		for (int i = 0; i < n; i++) {
			size_t l = strlen(what);
			snprintf(what + l, sizeof(what) - l, "%s%d", i ? "," : "", (int)v[i]);
		}
		snprintf(buf, len, "%s id '%s'", o->npids ? "process" : "thread", what);
		return buf;
	}
	if (o->all_cpus)
		snprintf(what, sizeof(what), "system wide");
	else if (o->ncpus)
		snprintf(what, sizeof(what), "CPU(s) %s", o->cpu_arg);
	else
		for (char **a = o->cmd; a && *a; a++) {
			size_t l = strlen(what);
			snprintf(what + l, sizeof(what) - l, "%s%s", a == o->cmd ? "" : " ", *a);
		}
	snprintf(buf, len, "%s%s%s", q, what, q);
	return buf;
}

/* "  1,234,567" or "1234567" (--no-big-num), or msec with two decimals */
static void fmt_count(char *buf, size_t len, const char *name, double v, bool big)
{
	char num[64];
	if (is_msec(name))
		snprintf(buf, len, "%18.2f msec", v / 1e6);
	else if (big)
		snprintf(buf, len, "%18s     ", thousands(v, num, sizeof(num)));
	else
		snprintf(buf, len, "%18.0f     ", v);
}

/* The label column of the aggregation modes, perf's widths. */
static void fmt_label(char *buf, size_t len, struct stat_opts *o, const struct bin *b, bool csv,
		      const char *sep)
{
	buf[0] = 0;
	/* the widths of perf 6.1's text: CPU%-7d, S%d-D%d-C%-8d and S%-5d then %4d units, and
	 * %16s-%-8d for comm-tid, each followed by one space (the count's column is then %18s) */
	const char *cut;
	switch (o->aggr) {
	case AGGR_GLOBAL: break;
	case AGGR_CPU: snprintf(buf, len, csv ? "%s%s" : "%-10s ", b->label, csv ? sep : ""); break;
	case AGGR_CORE:
	case AGGR_SOCKET:
		if (csv) {
			snprintf(buf, len, "%s%s%d%s", b->label, sep, b->nunits, sep);
			break;
		}
		cut = o->aggr == AGGR_CORE ? strrchr(b->label, 'C') : b->label;
		if (!cut) /* not S..-D..-C..: as it is */
			cut = b->label + strlen(b->label) - 1;
		snprintf(buf, len, "%.*s%-*s %4d ", (int)(cut - b->label + 1), b->label,
			 o->aggr == AGGR_CORE ? 8 : 5, cut + 1, b->nunits);
		break;
	case AGGR_THREAD:
		cut = strrchr(b->label, '-');
		if (csv)
			snprintf(buf, len, "%s%s", b->label, sep);
		else if (cut)
			snprintf(buf, len, "%16.*s-%-8s ", (int)(cut - b->label), b->label, cut + 1);
		else
			snprintf(buf, len, "%25s ", b->label);
		break;
	}
}

/* perf's <not counted>: the event never sat on a counter (its task did not
 * run while counting, or the PMU had no room for it) */
static bool never_ran(const struct hpm_value *v, bool delta)
{
	(void)delta;
	return !v->running;
}

/* One CSV line (perf's fields + the read path). noise >= 0 (-r): perf's
 * "x.xx%" field after the event name, on every row. */
static void csv_row(FILE *f, struct stat_opts *o, const char *prefix, const struct row *r,
		    const struct hpm_value *v, bool delta, double noise)
{
	const char *s = o->sep;
	bool msec = is_msec(r->name);
	char nf[48] = "";
	if (noise >= 0)
		snprintf(nf, sizeof(nf), "%s%.2f%%", s, noise);
	if (r->state == ROW_NOT_SUPPORTED) {
		fprintf(f, "%s<not supported>%s%s%s%s%s%s0%s100.00%s%s%snone\n", prefix, s,
			msec ? "msec" : "", s, r->name, nf, s, s, s, s, s);
		return;
	}
	if (r->state == ROW_NOT_COUNTED || never_ran(v, delta)) {
		fprintf(f, "%s<not counted>%s%s%s%s%s%s0%s100.00%s%s%s%s\n", prefix, s,
			msec ? "msec" : "", s, r->name, nf, s, s, s, s, s,
			r->state == ROW_NOT_COUNTED ? "none" : path_name(v->path));
		return;
	}
	if (msec)
		fprintf(f, "%s%.2f%smsec%s%s%s", prefix, v->scaled / 1e6, s, s, r->name, nf);
	else
		fprintf(f, "%s%.0f%s%s%s%s", prefix, v->scaled, s, s, r->name, nf);
	fprintf(f, "%s%llu%s%.2f%s%s%s%s\n", s, (unsigned long long)v->running, s,
		v->enabled ? 100.0 * (double)v->running / (double)v->enabled : 100.0, s, s, s,
		path_name(v->path));
}

/* perf stat -j's key of one bin, before the counter fields */
static void perf_json_key(FILE *f, struct stat_opts *o, const struct bin *b)
{
	switch (o->aggr) {
	case AGGR_GLOBAL: break;
	case AGGR_CPU: fprintf(f, "\"cpu\" : \"%s\", ", b->label + 3); break; /* "CPU<n>" */
	case AGGR_CORE:
	case AGGR_SOCKET:
		fprintf(f, "\"%s\" : ", o->aggr == AGGR_CORE ? "core" : "socket");
		json_string(f, b->label);
		fprintf(f, ", \"aggregate-number\" : %d, ", b->nunits);
		break;
	case AGGR_THREAD:
		fprintf(f, "\"thread\" : ");
		json_string(f, b->label);
		fprintf(f, ", ");
		break;
	}
}

/* One line of perf stat -j: the same fields in perf's order (its derived
 * "metric-value"/"metric-unit" are not computed; -M metrics are lines of their own).
 * interval < 0: none; variance < 0: none (-r). */
static void perf_json_row(FILE *f, struct stat_opts *o, double interval, const struct bin *b,
			  const struct row *r, const struct hpm_value *v, bool delta, double variance)
{
	bool msec = is_msec(r->name);
	fputc('{', f);
	if (interval >= 0)
		fprintf(f, "\"interval\" : %.9f, ", interval);
	perf_json_key(f, o, b);
	if (r->state == ROW_NOT_SUPPORTED)
		fprintf(f, "\"counter-value\" : \"<not supported>\", ");
	else if (r->state == ROW_NOT_COUNTED || never_ran(v, delta))
		fprintf(f, "\"counter-value\" : \"<not counted>\", ");
	else
		fprintf(f, "\"counter-value\" : \"%f\", ", msec ? v->scaled / 1e6 : v->scaled);
	fprintf(f, "\"unit\" : \"%s\", \"event\" : ", msec ? "msec" : "");
	json_string(f, r->name);
	if (variance >= 0)
		fprintf(f, ", \"variance\" : %.2f", variance);
	bool ran = r->state == ROW_COUNTED && !never_ran(v, delta);
	fprintf(f, ", \"event-runtime\" : %llu, \"pcnt-running\" : %.2f}\n",
		ran ? (unsigned long long)v->running : 0ULL,
		ran && v->enabled ? 100.0 * (double)v->running / (double)v->enabled : 100.0);
}

static void text_row(FILE *f, struct stat_opts *o, const char *prefix, const struct row *r,
		     const struct hpm_value *v, bool delta, const char *extra)
{
	char num[80];
	if (r->state == ROW_NOT_SUPPORTED) {
		fprintf(f, "%s%18s %s %-28s\n", prefix, "<not supported>",
			is_msec(r->name) ? "msec" : "    ", r->name);
		return;
	}
	if (r->state == ROW_NOT_COUNTED || never_ran(v, delta)) {
		fprintf(f, "%s%18s %s %-28s\n", prefix, "<not counted>",
			is_msec(r->name) ? "msec" : "    ", r->name);
		return;
	}
	fmt_count(num, sizeof(num), r->name, v->scaled, o->big_num);
	fprintf(f, "%s%s %-28s%s", prefix, num, r->name, extra ? extra : "");
	if (!delta && v->running < v->enabled)
		fprintf(f, " (%.2f%% scaled)", 100.0 * (double)v->running / (double)v->enabled);
	fprintf(f, "  [%s]\n", path_name(v->path));
}

static void interval_header(FILE *f, struct stat_opts *o)
{
	static const char *const hdr[] = {
		[AGGR_GLOBAL] = "#           time             counts unit events\n",
		[AGGR_CPU] = "#           time CPU                  counts unit events\n",
		[AGGR_CORE] = "#           time core         cpus             counts unit events\n",
		[AGGR_SOCKET] = "#           time socket       cpus             counts unit events\n",
		[AGGR_THREAD] = "#           time                 comm-pid             counts unit "
				"events\n",
	};
	fputs(hdr[o->aggr], f);
}

/* Bins in print order; with --per-thread -a, only threads that did anything. */
static bool bin_shown(struct stat_state *st, struct stat_opts *o, struct hpm_value *v)
{
	if (o->aggr != AGGR_THREAD || !o->all_cpus)
		return true;
	for (int i = 0; i < st->nev; i++)
		if (v[i].raw)
			return true;
	return false;
}

static int json_grow(struct stat_state *st)
{
	if (st->nint < st->intcap)
		return 0;
	int cap = st->intcap ? st->intcap * 2 : 64;
	size_t per = (size_t)st->nbins * (size_t)st->nev * 3;
	double *nv = realloc(st->ivals, sizeof(double) * per * (size_t)cap);
	double *nt = realloc(st->itimes, sizeof(double) * (size_t)cap);
	if (nv)
		st->ivals = nv;
	if (nt)
		st->itimes = nt;
	if (!nv || !nt)
		return -1;
	st->intcap = cap;
	return 0;
}

void stat_print_interval(struct stat_state *st, struct stat_opts *o, double t)
{
	struct hpm_value *v = calloc((size_t)st->nev + 1, sizeof(*v));
	if (!v)
		return;
	FILE *f = st->out;
	if (o->json) {
		if (json_grow(st) == 0) {
			size_t per = (size_t)st->nbins * (size_t)st->nev * 3;
			double *dst = st->ivals + per * (size_t)st->nint;
			st->itimes[st->nint] = t;
			for (int b = 0; b < st->nbins; b++) {
				stat_sum(st, &st->bins[b], true, v);
				for (int i = 0; i < st->nev; i++) {
					double *d = dst + ((size_t)b * (size_t)st->nev + (size_t)i) * 3;
					d[0] = v[i].scaled;
					d[1] = (double)v[i].raw;
					d[2] = (double)v[i].running;
				}
			}
			st->nint++;
		}
		free(v);
		return;
	}
	/* perf's order: per thread, core or socket, each bin's events; otherwise
	 * (-A) each event's CPUs, as in the final report */
	struct hpm_value *all = calloc((size_t)st->nbins * (size_t)st->nev + 1, sizeof(*all));
	bool *shown = calloc((size_t)st->nbins + 1, sizeof(bool));
	if (!all || !shown) {
		free(all);
		free(shown);
		free(v);
		return;
	}
	for (int b = 0; b < st->nbins; b++) {
		stat_sum(st, &st->bins[b], true, all + (size_t)b * (size_t)st->nev);
		shown[b] = bin_shown(st, o, all + (size_t)b * (size_t)st->nev);
	}
	bool thread_major = o->aggr == AGGR_THREAD || o->aggr == AGGR_CORE || o->aggr == AGGR_SOCKET;
	int outer = thread_major ? st->nbins : st->nrows, inner = thread_major ? st->nrows : st->nbins;
	if (!o->perf_json && !o->sep && !st->header_done) {
		interval_header(f, o);
		st->header_done = true;
	}
	char ts[64], label[96], prefix[192];
	snprintf(ts, sizeof(ts), "%16.9f", t);
	for (int a = 0; a < outer; a++)
		for (int c = 0; c < inner; c++) {
			int b = thread_major ? a : c, r = thread_major ? c : a;
			if (!shown[b])
				continue;
			const struct row *row = &st->rows[r];
			struct hpm_value none = { 0 };
			const struct hpm_value *rv =
				row->idx >= 0 ? &all[(size_t)b * (size_t)st->nev + (size_t)row->idx]
					      : &none;
			if (o->perf_json) {
				perf_json_row(f, o, t, &st->bins[b], row, rv, true, -1);
				continue;
			}
			fmt_label(label, sizeof(label), o, &st->bins[b], o->sep != NULL,
				  o->sep ? o->sep : "");
			if (o->sep) {
				snprintf(prefix, sizeof(prefix), "%s%s%s", ts, o->sep, label);
				csv_row(f, o, prefix, row, rv, true, -1);
			} else {
				snprintf(prefix, sizeof(prefix), "%s %s", ts, label);
				text_row(f, o, prefix, row, rv, true, NULL);
			}
		}
	fflush(f);
	free(all);
	free(shown);
	free(v);
}

static struct stat_state *order_st;

static int cmp_bin(const void *a, const void *b)
{
	double x = order_st->bin_total[*(const int *)a][0].scaled;
	double y = order_st->bin_total[*(const int *)b][0].scaled;
	return x < y ? 1 : x > y ? -1 : *(const int *)a - *(const int *)b;
}

/* Print order of the bins: as counted, except the threads of the whole
 * system (--per-thread -a), which perf lists busiest first. */
static int *bin_order(struct stat_state *st, struct stat_opts *o)
{
	int *order = malloc(sizeof(int) * (size_t)(st->nbins + 1));
	if (!order)
		return NULL;
	for (int b = 0; b < st->nbins; b++)
		order[b] = b;
	if (o->aggr == AGGR_THREAD && o->all_cpus && st->nev) {
		order_st = st;
		qsort(order, (size_t)st->nbins, sizeof(int), cmp_bin);
	}
	return order;
}

/* stddev of the mean, relative to the mean, in percent (perf's "+-") */
static double rel_err(double sum, double sumsq, int n)
{
	if (n < 2 || sum == 0)
		return 0;
	double mean = sum / n, var = (sumsq - n * mean * mean) / (n - 1);
	if (var < 0)
		var = 0;
	return 100.0 * sqrt(var / n) / fabs(mean);
}

/* -r N: perf's noise of a row, the stddev of the mean over the runs in percent
 * of the mean (0 for a row without a count); -1 without -r. */
static double repeat_noise(struct stat_state *st, struct stat_opts *o, const struct row *row)
{
	if (o->repeat < 2 || st->nbins != 1)
		return -1;
	return row->idx >= 0 ? rel_err(st->sum[row->idx], st->sumsq[row->idx], st->runs) : 0;
}

/* Values of one bin for the final report: the mean over runs (counts,
 * running and enabled times, as perf) for the global aggregate, the last
 * run's sums otherwise. */
static void final_values(struct stat_state *st, int b, struct hpm_value *v)
{
	memcpy(v, st->bin_total[b], sizeof(*v) * (size_t)st->nev);
	if (st->nbins == 1 && st->runs > 1)
		for (int i = 0; i < st->nev; i++) {
			v[i].scaled = st->sum[i] / st->runs;
			v[i].running = (uint64_t)(st->runsum[i] / st->runs);
			v[i].enabled = (uint64_t)(st->ensum[i] / st->runs);
		}
}

/* The reason of each <not supported> row, once per distinct reason: events
 * refused for the same cause are listed together. */
static void not_supported_notes(FILE *f, struct stat_state *st)
{
	bool *done = calloc((size_t)st->nrows + 1, sizeof(bool));
	if (!done)
		return;
	for (int r = 0; r < st->nrows; r++) {
		if (st->rows[r].state != ROW_NOT_SUPPORTED || done[r])
			continue;
		fprintf(f, " not supported: %s", st->rows[r].why);
		int also = 0;
		for (int k = r + 1; k < st->nrows; k++) {
			const struct row *a = &st->rows[r], *b = &st->rows[k];
			if (b->state != ROW_NOT_SUPPORTED || done[k])
				continue;
			/* same text once the event names are swapped */
			char *pos = strstr(b->why, b->name), tmp[600];
			if (!pos)
				continue;
			snprintf(tmp, sizeof(tmp), "%.*s%s%s", (int)(pos - b->why), b->why, a->name,
				 pos + strlen(b->name));
			if (strcmp(tmp, a->why))
				continue;
			done[k] = true;
			fprintf(f, "%s%s", also++ ? ", " : " (also: ", b->name);
		}
		fprintf(f, "%s\n", also ? ")" : "");
	}
	free(done);
}

/* One printed line of a final report: a bin's label (CSV: with its separator)
 * and one row's value in that bin (a zero value for rows without an event). */
typedef void (*cell_fn)(FILE *f, struct stat_state *st, struct stat_opts *o, const char *label,
			const struct bin *b, const struct row *row, const struct hpm_value *v);

/* The cells of the final report in perf's order: per thread, core or socket,
 * each bin's events (perf's print_aggr walks the aggregation ids, then the
 * counters); otherwise (-A, one bin) each event's bins. The text and CSV
 * reports differ only in how one cell is printed. -1 when out of memory
 * (nothing printed). */
static int report_cells(FILE *f, struct stat_state *st, struct stat_opts *o, bool csv, cell_fn fn)
{
	struct hpm_value *v = calloc((size_t)st->nev + 1, sizeof(*v));
	if (!v)
		return -1;
	char label[96];
	bool thread_major = o->aggr == AGGR_THREAD || o->aggr == AGGR_CORE || o->aggr == AGGR_SOCKET;
	int outer = thread_major ? st->nbins : st->nrows, inner = thread_major ? st->nrows : st->nbins;
	int *order = bin_order(st, o);
	if (!order) {
		free(v);
		return -1;
	}
	for (int a = 0; a < outer; a++)
		for (int c = 0; c < inner; c++) {
			int b = order[thread_major ? a : c], r = thread_major ? c : a;
			const struct row *row = &st->rows[r];
			final_values(st, b, v);
			if (!bin_shown(st, o, v))
				continue;
			fmt_label(label, sizeof(label), o, &st->bins[b], csv, csv ? o->sep : "");
			struct hpm_value none = { 0 };
			fn(f, st, o, label, &st->bins[b], row, row->idx >= 0 ? &v[row->idx] : &none);
		}
	free(order);
	free(v);
	return 0;
}

static void text_cell(FILE *f, struct stat_state *st, struct stat_opts *o, const char *label,
		      const struct bin *b, const struct row *row, const struct hpm_value *rv)
{
	struct hpm_evset *set = st->units[0].set;
	char extra[48] = "";
	double noise = repeat_noise(st, o, row);
	if (noise > 0) /* perf prints none when the runs agree */
		snprintf(extra, sizeof(extra), "  ( +-%6.2f%% )", noise);
	if (row->idx >= 0 && !rv->running && rv->enabled) {
		int g = hpm_evset__group_of(set, row->idx), members = 0;
		for (int k = 0; k < st->nev; k++)
			members += hpm_evset__group_of(set, k) == g;
		fprintf(f, "%s%18s      %-28s (never scheduled: %s)\n", label, "<not counted>",
			row->name,
			members > 1 ? "the PMU could not fit its group; try --group-max 1"
				    : "the kernel accepted it but the PMU never counted it");
		return;
	}
	text_row(f, o, label, row, rv, false, extra);
}

static void csv_cell(FILE *f, struct stat_state *st, struct stat_opts *o, const char *label,
		     const struct bin *b, const struct row *row, const struct hpm_value *rv)
{
	csv_row(f, o, label, row, rv, false, repeat_noise(st, o, row));
}

static void perf_json_cell(FILE *f, struct stat_state *st, struct stat_opts *o,
			   const char *label, const struct bin *b, const struct row *row,
			   const struct hpm_value *rv)
{
	perf_json_row(f, o, -1, b, row, rv, false, repeat_noise(st, o, row));
}

static void report_perf_json(FILE *f, struct stat_state *st, struct stat_opts *o)
{
	if (report_cells(f, st, o, true, perf_json_cell))
		return;
	struct hpm_evset *set = st->units[0].set;
	int m = hpm_evset__nr_metrics(set);
	for (int i = 0; i < m; i++) {
		const char *name, *unit;
		hpm_evset__metric(set, i, st->total, &name, &unit, NULL);
		if (st->mvalid[i] != st->runs)
			continue;
		fprintf(f, "{\"metric-value\" : \"%f\", \"metric-unit\" : ", st->msum[i] / st->runs);
		json_string(f, name);
		fprintf(f, "}\n");
	}
}

static void report_text(FILE *f, struct stat_state *st, struct stat_opts *o)
{
	char title[600];
	stat_target_title(o, title, sizeof(title), true);
	char runs[32] = "";
	if (st->runs > 1)
		snprintf(runs, sizeof(runs), " (%d runs)", st->runs);
	fprintf(f, "\n Performance counter stats for %s%s:\n\n", title, runs);
	if (report_cells(f, st, o, false, text_cell))
		return;
	struct hpm_evset *set = st->units[0].set;
	int m = hpm_evset__nr_metrics(set);
	if (m)
		fprintf(f, "\n");
	for (int i = 0; i < m; i++) {
		const char *name, *unit;
		int r = hpm_evset__metric(set, i, st->total, &name, &unit, NULL);
		if (st->mvalid[i] == st->runs)
			fprintf(f, " %18.3f %-5s %-28s\n", st->msum[i] / st->runs,
				strcmp(unit, "-") ? unit : "", name);
		else if (r == -ENODATA || r == -EOPNOTSUPP) /* missing here, not a count */
			fprintf(f, " %18s %-5s %-28s (%s)\n", "n/a", "", name,
				hpm_ctx__last_error(st->ctx));
		else
			fprintf(f, " %18s %-5s %-28s (an input never counted)\n", "n/a", "", name);
	}
	double el = st->elapsed_sum / st->runs;
	if (o->repeat > 1) {
		/* perf's: the mean +- the stddev of the mean, with two digits more than
		 * the stddev's first significant one, and the stddev in percent */
		double pct = rel_err(st->elapsed_sum, st->elapsed_sumsq, st->runs);
		double sd = pct * el / 100;
		int prec = sd > 1 ? 2 : sd > 0 ? (int)lround(ceil(-log10(sd))) + 2 : 2;
		if (prec > 15)
			prec = 15;
		fprintf(f, "\n %17.*f +- %.*f seconds time elapsed", prec, el, prec, sd);
		if (pct > 0)
			fprintf(f, "  ( +-%6.2f%% )", pct);
	} else
		fprintf(f, "\n %17.9f seconds time elapsed", el);
	/* perf adds the command's CPU time when it ran one command once */
	if (o->cmd && o->repeat <= 1 && !o->interval_ms && st->ru_known)
		fprintf(f, "\n\n %17.9f seconds user\n %17.9f seconds sys", st->ru_user, st->ru_sys);
	fprintf(f, "\n\n read path: [mmap] = user-space counter read, [read] = read(2)");
	char why[200];
	for (int i = 0; i < st->nev; i++)
		if (hpm_evset__read_path(set, i, why, sizeof(why)) == HPM_READ_SYSCALL &&
		    strstr(why, "kernel does not allow")) {
			fprintf(f, "; %s", why);
			break;
		}
	fprintf(f, "\n PMU table: %s (%s)\n", hpm_ctx__pmu(st->ctx) ? hpm_ctx__pmu(st->ctx) : "none",
		hpm_ctx__cpu_id(st->ctx));
	not_supported_notes(f, st);
	if (st->gone)
		fprintf(f, " not counted: %d thread%s that exited before hpm could attach to %s\n",
			st->gone, st->gone == 1 ? "" : "s", st->gone == 1 ? "it" : "them");
	char q[sizeof(st->quirks)];
	memcpy(q, st->quirks, sizeof(q));
	for (char *save, *l = strtok_r(q, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
		fprintf(f, " warning: %s\n", l);
	fprintf(f, "\n");
}

static void report_csv(FILE *f, struct stat_state *st, struct stat_opts *o)
{
	if (report_cells(f, st, o, true, csv_cell))
		return;
	struct hpm_evset *set = st->units[0].set;
	const char *s = o->sep;
	int m = hpm_evset__nr_metrics(set);
	for (int i = 0; i < m; i++) {
		const char *name, *unit;
		hpm_evset__metric(set, i, st->total, &name, &unit, NULL);
		if (st->mvalid[i] == st->runs)
			fprintf(f, "%s%s%s%s%s%.6f%s%s%s\n", s, s, s, s, s, st->msum[i] / st->runs, s,
				name, s);
		else
			fprintf(f, "%s%s%s%s%sn/a%s%s%s\n", s, s, s, s, s, s, name, s);
	}
	char q[sizeof(st->quirks)];
	memcpy(q, st->quirks, sizeof(q));
	for (char *save, *l = strtok_r(q, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
		fprintf(f, "# warning: %s\n", l);
	if (st->gone)
		fprintf(f, "# not counted: %d thread(s) that exited before hpm could attach\n",
			st->gone);
}

static void json_names(FILE *f, struct stat_state *st, enum row_state s)
{
	int n = 0;
	for (int r = 0; r < st->nrows; r++)
		if (st->rows[r].state == s) {
			fputs(n++ ? ", " : "", f);
			json_string(f, st->rows[r].name);
		}
}

static void json_ints(FILE *f, const int *v, int n)
{
	for (int i = 0; i < n; i++)
		fprintf(f, "%s%d", i ? ", " : "", v[i]);
}

static const char *const aggr_names[] = { "global", "cpu", "core", "socket", "thread" };

static void report_json(FILE *f, struct stat_state *st, struct stat_opts *o)
{
	struct hpm_evset *set = st->units[0].set;
	char title[600];
	fprintf(f, "{\n  \"format\": \"hpm-stat\",\n  \"version\": 1,\n  \"command\": [");
	for (char **a = o->cmd; a && *a; a++) {
		fputs(a == o->cmd ? "" : ", ", f);
		json_string(f, *a);
	}
	fprintf(f, "],\n  \"pid\": %d,\n  \"all_cpus\": %s,\n  \"title\": ",
		o->npids ? (int)o->pids[0] : 0, o->all_cpus ? "true" : "false");
	json_string(f, stat_target_title(o, title, sizeof(title), false));
	fprintf(f, ",\n  \"pids\": [");
	json_ints(f, (const int *)o->pids, o->npids);
	fprintf(f, "],\n  \"tids\": [");
	json_ints(f, (const int *)o->tids, o->ntids);
	fprintf(f, "],\n  \"cpus\": [");
	for (int u = 0; u < st->nunits && st->units[u].cpu >= 0; u++)
		fprintf(f, "%s%d", u ? ", " : "", st->units[u].cpu);
	fprintf(f, "],\n  \"aggregation\": \"%s\",\n  \"pmu\": ", aggr_names[o->aggr]);
	if (hpm_ctx__pmu(st->ctx))
		json_string(f, hpm_ctx__pmu(st->ctx));
	else
		fputs("null", f);
	fprintf(f, ",\n  \"cpu_id\": ");
	json_string(f, hpm_ctx__cpu_id(st->ctx));
	fprintf(f, ",\n  \"runs\": %d,\n  \"exit_status\": %d,\n  \"elapsed_s\": %.9f,\n", st->runs,
		st->status, st->elapsed_sum / st->runs);
	fprintf(f, "  \"events\": [");
	for (int i = 0; i < st->nev; i++) {
		struct hpm_value *v = &st->total[i];
		char why[200];
		hpm_evset__read_path(set, i, why, sizeof(why));
		fprintf(f, "%s\n    {\"name\": ", i ? "," : "");
		json_string(f, hpm_evset__name(set, i));
		fprintf(f, ", \"value\": %.1f, \"stddev_pct\": %.4f, \"raw\": %llu, "
			   "\"enabled_ns\": %llu, \"running_ns\": %llu, \"scaled\": %s, "
			   "\"group\": %d, \"read_path\": \"%s\", \"read_path_reason\": ",
			st->sum[i] / st->runs, rel_err(st->sum[i], st->sumsq[i], st->runs),
			(unsigned long long)v->raw, (unsigned long long)v->enabled,
			(unsigned long long)v->running, v->running < v->enabled ? "true" : "false",
			hpm_evset__group_of(set, i), path_name(v->path));
		json_string(f, why);
		fprintf(f, ", \"counted\": %s}", v->running ? "true" : "false");
	}
	fprintf(f, "%s],\n  \"not_supported\": [", st->nev ? "\n  " : "");
	json_names(f, st, ROW_NOT_SUPPORTED);
	fprintf(f, "],\n  \"not_counted\": [");
	json_names(f, st, ROW_NOT_COUNTED);
	fprintf(f, "],\n  \"not_supported_reasons\": [");
	int n = 0;
	for (int r = 0; r < st->nrows; r++)
		if (st->rows[r].state == ROW_NOT_SUPPORTED) {
			fputs(n++ ? ", " : "", f);
			json_string(f, st->rows[r].why);
		}
	fprintf(f, "],\n  \"threads_gone\": %d,\n  \"per\": [", st->gone);
	if (o->aggr != AGGR_GLOBAL) {
		struct hpm_value *v = st->total;
		for (int b = 0; b < st->nbins; b++) {
			v = st->bin_total[b];
			fprintf(f, "%s\n    {\"id\": ", b ? "," : "");
			json_string(f, st->bins[b].label);
			fprintf(f, ", \"units\": %d, \"events\": [", st->bins[b].nunits);
			for (int i = 0; i < st->nev; i++)
				fprintf(f, "%s{\"value\": %.1f, \"raw\": %llu, \"enabled_ns\": %llu, "
					   "\"running_ns\": %llu}",
					i ? ", " : "", v[i].scaled, (unsigned long long)v[i].raw,
					(unsigned long long)v[i].enabled, (unsigned long long)v[i].running);
			fprintf(f, "]}");
		}
		if (st->nbins)
			fprintf(f, "\n  ");
	}
	fprintf(f, "],\n  \"interval_ms\": %ld,\n  \"intervals\": [", o->interval_ms);
	size_t per = (size_t)st->nbins * (size_t)st->nev * 3;
	for (int k = 0; k < st->nint; k++) {
		fprintf(f, "%s\n    {\"time_s\": %.9f, \"per\": [", k ? "," : "", st->itimes[k]);
		for (int b = 0; b < st->nbins; b++) {
			fprintf(f, "%s{\"id\": ", b ? ", " : "");
			json_string(f, st->bins[b].label);
			fprintf(f, ", \"values\": [");
			for (int i = 0; i < st->nev; i++) {
				double *d = st->ivals + per * (size_t)k +
					    ((size_t)b * (size_t)st->nev + (size_t)i) * 3;
				if (d[2] > 0)
					fprintf(f, "%s%.1f", i ? ", " : "", d[0]);
				else
					fprintf(f, "%snull", i ? ", " : "");
			}
			fprintf(f, "]}");
		}
		fprintf(f, "]}");
	}
	fprintf(f, "%s],\n  \"quirks\": [", st->nint ? "\n  " : "");
	char q[sizeof(st->quirks)];
	memcpy(q, st->quirks, sizeof(q));
	int nq = 0;
	for (char *save, *l = strtok_r(q, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		fputs(nq++ ? ", " : "", f);
		json_string(f, l);
	}
	fprintf(f, "],\n  \"metrics\": [");
	int m = hpm_evset__nr_metrics(set);
	for (int i = 0; i < m; i++) {
		const char *name, *unit;
		hpm_evset__metric(set, i, st->total, &name, &unit, NULL);
		fprintf(f, "%s\n    {\"name\": ", i ? "," : "");
		json_string(f, name);
		fprintf(f, ", \"unit\": ");
		json_string(f, unit);
		if (st->mvalid[i] == st->runs)
			fprintf(f, ", \"value\": %.9g}", st->msum[i] / st->runs);
		else
			fprintf(f, ", \"value\": null}");
	}
	fprintf(f, "%s]\n}\n", m ? "\n  " : "");
}

void stat_report(FILE *f, struct stat_state *st, struct stat_opts *o)
{
	if (o->json)
		report_json(f, st, o);
	else if (o->perf_json)
		report_perf_json(f, st, o);
	else if (o->sep)
		report_csv(f, st, o);
	else
		report_text(f, st, o);
}
