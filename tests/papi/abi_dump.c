/* SPDX-License-Identifier: MIT */
/*
 * Print the PAPI interface as a header defines it: every preset's code,
 * the constants programs use, and the size and field offsets of the
 * structures libhpm-papi fills in. test_papi_compat.py builds this once with
 * include/hpm-papi/papi.h and once with Debian's /usr/include/papi.h and
 * wants the same output: source and binary compatibility with PAPI 7.
 */
#include <stddef.h>
#include <stdio.h>
#include "papi.h"

#define C(x) printf("%s %lld\n", #x, (long long)(x))
#define S(t) printf("sizeof %s %zu\n", #t, sizeof(t))
#define O(t, f) printf("offsetof %s.%s %zu\n", #t, #f, offsetof(t, f))

int main(void)
{
#define PRESET(idx, name, cats, desc) printf("%s %#x\n", #name, (unsigned)(name));
#include "../../src/papi/presets.def"
#undef PRESET
	C(PAPI_VERSION); C(PAPI_VER_CURRENT); C(PAPI_NULL);
	C(PAPI_PRESET_MASK); C(PAPI_NATIVE_MASK); C(PAPI_UE_MASK); C(PAPI_PRESET_AND_MASK);
	C(PAPI_NATIVE_AND_MASK); C(PAPI_MAX_PRESET_EVENTS);
	C(PAPI_OK); C(PAPI_EINVAL); C(PAPI_ENOMEM); C(PAPI_ESYS); C(PAPI_ECMP); C(PAPI_ESBSTR);
	C(PAPI_ECLOST); C(PAPI_EBUG); C(PAPI_ENOEVNT); C(PAPI_ECNFLCT); C(PAPI_ENOTRUN);
	C(PAPI_EISRUN); C(PAPI_ENOEVST); C(PAPI_ENOTPRESET); C(PAPI_ENOCNTR); C(PAPI_EMISC);
	C(PAPI_EPERM); C(PAPI_ENOINIT); C(PAPI_ENOCMP); C(PAPI_ENOSUPP); C(PAPI_ENOIMPL);
	C(PAPI_EBUF); C(PAPI_EINVAL_DOM); C(PAPI_EATTR); C(PAPI_ECOUNT); C(PAPI_ECOMBO);
	C(PAPI_ECMP_DISABLED); C(PAPI_EDELAY_INIT); C(PAPI_EMULPASS); C(PAPI_NUM_ERRORS);
	C(PAPI_NOT_INITED); C(PAPI_LOW_LEVEL_INITED); C(PAPI_HIGH_LEVEL_INITED);
	C(PAPI_THREAD_LEVEL_INITED);
	C(PAPI_DOM_USER); C(PAPI_DOM_KERNEL); C(PAPI_DOM_OTHER); C(PAPI_DOM_SUPERVISOR);
	C(PAPI_DOM_ALL); C(PAPI_DOM_MIN); C(PAPI_DOM_MAX); C(PAPI_DOM_HWSPEC);
	C(PAPI_USR1_TLS); C(PAPI_USR2_TLS); C(PAPI_TLS_HIGH_LEVEL); C(PAPI_NUM_TLS);
	C(PAPI_TLS_ALL_THREADS); C(PAPI_USR1_LOCK); C(PAPI_USR2_LOCK); C(PAPI_NUM_LOCK);
	C(PAPI_VENDOR_UNKNOWN); C(PAPI_VENDOR_INTEL); C(PAPI_VENDOR_AMD); C(PAPI_VENDOR_IBM);
	C(PAPI_VENDOR_ARM); C(PAPI_VENDOR_MIPS); C(PAPI_VENDOR_ARM_ARM); C(PAPI_VENDOR_ARM_FUJITSU);
	C(PAPI_GRN_THR); C(PAPI_GRN_PROC); C(PAPI_GRN_PROCG); C(PAPI_GRN_SYS); C(PAPI_GRN_SYS_CPU);
	C(PAPI_GRN_MIN); C(PAPI_GRN_MAX);
	C(PAPI_STOPPED); C(PAPI_RUNNING); C(PAPI_PAUSED); C(PAPI_NOT_INIT); C(PAPI_OVERFLOWING);
	C(PAPI_PROFILING); C(PAPI_MULTIPLEXING); C(PAPI_ATTACHED); C(PAPI_CPU_ATTACHED);
	C(PAPI_QUIET); C(PAPI_VERB_ECONT); C(PAPI_VERB_ESTOP);
	C(PAPI_PROFIL_POSIX); C(PAPI_PROFIL_RANDOM); C(PAPI_PROFIL_WEIGHTED); C(PAPI_PROFIL_COMPRESS);
	C(PAPI_PROFIL_BUCKET_16); C(PAPI_PROFIL_BUCKET_32); C(PAPI_PROFIL_BUCKET_64);
	C(PAPI_PROFIL_FORCE_SW); C(PAPI_PROFIL_DATA_EAR); C(PAPI_PROFIL_INST_EAR);
	C(PAPI_OVERFLOW_FORCE_SW); C(PAPI_OVERFLOW_HARDWARE);
	C(PAPI_MULTIPLEX_DEFAULT); C(PAPI_MULTIPLEX_FORCE_SW); C(PAPI_INHERIT_ALL); C(PAPI_INHERIT_NONE);
	C(PAPI_DETACH); C(PAPI_DEBUG); C(PAPI_MULTIPLEX); C(PAPI_DEFDOM); C(PAPI_DOMAIN);
	C(PAPI_DEFGRN); C(PAPI_GRANUL); C(PAPI_DEF_MPX_NS); C(PAPI_MAX_MPX_CTRS); C(PAPI_PROFIL);
	C(PAPI_PRELOAD); C(PAPI_CLOCKRATE); C(PAPI_MAX_HWCTRS); C(PAPI_HWINFO); C(PAPI_EXEINFO);
	C(PAPI_MAX_CPUS); C(PAPI_ATTACH); C(PAPI_SHLIBINFO); C(PAPI_LIB_VERSION);
	C(PAPI_COMPONENTINFO); C(PAPI_DATA_ADDRESS); C(PAPI_INSTR_ADDRESS); C(PAPI_DEF_ITIMER);
	C(PAPI_DEF_ITIMER_NS); C(PAPI_CPU_ATTACH); C(PAPI_INHERIT); C(PAPI_USER_EVENTS_FILE);
	C(PAPI_INIT_SLOTS); C(PAPI_MIN_STR_LEN); C(PAPI_MAX_STR_LEN); C(PAPI_2MAX_STR_LEN);
	C(PAPI_HUGE_STR_LEN); C(PAPI_PMU_MAX); C(PAPI_DERIVED); C(PAPI_MAX_INFO_TERMS);
	C(PAPI_ENUM_EVENTS); C(PAPI_ENUM_FIRST); C(PAPI_PRESET_ENUM_AVAIL); C(PAPI_PRESET_ENUM_MSC);
	C(PAPI_PRESET_ENUM_INS); C(PAPI_PRESET_ENUM_IDL); C(PAPI_PRESET_ENUM_BR);
	C(PAPI_PRESET_ENUM_CND); C(PAPI_PRESET_ENUM_MEM); C(PAPI_PRESET_ENUM_CACH);
	C(PAPI_PRESET_ENUM_L1); C(PAPI_PRESET_ENUM_L2); C(PAPI_PRESET_ENUM_L3);
	C(PAPI_PRESET_ENUM_TLB); C(PAPI_PRESET_ENUM_FP); C(PAPI_NTV_ENUM_UMASKS);
	C(PAPI_NTV_ENUM_UMASK_COMBOS); C(PAPI_NTV_ENUM_IARR); C(PAPI_NTV_ENUM_DARR);
	C(PAPI_NTV_ENUM_OPCM); C(PAPI_NTV_ENUM_IEAR); C(PAPI_NTV_ENUM_DEAR); C(PAPI_NTV_ENUM_GROUPS);
	C(PAPI_ENUM_ALL); C(PAPI_PRESET_BIT_MSC); C(PAPI_PRESET_BIT_FP); C(PAPI_NTV_GROUP_AND_MASK);
	C(PAPI_NTV_GROUP_SHIFT); C(PAPI_MH_TYPE_UNIFIED); C(PAPI_MH_TYPE_TLB); C(PAPI_MH_MAX_LEVELS);
	C(PAPI_MAX_MEM_HIERARCHY_LEVELS); C(PAPIF_DMEM_MAXVAL);
	C(PAPI_LOCATION_UNCORE); C(PAPI_DATATYPE_BIT64); C(PAPI_VALUETYPE_ABSOLUTE);
	C(PAPI_TIMESCOPE_POINT); C(PAPI_UPDATETYPE_FIXEDFREQ);

	S(PAPI_event_info_t);
	O(PAPI_event_info_t, event_code); O(PAPI_event_info_t, symbol);
	O(PAPI_event_info_t, short_descr); O(PAPI_event_info_t, long_descr);
	O(PAPI_event_info_t, component_index); O(PAPI_event_info_t, units);
	O(PAPI_event_info_t, location); O(PAPI_event_info_t, update_freq);
	O(PAPI_event_info_t, count); O(PAPI_event_info_t, event_type);
	O(PAPI_event_info_t, derived); O(PAPI_event_info_t, postfix); O(PAPI_event_info_t, code);
	O(PAPI_event_info_t, name); O(PAPI_event_info_t, note);
	S(PAPI_hw_info_t);
	O(PAPI_hw_info_t, ncpu); O(PAPI_hw_info_t, totalcpus); O(PAPI_hw_info_t, vendor_string);
	O(PAPI_hw_info_t, model_string); O(PAPI_hw_info_t, revision); O(PAPI_hw_info_t, cpu_max_mhz);
	O(PAPI_hw_info_t, mem_hierarchy); O(PAPI_hw_info_t, virtualized);
	O(PAPI_hw_info_t, virtual_vendor_string); O(PAPI_hw_info_t, mhz); O(PAPI_hw_info_t, clock_mhz);
	S(PAPI_component_info_t);
	O(PAPI_component_info_t, name); O(PAPI_component_info_t, disabled_reason);
	O(PAPI_component_info_t, disabled); O(PAPI_component_info_t, num_cntrs);
	O(PAPI_component_info_t, num_mpx_cntrs); O(PAPI_component_info_t, default_domain);
	O(PAPI_component_info_t, component_type); O(PAPI_component_info_t, pmu_names);
	O(PAPI_component_info_t, reserved);
	S(PAPI_option_t); S(PAPI_exe_info_t); O(PAPI_exe_info_t, address_info);
	O(PAPI_address_map_t, text_start); O(PAPI_address_map_t, bss_end);
	S(PAPI_dmem_info_t); S(PAPI_mh_info_t); S(PAPI_domain_option_t); S(PAPI_multiplex_option_t);
	S(PAPI_attach_option_t); S(PAPI_cpu_option_t); S(PAPI_debug_option_t); S(PAPI_all_thr_spec_t);
	S(PAPI_sprofil_t); S(PAPI_shlib_info_t); S(PAPI_preload_info_t); S(PAPI_addr_range_option_t);
	return 0;
}
