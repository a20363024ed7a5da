/* SPDX-License-Identifier: MIT */
/* hpmpes plugin entry: arguments, per-vCPU state, instrumentation of each translated
 * block, and the output at exit.
 *
 *   qemu-system-riscv64 ... -icount shift=0 \
 *     -plugin build/lab/libhpmpes.so,arch=riscv64,kernel=System.map,offsets=OFFS,\
 *             bins=build/riscv64/bin,out=pes.data[,event=E][,period=N][,seed=S][,exact=F]
 *
 * docs/pes.md describes the arguments, the records written and the measured cost. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pes.h"

QAPI_EXPORT int qemu_plugin_version = 4;

struct opts opt = { .event = EV_INSNS, .period = 10000, .seed = 1 };
struct vcpu vcpus[PES_MAX_VCPUS];
unsigned nvcpus;
uint64_t g_insns;
const char *event_names[] = { "instructions", "loads", "stores", "branches", "taken-branches" };

static struct qemu_plugin_scoreboard *score;
qemu_plugin_u64 sb_pos, sb_arm, sb_left, sb_icnt, sb_done;
static uint64_t next_tb_id = 1;
static struct tb **by_id;
static uint64_t by_id_cap;

struct tb *tb_by_id(uint64_t id)
{
	return id < next_tb_id ? by_id[id] : NULL;
}
static uint64_t hook_switch, hook_comm, hook_exec, hook_mmap;

/* A block whose last instruction accesses memory names itself in `done` when that
 * access completes (both modes; see fast.c for how the next block reads it). */
void mark_done(struct qemu_plugin_insn **qi, const struct tb *t)
{
	const struct insn *last = &t->in[t->n - 1];
	if (last->cls & IC_MEMEV) {
		enum qemu_plugin_mem_rw rw = (last->cls & IC_MEM) == IC_MEM ? QEMU_PLUGIN_MEM_RW
					   : last->cls & IC_LOAD ? QEMU_PLUGIN_MEM_R : QEMU_PLUGIN_MEM_W;
		qemu_plugin_register_vcpu_mem_inline_per_vcpu(qi[t->n - 1], rw,
							      QEMU_PLUGIN_INLINE_STORE_U64, sb_done, t->id);
	}
}

/* one line on stderr: "hpmpes: " and the message */
static void say(const char *fmt, va_list ap)
{
	fputs("hpmpes: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void pes_fatal(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	say(fmt, ap);
	va_end(ap);
	exit(1);
}

/* ---- translation: one record per distinct block, shared by retranslations ---- */

#define TBBITS 16
static struct tb *tbtab[1u << TBBITS];

static uint64_t tb_hash(uint64_t vaddr, unsigned priv, const struct insn *in, size_t n)
{
	uint64_t h = vaddr * 0x9E3779B97F4A7C15ULL ^ priv ^ (uint64_t)n << 56;
	for (size_t i = 0; i < n; i++)
		h = (h ^ in[i].raw ^ (uint64_t)in[i].size << 40) * 0x100000001B3ULL;
	return h;
}

/* Instructions that may stop the block before completing. The last one counts only if
 * its completion can be seen (a reported memory access, after which an inline op runs);
 * other last instructions (ecall/svc, CSR and system-register accesses, branches) are
 * taken as completed: QEMU counts an instruction it traps at translation time (svc,
 * undefined or disabled sysreg/SVE access) as executed, like the guest's PMU. */
bool unsure(const struct tb *t, uint32_t i)
{
	unsigned c = t->in[i].cls;
	return (c & IC_STOP) && (i + 1 < t->n || (c & IC_MEMEV));
}

static struct tb *tb_get(uint64_t vaddr, uint8_t priv, const struct insn *in, uint32_t n)
{
	uint64_t h = tb_hash(vaddr, priv, in, n);
	unsigned slot = (unsigned)(h >> (64 - TBBITS));
	for (struct tb *t = tbtab[slot]; t; t = t->hnext)
		if (t->hash == h && t->vaddr == vaddr && t->priv == priv && t->n == n &&
		    !memcmp(t->in, in, n * sizeof(*in)))
			return t;
	struct tb *t = calloc(1, sizeof(*t) + n * sizeof(*in));
	uint16_t *pre = calloc(2 * (n + 1), sizeof(uint16_t));
	if (!t || !pre)
		pes_fatal("out of memory (translation records)");
	memcpy(t->in, in, n * sizeof(*in));
	t->id = next_tb_id++;
	if (t->id >= by_id_cap) {
		by_id_cap = by_id_cap ? by_id_cap * 2 : 65536;
		by_id = realloc(by_id, by_id_cap * sizeof(*by_id));
		if (!by_id)
			pes_fatal("out of memory (translation records)");
	}
	by_id[t->id] = t;
	t->vaddr = vaddr;
	t->n = n;
	t->priv = priv;
	t->fall = in[n - 1].vaddr + in[n - 1].size;
	t->pre_ld = pre;
	t->pre_st = pre + n + 1;
	for (uint32_t i = 0; i < n; i++) {
		t->pre_ld[i + 1] = t->pre_ld[i] + !!(in[i].cls & IC_LOAD);
		t->pre_st[i + 1] = t->pre_st[i] + !!(in[i].cls & IC_STORE);
	}
	t->k0 = n;
	for (uint32_t i = 0; i < n; i++)
		if (unsure(t, i)) {
			t->k0 = i;
			break;
		}
	/* exact mode: kernel blocks cut where a function starts */
	uint32_t cuts[64];
	unsigned nc = 0;
	cuts[nc++] = 0;
	if (exact_enabled && priv == PRIV_KERNEL)
		for (uint32_t i = 1; i < n && nc < 64; i++)
			if (kfunc_start(in[i].vaddr))
				cuts[nc++] = i;
	t->func = exact_enabled && priv == PRIV_KERNEL ? kfunc(in[0].vaddr) : -1;
	t->nseg = (uint8_t)nc;
	t->seg = calloc(nc, sizeof(*t->seg));
	for (unsigned k = 0; k < nc; k++)
		t->seg[k] = (struct tbseg){ .first = (uint16_t)cuts[k], .cache_epoch = UINT32_MAX };
	t->hash = h;
	t->hnext = tbtab[slot];
	tbtab[slot] = t;
	return t;
}

/* full mode: the block-start callback settles the previous block; inline stores keep
 * `pos` (count.c) */
static void instrument_full(struct qemu_plugin_tb *qtb, struct qemu_plugin_insn **qi, struct tb *t)
{
	/* exact mode reads a kernel block's callers at its start (exact.c) */
	qemu_plugin_register_vcpu_tb_exec_cb(qtb, on_tb, exact_enabled && t->priv == PRIV_KERNEL ?
					     QEMU_PLUGIN_CB_R_REGS : QEMU_PLUGIN_CB_NO_REGS, t);
	uint32_t next_unsure = t->n;
	for (uint32_t i = t->n; i-- > 0;) {
		/* before instruction i, when i-1 may have stopped the block: it completed,
		 * and so will everything before the next unsure instruction (i itself or later) */
		if (unsure(t, i))
			next_unsure = i;
		if (i > 0 && unsure(t, i - 1))
			qemu_plugin_register_vcpu_insn_exec_inline_per_vcpu(
				qi[i], QEMU_PLUGIN_INLINE_STORE_U64, sb_pos, next_unsure);
	}
	mark_done(qi, t);
	/* the first instruction also takes samples that came due without a callback */
	for (uint32_t i = 0; out_enabled && i < t->n; i++)
		if (sampled_insn(t, i) || i == 0)
			qemu_plugin_register_vcpu_insn_exec_cond_cb(qi[i], on_sample, QEMU_PLUGIN_CB_R_REGS,
								    QEMU_PLUGIN_COND_EQ, sb_arm,
								    ARM(t, i), t);
}

static void on_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *qtb)
{
	(void)id;
	size_t n = qemu_plugin_tb_n_insns(qtb);
	if (!n || n > 4096)
		return;
	static struct insn in[4096];
	struct qemu_plugin_insn *qi[4096];
	for (size_t i = 0; i < n; i++) {
		uint8_t b[16] = { 0 };
		qi[i] = qemu_plugin_tb_get_insn(qtb, i);
		size_t sz = qemu_plugin_insn_size(qi[i]);
		size_t got = qemu_plugin_insn_data(qi[i], b, sizeof(b));
		in[i].vaddr = qemu_plugin_insn_vaddr(qi[i]);
		in[i].size = (uint8_t)sz;
		in[i].cls = (uint8_t)opt.isa->classify(b, got < sz ? got : sz, &in[i].raw);
	}
	/* the mode the block was translated for is the mode it runs in (QEMU keys blocks
	 * by privilege) */
	struct regs r = { 0 };
	uint8_t priv = (uint8_t)opt.isa->priv(reg(&r, R_MODE));
	struct tb *t = tb_get(qemu_plugin_tb_vaddr(qtb), priv, in, (uint32_t)n);

	if (fast_mode)
		instrument_fast(qtb, qi, t);
	else
		instrument_full(qtb, qi, t);
	if (priv != PRIV_KERNEL)
		return;
	for (uint32_t i = 0; i < t->n; i++) {
		uint64_t va = t->in[i].vaddr;
		qemu_plugin_vcpu_udata_cb_t cb = va == hook_switch ? on_switch
					       : va == hook_comm ? on_comm
					       : va == hook_exec ? on_exec_done
					       : va == hook_mmap ? on_mmap : NULL;
		if (!cb)
			continue;
		struct hookpt *h = malloc(sizeof(*h));
		if (!h)
			pes_fatal("out of memory");
		*h = (struct hookpt){ t, i };
		qemu_plugin_register_vcpu_insn_exec_cb(qi[i], cb, QEMU_PLUGIN_CB_R_REGS, h);
	}
}

static void on_vcpu_init(qemu_plugin_id_t id, unsigned int vi)
{
	(void)id;
	if (vi >= PES_MAX_VCPUS)
		pes_fatal("more than %d vCPUs", PES_MAX_VCPUS);
	guest_init_regs();
	if (vi + 1 > nvcpus)
		nvcpus = vi + 1;
	/* the scoreboard may move when it grows: refresh every vCPU's pointer */
	for (unsigned i = 0; i < nvcpus; i++)
		vcpus[i].sb = qemu_plugin_scoreboard_find(score, i);
	vcpus[vi].sb->pos = 0;
	vcpus[vi].sb->arm = ARM_NONE;
	vcpus[vi].sb->left = count_started() ? vcpus[vi].next_at : FAR;
	vcpus[vi].sb->icnt = 0;
	vcpus[vi].sb->done = 0;
	vcpus[vi].task = task_boot();
}

static void on_exit_cb(qemu_plugin_id_t id, void *p)
{
	(void)id;
	(void)p;
	char err[512];
	int rc = 0;
	count_finish();
	if (opt.out && !out_close(err, sizeof(err))) {
		fprintf(stderr, "hpmpes: %s\n", err);
		rc = 1;
	}
	if (opt.exact && !exact_write(opt.exact, err, sizeof(err))) {
		fprintf(stderr, "hpmpes: %s\n", err);
		rc = 1;
	}
	fprintf(stderr, "hpmpes: %s: %llu instructions, %llu tasks", opt.isa->name,
		(unsigned long long)count_total(), (unsigned long long)n_tasks);
	if (!fast_mode) /* the fast mode does not look at single blocks */
		fprintf(stderr, ", %llu blocks stopped early", (unsigned long long)n_partial);
	if (opt.out && !rc)
		fprintf(stderr, "; %llu samples of %s (period %llu, seed %llu) written to %s",
			(unsigned long long)n_samples, event_names[opt.event],
			(unsigned long long)opt.period, (unsigned long long)opt.seed, opt.out);
	if (n_chain_user_cut)
		fprintf(stderr, "; %llu kernel-sample chains stop after the user pc and its caller "
			"(user stack unreadable)", (unsigned long long)n_chain_user_cut);
	if (n_chain_entry)
		fprintf(stderr, "; %llu kernel samples in entry code before pt_regs is saved have no "
			"user part", (unsigned long long)n_chain_entry);
	if (n_chain_no_mm)
		fprintf(stderr, "; %llu kernel samples of exiting tasks (address space gone) have no "
			"user part", (unsigned long long)n_chain_no_mm);
	if (n_maps_unnamed)
		fprintf(stderr, "; %llu executable file mappings could not be named (no MMAP2)",
			(unsigned long long)n_maps_unnamed);
	if (n_chain_cfi || n_chain_fp)
		fprintf(stderr, "; user stacks: %llu by call-frame information, %llu by frame pointers",
			(unsigned long long)n_chain_cfi, (unsigned long long)n_chain_fp);
	if (opt.exact && !rc)
		fprintf(stderr, "; exact counts written to %s (kernel call paths read %llu times, "
			"%llu times followed through a call or return, in %s.paths)", opt.exact,
			(unsigned long long)n_path_walks, (unsigned long long)n_path_steps, opt.exact);
	if (!count_started())
		fprintf(stderr, "; no task was named start=%s: nothing was sampled or counted", opt.start);
	fputc('\n', stderr);
}

/* ---- arguments ---- */

static bool parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *v)
{
	char *end;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 0);
	if (!*s || *end || errno || s[0] == '-' || x < lo || x > hi)
		return false;
	*v = x;
	return true;
}

static int fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	say(fmt, ap);
	va_end(ap);
	return 1;
}

QAPI_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc,
				    char **argv)
{
	const char *arch = NULL, *event = NULL;
	for (int i = 0; i < argc; i++) {
		char *eq = strchr(argv[i], '=');
		if (!eq)
			return fail("argument '%s' is not NAME=VALUE (see docs/pes.md)", argv[i]);
		size_t kl = (size_t)(eq - argv[i]);
		const char *v = eq + 1;
#define KEY(k) (kl == strlen(k) && !strncmp(argv[i], k, kl))
		if (KEY("arch"))
			arch = v;
		else if (KEY("out"))
			opt.out = v;
		else if (KEY("event"))
			event = v;
		else if (KEY("period")) {
			if (!parse_u64(v, 1, 1ULL << 40, &opt.period))
				return fail("period=%s: give a whole number of events from 1 to 2^40", v);
		} else if (KEY("seed")) {
			if (!parse_u64(v, 0, UINT64_MAX, &opt.seed))
				return fail("seed=%s: give a non-negative whole number", v);
		} else if (KEY("kernel"))
			opt.kernel = v;
		else if (KEY("offsets"))
			opt.offsets = v;
		else if (KEY("bins"))
			opt.bins = v;
		else if (KEY("exact"))
			opt.exact = v;
		else if (KEY("start")) {
			if (!*v || strlen(v) > 15)
				return fail("start=%s: give a task name (comm, at most 15 characters)", v);
			opt.start = v;
		}
		else
			return fail("unknown argument '%.*s' (known: arch, out, event, period, seed, "
				    "kernel, offsets, bins, exact, start)", (int)kl, argv[i]);
#undef KEY
	}
	if (!arch)
		return fail("arch= is required (riscv64 or aarch64)");
	if (!strcmp(arch, "riscv64"))
		opt.isa = &isa_riscv64;
	else if (!strcmp(arch, "aarch64"))
		opt.isa = &isa_aarch64;
	else
		return fail("arch=%s: choose riscv64 or aarch64", arch);
	if (!info->system_emulation || strcmp(info->target_name, opt.isa->name))
		return fail("arch=%s but this QEMU emulates %s%s", arch, info->target_name,
			    info->system_emulation ? "" : " in user mode (a system emulator is needed)");
	if (info->version.cur < 4)
		return fail("this QEMU offers plugin API %d; hpmpes needs 4 (QEMU 10)", info->version.cur);
	if (event) {
		unsigned k;
		for (k = 0; k < 5 && strcmp(event, event_names[k]); k++)
			;
		if (k == 5)
			return fail("event=%s: choose instructions, loads, stores, branches or "
				    "taken-branches", event);
		opt.event = (enum event)k;
	}
	if (!opt.out && !opt.exact)
		return fail("nothing to write: give out=PATH (samples) and/or exact=PATH (counts)");
	if (!opt.kernel || !opt.offsets)
		return fail("kernel=System.map and offsets=FILE are required to follow the guest's "
			    "tasks (the lab keeps both in .cache/lab/<arch>/)");
	char err[600];
	if (!ksyms_load(opt.kernel, err, sizeof(err)) || !offsets_load(opt.offsets, err, sizeof(err)))
		return fail("%s", err);
	hook_switch = ksym_addr(opt.isa->switch_sym);
	hook_comm = ksym_addr("__set_task_comm");
	hook_exec = ksym_addr("finalize_exec");
	if (task_can_map())
		hook_mmap = ksym_addr("perf_event_mmap");
	unwind_init();
	if (!hook_switch || !ksym_addr("init_task"))
		return fail("kernel=%s has no %s or init_task: not this guest's System.map", opt.kernel,
			    opt.isa->switch_sym);
	if (opt.bins) {
		FILE *d = fopen(opt.bins, "r");
		if (!d)
			return fail("bins=%s: %s (the host folder of the guest's /bin, e.g. "
				    "build/%s/bin)", opt.bins, strerror(errno), opt.isa->name);
		fclose(d);
	}
	exact_enabled = opt.exact != NULL;
	score = qemu_plugin_scoreboard_new(sizeof(struct sb));
	sb_pos = (qemu_plugin_u64){ score, offsetof(struct sb, pos) };
	sb_arm = (qemu_plugin_u64){ score, offsetof(struct sb, arm) };
	sb_left = (qemu_plugin_u64){ score, offsetof(struct sb, left) };
	sb_icnt = (qemu_plugin_u64){ score, offsetof(struct sb, icnt) };
	sb_done = (qemu_plugin_u64){ score, offsetof(struct sb, done) };
	/* inline counters alone when no block needs settling in C (docs/pes.md) */
	fast_mode = opt.out && !opt.exact && opt.event != EV_TAKEN;
	count_init();
	if (opt.out && !out_open(err, sizeof(err)))
		return fail("%s", err);
	qemu_plugin_register_vcpu_init_cb(id, on_vcpu_init);
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_trans);
	qemu_plugin_register_atexit_cb(id, on_exit_cb, NULL);
	return 0;
}
