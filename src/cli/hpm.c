/* SPDX-License-Identifier: MIT */
/* hpm: the command-line front end of libhpm. One subcommand per file. */
#include <stdio.h>
#include <string.h>
#include "cli.h"

int cmd_papi_avail(int argc, char **argv); /* cmd_papi_avail.c */

static const struct {
	const char *name;
	int (*fn)(int, char **);
	const char *what;
} cmds[] = {
	{ "list", cmd_list, "list events, PMU tables and metric groups" },
	{ "stat", cmd_stat, "count events of a command, a process or CPUs" },
	{ "record", cmd_record, "sample events with call stacks into a perf.data file" },
	{ "top", cmd_top, "the hottest functions, kernel and user, live (like perf top)" },
	{ "report", cmd_report, "perf report's table and call graphs (runs hpmkit report)" },
	{ "bench", cmd_bench, "cycle-exact microbenchmarks (copies, syscalls, latency)" },
	{ "papi-avail", cmd_papi_avail, "PAPI preset events available here (as papi_avail)" },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: hpm [--version] [--help] COMMAND [ARGS]\n\ncommands:\n");
	for (unsigned i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(f, "  %-10s %s\n", cmds[i].name, cmds[i].what);
	fprintf(f, "\n'hpm COMMAND --help' shows a command's options and examples.\n"
		   "Environment: HPM_PMU=table forces an event table, HPM_DATA_DIR=dir reads\n"
		   "tables from dir/events and dir/metrics instead of the built-in copies.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("hpm %s\n", hpm_version());
		return 0;
	}
	for (unsigned i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "hpm: '%s' is not an hpm command; run 'hpm --help' for the list\n", argv[1]);
	return 2;
}
