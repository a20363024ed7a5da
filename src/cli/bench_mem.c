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
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "bench.h"

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
	struct mem_state *st = calloc(1, sizeof(*st));
	if (!st)
		return -1;
	c->state = st;
	st->maplen = c->n + HUGE_;
	st->map = mmap(NULL, st->maplen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (st->map == MAP_FAILED) {
		st->map = NULL;
		snprintf(why, len, "cannot map %zu bytes", st->maplen);
		mem_teardown(c);
		return -1;
	}
	st->buf = (uint64_t *)(((uintptr_t)st->map + HUGE_ - 1) & ~(uintptr_t)(HUGE_ - 1));
#ifdef MADV_HUGEPAGE
	madvise(st->buf, c->n, MADV_HUGEPAGE); /* best effort: the kernel may say no */
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

const struct bench_def bench_mem_defs[] = {
	{ "mem", "pointer-chasing latency (stride and random) over working sets; stream read/write",
	  gen_mem, NULL },
	{ NULL, NULL, NULL, NULL },
};
