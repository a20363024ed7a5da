/* SPDX-License-Identifier: MIT */
/* PMU detection against other machines' /proc and /sys (HPM_SYSROOT). */
#include <stdlib.h>
#include <sys/stat.h>
#include "check.h"
#include "internal.h"

static void put(const char *root, const char *rel, const char *text)
{
	char path[600], dir[600];
	snprintf(path, sizeof(path), "%s%s", root, rel);
	snprintf(dir, sizeof(dir), "%s", path);
	for (char *p = dir + strlen(root) + 1; *p; p++)
		if (*p == '/') {
			*p = 0;
			mkdir(dir, 0755);
			*p = '/';
		}
	FILE *f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
}

static const char *detect_in(const char *isa, const char *cpuinfo, const char *midr)
{
	static char result[64];
	char root[] = "/tmp/hpmroot.XXXXXX";
	if (!mkdtemp(root))
		return "mkdtemp failed";
	put(root, "/isa", isa);
	put(root, "/proc/cpuinfo", cpuinfo);
	if (midr)
		put(root, "/sys/devices/system/cpu/cpu0/regs/identification/midr_el1", midr);
	setenv("HPM_SYSROOT", root, 1);
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
	/* an Arm core we have no table for falls back to the architectural events */
	CHECK_EQ_STR(detect_in("aarch64", "CPU implementer\t: 0x41\nCPU part\t: 0xd40\n", NULL),
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
