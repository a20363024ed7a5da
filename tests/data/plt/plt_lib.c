/* PLT fixture, shared library: calls into libc, into an exported function (JUMP_SLOT to
   itself) and into a hidden IFUNC (IRELATIVE). */
#define _GNU_SOURCE
#include <string.h>
#include <stdlib.h>

static size_t len_plain(const char *s) { return strlen(s); }
static size_t (*len_resolver(void))(const char *) { return len_plain; }
__attribute__((visibility("hidden"))) size_t mylen(const char *) __attribute__((ifunc("len_resolver")));

int lib_helper(int x) { return x * 3; }

long lib_entry(const char *a, const char *b)
{
    char buf[32];
    long acc = mylen(a) + lib_helper((int)strlen(b));
    acc += (char *)mempcpy(buf, a, 4) - buf;
    acc += strcoll(a, b) + atoi(b);
    return acc + (long)memchr(a, 'x', 4);
}
