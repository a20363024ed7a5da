/* Runs a libFuzzer harness without libFuzzer: every file of the corpus folders named, then N
 * inputs made by mutating them at random (bit flips, byte changes, insertions, deletions,
 * copies of a span inside the input). Linked with a harness and gcc's ASan + UBSan, it lets the
 * normal test suite replay the kept corpora on machines without clang (make fuzz-replay).
 *
 *   build/fuzz/<target>_replay DIR [DIR...] [-n N] [-s SEED]
 *
 * Prints one line: how many files and mutated inputs ran. A finding aborts (the sanitizer or
 * the harness's own checks), naming nothing: rerun the harness on the input under gdb.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mutate.h"

#define MAXLEN (1 << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

struct input { uint8_t *p; size_t n; };

static int load_dir(const char *dir, struct input **in, int *n, int *cap)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	if (!d) {
		fprintf(stderr, "%s: cannot open the corpus folder\n", dir);
		return -1;
	}
	while ((e = readdir(d))) {
		char path[4096];
		FILE *f;
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (!(f = fopen(path, "rb")))
			continue;
		uint8_t *buf = malloc(MAXLEN);
		if (!buf)
			abort();
		size_t len = fread(buf, 1, MAXLEN, f);
		fclose(f);
		if (*n == *cap) {
			*cap = *cap ? *cap * 2 : 256;
			*in = realloc(*in, (size_t)*cap * sizeof(**in));
			if (!*in)
				abort();
		}
		/* an exact-size copy: ASan sees reads past the input's end */
		uint8_t *exact = malloc(len ? len : 1);
		memcpy(exact, buf, len);
		free(buf);
		(*in)[(*n)++] = (struct input){exact, len};
		LLVMFuzzerTestOneInput(exact, len);
	}
	closedir(d);
	return 0;
}

int main(int argc, char **argv)
{
	struct input *in = NULL;
	int n = 0, cap = 0;
	long count = 0;
	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-n") && i + 1 < argc)
			count = atol(argv[++i]);
		else if (!strcmp(argv[i], "-s") && i + 1 < argc)
			state ^= strtoull(argv[++i], NULL, 0) * 0x9e3779b97f4a7c15ull;
		else if (load_dir(argv[i], &in, &n, &cap) < 0)
			return 2;
	}
	if (!n) {
		fprintf(stderr, "usage: %s CORPUS-DIR... [-n MUTATIONS] [-s SEED]: no input files\n", argv[0]);
		return 2;
	}
	for (long i = 0; i < count; i++) {
		const struct input *src = &in[next() % (uint64_t)n];
		size_t len = src->n, cap2 = len + 64;
		uint8_t *buf = malloc(cap2);
		memcpy(buf, src->p, len);
		len = mutate(buf, len, cap2, 5);
		uint8_t *exact = malloc(len ? len : 1);
		memcpy(exact, buf, len);
		free(buf);
		LLVMFuzzerTestOneInput(exact, len);
		free(exact);
	}
	printf("%d corpus files and %ld mutated inputs: no finding\n", n, count);
	for (int i = 0; i < n; i++)
		free(in[i].p);
	free(in);
	return 0;
}
