/* SPDX-License-Identifier: MIT */
/* Output helpers every C program of the project may use (the hpm commands, the benchmark
 * engine): JSON string quoting, files that appear whole or not at all, number formatting.
 * Nothing here knows hpm's commands or formats. */
#ifndef HPM_UTIL_OUT_H
#define HPM_UTIL_OUT_H

#include <stdio.h>

void json_string(FILE *f, const char *s);
/* 1234567 -> "1,234,567" */
const char *thousands(double v, char *buf, size_t len);
/* Output file written atomically: open a temp file, commit renames it. */
struct outfile {
	FILE *f;
	char path[4096], tmp[4200];
};
int outfile_open(struct outfile *o, const char *path);
int outfile_commit(struct outfile *o);
void outfile_abort(struct outfile *o);

/* "-c 100": a whole number in [lo, hi], else one line "hpm CMD: WHAT must be ..." and -1 */
int parse_count(const char *cmd, const char *s, const char *what, unsigned long long lo,
		unsigned long long hi, unsigned long long *out);

#endif
