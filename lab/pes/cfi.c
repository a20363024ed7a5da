/* SPDX-License-Identifier: MIT */
/* User stacks unwound with the binary's own call-frame information (DWARF CFI from
 * .eh_frame, else .debug_frame), as gdb and libunwind do. Frame pointers alone are not
 * enough in user space: RISC-V GCC omits them by default, so a distribution's libc (Debian's
 * riscv64 glibc) uses s0 as an ordinary register and a frame-pointer walk through it reads
 * garbage (seen in the lab: `frame_dummy` at the root of riscv64 stacks where aarch64 shows
 * `_start;__libc_start_main_impl`). Functions without CFI keep the frame-pointer walk
 * (unwind.c).
 *
 * Formats: DWARF 4/5 section 6.4 (call frame information) and the LSB's .eh_frame
 * (augmentations z, R, P, L, S; pointer encodings). Only integer registers are tracked
 * (DWARF numbers 0-31: riscv x0-x31, arm64 x0-x30 and sp), which is all a walk needs. */
#include <stdlib.h>
#include <string.h>
#include "pes.h"
#include "sorted.h"

#define NCOL 32
#define STATE_DEPTH 8

enum how { R_SAME, R_UNDEF, R_OFF, R_VALOFF, R_REG, R_UNKNOWN };

struct rule {
	uint8_t how;
	int64_t v;
};

struct row {
	int cfa_reg; /* -1: expression (not followed) */
	int64_t cfa_off;
	struct rule r[NCOL];
	bool ra_signed; /* arm64 pointer authentication (DW_CFA_AARCH64_negate_ra_state) */
};

struct fde {
	uint64_t lo, hi;
	const uint8_t *ins, *end; /* FDE instructions */
	uint32_t cie;             /* index into cies */
};

struct cie {
	uint64_t code_align;
	int64_t data_align;
	unsigned ra;
	bool signal, zaug;
	uint8_t fde_enc;
	const uint8_t *ins, *end; /* initial instructions */
};

struct cfi {
	uint8_t *data[2]; /* owned copies of .eh_frame and .debug_frame */
	struct fde *f;
	size_t nf, capf;
	struct cie *c;
	size_t nc, capc;
};

/* --- reading the sections ------------------------------------------------------------ */

struct rd {
	const uint8_t *p, *end;
	bool bad;
};

static uint64_t uget(struct rd *r, int n)
{
	if (r->bad || r->end - r->p < n) {
		r->bad = true;
		return 0;
	}
	uint64_t v = 0;
	for (int i = 0; i < n; i++)
		v |= (uint64_t)r->p[i] << (8 * i);
	r->p += n;
	return v;
}

/* n bytes passed over; past the end is malformed */
static void skip(struct rd *r, uint64_t n)
{
	if (n > (uint64_t)(r->end - r->p)) {
		r->bad = true;
		r->p = r->end;
	} else {
		r->p += n;
	}
}

static uint64_t uleb(struct rd *r)
{
	uint64_t v = 0;
	for (unsigned sh = 0; !r->bad; sh += 7) {
		if (r->p >= r->end) {
			r->bad = true;
			break;
		}
		uint8_t b = *r->p++;
		if (sh < 64)
			v |= (uint64_t)(b & 0x7f) << sh;
		if (!(b & 0x80))
			break;
	}
	return v;
}

static int64_t sleb(struct rd *r)
{
	uint64_t v = 0;
	unsigned sh = 0;
	uint8_t b = 0;
	do {
		if (r->p >= r->end) {
			r->bad = true;
			return 0;
		}
		b = *r->p++;
		if (sh < 64)
			v |= (uint64_t)(b & 0x7f) << sh;
		sh += 7;
	} while (b & 0x80);
	if (sh < 64 && (b & 0x40))
		v |= ~0ULL << sh;
	return (int64_t)v;
}

/* an encoded pointer (DW_EH_PE_*); base_va is the run-time address of r->p */
static uint64_t eh_ptr(struct rd *r, uint8_t enc, uint64_t base_va)
{
	if (enc == 0xff) /* DW_EH_PE_omit */
		return 0;
	uint64_t v;
	switch (enc & 0x0f) {
	case 0x00: v = uget(r, 8); break;
	case 0x01: v = uleb(r); break;
	case 0x02: v = uget(r, 2); break;
	case 0x03: v = uget(r, 4); break;
	case 0x04: v = uget(r, 8); break;
	case 0x09: v = (uint64_t)sleb(r); break;
	case 0x0a: v = (uint64_t)(int64_t)(int16_t)uget(r, 2); break;
	case 0x0b: v = (uint64_t)(int64_t)(int32_t)uget(r, 4); break;
	case 0x0c: v = uget(r, 8); break;
	default: r->bad = true; return 0;
	}
	if ((enc & 0x70) == 0x10) /* pcrel */
		v += base_va;
	else if (enc & 0x70)
		r->bad = true; /* textrel/datarel/funcrel: not used by static executables */
	return v;
}

static void *grow(void *p, size_t *cap, size_t n, size_t sz)
{
	if (n < *cap)
		return p;
	*cap = *cap ? 2 * *cap : 64;
	return realloc(p, *cap * sz);
}

/* CIE at offset off of the section; its index (parsed once), or -1 */
static int cie_at(struct cfi *c, const uint8_t *sec, size_t len, uint64_t off, bool eh, uint64_t sec_va,
		  uint64_t *offs, size_t base)
{
	for (size_t i = base; i < c->nc; i++)
		if (offs[i - base] == off)
			return (int)i;
	if (c->nc - base >= 4096 || off + 4 > len)
		return -1;
	struct rd r = { sec + off, sec + len, false };
	uint64_t l = uget(&r, 4);
	bool wide = l == 0xffffffff;
	if (wide)
		l = uget(&r, 8);
	if (r.bad || l > (uint64_t)(r.end - r.p))
		return -1;
	r.end = r.p + l;
	uint64_t id = uget(&r, wide ? 8 : 4);
	if (id != (eh ? 0 : wide ? ~0ULL : 0xffffffffULL))
		return -1;
	struct cie k = { .fde_enc = 0x00 /* absptr */ };
	unsigned ver = (unsigned)uget(&r, 1);
	const char *aug = (const char *)r.p;
	size_t alen = strnlen(aug, (size_t)(r.end - r.p));
	if (alen == (size_t)(r.end - r.p))
		return -1;
	r.p += alen + 1;
	if (ver >= 4)
		skip(&r, 2); /* address_size, segment_size */
	k.code_align = uleb(&r);
	k.data_align = sleb(&r);
	k.ra = ver == 1 ? (unsigned)uget(&r, 1) : (unsigned)uleb(&r);
	k.zaug = aug[0] == 'z';
	if (k.zaug) {
		uint64_t alen2 = uleb(&r);
		struct rd after = r;
		skip(&after, alen2);
		if (after.bad)
			return -1;
		const uint8_t *aend = after.p;
		for (const char *a = aug + 1; *a && !r.bad; a++) {
			if (*a == 'R')
				k.fde_enc = (uint8_t)uget(&r, 1);
			else if (*a == 'L')
				uget(&r, 1);
			else if (*a == 'P') {
				uint8_t pe = (uint8_t)uget(&r, 1);
				eh_ptr(&r, pe & 0x7f, sec_va + (uint64_t)(r.p - sec));
			} else if (*a == 'S')
				k.signal = true;
			else if (*a != 'B' && *a != 'G')
				break; /* unknown: the length lets us skip the rest */
		}
		r.p = aend;
	} else if (aug[0]) {
		return -1; /* old augmentations ("eh") carry data we cannot size */
	}
	if (r.bad || r.p > r.end || k.ra >= NCOL)
		return -1;
	k.ins = r.p;
	k.end = r.end;
	c->c = grow(c->c, &c->capc, c->nc, sizeof(*c->c));
	c->c[c->nc] = k;
	offs[c->nc - base] = off;
	return (int)c->nc++;
}

static void index_section(struct cfi *c, const uint8_t *sec, size_t len, uint64_t sec_va, bool eh)
{
	uint64_t *offs = calloc(4096, sizeof(uint64_t)); /* section offsets of the CIEs parsed */
	size_t base = c->nc;
	struct rd r = { sec, sec + len, false };
	while (!r.bad && r.end - r.p >= 4) {
		uint64_t l = uget(&r, 4);
		if (l == 0)
			break; /* .eh_frame terminator */
		bool wide = l == 0xffffffff;
		if (wide)
			l = uget(&r, 8);
		if (r.bad || l > (uint64_t)(r.end - r.p))
			break;
		const uint8_t *next = r.p + l;
		struct rd e = { r.p, next, false };
		const uint8_t *idp = e.p;
		uint64_t id = uget(&e, wide ? 8 : 4);
		bool is_cie = eh ? id == 0 : id == (wide ? ~0ULL : 0xffffffffULL);
		if (!is_cie) {
			uint64_t cie_off = eh ? (uint64_t)(idp - sec) - id : id;
			int ci = cie_off < len ? cie_at(c, sec, len, cie_off, eh, sec_va, offs, base) : -1;
			if (ci >= 0) {
				const struct cie *k = &c->c[ci];
				uint8_t enc = eh ? k->fde_enc : 0x00;
				uint64_t lo = eh_ptr(&e, enc, sec_va + (uint64_t)(e.p - sec));
				uint64_t n = eh_ptr(&e, enc & 0x0f, 0);
				if (k->zaug) { /* FDE augmentation data (an LSDA pointer): skipped */
					skip(&e, uleb(&e));
				}
				if (!e.bad && e.p <= next && n && lo) {
					c->f = grow(c->f, &c->capf, c->nf, sizeof(*c->f));
					c->f[c->nf++] = (struct fde){ lo, lo + n, e.p, next, (uint32_t)ci };
				}
			}
		}
		r.p = next;
	}
	free(offs);
}

static int cmp_fde(const void *a, const void *b)
{
	const struct fde *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* sections are copied: the ELF image is freed after loading (elf.c) */
void cfi_load(struct exe *e, const void *eh, size_t eh_len, uint64_t eh_va, const void *dbg, size_t dbg_len)
{
	struct cfi *c = calloc(1, sizeof(*c));
	const void *src[2] = { eh, dbg };
	size_t len[2] = { eh_len, dbg_len };
	for (int i = 0; i < 2; i++) {
		if (!src[i] || !len[i])
			continue;
		c->data[i] = malloc(len[i]);
		memcpy(c->data[i], src[i], len[i]);
		size_t before = c->nf;
		if (before) /* .eh_frame's entries, sorted for the lookups below */
			qsort(c->f, before, sizeof(*c->f), cmp_fde);
		index_section(c, c->data[i], len[i], i == 0 ? eh_va : 0, i == 0);
		/* .eh_frame first: .debug_frame only adds functions it does not cover (an entry
		 * overlaps an .eh_frame range if it overlaps the one that starts at or before it
		 * or the one after) */
		if (i == 1 && before) {
			size_t k = before;
			for (size_t j = before; j < c->nf; j++) {
				size_t at = sorted_count_le(c->f, before, sizeof(*c->f), c->f[j].lo);
				bool dup = (at > 0 && c->f[at - 1].hi > c->f[j].lo) ||
					   (at < before && c->f[at].lo < c->f[j].hi);
				if (!dup)
					c->f[k++] = c->f[j];
			}
			c->nf = k;
		}
	}
	if (c->nf) /* qsort(NULL, 0) is undefined */
		qsort(c->f, c->nf, sizeof(*c->f), cmp_fde);
	e->cfi = c;
}

size_t cfi_count(const struct exe *e)
{
	return e && e->cfi ? e->cfi->nf : 0;
}

static const struct fde *fde_for(const struct cfi *c, uint64_t pc)
{
	size_t lo = sorted_count_le(c->f, c->nf, sizeof(*c->f), pc);
	if (!lo || pc >= c->f[lo - 1].hi)
		return NULL;
	return &c->f[lo - 1];
}

bool ureg_get(struct uregs *u, int i, uint64_t *v)
{
	uint64_t bit = 1ULL << i;
	if (!(u->known & bit))
		return false;
	if (u->lazy & bit) {
		u->v[i] = reg(u->src, i);
		u->lazy &= ~bit;
	} else if (u->mlazy & bit) {
		u->mlazy &= ~bit;
		if (!u->rd(u->ctx, u->at[i], &u->v[i])) {
			u->known &= ~bit;
			return false;
		}
	}
	*v = u->v[i];
	return true;
}

/* register i gets a value of its own in this frame */
static void uset(struct uregs *u, int i, uint64_t v)
{
	u->v[i] = v;
	u->lazy &= ~(1ULL << i);
	u->mlazy &= ~(1ULL << i);
	u->known |= 1ULL << i;
}

/* register i was saved at address a by this frame */
static void usaved(struct uregs *u, int i, uint64_t a)
{
	u->at[i] = a;
	u->lazy &= ~(1ULL << i);
	u->mlazy |= 1ULL << i;
	u->known |= 1ULL << i;
}

static void unknown(struct uregs *u, int i)
{
	u->known &= ~(1ULL << i);
	u->lazy &= ~(1ULL << i);
	u->mlazy &= ~(1ULL << i);
}

/* --- executing the rules -------------------------------------------------------------- */

/* factored offsets wrap as the hardware would; a malformed table must not be undefined
 * behaviour in the plugin */
static int64_t fac(uint64_t v, int64_t align)
{
	return (int64_t)(v * (uint64_t)align);
}

static void set(struct row *w, uint64_t reg, uint8_t how, int64_t v)
{
	if (reg < NCOL)
		w->r[reg] = (struct rule){ how, v };
}

/* run a CFA program up to (and including) the row that covers target; false: malformed */
static bool run(const struct cie *k, const uint8_t *p, const uint8_t *end, uint64_t *loc, uint64_t target,
		struct row *w, const struct row *init, struct row *stack, int *sp)
{
	struct rd r = { p, end, false };
	while (r.p < r.end && !r.bad) {
		uint8_t op = *r.p++;
		uint8_t lo6 = op & 0x3f;
		uint64_t reg, a;
		switch (op >> 6) {
		case 1: /* advance_loc */
			*loc += lo6 * k->code_align;
			if (*loc > target)
				return true;
			continue;
		case 2: /* offset */
			set(w, lo6, R_OFF, fac(uleb(&r), k->data_align));
			continue;
		case 3: /* restore */
			if (init && lo6 < NCOL)
				w->r[lo6] = init->r[lo6];
			continue;
		}
		switch (op) {
		case 0x00: break;
		case 0x01: /* set_loc */
			*loc = uget(&r, 8);
			if (*loc > target)
				return true;
			break;
		case 0x02: case 0x03: case 0x04:
			*loc += uget(&r, op == 0x02 ? 1 : op == 0x03 ? 2 : 4) * k->code_align;
			if (*loc > target)
				return true;
			break;
		case 0x05: reg = uleb(&r); set(w, reg, R_OFF, fac(uleb(&r), k->data_align)); break;
		case 0x06:
			reg = uleb(&r);
			if (init && reg < NCOL)
				w->r[reg] = init->r[reg];
			break;
		case 0x07: set(w, uleb(&r), R_UNDEF, 0); break;
		case 0x08: set(w, uleb(&r), R_SAME, 0); break;
		case 0x09: reg = uleb(&r); set(w, reg, R_REG, (int64_t)uleb(&r)); break;
		case 0x0a: /* remember_state */
			if (*sp >= STATE_DEPTH)
				return false;
			stack[(*sp)++] = *w;
			break;
		case 0x0b: /* restore_state: the CFA rule too, as GCC's epilogues expect (and gdb,
			    * libgcc and libunwind do) */
			if (*sp <= 0)
				return false;
			*w = stack[--(*sp)];
			break;
		case 0x0c: w->cfa_reg = (int)uleb(&r); w->cfa_off = (int64_t)uleb(&r); break;
		case 0x0d: w->cfa_reg = (int)uleb(&r); break;
		case 0x0e: w->cfa_off = (int64_t)uleb(&r); break;
		case 0x0f: a = uleb(&r); skip(&r, a); w->cfa_reg = -1; break;
		case 0x10: reg = uleb(&r); a = uleb(&r); skip(&r, a); set(w, reg, R_UNKNOWN, 0); break;
		case 0x11: reg = uleb(&r); set(w, reg, R_OFF, fac((uint64_t)sleb(&r), k->data_align)); break;
		case 0x12: w->cfa_reg = (int)uleb(&r); w->cfa_off = fac((uint64_t)sleb(&r), k->data_align); break;
		case 0x13: w->cfa_off = fac((uint64_t)sleb(&r), k->data_align); break;
		case 0x14: reg = uleb(&r); set(w, reg, R_VALOFF, fac(uleb(&r), k->data_align)); break;
		case 0x15: reg = uleb(&r); set(w, reg, R_VALOFF, fac((uint64_t)sleb(&r), k->data_align)); break;
		case 0x16: reg = uleb(&r); a = uleb(&r); skip(&r, a); set(w, reg, R_UNKNOWN, 0); break;
		case 0x2d: w->ra_signed = !w->ra_signed; break; /* arm64 negate_ra_state */
		case 0x2e: uleb(&r); break;                      /* GNU_args_size */
		case 0x2f: reg = uleb(&r); set(w, reg, R_OFF, fac(-uleb(&r), k->data_align)); break;
		default: return false;
		}
		if (r.p > r.end)
			return false;
	}
	return !r.bad;
}

int cfi_step(const struct exe *e, struct uregs *u, bool (*rd)(void *ctx, uint64_t a, uint64_t *v), void *ctx)
{
	if (!e || !e->cfi)
		return CFI_NONE;
	/* a caller's pc is a return address: the call is the instruction before it (the call
	 * of a noreturn function can end its caller) */
	uint64_t at = u->caller ? u->pc - 1 : u->pc;
	const struct fde *f = fde_for(e->cfi, at);
	if (!f)
		return CFI_NONE;
	const struct cie *k = &e->cfi->c[f->cie];
	struct row init = { .cfa_reg = opt.isa->r_sp, .cfa_off = 0 }, w, stack[STATE_DEPTH];
	int sp = 0;
	uint64_t loc = f->lo;
	if (!run(k, k->ins, k->end, &loc, UINT64_MAX, &init, NULL, stack, &sp))
		return CFI_FAIL;
	w = init;
	sp = 0;
	loc = f->lo;
	if (!run(k, f->ins, f->end, &loc, at, &w, &init, stack, &sp))
		return CFI_FAIL;
	u->rd = rd;
	u->ctx = ctx;
	uint64_t cfa;
	if (w.cfa_reg < 0 || w.cfa_reg >= NCOL || !ureg_get(u, w.cfa_reg, &cfa))
		return CFI_FAIL;
	cfa += (uint64_t)w.cfa_off;
	const struct rule *ra = &w.r[k->ra];
	if (ra->how == R_UNDEF)
		return CFI_END; /* the outermost frame (_start marks its return address so) */
	struct uregs n = *u;
	for (int i = 0; i < NCOL; i++) {
		const struct rule *q = &w.r[i];
		switch (q->how) {
		case R_SAME: break;
		case R_UNDEF: case R_UNKNOWN: unknown(&n, i); break;
		case R_OFF: usaved(&n, i, cfa + (uint64_t)q->v); break;
		case R_VALOFF: uset(&n, i, cfa + (uint64_t)q->v); break;
		case R_REG: {
			uint64_t v;
			if (q->v >= 0 && q->v < NCOL && ureg_get(u, (int)q->v, &v))
				uset(&n, i, v);
			else
				unknown(&n, i);
			break;
		}
		}
	}
	uint64_t ret;
	if (!ureg_get(&n, (int)k->ra, &ret))
		return CFI_FAIL;
	if (w.ra_signed)
		ret &= (1ULL << 48) - 1; /* strip the pointer-authentication code */
	if (!ret)
		return CFI_END;
	uint64_t old_sp;
	if (!ureg_get(u, opt.isa->r_sp, &old_sp))
		return CFI_FAIL;
	uset(&n, opt.isa->r_sp, cfa);
	/* the stack must move up (or stay, for a leaf that keeps its return address in a
	 * register), and the frame must change: no loops */
	if (cfa < old_sp || (cfa == old_sp && ret == u->pc && u->caller))
		return CFI_FAIL;
	n.pc = ret;
	n.caller = !k->signal;
	*u = n;
	return CFI_OK;
}

/* A frame of a function without CFI, from its prologue (isa->prologue), for code built
 * without unwind tables (most of Debian's riscv64 static glibc). Same contract as
 * cfi_step. */
int prologue_step(const struct exe *e, struct uregs *u, bool (*rd)(void *ctx, uint64_t a, uint64_t *v), void *ctx)
{
	const struct isa *isa = opt.isa;
	uint64_t at = u->caller ? u->pc - 1 : u->pc;
	int64_t fi = exe_func(e, at);
	if (!isa->prologue || !e || !e->text || fi < 0)
		return CFI_NONE;
	uint64_t start = e->fstart[fi];
	if (start < e->text_va || at >= e->text_va + e->text_len)
		return CFI_NONE;
	struct prologue pr;
	uint64_t off = start - e->text_va;
	/* a caller's frame is complete at its call: scan up to the return address */
	if (!isa->prologue(e->text + off, e->text_len - off, u->pc - start, &pr))
		return CFI_FAIL;
	u->rd = rd;
	u->ctx = ctx;
	uint64_t cfa;
	if (pr.cfa_reg < 0 || pr.cfa_reg >= 32 || !ureg_get(u, pr.cfa_reg, &cfa))
		return CFI_FAIL;
	cfa += (uint64_t)pr.cfa_off;
	struct uregs n = *u;
	for (int i = 0; i < 32; i++)
		if (pr.saved & (1u << i))
			usaved(&n, i, cfa + (uint64_t)pr.save[i]);
	/* a function that has not saved its return address is a leaf (or has not called yet):
	 * the register still holds it, which only the sampled frame can know */
	if (!(pr.saved & (1u << isa->r_ra)) && u->caller)
		return CFI_FAIL;
	uint64_t ret, sp;
	if (!ureg_get(&n, isa->r_ra, &ret) || !ret || !ureg_get(u, isa->r_sp, &sp))
		return CFI_FAIL;
	if (cfa < sp || (ret == u->pc && cfa == sp))
		return CFI_FAIL;
	uset(&n, isa->r_sp, cfa);
	n.pc = ret;
	n.caller = true;
	*u = n;
	return CFI_OK;
}

void cfi_free(struct cfi *c)
{
	if (!c)
		return;
	free(c->data[0]);
	free(c->data[1]);
	free(c->f);
	free(c->c);
	free(c);
}
