/* SPDX-License-Identifier: MIT */
/*
 * Region markers. Each thread gets its own event set on its first marker
 * (events from HPM_REGION_EVENTS); begin/end read the set and the difference
 * is added to a process-wide table under a mutex. The table is written as
 * JSON at exit (atomically: temp file + rename, so no half-written file).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "hpm/region.h"
#include "internal.h"

#define MAX_DEPTH 32
#define MAX_EV 16
#define MAX_REGIONS 256

struct region_agg {
	char name[64];
	uint64_t calls;
	double sum[MAX_EV];
};

struct open_region {
	char name[64];
	struct hpm_value start[MAX_EV];
};

struct thread_state {
	struct hpm_ctx *ctx;
	struct hpm_evset *set;
	int nev;
	bool failed;
	int depth;
	struct open_region stack[MAX_DEPTH];
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct region_agg regions[MAX_REGIONS];
static int nregions;
static char ev_names[MAX_EV][128];
static int nev_global = -1;
static uint64_t mismatches, dropped_regions;
static char setup_error[512];
static bool atexit_done;
static __thread struct thread_state *ts;

static void write_at_exit(void)
{
	hpm_region__flush(NULL);
}

static struct thread_state *state(void)
{
	if (ts)
		return ts->failed ? NULL : ts;
	ts = calloc(1, sizeof(*ts));
	if (!ts)
		return NULL;
	const char *list = getenv("HPM_REGION_EVENTS");
	if (!list || !*list)
		list = "task-clock,page-faults";
	int r = hpm_ctx__new(&ts->ctx);
	if (!r)
		r = hpm_evset__new(ts->ctx, &ts->set);
	if (!r)
		r = hpm_evset__add_list(ts->set, list);
	if (r >= 0 && hpm_evset__nr(ts->set) > MAX_EV)
		r = hpm__err(ts->ctx, -E2BIG, "HPM_REGION_EVENTS lists more than %d events", MAX_EV);
	if (r >= 0)
		r = hpm_evset__start(ts->set);
	pthread_mutex_lock(&lock);
	if (!atexit_done) {
		atexit(write_at_exit);
		atexit_done = true;
	}
	if (r < 0) {
		snprintf(setup_error, sizeof(setup_error), "%s", hpm_ctx__last_error(ts->ctx));
		ts->failed = true;
	} else if (nev_global < 0) {
		nev_global = hpm_evset__nr(ts->set);
		for (int i = 0; i < nev_global; i++)
			snprintf(ev_names[i], sizeof(ev_names[i]), "%s", hpm_evset__name(ts->set, i));
	}
	pthread_mutex_unlock(&lock);
	if (r < 0) {
		/* one line on stderr, once: regions are best effort, the program goes on */
		fprintf(stderr, "hpm regions: disabled: %s\n", setup_error);
		return NULL;
	}
	ts->nev = hpm_evset__nr(ts->set);
	return ts;
}

HPM_API int hpm_region__begin(const char *name)
{
	struct thread_state *t = state();
	if (!t)
		return -ENODEV;
	if (t->depth >= MAX_DEPTH) {
		pthread_mutex_lock(&lock);
		mismatches++;
		pthread_mutex_unlock(&lock);
		return -E2BIG;
	}
	struct open_region *o = &t->stack[t->depth++];
	snprintf(o->name, sizeof(o->name), "%s", name);
	return hpm_evset__read_all(t->set, o->start);
}

HPM_API int hpm_region__end(const char *name)
{
	struct thread_state *t = state();
	if (!t)
		return -ENODEV;
	struct hpm_value now[MAX_EV];
	int r = hpm_evset__read_all(t->set, now);
	if (r < 0)
		return r;
	if (!t->depth || strcmp(t->stack[t->depth - 1].name, name)) {
		/* end without a matching begin: counted in the output, never guessed */
		pthread_mutex_lock(&lock);
		mismatches++;
		pthread_mutex_unlock(&lock);
		return -EINVAL;
	}
	struct open_region *o = &t->stack[--t->depth];
	pthread_mutex_lock(&lock);
	struct region_agg *a = NULL;
	for (int i = 0; i < nregions && !a; i++)
		if (!strcmp(regions[i].name, o->name))
			a = &regions[i];
	if (!a && nregions < MAX_REGIONS) {
		a = &regions[nregions++];
		snprintf(a->name, sizeof(a->name), "%s", o->name);
	}
	if (a) {
		a->calls++;
		for (int i = 0; i < t->nev; i++)
			a->sum[i] += now[i].scaled - o->start[i].scaled;
	} else {
		dropped_regions++;
	}
	pthread_mutex_unlock(&lock);
	return 0;
}

/* one JSON string writer for the library and hpm (src/util/out.c calls this one) */
void hpm__json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

HPM_API int hpm_region__flush(const char *path)
{
	if (!path)
		path = getenv("HPM_REGION_OUT");
	if (!path || !*path)
		path = "hpm-regions.json";
	char tmp[4096];
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
	pthread_mutex_lock(&lock);
	FILE *f = fopen(tmp, "w");
	if (!f) {
		int e = errno;
		pthread_mutex_unlock(&lock);
		fprintf(stderr, "hpm regions: cannot write %s: %s\n", path, strerror(e));
		return -e;
	}
	fprintf(f, "{\n  \"format\": \"hpm-regions\",\n  \"version\": 1,\n  \"pid\": %d,\n",
		(int)getpid());
	fprintf(f, "  \"events\": [");
	for (int i = 0; i < nev_global; i++) {
		fputs(i ? ", " : "", f);
		hpm__json_string(f, ev_names[i]);
	}
	fprintf(f, "],\n  \"unmatched_markers\": %llu,\n  \"dropped_regions\": %llu,\n",
		(unsigned long long)mismatches, (unsigned long long)dropped_regions);
	fprintf(f, "  \"error\": ");
	if (setup_error[0])
		hpm__json_string(f, setup_error);
	else
		fputs("null", f);
	fprintf(f, ",\n  \"regions\": [");
	for (int r = 0; r < nregions; r++) {
		fprintf(f, "%s\n    {\"name\": ", r ? "," : "");
		hpm__json_string(f, regions[r].name);
		fprintf(f, ", \"calls\": %llu, \"values\": {", (unsigned long long)regions[r].calls);
		for (int i = 0; i < nev_global; i++) {
			fputs(i ? ", " : "", f);
			hpm__json_string(f, ev_names[i]);
			fprintf(f, ": %.0f", regions[r].sum[i]);
		}
		fputs("}}", f);
	}
	fprintf(f, "%s]\n}\n", nregions ? "\n  " : "");
	int bad = ferror(f);
	bad |= fclose(f);
	int ret = 0;
	if (bad || rename(tmp, path) < 0) {
		ret = -(errno ? errno : EIO);
		unlink(tmp);
		fprintf(stderr, "hpm regions: cannot write %s: %s\n", path, strerror(-ret));
	}
	pthread_mutex_unlock(&lock);
	return ret;
}
