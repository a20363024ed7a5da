/* SPDX-License-Identifier: MIT */
/* RV64GC: instruction classes, data addresses of loads/stores, frame and pt_regs layout.
 * Encodings from the RISC-V unprivileged spec (base opcodes, chapter "RVC" for the
 * 16-bit forms); pt_regs from arch/riscv/include/asm/ptrace.h of Linux 6.1. */
#include <string.h>
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

/* calls link ra or t0 (x1, x5: the return-address registers of the psABI); a return
 * jumps to one of them without linking */
static int flow(uint32_t i)
{
	if ((i & 3) != 3) {
		unsigned f3 = (i >> 13) & 7, rs1 = (i >> 7) & 31;
		if ((i & 3) != 2 || f3 != 4 || ((i >> 2) & 31) || !rs1)
			return FLOW_OTHER;
		if (i & (1u << 12))
			return FLOW_CALL; /* c.jalr */
		return rs1 == 1 || rs1 == 5 ? FLOW_RET : FLOW_OTHER; /* c.jr */
	}
	unsigned op = i & 0x7f, rd = (i >> 7) & 31, rs1 = (i >> 15) & 31;
	if (op != 0x6f && op != 0x67)
		return FLOW_OTHER;
	if (rd == 1 || rd == 5)
		return FLOW_CALL;
	return op == 0x67 && rd == 0 && (rs1 == 1 || rs1 == 5) ? FLOW_RET : FLOW_OTHER;
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

/* The frame a function without call-frame information has set up by pc, read from its
 * prologue as gdb's riscv prologue analyser does, a little further: stack adjustments
 * (addi/c.addi/c.addi16sp on sp, and add/sub/c.add of a register whose constant was built
 * by lui/addi/c.lui/c.li, as large frames do), a frame pointer set from sp (s0, kept by
 * functions that move sp by variable amounts) and register saves to the stack (sd/c.sdsp),
 * from the function's first instruction up to pc. Conditional branches and calls are
 * passed (shrink-wrapped prologues follow an early-exit test); code after a jump or return
 * is reached by a branch from the body, so the scan goes on there with the frame as the
 * prologue left it. The first save of a register is its save. Offsets are relative to the
 * CFA (sp at entry). */
struct pframe {
	int64_t down;   /* CFA - sp */
	bool sp_lost;   /* sp moved by an amount not known here (alloca) */
	bool fp_set;    /* s0 = sp + imm was done: CFA = s0 + fp_off */
	int64_t fp_off;
};

struct pscan {
	struct pframe f, whole; /* now; the frame as the prologue left it */
	int64_t k[32]; /* constants in registers */
	uint32_t known;
	struct prologue *pr;
};

static void p_const(struct pscan *ps, unsigned rd, int64_t v)
{
	if (rd == 8)
		ps->f.fp_set = false;
	if (rd && rd != 2) {
		ps->k[rd] = v;
		ps->known |= 1u << rd;
	}
}

static void p_save(struct pscan *ps, unsigned reg, int64_t off)
{
	if (!(ps->pr->saved & (1u << reg))) {
		ps->pr->save[reg] = off - ps->f.down;
		ps->pr->saved |= 1u << reg;
	}
}

static void p_fp(struct pscan *ps, int64_t imm) /* s0 = sp + imm */
{
	ps->f.fp_set = !ps->f.sp_lost;
	ps->f.fp_off = ps->f.down - imm;
	if (ps->f.down == ps->whole.down && !ps->f.sp_lost)
		ps->whole = ps->f;
}

/* a write to rd that is not tracked */
static void p_clobber(struct pscan *ps, unsigned rd)
{
	ps->known &= ~(1u << rd);
	if (rd == 8)
		ps->f.fp_set = false;
	if (rd == 2)
		ps->f.sp_lost = true;
}

static void p_sp(struct pscan *ps, int64_t add)
{
	ps->f.down -= add;
	if (ps->f.down > ps->whole.down && !ps->f.sp_lost)
		ps->whole = ps->f;
}

/* one 16-bit instruction; false: the code goes elsewhere (c.j, c.jr) */
static bool p_insn16(struct pscan *ps, uint32_t c)
{
	unsigned q = c & 3, f3 = (c >> 13) & 7, rd = (c >> 7) & 31, rs2 = (c >> 2) & 31;
	int64_t imm6 = sext(((c >> 12) & 1) << 5 | rs2, 6);
	if (q == 0 && f3 == 0 && ((c >> 2) & 7) == 0) { /* c.addi4spn s0, sp, imm */
		p_fp(ps, (int64_t)(((c >> 11) & 3) << 4 | ((c >> 7) & 15) << 6 | ((c >> 6) & 1) << 2 |
				   ((c >> 5) & 1) << 3));
	} else if (q == 0 && f3 == 0) {
		p_clobber(ps, 8 + ((c >> 2) & 7));
	} else if (q == 1 && f3 == 3 && rd == 2) { /* c.addi16sp */
		uint64_t im = ((c >> 12) & 1) << 9 | ((c >> 6) & 1) << 4 | ((c >> 5) & 1) << 6 |
			      ((c >> 3) & 3) << 7 | ((c >> 2) & 1) << 5;
		p_sp(ps, sext(im, 10));
	} else if (q == 1 && f3 == 3) { /* c.lui */
		p_const(ps, rd, imm6 * 4096);
	} else if (q == 1 && f3 == 2) { /* c.li */
		p_const(ps, rd, imm6);
	} else if (q == 1 && f3 == 0 && rd == 2) { /* c.addi sp */
		p_sp(ps, imm6);
	} else if (q == 1 && (f3 == 0 || f3 == 1) && (ps->known & (1u << rd))) { /* c.addi(w) */
		int64_t v = ps->k[rd] + imm6;
		p_const(ps, rd, f3 == 1 ? (int64_t)(int32_t)v : v);
	} else if (q == 2 && f3 == 7) { /* c.sdsp */
		p_save(ps, rs2, (int64_t)(((c >> 10) & 7) << 3 | ((c >> 7) & 7) << 6));
	} else if (q == 2 && f3 == 4 && ((c >> 12) & 1) && rd == 2 && rs2) { /* c.add sp, rs2 */
		if (ps->known & (1u << rs2))
			p_sp(ps, ps->k[rs2]);
		else
			ps->f.sp_lost = true;
	} else if (q == 2 && f3 == 4 && rd == 8 && rs2 == 2 && !((c >> 12) & 1)) { /* c.mv s0, sp */
		p_fp(ps, 0);
	} else if ((q == 1 && f3 == 5) || (q == 2 && f3 == 4 && !((c >> 12) & 1) && !rs2 && rd)) {
		return false; /* c.j, c.jr */
	} else if (q == 0 && (f3 == 1 || f3 == 2 || f3 == 3)) {
		p_clobber(ps, 8 + ((c >> 2) & 7)); /* c.fld c.lw c.ld */
	} else if (q == 1 && f3 == 4) {
		p_clobber(ps, 8 + ((c >> 7) & 7)); /* c.srli c.srai c.andi c.sub ... */
	} else if (rd && q != 0 && !(q == 1 && f3 >= 5) && !(q == 2 && f3 >= 5)) {
		p_clobber(ps, rd); /* anything else that writes rd */
	}
	return true;
}

/* one 32-bit instruction; false: the code goes elsewhere (jump, return, tail call) */
static bool p_insn32(struct pscan *ps, uint32_t i)
{
	unsigned op = i & 0x7f, rd = (i >> 7) & 31, f3 = (i >> 12) & 7, rs1 = (i >> 15) & 31,
		 rs2 = (i >> 20) & 31, f7 = i >> 25;
	int64_t imm = sext(i >> 20, 12);
	if ((op == 0x6f || op == 0x67) && rd == 0)
		return false;
	if (op == 0x13 && f3 == 0 && rd == 2 && rs1 == 2) { /* addi sp, sp, imm */
		p_sp(ps, imm);
	} else if (op == 0x23 && f3 == 3 && rs1 == 2) { /* sd rs2, imm(sp) */
		p_save(ps, rs2, sext((i >> 25) << 5 | ((i >> 7) & 31), 12));
	} else if (op == 0x13 && f3 == 0 && rd == 8 && rs1 == 2) { /* addi s0, sp, imm */
		p_fp(ps, imm);
	} else if (op == 0x33 && f3 == 0 && rd == 2 && (rs1 == 2 || rs2 == 2) && (f7 == 0 || f7 == 0x20)) {
		unsigned other = rs1 == 2 ? rs2 : rs1; /* add/sub sp, sp, reg */
		if ((ps->known & (1u << other)) && !(f7 == 0x20 && rs1 != 2))
			p_sp(ps, f7 == 0x20 ? -ps->k[other] : ps->k[other]);
		else
			ps->f.sp_lost = true;
	} else if (op == 0x13 && f3 == 0 && rd == 2 && rs1 == 8 && ps->f.fp_set) { /* addi sp, s0, imm */
		ps->f.down = ps->f.fp_off - imm;
		ps->f.sp_lost = false;
	} else if (op == 0x37) { /* lui */
		p_const(ps, rd, (int64_t)(int32_t)(i & 0xfffff000));
	} else if ((op == 0x13 || op == 0x1b) && f3 == 0 && rd != 2 && rd != 8 &&
		   (rs1 == 0 || (ps->known & (1u << rs1)))) { /* addi(w) of a constant */
		int64_t v = (rs1 ? ps->k[rs1] : 0) + imm;
		p_const(ps, rd, op == 0x1b ? (int64_t)(int32_t)v : v);
	} else if (op != 0x63 && op != 0x23 && op != 0x27 && op != 0x0f && op != 0x73 && rd) {
		p_clobber(ps, rd); /* sp moved otherwise (alloca), s0 reused, a register */
	}
	return true;
}

static bool prologue(const uint8_t *code, size_t len, uint64_t pc_off, struct prologue *pr)
{
	struct pscan ps = { .pr = pr };
	memset(pr, 0, sizeof(*pr));
	for (size_t at = 0; at < pc_off;) {
		if (at + 2 > len || at >= 65536)
			return false;
		uint32_t c = code[at] | (uint32_t)code[at + 1] << 8;
		bool on;
		if ((c & 3) != 3) {
			on = p_insn16(&ps, c);
			at += 2;
		} else {
			if (at + 4 > len)
				return false;
			on = p_insn32(&ps, c | (uint32_t)code[at + 2] << 16 | (uint32_t)code[at + 3] << 24);
			at += 4;
		}
		/* after a jump or return, code is reached by a branch from the body: the frame is
		 * as the prologue left it */
		if (!on)
			ps.f = ps.whole;
	}
	/* a frame pointer, once set, places the frame wherever sp has moved */
	if (ps.f.fp_set) {
		pr->cfa_reg = 8;
		pr->cfa_off = ps.f.fp_off;
		return true;
	}
	if (ps.f.sp_lost || ps.f.down < 0)
		return false;
	pr->cfa_reg = 2;
	pr->cfa_off = ps.f.down;
	return true;
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
	.flow = flow,
	.mem_addr = mem_addr,
	.priv = priv,
	/* non-leaf frame: ra at fp-8, caller's fp at fp-16 */
	.fr_ra = -8, .fr_fp = -16,
	.leaf_fp_slot = true,
	.prologue = prologue,
	/* struct pt_regs { epc, ra, sp, gp, tp, t0-t2, s0, ... t6, status, ... } */
	.pr_pc = 0, .pr_ra = 8, .pr_sp = 16, .pr_fp = 64, .pr_mode = 256,
	.pr_user = pr_user,
	.switch_sym = "__switch_to",
	.entry_lo_sym = "handle_exception", .entry_hi_sym = "handle_syscall",
	.asm_lo_sym = "handle_exception", .asm_hi_sym = "__switch_to", /* entry.S up to it */
	.kernel_min = 0xff00000000000000ULL,
	.e_machine = 243, /* EM_RISCV */
};
