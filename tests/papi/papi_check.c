/* SPDX-License-Identifier: MIT */
/*
 * papi-check: a PAPI program that checks libhpm-papi (tests/py/test_papi_compat.py).
 * Built against include/hpm-papi/papi.h like any PAPI program, plus libhpm
 * for side-by-side counts.
 *
 *   papi-check api               PAPI semantics with exact counts of software
 *                                events (page faults of freshly mapped pages)
 *   papi-check counts N1 N2 EV.. the same loop counted through PAPI and through
 *                                libhpm, for N1 and N2 iterations (lab: exact)
 *   papi-check conflict EV...    add hardware events until PAPI_ECNFLCT; what
 *                                still counts afterwards; the same multiplexed
 *   papi-check avail             the preset table as papi_avail prints it,
 *                                through PAPI_enum_event/PAPI_get_event_info
 *   papi-check hl N              N fresh pages touched in high-level region
 *                                "touch" (after a warm-up region "warm")
 *
 * Output is "key value" lines; api prints "ok NAME" / "FAIL NAME: why" and
 * exits 1 if anything failed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "hpm/hpm.h"
#include "papi.h"

static int failures;

#define CHECK(name, cond, ...)                                      \
	do {                                                        \
		if (cond) {                                         \
			printf("ok %s\n", name);                    \
		} else {                                            \
			printf("FAIL %s: ", name);                  \
			printf(__VA_ARGS__);                        \
			printf("\n");                               \
			failures++;                                 \
		}                                                   \
	} while (0)

#define EQ(name, got, want) CHECK(name, (long long)(got) == (long long)(want), "got %lld, want %lld", \
				  (long long)(got), (long long)(want))

/* ---- exact software counts: one minor fault per fresh page -------------- */
static long pagesize;

static char *fresh_pages(int n)
{
	char *p = mmap(NULL, (size_t)n * (size_t)pagesize, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		exit(2);
	}
	madvise(p, (size_t)n * (size_t)pagesize, MADV_NOHUGEPAGE); /* one fault per page */
	return p;
}

static void touch(char *p, int n)
{
	for (int i = 0; i < n; i++)
		((volatile char *)p)[(long)i * pagesize] = 1;
}

/* The measured life cycle: start, 10 faults, read, 5 faults, accum, 3
 * faults, read, reset, 4 faults, stop, read while stopped, start again, 6
 * faults, stop. Run twice: the first run faults in our own code and data. */
struct lifecycle {
	int start, read1, accum, read2, reset, stop1, read3, start2, stop2;
	long long v_read1, v_accum, v_read2, v_stop1, v_read3, v_stop2;
};

static void lifecycle(int set, struct lifecycle *lc)
{
	long long v[1];
	char *p = fresh_pages(28);
	lc->start = PAPI_start(set);
	touch(p, 10);
	lc->read1 = PAPI_read(set, v);
	lc->v_read1 = v[0];
	touch(p + 10 * pagesize, 5);
	v[0] = 100;
	lc->accum = PAPI_accum(set, v);
	lc->v_accum = v[0];
	touch(p + 15 * pagesize, 3);
	lc->read2 = PAPI_read(set, v);
	lc->v_read2 = v[0];
	lc->reset = PAPI_reset(set);
	touch(p + 18 * pagesize, 4);
	lc->stop1 = PAPI_stop(set, v);
	lc->v_stop1 = v[0];
	touch(p + 22 * pagesize, 1); /* not counted: stopped */
	v[0] = -1;
	lc->read3 = PAPI_read(set, v);
	lc->v_read3 = v[0];
	lc->start2 = PAPI_start(set);
	touch(p + 23 * pagesize, 5);
	lc->stop2 = PAPI_stop(set, v);
	lc->v_stop2 = v[0];
	munmap(p, 28 * (size_t)pagesize);
}

static long long hpm_faults(int n)
{
	struct hpm_ctx *ctx;
	struct hpm_evset *set;
	struct hpm_value v;
	long long out = -1;
	char *p = fresh_pages(n);
	if (hpm_ctx__new(&ctx) == 0) {
		if (hpm_evset__new(ctx, &set) == 0 && hpm_evset__add(set, "page-faults:u") == 0) {
			/* warm the path, then count */
			hpm_evset__start(set);
			hpm_evset__stop(set);
			hpm_evset__read(set, 0, &v);
			hpm_evset__reset(set);
			hpm_evset__start(set);
			touch(p, n);
			hpm_evset__stop(set);
			hpm_evset__read(set, 0, &v);
			out = (long long)v.raw;
			hpm_evset__delete(set);
		}
		hpm_ctx__delete(ctx);
	}
	munmap(p, (size_t)n * (size_t)pagesize);
	return out;
}

struct thr_arg {
	int pages;
	int rc;
	long long count;
	unsigned long id;
};

static void *thread_body(void *a)
{
	struct thr_arg *t = a;
	int set = PAPI_NULL;
	long long v[1];
	char *p = fresh_pages(t->pages + 4);
	t->rc = PAPI_register_thread();
	t->id = PAPI_thread_id();
	if (!t->rc)
		t->rc = PAPI_create_eventset(&set);
	if (!t->rc)
		t->rc = PAPI_add_named_event(set, "perf::PAGE-FAULTS");
	if (!t->rc) {
		/* warm-up round, then the counted one */
		PAPI_start(set);
		touch(p, 1);
		PAPI_stop(set, v);
		t->rc = PAPI_start(set);
		touch(p + 2 * pagesize, t->pages);
		t->rc |= PAPI_stop(set, v);
		t->count = v[0];
		PAPI_cleanup_eventset(set);
		PAPI_destroy_eventset(&set);
	}
	PAPI_unregister_thread();
	return NULL;
}

static unsigned long self_id(void)
{
	return (unsigned long)pthread_self();
}

static int cmd_api(void)
{
	int code = 0, set = PAPI_NULL, set2 = PAPI_NULL, st;
	char name[PAPI_MAX_STR_LEN];
	long long v[4];
	PAPI_event_info_t info;

	/* before initialisation */
	EQ("create-before-init", PAPI_create_eventset(&set), PAPI_ENOINIT);
	EQ("is-initialized-0", PAPI_is_initialized(), PAPI_NOT_INITED);
	EQ("set-debug-before-init", PAPI_set_debug(PAPI_QUIET), PAPI_OK);
	EQ("init-wrong-version", PAPI_library_init(PAPI_VERSION_NUMBER(5, 0, 0, 0)), PAPI_EINVAL);
	EQ("init", PAPI_library_init(PAPI_VER_CURRENT), PAPI_VER_CURRENT);
	EQ("init-again", PAPI_library_init(PAPI_VER_CURRENT), PAPI_VER_CURRENT);
	EQ("is-initialized-1", PAPI_is_initialized(), PAPI_LOW_LEVEL_INITED);
	EQ("default-domain-user", PAPI_get_opt(PAPI_DEFDOM, NULL), PAPI_DOM_USER);
	EQ("default-granularity-thread", PAPI_get_opt(PAPI_DEFGRN, NULL), PAPI_GRN_THR);
	EQ("lib-version", PAPI_get_opt(PAPI_LIB_VERSION, NULL), PAPI_VERSION);
	CHECK("strerror", PAPI_strerror(PAPI_ECNFLCT) && !PAPI_strerror(1), "bad strerror");

	/* names and codes */
	EQ("preset-name-to-code", PAPI_event_name_to_code("PAPI_TOT_INS", &code), PAPI_OK);
	EQ("preset-code", code, PAPI_TOT_INS);
	EQ("preset-code-to-name", PAPI_event_code_to_name(PAPI_L1_DCM, name), PAPI_OK);
	CHECK("preset-name", !strcmp(name, "PAPI_L1_DCM"), "got %s", name);
	EQ("preset-unknown", PAPI_event_name_to_code("PAPI_NOPE", &code), PAPI_ENOEVNT);
	int pf = 0, pf2 = 0, pf3 = 0;
	EQ("native-perf-name", PAPI_event_name_to_code("perf::PAGE-FAULTS", &pf), PAPI_OK);
	CHECK("native-code-class", IS_NATIVE(pf), "code %#x", pf);
	EQ("native-case-blind", PAPI_event_name_to_code("perf::page-faults", &pf2), PAPI_OK);
	EQ("native-same-code", pf2, pf);
	EQ("native-pfm-generic", PAPI_event_name_to_code("perf::PERF_COUNT_SW_PAGE_FAULTS", &pf3),
	   PAPI_OK);
	EQ("native-pfm-cache", PAPI_event_name_to_code("perf::PERF_COUNT_HW_CACHE_L1D:READ:MISS", &code),
	   PAPI_OK);
	EQ("native-hpm-name", PAPI_event_name_to_code("page-faults", &code), PAPI_OK);
	EQ("native-unknown", PAPI_event_name_to_code("perf::NO-SUCH-EVENT", &code), PAPI_ENOEVNT);
	EQ("native-bad-attribute", PAPI_event_name_to_code("perf::PAGE-FAULTS:precise=1", &code),
	   PAPI_ENOEVNT);
	EQ("native-code-to-name", PAPI_event_code_to_name(pf, name), PAPI_OK);
	CHECK("native-name", !strcmp(name, "perf::PAGE-FAULTS"), "got %s", name);
	EQ("code-to-name-unknown", PAPI_event_code_to_name(PAPI_NATIVE_MASK | 0xfffff, name),
	   PAPI_ENOEVNT);
	EQ("query-native", PAPI_query_named_event("perf::TASK-CLOCK"), PAPI_OK);
	EQ("query-unknown", PAPI_query_named_event("perf::NO-SUCH-EVENT"), PAPI_ENOEVNT);
	EQ("event-info-preset", PAPI_get_event_info(PAPI_TOT_CYC, &info), PAPI_OK);
	CHECK("event-info-preset-fields",
	      !strcmp(info.symbol, "PAPI_TOT_CYC") && !strcmp(info.derived, "NOT_DERIVED") &&
		      info.long_descr[0] && (info.event_type & PAPI_PRESET_BIT_MSC),
	      "symbol %s derived %s type %#x", info.symbol, info.derived, info.event_type);
	int n = 0;
	code = PAPI_PRESET_MASK;
	if (PAPI_enum_event(&code, PAPI_ENUM_FIRST) == PAPI_OK)
		do
			n++;
		while (PAPI_enum_event(&code, PAPI_ENUM_EVENTS) == PAPI_OK);
	EQ("enum-presets", n, 108);
	n = 0;
	code = PAPI_NATIVE_MASK;
	if (PAPI_enum_cmp_event(&code, PAPI_ENUM_FIRST, 0) == PAPI_OK)
		do
			n++;
		while (PAPI_enum_cmp_event(&code, PAPI_ENUM_EVENTS, 0) == PAPI_OK);
	CHECK("enum-natives", n >= 20, "%d natives", n);

	/* event sets */
	EQ("create", PAPI_create_eventset(&set), PAPI_OK);
	EQ("first-set-is-0", set, 0);
	int bad = 5;
	EQ("create-needs-null", PAPI_create_eventset(&bad), PAPI_EINVAL);
	EQ("start-empty-unbound", PAPI_start(set), PAPI_ENOCMP);
	EQ("add-not-a-code", PAPI_add_event(set, 0x12345), PAPI_EINVAL);
	EQ("add", PAPI_add_event(set, pf), PAPI_OK);
	EQ("add-duplicate", PAPI_add_event(set, pf), PAPI_ECNFLCT);
	EQ("num-events", PAPI_num_events(set), 1);
	if (PAPI_query_event(PAPI_TOT_INS) != PAPI_OK)
		EQ("add-unavailable-preset", PAPI_add_event(set, PAPI_TOT_INS), PAPI_ENOEVNT);
	EQ("state-stopped", PAPI_state(set, &st), PAPI_OK);
	EQ("state-stopped-value", st, PAPI_STOPPED);
	EQ("stop-not-running", PAPI_stop(set, v), PAPI_ENOTRUN);

	struct lifecycle lc;
	lifecycle(set, &lc); /* warm-up */
	lifecycle(set, &lc);
	EQ("lc-start", lc.start, PAPI_OK);
	EQ("lc-read-10", lc.v_read1, 10);
	EQ("lc-accum-adds-15-to-100", lc.v_accum, 115);
	EQ("lc-read-after-accum-3", lc.v_read2, 3);
	EQ("lc-reset", lc.reset, PAPI_OK);
	EQ("lc-stop-4", lc.v_stop1, 4);
	EQ("lc-read-stopped-4", lc.v_read3, 4);
	EQ("lc-restart-from-0", lc.v_stop2, 5);
	EQ("libhpm-same-count", hpm_faults(10), 10);

	/* running-set rules */
	EQ("create-2", PAPI_create_eventset(&set2), PAPI_OK);
	EQ("add-2", PAPI_add_named_event(set2, "perf::TASK-CLOCK"), PAPI_OK);
	EQ("start", PAPI_start(set), PAPI_OK);
	EQ("start-twice", PAPI_start(set), PAPI_EISRUN);
	EQ("state-running", PAPI_state(set, &st), PAPI_OK);
	EQ("state-running-value", st, PAPI_RUNNING);
	EQ("second-set-same-thread", PAPI_start(set2), PAPI_EISRUN);
	EQ("add-while-running", PAPI_add_named_event(set, "perf::TASK-CLOCK"), PAPI_EISRUN);
	EQ("cleanup-while-running", PAPI_cleanup_eventset(set), PAPI_EISRUN);
	EQ("stop", PAPI_stop(set, v), PAPI_OK);
	EQ("start-other", PAPI_start(set2), PAPI_OK);
	EQ("stop-other", PAPI_stop(set2, v), PAPI_OK);
	CHECK("task-clock-counts", v[0] > 0, "%lld", v[0]);

	/* two events, then removal */
	EQ("add-second-event", PAPI_add_named_event(set, "perf::TASK-CLOCK"), PAPI_OK);
	int list[4], nl = 4;
	EQ("list-events", PAPI_list_events(set, list, &nl), PAPI_OK);
	CHECK("list-events-codes", nl == 2 && list[0] == pf, "n=%d first=%#x", nl, list[0]);
	{
		char *p = fresh_pages(7);
		PAPI_start(set);
		PAPI_stop(set, v);
		PAPI_start(set);
		touch(p, 7);
		PAPI_stop(set, v);
		EQ("two-events-faults", v[0], 7);
		CHECK("two-events-clock", v[1] > 0, "%lld", v[1]);
		munmap(p, 7 * (size_t)pagesize);
	}
	EQ("remove-not-member", PAPI_remove_named_event(set, "perf::CPU-MIGRATIONS"), PAPI_EINVAL);
	EQ("remove", PAPI_remove_named_event(set, "perf::TASK-CLOCK"), PAPI_OK);
	EQ("num-after-remove", PAPI_num_events(set), 1);
	EQ("destroy-non-empty", PAPI_destroy_eventset(&set), PAPI_EINVAL);

	/* the domain decides what counts: user-mode page faults are not kernel ones */
	PAPI_option_t opt;
	memset(&opt, 0, sizeof(opt));
	opt.domain.eventset = set;
	opt.domain.domain = PAPI_DOM_KERNEL;
	EQ("set-domain-kernel", PAPI_set_opt(PAPI_DOMAIN, &opt), PAPI_OK);
	memset(&opt, 0, sizeof(opt));
	opt.domain.eventset = set;
	EQ("get-domain", PAPI_get_opt(PAPI_DOMAIN, &opt), PAPI_DOM_KERNEL);
	{
		char *p = fresh_pages(9);
		PAPI_start(set);
		touch(p, 9);
		PAPI_stop(set, v);
		EQ("kernel-domain-no-user-faults", v[0], 0);
		munmap(p, 9 * (size_t)pagesize);
	}
	opt.domain.domain = 0x4; /* PAPI_DOM_OTHER alone: nothing perf can count */
	EQ("set-domain-invalid", PAPI_set_opt(PAPI_DOMAIN, &opt), PAPI_EINVAL_DOM);
	EQ("set-multiplex", PAPI_set_multiplex(set), PAPI_OK);
	EQ("get-multiplex", PAPI_get_multiplex(set), 1);
	EQ("set-multiplex-again", PAPI_set_multiplex(set), PAPI_EINVAL);

	EQ("cleanup", PAPI_cleanup_eventset(set), PAPI_OK);
	EQ("num-after-cleanup", PAPI_num_events(set), 0);
	EQ("start-empty-bound", (PAPI_assign_eventset_component(set, 0), PAPI_start(set)), PAPI_EINVAL);
	EQ("destroy", PAPI_destroy_eventset(&set), PAPI_OK);
	EQ("destroy-sets-null", set, PAPI_NULL);
	EQ("use-destroyed", PAPI_num_events(0), PAPI_ENOEVST);
	EQ("destroy-unknown", PAPI_destroy_eventset(&set), PAPI_ENOEVST);

	/* threads count themselves */
	EQ("thread-id-before-init", (long)PAPI_thread_id(), PAPI_EMISC);
	EQ("thread-init", PAPI_thread_init(self_id), PAPI_OK);
	EQ("thread-id", PAPI_thread_id(), (unsigned long)pthread_self());
	EQ("is-initialized-threads", PAPI_is_initialized(),
	   PAPI_LOW_LEVEL_INITED | PAPI_THREAD_LEVEL_INITED);
	struct thr_arg ta = { 13, -1, -1, 0 };
	pthread_t th;
	EQ("start-main-set", PAPI_start(set2), PAPI_OK); /* main's set runs meanwhile */
	pthread_create(&th, NULL, thread_body, &ta);
	pthread_join(th, NULL);
	EQ("stop-main-set", PAPI_stop(set2, v), PAPI_OK);
	EQ("thread-rc", ta.rc, PAPI_OK);
	EQ("thread-counts-itself", ta.count, 13);
	CHECK("thread-has-own-id", ta.id != PAPI_thread_id() && ta.id != 0, "id %lu", ta.id);

	/* user locks and thread-specific data */
	EQ("lock", PAPI_lock(PAPI_USR1_LOCK), PAPI_OK);
	EQ("unlock", PAPI_unlock(PAPI_USR1_LOCK), PAPI_OK);
	void *got = NULL;
	EQ("set-thr-specific", PAPI_set_thr_specific(PAPI_USR2_TLS, &ta), PAPI_OK);
	EQ("get-thr-specific", PAPI_get_thr_specific(PAPI_USR2_TLS, &got), PAPI_OK);
	CHECK("thr-specific-value", got == &ta, "%p", got);

	/* the machine */
	const PAPI_hw_info_t *hw = PAPI_get_hardware_info();
	CHECK("hardware-info", hw && hw->totalcpus == sysconf(_SC_NPROCESSORS_ONLN) && hw->totalcpus > 0,
	      "totalcpus %d", hw ? hw->totalcpus : -1);
	const PAPI_component_info_t *ci = PAPI_get_component_info(0);
	CHECK("component-info", ci && !strcmp(ci->name, "perf_event") && !ci->disabled, "bad");
	EQ("num-components", PAPI_num_components(), 1);
	EQ("component-index", PAPI_get_component_index("perf_event"), 0);
	EQ("num-hwctrs-matches-info", PAPI_num_hwctrs(), ci->num_cntrs);
	long long t0 = PAPI_get_real_usec(), c0 = PAPI_get_real_cyc();
	usleep(2000);
	CHECK("real-usec", PAPI_get_real_usec() - t0 >= 2000, "clock");
	CHECK("real-cyc", PAPI_get_real_cyc() > c0, "clock");
	CHECK("virt-usec", PAPI_get_virt_usec() >= 0, "clock");
	const PAPI_exe_info_t *exe = PAPI_get_executable_info();
	CHECK("exe-info", exe && strstr(exe->fullname, "papi-check") &&
				  exe->address_info.text_start < exe->address_info.text_end &&
				  (char *)exe->address_info.text_start <= (char *)cmd_api &&
				  (char *)cmd_api < (char *)exe->address_info.text_end,
	      "%s", exe ? exe->fullname : "NULL");
	PAPI_dmem_info_t dm;
	EQ("dmem", PAPI_get_dmem_info(&dm), PAPI_OK);
	CHECK("dmem-values", dm.size > 0 && dm.resident > 0 && dm.pagesize == pagesize, "size %lld",
	      dm.size);

	/* rates need their events */
	float rt, pt, ipc;
	long long ins;
	int r = PAPI_ipc(&rt, &pt, &ins, &ipc);
	if (PAPI_query_event(PAPI_TOT_INS) == PAPI_OK && PAPI_query_event(PAPI_TOT_CYC) == PAPI_OK) {
		EQ("ipc-start", r, PAPI_OK);
		/* PAPI's first call only starts counting: every output 0 */
		CHECK("ipc-start-zero", rt == 0 && pt == 0 && ins == 0 && ipc == 0,
		      "rt %f pt %f ins %lld ipc %f", rt, pt, ins, ipc);
		/* one rate call per thread: another one is refused while PAPI_ipc counts */
		float mf;
		long long fl, ref, core, evt;
		EQ("rate-busy-flops", PAPI_flops_rate(PAPI_FP_OPS, &rt, &pt, &fl, &mf), PAPI_EINVAL);
		EQ("rate-busy-epc", PAPI_epc(0, &rt, &pt, &ref, &core, &evt, &mf), PAPI_EINVAL);
		EQ("ipc-step", PAPI_ipc(&rt, &pt, &ins, &ipc), PAPI_OK);
		CHECK("ipc-values", ins > 0 && ipc > 0, "ins %lld ipc %f", ins, ipc);
		EQ("rate-stop", PAPI_rate_stop(), PAPI_OK);
	} else {
		EQ("ipc-without-events", r, PAPI_ENOEVNT);
		EQ("rate-stop-nothing", PAPI_rate_stop(), PAPI_ENOEVNT);
	}

	PAPI_cleanup_eventset(set2);
	PAPI_destroy_eventset(&set2);
	PAPI_shutdown();
	EQ("shutdown", PAPI_is_initialized(), PAPI_NOT_INITED);
	EQ("init-after-shutdown", PAPI_library_init(PAPI_VER_CURRENT), PAPI_VER_CURRENT);
	set = PAPI_NULL;
	EQ("create-after-shutdown", PAPI_create_eventset(&set), PAPI_OK);
	EQ("set-ids-restart", set, 0);
	printf("failures %d\n", failures);
	return failures ? 1 : 0;
}

/* ---- counts: the same work through PAPI and through libhpm -------------- */
static volatile unsigned long sink;

__attribute__((noinline)) static void work(unsigned long n)
{
	unsigned long x = 1;
	for (unsigned long i = 0; i < n; i++)
		x = x * 3 + i;
	sink = x;
}

static int cmd_counts(int argc, char **argv)
{
	if (argc < 3)
		return fprintf(stderr, "usage: papi-check counts N1 N2 EVENT...\n"), 2;
	unsigned long ns[2] = { strtoul(argv[0], NULL, 0), strtoul(argv[1], NULL, 0) };
	int nev = argc - 2;
	char **ev = argv + 2;
	if (nev > 4)
		return fprintf(stderr, "papi-check counts: at most 4 events\n"), 2;
	if (PAPI_library_init(PAPI_VER_CURRENT) != PAPI_VER_CURRENT)
		return fprintf(stderr, "PAPI_library_init failed\n"), 1;
	int set = PAPI_NULL, r;
	if ((r = PAPI_create_eventset(&set)) != PAPI_OK)
		return fprintf(stderr, "create: %s\n", PAPI_strerror(r)), 1;
	for (int i = 0; i < nev; i++)
		if ((r = PAPI_add_named_event(set, ev[i])) != PAPI_OK)
			return fprintf(stderr, "add %s: %s\n", ev[i], PAPI_strerror(r)), 1;
	/* libhpm: the same events by libhpm's names (PAPI presets are aliases there
	 * too), counting user space like PAPI's default domain */
	struct hpm_ctx *ctx;
	struct hpm_evset *hs;
	if (hpm_ctx__new(&ctx) || hpm_evset__new(ctx, &hs))
		return fprintf(stderr, "libhpm: cannot start\n"), 1;
	for (int i = 0; i < nev; i++) {
		char nm[160];
		const char *base = strncmp(ev[i], "perf::", 6) ? ev[i] : ev[i] + 6;
		snprintf(nm, sizeof(nm), "%s:u", base);
		for (char *c = nm; *c && *c != ':'; c++)
			if (!strncmp(ev[i], "perf::", 6) && *c >= 'A' && *c <= 'Z')
				*c = (char)(*c - 'A' + 'a');
		if (hpm_evset__add(hs, nm) < 0)
			return fprintf(stderr, "libhpm add %s: %s\n", nm, hpm_ctx__last_error(ctx)), 1;
	}
	for (int round = 0; round < 3; round++) { /* round 0 warms both paths up */
		for (int k = 0; k < 2; k++) {
			long long pv[4];
			struct hpm_value hv[4];
			PAPI_start(set);
			work(ns[k]);
			PAPI_stop(set, pv);
			hpm_evset__reset(hs);
			hpm_evset__start(hs);
			work(ns[k]);
			hpm_evset__stop(hs);
			hpm_evset__read_all(hs, hv);
			if (!round)
				continue;
			for (int i = 0; i < nev; i++)
				printf("round %d n %lu event %s papi %lld hpm %llu\n", round, ns[k], ev[i],
				       pv[i], (unsigned long long)hv[i].raw);
		}
	}
	return 0;
}

/* ---- conflict: fill the counters --------------------------------------- */
static int cmd_conflict(int argc, char **argv)
{
	if (PAPI_library_init(PAPI_VER_CURRENT) != PAPI_VER_CURRENT)
		return fprintf(stderr, "PAPI_library_init failed\n"), 1;
	int set = PAPI_NULL, added = 0, conflict = -1;
	long long v[64];
	PAPI_create_eventset(&set);
	printf("num_hwctrs %d\n", PAPI_num_hwctrs());
	for (int i = 0; i < argc; i++) {
		int r = PAPI_add_named_event(set, argv[i]);
		printf("add %s %d\n", argv[i], r);
		if (r == PAPI_OK)
			added++;
		else if (r == PAPI_ECNFLCT && conflict < 0)
			conflict = i;
	}
	printf("added %d\n", added);
	printf("first_conflict %d\n", conflict);
	int r = PAPI_start(set);
	work(100000);
	r |= PAPI_stop(set, v);
	printf("counts_after_conflict %d", r);
	for (int i = 0; i < added; i++)
		printf(" %lld", v[i]);
	printf("\n");
	/* the same list multiplexed: everything goes in, the kernel takes turns. 100 times
	 * the work, so the kernel rotates the groups many times within it (its interval is
	 * milliseconds; one rotation in a short window makes a poor estimate) */
	int mset = PAPI_NULL, madded = 0;
	PAPI_create_eventset(&mset);
	PAPI_assign_eventset_component(mset, 0);
	PAPI_set_multiplex(mset);
	for (int i = 0; i < argc; i++)
		madded += PAPI_add_named_event(mset, argv[i]) == PAPI_OK;
	r = PAPI_start(mset);
	work(100 * 100000);
	r |= PAPI_stop(mset, v);
	printf("multiplexed_added %d\n", madded);
	printf("multiplexed_counts %d", r);
	for (int i = 0; i < madded; i++)
		printf(" %lld", v[i]);
	printf("\n");
	return 0;
}

/* ---- avail: the presets through the API, papi_avail's columns ----------- */
static int cmd_avail(void)
{
	if (PAPI_library_init(PAPI_VER_CURRENT) != PAPI_VER_CURRENT)
		return fprintf(stderr, "PAPI_library_init failed\n"), 1;
	int code = PAPI_PRESET_MASK;
	PAPI_event_info_t info;
	PAPI_enum_event(&code, PAPI_ENUM_FIRST);
	do {
		if (PAPI_get_event_info(code, &info) != PAPI_OK)
			continue;
		printf("%-13s%#x  %-5s %-4s %s\n", info.symbol, info.event_code,
		       PAPI_query_event(code) == PAPI_OK ? "Yes" : "No",
		       strcmp(info.derived, "NOT_DERIVED") ? "Yes" : "No", info.long_descr);
	} while (PAPI_enum_event(&code, PAPI_ENUM_EVENTS) == PAPI_OK);
	return 0;
}

/* ---- hl: high-level regions -------------------------------------------- */
static int cmd_hl(int n)
{
	char *p = fresh_pages(n + 2);
	int r = PAPI_hl_region_begin("warm");
	touch(p, 1);
	r |= PAPI_hl_region_end("warm");
	r |= PAPI_hl_region_begin("touch");
	touch(p + pagesize, n);
	r |= PAPI_hl_region_end("touch");
	printf("hl %d\n", r);
	printf("end-without-begin %d\n", PAPI_hl_region_end("never-begun"));
	return r ? 1 : 0;
}

int main(int argc, char **argv)
{
	pagesize = sysconf(_SC_PAGESIZE);
	if (argc >= 2 && !strcmp(argv[1], "api"))
		return cmd_api();
	if (argc >= 2 && !strcmp(argv[1], "counts"))
		return cmd_counts(argc - 2, argv + 2);
	if (argc >= 2 && !strcmp(argv[1], "conflict"))
		return cmd_conflict(argc - 2, argv + 2);
	if (argc >= 2 && !strcmp(argv[1], "avail"))
		return cmd_avail();
	if (argc >= 3 && !strcmp(argv[1], "hl"))
		return cmd_hl(atoi(argv[2]));
	fprintf(stderr, "usage: papi-check api | counts N1 N2 EVENT... | conflict EVENT... | avail | hl N\n");
	return 2;
}
