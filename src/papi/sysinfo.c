/* SPDX-License-Identifier: MIT */
/*
 * What PAPI reports about the machine: hardware (cpuinfo and sysfs), the one
 * component, the executable's address ranges, memory use. Everything is
 * read on first request, never in PAPI_library_init.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/utsname.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#include "papi_int.h"

static PAPI_hw_info_t hw;
static bool hw_done;
static PAPI_component_info_t cmp;
static bool cmp_done;
static int ncounters = -1;
static PAPI_exe_info_t exe;
static bool exe_done;

void hpapi_sysinfo_reset(void)
{
	hw_done = cmp_done = exe_done = false;
	ncounters = -1;
}

static long read_long(const char *path, long dflt)
{
	FILE *f = fopen(path, "r");
	long v;
	if (!f)
		return dflt;
	if (fscanf(f, "%ld", &v) != 1)
		v = dflt;
	fclose(f);
	return v;
}

static void read_str(const char *path, char *buf, size_t len)
{
	buf[0] = 0;
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	if (fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = 0;
	fclose(f);
}

/* "key : value" of the first /proc/cpuinfo line with this key */
static bool cpuinfo(const char *key, char *val, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[1024];
	bool found = false;
	if (!f)
		return false;
	size_t kl = strlen(key);
	while (!found && fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, kl) || (line[kl] != ' ' && line[kl] != '\t' && line[kl] != ':'))
			continue;
		char *c = strchr(line, ':');
		if (!c)
			continue;
		c++;
		while (*c == ' ' || *c == '\t')
			c++;
		c[strcspn(c, "\n")] = 0;
		snprintf(val, len, "%s", c);
		found = true;
	}
	fclose(f);
	return found;
}

static void topology(void)
{
	/* packages, cores per package, threads per core from sysfs */
	int total = (int)sysconf(_SC_NPROCESSORS_ONLN);
	int pkgs[256], npkg = 0, cores = 0, threads_seen = 0;
	long core0 = -2;
	char path[128];
	for (int c = 0; c < total && c < 4096; c++) {
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/topology/physical_package_id", c);
		long p = read_long(path, 0);
		bool seen = false;
		for (int i = 0; i < npkg; i++)
			seen |= pkgs[i] == p;
		if (!seen && npkg < 256)
			pkgs[npkg++] = (int)p;
		if (p == pkgs[0]) {
			snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/topology/core_id", c);
			long core = read_long(path, c);
			if (core == core0 || core0 == -2) {
				if (core0 == -2)
					core0 = core;
				threads_seen++;
			}
			cores++;
		}
	}
	int nodes = 0;
	DIR *d = opendir("/sys/devices/system/node");
	if (d) {
		struct dirent *e;
		while ((e = readdir(d)))
			if (!strncmp(e->d_name, "node", 4) && e->d_name[4] >= '0' && e->d_name[4] <= '9')
				nodes++;
		closedir(d);
	}
	hw.totalcpus = total;
	hw.sockets = npkg ? npkg : 1;
	hw.threads = threads_seen ? threads_seen : 1;
	hw.cores = cores / hw.threads ? cores / hw.threads : 1;
	hw.nnodes = nodes ? nodes : 1;
	hw.ncpu = total / hw.nnodes;
}

static void caches(void)
{
	char path[160], type[32];
	for (int i = 0; i < 16; i++) {
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
		long level = read_long(path, -1);
		if (level < 1 || level > PAPI_MAX_MEM_HIERARCHY_LEVELS)
			continue;
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
		read_str(path, type, sizeof(type));
		char sz[32];
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
		read_str(path, sz, sizeof(sz));
		long size = atol(sz) * (strchr(sz, 'M') ? 1024 * 1024 : strchr(sz, 'K') ? 1024 : 1);
		snprintf(path, sizeof(path),
			 "/sys/devices/system/cpu/cpu0/cache/index%d/coherency_line_size", i);
		long line = read_long(path, 0);
		snprintf(path, sizeof(path),
			 "/sys/devices/system/cpu/cpu0/cache/index%d/ways_of_associativity", i);
		long ways = read_long(path, 0);
		PAPI_mh_level_t *l = &hw.mem_hierarchy.level[level - 1];
		int k = 0;
		while (k < PAPI_MH_MAX_LEVELS && l->cache[k].type != PAPI_MH_TYPE_EMPTY)
			k++;
		if (k == PAPI_MH_MAX_LEVELS)
			continue;
		l->cache[k].type = !strcmp(type, "Data")          ? PAPI_MH_TYPE_DATA
				   : !strcmp(type, "Instruction") ? PAPI_MH_TYPE_INST
								  : PAPI_MH_TYPE_UNIFIED;
		l->cache[k].size = (int)size;
		l->cache[k].line_size = (int)line;
		l->cache[k].num_lines = line ? (int)(size / line) : 0;
		l->cache[k].associativity = (int)ways;
		if (level > hw.mem_hierarchy.levels)
			hw.mem_hierarchy.levels = (int)level;
	}
}

static void cpu_identity(void)
{
	char v[256];
	if (cpuinfo("vendor_id", v, sizeof(v))) { /* x86 */
		snprintf(hw.vendor_string, sizeof(hw.vendor_string), "%.127s", v);
		hw.vendor = !strcmp(v, "GenuineIntel")   ? PAPI_VENDOR_INTEL
			    : !strcmp(v, "AuthenticAMD") ? PAPI_VENDOR_AMD
							 : PAPI_VENDOR_UNKNOWN;
		if (cpuinfo("model name", v, sizeof(v)))
			snprintf(hw.model_string, sizeof(hw.model_string), "%.127s", v);
		if (cpuinfo("cpu family", v, sizeof(v)))
			hw.cpuid_family = atoi(v);
		if (cpuinfo("model", v, sizeof(v)))
			hw.cpuid_model = hw.model = atoi(v);
		if (cpuinfo("stepping", v, sizeof(v)))
			hw.cpuid_stepping = atoi(v);
		hw.revision = (float)hw.cpuid_stepping;
		if (cpuinfo("flags", v, sizeof(v)) && strstr(v, " hypervisor"))
			hw.virtualized = 1;
#if defined(__x86_64__) || defined(__i386__)
		if (hw.virtualized) {
			unsigned a, b, c, d;
			__cpuid(0x40000000, a, b, c, d);
			memcpy(hw.virtual_vendor_string, &b, 4);
			memcpy(hw.virtual_vendor_string + 4, &c, 4);
			memcpy(hw.virtual_vendor_string + 8, &d, 4);
			hw.virtual_vendor_string[12] = 0;
		}
#endif
	} else if (cpuinfo("CPU implementer", v, sizeof(v))) { /* arm64 */
		hw.vendor = (int)strtol(v, NULL, 0);
		snprintf(hw.vendor_string, sizeof(hw.vendor_string), "%s",
			 hw.vendor == PAPI_VENDOR_ARM_ARM ? "ARM" : "ARM-compatible");
		if (cpuinfo("CPU part", v, sizeof(v)))
			hw.cpuid_model = hw.model = (int)strtol(v, NULL, 0);
		if (cpuinfo("CPU architecture", v, sizeof(v)))
			hw.cpuid_family = atoi(v);
		if (cpuinfo("CPU variant", v, sizeof(v)))
			hw.cpuid_stepping = (int)strtol(v, NULL, 0);
		if (cpuinfo("CPU revision", v, sizeof(v)))
			hw.revision = (float)atoi(v);
	} else if (cpuinfo("isa", v, sizeof(v))) { /* riscv64 */
		hw.vendor = PAPI_VENDOR_UNKNOWN;
		if (cpuinfo("mvendorid", v, sizeof(v)))
			hw.cpuid_family = (int)strtol(v, NULL, 0);
		snprintf(hw.vendor_string, sizeof(hw.vendor_string), "RISC-V");
		if (cpuinfo("uarch", v, sizeof(v)))
			snprintf(hw.model_string, sizeof(hw.model_string), "%.127s", v);
	}
	if (!hw.model_string[0] && hpapi_ctx)
		snprintf(hw.model_string, sizeof(hw.model_string), "%s", hpm_ctx__cpu_id(hpapi_ctx));
	long maxk = read_long("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", 0);
	long mink = read_long("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_min_freq", 0);
	if (maxk > 0) {
		hw.cpu_max_mhz = (int)(maxk / 1000);
		hw.cpu_min_mhz = (int)(mink / 1000);
	} else if (cpuinfo("cpu MHz", v, sizeof(v))) {
		hw.cpu_max_mhz = hw.cpu_min_mhz = (int)(atof(v) + 0.5);
	}
	hw.mhz = (float)hw.cpu_max_mhz;
	hw.clock_mhz = hw.cpu_max_mhz;
}

PAPI_API const PAPI_hw_info_t *PAPI_get_hardware_info(void)
{
	if (!(hpapi_inited & PAPI_LOW_LEVEL_INITED))
		return NULL;
	pthread_mutex_lock(&hpapi_lock);
	if (!hw_done) {
		memset(&hw, 0, sizeof(hw));
		topology();
		caches();
		cpu_identity();
		hw_done = true;
	}
	pthread_mutex_unlock(&hpapi_lock);
	return &hw;
}

/* Counters this thread can use at once, measured: groups of 1, 2, ... cycle
 * events until the kernel refuses one or a brief enable shows it never got
 * onto the PMU (a PMU without group validation, a counter taken by someone
 * else). 0 without a hardware PMU. */
static int measure_counters(void)
{
	int best = 0;
	for (int n = 1; n <= 32; n++) {
		char list[32 * 10 + 4] = "{";
		for (int i = 0; i < n; i++)
			strcat(list, i ? ",cycles:u" : "cycles:u");
		strcat(list, "}");
		struct hpm_evset *s = NULL;
		struct hpm_value v[32];
		bool ok = hpm_evset__new(hpapi_ctx, &s) == 0 && hpm_evset__add_list(s, list) == n &&
			  hpm_evset__start(s) == 0 && hpm_evset__stop(s) == 0 &&
			  hpm_evset__read_all(s, v) == 0;
		for (int i = 0; ok && i < n; i++)
			ok = v[i].running > 0;
		hpm_evset__delete(s);
		if (!ok)
			break;
		best = n;
	}
	return best;
}

int hpapi_num_counters(void)
{
	if (!(hpapi_inited & PAPI_LOW_LEVEL_INITED))
		return 0;
	pthread_mutex_lock(&hpapi_lock);
	if (ncounters < 0)
		ncounters = hpapi_disabled ? 0 : measure_counters();
	int n = ncounters;
	pthread_mutex_unlock(&hpapi_lock);
	return n;
}

PAPI_API int PAPI_num_hwctrs(void)
{
	return PAPI_num_cmp_hwctrs(HPAPI_CIDX);
}

PAPI_API int PAPI_num_cmp_hwctrs(int cidx)
{
	if (!(hpapi_inited & PAPI_LOW_LEVEL_INITED))
		return hpapi_err(PAPI_ENOINIT, "PAPI_num_cmp_hwctrs", NULL);
	if (cidx != HPAPI_CIDX)
		return hpapi_err(PAPI_ENOCMP, "PAPI_num_cmp_hwctrs", "component %d", cidx);
	return hpapi_num_counters();
}

/* libhpm's limit on events in one set: what multiplexing can hold */
#define HPAPI_MAX_MPX 256

PAPI_API int PAPI_num_components(void)
{
	return 1;
}

PAPI_API int PAPI_get_component_index(const char *name)
{
	if (name && (!strcmp(name, "perf_event") || !strcmp(name, "perf")))
		return HPAPI_CIDX;
	return hpapi_err(PAPI_ENOCMP, "PAPI_get_component_index", "no component '%s'",
			 name ? name : "(null)");
}

PAPI_API int PAPI_disable_component(int cidx)
{
	if (hpapi_inited)
		return hpapi_err(PAPI_ENOINIT, "PAPI_disable_component",
				 "components can be disabled only before PAPI_library_init");
	if (cidx != HPAPI_CIDX)
		return hpapi_err(PAPI_ENOCMP, "PAPI_disable_component", "component %d", cidx);
	hpapi_disabled = true;
	return PAPI_OK;
}

PAPI_API int PAPI_disable_component_by_name(const char *name)
{
	if (!name || (strcmp(name, "perf_event") && strcmp(name, "perf")))
		return hpapi_err(PAPI_ENOCMP, "PAPI_disable_component_by_name", "no component '%s'",
				 name ? name : "(null)");
	return PAPI_disable_component(HPAPI_CIDX);
}

PAPI_API const PAPI_component_info_t *PAPI_get_component_info(int cidx)
{
	if (cidx != HPAPI_CIDX)
		return NULL;
	/* the name is there before init (PAPI lists components to disable them) */
	bool inited = hpapi_inited & PAPI_LOW_LEVEL_INITED;
	int counters = inited ? hpapi_num_counters() : 0;
	int npresets = inited && !hpapi_disabled ? hpapi_preset_avail_count() : 0;
	int nnative = inited && !hpapi_disabled ? hpapi_native_count() : 0;
	pthread_mutex_lock(&hpapi_lock);
	if (!cmp_done || !inited) {
		static char pmu[64];
		struct utsname u;
		memset(&cmp, 0, sizeof(cmp));
		snprintf(cmp.name, sizeof(cmp.name), "perf_event");
		snprintf(cmp.short_name, sizeof(cmp.short_name), "perf");
		snprintf(cmp.description, sizeof(cmp.description),
			 "Linux perf_event CPU counters through libhpm (hpmkit)");
		snprintf(cmp.version, sizeof(cmp.version), "%s", hpm_version());
		snprintf(cmp.support_version, sizeof(cmp.support_version), "libhpm %s", hpm_version());
		if (uname(&u) == 0)
			snprintf(cmp.kernel_version, sizeof(cmp.kernel_version), "%.63s", u.release);
		cmp.CmpIdx = HPAPI_CIDX;
		cmp.default_domain = PAPI_DOM_USER;
		cmp.available_domains = PAPI_DOM_USER | PAPI_DOM_KERNEL | PAPI_DOM_SUPERVISOR;
		cmp.default_granularity = PAPI_GRN_THR;
		cmp.available_granularities = PAPI_GRN_THR | PAPI_GRN_SYS;
		cmp.kernel_multiplex = 1;
		cmp.attach = 1;
		/* attaching needs ptrace permission; PAPI's tests stop and continue the
		 * target with ptrace when this is set, as for PAPI's perf_event */
		cmp.attach_must_ptrace = 1;
		cmp.fast_real_timer = 1; /* clock_gettime from the vDSO */
		cmp.cpu = 1;
		cmp.inherit = 1;
		cmp.num_mpx_cntrs = HPAPI_MAX_MPX;
		const char *p = inited && hpapi_ctx ? hpm_ctx__pmu(hpapi_ctx) : NULL;
		snprintf(pmu, sizeof(pmu), "%s", p ? p : "perf");
		cmp.pmu_names[0] = pmu;
		cmp_done = inited;
	}
	cmp.initialized = inited;
	cmp.disabled = hpapi_disabled ? PAPI_ECMP_DISABLED : 0;
	snprintf(cmp.disabled_reason, sizeof(cmp.disabled_reason), "%s",
		 hpapi_disabled ? "disabled by PAPI_disable_component" : "");
	cmp.num_cntrs = counters;
	cmp.num_preset_events = npresets;
	cmp.num_native_events = nnative;
	pthread_mutex_unlock(&hpapi_lock);
	return &cmp;
}

/* ---- the executable ------------------------------------------------------ */
PAPI_API const PAPI_exe_info_t *PAPI_get_executable_info(void)
{
	if (!(hpapi_inited & PAPI_LOW_LEVEL_INITED))
		return NULL;
	pthread_mutex_lock(&hpapi_lock);
	if (!exe_done) {
		memset(&exe, 0, sizeof(exe));
		ssize_t n = readlink("/proc/self/exe", exe.fullname, sizeof(exe.fullname) - 1);
		exe.fullname[n > 0 ? n : 0] = 0;
		const char *base = strrchr(exe.fullname, '/');
		snprintf(exe.address_info.name, sizeof(exe.address_info.name), "%.1000s",
			 base ? base + 1 : exe.fullname);
		/* text: the executable's r-x mapping; data: its rw- mapping; bss: the
		 * anonymous mapping right after the data, if there is one */
		FILE *f = fopen("/proc/self/maps", "r");
		char line[1400];
		unsigned long prev_end = 0;
		bool after_data = false;
		while (f && fgets(line, sizeof(line), f)) {
			unsigned long a, b;
			char perms[8], path[1100] = "";
			if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %1099[^\n]", &a, &b, perms, path) < 3)
				continue;
			char *pp = path;
			while (*pp == ' ')
				pp++;
			bool mine = !strcmp(pp, exe.fullname);
			if (mine && perms[2] == 'x' && !exe.address_info.text_start) {
				exe.address_info.text_start = (vptr_t)a;
				exe.address_info.text_end = (vptr_t)b;
			} else if (mine && perms[1] == 'w') {
				if (!exe.address_info.data_start)
					exe.address_info.data_start = (vptr_t)a;
				exe.address_info.data_end = (vptr_t)b;
				after_data = true;
			} else if (after_data && !*pp && a == prev_end) {
				exe.address_info.bss_start = (vptr_t)a;
				exe.address_info.bss_end = (vptr_t)b;
				after_data = false;
			} else {
				after_data = false;
			}
			prev_end = b;
		}
		if (f)
			fclose(f);
		if (!exe.address_info.bss_start) {
			exe.address_info.bss_start = exe.address_info.data_end;
			exe.address_info.bss_end = exe.address_info.data_end;
		}
		exe_done = true;
	}
	pthread_mutex_unlock(&hpapi_lock);
	return &exe;
}

/* ---- memory use (kB, like /proc/self/status; pagesize in bytes) ----------- */
static long long status_kb(const char *buf, const char *key)
{
	const char *p = strstr(buf, key);
	return p ? atoll(p + strlen(key)) : -1;
}

PAPI_API int PAPI_get_dmem_info(PAPI_dmem_info_t *dest)
{
	if (!(hpapi_inited & PAPI_LOW_LEVEL_INITED))
		return hpapi_err(PAPI_ENOINIT, "PAPI_get_dmem_info", NULL);
	if (!dest)
		return hpapi_err(PAPI_EINVAL, "PAPI_get_dmem_info", "NULL dest");
	char buf[8192];
	FILE *f = fopen("/proc/self/status", "r");
	if (!f)
		return hpapi_err(PAPI_ESYS, "PAPI_get_dmem_info", "/proc/self/status: %s", strerror(errno));
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	dest->peak = status_kb(buf, "VmPeak:");
	dest->size = status_kb(buf, "VmSize:");
	dest->resident = status_kb(buf, "VmRSS:");
	dest->high_water_mark = status_kb(buf, "VmHWM:");
	long long file = status_kb(buf, "RssFile:"), shm = status_kb(buf, "RssShmem:");
	dest->shared = file >= 0 && shm >= 0 ? file + shm : -1;
	dest->text = status_kb(buf, "VmExe:");
	dest->library = status_kb(buf, "VmLib:");
	dest->heap = status_kb(buf, "VmData:");
	dest->locked = status_kb(buf, "VmLck:");
	dest->stack = status_kb(buf, "VmStk:");
	dest->pagesize = sysconf(_SC_PAGESIZE);
	dest->pte = status_kb(buf, "VmPTE:");
	return PAPI_OK;
}
