/* SPDX-License-Identifier: MIT */
/* perf.data writer. Layout (what Linux perf reads, tools/perf/util/header.c):
 *   file header (104 bytes) | ids of each attr | attrs (attr + ids section) |
 *   data section (records) | feature section table | feature sections
 * The feature table must start right after the data section: perf finds it
 * at data.offset + data.size.
 *
 * The file is built without a name where the file system allows it (O_TMPFILE: an unnamed
 * inode in the destination's folder) and linked under its name only when complete, so a
 * recording that is killed (SIGKILL, a crash, the disk filling up) leaves nothing behind:
 * not a half file under the final name, not a stray temporary file. Elsewhere a temporary
 * name beside the destination is used and removed on every error path.
 *
 * Pipe mode (perf_file__open_pipe; perf's Documentation/perf.data-file-format.txt, "Pipe-mode
 * data"): a header of 16 bytes (magic, size 16), then everything as records in stream order:
 * a HEADER_ATTR record per attr (the attr with size set, then its ids), the feature sections
 * as HEADER_FEATURE records (u64 feature id, then the section as in a file) ended by an empty
 * one of id HEADER_LAST_FEATURE, the tracing data as a HEADER_TRACING_DATA record (u32 size)
 * followed by that many bytes (padded to 8), then the records. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio_ext.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "perf_file.h"

#define NAME_ALIGN 64

struct file_section {
	uint64_t offset, size;
};

struct file_header {
	char magic[8];
	uint64_t size, attr_size;
	struct file_section attrs, data, event_types;
	uint64_t features[PF_FEAT_BITS / 64];
};

static int buf_add(struct pf_buf *b, const void *p, size_t n)
{
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 256;
		while (cap < b->len + n)
			cap *= 2;
		char *q = realloc(b->p, cap);
		if (!q)
			return -ENOMEM;
		b->p = q;
		b->cap = cap;
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
	return 0;
}

/* perf's string: u32 length (NUL included, rounded up to 64) + padded bytes */
static void buf_string(struct pf_buf *b, const char *s)
{
	static const char zeros[NAME_ALIGN];
	uint32_t n = (uint32_t)strlen(s) + 1, len = (n + NAME_ALIGN - 1) / NAME_ALIGN * NAME_ALIGN;
	buf_add(b, &len, 4);
	buf_add(b, s, n - 1);
	buf_add(b, zeros, len - (n - 1));
}

/* The temporary name beside the destination: .NAME.tmpPID */
static void tmp_name(struct perf_file *pf)
{
	const char *slash = strrchr(pf->path, '/');
	int dirlen = slash ? (int)(slash - pf->path + 1) : 0;
	snprintf(pf->tmp, sizeof(pf->tmp), "%.*s.%s.tmp%d", dirlen, pf->path, pf->path + dirlen,
		 (int)getpid());
}

/* An unnamed file in the destination's folder, or NULL (file system without O_TMPFILE). */
static FILE *open_unnamed(const char *path, mode_t mode)
{
#ifdef O_TMPFILE
	char dir[4096];
	const char *slash = strrchr(path, '/');
	if (slash)
		snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 : (int)(slash - path), path);
	else
		snprintf(dir, sizeof(dir), ".");
	int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, mode);
	if (fd < 0)
		return NULL;
	FILE *f = fdopen(fd, "w+b");
	if (!f)
		close(fd);
	return f;
#else
	(void)path;
	(void)mode;
	return NULL;
#endif
}

int perf_file__open(struct perf_file *pf, const char *path)
{
	return perf_file__open_flags(pf, path, 0);
}

int perf_file__open_flags(struct perf_file *pf, const char *path, unsigned flags)
{
	memset(pf, 0, sizeof(*pf));
	pf->flags = flags;
	snprintf(pf->path, sizeof(pf->path), "%s", path);
	mode_t mode = flags & PF_OPEN_PRIVATE ? 0600 : 0666; /* less the umask */
	/* pf->tmp stays empty while the file has no name */
	struct stat st;
	if (!stat(path, &st) && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
		/* a device such as /dev/null: written in place, as perf does; renaming a file over
		 * it would replace the device node (for root) */
		int fd = open(path, O_RDWR | O_CLOEXEC);
		pf->f = fd >= 0 ? fdopen(fd, "w+b") : NULL;
		if (!pf->f) {
			int e = errno;
			if (fd >= 0)
				close(fd);
			return -e;
		}
		pf->in_place = 1;
	} else {
		pf->f = open_unnamed(path, mode);
	}
	if (!pf->f) {
		tmp_name(pf);
		unlink(pf->tmp); /* left by a killed process of the same pid: made anew, with mode */
		int fd = open(pf->tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, mode);
		pf->f = fd >= 0 ? fdopen(fd, "w+b") : NULL;
		if (!pf->f) {
			int e = errno;
			if (fd >= 0) {
				close(fd);
				unlink(pf->tmp);
			}
			pf->tmp[0] = 0;
			return -e;
		}
	}
	setvbuf(pf->f, NULL, _IOFBF, 1 << 20);
	struct file_header h = { 0 };
	if (fwrite(&h, sizeof(h), 1, pf->f) == 1)
		return 0;
	perf_file__abort(pf);
	return -EIO;
}

int perf_file__open_pipe(struct perf_file *pf, int fd)
{
	memset(pf, 0, sizeof(*pf));
	pf->pipe = 1;
	snprintf(pf->path, sizeof(pf->path), "-");
	int own = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (own < 0)
		return -errno;
	pf->f = fdopen(own, "wb");
	if (!pf->f) {
		int e = errno;
		close(own);
		return -e;
	}
	setvbuf(pf->f, NULL, _IOFBF, 64 << 10); /* sent at each perf_file__flush */
	return 0;
}

int perf_file__add_attr(struct perf_file *pf, const struct perf_event_attr *attr, const char *name)
{
	if (pf->nattrs == PF_MAX_ATTRS)
		return -E2BIG;
	struct pf_attr *a = &pf->attrs[pf->nattrs];
	a->attr = *attr;
	snprintf(a->name, sizeof(a->name), "%s", name);
	return pf->nattrs++;
}

int perf_file__add_id(struct perf_file *pf, int idx, uint64_t id)
{
	struct pf_attr *a = &pf->attrs[idx];
	if (a->nids == a->cap) {
		int cap = a->cap ? a->cap * 2 : 8;
		uint64_t *p = realloc(a->ids, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		a->ids = p;
		a->cap = cap;
	}
	a->ids[a->nids++] = id;
	return 0;
}

void perf_file__add_group(struct perf_file *pf, int leader, int n, const char *name)
{
	if (pf->ngroups == PF_MAX_ATTRS)
		return;
	pf->groups[pf->ngroups].leader = leader;
	pf->groups[pf->ngroups].n = n;
	snprintf(pf->groups[pf->ngroups].name, sizeof(pf->groups[0].name), "%s", name);
	pf->ngroups++;
}

static int pipe_begin(struct perf_file *pf)
{
	struct { char magic[8]; uint64_t size; } h = { .magic = "PERFILE2", .size = sizeof(h) };
	if (fwrite(&h, sizeof(h), 1, pf->f) != 1)
		return -EIO;
	for (int i = 0; i < pf->nattrs; i++) {
		struct pf_attr *a = &pf->attrs[i];
		struct perf_event_attr attr = a->attr;
		attr.size = sizeof(attr); /* where the ids start */
		size_t len = sizeof(struct perf_event_header) + sizeof(attr) + a->nids * sizeof(uint64_t);
		if (len > 0xffff)
			return -E2BIG;
		struct perf_event_header rh = { .type = 64 /* HEADER_ATTR */, .size = (uint16_t)len };
		if (fwrite(&rh, sizeof(rh), 1, pf->f) != 1 || fwrite(&attr, sizeof(attr), 1, pf->f) != 1 ||
		    (a->nids && fwrite(a->ids, sizeof(uint64_t), a->nids, pf->f) != (size_t)a->nids))
			return -EIO;
		pf->data_size += len;
	}
	return 0;
}

int perf_file__begin_data(struct perf_file *pf)
{
	if (pf->pipe)
		return pipe_begin(pf);
	uint64_t off = sizeof(struct file_header);
	struct file_section ids[PF_MAX_ATTRS];
	for (int i = 0; i < pf->nattrs; i++) {
		struct pf_attr *a = &pf->attrs[i];
		ids[i].offset = off;
		ids[i].size = a->nids * sizeof(uint64_t);
		if (a->nids && fwrite(a->ids, sizeof(uint64_t), a->nids, pf->f) != (size_t)a->nids)
			return -EIO;
		off += ids[i].size;
	}
	for (int i = 0; i < pf->nattrs; i++) {
		if (fwrite(&pf->attrs[i].attr, sizeof(struct perf_event_attr), 1, pf->f) != 1 ||
		    fwrite(&ids[i], sizeof(ids[i]), 1, pf->f) != 1)
			return -EIO;
	}
	pf->data_offset = off + pf->nattrs * (sizeof(struct perf_event_attr) + sizeof(ids[0]));
	return 0;
}

static void add_desc_sections(struct perf_file *pf);

/* A HEADER_FEATURE record (type 80): u64 feature id, then the section. */
static int pipe_feature(struct perf_file *pf, uint64_t bit, const void *p, size_t len)
{
	size_t n = sizeof(struct perf_event_header) + 8 + len;
	if (n > 0xffff) {
		/* a record cannot hold it (perf has the same limit): left out, and the caller
		 * says so (perf_file__pipe_left_out) */
		if (bit < PF_FEAT_BITS)
			pf->pipe_too_big[bit] = len;
		return 0;
	}
	struct perf_event_header h = { .type = 80, .size = (uint16_t)n };
	if (fwrite(&h, sizeof(h), 1, pf->f) != 1 || fwrite(&bit, 8, 1, pf->f) != 1 ||
	    (len && fwrite(p, len, 1, pf->f) != 1))
		return -EIO;
	pf->data_size += n;
	return 0;
}

/* A HEADER_TRACING_DATA record (type 66) with the size of what follows it, then the data
 * padded to 8 bytes. */
static int pipe_tracing_data(struct perf_file *pf, const struct pf_buf *b)
{
	static const char zeros[8];
	size_t padded = (b->len + 7) / 8 * 8;
	struct { struct perf_event_header h; uint32_t size, pad; } r = {
		{ .type = 66, .size = sizeof(r) }, (uint32_t)padded, 0
	};
	if (fwrite(&r, sizeof(r), 1, pf->f) != 1 || fwrite(b->p, b->len, 1, pf->f) != 1 ||
	    (padded > b->len && fwrite(zeros, padded - b->len, 1, pf->f) != 1))
		return -EIO;
	pf->data_size += sizeof(r) + padded;
	return 0;
}

/* Send the features not sent yet that perf can take in a stream (ids below its
 * HEADER_LAST_FEATURE); the first time, with EVENT_DESC and GROUP_DESC, and end them with
 * the empty HEADER_LAST_FEATURE record perf waits for. */
static int pipe_send_features(struct perf_file *pf)
{
	bool first = !pf->pipe_feats_sent;
	pf->pipe_feats_sent = 1;
	if (first)
		add_desc_sections(pf);
	int r = 0;
	for (int bit = 1; bit < PF_PIPE_LAST_FEATURE && !r; bit++) {
		if (!pf->feat[bit].len || pf->pipe_sent[bit] || bit == PF_FEAT_TRACING_DATA)
			continue;
		pf->pipe_sent[bit] = 1;
		r = pipe_feature(pf, bit, pf->feat[bit].p, pf->feat[bit].len);
	}
	if (!r && first)
		r = pipe_feature(pf, PF_PIPE_LAST_FEATURE, NULL, 0);
	if (!r && pf->feat[PF_FEAT_TRACING_DATA].len && !pf->pipe_sent[PF_FEAT_TRACING_DATA]) {
		pf->pipe_sent[PF_FEAT_TRACING_DATA] = 1;
		r = pipe_tracing_data(pf, &pf->feat[PF_FEAT_TRACING_DATA]);
	}
	return r;
}

int perf_file__pipe_left_out(const struct perf_file *pf, char *names, size_t len)
{
	static const struct { int bit; const char *name; } known[] = {
		{ PF_FEAT_HOSTNAME, "HOSTNAME" }, { PF_FEAT_OSRELEASE, "OSRELEASE" },
		{ PF_FEAT_VERSION, "VERSION" }, { PF_FEAT_ARCH, "ARCH" },
		{ PF_FEAT_NRCPUS, "NRCPUS" }, { PF_FEAT_CPUDESC, "CPUDESC" },
		{ PF_FEAT_CMDLINE, "CMDLINE" }, { PF_FEAT_EVENT_DESC, "EVENT_DESC" },
		{ PF_FEAT_GROUP_DESC, "GROUP_DESC" },
	};
	int n = 0;
	if (len)
		names[0] = 0;
	for (int bit = 0; bit < PF_FEAT_BITS; bit++) {
		if (!pf->pipe_too_big[bit])
			continue;
		const char *name = NULL;
		for (size_t k = 0; k < sizeof(known) / sizeof(*known); k++)
			if (known[k].bit == bit)
				name = known[k].name;
		size_t o = len ? strlen(names) : 0;
		if (o + 1 < len) {
			if (name)
				snprintf(names + o, len - o, "%s%s (%zu bytes)", n ? ", " : "", name,
					 pf->pipe_too_big[bit]);
			else
				snprintf(names + o, len - o, "%sfeature %d (%zu bytes)", n ? ", " : "",
					 bit, pf->pipe_too_big[bit]);
		}
		n++;
	}
	return n;
}

int perf_file__flush(struct perf_file *pf)
{
	if (!pf->pipe)
		return 0; /* a file is complete only at commit */
	return fflush(pf->f) ? -errno : 0;
}

int perf_file__write(struct perf_file *pf, const void *rec, size_t len)
{
	if (pf->pipe && !pf->pipe_feats_sent) {
		int r = pipe_send_features(pf);
		if (r)
			return r;
	}
	if (len && fwrite(rec, len, 1, pf->f) != 1)
		return -errno ? -errno : -EIO;
	pf->data_size += len;
	return 0;
}

void perf_file__feat_string(struct perf_file *pf, int bit, const char *s)
{
	buf_string(&pf->feat[bit], s);
}

void perf_file__feat_raw(struct perf_file *pf, int bit, const void *p, size_t len)
{
	buf_add(&pf->feat[bit], p, len);
}

void perf_file__feat_u32(struct perf_file *pf, int bit, uint32_t v)
{
	buf_add(&pf->feat[bit], &v, 4);
}

static void add_desc_sections(struct perf_file *pf)
{
	struct pf_buf *b = &pf->feat[PF_FEAT_EVENT_DESC];
	uint32_t n = pf->nattrs, sz = sizeof(struct perf_event_attr);
	buf_add(b, &n, 4);
	buf_add(b, &sz, 4);
	for (int i = 0; i < pf->nattrs; i++) {
		struct pf_attr *a = &pf->attrs[i];
		uint32_t nids = a->nids;
		buf_add(b, &a->attr, sz);
		buf_add(b, &nids, 4);
		buf_string(b, a->name);
		buf_add(b, a->ids, nids * sizeof(uint64_t));
	}
	if (!pf->ngroups)
		return;
	b = &pf->feat[PF_FEAT_GROUP_DESC];
	uint32_t ng = pf->ngroups;
	buf_add(b, &ng, 4);
	for (int i = 0; i < pf->ngroups; i++) {
		uint32_t leader = pf->groups[i].leader, nr = pf->groups[i].n;
		buf_string(b, pf->groups[i].name);
		buf_add(b, &leader, 4);
		buf_add(b, &nr, 4);
	}
}

/* Give the complete file its name: an unnamed file is linked in (straight under the name when
 * nothing is there, else under the temporary name and renamed over the old file); a named
 * temporary is renamed. Returns 0 or an errno. */
/* perf record's rule: a non-empty file (through a symbolic link too) already under the name
 * becomes NAME.old, replacing one there. It is linked there first, so the name never goes
 * missing: the new file replaces it by rename; a file system without hard links renames it. */
static int backup_old(const char *path)
{
	struct stat st;
	if (stat(path, &st) || !st.st_size || S_ISDIR(st.st_mode))
		return 0;
	char old[4200];
	snprintf(old, sizeof(old), "%s.old", path);
	if (unlink(old) && errno != ENOENT)
		return errno;
	if (!link(path, old))
		return 0;
	return rename(path, old) ? errno : 0;
}

static int publish(struct perf_file *pf)
{
	if (pf->in_place)
		return 0;
	if (pf->flags & PF_OPEN_BACKUP) {
		int e = backup_old(pf->path);
		if (e)
			return e;
	}
	if (pf->tmp[0])
		return rename(pf->tmp, pf->path) ? errno : 0;
	char proc[64];
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fileno(pf->f));
	int fd = fileno(pf->f);
	/* AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH; /proc/self/fd works for anyone with /proc */
#define LINK_TO(dst) (linkat(fd, "", AT_FDCWD, (dst), AT_EMPTY_PATH) == 0 || \
		      linkat(AT_FDCWD, proc, AT_FDCWD, (dst), AT_SYMLINK_FOLLOW) == 0)
	if (LINK_TO(pf->path))
		return 0;
	if (errno != EEXIST)
		return errno;
	tmp_name(pf);
	unlink(pf->tmp); /* left by a process of the same pid that was killed at this point */
	if (!LINK_TO(pf->tmp))
		return errno;
#undef LINK_TO
	if (rename(pf->tmp, pf->path)) {
		int e = errno;
		unlink(pf->tmp);
		return e;
	}
	pf->tmp[0] = 0;
	return 0;
}

static int pipe_commit(struct perf_file *pf)
{
	int r = pipe_send_features(pf); /* what came after the first record (or all of it) */
	int e = r ? -r : fflush(pf->f) ? errno : 0;
	if (fclose(pf->f) && !e)
		e = errno ? errno : EIO;
	pf->f = NULL;
	perf_file__abort(pf); /* frees buffers */
	return -e;
}

int perf_file__commit(struct perf_file *pf)
{
	if (pf->pipe)
		return pipe_commit(pf);
	struct file_header h = { .magic = "PERFILE2" };
	h.size = sizeof(h);
	h.attr_size = sizeof(struct perf_event_attr) + sizeof(struct file_section);
	h.attrs.offset = pf->data_offset - pf->nattrs * h.attr_size;
	h.attrs.size = pf->nattrs * h.attr_size;
	h.data.offset = pf->data_offset;
	h.data.size = pf->data_size;
	add_desc_sections(pf);
	int nfeat = 0;
	for (int bit = 0; bit < PF_FEAT_BITS; bit++)
		if (pf->feat[bit].len) {
			h.features[bit / 64] |= 1ULL << (bit % 64);
			nfeat++;
		}
	/* section table, then the sections in bit order */
	uint64_t off = pf->data_offset + pf->data_size + nfeat * sizeof(struct file_section);
	int err = 0;
	for (int bit = 0; bit < PF_FEAT_BITS && !err; bit++) {
		if (!pf->feat[bit].len)
			continue;
		struct file_section s = { off, pf->feat[bit].len };
		err = fwrite(&s, sizeof(s), 1, pf->f) != 1;
		off += s.size;
	}
	for (int bit = 0; bit < PF_FEAT_BITS && !err; bit++)
		if (pf->feat[bit].len)
			err = fwrite(pf->feat[bit].p, pf->feat[bit].len, 1, pf->f) != 1;
	if (!err)
		err = fseek(pf->f, 0, SEEK_SET) || fwrite(&h, sizeof(h), 1, pf->f) != 1;
	if (!err)
		err = fflush(pf->f) || (!pf->in_place && fsync(fileno(pf->f)));
	int e = err ? (errno ? errno : EIO) : 0;
	if (!err)
		e = publish(pf);
	fclose(pf->f); /* after fflush + fsync succeeded it has nothing left to report */
	pf->f = NULL;
	if (e) {
		if (pf->tmp[0])
			unlink(pf->tmp);
		pf->tmp[0] = 0;
		perf_file__abort(pf);
		return -e;
	}
	pf->tmp[0] = 0;
	perf_file__abort(pf); /* frees buffers; the file is already in place */
	return 0;
}

void perf_file__abort(struct perf_file *pf)
{
	if (pf->f && pf->pipe) {
		__fpurge(pf->f); /* what was not sent yet stays unsent */
		fclose(pf->f);
		pf->f = NULL;
	}
	if (pf->f) {
		fclose(pf->f); /* an unnamed file is gone with its last descriptor */
		pf->f = NULL;
		if (pf->tmp[0])
			unlink(pf->tmp);
		pf->tmp[0] = 0;
	}
	for (int i = 0; i < PF_FEAT_BITS; i++) {
		free(pf->feat[i].p);
		pf->feat[i] = (struct pf_buf){ 0 };
	}
	for (int i = 0; i < pf->nattrs; i++) {
		free(pf->attrs[i].ids);
		pf->attrs[i].ids = NULL;
		pf->attrs[i].nids = pf->attrs[i].cap = 0;
	}
}
