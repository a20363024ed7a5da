/* SPDX-License-Identifier: MIT */
/* One line for a command-line mistake that getopt found: which option, and where the help is
 * (a usage mistake is one line like every other error, not the whole help text). Commands
 * set opterr = 0 so getopt itself prints nothing. */
#ifndef HPM_USAGE_ERROR_H
#define HPM_USAGE_ERROR_H

/* cmd: "stat", "record"...; optstring: the one given to getopt_long. Returns 2. */
int usage_error(const char *cmd, const char *optstring, char **argv);

#endif
