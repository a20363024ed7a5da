/* spe-parser's tables written straight from decoded SPE records: CSV, or Parquet (see
 * spe_tab.h for the interface, spe_parquet.c for the Parquet encoding).
 *
 * Why in C: building string columns and writing them through pyarrow cost about twenty times the
 * decoding itself; here every column is computed from the record in one pass and encoded
 * directly.
 *
 * CSV: the text spe-parser writes (header names quoted, values not; hex addresses, true/false,
 * empty when a packet was absent). A symbol name with a comma, quote or line break is quoted.
 * Parquet: one row group per `rows_per_group` rows of a table, the column values of the group
 * kept here until it is written; string columns as dictionaries built per row group.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spe_parquet.h"
#include "spe_tab.h"

/* ---- columns ------------------------------------------------------------------------------ */

enum cid {
	C_CPU, C_OP, C_PC, C_EL, C_ATOMIC, C_EXCL, C_AR, C_SUBCLASS, C_SVE_EVL, C_SVE_PRED, C_SVE_FP,
	C_COND, C_COND_OTHER, C_INDIRECT, C_EVENT, C_ISSUE, C_TOTAL, C_XLAT, C_VADDR, C_PADDR, C_DS,
	C_TGT, C_TGT_LVL, C_PBT, C_PBT_LVL, C_CONTEXT, C_TS, C_SYMBOL, C_TIME,
};

static const struct {
	const char *name;
	uint8_t id, type;
} coldefs[] = {
	{"cpu", C_CPU, T_I32},          {"op", C_OP, T_STR},           {"pc", C_PC, T_U64},
	{"el", C_EL, T_I8},             {"atomic", C_ATOMIC, T_BOOL},  {"excl", C_EXCL, T_BOOL},
	{"ar", C_AR, T_BOOL},           {"subclass", C_SUBCLASS, T_STR}, {"sve_evl", C_SVE_EVL, T_I32},
	{"sve_pred", C_SVE_PRED, T_BOOL}, {"sve_fp", C_SVE_FP, T_BOOL}, {"condition", C_COND, T_BOOL},
	{"indirect", C_INDIRECT, T_BOOL}, {"event", C_EVENT, T_STR},   {"issue_lat", C_ISSUE, T_I32},
	{"total_lat", C_TOTAL, T_I32},  {"xlat_lat", C_XLAT, T_I32},   {"vaddr", C_VADDR, T_U64},
	{"paddr", C_PADDR, T_U64},      {"data_source", C_DS, T_STR},  {"br_tgt", C_TGT, T_U64},
	{"br_tgt_lvl", C_TGT_LVL, T_I8}, {"pbt", C_PBT, T_U64},        {"pbt_lvl", C_PBT_LVL, T_I8},
	{"context", C_CONTEXT, T_I64},  {"ts", C_TS, T_U64},           {"symbol", C_SYMBOL, T_STR},
	{"time", C_TIME, T_U64},
};

/* Values as spe-parser defines them (tables.py columns() is the same in numpy). */
#define ATOMIC(op) (((op) & 0xe2) == 0x02)
#define SVE_OTHER(op) (((op) & 0x89) == 0x08)
#define HAS(r, f) (((r)->present & SPE_HAS_##f) != 0)

static inline uint64_t addr_of(const struct spe_record *r, int cid, int *has)
{
	switch (cid) {
	case C_PC: *has = HAS(r, PC); return r->pc;
	case C_VADDR: *has = HAS(r, VA); return r->vaddr;
	case C_PADDR: *has = HAS(r, PA); return r->paddr;
	case C_TGT: *has = HAS(r, TGT); return r->tgt;
	default: *has = HAS(r, PBT); return r->pbt;
	}
}

/* numeric and boolean columns (not addresses, context, strings, extras) */
static inline int64_t num_of(const struct spe_record *r, int cid)
{
	unsigned op = r->op;
	switch (cid) {
	case C_CPU: return r->cpu;
	case C_EL: return r->pc_el;
	case C_ATOMIC: return ATOMIC(op) && (op & 0x04);
	case C_EXCL: return ATOMIC(op) && (op & 0x08);
	case C_AR: return ATOMIC(op) && (op & 0x10);
	case C_SVE_EVL: return SVE_OTHER(op) ? 32 << ((op >> 4) & 7) : 0;
	case C_SVE_PRED: return SVE_OTHER(op) && (op & 0x4);
	case C_SVE_FP: return SVE_OTHER(op) && (op & 0x2);
	case C_COND: return op & 1;
	case C_COND_OTHER: return !SVE_OTHER(op) && (op & 1);
	case C_INDIRECT: return (op & 0xfe) == 0x02;
	case C_ISSUE: return r->issue_lat;
	case C_TOTAL: return r->total_lat;
	case C_XLAT: return r->xlat_lat;
	case C_TGT_LVL: return r->tgt_el;
	case C_PBT_LVL: return r->pbt_el;
	case C_TS: return (int64_t)r->ts;
	default: return 0;
	}
}

/* ---- string dictionaries (Parquet) -------------------------------------------------------- */

/* key -> index of its string in this row group's dictionary; keys are whatever identifies a
 * string for the column (events bits, data source, operation byte class, symbol number) */
struct dict {
	uint64_t *keys;
	uint32_t *slot; /* index + 1, 0 = empty */
	size_t cap, n;
	struct buf strs; /* PLAIN: 4-byte length + bytes, per entry */
	uint64_t last_key;
	uint32_t last_idx;
	int has_last;
	uint32_t small[256]; /* keys below 256 (operation bytes, most data sources): index + 1 */
};

static void dict_clear(struct dict *d)
{
	if (d->slot)
		memset(d->slot, 0, d->cap * sizeof(*d->slot));
	d->n = 0;
	d->strs.len = 0;
	d->has_last = 0;
	memset(d->small, 0, sizeof(d->small));
}

static void dict_free(struct dict *d)
{
	free(d->keys);
	free(d->slot);
	free(d->strs.p);
}

static inline size_t dict_hash(uint64_t k, size_t cap)
{
	return (size_t)((k * 0x9e3779b97f4a7c15ull) >> 17) & (cap - 1);
}

static int dict_grow(struct dict *d)
{
	size_t cap = d->cap ? d->cap * 2 : 256;
	uint64_t *keys = calloc(cap, sizeof(*keys));
	uint32_t *slot = calloc(cap, sizeof(*slot));
	if (!keys || !slot) {
		free(keys);
		free(slot);
		return -ENOMEM;
	}
	for (size_t i = 0; i < d->cap; i++) {
		if (!d->slot[i])
			continue;
		size_t h = dict_hash(d->keys[i], cap);
		while (slot[h])
			h = (h + 1) & (cap - 1);
		keys[h] = d->keys[i];
		slot[h] = d->slot[i];
	}
	free(d->keys);
	free(d->slot);
	d->keys = keys;
	d->slot = slot;
	d->cap = cap;
	return 0;
}

/* ---- tables ------------------------------------------------------------------------------- */

struct col {
	uint8_t id, type;
	void *vals;   /* row-group values: int32 (I32, I8), uint64/int64, uint8 (BOOL), uint32 (STR) */
	struct dict dict;
	const char *const *byname; /* C_OP, C_SUBCLASS: name per operation byte */
	const uint8_t *uid;        /* the same: first byte with an equal name (dictionary key) */
};

struct table {
	int used, kind, fd, ncols;
	struct col cols[40];
	const char *byte_names[2][256]; /* op, subclass */
	uint8_t byte_uid[2][256];
	char *byte_blob[2];
	uint64_t rows;
	/* output */
	struct buf out;
	uint64_t pos; /* file offset of out.p[0] */
	/* Parquet */
	size_t rg_rows;
	struct chunk_meta *meta; /* ncols per written row group */
	uint64_t *rg_nrows;
	size_t nrg, rgcap;
};

struct spe_tabs {
	int fmt;
	uint32_t rg_max;
	struct table tab[SPE_TAB_N];
	uint64_t no_op;
	const char *ev_names[64];
	char *ev_blob;
	const char **ds_names;
	uint32_t nds;
	char *ds_blob;
	char **syms;
	size_t nsyms, symcap;
	uint8_t *sym_quote; /* CSV: the name needs quotes */
	uint32_t *idx[SPE_TAB_N];
	size_t idxcap;
	int err;
};

#define OUT_FLUSH (1u << 20)

static int out_flush(struct table *t)
{
	size_t off = 0;
	while (off < t->out.len) {
		ssize_t w = write(t->fd, t->out.p + off, t->out.len - off);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		off += (size_t)w;
	}
	t->pos += t->out.len;
	t->out.len = 0;
	return 0;
}

/* big arrays go to the file without a copy */
static int out_direct(struct table *t, const void *p, size_t n)
{
	int rc = out_flush(t);
	size_t off = 0;
	if (rc)
		return rc;
	while (off < n) {
		ssize_t w = write(t->fd, (const uint8_t *)p + off, n - off);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		off += (size_t)w;
	}
	t->pos += n;
	return 0;
}

int spe_tabs__new(struct spe_tabs **out, int fmt, uint32_t rows_per_group)
{
	struct spe_tabs *t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->fmt = fmt;
	t->rg_max = rows_per_group ? rows_per_group : 1u << 18;
	for (int k = 0; k < SPE_TAB_N; k++)
		for (int w = 0; w < 2; w++)
			for (int b = 0; b < 256; b++)
				t->tab[k].byte_names[w][b] = "";
	*out = t;
	return 0;
}

void spe_tabs__delete(struct spe_tabs *t)
{
	if (!t)
		return;
	for (int k = 0; k < SPE_TAB_N; k++) {
		struct table *tb = &t->tab[k];
		for (int c = 0; c < tb->ncols; c++) {
			free(tb->cols[c].vals);
			dict_free(&tb->cols[c].dict);
		}
		free(tb->byte_blob[0]);
		free(tb->byte_blob[1]);
		free(tb->out.p);
		free(tb->meta);
		free(tb->rg_nrows);
		free(t->idx[k]);
	}
	for (size_t i = 0; i < t->nsyms; i++)
		free(t->syms[i]);
	free(t->syms);
	free(t->sym_quote);
	free(t->ev_blob);
	free(t->ds_blob);
	free(t->ds_names);
	free(t);
}

static const char *col_name(int id)
{
	if (id == C_COND_OTHER)
		id = C_COND;
	for (size_t i = 0; i < sizeof(coldefs) / sizeof(coldefs[0]); i++)
		if (coldefs[i].id == id)
			return coldefs[i].name;
	return "";
}

static int csv_header(struct table *tb)
{
	for (int c = 0; c < tb->ncols; c++) {
		const char *name = col_name(tb->cols[c].id);
		if (buf_put(&tb->out, c ? ",\"" : "\"", c ? 2 : 1) || buf_put(&tb->out, name, strlen(name)) ||
		    buf_put(&tb->out, "\"", 1))
			return -ENOMEM;
	}
	return buf_put(&tb->out, "\n", 1);
}

int spe_tabs__open(struct spe_tabs *t, int kind, int fd, const char *cols)
{
	struct table *tb;
	const char *p = cols;

	if (kind < 0 || kind >= SPE_TAB_N || t->tab[kind].used)
		return -EINVAL;
	tb = &t->tab[kind];
	tb->kind = kind;
	tb->fd = fd;
	while (*p) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		int found = -1;
		for (size_t i = 0; i < sizeof(coldefs) / sizeof(coldefs[0]); i++)
			if (strlen(coldefs[i].name) == n && !memcmp(coldefs[i].name, p, n))
				found = (int)i;
		if (found < 0 || tb->ncols == (int)(sizeof(tb->cols) / sizeof(tb->cols[0])))
			return -EINVAL;
		struct col *c = &tb->cols[tb->ncols++];
		c->id = coldefs[found].id;
		c->type = coldefs[found].type;
		if (c->id == C_COND && kind == SPE_TAB_OTHER)
			c->id = C_COND_OTHER; /* "other": a conditional select, not an SVE operation */
		if (c->id == C_OP || c->id == C_SUBCLASS) {
			int w = c->id == C_SUBCLASS;
			c->byname = tb->byte_names[w];
			c->uid = tb->byte_uid[w];
		}
		if (t->fmt == SPE_TAB_PARQUET) {
			c->vals = malloc((size_t)t->rg_max * type_size(c->type));
			if (!c->vals)
				return -ENOMEM;
		}
		p += n;
		if (*p == ',')
			p++;
	}
	tb->used = 1;
	if (t->fmt == SPE_TAB_CSV)
		return csv_header(tb);
	return buf_put(&tb->out, "PAR1", 4);
}

/* names of values are at most this long, so that a row (symbol apart) fits ROW_MAX bytes: 40
 * columns of a number or a name, and an event column of up to 64 names */
#define NAME_MAX_LEN 32
#define ROW_MAX (40 * (NAME_MAX_LEN + 2) + 64 * (NAME_MAX_LEN + 1))

/* split a blob of `count` NUL-terminated strings; the copy is kept in *keep */
static int split_names(const char *blob, size_t len, uint32_t count, const char **names, char **keep)
{
	char *copy = malloc(len + 1);
	size_t off = 0;
	if (!copy)
		return -ENOMEM;
	memcpy(copy, blob, len);
	copy[len] = 0;
	for (uint32_t i = 0; i < count; i++) {
		if (off >= len + 1) {
			free(copy);
			return -EINVAL;
		}
		names[i] = copy + off;
		if (strlen(names[i]) > NAME_MAX_LEN) {
			free(copy);
			return -EINVAL;
		}
		off += strlen(copy + off) + 1;
	}
	free(*keep);
	*keep = copy;
	return 0;
}

int spe_tabs__names(struct spe_tabs *t, int kind, const char *col, const char *blob, size_t len,
		    uint32_t count)
{
	if (kind < 0 && !strcmp(col, "event")) {
		if (count != 64)
			return -EINVAL;
		return split_names(blob, len, 64, t->ev_names, &t->ev_blob);
	}
	if (kind < 0 && !strcmp(col, "data_source")) {
		const char **names = calloc(count ? count : 1, sizeof(*names));
		if (!names)
			return -ENOMEM;
		int rc = split_names(blob, len, count, names, &t->ds_blob);
		if (rc) {
			free(names);
			return rc;
		}
		free(t->ds_names);
		t->ds_names = names;
		t->nds = count;
		return 0;
	}
	if (kind >= 0 && kind < SPE_TAB_N && count == 256 && (!strcmp(col, "op") || !strcmp(col, "subclass"))) {
		struct table *tb = &t->tab[kind];
		int w = !strcmp(col, "subclass");
		int rc = split_names(blob, len, 256, tb->byte_names[w], &tb->byte_blob[w]);
		if (rc)
			return rc;
		for (int b = 0; b < 256; b++) {
			int u = b;
			for (int a = 0; a < b; a++)
				if (!strcmp(tb->byte_names[w][a], tb->byte_names[w][b])) {
					u = a;
					break;
				}
			tb->byte_uid[w][b] = (uint8_t)u;
		}
		return 0;
	}
	return -EINVAL;
}

static int needs_quotes(const char *s)
{
	return strpbrk(s, ",\"\n\r") != NULL;
}

int spe_tabs__add_symbols(struct spe_tabs *t, const char *blob, size_t len, uint32_t count)
{
	size_t off = 0;
	if (t->nsyms + count > t->symcap) {
		size_t cap = t->symcap ? t->symcap : 1024;
		while (cap < t->nsyms + count)
			cap *= 2;
		char **s = realloc(t->syms, cap * sizeof(*s));
		if (!s)
			return -ENOMEM;
		t->syms = s;
		uint8_t *q = realloc(t->sym_quote, cap);
		if (!q)
			return -ENOMEM;
		t->sym_quote = q;
		t->symcap = cap;
	}
	for (uint32_t i = 0; i < count; i++) {
		if (off >= len)
			return -EINVAL;
		size_t n = strnlen(blob + off, len - off);
		char *s = malloc(n + 1);
		if (!s)
			return -ENOMEM;
		memcpy(s, blob + off, n);
		s[n] = 0;
		t->sym_quote[t->nsyms] = (uint8_t)needs_quotes(s);
		t->syms[t->nsyms++] = s;
		off += n + 1;
	}
	return 0;
}

/* ---- text of string values ------------------------------------------------------------------ */

/* "RETIRED:L1D-ACCESS:...", names from tables.py, "EVn" for unnamed bits */
static size_t event_text(const struct spe_tabs *t, uint64_t ev, char *out)
{
	size_t n = 0;
	while (ev) {
		int b = __builtin_ctzll(ev);
		const char *name = t->ev_names[b];
		ev &= ev - 1;
		if (n)
			out[n++] = ':';
		if (name && *name) {
			size_t l = strlen(name);
			memcpy(out + n, name, l);
			n += l;
		} else {
			n += (size_t)sprintf(out + n, "EV%d", b);
		}
	}
	return n;
}

static size_t ds_text(const struct spe_tabs *t, const struct spe_record *r, char *out)
{
	if (!HAS(r, DS))
		return 0;
	if (r->data_source < t->nds) {
		size_t l = strlen(t->ds_names[r->data_source]);
		memcpy(out, t->ds_names[r->data_source], l);
		return l;
	}
	return (size_t)sprintf(out, "%u", r->data_source);
}

/* the text of a string column for record r (CSV), or for a dictionary key (Parquet) */
static size_t str_text(const struct spe_tabs *t, const struct col *c, uint64_t key, const struct spe_record *r,
		       char *out, const char **big)
{
	*big = NULL;
	switch (c->id) {
	case C_OP:
	case C_SUBCLASS: {
		const char *s = c->byname[key & 0xff];
		size_t l = strlen(s);
		memcpy(out, s, l);
		return l;
	}
	case C_EVENT:
		return event_text(t, key, out);
	case C_DS: {
		struct spe_record tmp;
		if (r)
			return ds_text(t, r, out);
		tmp.present = key > 0xffff ? 0 : SPE_HAS_DS;
		tmp.data_source = (uint16_t)key;
		return ds_text(t, &tmp, out);
	}
	case C_SYMBOL:
		if (key < t->nsyms) {
			*big = t->syms[key];
			return strlen(t->syms[key]);
		}
		return 0;
	default:
		return 0;
	}
}

/* ---- CSV ------------------------------------------------------------------------------------ */

static char *put_dec(char *p, uint64_t v)
{
	char tmp[24];
	int n = 0;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*p++ = tmp[--n];
	return p;
}

static char *put_sdec(char *p, int64_t v)
{
	if (v < 0) {
		*p++ = '-';
		return put_dec(p, (uint64_t)0 - (uint64_t)v);
	}
	return put_dec(p, (uint64_t)v);
}

static char *put_hex(char *p, uint64_t v)
{
	static const char digits[] = "0123456789abcdef";
	int shift = v ? 60 - (__builtin_clzll(v) & ~3) : 0;
	*p++ = '0';
	*p++ = 'x';
	for (; shift >= 0; shift -= 4)
		*p++ = digits[(v >> shift) & 0xf];
	return p;
}


static int csv_rows(struct spe_tabs *t, struct table *tb, const struct spe_record *recs, const uint32_t *idx,
		    size_t m, const uint32_t *sym, const uint64_t *time)
{
	for (size_t j = 0; j < m; j++) {
		const struct spe_record *r = recs + idx[j];
		char *p;
		if (tb->out.len + ROW_MAX > OUT_FLUSH) {
			int rc = out_flush(tb);
			if (rc)
				return rc;
		}
		if (buf_reserve(&tb->out, ROW_MAX))
			return -ENOMEM;
		p = (char *)tb->out.p + tb->out.len;
		for (int c = 0; c < tb->ncols; c++) {
			const struct col *col = &tb->cols[c];
			int has;
			if (c)
				*p++ = ',';
			switch (col->type) {
			case T_BOOL:
				if (num_of(r, col->id)) {
					memcpy(p, "true", 4);
					p += 4;
				} else {
					memcpy(p, "false", 5);
					p += 5;
				}
				break;
			case T_I32:
			case T_I8:
				p = put_sdec(p, num_of(r, col->id));
				break;
			case T_I64: /* context: hex, empty when absent */
				if (HAS(r, CTX))
					p = put_hex(p, r->context);
				break;
			case T_U64:
				if (col->id == C_TS)
					p = put_dec(p, r->ts);
				else if (col->id == C_TIME)
					p = put_dec(p, time[idx[j]]);
				else {
					uint64_t v = addr_of(r, col->id, &has);
					if (has)
						p = put_hex(p, v);
				}
				break;
			case T_STR: {
				const char *big;
				uint64_t key = col->id == C_EVENT ? r->events : col->id == C_SYMBOL ? sym[idx[j]] : r->op;
				size_t n;
				if (col->id == C_SYMBOL) {
					/* symbol names can be long: written through the buffer in pieces */
					const char *s = key < t->nsyms ? t->syms[key] : "";
					int q = key < t->nsyms && t->sym_quote[key];
					tb->out.len = (size_t)(p - (char *)tb->out.p);
					if (!q) {
						if (buf_put(&tb->out, s, strlen(s)))
							return -ENOMEM;
					} else {
						/* RFC 4180: quoted, quotes doubled */
						if (buf_put(&tb->out, "\"", 1))
							return -ENOMEM;
						for (const char *s2 = s; *s2; s2++)
							if ((*s2 == '"' && buf_put(&tb->out, "\"", 1)) || buf_put(&tb->out, s2, 1))
								return -ENOMEM;
					}
					if ((q && buf_put(&tb->out, "\"", 1)) || buf_reserve(&tb->out, ROW_MAX))
						return -ENOMEM;
					p = (char *)tb->out.p + tb->out.len;
					break;
				}
				n = str_text(t, col, key, r, p, &big);
				p += n;
				break;
			}
			}
		}
		*p++ = '\n';
		tb->out.len = (size_t)(p - (char *)tb->out.p);
	}
	return 0;
}

/* ---- Parquet: row groups -------------------------------------------------------------------- */

/* one column chunk: its pages, and where they are in the file */
static int write_chunk(struct table *tb, struct col *c, size_t n, struct chunk_meta *m)
{
	uint64_t start = tb->pos + tb->out.len;
	const void *direct;
	size_t direct_len, dict_bytes;
	int rc = pq_chunk(&tb->out, c->type, c->vals, n, &c->dict.strs, c->dict.n, &dict_bytes, &direct, &direct_len);

	if (rc)
		return rc;
	m->nvalues = n;
	m->has_dict = c->type == T_STR;
	m->dict_off = start;
	m->data_off = start + dict_bytes;
	if (direct_len)
		rc = out_direct(tb, direct, direct_len);
	else if (tb->out.len > OUT_FLUSH)
		rc = out_flush(tb);
	m->size = tb->pos + tb->out.len - start;
	return rc;
}

static int flush_group(struct table *tb)
{
	size_t n = tb->rg_rows;
	if (!n)
		return 0;
	if (tb->nrg == tb->rgcap) {
		size_t cap = tb->rgcap ? tb->rgcap * 2 : 16;
		struct chunk_meta *m = realloc(tb->meta, cap * (size_t)tb->ncols * sizeof(*m));
		if (!m)
			return -ENOMEM;
		tb->meta = m;
		uint64_t *r = realloc(tb->rg_nrows, cap * sizeof(*r));
		if (!r)
			return -ENOMEM;
		tb->rg_nrows = r;
		tb->rgcap = cap;
	}
	for (int c = 0; c < tb->ncols; c++) {
		int rc = write_chunk(tb, &tb->cols[c], n, &tb->meta[tb->nrg * (size_t)tb->ncols + c]);
		if (rc)
			return rc;
		dict_clear(&tb->cols[c].dict);
	}
	tb->rg_nrows[tb->nrg++] = n;
	tb->rg_rows = 0;
	return 0;
}

static int write_footer(struct table *tb)
{
	const char *names[sizeof(tb->cols) / sizeof(tb->cols[0])];
	uint8_t types[sizeof(tb->cols) / sizeof(tb->cols[0])];

	for (int c = 0; c < tb->ncols; c++) {
		names[c] = col_name(tb->cols[c].id);
		types[c] = tb->cols[c].type;
	}
	return pq_footer(&tb->out, names, types, tb->ncols, tb->meta, tb->rg_nrows, tb->nrg);
}

/* ---- Parquet: column values ----------------------------------------------------------------- */

static int dict_index(struct spe_tabs *t, struct col *c, uint64_t key, const struct spe_record *r, uint32_t *idx)
{
	struct dict *d = &c->dict;
	char tmp[ROW_MAX];
	const char *big;
	size_t h;

	if (d->has_last && d->last_key == key) {
		*idx = d->last_idx;
		return 0;
	}
	if (key < 256 && d->small[key]) {
		*idx = d->small[key] - 1;
		goto done;
	}
	if ((d->n + 1) * 2 > d->cap && dict_grow(d))
		return -ENOMEM;
	h = dict_hash(key, d->cap);
	while (d->slot[h]) {
		if (d->keys[h] == key) {
			*idx = d->slot[h] - 1;
			goto done;
		}
		h = (h + 1) & (d->cap - 1);
	}
	size_t n = str_text(t, c, key, r, tmp, &big);
	uint8_t len[4] = {(uint8_t)n, (uint8_t)(n >> 8), (uint8_t)(n >> 16), (uint8_t)(n >> 24)};
	if (buf_put(&d->strs, len, 4) || buf_put(&d->strs, big ? big : tmp, n))
		return -ENOMEM;
	d->keys[h] = key;
	d->slot[h] = (uint32_t)++d->n;
	*idx = (uint32_t)(d->n - 1);
	if (key < 256)
		d->small[key] = (uint32_t)d->n;
done:
	d->last_key = key;
	d->last_idx = *idx;
	d->has_last = 1;
	return 0;
}

#define FILL(T, expr)                                                                 \
	do {                                                                          \
		T *o = (T *)c->vals + at;                                             \
		for (size_t j = 0; j < m; j++) {                                      \
			const struct spe_record *r = recs + idx[j];                   \
			o[j] = (T)(expr);                                             \
		}                                                                     \
	} while (0)

static int pq_rows(struct spe_tabs *t, struct table *tb, const struct spe_record *recs, const uint32_t *idx,
		   size_t m, const uint32_t *sym, const uint64_t *time)
{
	size_t at = tb->rg_rows;
	for (int ci = 0; ci < tb->ncols; ci++) {
		struct col *c = &tb->cols[ci];
		switch (c->id) {
		case C_CPU: FILL(int32_t, r->cpu); break;
		case C_EL: FILL(int32_t, r->pc_el); break;
		case C_TGT_LVL: FILL(int32_t, r->tgt_el); break;
		case C_PBT_LVL: FILL(int32_t, r->pbt_el); break;
		case C_ISSUE: FILL(int32_t, r->issue_lat); break;
		case C_TOTAL: FILL(int32_t, r->total_lat); break;
		case C_XLAT: FILL(int32_t, r->xlat_lat); break;
		case C_SVE_EVL: FILL(int32_t, num_of(r, C_SVE_EVL)); break;
		case C_ATOMIC: FILL(uint8_t, num_of(r, C_ATOMIC)); break;
		case C_EXCL: FILL(uint8_t, num_of(r, C_EXCL)); break;
		case C_AR: FILL(uint8_t, num_of(r, C_AR)); break;
		case C_SVE_PRED: FILL(uint8_t, num_of(r, C_SVE_PRED)); break;
		case C_SVE_FP: FILL(uint8_t, num_of(r, C_SVE_FP)); break;
		case C_COND: FILL(uint8_t, r->op & 1); break;
		case C_COND_OTHER: FILL(uint8_t, num_of(r, C_COND_OTHER)); break;
		case C_INDIRECT: FILL(uint8_t, num_of(r, C_INDIRECT)); break;
		case C_PC: FILL(uint64_t, HAS(r, PC) ? r->pc : 0); break;
		case C_VADDR: FILL(uint64_t, HAS(r, VA) ? r->vaddr : 0); break;
		case C_PADDR: FILL(uint64_t, HAS(r, PA) ? r->paddr : 0); break;
		case C_TGT: FILL(uint64_t, HAS(r, TGT) ? r->tgt : 0); break;
		case C_PBT: FILL(uint64_t, HAS(r, PBT) ? r->pbt : 0); break;
		case C_TS: FILL(uint64_t, r->ts); break;
		case C_CONTEXT: FILL(int64_t, HAS(r, CTX) ? (int64_t)r->context : -1); break;
		case C_TIME: {
			uint64_t *o = (uint64_t *)c->vals + at;
			for (size_t j = 0; j < m; j++)
				o[j] = time[idx[j]];
			break;
		}
		default: { /* strings: dictionary indices */
			uint32_t *o = (uint32_t *)c->vals + at;
			for (size_t j = 0; j < m; j++) {
				const struct spe_record *r = recs + idx[j];
				uint64_t key;
				switch (c->id) {
				case C_OP:
				case C_SUBCLASS: key = c->uid[r->op]; break;
				case C_EVENT: key = r->events; break;
				case C_DS: key = HAS(r, DS) ? r->data_source : 0x10000; break;
				default: key = sym[idx[j]]; break;
				}
				if (dict_index(t, c, key, c->id == C_DS ? NULL : r, &o[j]))
					return -ENOMEM;
			}
		}
		}
	}
	tb->rg_rows += m;
	return 0;
}

/* ---- records in ----------------------------------------------------------------------------- */

#define BLOCK 512

int spe_tabs__add(struct spe_tabs *t, const struct spe_record *recs, size_t n, const uint32_t *sym,
		  const uint64_t *time)
{
	size_t cnt[SPE_TAB_N] = {0};
	if (t->err)
		return t->err;
	if (n > t->idxcap) {
		for (int k = 0; k < SPE_TAB_N; k++) {
			uint32_t *p = realloc(t->idx[k], n * sizeof(*p));
			if (!p)
				return t->err = -ENOMEM;
			t->idx[k] = p;
		}
		t->idxcap = n;
	}
	/* the table of each record (class 3 cannot occur: the decoder ends a record there) */
	for (size_t i = 0; i < n; i++) {
		unsigned cls = recs[i].op_class;
		int k = cls == SPE_OP_LDST ? SPE_TAB_LDST : cls == SPE_OP_BRANCH ? SPE_TAB_BRANCH
		      : cls == 0xff ? -1 : SPE_TAB_OTHER;
		if (k < 0)
			t->no_op++;
		else
			t->idx[k][cnt[k]++] = (uint32_t)i;
	}
	for (int k = 0; k < SPE_TAB_N; k++) {
		struct table *tb = &t->tab[k];
		size_t done = 0;
		if (!tb->used)
			continue;
		tb->rows += cnt[k];
		while (done < cnt[k]) {
			size_t m = cnt[k] - done;
			int rc;
			if (t->fmt == SPE_TAB_CSV) {
				rc = csv_rows(t, tb, recs, t->idx[k] + done, m, sym, time);
			} else {
				if (m > t->rg_max - tb->rg_rows)
					m = t->rg_max - tb->rg_rows;
				if (m > BLOCK)
					m = BLOCK; /* all columns of a block while its records are in cache */
				rc = pq_rows(t, tb, recs, t->idx[k] + done, m, sym, time);
				if (!rc && tb->rg_rows == t->rg_max)
					rc = flush_group(tb);
			}
			if (rc)
				return t->err = rc;
			done += m;
		}
	}
	return 0;
}

int spe_tabs__finish(struct spe_tabs *t)
{
	if (t->err)
		return t->err;
	for (int k = 0; k < SPE_TAB_N; k++) {
		struct table *tb = &t->tab[k];
		int rc = 0;
		if (!tb->used)
			continue;
		if (t->fmt == SPE_TAB_PARQUET) {
			rc = flush_group(tb);
			if (!rc)
				rc = write_footer(tb);
		}
		if (!rc)
			rc = out_flush(tb);
		if (rc)
			return t->err = rc;
	}
	return 0;
}

void spe_tabs__rows(const struct spe_tabs *t, uint64_t rows[4])
{
	for (int k = 0; k < SPE_TAB_N; k++)
		rows[k] = t->tab[k].rows;
	rows[3] = t->no_op;
}
