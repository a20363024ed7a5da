/* SPDX-License-Identifier: MIT */
/*
 * The rate calls (PAPI_flops_rate, PAPI_flips_rate, PAPI_ipc, PAPI_epc):
 * the first call of a thread starts a hidden event set, every later call
 * reports what happened since the previous call. Rates use the thread's CPU
 * time (ptime); rtime is wall-clock time. They count only where the events
 * exist: PAPI_ENOEVNT otherwise (QEMU's PMUs have no floating point events).
 */
#include <stdlib.h>
#include "papi_int.h"

enum rate_kind { RATE_NONE, RATE_FLOPS, RATE_FLIPS, RATE_IPC, RATE_EPC };

struct rate_state {
	enum rate_kind kind;
	int event;   /* first event of the set (flops/flips/epc) */
	int set;
	int nev;
	long long real0, virt0;
};
static __thread struct rate_state rs = { RATE_NONE, 0, PAPI_NULL, 0, 0, 0 };

/* sets left by threads at PAPI_shutdown are freed with every other set */
void hpapi_rates_reset(void)
{
	rs.kind = RATE_NONE;
	rs.set = PAPI_NULL;
}

static int rate_start(enum rate_kind kind, const int *events, int nev, int optional_last)
{
	if (!(hpapi_inited & PAPI_LOW_LEVEL_INITED)) {
		int v = PAPI_library_init(PAPI_VER_CURRENT);
		if (v != PAPI_VER_CURRENT)
			return v;
	}
	int set = PAPI_NULL, r = PAPI_create_eventset(&set);
	if (r != PAPI_OK)
		return r;
	int added = 0;
	for (int i = 0; i < nev; i++) {
		r = PAPI_add_event(set, events[i]);
		if (r != PAPI_OK && !(optional_last && i == nev - 1))
			goto fail;
		added += r == PAPI_OK;
	}
	r = PAPI_start(set);
	if (r != PAPI_OK)
		goto fail;
	rs.kind = kind;
	rs.event = events[0];
	rs.set = set;
	rs.nev = added;
	rs.real0 = PAPI_get_real_nsec();
	rs.virt0 = PAPI_get_virt_nsec();
	return PAPI_OK;
fail:
	PAPI_cleanup_eventset(set);
	PAPI_destroy_eventset(&set);
	return r;
}

/* Counts since the previous call (and restart counting from now). */
static int rate_step(long long *v, float *rtime, float *ptime)
{
	for (int i = 0; i < 3; i++)
		v[i] = 0;
	int r = PAPI_accum(rs.set, v);
	if (r != PAPI_OK)
		return r;
	long long real = PAPI_get_real_nsec(), virt = PAPI_get_virt_nsec();
	if (rtime)
		*rtime = (float)((real - rs.real0) / 1e9);
	if (ptime)
		*ptime = (float)((virt - rs.virt0) / 1e9);
	rs.real0 = real;
	rs.virt0 = virt;
	return PAPI_OK;
}

/* What every rate call does before its own arithmetic: refuse while another
 * rate call counts on this thread, start counting on the first call, and
 * otherwise give the counts since the previous call. The first call gives
 * zero counts and times, so the caller's arithmetic yields PAPI's all-zero
 * first answer. */
static int rate_counts(enum rate_kind kind, const int *events, int nev, int optional_last,
		       long long v[3], float *rtime, float *ptime, const char *call)
{
	if (rs.kind != RATE_NONE && (rs.kind != kind || rs.event != events[0]))
		return hpapi_err(PAPI_EINVAL, call, "another rate call is counting on this thread "
				 "(PAPI_rate_stop first)");
	if (rs.kind != RATE_NONE)
		return rate_step(v, rtime, ptime);
	int r = rate_start(kind, events, nev, optional_last);
	if (r != PAPI_OK)
		return r;
	v[0] = v[1] = v[2] = 0;
	*rtime = *ptime = 0;
	return PAPI_OK;
}

static int fp_rate(enum rate_kind kind, int event, float *rtime, float *ptime, long long *count,
		   float *rate, const char *call)
{
	if (!rtime || !ptime || !count || !rate)
		return hpapi_err(PAPI_EINVAL, call, "NULL argument");
	long long v[3];
	int r = rate_counts(kind, &event, 1, 0, v, rtime, ptime, call);
	if (r != PAPI_OK)
		return r;
	*count = v[0];
	*rate = *ptime > 0 ? (float)((double)v[0] / (*ptime * 1e6)) : 0;
	return PAPI_OK;
}

PAPI_API int PAPI_flops_rate(int event, float *rtime, float *ptime, long long *flpops, float *mflops)
{
	if (event != PAPI_FP_OPS && event != PAPI_SP_OPS && event != PAPI_DP_OPS)
		return hpapi_err(PAPI_EINVAL, "PAPI_flops_rate",
				 "event must be PAPI_FP_OPS, PAPI_SP_OPS or PAPI_DP_OPS");
	return fp_rate(RATE_FLOPS, event, rtime, ptime, flpops, mflops, "PAPI_flops_rate");
}

PAPI_API int PAPI_flips_rate(int event, float *rtime, float *ptime, long long *flpins, float *mflips)
{
	if (event != PAPI_FP_INS && event != PAPI_VEC_SP && event != PAPI_VEC_DP)
		return hpapi_err(PAPI_EINVAL, "PAPI_flips_rate",
				 "event must be PAPI_FP_INS, PAPI_VEC_SP or PAPI_VEC_DP");
	return fp_rate(RATE_FLIPS, event, rtime, ptime, flpins, mflips, "PAPI_flips_rate");
}

PAPI_API int PAPI_ipc(float *rtime, float *ptime, long long *ins, float *ipc)
{
	if (!rtime || !ptime || !ins || !ipc)
		return hpapi_err(PAPI_EINVAL, "PAPI_ipc", "NULL argument");
	const int ev[2] = { PAPI_TOT_INS, PAPI_TOT_CYC };
	long long v[3];
	int r = rate_counts(RATE_IPC, ev, 2, 0, v, rtime, ptime, "PAPI_ipc");
	if (r != PAPI_OK)
		return r;
	*ins = v[0];
	*ipc = v[1] > 0 ? (float)((double)v[0] / (double)v[1]) : 0;
	return PAPI_OK;
}

PAPI_API int PAPI_epc(int event, float *rtime, float *ptime, long long *ref, long long *core,
		      long long *evt, float *epc)
{
	if (!rtime || !ptime || !ref || !core || !evt || !epc)
		return hpapi_err(PAPI_EINVAL, "PAPI_epc", "NULL argument");
	if (event == 0)
		event = PAPI_TOT_INS;
	/* reference cycles only where they exist */
	const int ev[3] = { event, PAPI_TOT_CYC, PAPI_REF_CYC };
	long long v[3];
	int r = rate_counts(RATE_EPC, ev, 3, 1, v, rtime, ptime, "PAPI_epc");
	if (r != PAPI_OK)
		return r;
	*evt = v[0];
	*core = v[1];
	*ref = rs.nev > 2 ? v[2] : 0;
	*epc = v[1] > 0 ? (float)((double)v[0] / (double)v[1]) : 0;
	return PAPI_OK;
}

PAPI_API int PAPI_rate_stop(void)
{
	if (rs.kind == RATE_NONE)
		return hpapi_err(PAPI_ENOEVNT, "PAPI_rate_stop", "no rate call is counting on this thread");
	long long v[3];
	PAPI_stop(rs.set, v);
	PAPI_cleanup_eventset(rs.set);
	PAPI_destroy_eventset(&rs.set);
	rs.kind = RATE_NONE;
	rs.set = PAPI_NULL;
	return PAPI_OK;
}
