/* Workload with a known call tree for the profile tests:
 *   main -> work_a -> leaf_x          (1 part)
 *   main -> work_b -> leaf_x          (1 part)
 *   main -> work_b -> leaf_y          (2 parts)
 * Built with -O0 -fno-omit-frame-pointer so every frame is on the frame-pointer chain. */
#include <stdlib.h>

volatile unsigned long sink;

__attribute__((noinline)) void leaf_x(long n) { for (long i = 0; i < n; i++) sink += i; }
__attribute__((noinline)) void leaf_y(long n) { for (long i = 0; i < n; i++) sink ^= i * 3; }
__attribute__((noinline)) void work_a(long n) { leaf_x(n); }
__attribute__((noinline)) void work_b(long n) { leaf_x(n); leaf_y(2 * n); }

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20000000;
	work_a(n);
	work_b(n);
	return 0;
}
