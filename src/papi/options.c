/* SPDX-License-Identifier: MIT */
/*
 * PAPI_get_opt / PAPI_set_opt and the calls that wrap them. Options that ask
 * for something libhpm-papi does not do (address ranges, itimers, preload)
 * return PAPI_ECMP, as PAPI does for a component without the feature.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "papi_int.h"

/* PAPI_DOM_ALL also names "other", which perf has no switch for */
static bool domain_ok(int d)
{
	return d > 0 && !(d & ~PAPI_DOM_ALL) &&
	       (d & (PAPI_DOM_USER | PAPI_DOM_KERNEL | PAPI_DOM_SUPERVISOR));
}

static bool granularity_ok(int g)
{
	/* per thread (the default) or, with PAPI_CPU_ATTACH, one CPU */
	return g == PAPI_GRN_THR || g == PAPI_GRN_SYS;
}

PAPI_API int PAPI_set_domain(int domain)
{
	return PAPI_set_cmp_domain(domain, HPAPI_CIDX);
}

PAPI_API int PAPI_set_cmp_domain(int domain, int cidx)
{
	if (!(hpapi_inited & PAPI_LOW_LEVEL_INITED))
		return hpapi_err(PAPI_ENOINIT, "PAPI_set_domain", NULL);
	if (cidx != HPAPI_CIDX)
		return hpapi_err(PAPI_ENOCMP, "PAPI_set_cmp_domain", "component %d", cidx);
	if (!domain_ok(domain))
		return hpapi_err(PAPI_EINVAL, "PAPI_set_domain", "domain %#x", domain);
	hpapi_default_domain = domain;
	return PAPI_OK;
}

PAPI_API int PAPI_set_granularity(int granularity)
{
	return PAPI_set_cmp_granularity(granularity, HPAPI_CIDX);
}

PAPI_API int PAPI_set_cmp_granularity(int granularity, int cidx)
{
	if (!(hpapi_inited & PAPI_LOW_LEVEL_INITED))
		return hpapi_err(PAPI_ENOINIT, "PAPI_set_granularity", NULL);
	if (cidx != HPAPI_CIDX)
		return hpapi_err(PAPI_ENOCMP, "PAPI_set_cmp_granularity", "component %d", cidx);
	if (!granularity_ok(granularity))
		return hpapi_err(PAPI_EINVAL, "PAPI_set_granularity",
				 "granularity %#x (libhpm-papi counts threads, or one CPU)", granularity);
	hpapi_default_granularity = granularity;
	return PAPI_OK;
}

static struct hpapi_set *opt_set(int id, const char *call, int *err)
{
	struct hpapi_set *s = hpapi_set_get(id);
	if (!s)
		*err = hpapi_err(PAPI_ENOEVST, call, "EventSet %d", id);
	return s;
}

PAPI_API int PAPI_set_opt(int option, PAPI_option_t *ptr)
{
	int err = PAPI_OK;
	struct hpapi_set *s;
	if (option == PAPI_DEBUG) {
		/* the one option that works before PAPI_library_init */
		if (!ptr)
			return hpapi_err(PAPI_EINVAL, "PAPI_set_opt(PAPI_DEBUG)", "NULL option");
		return PAPI_set_debug(ptr->debug.level);
	}
	if (!(hpapi_inited & PAPI_LOW_LEVEL_INITED))
		return hpapi_err(PAPI_ENOINIT, "PAPI_set_opt", NULL);
	if (!ptr)
		return hpapi_err(PAPI_EINVAL, "PAPI_set_opt", "NULL option");
	switch (option) {
	case PAPI_DEFDOM:
		return PAPI_set_cmp_domain(ptr->defdomain.domain, ptr->defdomain.def_cidx);
	case PAPI_DEFGRN:
		return PAPI_set_cmp_granularity(ptr->defgranularity.granularity,
						ptr->defgranularity.def_cidx);
	case PAPI_DOMAIN:
		if (!(s = opt_set(ptr->domain.eventset, "PAPI_set_opt(PAPI_DOMAIN)", &err)))
			return err;
		if (!domain_ok(ptr->domain.domain))
			return hpapi_err(PAPI_EINVAL_DOM, "PAPI_set_opt(PAPI_DOMAIN)", "domain %#x",
					 ptr->domain.domain);
		return hpapi_set_domain_of(s, ptr->domain.domain);
	case PAPI_GRANUL:
		if (!(s = opt_set(ptr->granularity.eventset, "PAPI_set_opt(PAPI_GRANUL)", &err)))
			return err;
		if (!granularity_ok(ptr->granularity.granularity))
			return hpapi_err(PAPI_EINVAL, "PAPI_set_opt(PAPI_GRANUL)", "granularity %#x",
					 ptr->granularity.granularity);
		s->granularity = ptr->granularity.granularity;
		return PAPI_OK;
	case PAPI_MULTIPLEX:
		return PAPI_set_multiplex(ptr->multiplex.eventset);
	case PAPI_ATTACH:
		return PAPI_attach(ptr->attach.eventset, ptr->attach.tid);
	case PAPI_DETACH:
		return PAPI_detach(ptr->attach.eventset);
	case PAPI_CPU_ATTACH:
		if (!(s = opt_set(ptr->cpu.eventset, "PAPI_set_opt(PAPI_CPU_ATTACH)", &err)))
			return err;
		if (ptr->cpu.cpu_num >= (unsigned)sysconf(_SC_NPROCESSORS_CONF))
			return hpapi_err(PAPI_EINVAL, "PAPI_set_opt(PAPI_CPU_ATTACH)", "no CPU %u",
					 ptr->cpu.cpu_num);
		return hpapi_set_cpu(s, (int)ptr->cpu.cpu_num);
	case PAPI_INHERIT:
		if (!(s = opt_set(ptr->inherit.eventset, "PAPI_set_opt(PAPI_INHERIT)", &err)))
			return err;
		return hpapi_set_inherit(s, ptr->inherit.inherit != PAPI_INHERIT_NONE);
	case PAPI_DATA_ADDRESS:
	case PAPI_INSTR_ADDRESS:
	case PAPI_DEF_ITIMER:
	case PAPI_DEF_ITIMER_NS:
	case PAPI_DEF_MPX_NS:
	case PAPI_PRELOAD:
	case PAPI_USER_EVENTS_FILE:
		return hpapi_err(PAPI_ECMP, "PAPI_set_opt", "option %d is not offered by libhpm-papi",
				 option);
	default:
		return hpapi_err(PAPI_EINVAL, "PAPI_set_opt", "unknown option %d", option);
	}
}

PAPI_API int PAPI_get_cmp_opt(int option, PAPI_option_t *ptr, int cidx)
{
	if (!(hpapi_inited & PAPI_LOW_LEVEL_INITED))
		return hpapi_err(PAPI_ENOINIT, "PAPI_get_cmp_opt", NULL);
	if (cidx != HPAPI_CIDX)
		return hpapi_err(PAPI_ENOCMP, "PAPI_get_cmp_opt", "component %d", cidx);
	switch (option) {
	case PAPI_MAX_HWCTRS:
		return hpapi_num_counters();
	case PAPI_MAX_MPX_CTRS:
		return PAPI_get_component_info(cidx)->num_mpx_cntrs;
	case PAPI_DEFDOM:
		if (ptr)
			ptr->defdomain.domain = hpapi_default_domain;
		return hpapi_default_domain;
	case PAPI_DEFGRN:
		if (ptr)
			ptr->defgranularity.granularity = hpapi_default_granularity;
		return hpapi_default_granularity;
	case PAPI_COMPONENTINFO:
		if (!ptr)
			return hpapi_err(PAPI_EINVAL, "PAPI_get_cmp_opt", "NULL option");
		ptr->cmp_info = (PAPI_component_info_t *)PAPI_get_component_info(cidx);
		return PAPI_OK;
	default:
		return hpapi_err(PAPI_EINVAL, "PAPI_get_cmp_opt", "option %d", option);
	}
}

PAPI_API int PAPI_get_opt(int option, PAPI_option_t *ptr)
{
	int err = PAPI_OK;
	struct hpapi_set *s;
	if (option == PAPI_LIB_VERSION)
		return PAPI_VERSION; /* needs no initialisation */
	if (!(hpapi_inited & PAPI_LOW_LEVEL_INITED))
		return hpapi_err(PAPI_ENOINIT, "PAPI_get_opt", NULL);
	switch (option) {
	case PAPI_DEFDOM:
	case PAPI_DEFGRN:
	case PAPI_MAX_HWCTRS:
	case PAPI_MAX_MPX_CTRS:
	case PAPI_COMPONENTINFO:
		return PAPI_get_cmp_opt(option, ptr, HPAPI_CIDX);
	case PAPI_CLOCKRATE:
		return PAPI_get_hardware_info()->cpu_max_mhz;
	case PAPI_MAX_CPUS:
		return PAPI_get_hardware_info()->totalcpus;
	}
	if (!ptr)
		return hpapi_err(PAPI_EINVAL, "PAPI_get_opt", "option %d needs an option structure",
				 option);
	switch (option) {
	case PAPI_DEBUG:
		ptr->debug.level = hpapi_debug;
		ptr->debug.handler = NULL;
		return PAPI_OK;
	case PAPI_HWINFO:
		ptr->hw_info = (PAPI_hw_info_t *)PAPI_get_hardware_info();
		return PAPI_OK;
	case PAPI_EXEINFO:
		ptr->exe_info = (PAPI_exe_info_t *)PAPI_get_executable_info();
		return PAPI_OK;
	case PAPI_DOMAIN:
		if (!(s = opt_set(ptr->domain.eventset, "PAPI_get_opt(PAPI_DOMAIN)", &err)))
			return err;
		ptr->domain.domain = s->domain;
		return s->domain;
	case PAPI_GRANUL:
		if (!(s = opt_set(ptr->granularity.eventset, "PAPI_get_opt(PAPI_GRANUL)", &err)))
			return err;
		ptr->granularity.granularity = s->granularity;
		return s->granularity;
	case PAPI_MULTIPLEX:
		if (!(s = opt_set(ptr->multiplex.eventset, "PAPI_get_opt(PAPI_MULTIPLEX)", &err)))
			return err;
		ptr->multiplex.ns = 0;
		ptr->multiplex.flags = PAPI_MULTIPLEX_DEFAULT;
		return s->multiplex;
	case PAPI_ATTACH:
	case PAPI_DETACH:
		if (!(s = opt_set(ptr->attach.eventset, "PAPI_get_opt(PAPI_ATTACH)", &err)))
			return err;
		ptr->attach.tid = s->attach_tid;
		return option == PAPI_ATTACH ? s->attach_tid != 0 : s->attach_tid == 0;
	case PAPI_CPU_ATTACH:
		if (!(s = opt_set(ptr->cpu.eventset, "PAPI_get_opt(PAPI_CPU_ATTACH)", &err)))
			return err;
		ptr->cpu.cpu_num = s->cpu >= 0 ? (unsigned)s->cpu : 0;
		return s->cpu >= 0;
	case PAPI_INHERIT:
		if (!(s = opt_set(ptr->inherit.eventset, "PAPI_get_opt(PAPI_INHERIT)", &err)))
			return err;
		ptr->inherit.inherit = s->inherit ? PAPI_INHERIT_ALL : PAPI_INHERIT_NONE;
		return s->inherit;
	case PAPI_SHLIBINFO:
	case PAPI_PRELOAD:
	case PAPI_DATA_ADDRESS:
	case PAPI_INSTR_ADDRESS:
	case PAPI_DEF_ITIMER:
	case PAPI_DEF_ITIMER_NS:
	case PAPI_DEF_MPX_NS:
		return hpapi_err(PAPI_ECMP, "PAPI_get_opt", "option %d is not offered by libhpm-papi",
				 option);
	default:
		return hpapi_err(PAPI_EINVAL, "PAPI_get_opt", "unknown option %d", option);
	}
}
