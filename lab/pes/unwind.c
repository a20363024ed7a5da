/* SPDX-License-Identifier: MIT */
/* Frame-pointer call chains read from guest memory at the sampled instruction, in perf's
 * layout: a context marker (PERF_CONTEXT_KERNEL/USER/HV), then the sampled pc, then one
 * entry per caller. Callers are stored as return address - 1, the byte before: a call to a
 * noreturn function can be the last instruction of its caller, so the return address
 * itself may already lie in the next function (seen in the lab: sys_exit_group ->
 * __wake_up_parent); ra-1 names the caller with any symboliser.
 *
 * The leaf needs care. Before its prologue has stored the frame (and after the epilogue
 * has restored it, and everywhere in a leaf without a frame), fp still points at the
 * caller's frame and the return-address register (riscv ra, arm64 x30) holds the only
 * link to the caller. The frame is taken as set up when the return-address slot of the
 * frame at fp holds ra itself, or when ra points into the sampled function (it made a call
 * since); otherwise ra is the caller and is added before walking from fp. riscv leaf
 * functions that do set up a frame store only the caller's fp, in the slot where
 * non-leaf frames keep ra (what the kernel's own unwinder checks too): a slot that is not
 * a text address but a plausible frame pointer is such a frame.
 *
 * A kernel sample of a user task continues into user space from the registers saved at
 * kernel entry (pt_regs at the top of the task's kernel stack), walking the user stack
 * through the task's page tables (uaccess.c: QEMU does not let a kernel-mode callback
 * read user pages while the kernel's user-access window, SUM/PAN, is closed). A chain
 * whose user stack cannot be read even so stops after the user pc and its caller (from
 * the saved ra) and is counted (n_chain_user_cut). A sample in the entry code before the
 * registers are saved (riscv handle_exception.._save_context, arm64 vectors and el*_*
 * entry stubs) has no user part (n_chain_entry).
 *
 * User stacks prefer the binary's call-frame information (cfi.c): user code need not keep
 * frame pointers (Debian's riscv64 glibc does not). The frame-pointer rules serve the
 * kernel, binaries without CFI and functions CFI does not cover. */
#include <linux/perf_event.h>
#include "pes.h"

uint64_t n_chain_user_cut, n_chain_entry, n_chain_cfi, n_chain_fp, n_chain_no_mm;
static uint64_t entry_lo, entry_hi, asm_lo, asm_hi;

void unwind_init(void)
{
	entry_lo = ksym_addr(opt.isa->entry_lo_sym);
	entry_hi = ksym_addr(opt.isa->entry_hi_sym);
	asm_lo = ksym_addr(opt.isa->asm_lo_sym);
	asm_hi = ksym_addr(opt.isa->asm_hi_sym);
}

bool in_entry_code(uint64_t pc)
{
	return pc >= entry_lo && pc < entry_hi;
}

bool in_entry_asm(uint64_t pc)
{
	return pc >= asm_lo && pc < asm_hi;
}

struct space {
	bool kernel;
	bool walk_tables; /* user memory seen from kernel mode (uaccess.c) */
	const struct task *t;
	struct regs *r;
};

static bool rd64(const struct space *s, uint64_t a, uint64_t *v)
{
	return s->walk_tables ? uread64(s->t, s->r, a, v) : gread64(a, v);
}

static bool is_text(const struct space *s, uint64_t a)
{
	if (s->kernel)
		return ktext(a);
	if (!a || a >> 63)
		return false;
	if (s->t && s->t->end_code > s->t->start_code)
		return a >= s->t->start_code && a < s->t->end_code;
	return true;
}

static int64_t func(const struct space *s, uint64_t a)
{
	if (s->kernel)
		return kfunc(a);
	return s->t && s->t->exe ? exe_func(s->t->exe, a) : -1;
}

static bool addr_ok(const struct space *s, uint64_t a)
{
	if (!a || (a & 7))
		return false;
	/* never a frame in kernel text: riscv entry code calls a syscall with its address
	 * still in s0 (fp), and the 16 code bytes below it read as a frame record */
	return s->kernel ? a >= opt.isa->kernel_min && !ktext(a) : !(a >> 63);
}

/* next frame pointer: above the current one on the same stack; a kernel chain may move
 * between stacks (IRQ stack -> task stack) a couple of times */
static bool next_ok(const struct space *s, uint64_t nfp, uint64_t fp, int *switches)
{
	if (!addr_ok(s, nfp))
		return false;
	uint64_t span = s->kernel ? task_thread_size() : 64ULL << 20;
	if (nfp > fp && nfp - fp <= span)
		return true;
	return s->kernel && nfp != fp && ++*switches <= 2;
}

static int push(uint64_t *ch, int n, uint64_t v)
{
	if (n < PES_MAX_CHAIN)
		ch[n++] = v;
	return n;
}

/* a frame record: the return address and the caller's fp, 16 adjacent bytes on both ISAs
 * (one guest read in the kernel: exact mode walks at every change of function) */
static bool record(const struct space *s, uint64_t fp, uint64_t *ret, uint64_t *nfp)
{
	const struct isa *isa = opt.isa;
	if (s->walk_tables)
		return rd64(s, fp + isa->fr_ra, ret) && rd64(s, fp + isa->fr_fp, nfp);
	int lo = isa->fr_ra < isa->fr_fp ? isa->fr_ra : isa->fr_fp;
	uint64_t w[2];
	if (!gread(fp + lo, w, sizeof(w)))
		return false;
	*ret = w[(isa->fr_ra - lo) / 8];
	*nfp = w[(isa->fr_fp - lo) / 8];
	return true;
}

static int walk(const struct space *s, uint64_t fp, uint64_t *ch, int n)
{
	const struct isa *isa = opt.isa;
	int switches = 0;
	for (int depth = 0; depth < PES_MAX_CHAIN && n < PES_MAX_CHAIN; depth++) {
		uint64_t ret, nfp;
		if (!record(s, fp, &ret, &nfp))
			break;
		if (!is_text(s, ret)) {
			/* riscv: a leaf frame interrupted in the kernel holds only the caller's fp */
			if (isa->leaf_fp_slot && next_ok(s, ret, fp, &switches)) {
				fp = ret;
				continue;
			}
			break;
		}
		n = push(ch, n, ret - 1);
		if (!nfp || !next_ok(s, nfp, fp, &switches))
			break;
		fp = nfp;
	}
	return n;
}

/* the sampled function's frame state, then the walk; returns the new length, or -1 when
 * the stack could not be read at all */
static int frames(const struct space *s, uint64_t pc, uint64_t fp, uint64_t ra, uint64_t *ch, int n)
{
	const struct isa *isa = opt.isa;
	/* ra == pc is not a return address: control came to pc by a jump to ra (a new task's
	 * first switch returns into arm64's ret_from_fork with lr = ret_from_fork, and
	 * ret_from_fork - 1 names the function before it, cpu_switch_to) */
	bool ra_caller = ra != pc && is_text(s, ra) &&
			 (func(s, ra - 1) < 0 || func(s, ra - 1) != func(s, pc));
	uint64_t slot;
	if (!addr_ok(s, fp) || !rd64(s, fp + isa->fr_ra, &slot)) {
		if (ra_caller)
			n = push(ch, n, ra - 1);
		return addr_ok(s, fp) ? -n - 1 : n;
	}
	if (isa->leaf_fp_slot && !is_text(s, slot)) {
		int sw = 0;
		if (next_ok(s, slot, fp, &sw)) { /* riscv leaf frame: caller's fp only */
			if (is_text(s, ra))
				n = push(ch, n, ra - 1);
			return walk(s, slot, ch, n);
		}
	}
	if (slot != ra && ra_caller)
		n = push(ch, n, ra - 1);
	return walk(s, fp, ch, n);
}

/* exact mode: the callers of the kernel function running at pc, read exactly as a sample
 * there would read them (so exact per-path counts and sampled paths name the same paths) */
int unwind_kernel_callers(struct regs *r, uint64_t pc, uint64_t *ch)
{
	struct space s = { .kernel = true };
	int n = frames(&s, pc, reg(r, opt.isa->r_fp), reg(r, opt.isa->r_ra), ch, 0);
	return n < 0 ? -n - 1 : n;
}

static bool cfi_read(void *ctx, uint64_t a, uint64_t *v)
{
	const struct space *s = ctx;
	return addr_ok(s, a) && rd64(s, a, v);
}

/* A user stack from a full register set: call-frame information where the binary has it
 * (cfi.c), else the function's prologue where the ISA has an analyser (riscv), else the
 * frame-pointer rules above. On arm64 a first function without CFI whose return-address
 * register points into another function is taken as a leaf that has not touched its
 * stack (hand-written string functions of libc); a caller without CFI is walked by its
 * frame record. Returns the new length, or -n-1 as frames() does. */
static int user_frames(const struct space *s, struct uregs *u, uint64_t *ch, int n)
{
	const struct isa *isa = opt.isa;
	const struct exe *e = s->t ? s->t->exe : NULL;
	uint64_t fp = 0, ra = 0;
	ureg_get(u, isa->r_fp, &fp);
	ureg_get(u, isa->r_ra, &ra);
	if (!cfi_count(e) && !(isa->prologue && e && e->text)) {
		n_chain_fp++;
		return frames(s, u->pc, fp, ra, ch, n);
	}
	int steps = 0;
	while (n < PES_MAX_CHAIN) {
		int rc = cfi_step(e, u, cfi_read, (void *)s);
		if (rc == CFI_NONE)
			rc = prologue_step(e, u, cfi_read, (void *)s);
		if (rc == CFI_NONE && !steps) {
			bool leaf = is_text(s, ra) && func(s, ra - 1) >= 0 && func(s, ra - 1) != func(s, u->pc);
			if (!leaf) {
				n_chain_fp++;
				return frames(s, u->pc, fp, ra, ch, n);
			}
			u->pc = ra;
			u->caller = true;
			rc = CFI_OK;
		} else if (rc == CFI_NONE) {
			uint64_t f;
			if (ureg_get(u, isa->r_fp, &f))
				n = walk(s, f, ch, n);
			break;
		}
		if (rc != CFI_OK || !is_text(s, u->pc))
			break;
		n = push(ch, n, u->pc - 1);
		steps++;
	}
	n_chain_cfi++;
	return n;
}

int unwind(struct regs *r, struct task *t, enum priv priv, uint64_t pc, uint64_t *ch)
{
	const struct isa *isa = opt.isa;
	int n = 0;
	if (priv == PRIV_FIRMWARE) {
		/* OpenSBI: its own frames are not walked; the trapping S/U-mode instruction
		 * (mepc) and its mode (mstatus.MPP) say on whose behalf it runs */
		n = push(ch, n, (uint64_t)PERF_CONTEXT_HV);
		n = push(ch, n, pc);
		if (reg_ok(R_MEPC) && reg_ok(R_MSTATUS)) {
			unsigned mpp = (reg(r, R_MSTATUS) >> 11) & 3;
			if (mpp == 0 || mpp == 1) {
				n = push(ch, n, mpp ? (uint64_t)PERF_CONTEXT_KERNEL : (uint64_t)PERF_CONTEXT_USER);
				n = push(ch, n, reg(r, R_MEPC));
			}
		}
		return n;
	}
	struct space s = { .kernel = priv == PRIV_KERNEL, .t = t, .r = r };
	n = push(ch, n, s.kernel ? (uint64_t)PERF_CONTEXT_KERNEL : (uint64_t)PERF_CONTEXT_USER);
	n = push(ch, n, pc);
	if (s.kernel) {
		n = frames(&s, pc, reg(r, isa->r_fp), reg(r, isa->r_ra), ch, n);
	} else {
		struct uregs u = { .pc = pc, .known = ~0ULL, .lazy = 0xffffffffULL, .src = r };
		n = user_frames(&s, &u, ch, n);
	}
	if (n < 0)
		n = -n - 1;
	if (!s.kernel || !t || !t->user)
		return n;
	/* into user space through the registers saved at kernel entry, unless the entry code
	 * is still saving them (pt_regs would hold the previous entry's) */
	if (pc >= entry_lo && pc < entry_hi) {
		n_chain_entry++;
		return n;
	}
	/* pt_regs starts with the 32 integer registers in DWARF order on both ISAs (riscv:
	 * epc in x0's slot; arm64: x0-x30, sp) */
	if (!task_live_mm(t)) {
		n_chain_no_mm++; /* exiting: its address space is gone (perf: no user stack) */
		return n;
	}
	uint64_t pt = task_pt_regs(t), mode, upc;
	struct uregs uu = { .known = ~1ULL };
	if (!pt || !gread64(pt + isa->pr_mode, &mode) || !isa->pr_user(mode) ||
	    !gread64(pt + isa->pr_pc, &upc) || !gread(pt, uu.v, sizeof(uu.v)) || n + 2 > PES_MAX_CHAIN)
		return n;
	if (isa == &isa_riscv64)
		uu.v[0] = 0;
	uu.known = ~0ULL;
	uu.pc = upc;
	struct space u = { .kernel = false, .walk_tables = true, .t = t, .r = r };
	uaccess_begin();
	n = push(ch, n, (uint64_t)PERF_CONTEXT_USER);
	n = push(ch, n, upc);
	int m = user_frames(&u, &uu, ch, n);
	if (m < 0) {
		m = -m - 1;
		n_chain_user_cut++;
	}
	return m;
}
