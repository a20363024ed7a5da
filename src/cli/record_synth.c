/* SPDX-License-Identifier: MIT */
/* Records hpm record writes itself (perf's "synthesized" events): the kernel
 * map and a copy of /proc/kallsyms so kernel frames can be symbolised on
 * another machine, and COMM/MMAP2 for tasks that existed before recording. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "kallsyms.h"
#include "proc_maps.h"
#include "record.h"

/* sample_id trailer for sample_type IDENTIFIER|IP|TID|TIME|CPU|PERIOD|...:
 * only TID, TIME, CPU and IDENTIFIER are part of it, in this order */
struct sample_id {
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu, res;
	uint64_t id;
};

int rec_emit(struct perf_file *pf, uint32_t type, uint16_t misc, const void *body, size_t len,
	     uint32_t pid, uint32_t tid, uint64_t id)
{
	struct perf_event_header h = { .type = type, .misc = misc };
	size_t pad = (8 - len % 8) % 8;
	struct sample_id sid = { .pid = pid, .tid = tid, .id = id };
	static const char zeros[8];
	h.size = (uint16_t)(sizeof(h) + len + pad + sizeof(sid));
	if (sizeof(h) + len + pad + sizeof(sid) > 0xffff)
		return -E2BIG;
	int r = perf_file__write(pf, &h, sizeof(h));
	if (!r)
		r = perf_file__write(pf, body, len);
	if (!r)
		r = perf_file__write(pf, zeros, pad);
	if (!r)
		r = perf_file__write(pf, &sid, sizeof(sid));
	return r;
}

int rec_comm(struct perf_file *pf, pid_t pid, pid_t tid, const char *comm)
{
	struct {
		uint32_t pid, tid;
		char comm[24];
	} b = { .pid = pid, .tid = tid };
	snprintf(b.comm, 16, "%s", comm);
	size_t len = 8 + strlen(b.comm) + 1;
	return rec_emit(pf, PERF_RECORD_COMM, 0, &b, len, pid, tid, 0);
}

struct synth_maps {
	struct perf_file *pf;
	pid_t pid;
	int *n;
};

/* one executable mapping as the MMAP2 record perf synthesizes for it */
static int synth_map(const struct proc_map *m, void *arg)
{
	struct synth_maps *c = arg;
	struct pf_mmap2 b = { .pid = c->pid, .tid = c->pid, .start = m->start, .len = m->end - m->start,
		.pgoff = m->pgoff, .maj = m->maj, .min = m->min, .ino = m->ino,
		.prot = 5 /* r-x */, .flags = 2 /* private */ };
	snprintf(b.name, sizeof(b.name), "%s", *m->name ? m->name : "//anon");
	int r = rec_emit(c->pf, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, &b, pf_mmap2_len(&b),
			 c->pid, c->pid, 0);
	if (!r)
		(*c->n)++;
	return r;
}

static int read_comm(pid_t pid, pid_t tid, char *comm, size_t len)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -errno;
	if (!fgets(comm, (int)len, f))
		comm[0] = 0;
	comm[strcspn(comm, "\n")] = 0;
	fclose(f);
	return 0;
}

int rec_synth_task(struct perf_file *pf, pid_t pid, int *nrec)
{
	char path[64], comm[32];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return 0;
	struct dirent *de;
	int r = 0;
	while (!r && (de = readdir(d))) {
		pid_t tid = atoi(de->d_name);
		if (tid <= 0 || read_comm(pid, tid, comm, sizeof(comm)))
			continue;
		r = rec_comm(pf, pid, tid, comm);
		(*nrec)++;
	}
	closedir(d);
	return r ? r : proc_maps_exec(pid, synth_map, &(struct synth_maps){ pf, pid, nrec });
}

int rec_synth_all(struct perf_file *pf, int *nrec)
{
	DIR *d = opendir("/proc");
	if (!d)
		return -errno;
	struct dirent *de;
	int r = 0;
	while (!r && (de = readdir(d))) {
		pid_t pid = atoi(de->d_name);
		if (pid > 0)
			r = rec_synth_task(pf, pid, nrec);
	}
	closedir(d);
	return r;
}

/* Kernel symbols: /proc/kallsyms is read at the start (src/sym/kallsyms.c; addresses of
 * _text for the kernel map); at the end only the symbols that sampled kernel addresses fall
 * into are stored (a full copy is ~5 MB; the used part is a few hundred lines), unless all
 * of them were asked for. An address is stored with every name listed at it, in listing
 * order: which one names the function is the reader's rule (hpmkit's choose_alias prefers
 * a function over a section marker where perf takes the last listed), so the copy must
 * not decide it. */
static struct {
	struct kallsyms k;
	uint64_t *used;
	size_t nused, capused;
	uint64_t lo;
} ks;

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

void rec_kernel_addr(uint64_t addr)
{
	if (!ks.k.n || addr < ks.lo)
		return;
	if (ks.nused == ks.capused) {
		size_t cap = ks.capused ? ks.capused * 2 : 4096;
		uint64_t *p = realloc(ks.used, cap * sizeof(*p));
		if (!p)
			return;
		ks.used = p;
		ks.capused = cap;
	}
	ks.used[ks.nused++] = addr;
	if (ks.nused == ks.capused) { /* keep the set small: dedupe in place */
		qsort(ks.used, ks.nused, sizeof(*ks.used), cmp_u64);
		size_t k = 0;
		for (size_t i = 0; i < ks.nused; i++)
			if (!k || ks.used[k - 1] != ks.used[i])
				ks.used[k++] = ks.used[i];
		ks.nused = k;
	}
}

int rec_kernel_begin(struct perf_file *pf, int *nsyms)
{
	*nsyms = 0;
	int r = kallsyms_read(&ks.k, "/proc/kallsyms");
	if (r)
		return r;
	const struct kallsyms *k = &ks.k;
	/* the kernel map starts at _text (perf's reference symbol); some kernels
	 * (Debian arm64 6.1) do not list it */
	const char *ref = "_text";
	uint64_t text = k->text_addr, etext = k->etext_addr;
	if (!text) {
		ref = k->stext_addr ? "_stext" : "_text";
		text = k->stext_addr ? k->stext_addr : k->v[0].addr;
	}
	ks.lo = k->v[0].addr;
	*nsyms = (int)k->n;
	if (!etext || etext <= text)
		etext = k->max_kernel_addr + 1;
	struct {
		uint32_t pid, tid;
		uint64_t start, len, pgoff;
		char name[32];
	} m = { .pid = (uint32_t)-1, .tid = 0, .start = text, .len = etext - text, .pgoff = text };
	/* perf relocates kallsyms by the symbol named after "[kernel.kallsyms]" */
	snprintf(m.name, sizeof(m.name), "[kernel.kallsyms]%s", ref);
	size_t len = offsetof(__typeof__(m), name) + strlen(m.name) + 1;
	return rec_emit(pf, PERF_RECORD_MMAP, PERF_RECORD_MISC_KERNEL, &m, len, (uint32_t)-1, 0, 0);
}

/* perf needs its reference symbols (_text/_stext) in the copy */
static bool is_ref(const char *name)
{
	return !strcmp(name, "_text") || !strcmp(name, "_stext") || !strcmp(name, "_etext");
}

/* Store the symbols (all, or the addresses holding a sampled address plus the next
 * address, whose start bounds the last used one), every alias of a stored address;
 * returns how many lines. */
int rec_kernel_end(struct perf_file *pf, bool all)
{
	const struct kallsyms *k = &ks.k;
	int n = 0;
	if (!k->n)
		return 0;
	qsort(ks.used, ks.nused, sizeof(*ks.used), cmp_u64);
	size_t u = 0;
	bool prev_used = false;
	for (size_t i = 0, end; i < k->n; i = end) {
		end = kallsyms_group_end(k, i);
		uint64_t next = end < k->n ? k->v[end].addr : ~0ULL;
		while (u < ks.nused && ks.used[u] < k->v[i].addr)
			u++;
		bool used = u < ks.nused && ks.used[u] < next;
		bool keep = all || used || prev_used; /* the address after a used one ends it */
		for (size_t j = i; !keep && j < end; j++)
			keep = is_ref(kallsyms_name(k, j));
		if (keep)
			for (size_t j = i; j < end; j++, n++)
				perf_file__feat_raw(pf, PF_FEAT_HPM_KALLSYMS, k->text + k->v[j].line,
						    k->v[j].len);
		prev_used = used;
	}
	kallsyms_free(&ks.k);
	free(ks.used);
	memset(&ks, 0, sizeof(ks));
	return n;
}
