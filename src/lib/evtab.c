/* SPDX-License-Identifier: MIT */
/* Parser for event tables (.evt) and metric groups (.mg): docs/formats/event-tables.md */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

static char *xstrndup(const char *s, size_t n)
{
	char *p = malloc(n + 1);
	if (p) {
		memcpy(p, s, n);
		p[n] = 0;
	}
	return p;
}

/* Grow an array by one element; returns pointer to the new slot or NULL. */
static void *push(void *arrp, int *n, size_t size)
{
	void **arr = arrp;
	void *p = realloc(*arr, (size_t)(*n + 1) * size);
	if (!p)
		return NULL;
	*arr = p;
	memset((char *)p + (size_t)*n * size, 0, size);
	return (char *)p + (size_t)(*n)++ * size;
}

/* Split off the next whitespace-separated token of *s. */
static bool next_tok(const char **s, const char **tok, size_t *len)
{
	const char *p = *s;
	while (*p == ' ' || *p == '\t')
		p++;
	if (!*p)
		return false;
	*tok = p;
	while (*p && *p != ' ' && *p != '\t')
		p++;
	*len = (size_t)(p - *tok);
	*s = p;
	return true;
}

static const char *skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

static bool valid_name(const char *s, size_t n)
{
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '.' && s[i] != '-')
			return false;
	return true;
}

static bool parse_u64(const char *s, size_t n, uint64_t *out)
{
	char buf[32], *end;
	if (!n || n >= sizeof(buf))
		return false;
	memcpy(buf, s, n);
	buf[n] = 0;
	errno = 0;
	*out = strtoull(buf, &end, 0);
	return !errno && *end == 0 && buf[0] != '-';
}

/* Append "line\n" to a growing string (for repeatable `source` lines). */
static int append_line(char **dst, const char *s)
{
	size_t old = *dst ? strlen(*dst) : 0, n = strlen(s);
	char *p = realloc(*dst, old + n + 2);
	if (!p)
		return -ENOMEM;
	memcpy(p + old, s, n);
	p[old + n] = '\n';
	p[old + n + 1] = 0;
	*dst = p;
	return 0;
}

#define FAIL(...)                                                     \
	do {                                                          \
		snprintf(err, errlen, "%s:%d: ", file, lineno);       \
		size_t _o = strlen(err);                              \
		snprintf(err + _o, errlen - _o, __VA_ARGS__);         \
		ret = -EINVAL;                                        \
		goto out;                                             \
	} while (0)

int evtab_parse(struct evtab *tab, const char *text, const char *file, char kind, char *err,
		size_t errlen)
{
	int ret = 0, lineno = 0;
	bool seen_format = false, header_only = kind == 'h';
	if (header_only)
		kind = 'e';
	char *cur_group = NULL, *cur_group_desc = NULL;
	const char *p = text;
	char line[2048];

	while (*p) {
		const char *eol = strchr(p, '\n');
		size_t n = eol ? (size_t)(eol - p) : strlen(p);
		lineno++;
		if (n >= sizeof(line)) {
			snprintf(err, errlen, "%s:%d: line too long", file, lineno);
			ret = -EINVAL;
			goto out;
		}
		memcpy(line, p, n);
		line[n] = 0;
		p += n + (eol ? 1 : 0);
		/* strip trailing CR and whitespace */
		while (n && isspace((unsigned char)line[n - 1]))
			line[--n] = 0;

		const char *s = line, *kw, *a = NULL, *b = NULL;
		size_t kwl, al = 0, bl = 0;
		if (!next_tok(&s, &kw, &kwl) || kw[0] == '#')
			continue;
		/* comments after keyword-argument lines (not descriptions) */
		bool is_text_kw = (kwl == 5 && !strncmp(kw, "event", 5)) ||
				  (kwl == 5 && !strncmp(kw, "title", 5)) ||
				  (kwl == 6 && !strncmp(kw, "source", 6)) ||
				  (kwl == 5 && !strncmp(kw, "group", 5)) ||
				  (kwl == 6 && !strncmp(kw, "metric", 6));
		if (!is_text_kw) {
			char *hash = strchr(line, '#');
			if (hash) {
				*hash = 0;
				n = strlen(line);
				while (n && isspace((unsigned char)line[n - 1]))
					line[--n] = 0;
			}
		}
#define KW(x) (kwl == sizeof(x) - 1 && !strncmp(kw, x, kwl))
		if (header_only && seen_format && (KW("event") || KW("alias")))
			continue;
		if (!seen_format) {
			if (!KW("format"))
				FAIL("first line must be 'format 1'");
			if (!next_tok(&s, &a, &al) || al != 1 || a[0] != '1')
				FAIL("unsupported format (this hpm reads format 1)");
			seen_format = true;
			continue;
		}
		if (KW("pmu")) {
			if (!next_tok(&s, &a, &al) || !valid_name(a, al))
				FAIL("pmu needs a name");
			if (kind == 'm') {
				if (tab->pmu && strncmp(tab->pmu, a, al))
					FAIL("metric file for pmu '%.*s' given to table '%s'", (int)al, a,
					     tab->pmu);
				if (!tab->pmu)
					tab->pmu = xstrndup(a, al);
			} else {
				free(tab->pmu);
				tab->pmu = xstrndup(a, al);
			}
		} else if (KW("title")) {
			free(tab->title);
			tab->title = strdup(skip_ws(s));
		} else if (KW("source")) {
			if (!*skip_ws(s))
				FAIL("empty source");
			if (append_line(&tab->sources, skip_ws(s)))
				FAIL("out of memory");
		} else if (kind == 'e' && KW("isa")) {
			if (!next_tok(&s, &a, &al))
				FAIL("isa needs a value");
			free(tab->isa);
			tab->isa = xstrndup(a, al);
		} else if (kind == 'e' && KW("include")) {
			if (!next_tok(&s, &a, &al) || !valid_name(a, al))
				FAIL("include needs a table name");
			char **slot = push(&tab->includes, &tab->nincludes, sizeof(char *));
			if (!slot)
				FAIL("out of memory");
			*slot = xstrndup(a, al);
		} else if (kind == 'e' && KW("lacks")) {
			/* names only: an included table may define them later in the load order */
			bool any = false;
			while (next_tok(&s, &a, &al)) {
				if (!valid_name(a, al))
					FAIL("lacks: '%.*s' is not an event name", (int)al, a);
				char **slot = push(&tab->lacks, &tab->nlacks, sizeof(char *));
				if (!slot)
					FAIL("out of memory");
				*slot = xstrndup(a, al);
				any = true;
			}
			if (!any)
				FAIL("lacks needs event names");
		} else if (kind == 'e' && KW("detect")) {
			if (!next_tok(&s, &a, &al))
				FAIL("detect needs a kind");
			struct evtab_detect *d = push(&tab->detect, &tab->ndetect, sizeof(*d));
			if (!d)
				FAIL("out of memory");
			d->kind = xstrndup(a, al);
			d->args = strdup(skip_ws(s));
			if (strcmp(d->kind, "arm") && strcmp(d->kind, "riscv") &&
			    strcmp(d->kind, "cpuinfo") && strcmp(d->kind, "x86") &&
			    strcmp(d->kind, "isa"))
				FAIL("unknown detect kind '%s'", d->kind);
		} else if (kind == 'e' && KW("counters")) {
			uint64_t v;
			if (!next_tok(&s, &a, &al) || !parse_u64(a, al, &v) || v > 64)
				FAIL("counters needs a number 0..64");
			tab->counters = (int)v;
		} else if (kind == 'e' && KW("fixed")) {
			free(tab->fixed);
			tab->fixed = strdup(skip_ws(s));
		} else if (kind == 'e' && KW("encoding")) {
			if (!next_tok(&s, &a, &al) || al != 3 || strncmp(a, "raw", 3))
				FAIL("only 'encoding raw' is supported");
		} else if (kind == 'e' && KW("event")) {
			uint64_t code;
			if (!next_tok(&s, &a, &al) || !valid_name(a, al))
				FAIL("event needs a name of [A-Za-z0-9_.-]");
			if (!next_tok(&s, &b, &bl) || !parse_u64(b, bl, &code))
				FAIL("event %.*s: bad code '%.*s'", (int)al, a, (int)bl, b ? b : "");
			if (!*skip_ws(s))
				FAIL("event %.*s: description missing", (int)al, a);
			for (int i = 0; i < tab->nevents; i++)
				if (strlen(tab->events[i].name) == al &&
				    !strncasecmp(tab->events[i].name, a, al))
					FAIL("event %.*s defined twice", (int)al, a);
			struct evtab_event *e = push(&tab->events, &tab->nevents, sizeof(*e));
			if (!e)
				FAIL("out of memory");
			e->name = xstrndup(a, al);
			e->code = code;
			e->desc = strdup(skip_ws(s));
		} else if (kind == 'e' && KW("alias")) {
			if (!next_tok(&s, &a, &al) || !valid_name(a, al) || !next_tok(&s, &b, &bl))
				FAIL("alias needs NAME TARGET");
			struct evtab_alias *x = push(&tab->aliases, &tab->naliases, sizeof(*x));
			if (!x)
				FAIL("out of memory");
			x->name = xstrndup(a, al);
			x->target = xstrndup(b, bl);
		} else if (kind == 'm' && KW("group")) {
			if (!next_tok(&s, &a, &al) || !valid_name(a, al))
				FAIL("group needs a name");
			free(cur_group);
			free(cur_group_desc);
			cur_group = xstrndup(a, al);
			cur_group_desc = strdup(skip_ws(s));
		} else if (kind == 'm' && KW("metric")) {
			if (!cur_group)
				FAIL("metric before any group");
			if (!next_tok(&s, &a, &al) || !valid_name(a, al) || !next_tok(&s, &b, &bl) ||
			    !*skip_ws(s))
				FAIL("metric needs NAME UNIT EXPR");
			struct evtab_metric *m = push(&tab->metrics, &tab->nmetrics, sizeof(*m));
			if (!m)
				FAIL("out of memory");
			m->group = strdup(cur_group);
			m->group_desc = strdup(cur_group_desc);
			m->name = xstrndup(a, al);
			m->unit = xstrndup(b, bl);
			m->expr = strdup(skip_ws(s));
			if (expr_identifiers(m->expr, NULL, NULL) < 0)
				FAIL("metric %s: cannot parse expression '%s'", m->name, m->expr);
		} else {
			FAIL("unknown keyword '%.*s'", (int)kwl, kw);
		}
#undef KW
	}
	if (!seen_format) {
		snprintf(err, errlen, "%s: empty file (needs 'format 1')", file);
		ret = -EINVAL;
	} else if (!tab->pmu) {
		snprintf(err, errlen, "%s: no 'pmu' line", file);
		ret = -EINVAL;
	} else if (kind == 'e' && !tab->sources) {
		snprintf(err, errlen, "%s: no 'source' line (say where the values come from)", file);
		ret = -EINVAL;
	}
out:
	free(cur_group);
	free(cur_group_desc);
	return ret;
}

void evtab_free(struct evtab *t)
{
	free(t->pmu);
	free(t->title);
	free(t->isa);
	free(t->sources);
	free(t->fixed);
	for (int i = 0; i < t->nincludes; i++)
		free(t->includes[i]);
	free(t->includes);
	for (int i = 0; i < t->nlacks; i++)
		free(t->lacks[i]);
	free(t->lacks);
	for (int i = 0; i < t->ndetect; i++) {
		free(t->detect[i].kind);
		free(t->detect[i].args);
	}
	free(t->detect);
	for (int i = 0; i < t->nevents; i++) {
		free(t->events[i].name);
		free(t->events[i].desc);
	}
	free(t->events);
	for (int i = 0; i < t->naliases; i++) {
		free(t->aliases[i].name);
		free(t->aliases[i].target);
	}
	free(t->aliases);
	for (int i = 0; i < t->nmetrics; i++) {
		struct evtab_metric *m = &t->metrics[i];
		free(m->group);
		free(m->group_desc);
		free(m->name);
		free(m->unit);
		free(m->expr);
	}
	free(t->metrics);
	memset(t, 0, sizeof(*t));
}
