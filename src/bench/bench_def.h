/* SPDX-License-Identifier: MIT */
/* Inside the benchmark engine: the benchmark registry (cases, definitions, results) and the
 * helpers benchmarks use; the measuring harness is bench_harness.c. Front-ends see bench.h. */
#ifndef HPM_BENCH_DEF_H
#define HPM_BENCH_DEF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "bench.h"

struct bench_case;
struct bench_result;
typedef int (*case_setup_fn)(struct bench_case *c, char *why, size_t len);
typedef void (*case_run_fn)(struct bench_case *c, uint64_t iters);
typedef void (*case_teardown_fn)(struct bench_case *c);

/* One measured configuration: run(c, iters) performs `iters` operations. */
struct bench_case {
	char name[112];      /* "memcpy/shift/n=1500/src+1/dst+0": stable key for --compare */
	const char *bench;   /* benchmark name ("memcpy") */
	char params[256];    /* JSON members: "\"impl\":\"shift\",\"size\":1500" */
	double bytes;        /* bytes moved per operation (0: not a bandwidth case) */
	double per_op;       /* units per operation (e.g. 64 multiplies); 1 by default */
	const char *unit;    /* what per_op counts ("copy", "multiply", "load", ...) */
	int p[8];            /* benchmark's own integer parameters */
	size_t n;            /* size parameter */
	const char *str;     /* benchmark's own string parameter */
	case_setup_fn setup;
	case_run_fn run;
	case_teardown_fn teardown;
	void *state;         /* allocated by setup, freed by teardown */
	bool threads;        /* runs its own threads: no per-thread counters */
	double min_epoch_ns; /* this case's shortest epoch, if longer than the option */
	/* cases that time themselves (threads: each measures its own work, not the
	 * wake-up of the other): ns of the last run() */
	double (*self_ns)(struct bench_case *c);
};

struct case_list {
	struct bench_case *v;
	int n, cap;
};
struct bench_case *case_add(struct case_list *l, const char *bench, case_run_fn run);

/* A benchmark: adds its cases for the given options. */
struct bench_def {
	const char *name;
	const char *what;
	int (*gen)(const struct bench_opts *o, struct case_list *l);
	/* optional: derived lines for the table and "summary" in JSON, from results */
	void (*summary)(const struct bench_opts *o, const struct case_list *l,
			const struct bench_result *r, FILE *txt, FILE *json, int *nsum);
};

/* Statistics of one value over the epochs (per operation). */
struct bench_stat {
	double median, min, mad;
	bool valid;
};

#define BENCH_MAX_EVENTS 4
struct bench_result {
	bool done;
	char skipped[200];   /* non-empty: not measured, and why */
	uint64_t iters;
	int epochs;
	struct bench_stat ns;            /* per op */
	struct bench_stat ticks;         /* per op, in clock units */
	struct bench_stat ev[BENCH_MAX_EVENTS]; /* per op, from epoch pairs */
	int zero_reads[BENCH_MAX_EVENTS];       /* epochs where the counter read 0 */
};

extern const struct bench_def bench_copy_defs[], bench_io_defs[], bench_bits_defs[],
	bench_mul_defs[], bench_mem_defs[], bench_share_defs[];
/* every benchmark in list order */
const struct bench_def *bench_all(int i);

/* helpers for benchmarks */
/* a setup's zeroed state, hung on c->state; NULL with `why` said when memory is short */
void *case_state(struct bench_case *c, size_t size, char *why, size_t len);
void *bench_alloc(size_t n); /* page-aligned, zeroed, NULL on failure */
void bench_free(void *p, size_t n);
uint64_t bench_rand(uint64_t *state); /* xorshift64*: fixed seeds, same data everywhere */
/* keep a value alive without instructions */
#define BENCH_KEEP(x) __asm__ __volatile__("" : : "r"(x) : "memory")
#define BENCH_CLOBBER() __asm__ __volatile__("" : : : "memory")

#endif
