/* SPDX-License-Identifier: MIT */
/*
 * Library life cycle, threads, user locks and error reporting.
 *
 * PAPI_library_init is one libhpm context allocation: event tables and CPU
 * detection load only when a name or a system query needs them, which is
 * why it costs microseconds where PAPI's takes milliseconds.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "papi_int.h"

int hpapi_inited;
int hpapi_debug = PAPI_QUIET;
int hpapi_default_domain = PAPI_DOM_USER; /* PAPI's default: user space only */
int hpapi_default_granularity = PAPI_GRN_THR;
bool hpapi_disabled;
__thread int hpapi_quiet;
struct hpm_ctx *hpapi_ctx;
pthread_mutex_t hpapi_lock = PTHREAD_MUTEX_INITIALIZER;

static unsigned long (*thread_id_fn)(void);

/* Threads PAPI has seen (PAPI_register_thread, thread-specific data,
 * PAPI_list_threads), keyed by PAPI_thread_id. */
struct known_thread {
	unsigned long id;
	void *data[PAPI_NUM_TLS];
	struct known_thread *next;
};
static struct known_thread *threads;
static pthread_mutex_t user_locks[PAPI_NUM_LOCK] = { PTHREAD_MUTEX_INITIALIZER,
						      PTHREAD_MUTEX_INITIALIZER };
static __thread char last_detail[512];

pid_t hpapi_gettid(void)
{
	static __thread pid_t tid;
	if (!tid)
		tid = (pid_t)syscall(SYS_gettid);
	return tid;
}

/* Our wording of what each PAPI error code means, indexed by -code. */
static const char *const err_text[PAPI_NUM_ERRORS] = {
	"No error",
	"Invalid argument",
	"Insufficient memory",
	"A system or C library call failed",
	"Not supported by component",
	"Access to the counters was lost or interrupted",
	"Internal error in libhpm-papi",
	"Event does not exist",
	"Event exists, but cannot be counted together with the other events of the set",
	"EventSet is not running",
	"EventSet is running",
	"No such EventSet",
	"Event is not a valid preset",
	"Hardware does not support performance counters",
	"Unknown error code",
	"Permission level does not permit operation",
	"PAPI has not been initialised (call PAPI_library_init first)",
	"Component index is not set",
	"Not supported",
	"Not implemented",
	"Buffer size exceeded",
	"EventSet domain is not supported for the operation",
	"Invalid or missing event attributes",
	"Too many events or attributes",
	"Bad combination of features",
	"Component containing the event is disabled",
	"Delayed initialisation component",
	"Event exists, but cannot be counted due to multiple passes required by the hardware",
};

PAPI_API char *PAPI_strerror(int code)
{
	if (code > 0 || code <= -PAPI_NUM_ERRORS)
		return NULL;
	return (char *)err_text[-code];
}

PAPI_API void PAPI_perror(const char *msg)
{
	/* the last error of this thread, with libhpm's detail when there is one */
	const char *d = last_detail[0] ? last_detail : "no error recorded";
	if (msg && *msg)
		fprintf(stderr, "%s: %s\n", msg, d);
	else
		fprintf(stderr, "%s\n", d);
}

int hpapi_err(int code, const char *call, const char *fmt, ...)
{
	char detail[384] = "";
	if (fmt) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(detail, sizeof(detail), fmt, ap);
		va_end(ap);
	}
	const char *what = PAPI_strerror(code);
	snprintf(last_detail, sizeof(last_detail), "%s: %s%s%s", call, what ? what : "error",
		 detail[0] ? ": " : "", detail);
	if (hpapi_debug != PAPI_QUIET && !hpapi_quiet) {
		fprintf(stderr, "PAPI Error: %s\n", last_detail);
		if (hpapi_debug == PAPI_VERB_ESTOP)
			exit(1);
	}
	return code;
}

int hpapi_errno_code(int err)
{
	switch (err) {
	case 0:
		return PAPI_OK;
	case -ENOMEM:
		return PAPI_ENOMEM;
	case -EACCES:
	case -EPERM:
		return PAPI_EPERM;
	case -ENOENT:
	case -ENODEV:
	case -EOPNOTSUPP:
		return PAPI_ENOEVNT; /* this PMU (or this kernel) cannot count it */
	case -E2BIG:
	case -ENOSPC:
		return PAPI_ECNFLCT;
	case -EINVAL:
		return PAPI_EINVAL;
	case -ESRCH:
		return PAPI_EINVAL; /* attach to a task that is gone */
	default:
		return PAPI_ESYS;
	}
}

PAPI_API int PAPI_set_debug(int level)
{
	if (level != PAPI_QUIET && level != PAPI_VERB_ECONT && level != PAPI_VERB_ESTOP)
		return hpapi_err(PAPI_EINVAL, "PAPI_set_debug", "level %d", level);
	hpapi_debug = level;
	return PAPI_OK;
}

PAPI_API int PAPI_library_init(int version)
{
	/* major.minor must match the header the caller was compiled with */
	if ((version & 0xffff0000) != PAPI_VER_CURRENT)
		return hpapi_err(PAPI_EINVAL, "PAPI_library_init",
				 "program built for PAPI %d.%d, this is libhpm-papi for PAPI %d.%d",
				 PAPI_VERSION_MAJOR(version), PAPI_VERSION_MINOR(version),
				 PAPI_VERSION_MAJOR(PAPI_VERSION), PAPI_VERSION_MINOR(PAPI_VERSION));
	pthread_mutex_lock(&hpapi_lock);
	if (!(hpapi_inited & PAPI_LOW_LEVEL_INITED)) {
		int r = hpm_ctx__new(&hpapi_ctx);
		if (r < 0) {
			pthread_mutex_unlock(&hpapi_lock);
			return hpapi_err(hpapi_errno_code(r), "PAPI_library_init", "libhpm: %s",
					 strerror(-r));
		}
		hpapi_inited |= PAPI_LOW_LEVEL_INITED;
	}
	pthread_mutex_unlock(&hpapi_lock);
	return PAPI_VER_CURRENT;
}

PAPI_API int PAPI_is_initialized(void)
{
	return hpapi_inited;
}

PAPI_API void PAPI_shutdown(void)
{
	if (!hpapi_inited)
		return;
	hpapi_rates_reset();
	hpapi_sets_destroy_all();
	pthread_mutex_lock(&hpapi_lock);
	hpm_ctx__delete(hpapi_ctx);
	hpapi_ctx = NULL;
	hpapi_inited = 0;
	thread_id_fn = NULL;
	while (threads) {
		struct known_thread *t = threads;
		threads = t->next;
		free(t);
	}
	hpapi_sysinfo_reset();
	pthread_mutex_unlock(&hpapi_lock);
}

/* ---- threads ----------------------------------------------------------- */

static unsigned long current_id(void)
{
	return thread_id_fn ? thread_id_fn() : (unsigned long)hpapi_gettid();
}

/* caller holds hpapi_lock */
static struct known_thread *thread_entry(unsigned long id, bool create)
{
	for (struct known_thread *t = threads; t; t = t->next)
		if (t->id == id)
			return t;
	if (!create)
		return NULL;
	struct known_thread *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->id = id;
	t->next = threads;
	threads = t;
	return t;
}

PAPI_API int PAPI_thread_init(unsigned long (*id_fn)(void))
{
	if (!(hpapi_inited & PAPI_LOW_LEVEL_INITED))
		return hpapi_err(PAPI_ENOINIT, "PAPI_thread_init", NULL);
	if (!id_fn)
		return hpapi_err(PAPI_EINVAL, "PAPI_thread_init", "no thread id function");
	pthread_mutex_lock(&hpapi_lock);
	thread_id_fn = id_fn;
	hpapi_inited |= PAPI_THREAD_LEVEL_INITED;
	pthread_mutex_unlock(&hpapi_lock);
	return PAPI_OK;
}

PAPI_API unsigned long PAPI_thread_id(void)
{
	if (!thread_id_fn)
		return (unsigned long)PAPI_EMISC;
	return thread_id_fn();
}

PAPI_API int PAPI_register_thread(void)
{
	if (!hpapi_inited)
		return hpapi_err(PAPI_ENOINIT, "PAPI_register_thread", NULL);
	/* libhpm needs no per-thread set-up: counting is per thread already */
	pthread_mutex_lock(&hpapi_lock);
	struct known_thread *t = thread_entry(current_id(), true);
	pthread_mutex_unlock(&hpapi_lock);
	return t ? PAPI_OK : hpapi_err(PAPI_ENOMEM, "PAPI_register_thread", NULL);
}

PAPI_API int PAPI_unregister_thread(void)
{
	if (!hpapi_inited)
		return hpapi_err(PAPI_ENOINIT, "PAPI_unregister_thread", NULL);
	unsigned long id = current_id();
	pthread_mutex_lock(&hpapi_lock);
	for (struct known_thread **p = &threads; *p; p = &(*p)->next)
		if ((*p)->id == id) {
			struct known_thread *t = *p;
			*p = t->next;
			free(t);
			break;
		}
	pthread_mutex_unlock(&hpapi_lock);
	return PAPI_OK;
}

PAPI_API int PAPI_list_threads(unsigned long *tids, int *number)
{
	if (!hpapi_inited)
		return hpapi_err(PAPI_ENOINIT, "PAPI_list_threads", NULL);
	if (!number || *number < 0 || (tids && *number == 0))
		return hpapi_err(PAPI_EINVAL, "PAPI_list_threads", "bad *number");
	int n = 0;
	pthread_mutex_lock(&hpapi_lock);
	for (struct known_thread *t = threads; t; t = t->next, n++)
		if (tids && n < *number)
			tids[n] = t->id;
	pthread_mutex_unlock(&hpapi_lock);
	*number = n;
	return PAPI_OK;
}

PAPI_API int PAPI_set_thr_specific(int tag, void *ptr)
{
	if (!hpapi_inited)
		return hpapi_err(PAPI_ENOINIT, "PAPI_set_thr_specific", NULL);
	if (tag < 0 || tag >= PAPI_NUM_TLS)
		return hpapi_err(PAPI_EINVAL, "PAPI_set_thr_specific", "tag %d", tag);
	pthread_mutex_lock(&hpapi_lock);
	struct known_thread *t = thread_entry(current_id(), true);
	if (t)
		t->data[tag] = ptr;
	pthread_mutex_unlock(&hpapi_lock);
	return t ? PAPI_OK : hpapi_err(PAPI_ENOMEM, "PAPI_set_thr_specific", NULL);
}

PAPI_API int PAPI_get_thr_specific(int tag, void **ptr)
{
	if (!hpapi_inited)
		return hpapi_err(PAPI_ENOINIT, "PAPI_get_thr_specific", NULL);
	if (!ptr)
		return hpapi_err(PAPI_EINVAL, "PAPI_get_thr_specific", "NULL pointer");
	if (tag & PAPI_TLS_ALL_THREADS) {
		/* every known thread's pointer for this tag, into the caller's arrays */
		int which = tag & ~PAPI_TLS_ALL_THREADS;
		PAPI_all_thr_spec_t *all = (PAPI_all_thr_spec_t *)ptr;
		if (which < 0 || which >= PAPI_NUM_TLS || all->num < 0)
			return hpapi_err(PAPI_EINVAL, "PAPI_get_thr_specific", "tag %d", tag);
		int n = 0;
		pthread_mutex_lock(&hpapi_lock);
		for (struct known_thread *t = threads; t && n < all->num; t = t->next) {
			if (!t->data[which])
				continue;
			if (all->id)
				all->id[n] = t->id;
			if (all->data)
				all->data[n] = t->data[which];
			n++;
		}
		pthread_mutex_unlock(&hpapi_lock);
		all->num = n;
		return PAPI_OK;
	}
	if (tag < 0 || tag >= PAPI_NUM_TLS)
		return hpapi_err(PAPI_EINVAL, "PAPI_get_thr_specific", "tag %d", tag);
	pthread_mutex_lock(&hpapi_lock);
	struct known_thread *t = thread_entry(current_id(), true);
	*ptr = t ? t->data[tag] : NULL;
	pthread_mutex_unlock(&hpapi_lock);
	return t ? PAPI_OK : hpapi_err(PAPI_ENOMEM, "PAPI_get_thr_specific", NULL);
}

PAPI_API int PAPI_lock(int lck)
{
	if (lck < 0 || lck >= PAPI_NUM_LOCK)
		return hpapi_err(PAPI_EINVAL, "PAPI_lock", "lock %d", lck);
	pthread_mutex_lock(&user_locks[lck]);
	return PAPI_OK;
}

PAPI_API int PAPI_unlock(int lck)
{
	if (lck < 0 || lck >= PAPI_NUM_LOCK)
		return hpapi_err(PAPI_EINVAL, "PAPI_unlock", "lock %d", lck);
	pthread_mutex_unlock(&user_locks[lck]);
	return PAPI_OK;
}
