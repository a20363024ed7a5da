/* PLT fixture: calls through the PLT into libc, into a local IFUNC (an IRELATIVE
   relocation whose slot comes first while x86 ld writes its relocation last), and takes
   a libc function's address (a GOT-only reference: x86-64's .plt.got). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int add_one(int x) { return x + 1; }
static int (*pick_resolver(void))(int) { return add_one; }
int pick(int) __attribute__((ifunc("pick_resolver")));

int (*keep)(const char *, const char *) = strcmp;

int main(int argc, char **argv)
{
    char buf[64];
    long n = argc > 1 ? atol(argv[1]) : 3, acc = pick(argc);
    for (long i = 0; i < n; i++) {
        acc += strcoll(argv[0], "x");
        acc += (char *)mempcpy(buf, argv[0], 8) - buf;
        acc += strlen(buf + (i & 3));
    }
    printf("%ld %d\n", acc, keep("a", "b"));
    return 0;
}
