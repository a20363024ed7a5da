/* Arm SPE record assembly over a stream fed in chunks of any size.
 *
 * A record is the packets of one sampled operation, closed by an END or a TIMESTAMP packet.
 * The record semantics are those of Linux perf 6.1's decoder (arm-spe-decoder.c) and its
 * caller's timed mode (arm-spe.c), which is what `perf script` shows for a perf record file:
 *  - PAD packets are skipped; a record still open when its buffer ends continues in the next
 *    buffer of the same queue, and one still open when all input ends is dropped;
 *  - two EVENTS packets in a record: their flags are ORed; two OPERATION TYPE packets: their
 *    classes are ORed (a load stays a load: see add_op);
 *  - a decode error ends the record: a bad byte (skipped alone, decoding resumes at the next
 *    byte) or an OPERATION TYPE packet of class 3 ("Get packet error!" in perf). perf then
 *    samples the record with what it had, so hpmkit emits it too, flagged SPE_HAS_CUT; only
 *    before the queue's first complete record are such partial records dropped (perf's queue
 *    set-up retries until it has one). Errors between records make no record here (perf makes
 *    an empty sample of each) and are counted.
 * Everything skipped, merged or dropped is counted in spe_stats.
 *
 * Memory is bounded: the decoder keeps at most CARRY_MAX bytes between two feed() calls.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "spe.h"

/* A packet is at most 16 bytes and a PAD run or an alignment packet looks 16 bytes ahead;
 * with LOOKAHEAD bytes left, a decode gives the same result as on the whole buffer. */
#define LOOKAHEAD 32
#define CARRY_MAX (2 * LOOKAHEAD)

struct spe_dec {
	struct spe_record cur;
	int open;           /* cur has at least one non-PAD packet */
	int synced;         /* a record was completed by END/TIMESTAMP since the decoder was made */
	int in_bad_run;
	int32_t cpu, tid;
	int slow;           /* testing: generic path only (spe_dec__set_slow) */
	uint64_t pos;       /* stream offset of the next byte to decode */
	uint64_t origin;    /* stream offset of the buffer start (alignment packets count from it) */
	uint8_t carry[CARRY_MAX];
	size_t ncarry;
	struct spe_stats st;
};

static void ftab_init(void);
static int ftab_ready;

/* an empty record; assigned rather than memset (no `rep stos` on the hot path) */
static const struct spe_record empty_record = {.op_class = 0xff};

static void record_reset(struct spe_dec *d)
{
	d->cur = empty_record;
	d->cur.cpu = d->cpu;
	d->cur.tid = d->tid;
	d->open = 0;
}

int spe_dec__new(struct spe_dec **out)
{
	struct spe_dec *d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->cpu = -1;
	d->tid = -1;
	d->st.first_bad_offset = UINT64_MAX;
	record_reset(d);
	if (!ftab_ready)
		ftab_init();
	*out = d;
	return 0;
}

void spe_dec__delete(struct spe_dec *d)
{
	free(d);
}

/* The next bytes fed belong to a new AUX buffer of `cpu`/`tid` starting at stream `offset`. */
void spe_dec__set_origin(struct spe_dec *d, int32_t cpu, int32_t tid, uint64_t offset)
{
	d->cpu = cpu;
	d->tid = tid;
	d->pos = offset;
	d->origin = offset;
	d->ncarry = 0;
	d->in_bad_run = 0;
	if (!d->open) {
		d->cur.cpu = cpu;
		d->cur.tid = tid;
	}
}

/* Top bytes of an address the way perf's decoder fills them (arm_spe_calc_ip). */
static uint64_t fill_ip(uint64_t v)
{
	uint64_t a = v & 0x00ffffffffffffffull;
	unsigned el = (v >> 61) & 3, ns = v >> 63;
	if (ns && (el == 1 || el == 2))
		a |= 0xffull << 56;
	return a;
}

/* Data virtual address: bits 63:56 are a tag and are cleared; an address whose bits 55:52 are
 * all ones is a kernel (TTBR1) address, 48- or 52-bit, and gets 0xff there (Arm ARM "Address
 * packet"; perf does the same). */
static inline uint64_t fill_va(uint64_t v)
{
	v &= 0x00ffffffffffffffull;
	return ((v >> 52) & 0xf) == 0xf ? v | (0xffull << 56) : v;
}

/* A decode error ended the current record. Returns 1 when the record (what it had so far) is to
 * be emitted, as perf samples it; before the first complete record it is dropped, as perf's
 * queue set-up drops it. */
static int cut(struct spe_dec *d)
{
	if (!d->open) {
		if (d->synced)
			d->st.empty_cuts++;
		return 0;
	}
	if (!d->synced) {
		d->st.dropped_records++;
		record_reset(d);
		return 0;
	}
	d->cur.present |= SPE_HAS_CUT;
	d->st.cut_records++;
	return 1;
}

static int bad_byte(struct spe_dec *d)
{
	if (d->st.first_bad_offset == UINT64_MAX)
		d->st.first_bad_offset = d->pos;
	d->st.bad_bytes++;
	if (!d->in_bad_run)
		d->st.bad_runs++;
	d->in_bad_run = 1;
	return cut(d);
}

/* perf's view of an operation type packet of class c (0-2) and payload v: opf[c][v] */
static uint8_t opf[3][256];

static inline uint8_t op_flags(unsigned cls, uint8_t v)
{
	return opf[cls][v];
}

/* One more operation type packet. perf ORs the class flags of every packet; a record keeps one
 * table class here: load/store over branch over other (perf makes a memory sample of a record
 * with any load/store packet), with the payloads of that class ORed; op_flags has perf's view. */
static void add_op(struct spe_dec *d, struct spe_record *r, unsigned cls, uint8_t v)
{
	static const uint8_t rank[3] = {0, 2, 1}; /* other, load/store, branch */

	if (r->present & SPE_HAS_OP) {
		d->st.extra_op++;
		if (cls == r->op_class)
			r->op |= v;
		else if (rank[cls] > rank[r->op_class]) {
			r->op_class = (uint8_t)cls;
			r->op = v;
		}
	} else {
		r->op_class = (uint8_t)cls;
		r->op = v;
	}
	r->op_flags |= op_flags(cls, v);
	r->present |= SPE_HAS_OP;
}

/* Apply one good packet; returns 1 when it closed a record (now in d->cur). */
static int apply(struct spe_dec *d, const struct spe_pkt *p)
{
	struct spe_record *r = &d->cur;
	uint64_t v = p->payload;

	d->in_bad_run = 0;
	d->st.packets++;
	if (p->kind == SPE_PAD) {
		d->st.pad_bytes += p->len;
		return 0;
	}
	if (p->kind == SPE_OP_TYPE && p->index > SPE_OP_BRANCH) {
		/* class 3 is reserved: perf's decoder fails the record here */
		d->st.unknown_op_class++;
		return cut(d);
	}
	if (!d->open) {
		r->offset = d->pos;
		d->open = 1;
	}
	switch (p->kind) {
	case SPE_END:
		r->present |= SPE_HAS_END;
		d->synced = 1;
		return 1;
	case SPE_TIMESTAMP:
		r->ts = v;
		r->present |= SPE_HAS_TS;
		d->synced = 1;
		return 1;
	case SPE_ADDRESS:
		switch (p->index) {
		case SPE_ADDR_PC:
			r->pc = fill_ip(v);
			r->pc_el = (v >> 61) & 3;
			r->pc_ns = v >> 63;
			r->present |= SPE_HAS_PC;
			break;
		case SPE_ADDR_TGT:
			r->tgt = fill_ip(v);
			r->tgt_el = (v >> 61) & 3;
			r->present |= SPE_HAS_TGT;
			break;
		case SPE_ADDR_PBT:
			r->pbt = fill_ip(v);
			r->pbt_el = (v >> 61) & 3;
			r->present |= SPE_HAS_PBT;
			break;
		case SPE_ADDR_VA:
			r->vaddr = fill_va(v);
			r->present |= SPE_HAS_VA;
			break;
		case SPE_ADDR_PA:
			r->paddr = v & 0x00ffffffffffffffull;
			r->pa_ns = v >> 63;
			r->present |= SPE_HAS_PA;
			break;
		default:
			d->st.unknown_addr++;
		}
		return 0;
	case SPE_COUNTER:
		switch (p->index) {
		case SPE_CNT_TOTAL: r->total_lat = (uint16_t)v; r->present |= SPE_HAS_TOT; break;
		case SPE_CNT_ISSUE: r->issue_lat = (uint16_t)v; r->present |= SPE_HAS_ISSUE; break;
		case SPE_CNT_XLAT: r->xlat_lat = (uint16_t)v; r->present |= SPE_HAS_XLAT; break;
		default: d->st.unknown_counter++;
		}
		return 0;
	case SPE_CONTEXT:
		r->context = (uint32_t)v;
		r->ctx_el = p->index + 1;
		r->present |= SPE_HAS_CTX;
		return 0;
	case SPE_OP_TYPE:
		add_op(d, r, p->index, (uint8_t)v);
		return 0;
	case SPE_EVENTS:
		if (r->present & SPE_HAS_EV)
			d->st.extra_events++;
		r->events |= v;
		r->present |= SPE_HAS_EV;
		return 0;
	case SPE_DATA_SOURCE:
		r->data_source = (uint16_t)v;
		r->present |= SPE_HAS_DS;
		return 0;
	default:
		return 0;
	}
}

/* Decode one step at buf[0..len) (stream offset d->pos). Returns bytes used, 0 if more input
 * is needed first (only when !last), and sets *closed when a record was completed. */
static size_t step(struct spe_dec *d, const uint8_t *buf, size_t len, int last, int *closed)
{
	struct spe_pkt pkt;
	int n;

	*closed = 0;
	if (!last && len < LOOKAHEAD)
		return 0;
	n = spe_pkt__decode(buf, len, d->pos - d->origin, &pkt);
	if (n <= 0) {
		*closed = bad_byte(d);
		return 1;
	}
	*closed = apply(d, &pkt);
	return (size_t)n;
}

static int emit(struct spe_dec *d, struct spe_record *out, size_t *nout)
{
	out[(*nout)++] = d->cur;
	d->st.records++;
	record_reset(d);
	return 0;
}


/* ---- fast path ------------------------------------------------------------------------------
 * With at least LOOKAHEAD bytes left, common packets are decoded from a 256-entry table of
 * header bytes and an unaligned 8-byte load, straight into the record. Rare packets (extended
 * headers, alignment, unknown indexes, operation class 3, a second EVENTS or OPERATION TYPE
 * packet in a record) and bad bytes go through step(). The
 * fuzz harness checks that both paths give identical records and counts. (A branch-free variant
 * that parks payloads in slots and builds the record at its end measured 20% slower.) */
enum { F_SLOW = 0, F_PAD, F_END, F_TS, F_EV, F_DS, F_CTX, F_OP, F_PC, F_TGT, F_VA, F_PA, F_PBT,
       F_TOT, F_ISSUE, F_XLAT };
static uint8_t ftab[256];
/* present bit that sends a packet kind to the generic path when the record already has one */
static const uint16_t fdup[16] = {[F_EV] = SPE_HAS_EV, [F_OP] = SPE_HAS_OP};

static void ftab_init(void)
{
	static const uint8_t addr[5] = {F_PC, F_TGT, F_VA, F_PA, F_PBT};
	static const uint8_t cnt[3] = {F_TOT, F_ISSUE, F_XLAT};
	for (int h = 0; h < 256; h++) {
		uint8_t k = F_SLOW;
		if (h == 0x00) k = F_PAD;
		else if (h == 0x01) k = F_END;
		else if (h == 0x71) k = F_TS;
		else if ((h & 0xcf) == 0x42) k = F_EV;
		else if ((h & 0xcf) == 0x43) k = F_DS;
		else if ((h & 0xfc) == 0x64) k = F_CTX;
		else if ((h & 0xfc) == 0x48 && (h & 3) != 3) k = F_OP;
		else if ((h & 0xf8) == 0xb0 && (h & 7) <= 4) k = addr[h & 7];
		else if ((h & 0xf8) == 0x98 && (h & 7) <= 2) k = cnt[h & 7];
		ftab[h] = k;
	}
	for (int v = 0; v < 256; v++) {
		/* SVE: other class, payload x???x??0 with bit 3 set, bit 7 clear; load/store class,
		 * bit 3 set and bit 1 clear (Arm ARM "Operation Type packet") */
		opf[SPE_OP_OTHER][v] = SPE_OPF_OTHER | ((v & 0x89) == 0x08 ? SPE_OPF_SVE_OTHER : 0);
		opf[SPE_OP_LDST][v] = SPE_OPF_LDST | ((v & 1) ? SPE_OPF_ST : SPE_OPF_LD) |
				      ((v & 0x0a) == 0x08 ? SPE_OPF_SVE_LDST : 0);
		opf[SPE_OP_BRANCH][v] = SPE_OPF_BRANCH;
	}
	ftab_ready = 1;
}

static inline uint64_t load_le(const uint8_t *p, unsigned size)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < size; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static inline uint64_t load_payload(const uint8_t *p, unsigned szcode)
{
	static const uint64_t mask[4] = {0xff, 0xffff, 0xffffffff, ~0ull};
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	uint64_t v;
	memcpy(&v, p, 8);
	return v & mask[szcode];
#else
	return load_le(p, 1u << szcode);
#endif
}

/* State of the fast path, kept in registers once fst_step is inlined. (Decoding two CPUs' buffers
 * in lockstep to overlap their serial chains was tried: 15% slower, so it is not here.) */
struct fst {
	struct spe_dec *d;
	const uint8_t *buf;
	size_t len, i, nout, max_out;
	struct spe_record *out;
	uint64_t packets, pad, records, base;
	int open;
};

static inline void fst_begin(struct fst *s, struct spe_dec *d, const uint8_t *buf, size_t len,
			     struct spe_record *out, size_t max_out, size_t nout)
{
	*s = (struct fst){.d = d, .buf = buf, .len = len, .nout = nout, .max_out = max_out, .out = out,
			  .base = d->pos, .open = d->open};
}

/* Decode one packet; 0 when the fast path must stop (too few bytes left, output full, or a
 * packet for the generic path). */
static inline __attribute__((always_inline)) int fst_step(struct fst *s)
{
	struct spe_record *r = &s->d->cur;
	const uint8_t *p;
	uint8_t h, k;

	if (s->len - s->i < LOOKAHEAD || s->nout >= s->max_out)
		return 0;
	p = s->buf + s->i;
	h = p[0];
	k = ftab[h];
	if (k == F_PAD) {
		/* a PAD packet is the run of zeros up to 16 bytes long */
		uint64_t w0, w1;
		size_t n;
		memcpy(&w0, p, 8);
		memcpy(&w1, p + 8, 8);
		if (w0)
			n = __builtin_ctzll(w0) >> 3;
		else
			n = 8 + (w1 ? __builtin_ctzll(w1) >> 3 : 8);
		s->packets++;
		s->pad += n;
		s->i += n;
		return 1;
	}
	if (k == F_SLOW || (r->present & fdup[k]))
		return 0; /* the caller's generic step() takes this byte */
	if (!s->open) {
		r->offset = s->base + s->i;
		s->open = 1;
	}
	s->packets++;
	/* every short-header packet but PAD/END has 1 << h[5:4] payload bytes: computed, not
	 * looked up, to keep the serial chain (byte -> length -> next byte) short */
	unsigned szc = (h >> 4) & 3;
	uint64_t v = load_payload(p + 1, szc);
	s->i += k == F_END ? 1 : 1 + (1u << szc);
	switch (k) {
	case F_END:
		r->present |= SPE_HAS_END;
		break;
	case F_TS:
		r->ts = v;
		r->present |= SPE_HAS_TS;
		break;
	case F_EV:
		r->events = v;
		r->present |= SPE_HAS_EV;
		return 1;
	case F_DS:
		r->data_source = (uint16_t)v;
		r->present |= SPE_HAS_DS;
		return 1;
	case F_CTX:
		r->context = (uint32_t)v;
		r->ctx_el = (h & 3) + 1;
		r->present |= SPE_HAS_CTX;
		return 1;
	case F_OP:
		r->op_class = h & 3;
		r->op = (uint8_t)v;
		r->op_flags = op_flags(h & 3, (uint8_t)v);
		r->present |= SPE_HAS_OP;
		return 1;
	case F_TOT:
		r->total_lat = (uint16_t)v;
		r->present |= SPE_HAS_TOT;
		return 1;
	case F_ISSUE:
		r->issue_lat = (uint16_t)v;
		r->present |= SPE_HAS_ISSUE;
		return 1;
	case F_XLAT:
		r->xlat_lat = (uint16_t)v;
		r->present |= SPE_HAS_XLAT;
		return 1;
	case F_PC:
		r->pc = fill_ip(v);
		r->pc_el = (v >> 61) & 3;
		r->pc_ns = v >> 63;
		r->present |= SPE_HAS_PC;
		return 1;
	case F_TGT:
		r->tgt = fill_ip(v);
		r->tgt_el = (v >> 61) & 3;
		r->present |= SPE_HAS_TGT;
		return 1;
	case F_VA:
		r->vaddr = fill_va(v);
		r->present |= SPE_HAS_VA;
		return 1;
	case F_PA:
		r->paddr = v & 0x00ffffffffffffffull;
		r->pa_ns = v >> 63;
		r->present |= SPE_HAS_PA;
		return 1;
	case F_PBT:
		r->pbt = fill_ip(v);
		r->pbt_el = (v >> 61) & 3;
		r->present |= SPE_HAS_PBT;
		return 1;
	default:
		return 1;
	}
	/* END or TIMESTAMP: the record is complete */
	s->out[s->nout++] = *r;
	s->records++;
	record_reset(s->d);
	s->open = 0;
	return 1;
}

static inline size_t fst_end(struct fst *s, size_t *nout_p)
{
	struct spe_dec *d = s->d;

	d->open = s->open;
	*nout_p = s->nout;
	d->st.records += s->records;
	if (s->records)
		d->synced = 1;
	if (s->i)
		d->in_bad_run = 0;
	d->st.packets += s->packets;
	d->st.pad_bytes += s->pad;
	d->st.bytes += s->i;
	d->pos += s->i;
	return s->i;
}

static size_t fast(struct spe_dec *d, const uint8_t *buf, size_t len, struct spe_record *out,
		   size_t max_out, size_t *nout_p)
{
	struct fst s;

	if (d->slow)
		return 0;
	fst_begin(&s, d, buf, len, out, max_out, *nout_p);
	while (fst_step(&s))
		;
	return fst_end(&s, nout_p);
}

/* Feed `len` bytes. Records go to out[0..max_out); returns how many. *consumed is set to the
 * bytes of buf taken (all of them unless out filled up: call again with the rest). `last` says
 * this chunk ends the AUX buffer: trailing bytes that form no packet are counted as bad. */
long spe_dec__feed(struct spe_dec *d, const uint8_t *buf, size_t len, int last,
		   struct spe_record *out, size_t max_out, size_t *consumed)
{
	size_t nout = 0, i = 0;
	int closed;

	if (!max_out) {
		*consumed = 0;
		return 0;
	}
	/* First the carried bytes, decoded with enough of the new chunk after them. */
	while (d->ncarry) {
		uint8_t tmp[CARRY_MAX + LOOKAHEAD];
		size_t take = len - i < LOOKAHEAD ? len - i : LOOKAHEAD;
		size_t n;

		memcpy(tmp, d->carry, d->ncarry);
		memcpy(tmp + d->ncarry, buf + i, take);
		if (!last && d->ncarry + take < LOOKAHEAD) {
			memcpy(d->carry + d->ncarry, buf + i, take);
			d->ncarry += take;
			d->st.bytes += take;
			*consumed = len;
			return (long)nout;
		}
		n = step(d, tmp, d->ncarry + take, last || d->ncarry + take >= LOOKAHEAD, &closed);
		d->pos += n;
		if (n >= d->ncarry) {
			i += n - d->ncarry;
			d->st.bytes += n - d->ncarry;
			d->ncarry = 0;
		} else {
			memmove(d->carry, d->carry + n, d->ncarry - n);
			d->ncarry -= n;
		}
		if (closed) {
			emit(d, out, &nout);
			if (nout == max_out) {
				*consumed = i;
				return (long)nout;
			}
		}
	}
	while (i < len) {
		size_t n;
		if (nout < max_out && len - i >= LOOKAHEAD) {
			i += fast(d, buf + i, len - i, out, max_out, &nout);
			if (nout == max_out)
				break;
		}
		n = step(d, buf + i, len - i, last, &closed);
		if (!n) {
			/* keep the tail for the next chunk */
			memcpy(d->carry, buf + i, len - i);
			d->ncarry = len - i;
			d->st.bytes += len - i;
			i = len;
			break;
		}
		d->pos += n;
		d->st.bytes += n;
		i += n;
		if (closed) {
			emit(d, out, &nout);
			if (nout == max_out)
				break;
		}
	}
	*consumed = i;
	return (long)nout;
}

/* End of all input: an open record was never closed (perf drops it too); count it. */
void spe_dec__flush(struct spe_dec *d)
{
	if (d->open) {
		d->st.unterminated++;
		record_reset(d);
	}
}

void spe_dec__stats(const struct spe_dec *d, struct spe_stats *out)
{
	*out = d->st;
}

/* Testing aid: decode with the generic one-packet-at-a-time path only. */
void spe_dec__set_slow(struct spe_dec *d, int slow)
{
	d->slow = slow;
}
