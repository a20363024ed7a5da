/* SPDX-License-Identifier: MIT */
/*
 * Multiply latency (seed 003, test_cycle): a chain of 64 dependent
 * multiplications x = x * y per operation, so each waits for the previous
 * result; the time per multiply is the latency. Widths: 32x32->32, 64x64->64
 * and the high word of 64x64->128. Operand y is 0, 1 or large; a core whose
 * multiplier finishes early for small operands (the seed's Cortex-A55 on
 * 64-bit) is not constant-time, which the summary reports.
 * The empty asm after every multiply hides x from the optimiser (it would
 * otherwise fold x*y*y... into fewer multiplies); it emits no instruction.
 */
#include <math.h>
#include <string.h>
#include "bench_def.h"

#define OPAQUE(v) __asm__("" : "+r"(v))
#define R4(s) s s s s
#define R64(s) R4(R4(R4(s)))
#define CHAIN 64

static volatile uint64_t sink;

__attribute__((noinline)) static uint64_t chain32(uint64_t x0, uint64_t y0, uint64_t iters)
{
	uint32_t x = (uint32_t)x0, y = (uint32_t)y0;
	OPAQUE(y);
	for (uint64_t i = 0; i < iters; i++) {
		R64(x = x * y; OPAQUE(x);)
	}
	return x;
}

__attribute__((noinline)) static uint64_t chain64(uint64_t x, uint64_t y, uint64_t iters)
{
	OPAQUE(y);
	for (uint64_t i = 0; i < iters; i++) {
		R64(x = x * y; OPAQUE(x);)
	}
	return x;
}

__attribute__((noinline)) static uint64_t chain128(uint64_t x, uint64_t y, uint64_t iters)
{
	OPAQUE(y);
	for (uint64_t i = 0; i < iters; i++) {
		R64(x = (uint64_t)(((unsigned __int128)x * y) >> 64); OPAQUE(x);)
	}
	return x;
}

static const struct {
	const char *name;
	uint64_t (*fn)(uint64_t, uint64_t, uint64_t);
} widths[] = { { "32x32", chain32 }, { "64x64", chain64 }, { "64x64to128hi", chain128 } };
static const struct {
	const char *name;
	uint64_t y;
} operands[] = { { "0", 0 }, { "1", 1 }, { "large", 0xffffffffffffffffull } };
#define X0 0x9e3779b97f4a7c15ull

static void run_mul(struct bench_case *c, uint64_t iters)
{
	sink = widths[c->p[0]].fn(X0, operands[c->p[1]].y, iters);
}

static int gen_mul(const struct bench_opts *o, struct case_list *l)
{
	(void)o;
	for (unsigned w = 0; w < 3; w++)
		for (unsigned k = 0; k < 3; k++) {
			struct bench_case *c = case_add(l, "mul", run_mul);
			if (!c)
				return -1;
			c->per_op = CHAIN;
			c->unit = "multiply";
			c->p[0] = (int)w;
			c->p[1] = (int)k;
			snprintf(c->name, sizeof(c->name), "mul/%s/y=%s", widths[w].name,
				 operands[k].name);
			snprintf(c->params, sizeof(c->params), "\"width\":\"%s\",\"operand\":\"%s\"",
				 widths[w].name, operands[k].name);
		}
	return 0;
}

/* Constant-time check: per width, the spread of the per-multiply latency
 * over the three operands (medians), against 5 % plus the epochs' MAD. */
static void mul_summary(const struct bench_opts *o, const struct case_list *l,
			const struct bench_result *r, FILE *txt, FILE *json, int *nsum)
{
	(void)o;
	for (unsigned w = 0; w < 3; w++) {
		double lo = INFINITY, hi = 0, mad = 0;
		int n = 0;
		for (int i = 0; i < l->n; i++) {
			const struct bench_case *c = &l->v[i];
			if (strcmp(c->bench, "mul") || c->p[0] != (int)w || !r[i].done)
				continue;
			double v = r[i].ns.median / c->per_op;
			lo = fmin(lo, v);
			hi = fmax(hi, v);
			mad = fmax(mad, r[i].ns.mad / c->per_op);
			n++;
		}
		if (n < 2 || lo <= 0)
			continue;
		double ratio = hi / lo;
		bool constant = hi - lo <= 0.05 * lo + 2 * mad;
		if (txt)
			fprintf(txt,
				"mul %-13s latency %.3f .. %.3f ns over operands 0/1/large (x%.3f): %s\n",
				widths[w].name, lo, hi, ratio,
				constant ? "constant-time here" : "VARIES with operands (not constant-time)");
		if (json) {
			fprintf(json,
				"%s{\"bench\":\"mul\",\"name\":\"constant_time/%s\",\"value\":%.6g,"
				"\"ok\":%s,\"what\":\"slowest/fastest latency over operands 0, 1, large\"}",
				(*nsum)++ ? "," : "", widths[w].name, ratio, constant ? "true" : "false");
		}
	}
}

const struct bench_def bench_mul_defs[] = {
	{ "mul", "32x32, 64x64, 64x64->128 multiply latency with operands 0, 1, large", gen_mul,
	  mul_summary },
	{ NULL, NULL, NULL, NULL },
};
