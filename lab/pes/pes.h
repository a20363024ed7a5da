/* SPDX-License-Identifier: MIT */
/* hpmpes: precise event sampling inside QEMU (a TCG plugin). Shared declarations.
 *
 * Counting model (count.c): a callback at the start of every executed translation block
 * (TB) settles how many instructions of the previous TB really completed, updates the
 * exact event totals and, when the sampling threshold falls inside the TB about to run,
 * arms a conditional callback on exactly the instruction at which the count reaches it.
 * Docs: docs/pes.md. */
#ifndef HPMPES_H
#define HPMPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "qemu_api.h"

#define PES_MAX_VCPUS 64
#define PES_MAX_CHAIN 127 /* perf's default callchain limit */

enum priv { PRIV_USER, PRIV_KERNEL, PRIV_FIRMWARE };
enum flow { FLOW_OTHER, FLOW_CALL, FLOW_RET };
enum event { EV_INSNS, EV_LOADS, EV_STORES, EV_BRANCHES, EV_TAKEN };

/* instruction classes (decided at translation by the ISA decoder) */
enum {
	IC_LOAD = 1,
	IC_STORE = 2,
	IC_BRANCH = 4, /* any control transfer: jumps, calls, returns, conditional branches */
	IC_COND = 8,   /* conditional branch (taken or not decided at run time) */
	IC_STOP = 16,  /* may stop the block without completing: trap, fault, MMIO re-translation */
	IC_MEMEV = 32, /* completes only with a memory access QEMU reports to plugins */
};
#define IC_MEM (IC_LOAD | IC_STORE)
/* an ordinary load or store: may fault, and always performs an access when it completes */
#define IC_LD (IC_LOAD | IC_STOP | IC_MEMEV)
#define IC_ST (IC_STORE | IC_STOP | IC_MEMEV)

/* register ids of struct regs: 0..31 the ISA's integer registers (aarch64: 31 = sp) */
enum { R_PC = 32, R_MODE, R_MEPC, R_MSTATUS, R_ROOT, R_TCR, R_NREGS };

struct insn {
	uint64_t vaddr;
	uint32_t raw;
	uint8_t size, cls;
};

struct xslot; /* exact.c */

/* a function-aligned piece of a TB, for exact mode (kernel TBs are cut at System.map
 * symbols so a block that falls through into the next function is split) */
struct tbseg {
	uint16_t first;
	uint32_t cache_epoch; /* one-entry cache: the task epoch that last ran this piece */
	uint32_t cache_path;
	struct xslot *cache;
};

struct tb {
	uint64_t id;          /* distinct per record: arms name (id, index) */
	uint64_t vaddr, fall; /* first instruction, address after the last one */
	uint32_t n;
	uint32_t k0;        /* instructions sure to complete once the TB starts */
	uint8_t priv;
	uint8_t nseg;
	int64_t func;         /* exact mode, kernel: kfunc() of the first instruction */
	uint16_t *pre_ld, *pre_st; /* loads/stores among the first k instructions, k = 0..n */
	struct tbseg *seg;
	struct tb *hnext; /* translation cache (identical retranslations share one record) */
	uint64_t hash;
	struct insn in[];
};

/* per-vCPU scoreboard entry: written by inline ops QEMU generates into the TB code */
struct sb {
	uint64_t pos;  /* full mode: instructions of the current TB known to have completed */
	uint64_t arm;  /* (TB id << 12 | index) of the instruction that takes the next sample */
	uint64_t left; /* fast mode: events before the next sample */
	uint64_t icnt; /* fast mode, events other than instructions: instructions completed */
	uint64_t done; /* id of the last block whose final memory access completed */
};
#define ARM_NONE UINT64_MAX
#define ARM(tb, i) ((tb)->id << 12 | (i))
#define FAR (1ULL << 62) /* next_at/left before sampling starts: never reached */

struct task;

struct vcpu {
	struct sb *sb;
	struct tb *cur;         /* TB whose start was seen last */
	struct task *task;      /* running task (tracked at context switches) */
	struct task *cur_task;  /* task at the start of cur */
	uint64_t insns, ev;     /* exact totals up to the start of cur */
	uint64_t tb_insns;      /* all vCPUs' instructions before cur started (time stamps) */
	uint64_t next_at, last_at; /* event count of the next / last sample */
	uint64_t late_pc;       /* a sample due at an instruction that ran without callbacks
				 * (a taken branch, an MMIO re-execution): taken at the next
				 * block's start under this PC */
	bool late;
	/* exact mode: the kernel callers of the running function (an interned chain) and
	 * the function and task they were read for */
	uint32_t path;
	const struct task *path_task;
};

/* a function's frame read from its prologue (for code without call-frame information):
 * CFA = register cfa_reg (sp, or the frame pointer of a function that moves sp by
 * variable amounts) + cfa_off; register r saved at CFA + save[r] when bit r of saved is set */
struct prologue {
	int cfa_reg;
	int64_t cfa_off;
	int64_t save[32];
	uint32_t saved;
};

/* ISA description (riscv64.c, aarch64.c) */
struct regs;
struct isa {
	const char *name;
	const char *reg_names[R_NREGS];
	int r_sp, r_fp, r_ra, r_arg0, r_arg1, r_arg2;
	/* class bits of one instruction; raw gets its encoding */
	unsigned (*classify)(const uint8_t *p, size_t len, uint32_t *raw);
	/* data address of a load/store about to execute at pc */
	bool (*mem_addr)(uint32_t raw, uint64_t pc, struct regs *r, uint64_t *addr);
	/* privilege from the mode register (riscv priv, arm64 cpsr) */
	enum priv (*priv)(uint64_t mode);
	/* a call (links a return address), a return, or neither (exact mode's call paths) */
	int (*flow)(uint32_t raw);
	/* frame record at fp: offsets of the return address and the caller's fp */
	int fr_ra, fr_fp;
	bool leaf_fp_slot; /* riscv: a leaf keeps only the caller's fp, at the ra slot */
	/* the frame set up by the code from a function's start to pc_off (NULL: frame
	 * pointers are walked instead) */
	bool (*prologue)(const uint8_t *code, size_t len, uint64_t pc_off, struct prologue *pr);
	/* pt_regs: offsets of the user pc, sp, fp, ra and mode word; user mode test */
	int pr_pc, pr_sp, pr_fp, pr_ra, pr_mode;
	bool (*pr_user)(uint64_t mode);
	const char *switch_sym; /* context switch: (prev, next) in arg0, arg1 */
	/* kernel entry code that is still saving the user registers into pt_regs */
	const char *entry_lo_sym, *entry_hi_sym;
	/* all of the entry assembly (exact mode: a call made there starts no frame chain) */
	const char *asm_lo_sym, *asm_hi_sym;
	uint64_t kernel_min;    /* lowest kernel virtual address */
	uint16_t e_machine;
};
extern const struct isa isa_riscv64, isa_aarch64;

/* registers of the vCPU in a callback, read on first use */
struct regs {
	uint64_t v[R_NREGS];
	uint64_t have;
};
uint64_t reg(struct regs *r, int id);
bool reg_ok(int id);
bool gread(uint64_t addr, void *dst, size_t len); /* guest virtual memory, current mode */
bool gread64(uint64_t addr, uint64_t *v);
void guest_init_regs(void);

/* options and global state (plugin.c) */
struct opts {
	const struct isa *isa;
	const char *out, *kernel, *offsets, *bins, *exact, *start;
	enum event event;
	uint64_t period, seed;
};
extern struct opts opt;
extern struct vcpu vcpus[PES_MAX_VCPUS];
extern unsigned nvcpus;
extern uint64_t g_insns; /* all vCPUs: time stamp of records */
extern const char *event_names[];

struct hookpt;
/* counting and sampling (count.c: full mode, a callback per block; fast.c: inline
 * counters, a callback only where a sample falls) */
extern bool fast_mode;
void count_init(void);
void on_tb(unsigned vcpu, void *tb);
void on_sample(unsigned vcpu, void *tb);
void count_finish(void);
uint64_t count_total(void);
bool count_started(void);
void count_start(unsigned vcpu, const struct hookpt *h);
extern uint64_t t_origin; /* instruction count at the start trigger */
bool sampled_insn(const struct tb *tb, uint32_t i);
uint64_t ev_prefix(const struct tb *tb, uint32_t k);
uint64_t arm_index(const struct tb *tb, uint64_t ev0, uint64_t next_at, int64_t after);
uint64_t draw_period(void);
void count_late(struct vcpu *v, uint64_t pc);
bool unsure(const struct tb *t, uint32_t i);
void instrument_fast(struct qemu_plugin_tb *qtb, struct qemu_plugin_insn **qi, struct tb *t);
void mark_done(struct qemu_plugin_insn **qi, const struct tb *t);
void on_tb_fast(unsigned vcpu, void *tb);
void fast_start(unsigned vcpu, const struct hookpt *h, uint64_t period);
void on_done_fast(unsigned vcpu, void *tb);
uint64_t fast_insns(unsigned vcpu, const struct tb *tb, uint32_t j);
extern qemu_plugin_u64 sb_pos, sb_arm, sb_left, sb_icnt, sb_done;
extern uint64_t n_samples, n_partial;

struct tb *tb_by_id(uint64_t id);

/* a hooked instruction: its block and index (for the time stamp) */
struct hookpt {
	const struct tb *tb;
	uint32_t i;
};
uint64_t hook_time(unsigned vcpu, const struct hookpt *h);

/* kernel symbols (ksyms.c) */
bool ksyms_load(const char *path, char *err, size_t errlen);
uint64_t ksym_addr(const char *name); /* 0: absent */
bool ktext(uint64_t addr);
int64_t kfunc(uint64_t addr); /* index of the function containing addr, -1: none */
bool kfunc_start(uint64_t addr); /* addr starts a function (exact-mode TB splitting) */
void ksym_used(uint64_t addr);
void ksyms_emit(void); /* kallsyms feature section of the used symbols */
uint64_t ksym_text(void), ksym_etext(void);
const char *ksym_ref(void); /* "_text" or "_stext" */

/* host copies of guest binaries (elf.c) */
struct exe {
	char name[64];
	bool found;
	uint64_t *fstart; /* sorted function starts */
	size_t nf;
	struct {
		uint64_t vaddr, offset, memsz;
		bool exec;
	} seg[16];
	int nseg;
	struct cfi *cfi; /* call-frame information (cfi.c), NULL: none */
	uint8_t *text;   /* the executable segment's bytes (prologues) */
	uint64_t text_va, text_len;
};
struct exe *exe_get(const char *name);
int64_t exe_func(const struct exe *e, uint64_t addr);
uint64_t exe_pgoff(const struct exe *e, uint64_t start, bool *ok);

/* guest tasks (task.c) */
struct task {
	uint64_t ptr;
	int32_t pid, tgid;
	char comm[16];
	uint64_t stack;
	uint32_t epoch; /* exact mode: changes with comm */
	bool user;      /* has an mm */
	uint64_t mm, start_code, end_code;
	char exe_name[64];
	struct exe *exe;
	uint64_t mapped_mm, mapped_start; /* last MMAP2 written */
	struct task *parent; /* process of a thread, real parent of a process */
	int32_t ppid, ptid;  /* as FORK names them */
	bool announced;      /* FORK/COMM written */
	struct task *hnext;
};
bool offsets_load(const char *path, char *err, size_t errlen);
struct task *task_boot(void); /* init_task, before the first switch */
void on_switch(unsigned vcpu, void *ud);
void on_comm(unsigned vcpu, void *ud);
void on_exec_done(unsigned vcpu, void *ud);
void on_mmap(unsigned vcpu, void *ud);       /* perf_event_mmap: a new mapping */
bool task_can_map(void);                     /* the offsets on_mmap needs are known */
extern uint64_t n_maps_unnamed;              /* executable file mappings left unwritten */
void task_need_map(struct task *t, unsigned vcpu, uint64_t time); /* MMAP2 when due */
void task_announce(struct task *t, unsigned vcpu, uint64_t time);
uint64_t task_pt_regs(const struct task *t);
uint64_t task_thread_size(void);
uint64_t task_mm_pgd_off(void);
uint64_t task_mm_off(void);

/* a user task's memory from a kernel-mode callback (uaccess.c) */
bool uread64(const struct task *t, struct regs *r, uint64_t va, uint64_t *v);
void uaccess_begin(void);
void uaccess_learn(const struct task *t, struct regs *r); /* at an exec's end */
uint64_t task_live_mm(const struct task *t);
extern uint64_t n_tasks;

/* user stacks by call-frame information (cfi.c) */
struct uregs {
	uint64_t v[32]; /* DWARF integer registers: riscv x0-x31, arm64 x0-x30 and sp */
	uint64_t known; /* bit per register */
	/* values are read when a rule needs them: a walk uses few of the registers, and
	 * reading every saved one cost microseconds a sample (measured on hpm-loop) */
	uint64_t lazy;  /* bit per register still in src (the vCPU's registers) */
	uint64_t mlazy; /* bit per register still in memory, at at[i] */
	uint64_t at[32];
	struct regs *src;
	bool (*rd)(void *ctx, uint64_t a, uint64_t *v);
	void *ctx;
	uint64_t pc;
	bool caller; /* pc is a return address (every frame but the first) */
};
enum { CFI_OK, CFI_NONE /* no CFI covers pc */, CFI_END /* outermost frame */, CFI_FAIL };
void cfi_load(struct exe *e, const void *eh, size_t eh_len, uint64_t eh_va, const void *dbg, size_t dbg_len);
bool ureg_get(struct uregs *u, int i, uint64_t *v); /* false: not known */
size_t cfi_count(const struct exe *e);
void cfi_free(struct cfi *c);
int cfi_step(const struct exe *e, struct uregs *u, bool (*rd)(void *ctx, uint64_t a, uint64_t *v), void *ctx);
int prologue_step(const struct exe *e, struct uregs *u, bool (*rd)(void *ctx, uint64_t a, uint64_t *v), void *ctx);

/* call chains (unwind.c) */
int unwind(struct regs *r, struct task *t, enum priv priv, uint64_t pc, uint64_t *chain);
int unwind_kernel_callers(struct regs *r, uint64_t pc, uint64_t *chain); /* callers only */
extern uint64_t n_chain_user_cut, n_chain_entry, n_chain_cfi, n_chain_fp, n_chain_no_mm;
void unwind_init(void);

/* perf.data output (output.c) */
bool out_open(char *err, size_t errlen);
void out_sample(unsigned cpu, enum priv priv, const struct task *t, uint64_t pc, uint64_t time,
		uint64_t addr, uint64_t period, const uint64_t *chain, int nchain);
void out_fork(const struct task *t, int32_t ppid, int32_t ptid, uint64_t time, unsigned cpu);
void out_comm(const struct task *t, bool exec, uint64_t time, unsigned cpu);
void out_mmap2(const struct task *t, uint64_t start, uint64_t len, uint64_t pgoff,
	       const char *name, uint64_t time, unsigned cpu);
void out_feat_raw(int bit, const void *p, size_t len);
void out_osrelease(const char *release);
bool out_close(char *err, size_t errlen);
extern bool out_enabled;

/* exact mode (exact.c) */
extern bool exact_enabled;
uint32_t exact_epoch(int32_t tgid, int32_t tid, const char *comm);
void exact_account(struct tb *tb, const struct task *t, uint32_t path, uint32_t executed);
/* at a block's start; prev: the block before when it ran to its end, else NULL */
void exact_path_at(struct vcpu *v, const struct tb *prev, const struct tb *tb);
bool in_entry_code(uint64_t pc); /* unwind.c */
bool in_entry_asm(uint64_t pc);
extern uint64_t n_path_walks, n_path_steps;
bool exact_write(const char *path, char *err, size_t errlen);

void pes_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif
