/* SPDX-License-Identifier: MIT */
/* The benchmark engine (src/bench) as a command front-end sees it: the options it fills in
 * and the four things `hpm bench` asks for. How cases are made and measured is in
 * bench_def.h, which only the engine includes. */
#ifndef HPM_BENCH_H
#define HPM_BENCH_H

#include <stdbool.h>
#include <stddef.h>

#define BENCH_MAX_SIZES 64
#define BENCH_MAX_ALIGN 64

/* Options shared by every benchmark (set from the command line). */
struct bench_opts {
	size_t sizes[BENCH_MAX_SIZES]; /* copy / io sizes in bytes */
	int nsizes;
	int align[BENCH_MAX_ALIGN][2]; /* (src offset, dst offset) pairs, 0..7 */
	int nalign;
	size_t max_ws;                 /* largest working set of latency/bandwidth */
	size_t bitmap_bits;
	const char *tmpfs_dir;         /* for the tmpfs read/write cases */
	int cpu;                       /* pin here (-1: do not pin) */
	int epochs;
	double min_epoch_ns;
	bool quick;                    /* fewer cases: the lab and smoke tests */
};

/* Name of the i-th benchmark in list order (NULL past the last); *what: one line on it. */
const char *bench_name(int i, const char **what);
/* Measure the named benchmarks (all when nnames is 0): table on stdout, progress on
 * stderr, JSON (format hpm-bench v1) to json_path written whole ("-": stdout). */
int bench_run(const struct bench_opts *o, char **names, int nnames, const char *json_path,
	      const char *events, bool table);
/* `hpm bench compare [--metric M] [--markdown] REF.json OTHER.json...` */
int bench_compare(int argc, char **argv);
/* Every reference copy/memmove/memset against libc; 0 when all agree. */
int bench_copy_selftest(void);

#endif
