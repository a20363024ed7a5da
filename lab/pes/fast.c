/* SPDX-License-Identifier: MIT */
/* The fast mode: sampling with inline operations only, no callback per block.
 *
 * The scoreboard's `left` counts the events still to go before the next sample and is
 * lowered by inline adds as instructions are known to complete: at the block start by
 * the events of the instructions before the first one that may stop the block, and
 * before the instruction that follows each such one by the events up to the next one
 * (the one before has completed, the ones up to the next cannot stop). A last
 * instruction that accesses memory is not counted in advance: an inline store after its
 * access names the block in `done`, and the next block's first check (a conditional
 * callback, run only then) counts it. That also counts an MMIO instruction QEMU runs
 * again alone with memory instrumentation only (count.c). Other last instructions count
 * as completed, as in the full mode. So `left` is exact at every block start.
 *
 * A conditional callback at the block start runs only when `left` is at most the
 * events of the whole block: the threshold falls inside it. It then arms the sampled
 * instruction's conditional callback exactly like the full mode (count.c), which takes
 * the sample; the sample adds the next period to `left`. For events other than
 * instructions, `icnt` counts completed instructions the same way (time stamps). */
#include "pes.h"

bool fast_mode;

/* may stop the block and is not the last instruction */
static bool unsure_fast(const struct tb *t, uint32_t i)
{
	return (t->in[i].cls & IC_STOP) && i + 1 < t->n;
}

/* instructions counted as complete once instruction j has started: up to the next that
 * may stop the block, or up to a last memory access (counted through `done`) */
static uint32_t claim(const struct tb *t, uint32_t j)
{
	for (uint32_t k = j; k < t->n; k++)
		if (unsure_fast(t, k))
			return k;
	return t->in[t->n - 1].cls & IC_MEMEV ? t->n - 1 : t->n;
}

static void add_tb(struct qemu_plugin_tb *qtb, qemu_plugin_u64 e, int64_t v)
{
	if (v)
		qemu_plugin_register_vcpu_tb_exec_inline_per_vcpu(qtb, QEMU_PLUGIN_INLINE_ADD_U64, e,
								  (uint64_t)v);
}

static void add_insn(struct qemu_plugin_insn *qi, qemu_plugin_u64 e, int64_t v)
{
	if (v)
		qemu_plugin_register_vcpu_insn_exec_inline_per_vcpu(qi, QEMU_PLUGIN_INLINE_ADD_U64, e,
								    (uint64_t)v);
}

void instrument_fast(struct qemu_plugin_tb *qtb, struct qemu_plugin_insn **qi, struct tb *t)
{
	bool icnt = opt.event != EV_INSNS;
	uint64_t full = ev_prefix(t, t->n);
	/* order matters: the previous block's last access, then the threshold check, then
	 * this block's counts */
	qemu_plugin_register_vcpu_tb_exec_cond_cb(qtb, on_done_fast, QEMU_PLUGIN_CB_NO_REGS,
						  QEMU_PLUGIN_COND_NE, sb_done, 0, t);
	if (full)
		qemu_plugin_register_vcpu_tb_exec_cond_cb(qtb, on_tb_fast, QEMU_PLUGIN_CB_NO_REGS,
							  QEMU_PLUGIN_COND_LE, sb_left, full, t);
	uint32_t c = claim(t, 0);
	add_tb(qtb, sb_left, -(int64_t)ev_prefix(t, c));
	if (icnt)
		add_tb(qtb, sb_icnt, c);
	for (uint32_t i = 1; i < t->n; i++) {
		if (!unsure_fast(t, i - 1))
			continue;
		c = claim(t, i);
		add_insn(qi[i], sb_left, -(int64_t)(ev_prefix(t, c) - ev_prefix(t, i - 1)));
		if (icnt)
			add_insn(qi[i], sb_icnt, c - (i - 1));
	}
	mark_done(qi, t);
	for (uint32_t i = 0; i < t->n; i++)
		if (sampled_insn(t, i) || i == 0)
			qemu_plugin_register_vcpu_insn_exec_cond_cb(qi[i], on_sample, QEMU_PLUGIN_CB_R_REGS,
								    QEMU_PLUGIN_COND_EQ, sb_arm,
								    ARM(t, i), t);
}

/* the block before ended with a memory access that completed: count it */
void on_done_fast(unsigned vi, void *ud)
{
	struct tb *cur = ud;
	struct vcpu *v = &vcpus[vi];
	struct sb *sb = v->sb;
	struct tb *x = tb_by_id(sb->done);
	sb->done = 0;
	if (!x)
		return;
	uint64_t e = ev_prefix(x, x->n) - ev_prefix(x, x->n - 1);
	if (opt.event != EV_INSNS)
		sb->icnt += 1;
	if (!e)
		return;
	if (sb->left > e) {
		sb->left -= e;
		return;
	}
	/* that instruction reached the threshold without a callback (an MMIO re-execution):
	 * the sample is taken at this block's first instruction */
	sb->left = 0;
	v->ev = v->next_at;
	v->tb_insns = fast_insns(vi, NULL, 0);
	v->cur = cur;
	count_late(v, x->in[x->n - 1].vaddr);
	sb->arm = ARM(cur, 0);
}

/* the threshold falls inside this block */
void on_tb_fast(unsigned vi, void *ud)
{
	struct tb *tb = ud;
	struct vcpu *v = &vcpus[vi];
	struct sb *sb = v->sb;
	if (v->late)
		return; /* on_done_fast armed the first instruction */
	v->ev = v->next_at - sb->left;
	v->tb_insns = opt.event == EV_INSNS ? v->ev : sb->icnt;
	v->cur = tb;
	sb->arm = arm_index(tb, v->ev, v->next_at, -1);
}

/* instructions completed before instruction j of tb (about to run); with tb NULL, all
 * counted so far */
uint64_t fast_insns(unsigned vi, const struct tb *tb, uint32_t j)
{
	struct vcpu *v = &vcpus[vi];
	uint64_t now = opt.event == EV_INSNS ? v->next_at - v->sb->left : v->sb->icnt;
	return tb ? now - claim(tb, j) + j : now;
}

/* sampling starts before instruction h->i (or now, h NULL) with the given first period */
void fast_start(unsigned vi, const struct hookpt *h, uint64_t p)
{
	struct vcpu *v = &vcpus[vi];
	struct sb *sb = v->sb;
	uint64_t claimed = v->next_at - sb->left;
	uint64_t d = h ? ev_prefix(h->tb, claim(h->tb, h->i)) - ev_prefix(h->tb, h->i) : 0;
	if (p <= d)
		p = d + 1; /* a period shorter than what this block already counted */
	uint64_t e = claimed - d;
	v->last_at = e;
	v->next_at = e + p;
	sb->left = p - d;
	if (h) {
		v->ev = e - ev_prefix(h->tb, h->i);
		v->tb_insns = opt.event == EV_INSNS ? v->ev : sb->icnt - (claim(h->tb, h->i) - h->i) - h->i;
		v->cur = (struct tb *)h->tb;
		sb->arm = arm_index(h->tb, v->ev, v->next_at, h->i);
	}
}
