/* SPDX-License-Identifier: MIT */
/* perf.data output through the project's writer (src/perffile/perf_file.c, shared with hpm
 * record): one event attr, samples with precise IPs, side-band records (FORK, COMM,
 * MMAP/MMAP2) with sample_id trailers, and header features. Nothing host-specific
 * (time, hostname, paths) goes in, so the same guest run gives the same bytes. The file
 * is written under a temporary name and renamed at exit. */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include "perf_file.h"
#include "pes.h"

#define SAMPLE_ID 1
#define ROUND_EVERY 4096

bool out_enabled;
static struct perf_file pf;
static int werr;
static uint64_t last_time, nrec;
static bool with_addr;
static char osrelease[65];

/* sample_id trailer for sample_type TID|TIME|CPU|IDENTIFIER (perf's order) */
struct sid {
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu, res;
	uint64_t id;
};

static void put(const void *p, size_t n)
{
	if (!werr && n)
		werr = perf_file__write(&pf, p, n);
}

/* time stamps count from the start trigger and never go back */
static uint64_t mono(uint64_t t)
{
	t = t > t_origin ? t - t_origin : 0;
	if (t < last_time)
		t = last_time;
	return last_time = t;
}

static void round_mark(void)
{
	if (++nrec % ROUND_EVERY)
		return;
	/* everything so far is in time order: perf may sort and flush it */
	struct perf_event_header h = { .type = 68 /* PERF_RECORD_FINISHED_ROUND */, .size = sizeof(h) };
	put(&h, sizeof(h));
}

static void record(uint32_t type, uint16_t misc, const void *body, size_t len, uint32_t pid,
		   uint32_t tid, uint64_t time, unsigned cpu)
{
	static const char zeros[8];
	size_t pad = (8 - len % 8) % 8;
	struct perf_event_header h = { .type = type, .misc = misc,
				       .size = (uint16_t)(sizeof(h) + len + pad + sizeof(struct sid)) };
	struct sid s = { .pid = pid, .tid = tid, .time = mono(time), .cpu = cpu, .id = SAMPLE_ID };
	put(&h, sizeof(h));
	put(body, len);
	put(zeros, pad);
	put(&s, sizeof(s));
	round_mark();
}

static void event_attr(struct perf_event_attr *a, const char **name)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	switch (opt.event) {
	case EV_INSNS:
		a->type = PERF_TYPE_HARDWARE;
		a->config = PERF_COUNT_HW_INSTRUCTIONS;
		break;
	case EV_BRANCHES:
		a->type = PERF_TYPE_HARDWARE;
		a->config = PERF_COUNT_HW_BRANCH_INSTRUCTIONS;
		break;
	case EV_LOADS:
	case EV_STORES:
		a->type = PERF_TYPE_HW_CACHE;
		a->config = PERF_COUNT_HW_CACHE_L1D |
			    (uint64_t)(opt.event == EV_LOADS ? PERF_COUNT_HW_CACHE_OP_READ
							     : PERF_COUNT_HW_CACHE_OP_WRITE) << 8 |
			    (uint64_t)PERF_COUNT_HW_CACHE_RESULT_ACCESS << 16;
		break;
	case EV_TAKEN:
		/* no generic perf event: a raw one, named in the event description */
		a->type = PERF_TYPE_RAW;
		a->config = 0x5045530001ULL; /* "PES" 1 */
		break;
	}
	*name = event_names[opt.event];
	a->sample_period = opt.period;
	a->sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			 PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN;
	if (with_addr)
		a->sample_type |= PERF_SAMPLE_ADDR;
	a->read_format = PERF_FORMAT_ID;
	a->sample_id_all = 1;
	a->precise_ip = 3; /* zero skid */
	a->mmap = a->mmap2 = a->comm = a->comm_exec = a->task = 1;
}

bool out_open(char *err, size_t errlen)
{
	with_addr = opt.event == EV_LOADS || opt.event == EV_STORES;
	int r = perf_file__open(&pf, opt.out);
	if (r) {
		snprintf(err, errlen, "cannot write out=%s: %s", opt.out, strerror(-r));
		return false;
	}
	struct perf_event_attr a;
	const char *name;
	event_attr(&a, &name);
	int idx = perf_file__add_attr(&pf, &a, name);
	perf_file__add_id(&pf, idx, SAMPLE_ID);
	r = perf_file__begin_data(&pf);
	if (r) {
		perf_file__abort(&pf);
		snprintf(err, errlen, "cannot write out=%s: %s", opt.out, strerror(-r));
		return false;
	}
	out_enabled = true;
	/* the kernel map, named as perf names it, relocated by its reference symbol */
	struct {
		uint32_t pid, tid;
		uint64_t start, len, pgoff;
		char name[32];
	} m = { .pid = (uint32_t)-1, .start = ksym_text(), .len = ksym_etext() - ksym_text(),
		.pgoff = ksym_text() };
	snprintf(m.name, sizeof(m.name), "[kernel.kallsyms]%s", ksym_ref());
	record(PERF_RECORD_MMAP, PERF_RECORD_MISC_KERNEL, &m,
	       offsetof(__typeof__(m), name) + strlen(m.name) + 1, (uint32_t)-1, 0, 0, 0);
	return true;
}

void out_osrelease(const char *rel)
{
	if (!osrelease[0])
		snprintf(osrelease, sizeof(osrelease), "%s", rel);
}

static uint16_t cpumode(enum priv p)
{
	return p == PRIV_USER ? PERF_RECORD_MISC_USER
	     : p == PRIV_KERNEL ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_HYPERVISOR;
}

void out_sample(unsigned cpu, enum priv priv, const struct task *t, uint64_t pc, uint64_t time,
		uint64_t addr, uint64_t period, const uint64_t *chain, int nchain)
{
	uint64_t b[8 + PES_MAX_CHAIN];
	int k = 0;
	b[k++] = SAMPLE_ID;
	b[k++] = pc;
	b[k++] = (uint64_t)(uint32_t)t->tgid | (uint64_t)(uint32_t)t->pid << 32;
	b[k++] = mono(time);
	if (with_addr)
		b[k++] = addr;
	b[k++] = cpu;
	b[k++] = period;
	b[k++] = (uint64_t)nchain;
	memcpy(&b[k], chain, (size_t)nchain * 8);
	k += nchain;
	struct perf_event_header h = { .type = PERF_RECORD_SAMPLE,
				       .misc = cpumode(priv) | PERF_RECORD_MISC_EXACT_IP,
				       .size = (uint16_t)(sizeof(h) + (size_t)k * 8) };
	put(&h, sizeof(h));
	put(b, (size_t)k * 8);
	round_mark();
	/* kernel addresses name the symbols the kallsyms copy keeps */
	bool kern = false;
	for (int i = 0; i < nchain; i++) {
		if (chain[i] >= (uint64_t)PERF_CONTEXT_MAX) {
			kern = chain[i] == (uint64_t)PERF_CONTEXT_KERNEL;
			continue;
		}
		if (kern)
			ksym_used(chain[i]);
	}
}

void out_fork(const struct task *t, int32_t ppid, int32_t ptid, uint64_t time, unsigned cpu)
{
	struct {
		uint32_t pid, ppid, tid, ptid;
		uint64_t time;
	} b = { (uint32_t)t->tgid, (uint32_t)ppid, (uint32_t)t->pid, (uint32_t)ptid, mono(time) };
	record(PERF_RECORD_FORK, 0, &b, sizeof(b), (uint32_t)t->tgid, (uint32_t)t->pid, time, cpu);
}

void out_comm(const struct task *t, bool exec, uint64_t time, unsigned cpu)
{
	struct {
		uint32_t pid, tid;
		char comm[16];
	} b = { (uint32_t)t->tgid, (uint32_t)t->pid, { 0 } };
	memcpy(b.comm, t->comm, 15);
	record(PERF_RECORD_COMM, exec ? PERF_RECORD_MISC_COMM_EXEC : 0, &b,
	       8 + strlen(b.comm) + 1, (uint32_t)t->tgid, (uint32_t)t->pid, time, cpu);
}

void out_mmap2(const struct task *t, uint64_t start, uint64_t len, uint64_t pgoff,
	       const char *name, uint64_t time, unsigned cpu)
{
	struct pf_mmap2 b = { .pid = (uint32_t)t->tgid, .tid = (uint32_t)t->pid, .start = start, .len = len,
		.pgoff = pgoff, .prot = 5 /* r-x */, .flags = 2 /* MAP_PRIVATE */ };
	snprintf(b.name, sizeof(b.name), "%s", name);
	record(PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, &b, pf_mmap2_len(&b), (uint32_t)t->tgid,
	       (uint32_t)t->pid, time, cpu);
}

void out_feat_raw(int bit, const void *p, size_t len)
{
	perf_file__feat_raw(&pf, bit, p, len);
}

bool out_close(char *err, size_t errlen)
{
	if (!out_enabled)
		return true;
	out_enabled = false;
	perf_file__feat_string(&pf, PF_FEAT_OSRELEASE, osrelease[0] ? osrelease : "unknown");
	perf_file__feat_string(&pf, PF_FEAT_VERSION, "hpmpes 1");
	perf_file__feat_string(&pf, PF_FEAT_ARCH, opt.isa->name);
	perf_file__feat_u32(&pf, PF_FEAT_NRCPUS, nvcpus);
	perf_file__feat_u32(&pf, PF_FEAT_NRCPUS, nvcpus);
	char desc[96], a1[48], a2[48], a3[48];
	snprintf(desc, sizeof(desc), "QEMU TCG %s (hpmpes, -icount shift=0)", opt.isa->name);
	perf_file__feat_string(&pf, PF_FEAT_CPUDESC, desc);
	/* the sampling parameters only: paths would make two identical runs differ */
	snprintf(a1, sizeof(a1), "event=%s", event_names[opt.event]);
	snprintf(a2, sizeof(a2), "period=%llu", (unsigned long long)opt.period);
	snprintf(a3, sizeof(a3), "seed=%llu", (unsigned long long)opt.seed);
	perf_file__feat_u32(&pf, PF_FEAT_CMDLINE, 4);
	perf_file__feat_string(&pf, PF_FEAT_CMDLINE, "hpmpes");
	perf_file__feat_string(&pf, PF_FEAT_CMDLINE, a1);
	perf_file__feat_string(&pf, PF_FEAT_CMDLINE, a2);
	perf_file__feat_string(&pf, PF_FEAT_CMDLINE, a3);
	ksyms_emit();
	if (werr) {
		perf_file__abort(&pf);
		snprintf(err, errlen, "cannot write out=%s: %s; nothing was written", opt.out,
			 strerror(-werr));
		return false;
	}
	int r = perf_file__commit(&pf);
	if (r) {
		snprintf(err, errlen, "cannot write out=%s: %s; nothing was written", opt.out,
			 strerror(-r));
		return false;
	}
	return true;
}
