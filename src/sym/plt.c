/* SPDX-License-Identifier: MIT */
/*
 * PLT slots named "<target>@plt", as perf and objdump name them, for x86-64, aarch64 and
 * riscv64: the method of python/hpmkit/profile/plt.py (whose comment has the background),
 * in C for hpm top on targets without Python.
 *
 * A slot is found by what it does: every PLT stub loads its target from one GOT word, and
 * the dynamic relocation at that word (.rela.plt: JUMP_SLOT or IRELATIVE; for x86-64's
 * .plt.got, .rela.dyn's GLOB_DAT) names the target. The stubs are decoded per machine:
 *
 *   x86-64   `jmp *disp32(%rip)`, after an optional endbr64 and bnd prefix, at the start
 *            of each entry of .plt (its header and IBT's lazy `push; jmp` stubs load no
 *            relocated GOT word and drop out), .plt.sec (IBT), .plt.bnd (MPX), .plt.got.
 *            x86 ld writes IRELATIVE relocations after all JUMP_SLOT ones, so relocation
 *            i is not slot i (libc.so.6's own slots).
 *   aarch64  `adrp x16, page; ldr x17, [x16, #off]`, the slot starting at a `bti` just
 *            before the adrp: 16- or 24-byte (BTI/PAC) stubs, also 24-byte ones in a PIE
 *            (Debian's arm64 programs), where binutils' rule says 16.
 *   riscv64  `auipc t3, hi; ld t3, lo(t3)`.
 *
 * Where no aarch64 or riscv64 stub decodes, binutils' rule places relocation i at
 * .plt + 32 + i * stub size (stub size from DT_AARCH64_BTI_PLT/PAC_PLT and e_type). An
 * IRELATIVE relocation (a local IFUNC, no symbol) is named after the IFUNC symbol at its
 * addend (.symtab, else .dynsym; among aliases the one perf picks) as perf >= 6.3 does, else
 * `*ABS*+0x<addend>@plt` as objdump does.
 */
#include <elf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "plt.h"
#include "sorted.h"

#ifndef EM_RISCV
#define EM_RISCV 243
#endif
#ifndef R_RISCV_JUMP_SLOT
#define R_RISCV_JUMP_SLOT 5
#endif
#ifndef R_RISCV_IRELATIVE
#define R_RISCV_IRELATIVE 58
#endif
#ifndef R_AARCH64_IRELATIVE
#define R_AARCH64_IRELATIVE 1032
#endif
#ifndef DT_AARCH64_BTI_PLT
#define DT_AARCH64_BTI_PLT (DT_LOPROC + 1)
#endif
#ifndef DT_AARCH64_PAC_PLT
#define DT_AARCH64_PAC_PLT (DT_LOPROC + 3)
#endif

struct elf {
	const unsigned char *p;
	size_t len;
	const Elf64_Ehdr *eh;
	const Elf64_Shdr *sh;
	unsigned shnum;
	uint32_t jump_slot, irelative, glob_dat; /* glob_dat 0: no .plt.got stubs */
};

/* a symbol table and its strings */
struct names {
	const Elf64_Sym *v;
	size_t n;
	const char *str;
	size_t strsz;
};

struct rel {
	uint64_t off;  /* the GOT word (first: sorted.h's key) */
	uint64_t rank; /* of several relocations of one word, the highest owns it */
	int64_t addend;
	uint32_t type;
	const char *name; /* namelen bytes, not NUL-terminated; "" for none */
	size_t namelen;
};

/* .rela.plt's relocations rank above .rela.dyn's, a later one above an earlier one;
 * of .rela.dyn's GLOB_DATs the first owns its word (plt.py's dict order) */
#define PLT_RANK (1ull << 63)

/* a decoded stub: slot [start, start + size) loads the GOT word got */
struct cand {
	uint64_t start, size, got;
	size_t seq; /* decoding order: of two slots at one address the first is kept */
};

static bool in_file(const struct elf *e, uint64_t off, uint64_t size)
{
	return off <= e->len && size <= e->len - off;
}

static uint32_t rd32(const unsigned char *b)
{
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static int64_t sext(uint64_t v, int bits)
{
	uint64_t m = 1ull << (bits - 1);
	v &= (m << 1) - 1;
	return (int64_t)(v ^ m) - (int64_t)m;
}

/* The first section called name, or NULL when there is none or it holds nothing in the
 * file (NOBITS: a separate debug file keeps the headers, not the contents). */
static const Elf64_Shdr *section(const struct elf *e, const char *name)
{
	const Elf64_Shdr *strs = &e->sh[e->eh->e_shstrndx];
	const char *str = (const char *)e->p + strs->sh_offset;
	size_t want = strlen(name);
	for (unsigned i = 1; i < e->shnum; i++) {
		const Elf64_Shdr *s = &e->sh[i];
		if (s->sh_name >= strs->sh_size || strs->sh_size - s->sh_name <= want ||
		    memcmp(str + s->sh_name, name, want + 1))
			continue;
		return s->sh_type != SHT_NOBITS && s->sh_size && in_file(e, s->sh_offset, s->sh_size)
			       ? s
			       : NULL;
	}
	return NULL;
}

static bool names_of(const struct elf *e, uint64_t idx, struct names *t)
{
	memset(t, 0, sizeof(*t));
	if (!idx || idx >= e->shnum)
		return false;
	const Elf64_Shdr *s = &e->sh[idx];
	if ((s->sh_type != SHT_DYNSYM && s->sh_type != SHT_SYMTAB) || s->sh_offset % 8 ||
	    !in_file(e, s->sh_offset, s->sh_size) || s->sh_link >= e->shnum)
		return false;
	const Elf64_Shdr *st = &e->sh[s->sh_link];
	if (st->sh_type == SHT_NOBITS || !in_file(e, st->sh_offset, st->sh_size))
		return false;
	t->v = (const void *)(e->p + s->sh_offset);
	t->n = s->sh_size / sizeof(Elf64_Sym);
	t->str = (const char *)e->p + st->sh_offset;
	t->strsz = st->sh_size;
	return true;
}

static const char *sym_name(const struct names *t, size_t k, size_t *l)
{
	*l = 0;
	if (!k || k >= t->n || t->v[k].st_name >= t->strsz)
		return "";
	const char *s = t->str + t->v[k].st_name;
	*l = strnlen(s, t->strsz - t->v[k].st_name);
	return s;
}

/* The relocations of one REL/RELA section that own PLT slots (plt: JUMP_SLOT, IRELATIVE)
 * or that .plt.got stubs load (GLOB_DAT with a symbol), appended to *v; *k counts them
 * across the sections of one kind (their ranks). */
static int add_relocs(const struct elf *e, const Elf64_Shdr *s, bool plt, struct rel **v,
		      size_t *n, size_t *cap, size_t *k)
{
	if (!s || (s->sh_type != SHT_RELA && s->sh_type != SHT_REL) || s->sh_offset % 8)
		return 0;
	size_t esz = s->sh_type == SHT_RELA ? sizeof(Elf64_Rela) : sizeof(Elf64_Rel);
	struct names t;
	names_of(e, s->sh_link, &t);
	size_t cnt = s->sh_size / esz;
	for (size_t i = 0; i < cnt; i++) {
		/* an Elf64_Rel is an Elf64_Rela without the addend */
		const Elf64_Rela *r = (const void *)(e->p + s->sh_offset + i * esz);
		uint32_t type = (uint32_t)ELF64_R_TYPE(r->r_info);
		if (plt ? type != e->jump_slot && type != e->irelative : type != e->glob_dat)
			continue;
		size_t l;
		const char *name = sym_name(&t, ELF64_R_SYM(r->r_info), &l);
		if (!plt && !l)
			continue;
		if (*n == *cap) {
			struct rel *nv = realloc(*v, sizeof(*nv) * (*cap = *cap ? *cap * 2 : 64));
			if (!nv)
				return -1;
			*v = nv;
		}
		(*v)[(*n)++] = (struct rel){ r->r_offset, plt ? PLT_RANK + *k : PLT_RANK - 1 - *k,
					     esz == sizeof(Elf64_Rela) ? r->r_addend : 0, type, name,
					     l };
		++*k;
	}
	return 0;
}

static int cmp_rel(const void *a, const void *b)
{
	const struct rel *x = a, *y = b;
	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* the relocation that owns a GOT word (v sorted by cmp_rel: the last of its word) */
static const struct rel *owner(const struct rel *v, size_t n, uint64_t got)
{
	size_t k = sorted_count_le(v, n, sizeof(*v), got);
	return k && v[k - 1].off == got ? &v[k - 1] : NULL;
}

static int add_cand(struct cand **v, size_t *n, size_t *cap, uint64_t start, uint64_t size,
		    uint64_t got)
{
	if (*n == *cap) {
		struct cand *nv = realloc(*v, sizeof(*nv) * (*cap = *cap ? *cap * 2 : 64));
		if (!nv)
			return -1;
		*v = nv;
	}
	(*v)[*n] = (struct cand){ start, size, got, *n };
	(*n)++;
	return 0;
}

static int cmp_cand(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->got != y->got)
		return x->got < y->got ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* GOT word of `jmp *disp32(%rip)` at the start of an x86-64 PLT entry of l bytes */
static bool x86_64_got(const unsigned char *b, size_t l, uint64_t addr, uint64_t *got)
{
	size_t n = l >= 4 && !memcmp(b, "\xf3\x0f\x1e\xfa", 4) ? 4 : 0; /* endbr64 */
	if (n < l && b[n] == 0xf2)                                     /* bnd */
		n++;
	if (l < n + 6 || b[n] != 0xff || b[n + 1] != 0x25)
		return false;
	*got = addr + n + 6 + (uint64_t)sext(rd32(b + n + 2), 32);
	return true;
}

static int x86_64_slots(const struct elf *e, struct cand **v, size_t *n, size_t *cap)
{
	static const char *const secs[] = { ".plt", ".plt.sec", ".plt.bnd", ".plt.got" };
	for (size_t i = 0; i < sizeof(secs) / sizeof(*secs); i++) {
		const Elf64_Shdr *s = section(e, secs[i]);
		if (!s)
			continue;
		/* lazy, IBT and BND stubs are 16 bytes, non-lazy ones (.plt.got, a static
		 * program's IFUNC-only .plt without sh_entsize) 8 or 16: 8-byte ones are
		 * 8-byte aligned */
		uint64_t step = s->sh_entsize == 8 || s->sh_entsize == 16 ? s->sh_entsize
				: s->sh_addralign == 8			  ? 8
									  : 16;
		const unsigned char *data = e->p + s->sh_offset;
		for (uint64_t k = 0; k + 5 < s->sh_size; k += step) {
			uint64_t l = s->sh_size - k < step ? s->sh_size - k : step, got;
			if (x86_64_got(data + k, l, s->sh_addr + k, &got) &&
			    add_cand(v, n, cap, s->sh_addr + k, step, got))
				return -1;
		}
	}
	return 0;
}

/* (slot start, GOT word) of `adrp x16; ldr x17, [x16, #off]` pairs in .plt, an
 * immediately preceding `bti` (any target) included in the slot */
static int aarch64_slots(const Elf64_Shdr *plt, const unsigned char *data, struct cand **v,
			 size_t *n, size_t *cap)
{
	uint64_t nw = plt->sh_size / 4;
	for (uint64_t i = 0; i + 1 < nw; i++) {
		uint32_t a = rd32(data + 4 * i), b = rd32(data + 4 * i + 4);
		if ((a & 0x9F00001Fu) != 0x90000010u || (b & 0xFFC003FFu) != 0xF9400211u)
			continue;
		uint64_t pc = plt->sh_addr + 4 * i;
		int64_t page = sext(((uint64_t)((a >> 5) & 0x7FFFF) << 2) | ((a >> 29) & 3), 21) *
			       4096;
		uint64_t got = (pc & ~0xFFFull) + (uint64_t)page + ((b >> 10) & 0xFFF) * 8;
		bool bti = i > 0 && (rd32(data + 4 * i - 4) & 0xFFFFFF3Fu) == 0xD503241Fu;
		if (add_cand(v, n, cap, bti ? pc - 4 : pc, 0, got))
			return -1;
	}
	return 0;
}

/* (slot start, GOT word) of `auipc t3, hi; ld t3, lo(t3)` pairs in .plt */
static int riscv_slots(const Elf64_Shdr *plt, const unsigned char *data, struct cand **v,
		       size_t *n, size_t *cap)
{
	uint64_t nw = plt->sh_size / 4;
	for (uint64_t i = 0; i + 1 < nw; i++) {
		uint32_t a = rd32(data + 4 * i), b = rd32(data + 4 * i + 4);
		if ((a & 0xFFF) != 0xE17 || (b & 0xFFFFF) != 0xE3E03) /* rd = rs1 = t3, ld */
			continue;
		uint64_t pc = plt->sh_addr + 4 * i;
		uint64_t got = pc + (uint64_t)sext(a & 0xFFFFF000u, 32) + (uint64_t)sext(b >> 20, 12);
		if (add_cand(v, n, cap, pc, 0, got))
			return -1;
	}
	return 0;
}

/* binutils' aarch64 stub size (elfNN_aarch64_plt_sym_val) from the .dynamic tags */
static uint64_t aarch64_stub_size(const struct elf *e)
{
	const Elf64_Shdr *dyn = section(e, ".dynamic");
	bool bti = false, pac = false;
	if (dyn && dyn->sh_type == SHT_DYNAMIC && dyn->sh_offset % 8 == 0) {
		const Elf64_Dyn *d = (const void *)(e->p + dyn->sh_offset);
		for (size_t i = 0; i < dyn->sh_size / sizeof(*d) && d[i].d_tag != DT_NULL; i++) {
			bti |= d[i].d_tag == DT_AARCH64_BTI_PLT;
			pac |= d[i].d_tag == DT_AARCH64_PAC_PLT;
		}
	}
	return pac || (bti && e->eh->e_type == ET_EXEC) ? 24 : 16;
}

/* Sizes for the decoded slots of one section, sorted, one per (start, GOT word): each runs
 * to the next one, at most the common stub size (the smallest distance between slots, else
 * stub; the last one is followed by the section end or, on aarch64, a TLSDESC stub). */
static void size_slots(struct cand *v, size_t n, uint64_t stub, uint64_t end)
{
	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_cand);
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (!k || v[i].start != v[k - 1].start || v[i].got != v[k - 1].got)
			v[k++] = v[i];
	uint64_t size = 0;
	for (size_t i = 0; i + 1 < k; i++) {
		uint64_t gap = v[i + 1].start - v[i].start;
		if (gap && (!size || gap < size))
			size = gap;
	}
	if (!size)
		size = stub;
	for (size_t i = 0; i < k; i++) {
		uint64_t nxt = i + 1 < k ? v[i + 1].start : end;
		uint64_t room = nxt > v[i].start ? nxt - v[i].start : 0;
		v[i].size = room < size ? (room ? room : 1) : size;
		v[i].seq = i;
	}
	/* dropped duplicates leave a tail: mark it */
	for (size_t i = k; i < n; i++)
		v[i].size = 0;
}

static int underscores(const char *s, size_t l)
{
	int n = 0;
	while ((size_t)n < l && s[n] == '_')
		n++;
	return n;
}

/* perf's choice among IFUNC aliases: sized, not weak, global, fewer leading underscores,
 * longer; else the first */
static bool ifunc_better(const Elf64_Sym *a, const char *an, size_t al, const Elf64_Sym *b,
			 const char *bn, size_t bl)
{
	if ((a->st_size > 0) != (b->st_size > 0))
		return a->st_size > 0;
	int ba = ELF64_ST_BIND(a->st_info), bb = ELF64_ST_BIND(b->st_info);
	if ((ba == STB_WEAK) != (bb == STB_WEAK))
		return bb == STB_WEAK;
	if ((ba == STB_GLOBAL) != (bb == STB_GLOBAL))
		return ba == STB_GLOBAL;
	int ua = underscores(an, al), ub = underscores(bn, bl);
	if (ua != ub)
		return ua < ub;
	return al > bl;
}

/* the IFUNC symbol at addr in t, NULL for none */
static const char *ifunc_name(const struct elf *e, const struct names *t, uint64_t addr,
			      size_t *l)
{
	const Elf64_Sym *best = NULL;
	const char *bn = NULL;
	size_t bl = 0;
	for (size_t k = 1; k < t->n; k++) {
		const Elf64_Sym *s = &t->v[k];
		if (ELF64_ST_TYPE(s->st_info) != STT_GNU_IFUNC || s->st_value != addr || !addr ||
		    !s->st_name || s->st_shndx == SHN_UNDEF || s->st_shndx >= e->shnum)
			continue;
		size_t nl;
		const char *nm = sym_name(t, k, &nl);
		if (!nl || nm[0] == '$' || nm[0] == '.')
			continue;
		if (!best || ifunc_better(s, nm, nl, best, bn, bl))
			best = s, bn = nm, bl = nl;
	}
	*l = bl;
	return bn;
}

int plt_slots(const unsigned char *p, size_t len, plt_slot_fn fn, void *arg)
{
	struct elf e = { p, len, (const void *)p, NULL, 0, 0, 0, 0 };
	if (len < sizeof(Elf64_Ehdr) || memcmp(p, ELFMAG, SELFMAG) || p[EI_CLASS] != ELFCLASS64 ||
	    p[EI_DATA] != ELFDATA2LSB)
		return 0;
	switch (e.eh->e_machine) {
	case EM_X86_64:
		e.jump_slot = R_X86_64_JUMP_SLOT;
		e.irelative = R_X86_64_IRELATIVE;
		e.glob_dat = R_X86_64_GLOB_DAT;
		break;
	case EM_AARCH64:
		e.jump_slot = R_AARCH64_JUMP_SLOT;
		e.irelative = R_AARCH64_IRELATIVE;
		break;
	case EM_RISCV:
		e.jump_slot = R_RISCV_JUMP_SLOT;
		e.irelative = R_RISCV_IRELATIVE;
		break;
	default:
		return 0;
	}
	e.shnum = e.eh->e_shnum;
	if (!e.eh->e_shoff || !e.shnum || e.eh->e_shoff % 8 ||
	    e.eh->e_shentsize != sizeof(Elf64_Shdr) ||
	    !in_file(&e, e.eh->e_shoff, (uint64_t)e.shnum * sizeof(Elf64_Shdr)))
		return 0;
	e.sh = (const void *)(p + e.eh->e_shoff);
	if (e.eh->e_shstrndx >= e.shnum ||
	    !in_file(&e, e.sh[e.eh->e_shstrndx].sh_offset, e.sh[e.eh->e_shstrndx].sh_size))
		return 0;

	struct rel *rel = NULL;
	struct cand *slot = NULL;
	size_t nrel = 0, caprel = 0, nslot = 0, capslot = 0;
	size_t nplt = 0, ndyn = 0;
	int found = -1;
	const Elf64_Shdr *relaplt = section(&e, ".rela.plt");
	if (!relaplt)
		relaplt = section(&e, ".rel.plt");
	if (add_relocs(&e, relaplt, true, &rel, &nrel, &caprel, &nplt))
		goto out;
	if (e.glob_dat && section(&e, ".plt.got") &&
	    (add_relocs(&e, section(&e, ".rela.dyn"), false, &rel, &nrel, &caprel, &ndyn) ||
	     add_relocs(&e, section(&e, ".rel.dyn"), false, &rel, &nrel, &caprel, &ndyn)))
		goto out;
	if (!nrel) {
		found = 0;
		goto out;
	}
	qsort(rel, nrel, sizeof(*rel), cmp_rel);

	const Elf64_Shdr *plt = section(&e, ".plt");
	if (e.eh->e_machine == EM_X86_64) {
		if (x86_64_slots(&e, &slot, &nslot, &capslot))
			goto out;
	} else if (plt) {
		const unsigned char *data = p + plt->sh_offset;
		uint64_t stub = 16;
		if (e.eh->e_machine == EM_AARCH64) {
			stub = aarch64_stub_size(&e);
			if (aarch64_slots(plt, data, &slot, &nslot, &capslot))
				goto out;
		} else if (riscv_slots(plt, data, &slot, &nslot, &capslot)) {
			goto out;
		}
		size_t k = 0;
		for (size_t i = 0; i < nslot; i++)
			if (owner(rel, nrel, slot[i].got))
				slot[k++] = slot[i];
		nslot = k;
		if (!nslot && nplt) {
			/* no stub decodes: binutils' rule, .rela.plt's relocation i in slot i */
			for (size_t i = 0; i < nrel; i++)
				if (rel[i].rank >= PLT_RANK &&
				    add_cand(&slot, &nslot, &capslot,
					     plt->sh_addr + 32 + (rel[i].rank - PLT_RANK) * stub, 0,
					     rel[i].off))
					goto out;
		}
		size_slots(slot, nslot, stub, plt->sh_addr + plt->sh_size);
	}

	/* name the slots, first one at an address wins, in address order */
	size_t k = 0;
	for (size_t i = 0; i < nslot; i++)
		if (slot[i].size && owner(rel, nrel, slot[i].got))
			slot[k++] = slot[i];
	nslot = k;
	for (size_t i = 0; i < nslot; i++)
		slot[i].seq = i;
	if (nslot > 1)
		qsort(slot, nslot, sizeof(*slot), cmp_cand);
	struct names ifuncs = { 0 };
	bool have_ifuncs = false;
	char *buf = NULL;
	size_t bufcap = 0;
	uint64_t last = 0;
	bool any = false;
	found = 0;
	for (size_t i = 0; i < nslot; i++) {
		const struct rel *r = owner(rel, nrel, slot[i].got);
		const char *name = r->name;
		size_t l = r->namelen;
		char abs[48];
		if (any && slot[i].start == last)
			continue;
		if (!l && r->type == e.irelative) {
			if (!have_ifuncs) {
				/* the IFUNCs of the table hpmkit's symbols come from */
				const Elf64_Shdr *st = section(&e, ".symtab");
				if (!st || st->sh_size / sizeof(Elf64_Sym) <= 1)
					st = section(&e, ".dynsym");
				if (st)
					names_of(&e, (uint64_t)(st - e.sh), &ifuncs);
				have_ifuncs = true;
			}
			name = ifunc_name(&e, &ifuncs, (uint64_t)r->addend, &l);
			if (!name) {
				l = (size_t)snprintf(abs, sizeof(abs), "*ABS*+%s0x%llx",
						     r->addend < 0 ? "-" : "",
						     (unsigned long long)(r->addend < 0 ? -(uint64_t)r->addend
											: (uint64_t)r->addend));
				name = abs;
			}
		}
		if (!l)
			continue;
		if (l + 5 > bufcap) {
			char *nb = realloc(buf, bufcap = l + 64);
			if (!nb) {
				found = -1;
				break;
			}
			buf = nb;
		}
		memcpy(buf, name, l);
		memcpy(buf + l, "@plt", 5);
		last = slot[i].start;
		any = true;
		found++;
		if (fn(arg, slot[i].start, slot[i].size, buf))
			break;
	}
	free(buf);
out:
	free(rel);
	free(slot);
	return found;
}
