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
	else if (!strcmp(name, HPM_EXPR_SLOTS))
		*v = arg ? *(double *)arg : 0;
	else if (!strcmp(name, "nodata"))
		return -ENODATA;
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

static double ev_slots(const char *e, double slots, int *ret)
{
	double v = -1;
	*ret = hpm_expr__eval(e, lookup, &slots, &v);
	return v;
}

static int count_ident(const char *ident, void *arg)
{
	(void)ident;
	++*(int *)arg;
	return 0;
}

TEST(expressions_slots)
{
	int r, n = 0;
	/* #slots is looked up like a name and is a term anywhere a name is */
	CHECK(ev_slots("100 * cycles / (#slots * cycles)", 4, &r) == 25.0 && r == 0);
	CHECK(ev_slots("#slots*2", 8, &r) == 16.0 && r == 0);
	CHECK(ev_slots("(cycles - #slots)", 500, &r) == 1000.0 && r == 0);
	/* a lookup that says it has no value for it: that error, not a number */
	ev_slots("cycles / #slots", 0, &r);
	CHECK_EQ_INT(r, -EDOM); /* division by 0: the lookup gave 0 */
	ev("nodata / cycles", &r);
	CHECK_EQ_INT(r, -ENODATA);
	/* perf's other literals are not hpm's: a parse error, so tables naming them fail */
	ev_slots("#smt_on * cycles", 8, &r);
	CHECK_EQ_INT(r, -EINVAL);
	ev_slots("#slotsx", 8, &r);
	CHECK_EQ_INT(r, -EINVAL);
	ev_slots("# slots", 8, &r);
	CHECK_EQ_INT(r, -EINVAL);
	/* it is no event: identifier walks (which open events) do not see it */
	CHECK_EQ_INT(expr_identifiers("STALL_SLOT / (#slots * CPU_CYCLES)", count_ident, &n), 0);
	CHECK_EQ_INT(n, 2);
}
