/* SPDX-License-Identifier: MIT */
/*
 * overhead — per-call cost of counting one software event (task-clock) with
 *   raw perf_event_open(2), libhpm, PAPI 7, and libhpm-papi (the PAPI interface
 *   on libhpm, src/papi), measured in one run.
 *
 * Phases (each one timed with clock_gettime(CLOCK_MONOTONIC) around just that
 * phase; the median cost of an empty timed interval is subtracted from every
 * sample, see "timer" in the output):
 *
 *   phase        raw                          hpm                                  PAPI
 *   init         perf_event_open(disabled)    hpm_ctx__new + hpm_evset__new        PAPI_library_init
 *   add          (none: open is init)         hpm_evset__add("task-clock")         PAPI_create_eventset + PAPI_add_named_event
 *   start        ioctl(ENABLE)                hpm_evset__start                     PAPI_start
 *   add+start    = start                      add + start                          add + start
 *   read         read(2)                      hpm_evset__read(set, 0, &v)          PAPI_read
 *   stop(+read)  ioctl(DISABLE) + read(2)     hpm_evset__stop + hpm_evset__read    PAPI_stop (returns values)
 *   cleanup      close(2)                     hpm_evset__delete + hpm_ctx__delete  PAPI_cleanup_eventset + PAPI_destroy_eventset
 *
 * libhpm-papi ("hpm-papi") runs PAPI's column, call for call: the same
 * program text, through a table of function pointers filled from Debian's
 * libpapi (linked) or from build/lib/libhpm-papi.so (dlopen'ed before any
 * timing, as ld.so loads libpapi before main; both define PAPI_*, and
 * libhpm-papi binds its own calls to itself, -Bsymbolic). Both PAPIs go
 * through the same pointers, so neither pays for an indirection the other
 * does not.
 *
 * Two kinds of samples:
 *
 *  - COLD (fresh process): PAPI_library_init can run only once per process, so
 *    for fairness ALL THREE libraries' init is measured in forked children: per
 *    sample and per library one fork(); the child (which has never touched
 *    hpm or PAPI before, since the parent runs these children before it uses
 *    either library) runs the whole life cycle once, timing each phase
 *    itself, and sends the numbers back through a pipe. For PAPI the cold
 *    cleanup also includes PAPI_shutdown. The table's "init" row is this.
 *    Before timing, the child pre-faults what fork() left copy-on-write and
 *    every library would touch alike (stack, malloc heap; see
 *    settle_after_fork), and it counts minor page faults per phase.
 *
 *  - WARM (in-process loop): the parent then calls PAPI_library_init once
 *    (untimed) and runs N iterations of the full life cycle of each library in
 *    turn (rotating the order per iteration), discarding the first W
 *    iterations as warm-up. raw and hpm also re-run init every iteration
 *    ("init (warm)" row); PAPI cannot.
 *
 * Everything runs pinned to CPU 0. All values are medians in nanoseconds.
 *
 * Targets (from the issue):
 *   hpm init+add <= 3x raw open   (cold: fresh-process init+add vs fresh-process open;
 *                                  also printed for warm in-process numbers)
 *   hpm start <= 1.1x raw start, hpm read <= 1.1x raw read, hpm stop <= 1.1x raw stop (warm)
 *   hpm-papi init >= 100x faster than PAPI's (fresh process); hpm-papi start/read/stop
 *   <= 1.1x raw (warm)
 *
 * PAPI's init is reported even where PAPI cannot count (a CPU libpfm4 does not
 * know disables PAPI's perf_event component: PAPI_library_init works, adding
 * events does not); its other phases are then "-" with the reason.
 *
 * Build with -DNO_HPM or -DNO_PAPI to leave a library out; HPM_PAPI_SO (env)
 * overrides where libhpm-papi.so is loaded from.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef NO_HPM
#include "hpm/hpm.h"
#endif
#ifndef NO_PAPI
#include <papi.h>
#else
#include "hpm-papi/papi.h" /* the same constants, for libhpm-papi alone */
#endif
#ifndef HPM_PAPI_SO
#define HPM_PAPI_SO "../build/lib/libhpm-papi.so"
#endif

#ifndef PAPI_EVENT
#define PAPI_EVENT "perf::TASK-CLOCK" /* spelling as listed by papi_native_avail */
#endif
#ifndef HPM_EVENT
#define HPM_EVENT "task-clock"
#endif

/* raw-grp: raw perf_event opened as a perf group leader (read_format
 * GROUP|ID|TOTAL_TIME_*, ioctl(ID) after open, PERF_IOC_FLAG_GROUP ioctls), the
 * way hpm opens events that share a group. Not a target baseline: it shows
 * what the kernel's group read path costs, so a gap between hpm and raw can be
 * split into "group format" and "hpm's own code". */
enum { L_RAW, L_HPM, L_PAPI, L_RAWG, L_HPAPI, NLIB };
static const char *lib_name[NLIB] = {"raw", "hpm", "papi", "raw-grp", "hpm-papi"};
static const char *json_name[NLIB] = {"raw", "hpm", "papi", "raw_grp", "hpm_papi"};

/* The PAPI calls the benchmark makes, from one of the two libraries. */
struct papi_api {
	int loaded;
	int (*library_init)(int);
	int (*create_eventset)(int *);
	int (*add_named_event)(int, const char *);
	int (*start)(int);
	int (*read)(int, long long *);
	int (*stop)(int, long long *);
	int (*cleanup_eventset)(int);
	int (*destroy_eventset)(int *);
	void (*shutdown)(void);
	char *(*strerror)(int);
};
static struct papi_api papi_real, papi_hpm;

enum { P_INIT, P_ADD, P_START, P_ADDSTART, P_READ, P_STOP, P_CLEANUP, NPH };
static const char *ph_name[NPH] = {"init", "add", "start", "add+start", "read", "stop(+read)", "cleanup"};
static const char *ph_key[NPH] = {"init", "add", "start", "add_start", "read", "stop", "cleanup"};

static uint64_t timer_ns; /* median cost of an empty timed interval, subtracted */

static inline uint64_t now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t span(uint64_t t0, uint64_t t1)
{
	uint64_t d = t1 - t0;
	return d > timer_ns ? d - timer_ns : 0;
}

/* Result of one life cycle. */
struct run {
	int rc;                 /* 0 ok, else error (err holds the text) */
	int init_ok;            /* init was timed (t[P_INIT]) even if a later phase failed */
	char err[240];
	uint64_t t[NPH];        /* ns; t[P_ADDSTART] = t[P_ADD] + t[P_START] */
	uint64_t value, enabled; /* last value read at stop, for sanity checks */
	char path[120];         /* hpm: read path + why */
	int cold;               /* count minor page faults per phase (fresh process only) */
	long flt_base, flt[NPH];
};

static long minflt(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

/* Minor page faults since the previous mark (called after a phase's t1, so
 * getrusage is outside the timed interval). */
static void mark_faults(struct run *r, int phase)
{
	if (!r->cold)
		return;
	long f = minflt();
	r->flt[phase] = f - r->flt_base;
	r->flt_base = minflt();
}

static void fail(struct run *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->err, sizeof(r->err), fmt, ap);
	va_end(ap);
	r->rc = -1;
}

/* ---- raw perf_event ------------------------------------------------- */
static void raw_attr(struct perf_event_attr *a, int grp)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_TASK_CLOCK;
	a->disabled = 1;
	a->read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	if (grp)
		a->read_format |= PERF_FORMAT_GROUP | PERF_FORMAT_ID;
	/* as hpm does for an unmodified generic name: count user+kernel+hv (hpm falls
	 * back to exclude_kernel only on EACCES, which task-clock as root never gets) */
	a->exclude_kernel = 0;
	a->exclude_hv = 0;
}

static void run_raw(struct run *r, int cold, int grp)
{
	struct perf_event_attr a;
	uint64_t buf[5], id = 0, t0, t1;
	unsigned long flag = grp ? PERF_IOC_FLAG_GROUP : 0;
	size_t want = grp ? sizeof(buf) : 3 * sizeof(uint64_t); /* {nr,en,run,val,id} | {val,en,run} */
	int fd;
	(void)cold;

	raw_attr(&a, grp);
	t0 = now();
	fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (grp && fd >= 0)
		ioctl(fd, PERF_EVENT_IOC_ID, &id);
	t1 = now();
	if (fd < 0)
		return fail(r, "perf_event_open(task-clock): %s", strerror(errno));
	r->t[P_INIT] = span(t0, t1);
	mark_faults(r, P_INIT);
	r->t[P_ADD] = 0;

	t0 = now();
	int e1 = ioctl(fd, PERF_EVENT_IOC_ENABLE, flag);
	t1 = now();
	r->t[P_START] = span(t0, t1);
	mark_faults(r, P_START);

	t0 = now();
	ssize_t n1 = read(fd, buf, want);
	t1 = now();
	r->t[P_READ] = span(t0, t1);
	mark_faults(r, P_READ);

	t0 = now();
	int e2 = ioctl(fd, PERF_EVENT_IOC_DISABLE, flag);
	ssize_t n2 = read(fd, buf, want);
	t1 = now();
	r->t[P_STOP] = span(t0, t1);
	mark_faults(r, P_STOP);

	t0 = now();
	close(fd);
	t1 = now();
	r->t[P_CLEANUP] = span(t0, t1);
	mark_faults(r, P_CLEANUP);
	r->t[P_ADDSTART] = r->t[P_ADD] + r->t[P_START];

	if (e1 || e2 || n1 != (ssize_t)want || n2 != (ssize_t)want)
		return fail(r, "raw ioctl/read failed: %s", strerror(errno));
	if (grp && (buf[0] != 1 || buf[4] != id))
		return fail(r, "raw group read: unexpected layout");
	r->value = grp ? buf[3] : buf[0];
	r->enabled = grp ? buf[1] : buf[1];
}

/* ---- hpm ------------------------------------------------------------- */
#ifndef NO_HPM
static void run_hpm(struct run *r, int cold)
{
	struct hpm_ctx *ctx = NULL;
	struct hpm_evset *set = NULL;
	struct hpm_value v;
	uint64_t t0, t1;
	int e, e2 = 0;

	t0 = now();
	e = hpm_ctx__new(&ctx);
	if (e == 0)
		e2 = hpm_evset__new(ctx, &set);
	t1 = now();
	if (e < 0)
		return fail(r, "hpm_ctx__new: %s", strerror(-e));
	if (e2 < 0) {
		fail(r, "hpm_evset__new: %s (%s)", strerror(-e2), hpm_ctx__last_error(ctx));
		hpm_ctx__delete(ctx);
		return;
	}
	r->t[P_INIT] = span(t0, t1);
	mark_faults(r, P_INIT);

	t0 = now();
	e = hpm_evset__add(set, HPM_EVENT);
	t1 = now();
	r->t[P_ADD] = span(t0, t1);
	mark_faults(r, P_ADD);
	if (e < 0) {
		fail(r, "hpm_evset__add(%s): %s (%s)", HPM_EVENT, strerror(-e), hpm_ctx__last_error(ctx));
		goto out;
	}
	if (e != 0) {
		fail(r, "hpm_evset__add returned index %d, expected 0", e);
		goto out;
	}

	t0 = now();
	e = hpm_evset__start(set);
	t1 = now();
	r->t[P_START] = span(t0, t1);
	mark_faults(r, P_START);
	if (e < 0) {
		fail(r, "hpm_evset__start: %s (%s)", strerror(-e), hpm_ctx__last_error(ctx));
		goto out;
	}

	t0 = now();
	e = hpm_evset__read(set, 0, &v);
	t1 = now();
	r->t[P_READ] = span(t0, t1);
	mark_faults(r, P_READ);
	if (e < 0) {
		fail(r, "hpm_evset__read: %s (%s)", strerror(-e), hpm_ctx__last_error(ctx));
		goto out;
	}

	t0 = now();
	e = hpm_evset__stop(set);
	e2 = hpm_evset__read(set, 0, &v);
	t1 = now();
	r->t[P_STOP] = span(t0, t1);
	mark_faults(r, P_STOP);
	if (e < 0 || e2 < 0) {
		fail(r, "hpm_evset__stop/read: %s (%s)", strerror(-(e < 0 ? e : e2)),
		     hpm_ctx__last_error(ctx));
		goto out;
	}
	r->value = v.raw;
	r->enabled = v.enabled;
	if (!cold) {
		char why[96] = "";
		int p = hpm_evset__read_path(set, 0, why, sizeof(why));
		snprintf(r->path, sizeof(r->path), "%s%s%s",
			 p == HPM_READ_MMAP ? "mmap" : p == HPM_READ_SYSCALL ? "syscall" : "?",
			 why[0] ? ": " : "", why);
	}

	t0 = now();
	hpm_evset__delete(set);
	hpm_ctx__delete(ctx);
	t1 = now();
	r->t[P_CLEANUP] = span(t0, t1);
	mark_faults(r, P_CLEANUP);
	r->t[P_ADDSTART] = r->t[P_ADD] + r->t[P_START];
	return;
out:
	hpm_evset__delete(set);
	hpm_ctx__delete(ctx);
}
#endif

/* ---- PAPI ------------------------------------------------------------ */
static void run_papi(const struct papi_api *api, struct run *r, int cold)
{
	int es = PAPI_NULL, e, e2;
	long long val[1];
	uint64_t t0, t1;

	if (cold) {
		t0 = now();
		e = api->library_init(PAPI_VER_CURRENT);
		t1 = now();
		if (e != PAPI_VER_CURRENT)
			return fail(r, "PAPI_library_init: %s", e > 0 ? "version mismatch" : api->strerror(e));
		r->t[P_INIT] = span(t0, t1);
		r->init_ok = 1;
		mark_faults(r, P_INIT);
	}

	t0 = now();
	e = api->create_eventset(&es);
	if (e == PAPI_OK)
		e = api->add_named_event(es, PAPI_EVENT);
	t1 = now();
	r->t[P_ADD] = span(t0, t1);
	mark_faults(r, P_ADD);
	if (e != PAPI_OK) {
		fail(r, "PAPI_create_eventset/PAPI_add_named_event(%s): %s", PAPI_EVENT, api->strerror(e));
		goto out;
	}

	t0 = now();
	e = api->start(es);
	t1 = now();
	r->t[P_START] = span(t0, t1);
	mark_faults(r, P_START);
	if (e != PAPI_OK) {
		fail(r, "PAPI_start: %s", api->strerror(e));
		goto out;
	}

	t0 = now();
	e = api->read(es, val);
	t1 = now();
	r->t[P_READ] = span(t0, t1);
	mark_faults(r, P_READ);
	if (e != PAPI_OK) {
		fail(r, "PAPI_read: %s", api->strerror(e));
		goto out;
	}

	t0 = now();
	e = api->stop(es, val);
	t1 = now();
	r->t[P_STOP] = span(t0, t1);
	mark_faults(r, P_STOP);
	if (e != PAPI_OK) {
		fail(r, "PAPI_stop: %s", api->strerror(e));
		goto out;
	}
	r->value = (uint64_t)val[0];
	r->enabled = 0;

	t0 = now();
	e = api->cleanup_eventset(es);
	e2 = api->destroy_eventset(&es);
	if (cold)
		api->shutdown();
	t1 = now();
	r->t[P_CLEANUP] = span(t0, t1);
	mark_faults(r, P_CLEANUP);
	r->t[P_ADDSTART] = r->t[P_ADD] + r->t[P_START];
	if (e != PAPI_OK || e2 != PAPI_OK)
		fail(r, "PAPI_cleanup/destroy_eventset: %s", api->strerror(e != PAPI_OK ? e : e2));
	return;
out:
	if (es != PAPI_NULL) {
		api->stop(es, val);
		api->cleanup_eventset(es);
		api->destroy_eventset(&es);
	}
}

/* Fill the call table of each PAPI: Debian's from the linked symbols,
 * libhpm-papi's from its shared library. Returns why one is missing. */
static void load_papis(char *why_hpapi, size_t len)
{
#ifndef NO_PAPI
	papi_real = (struct papi_api){1, PAPI_library_init, PAPI_create_eventset, PAPI_add_named_event,
				      PAPI_start, PAPI_read, PAPI_stop, PAPI_cleanup_eventset,
				      PAPI_destroy_eventset, PAPI_shutdown, PAPI_strerror};
#endif
	const char *path = getenv("HPM_PAPI_SO");
	if (!path || !*path)
		path = HPM_PAPI_SO;
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(why_hpapi, len, "cannot load %s: %s (run make; HPM_PAPI_SO=path)", path, dlerror());
		return;
	}
#define SYM(f) ((papi_hpm.f = dlsym(h, "PAPI_" #f)) != NULL)
	papi_hpm.loaded = SYM(library_init) && SYM(create_eventset) && SYM(add_named_event) &&
			  SYM(start) && SYM(read) && SYM(stop) && SYM(cleanup_eventset) &&
			  SYM(destroy_eventset) && SYM(shutdown) && SYM(strerror);
#undef SYM
	if (!papi_hpm.loaded)
		snprintf(why_hpapi, len, "%s lacks a PAPI call", path);
}

static int lib_built(int lib)
{
#ifdef NO_HPM
	if (lib == L_HPM)
		return 0;
#endif
#ifdef NO_PAPI
	if (lib == L_PAPI)
		return 0;
#endif
	(void)lib;
	return 1;
}

static void run_lib(int lib, struct run *r, int cold)
{
	memset(r, 0, sizeof(*r));
	r->cold = cold;
	if (cold)
		r->flt_base = minflt();
	switch (lib) {
	case L_RAW: run_raw(r, cold, 0); break;
	case L_RAWG: run_raw(r, cold, 1); break;
	case L_HPAPI: run_papi(&papi_hpm, r, cold); break;
#ifndef NO_HPM
	case L_HPM: run_hpm(r, cold); break;
#endif
#ifndef NO_PAPI
	case L_PAPI: run_papi(&papi_real, r, cold); break;
#endif
	default: fail(r, "not built in");
	}
}

/* After fork() every first write to a stack, heap or libc data page is a
 * copy-on-write fault (~2 us each in a VM). Take the ones every library would
 * pay alike before timing, so they are not charged to whichever library's
 * phase happens to run first: 32 KB of stack, a 16 KB heap block (malloc's
 * arena and top chunk), and one syscall. What stays in the numbers is each
 * library's own first-use cost: its code pages, its data, the kernel's first
 * perf context for the task. */
static __attribute__((noinline)) void settle_after_fork(void)
{
	volatile char stack[32768];
	for (size_t i = 0; i < sizeof(stack); i += 256)
		stack[i] = 0;
	char *p = malloc(16384);
	if (p) {
		memset(p, 1, 16384);
		__asm__ volatile("" : : "r"(p) : "memory");
		free(p);
	}
	(void)minflt();
	(void)now();
}

/* One life cycle in a fresh child process. */
static void run_child(int lib, struct run *r)
{
	int pfd[2];
	pid_t pid;

	memset(r, 0, sizeof(*r));
	if (pipe(pfd) < 0)
		return fail(r, "pipe: %s", strerror(errno));
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return fail(r, "fork: %s", strerror(errno));
	}
	if (pid == 0) {
		struct run cr;
		close(pfd[0]);
		settle_after_fork();
		run_lib(lib, &cr, 1);
		ssize_t w = write(pfd[1], &cr, sizeof(cr));
		_exit(w == (ssize_t)sizeof(cr) ? 0 : 1);
	}
	close(pfd[1]);
	size_t got = 0;
	while (got < sizeof(*r)) {
		ssize_t n = read(pfd[0], (char *)r + got, sizeof(*r) - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(pfd[0]);
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (got != sizeof(*r))
		fail(r, "child died (status 0x%x)", st);
}

/* ---- statistics ------------------------------------------------------ */
static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

struct stat3 {
	double med, p10, p90;
	int n;
};

static struct stat3 stats(uint64_t *v, int n)
{
	struct stat3 s = {0, 0, 0, n};
	if (n <= 0)
		return s;
	qsort(v, (size_t)n, sizeof(*v), cmp_u64);
	s.med = n % 2 ? (double)v[n / 2] : ((double)v[n / 2 - 1] + (double)v[n / 2]) / 2;
	s.p10 = (double)v[(n - 1) / 10];
	s.p90 = (double)v[(n - 1) * 9 / 10];
	return s;
}

static void calibrate_timer(void)
{
	enum { K = 20001 };
	static uint64_t v[K];
	for (int i = 0; i < K; i++) {
		uint64_t t0 = now();
		uint64_t t1 = now();
		v[i] = t1 - t0;
	}
	timer_ns = (uint64_t)stats(v, K).med;
}

/* ---- table ----------------------------------------------------------- */
#define MAXROW (NPH + 1)
/* Columns: raw, raw-grp, hpm, papi, hpm-papi; ratios hpm/raw, papi/raw,
 * hpm-papi/raw, papi/hpm-papi, hpm/raw-grp. */
#define NCOL 5
#define NRAT 5
static const int col[NCOL] = {L_RAW, L_RAWG, L_HPM, L_PAPI, L_HPAPI};
static const int rat[NRAT][2] = {{L_HPM, L_RAW}, {L_PAPI, L_RAW}, {L_HPAPI, L_RAW}, {L_PAPI, L_HPAPI},
				 {L_HPM, L_RAWG}};
static const char *rat_name[NRAT] = {"hpm/raw", "papi/raw", "hpapi/raw", "papi/hpapi", "hpm/raw-grp"};
static const char *rat_key[NRAT] = {"hpm_vs_raw", "papi_vs_raw", "hpm_papi_vs_raw", "papi_vs_hpm_papi",
				    "hpm_vs_raw_grp"};

static void print_table(int nrow, const char *const *rown, struct stat3 st[NLIB][MAXROW], int ok[NLIB][MAXROW])
{
	printf("%-22s", "phase (median ns)");
	for (int k = 0; k < NCOL; k++)
		printf(" %10s", lib_name[col[k]]);
	for (int k = 0; k < NRAT; k++)
		printf(" %11s", rat_name[k]);
	printf("\n");
	for (int row = 0; row < nrow; row++) {
		printf("%-22s", rown[row]);
		for (int k = 0; k < NCOL; k++) {
			int l = col[k];
			if (ok[l][row])
				printf(" %10.0f", st[l][row].med);
			else
				printf(" %10s", "-");
		}
		for (int k = 0; k < NRAT; k++) {
			int a = rat[k][0], b = rat[k][1];
			char rc[24] = "-";
			if (ok[a][row] && ok[b][row] && st[b][row].med > 0)
				snprintf(rc, sizeof(rc), "%.2fx", st[a][row].med / st[b][row].med);
			printf(" %11s", rc);
		}
		printf("\n");
	}
}

/* ---- main ------------------------------------------------------------ */
static void usage(const char *argv0)
{
	fprintf(stderr,
		"usage: %s [-n N] [-w W] [-c C] [--cpu CPU] [--json FILE] [--strict]\n"
		"  -n N        in-process iterations per library (default 2000)\n"
		"  -w W        warm-up iterations discarded (default N/10)\n"
		"  -c C        fresh-process (forked) samples per library for cold init (default N/4)\n"
		"  --cpu CPU   pin to this CPU (default 0; -1 = do not pin)\n"
		"  --json FILE also write the results as JSON\n"
		"  --strict    exit with status 3 when a target FAILs\n",
		argv0);
}

#define HAVE(l, p) (st_ok[l][p])

int main(int argc, char **argv)
{
	int n = 2000, w = -1, c = -1, cpu = 0, strict = 0;
	const char *json = NULL;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--strict")) {
			strict = 1;
			continue;
		}
		if ((!strcmp(a, "-n") || !strcmp(a, "-w") || !strcmp(a, "-c") || !strcmp(a, "--cpu") ||
		     !strcmp(a, "--json")) && i + 1 < argc) {
			const char *v = argv[++i];
			if (!strcmp(a, "--json"))
				json = v;
			else {
				char *end;
				long x = strtol(v, &end, 10);
				if (*end || (x < (strcmp(a, "--cpu") ? 0 : -1)) || x > 100000000) {
					usage(argv[0]);
					return 2;
				}
				if (!strcmp(a, "-n")) n = (int)x;
				else if (!strcmp(a, "-w")) w = (int)x;
				else if (!strcmp(a, "-c")) c = (int)x;
				else cpu = (int)x;
			}
		} else {
			usage(argv[0]);
			return !strcmp(a, "-h") || !strcmp(a, "--help") ? 0 : 2;
		}
	}
	if (n < 1)
		n = 1;
	if (w < 0)
		w = n / 10;
	if (c < 0)
		c = n / 4 > 0 ? n / 4 : 1;

	int pinned = 0;
	if (cpu >= 0) {
		cpu_set_t cs;
		CPU_ZERO(&cs);
		CPU_SET(cpu, &cs);
		if (sched_setaffinity(0, sizeof(cs), &cs) == 0)
			pinned = 1;
		else
			fprintf(stderr, "warning: cannot pin to CPU %d: %s\n", cpu, strerror(errno));
	}

	calibrate_timer();

	/* samples: cold[lib][phase][c], warm[lib][phase][n] */
	uint64_t *cold = calloc((size_t)NLIB * NPH * (size_t)c, sizeof(uint64_t));
	uint64_t *warm = calloc((size_t)NLIB * NPH * (size_t)n, sizeof(uint64_t));
	uint64_t *coldf = calloc((size_t)NLIB * NPH * (size_t)c, sizeof(uint64_t));
	if (!cold || !warm || !coldf) {
		perror("calloc");
		return 1;
	}
#define COLD(l, p, i) cold[((size_t)(l) * NPH + (p)) * (size_t)c + (i)]
#define COLDF(l, p, i) coldf[((size_t)(l) * NPH + (p)) * (size_t)c + (i)]
#define WARM(l, p, i) warm[((size_t)(l) * NPH + (p)) * (size_t)n + (i)]

	int avail[NLIB];     /* still measured (warm loop, full cold life cycle) */
	int init_only[NLIB]; /* library initialises but cannot count here: init row only */
	char why[NLIB][240];
	int ncold[NLIB] = {0}, nwarm[NLIB] = {0}, ninit[NLIB] = {0};
	uint64_t zero_values[NLIB] = {0};
	struct run last[NLIB];
	char why_hpapi[240] = "";
	memset(last, 0, sizeof(last));
	load_papis(why_hpapi, sizeof(why_hpapi));
	for (int l = 0; l < NLIB; l++) {
		avail[l] = lib_built(l);
		init_only[l] = 0;
		snprintf(why[l], sizeof(why[l]), "%s", avail[l] ? "" : "not built in (-DNO_HPM / -DNO_PAPI)");
	}
	if (!papi_hpm.loaded) {
		avail[L_HPAPI] = 0;
		snprintf(why[L_HPAPI], sizeof(why[L_HPAPI]), "%s", why_hpapi);
	}

	/* 1. cold: every library in fresh forked children, before the parent has
	 * touched hpm or PAPI. Order rotates per sample. */
	for (int i = 0; i < c; i++) {
		for (int k = 0; k < NLIB; k++) {
			int l = (i + k) % NLIB;
			struct run r;
			if (!avail[l] && !init_only[l])
				continue;
			run_child(l, &r);
			if (r.init_ok || !r.rc) /* init is a sample even when a later phase failed */
				COLD(l, P_INIT, ninit[l]++) = r.t[P_INIT];
			if (r.rc) {
				if (avail[l])
					snprintf(why[l], sizeof(why[l]), "%s", r.err);
				avail[l] = 0;
				init_only[l] = r.init_ok;
				continue;
			}
			if (init_only[l])
				continue;
			for (int p = 1; p < NPH; p++) {
				COLD(l, p, ncold[l]) = r.t[p];
				COLDF(l, p, ncold[l]) = (uint64_t)(r.flt[p] > 0 ? r.flt[p] : 0);
			}
			COLDF(l, P_INIT, ncold[l]) = (uint64_t)(r.flt[P_INIT] > 0 ? r.flt[P_INIT] : 0);
			COLDF(l, P_ADDSTART, ncold[l]) = COLDF(l, P_ADD, ncold[l]) + COLDF(l, P_START, ncold[l]);
			ncold[l]++;
		}
	}

	/* 2. warm: one process, N iterations. */
#ifndef NO_PAPI
	if (avail[L_PAPI]) {
		int e = papi_real.library_init(PAPI_VER_CURRENT);
		if (e != PAPI_VER_CURRENT) {
			avail[L_PAPI] = 0;
			snprintf(why[L_PAPI], sizeof(why[L_PAPI]), "PAPI_library_init: %s",
				 e > 0 ? "version mismatch" : papi_real.strerror(e));
		}
	}
#endif
	if (avail[L_HPAPI]) {
		int e = papi_hpm.library_init(PAPI_VER_CURRENT);
		if (e != PAPI_VER_CURRENT) {
			avail[L_HPAPI] = 0;
			snprintf(why[L_HPAPI], sizeof(why[L_HPAPI]), "PAPI_library_init: %s",
				 e > 0 ? "version mismatch" : papi_hpm.strerror(e));
		}
	}
	for (int i = 0; i < n + w; i++) {
		for (int k = 0; k < NLIB; k++) {
			int l = (i + k) % NLIB;
			struct run r;
			if (!avail[l])
				continue;
			run_lib(l, &r, 0);
			if (r.rc) {
				avail[l] = 0;
				snprintf(why[l], sizeof(why[l]), "%s", r.err);
				continue;
			}
			if (r.value == 0)
				zero_values[l]++;
			if (r.path[0] || l != L_HPM)
				last[l] = r;
			if (i < w)
				continue;
			for (int p = 0; p < NPH; p++)
				WARM(l, p, nwarm[l]) = r.t[p];
			nwarm[l]++;
		}
	}

	/* 3. statistics */
	struct stat3 sc[NLIB][MAXROW], sw[NLIB][MAXROW];
	int st_okc[NLIB][MAXROW], st_okw[NLIB][MAXROW];
	for (int l = 0; l < NLIB; l++)
		for (int p = 0; p < NPH; p++) {
			int nc = p == P_INIT ? ninit[l] : avail[l] ? ncold[l] : 0;
			sc[l][p] = stats(&COLD(l, p, 0), nc);
			sw[l][p] = stats(&WARM(l, p, 0), avail[l] ? nwarm[l] : 0);
			st_okc[l][p] = nc > 0 && !((l == L_RAW || l == L_RAWG) && p == P_ADD);
			st_okw[l][p] = avail[l] && nwarm[l] > 0 && !((l == L_RAW || l == L_RAWG) && p == P_ADD) &&
				       !((l == L_PAPI || l == L_HPAPI) && p == P_INIT);
		}

	/* main table: init from fresh processes, everything else warm */
	struct stat3 main_s[NLIB][MAXROW];
	int main_ok[NLIB][MAXROW];
	/* rows: 0 init(cold) 1 init(warm) 2 add 3 start 4 add+start 5 read 6 stop 7 cleanup */
	static const char *row_name[NPH + 1] = {"init (fresh process)", "init (in-process)", "add",
						"start", "add+start", "read", "stop(+read)", "cleanup"};
	for (int l = 0; l < NLIB; l++) {
		main_s[l][0] = sc[l][P_INIT];
		main_ok[l][0] = st_okc[l][P_INIT];
		for (int p = 0; p < NPH; p++) {
			main_s[l][p + 1] = sw[l][p];
			main_ok[l][p + 1] = st_okw[l][p];
		}
	}

	printf("libhpm overhead benchmark — event task-clock (raw: PERF_TYPE_SOFTWARE/"
	       "PERF_COUNT_SW_TASK_CLOCK, hpm: \"%s\", PAPI: \"%s\")\n", HPM_EVENT, PAPI_EVENT);
	if (pinned)
		printf("pinned to CPU %d; ", cpu);
	else
		printf("not pinned; ");
	printf("in-process: %d iterations/library after %d warm-up; fresh-process: %d forked children/library\n",
	       n, w, c);
	printf("median ns per phase; timer overhead %" PRIu64 " ns (median empty clock_gettime interval) "
	       "subtracted from every sample\n", timer_ns);
	printf("init is measured in forked children for all libraries (PAPI can init only once per "
	       "process);\n\"init (in-process)\" repeats init in the running process (raw, hpm only)\n");
	printf("hpm-papi = libhpm-papi, the PAPI interface on libhpm, running the PAPI column's code\n");
	for (int l = 0; l < NLIB; l++)
		if (!avail[l])
			printf("%s UNAVAILABLE%s: %s\n", l == L_PAPI ? "PAPI" : lib_name[l],
			       init_only[l] ? " (init measured, nothing else)" : "", why[l]);
	printf("\n");
	print_table(NPH + 1, row_name, main_s, main_ok);
	printf("(raw has no add: perf_event_open is its init; raw add+start = ioctl ENABLE)\n");
	printf("(raw-grp = raw perf_event as a group leader: read_format GROUP|ID, ioctl(ID) at open, "
	       "group ioctls;\n not a target baseline, it shows what the kernel's group read path costs)\n");

	/* cold life cycle table */
	printf("\nfirst use in a fresh process (forked child, whole life cycle once; PAPI cleanup includes "
	       "PAPI_shutdown):\n");
	print_table(NPH, ph_name, sc, st_okc);
	printf("minor page faults per phase in the fresh process (median; each costs ~1-3 us, and they\n"
	       "dominate the fresh-process times: first touch of code, data and heap pages after fork):\n");
	printf("%-22s", "phase (median faults)");
	for (int k = 0; k < NCOL; k++)
		printf(" %10s", lib_name[col[k]]);
	printf("\n");
	for (int p = 0; p < NPH; p++) {
		printf("%-22s", ph_name[p]);
		for (int k = 0; k < NCOL; k++) {
			int l = col[k];
			if (st_okc[l][p] && ncold[l] > 0)
				printf(" %10.0f", stats(&COLDF(l, p, 0), ncold[l]).med);
			else
				printf(" %10s", "-");
		}
		printf("\n");
	}

	/* sanity */
	printf("\nsanity: last stop value (task-clock ns):");
	for (int l = 0; l < NLIB; l++)
		if (avail[l])
			printf(" %s=%" PRIu64, lib_name[l], last[l].value);
	printf("; zero values seen:");
	for (int l = 0; l < NLIB; l++)
		if (avail[l])
			printf(" %s=%" PRIu64, lib_name[l], zero_values[l]);
	printf("\n");
	if (avail[L_HPM] && last[L_HPM].path[0])
		printf("hpm read path for task-clock: %s\n", last[L_HPM].path);

	/* targets */
	struct target {
		const char *name;
		double val, limit;
		int ok; /* measurable */
		int atleast; /* a speed-up: passes at or above limit */
	} tg[10];
	int ntg = 0;
	double hpm_ia_cold = sc[L_HPM][P_INIT].med + sc[L_HPM][P_ADD].med;
	double hpm_ia_warm = sw[L_HPM][P_INIT].med + sw[L_HPM][P_ADD].med;
	int hok = avail[L_HPM] && nwarm[L_HPM] > 0 && ncold[L_HPM] > 0;
	int rok = avail[L_RAW] && nwarm[L_RAW] > 0 && ncold[L_RAW] > 0;
	tg[ntg++] = (struct target){"hpm init+add <= 3x raw open (fresh process)",
				    hpm_ia_cold / sc[L_RAW][P_INIT].med, 3.0, hok && rok, 0};
	tg[ntg++] = (struct target){"hpm init+add <= 3x raw open (in-process)",
				    hpm_ia_warm / sw[L_RAW][P_INIT].med, 3.0, hok && rok, 0};
	tg[ntg++] = (struct target){"hpm start <= 1.1x raw start (ioctl ENABLE)",
				    sw[L_HPM][P_START].med / sw[L_RAW][P_START].med, 1.1, hok && rok, 0};
	tg[ntg++] = (struct target){"hpm read <= 1.1x raw read", sw[L_HPM][P_READ].med / sw[L_RAW][P_READ].med,
				    1.1, hok && rok, 0};
	tg[ntg++] = (struct target){"hpm stop <= 1.1x raw stop (ioctl DISABLE + read)",
				    sw[L_HPM][P_STOP].med / sw[L_RAW][P_STOP].med, 1.1, hok && rok, 0};
	int pok = ninit[L_PAPI] > 0, aok = avail[L_HPAPI] && nwarm[L_HPAPI] > 0 && ninit[L_HPAPI] > 0;
	tg[ntg++] = (struct target){"hpm-papi init >= 100x faster than PAPI's (fresh)",
				    sc[L_PAPI][P_INIT].med / (sc[L_HPAPI][P_INIT].med > 0 ? sc[L_HPAPI][P_INIT].med : 1),
				    100.0, pok && aok, 1};
	tg[ntg++] = (struct target){"hpm-papi start <= 1.1x raw start (ioctl ENABLE)",
				    sw[L_HPAPI][P_START].med / sw[L_RAW][P_START].med, 1.1, aok && rok, 0};
	tg[ntg++] = (struct target){"hpm-papi read <= 1.1x raw read",
				    sw[L_HPAPI][P_READ].med / sw[L_RAW][P_READ].med, 1.1, aok && rok, 0};
	tg[ntg++] = (struct target){"hpm-papi stop <= 1.1x raw stop (ioctl DISABLE + read)",
				    sw[L_HPAPI][P_STOP].med / sw[L_RAW][P_STOP].med, 1.1, aok && rok, 0};
	printf("\ntargets:\n");
	if (hok && rok) {
		printf("  hpm init+add: fresh process %.0f + %.0f = %.0f ns vs raw open %.0f ns; "
		       "in-process %.0f + %.0f = %.0f ns vs raw open %.0f ns\n",
		       sc[L_HPM][P_INIT].med, sc[L_HPM][P_ADD].med, hpm_ia_cold, sc[L_RAW][P_INIT].med,
		       sw[L_HPM][P_INIT].med, sw[L_HPM][P_ADD].med, hpm_ia_warm, sw[L_RAW][P_INIT].med);
	}
	int fails = 0;
	for (int i = 0; i < ntg; i++) {
		if (!tg[i].ok) {
			printf("  %-52s  n/a  (a library it compares is unavailable)\n", tg[i].name);
			continue;
		}
		int pass = tg[i].atleast ? tg[i].val >= tg[i].limit : tg[i].val <= tg[i].limit;
		fails += !pass;
		printf("  %-52s %7.2fx  %s\n", tg[i].name, tg[i].val, pass ? "PASS" : "FAIL");
	}

	/* JSON */
	if (json) {
		FILE *f = fopen(json, "w");
		if (!f) {
			fprintf(stderr, "cannot write %s: %s\n", json, strerror(errno));
			return 1;
		}
		fprintf(f, "{\n  \"benchmark\": \"hpm-overhead\",\n  \"event\": {\"raw\": \"PERF_TYPE_SOFTWARE/"
			   "PERF_COUNT_SW_TASK_CLOCK\", \"hpm\": \"%s\", \"papi\": \"%s\", \"hpm_papi\": \"%s\"},\n",
			HPM_EVENT, PAPI_EVENT, PAPI_EVENT);
		fprintf(f, "  \"unit\": \"ns\",\n  \"iterations\": %d,\n  \"warmup\": %d,\n  \"fresh_process_samples\": %d,\n"
			   "  \"cpu\": %d,\n  \"timer_overhead_ns\": %" PRIu64 ",\n  \"timer_overhead_subtracted\": true,\n"
			   "  \"init_method\": \"every library: init timed inside a forked child per sample "
			   "(init); raw and hpm also in-process (init_in_process)\",\n",
			n, w, c, pinned ? cpu : -1, timer_ns);
		fprintf(f, "  \"libraries\": {\n");
		for (int l = 0; l < NLIB; l++) {
			fprintf(f, "    \"%s\": {\n      \"available\": %s", json_name[l], avail[l] ? "true" : "false");
			if (!avail[l]) {
				fprintf(f, ",\n      \"error\": \"");
				for (const char *s = why[l]; *s; s++)
					fprintf(f, *s == '"' || *s == '\\' ? "\\%c" : (unsigned char)*s < 0x20 ? " " : "%c", *s);
				fprintf(f, "\"");
			}
			for (int kind = 0; kind < 2; kind++) {
				fprintf(f, ",\n      \"%s\": {", kind ? "in_process" : "fresh_process");
				int first = 1;
				for (int p = 0; p < NPH; p++) {
					int ok = kind ? st_okw[l][p] : st_okc[l][p];
					struct stat3 s = kind ? sw[l][p] : sc[l][p];
					if (!ok)
						continue;
					fprintf(f, "%s\n        \"%s\": {\"median\": %.1f, \"p10\": %.1f, \"p90\": %.1f, \"n\": %d}",
						first ? "" : ",", ph_key[p], s.med, s.p10, s.p90, s.n);
					first = 0;
				}
				fprintf(f, "%s}", first ? "" : "\n      ");
			}
			fprintf(f, "\n    }%s\n", l + 1 < NLIB ? "," : "");
		}
		fprintf(f, "  },\n  \"ratios\": {");
		int first = 1;
		for (int k = 0; k < NRAT; k++)
			for (int row = 0; row <= NPH; row++) {
				int l = rat[k][0], b = rat[k][1];
				if (!main_ok[l][row] || !main_ok[b][row] || main_s[b][row].med <= 0)
					continue;
				fprintf(f, "%s\n    \"%s_%s%s\": %.3f", first ? "" : ",", rat_key[k],
					row == 0 ? "init" : ph_key[row - 1], row == 1 ? "_in_process" : "",
					main_s[l][row].med / main_s[b][row].med);
				first = 0;
			}
		fprintf(f, "%s},\n  \"targets\": [", first ? "" : "\n  ");
		for (int i = 0; i < ntg; i++) {
			fprintf(f, "%s\n    {\"name\": \"%s\", \"limit\": %.2f, ", i ? "," : "", tg[i].name, tg[i].limit);
			if (tg[i].ok)
				fprintf(f, "\"ratio\": %.3f, \"pass\": %s}", tg[i].val,
					(tg[i].atleast ? tg[i].val >= tg[i].limit : tg[i].val <= tg[i].limit) ? "true" : "false");
			else
				fprintf(f, "\"ratio\": null, \"pass\": null}");
		}
		fprintf(f, "\n  ]\n}\n");
		fclose(f);
		printf("\nwrote %s\n", json);
	}
	free(cold);
	free(coldf);
	free(warm);
	return strict && fails ? 3 : 0;
}
