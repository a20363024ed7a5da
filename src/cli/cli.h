/* SPDX-License-Identifier: MIT */
#ifndef HPM_CLI_H
#define HPM_CLI_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>
#include "hpm/hpm.h"
#include "out.h" /* src/util: json_string, outfile, thousands, parse_count */

int cmd_list(int argc, char **argv);
int cmd_stat(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_report(int argc, char **argv);

/* spawn.c: fork `cmd` stopped before exec (go_fd releases it, err_fd reports
 * a failed exec); spawn_release lets it exec: 0, the exec's errno, or -1. */
pid_t spawn(char **cmd, int *go_fd, int *err_fd);
int spawn_release(pid_t child, int go_fd, int err_fd);
/* End as perf record/stat end after a stop signal: by signal sig at its default action
 * (a shell sees 128 + sig), stdio flushed first. Returns only if sig does not end a
 * process (the caller then exits with 128 + sig). */
void end_by_signal(int sig);

/* targets.c: CPU lists "0,2-3" (checked against the online CPUs), PID/TID
 * lists "1,2" (each must exist); errors are one line "hpm CMD: ..." and -1. */
int parse_cpu_list(const char *cmd, const char *s, int **cpus, int *n);
int parse_pid_list(const char *cmd, const char *opt, const char *s, pid_t **pids, int *n);
int online_cpus_list(int **cpus, int *n);
void format_cpu_list(const int *cpus, int n, char *buf, size_t len);
/* threads of a process, sorted; -errno when it is gone */
int process_threads(pid_t pid, pid_t **tids, int *n);
void task_comm(pid_t tid, char *buf, size_t len);
/* still running (a zombie is not) */
bool task_alive(pid_t tid);
void cpu_topology(int cpu, int *socket, int *die, int *core);

#endif
