/* SPDX-License-Identifier: MIT */
/*
 * hpm-loop N [EVENT]: a calibration workload. The counted loop is written in assembly
 * per ISA so its user-mode instruction count is a*N + b exactly, whatever the
 * compiler does; the lab tests assert a and b (see docs/lab.md).
 * Loop body per ISA: 1 decrement + 1 conditional branch = 2 instructions.
 * With EVENT, the program counts only its loop with libhpm and prints
 * "EVENT COUNT": the whole-process count includes exec and page faults, which
 * QEMU's riscv PMU counts even for :u (it ignores exclude_kernel).
 */
#include <stdio.h>
#include <stdlib.h>
#include "hpm/hpm.h"

/* noinline: its own symbol, so tests find the loop in the disassembly */
__attribute__((noinline)) static void spin(unsigned long n)
{
	if (!n)
		return;
#if defined(__x86_64__)
	__asm__ __volatile__("1: dec %0\n\tjnz 1b" : "+r"(n) : : "cc");
#elif defined(__aarch64__)
	__asm__ __volatile__("1: subs %0, %0, #1\n\tb.ne 1b" : "+r"(n) : : "cc");
#elif defined(__riscv)
	__asm__ __volatile__("1: addi %0, %0, -1\n\tbnez %0, 1b" : "+r"(n));
#else
	for (volatile unsigned long i = 0; i < n; i++)
		;
#endif
}

int main(int argc, char **argv)
{
	if (argc != 2 && argc != 3) {
		fprintf(stderr, "usage: hpm-loop N [EVENT]   (runs a 2-instruction loop N times;\n"
				"       with EVENT, counts the loop alone and prints the count)\n");
		return 2;
	}
	char *end;
	unsigned long n = strtoul(argv[1], &end, 0);
	if (*end || argv[1][0] == '-') {
		fprintf(stderr, "hpm-loop: N must be a non-negative integer, got '%s'\n", argv[1]);
		return 2;
	}
	if (argc == 2) {
		spin(n);
		return 0;
	}
	struct hpm_ctx *ctx;
	struct hpm_evset *set;
	struct hpm_value v;
	if (hpm_ctx__new(&ctx) || hpm_evset__new(ctx, &set) || hpm_evset__add(set, argv[2]) < 0) {
		fprintf(stderr, "hpm-loop: %s\n", hpm_ctx__last_error(ctx));
		return 1;
	}
	hpm_evset__start(set);
	spin(n);
	hpm_evset__stop(set);
	if (hpm_evset__read(set, 0, &v) < 0) {
		fprintf(stderr, "hpm-loop: %s\n", hpm_ctx__last_error(ctx));
		return 1;
	}
	printf("%s %llu\n", hpm_evset__name(set, 0), (unsigned long long)v.raw);
	hpm_evset__delete(set);
	hpm_ctx__delete(ctx);
	return 0;
}
