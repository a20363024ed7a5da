/* SPDX-License-Identifier: MIT */
/* The guest kernel's System.map: function lookup for unwinding and exact-mode block
 * splitting, the addresses of the functions the plugin hooks, and the kallsyms copy
 * written into the perf.data (feature section 250, /proc/kallsyms text). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "perf_file.h"
#include "pes.h"
#include "sorted.h"

struct ksym {
	uint64_t addr;
	char type;
	bool used, func;
	char *name;
};

static struct ksym *ks;
static size_t nks;
static uint64_t text_lo, text_hi, init_lo, init_hi, k_text, k_etext;
static const char *k_ref = "_text";
static uint64_t *fstart; /* distinct function start addresses, sorted */
static size_t nf;

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return strcmp(x->name, y->name);
}

bool ksyms_load(const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(err, errlen, "cannot read kernel=%s: %s (give the guest kernel's System.map, "
			 ".cache/lab/<arch>/System.map-<tag>)", path, strerror(errno));
		return false;
	}
	char line[512];
	size_t cap = 0, lineno = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long addr;
		char type, name[256];
		lineno++;
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3) {
			fclose(f);
			snprintf(err, errlen, "kernel=%s line %zu is not 'address type name': not a "
				 "System.map", path, lineno);
			return false;
		}
		if (nks == cap) {
			cap = cap ? cap * 2 : 16384;
			ks = realloc(ks, cap * sizeof(*ks));
			if (!ks)
				pes_fatal("out of memory reading %s", path);
		}
		ks[nks++] = (struct ksym){ .addr = addr, .type = type, .name = strdup(name),
					   .func = strchr("tTwW", type) != NULL };
	}
	fclose(f);
	if (!nks) {
		snprintf(err, errlen, "kernel=%s holds no symbols: not a System.map", path);
		return false;
	}
	qsort(ks, nks, sizeof(*ks), cmp_ksym);
	uint64_t stext = ksym_addr("_stext");
	k_text = ksym_addr("_text");
	k_etext = ksym_addr("_etext");
	init_lo = ksym_addr("_sinittext");
	init_hi = ksym_addr("_einittext");
	if (!k_text) {
		k_text = stext;
		k_ref = "_stext";
	}
	if (!k_text || !k_etext || k_etext <= k_text) {
		snprintf(err, errlen, "kernel=%s lacks _text/_stext or _etext: not a kernel System.map",
			 path);
		return false;
	}
	text_lo = k_text;
	text_hi = k_etext;
	fstart = malloc(nks * sizeof(*fstart));
	for (size_t i = 0; i < nks; i++)
		if (ks[i].func && (!nf || fstart[nf - 1] != ks[i].addr))
			fstart[nf++] = ks[i].addr;
	return true;
}

uint64_t ksym_addr(const char *name)
{
	for (size_t i = 0; i < nks; i++)
		if (!strcmp(ks[i].name, name))
			return ks[i].addr;
	return 0;
}

uint64_t ksym_text(void)
{
	return k_text;
}

uint64_t ksym_etext(void)
{
	return k_etext;
}

const char *ksym_ref(void)
{
	return k_ref;
}

bool ktext(uint64_t a)
{
	return (a >= text_lo && a < text_hi) || (a >= init_lo && a < init_hi);
}

/* last function start <= addr */
static int64_t fidx(uint64_t addr)
{
	return (int64_t)sorted_count_le(fstart, nf, sizeof(uint64_t), addr) - 1;
}

int64_t kfunc(uint64_t addr)
{
	return ktext(addr) ? fidx(addr) : -1;
}

bool kfunc_start(uint64_t addr)
{
	int64_t i = fidx(addr);
	return i >= 0 && fstart[i] == addr;
}

void ksym_used(uint64_t addr)
{
	if (!ktext(addr))
		return;
	size_t lo = sorted_count_le(ks, nks, sizeof(*ks), addr);
	/* every alias at that address: the reader picks its own preferred name */
	for (size_t i = lo; i-- > 0 && ks[i].addr == ks[lo - 1].addr;)
		if (ks[i].func)
			ks[i].used = true;
}

/* The used functions, the symbol after each (it ends the used one), perf's reference
 * symbols, in /proc/kallsyms form and address order. */
void ksyms_emit(void)
{
	char line[320];
	bool want_next = false;
	uint64_t used_at = 0;
	for (size_t i = 0; i < nks; i++) {
		const struct ksym *s = &ks[i];
		bool keep = s->used || !strcmp(s->name, "_text") || !strcmp(s->name, "_stext") ||
			    !strcmp(s->name, "_etext");
		if (!keep && want_next && s->func && s->addr > used_at) {
			keep = true;
			want_next = false;
		}
		if (s->used) {
			want_next = true;
			used_at = s->addr;
		}
		if (!keep)
			continue;
		int n = snprintf(line, sizeof(line), "%016llx %c %s\n", (unsigned long long)s->addr,
				 s->type, s->name);
		out_feat_raw(PF_FEAT_HPM_KALLSYMS, line, (size_t)n);
	}
}
