/* SPDX-License-Identifier: MIT */
/*
 * False sharing (seed 002: perf c2c): two threads on two CPUs each increment
 * their own counter. "shared": the counters sit in one cache line, which then
 * ping-pongs between the cores on every store; "padded": 128 bytes apart (two
 * lines, also clear of adjacent-line prefetch). Same work, the difference is
 * the coherence traffic. The measuring thread is one of the two; the other is
 * a worker pinned to another CPU, kept across epochs.
 */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "bench_def.h"

struct share_state {
	pthread_t th;
	int started;
	int cpu_main, cpu_worker;
	volatile uint64_t *mine, *theirs;
	void *mem;
	/* worker protocol: main bumps gen with iters set; worker answers with done = gen */
	uint64_t iters;
	uint64_t gen, done;
	uint64_t ws, we;   /* the worker's start and end, CLOCK_MONOTONIC ns */
	double last_ns;    /* the slower thread's own duration in the last run */
	int retries;       /* runs repeated because the threads did not overlap */
	int quit;
	int atomic;
};

/* store: load + store (the store buffer forwards our own value, so only the
 * drain waits for the line); atomic: a locked read-modify-write, which must
 * own the line on every increment */
static void bump(volatile uint64_t *p, uint64_t n, int atomic)
{
	if (atomic)
		for (uint64_t i = 0; i < n; i++)
			__atomic_fetch_add(p, 1, __ATOMIC_RELAXED);
	else
		for (uint64_t i = 0; i < n; i++)
			*p = *p + 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__)
	__asm__ __volatile__("pause");
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

/* The worker lives from setup to teardown of one case and spins between
 * epochs (on its own CPU) so that both threads start together. */
static void *worker(void *arg)
{
	struct share_state *st = arg;
	uint64_t seen = 0;
	for (;;) {
		uint64_t g;
		while ((g = __atomic_load_n(&st->gen, __ATOMIC_ACQUIRE)) == seen) {
			if (__atomic_load_n(&st->quit, __ATOMIC_ACQUIRE))
				return NULL;
			if (st->cpu_worker == st->cpu_main)
				sched_yield(); /* one CPU: let the measuring thread run */
			else
				cpu_relax(); /* answer at once: a late start would be timed */
		}
		seen = g;
		st->ws = now_ns();
		bump(st->theirs, st->iters, st->atomic);
		st->we = now_ns();
		__atomic_store_n(&st->done, g, __ATOMIC_RELEASE);
	}
}

static void share_teardown(struct bench_case *c)
{
	struct share_state *st = c->state;
	if (!st)
		return;
	if (st->started) {
		__atomic_store_n(&st->quit, 1, __ATOMIC_RELEASE);
		pthread_join(st->th, NULL);
	}
	free(st->mem);
	free(st);
	c->state = NULL;
}

static int share_setup(struct bench_case *c, char *why, size_t len)
{
	struct share_state *st = case_state(c, sizeof(*st), why, len);
	if (!st)
		return -1;
	if (posix_memalign(&st->mem, 256, 512)) {
		st->mem = NULL;
		snprintf(why, len, "out of memory");
		share_teardown(c);
		return -1;
	}
	memset(st->mem, 0, 512);
	st->mine = (volatile uint64_t *)st->mem;
	st->theirs = (volatile uint64_t *)((char *)st->mem + (c->p[0] ? 128 : 8));
	st->atomic = c->p[1];
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	st->cpu_main = sched_getcpu();
	st->cpu_worker = ncpu > 1 ? (int)((st->cpu_main + 1) % ncpu) : st->cpu_main;
	pthread_attr_t at;
	pthread_attr_init(&at);
	cpu_set_t cs;
	CPU_ZERO(&cs);
	CPU_SET(st->cpu_worker, &cs);
	pthread_attr_setaffinity_np(&at, sizeof(cs), &cs);
	int r = pthread_create(&st->th, &at, worker, st);
	pthread_attr_destroy(&at);
	if (r) {
		snprintf(why, len, "cannot start the second thread on CPU %d: %s", st->cpu_worker,
			 strerror(r));
		share_teardown(c);
		return -1;
	}
	st->started = 1;
	return 0;
}

/* Each thread times its own loop; a run counts only when the two loops
 * overlapped for most of their time (a preempted worker that starts after
 * the other finished would measure no sharing at all). */
static void run_share(struct bench_case *c, uint64_t iters)
{
	struct share_state *st = c->state;
	if (!iters)
		return;
	bool one_cpu = st->cpu_worker == st->cpu_main;
	for (int attempt = 0; attempt < 50; attempt++) {
		st->iters = iters;
		uint64_t g = st->gen + 1;
		__atomic_store_n(&st->gen, g, __ATOMIC_RELEASE);
		uint64_t s0 = now_ns();
		bump(st->mine, iters, st->atomic);
		uint64_t e0 = now_ns();
		while (__atomic_load_n(&st->done, __ATOMIC_ACQUIRE) != g)
			if (one_cpu)
				sched_yield(); /* one CPU: let the worker run its half */
		uint64_t d0 = e0 - s0, d1 = st->we - st->ws;
		uint64_t lo = s0 > st->ws ? s0 : st->ws, hi = e0 < st->we ? e0 : st->we;
		double overlap = hi > lo ? (double)(hi - lo) : 0;
		st->last_ns = (double)(d0 > d1 ? d0 : d1);
		if (one_cpu || overlap >= 0.5 * st->last_ns)
			return;
		st->retries++;
	}
}

static double share_ns(struct bench_case *c)
{
	return ((struct share_state *)c->state)->last_ns;
}

static int gen_share(const struct bench_opts *o, struct case_list *l)
{
	(void)o;
	for (int atomic = 0; atomic < 2; atomic++)
	for (int padded = 0; padded < 2; padded++) {
		struct bench_case *c = case_add(l, "falseshare", run_share);
		if (!c)
			return -1;
		c->p[0] = padded;
		c->p[1] = atomic;
		c->unit = "increment";
		c->threads = true;
		c->min_epoch_ns = 2e6;
		c->self_ns = share_ns;
		c->setup = share_setup;
		c->teardown = share_teardown;
		const char *op = atomic ? "atomic" : "store";
		snprintf(c->name, sizeof(c->name), "falseshare/%s/%s", op, padded ? "padded" : "shared");
		snprintf(c->params, sizeof(c->params),
			 "\"op\":\"%s\",\"layout\":\"%s\",\"distance\":%d,\"cpus\":%ld", op,
			 padded ? "padded" : "shared", padded ? 128 : 8,
			 sysconf(_SC_NPROCESSORS_ONLN) > 1 ? 2L : 1L);
	}
	return 0;
}

static void share_summary(const struct bench_opts *o, const struct case_list *l,
			  const struct bench_result *r, FILE *txt, FILE *json, int *nsum)
{
	(void)o;
	/* [atomic][padded]: median and min over epochs. On a machine shared with
	 * other work the second thread is sometimes preempted; the least disturbed
	 * epoch (min) shows the coherence cost most clearly. */
	double v[2][2] = { { 0, 0 }, { 0, 0 } }, m[2][2] = { { 0, 0 }, { 0, 0 } };
	for (int i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].bench, "falseshare") && r[i].done) {
			v[l->v[i].p[1]][l->v[i].p[0]] = r[i].ns.median;
			m[l->v[i].p[1]][l->v[i].p[0]] = r[i].ns.min;
		}
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	for (int a = 0; a < 2; a++) {
		if (v[a][0] <= 0 || v[a][1] <= 0 || m[a][0] <= 0 || m[a][1] <= 0)
			continue;
		const char *op = a ? "atomic" : "store";
		double ratio = v[a][0] / v[a][1], rmin = m[a][0] / m[a][1];
		if (txt)
			fprintf(txt,
				"false sharing (%s): shared line %.3f ns vs padded %.3f ns per increment: "
				"x%.2f (min over epochs: %.3f vs %.3f, x%.2f)%s\n",
				op, v[a][0], v[a][1], ratio, m[a][0], m[a][1], rmin,
				ncpu > 1 ? "" : " (1 CPU: the threads take turns, no coherence traffic)");
		if (json)
			fprintf(json,
				"%s{\"bench\":\"falseshare\",\"name\":\"slowdown/%s\",\"value\":%.6g,"
				"\"value_min\":%.6g,\"cpus\":%ld,\"what\":\"ns per increment, shared line / "
				"padded (median; value_min: fastest epochs)\"}",
				(*nsum)++ ? "," : "", op, ratio, rmin, ncpu);
	}
}

const struct bench_def bench_share_defs[] = {
	{ "falseshare", "two threads incrementing counters in one cache line vs 128 bytes apart",
	  gen_share, share_summary },
	{ NULL, NULL, NULL, NULL },
};
