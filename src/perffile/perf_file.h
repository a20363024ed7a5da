/* SPDX-License-Identifier: MIT */
/* Writer of perf.data files (the "PERFILE2" file format of Linux perf), as far
 * as hpm record needs it: attrs with their ids, a data section of records, and
 * header feature sections. The file appears under its name only when complete. */
#ifndef HPM_PERF_FILE_H
#define HPM_PERF_FILE_H

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* header feature bits (tools/perf/util/header.h) that hpm writes */
enum {
	PF_FEAT_TRACING_DATA = 1,
	PF_FEAT_HOSTNAME = 3,
	PF_FEAT_OSRELEASE = 4,
	PF_FEAT_VERSION = 5,
	PF_FEAT_ARCH = 6,
	PF_FEAT_NRCPUS = 7,
	PF_FEAT_CPUDESC = 8,
	PF_FEAT_CMDLINE = 11,
	PF_FEAT_EVENT_DESC = 12,
	PF_FEAT_GROUP_DESC = 17,
	/* hpmkit's own section: the text of the recording machine's /proc/kallsyms.
	 * perf processes feature bits below its HEADER_LAST_FEATURE (32 in 6.1)
	 * only, so it skips this one; docs/formats/profile.md documents it. */
	PF_FEAT_HPM_KALLSYMS = 250,
	PF_FEAT_BITS = 256,
};

#define PF_MAX_ATTRS 64

/* perf's HEADER_LAST_FEATURE in 6.1: in pipe mode a HEADER_FEATURE record of this id, empty,
 * ends the features; perf refuses a stream with a feature id above it (so hpm's own sections,
 * such as PF_FEAT_HPM_KALLSYMS, cannot travel in a pipe and are left out there) */
#define PF_PIPE_LAST_FEATURE 32

/* perf_file__open_flags */
enum {
	PF_OPEN_PRIVATE = 1, /* created 0600 (less where the umask says so), as perf record */
	PF_OPEN_BACKUP = 2,  /* a non-empty FILE already there becomes FILE.old, as perf record */
};

struct pf_attr {
	struct perf_event_attr attr;
	char name[128];
	uint64_t *ids;
	int nids, cap;
};

struct pf_buf {
	char *p;
	size_t len, cap;
};

struct perf_file {
	FILE *f;
	char path[4096], tmp[4200];
	struct pf_attr attrs[PF_MAX_ATTRS];
	int nattrs;
	uint64_t data_offset, data_size;
	struct pf_buf feat[PF_FEAT_BITS]; /* feature sections, in bit order */
	int ngroups;
	struct { int leader, n; char name[128]; } groups[PF_MAX_ATTRS];
	unsigned flags;      /* PF_OPEN_* */
	int pipe;            /* pipe mode (perf.data-file-format.txt): everything is a record */
	int pipe_feats_sent; /* the features set so far went out (before the first record) */
	unsigned char pipe_sent[PF_FEAT_BITS];
	size_t pipe_too_big[PF_FEAT_BITS]; /* bytes of a section left out of the stream (too large) */
	int in_place;        /* the name is a device (/dev/null): written there, never renamed over */
};

/* The body of a PERF_RECORD_MMAP2 record before its sample_id trailer, as hpm record and
 * the lab's sampler both write it; the name ends with its NUL (pf_mmap2_len). */
struct pf_mmap2 {
	uint32_t pid, tid;
	uint64_t start, len, pgoff;
	uint32_t maj, min;
	uint64_t ino, ino_gen;
	uint32_t prot, flags;
	char name[4096];
};

static inline size_t pf_mmap2_len(const struct pf_mmap2 *m)
{
	return offsetof(struct pf_mmap2, name) + strlen(m->name) + 1;
}

/* perf_file__open_flags(pf, path, 0): mode 0666 less the umask, an existing file replaced */
int perf_file__open(struct perf_file *pf, const char *path);
int perf_file__open_flags(struct perf_file *pf, const char *path, unsigned flags);
/* Pipe mode onto `fd` (a copy of it is taken; standard output for 'hpm record -o -'): a
 * 16-byte header, then HEADER_ATTR records (at begin_data), the feature sections as
 * HEADER_FEATURE records and the tracing data as a HEADER_TRACING_DATA record (before the
 * first record, or at commit), then the records as they are written. Nothing is seeked. */
int perf_file__open_pipe(struct perf_file *pf, int fd);
/* Attrs and their ids must be complete before the first record. */
int perf_file__add_attr(struct perf_file *pf, const struct perf_event_attr *attr, const char *name);
int perf_file__add_id(struct perf_file *pf, int attr_idx, uint64_t id);
void perf_file__add_group(struct perf_file *pf, int leader_idx, int n, const char *name);
/* Write the attr section and start the data section. */
int perf_file__begin_data(struct perf_file *pf);
int perf_file__write(struct perf_file *pf, const void *rec, size_t len);
/* Pipe mode: send what is buffered (after a FINISHED_ROUND, say); a no-op for a file. */
int perf_file__flush(struct perf_file *pf);
/* Pipe mode: how many feature sections were too large for a HEADER_FEATURE record (64 KiB,
 * perf's limit too) and so left out of the stream; their names and sizes go to `names`. */
int perf_file__pipe_left_out(const struct perf_file *pf, char *names, size_t len);
/* Feature sections (copied); strings in perf's length-prefixed form. */
void perf_file__feat_string(struct perf_file *pf, int bit, const char *s);
void perf_file__feat_raw(struct perf_file *pf, int bit, const void *p, size_t len);
void perf_file__feat_u32(struct perf_file *pf, int bit, uint32_t v);
/* Adds EVENT_DESC and GROUP_DESC, the feature table and the header; renames (with
 * PF_OPEN_BACKUP a non-empty file under the name becomes NAME.old first). Pipe mode:
 * sends what is left and flushes. */
int perf_file__commit(struct perf_file *pf);
void perf_file__abort(struct perf_file *pf);

#endif
