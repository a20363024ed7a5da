/* SPDX-License-Identifier: MIT */
/* The executable mappings of a task from /proc/PID/maps: one reader for hpm
 * top (its symbols) and hpm record (the MMAP2 records it synthesizes). */
#ifndef HPM_PROC_MAPS_H
#define HPM_PROC_MAPS_H

#include <stdint.h>
#include <sys/types.h>

struct proc_map {
	uint64_t start, end, pgoff, ino;
	unsigned maj, min;
	const char *name; /* the file, "[vdso]", ...; "" for anonymous memory */
};

/* Calls fn for each executable mapping of pid, in the file's order, until fn
 * returns nonzero; returns that value, else 0 (also when the task is gone). */
int proc_maps_exec(pid_t pid, int (*fn)(const struct proc_map *m, void *arg), void *arg);

#endif
