/* Parquet encoding for the SPE table writer (spe_tab.c): column chunks and the file footer.
 *
 * Format: github.com/apache/parquet-format; the metadata is Thrift's compact protocol. What is
 * written: uncompressed data pages (v1) with definition levels (every column OPTIONAL, as pyarrow
 * writes them, every value present); numbers and booleans PLAIN; strings dictionary-encoded (a
 * PLAIN dictionary page, then RLE / bit-packed indices); type annotations that make readers see
 * int8 (INT_8), uint64 (UINT_64) and string (UTF8) columns. Little-endian hosts only (PLAIN
 * values are written as they are in memory).
 */
#ifndef HPM_SPE_PARQUET_H
#define HPM_SPE_PARQUET_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* growable byte buffer */
struct buf {
	uint8_t *p;
	size_t len, cap;
};

static inline int buf_reserve(struct buf *b, size_t more)
{
	if (b->len + more <= b->cap)
		return 0;
	size_t cap = b->cap ? b->cap : 4096;
	while (cap < b->len + more)
		cap *= 2;
	uint8_t *p = realloc(b->p, cap);
	if (!p)
		return -ENOMEM;
	b->p = p;
	b->cap = cap;
	return 0;
}

static inline int buf_put(struct buf *b, const void *src, size_t n)
{
	if (buf_reserve(b, n))
		return -ENOMEM;
	memcpy(b->p + b->len, src, n);
	b->len += n;
	return 0;
}

/* value types of the table columns */
enum ctype { T_BOOL, T_I32, T_I8, T_U64, T_I64, T_STR };

static inline size_t type_size(int type)
{
	switch (type) {
	case T_BOOL: return 1;
	case T_I32: case T_I8: case T_STR: return 4;
	default: return 8;
	}
}

struct chunk_meta { /* one written column chunk */
	uint64_t dict_off, data_off, size, nvalues;
	int has_dict;
};

/* The pages of a column chunk of n values of `type` from vals (uint8 0/1 for BOOL, int32 for
 * I32/I8, 64-bit for U64/I64, uint32 dictionary indices for STR with `dict` holding the ndict
 * PLAIN-encoded strings). The pages are appended to out, except a number column's PLAIN values,
 * which follow out's bytes in the file: *direct, *direct_len (no copy). *dict_bytes: how many of
 * the appended bytes are the dictionary page. 0 or -ENOMEM. */
int pq_chunk(struct buf *out, int type, const void *vals, size_t n, const struct buf *dict, size_t ndict,
	     size_t *dict_bytes, const void **direct, size_t *direct_len);

/* The footer (FileMetaData, its length, the magic) of a file with these columns and row groups;
 * meta has ncols entries per row group. 0 or -ENOMEM. */
int pq_footer(struct buf *out, const char *const *names, const uint8_t *types, int ncols,
	      const struct chunk_meta *meta, const uint64_t *rg_rows, size_t nrg);

#endif
