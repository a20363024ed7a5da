/* SPDX-License-Identifier: MIT */
/*
 * riscv64: the counter CSRs cycle (0xc00), time, instret, hpmcounter3..31 are
 * readable in U-mode when the kernel sets scounteren, which Linux >= 6.6 does
 * for mmapped events when kernel.perf_user_access=1 (2 = legacy: only
 * cycle/instret). The CSR number is an immediate, hence the table.
 */
#include "../internal.h"

#define CSR_CASE(n)                                                        \
	case n:                                                            \
		__asm__ __volatile__("csrr %0, %1" : "=r"(v) : "i"(0xc00 + n)); \
		break;

uint64_t arch_read_pmc(unsigned idx)
{
	uint64_t v = 0;
	switch (idx) {
		CSR_CASE(0) CSR_CASE(1) CSR_CASE(2) CSR_CASE(3) CSR_CASE(4) CSR_CASE(5)
		CSR_CASE(6) CSR_CASE(7) CSR_CASE(8) CSR_CASE(9) CSR_CASE(10) CSR_CASE(11)
		CSR_CASE(12) CSR_CASE(13) CSR_CASE(14) CSR_CASE(15) CSR_CASE(16) CSR_CASE(17)
		CSR_CASE(18) CSR_CASE(19) CSR_CASE(20) CSR_CASE(21) CSR_CASE(22) CSR_CASE(23)
		CSR_CASE(24) CSR_CASE(25) CSR_CASE(26) CSR_CASE(27) CSR_CASE(28) CSR_CASE(29)
		CSR_CASE(30) CSR_CASE(31)
	}
	return v;
}

bool arch_has_user_pmc(void)
{
	return true;
}

bool arch_read_timestamp(uint64_t *tsc)
{
	uint64_t v;
	__asm__ __volatile__("rdtime %0" : "=r"(v));
	*tsc = v;
	return true;
}

const char *arch_user_access_hint(void)
{
	return "kernel.perf_user_access is 0 or the kernel is older than 6.6 (an "
	       "administrator may set 'sysctl kernel.perf_user_access=1')";
}

void arch_prepare_self_attr(struct perf_event_attr *attr)
{
	(void)attr; /* Linux >= 6.6 grants access per sysctl, no per-event bit */
}

/* ---- cycle counter (cycles.c) ----------------------------------------- */
#include <stdio.h>
#include <stdlib.h>

const char *arch_cc_timestamp_name(void)
{
	return "rdtime";
}

/* The ISA orders counter CSR reads with the instructions around them. */
uint64_t arch_cc_timestamp(void)
{
	uint64_t v;
	__asm__ __volatile__("rdtime %0" : "=r"(v)::"memory");
	return v;
}

/* The timer's frequency is in the device tree (cpus/timebase-frequency, one
 * big-endian 32-bit cell). */
double arch_cc_timestamp_hz(void)
{
	unsigned char b[8];
	FILE *f = fopen("/proc/device-tree/cpus/timebase-frequency", "rb");
	if (!f)
		return 0;
	size_t n = fread(b, 1, sizeof(b), f);
	fclose(f);
	if (n == 4)
		return (double)((uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3]);
	if (n == 8)
		return (double)((uint64_t)b[0] << 56 | (uint64_t)b[1] << 48 | (uint64_t)b[2] << 40 |
				(uint64_t)b[3] << 32 | (uint64_t)b[4] << 24 | (uint64_t)b[5] << 16 |
				(uint64_t)b[6] << 8 | b[7]);
	return 0;
}

void arch_cc_fence(void)
{
	__asm__ __volatile__("" ::: "memory");
}

const char *arch_cc_direct_name(void)
{
	return "rdcycle";
}

uint64_t arch_cc_direct(void)
{
	uint64_t v;
	__asm__ __volatile__("rdcycle %0" : "=r"(v)::"memory");
	return v;
}

/* scounteren.CY decides; Linux >= 6.6 sets it for every task only with
 * kernel.perf_user_access=2 (legacy). Older kernels set it unconditionally,
 * so probe either way. */
int arch_cc_direct_allowed(char *why, size_t len)
{
	char buf[16];
	if (read_small_file("/proc/sys/kernel/perf_user_access", buf, sizeof(buf)) > 0)
		snprintf(why, len,
			 "kernel.perf_user_access is %d; 2 (legacy) lets every task run "
			 "rdcycle/rdinstret (sysctl kernel.perf_user_access=2 as root)",
			 atoi(buf));
	else
		snprintf(why, len,
			 "no kernel.perf_user_access (Linux < 6.6): the kernel and SBI firmware decide "
			 "scounteren.CY, and rdcycle traps when it is clear");
	return 1;
}

const char *arch_cc_mmap_hint(void)
{
	char buf[16];
	if (read_small_file("/proc/sys/kernel/perf_user_access", buf, sizeof(buf)) <= 0)
		return "this kernel has no kernel.perf_user_access (Linux < 6.6): RISC-V counters "
		       "are readable through the perf mmap page from Linux 6.6 on";
	return arch_user_access_hint();
}
