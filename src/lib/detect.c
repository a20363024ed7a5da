/* SPDX-License-Identifier: MIT */
/*
 * Which CPU is this? Arm: MIDR_EL1 (sysfs, else /proc/cpuinfo "CPU implementer"/
 * "CPU part"); RISC-V: mvendorid/marchid/mimpid lines of /proc/cpuinfo; x86:
 * vendor_id/cpu family/model. HPM_SYSROOT prefixes every path so tests can
 * present another machine's files.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include "internal.h"

/* Value of "key : value" in the cpuinfo text, or NULL. */
static const char *cpuinfo_field(const char *info, const char *key, char *out, size_t len)
{
	size_t kl = strlen(key);
	for (const char *p = info; p && *p;) {
		const char *eol = strchr(p, '\n');
		if (!strncmp(p, key, kl) && (p[kl] == ' ' || p[kl] == '\t' || p[kl] == ':')) {
			const char *c = strchr(p, ':');
			if (c && (!eol || c < eol)) {
				c++;
				while (*c == ' ' || *c == '\t')
					c++;
				size_t n = eol ? (size_t)(eol - c) : strlen(c);
				while (n && (c[n - 1] == ' ' || c[n - 1] == '\t' || c[n - 1] == '\r'))
					n--;
				if (n >= len)
					n = len - 1;
				memcpy(out, c, n);
				out[n] = 0;
				return out;
			}
		}
		p = eol ? eol + 1 : NULL;
	}
	return NULL;
}

void cpu_ident_read(struct cpu_ident *id)
{
	char buf[16384], v[128];
	memset(id, 0, sizeof(*id));
	const char *isa = NULL;
	struct utsname u;
	if (!uname(&u))
		isa = u.machine;
	if (getenv("HPM_SYSROOT") && read_small_file("/isa", v, sizeof(v)) > 0) {
		/* a test sysroot names the ISA it imitates */
		v[strcspn(v, "\n")] = 0;
		isa = v;
	}
	snprintf(id->isa, sizeof(id->isa), "%.15s", isa ? isa : "");
	if (read_small_file("/proc/cpuinfo", buf, sizeof(buf)) > 0) {
		/* keep the first processor block only */
		char *blank = strstr(buf, "\n\n");
		if (blank)
			blank[1] = 0;
		snprintf(id->cpuinfo, sizeof(id->cpuinfo), "%.4095s", buf);
	}
	if (cpuinfo_field(id->cpuinfo, "vendor_id", v, sizeof(v)))
		snprintf(id->vendor, sizeof(id->vendor), "%.31s", v);
	if (cpuinfo_field(id->cpuinfo, "cpu family", v, sizeof(v)))
		id->family = (int)strtol(v, NULL, 0);
	if (cpuinfo_field(id->cpuinfo, "model", v, sizeof(v)))
		id->model = (int)strtol(v, NULL, 0);
	if (cpuinfo_field(id->cpuinfo, "mvendorid", v, sizeof(v))) {
		id->mvendorid = strtoull(v, NULL, 0);
		id->have_riscv_ids = true;
		if (cpuinfo_field(id->cpuinfo, "marchid", v, sizeof(v)))
			id->marchid = strtoull(v, NULL, 0);
		if (cpuinfo_field(id->cpuinfo, "mimpid", v, sizeof(v)))
			id->mimpid = strtoull(v, NULL, 0);
	}
	char midr[64];
	if (read_small_file("/sys/devices/system/cpu/cpu0/regs/identification/midr_el1", midr,
			    sizeof(midr)) > 0) {
		unsigned long long m = strtoull(midr, NULL, 0);
		id->implementer = (unsigned)(m >> 24) & 0xff;
		id->part = (unsigned)(m >> 4) & 0xfff;
		id->have_midr = true;
	} else if (cpuinfo_field(id->cpuinfo, "CPU implementer", v, sizeof(v))) {
		id->implementer = (unsigned)strtoul(v, NULL, 0);
		if (cpuinfo_field(id->cpuinfo, "CPU part", v, sizeof(v)))
			id->part = (unsigned)strtoul(v, NULL, 0);
		id->have_midr = true;
	}
}

/* Does every key=value of args hold? */
static bool args_match(const char *args, const struct cpu_ident *id, const char *kind, int *nkeys)
{
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", args);
	*nkeys = 0;
	for (char *save, *tok = strtok_r(buf, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		char *eq = strchr(tok, '=');
		if (!eq)
			return false;
		*eq = 0;
		const char *key = tok, *val = eq + 1;
		(*nkeys)++;
		if (!strcmp(kind, "arm") && !strcmp(key, "midr")) {
			unsigned impl = 0, part = 0;
			if (!id->have_midr || sscanf(val, "%x:%x", &impl, &part) != 2 ||
			    impl != id->implementer || part != id->part)
				return false;
		} else if (!strcmp(kind, "riscv")) {
			uint64_t want = strtoull(val, NULL, 0), have;
			if (!id->have_riscv_ids)
				return false;
			if (!strcmp(key, "mvendorid"))
				have = id->mvendorid;
			else if (!strcmp(key, "marchid"))
				have = id->marchid;
			else if (!strcmp(key, "mimpid"))
				have = id->mimpid;
			else
				return false;
			if (have != want)
				return false;
		} else if (!strcmp(kind, "x86")) {
			if (!strcmp(key, "vendor")) {
				if (strcmp(val, id->vendor))
					return false;
			} else if (!strcmp(key, "family")) {
				if (strtol(val, NULL, 0) != id->family)
					return false;
			} else if (!strcmp(key, "model")) {
				if (strtol(val, NULL, 0) != id->model)
					return false;
			} else
				return false;
		} else if (!strcmp(kind, "cpuinfo")) {
			char v[256];
			if (!cpuinfo_field(id->cpuinfo, key, v, sizeof(v)) || strcmp(v, val))
				return false;
		} else {
			return false;
		}
	}
	return *nkeys > 0;
}

bool evtab_detect_matches(const struct evtab_detect *d, const struct evtab *tab,
			  const struct cpu_ident *id, int *specificity)
{
	int nkeys = 0;
	bool isa_ok = !tab->isa || !strcmp(tab->isa, "any") || !strcmp(tab->isa, id->isa);
	if (!isa_ok)
		return false;
	if (!strcmp(d->kind, "isa")) {
		*specificity = 0;
		return true;
	}
	if (!args_match(d->args, id, d->kind, &nkeys))
		return false;
	*specificity = 10 + nkeys;
	return true;
}
