/* SPDX-License-Identifier: MIT */
/* hpm record internals shared by cmd_record.c and record_synth.c */
#ifndef HPM_RECORD_H
#define HPM_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "perf_file.h"

/* Write one record with a sample_id trailer (pid, tid, time 0, cpu 0, id). */
int rec_emit(struct perf_file *pf, uint32_t type, uint16_t misc, const void *body, size_t len,
	     uint32_t pid, uint32_t tid, uint64_t id);
int rec_comm(struct perf_file *pf, pid_t pid, pid_t tid, const char *comm);
int rec_synth_task(struct perf_file *pf, pid_t pid, int *nrec);
int rec_synth_all(struct perf_file *pf, int *nrec);
/* kernel map record + kallsyms kept in memory (-EACCES: addresses hidden) */
int rec_kernel_begin(struct perf_file *pf, int *nsyms);
/* note a sampled kernel address (IP or call-chain entry) */
void rec_kernel_addr(uint64_t addr);
/* write the HPM_KALLSYMS section: all symbols or the used ones; returns count */
int rec_kernel_end(struct perf_file *pf, bool all);

/* tracing-data section describing the raw records of these tracepoints
 * ("sys:name", modifiers allowed); -errno when tracefs cannot be read */
int rec_tracing_data(struct perf_file *pf, const char *const *names, int n);

#endif
