/* SPDX-License-Identifier: MIT */
/* hpmkit's symboliser names C++ functions with the same code as hpm top (src/sym/demangle.c),
 * so a PC has one name whichever tool shows it. */
#include "../sym/demangle.h"

#define API __attribute__((visibility("default")))

/* out[len] gets the demangled name; returns its length, 0 when the name stays as it is, -1
 * when out is too small. */
API int pd_demangle(const char *name, char *out, unsigned long len)
{
	return util_demangle_into(name, out, len);
}
