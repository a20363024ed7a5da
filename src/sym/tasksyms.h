/* SPDX-License-Identifier: MIT */
/* Names for the addresses of running tasks, without the perf tool: kernel functions from
 * /proc/kallsyms (kallsyms.c), user functions from the ELF files the tasks map (with their
 * PLT slots, plt.c, and C++ names demangled, demangle.c), task mappings from /proc/PID/maps
 * (proc_maps.c) and the kernel's MMAP/COMM/FORK records. hpm top's symboliser. */
#ifndef HPM_SYM_TASKSYMS_H
#define HPM_SYM_TASKSYMS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct tasksyms;

/* (Test hook: HPM_TOP_SYMS_DUMP=FILE makes tasksyms_new() print the symbols hpm top
 * finds in FILE and exit; tasksyms.c says more.) */
struct tasksyms *tasksyms_new(void);
void tasksyms_free(struct tasksyms *s);
/* Load /proc/kallsyms: number of text symbols, 0 when the kernel hides the
 * addresses (kernel.kptr_restrict) or the file cannot be read. */
int tasksyms_kernel(struct tasksyms *s);

/* What the kernel tells about tasks while sampling. */
void tasksyms_mmap(struct tasksyms *s, pid_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
		   const char *filename);
void tasksyms_comm(struct tasksyms *s, pid_t pid, const char *comm, bool exec);
void tasksyms_fork(struct tasksyms *s, pid_t pid, pid_t ppid);

/* The function an address falls into. kernel: cpumode said so. Returns the
 * symbol name, or NULL (then *dso still names the object when known and *off
 * is the address inside it). *dso is "[kernel]", "[module]", a file's base
 * name, "[vdso]" or "[unknown]". */
const char *tasksyms_lookup(struct tasksyms *s, pid_t pid, uint64_t ip, bool kernel,
			    const char **dso, uint64_t *off);
/* The command name of a process (from COMM records or /proc). */
const char *tasksyms_comm_of(struct tasksyms *s, pid_t pid);

#endif
