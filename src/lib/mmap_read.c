/* SPDX-License-Identifier: MIT */
/*
 * Syscall-free counter reads through the perf user page (see the comments on
 * struct perf_event_mmap_page in linux/perf_event.h): the kernel publishes
 * the counter's base offset, the hardware counter index (0 = not on a counter
 * now), its width, and enabled/running times; `lock` is a sequence count we
 * re-check to get a consistent snapshot.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "internal.h"

#define barrier() __asm__ __volatile__("" ::: "memory")

bool mmap_usable(void *page, char *why, size_t len)
{
	struct perf_event_mmap_page *pc = page;
	if (!arch_has_user_pmc()) {
		snprintf(why, len, "no user-space counter instruction support built for this ISA");
		return false;
	}
	if (!pc->cap_user_rdpmc) {
		snprintf(why, len, "kernel does not allow user-space counter reads: %s",
			 arch_user_access_hint());
		return false;
	}
	return true;
}

int mmap_read(void *page, struct hpm_value *val)
{
	volatile struct perf_event_mmap_page *pc = page;
	uint64_t count, enabled, running;
	uint32_t seq, idx;
	do {
		seq = pc->lock;
		barrier();
		enabled = pc->time_enabled;
		running = pc->time_running;
		idx = pc->index;
		count = (uint64_t)pc->offset;
		if (!pc->cap_user_rdpmc || !idx)
			return -EAGAIN;
		uint16_t width = pc->pmc_width;
		uint64_t pmc = arch_read_pmc(idx - 1);
		/* sign-extend the counter's width, as the kernel's offset expects */
		if (width && width < 64) {
			pmc <<= 64 - width;
			pmc = (uint64_t)((int64_t)pmc >> (64 - width));
		}
		count += pmc;
		/* time since the page was last updated, when the kernel lets us see it */
		if (pc->cap_user_time && enabled != running) {
			uint64_t cyc;
			if (!arch_read_timestamp(&cyc))
				return -EAGAIN;
			uint64_t t_mult = pc->time_mult, t_shift = pc->time_shift;
			uint64_t quot, rem, delta;
			if (pc->cap_user_time_short)
				cyc = pc->time_cycles + ((cyc - pc->time_cycles) & pc->time_mask);
			quot = cyc >> t_shift;
			rem = cyc & (((uint64_t)1 << t_shift) - 1);
			delta = pc->time_offset + quot * t_mult + ((rem * t_mult) >> t_shift);
			enabled += delta;
			if (idx)
				running += delta;
		}
		barrier();
	} while (pc->lock != seq);
	if (enabled != running && !pc->cap_user_time)
		return -EAGAIN; /* multiplexed and no clock: read(2) gives exact times */
	val->raw = count;
	val->enabled = enabled;
	val->running = running;
	val->scaled = hpm_scale(count, enabled, running);
	val->path = HPM_READ_MMAP;
	return 0;
}
