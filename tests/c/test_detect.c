/* SPDX-License-Identifier: MIT */
/* PMU detection against other machines' /proc and /sys (HPM_SYSROOT), including every
 * core of Linux's pmu-events mapfiles (tests/data/spotchecks/detect.tsv). */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include "check.h"
#include "internal.h"

/* A sysroot that looks like another machine; HPM_SYSROOT points at it. */
static int make_root(char *root, const char *isa, const char *cpuinfo, const char *midr)
{
	if (!mkdtemp(root))
		return -1;
	test_put(root, "/isa", isa);
	test_put(root, "/proc/cpuinfo", cpuinfo);
	if (midr)
		test_put(root, "/sys/devices/system/cpu/cpu0/regs/identification/midr_el1", midr);
	setenv("HPM_SYSROOT", root, 1);
	return 0;
}

static const char *detect_in(const char *isa, const char *cpuinfo, const char *midr)
{
	static char result[64];
	char root[] = "/tmp/hpmroot.XXXXXX";
	if (make_root(root, isa, cpuinfo, midr))
		return "mkdtemp failed";
	struct hpm_ctx *ctx;
	hpm_ctx__new(&ctx);
	const char *p = hpm_ctx__pmu(ctx);
	snprintf(result, sizeof(result), "%s", p ? p : "(none)");
	hpm_ctx__delete(ctx);
	unsetenv("HPM_SYSROOT");
	if (test_rmtree(root))
		return "cleanup failed";
	return result;
}

TEST(detect_arm_by_midr_sysfs)
{
	/* Neoverse N1 r3p1: implementer 0x41, part 0xd0c */
	CHECK_EQ_STR(detect_in("aarch64", "processor\t: 0\n", "0x00000000413fd0c1\n"),
		     "neoverse_n1");
}

TEST(detect_arm_by_cpuinfo)
{
	CHECK_EQ_STR(detect_in("aarch64",
			       "processor\t: 0\nBogoMIPS\t: 108.00\nCPU implementer\t: 0x41\n"
			       "CPU architecture: 8\nCPU variant\t: 0x0\nCPU part\t: 0xd08\n\n"
			       "processor\t: 1\nCPU part\t: 0xd03\n",
			       NULL),
		     "cortex_a72");
	/* an Arm core we have no table for (Cortex-A520) falls back to the architectural events */
	CHECK_EQ_STR(detect_in("aarch64", "CPU implementer\t: 0x41\nCPU part\t: 0xd80\n", NULL),
		     "armv8_pmuv3");
}

TEST(detect_riscv)
{
	CHECK_EQ_STR(detect_in("riscv64",
			       "processor\t: 0\nhart\t\t: 1\nisa\t\t: rv64imafdc\nmmu\t\t: sv39\n"
			       "uarch\t\t: sifive,u74-mc\nmvendorid\t: 0x489\n"
			       "marchid\t\t: 0x8000000000000007\nmimpid\t\t: 0x20181004\n",
			       NULL),
		     "sifive_u74");
	/* older kernels print only uarch */
	CHECK_EQ_STR(detect_in("riscv64", "processor\t: 0\nuarch\t\t: sifive,u74-mc\n", NULL),
		     "sifive_u74");
	CHECK_EQ_STR(detect_in("riscv64",
			       "processor\t: 0\nmvendorid\t: 0x5b7\nmarchid\t\t: 0x0\nmimpid\t\t: 0x0\n",
			       NULL),
		     "thead_c910");
	/* QEMU's rv64: vendor 0 -> SBI standard events only */
	CHECK_EQ_STR(detect_in("riscv64",
			       "processor\t: 0\nmvendorid\t: 0x0\nmarchid\t\t: 0x0\nmimpid\t\t: 0x0\n",
			       NULL),
		     "riscv_sbi");
}

TEST(detect_x86)
{
	CHECK_EQ_STR(detect_in("x86_64",
			       "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\n"
			       "model\t\t: 85\n",
			       NULL),
		     "intel_arch");
	CHECK_EQ_STR(detect_in("x86_64",
			       "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\n"
			       "model\t\t: 17\n",
			       NULL),
		     "x86_generic");
	/* an x86 table never matches an Arm machine */
	CHECK_EQ_STR(detect_in("s390x", "vendor_id\t: IBM/S390\n", NULL), "(none)");
}

static const char *data_dir(void)
{
	const char *d = getenv("HPM_TEST_DATA");
	if (d)
		return d;
	/* from the source tree, or where the lab guest keeps a copy */
	return access("tests/data", F_OK) == 0 ? "tests/data" : "/tests/data";
}

/* Every row of Linux 6.12's arm64 and riscv mapfiles: the MIDR (through sysfs, with a
 * variant and revision the mapfile leaves 0, and through /proc/cpuinfo) or the
 * mvendorid/marchid/mimpid values pick the table the row's core folder became. */
TEST(detect_every_mapfile_core)
{
	char path[512], line[512];
	snprintf(path, sizeof(path), "%s/spotchecks/detect.tsv", data_dir());
	FILE *f = fopen(path, "r");
	CHECK(f != NULL);
	if (!f)
		return;
	int rows = 0;
	while (fgets(line, sizeof(line), f)) {
		char isa[16], values[128], table[64], info[512], midr[64];
		if (line[0] == '#' || sscanf(line, "%15[^\t]\t%127[^\t]\t%63[^\t]", isa, values, table) != 3)
			continue;
		rows++;
		if (!strcmp(isa, "aarch64")) {
			unsigned long long m = strtoull(values, NULL, 16);
			snprintf(midr, sizeof(midr), "0x%016llx\n", m | 0x00300002ULL); /* r3p2 */
			CHECK_EQ_STR(detect_in(isa, "processor\t: 0\n", midr), table);
			snprintf(info, sizeof(info),
				 "processor\t: 0\nCPU implementer\t: 0x%02llx\nCPU architecture: 8\n"
				 "CPU variant\t: 0x1\nCPU part\t: 0x%03llx\nCPU revision\t: 4\n",
				 (m >> 24) & 0xff, (m >> 4) & 0xfff);
			CHECK_EQ_STR(detect_in(isa, info, NULL), table);
		} else {
			char v[3][40];
			CHECK(sscanf(values, "%39s %39s %39s", v[0], v[1], v[2]) == 3);
			snprintf(info, sizeof(info),
				 "processor\t: 0\nhart\t\t: 0\nisa\t\t: rv64imafdc\nmvendorid\t: %s\n"
				 "marchid\t\t: %s\nmimpid\t\t: %s\n",
				 v[0], v[1], v[2]);
			CHECK_EQ_STR(detect_in(isa, info, NULL), table);
		}
	}
	fclose(f);
	CHECK(rows >= 40);
}

/* HPM_PMU names the table bare names resolve in, whatever the CPU is. */
TEST(hpm_pmu_overrides_detection)
{
	char root[] = "/tmp/hpmroot.XXXXXX";
	CHECK_EQ_INT(make_root(root, "riscv64",
			       "processor\t: 0\nmvendorid\t: 0x489\nmarchid\t\t: 0x8000000000000007\n"
			       "mimpid\t\t: 0x20181004\n",
			       NULL),
		     0);
	struct hpm_ctx *ctx;
	struct hpm_event_info i;
	hpm_ctx__new(&ctx);
	CHECK_EQ_STR(hpm_ctx__pmu(ctx), "sifive_u74");
	CHECK_EQ_INT(hpm_ctx__resolve(ctx, "INTEGER_LOAD_RETIRED", &i), 0); /* Linux's name */
	CHECK_EQ_INT(i.config, 0x200);
	hpm_ctx__delete(ctx);
	setenv("HPM_PMU", "neoverse_v1", 1);
	hpm_ctx__new(&ctx);
	CHECK_EQ_INT(hpm_ctx__resolve(ctx, "INST_RETIRED", &i), 0);
	CHECK_EQ_INT(i.config, 0x8);
	CHECK_EQ_INT(hpm_ctx__resolve(ctx, "STALL_BACKEND_MEM", &i), 0); /* a V1 event */
	CHECK_EQ_INT(i.config, 0x4005);
	CHECK_EQ_INT(hpm_ctx__resolve(ctx, "INTEGER_LOAD_RETIRED", &i), -ENOENT);
	CHECK_CONTAINS(hpm_ctx__last_error(ctx), "belongs to table 'sifive_u74'");
	hpm_ctx__delete(ctx);
	unsetenv("HPM_PMU");
	unsetenv("HPM_SYSROOT");
	CHECK_EQ_INT(test_rmtree(root), 0);
}
