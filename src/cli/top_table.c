/* SPDX-License-Identifier: MIT */
/* hpm top's table: filters (-K/-U/--comms/--pids/--dsos), the sort (period,
 * samples or a group member), the header line and the rows. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cli.h"
#include "top.h"

double top_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- table ---- */

static bool in_list(char **v, int n, const char *s)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(v[i], s))
			return true;
	return false;
}

static bool shown(struct top *tp, const struct entry *e)
{
	struct top_opts *o = tp->o;
	if ((o->hide_kernel && e->kernel) || (o->hide_user && !e->kernel))
		return false;
	if (o->ncomms && !in_list(o->comms, o->ncomms, e->comm))
		return false;
	if (o->ndsos && !in_list(o->dsos, o->ndsos, e->dso))
		return false;
	if (o->nfpids) {
		bool ok = false;
		for (int i = 0; i < o->nfpids; i++)
			ok |= o->fpids[i] == e->pid;
		if (!ok)
			return false;
	}
	return true;
}

static int sort_col; /* -1: samples, 0: period, k: member k */

static double sort_value(const struct entry *e)
{
	return sort_col < 0 ? (double)e->samples : e->member[sort_col];
}

static int cmp_entry(const void *a, const void *b)
{
	const struct entry *x = *(struct entry *const *)a, *y = *(struct entry *const *)b;
	double vx = sort_value(x), vy = sort_value(y);
	if (vx != vy)
		return vx < vy ? 1 : -1;
	return strcmp(x->key, y->key);
}

void top_print_table(struct top *tp, FILE *f, int width, long rows, bool final)
{
	struct top_opts *o = tp->o;
	size_t n = 0;
	for (int h = 0; h < ENTRY_HASH; h++)
		for (struct entry *e = tp->tab[h]; e; e = e->next)
			n += shown(tp, e);
	struct entry **v = malloc(sizeof(*v) * (n + 1));
	if (!v)
		return;
	n = 0;
	for (int h = 0; h < ENTRY_HASH; h++)
		for (struct entry *e = tp->tab[h]; e; e = e->next)
			if (shown(tp, e))
				v[n++] = e;
	qsort(v, n, sizeof(*v), cmp_entry);
	double now = top_now(), span = now - (o->zero ? tp->t_table : tp->t0);
	char num[32], where[96];
	if (o->npids || o->ntids)
		snprintf(where, sizeof(where), "%d thread%s", tp->nt, tp->nt == 1 ? "" : "s");
	else if (tp->t[0].pid > 0)
		snprintf(where, sizeof(where), "'%s'", o->cmd[0]);
	else
		snprintf(where, sizeof(where), "%s%d CPU%s", o->ncpus ? "" : "all ", tp->nt,
			 tp->nt == 1 ? "" : "s");
	char rate[48];
	const struct perf_event_attr *la = &tp->ev[0].attr;
	if (la->freq)
		snprintf(rate, sizeof(rate), "%llu Hz", (unsigned long long)la->sample_freq);
	else
		snprintf(rate, sizeof(rate), "every %llu", (unsigned long long)la->sample_period);
	fprintf(f, "hpm top: %s samples of %s (%s) on %s, %.2f s%s; kernel %.1f%%, lost %llu%s\n",
		thousands((double)tp->samples, num, sizeof(num)), tp->ev[0].name, rate, where, span,
		o->zero ? " (since the last table)" : "",
		tp->samples ? 100.0 * (double)tp->kernel_samples / (double)tp->samples : 0.0,
		(unsigned long long)tp->lost, final ? "; final" : "");
	if (!tp->ksyms && tp->kernel_samples)
		fprintf(f, "note: kernel addresses are hidden (kernel.kptr_restrict): kernel functions "
			   "show as addresses; run as root to name them\n");
	char line[1024];
	int l = snprintf(line, sizeof(line), "%9s %9s", "Overhead", "Samples");
	for (int j = 1; j < tp->nev; j++)
		l += snprintf(line + l, sizeof(line) - (size_t)l, " %14.14s", tp->ev[j].name);
	for (int k = 0; k < o->nkeys; k++) {
		static const char *const hdr[K_N] = { "Command", "Pid", "Tid", "Shared Object",
						      "Symbol", "Cpu" };
		static const int w[K_N] = { -16, 7, 7, -22, 0, 4 };
		if (w[o->keys[k]])
			l += snprintf(line + l, sizeof(line) - (size_t)l, "  %*s", w[o->keys[k]],
				      hdr[o->keys[k]]);
		else
			l += snprintf(line + l, sizeof(line) - (size_t)l, "  %s", hdr[o->keys[k]]);
	}
	fprintf(f, "%.*s\n", width, line);
	long shown_rows = 0;
	for (size_t i = 0; i < n && (rows <= 0 || shown_rows < rows); i++, shown_rows++) {
		struct entry *e = v[i];
		double pct = tp->period ? 100.0 * (double)e->period / (double)tp->period : 0;
		l = snprintf(line, sizeof(line), "%8.2f%% %9llu", pct, (unsigned long long)e->samples);
		for (int j = 1; j < tp->nev; j++)
			l += snprintf(line + l, sizeof(line) - (size_t)l, " %14s",
				      thousands(e->member[j], num, sizeof(num)));
		for (int k = 0; k < o->nkeys && l < (int)sizeof(line); k++) {
			switch (o->keys[k]) {
			case K_COMM: l += snprintf(line + l, sizeof(line) - (size_t)l, "  %-16s", e->comm); break;
			case K_PID: l += snprintf(line + l, sizeof(line) - (size_t)l, "  %7d", (int)e->pid); break;
			case K_TID: l += snprintf(line + l, sizeof(line) - (size_t)l, "  %7d", (int)e->tid); break;
			case K_DSO: l += snprintf(line + l, sizeof(line) - (size_t)l, "  %-22s", e->dso); break;
			case K_SYM:
				l += snprintf(line + l, sizeof(line) - (size_t)l, "  [%c] %s",
					      e->kernel ? 'k' : '.', e->sym);
				break;
			case K_CPU: l += snprintf(line + l, sizeof(line) - (size_t)l, "  %4d", e->cpu); break;
			default: break;
			}
		}
		if (l >= (int)sizeof(line))
			l = (int)sizeof(line) - 1;
		fprintf(f, "%.*s\n", width, line);
	}
	if (rows > 0 && (long)n > rows)
		fprintf(f, "(%zu more rows; -E 0 shows all)\n", n - (size_t)rows);
	free(v);
}

void top_zero_table(struct top *tp)
{
	for (int h = 0; h < ENTRY_HASH; h++) {
		for (struct entry *e = tp->tab[h], *nx; e; e = nx) {
			nx = e->next;
			free(e->key);
			free(e);
		}
		tp->tab[h] = NULL;
	}
	tp->samples = tp->period = tp->kernel_samples = 0;
}

/* -S period|samples|MEMBER, or perf's --group-sort-idx N */
int top_choose_sort(struct top *tp)
{
	struct top_opts *o = tp->o;
	sort_col = o->sort_idx;
	if (o->sort_idx >= tp->nev) {
		fprintf(stderr, "hpm top: --group-sort-idx %d: the group has %d event(s)\n",
			o->sort_idx, tp->nev);
		return -1;
	}
	if (!o->sort_by)
		return 0;
	if (!strcmp(o->sort_by, "period") || !strcmp(o->sort_by, "overhead")) {
		sort_col = 0;
		return 0;
	}
	if (!strcmp(o->sort_by, "samples")) {
		sort_col = -1;
		return 0;
	}
	for (int j = 0; j < tp->nev; j++)
		if (!strcmp(o->sort_by, tp->ev[j].name)) {
			sort_col = j;
			return 0;
		}
	char names[512] = "";
	for (int j = 1; j < tp->nev; j++) {
		size_t l = strlen(names);
		snprintf(names + l, sizeof(names) - l, ", %s", tp->ev[j].name);
	}
	fprintf(stderr, "hpm top: -S %s: sort by period, samples%s\n", o->sort_by,
		names[0] ? names : " (or a member of a {group} given with -e)");
	return -1;
}

