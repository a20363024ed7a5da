/* SPDX-License-Identifier: MIT */
/*
 * The measuring harness of hpm bench, nanobench-style:
 *   - pin to one CPU;
 *   - per case: double the iteration count until one epoch lasts at least
 *     max(1000 clock resolutions, --min-epoch) (this doubles as warm-up), one
 *     more warm-up epoch, then --epochs timed epochs;
 *   - subtract the calibrated overhead of an empty epoch (clock reads, counter
 *     reads, the run() call with 0 iterations) from every epoch;
 *   - report median, min and MAD per operation, in ns, in clock units, and for
 *     every hardware counter libhpm could open (missing ones are named, with
 *     the reason).
 */
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include "bench_def.h"
#include "hpm/cycles.h"
#include "hpm/hpm.h"
#include "out.h"

const struct bench_def *bench_all(int i)
{
	static const struct bench_def *all[32];
	static int n = -1;
	if (n < 0) {
		const struct bench_def *lists[] = { bench_copy_defs, bench_io_defs, bench_bits_defs,
						    bench_mul_defs, bench_mem_defs, bench_share_defs };
		n = 0;
		for (unsigned k = 0; k < sizeof(lists) / sizeof(lists[0]); k++)
			for (const struct bench_def *d = lists[k]; d->name && n < 32; d++)
				all[n++] = d;
	}
	return i >= 0 && i < n ? all[i] : NULL;
}

const char *bench_name(int i, const char **what)
{
	const struct bench_def *d = bench_all(i);
	if (d && what)
		*what = d->what;
	return d ? d->name : NULL;
}

struct bench_case *case_add(struct case_list *l, const char *bench, case_run_fn run)
{
	if (l->n == l->cap) {
		int cap = l->cap ? l->cap * 2 : 64;
		struct bench_case *v = realloc(l->v, sizeof(*v) * (size_t)cap);
		if (!v)
			return NULL;
		l->v = v;
		l->cap = cap;
	}
	struct bench_case *c = &l->v[l->n++];
	memset(c, 0, sizeof(*c));
	c->bench = bench;
	c->run = run;
	c->per_op = 1;
	c->unit = "op";
	return c;
}

void *case_state(struct bench_case *c, size_t size, char *why, size_t len)
{
	c->state = calloc(1, size);
	if (!c->state)
		snprintf(why, len, "out of memory for the case's state (%zu bytes)", size);
	return c->state;
}

void *bench_alloc(size_t n)
{
	void *p = mmap(NULL, n ? n : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	memset(p, 0, n); /* fault every page in now, not while timing */
	return p;
}

void bench_free(void *p, size_t n)
{
	if (p)
		munmap(p, n ? n : 1);
}

uint64_t bench_rand(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1DULL;
}

/* ---- statistics ---------------------------------------------------------- */
static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median_of(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static struct bench_stat stat_of(const double *x, int n)
{
	struct bench_stat s = { 0 };
	if (n <= 0)
		return s;
	double *v = malloc(sizeof(double) * (size_t)n);
	if (!v)
		return s;
	memcpy(v, x, sizeof(double) * (size_t)n);
	s.median = median_of(v, n);
	s.min = v[0];
	for (int i = 0; i < n; i++)
		v[i] = fabs(x[i] - s.median);
	s.mad = median_of(v, n);
	s.valid = true;
	free(v);
	return s;
}

/* ---- the measuring context ----------------------------------------------- */
struct counters {
	struct hpm_ctx *ctx;
	struct hpm_evset *set;
	int n;                            /* events opened */
	char name[BENCH_MAX_EVENTS][48];
	char missing[1024];               /* "event: why; ..." */
	char path[240];                   /* how they are read */
};

struct harness {
	const struct bench_opts *o;
	struct hpm_cycles *cc;
	const struct hpm_cc_status *cs;
	struct counters ctr;
	double min_epoch_ticks;
	/* calibrated empty-epoch overhead (median ticks, min counts) */
	double ovh_ticks;
	double ovh_ev[BENCH_MAX_EVENTS];
	int pinned_cpu;
	char pin_note[160];
};

static void counters_open(struct counters *c, const char *events)
{
	memset(c, 0, sizeof(*c));
	if (!events || !*events)
		return;
	if (hpm_ctx__new(&c->ctx) < 0 || hpm_evset__new(c->ctx, &c->set) < 0) {
		snprintf(c->missing, sizeof(c->missing), "libhpm could not start");
		return;
	}
	/* one group per event: a PMU that cannot schedule one of them (QEMU
	 * riscv64's branch-misses) must not stop the others from counting */
	hpm_evset__set_group_max(c->set, 1);
	char list[256];
	snprintf(list, sizeof(list), "%s", events);
	for (char *save = NULL, *e = strtok_r(list, ",", &save); e; e = strtok_r(NULL, ",", &save)) {
		if (c->n == BENCH_MAX_EVENTS)
			break;
		/* each event alone: one the PMU lacks must not take the others down */
		if (hpm_evset__add(c->set, e) < 0) {
			/* events refused for the same reason share one explanation: when
			 * the message is "... 'EVENT' ...: REASON", keep only REASON (the
			 * event names are listed before it); otherwise the whole message */
			char why[512];
			const char *q = hpm_ctx__last_error(c->ctx);
			const char *ename = strstr(q, e);
			const char *reason = ename ? strstr(ename + strlen(e), ": ") : NULL;
			snprintf(why, sizeof(why), ": %s", reason ? reason + 2 : q);
			char *same = strstr(c->missing, why);
			size_t u = strlen(c->missing);
			if (same && same[strlen(why)] == 0)
				snprintf(c->missing + u - strlen(why), sizeof(c->missing) - (u - strlen(why)),
					 ", %s%s", e, why);
			else
				snprintf(c->missing + u, sizeof(c->missing) - u, "%s%s%s", u ? "; " : "", e,
					 why);
			continue;
		}
		snprintf(c->name[c->n++], sizeof(c->name[0]), "%s", e);
	}
	if (c->n && hpm_evset__start(c->set) < 0) {
		snprintf(c->missing, sizeof(c->missing), "cannot start counters: %s",
			 hpm_ctx__last_error(c->ctx));
		c->n = 0;
	}
	if (c->n) {
		char why[200];
		int p = hpm_evset__read_path(c->set, 0, why, sizeof(why));
		snprintf(c->path, sizeof(c->path), "%s%s%s", p == HPM_READ_MMAP ? "mmap" : "read(2)",
			 *why ? ": " : "", why);
	}
}

static void counters_read(struct counters *c, uint64_t *v)
{
	struct hpm_value vals[BENCH_MAX_EVENTS];
	if (!c->n)
		return;
	if (hpm_evset__read_all(c->set, vals) < 0)
		memset(vals, 0, sizeof(vals));
	for (int i = 0; i < c->n; i++)
		v[i] = vals[i].raw;
}

/* One epoch: returns clock ticks; ev[] gets counter deltas. */
static double epoch(struct harness *h, struct bench_case *c, uint64_t iters, double *ev)
{
	uint64_t a[BENCH_MAX_EVENTS] = { 0 }, b[BENCH_MAX_EVENTS] = { 0 };
	counters_read(&h->ctr, a);
	uint64_t t0 = hpm_cycles__read(h->cc);
	c->run(c, iters);
	uint64_t t1 = hpm_cycles__read(h->cc);
	counters_read(&h->ctr, b);
	for (int i = 0; i < h->ctr.n; i++)
		ev[i] = (double)(b[i] - a[i]);
	if (c->self_ns && iters) /* in clock ticks, plus the overhead the caller subtracts */
		return c->self_ns(c) * (h->cs->hz > 0 ? h->cs->hz / 1e9 : 1) + h->ovh_ticks;
	return (double)(t1 - t0);
}

static void noop_run(struct bench_case *c, uint64_t iters)
{
	(void)c;
	for (uint64_t i = 0; i < iters; i++)
		BENCH_CLOBBER();
}

/* Overhead of an empty epoch: median clock ticks and minimum counts (the
 * minimum is the run without an interrupt in it, the exact fixed cost). */
static void calibrate(struct harness *h)
{
	enum { N = 101 };
	double t[N], ev[BENCH_MAX_EVENTS], evmin[BENCH_MAX_EVENTS];
	struct bench_case c = { .run = noop_run };
	for (int i = 0; i < BENCH_MAX_EVENTS; i++)
		evmin[i] = INFINITY;
	for (int i = 0; i < N; i++) {
		t[i] = epoch(h, &c, 0, ev);
		for (int k = 0; k < h->ctr.n; k++)
			evmin[k] = fmin(evmin[k], ev[k]);
	}
	h->ovh_ticks = median_of(t, N);
	for (int k = 0; k < h->ctr.n; k++)
		h->ovh_ev[k] = evmin[k];
}

static double ticks_to_ns(const struct harness *h, double ticks)
{
	return h->cs->hz > 0 ? ticks * 1e9 / h->cs->hz : ticks;
}

static void measure(struct harness *h, struct bench_case *c, struct bench_result *r)
{
	double ev[BENCH_MAX_EVENTS];
	uint64_t iters = 1;
	double min_ticks = fmax(h->min_epoch_ticks,
				c->min_epoch_ns * (h->cs->hz > 0 ? h->cs->hz / 1e9 : 1));
	/* grow until one epoch is long enough; these runs are the warm-up */
	for (;;) {
		/* the shorter of two tries: one preempted epoch must not stop the growth early */
		double t = fmin(epoch(h, c, iters, ev), epoch(h, c, iters, ev)) - h->ovh_ticks;
		if (t >= min_ticks || iters >= (1ull << 40))
			break;
		uint64_t next = t > 0 ? (uint64_t)((double)iters * min_ticks / t * 1.1) : 0;
		iters = next > iters * 2 ? (next < iters * 16 ? next : iters * 16) : iters * 2;
	}
	epoch(h, c, iters, ev);
	int n = h->o->epochs;
	double *tk = calloc((size_t)n, sizeof(double));
	double *ns = calloc((size_t)n, sizeof(double));
	double *evs = calloc((size_t)n * BENCH_MAX_EVENTS, sizeof(double));
	if (!tk || !ns || !evs) {
		snprintf(r->skipped, sizeof(r->skipped), "out of memory");
		free(tk);
		free(ns);
		free(evs);
		return;
	}
	/* Epochs alternate between iters and 2*iters operations. Time per op
	 * comes from every epoch; counters per op from each pair, as
	 * (C(2N) - C(N)) / N: the fixed cost of an epoch (counter reads, the
	 * call, loop set-up) cancels exactly, so deterministic code gives exact
	 * integers where the PMU counts exactly. */
	double ev1[BENCH_MAX_EVENTS] = { 0 };
	int npairs = 0;
	for (int e = 0; e < n; e++) {
		uint64_t it = e % 2 ? 2 * iters : iters;
		double t = epoch(h, c, it, ev) - h->ovh_ticks;
		tk[e] = t / (double)it;
		ns[e] = ticks_to_ns(h, t) / (double)it;
		for (int k = 0; k < h->ctr.n; k++)
			if (ev[k] == 0)
				r->zero_reads[k]++;
		if (e % 2 == 0) {
			memcpy(ev1, ev, sizeof(ev1));
			continue;
		}
		for (int k = 0; k < h->ctr.n; k++)
			evs[k * n + npairs] = (ev[k] - ev1[k]) / (double)iters;
		npairs++;
	}
	r->iters = iters;
	r->epochs = n;
	r->ticks = stat_of(tk, n);
	r->ns = stat_of(ns, n);
	/* a counter that read 0 while work ran was not counting (QEMU riscv64
	 * reads 0 on one of twin counters): no value, and the JSON says why */
	for (int k = 0; k < h->ctr.n && !c->threads; k++)
		if (!r->zero_reads[k])
			r->ev[k] = stat_of(evs + k * n, npairs);
	r->done = true;
	free(tk);
	free(ns);
	free(evs);
}

/* ---- output -------------------------------------------------------------- */
static void json_stat(FILE *f, const char *key, struct bench_stat s, double scale)
{
	if (!s.valid) {
		fprintf(f, "\"%s\":null", key);
		return;
	}
	fprintf(f, "\"%s\":{\"median\":%.6g,\"min\":%.6g,\"mad\":%.6g}", key, s.median / scale,
		s.min / scale, s.mad / scale);
}

static void machine_json(FILE *f, const struct harness *h)
{
	struct utsname u;
	uname(&u);
	char model[256] = "";
	FILE *ci = fopen("/proc/cpuinfo", "r");
	if (ci) {
		char line[512];
		while (fgets(line, sizeof(line), ci)) {
			if (!strncmp(line, "model name", 10) || !strncmp(line, "uarch", 5) ||
			    !strncmp(line, "CPU part", 8)) {
				char *v = strchr(line, ':');
				if (v) {
					v += 1 + (v[1] == ' ');
					v[strcspn(v, "\n")] = 0;
					snprintf(model, sizeof(model), "%s", v);
					break;
				}
			}
		}
		fclose(ci);
	}
	fprintf(f, "\"machine\":{\"arch\":");
	json_string(f, u.machine);
	fprintf(f, ",\"kernel\":");
	json_string(f, u.release);
	fprintf(f, ",\"hostname\":");
	json_string(f, u.nodename);
	fprintf(f, ",\"cpu\":");
	json_string(f, model);
	fprintf(f, ",\"ncpus\":%ld,\"caches\":[", sysconf(_SC_NPROCESSORS_ONLN));
	for (int i = 0, first = 1; i < 8; i++) {
		char p[128], lvl[16], type[32], size[32];
		snprintf(p, sizeof(p), "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
		FILE *x = fopen(p, "r");
		if (!x)
			continue;
		int okl = fgets(lvl, sizeof(lvl), x) != NULL;
		fclose(x);
		snprintf(p, sizeof(p), "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
		x = fopen(p, "r");
		int okt = x && fgets(type, sizeof(type), x);
		if (x)
			fclose(x);
		snprintf(p, sizeof(p), "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
		x = fopen(p, "r");
		int oks = x && fgets(size, sizeof(size), x);
		if (x)
			fclose(x);
		if (!okl || !okt || !oks)
			continue;
		type[strcspn(type, "\n")] = 0;
		long sz = strtol(size, NULL, 10) * (strchr(size, 'K') ? 1024 : strchr(size, 'M') ? 1048576 : 1);
		fprintf(f, "%s{\"level\":%d,\"type\":", first ? "" : ",", atoi(lvl));
		json_string(f, type);
		fprintf(f, ",\"size\":%ld}", sz);
		first = 0;
	}
	fprintf(f, "]}");
}

static void header_json(FILE *f, const struct harness *h)
{
	const struct hpm_cc_status *cs = h->cs;
	fprintf(f, "{\"format\":\"hpm-bench\",\"version\":1,\"hpm\":");
	json_string(f, hpm_version());
	fprintf(f, ",");
	machine_json(f, h);
	fprintf(f, ",\"clock\":{\"source\":");
	json_string(f, hpm_cc_source_name(cs->source));
	fprintf(f, ",\"name\":");
	json_string(f, cs->name);
	fprintf(f, ",\"unit\":");
	json_string(f, hpm_cycles__unit(h->cc));
	fprintf(f,
		",\"core_cycles\":%s,\"hz\":%.9g,\"hz_measured\":%s,\"resolution\":%llu,"
		"\"overhead\":%.6g,\"note\":",
		cs->core_cycles ? "true" : "false", cs->hz, cs->hz_measured ? "true" : "false",
		(unsigned long long)cs->resolution, h->ovh_ticks);
	json_string(f, cs->why);
	fprintf(f, "},\"counters\":{\"events\":[");
	for (int i = 0; i < h->ctr.n; i++) {
		fprintf(f, "%s", i ? "," : "");
		json_string(f, h->ctr.name[i]);
	}
	fprintf(f, "],\"overhead\":[");
	for (int i = 0; i < h->ctr.n; i++)
		fprintf(f, "%s%.6g", i ? "," : "", h->ovh_ev[i]);
	fprintf(f, "],\"read\":");
	json_string(f, h->ctr.path);
	fprintf(f, ",\"missing\":");
	json_string(f, h->ctr.missing);
	fprintf(f, "},\"settings\":{\"epochs\":%d,\"min_epoch_ns\":%.6g,\"cpu\":%d,\"pin\":",
		h->o->epochs, ticks_to_ns(h, h->min_epoch_ticks), h->pinned_cpu);
	json_string(f, h->pin_note);
	fprintf(f, ",\"quick\":%s}", h->o->quick ? "true" : "false");
}

static void result_json(FILE *f, const struct harness *h, const struct bench_case *c,
			const struct bench_result *r)
{
	fprintf(f, "{\"bench\":");
	json_string(f, c->bench);
	fprintf(f, ",\"case\":");
	json_string(f, c->name);
	fprintf(f, ",\"params\":{%s},\"unit\":", c->params);
	json_string(f, c->unit);
	fprintf(f, ",\"per_op\":%.6g,\"bytes\":%.6g,\"iters\":%llu,\"epochs\":%d,", c->per_op, c->bytes,
		(unsigned long long)r->iters, r->epochs);
	/* every value is per unit (one copy, one multiply, one load ...) */
	json_stat(f, "ns", r->ns, c->per_op);
	fprintf(f, ",");
	json_stat(f, "ticks", r->ticks, c->per_op);
	if (c->bytes > 0 && r->ns.valid && r->ns.median > 0)
		fprintf(f, ",\"gbps\":%.6g", c->bytes / r->ns.median);
	fprintf(f, ",\"counters\":{");
	for (int k = 0, first = 1; k < h->ctr.n && !c->threads; k++) {
		if (r->zero_reads[k])
			continue;
		fprintf(f, "%s", first ? "" : ",");
		json_stat(f, h->ctr.name[k], r->ev[k], c->per_op);
		first = 0;
	}
	fprintf(f, "},\"counters_dropped\":{");
	for (int k = 0, first = 1; k < h->ctr.n; k++) {
		char why[160];
		if (c->threads)
			snprintf(why, sizeof(why), "two threads: the counters see only the measuring one");
		else if (r->zero_reads[k])
			snprintf(why, sizeof(why), "read 0 in %d of %d epochs while work ran: not counting",
				 r->zero_reads[k], r->epochs);
		else
			continue;
		fprintf(f, "%s", first ? "" : ",");
		json_string(f, h->ctr.name[k]);
		fprintf(f, ":");
		json_string(f, why);
		first = 0;
	}
	fprintf(f, "}}");
}

static void table_header(const struct harness *h)
{
	printf("%-44s %10s %10s %8s", "case", "ns/unit", "min", "mad%");
	if (h->cs->core_cycles)
		printf(" %10s", "cyc/unit");
	for (int k = 0; k < h->ctr.n; k++)
		printf(" %14.14s", h->ctr.name[k]);
	printf(" %9s\n", "GB/s");
}

static void table_row(const struct harness *h, const struct bench_case *c,
		      const struct bench_result *r)
{
	if (!r->done) {
		printf("%-44s skipped: %s\n", c->name, r->skipped);
		return;
	}
	double u = c->per_op;
	printf("%-44s %10.3f %10.3f %8.1f", c->name, r->ns.median / u, r->ns.min / u,
	       r->ns.median > 0 ? 100 * r->ns.mad / r->ns.median : 0);
	if (h->cs->core_cycles)
		printf(" %10.3f", r->ticks.median / u);
	for (int k = 0; k < h->ctr.n; k++) {
		if (r->ev[k].valid)
			printf(" %14.3f", r->ev[k].median / u);
		else
			printf(" %14s", "-");
	}
	if (c->bytes > 0 && r->ns.median > 0)
		printf(" %9.3f", c->bytes / r->ns.median);
	printf("\n");
}

static int pin(struct harness *h)
{
	int cpu = h->o->cpu;
	if (cpu == -1) {
		h->pinned_cpu = -1;
		snprintf(h->pin_note, sizeof(h->pin_note), "not pinned (--cpu -1)");
		return 0;
	}
	if (cpu == -2) /* default: where we run now, if the scheduler allows it */
		cpu = sched_getcpu();
	cpu_set_t cs;
	CPU_ZERO(&cs);
	CPU_SET(cpu, &cs);
	if (sched_setaffinity(0, sizeof(cs), &cs) < 0) {
		fprintf(stderr, "hpm bench: cannot pin to CPU %d: %s (choose one with --cpu, -1 = "
				"do not pin)\n",
			cpu, strerror(errno));
		return -1;
	}
	h->pinned_cpu = cpu;
	snprintf(h->pin_note, sizeof(h->pin_note), "pinned to CPU %d", cpu);
	return 0;
}

static bool selected(const char *name, char **names, int nnames)
{
	if (!nnames)
		return true;
	for (int i = 0; i < nnames; i++)
		if (!strcmp(names[i], name))
			return true;
	return false;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The run, with the JSON file already open (of, or NULL for stdout or no JSON): 0, or the
 * exit status of a failure; of is committed on success. */
static int run_open(const struct bench_opts *o, char **names, int nnames, const char *json_path,
		    struct outfile *of, const char *events, bool table);

int bench_run(const struct bench_opts *o, char **names, int nnames, const char *json_path,
	      const char *events, bool table)
{
	for (int i = 0; i < nnames; i++) {
		int found = 0;
		for (int k = 0; bench_all(k); k++)
			found |= !strcmp(bench_all(k)->name, names[i]);
		if (!found) {
			fprintf(stderr,
				"hpm bench: no benchmark named '%s'; 'hpm bench list' shows them\n",
				names[i]);
			return 2;
		}
	}
	/* The output file first: a missing or read-only folder is one line at once, not an
	 * error after the whole measurement (minutes) has been thrown away. */
	struct outfile of = { 0 };
	bool to_file = json_path && strcmp(json_path, "-");
	if (to_file) {
		int r = outfile_open(&of, json_path);
		if (r < 0) {
			fprintf(stderr, "hpm bench: cannot write %s: %s\n", json_path, strerror(-r));
			return 1;
		}
	}
	int rc = run_open(o, names, nnames, json_path, to_file ? &of : NULL, events, table);
	if (to_file && of.f)
		outfile_abort(&of); /* failed before the file was complete: leave nothing */
	return rc;
}

static int run_open(const struct bench_opts *o, char **names, int nnames, const char *json_path,
		    struct outfile *of, const char *events, bool table)
{
	struct harness h = { .o = o };
	if (pin(&h) < 0)
		return 1;
	if (hpm_cycles__open(&h.cc, HPM_CC_AUTO) < 0) {
		fprintf(stderr, "hpm bench: no usable clock: %s\n", hpm_cycles__error());
		return 1;
	}
	h.cs = hpm_cycles__status(h.cc);
	/* nanobench: an epoch of 1000 clock resolutions keeps the reading error
	 * near 0.1 %; never shorter than --min-epoch */
	double res_ticks = h.cs->resolution ? (double)h.cs->resolution : 1;
	double min_ticks = o->min_epoch_ns * (h.cs->hz > 0 ? h.cs->hz / 1e9 : 1);
	h.min_epoch_ticks = fmax(1000 * res_ticks, min_ticks);
	counters_open(&h.ctr, events);
	calibrate(&h);

	struct case_list l = { 0 };
	int nbench = 0;
	for (int k = 0; bench_all(k); k++) {
		const struct bench_def *d = bench_all(k);
		if (!selected(d->name, names, nnames))
			continue;
		nbench++;
		if (d->gen(o, &l) < 0) {
			fprintf(stderr, "hpm bench: %s: cannot create its cases (out of memory)\n",
				d->name);
			return 1;
		}
	}
	struct bench_result *res = calloc((size_t)(l.n ? l.n : 1), sizeof(*res));
	if (!res)
		return 1;
	fprintf(stderr, "hpm bench: %d cases in %d benchmarks; clock %s (%s, %s); counters: %s%s%s\n",
		l.n, nbench, h.cs->name, hpm_cc_source_name(h.cs->source), hpm_cycles__unit(h.cc),
		h.ctr.n ? h.ctr.path : "none", h.ctr.missing[0] ? "; missing: " : "",
		h.ctr.missing);
	double t_start = now_s(), t_last = t_start;
	int nskipped = 0;
	for (int i = 0; i < l.n; i++) {
		struct bench_case *c = &l.v[i];
		double t = now_s();
		if (t - t_last >= 1.0 || i == 0) {
			fprintf(stderr, "hpm bench: [%d/%d] %s (%.0f s)\n", i + 1, l.n, c->name,
				t - t_start);
			t_last = t;
		}
		char why[200] = "";
		if (c->setup && c->setup(c, why, sizeof(why)) < 0) {
			snprintf(res[i].skipped, sizeof(res[i].skipped), "%s", why);
			nskipped++;
			continue;
		}
		measure(&h, c, &res[i]);
		if (c->teardown)
			c->teardown(c);
		if (!res[i].done)
			nskipped++;
	}
	fprintf(stderr, "hpm bench: %d cases measured, %d skipped, %.1f s\n", l.n - nskipped,
		nskipped, now_s() - t_start);

	if (table) {
		printf("clock: %s [%s], %s, %.6g Hz%s; overhead %.1f %s per epoch; %s\n",
		       h.cs->name, hpm_cc_source_name(h.cs->source), hpm_cycles__unit(h.cc), h.cs->hz,
		       h.cs->hz_measured ? " (measured)" : "", h.ovh_ticks, hpm_cycles__unit(h.cc),
		       h.pin_note);
		if (h.ctr.n)
			printf("counters (per unit, overhead subtracted): read via %s\n", h.ctr.path);
		if (h.ctr.missing[0])
			printf("counters not available: %s\n", h.ctr.missing);
		printf("epochs: %d, each >= %.0f ns; values: median per unit, min, MAD\n\n",
		       o->epochs, ticks_to_ns(&h, h.min_epoch_ticks));
		table_header(&h);
		for (int i = 0; i < l.n; i++)
			table_row(&h, &l.v[i], &res[i]);
	}
	FILE *jf = NULL;
	if (json_path) {
		jf = of ? of->f : stdout;
		header_json(jf, &h);
		fprintf(jf, ",\n\"results\":[\n");
		int first = 1;
		for (int i = 0; i < l.n; i++) {
			if (!res[i].done)
				continue;
			fprintf(jf, "%s", first ? "" : ",\n");
			result_json(jf, &h, &l.v[i], &res[i]);
			first = 0;
		}
		fprintf(jf, "\n],\"skipped\":[");
		first = 1;
		for (int i = 0; i < l.n; i++) {
			if (res[i].done)
				continue;
			fprintf(jf, "%s{\"case\":", first ? "" : ",");
			json_string(jf, l.v[i].name);
			fprintf(jf, ",\"why\":");
			json_string(jf, res[i].skipped);
			fprintf(jf, "}");
			first = 0;
		}
		fprintf(jf, "],\"summary\":[");
	}
	int nsum = 0;
	if (table)
		printf("\n");
	for (int k = 0; bench_all(k); k++) {
		const struct bench_def *d = bench_all(k);
		if (d->summary && selected(d->name, names, nnames))
			d->summary(o, &l, res, table ? stdout : NULL, jf, &nsum);
	}
	if (jf) {
		fprintf(jf, "]}\n");
		if (of) {
			int r = outfile_commit(of); /* closes it, complete or not */
			if (r < 0) {
				fprintf(stderr, "hpm bench: cannot write %s: %s\n", json_path,
					strerror(-r));
				return 1;
			}
		}
	}
	hpm_cycles__close(h.cc);
	if (h.ctr.set)
		hpm_evset__delete(h.ctr.set);
	if (h.ctr.ctx)
		hpm_ctx__delete(h.ctr.ctx);
	free(res);
	free(l.v);
	return 0;
}
