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
