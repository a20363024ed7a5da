/* SPDX-License-Identifier: MIT */
/*
 * Event sets: open events in perf groups (split when the kernel refuses a
 * group), start/stop/reset/read, per-thread, inherited, attached or per-CPU.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "internal.h"

#define HPM_MAX_EVENTS 256
/* A lone leader reads {value, enabled, running}: the kernel's group read
 * costs ~30% more per read(2). When a second event joins, the leader is
 * reopened with GROUP|ID so one read(2) returns the whole group. */
#define READ_FORMAT_ONE (PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING)
#define READ_FORMAT_GROUP (READ_FORMAT_ONE | PERF_FORMAT_ID | PERF_FORMAT_GROUP)

struct evt {
	char name[128];  /* printed name (with modifiers) */
	char base[128];  /* name without modifiers, for metric lookup */
	bool mods;       /* given with explicit modifiers (:u, :k...): not a metric's event */
	struct perf_event_attr attr;
	int group;
	bool is_hw;
	bool precise_max; /* ":P": lower precise_ip until the PMU accepts it */
	int *fd;         /* one per CPU of the set */
	uint64_t *id;    /* kernel event id per CPU */
	void *page;      /* perf mmap page (self-monitoring hardware events) */
};

struct group {
	int first, n;   /* event indices [first, first + n) */
	bool strict;    /* from {...}: must open whole */
	bool closed;    /* no more members */
};

struct metric {
	char *name, *unit, *expr;
};

struct hpm_evset {
	struct hpm_ctx *ctx;
	pid_t pid;
	int cpu;
	unsigned flags;
	int ncpus;
	int *cpus;   /* &cpu_one, or an allocated list for HPM_CPU_ALL */
	int cpu_one;
	struct evt *ev;
	int nev;
	struct group *grp;
	int ngrp;
	int group_max;
	bool group_max_set;
	bool in_brace;
	bool started; /* start() or enable_on_exec ran: leaders must not be reopened */
	struct metric *met;
	int nmet;
	/* #slots of the metrics, read from sysfs once, when a metric first needs it */
	bool slots_read;
	double slots;         /* 0: none, slots_why says why */
	char slots_why[200];
	uint64_t *buf; /* group read buffer */
	size_t buflen;
	long pagesize;
	/* events metrics need that the kernel would not open for this machine (perf stat's
	 * <not supported>): the metrics that use one are unavailable, the rest count */
	bool in_metric_group; /* add_one called for a metric group's event */
	struct missing {
		char name[128];
		char why[sizeof(((struct hpm_ctx *)0)->err)];
	} *miss;
	int nmiss;
};

int sys_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
			unsigned long flags)
{
	long r = syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags);
	return r < 0 ? -errno : (int)r;
}

int (*perf_open_fn)(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
		    unsigned long flags) = sys_perf_event_open;

HPM_API double hpm_scale(uint64_t raw, uint64_t enabled, uint64_t running)
{
	if (!running)
		return 0.0;
	if (running >= enabled)
		return (double)raw;
	return (double)raw * ((double)enabled / (double)running);
}

static int online_cpus(int **cpus)
{
	char buf[1024];
	int n = 0, cap = 64;
	*cpus = malloc(sizeof(int) * (size_t)cap);
	if (!*cpus)
		return -ENOMEM;
	if (read_small_file("/sys/devices/system/cpu/online", buf, sizeof(buf)) <= 0) {
		long c = sysconf(_SC_NPROCESSORS_ONLN);
		for (int i = 0; i < c && i < cap; i++)
			(*cpus)[n++] = i;
		return n;
	}
	/* "0-3,5,7-8" */
	for (char *save, *t = strtok_r(buf, ",\n", &save); t; t = strtok_r(NULL, ",\n", &save)) {
		int a, b;
		if (sscanf(t, "%d-%d", &a, &b) != 2)
			b = a = atoi(t);
		for (int c = a; c <= b; c++) {
			if (n == cap) {
				int *p = realloc(*cpus, sizeof(int) * (size_t)(cap *= 2));
				if (!p)
					return -ENOMEM;
				*cpus = p;
			}
			(*cpus)[n++] = c;
		}
	}
	return n;
}

HPM_API int hpm_evset__new(struct hpm_ctx *ctx, struct hpm_evset **out)
{
	if (!ctx || !out)
		return -EINVAL;
	struct hpm_evset *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->ctx = ctx;
	s->pid = 0;
	s->cpu = -1;
	s->ncpus = 1;
	s->cpu_one = -1;
	s->cpus = &s->cpu_one; /* no allocation for the common single-target case */
	*out = s;
	return 0;
}

static void close_event(struct hpm_evset *s, struct evt *e)
{
	if (e->page)
		munmap(e->page, (size_t)s->pagesize);
	for (int c = 0; e->fd && c < s->ncpus; c++)
		if (e->fd[c] >= 0)
			close(e->fd[c]);
	free(e->fd);
	free(e->id);
	e->fd = NULL;
	e->id = NULL;
	e->page = NULL;
}

HPM_API void hpm_evset__delete(struct hpm_evset *s)
{
	if (!s)
		return;
	/* members before leaders: closing a leader first would orphan siblings */
	for (int i = s->nev - 1; i >= 0; i--)
		close_event(s, &s->ev[i]);
	for (int i = 0; i < s->nmet; i++) {
		free(s->met[i].name);
		free(s->met[i].unit);
		free(s->met[i].expr);
	}
	free(s->met);
	free(s->miss);
	free(s->ev);
	free(s->grp);
	if (s->cpus != &s->cpu_one)
		free(s->cpus);
	free(s->buf);
	free(s);
}

HPM_API int hpm_evset__set_target(struct hpm_evset *s, pid_t pid, int cpu, unsigned flags)
{
	if (!s)
		return -EINVAL;
	if (s->nev)
		return hpm__err(s->ctx, -EBUSY, "set the target before adding events");
	if (pid < -1 || (pid == -1 && cpu == -1) || cpu < HPM_CPU_ALL)
		return hpm__err(s->ctx, -EINVAL,
				"bad target: pid %d, cpu %d (pid -1 needs a CPU or HPM_CPU_ALL)", pid,
				cpu);
	if (s->cpus != &s->cpu_one)
		free(s->cpus);
	s->cpus = &s->cpu_one;
	s->ncpus = 1;
	s->cpu_one = cpu;
	if (cpu == HPM_CPU_ALL) {
		int *list = NULL, n = online_cpus(&list);
		if (n <= 0) {
			free(list);
			s->cpu_one = -1;
			return hpm__err(s->ctx, n ? n : -ENODEV, "cannot list online CPUs");
		}
		s->cpus = list;
		s->ncpus = n;
	}
	s->pid = pid;
	s->cpu = cpu;
	s->flags = flags;
	return 0;
}

HPM_API int hpm_evset__set_group_max(struct hpm_evset *s, int max)
{
	if (!s || max < 0)
		return -EINVAL;
	s->group_max = max;
	s->group_max_set = true;
	return 0;
}

static int default_group_max(struct hpm_evset *s)
{
	if (s->group_max_set)
		return s->group_max;
	/* the table's counters plus its fixed counters; unknown -> let the kernel decide.
	 * Only consulted once a hardware event joins, so software-only sets never detect. */
	ctx_detect(s->ctx);
	struct evtab *t = s->ctx->cpu_tab;
	if (!t || !t->counters)
		return 0;
	int fixed = 0;
	for (const char *p = t->fixed; p && *p;) {
		while (*p == ' ')
			p++;
		if (*p)
			fixed++;
		while (*p && *p != ' ')
			p++;
	}
	return t->counters + fixed;
}

/* Open event e on every CPU of the set, in group g (leader = first event). */
static int open_in_group(struct hpm_evset *s, struct evt *e, struct group *g, bool leader,
			 uint64_t read_format)
{
	struct evt *lead = leader ? NULL : &s->ev[g->first];
	e->fd = malloc(sizeof(int) * (size_t)s->ncpus);
	e->id = calloc((size_t)s->ncpus, sizeof(uint64_t));
	if (!e->fd || !e->id)
		return -ENOMEM;
	for (int c = 0; c < s->ncpus; c++)
		e->fd[c] = -1;
	/* An event set counts; it never samples (no ring buffer is read). A period= or freq=
	 * term would still arm the kernel's overflow timer or interrupt on every period
	 * (software/config=1,period=1000/ fires an hrtimer each microsecond and inflates
	 * task-clock ~15x), so drop them as perf stat does; hpm record keeps its own attr. */
	e->attr.sample_period = 0;
	e->attr.freq = 0;
	e->attr.disabled = leader;
	e->attr.enable_on_exec = leader && (s->flags & HPM_TARGET_ENABLE_ON_EXEC);
	e->attr.inherit = !!(s->flags & HPM_TARGET_INHERIT);
	e->attr.read_format = read_format;
	bool self_hw = e->is_hw && s->pid == 0 && s->cpu == -1 && !(s->flags & HPM_TARGET_INHERIT);
	if (self_hw && e->attr.type != PERF_TYPE_SOFTWARE)
		arch_prepare_self_attr(&e->attr);
	for (int c = 0; c < s->ncpus; c++) {
		int fd = perf_open_fn(&e->attr, s->pid, s->cpus[c], lead ? lead->fd[c] : -1,
				      PERF_FLAG_FD_CLOEXEC);
		if ((fd == -EOPNOTSUPP || fd == -EINVAL) && e->precise_max && e->attr.precise_ip) {
			/* ":P" like perf: the highest precise level this PMU takes */
			e->attr.precise_ip--;
			c--;
			continue;
		}
		if (fd == -EOPNOTSUPP && e->attr.config1) {
			/* the PMU refused the user-access opt-in: count through read(2) */
			e->attr.config1 = 0;
			c--;
			continue;
		}
		if (fd < 0) {
			for (int k = 0; k < c; k++) {
				close(e->fd[k]);
				e->fd[k] = -1;
			}
			return fd;
		}
		e->fd[c] = fd;
		if (e->attr.read_format & PERF_FORMAT_ID)
			ioctl(fd, PERF_EVENT_IOC_ID, &e->id[c]);
	}
	/* The user page lets a self-monitoring thread read hardware counters
	 * without a syscall; software counters never live in a PMU register. */
	if (e->is_hw && s->pid == 0 && s->cpu == -1 && !e->attr.inherit) {
		if (!s->pagesize)
			s->pagesize = sysconf(_SC_PAGESIZE);
		void *p = mmap(NULL, (size_t)s->pagesize, PROT_READ, MAP_SHARED, e->fd[0], 0);
		e->page = p == MAP_FAILED ? NULL : p;
	}
	return 0;
}

static struct group *new_group(struct hpm_evset *s, int first, bool strict)
{
	struct group *g = realloc(s->grp, sizeof(*g) * (size_t)(s->ngrp + 1));
	if (!g)
		return NULL;
	s->grp = g;
	g = &s->grp[s->ngrp++];
	g->first = first;
	g->n = 0;
	g->strict = strict;
	g->closed = false;
	return g;
}

/* Reopen a lone leader with the group read format before a sibling joins. */
static int regroup_leader(struct hpm_evset *s, struct group *g)
{
	struct evt *lead = &s->ev[g->first];
	struct evt fresh = *lead;
	fresh.fd = NULL;
	fresh.id = NULL;
	fresh.page = NULL;
	int r = open_in_group(s, &fresh, g, true, READ_FORMAT_GROUP);
	if (r < 0) {
		close_event(s, &fresh);
		return r;
	}
	close_event(s, lead);
	*lead = fresh;
	return 0;
}

static bool is_group_error(int err)
{
	/* what kernels answer when a group cannot be scheduled or mixes PMUs */
	return err == -EINVAL || err == -ENOSPC || err == -EOPNOTSUPP || err == -E2BIG;
}

static int add_one(struct hpm_evset *s, const char *name, bool brace_start)
{
	struct hpm_ctx *ctx = s->ctx;
	if (s->nev >= HPM_MAX_EVENTS)
		return hpm__err(ctx, -E2BIG, "too many events: an event set holds at most %d",
				HPM_MAX_EVENTS);
	struct resolved r;
	int ret = names_resolve(ctx, name, &r);
	if (ret < 0)
		return ret;
	struct evt *arr = realloc(s->ev, sizeof(*arr) * (size_t)(s->nev + 1));
	if (!arr)
		return -ENOMEM;
	s->ev = arr;
	struct evt *e = &s->ev[s->nev];
	memset(e, 0, sizeof(*e));
	copy_str(e->name, sizeof(e->name), r.canon);
	const char *sep = find_pmu_sep(r.canon);
	/* metric lookup uses the bare name: no pmu:: prefix, no modifiers */
	copy_str(e->base, sizeof(e->base), sep ? sep + 2 : r.canon);
	bool explicit_mods = false;
	for (char *c = e->base; *c; c++)
		if (*c == ':') {
			*c = 0;
			explicit_mods = true;
			break;
		}
	e->attr = r.attr;
	e->is_hw = r.is_hw;
	e->precise_max = r.precise_max;
	e->mods = explicit_mods;

	struct group *g = s->ngrp ? &s->grp[s->ngrp - 1] : NULL;
	if (g && !g->closed && !g->strict && (e->is_hw || s->group_max_set)) {
		int gmax = default_group_max(s);
		if (gmax && g->n >= gmax)
			g->closed = true;
	}
	bool join = g && !g->closed && !brace_start && (!g->strict || s->in_brace);
	bool fell_back = false, split = false;
retry:
	if (join && g->n == 1 && !(s->ev[g->first].attr.read_format & PERF_FORMAT_GROUP) &&
	    s->started) {
		/* reopening the leader would lose its count: counting already began */
		g->closed = true;
		join = false;
	}
	if (join && g->n == 1 && !(s->ev[g->first].attr.read_format & PERF_FORMAT_GROUP)) {
		ret = regroup_leader(s, g);
		if (ret < 0)
			return explain_open_error(ctx, ret, s->ev[g->first].name,
						  &s->ev[g->first].attr, s->pid, s->cpus[0]);
	}
	if (join) {
		ret = open_in_group(s, e, g, false, READ_FORMAT_GROUP);
		if (ret < 0 && is_group_error(ret) && !g->strict) {
			/* the kernel will not schedule it with the others: start a new group */
			close_event(s, e);
			g->closed = true;
			join = false;
			split = true;
			goto retry;
		}
		if (ret < 0 && g->strict && is_group_error(ret)) {
			close_event(s, e);
			return hpm__err(ctx, -E2BIG,
					"group {...} cannot be counted together: '%s' does not fit with "
					"the %d event(s) before it (too many events for the PMU's "
					"counters, or events of different PMUs); drop the braces and hpm "
					"splits the group",
					e->name, g->n);
		}
	} else {
		ret = open_in_group(s, e, &(struct group){ .first = s->nev }, true, READ_FORMAT_ONE);
	}
	if ((ret == -EACCES || ret == -EPERM) && !explicit_mods && !e->attr.exclude_kernel &&
	    !fell_back) {
		/* like perf: without a modifier, count user space only when the kernel
		 * forbids kernel counting (perf_event_paranoid >= 2, no CAP_PERFMON) */
		close_event(s, e);
		e->attr.exclude_kernel = 1;
		e->attr.exclude_hv = 1;
		fell_back = true;
		size_t l = strlen(e->name);
		copy_str(e->name + l, sizeof(e->name) - l, ":u");
		goto retry;
	}
	if (ret < 0) {
		close_event(s, e);
		/* a metric group's event that cannot be counted alone either: the event, not
		 * the group, was the problem, so the group stays open and the group's other
		 * events stay together (elsewhere a failed add keeps what it did: the PAPI
		 * layer's conflict and multiplexing rules build on it) */
		if (split && s->in_metric_group)
			g->closed = false;
		if (fell_back) /* report what the user asked for, not our retry */
			e->name[strlen(e->name) - 2] = 0;
		return explain_open_error(ctx, ret, e->name, &e->attr, s->pid, s->cpus[0]);
	}
	if (!join) {
		g = new_group(s, s->nev, s->in_brace);
		if (!g) {
			close_event(s, e);
			return -ENOMEM;
		}
	}
	e->group = (int)(g - s->grp);
	g->n++;
	return s->nev++;
}

HPM_API int hpm_evset__add(struct hpm_evset *s, const char *name)
{
	if (!s || !name)
		return -EINVAL;
	return add_one(s, name, false);
}

static int add_list_cb(const char *name, unsigned flags, void *arg)
{
	struct hpm_evset *s = arg;
	bool start = flags & HPM_LIST_GROUP_START;
	if (start)
		s->in_brace = true;
	int r = add_one(s, name, start);
	if (r < 0)
		return r;
	if (flags & HPM_LIST_GROUP_END) {
		s->in_brace = false;
		s->grp[s->ngrp - 1].closed = true;
	}
	return 0;
}

HPM_API int hpm_evset__add_list(struct hpm_evset *s, const char *list)
{
	if (!s || !list)
		return -EINVAL;
	int r = hpm_ctx__parse_list(s->ctx, list, add_list_cb, s);
	s->in_brace = false;
	return r;
}

static int find_event(const struct hpm_evset *s, const char *base)
{
	for (int i = 0; i < s->nev; i++)
		if (!s->ev[i].mods && streq_nocase(s->ev[i].base, base))
			return i;
	return -1;
}

static int find_missing(const struct hpm_evset *s, const char *name)
{
	for (int i = 0; i < s->nmiss; i++)
		if (streq_nocase(s->miss[i].name, name))
			return i;
	return -1;
}

/* The kernel's answers perf stat shows as <not supported>: no such event on this PMU or
 * kernel (not a permission, not a resource limit). */
static bool open_unsupported(int err)
{
	return err == -ENOENT || err == -EOPNOTSUPP || err == -ENODEV || err == -ENXIO ||
	       err == -ENOSYS || err == -EINVAL;
}

struct mg_collect {
	struct hpm_evset *s;
	int nmet;
	int err;
};

static int add_metric_event(const char *ident, void *arg)
{
	struct mg_collect *mc = arg;
	struct hpm_evset *s = mc->s;
	struct resolved r;
	int ret = names_resolve(s->ctx, ident, &r);
	if (ret < 0)
		return ret;
	char base[128];
	snprintf(base, sizeof(base), "%s", r.canon);
	if (find_event(s, base) >= 0 || find_missing(s, base) >= 0)
		return 0;
	s->in_metric_group = true;
	ret = add_one(s, ident, false);
	s->in_metric_group = false;
	if (ret >= 0 || !open_unsupported(ret))
		return ret < 0 ? ret : 0;
	struct missing *m = realloc(s->miss, sizeof(*m) * (size_t)(s->nmiss + 1));
	if (!m)
		return -ENOMEM;
	s->miss = m;
	m = &s->miss[s->nmiss++];
	copy_str(m->name, sizeof(m->name), base);
	copy_str(m->why, sizeof(m->why), hpm_ctx__last_error(s->ctx));
	return 0;
}

static int collect_metric(const struct hpm_metric_info *mi, void *arg)
{
	struct mg_collect *mc = arg;
	struct hpm_evset *s = mc->s;
	int r = expr_identifiers(mi->expr, add_metric_event, mc);
	if (r < 0) {
		mc->err = r;
		return 1;
	}
	if (strstr(mi->expr, HPM_EXPR_SLOTS) && !s->slots_read) {
		s->slots_read = true;
		if (core_pmu_slots(&s->slots, s->slots_why, sizeof(s->slots_why)) < 0)
			s->slots = 0; /* never a guessed width: the metric is unavailable */
	}
	struct metric *m = realloc(s->met, sizeof(*m) * (size_t)(s->nmet + 1));
	if (!m) {
		mc->err = -ENOMEM;
		return 1;
	}
	s->met = m;
	m = &s->met[s->nmet++];
	m->name = strdup(mi->name);
	m->unit = strdup(mi->unit);
	m->expr = strdup(mi->expr);
	mc->nmet++;
	return 0;
}

HPM_API int hpm_evset__add_metric_group(struct hpm_evset *s, const char *group)
{
	if (!s || !group)
		return -EINVAL;
	/* a metric group's events form their own groups so ratios compare like with like */
	if (s->ngrp)
		s->grp[s->ngrp - 1].closed = true;
	struct mg_collect mc = { .s = s };
	int r = hpm_ctx__for_each_metric(s->ctx, NULL, group, collect_metric, &mc);
	if (mc.err)
		return mc.err;
	if (r < 0)
		return r;
	return mc.nmet;
}

static int group_ioctl(struct hpm_evset *s, unsigned long req)
{
	for (int g = 0; g < s->ngrp; g++) {
		struct evt *lead = &s->ev[s->grp[g].first];
		for (int c = 0; c < s->ncpus; c++)
			if (ioctl(lead->fd[c], req, PERF_IOC_FLAG_GROUP) < 0)
				return hpm__err(s->ctx, -errno, "ioctl on '%s' failed: %s", lead->name,
						strerror(errno));
	}
	return 0;
}

HPM_API int hpm_evset__start(struct hpm_evset *s)
{
	if (!s)
		return -EINVAL;
	s->started = true;
	/* the common single-group case without the loop bookkeeping */
	if (s->ngrp == 1 && s->ncpus == 1)
		return ioctl(s->ev[0].fd[0], PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP) < 0 ? -errno
											      : 0;
	return group_ioctl(s, PERF_EVENT_IOC_ENABLE);
}

HPM_API int hpm_evset__stop(struct hpm_evset *s)
{
	if (!s)
		return -EINVAL;
	if (s->ngrp == 1 && s->ncpus == 1)
		return ioctl(s->ev[0].fd[0], PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP) < 0 ? -errno
											       : 0;
	return group_ioctl(s, PERF_EVENT_IOC_DISABLE);
}

HPM_API int hpm_evset__reset(struct hpm_evset *s)
{
	return s ? group_ioctl(s, PERF_EVENT_IOC_RESET) : -EINVAL;
}

/* read(2) of one group on one CPU, added into vals[first..first+n) */
static int read_group_syscall(struct hpm_evset *s, struct group *g, int c, struct hpm_value *vals,
			      bool accumulate)
{
	size_t need = sizeof(uint64_t) * (3 + 2 * (size_t)g->n);
	uint64_t stackbuf[3 + 2 * 8], *buf = stackbuf;
	if (need > sizeof(stackbuf)) {
		if (s->buflen < need) {
			uint64_t *nb = realloc(s->buf, need);
			if (!nb)
				return -ENOMEM;
			s->buf = nb;
			s->buflen = need;
		}
		buf = s->buf;
	}
	struct evt *lead = &s->ev[g->first];
	if (!(lead->attr.read_format & PERF_FORMAT_GROUP)) {
		/* lone leader: {value, enabled, running} */
		uint64_t one[3];
		if (read(lead->fd[c], one, sizeof(one)) != (ssize_t)sizeof(one))
			return hpm__err(s->ctx, -errno ? -errno : -EIO, "read of '%s' failed: %s",
					lead->name, strerror(errno));
		struct hpm_value *v = &vals[0];
		double sc = hpm_scale(one[0], one[1], one[2]);
		if (!accumulate)
			memset(v, 0, sizeof(*v));
		v->raw += one[0];
		v->enabled += one[1];
		v->running += one[2];
		v->scaled += sc;
		v->path = HPM_READ_SYSCALL;
		return 0;
	}
	ssize_t n = read(lead->fd[c], buf, need);
	if (n < 0)
		return hpm__err(s->ctx, -errno, "read of '%s' failed: %s", lead->name,
				strerror(errno));
	if ((size_t)n < sizeof(uint64_t) * 3 || buf[0] > (uint64_t)g->n)
		return hpm__err(s->ctx, -EIO, "short read of group led by '%s'", s->ev[g->first].name);
	uint64_t nr = buf[0], en = buf[1], run = buf[2];
	for (int k = 0; k < g->n; k++) {
		struct evt *e = &s->ev[g->first + k];
		uint64_t raw = 0;
		/* match by id: the kernel lists siblings in its own order */
		for (uint64_t j = 0; j < nr; j++)
			if (buf[4 + 2 * j] == e->id[c]) {
				raw = buf[3 + 2 * j];
				break;
			}
		struct hpm_value *v = &vals[k];
		double sc = hpm_scale(raw, en, run);
		if (accumulate) {
			v->raw += raw;
			v->enabled += en;
			v->running += run;
			v->scaled += sc;
		} else {
			v->raw = raw;
			v->enabled = en;
			v->running = run;
			v->scaled = sc;
		}
		v->path = HPM_READ_SYSCALL;
	}
	return 0;
}

static int read_group(struct hpm_evset *s, struct group *g, struct hpm_value *vals)
{
	if (s->ncpus == 1 && s->ev[g->first].page) {
		int k;
		for (k = 0; k < g->n; k++) {
			struct evt *e = &s->ev[g->first + k];
			if (!e->page || mmap_read(e->page, &vals[k]) < 0)
				break;
		}
		if (k == g->n)
			return 0;
	}
	for (int c = 0; c < s->ncpus; c++) {
		int r = read_group_syscall(s, g, c, vals, c > 0);
		if (r < 0)
			return r;
	}
	return 0;
}

HPM_API int hpm_evset__read(struct hpm_evset *s, int idx, struct hpm_value *val)
{
	if (!s || idx < 0 || idx >= s->nev || !val)
		return -EINVAL;
	struct evt *e = &s->ev[idx];
	if (e->page && s->ncpus == 1 && mmap_read(e->page, val) == 0)
		return 0;
	struct group *g = &s->grp[e->group];
	if (g->n == 1) {
		/* the hot path of a single-event group: no scratch array */
		return read_group(s, g, val);
	}
	struct hpm_value tmp[HPM_MAX_EVENTS];
	memset(tmp, 0, sizeof(struct hpm_value) * (size_t)g->n);
	int r = read_group(s, g, tmp);
	if (r == 0)
		*val = tmp[idx - g->first];
	return r;
}

HPM_API int hpm_evset__read_all(struct hpm_evset *s, struct hpm_value *vals)
{
	if (!s || !vals)
		return -EINVAL;
	memset(vals, 0, sizeof(*vals) * (size_t)s->nev);
	for (int g = 0; g < s->ngrp; g++) {
		int r = read_group(s, &s->grp[g], &vals[s->grp[g].first]);
		if (r < 0)
			return r;
	}
	return 0;
}

HPM_API int hpm_evset__nr(const struct hpm_evset *s)
{
	return s ? s->nev : -EINVAL;
}

HPM_API int hpm_evset__nr_groups(const struct hpm_evset *s)
{
	return s ? s->ngrp : -EINVAL;
}

HPM_API const char *hpm_evset__name(const struct hpm_evset *s, int idx)
{
	return s && idx >= 0 && idx < s->nev ? s->ev[idx].name : NULL;
}

HPM_API int hpm_evset__group_of(const struct hpm_evset *s, int idx)
{
	return s && idx >= 0 && idx < s->nev ? s->ev[idx].group : -EINVAL;
}

HPM_API int hpm_evset__read_path(struct hpm_evset *s, int idx, char *why, size_t len)
{
	if (!s || idx < 0 || idx >= s->nev)
		return -EINVAL;
	struct evt *e = &s->ev[idx];
	char tmp[200];
	if (!why) {
		why = tmp;
		len = sizeof(tmp);
	}
	why[0] = 0;
	if (!e->is_hw) {
		snprintf(why, len, "software event: the kernel keeps the count, read(2) is the only way");
		return HPM_READ_SYSCALL;
	}
	if (s->pid != 0 || s->cpu != -1 || e->attr.inherit) {
		snprintf(why, len, "counting another task, CPUs or children: needs read(2)");
		return HPM_READ_SYSCALL;
	}
	if (!e->page) {
		snprintf(why, len, "perf mmap of the event failed");
		return HPM_READ_SYSCALL;
	}
	return mmap_usable(e->page, why, len) ? HPM_READ_MMAP : HPM_READ_SYSCALL;
}

HPM_API int hpm_evset__nr_metrics(const struct hpm_evset *s)
{
	return s ? s->nmet : -EINVAL;
}

struct lookup_arg {
	const struct hpm_evset *s;
	const struct hpm_value *vals;
	int missing; /* the missing event a metric needed (find_missing), or -1 */
};

static int metric_lookup(const char *name, double *value, void *arg)
{
	struct lookup_arg *la = arg;
	struct resolved r;
	if (!strcmp(name, HPM_EXPR_SLOTS)) {
		if (!la->s->slots)
			return -ENODATA;
		*value = la->s->slots;
		return 0;
	}
	int idx = find_event(la->s, name);
	bool resolved = idx < 0 && names_resolve(la->s->ctx, name, &r) == 0;
	if (resolved)
		idx = find_event(la->s, r.canon);
	if (idx < 0) {
		int mi = find_missing(la->s, resolved ? r.canon : name);
		if (mi >= 0) {
			la->missing = mi;
			return -EOPNOTSUPP;
		}
		return -ENOENT;
	}
	if (!la->vals[idx].running)
		return -EDOM;
	*value = la->vals[idx].scaled;
	return 0;
}

HPM_API int hpm_evset__metric(struct hpm_evset *s, int i, const struct hpm_value *vals,
			      const char **name, const char **unit, double *value)
{
	if (!s || i < 0 || i >= s->nmet || !vals)
		return -EINVAL;
	if (name)
		*name = s->met[i].name;
	if (unit)
		*unit = s->met[i].unit;
	struct lookup_arg la = { s, vals, -1 };
	double v = 0;
	int r = hpm_expr__eval(s->met[i].expr, metric_lookup, &la, &v);
	if (r == 0 && value)
		*value = v;
	if (r == -ENODATA)
		return hpm__err(s->ctx, r, "needs #slots, the core's issue width: %s",
				s->slots_why);
	if (r == -EOPNOTSUPP && la.missing >= 0)
		return hpm__err(s->ctx, r, "needs %s, which this machine cannot count",
				s->miss[la.missing].name);
	return r;
}

HPM_API int hpm_evset__nr_missing(const struct hpm_evset *s)
{
	return s ? s->nmiss : 0;
}

HPM_API const char *hpm_evset__missing(const struct hpm_evset *s, int i, const char **why)
{
	if (!s || i < 0 || i >= s->nmiss)
		return NULL;
	if (why)
		*why = s->miss[i].why;
	return s->miss[i].name;
}

const struct perf_event_attr *evset_attr(const struct hpm_evset *s, int idx)
{
	return &s->ev[idx].attr;
}

struct hpm_ctx *evset_ctx(const struct hpm_evset *s)
{
	return s->ctx;
}
