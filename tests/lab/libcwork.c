/* SPDX-License-Identifier: MIT */
/* A libc-heavy guest workload for the lab's user-stack test (tests/py/test_lab_unwind.py):
 * formatting, parsing, sorting and string copies, most of the time inside libc. Built
 * with the compiler's default flags, so riscv64 code keeps no frame pointers, like the
 * distribution's libc it links. Deterministic: the same calls on every run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned seed = 1;

static unsigned next(void)
{
	seed = seed * 1103515245u + 12345u;
	return seed >> 8;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* numbers through text and back: snprintf and strtod */
__attribute__((noinline)) static void fill(double *v, int n)
{
	char buf[64];
	for (int i = 0; i < n; i++) {
		snprintf(buf, sizeof(buf), "%u.%05u", next() % 100000, next() % 100000);
		v[i] = strtod(buf, NULL);
	}
}

/* a table of names, copied and compared */
__attribute__((noinline)) static size_t names(int n)
{
	size_t total = 0;
	char a[128], b[128];
	for (int i = 0; i < n; i++) {
		snprintf(a, sizeof(a), "name-%08x-%s", next(), i & 1 ? "odd" : "even");
		memcpy(b, a, strlen(a) + 1);
		strcat(b, "-copy");
		total += strlen(b) + (size_t)(strcmp(a, b) < 0);
	}
	return total;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 300;
	if (n < 1 || n > 10000000) {
		fprintf(stderr, "libcwork: N must be 1..10000000\n");
		return 2;
	}
	double *v = malloc((size_t)n * sizeof(*v));
	if (!v)
		return 1;
	fill(v, n);
	qsort(v, (size_t)n, sizeof(*v), by_value);
	for (int i = 1; i < n; i++)
		if (v[i - 1] > v[i])
			return 1;
	size_t t = names(n);
	printf("libcwork: n=%d min=%.5f max=%.5f names=%zu ok\n", n, v[0], v[n - 1], t);
	free(v);
	return 0;
}
