/* SPDX-License-Identifier: MIT */
/* RV64GC: instruction classes, data addresses of loads/stores, frame and pt_regs layout.
 * Encodings from the RISC-V unprivileged spec (base opcodes, chapter "RVC" for the
 * 16-bit forms); pt_regs from arch/riscv/include/asm/ptrace.h of Linux 6.1. */
#include "pes.h"

static int64_t sext(uint64_t v, int bits)
{
	return (int64_t)(v << (64 - bits)) >> (64 - bits);
}

static unsigned classify16(uint32_t c)
{
	unsigned q = c & 3, f3 = (c >> 13) & 7;
	if (q == 0) {
		if (f3 >= 1 && f3 <= 3)
			return IC_LD; /* c.fld c.lw c.ld */
		if (f3 >= 5)
			return IC_ST; /* c.fsd c.sw c.sd */
		return 0;
	}
	if (q == 1) {
		if (f3 == 5)
			return IC_BRANCH; /* c.j */
		if (f3 >= 6)
			return IC_BRANCH | IC_COND; /* c.beqz c.bnez */
		return 0;
	}
	/* q == 2 */
	if (f3 >= 1 && f3 <= 3)
		return IC_LD; /* c.fldsp c.lwsp c.ldsp */
	if (f3 >= 5)
		return IC_ST; /* c.fsdsp c.swsp c.sdsp */
	if (f3 == 4 && ((c >> 2) & 31) == 0 && ((c >> 7) & 31) != 0)
		return IC_BRANCH; /* c.jr c.jalr */
	if (f3 == 4 && c == 0x9002)
		return IC_STOP; /* c.ebreak */
	return 0;
}

static unsigned classify32(uint32_t i)
{
	unsigned width = (i >> 12) & 7;
	bool vector = width == 0 || width >= 5;
	switch (i & 0x7f) {
	case 0x03: /* LOAD */
		return IC_LD;
	case 0x07: /* LOAD-FP; vector loads may access nothing (vl = 0, masked) */
		return vector ? IC_LOAD | IC_STOP : IC_LD;
	case 0x23: /* STORE */
		return IC_ST;
	case 0x27: /* STORE-FP */
		return vector ? IC_STORE | IC_STOP : IC_ST;
	case 0x2f: { /* AMO */
		unsigned f5 = i >> 27;
		if (f5 == 2)
			return IC_LD; /* lr */
		if (f5 == 3)
			return IC_STORE | IC_STOP; /* sc: a failed sc writes nothing */
		return IC_LD | IC_ST;
	}
	case 0x63:
		return IC_BRANCH | IC_COND;
	case 0x6f: /* jal */
	case 0x67: /* jalr */
		return IC_BRANCH;
	case 0x73: /* SYSTEM: CSR accesses, ecall, wfi, sret... */
	case 0x0f: /* MISC-MEM: fence, fence.i, cbo.* (cbo.zero writes memory) */
		return IC_STOP;
	default:
		return 0;
	}
}

static unsigned classify(const uint8_t *p, size_t len, uint32_t *raw)
{
	uint32_t v = p[0] | (uint32_t)p[1] << 8;
	if ((v & 3) != 3) {
		*raw = v;
		return classify16(v);
	}
	if (len < 4) {
		*raw = v;
		return IC_STOP;
	}
	v |= (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
	*raw = v;
	return classify32(v);
}

static bool mem_addr(uint32_t i, uint64_t pc, struct regs *r, uint64_t *addr)
{
	(void)pc;
	if ((i & 3) != 3) {
		unsigned q = i & 3, f3 = (i >> 13) & 7;
		uint64_t off;
		if (q == 0) {
			int rs1 = 8 + ((i >> 7) & 7);
			if (f3 == 2 || f3 == 6) /* c.lw c.sw */
				off = ((i >> 10) & 7) << 3 | ((i >> 6) & 1) << 2 | ((i >> 5) & 1) << 6;
			else /* c.ld c.sd c.fld c.fsd */
				off = ((i >> 10) & 7) << 3 | ((i >> 5) & 3) << 6;
			*addr = reg(r, rs1) + off;
			return true;
		}
		if (q == 2) {
			if (f3 == 2) /* c.lwsp */
				off = ((i >> 12) & 1) << 5 | ((i >> 4) & 7) << 2 | ((i >> 2) & 3) << 6;
			else if (f3 == 1 || f3 == 3) /* c.ldsp c.fldsp */
				off = ((i >> 12) & 1) << 5 | ((i >> 5) & 3) << 3 | ((i >> 2) & 7) << 6;
			else if (f3 == 6) /* c.swsp */
				off = ((i >> 9) & 15) << 2 | ((i >> 7) & 3) << 6;
			else /* c.sdsp c.fsdsp */
				off = ((i >> 10) & 7) << 3 | ((i >> 7) & 7) << 6;
			*addr = reg(r, 2) + off;
			return true;
		}
		return false;
	}
	unsigned op = i & 0x7f, rs1 = (i >> 15) & 31, f3 = (i >> 12) & 7;
	int64_t imm;
	switch (op) {
	case 0x03:
	case 0x07:
		imm = sext(i >> 20, 12);
		/* vector loads (width 0, 5, 6, 7) have no immediate */
		if (op == 0x07 && (f3 == 0 || f3 >= 5))
			imm = 0;
		break;
	case 0x23:
	case 0x27:
		imm = sext(((i >> 25) << 5) | ((i >> 7) & 31), 12);
		if (op == 0x27 && (f3 == 0 || f3 >= 5))
			imm = 0;
		break;
	case 0x2f:
		imm = 0;
		break;
	default:
		return false;
	}
	*addr = reg(r, (int)rs1) + (uint64_t)imm;
	return true;
}

static enum priv priv(uint64_t mode)
{
	switch (mode & 3) {
	case 0: return PRIV_USER;
	case 3: return PRIV_FIRMWARE;
	default: return PRIV_KERNEL;
	}
}

/* pt_regs.status: SPP (bit 8) clear = the trap came from user mode */
static bool pr_user(uint64_t status)
{
	return !(status & 0x100);
}

const struct isa isa_riscv64 = {
	.name = "riscv64",
	.reg_names = { "zero", "ra", "sp", "gp", "tp", "t0", "t1", "t2", "fp", "s1", "a0", "a1",
		       "a2", "a3", "a4", "a5", "a6", "a7", "s2", "s3", "s4", "s5", "s6", "s7",
		       "s8", "s9", "s10", "s11", "t3", "t4", "t5", "t6",
		       [R_PC] = "pc", [R_MODE] = "priv", [R_MEPC] = "mepc", [R_MSTATUS] = "mstatus",
		       [R_ROOT] = "satp" },
	.r_sp = 2, .r_fp = 8, .r_ra = 1, .r_arg0 = 10, .r_arg1 = 11, .r_arg2 = 12,
	.classify = classify,
	.mem_addr = mem_addr,
	.priv = priv,
	/* non-leaf frame: ra at fp-8, caller's fp at fp-16 */
	.fr_ra = -8, .fr_fp = -16,
	.leaf_fp_slot = true,
	/* struct pt_regs { epc, ra, sp, gp, tp, t0-t2, s0, ... t6, status, ... } */
	.pr_pc = 0, .pr_ra = 8, .pr_sp = 16, .pr_fp = 64, .pr_mode = 256,
	.pr_user = pr_user,
	.switch_sym = "__switch_to",
	.entry_lo_sym = "handle_exception", .entry_hi_sym = "handle_syscall",
	.kernel_min = 0xff00000000000000ULL,
	.e_machine = 243, /* EM_RISCV */
};
