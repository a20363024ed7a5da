/* Parquet encoding for the SPE table writer: see spe_parquet.h. */
#include <string.h>

#include "spe_parquet.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "PLAIN values are written as they are in memory: little-endian hosts only"
#endif

/* ---- Thrift compact protocol ---------------------------------------------------------------- */

enum { TC_TRUE = 1, TC_FALSE = 2, TC_BYTE = 3, TC_I32 = 5, TC_I64 = 6, TC_BIN = 8, TC_LIST = 9,
       TC_STRUCT = 12 };

struct tc {
	struct buf *b;
	int last[8]; /* last field id per open struct */
	int depth;
	int err;
};

static void tc_byte(struct tc *w, uint8_t v)
{
	if (buf_put(w->b, &v, 1))
		w->err = -ENOMEM;
}

static void tc_varint(struct tc *w, uint64_t v)
{
	while (v >= 0x80) {
		tc_byte(w, (uint8_t)(v | 0x80));
		v >>= 7;
	}
	tc_byte(w, (uint8_t)v);
}

static void tc_field(struct tc *w, int id, int type)
{
	int delta = id - w->last[w->depth];
	if (delta > 0 && delta <= 15) {
		tc_byte(w, (uint8_t)(delta << 4 | type));
	} else {
		tc_byte(w, (uint8_t)type);
		tc_varint(w, (uint64_t)((id << 1) ^ (id >> 15)));
	}
	w->last[w->depth] = id;
}

static void tc_i64(struct tc *w, int id, int64_t v)
{
	tc_field(w, id, TC_I64);
	tc_varint(w, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

static void tc_i32(struct tc *w, int id, int32_t v)
{
	tc_field(w, id, TC_I32);
	tc_varint(w, ((uint64_t)(uint32_t)v << 1 & 0xffffffffull) ^ (uint64_t)(uint32_t)(v >> 31));
}

static void tc_bin(struct tc *w, int id, const char *s)
{
	size_t n = strlen(s);
	tc_field(w, id, TC_BIN);
	tc_varint(w, n);
	if (buf_put(w->b, s, n))
		w->err = -ENOMEM;
}

static void tc_list(struct tc *w, int id, int elem, size_t n)
{
	tc_field(w, id, TC_LIST);
	if (n < 15) {
		tc_byte(w, (uint8_t)(n << 4 | elem));
	} else {
		tc_byte(w, (uint8_t)(0xf0 | elem));
		tc_varint(w, n);
	}
}

/* a struct as a field (id > 0) or as a list element (id 0) */
static void tc_begin(struct tc *w, int id)
{
	if (id)
		tc_field(w, id, TC_STRUCT);
	w->last[++w->depth] = 0;
}

static void tc_end(struct tc *w)
{
	tc_byte(w, 0);
	w->depth--;
}

/* Parquet enums */
enum { PQ_BOOLEAN = 0, PQ_INT32 = 1, PQ_INT64 = 2, PQ_BYTE_ARRAY = 6 };
enum { ENC_PLAIN = 0, ENC_RLE = 3, ENC_RLE_DICTIONARY = 8 };
enum { PAGE_DATA = 0, PAGE_DICTIONARY = 2 };
enum { OPTIONAL = 1 };
enum { CONV_UTF8 = 0, CONV_UINT_64 = 14, CONV_INT_8 = 15 };

static int phys_type(int type)
{
	switch (type) {
	case T_BOOL: return PQ_BOOLEAN;
	case T_I32: case T_I8: return PQ_INT32;
	case T_STR: return PQ_BYTE_ARRAY;
	default: return PQ_INT64;
	}
}

/* definition levels of n present values: max level 1 -> one RLE run of 1s, length-prefixed */
static int def_levels(struct buf *b, size_t n)
{
	uint8_t tmp[16];
	size_t k = 0;
	uint64_t h = (uint64_t)n << 1;
	while (h >= 0x80) {
		tmp[4 + k++] = (uint8_t)(h | 0x80);
		h >>= 7;
	}
	tmp[4 + k++] = (uint8_t)h;
	tmp[4 + k++] = 1;
	tmp[0] = (uint8_t)k;
	tmp[1] = tmp[2] = tmp[3] = 0;
	return buf_put(b, tmp, 4 + k);
}

static int put_varint(struct buf *b, uint64_t v)
{
	uint8_t tmp[10];
	int k = 0;
	while (v >= 0x80) {
		tmp[k++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	tmp[k++] = (uint8_t)v;
	return buf_put(b, tmp, (size_t)k);
}

/* bit-pack 8 values of `bw` bits, LSB first */
static void pack8(uint8_t *out, const uint32_t *v, int bw)
{
	uint64_t acc = 0;
	int bits = 0;
	size_t o = 0;
	for (int i = 0; i < 8; i++) {
		acc |= (uint64_t)v[i] << bits;
		bits += bw;
		while (bits >= 8) {
			out[o++] = (uint8_t)acc;
			acc >>= 8;
			bits -= 8;
		}
	}
}

/* Dictionary indices as the RLE / bit-packed hybrid: runs of 8+ equal values at a group boundary
 * become RLE runs, the rest bit-packed groups of 8 (the last one padded; num_values says where
 * the page ends). */
static int rle_indices(struct buf *b, const uint32_t *v, size_t n, int bw)
{
	size_t i = 0;
	size_t vbytes = (size_t)(bw + 7) / 8;
	while (i < n) {
		size_t run = 1;
		while (i + run < n && v[i + run] == v[i])
			run++;
		if (run >= 8) {
			uint8_t val[4] = {(uint8_t)v[i], (uint8_t)(v[i] >> 8), (uint8_t)(v[i] >> 16),
					  (uint8_t)(v[i] >> 24)};
			if (put_varint(b, (uint64_t)run << 1) || buf_put(b, val, vbytes))
				return -ENOMEM;
			i += run;
			continue;
		}
		/* literal groups until a run of 8 starts at a group boundary */
		size_t start = i, groups = 0;
		do {
			groups++;
			i += 8;
			if (i >= n)
				break;
			run = 1;
			while (run < 8 && i + run < n && v[i + run] == v[i])
				run++;
		} while (run < 8);
		if (put_varint(b, (uint64_t)groups << 1 | 1) || buf_reserve(b, groups * (size_t)bw))
			return -ENOMEM;
		for (size_t g = 0; g < groups; g++) {
			uint32_t tmp[8] = {0};
			size_t at = start + 8 * g;
			for (size_t k = 0; k < 8 && at + k < n; k++)
				tmp[k] = v[at + k];
			pack8(b->p + b->len, tmp, bw);
			b->len += (size_t)bw;
		}
		if (i > n)
			i = n;
	}
	return 0;
}

static void page_header(struct tc *w, int type, size_t size, size_t nvalues, int encoding)
{
	tc_begin(w, 0);
	tc_i32(w, 1, type);
	tc_i32(w, 2, (int32_t)size);
	tc_i32(w, 3, (int32_t)size);
	if (type == PAGE_DATA) {
		tc_begin(w, 5);
		tc_i32(w, 1, (int32_t)nvalues);
		tc_i32(w, 2, encoding);
		tc_i32(w, 3, ENC_RLE);
		tc_i32(w, 4, ENC_RLE);
		tc_end(w);
	} else {
		tc_begin(w, 7);
		tc_i32(w, 1, (int32_t)nvalues);
		tc_i32(w, 2, ENC_PLAIN);
		tc_end(w);
	}
	tc_end(w);
}

/* one column chunk: [dictionary page] data page */
/* one column chunk: [dictionary page] data page */
int pq_chunk(struct buf *out, int type, const void *vals, size_t n, const struct buf *dict, size_t ndict,
	     size_t *dict_bytes, const void **direct, size_t *direct_len)
{
	struct buf head = {0}, body = {0};
	struct tc w = {.b = &head};
	size_t start = out->len;
	int rc = 0, enc = ENC_PLAIN;

	*direct = NULL;
	*direct_len = 0;
	if (type == T_STR) {
		page_header(&w, PAGE_DICTIONARY, dict->len, ndict, 0);
		if (w.err || buf_put(out, head.p, head.len) || buf_put(out, dict->p, dict->len)) {
			rc = -ENOMEM;
			goto done;
		}
		head.len = 0;
	}
	*dict_bytes = out->len - start;
	if (def_levels(&body, n)) {
		rc = -ENOMEM;
		goto done;
	}
	switch (type) {
	case T_BOOL: {
		const uint8_t *v = vals;
		if (buf_reserve(&body, (n + 7) / 8)) {
			rc = -ENOMEM;
			goto done;
		}
		memset(body.p + body.len, 0, (n + 7) / 8);
		for (size_t i = 0; i < n; i++)
			body.p[body.len + i / 8] |= (uint8_t)(v[i] << (i % 8));
		body.len += (n + 7) / 8;
		break;
	}
	case T_STR: {
		int bw = 1;
		while (bw < 32 && (ndict - 1) >> bw)
			bw++;
		enc = ENC_RLE_DICTIONARY;
		uint8_t b = (uint8_t)bw;
		if (buf_put(&body, &b, 1) || rle_indices(&body, vals, n, bw)) {
			rc = -ENOMEM;
			goto done;
		}
		break;
	}
	default: /* PLAIN little-endian values: the column buffer itself */
		*direct = vals;
		*direct_len = n * type_size(type);
		break;
	}
	page_header(&w, PAGE_DATA, body.len + *direct_len, n, enc);
	if (w.err || buf_put(out, head.p, head.len) || buf_put(out, body.p, body.len))
		rc = -ENOMEM;
done:
	free(head.p);
	free(body.p);
	return rc;
}

static void logical_type(struct tc *w, int type)
{
	int conv = type == T_STR ? CONV_UTF8 : type == T_I8 ? CONV_INT_8 : CONV_UINT_64;
	tc_i32(w, 6, conv);
	tc_begin(w, 10); /* LogicalType union */
	if (type == T_STR) {
		tc_begin(w, 1); /* STRING */
		tc_end(w);
	} else {
		tc_begin(w, 10); /* INTEGER: bit width, signed */
		tc_field(w, 1, TC_BYTE);
		tc_byte(w, type == T_I8 ? 8 : 64);
		tc_field(w, 2, type == T_I8 ? TC_TRUE : TC_FALSE);
		tc_end(w);
	}
	tc_end(w);
}

int pq_footer(struct buf *out, const char *const *names, const uint8_t *types, int ncols,
	      const struct chunk_meta *meta, const uint64_t *rg_rows, size_t nrg)
{
	struct buf fm = {0};
	struct tc w = {.b = &fm};
	uint64_t total = 0;
	int rc;

	for (size_t g = 0; g < nrg; g++)
		total += rg_rows[g];
	tc_begin(&w, 0); /* FileMetaData */
	tc_i32(&w, 1, 2); /* version */
	tc_list(&w, 2, TC_STRUCT, (size_t)ncols + 1);
	tc_begin(&w, 0); /* the root of the schema */
	tc_bin(&w, 4, "schema");
	tc_i32(&w, 5, ncols);
	tc_end(&w);
	for (int c = 0; c < ncols; c++) {
		tc_begin(&w, 0);
		tc_i32(&w, 1, phys_type(types[c]));
		tc_i32(&w, 3, OPTIONAL);
		tc_bin(&w, 4, names[c]);
		if (types[c] == T_STR || types[c] == T_I8 || types[c] == T_U64)
			logical_type(&w, types[c]);
		tc_end(&w);
	}
	tc_i64(&w, 3, (int64_t)total);
	tc_list(&w, 4, TC_STRUCT, nrg);
	for (size_t g = 0; g < nrg; g++) {
		uint64_t bytes = 0;
		tc_begin(&w, 0); /* RowGroup */
		tc_list(&w, 1, TC_STRUCT, (size_t)ncols);
		for (int c = 0; c < ncols; c++) {
			const struct chunk_meta *m = &meta[g * (size_t)ncols + c];
			bytes += m->size;
			tc_begin(&w, 0); /* ColumnChunk */
			tc_i64(&w, 2, (int64_t)(m->has_dict ? m->dict_off : m->data_off));
			tc_begin(&w, 3); /* ColumnMetaData */
			tc_i32(&w, 1, phys_type(types[c]));
			if (m->has_dict) {
				tc_list(&w, 2, TC_I32, 3);
				tc_varint(&w, ENC_PLAIN << 1);
				tc_varint(&w, ENC_RLE << 1);
				tc_varint(&w, ENC_RLE_DICTIONARY << 1);
			} else {
				tc_list(&w, 2, TC_I32, 2);
				tc_varint(&w, ENC_PLAIN << 1);
				tc_varint(&w, ENC_RLE << 1);
			}
			tc_list(&w, 3, TC_BIN, 1); /* path in schema */
			tc_varint(&w, strlen(names[c]));
			if (buf_put(&fm, names[c], strlen(names[c])))
				w.err = -ENOMEM;
			tc_i32(&w, 4, 0); /* UNCOMPRESSED */
			tc_i64(&w, 5, (int64_t)m->nvalues);
			tc_i64(&w, 6, (int64_t)m->size);
			tc_i64(&w, 7, (int64_t)m->size);
			tc_i64(&w, 9, (int64_t)m->data_off);
			if (m->has_dict)
				tc_i64(&w, 11, (int64_t)m->dict_off);
			tc_end(&w);
			tc_end(&w);
		}
		tc_i64(&w, 2, (int64_t)bytes);
		tc_i64(&w, 3, (int64_t)rg_rows[g]);
		tc_end(&w);
	}
	tc_bin(&w, 6, "hpmkit spe (libhpmspe)");
	tc_end(&w);
	if (w.err) {
		free(fm.p);
		return w.err;
	}
	uint8_t tail[8] = {(uint8_t)fm.len, (uint8_t)(fm.len >> 8), (uint8_t)(fm.len >> 16), (uint8_t)(fm.len >> 24),
			   'P', 'A', 'R', '1'};
	rc = buf_put(out, fm.p, fm.len) || buf_put(out, tail, 8) ? -ENOMEM : 0;
	free(fm.p);
	return rc;
}
