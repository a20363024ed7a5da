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

/* Kernel symbols: /proc/kallsyms is read at the start (addresses of _text
 * for the kernel map); at the end only the symbols that sampled kernel
 * addresses fall into are stored (a full copy is ~5 MB; the used part is a
 * few hundred lines), unless all of them were asked for. */
struct ksym {
	uint64_t addr;
	uint32_t off, len; /* line in the text buffer */
	bool keep;         /* perf needs its reference symbol (_text/_stext) */
};

static struct {
	struct ksym *s;
	size_t n, cap;
	char *text;
	size_t tlen, tcap;
	uint64_t *used;
	size_t nused, capused;
	uint64_t lo, hi;
} ks;

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int ks_add(uint64_t addr, const char *line, size_t len)
{
	if (ks.n == ks.cap) {
		size_t cap = ks.cap ? ks.cap * 2 : 4096;
		struct ksym *p = realloc(ks.s, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		ks.s = p;
		ks.cap = cap;
	}
	if (ks.tlen + len > ks.tcap) {
		size_t cap = ks.tcap ? ks.tcap * 2 : 1 << 20;
		while (cap < ks.tlen + len)
			cap *= 2;
		char *p = realloc(ks.text, cap);
		if (!p)
			return -ENOMEM;
		ks.text = p;
		ks.tcap = cap;
	}
	memcpy(ks.text + ks.tlen, line, len);
	ks.s[ks.n++] = (struct ksym){ addr, (uint32_t)ks.tlen, (uint32_t)len, false };
	ks.tlen += len;
	return 0;
}

void rec_kernel_addr(uint64_t addr)
{
	if (!ks.n || addr < ks.lo || addr > ks.hi)
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
	FILE *f = fopen("/proc/kallsyms", "r");
	if (!f)
		return -errno;
	char line[512];
	uint64_t text = 0, stext = 0, etext = 0, maxaddr = 0, nonzero = 0;
	*nsyms = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long addr;
		char type, name[256];
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3)
			continue;
		if (addr)
			nonzero++;
		if (!strcmp(name, "_text"))
			text = addr;
		else if (!strcmp(name, "_stext"))
			stext = addr;
		else if (!strcmp(name, "_etext"))
			etext = addr;
		/* functions only: that is what call stacks need */
		if (!strchr("tTwW", type))
			continue;
		if (!strchr(line, '[') && addr > maxaddr)
			maxaddr = addr;
		if (ks_add(addr, line, strlen(line))) {
			fclose(f);
			return -ENOMEM;
		}
		ks.s[ks.n - 1].keep = !strcmp(name, "_text") || !strcmp(name, "_stext") ||
				      !strcmp(name, "_etext");
	}
	fclose(f);
	if (!nonzero || !ks.n) {
		ks.n = 0;
		return -EACCES;
	}
	qsort(ks.s, ks.n, sizeof(*ks.s), cmp_ksym);
	/* the kernel map starts at _text (perf's reference symbol); some kernels
	 * (Debian arm64 6.1) do not list it */
	const char *ref = "_text";
	if (!text) {
		ref = stext ? "_stext" : "_text";
		text = stext ? stext : ks.s[0].addr;
	}
	ks.lo = ks.s[0].addr;
	ks.hi = ~0ULL;
	*nsyms = (int)ks.n;
	if (!etext || etext <= text)
		etext = maxaddr + 1;
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

/* Store the symbols (all, or those containing a sampled address plus the next
 * one, which bounds the last); returns how many. */
int rec_kernel_end(struct perf_file *pf, bool all)
{
	int n = 0;
	if (!ks.n)
		return 0;
	qsort(ks.used, ks.nused, sizeof(*ks.used), cmp_u64);
	size_t u = 0;
	long last = -1;
	for (size_t i = 0; i < ks.n; i++) {
		uint64_t end = i + 1 < ks.n ? ks.s[i + 1].addr : ~0ULL;
		bool keep = all || ks.s[i].keep;
		while (u < ks.nused && ks.used[u] < ks.s[i].addr)
			u++;
		if (u < ks.nused && ks.used[u] < end)
			keep = true;
		if (!keep && last == (long)i - 1 && last >= 0)
			keep = true; /* the symbol after a used one: its start ends the used one */
		if (keep) {
			perf_file__feat_raw(pf, PF_FEAT_HPM_KALLSYMS, ks.text + ks.s[i].off, ks.s[i].len);
			n++;
			if (u < ks.nused && ks.used[u] < end)
				last = (long)i;
		}
	}
	free(ks.s);
	free(ks.text);
	free(ks.used);
	memset(&ks, 0, sizeof(ks));
	return n;
}
