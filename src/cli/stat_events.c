/* SPDX-License-Identifier: MIT */
/*
 * Which events hpm stat opens, and in how many sets. The first set decides:
 * an event this PMU cannot count becomes a <not supported> row and the rest
 * is counted (perf's behaviour), even when that leaves nothing to count. The
 * other sets (one per CPU or thread) replay exactly the opens that worked, so
 * every set has the same events at the same indices.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>
#include "stat.h"

static const char *const default_events[] = {
	"task-clock", "context-switches", "cpu-migrations", "page-faults",
	"cycles", "instructions", "branches", "branch-misses",
};

/* -d, -dd, -ddd: perf's detailed sets, each slot filled from this CPU's
 * table when it has a matching event (its PAPI presets name them), else with
 * the generic cache event the kernel maps to the PMU. */
static const struct {
	int level;
	const char *generic;
	const char *table[3];
} detailed[] = {
	{ 1, "L1-dcache-loads", { "PAPI_L1_DCA", "PAPI_L1_DCR" } },
	{ 1, "L1-dcache-load-misses", { "PAPI_L1_DCM", "PAPI_L1_LDM" } },
	{ 1, "LLC-loads", { "PAPI_L3_TCA", "PAPI_L2_DCA", "PAPI_L2_TCR" } },
	{ 1, "LLC-load-misses", { "PAPI_L3_TCM", "PAPI_L2_DCM", "PAPI_L2_LDM" } },
	{ 2, "L1-icache-loads", { "PAPI_L1_ICA" } },
	{ 2, "L1-icache-load-misses", { "PAPI_L1_ICM" } },
	{ 2, "dTLB-loads", { NULL } },
	{ 2, "dTLB-load-misses", { "PAPI_TLB_DM" } },
	{ 2, "iTLB-loads", { NULL } },
	{ 2, "iTLB-load-misses", { "PAPI_TLB_IM" } },
	{ 3, "L1-dcache-prefetches", { NULL } },
	{ 3, "L1-dcache-prefetch-misses", { NULL } },
};

struct item {
	char name[256];
	unsigned flags; /* HPM_LIST_* */
	bool is_default;
};

struct items {
	struct item *v;
	int n, cap;
};

static int push_item(struct items *it, const char *name, unsigned flags, bool is_default)
{
	if (it->n == it->cap) {
		struct item *nv = realloc(it->v, sizeof(*nv) * (size_t)(it->cap = it->cap ? it->cap * 2 : 32));
		if (!nv)
			return -ENOMEM;
		it->v = nv;
	}
	struct item *x = &it->v[it->n++];
	snprintf(x->name, sizeof(x->name), "%s", name);
	x->flags = flags;
	x->is_default = is_default;
	return 0;
}

static int collect_cb(const char *name, unsigned flags, void *arg)
{
	return push_item(arg, name, flags, false);
}

/* Replayed on every further set: what worked on the first. */
enum op_kind { OP_ADD, OP_LIST, OP_METRIC };
struct stat_op {
	enum op_kind kind;
	char text[2048];
	int first, n; /* event indices it produced */
};

struct builder {
	struct stat_state *st;
	struct stat_opts *o;
	struct stat_op *ops;
	int nops, capops;
};

static int push_op(struct builder *b, enum op_kind kind, const char *text, int first, int n)
{
	if (b->nops == b->capops) {
		struct stat_op *nv = realloc(b->ops, sizeof(*nv) * (size_t)(b->capops = b->capops ? b->capops * 2 : 16));
		if (!nv)
			return -ENOMEM;
		b->ops = nv;
	}
	struct stat_op *op = &b->ops[b->nops++];
	op->kind = kind;
	snprintf(op->text, sizeof(op->text), "%s", text);
	op->first = first;
	op->n = n;
	return 0;
}

static struct row *new_row(struct stat_state *st, const char *name, int idx, enum row_state s,
			   const char *why)
{
	struct row *nv = realloc(st->rows, sizeof(*nv) * (size_t)(st->nrows + 1));
	if (!nv)
		return NULL;
	st->rows = nv;
	struct row *r = &st->rows[st->nrows++];
	snprintf(r->name, sizeof(r->name), "%s", name);
	r->idx = idx;
	r->state = s;
	snprintf(r->why, sizeof(r->why), "%s", why ? why : "");
	return r;
}

/* perf stat's answer to these: the event is <not supported>, the rest counts */
static bool unsupported(int err)
{
	return err == -EINVAL || err == -ENOENT || err == -EOPNOTSUPP || err == -ENXIO ||
	       err == -ENODEV || err == -ENOSYS;
}

static void print_attr(struct hpm_ctx *ctx, const char *name)
{
	struct perf_event_attr a;
	char canon[160];
	if (hpm_ctx__event_attr(ctx, name, &a, canon, sizeof(canon)) < 0)
		return;
	/* no sample_period/sample_freq: the event set opens counting events without them
	 * (src/lib/evset.c), as perf stat does */
	fprintf(stderr, "hpm stat: '%s': perf_event_attr type %u, config %#llx", name, a.type,
		(unsigned long long)a.config);
	if (a.config1)
		fprintf(stderr, ", config1 %#llx", (unsigned long long)a.config1);
	if (a.config2)
		fprintf(stderr, ", config2 %#llx", (unsigned long long)a.config2);
	static const struct {
		const char *n;
		unsigned v;
	} *f, flags[] = { { "exclude_user", 0 }, { "exclude_kernel", 1 }, { "exclude_hv", 2 },
			  { "exclude_idle", 3 }, { "exclude_host", 4 }, { "exclude_guest", 5 },
			  { "pinned", 6 }, { NULL, 0 } };
	unsigned bits[] = { a.exclude_user, a.exclude_kernel, a.exclude_hv, a.exclude_idle,
			    a.exclude_host, a.exclude_guest, a.pinned };
	for (f = flags; f->n; f++)
		if (bits[f->v])
			fprintf(stderr, ", %s 1", f->n);
	if (a.precise_ip)
		fprintf(stderr, ", precise_ip %u", a.precise_ip);
	fprintf(stderr, "\n");
}

static int fatal(struct stat_state *st)
{
	fprintf(stderr, "hpm stat: %s\n", hpm_ctx__last_error(st->ctx));
	return -1;
}

#define GONE (-2) /* the thread of this set exited before it could be attached */

/* A failed open: a thread that exited meanwhile is dropped (and counted),
 * anything else is the error of the whole run. */
static int failed(struct stat_state *st, int u, int err)
{
	if (err == -ESRCH && st->units[u].tid > 0)
		return GONE;
	return fatal(st);
}

/* One event outside braces. */
static int add_single(struct builder *b, struct hpm_evset *set, const struct item *it)
{
	struct stat_state *st = b->st;
	struct hpm_event_info info;
	if (hpm_ctx__resolve(st->ctx, it->name, &info) < 0)
		return fatal(st);
	if (b->o->verbose)
		print_attr(st->ctx, it->name);
	int r = hpm_evset__add(set, it->name);
	if (r >= 0) {
		if (!new_row(st, hpm_evset__name(set, r), r, ROW_COUNTED, NULL))
			return -1;
		return push_op(b, OP_ADD, it->name, r, 1);
	}
	if (!unsupported(r))
		return failed(st, 0, r);
	st->no_syscall |= r == -ENOSYS;
	return new_row(st, it->name, -1, ROW_NOT_SUPPORTED, hpm_ctx__last_error(st->ctx)) ? 0 : -1;
}

/* A {...} group: counted together or not at all. Like perf, a member the PMU
 * cannot count leaves the others <not counted>; a leader it cannot count is
 * an error. Members are probed first so a refused group opens nothing. */
static int add_group(struct builder *b, struct hpm_evset *set, const struct item *it, int n)
{
	struct stat_state *st = b->st;
	int bad = -1;
	char why[512] = "";
	for (int k = 0; k < n; k++) {
		struct hpm_event_info info;
		if (hpm_ctx__resolve(st->ctx, it[k].name, &info) < 0)
			return fatal(st);
		if (b->o->verbose)
			print_attr(st->ctx, it[k].name);
	}
	for (int k = 0; k < n && bad < 0; k++) {
		int r = hpm_ctx__probe(st->ctx, it[k].name);
		if (r < 0 && !unsupported(r))
			return fatal(st);
		st->no_syscall |= r == -ENOSYS;
		if (r < 0) {
			bad = k;
			snprintf(why, sizeof(why), "%s", hpm_ctx__last_error(st->ctx));
		}
	}
	char list[2048] = "{";
	for (int k = 0; k < n; k++) {
		size_t l = strlen(list);
		snprintf(list + l, sizeof(list) - l, "%s%s", k ? "," : "", it[k].name);
	}
	strncat(list, "}", sizeof(list) - strlen(list) - 1);
	if (bad == 0) {
		fprintf(stderr, "hpm stat: %s; it leads the group %s, so nothing of that group can be "
				"counted (drop it or the braces)\n", why, list);
		return -1;
	}
	if (bad > 0) {
		for (int k = 0; k < n; k++) {
			char w[512];
			snprintf(w, sizeof(w), "its group %s cannot be counted: '%s' is not supported",
				 list, it[bad].name);
			if (!new_row(st, it[k].name, -1, k == bad ? ROW_NOT_SUPPORTED : ROW_NOT_COUNTED,
				     k == bad ? why : w))
				return -1;
		}
		return 0;
	}
	int first = hpm_evset__nr(set);
	int r = hpm_evset__add_list(set, list);
	if (r < 0)
		return failed(st, 0, r);
	for (int k = 0; k < r; k++)
		if (!new_row(st, hpm_evset__name(set, first + k), first + k, ROW_COUNTED, NULL))
			return -1;
	return push_op(b, OP_LIST, list, first, r);
}

static int add_metrics(struct builder *b, struct hpm_evset *set)
{
	struct stat_state *st = b->st;
	for (int i = 0; i < b->o->nmetrics; i++) {
		char buf[256];
		snprintf(buf, sizeof(buf), "%s", b->o->metrics[i]);
		for (char *save, *g = strtok_r(buf, ",", &save); g; g = strtok_r(NULL, ",", &save)) {
			int first = hpm_evset__nr(set), miss = hpm_evset__nr_missing(set);
			int r = hpm_evset__add_metric_group(set, g);
			if (r < 0)
				return failed(st, 0, r);
			int n = hpm_evset__nr(set) - first;
			for (int k = 0; k < n; k++)
				if (!new_row(st, hpm_evset__name(set, first + k), first + k, ROW_COUNTED,
					     NULL))
					return -1;
			/* like perf stat -M: an event the kernel refuses is <not supported>, the
			 * metrics that need it are n/a, the rest count */
			for (int k = miss; k < hpm_evset__nr_missing(set); k++) {
				const char *why;
				const char *name = hpm_evset__missing(set, k, &why);
				bool shown = false; /* -e named it too: one row */
				for (int j = 0; j < st->nrows && !shown; j++)
					shown = st->rows[j].state == ROW_NOT_SUPPORTED &&
						!strcmp(st->rows[j].name, name);
				if (!shown && !new_row(st, name, -1, ROW_NOT_SUPPORTED, why))
					return -1;
			}
			if (push_op(b, OP_METRIC, g, first, n))
				return -1;
		}
	}
	return 0;
}

/* The table's event for a -d slot, or the generic one. */
static void detailed_name(struct hpm_ctx *ctx, int slot, char *out, size_t len)
{
	snprintf(out, len, "%s", detailed[slot].generic);
	for (int k = 0; k < 3 && detailed[slot].table[k]; k++) {
		struct hpm_event_info info;
		if (hpm_ctx__resolve(ctx, detailed[slot].table[k], &info) == 0 &&
		    strcmp(info.pmu, "generic")) {
			snprintf(out, len, "%s", info.name);
			return;
		}
	}
}

static int collect(struct stat_state *st, struct stat_opts *o, struct items *it)
{
	for (int i = 0; i < o->nevents; i++)
		if (hpm_ctx__parse_list(st->ctx, o->events[i], collect_cb, it) < 0)
			return fatal(st);
	if (!o->nevents && !o->nmetrics)
		for (unsigned i = 0; i < sizeof(default_events) / sizeof(*default_events); i++)
			if (push_item(it, default_events[i], 0, true))
				return -1;
	for (unsigned s = 0; s < sizeof(detailed) / sizeof(*detailed); s++) {
		if (detailed[s].level > o->detailed)
			continue;
		char name[160];
		detailed_name(st->ctx, (int)s, name, sizeof(name));
		bool dup = false;
		for (int k = 0; k < it->n; k++)
			dup |= !strcasecmp(it->v[k].name, name);
		if (!dup && push_item(it, name, 0, true))
			return -1;
	}
	return 0;
}

static int target_of(struct stat_state *st, int u, pid_t child, unsigned flags, pid_t *pid,
		     int *cpu, unsigned *fl)
{
	struct unit *un = &st->units[u];
	*cpu = un->cpu;
	if (un->cpu >= 0) {
		*pid = -1;
		*fl = 0;
	} else if (un->tid > 0) {
		*pid = un->tid;
		*fl = flags & HPM_TARGET_INHERIT;
	} else {
		*pid = child;
		*fl = flags;
	}
	return 0;
}

static int new_set(struct stat_state *st, struct stat_opts *o, int u, pid_t child, unsigned flags,
		   bool defaults_only)
{
	pid_t pid;
	int cpu;
	unsigned fl;
	target_of(st, u, child, flags, &pid, &cpu, &fl);
	struct hpm_evset *set;
	if (hpm_evset__new(st->ctx, &set) || hpm_evset__set_target(set, pid, cpu, fl))
		return fatal(st);
	if (o->group_max)
		hpm_evset__set_group_max(set, o->group_max);
	else if (defaults_only)
		/* like perf: default events are not grouped, so one event the PMU
		 * cannot schedule does not take the others down with it */
		hpm_evset__set_group_max(set, 1);
	st->units[u].set = set;
	return 0;
}

static int replay(struct stat_state *st, struct builder *b, int u)
{
	struct hpm_evset *set = st->units[u].set;
	for (int i = 0; i < b->nops; i++) {
		struct stat_op *op = &b->ops[i];
		int first = hpm_evset__nr(set), r;
		if (op->kind == OP_ADD)
			r = hpm_evset__add(set, op->text);
		else if (op->kind == OP_LIST)
			r = hpm_evset__add_list(set, op->text);
		else
			r = hpm_evset__add_metric_group(set, op->text);
		if (r < 0)
			return failed(st, u, r);
		if (first != op->first || hpm_evset__nr(set) - first != op->n) {
			fprintf(stderr, "hpm stat: '%s' opened differently on the CPUs or threads "
					"counted; count them one by one (-C N, -t TID)\n", op->text);
			return -1;
		}
	}
	return 0;
}

static void drop_unit(struct stat_state *st, int u)
{
	hpm_evset__delete(st->units[u].set);
	memmove(&st->units[u], &st->units[u + 1], sizeof(*st->units) * (size_t)(st->nunits - u - 1));
	st->nunits--;
	st->gone++;
}

/* The first set decides which events are counted and how. */
static int build_first(struct stat_state *st, struct stat_opts *o, struct builder *b,
		       struct items *it, pid_t child, unsigned flags)
{
	free(st->rows);
	st->rows = NULL;
	st->nrows = 0;
	b->nops = 0;
	bool defaults_only = !o->nevents && !o->nmetrics;
	if (new_set(st, o, 0, child, flags, defaults_only))
		return -1;
	struct hpm_evset *set = st->units[0].set;
	for (int i = 0; i < it->n;) {
		int r;
		if (it->v[i].flags & HPM_LIST_GROUP_START) {
			int n = 1;
			while (i + n < it->n && !(it->v[i + n - 1].flags & HPM_LIST_GROUP_END))
				n++;
			r = add_group(b, set, &it->v[i], n);
			i += n;
		} else {
			r = add_single(b, set, &it->v[i]);
			i++;
		}
		if (r)
			return r;
	}
	return add_metrics(b, set);
}

int stat_build(struct stat_state *st, struct stat_opts *o, pid_t child, unsigned flags)
{
	struct items it = { 0 };
	struct builder b = { .st = st, .o = o };
	int ret = -1, r;
	if (collect(st, o, &it))
		goto out;
	bool defaults_only = !o->nevents && !o->nmetrics;
	/* threads can exit between being listed and being attached: drop and count them */
	while ((r = build_first(st, o, &b, &it, child, flags)) == GONE) {
		drop_unit(st, 0);
		if (!st->nunits) {
			fprintf(stderr, "hpm stat: every thread to count exited before it could be "
					"attached\n");
			goto out;
		}
	}
	if (r)
		goto out;
	st->nev = hpm_evset__nr(st->units[0].set);
	if (st->nev == 0 && !st->nrows) {
		fprintf(stderr, "hpm stat: no event to count\n");
		goto out;
	}
	/* nothing at all could be opened: perf stat runs the command all the same and shows
	 * every event <not supported>; so does hpm stat, with the reasons under the table.
	 * Without the system call itself (qemu-user, a seccomp filter) perf stops with an
	 * error, and so does hpm */
	if (st->nev == 0 && st->no_syscall) {
		for (int i = 0; i < st->nrows; i++)
			if (st->rows[i].state == ROW_NOT_SUPPORTED) {
				fprintf(stderr, "hpm stat: %s\n", st->rows[i].why);
				goto out;
			}
	}
	for (int u = 1; u < st->nunits; u++) {
		if (new_set(st, o, u, child, flags, defaults_only))
			goto out;
		r = replay(st, &b, u);
		if (r == GONE)
			drop_unit(st, u--);
		else if (r)
			goto out;
	}
	for (int u = 0; u < st->nunits; u++) {
		st->units[u].now = calloc((size_t)st->nev, sizeof(struct hpm_value));
		st->units[u].prev = calloc((size_t)st->nev, sizeof(struct hpm_value));
		if (!st->units[u].now || !st->units[u].prev)
			goto out;
	}
	ret = 0;
	/* kept for the threads a followed command starts later (stat_open_unit) */
	stat_free_ops(st);
	st->ops = b.ops;
	st->nops = b.nops;
	b.ops = NULL;
out:
	free(it.v);
	free(b.ops);
	return ret;
}

void stat_free_ops(struct stat_state *st)
{
	free(st->ops);
	st->ops = NULL;
	st->nops = 0;
}

int stat_open_unit(struct stat_state *st, struct stat_opts *o, int u, unsigned flags)
{
	struct builder b = { .st = st, .o = o, .ops = st->ops, .nops = st->nops };
	struct unit *un = &st->units[u];
	if (new_set(st, o, u, -1, flags, !o->nevents && !o->nmetrics))
		return -1;
	int r = replay(st, &b, u);
	if (!r) {
		un->now = calloc((size_t)st->nev + 1, sizeof(struct hpm_value));
		un->prev = calloc((size_t)st->nev + 1, sizeof(struct hpm_value));
		if (un->now && un->prev)
			return 0;
		fprintf(stderr, "hpm stat: out of memory\n");
		r = -1;
	}
	hpm_evset__delete(un->set);
	un->set = NULL;
	free(un->now);
	free(un->prev);
	un->now = un->prev = NULL;
	return r == GONE ? 1 : -1;
}

void stat_free_units(struct stat_state *st)
{
	for (int u = 0; u < st->nunits; u++) {
		hpm_evset__delete(st->units[u].set);
		st->units[u].set = NULL;
		free(st->units[u].now);
		free(st->units[u].prev);
		st->units[u].now = st->units[u].prev = NULL;
	}
}

static int add_to_bin(struct stat_state *st, const char *label, int u)
{
	for (int i = 0; i < st->nbins; i++)
		if (!strcmp(st->bins[i].label, label)) {
			struct bin *bb = &st->bins[i];
			int *nv = realloc(bb->units, sizeof(int) * (size_t)(bb->nunits + 1));
			if (!nv)
				return -1;
			bb->units = nv;
			bb->units[bb->nunits++] = u;
			return 0;
		}
	struct bin *nv = realloc(st->bins, sizeof(*nv) * (size_t)(st->nbins + 1));
	if (!nv)
		return -1;
	st->bins = nv;
	struct bin *bb = &st->bins[st->nbins++];
	snprintf(bb->label, sizeof(bb->label), "%s", label);
	bb->units = malloc(sizeof(int));
	if (!bb->units)
		return -1;
	bb->units[0] = u;
	bb->nunits = 1;
	return 0;
}

int stat_make_bins(struct stat_state *st, struct stat_opts *o)
{
	for (int i = 0; i < st->nbins; i++)
		free(st->bins[i].units);
	free(st->bins);
	st->bins = NULL;
	st->nbins = 0;
	for (int u = 0; u < st->nunits; u++) {
		char label[64] = "";
		struct unit *un = &st->units[u];
		int sock, die, core;
		switch (o->aggr) {
		case AGGR_GLOBAL: break;
		case AGGR_CPU: snprintf(label, sizeof(label), "CPU%d", un->cpu); break;
		case AGGR_CORE:
			cpu_topology(un->cpu, &sock, &die, &core);
			snprintf(label, sizeof(label), "S%d-D%d-C%d", sock, die, core);
			break;
		case AGGR_SOCKET:
			cpu_topology(un->cpu, &sock, &die, &core);
			snprintf(label, sizeof(label), "S%d", sock);
			break;
		case AGGR_THREAD: {
			char comm[32];
			if (un->comm[0])
				snprintf(comm, sizeof(comm), "%s", un->comm);
			else
				task_comm(un->tid, comm, sizeof(comm));
			snprintf(label, sizeof(label), "%s-%d", comm, (int)un->tid);
			break;
		}
		}
		if (add_to_bin(st, label, u))
			return -1;
	}
	return 0;
}
