/* SPDX-License-Identifier: MIT */
/* Binary search in arrays sorted by a uint64_t key stored first in each element (function
 * starts, symbol tables, unwind-table ranges): one place for the lookups of hpm top's
 * symbols and the lab sampler's kernel symbols, executables and call-frame tables. */
#ifndef HPM_SORTED_H
#define HPM_SORTED_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* how many leading elements have a key <= key: the element that holds key (the last start
 * at or below it) is the one before, index count - 1; 0 means none */
static inline size_t sorted_count_le(const void *base, size_t n, size_t stride, uint64_t key)
{
	const unsigned char *p = base;
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t k;
		memcpy(&k, p + mid * stride, sizeof(k));
		if (k <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

#endif
