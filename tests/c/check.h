/* SPDX-License-Identifier: MIT */
/*
 * A tiny test harness: TEST(name) { CHECK(...); } registers itself; the
 * runner (main.c) runs all tests or those named on the command line and
 * ends with the line "N passed, N failed".
 */
#ifndef HPM_CHECK_H
#define HPM_CHECK_H

#include <stdio.h>
#include <string.h>

struct test_case {
	const char *name;
	void (*fn)(void);
	const char *needs; /* "perf" = needs perf_event_open (not under qemu-user) */
};
void test_register(const char *name, void (*fn)(void), const char *needs);
extern int test_failures;
int test_rmtree(const char *path);
/* Write text to root + rel, making the folders on the way (the imitated /proc
 * and /sys of other machines that HPM_SYSROOT points at) */
void test_put(const char *root, const char *rel, const char *text);
/* A libhpm context that sees the imitated machine at root (HPM_SYSROOT), and its end: the
 * context deleted, HPM_SYSROOT unset, the folder removed */
struct hpm_ctx;
struct hpm_ctx *test_sysroot_ctx(const char *root);
void test_sysroot_done(struct hpm_ctx *ctx, const char *root);

/* Table tests judge the tables as written: pmu set forces HPM_PMU, and HPM_SYSROOT points
 * at a folder that does not exist, so the running machine's PMU (on an Arm core, its
 * PMCEID list in sysfs) drops no event; NULL unsets both. */
void test_tables_only(const char *pmu);

#define TEST_NEEDS(name, needs)                                              \
	static void test_##name(void);                                       \
	__attribute__((constructor)) static void reg_##name(void)            \
	{                                                                    \
		test_register(#name, test_##name, needs);                    \
	}                                                                    \
	static void test_##name(void)
#define TEST(name) TEST_NEEDS(name, "")

#define CHECK(cond)                                                               \
	do {                                                                      \
		if (!(cond)) {                                                    \
			printf("    %s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
			test_failures++;                                          \
		}                                                                 \
	} while (0)
#define CHECK_EQ_INT(a, b)                                                                 \
	do {                                                                               \
		long long _a = (long long)(a), _b = (long long)(b);                        \
		if (_a != _b) {                                                            \
			printf("    %s:%d: %s == %lld, expected %s == %lld\n", __FILE__, __LINE__, \
			       #a, _a, #b, _b);                                           \
			test_failures++;                                                   \
		}                                                                          \
	} while (0)
#define CHECK_EQ_STR(a, b)                                                                   \
	do {                                                                                 \
		const char *_a = (a), *_b = (b);                                             \
		if (!_a || !_b || strcmp(_a, _b)) {                                          \
			printf("    %s:%d: %s == \"%s\", expected \"%s\"\n", __FILE__, __LINE__, #a, \
			       _a ? _a : "(null)", _b ? _b : "(null)");                      \
			test_failures++;                                                     \
		}                                                                            \
	} while (0)
#define CHECK_CONTAINS(hay, needle)                                                         \
	do {                                                                                \
		const char *_h = (hay), *_n = (needle);                                     \
		if (!_h || !strstr(_h, _n)) {                                               \
			printf("    %s:%d: \"%s\" does not contain \"%s\"\n", __FILE__, __LINE__, \
			       _h ? _h : "(null)", _n);                                     \
			test_failures++;                                                    \
		}                                                                           \
	} while (0)

#endif
