/* SPDX-License-Identifier: MIT */
/* Reading a user task's memory from a kernel-mode callback. QEMU's debug reads follow the
 * current privilege, and the kernel runs with user access closed (riscv SUM, arm64 PAN),
 * so a kernel sample could not walk the user stack saved at kernel entry. The plugin
 * translates the address itself: it walks the sampled task's own page tables (its live
 * mm->pgd, not the root register: around a context switch that holds the next task's
 * tables, measured as 2 % of a pipe ping-pong's kernel samples with the other process's
 * stack) and reads the physical page through the kernel's linear map, whose offset is
 * learnt once at an exec from the root register (riscv satp / arm64 TTBR0_EL1)
 * against the running task's mm->pgd (a linear-map address). Formats: RISC-V privileged
 * spec (Sv39/48/57 PTEs), Arm ARM (VMSAv8-64 4 KiB granule descriptors). */
#include "pes.h"

static int64_t linear = -1; /* kernel VA - PA of the linear map; -1: not learnt yet */

static bool phys_read64(uint64_t pa, uint64_t *v)
{
	return linear != -1 && gread64(pa + (uint64_t)linear, v);
}

/* page-table root (physical) and number of levels of the running user address space */
static bool root(struct regs *r, uint64_t *pa, int *levels)
{
	uint64_t v = reg(r, R_ROOT);
	if (opt.isa == &isa_riscv64) {
		unsigned mode = (unsigned)(v >> 60);
		if (mode < 8 || mode > 10)
			return false; /* bare or unknown translation */
		*levels = (int)mode - 5; /* Sv39: 3, Sv48: 4, Sv57: 5 */
		*pa = (v & ((1ULL << 44) - 1)) << 12;
		return true;
	}
	unsigned t0sz = reg_ok(R_TCR) ? (unsigned)(reg(r, R_TCR) & 63) : 16;
	if (t0sz < 16 || t0sz > 39)
		return false;
	*levels = (64 - (int)t0sz - 12 + 8) / 9;
	*pa = v & 0x0000fffffffffffeULL;
	return *pa != 0;
}

/* the running task's live mm->pgd (read now: the cached mm may predate an exec) */
static bool learn_linear(const struct task *t, uint64_t root_pa)
{
	uint64_t mm, pgd;
	if (linear != -1)
		return true;
	if (!task_mm_pgd_off() || !gread64(t->ptr + task_mm_off(), &mm) || !mm ||
	    !gread64(mm + task_mm_pgd_off(), &pgd) || pgd < opt.isa->kernel_min || pgd < root_pa ||
	    ((pgd - root_pa) & 4095))
		return false;
	linear = (int64_t)(pgd - root_pa);
	return true;
}

static bool translate(uint64_t table, int levels, uint64_t va, uint64_t *pa)
{
	for (int l = levels - 1; l >= 0; l--) {
		uint64_t idx = (va >> (12 + 9 * l)) & 511, e;
		if (!phys_read64(table + idx * 8, &e))
			return false;
		uint64_t span = 1ULL << (12 + 9 * l);
		if (opt.isa == &isa_riscv64) {
			if (!(e & 1))
				return false;
			uint64_t next = ((e >> 10) & ((1ULL << 44) - 1)) << 12;
			if (e & 0xe) { /* R, W or X: a leaf, maybe a superpage */
				*pa = next + (va & (span - 1));
				return true;
			}
			table = next;
		} else {
			unsigned kind = e & 3;
			uint64_t out = e & 0x0000fffffffff000ULL;
			if (kind == 0 || kind == 2)
				return false;
			if (l == 0 || kind == 1) { /* page, or block above the last level */
				if (l && kind == 1)
					out &= ~(span - 1);
				*pa = out + (va & (span - 1));
				return true;
			}
			table = out;
		}
	}
	return false;
}

/* Learnt at the end of an exec (finalize_exec), where the root register certainly holds
 * the exec'ing task's new tables. Elsewhere in kernel mode it may not: around a context
 * switch the next task's tables are installed (switch_mm) before the switch the plugin
 * follows (__switch_to). (A user-mode callback cannot read the task structure.) */
void uaccess_learn(const struct task *t, struct regs *r)
{
	uint64_t root_pa;
	int levels;
	if (linear == -1 && t && t->user && root(r, &root_pa, &levels))
		learn_linear(t, root_pa);
}

/* the task's live mm (0 once it has left it on exit: perf then records no user stack) */
uint64_t task_live_mm(const struct task *t)
{
	uint64_t mm;
	return t && task_mm_off() && gread64(t->ptr + task_mm_off(), &mm) ? mm : 0;
}

/* the root of the task's own page tables (mm->pgd), whatever the root register holds */
static bool task_root(const struct task *t, struct regs *r, uint64_t *pa, int *levels)
{
	uint64_t cur, mm = task_live_mm(t), pgd;
	if (linear == -1 || !mm || !task_mm_pgd_off() || !root(r, &cur, levels) ||
	    !gread64(mm + task_mm_pgd_off(), &pgd) || pgd < (uint64_t)linear)
		return false;
	*pa = pgd - (uint64_t)linear;
	return true;
}

static uint64_t c_va = 1, c_pa; /* last page translated, within one call chain */
static const struct task *c_t;

void uaccess_begin(void)
{
	c_va = 1;
	c_t = NULL;
}

bool uread64(const struct task *t, struct regs *r, uint64_t va, uint64_t *v)
{
	uint64_t page = va & ~4095ULL, pa;
	if (c_t == t && c_va == page) {
		pa = c_pa;
	} else {
		uint64_t root_pa;
		int levels;
		if (!task_root(t, r, &root_pa, &levels) || !translate(root_pa, levels, page, &pa))
			return false;
		c_t = t;
		c_va = page;
		c_pa = pa;
	}
	return phys_read64(pa + (va & 4095), v);
}
