/* perf.data data-section scanner: the hot loop of `hpmkit profile import`.
 *
 * Python (hpmkit.perfdata) parses the file header, attrs and feature sections and streams the
 * data section through this scanner one buffer at a time (file or pipe mode, and the payloads
 * of PERF_RECORD_COMPRESSED once decompressed). The scanner turns PERF_RECORD_SAMPLE into
 * columns (time, cpu, pid, tid, ip, period, attr), deduplicates call chains per process into a
 * stack table, collects group-read values as (sample, member, id, value) rows, and lists every
 * other record with its time (from its sample_id trailer, read with the layout of the event the
 * trailer's id names) and, for the types Python asks for, a copy of its bytes, so Python can
 * decode the rare ones (MMAP2, COMM, FORK...) after the buffer is gone. Records that Python
 * must handle in the stream (attrs in pipe mode, AUXTRACE and tracing data with the payloads
 * that follow them, compressed records) stop the scan. Every other record notes how many
 * samples came before it (its place in the stream); pdorder (perfdata_order.c) turns stream
 * order into perf's delivery order.
 * Nothing is interpreted beyond what the sample_type/read_format bits say, so the caller keeps
 * the policy (deltas, symbols, names).
 *
 * Errors: a negative errno, with pdscan__error() giving the byte offset and the reason.
 * Layouts follow include/uapi/linux/perf_event.h (little-endian files only).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define API __attribute__((visibility("default")))

enum {
	S_IP = 1u << 0, S_TID = 1u << 1, S_TIME = 1u << 2, S_ADDR = 1u << 3, S_READ = 1u << 4,
	S_CALLCHAIN = 1u << 5, S_ID = 1u << 6, S_CPU = 1u << 7, S_PERIOD = 1u << 8,
	S_STREAM_ID = 1u << 9, S_RAW = 1u << 10, S_BRANCH_STACK = 1u << 11,
	S_REGS_USER = 1u << 12, S_STACK_USER = 1u << 13, S_WEIGHT = 1u << 14,
	S_DATA_SRC = 1u << 15, S_IDENTIFIER = 1u << 16, S_TRANSACTION = 1u << 17,
	S_REGS_INTR = 1u << 18, S_PHYS_ADDR = 1u << 19, S_AUX = 1u << 20, S_CGROUP = 1u << 21,
	S_DATA_PAGE_SIZE = 1u << 22, S_CODE_PAGE_SIZE = 1u << 23, S_WEIGHT_STRUCT = 1u << 24,
};
enum { F_ENABLED = 1, F_RUNNING = 2, F_ID = 4, F_GROUP = 8, F_LOST = 16 };
enum { REC_SAMPLE = 9, REC_AUXTRACE = 71, REC_COMPRESSED = 81 };

/* callchain context markers: values >= (u64)-4095 */
#define CTX_HV ((uint64_t)-32)
#define CTX_KERNEL ((uint64_t)-128)
#define CTX_USER ((uint64_t)-512)
#define CTX_GUEST_KERNEL ((uint64_t)-2176)
#define CTX_GUEST_USER ((uint64_t)-2560)

/* One perf_event_attr, reduced to what decides the sample layout. Filled by Python. */
struct pdscan_attr {
	uint64_t sample_type;
	uint64_t read_format;
	uint32_t regs_user_n;   /* popcount(sample_regs_user) */
	uint32_t regs_intr_n;   /* popcount(sample_regs_intr) */
	uint32_t branch_hw_index; /* branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX */
	uint32_t branch_counters; /* branch_sample_type & PERF_SAMPLE_BRANCH_COUNTERS */
	uint32_t sample_id_all; /* non-SAMPLE kernel records end in a sample_id trailer */
	uint32_t pad;
};

struct vec { void *p; size_t n, cap, elem; };

static int vec__grow(struct vec *v, size_t want)
{
	if (want <= v->cap)
		return 0;
	size_t cap = v->cap ? v->cap : 4096;
	while (cap < want)
		cap *= 2;
	void *p = realloc(v->p, cap * v->elem);
	if (!p)
		return -ENOMEM;
	v->p = p;
	v->cap = cap;
	return 0;
}

#define VPUSH(v, T, x) (vec__grow(&(v), (v).n + 1) ? -ENOMEM : (((T *)(v).p)[(v).n++] = (x), 0))

enum col {
	C_OFF, C_ATTR, C_IP, C_PID, C_TID, C_TIME, C_CPU, C_PERIOD, C_ADDR, C_MODE, C_STACK,
	C_DSEQ, C_NBRANCH,
	C_READ_SAMPLE, C_READ_MEMBER, C_READ_ID, C_READ_VALUE,
	C_STACK_PID, C_STACK_START, C_STACK_LEN, C_CHAIN,
	C_OTHER_OFF, C_OTHER_TYPE, C_OTHER_BEFORE, C_OTHER_TIME, C_OTHER_ATTR, C_OTHER_START,
	C_OTHER_LEN, C_OTHER_DSEQ, C_BLOB,
	C_NCOLS
};
static const size_t col_elem[C_NCOLS] = {
	8, 4, 8, 4, 4, 8, 4, 8, 8, 1, 4,
	8, 4,
	8, 4, 8, 8,
	4, 8, 4, 8,
	8, 4, 8, 8, 4, 8,
	4, 8, 1,
};

struct pdscan {
	struct pdscan_attr *attrs;
	uint32_t nattrs;
	uint64_t *ids;          /* open-addressing map sample id -> attr index */
	int32_t *id_attr;
	uint32_t id_cap, id_n;
	int id_pos;             /* u64 index of the id in a sample, -1: not present */
	int is_pos;             /* u64 index of the id from the end of a trailer, -1: none */
	uint64_t copy[4];       /* bitmap of record types whose bytes are kept (C_BLOB) */
	uint64_t stop[4];       /* bitmap of record types that return to the caller */
	struct vec col[C_NCOLS];
	uint32_t *stack_tab;    /* hash of stack index + 1, 0 = empty */
	uint32_t stack_cap;
	uint64_t type_count[256]; /* records seen per type (>=255 folded into 255) */
	uint64_t unknown_id;    /* samples whose id matches no attr */
	uint64_t err_off;
	const char *err;
	int extra;              /* also fill offset, ip, addr, cpumode (off by default: speed) */
};

/* Keep the per-sample record offset, ip, addr, cpumode and branch-count columns too. */
API void pdscan__keep_extra(struct pdscan *h, int on) { h->extra = on; }

/* Which record types (< 256) are copied for the caller, and which stop the scan. */
API void pdscan__set_types(struct pdscan *h, const uint64_t copy[4], const uint64_t stop[4])
{
	memcpy(h->copy, copy, sizeof(h->copy));
	memcpy(h->stop, stop, sizeof(h->stop));
}

static int bit(const uint64_t *map, uint32_t type)
{
	return type < 256 && (map[type >> 6] >> (type & 63) & 1);
}

/* Reserve room for n samples per column: growth by realloc would copy every column. */
API int pdscan__reserve(struct pdscan *h, uint64_t n)
{
	for (int c = C_OFF; c <= C_STACK; c++)
		if (vec__grow(&h->col[c], n))
			return -ENOMEM;
	return 0;
}

API void pdscan__delete(struct pdscan *h);
API int pdscan__add_attrs(struct pdscan *h, const struct pdscan_attr *attrs, uint32_t n);

API struct pdscan *pdscan__new(const struct pdscan_attr *attrs, uint32_t nattrs)
{
	struct pdscan *h = calloc(1, sizeof(*h));
	if (!h)
		return NULL;
	for (int i = 0; i < C_NCOLS; i++)
		h->col[i].elem = col_elem[i];
	h->id_pos = h->is_pos = -1;
	h->stop[1] = 1ull << (64 - 64) | 1ull << (66 - 64) | 1ull << (71 - 64) | 1ull << (81 - 64);
	if (pdscan__add_attrs(h, attrs, nattrs)) {
		pdscan__delete(h);
		return NULL;
	}
	return h;
}

/* Append attrs (pipe mode announces them as records). Where the id sits decides which attr a
 * record belongs to; perf requires the same position for every attr of a file, so the first
 * attr's layout is used, as perf does. */
API int pdscan__add_attrs(struct pdscan *h, const struct pdscan_attr *attrs, uint32_t n)
{
	struct pdscan_attr *a = realloc(h->attrs, (h->nattrs + n + 1) * sizeof(*a));
	if (!a)
		return -ENOMEM;
	memcpy(a + h->nattrs, attrs, n * sizeof(*a));
	h->attrs = a;
	h->nattrs += n;
	uint64_t st = h->nattrs ? a[0].sample_type : 0;
	if (st & S_IDENTIFIER)
		h->id_pos = 0;
	else if (st & S_ID)
		h->id_pos = !!(st & S_IP) + !!(st & S_TID) + !!(st & S_TIME) + !!(st & S_ADDR);
	else
		h->id_pos = -1;
	if (st & S_IDENTIFIER)
		h->is_pos = 1;
	else if (st & S_ID)
		h->is_pos = 1 + !!(st & S_CPU) + !!(st & S_STREAM_ID);
	else
		h->is_pos = -1;
	return 0;
}

API void pdscan__delete(struct pdscan *h)
{
	if (!h)
		return;
	for (int i = 0; i < C_NCOLS; i++)
		free(h->col[i].p);
	free(h->attrs);
	free(h->ids);
	free(h->id_attr);
	free(h->stack_tab);
	free(h);
}

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

/* Register the ids of one attr (from the file's attr section or EVENT_DESC). */
API int pdscan__add_ids(struct pdscan *h, const uint64_t *ids, uint32_t n, int32_t attr)
{
	if (attr < 0 || (uint32_t)attr >= h->nattrs)
		return -EINVAL;
	for (uint32_t i = 0; i < n; i++) {
		if ((h->id_n + 1) * 2 > h->id_cap) {
			/* rebuild at twice the size; ids are few (one per event and CPU/thread) */
			uint32_t ncap = h->id_cap ? h->id_cap * 2 : 64;
			uint64_t *nids = calloc(ncap, 8);
			int32_t *nattr = malloc(ncap * 4);
			if (!nids || !nattr) {
				free(nids);
				free(nattr);
				return -ENOMEM;
			}
			for (uint32_t j = 0; j < ncap; j++)
				nattr[j] = -1;
			for (uint32_t j = 0; j < h->id_cap; j++) {
				if (h->id_attr[j] < 0)
					continue;
				uint32_t k = mix(h->ids[j]) & (ncap - 1);
				while (nattr[k] >= 0)
					k = (k + 1) & (ncap - 1);
				nids[k] = h->ids[j];
				nattr[k] = h->id_attr[j];
			}
			free(h->ids);
			free(h->id_attr);
			h->ids = nids;
			h->id_attr = nattr;
			h->id_cap = ncap;
		}
		uint32_t k = mix(ids[i]) & (h->id_cap - 1);
		while (h->id_attr[k] >= 0 && h->ids[k] != ids[i])
			k = (k + 1) & (h->id_cap - 1);
		if (h->id_attr[k] < 0)
			h->id_n++;
		h->ids[k] = ids[i];
		h->id_attr[k] = attr;
	}
	return 0;
}

static int32_t attr_of_id(const struct pdscan *h, uint64_t id)
{
	if (!h->id_cap)
		return -1;
	uint32_t k = mix(id) & (h->id_cap - 1);
	while (h->id_attr[k] >= 0) {
		if (h->ids[k] == id)
			return h->id_attr[k];
		k = (k + 1) & (h->id_cap - 1);
	}
	return -1;
}

static int fail(struct pdscan *h, uint64_t off, const char *why)
{
	h->err_off = off;
	h->err = why;
	return -EPROTO;
}

/* Hash of (pid, chain): one multiply per frame (every sample is hashed; most share a few
 * chains), one full mix at the end. */
static uint64_t chain_hash(int32_t pid, const uint64_t *ips, uint32_t n)
{
	uint64_t x = (uint64_t)(uint32_t)pid ^ ((uint64_t)n << 32);
	for (uint32_t i = 0; i < n; i++) {
		x ^= ips[i];
		x = (x << 29 | x >> 35) * 0x9E3779B97F4A7C15ULL;
	}
	return mix(x);
}

static int stack_rehash(struct pdscan *h)
{
	uint32_t ncap = h->stack_cap ? h->stack_cap * 2 : 1u << 12;
	uint32_t *tab = calloc(ncap, 4);
	if (!tab)
		return -ENOMEM;
	const uint64_t *chain = h->col[C_CHAIN].p;
	const uint64_t *start = h->col[C_STACK_START].p;
	const uint32_t *len = h->col[C_STACK_LEN].p;
	const int32_t *spid = h->col[C_STACK_PID].p;
	for (size_t s = 0; s < h->col[C_STACK_PID].n; s++) {
		uint32_t k = chain_hash(spid[s], chain + start[s], len[s]) & (ncap - 1);
		while (tab[k])
			k = (k + 1) & (ncap - 1);
		tab[k] = (uint32_t)s + 1;
	}
	free(h->stack_tab);
	h->stack_tab = tab;
	h->stack_cap = ncap;
	return 0;
}

/* The stack id of (pid, ips[0..n)): an existing one or a new entry. */
static int64_t stack_intern(struct pdscan *h, int32_t pid, const uint64_t *ips, uint32_t n)
{
	if ((uint64_t)(h->col[C_STACK_PID].n + 1) * 2 > h->stack_cap && stack_rehash(h))
		return -ENOMEM;
	uint64_t hv = chain_hash(pid, ips, n);
	uint32_t k = hv & (h->stack_cap - 1);
	const uint64_t *chain = h->col[C_CHAIN].p;
	const uint64_t *start = h->col[C_STACK_START].p;
	const uint32_t *len = h->col[C_STACK_LEN].p;
	const int32_t *spid = h->col[C_STACK_PID].p;
	while (h->stack_tab[k]) {
		uint32_t s = h->stack_tab[k] - 1;
		if (spid[s] == pid && len[s] == n && !memcmp(chain + start[s], ips, n * 8ull))
			return s;
		k = (k + 1) & (h->stack_cap - 1);
	}
	struct vec *c = &h->col[C_CHAIN];
	if (vec__grow(c, c->n + n))
		return -ENOMEM;
	uint64_t at = c->n;
	memcpy((uint64_t *)c->p + c->n, ips, n * 8ull);
	c->n += n;
	size_t s = h->col[C_STACK_PID].n;
	if (VPUSH(h->col[C_STACK_PID], int32_t, pid) || VPUSH(h->col[C_STACK_START], uint64_t, at) ||
	    VPUSH(h->col[C_STACK_LEN], uint32_t, n))
		return -ENOMEM;
	h->stack_tab[k] = (uint32_t)s + 1;
	return (int64_t)s;
}

static uint64_t mode_marker(uint16_t misc)
{
	switch (misc & 7) {
	case 1: return CTX_KERNEL;
	case 2: return CTX_USER;
	case 3: return CTX_HV;
	case 4: return CTX_GUEST_KERNEL;
	case 5: return CTX_GUEST_USER;
	default: return 0;
	}
}

#define NEED(nbytes) do { if ((uint64_t)(end - p) < (uint64_t)(nbytes)) \
	return fail(h, off, "sample shorter than its sample_type says"); } while (0)
#define U64(dst) do { NEED(8); memcpy(&(dst), p, 8); p += 8; } while (0)
#define SKIP(nbytes) do { NEED(nbytes); p += (nbytes); } while (0)

static int read_values(struct pdscan *h, uint64_t off, const uint8_t **pp, const uint8_t *end,
		       uint64_t rf, uint64_t sample_idx, uint64_t sample_id)
{
	const uint8_t *p = *pp;
	uint64_t nr = 1, v, id = 0, skip;
	if (rf & F_GROUP)
		U64(nr);
	if (nr > 4096)
		return fail(h, off, "group read with more than 4096 members");
	if (!(rf & F_GROUP)) {
		U64(v);
		skip = (!!(rf & F_ENABLED) + !!(rf & F_RUNNING)) * 8;
		SKIP(skip);
		if (rf & F_ID)
			U64(id);
		else
			id = sample_id;
		if (rf & F_LOST)
			SKIP(8);
		if (VPUSH(h->col[C_READ_SAMPLE], uint64_t, sample_idx) ||
		    VPUSH(h->col[C_READ_MEMBER], int32_t, 0) || VPUSH(h->col[C_READ_ID], uint64_t, id) ||
		    VPUSH(h->col[C_READ_VALUE], uint64_t, v))
			return -ENOMEM;
		*pp = p;
		return 0;
	}
	skip = (!!(rf & F_ENABLED) + !!(rf & F_RUNNING)) * 8;
	SKIP(skip);
	for (uint64_t i = 0; i < nr; i++) {
		U64(v);
		id = 0;
		if (rf & F_ID)
			U64(id);
		if (rf & F_LOST)
			SKIP(8);
		if (VPUSH(h->col[C_READ_SAMPLE], uint64_t, sample_idx) ||
		    VPUSH(h->col[C_READ_MEMBER], int32_t, (int32_t)i) ||
		    VPUSH(h->col[C_READ_ID], uint64_t, id) || VPUSH(h->col[C_READ_VALUE], uint64_t, v))
			return -ENOMEM;
	}
	*pp = p;
	return 0;
}

static int sample(struct pdscan *h, uint64_t off, const uint8_t *p, const uint8_t *end, uint16_t misc)
{
	int32_t ai = 0;
	uint64_t sid = 0;
	if (h->id_pos >= 0) {
		NEED((h->id_pos + 1) * 8);
		memcpy(&sid, p + h->id_pos * 8, 8);
		/* id 0: a record perf synthesised; it belongs to the first event, as in perf */
		if ((h->nattrs > 1 || h->id_cap) && sid) {
			ai = attr_of_id(h, sid);
			if (ai < 0) {
				if (h->nattrs > 1) {
					h->unknown_id++;
					return 0;
				}
				ai = 0;
			}
		}
	} else if (h->nattrs > 1) {
		return fail(h, off, "several events but samples carry no id (PERF_SAMPLE_ID/IDENTIFIER)");
	} else if (!h->nattrs) {
		return fail(h, off, "a sample before any event attribute");
	}
	const struct pdscan_attr *a = &h->attrs[ai];
	uint64_t st = a->sample_type, ip = 0, tm = UINT64_MAX, addr = 0, period = 0, x, nbr = 0;
	uint32_t pidtid[2] = {UINT32_MAX, UINT32_MAX}, cpu[2] = {UINT32_MAX, 0};
	uint64_t idx = h->col[C_ATTR].n;

	if (st & S_IDENTIFIER)
		SKIP(8);
	if (st & S_IP)
		U64(ip);
	if (st & S_TID) {
		NEED(8);
		memcpy(pidtid, p, 8);
		p += 8;
	}
	if (st & S_TIME)
		U64(tm);
	if (st & S_ADDR)
		U64(addr);
	if (st & S_ID)
		SKIP(8);
	if (st & S_STREAM_ID)
		SKIP(8);
	if (st & S_CPU) {
		NEED(8);
		memcpy(cpu, p, 8);
		p += 8;
	}
	if (st & S_PERIOD)
		U64(period);
	if (st & S_READ) {
		int rc = read_values(h, off, &p, end, a->read_format, idx, sid);
		if (rc)
			return rc;
	}
	int64_t stack;
	if (st & S_CALLCHAIN) {
		uint64_t nr;
		U64(nr);
		if (nr > (uint64_t)(end - p) / 8)
			return fail(h, off, "callchain longer than its record");
		if (nr == 0) {
			uint64_t one[2] = {mode_marker(misc), ip};
			stack = one[0] ? stack_intern(h, (int32_t)pidtid[0], one, 2)
				       : stack_intern(h, (int32_t)pidtid[0], one + 1, 1);
		} else {
			/* ips may be unaligned in a corrupt file; memcpy via a bounded copy */
			uint64_t buf[512];
			const uint64_t *ips;
			uint64_t *heap = NULL;
			if (((uintptr_t)p & 7) == 0) {
				ips = (const uint64_t *)(const void *)p;
			} else if (nr <= 512) {
				memcpy(buf, p, nr * 8);
				ips = buf;
			} else {
				heap = malloc(nr * 8);
				if (!heap)
					return -ENOMEM;
				memcpy(heap, p, nr * 8);
				ips = heap;
			}
			stack = stack_intern(h, (int32_t)pidtid[0], ips, (uint32_t)nr);
			free(heap);
		}
		p += nr * 8;
	} else {
		uint64_t one[2] = {mode_marker(misc), ip};
		stack = one[0] ? stack_intern(h, (int32_t)pidtid[0], one, 2)
			       : stack_intern(h, (int32_t)pidtid[0], one + 1, 1);
	}
	if (stack < 0)
		return (int)stack;
	/* The rest is decoded only to check the record holds what its sample_type says. */
	if (st & S_RAW) {
		uint32_t sz;
		NEED(4);
		memcpy(&sz, p, 4);
		SKIP(4 + (uint64_t)sz);
	}
	if (st & S_BRANCH_STACK) {
		U64(x);
		nbr = x;
		if (a->branch_hw_index)
			SKIP(8);
		if (x > (uint64_t)(end - p) / 24)
			return fail(h, off, "branch stack longer than its record");
		SKIP(x * 24);
		if (a->branch_counters)
			SKIP(x * 8);
	}
	if (st & S_REGS_USER) {
		U64(x);
		if (x)
			SKIP(a->regs_user_n * 8ull);
	}
	if (st & S_STACK_USER) {
		U64(x);
		if (x > (uint64_t)(end - p))
			return fail(h, off, "user stack dump longer than its record");
		SKIP(x);
		if (x)
			SKIP(8);
	}
	if (st & (S_WEIGHT | S_WEIGHT_STRUCT))
		SKIP(8);
	if (st & S_DATA_SRC)
		SKIP(8);
	if (st & S_TRANSACTION)
		SKIP(8);
	if (st & S_REGS_INTR) {
		U64(x);
		if (x)
			SKIP(a->regs_intr_n * 8ull);
	}
	if (st & S_PHYS_ADDR)
		SKIP(8);
	if (st & S_CGROUP)
		SKIP(8);
	if (st & S_DATA_PAGE_SIZE)
		SKIP(8);
	if (st & S_CODE_PAGE_SIZE)
		SKIP(8);
	if (st & S_AUX) {
		U64(x);
		if (x > (uint64_t)(end - p))
			return fail(h, off, "aux sample longer than its record");
		SKIP(x);
	}
	if (h->extra && (VPUSH(h->col[C_OFF], uint64_t, off) || VPUSH(h->col[C_IP], uint64_t, ip) ||
			 VPUSH(h->col[C_ADDR], uint64_t, addr) ||
			 VPUSH(h->col[C_MODE], uint8_t, (uint8_t)(misc & 7)) ||
			 VPUSH(h->col[C_NBRANCH], uint32_t, (uint32_t)nbr)))
		return -ENOMEM;
	if (VPUSH(h->col[C_ATTR], int32_t, ai) || VPUSH(h->col[C_PID], int32_t, (int32_t)pidtid[0]) ||
	    VPUSH(h->col[C_TID], int32_t, (int32_t)pidtid[1]) || VPUSH(h->col[C_TIME], uint64_t, tm) ||
	    VPUSH(h->col[C_CPU], int32_t, (int32_t)cpu[0]) ||
	    VPUSH(h->col[C_PERIOD], uint64_t, period) || VPUSH(h->col[C_STACK], int32_t, (int32_t)stack))
		return -ENOMEM;
	return 0;
}

/* The time in the sample_id trailer of a non-SAMPLE kernel record, read with the layout of
 * the event its id names (UINT64_MAX: none); *attr receives that event (-1: unknown). */
static uint64_t trailer_time(const struct pdscan *h, const uint8_t *body, uint64_t n, int32_t *attr)
{
	*attr = -1;
	if (!h->nattrs || !h->attrs[0].sample_id_all)
		return UINT64_MAX;
	int32_t ai = 0;
	if (h->nattrs > 1 && h->is_pos > 0) {
		uint64_t id;
		if ((uint64_t)h->is_pos * 8 > n)
			return UINT64_MAX;
		memcpy(&id, body + n - h->is_pos * 8, 8);
		if (id) {
			ai = attr_of_id(h, id);
			if (ai < 0)
				return UINT64_MAX;
		}
	}
	*attr = ai;
	uint64_t st = h->attrs[ai].sample_type;
	if (!(st & S_TIME))
		return UINT64_MAX;
	/* trailer: TID, TIME, ID, STREAM_ID, CPU, IDENTIFIER */
	uint64_t fields = !!(st & S_TID) + 1 + !!(st & S_ID) + !!(st & S_STREAM_ID) +
			  !!(st & S_CPU) + !!(st & S_IDENTIFIER);
	if (fields * 8 > n)
		return UINT64_MAX;
	uint64_t t;
	memcpy(&t, body + n - fields * 8 + (st & S_TID ? 8 : 0), 8);
	return t;
}

static int other(struct pdscan *h, uint64_t off, uint32_t type, const uint8_t *rec, uint64_t size)
{
	int32_t ai = -1;
	uint64_t tm = type < 64 ? trailer_time(h, rec + 8, size - 8, &ai) : UINT64_MAX;
	uint64_t start = UINT64_MAX;
	uint32_t len = 0;
	if (bit(h->copy, type)) {
		struct vec *b = &h->col[C_BLOB];
		if (vec__grow(b, b->n + size))
			return -ENOMEM;
		start = b->n;
		memcpy((uint8_t *)b->p + b->n, rec, size);
		b->n += size;
		len = (uint32_t)size;
	}
	if (VPUSH(h->col[C_OTHER_OFF], uint64_t, off) || VPUSH(h->col[C_OTHER_TYPE], uint32_t, type) ||
	    VPUSH(h->col[C_OTHER_BEFORE], uint64_t, h->col[C_ATTR].n) || VPUSH(h->col[C_OTHER_TIME], uint64_t, tm) ||
	    VPUSH(h->col[C_OTHER_ATTR], int32_t, ai) || VPUSH(h->col[C_OTHER_START], uint64_t, start) ||
	    VPUSH(h->col[C_OTHER_LEN], uint32_t, len))
		return -ENOMEM;
	return 0;
}

/* Walk the records in buf[pos, end) until end, a record that is not complete in the buffer,
 * a record of a stop type, or max_records. A record's file offset is off_base + its position,
 * or off_fixed for every record when off_fixed != UINT64_MAX (records decompressed from one
 * PERF_RECORD_COMPRESSED carry its offset). *next receives where to resume.
 * Returns PD_MORE (the record at *next, if *next < end, is incomplete: give more bytes),
 * PD_STOP (a stop-type record starts at *next, complete up to its header.size), PD_LIMIT,
 * -EPROTO with pdscan__error(), or -ENOMEM. */
enum { PD_MORE = 0, PD_STOP = 1, PD_LIMIT = 2 };

API int pdscan__run(struct pdscan *h, const uint8_t *buf, uint64_t pos, uint64_t end,
		    uint64_t off_base, uint64_t off_fixed, uint64_t max_records, uint64_t *next)
{
	uint64_t n = 0;
	int rc = PD_MORE;
	while (pos < end) {
		if (n >= max_records) {
			rc = PD_LIMIT;
			break;
		}
		uint64_t off = off_fixed != UINT64_MAX ? off_fixed : off_base + pos;
		if (end - pos < 8)
			break;
		uint32_t type;
		uint16_t misc, size;
		memcpy(&type, buf + pos, 4);
		memcpy(&misc, buf + pos + 4, 2);
		memcpy(&size, buf + pos + 6, 2);
		if (size < 8) {
			*next = pos;
			return fail(h, off, "record size below 8: the data section is damaged");
		}
		if (size > end - pos)
			break;
		if (bit(h->stop, type)) {
			rc = PD_STOP;
			break;
		}
		h->type_count[type < 255 ? type : 255]++;
		if (type == REC_SAMPLE) {
			int r = sample(h, off, buf + pos + 8, buf + pos + size, misc);
			if (r) {
				*next = pos;
				return r;
			}
		} else {
			int r = other(h, off, type, buf + pos, size);
			if (r) {
				*next = pos;
				return r;
			}
		}
		pos += size;
		n++;
	}
	*next = pos;
	return rc;
}

/* A record the caller handled itself (a stop type): counted and given its place in the stream
 * order; its bytes are copied when its type is in the copy set. */
API int pdscan__note(struct pdscan *h, uint64_t off, const uint8_t *rec, uint64_t size)
{
	uint32_t type;
	memcpy(&type, rec, 4);
	h->type_count[type < 255 ? type : 255]++;
	return other(h, off, type, rec, size);
}

/* Counts kept for the caller: records per type. */
API void pdscan__count(struct pdscan *h, uint32_t type, uint64_t n)
{
	h->type_count[type < 255 ? type : 255] += n;
}

/* Column `c`: its base pointer (valid until the next pdscan__run/delete) and length. */
API int pdscan__column(const struct pdscan *h, int c, const void **p, uint64_t *n)
{
	if (c < 0 || c >= C_NCOLS)
		return -EINVAL;
	*p = h->col[c].p;
	*n = h->col[c].n;
	return 0;
}

API const uint64_t *pdscan__type_counts(const struct pdscan *h) { return h->type_count; }
API uint64_t pdscan__unknown_ids(const struct pdscan *h) { return h->unknown_id; }

API const char *pdscan__error(const struct pdscan *h, uint64_t *off)
{
	*off = h->err_off;
	return h->err ? h->err : "";
}
