/* SPDX-License-Identifier: MIT */
/* Test runner: unit [--list] [--no-perf] [NAME...] */
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include "check.h"
#include "hpm/hpm.h"

#define MAX_TESTS 256
static struct test_case tests[MAX_TESTS];
static int ntests;
int test_failures;

void test_register(const char *name, void (*fn)(void), const char *needs)
{
	if (ntests < MAX_TESTS)
		tests[ntests++] = (struct test_case){ name, fn, needs };
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* rm -rf without a shell: the lab guests have none */
int test_rmtree(const char *path)
{
	return nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

struct hpm_ctx *test_sysroot_ctx(const char *root)
{
	struct hpm_ctx *ctx;
	setenv("HPM_SYSROOT", root, 1);
	hpm_ctx__new(&ctx);
	return ctx;
}

void test_sysroot_done(struct hpm_ctx *ctx, const char *root)
{
	hpm_ctx__delete(ctx);
	unsetenv("HPM_SYSROOT");
	test_rmtree(root);
}

void test_tables_only(const char *pmu)
{
	if (pmu) {
		setenv("HPM_PMU", pmu, 1);
		setenv("HPM_SYSROOT", "/nonexistent-hpm-unit-tables-only", 1);
	} else {
		unsetenv("HPM_PMU");
		unsetenv("HPM_SYSROOT");
	}
}

void test_put(const char *root, const char *rel, const char *text)
{
	char path[600], dir[600];
	snprintf(path, sizeof(path), "%s%s", root, rel);
	snprintf(dir, sizeof(dir), "%s", path);
	for (char *p = dir + strlen(root) + 1; *p; p++)
		if (*p == '/') {
			*p = 0;
			mkdir(dir, 0755);
			*p = '/';
		}
	FILE *f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
}

int main(int argc, char **argv)
{
	int passed = 0, failed = 0, skipped = 0;
	int no_perf = 0, list = 0, nnames = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--list"))
			list = 1;
		else if (!strcmp(argv[i], "--no-perf"))
			no_perf = 1;
		else
			nnames++;
	}
	for (int t = 0; t < ntests; t++) {
		if (list) {
			printf("%s%s\n", tests[t].name, *tests[t].needs ? " [perf]" : "");
			continue;
		}
		int selected = !nnames;
		for (int i = 1; i < argc; i++)
			selected |= !strcmp(argv[i], tests[t].name);
		if (!selected)
			continue;
		if (no_perf && *tests[t].needs) {
			/* said out loud: the caller asked for this (qemu-user has no perf_event_open) */
			printf("skip %s (needs perf_event_open)\n", tests[t].name);
			skipped++;
			continue;
		}
		int before = test_failures;
		tests[t].fn();
		if (test_failures == before) {
			printf("ok   %s\n", tests[t].name);
			passed++;
		} else {
			printf("FAIL %s\n", tests[t].name);
			failed++;
		}
	}
	if (list)
		return 0;
	printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
	return failed ? 1 : (passed ? 0 : 1);
}
