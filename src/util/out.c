/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "out.h"

/* hpm links libhpm.a, whose writer (src/lib/region.c) is the one implementation */
void hpm__json_string(FILE *f, const char *s);

void json_string(FILE *f, const char *s)
{
	hpm__json_string(f, s);
}

const char *thousands(double v, char *buf, size_t len)
{
	char digits[64];
	snprintf(digits, sizeof(digits), "%.0f", fabs(v));
	size_t n = strlen(digits), o = 0;
	if (v < 0 && o + 1 < len)
		buf[o++] = '-';
	for (size_t i = 0; i < n && o + 2 < len; i++) {
		if (i && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	buf[o] = 0;
	return buf;
}

int outfile_open(struct outfile *o, const char *path)
{
	snprintf(o->path, sizeof(o->path), "%s", path);
	snprintf(o->tmp, sizeof(o->tmp), "%s.tmp.%d", path, (int)getpid());
	o->f = fopen(o->tmp, "w");
	return o->f ? 0 : -errno;
}

int outfile_commit(struct outfile *o)
{
	int bad = ferror(o->f);
	bad |= fclose(o->f);
	o->f = NULL;
	if (bad || rename(o->tmp, o->path) < 0) {
		int e = errno ? errno : EIO;
		unlink(o->tmp);
		return -e;
	}
	return 0;
}

void outfile_abort(struct outfile *o)
{
	if (o->f)
		fclose(o->f);
	o->f = NULL;
	unlink(o->tmp);
}

int parse_count(const char *cmd, const char *s, const char *what, unsigned long long lo,
		unsigned long long hi, unsigned long long *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end || !*s || *s == '-' || v < lo || v > hi) {
		fprintf(stderr, "hpm %s: %s must be a number from %llu to %llu, got '%s'\n", cmd, what,
			lo, hi, s);
		return -1;
	}
	*out = v;
	return 0;
}
