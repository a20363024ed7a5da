/* SPDX-License-Identifier: MIT */
/*
 * Event lists in perf's syntax, split once for every tool (hpm stat, record,
 * top, region markers): "a,b" separate events, "{a,b}" is a group, "{a,b}:u"
 * gives every member the modifiers, "pmu/event=1,umask=2/" keeps its commas,
 * and a tracepoint glob ("sched:sched_*") becomes every tracepoint it
 * matches, in name order.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

#define TOK_MAX 256

struct emit {
	hpm_list_cb cb;
	void *arg;
	unsigned flags;   /* of the event waiting to be emitted */
	char pending[TOK_MAX];
	bool have;
	int n;
};

/* Events are emitted one behind, so the last member of a group can carry
 * HPM_LIST_GROUP_END. */
static int push(struct emit *e, const char *name, unsigned flags)
{
	int r = 0;
	if (e->have)
		r = e->cb(e->pending, e->flags, e->arg);
	if (r)
		return r;
	copy_str(e->pending, sizeof(e->pending), name);
	e->flags = flags;
	e->have = true;
	e->n++;
	return 0;
}

static int flush(struct emit *e, unsigned extra)
{
	if (!e->have)
		return 0;
	e->have = false;
	return e->cb(e->pending, e->flags | extra, e->arg);
}

struct glob_arg {
	struct emit *e;
	unsigned flags;
	bool in_group;
	int n, err;
};

static int glob_one(const char *sys, const char *name, uint64_t id, void *arg)
{
	struct glob_arg *g = arg;
	char full[TOK_MAX];
	(void)id;
	snprintf(full, sizeof(full), "%s:%s", sys, name);
	int r = push(g->e, full, g->flags);
	/* only the first of a glob can open a group */
	g->flags = g->in_group ? HPM_LIST_IN_GROUP : 0;
	g->n++;
	return r;
}

/* Member modifiers after '}' go to every member: "{a,b:k}:u" -> a:u, b:ku. */
static void add_group_mods(char *name, size_t len, const char *mods)
{
	if (!*mods)
		return;
	const char *slash = strchr(name, '/') ? pmu_spec_end(name) : NULL;
	bool has_colon = false;
	if (slash)
		has_colon = *slash != 0;
	else
		for (const char *p = name; *p; p++)
			if (p[0] == ':' && p[1] != ':' && (p == name || p[-1] != ':'))
				has_colon = true;
	size_t n = strlen(name);
	snprintf(name + n, len - n, "%s%s", has_colon || slash ? "" : ":", mods);
}

HPM_API int hpm_ctx__parse_list(struct hpm_ctx *ctx, const char *list, hpm_list_cb cb, void *arg)
{
	if (!ctx || !list || !cb)
		return -EINVAL;
	struct emit e = { .cb = cb, .arg = arg };
	const char *p = list;
	bool in_group = false;
	int group_first = 0, r = 0;
	/* members of the open group wait until '}' tells their modifiers: where
	 * they are in the list (no copies: a fresh process pays per stack page) */
	const char *mstart[64];
	size_t mlen[64];
	int nmembers = 0;
	while (*p && !r) {
		while (*p == ',' || isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		bool opens = false;
		if (*p == '{') {
			if (in_group)
				return hpm__err(ctx, -EINVAL, "nested '{' in event list '%s'", list);
			in_group = opens = true;
			nmembers = 0;
			group_first = e.n;
			p++;
			while (isspace((unsigned char)*p))
				p++;
		}
		char tok[TOK_MAX];
		size_t n = 0;
		bool in_terms = false;
		const char *start = p;
		while (*p && (in_terms || (*p != ',' && *p != '}' && *p != '{'))) {
			if (*p == '/')
				in_terms = !in_terms;
			if (n + 1 >= sizeof(tok))
				return hpm__err(ctx, -EINVAL, "event name too long in '%s'", list);
			tok[n++] = *p++;
		}
		while (n && isspace((unsigned char)tok[n - 1]))
			n--;
		tok[n] = 0;
		if (!n)
			return hpm__err(ctx, -EINVAL, "empty event name in '%s'", list);
		if (in_terms)
			return hpm__err(ctx, -EINVAL, "missing '/' at the end of '%s'", tok);
		if (in_group) {
			if (nmembers == 64)
				return hpm__err(ctx, -E2BIG, "a group holds at most 64 events in '%s'",
						list);
			mstart[nmembers] = start;
			mlen[nmembers++] = n;
			(void)opens;
		} else if (strpbrk(tok, "*?[") && strchr(tok, ':') && !strchr(tok, '/')) {
			struct glob_arg g = { .e = &e, .flags = 0 };
			r = tracepoint_for_each(ctx, tok, glob_one, &g);
			if (r < 0)
				return r;
			if (!r && !g.n)
				return hpm__err(ctx, -ENOENT, "no tracepoint matches '%s' (hpm list "
						"tracepoint)", tok);
		} else {
			r = push(&e, tok, 0);
		}
		if (*p == '}') {
			if (!in_group)
				return hpm__err(ctx, -EINVAL, "unbalanced '}' in event list '%s'", list);
			p++;
			char mods[32] = "";
			if (*p == ':') {
				size_t m = strcspn(p + 1, ",{} \t");
				if (m >= sizeof(mods))
					return hpm__err(ctx, -EINVAL, "bad group modifier in '%s'", list);
				memcpy(mods, p + 1, m);
				mods[m] = 0;
				p += 1 + m;
			}
			for (int i = 0; i < nmembers && !r; i++) {
				char name[TOK_MAX];
				memcpy(name, mstart[i], mlen[i]);
				name[mlen[i]] = 0;
				add_group_mods(name, sizeof(name), mods);
				if (strpbrk(name, "*?[") && strchr(name, ':') && !strchr(name, '/')) {
					struct glob_arg g = { .e = &e, .in_group = true,
							      .flags = i ? HPM_LIST_IN_GROUP
									 : HPM_LIST_IN_GROUP |
										   HPM_LIST_GROUP_START };
					r = tracepoint_for_each(ctx, name, glob_one, &g);
					if (r < 0)
						return r;
					if (!g.n)
						return hpm__err(ctx, -ENOENT, "no tracepoint matches '%s'",
								name);
				} else {
					r = push(&e, name, i ? HPM_LIST_IN_GROUP
							     : HPM_LIST_IN_GROUP | HPM_LIST_GROUP_START);
				}
			}
			if (!r)
				r = flush(&e, HPM_LIST_GROUP_END);
			in_group = false;
			(void)group_first;
		} else if (*p == '{') {
			return hpm__err(ctx, -EINVAL, "missing ',' before '{' in '%s'", list);
		}
	}
	if (r)
		return r;
	if (in_group)
		return hpm__err(ctx, -EINVAL, "missing '}' in event list '%s'", list);
	r = flush(&e, 0);
	return r ? r : e.n;
}
