/* SPDX-License-Identifier: MIT */
/* The one /proc/kallsyms reader of the C side (hpm top's kernel symbols, hpm record's
 * kallsyms copy), with hpmkit's rule for naming an address that carries several
 * symbols: the C twin of choose_alias() in python/hpmkit/profile/symbols.py, so that
 * hpm top on a board names a kernel function as hpmkit names it on the workstation. */
#ifndef HPM_KALLSYMS_H
#define HPM_KALLSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One function symbol (type t, T, w or W) of a kallsyms text. */
struct ksym {
	uint64_t addr;
	size_t line, len;  /* its line (with the '\n') in kallsyms.text */
	size_t name, mod;  /* offsets into kallsyms.names; mod 0: the kernel itself */
	size_t seq;        /* listing order: ties at one address keep it */
	char type;
};

struct kallsyms {
	struct ksym *v;    /* function symbols, by address, then listing order */
	size_t n;
	char *text;        /* the lines of v, as listed */
	size_t tlen;
	char *names;       /* NUL-terminated names and module names ("[mod]") */
	size_t nlen;
	/* the reference symbols perf relocates by, and the end of the kernel text (any
	 * type); 0 when not listed */
	uint64_t text_addr, stext_addr, etext_addr;
	uint64_t max_kernel_addr; /* highest function address outside modules */
};

/* Read a kallsyms text (zero addresses, what kptr_restrict shows, name nothing and are
 * left out, as hpmkit's reader does). 0, -errno when the file cannot be read or memory
 * ran out, -EACCES when every address is 0 or there is no function at all. */
int kallsyms_read(struct kallsyms *k, const char *path);
void kallsyms_free(struct kallsyms *k);

static inline const char *kallsyms_name(const struct kallsyms *k, size_t i)
{
	return k->names + k->v[i].name;
}

/* "[mod]" of symbol i, or NULL for the kernel's own */
static inline const char *kallsyms_mod(const struct kallsyms *k, size_t i)
{
	return k->v[i].mod ? k->names + k->v[i].mod : NULL;
}

/* The first index after the run of symbols at v[i].addr (its aliases). */
size_t kallsyms_group_end(const struct kallsyms *k, size_t i);

/* Index in [i, end) of the name hpmkit gives the address of v[i]: see alias_choose. */
size_t kallsyms_choose(const struct kallsyms *k, size_t i, size_t end);

/* Of n names listed at one address (in listing order), the index of the one to show:
 * perf 6.1's choice (the last listed) unless a section/linker marker would name a real
 * function, SYSCALL_DEFINE wrappers hide sys_X (or cond_syscall stubs sys_ni_syscall),
 * or memmove hides the memcpy of the same routine (choose_alias's ALIAS_RULES). */
size_t alias_choose(const char *const *names, size_t n);

/* Is name a section or linker-script marker (is_marker() of symbols.py)? */
bool alias_is_marker(const char *name);

#endif
