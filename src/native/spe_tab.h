/* spe-parser's tables (load/store, branch, other) written straight from decoded SPE records, as
 * CSV or Parquet, without building per-row objects in Python (src/native/spe_tab.c).
 *
 * The column list of each table and the names of string values (operation, subclass, events,
 * data source) come from python/hpmkit/spe/tables.py, which stays their single definition; this
 * file only knows how each column is computed from a struct spe_record and how it is encoded.
 */
#ifndef HPM_SPE_TAB_H
#define HPM_SPE_TAB_H

#include <stddef.h>
#include <stdint.h>

#include "spe.h"

enum { SPE_TAB_LDST = 0, SPE_TAB_BRANCH = 1, SPE_TAB_OTHER = 2, SPE_TAB_N = 3 };
enum { SPE_TAB_CSV = 0, SPE_TAB_PARQUET = 1 };

struct spe_tabs;

/* A set of up to three tables in one format; `rows_per_group` bounds a Parquet row group (and
 * so the memory held per table). */
SPE_API int spe_tabs__new(struct spe_tabs **out, int fmt, uint32_t rows_per_group);
SPE_API void spe_tabs__delete(struct spe_tabs *t);
/* Table `kind` goes to `fd` (the caller opens and closes it) with these columns: names from
 * tables.py's KINDS, comma-separated, optionally followed by "symbol" and/or "time". -EINVAL for
 * a name this writer does not know. */
SPE_API int spe_tabs__open(struct spe_tabs *t, int kind, int fd, const char *cols);
/* Names of string values, `count` NUL-terminated strings back to back:
 *   kind -1, "event": 64 names of the events bits (empty: "EVn");
 *   kind -1, "data_source": names of data sources 0..count-1 (larger values print in decimal);
 *   kind K, "op" or "subclass": 256 names by operation type payload byte. */
SPE_API int spe_tabs__names(struct spe_tabs *t, int kind, const char *col, const char *blob, size_t len,
			    uint32_t count);
/* Append symbol names (NUL-terminated, back to back); the values of the `symbol` column index
 * the list of all names appended so far. */
SPE_API int spe_tabs__add_symbols(struct spe_tabs *t, const char *blob, size_t len, uint32_t count);
/* Append records to the tables of their operation class (records without an operation type go
 * nowhere and are counted). sym / time: one value per record, or NULL when the tables have no
 * such column. Returns 0 or -errno (a write failed: the output is unusable). */
SPE_API int spe_tabs__add(struct spe_tabs *t, const struct spe_record *r, size_t n, const uint32_t *sym,
			  const uint64_t *time);
/* Write what is buffered and the Parquet footers. 0 or -errno. */
SPE_API int spe_tabs__finish(struct spe_tabs *t);
/* rows[0..2]: rows per table; rows[3]: records without an operation type. */
SPE_API void spe_tabs__rows(const struct spe_tabs *t, uint64_t rows[4]);

#endif
