/* SPDX-License-Identifier: MIT */
/*
 * memcpy / memmove / memset: libc against reference copies written the way
 * kernels have written them (seed 004, the RISC-V copy_to_user story):
 *   bytes   one byte per iteration (what RISC-V's memcpy did for misaligned
 *           buffers before 5.14)
 *   words   bytes until dst is aligned, then 8-byte words; byte loop when src
 *           and dst are not equally aligned (no misaligned word access)
 *   words8  words, unrolled 8 times (the load-use latency of an in-order core
 *           is hidden behind independent loads)
 *   shift   align dst; then unrolled words if src is aligned too, else the
 *           shift-copy: aligned loads from src, each output word built from two
 *           neighbours with shifts (uaccess.S since 5.14)
 * The compiler must not turn these loops into memcpy calls or vector code:
 * REF marks them so (their instruction counts are checked against their
 * disassembly by the lab tests).
 */
#include <stdlib.h>
#include <string.h>
#include "bench_def.h"

#define REF __attribute__((noinline, optimize("no-tree-vectorize", "no-tree-loop-distribute-patterns", "no-unroll-loops")))

typedef uint64_t __attribute__((may_alias)) word_t;
typedef void (*copy_fn)(unsigned char *d, const unsigned char *s, size_t n);
typedef void (*set_fn)(unsigned char *d, int c, size_t n);

/* The tail of the word copies, dst (and so src) on a word boundary: single
 * words, then bytes; d and s are left past the words. A macro rather than a
 * function: spelt out in each copy, it compiles to the very instructions the
 * copies had (bench/results and the lab tests hold their instruction counts). */
#define WORDS_THEN_BYTES(d, s, n)                              \
	do {                                                   \
		word_t *dw_ = (word_t *)(d);                   \
		const word_t *sw_ = (const word_t *)(s);       \
		for (; (n) >= 8; (n) -= 8)                     \
			*dw_++ = *sw_++;                       \
		(d) = (unsigned char *)dw_;                    \
		(s) = (const unsigned char *)sw_;              \
		for (size_t i_ = 0; i_ < (n); i_++)            \
			(d)[i_] = (s)[i_];                     \
	} while (0)

REF void bench_copy_bytes(unsigned char *d, const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		d[i] = s[i];
}

REF void bench_copy_words(unsigned char *d, const unsigned char *s, size_t n)
{
	if (((uintptr_t)d ^ (uintptr_t)s) & 7) {
		for (size_t i = 0; i < n; i++)
			d[i] = s[i];
		return;
	}
	for (; n && ((uintptr_t)d & 7); n--)
		*d++ = *s++;
	WORDS_THEN_BYTES(d, s, n);
}

/* both aligned: 8 words per iteration, then single words, then bytes */
static inline __attribute__((always_inline)) void words8_aligned(word_t *dw, const word_t *sw,
								 size_t n)
{
	for (; n >= 64; n -= 64, dw += 8, sw += 8) {
		word_t a = sw[0], b = sw[1], c = sw[2], e = sw[3];
		word_t f = sw[4], g = sw[5], h = sw[6], k = sw[7];
		dw[0] = a, dw[1] = b, dw[2] = c, dw[3] = e;
		dw[4] = f, dw[5] = g, dw[6] = h, dw[7] = k;
	}
	unsigned char *d = (unsigned char *)dw;
	const unsigned char *s = (const unsigned char *)sw;
	WORDS_THEN_BYTES(d, s, n);
}

REF void bench_copy_words8(unsigned char *d, const unsigned char *s, size_t n)
{
	if (((uintptr_t)d ^ (uintptr_t)s) & 7) {
		for (size_t i = 0; i < n; i++)
			d[i] = s[i];
		return;
	}
	for (; n && ((uintptr_t)d & 7); n--)
		*d++ = *s++;
	words8_aligned((word_t *)d, (const word_t *)s, n);
}

REF void bench_copy_shift(unsigned char *d, const unsigned char *s, size_t n)
{
	if (n < 16) { /* too short to pay for the set-up */
		for (size_t i = 0; i < n; i++)
			d[i] = s[i];
		return;
	}
	for (; (uintptr_t)d & 7; n--)
		*d++ = *s++;
	size_t off = (uintptr_t)s & 7;
	if (!off) {
		words8_aligned((word_t *)d, (const word_t *)s, n);
		return;
	}
	/* little-endian: output word = low part from cur >> rs, high part from next << ls.
	 * Loads stay inside aligned words that hold at least one source byte. */
	const word_t *sw = (const word_t *)(s - off);
	word_t *dw = (word_t *)d;
	unsigned rs = (unsigned)off * 8, ls = 64 - rs;
	word_t cur = *sw++;
	for (; n >= 8; n -= 8) {
		word_t next = *sw++;
		*dw++ = cur >> rs | next << ls;
		cur = next;
	}
	d = (unsigned char *)dw;
	s = (const unsigned char *)sw - 8 + off;
	for (size_t i = 0; i < n; i++)
		d[i] = s[i];
}

static __attribute__((noinline)) void libc_memcpy(unsigned char *d, const unsigned char *s, size_t n)
{
	memcpy(d, s, n);
}

/* memmove: direction by address, as the kernel's */
REF void bench_move_bytes(unsigned char *d, const unsigned char *s, size_t n)
{
	if (d <= s) {
		for (size_t i = 0; i < n; i++)
			d[i] = s[i];
	} else {
		while (n) {
			n--;
			d[n] = s[n];
		}
	}
}

REF void bench_move_words(unsigned char *d, const unsigned char *s, size_t n)
{
	if (((uintptr_t)d ^ (uintptr_t)s) & 7) {
		bench_move_bytes(d, s, n);
		return;
	}
	if (d <= s) {
		for (; n && ((uintptr_t)d & 7); n--)
			*d++ = *s++;
		WORDS_THEN_BYTES(d, s, n);
		return;
	}
	for (; n && ((uintptr_t)(d + n) & 7);) {
		n--;
		d[n] = s[n];
	}
	for (; n >= 8;) {
		n -= 8;
		*(word_t *)(d + n) = *(const word_t *)(s + n);
	}
	while (n) {
		n--;
		d[n] = s[n];
	}
}

static __attribute__((noinline)) void libc_memmove(unsigned char *d, const unsigned char *s, size_t n)
{
	memmove(d, s, n);
}

REF void bench_set_bytes(unsigned char *d, int c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		d[i] = (unsigned char)c;
}

REF void bench_set_words(unsigned char *d, int c, size_t n)
{
	for (; n && ((uintptr_t)d & 7); n--)
		*d++ = (unsigned char)c;
	word_t w = (unsigned char)c * 0x0101010101010101ull;
	word_t *dw = (word_t *)d;
	for (; n >= 8; n -= 8)
		*dw++ = w;
	d = (unsigned char *)dw;
	for (size_t i = 0; i < n; i++)
		d[i] = (unsigned char)c;
}

static __attribute__((noinline)) void libc_memset(unsigned char *d, int c, size_t n)
{
	memset(d, c, n);
}

static const struct {
	const char *name;
	copy_fn fn;
} copies[] = {
	{ "libc", libc_memcpy },	{ "bytes", bench_copy_bytes }, { "words", bench_copy_words },
	{ "words8", bench_copy_words8 }, { "shift", bench_copy_shift },
};
static const struct {
	const char *name;
	copy_fn fn;
} moves[] = { { "libc", libc_memmove }, { "bytes", bench_move_bytes }, { "words", bench_move_words } };
static const struct {
	const char *name;
	set_fn fn;
} sets[] = { { "libc", libc_memset }, { "bytes", bench_set_bytes }, { "words", bench_set_words } };

/* ---- cases ------------------------------------------------------------- */
/* p[0] impl, p[1] src offset, p[2] dst offset, p[3] direction (memmove: 0 fwd, 1 bwd) */
struct copy_state {
	unsigned char *sbuf, *dbuf;
	size_t len;
	unsigned char *s, *d;
	copy_fn copy;
	set_fn set;
};

#define GAP 256 /* memmove: distance between src and dst, beyond misalignment */

static void fill(unsigned char *p, size_t n, uint64_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)(bench_rand(&seed) >> 56);
}

static int copy_setup(struct bench_case *c, char *why, size_t len)
{
	struct copy_state *st = case_state(c, sizeof(*st), why, len);
	if (!st)
		return -1;
	st->len = c->n + 2 * GAP + 64;
	st->sbuf = bench_alloc(st->len);
	st->dbuf = bench_alloc(st->len);
	if (!st->sbuf || !st->dbuf) {
		snprintf(why, len, "cannot map 2 x %zu bytes", st->len);
		c->teardown(c);
		return -1;
	}
	fill(st->sbuf, st->len, 0x1234567 + c->n);
	/* verify once: a benchmark of a wrong copy is worthless */
	int bad = 0;
	if (!strcmp(c->bench, "memcpy")) {
		st->copy = copies[c->p[0]].fn;
		st->s = st->sbuf + 64 + c->p[1];
		st->d = st->dbuf + 64 + c->p[2];
		st->copy(st->d, st->s, c->n);
		bad = memcmp(st->d, st->s, c->n) != 0;
	} else if (!strcmp(c->bench, "memmove")) {
		st->copy = moves[c->p[0]].fn;
		/* overlapping: forward = dst below src, backward = dst above src */
		unsigned char *base = st->sbuf + 64;
		st->s = base + (c->p[3] ? 0 : GAP) + c->p[1];
		st->d = base + (c->p[3] ? GAP : 0) + c->p[2];
		unsigned char *ref = malloc(c->n ? c->n : 1);
		if (ref) {
			memcpy(ref, st->s, c->n);
			st->copy(st->d, st->s, c->n);
			bad = memcmp(st->d, ref, c->n) != 0;
			free(ref);
		}
	} else {
		st->set = sets[c->p[0]].fn;
		st->d = st->dbuf + 64 + c->p[2];
		st->set(st->d, 0x5a, c->n);
		for (size_t i = 0; i < c->n; i++)
			bad |= st->d[i] != 0x5a;
		bad |= st->d[-1] != 0 || st->d[c->n] != 0;
	}
	if (bad) {
		snprintf(why, len, "BUG: %s produced wrong bytes; not timed", c->name);
		c->teardown(c);
		return -1;
	}
	return 0;
}

static void copy_teardown(struct bench_case *c)
{
	struct copy_state *st = c->state;
	if (!st)
		return;
	bench_free(st->sbuf, st->len);
	bench_free(st->dbuf, st->len);
	free(st);
	c->state = NULL;
}

static void run_copy(struct bench_case *c, uint64_t iters)
{
	struct copy_state *st = c->state;
	copy_fn f = st->copy;
	unsigned char *d = st->d;
	const unsigned char *s = st->s;
	size_t n = c->n;
	for (uint64_t i = 0; i < iters; i++) {
		f(d, s, n);
		BENCH_CLOBBER();
	}
}

static void run_set(struct bench_case *c, uint64_t iters)
{
	struct copy_state *st = c->state;
	set_fn f = st->set;
	unsigned char *d = st->d;
	size_t n = c->n;
	for (uint64_t i = 0; i < iters; i++) {
		f(d, (int)i, n);
		BENCH_CLOBBER();
	}
}

static struct bench_case *add(struct case_list *l, const char *bench, case_run_fn run, size_t n)
{
	struct bench_case *c = case_add(l, bench, run);
	if (!c)
		return NULL;
	c->n = n;
	c->bytes = (double)n;
	c->unit = "call";
	c->setup = copy_setup;
	c->teardown = copy_teardown;
	return c;
}

static int gen_memcpy(const struct bench_opts *o, struct case_list *l)
{
	for (unsigned k = 0; k < sizeof(copies) / sizeof(copies[0]); k++)
		for (int si = 0; si < o->nsizes; si++)
			for (int a = 0; a < o->nalign; a++) {
				struct bench_case *c = add(l, "memcpy", run_copy, o->sizes[si]);
				if (!c)
					return -1;
				c->p[0] = (int)k;
				c->p[1] = o->align[a][0];
				c->p[2] = o->align[a][1];
				snprintf(c->name, sizeof(c->name), "memcpy/%s/n=%zu/s%d-d%d",
					 copies[k].name, c->n, c->p[1], c->p[2]);
				snprintf(c->params, sizeof(c->params),
					 "\"impl\":\"%s\",\"size\":%zu,\"src_off\":%d,\"dst_off\":%d",
					 copies[k].name, c->n, c->p[1], c->p[2]);
			}
	return 0;
}

static int gen_memmove(const struct bench_opts *o, struct case_list *l)
{
	for (unsigned k = 0; k < sizeof(moves) / sizeof(moves[0]); k++)
		for (int dir = 0; dir < 2; dir++)
			for (int si = 0; si < o->nsizes; si++)
				for (int a = 0; a < o->nalign; a++) {
					struct bench_case *c = add(l, "memmove", run_copy, o->sizes[si]);
					if (!c)
						return -1;
					c->p[0] = (int)k;
					c->p[1] = o->align[a][0];
					c->p[2] = o->align[a][1];
					c->p[3] = dir;
					const char *dn = dir ? "bwd" : "fwd";
					snprintf(c->name, sizeof(c->name), "memmove/%s/%s/n=%zu/s%d-d%d",
						 moves[k].name, dn, c->n, c->p[1], c->p[2]);
					snprintf(c->params, sizeof(c->params),
						 "\"impl\":\"%s\",\"dir\":\"%s\",\"size\":%zu,"
						 "\"src_off\":%d,\"dst_off\":%d",
						 moves[k].name, dn, c->n, c->p[1], c->p[2]);
				}
	return 0;
}

static int gen_memset(const struct bench_opts *o, struct case_list *l)
{
	for (unsigned k = 0; k < sizeof(sets) / sizeof(sets[0]); k++)
		for (int si = 0; si < o->nsizes; si++) {
			int seen = 0; /* each destination offset once */
			for (int a = 0; a < o->nalign; a++) {
				int off = o->align[a][1];
				if (seen & 1 << off)
					continue;
				seen |= 1 << off;
				struct bench_case *c = add(l, "memset", run_set, o->sizes[si]);
				if (!c)
					return -1;
				c->p[0] = (int)k;
				c->p[2] = off;
				snprintf(c->name, sizeof(c->name), "memset/%s/n=%zu/d%d", sets[k].name,
					 c->n, off);
				snprintf(c->params, sizeof(c->params),
					 "\"impl\":\"%s\",\"size\":%zu,\"dst_off\":%d", sets[k].name, c->n,
					 off);
			}
		}
	return 0;
}

/* Self-test of every reference copy against libc over all small sizes and
 * offsets (hpm bench selftest): the timed code must be right first. */
int bench_copy_selftest(void)
{
	enum { MAXN = 200 };
	unsigned char src[MAXN + 64], dst[MAXN + 64], ref[MAXN + 64];
	int bad = 0, checked = 0;
	fill(src, sizeof(src), 42);
	for (size_t n = 0; n <= MAXN; n++)
		for (int so = 0; so < 8; so++)
			for (int dof = 0; dof < 8; dof++) {
				for (unsigned k = 0; k < sizeof(copies) / sizeof(copies[0]); k++) {
					memset(dst, 0xee, sizeof(dst));
					copies[k].fn(dst + 16 + dof, src + 16 + so, n);
					memset(ref, 0xee, sizeof(ref));
					memcpy(ref + 16 + dof, src + 16 + so, n);
					checked++;
					if (memcmp(dst, ref, sizeof(dst))) {
						printf("memcpy/%s n=%zu src+%d dst+%d: wrong\n",
						       copies[k].name, n, so, dof);
						bad++;
					}
				}
				for (unsigned k = 0; k < sizeof(moves) / sizeof(moves[0]); k++)
					for (int dir = 0; dir < 2; dir++) {
						unsigned char buf[2 * MAXN + 64], want[2 * MAXN + 64];
						fill(buf, sizeof(buf), 7 + n);
						memcpy(want, buf, sizeof(buf));
						size_t gap = n / 3 + 1; /* overlapping */
						unsigned char *s = buf + 8 + (dir ? 0 : gap) + so;
						unsigned char *d = buf + 8 + (dir ? gap : 0) + dof;
						memmove(want + (d - buf), want + (s - buf), n);
						moves[k].fn(d, s, n);
						checked++;
						if (memcmp(buf, want, sizeof(buf))) {
							printf("memmove/%s/%s n=%zu src+%d dst+%d: wrong\n",
							       moves[k].name, dir ? "bwd" : "fwd", n, so, dof);
							bad++;
						}
					}
			}
	for (size_t n = 0; n <= MAXN; n++)
		for (int dof = 0; dof < 8; dof++)
			for (unsigned k = 0; k < sizeof(sets) / sizeof(sets[0]); k++) {
				memset(dst, 0xee, sizeof(dst));
				sets[k].fn(dst + 16 + dof, 0x5a, n);
				memset(ref, 0xee, sizeof(ref));
				memset(ref + 16 + dof, 0x5a, n);
				checked++;
				if (memcmp(dst, ref, sizeof(dst))) {
					printf("memset/%s n=%zu dst+%d: wrong\n", sets[k].name, n, dof);
					bad++;
				}
			}
	printf("selftest: %d checks, %d wrong\n", checked, bad);
	return bad ? 1 : 0;
}

const struct bench_def bench_copy_defs[] = {
	{ "memcpy", "libc memcpy vs byte, word, unrolled-word and shift copies; sizes x src/dst offsets",
	  gen_memcpy, NULL },
	{ "memmove", "overlapping copies forward (dst below src) and backward (dst above src)",
	  gen_memmove, NULL },
	{ "memset", "libc memset vs byte and word stores; sizes x dst offsets", gen_memset, NULL },
	{ NULL, NULL, NULL, NULL },
};
