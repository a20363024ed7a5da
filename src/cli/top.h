/* SPDX-License-Identifier: MIT */
/* hpm top internals: symbol resolution (top_syms.c) for cmd_top.c. */
#ifndef HPM_TOP_H
#define HPM_TOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct top_syms;

struct top_syms *top_syms_new(void);
void top_syms_free(struct top_syms *s);
/* Load /proc/kallsyms: number of text symbols, 0 when the kernel hides the
 * addresses (kernel.kptr_restrict) or the file cannot be read. */
int top_syms_kernel(struct top_syms *s);

/* What the kernel tells about tasks while sampling. */
void top_syms_mmap(struct top_syms *s, pid_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
		   const char *filename);
void top_syms_comm(struct top_syms *s, pid_t pid, const char *comm, bool exec);
void top_syms_fork(struct top_syms *s, pid_t pid, pid_t ppid);

/* The function an address falls into. kernel: cpumode said so. Returns the
 * symbol name, or NULL (then *dso still names the object when known and *off
 * is the address inside it). *dso is "[kernel]", "[module]", a file's base
 * name, "[vdso]" or "[unknown]". */
const char *top_syms_lookup(struct top_syms *s, pid_t pid, uint64_t ip, bool kernel,
			    const char **dso, uint64_t *off);
/* The command name of a process (from COMM records or /proc). */
const char *top_syms_comm_of(struct top_syms *s, pid_t pid);

#endif
