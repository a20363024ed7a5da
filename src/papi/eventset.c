/* SPDX-License-Identifier: MIT */
/*
 * PAPI event sets on libhpm event sets.
 *
 * Each PAPI set owns one libhpm set. Events are opened when they are added
 * (as PAPI does), so a name that does not count here, or an event that does
 * not fit beside the others, is refused at PAPI_add_event. A set that is not
 * multiplexed must be one perf group scheduled whole: when libhpm had to
 * start a second group, or a brief enable shows the group never got onto the
 * PMU, the newcomer is dropped again and the call returns PAPI_ECNFLCT.
 *
 * The hot calls (start, read, stop) cost what libhpm's do: one ioctl or one
 * read(2). PAPI zeroes counters at PAPI_start; instead of a reset ioctl per
 * start, the counter values at the last stop become the next start's base
 * (a stopped counter does not move).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "papi_int.h"

/* Event set handles index a two-level table whose chunks never move, so a
 * handle lookup needs no lock (PAPI, too, leaves concurrent use of one set
 * to the caller). */
#define CHUNK 256
#define NCHUNKS 256
static struct hpapi_set **chunks[NCHUNKS];
static __thread struct hpapi_set *running_here; /* the set counting this thread */
static uint64_t scaled_total;
static bool scaled_reported;

struct hpapi_set *hpapi_set_get(int id)
{
	if (id < 0 || id >= CHUNK * NCHUNKS)
		return NULL;
	struct hpapi_set **c = chunks[id / CHUNK];
	return c ? c[id % CHUNK] : NULL;
}

#define NEED_INIT(call)                                               \
	do {                                                          \
		if (!(hpapi_inited & PAPI_LOW_LEVEL_INITED))          \
			return hpapi_err(PAPI_ENOINIT, call, NULL);   \
	} while (0)

#define GET_SET(s, id, call)                                                          \
	struct hpapi_set *s = hpapi_set_get(id);                                      \
	do {                                                                          \
		if (!(hpapi_inited & PAPI_LOW_LEVEL_INITED))                          \
			return hpapi_err(PAPI_ENOINIT, call, NULL);                   \
		if (!s)                                                               \
			return hpapi_err(PAPI_ENOEVST, call, "EventSet %d", (int)(id)); \
	} while (0)

static bool self_counting(const struct hpapi_set *s)
{
	return !s->attach_tid && s->cpu < 0;
}

PAPI_API int PAPI_create_eventset(int *EventSet)
{
	NEED_INIT("PAPI_create_eventset");
	if (!EventSet)
		return hpapi_err(PAPI_EINVAL, "PAPI_create_eventset", "NULL pointer");
	if (*EventSet != PAPI_NULL)
		return hpapi_err(PAPI_EINVAL, "PAPI_create_eventset",
				 "*EventSet must be PAPI_NULL (it is %d)", *EventSet);
	struct hpapi_set *s = calloc(1, sizeof(*s));
	if (!s)
		return hpapi_err(PAPI_ENOMEM, "PAPI_create_eventset", NULL);
	s->state = PAPI_STOPPED;
	s->domain = hpapi_default_domain;
	s->granularity = hpapi_default_granularity;
	s->cpu = -1;
	s->owner = hpapi_gettid();
	pthread_mutex_lock(&hpapi_lock);
	int id = -1;
	for (int c = 0; c < NCHUNKS && id < 0; c++) {
		if (!chunks[c]) {
			chunks[c] = calloc(CHUNK, sizeof(*chunks[c]));
			if (!chunks[c])
				break;
		}
		for (int k = 0; k < CHUNK; k++)
			if (!chunks[c][k]) {
				id = c * CHUNK + k;
				s->id = id;
				chunks[c][k] = s;
				break;
			}
	}
	pthread_mutex_unlock(&hpapi_lock);
	if (id < 0) {
		free(s);
		return hpapi_err(PAPI_ENOMEM, "PAPI_create_eventset", "%d event sets in use",
				 CHUNK * NCHUNKS);
	}
	*EventSet = id;
	return PAPI_OK;
}

static void free_names(char **names, int n)
{
	for (int i = 0; i < n; i++)
		free(names[i]);
}

/* Room for n events in every per-event array. */
static int reserve(struct hpapi_set *s, int n)
{
	if (n <= s->cap)
		return 0;
	int cap = s->cap ? s->cap : 4;
	while (cap < n)
		cap *= 2;
	int *codes = realloc(s->codes, sizeof(int) * (size_t)cap);
	if (codes)
		s->codes = codes;
	int *slot = realloc(s->slot, sizeof(int) * (size_t)cap);
	if (slot)
		s->slot = slot;
	char **names = realloc(s->names, sizeof(char *) * (size_t)cap);
	if (names)
		s->names = names;
	long long *last = realloc(s->last, sizeof(long long) * (size_t)cap);
	if (last)
		s->last = last;
	struct hpm_value *v[3];
	struct hpm_value **dst[3] = { &s->now, &s->base, &s->pend };
	for (int k = 0; k < 3; k++) {
		v[k] = realloc(*dst[k], sizeof(struct hpm_value) * (size_t)cap);
		if (v[k])
			*dst[k] = v[k];
	}
	if (!codes || !slot || !names || !last || !v[0] || !v[1] || !v[2])
		return -ENOMEM;
	s->cap = cap;
	return 0;
}

static void zero_counts(struct hpapi_set *s)
{
	if (!s->cap)
		return;
	memset(s->base, 0, sizeof(struct hpm_value) * (size_t)s->cap);
	memset(s->pend, 0, sizeof(struct hpm_value) * (size_t)s->cap);
	memset(s->last, 0, sizeof(long long) * (size_t)s->cap);
}

/* Did every event of the hardware group get onto the PMU? Enable it for a
 * moment: a group the PMU cannot hold runs for 0 ns. Counters are reset
 * afterwards. Returns 0, or PAPI_ECNFLCT. */
static int check_schedulable(struct hpm_evset *hs)
{
	int n = hpm_evset__nr(hs);
	struct hpm_value v[n > 0 ? n : 1];
	if (hpm_evset__start(hs) < 0 || hpm_evset__stop(hs) < 0 || hpm_evset__read_all(hs, v) < 0)
		return PAPI_ESYS;
	for (int i = 0; i < n; i++)
		if (v[i].enabled > 0 && v[i].running == 0)
			return PAPI_ECNFLCT;
	return hpm_evset__reset(hs) < 0 ? PAPI_ESYS : PAPI_OK;
}

static int open_error(int r, const char *call)
{
	int code = hpapi_errno_code(r);
	if (code == PAPI_EINVAL)
		code = PAPI_ECNFLCT; /* the kernel refused the combination */
	return hpapi_err(code, call, "%s", hpm_ctx__last_error(hpapi_ctx));
}

/* Open codes[0..n) (libhpm names in names[]) into a fresh libhpm set.
 *
 * Layout: the hardware events first, as one perf group that must be
 * scheduled whole ({...}), then every software event in a group of its own.
 * Software events never compete for counters, and a clock event (task-clock,
 * cpu-clock) that is the sibling in a group stops counting after the first
 * group disable/enable (PERF_IOC_FLAG_GROUP, Linux 6.18), so they stay leaders. A multiplexed set
 * puts every event in a group of its own, as PAPI does: the kernel then
 * rotates single events, and no event waits for a whole group to fit (in the
 * lab, a group that fits alone was never scheduled beside a second group). */
static int build(struct hpapi_set *s, const int *codes, int n, char **names,
		 struct hpm_evset **out, bool *hw_out, const char *call)
{
	size_t len = 8;
	for (int i = 0; i < n; i++)
		len += strlen(names[i]) + 4;
	char *list = malloc(len);
	if (!list)
		return hpapi_err(PAPI_ENOMEM, call, NULL);
	size_t o = 0;
	int nhw = 0;
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < n; i++) {
			bool hw = hpapi_code_is_hw(codes[i]);
			if (hw != (pass == 0))
				continue;
			if (hw && s->multiplex) {
				nhw++;
				o += (size_t)sprintf(list + o, "%s{%s}", o ? "," : "", names[i]);
			} else if (hw) {
				bool open = nhw++ == 0;
				o += (size_t)sprintf(list + o, "%s%s%s", o ? "," : "", open ? "{" : "",
						     names[i]);
			} else {
				if (pass == 1 && nhw && !s->multiplex && list[o - 1] != '}')
					list[o++] = '}';
				o += (size_t)sprintf(list + o, "%s{%s}", o ? "," : "", names[i]);
			}
		}
	if (nhw && !s->multiplex && list[o - 1] != '}')
		list[o++] = '}';
	list[o] = 0;

	struct hpm_evset *hs = NULL;
	int r = hpm_evset__new(hpapi_ctx, &hs);
	if (r < 0) {
		free(list);
		return hpapi_err(hpapi_errno_code(r), call, "libhpm: %s", strerror(-r));
	}
	if (!self_counting(s) || s->inherit) {
		pid_t pid = s->cpu >= 0 ? -1 : (pid_t)s->attach_tid;
		r = hpm_evset__set_target(hs, pid, s->cpu, s->inherit ? HPM_TARGET_INHERIT : 0);
		if (r < 0) {
			hpm_evset__delete(hs);
			free(list);
			return hpapi_err(hpapi_errno_code(r), call, "%s", hpm_ctx__last_error(hpapi_ctx));
		}
	}
	r = hpm_evset__add_list(hs, list);
	free(list);
	if (r < 0) {
		int code = open_error(r, call);
		hpm_evset__delete(hs);
		return code;
	}
	if (!s->multiplex && nhw > 1) {
		r = check_schedulable(hs);
		if (r != PAPI_OK) {
			hpm_evset__delete(hs);
			return hpapi_err(r, call,
					 r == PAPI_ECNFLCT ? "the PMU cannot count these %d events "
							     "together (a counter is busy, or too few)"
							   : "checking the group of %d events failed",
					 nhw);
		}
	}
	/* libhpm keeps the order of the list: map PAPI's order onto it */
	int k = 0;
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < n; i++)
			if (hpapi_code_is_hw(codes[i]) == (pass == 0))
				s->slot[i] = k++;
	*out = hs;
	*hw_out = nhw > 0;
	return PAPI_OK;
}

int hpapi_set_rebuild(struct hpapi_set *s, const char *call)
{
	/* names follow the set's domain, which may have changed */
	char **names = calloc((size_t)(s->n ? s->n : 1), sizeof(char *));
	if (!names)
		return hpapi_err(PAPI_ENOMEM, call, NULL);
	for (int i = 0; i < s->n; i++) {
		char buf[320];
		if (hpapi_hpm_name(s->codes[i], s->domain, buf, sizeof(buf)) != PAPI_OK ||
		    !(names[i] = strdup(buf))) {
			free_names(names, i);
			free(names);
			return hpapi_err(PAPI_ENOMEM, call, NULL);
		}
	}
	struct hpm_evset *hs = NULL;
	bool hw = false;
	int r = s->n ? build(s, s->codes, s->n, names, &hs, &hw, call) : PAPI_OK;
	if (r != PAPI_OK) {
		free_names(names, s->n);
		free(names);
		return r;
	}
	hpm_evset__delete(s->hs);
	free_names(s->names, s->n);
	memcpy(s->names, names, sizeof(char *) * (size_t)s->n);
	free(names);
	s->hs = hs;
	s->hs_started = false;
	s->has_hw = hw;
	zero_counts(s);
	return PAPI_OK;
}

static int find_code(const struct hpapi_set *s, int code)
{
	for (int i = 0; i < s->n; i++)
		if (s->codes[i] == code)
			return i;
	return -1;
}

static int add_one(struct hpapi_set *s, int code, const char *call)
{
	if (s->state & PAPI_RUNNING)
		return hpapi_err(PAPI_EISRUN, call, "EventSet %d is counting", s->id);
	if (hpapi_disabled)
		return hpapi_err(PAPI_ECMP_DISABLED, call, "component perf_event was disabled");
	if (!IS_PRESET(code) && !IS_NATIVE(code))
		return hpapi_err(PAPI_EINVAL, call, "%#x is not an event code", code);
	const char *pname = hpapi_code_name(code);
	if (!pname)
		return hpapi_err(PAPI_ENOEVNT, call, "no event with code %#x", code);
	if (find_code(s, code) >= 0)
		return hpapi_err(PAPI_ECNFLCT, call, "%s is already in EventSet %d", pname, s->id);
	if (IS_PRESET(code) && PAPI_query_event(code) != PAPI_OK)
		return hpapi_err(PAPI_ENOEVNT, call, "preset %s does not count on this CPU "
				 "(hpm papi-avail lists what does)", pname);
	char name[320];
	if (hpapi_hpm_name(code, s->domain, name, sizeof(name)) != PAPI_OK)
		return hpapi_err(PAPI_ENOEVNT, call, "code %#x", code);
	char *dup = strdup(name);
	if (!dup || reserve(s, s->n + 1) < 0) {
		free(dup);
		return hpapi_err(PAPI_ENOMEM, call, NULL);
	}
	/* libhpm cannot take one event out of a set, and software events keep
	 * groups of their own: the set is reopened with the newcomer, and left
	 * as it was when that fails */
	s->codes[s->n] = code;
	s->names[s->n] = dup;
	s->n++;
	int r = hpapi_set_rebuild(s, call);
	if (r != PAPI_OK) {
		s->n--;
		free(s->names[s->n]);
		return r == PAPI_ECNFLCT && s->n
			       ? hpapi_err(r, call, "%s does not fit beside the %d event(s) of EventSet %d",
					   pname, s->n, s->id)
			       : r;
	}
	return PAPI_OK;
}

PAPI_API int PAPI_add_event(int EventSet, int EventCode)
{
	GET_SET(s, EventSet, "PAPI_add_event");
	return add_one(s, EventCode, "PAPI_add_event");
}

PAPI_API int PAPI_add_named_event(int EventSet, const char *EventName)
{
	GET_SET(s, EventSet, "PAPI_add_named_event");
	if (!EventName)
		return hpapi_err(PAPI_EINVAL, "PAPI_add_named_event", "NULL name");
	int code, r = PAPI_event_name_to_code(EventName, &code);
	if (r != PAPI_OK)
		return r;
	return add_one(s, code, "PAPI_add_named_event");
}

PAPI_API int PAPI_add_events(int EventSet, int *Events, int number)
{
	GET_SET(s, EventSet, "PAPI_add_events");
	if (!Events || number <= 0)
		return hpapi_err(PAPI_EINVAL, "PAPI_add_events", "no events");
	for (int i = 0; i < number; i++) {
		int r = add_one(s, Events[i], "PAPI_add_events");
		if (r != PAPI_OK)
			return i > 0 ? i : r; /* how many went in before the failure */
	}
	return PAPI_OK;
}

static int remove_one(struct hpapi_set *s, int code, const char *call)
{
	if (s->state & PAPI_RUNNING)
		return hpapi_err(PAPI_EISRUN, call, "EventSet %d is counting", s->id);
	int i = find_code(s, code);
	if (i < 0)
		return hpapi_err(PAPI_EINVAL, call, "event %#x is not in EventSet %d", code, s->id);
	char *gone = s->names[i];
	memmove(&s->codes[i], &s->codes[i + 1], sizeof(int) * (size_t)(s->n - i - 1));
	memmove(&s->names[i], &s->names[i + 1], sizeof(char *) * (size_t)(s->n - i - 1));
	s->n--;
	free(gone);
	/* fewer events always fit; reopening loses nothing PAPI keeps */
	return hpapi_set_rebuild(s, call);
}

PAPI_API int PAPI_remove_event(int EventSet, int EventCode)
{
	GET_SET(s, EventSet, "PAPI_remove_event");
	return remove_one(s, EventCode, "PAPI_remove_event");
}

PAPI_API int PAPI_remove_named_event(int EventSet, const char *EventName)
{
	GET_SET(s, EventSet, "PAPI_remove_named_event");
	if (!EventName)
		return hpapi_err(PAPI_EINVAL, "PAPI_remove_named_event", "NULL name");
	int code, r = PAPI_event_name_to_code(EventName, &code);
	if (r != PAPI_OK)
		return r;
	return remove_one(s, code, "PAPI_remove_named_event");
}

PAPI_API int PAPI_remove_events(int EventSet, int *Events, int number)
{
	GET_SET(s, EventSet, "PAPI_remove_events");
	if (!Events || number <= 0)
		return hpapi_err(PAPI_EINVAL, "PAPI_remove_events", "no events");
	for (int i = 0; i < number; i++) {
		int r = remove_one(s, Events[i], "PAPI_remove_events");
		if (r != PAPI_OK)
			return i > 0 ? i : r;
	}
	return PAPI_OK;
}

PAPI_API int PAPI_list_events(int EventSet, int *Events, int *number)
{
	GET_SET(s, EventSet, "PAPI_list_events");
	if (!number || *number < 0 || (*number > 0 && !Events))
		return hpapi_err(PAPI_EINVAL, "PAPI_list_events", "bad array or size");
	for (int i = 0; i < s->n && i < *number; i++)
		Events[i] = s->codes[i];
	*number = s->n;
	return PAPI_OK;
}

PAPI_API int PAPI_num_events(int EventSet)
{
	GET_SET(s, EventSet, "PAPI_num_events");
	return s->n;
}

PAPI_API int PAPI_state(int EventSet, int *status)
{
	GET_SET(s, EventSet, "PAPI_state");
	if (!status)
		return hpapi_err(PAPI_EINVAL, "PAPI_state", "NULL status");
	*status = s->state | (s->multiplex ? PAPI_MULTIPLEXING : 0) |
		  (s->attach_tid ? PAPI_ATTACHED : 0) | (s->cpu >= 0 ? PAPI_CPU_ATTACHED : 0);
	return PAPI_OK;
}

static void report_scaled(void)
{
	if (scaled_total)
		fprintf(stderr,
			"libhpm-papi: %llu read(s) of event sets that are not multiplexed were "
			"scaled: their events were not on the PMU the whole time (another user "
			"of the counters?); those values are estimates\n",
			(unsigned long long)scaled_total);
}

/* Values since start from the counters' current state. */
static int collect(struct hpapi_set *s, long long *values, bool keep)
{
	int r = s->n == 1 ? hpm_evset__read(s->hs, 0, s->now) : hpm_evset__read_all(s->hs, s->now);
	if (r < 0)
		return hpapi_err(PAPI_ESYS, "read", "%s", hpm_ctx__last_error(hpapi_ctx));
	for (int i = 0; i < s->n; i++) {
		const struct hpm_value *a = &s->base[s->slot[i]], *b = &s->now[s->slot[i]];
		uint64_t d = b->raw - a->raw, en = b->enabled - a->enabled, run = b->running - a->running;
		long long v = (long long)d;
		if (run < en) {
			/* not on a counter all the time: scale like perf, and say so */
			v = run ? (long long)((double)d * ((double)en / (double)run)) : 0;
			if (!s->multiplex) {
				s->scaled_reads++;
				if (!scaled_total++ && !scaled_reported) {
					scaled_reported = true;
					atexit(report_scaled);
				}
			}
		}
		if (values)
			values[i] = keep ? values[i] + v : v;
	}
	return PAPI_OK;
}

PAPI_API int PAPI_start(int EventSet)
{
	GET_SET(s, EventSet, "PAPI_start");
	if (s->state & PAPI_RUNNING)
		return hpapi_err(PAPI_EISRUN, "PAPI_start", "EventSet %d is counting already", EventSet);
	if (!s->n)
		return hpapi_err(s->assigned ? PAPI_EINVAL : PAPI_ENOCMP, "PAPI_start",
				 "EventSet %d has no events", EventSet);
	if (self_counting(s) && running_here)
		return hpapi_err(PAPI_EISRUN, "PAPI_start",
				 "EventSet %d counts this thread already (one running set per thread)",
				 running_here->id);
	memcpy(s->base, s->pend, sizeof(struct hpm_value) * (size_t)s->n);
	int r = hpm_evset__start(s->hs);
	if (r < 0)
		return hpapi_err(hpapi_errno_code(r), "PAPI_start", "%s", hpm_ctx__last_error(hpapi_ctx));
	s->hs_started = true;
	s->state = PAPI_RUNNING;
	if (self_counting(s))
		running_here = s;
	return PAPI_OK;
}

PAPI_API int PAPI_stop(int EventSet, long long *values)
{
	GET_SET(s, EventSet, "PAPI_stop");
	if (!(s->state & PAPI_RUNNING))
		return hpapi_err(PAPI_ENOTRUN, "PAPI_stop", "EventSet %d is not counting", EventSet);
	int r = hpm_evset__stop(s->hs);
	if (r < 0)
		return hpapi_err(PAPI_ESYS, "PAPI_stop", "%s", hpm_ctx__last_error(hpapi_ctx));
	s->state = PAPI_STOPPED;
	if (running_here == s)
		running_here = NULL;
	r = collect(s, s->last, false);
	if (r != PAPI_OK)
		return r;
	memcpy(s->pend, s->now, sizeof(struct hpm_value) * (size_t)s->n);
	if (values)
		memcpy(values, s->last, sizeof(long long) * (size_t)s->n);
	return PAPI_OK;
}

PAPI_API int PAPI_read(int EventSet, long long *values)
{
	GET_SET(s, EventSet, "PAPI_read");
	if (!values)
		return hpapi_err(PAPI_EINVAL, "PAPI_read", "NULL values");
	if (!(s->state & PAPI_RUNNING)) {
		/* a stopped set reads what it counted until its stop */
		if (s->n)
			memcpy(values, s->last, sizeof(long long) * (size_t)s->n);
		return PAPI_OK;
	}
	return collect(s, values, false);
}

PAPI_API int PAPI_read_ts(int EventSet, long long *values, long long *cyc)
{
	int r = PAPI_read(EventSet, values);
	if (r == PAPI_OK && cyc)
		*cyc = PAPI_get_real_cyc();
	return r;
}

PAPI_API int PAPI_accum(int EventSet, long long *values)
{
	GET_SET(s, EventSet, "PAPI_accum");
	if (!values)
		return hpapi_err(PAPI_EINVAL, "PAPI_accum", "NULL values");
	if (!(s->state & PAPI_RUNNING)) {
		for (int i = 0; i < s->n; i++) {
			values[i] += s->last[i];
			s->last[i] = 0;
		}
		return PAPI_OK;
	}
	int r = collect(s, values, true);
	if (r == PAPI_OK) /* counting restarts from here: the reading is the new base */
		memcpy(s->base, s->now, sizeof(struct hpm_value) * (size_t)s->n);
	return r;
}

PAPI_API int PAPI_reset(int EventSet)
{
	GET_SET(s, EventSet, "PAPI_reset");
	if (!s->n)
		return PAPI_OK;
	if (!(s->state & PAPI_RUNNING)) {
		memset(s->last, 0, sizeof(long long) * (size_t)s->n);
		return PAPI_OK; /* the next start counts from zero anyway */
	}
	int r = collect(s, NULL, false);
	if (r == PAPI_OK)
		memcpy(s->base, s->now, sizeof(struct hpm_value) * (size_t)s->n);
	return r;
}

PAPI_API int PAPI_cleanup_eventset(int EventSet)
{
	GET_SET(s, EventSet, "PAPI_cleanup_eventset");
	if (s->state & PAPI_RUNNING)
		return hpapi_err(PAPI_EISRUN, "PAPI_cleanup_eventset", "EventSet %d is counting",
				 EventSet);
	hpm_evset__delete(s->hs);
	s->hs = NULL;
	s->hs_started = false;
	s->has_hw = false;
	free_names(s->names, s->n);
	s->n = 0;
	s->multiplex = false; /* cleanup turns multiplexing off, as in PAPI */
	return PAPI_OK;
}

static void free_set(struct hpapi_set *s)
{
	hpm_evset__delete(s->hs);
	free_names(s->names, s->n);
	free(s->names);
	free(s->codes);
	free(s->slot);
	free(s->now);
	free(s->base);
	free(s->pend);
	free(s->last);
	free(s);
}

PAPI_API int PAPI_destroy_eventset(int *EventSet)
{
	NEED_INIT("PAPI_destroy_eventset");
	if (!EventSet)
		return hpapi_err(PAPI_EINVAL, "PAPI_destroy_eventset", "NULL pointer");
	GET_SET(s, *EventSet, "PAPI_destroy_eventset");
	if (s->state & PAPI_RUNNING)
		return hpapi_err(PAPI_EISRUN, "PAPI_destroy_eventset", "EventSet %d is counting",
				 *EventSet);
	if (s->n)
		return hpapi_err(PAPI_EINVAL, "PAPI_destroy_eventset",
				 "EventSet %d still has %d event(s): PAPI_cleanup_eventset first",
				 *EventSet, s->n);
	pthread_mutex_lock(&hpapi_lock);
	chunks[s->id / CHUNK][s->id % CHUNK] = NULL;
	pthread_mutex_unlock(&hpapi_lock);
	free_set(s);
	*EventSet = PAPI_NULL;
	return PAPI_OK;
}

void hpapi_sets_destroy_all(void)
{
	pthread_mutex_lock(&hpapi_lock);
	for (int c = 0; c < NCHUNKS; c++) {
		if (!chunks[c])
			continue;
		for (int k = 0; k < CHUNK; k++)
			if (chunks[c][k]) {
				struct hpapi_set *s = chunks[c][k];
				if (s->state & PAPI_RUNNING)
					hpm_evset__stop(s->hs);
				free_set(s);
			}
		free(chunks[c]);
		chunks[c] = NULL;
	}
	running_here = NULL;
	hpapi_events_reset();
	pthread_mutex_unlock(&hpapi_lock);
}

PAPI_API int PAPI_assign_eventset_component(int EventSet, int cidx)
{
	GET_SET(s, EventSet, "PAPI_assign_eventset_component");
	if (cidx != HPAPI_CIDX)
		return hpapi_err(PAPI_ENOCMP, "PAPI_assign_eventset_component", "component %d", cidx);
	s->assigned = true;
	return PAPI_OK;
}

PAPI_API int PAPI_get_eventset_component(int EventSet)
{
	GET_SET(s, EventSet, "PAPI_get_eventset_component");
	if (!s->assigned && !s->n)
		return hpapi_err(PAPI_ENOCMP, "PAPI_get_eventset_component",
				 "EventSet %d has no component yet", EventSet);
	return HPAPI_CIDX;
}

/* Change a stopped set's counting target or mode and reopen it; on failure
 * the set keeps its old settings. */
static int retarget(struct hpapi_set *s, unsigned long tid, int cpu, bool inherit, bool mpx,
		    const char *call)
{
	if (s->state & PAPI_RUNNING)
		return hpapi_err(PAPI_EISRUN, call, "EventSet %d is counting", s->id);
	struct hpapi_set old = *s;
	s->attach_tid = tid;
	s->cpu = cpu;
	s->inherit = inherit;
	s->multiplex = mpx;
	int r = hpapi_set_rebuild(s, call);
	if (r != PAPI_OK) {
		s->attach_tid = old.attach_tid;
		s->cpu = old.cpu;
		s->inherit = old.inherit;
		s->multiplex = old.multiplex;
	}
	return r;
}

PAPI_API int PAPI_attach(int EventSet, unsigned long tid)
{
	GET_SET(s, EventSet, "PAPI_attach");
	if (!tid)
		return hpapi_err(PAPI_EINVAL, "PAPI_attach", "thread id 0");
	return retarget(s, tid, -1, s->inherit, s->multiplex, "PAPI_attach");
}

PAPI_API int PAPI_detach(int EventSet)
{
	GET_SET(s, EventSet, "PAPI_detach");
	if (!s->attach_tid)
		return hpapi_err(PAPI_EINVAL, "PAPI_detach", "EventSet %d is not attached", EventSet);
	return retarget(s, 0, -1, s->inherit, s->multiplex, "PAPI_detach");
}

int hpapi_set_cpu(struct hpapi_set *s, int cpu)
{
	return retarget(s, 0, cpu, s->inherit, s->multiplex, "PAPI_set_opt(PAPI_CPU_ATTACH)");
}

int hpapi_set_inherit(struct hpapi_set *s, bool inherit)
{
	return retarget(s, s->attach_tid, s->cpu, inherit, s->multiplex, "PAPI_set_opt(PAPI_INHERIT)");
}

int hpapi_set_domain_of(struct hpapi_set *s, int domain)
{
	if (s->state & PAPI_RUNNING)
		return hpapi_err(PAPI_EISRUN, "PAPI_set_opt(PAPI_DOMAIN)", "EventSet %d is counting",
				 s->id);
	int old = s->domain;
	s->domain = domain;
	int r = hpapi_set_rebuild(s, "PAPI_set_opt(PAPI_DOMAIN)");
	if (r != PAPI_OK)
		s->domain = old;
	return r;
}

PAPI_API int PAPI_multiplex_init(void)
{
	NEED_INIT("PAPI_multiplex_init");
	return PAPI_OK; /* the kernel multiplexes perf groups; nothing to set up */
}

PAPI_API int PAPI_set_multiplex(int EventSet)
{
	GET_SET(s, EventSet, "PAPI_set_multiplex");
	if (s->multiplex)
		return hpapi_err(PAPI_EINVAL, "PAPI_set_multiplex", "EventSet %d is multiplexed already",
				 EventSet);
	if (!s->assigned && !s->n)
		return hpapi_err(PAPI_ENOCMP, "PAPI_set_multiplex",
				 "EventSet %d has no component yet (add an event or "
				 "PAPI_assign_eventset_component)", EventSet);
	return retarget(s, s->attach_tid, s->cpu, s->inherit, true, "PAPI_set_multiplex");
}

PAPI_API int PAPI_get_multiplex(int EventSet)
{
	GET_SET(s, EventSet, "PAPI_get_multiplex");
	return s->multiplex ? 1 : 0;
}
