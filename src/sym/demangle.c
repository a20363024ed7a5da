/* SPDX-License-Identifier: MIT */
/* C++ names as perf report prints them: demangled, without the parameter list, the function's
 * return type, cv/ref qualifiers or GCC's " [clone .xxx]" suffixes ("ns::W::spin" for
 * _ZN2ns1W4spinEi). perf gets that from libiberty with no options; we let libstdc++'s
 * __cxa_demangle (the same demangler, always with parameters) do the hard part and cut the
 * parameters off its answer. libstdc++ is looked up at run time so that hpm does not depend on
 * it: without it (or in a static build) names stay mangled, as perf's do without a demangler.
 * hpm top calls this directly; hpmkit's symboliser through libhpmperf.so. */
#include "demangle.h"

#include <stdlib.h>
#include <string.h>
#ifndef HPM_STATIC
#include <dlfcn.h>
#endif

typedef char *(*cxa_demangle_fn)(const char *, char *, size_t *, int *);

static cxa_demangle_fn find_demangler(void)
{
#ifdef HPM_STATIC
	return NULL;
#else
	static int looked;
	static cxa_demangle_fn fn;

	if (!looked) {
		void *h = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL);

		looked = 1;
		if (h)
			fn = (cxa_demangle_fn)dlsym(h, "__cxa_demangle");
	}
	return fn;
#endif
}

/* Length of "operator<symbol>" starting at s (which begins with "operator"), so that the '<',
 * '>' and '(' of operator names do not count as brackets. */
static size_t operator_len(const char *s)
{
	static const char *const ops[] = {
		"()", "[]", "<=>", "<<=", ">>=", "->*", "<<", ">>", "<=", ">=", "->", "<", ">",
	};
	size_t n = strlen("operator");

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strncmp(s + n, ops[i], strlen(ops[i])))
			return n + strlen(ops[i]);
	return n;
}

static int is_ident(char c)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* Names of things made for a function ("non-virtual thunk to X::f(int)", "transaction clone
 * for ...", "vtable for X") keep their parameters in perf's output too: libiberty prints
 * them whole whatever its options. */
static int special_name(const char *d)
{
	static const char *const prefixes[] = {
		"transaction clone for ", "non-transaction clone for ", "non-virtual thunk to ",
		"virtual thunk to ", "covariant return thunk to ", "construction vtable for ",
		"vtable for ", "VTT for ", "typeinfo for ", "typeinfo name for ", "typeinfo fn for ",
		"guard variable for ", "TLS init function for ", "TLS wrapper function for ",
		"reference temporary #", "hidden alias for ", "java Class for ",
	};

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(d, prefixes[i], strlen(prefixes[i])))
			return 1;
	return 0;
}

/* Cut a full demangled name down to the function's qualified name, in place. */
static void strip_signature(char *d)
{
	if (special_name(d))
		return;

	char *c = strstr(d, " [clone ");

	/* GCC clones: "f(int) [clone .isra.0] [clone .cold]" */
	if (c)
		*c = '\0';
	/* Walk once at bracket depth 0, remembering where the last top-level parameter list
	 * opened and the last top-level space before it (the end of a template function's
	 * return type). Operator names and {lambda(...)#1} are skipped as names. */
	int depth = 0;
	char *params = NULL, *space = NULL, *space_before_params = NULL;
	for (char *p = d; *p; p++) {
		if (depth == 0 && !strncmp(p, "operator", 8) &&
		    (p == d || !is_ident(p[-1])) && !is_ident(p[8])) {
			p += operator_len(p) - 1;
			if (p[1] == ' ' && p[2] == '<')
				p++;	/* "operator<< <char>": the space is not a separator */
			continue;
		}
		switch (*p) {
		case '(':
			if (depth == 0 && p > d && p[-1] != ' ') {
				params = p;
				space_before_params = space;
			}
			/* fallthrough */
		case '<':
		case '[':
		case '{':
			depth++;
			break;
		case ')':
		case '>':
		case ']':
		case '}':
			if (depth > 0)
				depth--;
			break;
		case ' ':
			if (depth == 0)
				space = p;
			break;
		}
	}
	if (!params)
		return;		/* a variable, a special name ("vtable for X"): keep as is */
	*params = '\0';
	/* Only template functions carry a return type: "void ns::f<int>". The name ends in '>'
	 * then; a space at depth 0 before it ends the return type (but not in "operator new"
	 * or "(anonymous namespace)", which are inside a word or brackets). */
	if (space_before_params && params > d && params[-1] == '>' &&
	    strncmp(space_before_params - 8 >= d ? space_before_params - 8 : d, "operator", 8))
		memmove(d, space_before_params + 1, strlen(space_before_params + 1) + 1);
}

char *util_demangle(const char *name)
{
	cxa_demangle_fn fn;
	int status = -1;
	char *d;

	if (!name || strncmp(name, "_Z", 2) || !(fn = find_demangler()))
		return NULL;
	d = fn(name, NULL, NULL, &status);
	if (!d || status != 0) {
		free(d);
		return NULL;
	}
	strip_signature(d);
	if (!*d) {
		free(d);
		return NULL;
	}
	return d;
}

int util_demangle_into(const char *name, char *out, size_t len)
{
	char *d = util_demangle(name);
	size_t n;

	if (!d)
		return 0;
	n = strlen(d);
	if (n >= len) {
		free(d);
		return -1;
	}
	memcpy(out, d, n + 1);
	free(d);
	return (int)n;
}
