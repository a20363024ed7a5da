/* SPDX-License-Identifier: MIT */
/* PLT slots named "<target>@plt" for hpm top's symbols (src/sym/tasksyms.c): the C twin of
 * python/hpmkit/profile/plt.py, for targets without Python. */
#ifndef HPM_PLT_H
#define HPM_PLT_H

#include <stddef.h>
#include <stdint.h>

/* One PLT slot [start, start + size) at link-time addresses; name is "<target>@plt" (valid
 * during the call only). A nonzero return stops the walk. */
typedef int (*plt_slot_fn)(void *arg, uint64_t start, uint64_t size, const char *name);

/* Calls fn for each PLT slot of the 64-bit little-endian ELF file at p (len bytes, any of
 * x86-64, aarch64 and riscv64, whatever this machine is), in address order. Returns the
 * number of slots reported, 0 for an object without any (other machines, 32-bit files,
 * no PLT relocations), -1 when memory ran out. */
int plt_slots(const unsigned char *p, size_t len, plt_slot_fn fn, void *arg);

#endif
