/* SPDX-License-Identifier: MIT */
/* C++ symbol names as perf report shows them (demangled, no parameters). */
#ifndef HPM_SYM_DEMANGLE_H
#define HPM_SYM_DEMANGLE_H

#include <stddef.h>

/* The demangled name of an Itanium-ABI symbol ("_Z..."), malloc'd, or NULL when the name is
 * not mangled, cannot be demangled, or no demangler (libstdc++) is at hand. */
char *util_demangle(const char *name);
/* The same into out[len]: its length, 0 when not demangled, -1 when it does not fit. */
int util_demangle_into(const char *name, char *out, size_t len);

#endif
