/* SPDX-License-Identifier: MIT */
/*
 * hpm top's sampling: the event (or group) from the shared perf grammar, one
 * fd per event per CPU or thread, the leader's ring buffer, and every record
 * read from it: samples become rows (top_table.c prints them), MMAP2, COMM
 * and FORK keep the symbol resolver (src/sym/tasksyms.c) up to date.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "cli.h"
#include "top.h"

/* ---- events and targets ---- */

struct parse_arg {
	struct top *tp;
	int groups;
};

static int parse_one(const char *name, unsigned flags, void *arg)
{
	struct parse_arg *pa = arg;
	struct top *tp = pa->tp;
	if (!(flags & HPM_LIST_IN_GROUP) || (flags & HPM_LIST_GROUP_START))
		pa->groups++;
	if (pa->groups > 1) {
		fprintf(stderr, "hpm top: samples one event or one {group}; put the events in braces "
				"to see them per function: -e '{%s,...}'\n", tp->ev[0].name);
		return -ECANCELED;
	}
	if (tp->nev == TOP_MAX_EV) {
		fprintf(stderr, "hpm top: at most %d events in the group\n", TOP_MAX_EV);
		return -ECANCELED;
	}
	struct tev *e = &tp->ev[tp->nev];
	if (hpm_ctx__event_attr(tp->ctx, name, &e->attr, e->name, sizeof(e->name)) < 0) {
		fprintf(stderr, "hpm top: %s\n", hpm_ctx__last_error(tp->ctx));
		return -ECANCELED;
	}
	const char *c = strrchr(name, ':');
	e->explicit_mods = c && c > name && c[-1] != ':' && c[1] && strspn(c + 1, "ukhpPGHSID") ==
											strlen(c + 1);
	tp->nev++;
	return 0;
}

int top_setup_events(struct top *tp)
{
	struct top_opts *o = tp->o;
	const char *list = o->event;
	if (!list)
		list = hpm_ctx__probe(tp->ctx, "cycles") == 0 ? "cycles" : "cpu-clock";
	struct parse_arg pa = { tp, 0 };
	int r = hpm_ctx__parse_list(tp->ctx, list, parse_one, &pa);
	if (r < 0) {
		if (r != -ECANCELED)
			fprintf(stderr, "hpm top: %s\n", hpm_ctx__last_error(tp->ctx));
		return -1;
	}
	bool own_cmd = o->cmd && !o->all_cpus && !o->ncpus && !o->npids && !o->ntids;
	for (int i = 0; i < tp->nev; i++) {
		struct perf_event_attr *a = &tp->ev[i].attr;
		bool leader = i == 0;
		a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
		if (tp->nev > 1) {
			a->sample_type |= PERF_SAMPLE_READ;
			a->read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID;
		} else {
			a->read_format = PERF_FORMAT_ID;
		}
		a->inherit = own_cmd && !o->no_inherit;
		a->disabled = leader;
		a->enable_on_exec = leader && own_cmd;
		if (leader) {
			if (o->period)
				a->sample_period = o->period, a->freq = 0;
			else if (a->type == PERF_TYPE_TRACEPOINT && !o->freq)
				a->sample_period = 1, a->freq = 0;
			else if (!a->sample_period)
				a->sample_freq = o->freq ? o->freq : 4000, a->freq = 1;
			/* the kernel says which tasks exist and what they map */
			a->mmap = a->mmap2 = a->comm = a->comm_exec = a->task = 1;
			a->watermark = 1;
			a->wakeup_watermark = (uint32_t)(tp->datasz / 4);
		} else {
			a->sample_period = 0;
			a->freq = 0;
		}
	}
	return 0;
}

static int add_target(struct top *tp, pid_t pid, int cpu)
{
	if (tp->nt == TOP_MAX_TARGETS) {
		fprintf(stderr, "hpm top: too many threads or CPUs (at most %d)\n", TOP_MAX_TARGETS);
		return -1;
	}
	struct target *t = &tp->t[tp->nt++];
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->cpu = cpu;
	for (int i = 0; i < TOP_MAX_EV; i++)
		t->fd[i] = -1;
	return 0;
}

int top_make_targets(struct top *tp, pid_t child)
{
	struct top_opts *o = tp->o;
	tp->t = calloc(TOP_MAX_TARGETS, sizeof(*tp->t));
	if (!tp->t)
		return -1;
	if (o->npids || o->ntids) {
		pid_t *v = o->npids ? o->pids : o->tids;
		int n = o->npids ? o->npids : o->ntids;
		for (int p = 0; p < n; p++) {
			pid_t *tids = &v[p];
			int nt = 1;
			if (o->npids && process_threads(v[p], &tids, &nt)) {
				fprintf(stderr, "hpm top: no process %d\n", (int)v[p]);
				return -1;
			}
			for (int i = 0; i < nt; i++)
				if (add_target(tp, tids[i], -1))
					return -1;
			if (o->npids)
				free(tids);
		}
		return 0;
	}
	int *cpus = o->cpus, n = o->ncpus;
	if (!n && online_cpus_list(&cpus, &n)) {
		fprintf(stderr, "hpm top: cannot list the online CPUs\n");
		return -1;
	}
	bool own_cmd = child > 0 && !o->all_cpus && !o->ncpus;
	for (int i = 0; i < n; i++)
		if (add_target(tp, own_cmd ? child : -1, cpus[i]))
			return -1;
	if (cpus != o->cpus)
		free(cpus);
	return 0;
}

void top_close_targets(struct top *tp)
{
	for (int i = 0; i < tp->nt; i++) {
		if (tp->t[i].ring)
			munmap(tp->t[i].ring, tp->mapsz);
		tp->t[i].ring = NULL;
		for (int j = tp->nev - 1; j >= 0; j--)
			if (tp->t[i].fd[j] >= 0) {
				close(tp->t[i].fd[j]);
				tp->t[i].fd[j] = -1;
			}
	}
}

/* Open everything; 1: retry after a fallback, -1: error printed. */
int top_open_all(struct top *tp)
{
	for (int i = 0; i < tp->nt; i++) {
		struct target *t = &tp->t[i];
		for (int j = 0; j < tp->nev; j++) {
			struct tev *e = &tp->ev[j];
			long fd = syscall(SYS_perf_event_open, &e->attr, t->pid, t->cpu,
					  j ? t->fd[0] : -1, PERF_FLAG_FD_CLOEXEC);
			if (fd >= 0) {
				t->fd[j] = (int)fd;
				ioctl((int)fd, PERF_EVENT_IOC_ID, &t->id[j]);
				continue;
			}
			int err = errno;
			top_close_targets(tp);
			if ((err == EACCES || err == EPERM) && !e->attr.exclude_kernel &&
			    !e->explicit_mods && t->pid != -1) {
				for (int k = 0; k < tp->nev; k++)
					if (!tp->ev[k].explicit_mods)
						tp->ev[k].attr.exclude_kernel = tp->ev[k].attr.exclude_hv = 1;
				fprintf(stderr, "hpm top: kernel sampling is not allowed to this user "
						"(kernel.perf_event_paranoid); showing user functions only. "
						"Run as root or with CAP_PERFMON for kernel functions; hpm "
						"never changes this setting\n");
				return 1;
			}
			if (err == EINVAL && e->attr.inherit && tp->nev > 1) {
				for (int k = 0; k < tp->nev; k++)
					tp->ev[k].attr.inherit = 0;
				fprintf(stderr, "hpm top: this kernel cannot follow children while reading "
						"a group in each sample (Linux < 6.12); showing the command's "
						"own process only\n");
				return 1;
			}
			hpm_ctx__explain_open(tp->ctx, -err, e->name, &e->attr, t->pid, t->cpu);
			fprintf(stderr, "hpm top: %s%s\n", hpm_ctx__last_error(tp->ctx),
				t->pid == -1 && (err == EACCES || err == EPERM)
					? "; or watch your own processes: hpm top -p PID, hpm top -- CMD"
					: "");
			return -1;
		}
		t->ring = mmap(NULL, tp->mapsz, PROT_READ | PROT_WRITE, MAP_SHARED, t->fd[0], 0);
		if (t->ring == MAP_FAILED) {
			int err = errno;
			t->ring = NULL;
			top_close_targets(tp);
			fprintf(stderr, "hpm top: cannot map the %zu KiB sample buffer: %s; use a smaller "
					"-m (the limit is kernel.perf_event_mlock_kb plus ulimit -l)\n",
				tp->mapsz >> 10, strerror(err));
			return -1;
		}
	}
	return 0;
}

/* ---- samples ---- */

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static struct entry *get_entry(struct top *tp, const char *key)
{
	struct entry **head = &tp->tab[hash_str(key) % ENTRY_HASH];
	for (struct entry *e = *head; e; e = e->next)
		if (!strcmp(e->key, key))
			return e;
	struct entry *e = calloc(1, sizeof(*e));
	if (!e || !(e->key = strdup(key))) {
		free(e);
		return NULL;
	}
	e->next = *head;
	*head = e;
	return e;
}

/* member value delta since the last sample of the same thread */
static double member_delta(struct top *tp, pid_t tid, uint64_t id, uint64_t value)
{
	for (size_t i = 0; i < tp->nlast; i++)
		if (tp->last[i].tid == tid && tp->last[i].id == id) {
			uint64_t d = value - tp->last[i].value;
			tp->last[i].value = value;
			return (double)d;
		}
	if (tp->nlast == tp->caplast) {
		size_t cap = tp->caplast ? tp->caplast * 2 : 64;
		struct last *nl = realloc(tp->last, sizeof(*nl) * cap);
		if (!nl)
			return 0;
		tp->last = nl;
		tp->caplast = cap;
	}
	tp->last[tp->nlast++] = (struct last){ tid, id, value };
	return (double)value; /* counted from zero since the event was enabled */
}

static void on_sample(struct top *tp, const struct perf_event_header *h, const uint64_t *w,
		      size_t n)
{
	if (n < 4)
		return;
	uint64_t ip = w[0];
	pid_t pid = (pid_t)(uint32_t)w[1], tid = (pid_t)(w[1] >> 32);
	int cpu = (int)(uint32_t)w[2];
	uint64_t period = w[3];
	unsigned mode = h->misc & PERF_RECORD_MISC_CPUMODE_MASK;
	bool kernel = mode == PERF_RECORD_MISC_KERNEL || mode == PERF_RECORD_MISC_GUEST_KERNEL;
	const char *dso;
	uint64_t off;
	const char *sym = tasksyms_lookup(tp->syms, pid, ip, kernel, &dso, &off);
	const char *comm = tasksyms_comm_of(tp->syms, pid);
	char symbuf[256], key[512];
	if (!sym) {
		/* perf's form for an address without a symbol */
		snprintf(symbuf, sizeof(symbuf), "0x%016llx", (unsigned long long)off);
		sym = symbuf;
		tp->unresolved++;
	}
	size_t kl = 0;
	for (int i = 0; i < tp->o->nkeys && kl < sizeof(key) - 1; i++) {
		switch (tp->o->keys[i]) {
		case K_COMM: kl += (size_t)snprintf(key + kl, sizeof(key) - kl, "%s\x1f", comm); break;
		case K_PID: kl += (size_t)snprintf(key + kl, sizeof(key) - kl, "%d\x1f", (int)pid); break;
		case K_TID: kl += (size_t)snprintf(key + kl, sizeof(key) - kl, "%d\x1f", (int)tid); break;
		case K_DSO: kl += (size_t)snprintf(key + kl, sizeof(key) - kl, "%s\x1f", dso); break;
		case K_SYM:
			kl += (size_t)snprintf(key + kl, sizeof(key) - kl, "%c%s\x1f", kernel ? 'k' : 'u',
					       sym);
			break;
		case K_CPU: kl += (size_t)snprintf(key + kl, sizeof(key) - kl, "%d\x1f", cpu); break;
		default: break;
		}
	}
	struct entry *e = get_entry(tp, key);
	if (!e)
		return;
	if (!e->samples) {
		snprintf(e->comm, sizeof(e->comm), "%s", comm);
		snprintf(e->dso, sizeof(e->dso), "%s", dso);
		snprintf(e->sym, sizeof(e->sym), "%s", sym);
		e->pid = pid;
		e->tid = tid;
		e->cpu = cpu;
		e->kernel = kernel;
	}
	e->samples++;
	e->period += period;
	e->member[0] += (double)period;
	tp->samples++;
	tp->period += period;
	tp->kernel_samples += kernel;
	if (tp->nev > 1 && n >= 5) {
		/* group read: nr, then {value, id} per member */
		uint64_t nr = w[4];
		for (uint64_t k = 0; k < nr && 6 + 2 * k < n; k++) {
			uint64_t value = w[5 + 2 * k], id = w[6 + 2 * k];
			for (int j = 1; j < tp->nev; j++) {
				bool match = false;
				for (int ti = 0; ti < tp->nt && !match; ti++)
					match = tp->t[ti].id[j] == id;
				if (match)
					e->member[j] += member_delta(tp, tid, id, value);
			}
		}
	}
}

static void on_record(struct top *tp, const struct perf_event_header *h, const char *body)
{
	const uint64_t *w = (const uint64_t *)body;
	size_t n = (h->size - sizeof(*h)) / 8;
	switch (h->type) {
	case PERF_RECORD_SAMPLE: on_sample(tp, h, w, n); break;
	case PERF_RECORD_MMAP2: {
		/* pid, tid, addr, len, pgoff, maj, min, ino, ino_generation, prot,
		 * flags, filename: the name starts at byte 64 */
		if (h->size < sizeof(*h) + 65)
			break;
		const uint32_t *u = (const uint32_t *)body;
		const uint64_t *q = (const uint64_t *)(body + 8);
		uint32_t prot = *(const uint32_t *)(body + 56);
		if (prot & PROT_EXEC)
			tasksyms_mmap(tp->syms, (pid_t)u[0], q[0], q[1], q[2], body + 64);
		break;
	}
	case PERF_RECORD_COMM: {
		const uint32_t *u = (const uint32_t *)body;
		tasksyms_comm(tp->syms, (pid_t)u[0], body + 8, h->misc & PERF_RECORD_MISC_COMM_EXEC);
		break;
	}
	case PERF_RECORD_FORK: {
		const uint32_t *u = (const uint32_t *)body;
		tasksyms_fork(tp->syms, (pid_t)u[0], (pid_t)u[1]);
		break;
	}
	case PERF_RECORD_LOST:
		if (n >= 2)
			tp->lost += w[1];
		break;
	default: break;
	}
}

void top_drain(struct top *tp, struct target *t)
{
	struct perf_event_mmap_page *pg = t->ring;
	char *data = (char *)t->ring + sysconf(_SC_PAGESIZE);
	uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE), tail = pg->data_tail;
	static char rec[65536 + 1]; /* a record (size is 16 bits) and a terminating NUL */
	while (tail < head) {
		struct perf_event_header h;
		size_t off = tail % tp->datasz;
		if (off + sizeof(h) <= tp->datasz) {
			memcpy(&h, data + off, sizeof(h));
		} else {
			size_t k = tp->datasz - off;
			memcpy(&h, data + off, k);
			memcpy((char *)&h + k, data, sizeof(h) - k);
		}
		if (h.size < sizeof(h) || tail + h.size > head)
			break;
		size_t k = tp->datasz - off;
		if (h.size <= k) {
			memcpy(rec, data + off, h.size);
		} else {
			memcpy(rec, data + off, k);
			memcpy(rec + k, data, h.size - k);
		}
		rec[h.size] = 0; /* names in COMM/MMAP2 end inside the record; be sure */
		on_record(tp, &h, rec + sizeof(h));
		tail += h.size;
	}
	__atomic_store_n(&pg->data_tail, tail, __ATOMIC_RELEASE);
}

