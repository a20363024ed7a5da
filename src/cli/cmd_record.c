/* SPDX-License-Identifier: MIT */
/* placeholder while 'hpm record' is written; replaced by the real command */
#include <stdio.h>
#include "cli.h"

int cmd_record(int argc, char **argv)
{
	fprintf(stderr, "hpm record: not built yet\n");
	return 2;
}
