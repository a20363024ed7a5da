/* SPDX-License-Identifier: MIT */
/* Exact mode: every completed instruction counted, per task and per block start PC.
 * A task's identity is an "epoch" (tgid, tid, comm) that changes when its comm changes
 * (exec), so the instructions before and after an exec land in different rows. Kernel
 * blocks are cut at function starts (ksyms) so each row lies in one function.
 *
 * Kernel rows are also split by call path: the callers of the running function, read by
 * the sampler's own frame walk (unwind.c) where control arrives other than by a call or a
 * return, and followed through calls and returns in between (exact_path_at). A sample in
 * that block reads the same callers, except in entry code that reloads ra or fp by hand,
 * so a context's exact count is the sum of its paths' rows: `hpmkit compare` shows it
 * beside the sampled ratio. The paths go to EXACT.paths. */
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

/* Call paths as a trie: node id = (parent node, innermost caller), id 0 the empty path
 * (user and firmware rows). A call extends the running path by its return address, a
 * return to the innermost caller takes the parent: O(1) where a frame walk read ~10
 * records through QEMU (4 us; 19.8 M walks made a 23 s exact run 102 s). */
struct pnode {
	uint32_t parent;
	uint64_t caller; /* return address - 1, as sampled chains store it */
};
static struct pnode *pn;
static uint32_t npn = 1, cappn;
#define PBITS 18
static uint32_t *phash; /* open addressing, node ids; 0 = empty */
static uint32_t phcap;
uint64_t n_path_walks, n_path_steps;

static uint32_t ph_slot(uint32_t parent, uint64_t caller)
{
	uint64_t h = (caller * 0x9E3779B97F4A7C15ULL) ^ ((uint64_t)parent * 0xC2B2AE3D27D4EB4FULL);
	return (uint32_t)(h >> 32) & (phcap - 1);
}

static void ph_grow(void)
{
	uint32_t old = phcap, *o = phash;
	phcap = phcap ? phcap * 2 : 1u << PBITS;
	phash = calloc(phcap, sizeof(*phash));
	if (!phash)
		pes_fatal("out of memory (exact mode call paths)");
	for (uint32_t i = 0; i < old; i++)
		if (o[i]) {
			uint32_t k = ph_slot(pn[o[i]].parent, pn[o[i]].caller);
			while (phash[k])
				k = (k + 1) & (phcap - 1);
			phash[k] = o[i];
		}
	free(o);
}

static uint32_t child(uint32_t parent, uint64_t caller)
{
	if (2 * (uint64_t)npn >= phcap)
		ph_grow();
	uint32_t k = ph_slot(parent, caller);
	for (; phash[k]; k = (k + 1) & (phcap - 1))
		if (pn[phash[k]].parent == parent && pn[phash[k]].caller == caller)
			return phash[k];
	if (npn >= cappn) {
		cappn = cappn ? cappn * 2 : 1u << 16;
		pn = realloc(pn, cappn * sizeof(*pn));
		if (!pn)
			pes_fatal("out of memory (exact mode call paths)");
	}
	pn[npn] = (struct pnode){ .parent = parent, .caller = caller };
	phash[k] = npn;
	return npn++;
}

static uint32_t walk_path(const struct tb *tb)
{
	struct regs r = { 0 };
	uint64_t ch[PES_MAX_CHAIN];
	int n = unwind_kernel_callers(&r, tb->vaddr, ch);
	uint32_t id = 0;
	while (n-- > 0)
		id = child(id, ch[n]);
	n_path_walks++;
	return id;
}

/* The callers a sample in tb would read (unwind.c): after a call from a function, the
 * caller's path plus the return address (ra points into the caller, whose frame record
 * holds the rest); after a return to the innermost caller, the parent; after anything
 * else (an exception, its return, a call from entry code, a tail call, a jump between
 * symbols, a switch of tasks) a frame walk; a branch inside one function keeps the path. */
static bool leaves_switch(const struct tb *prev, const struct tb *tb)
{
	static int64_t sw = -2;
	if (sw == -2) {
		uint64_t a = ksym_addr(opt.isa->switch_sym);
		sw = a ? kfunc(a) : -1;
	}
	return sw >= 0 && prev->func == sw && tb->func != sw;
}

void exact_path_at(struct vcpu *v, const struct tb *prev, const struct tb *tb)
{
	if (tb->priv != PRIV_KERNEL) {
		v->path = 0;
		v->path_task = NULL;
		return;
	}
	/* out of the context switch (riscv __switch_to, arm64 cpu_switch_to) the stack is the
	 * next task's, whose callers are not the path followed into the switch: walk. (The task
	 * is known from the switch's first instruction, but a walk inside the switch, before
	 * the next task's sp and fp are loaded, reads the previous task's callers; a return
	 * to the same call site in __schedule then kept them: 1.7 M instructions of
	 * finish_task_switch in fork on arm64 counted under the exiting child's do_exit
	 * where samples read the parent's wait4.) */
	if (prev && prev->priv == PRIV_KERNEL && !leaves_switch(prev, tb) &&
	    v->path_task == v->task && v->task) {
		const struct insn *last = &prev->in[prev->n - 1];
		int f = opt.isa->flow(last->raw);
		/* a call from entry assembly walks: it has just pointed fp at the frame record
		 * in pt_regs (arm64) or used fp as a scratch register (riscv s0), so the callee
		 * reads other callers than the path read when the entry block started */
		if (f == FLOW_CALL && kfunc_start(tb->vaddr) && !in_entry_code(tb->vaddr) &&
		    !in_entry_asm(last->vaddr)) {
			v->path = child(v->path, last->vaddr + last->size - 1);
			n_path_steps++;
			return;
		}
		if (f == FLOW_RET && v->path && pn[v->path].caller + 1 == tb->vaddr) {
			v->path = pn[v->path].parent;
			n_path_steps++;
			return;
		}
		if (f != FLOW_RET && tb->func == prev->func && tb->func >= 0 &&
		    !in_entry_code(tb->vaddr))
			return; /* a branch inside the function */
	}
	v->path = walk_path(tb);
	v->path_task = v->task;
}

struct xslot {
	uint64_t pc;
	uint32_t epoch, path;
	uint8_t priv;
	uint64_t insns, loads, stores, branches;
	struct xslot *next;
};

#define XBITS 18
static struct xslot *xtab[1u << XBITS];
static uint64_t nslots;

static struct xslot *slot(uint32_t epoch, uint8_t priv, uint64_t pc, uint32_t path)
{
	uint64_t k = (pc * 0x9E3779B97F4A7C15ULL) ^ ((uint64_t)epoch * 0xC2B2AE3D27D4EB4FULL) ^
		     ((uint64_t)path * 0x165667B19E3779F9ULL) ^ priv;
	unsigned h = (unsigned)(k >> (64 - XBITS));
	for (struct xslot *s = xtab[h]; s; s = s->next)
		if (s->pc == pc && s->epoch == epoch && s->priv == priv && s->path == path)
			return s;
	struct xslot *s = calloc(1, sizeof(*s));
	if (!s)
		pes_fatal("out of memory (exact mode counts)");
	*s = (struct xslot){ .pc = pc, .epoch = epoch, .path = path, .priv = priv, .next = xtab[h] };
	xtab[h] = s;
	nslots++;
	return s;
}

void exact_account(struct tb *tb, const struct task *t, uint32_t path, uint32_t e)
{
	for (unsigned k = 0; k < tb->nseg; k++) {
		struct tbseg *sg = &tb->seg[k];
		uint32_t first = sg->first, end = k + 1 < tb->nseg ? tb->seg[k + 1].first : tb->n;
		if (first >= e)
			break;
		uint32_t last = e < end ? e : end;
		struct xslot *s = sg->cache;
		if (!s || sg->cache_epoch != t->epoch || sg->cache_path != path) {
			s = slot(t->epoch, tb->priv, tb->in[first].vaddr, path);
			sg->cache = s;
			sg->cache_epoch = t->epoch;
			sg->cache_path = path;
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
	uint32_t path;
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
	if (x->pc != y->pc)
		return x->pc < y->pc ? -1 : 1;
	return x->path < y->path ? -1 : x->path > y->path;
}

/* a comm is printed as is, except bytes that would break the TSV */
static void put_comm(FILE *f, const char *c)
{
	for (; *c; c++)
		fputc((unsigned char)*c < 0x21 || *c == 0x7f ? '_' : *c, f);
}

static const char *const priv_names[] = { "user", "kernel", "firmware" };

/* close f (written as tmp) and move it to name; on any failure nothing is left */
static bool commit(FILE *f, const char *tmp, const char *name, char *err, size_t errlen)
{
	bool ok = !ferror(f);
	ok &= fclose(f) == 0;
	if (!ok || rename(tmp, name)) {
		snprintf(err, errlen, "cannot write %s: %s; nothing was written", name,
			 strerror(errno ? errno : EIO));
		unlink(tmp);
		return false;
	}
	return true;
}

/* EXACT.paths: the trie, `path<TAB>parent<TAB>caller` (hex return address - 1), parents
 * before children; a path's callers are its caller, its parent's, ... innermost first */
static bool paths_write(const char *path, char *err, size_t errlen)
{
	char name[4200], tmp[4300];
	snprintf(name, sizeof(name), "%s.paths", path);
	snprintf(tmp, sizeof(tmp), "%s.tmp", name);
	FILE *f = fopen(tmp, "w");
	if (!f) {
		snprintf(err, errlen, "cannot write %s: %s", name, strerror(errno));
		return false;
	}
	fputs("path\tparent\tcaller\n", f);
	for (uint32_t id = 1; id < npn; id++)
		fprintf(f, "%u\t%u\t%llx\n", id, pn[id].parent, (unsigned long long)pn[id].caller);
	return commit(f, tmp, name, err, errlen);
}

bool exact_write(const char *path, char *err, size_t errlen)
{
	if (!paths_write(path, err, errlen))
		return false;
	struct row *r = malloc((nslots + 1) * sizeof(*r));
	size_t n = 0;
	for (unsigned h = 0; h < (1u << XBITS); h++)
		for (struct xslot *s = xtab[h]; s; s = s->next) {
			if (!s->insns)
				continue;
			const struct epoch *e = &ep[s->epoch];
			r[n++] = (struct row){ e->tgid, e->tid, e->comm, s->priv, s->path, s->pc,
					       s->insns, s->loads, s->stores, s->branches };
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
	fputs("tgid\ttid\tcomm\tpriv\tstart_pc\tinsns\tloads\tstores\tbranches\tpath\n", f);
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
		fprintf(f, "\t%s\t0x%llx\t%llu\t%llu\t%llu\t%llu\t%u\n", priv_names[x->priv],
			(unsigned long long)x->pc, (unsigned long long)x->insns,
			(unsigned long long)x->loads, (unsigned long long)x->stores,
			(unsigned long long)x->branches, x->path);
	}
	free(r);
	return commit(f, tmp, path, err, errlen);
}
