/* SPDX-License-Identifier: MIT */
/*
 * Metric expressions: numbers, identifiers, + - * /, parentheses, and the
 * machine fact #slots (perf's literal: the core's issue width per cycle).
 * Identifiers may contain '-' (generic perf names such as L1-dcache-load-misses),
 * so the minus operator must be written with spaces around it.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

struct parser {
	const char *p;
	hpm_lookup_fn lookup;
	void *arg;
	int (*ident_cb)(const char *, void *);
	void *ident_arg;
	int err;
	bool undefined; /* a division by zero or an undefined input somewhere */
};

static void ws(struct parser *ps)
{
	while (*ps->p == ' ' || *ps->p == '\t')
		ps->p++;
}

static bool ident_start(char c)
{
	return isalpha((unsigned char)c) || c == '_';
}

static bool ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '.' || c == '-' || c == ':';
}

static double parse_sum(struct parser *ps);

static double parse_atom(struct parser *ps)
{
	ws(ps);
	char c = *ps->p;
	if (c == '(') {
		ps->p++;
		double v = parse_sum(ps);
		ws(ps);
		if (*ps->p != ')') {
			ps->err = -EINVAL;
			return 0;
		}
		ps->p++;
		return v;
	}
	if (c == '-') { /* unary minus: "-x" */
		ps->p++;
		return -parse_atom(ps);
	}
	if (isdigit((unsigned char)c) || c == '.') {
		char *end;
		double v = strtod(ps->p, &end);
		if (end == ps->p) {
			ps->err = -EINVAL;
			return 0;
		}
		ps->p = end;
		return v;
	}
	if (c == '#') {
		/* a fact of the machine, not an event: the lookup gives its value (or says
		 * why it has none), identifier callbacks never see it since nothing is
		 * counted for it. Only perf's #slots is known; others are errors, so a
		 * table that names one fails to load rather than evaluating to 0. */
		const char *s = ps->p++;
		while (isalnum((unsigned char)*ps->p) || *ps->p == '_')
			ps->p++;
		if ((size_t)(ps->p - s) != strlen(HPM_EXPR_SLOTS) ||
		    strncmp(s, HPM_EXPR_SLOTS, strlen(HPM_EXPR_SLOTS))) {
			ps->err = -EINVAL;
			return 0;
		}
		double v = 0;
		if (ps->lookup) {
			int r = ps->lookup(HPM_EXPR_SLOTS, &v, ps->arg);
			if (r == -EDOM)
				ps->undefined = true;
			else if (r < 0)
				ps->err = r;
		}
		return v;
	}
	if (ident_start(c)) {
		const char *s = ps->p;
		while (ident_char(*ps->p))
			ps->p++;
		/* a trailing '-' belongs to a following operator, not the name */
		while (ps->p > s + 1 && ps->p[-1] == '-')
			ps->p--;
		char name[128];
		size_t n = (size_t)(ps->p - s);
		if (n >= sizeof(name)) {
			ps->err = -ENAMETOOLONG;
			return 0;
		}
		memcpy(name, s, n);
		name[n] = 0;
		if (ps->ident_cb) {
			int r = ps->ident_cb(name, ps->ident_arg);
			if (r < 0)
				ps->err = r;
		}
		double v = 0;
		if (ps->lookup) {
			int r = ps->lookup(name, &v, ps->arg);
			if (r == -EDOM)
				ps->undefined = true;
			else if (r < 0)
				ps->err = r;
		}
		return v;
	}
	ps->err = -EINVAL;
	return 0;
}

static double parse_product(struct parser *ps)
{
	double v = parse_atom(ps);
	for (;;) {
		ws(ps);
		char op = *ps->p;
		if (op != '*' && op != '/')
			return v;
		ps->p++;
		double r = parse_atom(ps);
		if (op == '*')
			v *= r;
		else if (r == 0)
			ps->undefined = true;
		else
			v /= r;
	}
}

static double parse_sum(struct parser *ps)
{
	double v = parse_product(ps);
	for (;;) {
		ws(ps);
		char op = *ps->p;
		if (op != '+' && op != '-')
			return v;
		ps->p++;
		double r = parse_product(ps);
		v = op == '+' ? v + r : v - r;
	}
}

static int run(struct parser *ps, double *out)
{
	double v = parse_sum(ps);
	ws(ps);
	if (!ps->err && *ps->p)
		ps->err = -EINVAL;
	if (ps->err)
		return ps->err;
	if (ps->undefined || !isfinite(v))
		return -EDOM;
	if (out)
		*out = v;
	return 0;
}

HPM_API int hpm_expr__eval(const char *expr, hpm_lookup_fn lookup, void *arg, double *out)
{
	struct parser ps = { .p = expr, .lookup = lookup, .arg = arg };
	return run(&ps, out);
}

int expr_identifiers(const char *expr, int (*cb)(const char *ident, void *arg), void *arg)
{
	struct parser ps = { .p = expr, .ident_cb = cb, .ident_arg = arg };
	int r = run(&ps, NULL);
	return r == -EDOM ? 0 : r; /* identifiers evaluate to 0 here */
}
