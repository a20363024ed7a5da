/* SPDX-License-Identifier: MIT */
/*
 * libhpm-papi internals: the PAPI C interface on libhpm's public API.
 *
 * An event set is a list of PAPI event codes plus one libhpm event set that
 * counts them. Sets that are not multiplexed must be one perf group (PAPI
 * counts all events of a set together or refuses with PAPI_ECNFLCT), so a
 * set whose events do not fit in one group is rebuilt without the newcomer.
 */
#ifndef HPM_PAPI_INT_H
#define HPM_PAPI_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "hpm/hpm.h"
#include "papi.h"

#define PAPI_API __attribute__((visibility("default")))

/* the one component */
#define HPAPI_CIDX 0

struct hpapi_set {
	int id;
	int state;          /* PAPI_STOPPED | PAPI_RUNNING */
	int domain;         /* PAPI_DOM_* */
	int granularity;    /* PAPI_GRN_* */
	bool multiplex;
	bool inherit;
	bool assigned;      /* PAPI_assign_eventset_component ran */
	unsigned long attach_tid; /* 0: the thread that adds the events */
	int cpu;            /* >= 0: PAPI_CPU_ATTACH */
	pid_t owner;        /* thread that created the set */
	int n, cap;
	int *codes;         /* PAPI event codes, in the order added */
	int *slot;          /* index of each in the libhpm set (hardware events come first) */
	char **names;       /* what libhpm opened for each (with modifiers) */
	struct hpm_evset *hs;
	bool hs_started;    /* hs has been started: adding reopens the whole set */
	bool has_hw;        /* some event is a hardware event (schedulability matters) */
	/* Counting since PAPI_start without a reset ioctl on the hot path: the
	 * counters are not touched while stopped, so the value since start is
	 * the counter minus its value at start (base*), and the counter value at
	 * the last stop becomes the next start's base. */
	struct hpm_value *now, *base, *pend; /* in libhpm's order */
	long long *last;    /* values at the last stop (PAPI_read of a stopped set) */
	uint64_t scaled_reads; /* reads whose events were not on a counter all the time */
};

/* library state (init.c) */
extern int hpapi_inited;      /* PAPI_*_INITED bits */
extern int hpapi_debug;       /* PAPI_QUIET / VERB_ECONT / VERB_ESTOP */
extern int hpapi_default_domain, hpapi_default_granularity;
extern bool hpapi_disabled;   /* PAPI_disable_component before init */
extern __thread int hpapi_quiet; /* > 0: errors are answers here, not worth a message */
extern struct hpm_ctx *hpapi_ctx;
extern pthread_mutex_t hpapi_lock;

/* Record an error: code returned to the caller, one line of detail (what
 * libhpm said) kept for PAPI_perror and printed with PAPI_VERB_ECONT. */
int hpapi_err(int code, const char *call, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* libhpm's -errno from opening events -> PAPI code */
int hpapi_errno_code(int err);
pid_t hpapi_gettid(void);

/* events.c */
int hpapi_name_to_code(const char *name, int *code);
/* name libhpm should open for code in a set with domain dom (without
 * modifiers of its own, the domain's are appended); NULL if not an event. */
int hpapi_hpm_name(int code, int dom, char *buf, size_t len);
const char *hpapi_code_name(int code); /* PAPI spelling, NULL if unknown */
bool hpapi_code_is_hw(int code);
int hpapi_preset_count(void);
int hpapi_preset_avail_count(void);
int hpapi_native_count(void);
void hpapi_events_reset(void); /* caller holds hpapi_lock */
int hpapi_translate(const char *name, char *out, size_t len, bool *mods);

/* eventset.c */
struct hpapi_set *hpapi_set_get(int id);
int hpapi_set_rebuild(struct hpapi_set *s, const char *call);
void hpapi_sets_destroy_all(void);
int hpapi_set_cpu(struct hpapi_set *s, int cpu);
int hpapi_set_inherit(struct hpapi_set *s, bool inherit);
int hpapi_set_domain_of(struct hpapi_set *s, int domain);

/* sysinfo.c */
int hpapi_num_counters(void);
void hpapi_sysinfo_reset(void);

/* highlevel.c / rates.c: state kept across PAPI_shutdown? no: dropped */
void hpapi_rates_reset(void);

#endif
