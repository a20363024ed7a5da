/* SPDX-License-Identifier: MIT */
/* hpm top internals: cmd_top.c (options, refresh loop), top_sample.c (events,
 * ring buffers, samples into rows), top_table.c (sorting, the table),
 * src/sym/tasksyms.c (addresses to functions). */
#ifndef HPM_TOP_H
#define HPM_TOP_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <termios.h>
#include "tasksyms.h"

#define TOP_MAX_EV 8
#define TOP_MAX_TARGETS 4096
enum key { K_COMM, K_PID, K_TID, K_DSO, K_SYM, K_CPU, K_N };

/* one event of the sampled group */
struct tev {
	char name[128];
	struct perf_event_attr attr;
	bool explicit_mods;
};

/* one CPU or thread: an fd per event, the leader's ring buffer */
struct target {
	pid_t pid;
	int cpu;
	int fd[TOP_MAX_EV];
	uint64_t id[TOP_MAX_EV];
	void *ring;
};

/* one row: samples that share the sort keys */
struct entry {
	char *key;
	char comm[32], dso[96], sym[256];
	pid_t pid, tid;
	int cpu;
	bool kernel;
	uint64_t samples, period;
	double member[TOP_MAX_EV];
	struct entry *next;
};

#define ENTRY_HASH 4096

/* command-line options */
struct top_opts {
	const char *event;
	uint64_t period, freq;
	bool all_cpus, no_inherit, batch, zero, hide_kernel, hide_user;
	int *cpus, ncpus;
	pid_t *pids, *tids;
	int npids, ntids;
	double delay;
	long iterations;
	long entries;
	bool entries_set;
	enum key keys[K_N];
	int nkeys;
	const char *sort_by;
	int sort_idx;
	char **comms, **dsos;
	char *comms_buf, *dsos_buf;
	int ncomms, ndsos;
	pid_t *fpids;
	int nfpids;
	int pages;
	char **cmd;
};

/* everything one hpm top run holds */
struct top {
	struct top_opts *o;
	struct hpm_ctx *ctx;
	struct tasksyms *syms;
	bool ksyms;
	struct tev ev[TOP_MAX_EV];
	int nev;
	struct target *t;
	int nt;
	size_t mapsz, datasz;
	struct entry *tab[ENTRY_HASH];
	uint64_t samples, period, kernel_samples, lost, unresolved;
	/* last member values per (tid, member id): sample reads are cumulative */
	struct last { pid_t tid; uint64_t id, value; } *last;
	size_t nlast, caplast;
	double t0, t_table;
	bool tty;
	struct termios saved;
	bool saved_ok;
};


/* top_sample.c */
int top_setup_events(struct top *tp);
int top_make_targets(struct top *tp, pid_t child);
/* 0, 1 after a fallback (retry), -1 with the error printed */
int top_open_all(struct top *tp);
void top_close_targets(struct top *tp);
void top_drain(struct top *tp, struct target *t);

/* top_table.c */
double top_now(void);
int top_choose_sort(struct top *tp);
void top_print_table(struct top *tp, FILE *f, int width, long rows, bool final);
void top_zero_table(struct top *tp);

#endif
