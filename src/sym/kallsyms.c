/* SPDX-License-Identifier: MIT */
/* /proc/kallsyms for hpm top and hpm record (kallsyms.h). The alias rule follows
 * choose_alias() of python/hpmkit/profile/symbols.py line by line; tests/py/test_kallsyms_c.py
 * holds the two to the same answer on the lab kernels' kallsyms excerpts. */
#include <ctype.h>
#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kallsyms.h"

/* symbols.py's _MARKER, \w spelled out (POSIX ERE has no \w); anchored because Python
 * uses fullmatch. Kernel symbol names are ASCII, so [A-Za-z0-9_] is what \w matches. */
#define W "[A-Za-z0-9_]"
static const char marker_re[] =
	"^(_s?text|_etext|_[se]inittext|__" W "*text_(start|end|begin)|__" W "+_begin"
	"|__" W "+_table_(start|end)|__(init|exit)" W "*_end|_GLOBAL_OFFSET_TABLE_)$";
#undef W

bool alias_is_marker(const char *name)
{
	static regex_t re;
	static int state; /* 0 not compiled, 1 ready, -1 failed */
	if (!state)
		state = regcomp(&re, marker_re, REG_EXTENDED | REG_NOSUB) ? -1 : 1;
	return state > 0 && regexec(&re, name, 0, NULL, 0) == 0;
}

static bool word_chars(const char *s)
{
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_')
			return false;
	return true;
}

/* symbols.py's _SYSCALL_WRAPPER, __(se|do|[a-z0-9]+)_sys_(\w+) as a full match: the X of
 * a wrapper __<prefix>_sys_X, or NULL. The prefix has no '_', so the split is unique. */
static const char *syscall_of_wrapper(const char *name)
{
	if (strncmp(name, "__", 2))
		return NULL;
	const char *p = name + 2;
	while ((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9'))
		p++;
	if (p == name + 2 || strncmp(p, "_sys_", 5) || !p[5] || !word_chars(p + 5))
		return NULL;
	return p + 5;
}

/* first index of name in names, or n */
static size_t index_of(const char *const *names, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return i;
	return n;
}

size_t alias_choose(const char *const *names, size_t n)
{
	if (!n)
		return 0;
	/* perf 6.1 shows the last one listed; a marker there yields to the last real name */
	size_t pick = n - 1;
	if (alias_is_marker(names[pick]))
		for (size_t i = n; i-- > 0;)
			if (!alias_is_marker(names[i])) {
				pick = i;
				break;
			}
	const char *name = names[pick];
	size_t i = index_of(names, n, "sys_ni_syscall");
	if (i < n && strcmp(name, "sys_ni_syscall"))
		return i;
	const char *x = syscall_of_wrapper(name);
	if (x) {
		char want[512];
		if (snprintf(want, sizeof(want), "sys_%s", x) < (int)sizeof(want) &&
		    (i = index_of(names, n, want)) < n)
			return i;
	}
	if (strstr(name, "memmove")) {
		/* name with every "memmove" made "memcpy" (Python's str.replace) */
		char want[512];
		size_t w = 0;
		for (const char *p = name; *p && w + 8 < sizeof(want);) {
			if (!strncmp(p, "memmove", 7)) {
				memcpy(want + w, "memcpy", 6);
				w += 6;
				p += 7;
			} else {
				want[w++] = *p++;
			}
		}
		want[w] = 0;
		if (w + 8 < sizeof(want) && (i = index_of(names, n, want)) < n)
			return i;
	}
	return pick;
}

size_t kallsyms_group_end(const struct kallsyms *k, size_t i)
{
	size_t j = i + 1;
	while (j < k->n && k->v[j].addr == k->v[i].addr)
		j++;
	return j;
}

size_t kallsyms_choose(const struct kallsyms *k, size_t i, size_t end)
{
	const char *small[16], **names = small;
	size_t n = end - i;
	if (n == 1)
		return i;
	if (n > 16 && !(names = malloc(n * sizeof(*names))))
		return end - 1; /* out of memory: perf's choice */
	for (size_t j = 0; j < n; j++)
		names[j] = kallsyms_name(k, i + j);
	size_t r = i + alias_choose(names, n);
	if (names != small)
		free(names);
	return r;
}

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* append len bytes (and a NUL when nul) to *buf; offset of the copy, or 0 when memory ran
 * out (offset 0 is never handed out: the caller starts at 1 where 0 means "none") */
static size_t put(char **buf, size_t *len, size_t *cap, const char *s, size_t n, bool nul)
{
	size_t need = *len + n + (nul ? 1 : 0);
	if (need > *cap) {
		size_t c = *cap ? *cap : 1 << 16;
		while (c < need)
			c *= 2;
		char *p = realloc(*buf, c);
		if (!p)
			return 0;
		*buf = p;
		*cap = c;
	}
	size_t at = *len;
	memcpy(*buf + at, s, n);
	if (nul)
		(*buf)[at + n] = 0;
	*len = need;
	return at;
}

void kallsyms_free(struct kallsyms *k)
{
	free(k->v);
	free(k->text);
	free(k->names);
	memset(k, 0, sizeof(*k));
}

int kallsyms_read(struct kallsyms *k, const char *path)
{
	memset(k, 0, sizeof(*k));
	FILE *f = fopen(path, "r");
	if (!f)
		return -errno;
	char *line = NULL;
	size_t linecap = 0, cap = 0, tcap = 0, ncap = 0, seq = 0;
	ssize_t len;
	bool nonzero = false;
	int r = 0;
	/* names offset 0 means "no module": start the buffer with one NUL */
	if (!put(&k->names, &k->nlen, &ncap, "", 0, true) && !k->names)
		r = -ENOMEM;
	while (!r && (len = getline(&line, &linecap, f)) > 0) {
		/* "ADDR TYPE NAME" then, for modules, "\t[MOD]" */
		char *end, *p = line;
		unsigned long long addr = strtoull(p, &end, 16);
		if (end == p || (*end != ' ' && *end != '\t'))
			continue;
		p = end + strspn(end, " \t");
		char type = *p;
		if (!type || (p[1] != ' ' && p[1] != '\t'))
			continue;
		p += 1 + strspn(p + 1, " \t");
		size_t nl = strcspn(p, " \t\n");
		if (!nl)
			continue;
		const char *name = p, *mod = NULL;
		size_t ml = 0;
		p += nl;
		p += strspn(p, " \t");
		if (*p == '[') {
			mod = p;
			ml = strcspn(p, "]\n");
			if (p[ml] == ']')
				ml++;
		}
		if (addr) {
			nonzero = true;
			/* first listing of each, as perf and symbols.py take them */
			if (nl == 5 && !memcmp(name, "_text", 5) && !k->text_addr)
				k->text_addr = addr;
			else if (nl == 6 && !memcmp(name, "_stext", 6) && !k->stext_addr)
				k->stext_addr = addr;
			else if (nl == 6 && !memcmp(name, "_etext", 6) && !k->etext_addr)
				k->etext_addr = addr;
		}
		/* functions only (what call stacks need), and only real addresses */
		if (!strchr("tTwW", type) || !addr)
			continue;
		if (k->n == cap) {
			size_t c = cap ? cap * 2 : 16384;
			struct ksym *v = realloc(k->v, c * sizeof(*v));
			if (!v) {
				r = -ENOMEM;
				break;
			}
			k->v = v;
			cap = c;
		}
		if (line[len - 1] != '\n') { /* the last line without its newline: give it one */
			if ((size_t)len + 1 >= linecap) {
				size_t off_name = (size_t)(name - line), off_mod = mod ? (size_t)(mod - line) : 0;
				char *nb = realloc(line, linecap = (size_t)len + 2);
				if (!nb) {
					r = -ENOMEM;
					break;
				}
				line = nb;
				name = line + off_name;
				mod = mod ? line + off_mod : NULL;
			}
			line[len++] = '\n';
			line[len] = 0;
		}
		struct ksym *s = &k->v[k->n];
		*s = (struct ksym){ .addr = addr, .len = (size_t)len, .seq = seq++, .type = type };
		size_t before = k->tlen;
		s->line = put(&k->text, &k->tlen, &tcap, line, (size_t)len, false);
		s->name = put(&k->names, &k->nlen, &ncap, name, nl, true);
		s->mod = mod ? put(&k->names, &k->nlen, &ncap, mod, ml, true) : 0;
		if (k->tlen == before || !s->name || (mod && !s->mod)) {
			r = -ENOMEM;
			break;
		}
		if (!mod && addr > k->max_kernel_addr)
			k->max_kernel_addr = addr;
		k->n++;
	}
	if (!r && ferror(f))
		r = -EIO;
	free(line);
	fclose(f);
	if (!r && (!nonzero || !k->n))
		r = -EACCES;
	if (r) {
		kallsyms_free(k);
		return r;
	}
	qsort(k->v, k->n, sizeof(*k->v), cmp_ksym);
	return 0;
}
