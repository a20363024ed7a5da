/* SPDX-License-Identifier: MIT */
/* A64: instruction classes, data addresses of loads/stores, frame and pt_regs layout.
 * Encodings from the Arm ARM (A64 "Loads and Stores" and "Branches, Exception
 * Generating and System instructions" groups); pt_regs from
 * arch/arm64/include/asm/ptrace.h of Linux 6.1. */
#include "pes.h"

static int64_t sext(uint64_t v, int bits)
{
	return (int64_t)(v << (64 - bits)) >> (64 - bits);
}

/* size of one access of a single-register load/store: size field, or 16 for 128-bit
 * SIMD registers (V=1, size=00, opc=1x) */
static unsigned ldst_scale(uint32_t i)
{
	unsigned size = i >> 30, v = (i >> 26) & 1, opc = (i >> 22) & 3;
	return v && size == 0 && (opc & 2) ? 4 : size;
}

/* single-register forms: load, store or neither (prefetch) */
static unsigned ldst_kind(uint32_t i)
{
	unsigned size = i >> 30, v = (i >> 26) & 1, opc = (i >> 22) & 3;
	if (v)
		return opc & 1 ? IC_LD : IC_ST;
	if (opc == 0)
		return IC_ST;
	if (opc == 2 && size == 3)
		return 0; /* PRFM / PRFUM: no access */
	return IC_LD;
}

static unsigned classify_ldst(uint32_t i)
{
	if ((i & 0xbfbf0000) == 0x0c000000 || (i & 0xbfa00000) == 0x0c800000 ||
	    (i & 0xbf9f0000) == 0x0d000000 || (i & 0xbf800000) == 0x0d800000)
		return i & (1u << 22) ? IC_LD : IC_ST; /* SIMD structures */
	if ((i & 0x3f000000) == 0x08000000) { /* exclusive, acquire/release, CAS */
		bool l = i & (1u << 22), o1 = i & (1u << 21), o2 = i & (1u << 23), hi = i >> 31;
		if (o1 && (o2 || !hi))
			return IC_LD | IC_ST; /* CAS, CASP */
		if (!l && !o2)
			return IC_STORE | IC_STOP; /* STXR: a failed one writes nothing */
		return l ? IC_LD : IC_ST;
	}
	if ((i & 0x3f200c00) == 0x19000000) /* LDAPUR / STLUR */
		return (i >> 22) & 3 ? IC_LD : IC_ST;
	if ((i & 0x3b000000) == 0x18000000) /* load literal */
		return !((i >> 26) & 1) && (i >> 30) == 3 ? 0 : IC_LD;
	if ((i & 0x3a000000) == 0x28000000) /* pairs */
		return i & (1u << 22) ? IC_LD : IC_ST;
	if ((i & 0x3b200000) == 0x38000000) { /* unscaled, pre/post-index, unprivileged */
		if (!((i >> 26) & 1) && (i >> 30) == 3 && ((i >> 22) & 3) == 2)
			return ((i >> 10) & 3) == 0 ? 0 : IC_STOP; /* PRFUM */
		return ldst_kind(i);
	}
	if ((i & 0x3b200c00) == 0x38200000) { /* atomic memory operations */
		bool ldapr = ((i >> 12) & 15) == 12 && ((i >> 15) & 1);
		return ldapr ? IC_LD : IC_LD | IC_ST;
	}
	if ((i & 0x3b200c00) == 0x38200800) /* register offset */
		return ldst_kind(i);
	if ((i & 0x3b000000) == 0x39000000) /* unsigned immediate */
		return ldst_kind(i);
	return IC_STOP; /* tags, pointer-auth loads, anything not decoded here */
}

/* SVE loads and stores (op0 = 1xx, bits 28:25 = 0010): predicated, so an access is not
 * certain; stores are the 111 group */
static unsigned classify_sve_mem(uint32_t i)
{
	return ((i >> 29) == 7 ? IC_STORE : IC_LOAD) | IC_STOP;
}

static unsigned classify(const uint8_t *p, size_t len, uint32_t *raw)
{
	if (len < 4) {
		*raw = 0;
		return IC_STOP;
	}
	uint32_t i = p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
	*raw = i;
	if ((i & 0x0a000000) == 0x08000000)
		return classify_ldst(i);
	if ((i & 0x9e000000) == 0x84000000)
		return classify_sve_mem(i);
	if ((i & 0x7c000000) == 0x14000000) /* B, BL */
		return IC_BRANCH;
	if ((i & 0xff000010) == 0x54000000 || (i & 0x7e000000) == 0x34000000 ||
	    (i & 0x7e000000) == 0x36000000) /* B.cond, CBZ/CBNZ, TBZ/TBNZ */
		return IC_BRANCH | IC_COND;
	if ((i & 0xfe000000) == 0xd6000000) { /* branch to register */
		unsigned opc = (i >> 21) & 15;
		if (opc == 0 || opc == 1 || opc == 2 || opc == 8 || opc == 9)
			return IC_BRANCH; /* BR BLR RET and their authenticated forms */
		return IC_STOP; /* ERET, DRPS */
	}
	if ((i & 0xffc00000) == 0xd5000000 || (i & 0xff000000) == 0xd4000000)
		return IC_STOP; /* system register access, DC ZVA, SVC/HVC/BRK */
	return 0;
}

/* BL, BLR (and BLRAA/BLRAB...) link x30; RET (and RETAA/RETAB) return */
static int flow(uint32_t i)
{
	if ((i & 0xfc000000) == 0x94000000)
		return FLOW_CALL; /* BL */
	if ((i & 0xfe000000) != 0xd6000000)
		return FLOW_OTHER;
	unsigned opc = (i >> 21) & 15;
	if (opc == 1 || opc == 9)
		return FLOW_CALL; /* BLR, BLRA* */
	if (opc == 2)
		return FLOW_RET; /* RET, RETAA, RETAB */
	return FLOW_OTHER;
}

static uint64_t xreg(struct regs *r, unsigned n, bool sp)
{
	if (n == 31)
		return sp ? reg(r, 31) : 0;
	return reg(r, (int)n);
}

static uint64_t extend_reg(uint64_t v, unsigned option, unsigned shift)
{
	switch (option) {
	case 2: v = (uint32_t)v; break;          /* UXTW */
	case 6: v = (uint64_t)(int64_t)(int32_t)v; break; /* SXTW */
	default: break;                          /* LSL/UXTX, SXTX */
	}
	return v << shift;
}

static bool mem_addr(uint32_t i, uint64_t pc, struct regs *r, uint64_t *addr)
{
	unsigned rn = (i >> 5) & 31;
	uint64_t base = xreg(r, rn, true);
	if ((i & 0x3b000000) == 0x18000000) { /* literal */
		*addr = pc + ((uint64_t)sext((i >> 5) & 0x7ffff, 19) << 2);
		return true;
	}
	if ((i & 0x3a000000) == 0x28000000) { /* pairs */
		unsigned opc = i >> 30, v = (i >> 26) & 1, idx = (i >> 23) & 3;
		unsigned scale = v ? 2 + opc : (opc & 2 ? 3 : (opc == 1 && !(i & (1u << 22)) ? 4 : 2));
		*addr = idx == 1 ? base : base + ((uint64_t)sext((i >> 15) & 0x7f, 7) << scale);
		return true;
	}
	if ((i & 0x3b200000) == 0x38000000 && (i & 0x3b200c00) != 0x38200800) {
		unsigned idx = (i >> 10) & 3;
		*addr = idx == 1 ? base : base + (uint64_t)sext((i >> 12) & 0x1ff, 9);
		return true;
	}
	if ((i & 0x3f200c00) == 0x19000000) {
		*addr = base + (uint64_t)sext((i >> 12) & 0x1ff, 9);
		return true;
	}
	if ((i & 0x3b200c00) == 0x38200800) {
		unsigned option = (i >> 13) & 7, s = (i >> 12) & 1;
		*addr = base + extend_reg(xreg(r, (i >> 16) & 31, false), option, s ? ldst_scale(i) : 0);
		return true;
	}
	if ((i & 0x3b000000) == 0x39000000) {
		*addr = base + (((i >> 10) & 0xfff) << ldst_scale(i));
		return true;
	}
	/* exclusive/ordered, atomics, SIMD structures: the base register alone */
	*addr = base;
	return true;
}

static enum priv priv(uint64_t cpsr)
{
	unsigned el = (cpsr >> 2) & 3;
	return el == 0 ? PRIV_USER : el == 1 ? PRIV_KERNEL : PRIV_FIRMWARE;
}

/* pt_regs.pstate: M[3:0] = 0 (EL0t) for a trap from user mode */
static bool pr_user(uint64_t pstate)
{
	return (pstate & 15) == 0;
}

const struct isa isa_aarch64 = {
	.name = "aarch64",
	.reg_names = { "x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9", "x10", "x11",
		       "x12", "x13", "x14", "x15", "x16", "x17", "x18", "x19", "x20", "x21", "x22",
		       "x23", "x24", "x25", "x26", "x27", "x28", "x29", "x30", "sp",
		       [R_PC] = "pc", [R_MODE] = "cpsr", [R_ROOT] = "TTBR0_EL1", [R_TCR] = "TCR_EL1" },
	.r_sp = 31, .r_fp = 29, .r_ra = 30, .r_arg0 = 0, .r_arg1 = 1, .r_arg2 = 2,
	.classify = classify,
	.flow = flow,
	.mem_addr = mem_addr,
	.priv = priv,
	/* frame record: caller's fp at [fp], return address at [fp+8] */
	.fr_ra = 8, .fr_fp = 0,
	.leaf_fp_slot = false,
	/* struct pt_regs { regs[31], sp, pc, pstate, ... } */
	.pr_fp = 29 * 8, .pr_ra = 30 * 8, .pr_sp = 31 * 8, .pr_pc = 32 * 8, .pr_mode = 33 * 8,
	.pr_user = pr_user,
	.switch_sym = "cpu_switch_to",
	.entry_lo_sym = "vectors", .entry_hi_sym = "ret_to_kernel",
	.asm_lo_sym = "__entry_text_start", .asm_hi_sym = "__entry_text_end",
	.kernel_min = 0xffff000000000000ULL,
	.e_machine = 183, /* EM_AARCH64 */
};
