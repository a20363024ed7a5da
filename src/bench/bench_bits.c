/* SPDX-License-Identifier: MIT */
/*
 * Bit search (seed 001 table 9: the kernel's find_next_zero_bit on bitmaps
 * filled with ones, zeros and random bits). Two ways to find the lowest set
 * bit of the inverted word, as kernels do:
 *   ctz      __builtin_ctzll: one instruction with x86 BSF/TZCNT, arm64 RBIT+CLZ,
 *            RISC-V Zbb ctz; a libgcc routine or inline sequence without Zbb
 *   generic  the portable C binary search (__ffs of include/asm-generic)
 * Cases: first = search from bit 0; next = from 64 fixed pseudo-random starts.
 */
#include <stdlib.h>
#include <string.h>
#include "bench_def.h"

#define REF __attribute__((noinline))

static inline unsigned ffs_generic(uint64_t w)
{
	unsigned n = 0;
	if (!(w & 0xffffffffu)) {
		n += 32;
		w >>= 32;
	}
	if (!(w & 0xffff)) {
		n += 16;
		w >>= 16;
	}
	if (!(w & 0xff)) {
		n += 8;
		w >>= 8;
	}
	if (!(w & 0xf)) {
		n += 4;
		w >>= 4;
	}
	if (!(w & 0x3)) {
		n += 2;
		w >>= 2;
	}
	if (!(w & 0x1))
		n += 1;
	return n;
}

#define FIND_NEXT_ZERO(NAME, FFS)                                                \
	REF size_t NAME(const uint64_t *map, size_t size, size_t start)          \
	{                                                                        \
		if (start >= size)                                               \
			return size;                                             \
		size_t i = start / 64;                                           \
		uint64_t w = ~map[i] & (~0ull << (start % 64));                  \
		while (!w) {                                                     \
			if (++i * 64 >= size)                                    \
				return size;                                     \
			w = ~map[i];                                             \
		}                                                                \
		size_t r = i * 64 + FFS(w);                                      \
		return r < size ? r : size;                                      \
	}

FIND_NEXT_ZERO(bench_fnzb_ctz, (unsigned)__builtin_ctzll)
FIND_NEXT_ZERO(bench_fnzb_generic, ffs_generic)

typedef size_t (*fnzb_fn)(const uint64_t *, size_t, size_t);
static const struct {
	const char *name;
	fnzb_fn fn;
} impls[] = { { "ctz", bench_fnzb_ctz }, { "generic", bench_fnzb_generic } };
static const char *const fills[] = { "ones", "zeros", "random" };

#define NSTART 64
struct bits_state {
	uint64_t *map;
	size_t words;
	size_t start[NSTART];
};

static volatile size_t sink;

static size_t fnzb_naive(const uint64_t *map, size_t size, size_t start)
{
	for (size_t b = start; b < size; b++)
		if (!(map[b / 64] >> (b % 64) & 1))
			return b;
	return size;
}

static void bits_teardown(struct bench_case *c)
{
	struct bits_state *st = c->state;
	if (st) {
		free(st->map);
		free(st);
	}
	c->state = NULL;
}

static int bits_setup(struct bench_case *c, char *why, size_t len)
{
	struct bits_state *st = case_state(c, sizeof(*st), why, len);
	if (!st)
		return -1;
	st->words = (c->n + 63) / 64;
	st->map = malloc(st->words * 8);
	if (!st->map) {
		snprintf(why, len, "cannot allocate a %zu-bit map", c->n);
		bits_teardown(c);
		return -1;
	}
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	for (size_t i = 0; i < st->words; i++)
		st->map[i] = c->p[1] == 0 ? ~0ull : c->p[1] == 1 ? 0 : bench_rand(&seed);
	for (int i = 0; i < NSTART; i++)
		st->start[i] = c->p[2] ? bench_rand(&seed) % c->n : 0;
	for (int i = 0; i < NSTART; i++)
		if (impls[c->p[0]].fn(st->map, c->n, st->start[i]) !=
		    fnzb_naive(st->map, c->n, st->start[i])) {
			snprintf(why, len, "BUG: %s disagrees with a bit-by-bit search; not timed",
				 c->name);
			bits_teardown(c);
			return -1;
		}
	return 0;
}

static void run_bits(struct bench_case *c, uint64_t iters)
{
	struct bits_state *st = c->state;
	fnzb_fn f = impls[c->p[0]].fn;
	size_t acc = 0, n = c->n;
	for (uint64_t i = 0; i < iters; i++)
		acc += f(st->map, n, st->start[i % NSTART]);
	sink = acc;
}

static int gen_bits(const struct bench_opts *o, struct case_list *l)
{
	for (unsigned k = 0; k < sizeof(impls) / sizeof(impls[0]); k++)
		for (int fill = 0; fill < 3; fill++)
			for (int next = 0; next < 2; next++) {
				struct bench_case *c = case_add(l, "bitsearch", run_bits);
				if (!c)
					return -1;
				c->n = o->bitmap_bits;
				c->unit = "search";
				c->p[0] = (int)k;
				c->p[1] = fill;
				c->p[2] = next;
				c->setup = bits_setup;
				c->teardown = bits_teardown;
				const char *from = next ? "next" : "first";
				snprintf(c->name, sizeof(c->name), "bitsearch/%s/%s/%s/bits=%zu",
					 impls[k].name, fills[fill], from, c->n);
				snprintf(c->params, sizeof(c->params),
					 "\"impl\":\"%s\",\"fill\":\"%s\",\"from\":\"%s\",\"bits\":%zu",
					 impls[k].name, fills[fill], from, c->n);
			}
	return 0;
}

const struct bench_def bench_bits_defs[] = {
	{ "bitsearch", "find first / next zero bit (ctz vs generic C __ffs) on ones, zeros, random",
	  gen_bits, NULL },
	{ NULL, NULL, NULL, NULL },
};
