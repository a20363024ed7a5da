/* SPDX-License-Identifier: MIT */
/*
 * Memory hierarchy: load-to-use latency by pointer chasing over growing
 * working sets, and streaming bandwidth.
 *   chase/seq     one node per 64-byte line, next = the following line
 *                 (prefetchers see the stride: the best case)
 *   chase/random  the lines in one random cycle (Sattolo): every load
 *                 depends on the previous one and is unpredictable, so the
 *                 time per load steps up when the working set outgrows a
 *                 cache level (hpm's tests check the steps against
 *                 /sys/devices/system/cpu/cpu0/cache)
 *   stream/read   sum of all 8-byte words; stream/write: store every word
 * Buffers are 2 MiB-aligned with MADV_HUGEPAGE so TLB misses blur the cache
 * steps as little as the kernel allows.
 * Summary: for each cache sysfs lists, how clearly chase/random steps up there.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "bench_def.h"

#define LINE 64
#define CHASE 64 /* loads per operation */
#define HUGE_ (2u << 20)

struct mem_state {
	void *map;
	size_t maplen;
	uint64_t *buf; /* ws bytes, 2 MiB aligned */
	void *cur;     /* chase position, carried across calls */
};

static volatile uint64_t sink;

static void mem_teardown(struct bench_case *c)
{
	struct mem_state *st = c->state;
	if (st) {
		if (st->map)
			munmap(st->map, st->maplen);
		free(st);
	}
	c->state = NULL;
}

static int mem_setup(struct bench_case *c, char *why, size_t len)
{
	struct mem_state *st = case_state(c, sizeof(*st), why, len);
	if (!st)
		return -1;
	/* The advice covers whole 2 MiB pages: advising only the n bytes of a small
	 * working set splits off a VMA too small for any huge page, and its 4 KiB
	 * pages then cost L1 TLB misses well inside L2. */
	size_t span = (c->n + HUGE_ - 1) & ~(size_t)(HUGE_ - 1);
	st->maplen = span + HUGE_;
	st->map = mmap(NULL, st->maplen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (st->map == MAP_FAILED) {
		st->map = NULL;
		snprintf(why, len, "cannot map %zu bytes", st->maplen);
		mem_teardown(c);
		return -1;
	}
	st->buf = (uint64_t *)(((uintptr_t)st->map + HUGE_ - 1) & ~(uintptr_t)(HUGE_ - 1));
#ifdef MADV_HUGEPAGE
	madvise(st->buf, span, MADV_HUGEPAGE); /* best effort: the kernel may say no */
#endif
	memset(st->buf, 1, c->n);
	size_t lines = c->n / LINE;
	if (c->p[0] <= 1) {
		/* node i holds the address of the next node; seq: i+1, random: a cycle */
		size_t *order = malloc(sizeof(size_t) * lines);
		if (!order) {
			snprintf(why, len, "cannot allocate the chase order");
			mem_teardown(c);
			return -1;
		}
		for (size_t i = 0; i < lines; i++)
			order[i] = i;
		if (c->p[0] == 1) {
			uint64_t seed = 0x51ed2701u + lines;
			for (size_t i = lines - 1; i > 0; i--) { /* Sattolo: one cycle */
				size_t j = (size_t)(bench_rand(&seed) % i);
				size_t t = order[i];
				order[i] = order[j];
				order[j] = t;
			}
		}
		char *base = (char *)st->buf;
		for (size_t i = 0; i < lines; i++)
			*(void **)(base + order[i] * LINE) = base + order[(i + 1) % lines] * LINE;
		st->cur = base + order[0] * LINE;
		free(order);
	}
	return 0;
}

#define STEP8 p = *(void **)p; p = *(void **)p; p = *(void **)p; p = *(void **)p; \
	      p = *(void **)p; p = *(void **)p; p = *(void **)p; p = *(void **)p;

static void run_chase(struct bench_case *c, uint64_t iters)
{
	struct mem_state *st = c->state;
	void *p = st->cur;
	for (uint64_t i = 0; i < iters; i++) {
		STEP8 STEP8 STEP8 STEP8 STEP8 STEP8 STEP8 STEP8
	}
	st->cur = p;
}

static void run_read(struct bench_case *c, uint64_t iters)
{
	struct mem_state *st = c->state;
	const uint64_t *b = st->buf;
	size_t words = c->n / 8;
	uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
	for (uint64_t it = 0; it < iters; it++) {
		for (size_t i = 0; i < words; i += 4) {
			s0 += b[i];
			s1 += b[i + 1];
			s2 += b[i + 2];
			s3 += b[i + 3];
		}
		BENCH_CLOBBER();
	}
	sink = s0 + s1 + s2 + s3;
}

static void run_write(struct bench_case *c, uint64_t iters)
{
	struct mem_state *st = c->state;
	uint64_t *b = st->buf;
	size_t words = c->n / 8;
	for (uint64_t it = 0; it < iters; it++) {
		for (size_t i = 0; i < words; i++)
			b[i] = it + i;
		BENCH_CLOBBER();
	}
}

/* working sets: 4 KiB .. max, at 1, 1.5 (and for large sets 1.25, 1.75) times powers of 2 */
static int ws_list(const struct bench_opts *o, size_t *ws, int max)
{
	int n = 0;
	for (size_t p = 4096; p <= o->max_ws && n < max; p *= 2) {
		ws[n++] = p;
		if (!o->quick && p * 3 / 2 <= o->max_ws && n < max)
			ws[n++] = p * 3 / 2;
	}
	return n;
}

static const char *const kinds[] = { "chase/seq", "chase/random", "stream/read", "stream/write" };

static int gen_mem(const struct bench_opts *o, struct case_list *l)
{
	size_t ws[128];
	int nws = ws_list(o, ws, 128);
	for (int k = 0; k < 4; k++)
		for (int i = 0; i < nws; i++) {
			struct bench_case *c = case_add(l, "mem", k <= 1 ? run_chase : k == 2 ? run_read : run_write);
			if (!c)
				return -1;
			c->n = ws[i];
			c->p[0] = k;
			c->setup = mem_setup;
			c->teardown = mem_teardown;
			if (k <= 1) {
				c->per_op = CHASE;
				c->unit = "load";
			} else {
				c->bytes = (double)ws[i];
				c->unit = "pass";
			}
			snprintf(c->name, sizeof(c->name), "mem/%s/ws=%zu", kinds[k], ws[i]);
			snprintf(c->params, sizeof(c->params), "\"kind\":\"%s\",\"ws\":%zu", kinds[k],
				 ws[i]);
		}
	return 0;
}

/* The data/unified caches of cpu0 (where the JSON header reads them too). */
struct cache_info {
	int level;
	char type[16];    /* Data, Unified */
	size_t size;
	char shared[64];  /* shared_cpu_list */
};

static int sysfs_line(const char *dir, const char *name, char *buf, size_t len)
{
	char p[160];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	FILE *f = fopen(p, "r");
	if (!f)
		return -1;
	int ok = fgets(buf, (int)len, f) != NULL;
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return ok ? 0 : -1;
}

static int read_caches(struct cache_info *v, int max)
{
	int n = 0;
	for (int i = 0; i < 16 && n < max; i++) {
		char dir[96], lvl[16], size[32];
		struct cache_info c = { 0 };
		snprintf(dir, sizeof(dir), "/sys/devices/system/cpu/cpu0/cache/index%d", i);
		if (sysfs_line(dir, "level", lvl, sizeof(lvl)) < 0 ||
		    sysfs_line(dir, "type", c.type, sizeof(c.type)) < 0 ||
		    sysfs_line(dir, "size", size, sizeof(size)) < 0 || !strcmp(c.type, "Instruction"))
			continue;
		if (sysfs_line(dir, "shared_cpu_list", c.shared, sizeof(c.shared)) < 0)
			snprintf(c.shared, sizeof(c.shared), "?");
		c.level = atoi(lvl);
		c.size = strtoull(size, NULL, 10) *
			 (strchr(size, 'K') ? 1024u : strchr(size, 'M') ? 1u << 20 : 1u);
		if (!c.size)
			continue;
		int j = n++; /* keep sorted by level, then size */
		while (j > 0 && (v[j - 1].level > c.level ||
				 (v[j - 1].level == c.level && v[j - 1].size > c.size))) {
			v[j] = v[j - 1];
			j--;
		}
		v[j] = c;
	}
	return n;
}

/* index of the chase/random result whose working set is closest to want (log scale);
 * -1 if none lies within a factor 1.5 (the range did not reach it) */
static int nearest_ws(const struct case_list *l, const struct bench_result *r, double want)
{
	int best = -1;
	double d = 0;
	for (int i = 0; i < l->n; i++) {
		const struct bench_case *c = &l->v[i];
		if (strcmp(c->bench, "mem") || c->p[0] != 1 || !r[i].done)
			continue;
		double e = fabs(log((double)c->n / want));
		if (best < 0 || e < d) {
			best = i;
			d = e;
		}
	}
	return best >= 0 && d <= log(1.5) ? best : -1;
}

/* For each cache of size S: random-chase latency at S/2 (inside it) and at 4S (outside),
 * their ratio, and the first working set from S/8 up whose latency passes their geometric
 * middle (where the step is). "as sysfs says" needs x1.5 or more and the step within
 * [S/2, 4S]. This is a report, not a verdict: a last-level cache shared with other cores,
 * or with other guests of a VM, often steps early or weakly; hpm's tests assert only L1
 * and L2 (tests/py/cache_steps.py applies the same rule to the JSON). */
static void mem_summary(const struct bench_opts *o, const struct case_list *l,
			const struct bench_result *r, FILE *txt, FILE *json, int *nsum)
{
	struct cache_info cv[16];
	int nc = read_caches(cv, 16);
	int nrand = 0;
	for (int i = 0; i < l->n; i++)
		nrand += !strcmp(l->v[i].bench, "mem") && l->v[i].p[0] == 1 && r[i].done;
	if (!nrand)
		return;
	if (!nc && txt)
		fprintf(txt, "mem: no caches in /sys/devices/system/cpu/cpu0/cache: nothing to line "
			     "the latency steps up with\n");
	for (int k = 0; k < nc; k++) {
		const struct cache_info *c = &cv[k];
		char name[32];
		snprintf(name, sizeof(name), "L%d%s", c->level, !strcmp(c->type, "Data") ? "d" : "");
		int a = nearest_ws(l, r, c->size / 2.0), b = nearest_ws(l, r, 4.0 * c->size);
		if (a < 0 || b < 0) {
			if (txt)
				fprintf(txt, "mem %-3s %8zu KiB (cpus %s): not measured, working sets end at "
					"%zu KiB (needs --max-ws %zu)\n", name, c->size >> 10, c->shared,
					o->max_ws >> 10, 4 * c->size);
			if (json)
				fprintf(json, "%s{\"bench\":\"mem\",\"name\":\"cache_step/%s\",\"value\":null,"
					"\"ok\":false,\"level\":%d,\"size\":%zu,\"shared_cpus\":\"%s\","
					"\"what\":\"not measured: the working sets do not reach S/2 and 4S\"}",
					(*nsum)++ ? "," : "", name, c->level, c->size, c->shared);
			continue;
		}
		double lo = r[a].ns.median / l->v[a].per_op, hi = r[b].ns.median / l->v[b].per_op;
		double mid = sqrt(lo * hi), ratio = lo > 0 ? hi / lo : 0;
		size_t step = 0;
		for (int i = 0; i < l->n && !step; i++) { /* the cases ascend in working set */
			const struct bench_case *x = &l->v[i];
			if (!strcmp(x->bench, "mem") && x->p[0] == 1 && r[i].done &&
			    x->n * 8 >= c->size && r[i].ns.median / x->per_op > mid)
				step = x->n;
		}
		bool strong = ratio >= 1.5, placed = step && step * 2 >= c->size && step <= 4 * c->size;
		char where[64];
		if (step)
			snprintf(where, sizeof(where), "%zu KiB", step >> 10);
		else
			snprintf(where, sizeof(where), "none");
		if (txt)
			fprintf(txt, "mem %-3s %8zu KiB (cpus %s): random chase %.3g ns at %zu KiB -> %.3g ns "
				"at %zu KiB (x%.2f), step at %s: %s\n", name, c->size >> 10, c->shared, lo,
				l->v[a].n >> 10, hi, l->v[b].n >> 10, ratio, where,
				strong && placed ? "as sysfs says"
				: !strong ? "weak (< x1.5): shared or partly hidden cache?"
					  : "away from the sysfs size: shared or partly hidden cache?");
		if (json) {
			fprintf(json, "%s{\"bench\":\"mem\",\"name\":\"cache_step/%s\",\"value\":%.6g,"
				"\"ok\":%s,\"level\":%d,\"size\":%zu,\"shared_cpus\":\"%s\",\"lo_ws\":%zu,"
				"\"lo_ns\":%.6g,\"hi_ws\":%zu,\"hi_ns\":%.6g,\"step_ws\":",
				(*nsum)++ ? "," : "", name, ratio, strong && placed ? "true" : "false", c->level,
				c->size, c->shared, l->v[a].n, lo, l->v[b].n, hi);
			if (step)
				fprintf(json, "%zu", step);
			else
				fprintf(json, "null");
			fprintf(json, ",\"what\":\"random-chase latency at 4S / at S/2 for the sysfs cache size "
				"S; ok: x1.5 or more and the step (latency past the geometric middle) within "
				"[S/2, 4S]\"}");
		}
	}
}

const struct bench_def bench_mem_defs[] = {
	{ "mem", "pointer-chasing latency (stride and random) over working sets; stream read/write",
	  gen_mem, mem_summary },
	{ NULL, NULL, NULL, NULL },
};
