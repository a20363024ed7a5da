/* Runs the libFuzzer harness (spe_fuzz.c) without libFuzzer: every file of a corpus directory,
 * then N inputs made by mutating corpus files at random (bit flips, byte changes, insertions,
 * deletions). Built with gcc's ASan + UBSan (make spe-replay), so the harness's checks run on
 * machines without clang, and the test suite replays the corpus on every run.
 *
 *   build/fuzz/spe_replay tests/data/spe/fuzz-corpus [N [SEED]]
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mutate.h"

#define MAXLEN 4096
#define MAXFILES 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
	static uint8_t files[MAXFILES][MAXLEN], buf[MAXLEN + 1];
	static size_t lens[MAXFILES];
	int n = 0;
	long count = argc > 2 ? atol(argv[2]) : 0;
	DIR *d;
	struct dirent *e;

	if (argc < 2 || !(d = opendir(argv[1]))) {
		fprintf(stderr, "usage: %s CORPUS-DIR [N [SEED]]\n", argv[0]);
		return 2;
	}
	if (argc > 3)
		state ^= strtoull(argv[3], NULL, 0) * 0x9e3779b97f4a7c15ull;
	while ((e = readdir(d)) && n < MAXFILES) {
		char path[4096];
		FILE *f;
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", argv[1], e->d_name);
		if (!(f = fopen(path, "rb")))
			continue;
		lens[n] = fread(files[n], 1, MAXLEN, f);
		fclose(f);
		LLVMFuzzerTestOneInput(files[n], lens[n]);
		n++;
	}
	closedir(d);
	if (!n) {
		fprintf(stderr, "%s: no input files\n", argv[1]);
		return 2;
	}
	for (long i = 0; i < count; i++) {
		int k = (int)(next() % (uint64_t)n);
		memcpy(buf, files[k], lens[k]);
		/* four kinds of edit (no span copies), as ever: a seed still names the same inputs */
		size_t len = mutate(buf, lens[k], MAXLEN, 4);
		LLVMFuzzerTestOneInput(buf, len);
	}
	printf("%d corpus files and %ld mutated inputs: no finding\n", n, count);
	return 0;
}
