/* SPDX-License-Identifier: MIT */
/* Event sets on the real kernel with software events: exact page-fault
 * counts, groups and splitting, per-CPU, reset, metrics, error paths. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include "check.h"
#include "internal.h"

/* Fault in `pages` fresh anonymous pages; returns page-faults counted. */
static double faults_for(struct hpm_evset *set, int idx, long pages)
{
	long psz = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, (size_t)((pages + 1) * psz), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	madvise(p, (size_t)((pages + 1) * psz), MADV_NOHUGEPAGE);
	struct hpm_value a, b;
	hpm_evset__read(set, idx, &a);
	for (long i = 0; i < pages; i++)
		((volatile char *)p)[i * psz] = 1;
	hpm_evset__read(set, idx, &b);
	munmap(p, (size_t)((pages + 1) * psz));
	return b.scaled - a.scaled;
}

TEST_NEEDS(page_faults_exact, "perf")
{
	struct hpm_ctx *ctx;
	struct hpm_evset *set;
	hpm_ctx__new(&ctx);
	hpm_evset__new(ctx, &set);
	CHECK_EQ_INT(hpm_evset__add(set, "page-faults"), 0);
	CHECK_EQ_INT(hpm_evset__start(set), 0);
	faults_for(set, 0, 1); /* warm the code path */
	double base = faults_for(set, 0, 0);
	CHECK_EQ_INT(faults_for(set, 0, 100) - base, 100);
	CHECK_EQ_INT(faults_for(set, 0, 1000) - base, 1000);
	struct hpm_value v;
	CHECK_EQ_INT(hpm_evset__read(set, 0, &v), 0);
	CHECK_EQ_INT(v.path, HPM_READ_SYSCALL);
	CHECK(v.enabled > 0 && v.running == v.enabled);
	char why[200];
	CHECK_EQ_INT(hpm_evset__read_path(set, 0, why, sizeof(why)), HPM_READ_SYSCALL);
	CHECK_CONTAINS(why, "software event");
	/* stopped: further faults are not counted */
	CHECK_EQ_INT(hpm_evset__stop(set), 0);
	CHECK_EQ_INT(faults_for(set, 0, 50), 0);
	/* reset: back to (nearly) zero */
	CHECK_EQ_INT(hpm_evset__reset(set), 0);
	CHECK_EQ_INT(hpm_evset__read(set, 0, &v), 0);
	CHECK_EQ_INT(v.raw, 0);
	hpm_evset__delete(set);
	hpm_ctx__delete(ctx);
}

TEST_NEEDS(groups_split_at_group_max, "perf")
{
	struct hpm_ctx *ctx;
	struct hpm_evset *set;
	hpm_ctx__new(&ctx);
	hpm_evset__new(ctx, &set);
	hpm_evset__set_group_max(set, 2);
	CHECK_EQ_INT(hpm_evset__add_list(set, "task-clock,page-faults,cs,cpu-migrations,minor-faults"),
		     5);
	CHECK_EQ_INT(hpm_evset__nr_groups(set), 3);
	CHECK_EQ_INT(hpm_evset__group_of(set, 0), 0);
	CHECK_EQ_INT(hpm_evset__group_of(set, 1), 0);
	CHECK_EQ_INT(hpm_evset__group_of(set, 2), 1);
	CHECK_EQ_INT(hpm_evset__group_of(set, 4), 2);
	CHECK_EQ_INT(hpm_evset__start(set), 0);
	double f = faults_for(set, 1, 64);
	CHECK(f >= 64);
	struct hpm_value vals[5];
	CHECK_EQ_INT(hpm_evset__read_all(set, vals), 0);
	/* page-faults and minor-faults count the same faults, from different groups */
	CHECK(vals[1].raw > 0 && vals[4].raw >= 64);
	CHECK_EQ_STR(hpm_evset__name(set, 2), "cs");
	hpm_evset__delete(set);
	hpm_ctx__delete(ctx);
}

TEST_NEEDS(brace_groups, "perf")
{
	struct hpm_ctx *ctx;
	struct hpm_evset *set;
	hpm_ctx__new(&ctx);
	hpm_evset__new(ctx, &set);
	CHECK_EQ_INT(hpm_evset__add_list(set, "{task-clock,page-faults},cs,{minor-faults,major-faults}"),
		     5);
	CHECK_EQ_INT(hpm_evset__nr_groups(set), 3);
	CHECK_EQ_INT(hpm_evset__group_of(set, 2), 1);
	CHECK_EQ_INT(hpm_evset__group_of(set, 3), 2);
	CHECK_EQ_INT(hpm_evset__add_list(set, "{task-clock"), -EINVAL);
	CHECK_CONTAINS(hpm_ctx__last_error(ctx), "missing '}'");
	CHECK_EQ_INT(hpm_evset__add_list(set, "cs}"), -EINVAL);
	CHECK_CONTAINS(hpm_ctx__last_error(ctx), "unbalanced '}'");
	hpm_evset__delete(set);
	hpm_ctx__delete(ctx);
}

/* A kernel that refuses any group of more than two events, as a real PMU
 * with two counters does (validate_group -> -EINVAL). */
static int group_size[4096];
static int refusing_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
			 unsigned long flags)
{
	if (group_fd >= 0 && group_fd < 4096 && group_size[group_fd] >= 2)
		return -EINVAL;
	int fd = sys_perf_event_open(attr, pid, cpu, group_fd, flags);
	if (fd >= 0 && fd < 4096) {
		group_size[fd] = 1;
		if (group_fd >= 0)
			group_size[group_fd]++;
	}
	return fd;
}

TEST_NEEDS(groups_split_when_kernel_refuses, "perf")
{
	struct hpm_ctx *ctx;
	struct hpm_evset *set;
	memset(group_size, 0, sizeof(group_size));
	perf_open_fn = refusing_open;
	hpm_ctx__new(&ctx);
	hpm_evset__new(ctx, &set);
	CHECK_EQ_INT(hpm_evset__add_list(set, "task-clock,page-faults,cs,minor-faults,major-faults"),
		     5);
	CHECK_EQ_INT(hpm_evset__nr_groups(set), 3);
	CHECK_EQ_INT(hpm_evset__start(set), 0);
	struct hpm_value vals[5];
	CHECK_EQ_INT(hpm_evset__read_all(set, vals), 0);
	CHECK(vals[0].raw > 0); /* task-clock ran */
	hpm_evset__delete(set);
	/* braces: refusing is an error, not a split */
	hpm_evset__new(ctx, &set);
	CHECK_EQ_INT(hpm_evset__add_list(set, "{task-clock,page-faults,cs}"), -E2BIG);
	CHECK_CONTAINS(hpm_ctx__last_error(ctx), "cannot be counted together");
	hpm_evset__delete(set);
	hpm_ctx__delete(ctx);
	perf_open_fn = sys_perf_event_open;
}

TEST_NEEDS(per_cpu_counting, "perf")
{
	struct hpm_ctx *ctx;
	struct hpm_evset *set;
	hpm_ctx__new(&ctx);
	hpm_evset__new(ctx, &set);
	CHECK_EQ_INT(hpm_evset__set_target(set, -1, HPM_CPU_ALL, 0), 0);
	int r = hpm_evset__add(set, "cpu-clock");
	if (r == -EACCES || r == -EPERM) {
		/* unprivileged: the message must say what to do */
		CHECK_CONTAINS(hpm_ctx__last_error(ctx), "perf_event_paranoid");
	} else {
		CHECK_EQ_INT(r, 0);
		hpm_evset__start(set);
		usleep(100000);
		hpm_evset__stop(set);
		struct hpm_value v;
		CHECK_EQ_INT(hpm_evset__read(set, 0, &v), 0);
		long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
		/* cpu-clock runs on every CPU for the whole 100 ms */
		CHECK(v.scaled > 0.09e9 * (double)ncpu && v.scaled < 0.5e9 * (double)ncpu);
	}
	hpm_evset__delete(set);
	hpm_ctx__delete(ctx);
}

TEST_NEEDS(metric_group_generic_software, "perf")
{
	struct hpm_ctx *ctx;
	struct hpm_evset *set;
	hpm_ctx__new(&ctx);
	hpm_evset__new(ctx, &set);
	CHECK_EQ_INT(hpm_evset__add_metric_group(set, "software"), 3);
	CHECK_EQ_INT(hpm_evset__nr(set), 4); /* task-clock shared by the three metrics */
	hpm_evset__start(set);
	faults_for(set, 1, 200);
	hpm_evset__stop(set);
	struct hpm_value vals[8];
	hpm_evset__read_all(set, vals);
	const char *name, *unit;
	double v;
	CHECK_EQ_INT(hpm_evset__metric(set, 0, vals, &name, &unit, &v), 0);
	CHECK_EQ_STR(name, "page_faults_per_sec");
	int pf = -1, tc = -1;
	for (int i = 0; i < 4; i++) {
		if (!strcmp(hpm_evset__name(set, i), "page-faults"))
			pf = i;
		if (!strcmp(hpm_evset__name(set, i), "task-clock"))
			tc = i;
	}
	CHECK(pf >= 0 && tc >= 0);
	if (pf >= 0 && tc >= 0)
		CHECK(fabs(v - 1e9 * vals[pf].scaled / vals[tc].scaled) < 1e-6 * v);
	CHECK_EQ_INT(hpm_evset__add_metric_group(set, "no_such_group"), -ENOENT);
	CHECK_CONTAINS(hpm_ctx__last_error(ctx), "no metric group 'no_such_group'");
	hpm_evset__delete(set);
	hpm_ctx__delete(ctx);
}

TEST_NEEDS(open_errors_are_explained, "perf")
{
	struct hpm_ctx *ctx;
	struct hpm_evset *set;
	hpm_ctx__new(&ctx);
	hpm_evset__new(ctx, &set);
	/* a pid that cannot exist */
	CHECK_EQ_INT(hpm_evset__set_target(set, 0x3ffffff0, -1, 0), 0);
	CHECK_EQ_INT(hpm_evset__add(set, "task-clock"), -ESRCH);
	CHECK_CONTAINS(hpm_ctx__last_error(ctx), "no process with pid");
	hpm_evset__delete(set);
	hpm_evset__new(ctx, &set);
	CHECK_EQ_INT(hpm_evset__set_target(set, -1, -1, 0), -EINVAL);
	int r = 0;
	for (int i = 0; i < 300 && r >= 0; i++)
		r = hpm_evset__add(set, "dummy");
	CHECK_EQ_INT(r, -E2BIG);
	CHECK_CONTAINS(hpm_ctx__last_error(ctx), "too many events");
	hpm_evset__delete(set);
	hpm_ctx__delete(ctx);
}

TEST(api_rejects_null)
{
	CHECK_EQ_INT(hpm_ctx__new(NULL), -EINVAL);
	CHECK_EQ_INT(hpm_evset__add(NULL, "cycles"), -EINVAL);
	CHECK_EQ_INT(hpm_evset__read(NULL, 0, NULL), -EINVAL);
	CHECK_EQ_INT(hpm_evset__nr(NULL), -EINVAL);
	CHECK_EQ_STR(hpm_version(), "0.1.0");
}

TEST_NEEDS(add_after_start_keeps_counts, "perf")
{
	struct hpm_ctx *ctx;
	struct hpm_evset *set;
	struct hpm_value a, b;
	hpm_ctx__new(&ctx);
	hpm_evset__new(ctx, &set);
	CHECK_EQ_INT(hpm_evset__add(set, "page-faults"), 0);
	hpm_evset__start(set);
	faults_for(set, 0, 300);
	CHECK_EQ_INT(hpm_evset__read(set, 0, &a), 0);
	CHECK(a.raw >= 300);
	/* a second event now must not reopen (and zero) the running leader */
	CHECK_EQ_INT(hpm_evset__add(set, "task-clock"), 1);
	CHECK_EQ_INT(hpm_evset__nr_groups(set), 2);
	CHECK_EQ_INT(hpm_evset__start(set), 0);
	faults_for(set, 0, 10);
	CHECK_EQ_INT(hpm_evset__read(set, 0, &b), 0);
	CHECK(b.raw >= a.raw + 10);
	hpm_evset__delete(set);
	hpm_ctx__delete(ctx);
}

/* Hardware counters where the kernel has them (the lab guests; skipped
 * nowhere: on a machine without a PMU it checks the explanation instead). */
TEST_NEEDS(hw_instructions_and_read_path, "perf")
{
	struct hpm_ctx *ctx;
	struct hpm_evset *set;
	hpm_ctx__new(&ctx);
	hpm_evset__new(ctx, &set);
	int r = hpm_evset__add(set, "instructions:u");
	if (r < 0) {
		CHECK_CONTAINS(hpm_ctx__last_error(ctx), "instructions:u");
		printf("    no hardware PMU here: %s\n", hpm_ctx__last_error(ctx));
		hpm_evset__delete(set);
		hpm_ctx__delete(ctx);
		return;
	}
	char why[200];
	int path = hpm_evset__read_path(set, 0, why, sizeof(why));
	printf("    path=%s %s\n", path == HPM_READ_MMAP ? "mmap" : "read", why);
	hpm_evset__start(set);
	struct hpm_value a, b, c;
	CHECK_EQ_INT(hpm_evset__read(set, 0, &a), 0);
	for (volatile int i = 0; i < 10000; i++)
		;
	CHECK_EQ_INT(hpm_evset__read(set, 0, &b), 0);
	hpm_evset__stop(set);
	CHECK_EQ_INT(hpm_evset__read(set, 0, &c), 0);
	CHECK_EQ_INT(a.path, path);
	CHECK_EQ_INT(b.path, path);
	CHECK(b.raw >= a.raw + 10000); /* at least one instruction per iteration */
	CHECK(c.raw >= b.raw && c.raw - b.raw < 100000);
	/* the stopped counter is read through read(2): both paths agree */
	CHECK_EQ_INT(c.path, HPM_READ_SYSCALL);
	hpm_evset__delete(set);
	hpm_ctx__delete(ctx);
}
