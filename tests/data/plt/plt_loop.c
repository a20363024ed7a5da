/* PLT hot loop for tests/py/test_symbols_plt.py: every iteration calls strcoll and mempcpy
   through the program's PLT (built with -fno-builtin, so gcc keeps both calls), giving
   perf samples in the PLT slots themselves. Usage: plt_loop [ITERATIONS]. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 20000000;
    char a[64] = "hello world alpha", b[64] = "hello world beta", buf[64];
    long acc = 0;
    for (long i = 0; i < n; i++) {
        acc += strcoll(a, b);
        acc += (char *)mempcpy(buf, a, (i & 15) + 1) - buf;
    }
    printf("%ld\n", acc);
    return 0;
}
