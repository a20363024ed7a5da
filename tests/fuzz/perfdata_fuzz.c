/* libFuzzer harness for the perf.data record scanner and the delivery order
 * (src/native/perfdata_scan.c, perfdata_order.c), driven the way hpmkit.perfdata.scan drives it.
 *
 *   make fuzz-build && build/fuzz/perfdata_fuzz tests/data/fuzz/perfdata_scan   (docs/fuzzing.md)
 *
 * Input: a 32-byte preamble that describes the events, then the data section.
 *   byte 0      number of attrs (1 + b % 3); bit 7: keep the extra columns
 *   byte 1      records per pdscan__run call (1 + b % 16: exercises PD_LIMIT and resuming)
 *   byte 2      bytes given per step (0: all at once; else b * 8: records cut between buffers,
 *               as the streaming reader hands them over)
 *   byte 3      ids per attr (b % 4), taken from the attr's index (1, 2, 3 ...: easy to hit)
 *   bytes 4-31  per attr (up to 3 x 9 bytes): sample_type (low 25 bits of a u32 + flags),
 *               read_format (5 bits), regs_user_n, regs_intr_n, flags (hw_index, counters,
 *               sample_id_all)
 * Besides memory errors (ASan/UBSan) it checks what the Python side relies on: every column
 * index it gets (stack of a sample, chain range of a stack, sample of a group-read row, blob
 * range of a copied record) is inside its column, and the delivery order is a permutation.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct pdscan;
struct pdscan_attr {
	uint64_t sample_type, read_format;
	uint32_t regs_user_n, regs_intr_n, branch_hw_index, branch_counters, sample_id_all, pad;
};
struct pdscan *pdscan__new(const struct pdscan_attr *attrs, uint32_t nattrs);
void pdscan__delete(struct pdscan *h);
void pdscan__keep_extra(struct pdscan *h, int on);
void pdscan__set_types(struct pdscan *h, const uint64_t copy[4], const uint64_t stop[4]);
int pdscan__reserve(struct pdscan *h, uint64_t n);
int pdscan__add_ids(struct pdscan *h, const uint64_t *ids, uint32_t n, int32_t attr);
int pdscan__run(struct pdscan *h, const uint8_t *buf, uint64_t pos, uint64_t end, uint64_t off_base,
		uint64_t off_fixed, uint64_t max_records, uint64_t *next);
int pdscan__note(struct pdscan *h, uint64_t off, const uint8_t *rec, uint64_t size);
int pdscan__column(const struct pdscan *h, int c, const void **p, uint64_t *n);
const char *pdscan__error(const struct pdscan *h, uint64_t *off);
int pdorder(const uint64_t *s_time, uint64_t ns, const uint64_t *o_before, const uint64_t *o_time,
	    const uint32_t *o_type, uint64_t no, uint64_t *s_dseq, uint64_t *o_dseq);

/* perfdata_scan.c `enum col` */
enum { C_ATTR = 1, C_TIME = 5, C_STACK = 10, C_READ_SAMPLE = 13, C_STACK_PID = 17, C_STACK_START,
       C_STACK_LEN, C_CHAIN, C_OTHER_OFF, C_OTHER_TYPE, C_OTHER_BEFORE, C_OTHER_TIME, C_OTHER_ATTR,
       C_OTHER_START, C_OTHER_LEN, C_OTHER_DSEQ, C_BLOB, C_NCOLS };
enum { PD_MORE = 0, PD_STOP = 1, PD_LIMIT = 2 };

#define PRE 32
#define CHECK(c) do { if (!(c)) abort(); } while (0)

static uint64_t u32le(const uint8_t *p)
{
	return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24;
}

static const void *col(const struct pdscan *h, int c, uint64_t *n)
{
	const void *p;
	CHECK(pdscan__column(h, c, &p, n) == 0);
	return p;
}

static void check_columns(const struct pdscan *h, uint32_t nattrs)
{
	uint64_t ns, nst, nchain, nread, no, nblob, n;
	const int32_t *attr = col(h, C_ATTR, &ns);
	const int32_t *stack = col(h, C_STACK, &n);
	CHECK(n == ns);
	col(h, C_STACK_PID, &nst);
	const uint64_t *start = col(h, C_STACK_START, &n);
	CHECK(n == nst);
	const uint32_t *len = col(h, C_STACK_LEN, &n);
	CHECK(n == nst);
	col(h, C_CHAIN, &nchain);
	for (uint64_t i = 0; i < ns; i++)
		CHECK(stack[i] >= 0 && (uint64_t)stack[i] < nst && attr[i] >= 0 && (uint32_t)attr[i] < nattrs);
	for (uint64_t s = 0; s < nst; s++)
		CHECK(start[s] <= nchain && len[s] <= nchain - start[s]);
	const uint64_t *rs = col(h, C_READ_SAMPLE, &nread);
	for (uint64_t i = 0; i < nread; i++)
		CHECK(rs[i] < ns || rs[i] == ns); /* the sample being decoded when a later field failed */
	const uint64_t *before = col(h, C_OTHER_BEFORE, &no);
	const uint64_t *ostart = col(h, C_OTHER_START, &n);
	const uint32_t *olen = col(h, C_OTHER_LEN, &n);
	const int32_t *oattr = col(h, C_OTHER_ATTR, &n);
	const uint32_t *otype = col(h, C_OTHER_TYPE, &n);
	const uint64_t *otime = col(h, C_OTHER_TIME, &n);
	col(h, C_BLOB, &nblob);
	for (uint64_t j = 0; j < no; j++) {
		CHECK(before[j] <= ns && (j == 0 || before[j] >= before[j - 1]));
		CHECK(oattr[j] >= -1 && oattr[j] < (int32_t)nattrs);
		if (olen[j])
			CHECK(ostart[j] <= nblob && olen[j] <= nblob - ostart[j] && olen[j] >= 8);
	}
	/* delivery order: every sample and record gets one distinct number */
	const uint64_t *stime = col(h, C_TIME, &n);
	uint64_t *sd = calloc(ns + 1, 8), *od = calloc(no + 1, 8);
	uint8_t *seen = calloc(ns + no + 1, 1);
	CHECK(sd && od && seen);
	CHECK(pdorder(stime, ns, before, otime, otype, no, sd, od) == 0);
	for (uint64_t i = 0; i < ns; i++) {
		CHECK(sd[i] < ns + no && !seen[sd[i]]);
		seen[sd[i]] = 1;
	}
	for (uint64_t j = 0; j < no; j++) {
		CHECK(od[j] < ns + no && !seen[od[j]]);
		seen[od[j]] = 1;
	}
	free(sd);
	free(od);
	free(seen);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < PRE)
		return 0;
	uint32_t nattrs = 1 + data[0] % 3;
	uint64_t per_call = 1 + data[1] % 16, step = (uint64_t)data[2] * 8;
	uint32_t nids = data[3] % 4;
	struct pdscan_attr a[3] = {{0}};
	for (uint32_t i = 0; i < nattrs; i++) {
		const uint8_t *p = data + 4 + 9 * i;
		a[i].sample_type = (u32le(p) & 0x1ffffff);
		a[i].read_format = p[4] & 0x1f;
		a[i].regs_user_n = p[5] % 8;
		a[i].regs_intr_n = p[6] % 8;
		a[i].branch_hw_index = p[7] & 1;
		a[i].branch_counters = p[7] >> 1 & 1;
		a[i].sample_id_all = p[8] & 1;
	}
	struct pdscan *h = pdscan__new(a, nattrs);
	CHECK(h);
	pdscan__keep_extra(h, data[0] >> 7);
	/* as hpmkit.perfdata.scan: copy the info records, stop at HEADER_ATTR (64), TRACING_DATA (66),
	 * AUXTRACE (71), COMPRESSED (81) */
	uint64_t copy[4] = {~0ull, ~0ull, 0, 0}, stop[4] = {0, 1ull << 0 | 1ull << 2 | 1ull << 7 | 1ull << 17, 0, 0};
	pdscan__set_types(h, copy, stop);
	CHECK(pdscan__reserve(h, (size - PRE) / 24 + 1) == 0);
	for (uint32_t i = 0; i < nattrs; i++)
		for (uint32_t k = 0; k < nids; k++) {
			uint64_t id = 1 + i + nattrs * k;
			CHECK(pdscan__add_ids(h, &id, 1, (int32_t)i) == 0);
		}
	const uint8_t *buf = data + PRE;
	uint64_t end = size - PRE, pos = 0, have = step ? (step < end ? step : end) : end;
	for (int guard = 0; guard < 1 << 20; guard++) {
		uint64_t next = 0;
		int rc = pdscan__run(h, buf, pos, have, 0, UINT64_MAX, per_call, &next);
		if (rc < 0) {
			uint64_t off;
			const char *why = pdscan__error(h, &off);
			CHECK(why && *why && off < end);
			break;
		}
		CHECK(next >= pos && next <= have);
		pos = next;
		if (rc == PD_STOP) { /* the caller handles the record and goes on after it */
			uint16_t sz;
			memcpy(&sz, buf + pos + 6, 2);
			CHECK(sz >= 8 && pos + sz <= have);
			CHECK(pdscan__note(h, pos, buf + pos, sz) == 0);
			pos += sz;
		} else if (rc == PD_MORE) {
			if (have == end)
				break; /* the rest is an incomplete record: the reader reports it as cut */
			have = step && have + step < end ? have + step : end;
		}
	}
	check_columns(h, nattrs);
	pdscan__delete(h);
	return 0;
}
