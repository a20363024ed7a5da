/* SPDX-License-Identifier: MIT */
/* Host copies of the guest's binaries (bins=DIR, e.g. build/<arch>/bin): the program
 * headers give a user mapping its file offset (pgoff) and the symbol table the function
 * bounds the unwinder needs to tell whether a frame is set up yet, and the call-frame
 * information (.eh_frame, .debug_frame) the user-stack unwinder prefers (cfi.c). Static ELF64
 * little-endian executables; anything else is treated as absent. */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pes.h"
#include "sorted.h"

#define MAX_EXES 256

static struct exe *exes[MAX_EXES];
static int nexes;

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static void *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *p = n > 0 ? malloc((size_t)n) : NULL;
	if (p && fread(p, 1, (size_t)n, f) != (size_t)n) {
		free(p);
		p = NULL;
	}
	fclose(f);
	*len = p ? (size_t)n : 0;
	return p;
}

static void load(struct exe *e, const char *path)
{
	size_t len;
	unsigned char *p = slurp(path, &len);
	if (!p)
		return;
	const Elf64_Ehdr *h = (const void *)p;
	if (len < sizeof(*h) || memcmp(h->e_ident, ELFMAG, SELFMAG) || h->e_ident[EI_CLASS] != ELFCLASS64 ||
	    h->e_machine != opt.isa->e_machine || h->e_phoff + (uint64_t)h->e_phnum * sizeof(Elf64_Phdr) > len)
		goto out;
	const Elf64_Phdr *ph = (const void *)(p + h->e_phoff);
	for (int i = 0; i < h->e_phnum && e->nseg < 16; i++)
		if (ph[i].p_type == PT_LOAD) {
			e->seg[e->nseg].vaddr = ph[i].p_vaddr;
			e->seg[e->nseg].offset = ph[i].p_offset;
			e->seg[e->nseg].memsz = ph[i].p_memsz;
			e->seg[e->nseg].exec = ph[i].p_flags & PF_X;
			e->nseg++;
			if ((ph[i].p_flags & PF_X) && !e->text && ph[i].p_offset + ph[i].p_filesz <= len) {
				e->text = malloc(ph[i].p_filesz);
				memcpy(e->text, p + ph[i].p_offset, ph[i].p_filesz);
				e->text_va = ph[i].p_vaddr;
				e->text_len = ph[i].p_filesz;
			}
		}
	e->found = true;
	if (h->e_shoff + (uint64_t)h->e_shnum * sizeof(Elf64_Shdr) > len)
		goto out;
	const Elf64_Shdr *sh = (const void *)(p + h->e_shoff);
	const Elf64_Shdr *eh = NULL, *dbg = NULL;
	const Elf64_Shdr *strs = h->e_shstrndx < h->e_shnum ? &sh[h->e_shstrndx] : NULL;
	for (int i = 0; strs && strs->sh_offset + strs->sh_size <= len && i < h->e_shnum; i++) {
		if (sh[i].sh_type != SHT_PROGBITS || sh[i].sh_offset + sh[i].sh_size > len ||
		    sh[i].sh_name >= strs->sh_size)
			continue;
		const char *nm = (const char *)p + strs->sh_offset + sh[i].sh_name;
		size_t room = strs->sh_size - sh[i].sh_name;
		if (!strncmp(nm, ".eh_frame", room) && strnlen(nm, room) == 9)
			eh = &sh[i];
		else if (!strncmp(nm, ".debug_frame", room) && strnlen(nm, room) == 12)
			dbg = &sh[i];
	}
	if (eh || dbg)
		cfi_load(e, eh ? p + eh->sh_offset : NULL, eh ? eh->sh_size : 0, eh ? eh->sh_addr : 0,
			 dbg ? p + dbg->sh_offset : NULL, dbg ? dbg->sh_size : 0);
	for (int i = 0; i < h->e_shnum; i++) {
		if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_offset + sh[i].sh_size > len)
			continue;
		size_t n = sh[i].sh_size / sizeof(Elf64_Sym);
		const Elf64_Sym *s = (const void *)(p + sh[i].sh_offset);
		e->fstart = malloc((n + 1) * sizeof(uint64_t));
		for (size_t k = 0; k < n; k++)
			if (ELF64_ST_TYPE(s[k].st_info) == STT_FUNC && s[k].st_value)
				e->fstart[e->nf++] = s[k].st_value;
		qsort(e->fstart, e->nf, sizeof(uint64_t), cmp_u64);
		break;
	}
out:
	free(p);
}

struct exe *exe_get(const char *name)
{
	for (int i = 0; i < nexes; i++)
		if (!strcmp(exes[i]->name, name))
			return exes[i];
	if (nexes == MAX_EXES)
		return NULL;
	struct exe *e = calloc(1, sizeof(*e));
	snprintf(e->name, sizeof(e->name), "%s", name);
	if (opt.bins && !strchr(name, '/')) {
		char path[4200];
		snprintf(path, sizeof(path), "%s/%s", opt.bins, name);
		load(e, path);
	}
	exes[nexes++] = e;
	return e;
}

/* index of the function containing addr (-1: before the first / no symbols) */
int64_t exe_func(const struct exe *e, uint64_t addr)
{
	if (!e || !e->nf)
		return -1;
	return (int64_t)sorted_count_le(e->fstart, e->nf, sizeof(uint64_t), addr) - 1;
}

/* file offset of the mapping that starts at start (the kernel's mm->start_code: the
 * lowest executable PT_LOAD address of a static executable) */
uint64_t exe_pgoff(const struct exe *e, uint64_t start, bool *ok)
{
	*ok = false;
	for (int i = 0; e && i < e->nseg; i++)
		if (e->seg[i].exec && start >= e->seg[i].vaddr &&
		    start < e->seg[i].vaddr + e->seg[i].memsz) {
			*ok = true;
			return e->seg[i].offset + (start - e->seg[i].vaddr);
		}
	return 0;
}
