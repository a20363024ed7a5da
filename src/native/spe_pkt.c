/* Arm SPE packet decoder and perf-compatible packet descriptions.
 *
 * Header byte classification (Arm ARM D17.1, "Statistical Profiling Extension packets"):
 *   0x00 PAD, 0x01 END, 0x71 TIMESTAMP (8-byte payload)
 *   01xx 0010 EVENTS, 01xx 0011 DATA SOURCE  (xx = log2 of the payload size)
 *   0110 01cc CONTEXT (4 bytes), 0100 10cc OPERATION TYPE (1 byte, cc = class)
 *   0010 00ii EXTENDED header: a second byte follows; 0x00 there means ALIGNMENT,
 *             otherwise the second byte is an address/counter header and ii are index bits 4:3
 *   1011 0iii ADDRESS (8 bytes), 1001 1iii COUNTER (2 bytes)
 * The tests are made in the same order as Linux perf so that an ambiguous or damaged stream
 * decodes the same way in both tools.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "spe.h"

static uint64_t le_payload(const uint8_t *p, unsigned size)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < size; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* Payload of a packet whose size code sits in bits 5:4 of header byte buf[ext]. */
static int with_payload(const uint8_t *buf, size_t len, unsigned ext, struct spe_pkt *pkt)
{
	unsigned size = 1u << ((buf[ext] >> 4) & 3);
	if (len < 1 + ext + size)
		return SPE_ERR_NEED_MORE;
	pkt->payload = le_payload(buf + 1 + ext, size);
	pkt->ext = (uint8_t)ext;
	pkt->len = (uint8_t)(1 + ext + size);
	return pkt->len;
}

int spe_pkt__decode(const uint8_t *buf, size_t len, uint64_t pos, struct spe_pkt *pkt)
{
	uint8_t h;
	unsigned ext = 0;

	memset(pkt, 0, sizeof(*pkt));
	if (!len)
		return SPE_ERR_NEED_MORE;
	h = buf[0];
	if (h == 0x00) {
		/* runs of PAD bytes form one packet of up to 16 bytes, as perf prints them */
		unsigned n = 1;
		while (n < 16 && n < len && buf[n] == 0)
			n++;
		pkt->kind = SPE_PAD;
		pkt->len = (uint8_t)n;
		return n;
	}
	if (h == 0x01) {
		pkt->kind = SPE_END;
		pkt->len = 1;
		return 1;
	}
	if (h == 0x71) {
		pkt->kind = SPE_TIMESTAMP;
		return with_payload(buf, len, 0, pkt);
	}
	if ((h & 0xcf) == 0x42 || (h & 0xcf) == 0x43) {
		pkt->kind = (h & 1) ? SPE_DATA_SOURCE : SPE_EVENTS;
		pkt->index = (uint8_t)(1u << ((h >> 4) & 3)); /* payload size, as perf keeps it */
		return with_payload(buf, len, 0, pkt);
	}
	if ((h & 0xfc) == 0x64) {
		pkt->kind = SPE_CONTEXT;
		pkt->index = h & 3;
		return with_payload(buf, len, 0, pkt);
	}
	if ((h & 0xfc) == 0x48) {
		pkt->kind = SPE_OP_TYPE;
		pkt->index = h & 3;
		return with_payload(buf, len, 0, pkt);
	}
	if ((h & 0xfc) == 0x20) {
		if (len == 1)
			return SPE_ERR_BAD; /* perf: a lone extended byte is a bad packet */
		ext = 1;
		if (buf[1] == 0x00) {
			/* ALIGNMENT: pad up to the next 2^(n+1) boundary of the stream */
			unsigned align = 1u << ((h & 0xf) + 1);
			if (len < align)
				return SPE_ERR_NEED_MORE;
			unsigned n = align - (pos & (align - 1));
			/* perf folds the zero bytes that follow into the same PAD line */
			while (n < 16 && n < len && buf[n] == 0)
				n++;
			pkt->kind = SPE_PAD;
			pkt->ext = 1;
			pkt->len = (uint8_t)n;
			return n;
		}
		h = buf[1];
	}
	if ((h & 0xf8) == 0xb0 || (h & 0xf8) == 0x98) {
		pkt->kind = (h & 0xf8) == 0xb0 ? SPE_ADDRESS : SPE_COUNTER;
		pkt->index = (uint8_t)(ext ? ((buf[0] & 3) << 3) | (h & 7) : (h & 7));
		return with_payload(buf, len, ext, pkt);
	}
	return SPE_ERR_BAD;
}

static const char *const kind_name[SPE_KIND_MAX] = {
	"BAD", "PAD", "END", "TS", "ADDR", "LAT", "CONTEXT", "OP-TYPE", "EV", "DATA-SOURCE",
};

/* Event bit names perf 6.1 prints (Arm ARM "Events packet"). */
static const char *const event_name[64] = {
	[0] = "EXCEPTION-GEN", [1] = "RETIRED", [2] = "L1D-ACCESS", [3] = "L1D-REFILL",
	[4] = "TLB-ACCESS", [5] = "TLB-REFILL", [6] = "NOT-TAKEN", [7] = "MISPRED",
	[8] = "LLC-ACCESS", [9] = "LLC-REFILL", [10] = "REMOTE-ACCESS", [11] = "ALIGNMENT",
	[17] = "SVE-PARTIAL-PRED", [18] = "SVE-EMPTY-PRED",
};

struct out {
	char *p;
	size_t left;
	int err;
};

static void put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->err)
		return;
	va_start(ap, fmt);
	n = vsnprintf(o->p, o->left, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= o->left) {
		o->err = -1;
		return;
	}
	o->p += n;
	o->left -= n;
}

static int desc_op(const struct spe_pkt *pkt, struct out *o)
{
	uint64_t v = pkt->payload;

	switch (pkt->index) {
	case SPE_OP_OTHER:
		if ((v & 0x89) == 0x08) { /* SVE operation other than load/store */
			put(o, "SVE-OTHER EVLEN %d", 32 << ((v >> 4) & 7));
			if (v & 0x2)
				put(o, " FP");
			if (v & 0x4)
				put(o, " PRED");
		} else {
			put(o, "OTHER %s", (v & 1) ? "COND-SELECT" : "INSN-OTHER");
		}
		return 0;
	case SPE_OP_LDST:
		put(o, "%s", (v & 1) ? "ST" : "LD");
		if ((v & 0xe2) == 0x02) { /* atomic / exclusive / acquire-release */
			if (v & 0x04)
				put(o, " AT");
			if (v & 0x08)
				put(o, " EXCL");
			if (v & 0x10)
				put(o, " AR");
		}
		switch (v & 0xfe) {
		case 0x04: put(o, " SIMD-FP"); break;
		case 0x00: put(o, " GP-REG"); break;
		case 0x10: put(o, " UNSPEC-REG"); break;
		case 0x30: put(o, " NV-SYSREG"); break;
		/* MTE-TAG (0x14), MEMCPY (0x20), MEMSET (0x24) are newer than perf 6.1, which
		 * prints no subclass for them; the tables name them (spe/tables.py) */
		default: break;
		}
		if ((v & 0x0a) == 0x08) { /* SVE load/store */
			put(o, " EVLEN %d", 32 << ((v >> 4) & 7));
			if (v & 0x04)
				put(o, " PRED");
			if (v & 0x80)
				put(o, " SG");
		}
		return 0;
	case SPE_OP_BRANCH:
		put(o, "B");
		if (v & 1)
			put(o, " COND");
		if ((v & 0xfe) == 0x02)
			put(o, " IND");
		return 0;
	default:
		return -1;
	}
}

static int desc_addr(const struct spe_pkt *pkt, struct out *o)
{
	static const char *const idx_name[] = {"PC", "TGT", "VA", "PA", "PBT"};
	uint64_t v = pkt->payload, a = v & 0x00ffffffffffffffull;

	switch (pkt->index) {
	case SPE_ADDR_PC:
	case SPE_ADDR_TGT:
		/* perf 6.1 has no name for index 4 (previous branch target): it prints the raw
		 * form; the record decoder does store it (spe_record.pbt) */
		put(o, "%s 0x%llx el%d ns=%d", idx_name[pkt->index], (unsigned long long)a,
		    (int)((v >> 61) & 3), (int)(v >> 63));
		return 0;
	case SPE_ADDR_VA:
		put(o, "VA 0x%llx", (unsigned long long)v);
		return 0;
	case SPE_ADDR_PA:
		put(o, "PA 0x%llx ns=%d ch=%d pat=%x", (unsigned long long)a, (int)(v >> 63),
		    (int)((v >> 62) & 1), (int)((v >> 56) & 0xf));
		return 0;
	default:
		return -1;
	}
}

int spe_pkt__desc(const struct spe_pkt *pkt, char *buf, size_t buflen)
{
	struct out o = {buf, buflen, 0};
	const char *name = pkt->kind < SPE_KIND_MAX ? kind_name[pkt->kind] : "BAD";
	int err = 0;

	if (!buflen)
		return -1;
	buf[0] = 0;
	switch (pkt->kind) {
	case SPE_BAD:
	case SPE_PAD:
	case SPE_END:
		put(&o, "%s", name);
		break;
	case SPE_EVENTS:
		put(&o, "EV");
		for (int b = 0; b < 64; b++)
			if ((pkt->payload >> b & 1) && event_name[b])
				put(&o, " %s", event_name[b]);
		break;
	case SPE_OP_TYPE:
		err = desc_op(pkt, &o);
		break;
	case SPE_DATA_SOURCE:
	case SPE_TIMESTAMP:
		put(&o, "%s %lld", name, (long long)pkt->payload);
		break;
	case SPE_ADDRESS:
		err = desc_addr(pkt, &o);
		break;
	case SPE_CONTEXT:
		put(&o, "%s 0x%lx el%d", name, (unsigned long)pkt->payload, pkt->index + 1);
		break;
	case SPE_COUNTER:
		put(&o, "%s %d ", name, (unsigned short)pkt->payload);
		if (pkt->index == SPE_CNT_TOTAL)
			put(&o, "TOT");
		else if (pkt->index == SPE_CNT_ISSUE)
			put(&o, "ISSUE");
		else if (pkt->index == SPE_CNT_XLAT)
			put(&o, "XLAT");
		break;
	default:
		err = -1;
	}
	if (err || o.err) {
		/* unknown index or class: raw form, as perf prints it */
		o = (struct out){buf, buflen, 0};
		put(&o, "%s 0x%llx (%d)", name, (unsigned long long)pkt->payload, pkt->index);
	}
	return o.err;
}

/* `perf report -D` style listing: one line per packet or bad byte. Decodes the packets that
 * start before `limit` (the rest of buf is lookahead, so a long buffer can be listed in pieces);
 * `base` is the stream offset of buf[0] (printed offsets, alignment packets). Returns the
 * characters written (no final NUL) and sets *consumed, or -1 if `out` is too small
 * (110 bytes per listed byte always suffice). */
long spe__dump(const uint8_t *buf, size_t len, uint64_t base, size_t limit, char *out, size_t outlen,
	       size_t *consumed)
{
	struct out o = {out, outlen, 0};
	size_t pos = 0;
	char desc[256];

	if (limit > len)
		limit = len;
	while (pos < limit && !o.err) {
		struct spe_pkt pkt;
		int n = spe_pkt__decode(buf + pos, len - pos, base + pos, &pkt);
		int plen = n > 0 ? n : 1;
		int i;

		put(&o, ".  %08llx: ", (unsigned long long)(base + pos));
		for (i = 0; i < plen; i++)
			put(&o, " %02x", buf[pos + i]);
		for (; i < 16; i++)
			put(&o, "   ");
		if (n > 0) {
			if (spe_pkt__desc(&pkt, desc, sizeof(desc)) == 0)
				put(&o, " %s\n", desc);
		} else {
			put(&o, " Bad packet!\n");
		}
		pos += plen;
	}
	*consumed = pos;
	if (o.err)
		return -1;
	return (long)(o.p - out);
}

size_t spe__record_size(void)
{
	return sizeof(struct spe_record);
}
