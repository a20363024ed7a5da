/* SPDX-License-Identifier: MIT */
/* Exact counting and precise sampling; the full mode (a callback at every block start).
 *
 * Completed instructions. A TB can stop early: a load or store faults (page fault,
 * misaligned access emulated by firmware), or QEMU's icount mode re-translates so that an
 * MMIO access ends its block; the faulting instruction does not complete (QEMU's icount
 * and the guest's PMU do not count it either). So the TB code keeps, in the vCPU's
 * scoreboard, `pos` = how many of its instructions have surely completed: the TB-start
 * callback sets it to the number before the first instruction that may stop the block,
 * and an inline store before the instruction following each such one raises it (that
 * instruction started, so the one before it completed). A memory access in the last
 * place raises it after the access (QEMU runs memory inline ops after the access
 * succeeds: it stores the block's id in `done`). The next TB-start callback reads them
 * for the block that ran before.
 *
 * Sampling. Each period is drawn uniformly from [N - N/4, N + N/4] (xorshift64*, seeded:
 * deterministic, and never in step with a loop). When the TB about to run would bring
 * the event count to the next threshold, the TB-start callback arms (`arm` = TB id and
 * index) the conditional callback of exactly that instruction; it fires before the
 * instruction runs, so the registers are those of the sampled instruction. Taken branches
 * are only known once the next block starts: the sample is then taken at the next
 * block's first instruction, with the branch's PC. The same happens when QEMU runs an
 * MMIO instruction again alone after stopping a block before it (icount): that run has
 * memory instrumentation only (QEMU's CF_MEMI_ONLY), no instruction callbacks; its
 * memory inline op names the block (`done`), which is counted at the next block start.
 *
 * The fast mode (fast.c) keeps the same counts with inline operations only and is used
 * when neither exact counts nor taken branches are asked for; both modes sample the same
 * instructions. */
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include "pes.h"

uint64_t n_samples, n_partial, t_origin;
static uint64_t rng;
static bool started;

static uint64_t rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545F4914F6CDD1DULL;
}

uint64_t draw_period(void)
{
	uint64_t n = opt.period, j = n / 4;
	return j ? n - j + rnd() % (2 * j + 1) : n;
}

static void seed_rng(void)
{
	rng = opt.seed * 0x9E3779B97F4A7C15ULL + 0x632BE59BD9B4E019ULL;
	if (!rng)
		rng = 1;
}

/* Without start=, sampling runs from the first instruction; with it, from the moment a
 * task takes that name (the recorded command's exec): QEMU's icount run is not exactly
 * repeatable during boot (measured: a few hundred instructions of boot-time kernel
 * threads differ between runs, even with a plugin that only adds inline counts), while
 * the command itself is, so periods and time stamps counted from its start make two
 * recordings identical. */
void count_init(void)
{
	seed_rng();
	started = !opt.start;
	for (unsigned i = 0; i < PES_MAX_VCPUS; i++) {
		vcpus[i].next_at = started ? draw_period() : FAR;
		vcpus[i].last_at = 0;
	}
}

bool count_started(void)
{
	return started;
}

void count_start(unsigned vi, const struct hookpt *h)
{
	started = true;
	t_origin = hook_time(vi, h);
	seed_rng();
	for (unsigned i = 0; i < nvcpus; i++) {
		struct vcpu *v = &vcpus[i];
		uint64_t p = draw_period();
		if (fast_mode) {
			fast_start(i, i == vi ? h : NULL, p);
			continue;
		}
		/* events completed before the hooked instruction */
		uint64_t e = v->ev + (i == vi ? ev_prefix(h->tb, h->i) : 0);
		v->last_at = e;
		v->next_at = e + p;
		if (i == vi && v->cur == h->tb)
			v->sb->arm = arm_index(h->tb, v->ev, v->next_at, h->i);
	}
}

/* events among the first k instructions of tb */
uint64_t ev_prefix(const struct tb *tb, uint32_t k)
{
	switch (opt.event) {
	case EV_INSNS: return k;
	case EV_LOADS: return tb->pre_ld[k];
	case EV_STORES: return tb->pre_st[k];
	case EV_BRANCHES: return k == tb->n && (tb->in[tb->n - 1].cls & IC_BRANCH);
	default: return 0;
	}
}

bool sampled_insn(const struct tb *tb, uint32_t i)
{
	switch (opt.event) {
	case EV_INSNS: return true;
	case EV_LOADS: return tb->in[i].cls & IC_LOAD;
	case EV_STORES: return tb->in[i].cls & IC_STORE;
	case EV_BRANCHES: return i == tb->n - 1 && (tb->in[i].cls & IC_BRANCH);
	case EV_TAKEN: return i == 0;
	}
	return false;
}

/* the instruction (index > after) whose completion brings the count, ev0 at the TB
 * start, to next_at; ARM_NONE when the TB ends first */
uint64_t arm_index(const struct tb *tb, uint64_t ev0, uint64_t next_at, int64_t after)
{
	if (next_at <= ev0 || ev0 + ev_prefix(tb, tb->n) < next_at)
		return ARM_NONE;
	uint64_t need = next_at - ev0;
	if (opt.event == EV_INSNS)
		return after < 0 || need - 1 > (uint64_t)after ? ARM(tb, need - 1) : ARM_NONE;
	for (uint32_t k = (uint32_t)(after + 1); k < tb->n; k++)
		if (ev_prefix(tb, k + 1) >= need)
			return ARM(tb, k);
	return ARM_NONE;
}

/* instructions of prev that completed: `pos`, or all of them when its last memory access
 * was seen */
static uint32_t completed(const struct tb *p, const struct sb *sb)
{
	uint32_t e = sb->pos < p->n ? (uint32_t)sb->pos : p->n;
	if ((p->in[p->n - 1].cls & IC_MEMEV) && sb->done == p->id)
		e = p->n;
	return e;
}

/* the threshold passed at an instruction that had no callback: sample at the next one */
void count_late(struct vcpu *v, uint64_t pc)
{
	v->late = true;
	v->late_pc = pc;
}

/* settle a block of v: e of its instructions completed; next is the block starting now */
static void account(struct vcpu *v, struct tb *prev, uint32_t e, const struct tb *next)
{
	if (e < prev->n)
		n_partial++;
	v->insns += e;
	g_insns += e;
	uint64_t before = v->ev;
	if (opt.event == EV_TAKEN) {
		const struct insn *last = &prev->in[prev->n - 1];
		if (e == prev->n && (last->cls & IC_BRANCH) && next &&
		    (!(last->cls & IC_COND) || next->vaddr != prev->fall))
			v->ev++;
	} else {
		v->ev += ev_prefix(prev, e);
	}
	if (out_enabled && started && before < v->next_at && v->ev >= v->next_at) {
		uint32_t k = 0;
		while (k + 1 < e && before + ev_prefix(prev, k + 1) < v->next_at)
			k++;
		count_late(v, opt.event == EV_TAKEN ? prev->in[prev->n - 1].vaddr : prev->in[k].vaddr);
	}
	if (exact_enabled && started)
		exact_account(prev, v->cur_task, v->path, e);
}

void on_tb(unsigned vi, void *ud)
{
	struct tb *tb = ud;
	struct vcpu *v = &vcpus[vi];
	struct sb *sb = v->sb;
	const struct tb *whole = NULL; /* the block before, when it ran to its end */
	if (v->cur) {
		uint32_t e = completed(v->cur, sb);
		account(v, v->cur, e, tb);
		whole = e == v->cur->n && !(sb->done && sb->done != v->cur->id) ? v->cur : NULL;
		/* an MMIO instruction re-executed alone, with memory instrumentation only
		 * (QEMU's icount re-translation after the block stopped before it) */
		if (sb->done && sb->done != v->cur->id) {
			struct tb *x = tb_by_id(sb->done);
			if (x)
				account(v, x, x->n, tb);
		}
	}
	sb->done = 0;
	sb->pos = tb->k0;
	v->cur = tb;
	v->cur_task = v->task;
	v->tb_insns = g_insns;
	if (exact_enabled && started)
		exact_path_at(v, whole, tb);
	if (out_enabled)
		sb->arm = !started ? ARM_NONE : v->late ? ARM(tb, 0) : arm_index(tb, v->ev, v->next_at, -1);
}

static void take(unsigned vi, struct tb *tb, struct regs *r, uint64_t pc, uint64_t time,
		 uint64_t addr)
{
	struct vcpu *v = &vcpus[vi];
	uint64_t chain[PES_MAX_CHAIN];
	int n = unwind(r, v->task, (enum priv)tb->priv, pc, chain);
	out_sample(vi, (enum priv)tb->priv, v->task, pc, time, addr, v->next_at - v->last_at, chain, n);
	n_samples++;
	uint64_t p = draw_period();
	v->last_at = v->next_at;
	v->next_at += p;
	if (fast_mode)
		v->sb->left += p;
}

void on_sample(unsigned vi, void *ud)
{
	struct tb *tb = ud;
	struct vcpu *v = &vcpus[vi];
	uint64_t arm = v->sb->arm;
	uint32_t i = (uint32_t)(arm & 0xfff);
	if (arm == ARM_NONE || arm >> 12 != tb->id || i >= tb->n)
		return;
	struct regs r = { 0 };
	if (v->late) {
		/* due at an instruction before this block: its PC, the registers of now */
		v->late = false;
		take(vi, tb, &r, v->late_pc, v->tb_insns, 0);
		arm = arm_index(tb, v->ev, v->next_at, -1);
		if (arm != ARM(tb, i) || !sampled_insn(tb, i)) {
			v->sb->arm = arm;
			return;
		}
	}
	uint64_t pc = tb->in[i].vaddr, addr = 0;
	if (opt.event == EV_LOADS || opt.event == EV_STORES)
		opt.isa->mem_addr(tb->in[i].raw, pc, &r, &addr);
	take(vi, tb, &r, pc, v->tb_insns + i + 1, addr);
	/* a short period may put the next sample in this same block */
	v->sb->arm = arm_index(tb, v->ev, v->next_at, (int64_t)i);
}

void count_finish(void)
{
	for (unsigned i = 0; i < nvcpus; i++) {
		struct vcpu *v = &vcpus[i];
		if (!fast_mode && v->cur && v->sb)
			account(v, v->cur, completed(v->cur, v->sb), NULL);
		v->cur = NULL;
	}
}

/* instructions completed before instruction j of tb, which is about to run */
uint64_t hook_time(unsigned vcpu, const struct hookpt *h)
{
	if (fast_mode)
		return fast_insns(vcpu, h->tb, h->i);
	return vcpus[vcpu].tb_insns + h->i;
}

uint64_t count_total(void)
{
	if (!fast_mode)
		return g_insns;
	uint64_t t = 0;
	for (unsigned i = 0; i < nvcpus; i++)
		t += fast_insns(i, NULL, 0);
	return t;
}
