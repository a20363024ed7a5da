/* libFuzzer harness for the SPE decoder (src/native/spe_*.c).
 *
 * Build and run (a development activity, not part of the test suite):
 *   make fuzz-spe                         # clang -fsanitize=fuzzer,address,undefined
 *   build/fuzz/spe_fuzz -max_len=4096 tests/data/spe/fuzz-corpus
 *
 * Besides memory errors (ASan/UBSan), it checks properties:
 *  - every input byte is accounted for (bytes fed == input size);
 *  - decoding in chunks of any size gives the same records and counts as in one piece
 *    (the first input byte picks the chunk size);
 *  - the fast path (table-driven, spe_dec.c fast()) gives the same as the generic path;
 *  - the dump has one line per packet or bad byte and always fits 110 bytes per input byte;
 *  - the records go through the table writer (spe_tab.c) as CSV and as Parquet (to /dev/null),
 *    every column, symbol and time included, in row groups of 7 rows.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fcntl.h>
#include <unistd.h>

#include "spe.h"
#include "spe_tab.h"

#define MAXREC 4096

static size_t run(const uint8_t *data, size_t size, size_t chunk, int slow, struct spe_record *out,
		  struct spe_stats *st)
{
	struct spe_dec *d;
	size_t n = 0, pos = 0;

	if (spe_dec__new(&d) < 0)
		abort();
	spe_dec__set_slow(d, slow);
	spe_dec__set_origin(d, 3, 7, 0);
	while (pos < size || size == 0) {
		size_t len = size - pos < chunk ? size - pos : chunk;
		size_t consumed = 0, off = 0;
		int last = pos + len == size;
		do {
			long got = spe_dec__feed(d, data + pos + off, len - off, last, out + n,
						 MAXREC - n, &consumed);
			if (got < 0)
				abort();
			n += (size_t)got;
			off += consumed;
			if (n == MAXREC)
				n = 0; /* keep going: the counts are what we compare past this */
		} while (off < len);
		pos += len;
		if (size == 0)
			break;
	}
	spe_dec__flush(d);
	spe_dec__stats(d, st);
	spe_dec__delete(d);
	return n;
}

static const char *const table_cols[SPE_TAB_N] = {
	"cpu,op,pc,el,atomic,excl,ar,subclass,event,issue_lat,total_lat,vaddr,xlat_lat,paddr,data_source,"
	"context,ts,symbol,time",
	"cpu,op,pc,el,condition,indirect,event,issue_lat,total_lat,br_tgt,br_tgt_lvl,pbt,pbt_lvl,context,ts,"
	"symbol,time",
	"cpu,op,pc,el,subclass,sve_evl,sve_pred,sve_fp,condition,event,issue_lat,total_lat,context,ts,symbol,"
	"time",
};

static void write_tables(const struct spe_record *r, size_t n, int fmt)
{
	static int fd = -1;
	static uint32_t sym[MAXREC];
	static uint64_t tm[MAXREC];
	struct spe_tabs *t;
	static const char names[] = "LD\0ST\0";
	static const char syms[] = "main\0a,\"b\"\0";
	char ev[64 * 3];

	if (fd < 0 && (fd = open("/dev/null", O_WRONLY)) < 0)
		abort();
	if (spe_tabs__new(&t, fmt, 7) < 0)
		abort();
	for (int k = 0; k < SPE_TAB_N; k++)
		if (spe_tabs__open(t, k, fd, table_cols[k]) < 0)
			abort();
	for (int b = 0; b < 64; b++) /* "E0", "", "E2", ...: named and unnamed bits */
		ev[3 * b] = (b & 1) ? 0 : 'E', ev[3 * b + 1] = (b & 1) ? 0 : (char)('0' + b % 10), ev[3 * b + 2] = 0;
	if (spe_tabs__names(t, -1, "event", ev, sizeof(ev), 64) < 0 ||
	    spe_tabs__names(t, -1, "data_source", names, sizeof(names), 2) < 0 ||
	    spe_tabs__add_symbols(t, syms, sizeof(syms), 2) < 0)
		abort();
	for (size_t i = 0; i < n; i++) {
		sym[i] = (uint32_t)(r[i].pc & 1);
		tm[i] = r[i].ts * 3;
	}
	if (spe_tabs__add(t, r, n, sym, tm) < 0 || spe_tabs__finish(t) < 0)
		abort();
	uint64_t rows[4];
	spe_tabs__rows(t, rows);
	if (rows[0] + rows[1] + rows[2] + rows[3] != n)
		abort();
	spe_tabs__delete(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct spe_record a[MAXREC], b[MAXREC], c[MAXREC];
	struct spe_stats sa, sb, sc;
	size_t chunk = size ? (size_t)(data[0] % 64) + 1 : 1;
	size_t na, nb, nc;

	na = run(data, size, size ? size : 1, 0, a, &sa);
	nb = run(data, size, chunk, 0, b, &sb);
	nc = run(data, size, size ? size : 1, 1, c, &sc); /* generic path only */
	if (sa.bytes != size || sb.bytes != size || sc.bytes != size)
		abort();
	if (na != nb || memcmp(a, b, na * sizeof(a[0])) != 0 || memcmp(&sa, &sb, sizeof(sa)) != 0)
		abort();
	if (na != nc || memcmp(a, c, na * sizeof(a[0])) != 0 || memcmp(&sa, &sc, sizeof(sa)) != 0)
		abort();
	write_tables(a, na, SPE_TAB_CSV);
	write_tables(a, na, SPE_TAB_PARQUET);

	size_t cap = 110 * size + 64;
	char *txt = malloc(cap);
	if (!txt)
		return 0;
	size_t used;
	long len = spe__dump(data, size, 0, size, txt, cap, &used);
	if (len < 0 || used != size)
		abort();
	free(txt);

	/* single packet decode + description on every offset */
	for (size_t i = 0; i < size && i < 64; i++) {
		struct spe_pkt p;
		char desc[256];
		int r = spe_pkt__decode(data + i, size - i, i, &p);
		if (r > 0) {
			if ((size_t)r > size - i || r > 16)
				abort();
			spe_pkt__desc(&p, desc, sizeof(desc));
		}
	}
	return 0;
}
