/* SPDX-License-Identifier: MIT */
/* Exact mode: every completed instruction counted, per task and per block start PC.
 * A task's identity is an "epoch" (tgid, tid, comm) that changes when its comm changes
 * (exec), so the instructions before and after an exec land in different rows. Kernel
 * blocks are cut at function starts (ksyms) so each row lies in one function. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "pes.h"

bool exact_enabled;

struct epoch {
	int32_t tgid, tid;
	char comm[16];
};
static struct epoch *ep;
static uint32_t nep, capep;

uint32_t exact_epoch(int32_t tgid, int32_t tid, const char *comm)
{
	if (nep == capep) {
		capep = capep ? capep * 2 : 1024;
		ep = realloc(ep, capep * sizeof(*ep));
		if (!ep)
			pes_fatal("out of memory (exact mode tasks)");
	}
	ep[nep] = (struct epoch){ .tgid = tgid, .tid = tid };
	memcpy(ep[nep].comm, comm, 15);
	return nep++;
}

struct xslot {
	uint64_t pc;
	uint32_t epoch;
	uint8_t priv;
	uint64_t insns, loads, stores, branches;
	struct xslot *next;
};

#define XBITS 18
static struct xslot *xtab[1u << XBITS];
static uint64_t nslots;

static struct xslot *slot(uint32_t epoch, uint8_t priv, uint64_t pc)
{
	uint64_t k = (pc * 0x9E3779B97F4A7C15ULL) ^ ((uint64_t)epoch * 0xC2B2AE3D27D4EB4FULL) ^ priv;
	unsigned h = (unsigned)(k >> (64 - XBITS));
	for (struct xslot *s = xtab[h]; s; s = s->next)
		if (s->pc == pc && s->epoch == epoch && s->priv == priv)
			return s;
	struct xslot *s = calloc(1, sizeof(*s));
	if (!s)
		pes_fatal("out of memory (exact mode counts)");
	*s = (struct xslot){ .pc = pc, .epoch = epoch, .priv = priv, .next = xtab[h] };
	xtab[h] = s;
	nslots++;
	return s;
}

void exact_account(struct tb *tb, const struct task *t, uint32_t e)
{
	for (unsigned k = 0; k < tb->nseg; k++) {
		struct tbseg *sg = &tb->seg[k];
		uint32_t first = sg->first, end = k + 1 < tb->nseg ? tb->seg[k + 1].first : tb->n;
		if (first >= e)
			break;
		uint32_t last = e < end ? e : end;
		struct xslot *s = sg->cache;
		if (!s || sg->cache_epoch != t->epoch) {
			s = slot(t->epoch, tb->priv, tb->in[first].vaddr);
			sg->cache = s;
			sg->cache_epoch = t->epoch;
		}
		s->insns += last - first;
		s->loads += tb->pre_ld[last] - tb->pre_ld[first];
		s->stores += tb->pre_st[last] - tb->pre_st[first];
		if (last == tb->n && (tb->in[tb->n - 1].cls & IC_BRANCH))
			s->branches++;
	}
}

struct row {
	int32_t tgid, tid;
	const char *comm;
	uint8_t priv;
	uint64_t pc, insns, loads, stores, branches;
};

static int cmp_row(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	int c = strcmp(x->comm, y->comm);
	if (c)
		return c;
	if (x->priv != y->priv)
		return x->priv < y->priv ? -1 : 1;
	return x->pc < y->pc ? -1 : x->pc > y->pc;
}

/* a comm is printed as is, except bytes that would break the TSV */
static void put_comm(FILE *f, const char *c)
{
	for (; *c; c++)
		fputc((unsigned char)*c < 0x21 || *c == 0x7f ? '_' : *c, f);
}

static const char *const priv_names[] = { "user", "kernel", "firmware" };

bool exact_write(const char *path, char *err, size_t errlen)
{
	struct row *r = malloc((nslots + 1) * sizeof(*r));
	size_t n = 0;
	for (unsigned h = 0; h < (1u << XBITS); h++)
		for (struct xslot *s = xtab[h]; s; s = s->next) {
			if (!s->insns)
				continue;
			const struct epoch *e = &ep[s->epoch];
			r[n++] = (struct row){ e->tgid, e->tid, e->comm, s->priv, s->pc, s->insns,
					       s->loads, s->stores, s->branches };
		}
	qsort(r, n, sizeof(*r), cmp_row);
	char tmp[4200];
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	if (!f) {
		snprintf(err, errlen, "cannot write exact=%s: %s", path, strerror(errno));
		free(r);
		return false;
	}
	fputs("tgid\ttid\tcomm\tpriv\tstart_pc\tinsns\tloads\tstores\tbranches\n", f);
	for (size_t i = 0; i < n; i++) {
		struct row *x = &r[i];
		/* the same task, name and block in two epochs (renamed back): one row */
		while (i + 1 < n && !cmp_row(x, &r[i + 1])) {
			x[1].insns += x->insns;
			x[1].loads += x->loads;
			x[1].stores += x->stores;
			x[1].branches += x->branches;
			x = &r[++i];
		}
		fprintf(f, "%d\t%d\t", x->tgid, x->tid);
		put_comm(f, x->comm[0] ? x->comm : "-");
		fprintf(f, "\t%s\t0x%llx\t%llu\t%llu\t%llu\t%llu\n", priv_names[x->priv],
			(unsigned long long)x->pc, (unsigned long long)x->insns,
			(unsigned long long)x->loads, (unsigned long long)x->stores,
			(unsigned long long)x->branches);
	}
	free(r);
	bool ok = !ferror(f);
	ok &= fclose(f) == 0;
	if (!ok || rename(tmp, path)) {
		snprintf(err, errlen, "cannot write exact=%s: %s; nothing was written", path,
			 strerror(errno ? errno : EIO));
		unlink(tmp);
		return false;
	}
	return true;
}
