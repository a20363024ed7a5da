/* SPDX-License-Identifier: MIT */
/* hpm report: perf report's view of a recording. The report is the Python package's
 * (`hpmkit report`, python/hpmkit/profile/report_cli.py); this command finds hpmkit and
 * runs it with the same arguments, so `hpm record` and `hpm report` sit side by side
 * like perf's. Where the package is not installed it says how to get it.
 *
 * hpmkit is looked for in this order: $HPMKIT, beside this binary (an install puts both
 * in one bin/), the source tree's .venv (build/bin/hpm -> ../../.venv/bin/hpmkit), PATH. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"

static void run(const char *path, char **argv)
{
	if (access(path, X_OK) == 0) {
		argv[0] = (char *)path;
		execv(path, argv);
		fprintf(stderr, "hpm report: cannot run %s: %s\n", path, strerror(errno));
		exit(126);
	}
}

int cmd_report(int argc, char **argv)
{
	/* hpmkit report ARGS...: argv[0] is replaced by the path found */
	char **args = calloc((size_t)argc + 2, sizeof(char *));
	if (!args) {
		fprintf(stderr, "hpm report: out of memory\n");
		return 1;
	}
	args[1] = "report";
	for (int i = 1; i < argc; i++)
		args[i + 1] = argv[i];

	const char *env = getenv("HPMKIT");
	if (env && *env) {
		run(env, args);
		fprintf(stderr, "hpm report: HPMKIT=%s is not an executable file; point it at "
			"the hpmkit command (e.g. .venv/bin/hpmkit)\n", env);
		return 127;
	}
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = '\0';
		char *slash = strrchr(self, '/');
		if (slash) {
			char cand[PATH_MAX + 32];
			*slash = '\0';
			snprintf(cand, sizeof(cand), "%s/hpmkit", self);
			run(cand, args);
			snprintf(cand, sizeof(cand), "%s/../../.venv/bin/hpmkit", self);
			run(cand, args);
		}
	}
	args[0] = "hpmkit";
	execvp("hpmkit", args);
	if (errno == ENOENT)
		fprintf(stderr, "hpm report: needs the hpmkit Python package, which is not installed "
			"here; install it (pip install 'hpmkit[analysis]' from the source tree, or "
			"scripts/setup.sh), or set HPMKIT=/path/to/hpmkit, or copy the perf.data "
			"to a machine that has it\n");
	else
		fprintf(stderr, "hpm report: cannot run hpmkit: %s\n", strerror(errno));
	return 127;
}
