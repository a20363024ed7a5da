/* SPDX-License-Identifier: MIT */
/* What hpm stat, record and top count: CPU lists ("0,2-3", as perf takes
 * them), PID/TID lists, the threads of a process, CPU topology. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* Parse "0,2-3" into a sorted list without duplicates. */
static int parse_ranges(const char *s, int max, int **out, int *n)
{
	int cap = 16, k = 0, *v = malloc(sizeof(int) * (size_t)cap);
	if (!v)
		return -ENOMEM;
	const char *p = s;
	while (*p) {
		char *end;
		if (*p < '0' || *p > '9')
			goto bad;
		long a = strtol(p, &end, 10), b = a;
		p = end;
		if (*p == '-') {
			if (p[1] < '0' || p[1] > '9')
				goto bad;
			b = strtol(p + 1, &end, 10);
			p = end;
		}
		if (a < 0 || b < a || b > max)
			goto bad;
		for (long c = a; c <= b; c++) {
			if (k == cap) {
				int *nv = realloc(v, sizeof(int) * (size_t)(cap *= 2));
				if (!nv) {
					free(v);
					return -ENOMEM;
				}
				v = nv;
			}
			v[k++] = (int)c;
		}
		if (*p == ',' && p[1])
			p++;
		else if (*p)
			goto bad;
	}
	if (!k)
		goto bad;
	qsort(v, (size_t)k, sizeof(int), cmp_int);
	int u = 0;
	for (int i = 0; i < k; i++)
		if (!u || v[u - 1] != v[i])
			v[u++] = v[i];
	*out = v;
	*n = u;
	return 0;
bad:
	free(v);
	return -EINVAL;
}

int online_cpus_list(int **cpus, int *n)
{
	char buf[4096];
	FILE *f = fopen("/sys/devices/system/cpu/online", "r");
	if (f && fgets(buf, sizeof(buf), f)) {
		fclose(f);
		buf[strcspn(buf, "\n")] = 0;
		if (parse_ranges(buf, 1 << 20, cpus, n) == 0)
			return 0;
	} else if (f) {
		fclose(f);
	}
	long c = sysconf(_SC_NPROCESSORS_ONLN);
	if (c < 1)
		c = 1;
	*cpus = malloc(sizeof(int) * (size_t)c);
	if (!*cpus)
		return -ENOMEM;
	for (int i = 0; i < c; i++)
		(*cpus)[i] = i;
	*n = (int)c;
	return 0;
}

int parse_cpu_list(const char *cmd, const char *s, int **cpus, int *n)
{
	if (parse_ranges(s, 1 << 20, cpus, n)) {
		fprintf(stderr, "hpm %s: -C takes a CPU list like 0 or 0,2-3, got '%s'\n", cmd, s);
		return -1;
	}
	int *on, non;
	if (online_cpus_list(&on, &non))
		return 0;
	for (int i = 0; i < *n; i++) {
		bool ok = false;
		for (int k = 0; k < non; k++)
			ok |= on[k] == (*cpus)[i];
		if (!ok) {
			char list[256];
			format_cpu_list(on, non, list, sizeof(list));
			fprintf(stderr, "hpm %s: CPU %d is not online (online CPUs: %s)\n", cmd,
				(*cpus)[i], list);
			free(on);
			free(*cpus);
			*cpus = NULL;
			return -1;
		}
	}
	free(on);
	return 0;
}

void format_cpu_list(const int *cpus, int n, char *buf, size_t len)
{
	buf[0] = 0;
	for (int i = 0; i < n;) {
		int j = i;
		while (j + 1 < n && cpus[j + 1] == cpus[j] + 1)
			j++;
		size_t o = strlen(buf);
		if (j >= i + 2)
			snprintf(buf + o, len - o, "%s%d-%d", o ? "," : "", cpus[i], cpus[j]);
		else if (j == i + 1)
			snprintf(buf + o, len - o, "%s%d,%d", o ? "," : "", cpus[i], cpus[j]);
		else
			snprintf(buf + o, len - o, "%s%d", o ? "," : "", cpus[i]);
		i = j + 1;
	}
}

int parse_pid_list(const char *cmd, const char *opt, const char *s, pid_t **pids, int *n)
{
	int k = 1;
	for (const char *p = s; *p; p++)
		k += *p == ',';
	*pids = malloc(sizeof(pid_t) * (size_t)k);
	if (!*pids)
		return -1;
	*n = 0;
	for (const char *p = s;;) {
		char *end;
		errno = 0;
		long v = strtol(p, &end, 10);
		if (end == p || *p == '-' || *p == '+' || errno || v < 1 || v > (1L << 30) ||
		    (*end && *end != ',') || (*end == ',' && !end[1])) {
			fprintf(stderr, "hpm %s: %s takes a process id or a list like 123,456, got "
					"'%s'\n", cmd, opt, s);
			free(*pids);
			*pids = NULL;
			return -1;
		}
		char path[64];
		snprintf(path, sizeof(path), "/proc/%ld", v);
		if (access(path, F_OK)) {
			fprintf(stderr, "hpm %s: no process or thread %ld (%s)\n", cmd, v, opt);
			free(*pids);
			*pids = NULL;
			return -1;
		}
		bool dup = false;
		for (int i = 0; i < *n; i++)
			dup |= (*pids)[i] == (pid_t)v;
		if (!dup)
			(*pids)[(*n)++] = (pid_t)v;
		if (!*end)
			break;
		p = end + 1;
	}
	return 0;
}

int process_threads(pid_t pid, pid_t **tids, int *n)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return -errno;
	int cap = 16, k = 0;
	int *v = malloc(sizeof(int) * (size_t)cap);
	for (struct dirent *de; v && (de = readdir(d));) {
		int t = atoi(de->d_name);
		if (t <= 0)
			continue;
		if (k == cap) {
			int *nv = realloc(v, sizeof(int) * (size_t)(cap *= 2));
			if (!nv)
				break;
			v = nv;
		}
		v[k++] = t;
	}
	closedir(d);
	if (!v)
		return -ENOMEM;
	qsort(v, (size_t)k, sizeof(int), cmp_int);
	*tids = malloc(sizeof(pid_t) * (size_t)(k ? k : 1));
	if (!*tids) {
		free(v);
		return -ENOMEM;
	}
	for (int i = 0; i < k; i++)
		(*tids)[i] = (pid_t)v[i];
	free(v);
	*n = k;
	return 0;
}

void task_comm(pid_t tid, char *buf, size_t len)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)tid);
	FILE *f = fopen(path, "r");
	buf[0] = 0;
	if (f) {
		if (!fgets(buf, (int)len, f))
			buf[0] = 0;
		fclose(f);
	}
	buf[strcspn(buf, "\n")] = 0;
	if (!buf[0])
		snprintf(buf, len, "?");
}

static int read_int(const char *fmt, int cpu, int dflt)
{
	char path[128], buf[32];
	snprintf(path, sizeof(path), fmt, cpu);
	FILE *f = fopen(path, "r");
	if (!f)
		return dflt;
	int v = fgets(buf, sizeof(buf), f) ? atoi(buf) : dflt;
	fclose(f);
	return v;
}

void cpu_topology(int cpu, int *socket, int *die, int *core)
{
	*socket = read_int("/sys/devices/system/cpu/cpu%d/topology/physical_package_id", cpu, 0);
	*die = read_int("/sys/devices/system/cpu/cpu%d/topology/die_id", cpu, 0);
	*core = read_int("/sys/devices/system/cpu/cpu%d/topology/core_id", cpu, cpu);
	/* -1 where the platform does not say (some arm64 firmware) */
	if (*socket < 0)
		*socket = 0;
	if (*die < 0)
		*die = 0;
}

bool task_alive(pid_t tid)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)tid);
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	char *p = NULL;
	if (fgets(buf, sizeof(buf), f))
		p = strrchr(buf, ')');
	fclose(f);
	/* a zombie (Z) or dead (X) task counts nothing more */
	return p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}
