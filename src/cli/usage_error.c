/* SPDX-License-Identifier: MIT */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include "usage_error.h"

int usage_error(const char *cmd, const char *optstring, char **argv)
{
	const char *known = optopt ? strchr(optstring, optopt) : NULL;
	if (known && known[1] == ':')
		fprintf(stderr, "hpm %s: option '-%c' needs a value (see 'hpm %s --help')\n", cmd, optopt, cmd);
	else if (optopt)
		fprintf(stderr, "hpm %s: unknown option '-%c' (see 'hpm %s --help')\n", cmd, optopt, cmd);
	else /* a long option: unknown, or its value is missing; getopt has passed it */
		fprintf(stderr, "hpm %s: unknown option or missing value: '%s' (see 'hpm %s --help')\n", cmd,
			argv[optind - 1], cmd);
	return 2;
}
