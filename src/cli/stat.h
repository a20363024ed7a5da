/* SPDX-License-Identifier: MIT */
/* hpm stat internals shared by cmd_stat.c (options, run loop), stat_events.c
 * (which events, in which sets) and stat_print.c (text, CSV, JSON). */
#ifndef HPM_STAT_H
#define HPM_STAT_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>
#include "cli.h"

#define STAT_MAX_LISTS 64

enum aggr { AGGR_GLOBAL, AGGR_CPU, AGGR_CORE, AGGR_SOCKET, AGGR_THREAD };

struct stat_opts {
	const char *events[STAT_MAX_LISTS];
	int nevents;
	const char *metrics[16];
	int nmetrics;
	int repeat;
	const char *sep;
	bool json, big_num, verbose;
	bool perf_json;     /* -j: perf stat -j's JSON lines */
	pid_t *pids, *tids; /* -p, -t lists */
	int npids, ntids;
	int *cpus, ncpus;   /* -C list */
	const char *cpu_arg; /* -C as typed: perf titles the table with it */
	bool all_cpus, no_inherit;
	enum aggr aggr;
	int detailed;       /* -d count */
	long interval_ms;   /* -I */
	long delay_ms;      /* -D */
	const char *output;
	bool append;        /* --append: add a block to -o FILE instead of replacing it */
	int group_max;
	char **cmd;
};

struct stat_op;  /* stat_events.c */
struct follow;   /* stat_follow.c */

enum row_state { ROW_COUNTED, ROW_NOT_SUPPORTED, ROW_NOT_COUNTED };

/* One output line per event, in the order the user gave them. */
struct row {
	char name[160];
	int idx;              /* index in every unit's event set; -1 when not opened */
	enum row_state state;
	char why[512];        /* why it is not supported / not counted */
};

/* One event set: the command, one thread, or one CPU. */
struct unit {
	struct hpm_evset *set; /* NULL once a followed thread exited (its counts are in now) */
	pid_t tid;            /* counted thread (-p/-t, --per-thread of a command), else -1 */
	int cpu;              /* counted CPU (-a/-C), else -1 */
	struct hpm_value *now, *prev;
	char comm[16];        /* --per-thread of a command: its name when it ended */
};

/* A printed aggregate: all units, one CPU, one core, one socket, one thread. */
struct bin {
	char label[64];
	int nunits;           /* CPUs (or threads) summed into it */
	int *units;
};

struct stat_state {
	struct hpm_ctx *ctx;
	struct row *rows;
	int nrows;
	struct unit *units;
	int nunits;
	int nev;              /* events per set */
	int gone;             /* threads that exited before they could be attached */
	struct bin *bins;
	int nbins;
	struct stat_op *ops;  /* how the first set was opened, replayed on threads born later */
	int nops;
	struct follow *follow; /* --per-thread of a command: its threads, followed */
	/* over runs (-r), aggregate of all units */
	int runs;
	double *sum, *sumsq;
	double *runsum, *ensum;     /* running and enabled time, summed over runs */
	struct hpm_value *total;    /* last run, all units */
	struct hpm_value **bin_total; /* last run, per bin */
	int nbin_total;
	double *msum;
	int *mvalid;
	char quirks[1024];
	double elapsed_sum, elapsed_sumsq;
	double ru_user, ru_sys; /* the command's CPU time, last run (perf's "seconds user/sys") */
	bool ru_known;          /* the command ended and was waited for in that run */
	int status;
	int status_sig; /* the signal that ended the command, 0 when it exited */
	bool cmd_exited; /* the command ended by exit(), not by a signal, nor still runs */
	bool no_syscall; /* an open failed with ENOSYS: no perf_event_open here at all */
	/* -I */
	FILE *out;
	double t_start;
	double *ivals;        /* JSON: per interval, per bin, per event: value, raw, running */
	double *itimes;
	int nint, intcap;
	bool header_done;
};

/* stat_events.c */
/* Open the events for every unit (targets already in st->units[].tid/cpu).
 * Returns 0, or -1 with the error printed (one line). */
int stat_build(struct stat_state *st, struct stat_opts *o, pid_t child, unsigned flags);
void stat_free_units(struct stat_state *st);
/* Open unit u's set (a thread born while counting) as the first one was
 * opened: 0, 1 when the thread is gone, or -1 with the error printed. */
int stat_open_unit(struct stat_state *st, struct stat_opts *o, int u, unsigned flags);
void stat_free_ops(struct stat_state *st);
/* Bins for the aggregation mode (labels, members). */
int stat_make_bins(struct stat_state *st, struct stat_opts *o);

/* stat_follow.c: --per-thread of a command. Every thread and child process of
 * the command is stopped at birth (ptrace), gets its own counters before it
 * runs, and is read when it exits. */
static inline bool stat_follows(const struct stat_opts *o)
{
	return o->aggr == AGGR_THREAD && o->cmd && !o->npids && !o->ntids && !o->all_cpus &&
	       !o->ncpus;
}
/* Before the child execs: trace it (unless -i). -1 with one line printed. */
int follow_start(struct stat_state *st, struct stat_opts *o, pid_t child);
/* Take every pending event of the traced tasks (births, execs, exits,
 * signals); *done and *status when the command itself ended. -1: fatal (the
 * error printed, the command killed). */
int follow_events(struct stat_state *st, struct stat_opts *o, bool enabled, bool *done,
		  int *status);
/* After the last read: names of tasks still running, detach them, free. */
void follow_end(struct stat_state *st);
/* On an error: kill every traced task of the command and reap it. */
void follow_kill(struct stat_state *st);

/* stat_print.c */
void stat_sum(struct stat_state *st, const struct bin *b, bool delta, struct hpm_value *out);
void stat_print_interval(struct stat_state *st, struct stat_opts *o, double t);
void stat_report(FILE *f, struct stat_state *st, struct stat_opts *o);
const char *stat_target_title(struct stat_opts *o, char *buf, size_t len, bool quoted);

#endif
