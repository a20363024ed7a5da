/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <string.h>
#include "proc_maps.h"

int proc_maps_exec(pid_t pid, int (*fn)(const struct proc_map *m, void *arg), void *arg)
{
	char path[64], line[4608];
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0; /* the task exited meanwhile */
	int r = 0;
	while (!r && fgets(line, sizeof(line), f)) {
		unsigned long long start, end, pgoff, ino;
		unsigned maj, min;
		char perms[8];
		int off = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &pgoff, &maj,
			   &min, &ino, &off) < 7 || perms[2] != 'x')
			continue;
		char *name = line + off;
		name[strcspn(name, "\n")] = 0;
		r = fn(&(struct proc_map){ start, end, pgoff, ino, maj, min, name }, arg);
	}
	fclose(f);
	return r;
}
