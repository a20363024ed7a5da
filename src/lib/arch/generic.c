/* SPDX-License-Identifier: MIT */
/* Other ISAs: no user-space counter reads; everything goes through read(2). */
#include "../internal.h"

uint64_t arch_read_pmc(unsigned idx)
{
	(void)idx;
	return 0;
}

bool arch_has_user_pmc(void)
{
	return false;
}

bool arch_read_timestamp(uint64_t *tsc)
{
	*tsc = 0;
	return false;
}

const char *arch_user_access_hint(void)
{
	return "not implemented for this ISA";
}

void arch_prepare_self_attr(struct perf_event_attr *attr)
{
	(void)attr;
}
