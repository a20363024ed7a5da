/* SPDX-License-Identifier: MIT */
/*
 * The tracing-data header section of perf.data (feature bit 1), which perf
 * needs before it reads any tracepoint sample: the layout of the raw record
 * of every tracepoint recorded, as tracefs describes it. Layout, in order:
 * magic 17 08 44 "tracing", version "0.6\0", endianness byte, sizeof(long)
 * byte, u32 page size; "header_page\0" u64 size + text; "header_event\0"
 * u64 size + text; u32 count of ftrace formats (none here); u32 count of
 * systems, each "name\0" u32 count and per event u64 size + format text;
 * u32 size + kallsyms (none: hpm stores its own copy); u32 size + printk
 * formats (none); u64 size + saved cmdlines (none).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "record.h"

struct tbuf {
	char *p;
	size_t len, cap;
	int err;
};

static void put(struct tbuf *b, const void *p, size_t n)
{
	if (b->err)
		return;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 4096;
		while (cap < b->len + n)
			cap *= 2;
		char *q = realloc(b->p, cap);
		if (!q) {
			b->err = -ENOMEM;
			return;
		}
		b->p = q;
		b->cap = cap;
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	size_t cap = 8192, n = 0;
	char *p = malloc(cap);
	for (size_t got; p && (got = fread(p + n, 1, cap - n, f)) > 0;) {
		n += got;
		if (n == cap) {
			char *q = realloc(p, cap *= 2);
			if (!q) {
				free(p);
				p = NULL;
			}
			p = q;
		}
	}
	fclose(f);
	*len = n;
	return p;
}

/* tracefs events directory, where it is mounted */
static const char *events_dir(void)
{
	static const char *const dirs[] = { "/sys/kernel/tracing/events",
					    "/sys/kernel/debug/tracing/events" };
	for (unsigned i = 0; i < sizeof(dirs) / sizeof(*dirs); i++)
		if (access(dirs[i], R_OK) == 0)
			return dirs[i];
	return NULL;
}

/* "header_page" + u64 size + file text */
static int put_file_with_name(struct tbuf *b, const char *dir, const char *name)
{
	char path[512];
	size_t n;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	char *text = slurp(path, &n);
	if (!text)
		return -errno ? -errno : -ENOENT;
	uint64_t sz = n;
	put(b, name, strlen(name) + 1);
	put(b, &sz, 8);
	put(b, text, n);
	free(text);
	return 0;
}

int rec_tracing_data(struct perf_file *pf, const char *const *names, int n)
{
	const char *dir = events_dir();
	if (!dir)
		return -ENOENT;
	struct tbuf b = { 0 };
	static const char magic[] = { 0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g' };
	put(&b, magic, sizeof(magic));
	put(&b, "0.6", 4);
	uint8_t big = 0, lsize = (uint8_t)sizeof(long);
	uint32_t page = (uint32_t)sysconf(_SC_PAGESIZE);
	put(&b, &big, 1);
	put(&b, &lsize, 1);
	put(&b, &page, 4);
	int r = put_file_with_name(&b, dir, "header_page");
	if (!r)
		r = put_file_with_name(&b, dir, "header_event");
	uint32_t zero32 = 0;
	uint64_t zero64 = 0;
	put(&b, &zero32, 4); /* ftrace's own formats */
	/* one system entry per distinct subsystem, each with its events */
	char (*sys)[128] = calloc((size_t)n + 1, 128);
	int nsys = 0;
	for (int i = 0; sys && i < n; i++) {
		size_t l = strcspn(names[i], ":");
		bool seen = false;
		for (int k = 0; k < nsys; k++)
			seen |= strlen(sys[k]) == l && !strncmp(sys[k], names[i], l);
		if (!seen && l < 128) {
			memcpy(sys[nsys], names[i], l);
			sys[nsys++][l] = 0;
		}
	}
	uint32_t ns = (uint32_t)nsys;
	put(&b, &ns, 4);
	for (int k = 0; !r && k < nsys; k++) {
		put(&b, sys[k], strlen(sys[k]) + 1);
		uint32_t cnt = 0;
		for (int i = 0; i < n; i++)
			cnt += !strncmp(names[i], sys[k], strlen(sys[k])) && names[i][strlen(sys[k])] == ':';
		put(&b, &cnt, 4);
		for (int i = 0; !r && i < n; i++) {
			size_t sl = strlen(sys[k]);
			if (strncmp(names[i], sys[k], sl) || names[i][sl] != ':')
				continue;
			char ev[128], path[512];
			snprintf(ev, sizeof(ev), "%.*s", (int)strcspn(names[i] + sl + 1, ":"),
				 names[i] + sl + 1);
			snprintf(path, sizeof(path), "%s/%s/%s/format", dir, sys[k], ev);
			size_t len;
			char *text = slurp(path, &len);
			if (!text) {
				r = -ENOENT;
				break;
			}
			uint64_t sz = len;
			put(&b, &sz, 8);
			put(&b, text, len);
			free(text);
		}
	}
	free(sys);
	put(&b, &zero32, 4); /* kallsyms */
	put(&b, &zero32, 4); /* printk formats */
	put(&b, &zero64, 8); /* saved cmdlines */
	if (!r)
		r = b.err;
	if (!r)
		perf_file__feat_raw(pf, PF_FEAT_TRACING_DATA, b.p, b.len);
	free(b.p);
	return r;
}
