/* SPDX-License-Identifier: MIT */
/*
 * Symbols for hpm top (tasksyms.h), without the perf tool: kernel functions from
 * /proc/kallsyms (read by src/sym/kallsyms.c, with hpmkit's alias rule), user functions from the ELF symbol tables of the mapped
 * files (.symtab, else .dynsym; a detached debug file found by build-id under
 * /usr/lib/debug/.build-id, as Debian's -dbg packages install them, wins).
 * Process mappings come from /proc/PID/maps when a process is first seen and
 * from the kernel's MMAP2 records after that (exec'd and short-lived tasks).
 *
 * A sampled address inside a mapping becomes a file offset (ip - start +
 * pgoff) and then an ELF virtual address through the PT_LOAD segment that
 * holds that offset; the symbol is the function whose [value, value + size)
 * contains it (size 0: up to the next function). PLT slots are functions named
 * "<target>@plt", found by decoding each stub's GOT load (plt.c, as hpmkit and
 * objdump name them).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "demangle.h"
#include "kallsyms.h"
#include "plt.h"
#include "proc_maps.h"
#include "sorted.h"
#include "tasksyms.h"

struct sym {
	uint64_t start, end;
	const char *name;
	int bind; /* STB_LOCAL, STB_GLOBAL, STB_WEAK */
};

struct symtab {
	struct sym *v;
	size_t n;
	char *names; /* one allocation for all names */
};

struct seg {
	uint64_t off, vaddr, filesz;
};

struct dso {
	char *path;
	const char *base;
	struct symtab tab;
	struct seg seg[16];
	int nseg;
	bool loaded;
	struct dso *next;
};

struct map {
	uint64_t start, end, pgoff;
	struct dso *dso;
};

struct proc {
	pid_t pid;
	char comm[32];
	struct map *maps;
	int nmaps, cap;
	bool have_maps; /* /proc/PID/maps read, or built from MMAP2 since exec */
	struct proc *next;
};

#define PROC_HASH 1024

struct tasksyms {
	struct symtab kernel;     /* [kernel] and modules, sorted */
	char **kmod;              /* module of each kernel symbol, NULL for the kernel */
	struct dso *dsos;
	struct proc *procs[PROC_HASH];
};

static int cmp_sym(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

static int underscores(const char *s)
{
	int n = 0;
	while (s[n] == '_')
		n++;
	return n;
}

/* Of two names for one address, the one perf shows: a sized symbol over an
 * unsized one, strong over weak, global over local, fewer leading
 * underscores, then the longer name, then the one listed first in the symbol table
 * (perf keeps the first of equals; all names sit in one buffer in table order). */
static bool better(const struct sym *a, const struct sym *b)
{
	bool sa = a->end > a->start, sb = b->end > b->start;
	if (sa != sb)
		return sa;
	if ((a->bind == STB_WEAK) != (b->bind == STB_WEAK))
		return b->bind == STB_WEAK;
	if ((a->bind == STB_GLOBAL) != (b->bind == STB_GLOBAL))
		return a->bind == STB_GLOBAL;
	int ua = underscores(a->name), ub = underscores(b->name);
	if (ua != ub)
		return ua < ub;
	size_t la = strlen(a->name), lb = strlen(b->name);
	if (la != lb)
		return la > lb;
	return a->name < b->name;
}

/* sort, keep one name per address, close open ends at the next start */
static void finish(struct symtab *t)
{
	qsort(t->v, t->n, sizeof(*t->v), cmp_sym);
	size_t k = 0;
	for (size_t i = 0; i < t->n; i++) {
		if (k && t->v[k - 1].start == t->v[i].start) {
			struct sym *keep = &t->v[k - 1];
			uint64_t end = keep->end > t->v[i].end ? keep->end : t->v[i].end;
			if (better(&t->v[i], keep))
				*keep = t->v[i];
			keep->end = end;
			continue;
		}
		t->v[k++] = t->v[i];
	}
	t->n = k;
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].end <= t->v[i].start)
			t->v[i].end = i + 1 < t->n ? t->v[i + 1].start : t->v[i].start + 1;
}

static const struct sym *find(const struct symtab *t, uint64_t addr)
{
	size_t lo = sorted_count_le(t->v, t->n, sizeof(*t->v), addr);
	if (!lo)
		return NULL;
	const struct sym *s = &t->v[lo - 1];
	return addr < s->end ? s : NULL;
}

static void load_dso(struct dso *d, pid_t pid);
static void dump_kernel(const char *path);

/* Test hook (tests/py/test_top_plt.py): HPM_TOP_SYMS_DUMP=FILE in the environment makes
 * tasksyms_new() print the table hpm top names FILE's addresses with, one "START END NAME"
 * line per function (hex link-time addresses of [START, END), sorted; PLT slots are the
 * names ending in @plt), and end the program: status 0, or 1 when FILE is no 64-bit
 * little-endian ELF file. E.g. HPM_TOP_SYMS_DUMP=/usr/bin/ls hpm top -b -- true */
static void dump_symbols(const char *path)
{
	struct dso d = { .path = (char *)path };
	load_dso(&d, 0);
	for (size_t i = 0; i < d.tab.n; i++)
		printf("0x%llx 0x%llx %s\n", (unsigned long long)d.tab.v[i].start,
		       (unsigned long long)d.tab.v[i].end, d.tab.v[i].name);
	int rc = d.nseg || d.tab.n ? 0 : 1;
	if (rc)
		fprintf(stderr, "hpm top: %s: no 64-bit little-endian ELF file\n", path);
	free(d.tab.v);
	free(d.tab.names);
	exit(fflush(stdout) ? 1 : rc);
}

struct tasksyms *tasksyms_new(void)
{
	const char *dump = getenv("HPM_TOP_SYMS_DUMP");
	if (dump)
		dump_symbols(dump);
	if ((dump = getenv("HPM_TOP_KSYMS_DUMP")))
		dump_kernel(dump);
	return calloc(1, sizeof(struct tasksyms));
}

void tasksyms_free(struct tasksyms *s)
{
	if (!s)
		return;
	free(s->kernel.v);
	free(s->kernel.names);
	free(s->kmod);
	for (struct dso *d = s->dsos, *n; d; d = n) {
		n = d->next;
		free(d->path);
		free(d->tab.v);
		free(d->tab.names);
		free(d);
	}
	for (int h = 0; h < PROC_HASH; h++)
		for (struct proc *p = s->procs[h], *n; p; p = n) {
			n = p->next;
			free(p->maps);
			free(p);
		}
	free(s);
}

/* Kernel functions of a kallsyms text (src/sym/kallsyms.c): one name per address, the
 * one hpmkit's symboliser gives it (a section marker such as __sched_text_start never
 * names the function it shares an address with), so that hpm top on a board and hpmkit
 * on the workstation name kernel functions alike. */
static int load_kernel(struct tasksyms *s, const char *path)
{
	struct kallsyms k;
	if (kallsyms_read(&k, path))
		return 0;
	struct symtab *t = &s->kernel;
	if (!(t->v = malloc(sizeof(*t->v) * k.n)) || !(s->kmod = calloc(k.n, sizeof(char *)))) {
		free(t->v);
		t->v = NULL;
		kallsyms_free(&k);
		return 0;
	}
	size_t n = 0;
	for (size_t i = 0, end; i < k.n; i = end) {
		end = kallsyms_group_end(&k, i);
		size_t c = kallsyms_choose(&k, i, end);
		char type = k.v[c].type;
		/* T global, t local, W/w weak */
		t->v[n] = (struct sym){ k.v[c].addr, k.v[c].addr, k.names + k.v[c].name,
					type == 'T' ? STB_GLOBAL : type == 't' ? STB_LOCAL : STB_WEAK };
		/* "[mod]" is the dso column of a module's functions */
		s->kmod[n++] = k.v[c].mod ? k.names + k.v[c].mod : NULL;
	}
	/* a function ends where the next begins (kallsyms has no sizes) */
	for (size_t i = 0; i < n; i++)
		t->v[i].end = i + 1 < n ? t->v[i + 1].start : t->v[i].start + 4096;
	t->n = n;
	/* the names stay; the table owns them */
	t->names = k.names;
	int count = (int)k.n;
	free(k.v);
	free(k.text);
	return count;
}

int tasksyms_kernel(struct tasksyms *s)
{
	return load_kernel(s, "/proc/kallsyms");
}

/* Test hook (tests/py/test_kallsyms_c.py): HPM_TOP_KSYMS_DUMP=FILE makes tasksyms_new()
 * read FILE as hpm top reads /proc/kallsyms and print its table, one "START END NAME"
 * line per address (hex; NAME followed by " [mod]" for a module), and end the program:
 * status 0, or 1 when FILE names no function. */
static void dump_kernel(const char *path)
{
	struct tasksyms *s = calloc(1, sizeof(*s));
	if (!s || !load_kernel(s, path)) {
		fprintf(stderr, "hpm top: %s: no kallsyms text with function addresses\n", path);
		exit(1);
	}
	for (size_t i = 0; i < s->kernel.n; i++)
		printf("0x%llx 0x%llx %s%s%s\n", (unsigned long long)s->kernel.v[i].start,
		       (unsigned long long)s->kernel.v[i].end, s->kernel.v[i].name,
		       s->kmod[i] ? " " : "", s->kmod[i] ? s->kmod[i] : "");
	int rc = fflush(stdout) ? 1 : 0;
	tasksyms_free(s);
	exit(rc);
}

/* ---- ELF ---- */

static bool elf_ok(const unsigned char *p, size_t len)
{
	return len >= sizeof(Elf64_Ehdr) && !memcmp(p, ELFMAG, SELFMAG) &&
	       p[EI_CLASS] == ELFCLASS64 && p[EI_DATA] == ELFDATA2LSB;
}

/* build-id note as hex, or "" */
static void elf_build_id(const unsigned char *p, size_t len, char *hex, size_t hexlen)
{
	hex[0] = 0;
	const Elf64_Ehdr *eh = (const void *)p;
	if (eh->e_shoff == 0 || eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > len)
		return;
	const Elf64_Shdr *sh = (const void *)(p + eh->e_shoff);
	for (int i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_type != SHT_NOTE || sh[i].sh_offset + sh[i].sh_size > len)
			continue;
		const unsigned char *n = p + sh[i].sh_offset, *end = n + sh[i].sh_size;
		while (n + 12 <= end) {
			uint32_t namesz = *(const uint32_t *)n, descsz = *(const uint32_t *)(n + 4),
				 type = *(const uint32_t *)(n + 8);
			const unsigned char *name = n + 12, *desc = name + ((namesz + 3) & ~3u);
			if (desc + descsz > end)
				break;
			if (type == NT_GNU_BUILD_ID && namesz == 4 && !memcmp(name, "GNU", 4)) {
				for (uint32_t k = 0; k < descsz && 2 * k + 2 < hexlen; k++)
					snprintf(hex + 2 * k, 3, "%02x", desc[k]);
				return;
			}
			n = desc + ((descsz + 3) & ~3u);
		}
	}
}

/* Function symbols of one symbol table section into t (appending). */
/* One more symbol, named by l bytes still to be written at the returned place
 * (and a NUL after them), in a table being built: names are offsets into
 * t->names until the buffer stops moving. NULL when memory runs out. */
static char *sym_add(struct symtab *t, size_t *cap, size_t *nlen, size_t *ncap, size_t l,
		     uint64_t start, uint64_t end, int bind)
{
	if (*nlen + l + 1 > *ncap) {
		char *nn = realloc(t->names, *ncap = (*ncap + l + 1) * 2);
		if (!nn)
			return NULL;
		t->names = nn;
	}
	if (t->n == *cap) {
		struct sym *nv = realloc(t->v, sizeof(*nv) * (*cap = *cap ? *cap * 2 : 1024));
		if (!nv)
			return NULL;
		t->v = nv;
	}
	char *name = t->names + *nlen;
	t->v[t->n++] = (struct sym){ start, end, (const char *)(uintptr_t)*nlen, bind };
	*nlen += l + 1;
	return name;
}

static void elf_symbols(const unsigned char *p, size_t len, int type, struct symtab *t,
			size_t *cap, size_t *nlen, size_t *ncap)
{
	const Elf64_Ehdr *eh = (const void *)p;
	const Elf64_Shdr *sh = (const void *)(p + eh->e_shoff);
	for (int i = 0; i < eh->e_shnum; i++) {
		if ((int)sh[i].sh_type != type || sh[i].sh_link >= eh->e_shnum ||
		    sh[i].sh_offset + sh[i].sh_size > len)
			continue;
		const Elf64_Shdr *strs = &sh[sh[i].sh_link];
		if (strs->sh_offset + strs->sh_size > len)
			continue;
		const Elf64_Sym *sym = (const void *)(p + sh[i].sh_offset);
		size_t n = sh[i].sh_size / sizeof(Elf64_Sym);
		const char *str = (const char *)p + strs->sh_offset;
		for (size_t k = 0; k < n; k++) {
			int st = ELF64_ST_TYPE(sym[k].st_info);
			if (sym[k].st_shndx == SHN_UNDEF || !sym[k].st_value ||
			    sym[k].st_name >= strs->sh_size)
				continue;
			const char *name = str + sym[k].st_name;
			/* functions, and untyped labels in code (an assembler's _start) but
			 * not local labels or Arm/RISC-V mapping symbols ($x, $d) */
			bool label = st == STT_NOTYPE && sym[k].st_shndx < eh->e_shnum &&
				     (sh[sym[k].st_shndx].sh_flags & SHF_EXECINSTR) && name[0] &&
				     name[0] != '$' && strncmp(name, ".L", 2);
			if (st != STT_FUNC && st != STT_GNU_IFUNC && !label)
				continue;
			size_t l = strnlen(name, strs->sh_size - sym[k].st_name);
			char *to = sym_add(t, cap, nlen, ncap, l, sym[k].st_value,
					   sym[k].st_value + sym[k].st_size, ELF64_ST_BIND(sym[k].st_info));
			if (!to)
				return;
			memcpy(to, name, l);
			to[l] = 0;
		}
	}
}

/* PLT slots (plt.c) join a table whose function symbols are sorted (the first nsym
 * entries): a slot where a symbol already starts (a debug file that is a full copy) is not
 * added, as hpmkit's symbols do. */
struct plt_add {
	struct symtab *t;
	size_t *cap, *nlen, *ncap, nsym;
};

static int add_plt_slot(void *arg, uint64_t start, uint64_t size, const char *name)
{
	struct plt_add *a = arg;
	size_t k = sorted_count_le(a->t->v, a->nsym, sizeof(*a->t->v), start);
	if (k && a->t->v[k - 1].start == start)
		return 0;
	size_t l = strlen(name);
	char *to = sym_add(a->t, a->cap, a->nlen, a->ncap, l, start, start + size, STB_GLOBAL);
	if (!to)
		return 1;
	memcpy(to, name, l + 1);
	return 0;
}

/* C++ names as perf shows them (src/sym/demangle.c), after the choice among aliases, which
 * perf also makes on the symbol-table names; "_Z...@plt" slots get their target demangled.
 * All names move into one new allocation. */
static void demangle_names(struct symtab *t)
{
	char **dm = calloc(t->n ? t->n : 1, sizeof(*dm));
	size_t total = 0;
	bool any = false;

	if (!dm)
		return;
	for (size_t i = 0; i < t->n; i++) {
		const char *n = t->v[i].name;
		size_t l = strlen(n);

		if (!strncmp(n, "_Z", 2)) {
			if (l > 4 && !strcmp(n + l - 4, "@plt")) {
				char *m = strndup(n, l - 4), *d = m ? util_demangle(m) : NULL;

				if (d && (dm[i] = malloc(strlen(d) + 5)))
					sprintf(dm[i], "%s@plt", d);
				free(m);
				free(d);
			} else {
				dm[i] = util_demangle(n);
			}
		}
		total += (dm[i] ? strlen(dm[i]) : l) + 1;
		any |= dm[i] != NULL;
	}
	char *buf = any ? malloc(total) : NULL;
	if (buf) {
		char *to = buf;
		for (size_t i = 0; i < t->n; i++) {
			const char *n = dm[i] ? dm[i] : t->v[i].name;
			size_t l = strlen(n) + 1;

			memcpy(to, n, l);
			t->v[i].name = to;
			to += l;
		}
		free(t->names);
		t->names = buf;
	}
	for (size_t i = 0; i < t->n; i++)
		free(dm[i]);
	free(dm);
}

static void *map_file(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct stat st;
	void *p = NULL;
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_size > 0) {
		p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		*len = (size_t)st.st_size;
		if (p == MAP_FAILED)
			p = NULL;
	}
	close(fd);
	return p;
}

static void load_dso(struct dso *d, pid_t pid)
{
	d->loaded = true;
	size_t len = 0;
	unsigned char *p = map_file(d->path, &len);
	if (!p && pid > 0) {
		/* a process in another mount namespace: its files through /proc */
		char alt[4200];
		snprintf(alt, sizeof(alt), "/proc/%d/root%s", (int)pid, d->path);
		p = map_file(alt, &len);
	}
	if (!p)
		return;
	if (!elf_ok(p, len)) {
		munmap(p, len);
		return;
	}
	const Elf64_Ehdr *eh = (const void *)p;
	if (eh->e_phoff + (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr) <= len) {
		const Elf64_Phdr *ph = (const void *)(p + eh->e_phoff);
		for (int i = 0; i < eh->e_phnum && d->nseg < 16; i++)
			if (ph[i].p_type == PT_LOAD)
				d->seg[d->nseg++] = (struct seg){ ph[i].p_offset, ph[i].p_vaddr,
								  ph[i].p_filesz };
	}
	bool sections = eh->e_shoff && eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) <= len;
	size_t cap = 0, nlen = 0, ncap = 0;
	if (sections) {
		/* a detached debug file carries the full .symtab of a stripped library */
		char id[128], dbg[300];
		elf_build_id(p, len, id, sizeof(id));
		size_t dlen = 0;
		unsigned char *q = NULL;
		if (strlen(id) > 2) {
			snprintf(dbg, sizeof(dbg), "/usr/lib/debug/.build-id/%.2s/%s.debug", id, id + 2);
			q = map_file(dbg, &dlen);
		}
		if (q && elf_ok(q, dlen)) {
			const Elf64_Ehdr *qe = (const void *)q;
			if (qe->e_shoff && qe->e_shoff + (uint64_t)qe->e_shnum * sizeof(Elf64_Shdr) <= dlen)
				elf_symbols(q, dlen, SHT_SYMTAB, &d->tab, &cap, &nlen, &ncap);
		}
		if (q)
			munmap(q, dlen);
		if (!d->tab.n)
			elf_symbols(p, len, SHT_SYMTAB, &d->tab, &cap, &nlen, &ncap);
		if (!d->tab.n)
			elf_symbols(p, len, SHT_DYNSYM, &d->tab, &cap, &nlen, &ncap);
		if (d->tab.n > 1)
			qsort(d->tab.v, d->tab.n, sizeof(*d->tab.v), cmp_sym);
		plt_slots(p, len, add_plt_slot,
			  &(struct plt_add){ &d->tab, &cap, &nlen, &ncap, d->tab.n });
	}
	munmap(p, len);
	for (size_t i = 0; i < d->tab.n; i++)
		d->tab.v[i].name = d->tab.names + (uintptr_t)d->tab.v[i].name;
	finish(&d->tab);
	demangle_names(&d->tab);
}

static struct dso *get_dso(struct tasksyms *s, const char *path)
{
	for (struct dso *d = s->dsos; d; d = d->next)
		if (!strcmp(d->path, path))
			return d;
	struct dso *d = calloc(1, sizeof(*d));
	if (!d || !(d->path = strdup(path))) {
		free(d);
		return NULL;
	}
	const char *slash = strrchr(d->path, '/');
	d->base = slash ? slash + 1 : d->path;
	d->next = s->dsos;
	s->dsos = d;
	return d;
}

/* ---- processes ---- */

static struct proc *get_proc(struct tasksyms *s, pid_t pid, bool create)
{
	struct proc **head = &s->procs[(unsigned)pid % PROC_HASH];
	for (struct proc *p = *head; p; p = p->next)
		if (p->pid == pid)
			return p;
	if (!create)
		return NULL;
	struct proc *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	p->next = *head;
	*head = p;
	return p;
}

static void add_map(struct tasksyms *s, struct proc *p, uint64_t start, uint64_t end,
		    uint64_t pgoff, const char *file)
{
	/* a new mapping replaces what it overlaps */
	int k = 0;
	for (int i = 0; i < p->nmaps; i++)
		if (p->maps[i].end <= start || p->maps[i].start >= end)
			p->maps[k++] = p->maps[i];
	p->nmaps = k;
	if (p->nmaps == p->cap) {
		struct map *nv = realloc(p->maps, sizeof(*nv) * (size_t)(p->cap = p->cap ? p->cap * 2 : 32));
		if (!nv)
			return;
		p->maps = nv;
	}
	p->maps[p->nmaps++] = (struct map){ start, end, pgoff, get_dso(s, file) };
}

struct proc_maps_of {
	struct tasksyms *s;
	struct proc *p;
};

static int add_proc_map(const struct proc_map *m, void *arg)
{
	struct proc_maps_of *c = arg;
	if (*m->name)
		add_map(c->s, c->p, m->start, m->end, m->pgoff, m->name);
	return 0;
}

static void read_proc_maps(struct tasksyms *s, struct proc *p)
{
	p->have_maps = true;
	proc_maps_exec(p->pid, add_proc_map, &(struct proc_maps_of){ s, p });
}

void tasksyms_mmap(struct tasksyms *s, pid_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
		   const char *filename)
{
	struct proc *p = get_proc(s, pid, true);
	if (!p)
		return;
	if (!p->have_maps)
		read_proc_maps(s, p);
	add_map(s, p, start, start + len, pgoff, filename);
}

void tasksyms_comm(struct tasksyms *s, pid_t pid, const char *comm, bool exec)
{
	struct proc *p = get_proc(s, pid, true);
	if (!p)
		return;
	snprintf(p->comm, sizeof(p->comm), "%s", comm);
	if (exec) {
		/* the old image is gone; its MMAP2 records follow */
		p->nmaps = 0;
		p->have_maps = true;
	}
}

void tasksyms_fork(struct tasksyms *s, pid_t pid, pid_t ppid)
{
	struct proc *parent = get_proc(s, ppid, false), *p;
	if (!parent || pid == ppid || !(p = get_proc(s, pid, true)))
		return;
	snprintf(p->comm, sizeof(p->comm), "%s", parent->comm);
	p->nmaps = 0;
	for (int i = 0; i < parent->nmaps; i++)
		add_map(s, p, parent->maps[i].start, parent->maps[i].end, parent->maps[i].pgoff,
			parent->maps[i].dso ? parent->maps[i].dso->path : "[unknown]");
	p->have_maps = parent->have_maps;
}

const char *tasksyms_comm_of(struct tasksyms *s, pid_t pid)
{
	struct proc *p = get_proc(s, pid, true);
	if (!p)
		return "?";
	if (!p->comm[0]) {
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
		FILE *f = fopen(path, "r");
		if (f) {
			if (fgets(p->comm, sizeof(p->comm), f))
				p->comm[strcspn(p->comm, "\n")] = 0;
			fclose(f);
		}
		if (!p->comm[0])
			snprintf(p->comm, sizeof(p->comm), pid ? ":%d" : "swapper", (int)pid);
	}
	return p->comm;
}

const char *tasksyms_lookup(struct tasksyms *s, pid_t pid, uint64_t ip, bool kernel,
			    const char **dso, uint64_t *off)
{
	*off = ip;
	if (kernel) {
		*dso = "[kernel]";
		const struct sym *k = find(&s->kernel, ip);
		if (!k)
			return NULL;
		if (s->kmod && s->kmod[k - s->kernel.v])
			*dso = s->kmod[k - s->kernel.v];
		return k->name;
	}
	*dso = "[unknown]";
	struct proc *p = get_proc(s, pid, true);
	if (!p)
		return NULL;
	if (!p->have_maps)
		read_proc_maps(s, p);
	for (int i = 0; i < p->nmaps; i++) {
		struct map *m = &p->maps[i];
		if (ip < m->start || ip >= m->end || !m->dso)
			continue;
		struct dso *d = m->dso;
		*dso = d->base;
		uint64_t foff = ip - m->start + m->pgoff;
		*off = foff;
		if (d->path[0] == '[' || !strncmp(d->path, "//anon", 6))
			return NULL;
		if (!d->loaded)
			load_dso(d, pid);
		uint64_t vaddr = foff;
		for (int k = 0; k < d->nseg; k++)
			if (foff >= d->seg[k].off && foff < d->seg[k].off + d->seg[k].filesz) {
				vaddr = foff - d->seg[k].off + d->seg[k].vaddr;
				break;
			}
		const struct sym *sy = find(&d->tab, vaddr);
		return sy ? sy->name : NULL;
	}
	return NULL;
}
