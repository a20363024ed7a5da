/* SPDX-License-Identifier: MIT */
/*
 * Direct cycle counter (include/hpm/cycles.h): probe which counters user
 * space may read here, check that their values behave like a clock, and read
 * the chosen one with as few instructions as the ISA allows.
 *
 * Counter instructions the kernel forbids trap (SIGILL on arm64/riscv64,
 * SIGSEGV from #GP on x86), so the direct sources are tried in a forked child
 * that only reads the counter, writes the samples to a pipe and exits: the
 * caller's signal handlers are never touched.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "hpm/cycles.h"
#include "internal.h"

#define NSAMPLES 64
#define SPIN 20000 /* work between two samples: a few microseconds */

struct hpm_cycles {
	struct hpm_cc_status st;
	struct hpm_ctx *ctx;     /* PMU sources: a perf "cycles" event */
	struct hpm_evset *set;
};

static __thread char open_err[1200];

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void spin(void)
{
	for (volatile int i = 0; i < SPIN; i++)
		;
}

HPM_API const char *hpm_cc_source_name(int source)
{
	static const char *const n[] = { "auto", "pmu-direct", "pmu-mmap", "timestamp",
					 "perf-read", "clock" };
	return source >= 0 && source < HPM_CC_NSOURCES ? n[source] : "?";
}

/* Samples taken by one source; t0/t1 bracket them on CLOCK_MONOTONIC. */
struct samples {
	uint64_t v[NSAMPLES];
	uint64_t t0, t1;
	uint64_t burst_ns, burst_n; /* back-to-back reads: cost */
	uint64_t res;               /* smallest non-zero back-to-back difference */
};

typedef uint64_t (*read_fn)(void *arg);

static void take_samples(read_fn rd, void *arg, struct samples *s)
{
	s->res = 0;
	/* back-to-back reads: resolution and cost */
	uint64_t prev = rd(arg);
	uint64_t b0 = now_ns();
	s->burst_n = 2000;
	for (uint64_t i = 0; i < s->burst_n; i++) {
		uint64_t x = rd(arg);
		if (x > prev && (!s->res || x - prev < s->res))
			s->res = x - prev;
		prev = x;
	}
	s->burst_ns = now_ns() - b0;
	s->t0 = now_ns();
	for (int i = 0; i < NSAMPLES; i++) {
		s->v[i] = rd(arg);
		spin();
	}
	s->t1 = now_ns();
}

static uint64_t rd_direct(void *arg)
{
	(void)arg;
	return arch_cc_direct();
}

static uint64_t rd_timestamp(void *arg)
{
	(void)arg;
	return arch_cc_timestamp();
}

static uint64_t rd_clock(void *arg)
{
	(void)arg;
	return now_ns();
}

static uint64_t rd_evset(void *arg)
{
	struct hpm_value v;
	arch_cc_fence();
	return hpm_evset__read(arg, 0, &v) == 0 ? v.raw : 0;
}

/* Run take_samples(rd) in a child; 0 with s filled, or -1 with why saying how
 * the child died. */
static int sample_in_child(read_fn rd, struct samples *s, char *why, size_t len)
{
	int p[2];
	if (pipe(p) < 0) {
		snprintf(why, len, "pipe: %s", strerror(errno));
		return -1;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(why, len, "fork: %s", strerror(errno));
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		close(p[0]);
		/* default dispositions: a trap must kill the child, not be caught */
		signal(SIGILL, SIG_DFL);
		signal(SIGSEGV, SIG_DFL);
		/* emulators print their own line when the child traps: the parent
		 * reports the reason, so keep the child quiet */
		int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (devnull >= 0)
			dup2(devnull, 2);
		struct samples cs;
		take_samples(rd, NULL, &cs);
		ssize_t w = write(p[1], &cs, sizeof(cs));
		_exit(w == (ssize_t)sizeof(cs) ? 0 : 1);
	}
	close(p[1]);
	size_t got = 0;
	while (got < sizeof(*s)) {
		ssize_t r = read(p[0], (char *)s + got, sizeof(*s) - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(p[0]);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);
		snprintf(why, len, "reading it killed a test process with %s (%s)",
			 sig == SIGILL ? "SIGILL" : sig == SIGSEGV ? "SIGSEGV" : "a signal",
			 sig == SIGILL ? "the instruction is not allowed in user mode"
				       : strsignal(sig));
		return -1;
	}
	if (got != sizeof(*s) || !WIFEXITED(status) || WEXITSTATUS(status)) {
		snprintf(why, len, "the test process failed (exit status %d)", WEXITSTATUS(status));
		return -1;
	}
	return 0;
}

/* Does the counter behave like a clock? Fills hz (measured), resolution,
 * read cost; returns 0, or -1 with why describing the misbehaviour. */
static int check_samples(const struct samples *s, bool core, struct hpm_cc_status *st,
			 char *why, size_t len)
{
	for (int i = 1; i < NSAMPLES; i++)
		if (s->v[i] < s->v[i - 1]) {
			snprintf(why, len,
				 "not trusted: it went backwards (sample %d: %llu after %llu)", i,
				 (unsigned long long)s->v[i], (unsigned long long)s->v[i - 1]);
			return -1;
		}
	uint64_t span = s->v[NSAMPLES - 1] - s->v[0];
	double secs = (double)(s->t1 - s->t0) / 1e9;
	if (!span) {
		snprintf(why, len,
			 "not trusted: constant (%llu in all %d reads over %.3f ms of busy work)",
			 (unsigned long long)s->v[0], NSAMPLES, secs * 1e3);
		return -1;
	}
	/* a counter that moved in only a few of the intervals is stuck most of the time */
	int moved = 0;
	for (int i = 1; i < NSAMPLES; i++)
		moved += s->v[i] != s->v[i - 1];
	double hz = secs > 0 ? (double)span / secs : 0;
	if (core && (hz < 1e6 || hz > 2e10)) {
		snprintf(why, len,
			 "not trusted: %.3g counts per second against CLOCK_MONOTONIC is not a core "
			 "clock rate (1 MHz .. 20 GHz)",
			 hz);
		return -1;
	}
	if (core && moved < NSAMPLES / 2) {
		snprintf(why, len,
			 "not trusted: it changed in only %d of %d intervals of busy work", moved,
			 NSAMPLES - 1);
		return -1;
	}
	st->hz = hz;
	st->hz_measured = 1;
	st->resolution = s->res;
	st->read_ns = s->burst_n ? (double)s->burst_ns / (double)s->burst_n : 0;
	return 0;
}

static void probe_direct(struct hpm_cc_status *st)
{
	char hint[240], why[240];
	st->name = arch_cc_direct_name();
	st->core_cycles = 1;
	if (!st->name) {
		st->name = "none";
		snprintf(st->why, sizeof(st->why), "no direct cycle counter instruction for this ISA");
		return;
	}
	if (!arch_cc_direct_allowed(hint, sizeof(hint))) {
		snprintf(st->why, sizeof(st->why), "%s", hint);
		return;
	}
	struct samples s;
	if (sample_in_child(rd_direct, &s, why, sizeof(why)) < 0) {
		snprintf(st->why, sizeof(st->why), "%s; %s", why, hint);
		return;
	}
	if (check_samples(&s, true, st, why, sizeof(why)) < 0) {
		snprintf(st->why, sizeof(st->why), "%s %s", st->name, why);
		return;
	}
	st->available = 1;
	snprintf(st->why, sizeof(st->why), "allowed: %s", hint);
}

static void probe_timestamp(struct hpm_cc_status *st)
{
	char why[240];
	st->name = arch_cc_timestamp_name();
	if (!st->name) {
		st->name = "none";
		snprintf(st->why, sizeof(st->why), "no timestamp counter instruction for this ISA");
		return;
	}
	struct samples s;
	if (sample_in_child(rd_timestamp, &s, why, sizeof(why)) < 0) {
		snprintf(st->why, sizeof(st->why), "%s (disabled with prctl(PR_SET_TSC)?)", why);
		return;
	}
	if (check_samples(&s, false, st, why, sizeof(why)) < 0) {
		snprintf(st->why, sizeof(st->why), "%s %s", st->name, why);
		return;
	}
	double arch_hz = arch_cc_timestamp_hz();
	st->available = 1;
	if (arch_hz > 0) {
		snprintf(st->why, sizeof(st->why),
			 "fixed-rate ticks, %.6g Hz from the hardware (measured %.6g Hz)", arch_hz,
			 st->hz);
		st->hz = arch_hz;
		st->hz_measured = 0;
	} else {
		snprintf(st->why, sizeof(st->why),
			 "fixed-rate ticks; the hardware does not state the rate, measured %.6g Hz "
			 "against CLOCK_MONOTONIC",
			 st->hz);
	}
}

/* PMU sources: a perf "cycles" event on this thread. mmap: read through the
 * user page (libhpm's mmap_read); perf-read: read(2). */
static int open_pmu(struct hpm_cycles *cc, bool want_mmap)
{
	struct hpm_cc_status *st = &cc->st;
	st->core_cycles = 1;
	st->name = want_mmap ? "cycles via perf mmap page" : "cycles via read(2)";
	int r = hpm_ctx__new(&cc->ctx);
	if (r < 0) {
		snprintf(st->why, sizeof(st->why), "libhpm context: %s", strerror(-r));
		return r;
	}
	if ((r = hpm_evset__new(cc->ctx, &cc->set)) < 0 ||
	    (r = hpm_evset__add(cc->set, "cycles")) < 0) {
		snprintf(st->why, sizeof(st->why), "cannot open a perf cycles event: %s",
			 hpm_ctx__last_error(cc->ctx));
		return r;
	}
	if ((r = hpm_evset__start(cc->set)) < 0) {
		snprintf(st->why, sizeof(st->why), "cannot start the cycles event: %s",
			 hpm_ctx__last_error(cc->ctx));
		return r;
	}
	char why[240];
	int path = hpm_evset__read_path(cc->set, 0, why, sizeof(why));
	if (want_mmap && path != HPM_READ_MMAP) {
		const char *hint = arch_cc_mmap_hint();
		snprintf(st->why, sizeof(st->why), "%s", strstr(why, hint) ? why : hint);
		if (!strstr(why, hint) && strlen(st->why) + strlen(why) + 3 < sizeof(st->why))
			snprintf(st->why, sizeof(st->why), "%s (%s)", why, hint);
		return -ENOTSUP;
	}
	struct samples s;
	take_samples(rd_evset, cc->set, &s);
	struct hpm_value v;
	if (want_mmap && (hpm_evset__read(cc->set, 0, &v) < 0 || v.path != HPM_READ_MMAP)) {
		snprintf(st->why, sizeof(st->why),
			 "the user page is published but reads fall back to read(2) (counter not "
			 "scheduled?)");
		return -ENOTSUP;
	}
	if (check_samples(&s, true, st, why, sizeof(why)) < 0) {
		snprintf(st->why, sizeof(st->why), "%s %s", st->name, why);
		return -ENOTSUP;
	}
	st->available = 1;
	snprintf(st->why, sizeof(st->why), "%s",
		 want_mmap ? "syscall-free: perf user page + counter instruction"
		 : path == HPM_READ_MMAP
			 ? "libhpm reads this event through the perf mmap page here (as pmu-mmap)"
			 : "one read(2) per sample: exact but slow, for long intervals");
	return 0;
}

static void probe_clock(struct hpm_cc_status *st)
{
	struct samples s;
	char why[200];
	st->name = "clock_gettime(CLOCK_MONOTONIC)";
	take_samples(rd_clock, NULL, &s);
	if (check_samples(&s, false, st, why, sizeof(why)) < 0) {
		snprintf(st->why, sizeof(st->why), "%s", why);
		return;
	}
	st->available = 1;
	st->hz = 1e9;
	st->hz_measured = 0;
	snprintf(st->why, sizeof(st->why), "nanoseconds through the vDSO");
}

static void cc_release(struct hpm_cycles *cc)
{
	if (cc->set)
		hpm_evset__delete(cc->set);
	if (cc->ctx)
		hpm_ctx__delete(cc->ctx);
	cc->set = NULL;
	cc->ctx = NULL;
}

static void probe_one(struct hpm_cycles *cc, int source)
{
	memset(&cc->st, 0, sizeof(cc->st));
	cc->st.source = source;
	switch (source) {
	case HPM_CC_PMU_DIRECT:
		probe_direct(&cc->st);
		break;
	case HPM_CC_PMU_MMAP:
	case HPM_CC_PERF_READ:
		if (open_pmu(cc, source == HPM_CC_PMU_MMAP) < 0)
			cc_release(cc);
		break;
	case HPM_CC_TIMESTAMP:
		probe_timestamp(&cc->st);
		break;
	case HPM_CC_CLOCK:
		probe_clock(&cc->st);
		break;
	}
}

HPM_API int hpm_cycles__probe(struct hpm_cc_status *st, int max)
{
	if (!st || max < 0)
		return -EINVAL;
	int n = 0;
	for (int src = 1; src < HPM_CC_NSOURCES && n < max; src++) {
		struct hpm_cycles cc = { 0 };
		probe_one(&cc, src);
		cc_release(&cc);
		st[n++] = cc.st;
	}
	return n;
}

HPM_API int hpm_cycles__open(struct hpm_cycles **out, int source)
{
	if (!out || source < 0 || source >= HPM_CC_NSOURCES)
		return -EINVAL;
	*out = NULL;
	struct hpm_cycles *cc = calloc(1, sizeof(*cc));
	if (!cc)
		return -ENOMEM;
	static const int order[] = { HPM_CC_PMU_DIRECT, HPM_CC_PMU_MMAP, HPM_CC_TIMESTAMP,
				     HPM_CC_CLOCK };
	char tried[sizeof(open_err)] = "";
	for (unsigned i = 0; i < ARRAY_SIZE(order); i++) {
		int src = source == HPM_CC_AUTO ? order[i] : source;
		probe_one(cc, src);
		if (cc->st.available) {
			*out = cc;
			return 0;
		}
		size_t used = strlen(tried);
		snprintf(tried + used, sizeof(tried) - used, "%s%s: %s", used ? "; " : "",
			 hpm_cc_source_name(src), cc->st.why);
		if (source != HPM_CC_AUTO)
			break;
	}
	snprintf(open_err, sizeof(open_err), "%s", tried);
	free(cc);
	return -ENOTSUP;
}

HPM_API void hpm_cycles__close(struct hpm_cycles *cc)
{
	if (!cc)
		return;
	cc_release(cc);
	free(cc);
}

HPM_API const char *hpm_cycles__error(void)
{
	return open_err;
}

HPM_API uint64_t hpm_cycles__read(struct hpm_cycles *cc)
{
	switch (cc->st.source) {
	case HPM_CC_PMU_DIRECT:
		return arch_cc_direct();
	case HPM_CC_PMU_MMAP:
	case HPM_CC_PERF_READ:
		return rd_evset(cc->set);
	case HPM_CC_TIMESTAMP:
		return arch_cc_timestamp();
	default:
		return now_ns();
	}
}

HPM_API const struct hpm_cc_status *hpm_cycles__status(const struct hpm_cycles *cc)
{
	return cc ? &cc->st : NULL;
}

HPM_API const char *hpm_cycles__unit(const struct hpm_cycles *cc)
{
	if (cc->st.core_cycles)
		return "cycles";
	return cc->st.source == HPM_CC_CLOCK ? "ns" : "ticks";
}

HPM_API double hpm_cycles__to_ns(const struct hpm_cycles *cc, uint64_t delta)
{
	return cc->st.hz > 0 ? (double)delta * 1e9 / cc->st.hz : 0;
}
