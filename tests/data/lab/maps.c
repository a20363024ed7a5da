/* A dynamically linked guest program for tests/py/test_lab_libmaps.py: prints its own
 * executable mappings (/proc/self/maps, r-xp lines), then spends its time in libc's strlen,
 * so that the lab sampler's shared-library MMAP2 records can be checked against what the
 * guest kernel itself reports. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100000;
	char line[512], buf[4096];
	FILE *f = fopen("/proc/self/maps", "r");
	if (!f)
		return 2;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, " r-xp "))
			fputs(line, stdout);
	fclose(f);
	memset(buf, 'a', sizeof(buf) - 1);
	buf[sizeof(buf) - 1] = 0;
	volatile size_t s = 0;
	for (int i = 0; i < n; i++)
		s += strlen(buf + (i & 63));
	printf("%zu\n", (size_t)s);
	return 0;
}
