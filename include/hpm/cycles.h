/* SPDX-License-Identifier: MIT */
/*
 * Direct cycle counter: read a CPU's cycle or timestamp counter from user
 * space with the fewest instructions, for timing tight loops.
 *
 * Sources (what each ISA offers, best first when HPM_CC_AUTO picks):
 *
 *   HPM_CC_PMU_DIRECT  core cycles read with one instruction, no kernel help
 *                      per read: x86 rdpmc 0x40000001 (Intel fixed counter,
 *                      needs /sys/bus/event_source/devices/cpu/rdpmc = 2),
 *                      arm64 pmccntr_el0 (needs a kernel module enabling EL0
 *                      access), riscv64 rdcycle (needs scounteren.CY; Linux
 *                      >= 6.6 sets it only with kernel.perf_user_access = 2).
 *   HPM_CC_PMU_MMAP    core cycles through a perf "cycles" event's user page
 *                      and rdpmc / mrs pmccntr_el0 / csrr: x86 needs rdpmc >= 1,
 *                      arm64 kernel.perf_user_access = 1 (Linux >= 5.17),
 *                      riscv64 kernel.perf_user_access = 1 (Linux >= 6.6).
 *   HPM_CC_TIMESTAMP   fixed-rate timestamp counter: rdtsc, cntvct_el0, rdtime.
 *                      Always readable (unless a process disabled it); counts
 *                      time, not core cycles, when the clock frequency moves.
 *   HPM_CC_PERF_READ   core cycles through read(2) on a perf event: exact but
 *                      ~1 us per read. Never chosen by HPM_CC_AUTO.
 *   HPM_CC_CLOCK       clock_gettime(CLOCK_MONOTONIC), in ns. Last resort.
 *
 * Every direct source is probed in a child process first (a forbidden counter
 * instruction kills it with SIGILL/SIGSEGV, not the caller), and its values
 * are checked: a counter that is constant, goes backwards, or ticks at an
 * implausible rate (QEMU's riscv64 rdcycle) is reported and never used.
 * hpm never changes a kernel setting; hpm_cc_status.why names the one an
 * administrator of a single-user machine could change.
 *
 *   struct hpm_cycles *cc;
 *   if (hpm_cycles__open(&cc, HPM_CC_AUTO) == 0) {
 *       uint64_t t0 = hpm_cycles__read(cc);  ...loop...
 *       uint64_t dt = hpm_cycles__read(cc) - t0;   // in hpm_cycles__unit(cc)
 *       hpm_cycles__close(cc);
 *   }
 */
#ifndef HPM_CYCLES_H
#define HPM_CYCLES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum hpm_cc_source {
	HPM_CC_AUTO = 0,
	HPM_CC_PMU_DIRECT = 1,
	HPM_CC_PMU_MMAP = 2,
	HPM_CC_TIMESTAMP = 3,
	HPM_CC_PERF_READ = 4,
	HPM_CC_CLOCK = 5,
};
#define HPM_CC_NSOURCES 6

/* What the probe of one source found. */
struct hpm_cc_status {
	int source;        /* enum hpm_cc_source */
	const char *name;  /* "rdtsc", "cntvct_el0", "pmccntr_el0 via perf mmap", ... */
	int available;     /* 1: usable; 0: not here (why says why) */
	int core_cycles;   /* 1: counts core clock cycles; 0: fixed-rate ticks or ns */
	double hz;         /* ticks per second: architectural (cntfrq_el0, device-tree
	                      timebase-frequency, TSC) or measured against CLOCK_MONOTONIC */
	int hz_measured;   /* 1 when hz was measured, not read from the hardware */
	uint64_t resolution; /* smallest non-zero difference between two reads seen */
	double read_ns;    /* cost of one read, ns (median of a burst) */
	char why[512];     /* not available: the reason and the setting; available: notes */
};

struct hpm_cycles;

/* Probe every source (children are forked for the direct ones). Fills
 * st[0 .. HPM_CC_NSOURCES-2] in the order of enum hpm_cc_source (AUTO is not a
 * source); returns how many entries were written, or -errno. */
int hpm_cycles__probe(struct hpm_cc_status *st, int max);

/* Open a counter: a specific source, or HPM_CC_AUTO for the best syscall-free
 * one (PMU direct > PMU mmap > timestamp > clock). -ENOTSUP when the source is
 * not available here; hpm_cycles__error() then says why. */
int hpm_cycles__open(struct hpm_cycles **cc, int source);
void hpm_cycles__close(struct hpm_cycles *cc);
/* Reason the last hpm_cycles__open() of this thread failed. */
const char *hpm_cycles__error(void);

/* Current value. Ordered against surrounding instructions (lfence on x86,
 * isb on arm64): work before the call finishes first. */
uint64_t hpm_cycles__read(struct hpm_cycles *cc);
const struct hpm_cc_status *hpm_cycles__status(const struct hpm_cycles *cc);
/* "cycles", "ticks" or "ns" */
const char *hpm_cycles__unit(const struct hpm_cycles *cc);
/* Convert a difference of reads to ns (uses status.hz). */
double hpm_cycles__to_ns(const struct hpm_cycles *cc, uint64_t delta);
const char *hpm_cc_source_name(int source); /* "pmu-direct", "pmu-mmap", ... */

/* Inline timestamp reads for the tightest loops, no call and no handle:
 * hpm_ts_begin() waits for earlier instructions before reading, hpm_ts_end()
 * waits for the measured code before reading and keeps later code after it
 * (x86: lfence;rdtsc / rdtscp;lfence; arm64: isb;mrs cntvct_el0; riscv64:
 * rdtime, which the ISA keeps in order). Units: the timestamp source. */
static inline uint64_t hpm_ts_begin(void)
{
#if defined(__x86_64__)
	uint32_t lo, hi;
	__asm__ __volatile__("lfence\n\trdtsc\n\tlfence" : "=a"(lo), "=d"(hi)::"memory");
	return (uint64_t)hi << 32 | lo;
#elif defined(__aarch64__)
	uint64_t v;
	__asm__ __volatile__("isb\n\tmrs %0, cntvct_el0\n\tisb" : "=r"(v)::"memory");
	return v;
#elif defined(__riscv) && __riscv_xlen == 64
	uint64_t v;
	__asm__ __volatile__("rdtime %0" : "=r"(v)::"memory");
	return v;
#else
	return 0;
#endif
}

static inline uint64_t hpm_ts_end(void)
{
#if defined(__x86_64__)
	uint32_t lo, hi, aux;
	__asm__ __volatile__("rdtscp\n\tlfence" : "=a"(lo), "=d"(hi), "=c"(aux)::"memory");
	return (uint64_t)hi << 32 | lo;
#else
	return hpm_ts_begin();
#endif
}

#ifdef __cplusplus
}
#endif
#endif
