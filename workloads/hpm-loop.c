/* SPDX-License-Identifier: MIT */
/*
 * hpm-loop N: a calibration workload. The counted loop is written in assembly
 * per ISA so its user-mode instruction count is a*N + b exactly, whatever the
 * compiler does; the lab tests assert a and b (see docs/lab.md).
 * Loop body per ISA: 1 decrement + 1 conditional branch = 2 instructions.
 */
#include <stdio.h>
#include <stdlib.h>

static void spin(unsigned long n)
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
	if (argc != 2) {
		fprintf(stderr, "usage: hpm-loop N   (runs a 2-instruction loop N times)\n");
		return 2;
	}
	char *end;
	unsigned long n = strtoul(argv[1], &end, 0);
	if (*end || argv[1][0] == '-') {
		fprintf(stderr, "hpm-loop: N must be a non-negative integer, got '%s'\n", argv[1]);
		return 2;
	}
	spin(n);
	return 0;
}
