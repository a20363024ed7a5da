/* SPDX-License-Identifier: MIT */
/* Metric expressions and the multiplex scaling arithmetic. */
#include <errno.h>
#include <math.h>
#include "check.h"
#include "internal.h"

static int lookup(const char *name, double *v, void *arg)
{
	(void)arg;
	if (!strcmp(name, "instructions"))
		*v = 3000;
	else if (!strcmp(name, "cycles"))
		*v = 1500;
	else if (!strcmp(name, "L1-dcache-load-misses"))
		*v = 30;
	else if (!strcmp(name, "zero"))
		*v = 0;
	else if (!strcmp(name, "never"))
		return -EDOM;
	else
		return -ENOENT;
	return 0;
}

static double ev(const char *e, int *ret)
{
	double v = -1;
	*ret = hpm_expr__eval(e, lookup, NULL, &v);
	return v;
}

TEST(expressions)
{
	int r;
	CHECK(ev("instructions / cycles", &r) == 2.0 && r == 0);
	CHECK(ev("1000 * L1-dcache-load-misses / instructions", &r) == 10.0 && r == 0);
	CHECK(ev("100 * (cycles - 500) / cycles", &r) == 100.0 * 1000 / 1500 && r == 0);
	CHECK(ev("2 + 3 * 4", &r) == 14.0 && r == 0);
	CHECK(ev("(2 + 3) * 4", &r) == 20.0 && r == 0);
	CHECK(ev("10 - 2 - 3", &r) == 5.0 && r == 0);
	CHECK(ev("-2 * 3", &r) == -6.0 && r == 0);
	CHECK(ev("1e3 * 2", &r) == 2000.0 && r == 0);
	ev("instructions / zero", &r);
	CHECK_EQ_INT(r, -EDOM);
	ev("never / cycles", &r);
	CHECK_EQ_INT(r, -EDOM);
	ev("nosuch / cycles", &r);
	CHECK_EQ_INT(r, -ENOENT);
	ev("(cycles", &r);
	CHECK_EQ_INT(r, -EINVAL);
	ev("cycles cycles", &r);
	CHECK_EQ_INT(r, -EINVAL);
	ev("", &r);
	CHECK_EQ_INT(r, -EINVAL);
}

TEST(scaling)
{
	CHECK(hpm_scale(100, 100, 100) == 100.0);
	CHECK(hpm_scale(100, 200, 100) == 200.0);   /* ran half the time */
	CHECK(hpm_scale(1000, 300, 100) == 3000.0);
	CHECK(hpm_scale(123, 100, 0) == 0.0);       /* never ran: no value, not a guess */
	CHECK(hpm_scale(7, 0, 0) == 0.0);
	/* large counts keep their precision when not multiplexed */
	CHECK(hpm_scale(0x1fffffffffffffULL, 5, 5) == (double)0x1fffffffffffffULL);
	CHECK(fabs(hpm_scale(1000000007ULL, 3, 2) - 1500000010.5) < 1e-3);
}
