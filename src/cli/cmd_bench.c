/* SPDX-License-Identifier: MIT */
/* placeholder while 'hpm bench' is written; replaced by the real command */
#include <stdio.h>
#include "cli.h"

int cmd_bench(int argc, char **argv)
{
	fprintf(stderr, "hpm bench: not built yet\n");
	return 2;
}
