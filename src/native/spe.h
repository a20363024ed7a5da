/* Arm SPE (Statistical Profiling Extension) trace decoder: packets, records, perf-style dump.
 *
 * Layout and semantics follow the Arm ARM (D17 "Statistical Profiling Extension", packet
 * formats) and the behaviour of Linux perf 6.1's arm-spe decoder, so that hpmkit and
 * `perf report -D` agree packet for packet (tests/py/test_spe_perf_diff.py checks this).
 * Built into build/native/libhpmspe.so and called from python/hpmkit/spe/ through ctypes.
 */
#ifndef HPM_SPE_H
#define HPM_SPE_H

#include <stddef.h>
#include <stdint.h>

#define SPE_API __attribute__((visibility("default")))

/* packet kinds (spe_pkt.kind) */
enum spe_kind {
	SPE_BAD = 0,
	SPE_PAD,
	SPE_END,
	SPE_TIMESTAMP,
	SPE_ADDRESS,
	SPE_COUNTER,
	SPE_CONTEXT,
	SPE_OP_TYPE,
	SPE_EVENTS,
	SPE_DATA_SOURCE,
	SPE_KIND_MAX,
};

/* address packet index */
enum { SPE_ADDR_PC = 0, SPE_ADDR_TGT = 1, SPE_ADDR_VA = 2, SPE_ADDR_PA = 3, SPE_ADDR_PBT = 4 };
/* counter packet index */
enum { SPE_CNT_TOTAL = 0, SPE_CNT_ISSUE = 1, SPE_CNT_XLAT = 2 };
/* operation type class (header bits [1:0]) */
enum { SPE_OP_OTHER = 0, SPE_OP_LDST = 1, SPE_OP_BRANCH = 2 };
/* spe_record.op_flags */
enum { SPE_OPF_OTHER = 1 << 0, SPE_OPF_LDST = 1 << 1, SPE_OPF_BRANCH = 1 << 2,
       SPE_OPF_SVE_OTHER = 1 << 3, SPE_OPF_LD = 1 << 4, SPE_OPF_ST = 1 << 5,
       SPE_OPF_SVE_LDST = 1 << 6 };

/* returned by spe_pkt__decode (negative errno style) */
#define SPE_ERR_NEED_MORE (-11) /* -EAGAIN: buffer ends inside the packet */
#define SPE_ERR_BAD (-74)       /* -EBADMSG: the header byte is no known packet */

struct spe_pkt {
	uint8_t kind;    /* enum spe_kind */
	uint8_t index;   /* address/counter index (5 bits with extended header), context/op class,
	                    events/data-source payload size */
	uint8_t len;     /* total bytes consumed, header included */
	uint8_t ext;     /* 1 when the packet has a 16-bit extended header */
	uint32_t _pad;
	uint64_t payload;
};

/* Which packets a record had (spe_record.present). */
enum {
	SPE_HAS_PC = 1 << 0,
	SPE_HAS_TGT = 1 << 1,
	SPE_HAS_VA = 1 << 2,
	SPE_HAS_PA = 1 << 3,
	SPE_HAS_PBT = 1 << 4,
	SPE_HAS_TS = 1 << 5,
	SPE_HAS_EV = 1 << 6,
	SPE_HAS_CTX = 1 << 7,
	SPE_HAS_TOT = 1 << 8,
	SPE_HAS_ISSUE = 1 << 9,
	SPE_HAS_XLAT = 1 << 10,
	SPE_HAS_DS = 1 << 11,
	SPE_HAS_OP = 1 << 12,
	SPE_HAS_END = 1 << 13, /* terminated by END (else by TIMESTAMP, or cut) */
	SPE_HAS_CUT = 1 << 14, /* ended early by a decode error (a bad byte or an operation type
				  packet of class 3) and kept with the packets it had, as perf
				  samples it */
};

/* One sampled operation. 96 bytes, no implicit padding: numpy mirrors it (spe/native.py). */
struct spe_record {
	uint64_t pc;      /* addresses as perf's decoder computes them (top byte filled for */
	uint64_t tgt;     /* kernel PCs and for VAs with bits 55:52 set, tag byte cleared) */
	uint64_t vaddr;
	uint64_t paddr;
	uint64_t pbt;
	uint64_t ts;      /* raw timestamp packet (generic-timer ticks); 0 if absent */
	uint64_t events;  /* events packet payloads, ORed (bit n = event n) */
	uint64_t offset;  /* stream offset of the record's first packet */
	uint32_t context; /* CONTEXTIDR value */
	uint16_t total_lat, issue_lat, xlat_lat;
	uint16_t data_source;
	uint16_t present; /* SPE_HAS_* */
	uint8_t op_class; /* SPE_OP_* that decides the table, 0xff without an operation type packet:
			     with several packets, load/store wins over branch over other */
	uint8_t op;       /* operation type payload (ORed over the packets of class op_class) */
	uint8_t pc_el, pc_ns, tgt_el, pbt_el;
	uint8_t pa_ns, ctx_el; /* ctx_el: context packet index + 1 (EL1/EL2) */
	uint8_t op_flags; /* every operation type packet of the record, ORed as perf does
			     (SPE_OPF_*): its class, load or store, SVE */
	uint8_t _pad;
	int32_t cpu;
	int32_t tid;
};

/* Counts kept by a decoder; bytes are never dropped without being counted here. */
struct spe_stats {
	uint64_t bytes;            /* bytes fed */
	uint64_t packets;          /* good packets, PAD runs counted once per perf dump line */
	uint64_t pad_bytes;
	uint64_t records;          /* records emitted */
	uint64_t bad_bytes;        /* bytes skipped while resynchronising */
	uint64_t bad_runs;         /* separate runs of bad bytes */
	uint64_t dropped_records;  /* partial records a decode error broke before the stream's first
				      complete record: discarded, as perf's queue set-up does */
	uint64_t unterminated;     /* records still open when all input ended (dropped, as perf) */
	uint64_t unknown_addr;     /* address packets with an index we do not store */
	uint64_t unknown_counter;  /* counter packets with an index we do not store */
	uint64_t unknown_op_class; /* operation type packets of class 3 (each one is a decode error) */
	uint64_t first_bad_offset; /* stream offset of the first bad byte, UINT64_MAX if none */
	uint64_t cut_records;      /* records a decode error ended early, emitted with SPE_HAS_CUT */
	uint64_t empty_cuts;       /* decode errors between records (after the first complete one):
				      perf makes an empty sample of each, hpmkit no record */
	uint64_t extra_events;     /* events packets after the first of a record (ORed in) */
	uint64_t extra_op;         /* operation type packets after the first of a record (merged) */
};

struct spe_dec;

SPE_API int spe_pkt__decode(const uint8_t *buf, size_t len, uint64_t pos, struct spe_pkt *pkt);
SPE_API int spe_pkt__desc(const struct spe_pkt *pkt, char *out, size_t outlen);
SPE_API long spe__dump(const uint8_t *buf, size_t len, uint64_t base, size_t limit, char *out,
		       size_t outlen, size_t *consumed);

SPE_API int spe_dec__new(struct spe_dec **out);
SPE_API void spe_dec__delete(struct spe_dec *dec);
SPE_API void spe_dec__set_origin(struct spe_dec *dec, int32_t cpu, int32_t tid, uint64_t offset);
SPE_API long spe_dec__feed(struct spe_dec *dec, const uint8_t *buf, size_t len, int last,
			   struct spe_record *out, size_t max_out, size_t *consumed);
SPE_API void spe_dec__flush(struct spe_dec *dec);
SPE_API void spe_dec__set_slow(struct spe_dec *dec, int slow);
SPE_API void spe_dec__stats(const struct spe_dec *dec, struct spe_stats *out);
SPE_API size_t spe__record_size(void);

#endif
