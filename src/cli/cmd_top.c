/* SPDX-License-Identifier: MIT */
/*
 * hpm top: the hottest functions, live, like `perf top`, without the perf
 * tool. Samples an event (or a {group}: every sample carries the members'
 * counts) on every CPU, on processes/threads, or on a command, resolves each
 * sampled address to a kernel function (/proc/kallsyms) or a function of the
 * mapped file (ELF symbols, top_syms.c) and shows a table sorted by share.
 * On a terminal the table refreshes in place; with --batch (or when output
 * is not a terminal) it prints plain tables, one per refresh, -n of them.
 */
#include <errno.h>
#include <getopt.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"
#include "top.h"

#define TOP_MAX_EV 8
#define TOP_MAX_TARGETS 4096

static const char top_help[] =
	"usage: hpm top [options] [-- COMMAND [ARGS]]\n"
	"\n"
	"The hottest functions, kernel and user, refreshed live (like perf top; the\n"
	"perf tool is not needed). Default: every CPU; with -p/-t only those\n"
	"processes/threads; with a COMMAND (and no -a/-C/-p/-t) only the command and\n"
	"its children, until it exits.\n"
	"\n"
	"  -e, --event EV        one event or one {group} in perf syntax (default: cycles,\n"
	"                        or cpu-clock without a hardware PMU); in a group the\n"
	"                        leader samples and the members are counted per function\n"
	"  -c, --count N         sample every N events     -F, --freq HZ (default 4000)\n"
	"  -a, --all-cpus        every CPU (the default)   -C, --cpu CPUS   e.g. 0,2-3\n"
	"  -p, --pid PIDS        only these processes      -t, --tid TIDS   only these threads\n"
	"  -i, --no-inherit      do not follow the command's children\n"
	"  -d, --delay SECS      refresh every SECS seconds (default 2; fractions allowed)\n"
	"  -b, --batch           plain tables without terminal control (the default when\n"
	"                        the output is not a terminal)\n"
	"  -n, --iterations N    stop after N tables (--batch: 1 unless given)\n"
	"  -E, --entries N       rows per table (default: the terminal's height, or 40;\n"
	"                        0: all)\n"
	"  -s, --sort KEYS       group rows by comm,pid,tid,dso,sym,cpu (default dso,sym)\n"
	"  -S, --sort-by WHAT    order rows by period (default), samples, or a group\n"
	"                        member's name; --group-sort-idx N: by member N (perf's)\n"
	"  -K, --hide-kernel-symbols   user functions only\n"
	"  -U, --hide-user-symbols     kernel functions only\n"
	"      --comms LIST, --pids LIST, --dsos LIST   show only these (comma-separated)\n"
	"  -z, --zero            each table shows only the last interval\n"
	"  -m, --mmap-pages N    ring buffer pages per CPU or thread, a power of 2 (default 64)\n"
	"\n"
	"On a terminal: q quits, K and U toggle kernel and user functions, z toggles\n"
	"zeroing. Overhead is the share of the sampled event's period (time for\n"
	"cpu-clock); addresses without a symbol are shown in hex with their object.\n"
	"\n"
	"examples:\n"
	"  hpm top                                      live, every CPU\n"
	"  hpm top -e cpu-clock -K                      user functions only\n"
	"  hpm top --batch -d 5                         one table after 5 seconds\n"
	"  hpm top -b -n 3 -d 1 -s comm,dso,sym         three tables, per command\n"
	"  hpm top -b -p 1234 -d 10                     process 1234 for 10 seconds\n"
	"  hpm top -b -e '{cpu-clock,page-faults}' -S page-faults -- ./app\n"
	"                                               the command, sorted by page faults\n";

enum key { K_COMM, K_PID, K_TID, K_DSO, K_SYM, K_CPU, K_N };
static const char *const key_names[K_N] = { "comm", "pid", "tid", "dso", "sym", "cpu" };

struct tev {
	char name[128];
	struct perf_event_attr attr;
	bool explicit_mods;
};

struct target {
	pid_t pid;
	int cpu;
	int fd[TOP_MAX_EV];
	uint64_t id[TOP_MAX_EV];
	void *ring;
};

struct entry {
	char *key;
	char comm[32], dso[96], sym[256];
	pid_t pid, tid;
	int cpu;
	bool kernel;
	uint64_t samples, period;
	double member[TOP_MAX_EV];
	struct entry *next;
};

#define ENTRY_HASH 4096

struct opts {
	const char *event;
	uint64_t period, freq;
	bool all_cpus, no_inherit, batch, zero, hide_kernel, hide_user;
	int *cpus, ncpus;
	pid_t *pids, *tids;
	int npids, ntids;
	double delay;
	long iterations;
	long entries;
	bool entries_set;
	enum key keys[K_N];
	int nkeys;
	const char *sort_by;
	int sort_idx;
	char **comms, **dsos;
	char *comms_buf, *dsos_buf;
	int ncomms, ndsos;
	pid_t *fpids;
	int nfpids;
	int pages;
	char **cmd;
};

struct top {
	struct opts *o;
	struct hpm_ctx *ctx;
	struct top_syms *syms;
	bool ksyms;
	struct tev ev[TOP_MAX_EV];
	int nev;
	struct target *t;
	int nt;
	size_t mapsz, datasz;
	struct entry *tab[ENTRY_HASH];
	uint64_t samples, period, kernel_samples, lost, unresolved;
	/* last member values per (tid, member id): sample reads are cumulative */
	struct last { pid_t tid; uint64_t id, value; } *last;
	size_t nlast, caplast;
	double t0, t_table;
	bool tty;
	struct termios saved;
	bool saved_ok;
};

static volatile sig_atomic_t stop_sig;
static void on_signal(int sig)
{
	stop_sig = sig;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- options ---- */

static int split_list(const char *s, char ***out, int *n, char **buf)
{
	free(*buf);
	free(*out);
	char *copy = *buf = strdup(s);
	if (!copy)
		return -1;
	int cap = 1;
	for (const char *p = s; *p; p++)
		cap += *p == ',';
	*out = calloc((size_t)cap, sizeof(char *));
	*n = 0;
	for (char *save, *t = strtok_r(copy, ",", &save); t && *out; t = strtok_r(NULL, ",", &save))
		(*out)[(*n)++] = t;
	return *out ? 0 : -1;
}

static int parse_keys(struct opts *o, const char *s)
{
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", s);
	o->nkeys = 0;
	for (char *save, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		int k = -1;
		for (int i = 0; i < K_N; i++)
			if (!strcmp(t, key_names[i]) || (i == K_SYM && !strcmp(t, "symbol")))
				k = i;
		if (k < 0) {
			fprintf(stderr, "hpm top: unknown sort key '%s' (keys: comm, pid, tid, dso, sym, "
					"cpu)\n", t);
			return -1;
		}
		bool dup = false;
		for (int i = 0; i < o->nkeys; i++)
			dup |= o->keys[i] == (enum key)k;
		if (!dup)
			o->keys[o->nkeys++] = (enum key)k;
	}
	if (!o->nkeys) {
		fprintf(stderr, "hpm top: -s needs at least one key (comm, pid, tid, dso, sym, cpu)\n");
		return -1;
	}
	return 0;
}

enum { OPT_COMMS = 256, OPT_PIDS, OPT_DSOS, OPT_GROUP_SORT_IDX };

static int parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option lopts[] = {
		{ "event", required_argument, 0, 'e' },    { "count", required_argument, 0, 'c' },
		{ "freq", required_argument, 0, 'F' },     { "all-cpus", no_argument, 0, 'a' },
		{ "cpu", required_argument, 0, 'C' },      { "pid", required_argument, 0, 'p' },
		{ "tid", required_argument, 0, 't' },      { "no-inherit", no_argument, 0, 'i' },
		{ "delay", required_argument, 0, 'd' },    { "batch", no_argument, 0, 'b' },
		{ "iterations", required_argument, 0, 'n' }, { "entries", required_argument, 0, 'E' },
		{ "sort", required_argument, 0, 's' },     { "sort-by", required_argument, 0, 'S' },
		{ "group-sort-idx", required_argument, 0, OPT_GROUP_SORT_IDX },
		{ "hide-kernel-symbols", no_argument, 0, 'K' },
		{ "hide_kernel_symbols", no_argument, 0, 'K' },
		{ "hide-user-symbols", no_argument, 0, 'U' },
		{ "hide_user_symbols", no_argument, 0, 'U' },
		{ "comms", required_argument, 0, OPT_COMMS }, { "pids", required_argument, 0, OPT_PIDS },
		{ "dsos", required_argument, 0, OPT_DSOS }, { "zero", no_argument, 0, 'z' },
		{ "mmap-pages", required_argument, 0, 'm' }, { "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 }
	};
	unsigned long long v;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+e:c:F:aC:p:t:id:bn:E:s:S:KUzm:h", lopts, NULL)) != -1) {
		switch (c) {
		case 'e':
			if (o->event) {
				fprintf(stderr, "hpm top: give one -e (one event or one {group})\n");
				return 2;
			}
			o->event = optarg;
			break;
		case 'c':
			if (parse_count("top", optarg, "-c", 1, 1ULL << 62, &v))
				return 2;
			o->period = v;
			break;
		case 'F':
			if (parse_count("top", optarg, "-F", 1, 1000000, &v))
				return 2;
			o->freq = v;
			break;
		case 'a': o->all_cpus = true; break;
		case 'C':
			free(o->cpus);
			if (parse_cpu_list("top", optarg, &o->cpus, &o->ncpus))
				return 2;
			break;
		case 'p':
			free(o->pids);
			if (parse_pid_list("top", "-p", optarg, &o->pids, &o->npids))
				return 2;
			break;
		case 't':
			free(o->tids);
			if (parse_pid_list("top", "-t", optarg, &o->tids, &o->ntids))
				return 2;
			break;
		case 'i': o->no_inherit = true; break;
		case 'd': {
			char *end;
			double d = strtod(optarg, &end);
			if (*end || end == optarg || !(d >= 0.05 && d <= 86400)) {
				fprintf(stderr, "hpm top: -d must be a number of seconds from 0.05 to 86400, "
						"got '%s'\n", optarg);
				return 2;
			}
			o->delay = d;
			break;
		}
		case 'b': o->batch = true; break;
		case 'n':
			if (parse_count("top", optarg, "-n", 1, 1ULL << 31, &v))
				return 2;
			o->iterations = (long)v;
			break;
		case 'E':
			if (parse_count("top", optarg, "-E", 0, 1ULL << 31, &v))
				return 2;
			o->entries = (long)v;
			o->entries_set = true;
			break;
		case 's':
			if (parse_keys(o, optarg))
				return 2;
			break;
		case 'S': o->sort_by = optarg; break;
		case OPT_GROUP_SORT_IDX:
			if (parse_count("top", optarg, "--group-sort-idx", 0, TOP_MAX_EV - 1, &v))
				return 2;
			o->sort_idx = (int)v;
			break;
		case 'K': o->hide_kernel = true; break;
		case 'U': o->hide_user = true; break;
		case OPT_COMMS:
			if (split_list(optarg, &o->comms, &o->ncomms, &o->comms_buf))
				return 2;
			break;
		case OPT_DSOS:
			if (split_list(optarg, &o->dsos, &o->ndsos, &o->dsos_buf))
				return 2;
			break;
		case OPT_PIDS:
			free(o->fpids);
			if (parse_pid_list("top", "--pids", optarg, &o->fpids, &o->nfpids))
				return 2;
			break;
		case 'z': o->zero = true; break;
		case 'm':
			if (parse_count("top", optarg, "-m", 1, 1 << 20, &v))
				return 2;
			if (v & (v - 1)) {
				fprintf(stderr, "hpm top: -m must be a power of 2, got %llu\n", v);
				return 2;
			}
			o->pages = (int)v;
			break;
		case 'h': fputs(top_help, stdout); return 0;
		default: fputs(top_help, stderr); return 2;
		}
	}
	if (optind < argc)
		o->cmd = argv + optind;
	if (o->period && o->freq) {
		fprintf(stderr, "hpm top: give either -c (period) or -F (frequency), not both\n");
		return 2;
	}
	bool sys = o->all_cpus || o->ncpus;
	if ((o->npids || o->ntids) && (sys || (o->npids && o->ntids))) {
		fprintf(stderr, "hpm top: choose one target: -p PIDS, -t TIDS, or -a/-C CPUS\n");
		return 2;
	}
	if (o->hide_kernel && o->hide_user) {
		fprintf(stderr, "hpm top: -K and -U together hide everything; give one of them\n");
		return 2;
	}
	return -1;
}

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

static int setup_events(struct top *tp)
{
	struct opts *o = tp->o;
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

static int make_targets(struct top *tp, pid_t child)
{
	struct opts *o = tp->o;
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

static void close_targets(struct top *tp)
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
static int open_all(struct top *tp)
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
			close_targets(tp);
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
			close_targets(tp);
			fprintf(stderr, "hpm top: cannot map the %zu KiB sample buffer: %s; use a smaller "
					"-m (the limit is kernel.perf_event_mlock_kb plus ulimit -l)\n",
				tp->mapsz >> 10, strerror(err));
			return -1;
		}
	}
	return 0;
}

/* ---- samples ---- */

static bool in_list(char **v, int n, const char *s)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(v[i], s))
			return true;
	return false;
}

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
	const char *sym = top_syms_lookup(tp->syms, pid, ip, kernel, &dso, &off);
	const char *comm = top_syms_comm_of(tp->syms, pid);
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
			top_syms_mmap(tp->syms, (pid_t)u[0], q[0], q[1], q[2], body + 64);
		break;
	}
	case PERF_RECORD_COMM: {
		const uint32_t *u = (const uint32_t *)body;
		top_syms_comm(tp->syms, (pid_t)u[0], body + 8, h->misc & PERF_RECORD_MISC_COMM_EXEC);
		break;
	}
	case PERF_RECORD_FORK: {
		const uint32_t *u = (const uint32_t *)body;
		top_syms_fork(tp->syms, (pid_t)u[0], (pid_t)u[1]);
		break;
	}
	case PERF_RECORD_LOST:
		if (n >= 2)
			tp->lost += w[1];
		break;
	default: break;
	}
}

static void drain(struct top *tp, struct target *t)
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

/* ---- table ---- */

static bool shown(struct top *tp, const struct entry *e)
{
	struct opts *o = tp->o;
	if ((o->hide_kernel && e->kernel) || (o->hide_user && !e->kernel))
		return false;
	if (o->ncomms && !in_list(o->comms, o->ncomms, e->comm))
		return false;
	if (o->ndsos && !in_list(o->dsos, o->ndsos, e->dso))
		return false;
	if (o->nfpids) {
		bool ok = false;
		for (int i = 0; i < o->nfpids; i++)
			ok |= o->fpids[i] == e->pid;
		if (!ok)
			return false;
	}
	return true;
}

static int sort_col; /* -1: samples, 0: period, k: member k */

static double sort_value(const struct entry *e)
{
	return sort_col < 0 ? (double)e->samples : e->member[sort_col];
}

static int cmp_entry(const void *a, const void *b)
{
	const struct entry *x = *(struct entry *const *)a, *y = *(struct entry *const *)b;
	double vx = sort_value(x), vy = sort_value(y);
	if (vx != vy)
		return vx < vy ? 1 : -1;
	return strcmp(x->key, y->key);
}

static void print_table(struct top *tp, FILE *f, int width, long rows, bool final)
{
	struct opts *o = tp->o;
	size_t n = 0;
	for (int h = 0; h < ENTRY_HASH; h++)
		for (struct entry *e = tp->tab[h]; e; e = e->next)
			n += shown(tp, e);
	struct entry **v = malloc(sizeof(*v) * (n + 1));
	if (!v)
		return;
	n = 0;
	for (int h = 0; h < ENTRY_HASH; h++)
		for (struct entry *e = tp->tab[h]; e; e = e->next)
			if (shown(tp, e))
				v[n++] = e;
	qsort(v, n, sizeof(*v), cmp_entry);
	double now = now_s(), span = now - (o->zero ? tp->t_table : tp->t0);
	char num[32], where[96];
	if (o->npids || o->ntids)
		snprintf(where, sizeof(where), "%d thread%s", tp->nt, tp->nt == 1 ? "" : "s");
	else if (tp->t[0].pid > 0)
		snprintf(where, sizeof(where), "'%s'", o->cmd[0]);
	else
		snprintf(where, sizeof(where), "%s%d CPU%s", o->ncpus ? "" : "all ", tp->nt,
			 tp->nt == 1 ? "" : "s");
	char rate[48];
	const struct perf_event_attr *la = &tp->ev[0].attr;
	if (la->freq)
		snprintf(rate, sizeof(rate), "%llu Hz", (unsigned long long)la->sample_freq);
	else
		snprintf(rate, sizeof(rate), "every %llu", (unsigned long long)la->sample_period);
	fprintf(f, "hpm top: %s samples of %s (%s) on %s, %.1f s%s; kernel %.1f%%, lost %llu%s\n",
		thousands((double)tp->samples, num, sizeof(num)), tp->ev[0].name, rate, where, span,
		o->zero ? " (since the last table)" : "",
		tp->samples ? 100.0 * (double)tp->kernel_samples / (double)tp->samples : 0.0,
		(unsigned long long)tp->lost, final ? "; final" : "");
	if (!tp->ksyms && tp->kernel_samples)
		fprintf(f, "note: kernel addresses are hidden (kernel.kptr_restrict): kernel functions "
			   "show as addresses; run as root to name them\n");
	char line[1024];
	int l = snprintf(line, sizeof(line), "%9s %9s", "Overhead", "Samples");
	for (int j = 1; j < tp->nev; j++)
		l += snprintf(line + l, sizeof(line) - (size_t)l, " %14.14s", tp->ev[j].name);
	for (int k = 0; k < o->nkeys; k++) {
		static const char *const hdr[K_N] = { "Command", "Pid", "Tid", "Shared Object",
						      "Symbol", "Cpu" };
		static const int w[K_N] = { -16, 7, 7, -22, 0, 4 };
		if (w[o->keys[k]])
			l += snprintf(line + l, sizeof(line) - (size_t)l, "  %*s", w[o->keys[k]],
				      hdr[o->keys[k]]);
		else
			l += snprintf(line + l, sizeof(line) - (size_t)l, "  %s", hdr[o->keys[k]]);
	}
	fprintf(f, "%.*s\n", width, line);
	long shown_rows = 0;
	for (size_t i = 0; i < n && (rows <= 0 || shown_rows < rows); i++, shown_rows++) {
		struct entry *e = v[i];
		double pct = tp->period ? 100.0 * (double)e->period / (double)tp->period : 0;
		l = snprintf(line, sizeof(line), "%8.2f%% %9llu", pct, (unsigned long long)e->samples);
		for (int j = 1; j < tp->nev; j++)
			l += snprintf(line + l, sizeof(line) - (size_t)l, " %14s",
				      thousands(e->member[j], num, sizeof(num)));
		for (int k = 0; k < o->nkeys && l < (int)sizeof(line); k++) {
			switch (o->keys[k]) {
			case K_COMM: l += snprintf(line + l, sizeof(line) - (size_t)l, "  %-16s", e->comm); break;
			case K_PID: l += snprintf(line + l, sizeof(line) - (size_t)l, "  %7d", (int)e->pid); break;
			case K_TID: l += snprintf(line + l, sizeof(line) - (size_t)l, "  %7d", (int)e->tid); break;
			case K_DSO: l += snprintf(line + l, sizeof(line) - (size_t)l, "  %-22s", e->dso); break;
			case K_SYM:
				l += snprintf(line + l, sizeof(line) - (size_t)l, "  [%c] %s",
					      e->kernel ? 'k' : '.', e->sym);
				break;
			case K_CPU: l += snprintf(line + l, sizeof(line) - (size_t)l, "  %4d", e->cpu); break;
			default: break;
			}
		}
		if (l >= (int)sizeof(line))
			l = (int)sizeof(line) - 1;
		fprintf(f, "%.*s\n", width, line);
	}
	if (rows > 0 && (long)n > rows)
		fprintf(f, "(%zu more rows; -E 0 shows all)\n", n - (size_t)rows);
	free(v);
}

static void zero_table(struct top *tp)
{
	for (int h = 0; h < ENTRY_HASH; h++) {
		for (struct entry *e = tp->tab[h], *nx; e; e = nx) {
			nx = e->next;
			free(e->key);
			free(e);
		}
		tp->tab[h] = NULL;
	}
	tp->samples = tp->period = tp->kernel_samples = 0;
}

static void term_restore(struct top *tp)
{
	if (tp->saved_ok) {
		tcsetattr(STDIN_FILENO, TCSANOW, &tp->saved);
		tp->saved_ok = false;
	}
	if (tp->tty && !tp->o->batch) {
		fputs("\033[?25h", stdout); /* cursor back */
		fflush(stdout);
	}
}

static void show(struct top *tp, bool final)
{
	struct opts *o = tp->o;
	if (o->batch) {
		print_table(tp, stdout, 1 << 20, o->entries_set ? o->entries : 40, final);
		fputs("\n", stdout);
	} else {
		struct winsize ws = { 0 };
		ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws);
		int width = ws.ws_col ? ws.ws_col : 120, height = ws.ws_row ? ws.ws_row : 40;
		long rows = o->entries_set ? o->entries : height - 4;
		fputs("\033[H\033[2J", stdout);
		print_table(tp, stdout, width, rows < 1 ? 1 : rows, final);
		if (!final)
			fprintf(stdout, "q quit  K kernel %s  U user %s  z zero %s",
				o->hide_kernel ? "off" : "on", o->hide_user ? "off" : "on",
				o->zero ? "on" : "off");
	}
	fflush(stdout);
	tp->t_table = now_s();
	if (o->zero)
		zero_table(tp);
}

/* -S period|samples|MEMBER, or perf's --group-sort-idx N */
static int choose_sort(struct top *tp)
{
	struct opts *o = tp->o;
	sort_col = o->sort_idx;
	if (o->sort_idx >= tp->nev) {
		fprintf(stderr, "hpm top: --group-sort-idx %d: the group has %d event(s)\n",
			o->sort_idx, tp->nev);
		return -1;
	}
	if (!o->sort_by)
		return 0;
	if (!strcmp(o->sort_by, "period") || !strcmp(o->sort_by, "overhead")) {
		sort_col = 0;
		return 0;
	}
	if (!strcmp(o->sort_by, "samples")) {
		sort_col = -1;
		return 0;
	}
	for (int j = 0; j < tp->nev; j++)
		if (!strcmp(o->sort_by, tp->ev[j].name)) {
			sort_col = j;
			return 0;
		}
	char names[512] = "";
	for (int j = 1; j < tp->nev; j++) {
		size_t l = strlen(names);
		snprintf(names + l, sizeof(names) - l, ", %s", tp->ev[j].name);
	}
	fprintf(stderr, "hpm top: -S %s: sort by period, samples%s\n", o->sort_by,
		names[0] ? names : " (or a member of a {group} given with -e)");
	return -1;
}

static int run(struct top *tp)
{
	struct opts *o = tp->o;
	pid_t child = -1;
	int go = -1, errfd = -1, status = 0;
	if (o->cmd && (child = spawn(o->cmd, &go, &errfd)) < 0) {
		fprintf(stderr, "hpm top: cannot start '%s': %s\n", o->cmd[0], strerror(errno));
		return 1;
	}
	long page = sysconf(_SC_PAGESIZE);
	tp->datasz = (size_t)o->pages * (size_t)page;
	tp->mapsz = tp->datasz + (size_t)page;
	int r = setup_events(tp);
	if (!r)
		r = choose_sort(tp);
	if (!r)
		r = make_targets(tp, child);
	/* open_all returns 1 after a fallback (user-only, no inherit): try again */
	for (int tries = 0; !r && tries < 4; tries++)
		if ((r = open_all(tp)) == 1)
			r = 0;
		else
			break;
	if (r) {
		if (child > 0) {
			kill(child, SIGKILL);
			waitpid(child, NULL, 0);
		}
		return 1;
	}
	tp->ksyms = top_syms_kernel(tp->syms) > 0;
	struct sigaction sa = { .sa_handler = on_signal };
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	bool own_cmd = child > 0 && !o->all_cpus && !o->ncpus && !o->npids && !o->ntids;
	if (!own_cmd)
		for (int i = 0; i < tp->nt; i++)
			ioctl(tp->t[i].fd[0], PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
	tp->t0 = tp->t_table = now_s();
	if (child > 0) {
		int e = spawn_release(child, go, errfd);
		if (e) {
			waitpid(child, &status, 0);
			fprintf(stderr, "hpm top: cannot run '%s': %s\n", o->cmd[0],
				e > 0 ? strerror(e) : "lost the child process");
			close_targets(tp);
			return 127;
		}
	}
	if (tp->tty && !o->batch) {
		/* keys without Enter, no echo; restored on every way out */
		if (isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &tp->saved) == 0) {
			struct termios raw = tp->saved;
			raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
			raw.c_cc[VMIN] = 0;
			raw.c_cc[VTIME] = 0;
			tp->saved_ok = tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
		}
		fputs("\033[?25l", stdout);
	}
	struct pollfd *pfd = calloc((size_t)tp->nt + 1, sizeof(*pfd));
	if (!pfd)
		return 1;
	for (int i = 0; i < tp->nt; i++)
		pfd[i] = (struct pollfd){ .fd = tp->t[i].fd[0], .events = POLLIN };
	pfd[tp->nt] = (struct pollfd){ .fd = tp->saved_ok ? STDIN_FILENO : -1, .events = POLLIN };
	long tables = 0, limit = o->iterations ? o->iterations : (o->batch ? 1 : 0);
	double next = tp->t0 + o->delay;
	bool done = false, quit = false, child_done = false, attached = o->npids || o->ntids;
	while (!done) {
		double now = now_s();
		int wait_ms = (int)((next - now) * 1000);
		if (wait_ms > 100)
			wait_ms = 100;
		if (wait_ms < 0)
			wait_ms = 0;
		poll(pfd, (nfds_t)tp->nt + 1, wait_ms);
		for (int i = 0; i < tp->nt; i++)
			drain(tp, &tp->t[i]);
		if (pfd[tp->nt].fd >= 0 && (pfd[tp->nt].revents & POLLIN)) {
			char key;
			if (read(STDIN_FILENO, &key, 1) == 1) {
				if (key == 'q' || key == 'Q')
					quit = true;
				else if (key == 'K')
					o->hide_kernel = !o->hide_kernel, o->hide_user = false;
				else if (key == 'U')
					o->hide_user = !o->hide_user, o->hide_kernel = false;
				else if (key == 'z')
					o->zero = !o->zero;
				if (!quit)
					show(tp, false);
			}
		}
		if (child > 0 && !child_done && waitpid(child, &status, WNOHANG) == child)
			child_done = true;
		if (!child_done && child <= 0 && attached) {
			bool alive = false;
			for (int i = 0; i < tp->nt && !alive; i++)
				alive = task_alive(tp->t[i].pid);
			child_done = !alive;
		}
		if (quit || stop_sig)
			break;
		now = now_s();
		if (child_done) {
			for (int i = 0; i < tp->nt; i++)
				drain(tp, &tp->t[i]);
			show(tp, true);
			break;
		}
		if (now >= next) {
			show(tp, false);
			tables++;
			next += o->delay;
			if (next < now)
				next = now + o->delay;
			if (limit && tables >= limit)
				done = true;
		}
	}
	free(pfd);
	term_restore(tp);
	if (tp->tty && !o->batch)
		fputs("\n", stdout);
	for (int i = 0; i < tp->nt; i++)
		ioctl(tp->t[i].fd[0], PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
	close_targets(tp);
	if (child > 0 && !child_done) {
		kill(child, SIGTERM);
		waitpid(child, &status, 0);
	}
	if (tp->lost)
		fprintf(stderr, "hpm top: %llu samples lost (ring buffer full); use a larger -m or a "
				"lower -F\n", (unsigned long long)tp->lost);
	/* the command's status when it ended by itself; 0 when top ended it (q, -n) */
	if (child > 0 && own_cmd && child_done)
		return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	return 0;
}

int cmd_top(int argc, char **argv)
{
	struct opts o = { .delay = 2.0, .pages = 64, .keys = { K_DSO, K_SYM }, .nkeys = 2 };
	int rc = parse_opts(argc, argv, &o);
	struct top tp = { .o = &o };
	if (rc >= 0)
		goto out;
	tp.tty = isatty(STDOUT_FILENO);
	if (!tp.tty)
		o.batch = true; /* no escape codes into files and pipes */
	if (o.sort_by && o.sort_idx) {
		fprintf(stderr, "hpm top: give -S or --group-sort-idx, not both\n");
		rc = 2;
		goto out;
	}
	rc = 1;
	if (hpm_ctx__new(&tp.ctx) || !(tp.syms = top_syms_new()))
		goto out;
	rc = run(&tp);
out:
	if (tp.ctx)
		hpm_ctx__delete(tp.ctx);
	top_syms_free(tp.syms);
	zero_table(&tp);
	free(tp.t);
	free(tp.last);
	free(o.cpus);
	free(o.pids);
	free(o.tids);
	free(o.fpids);
	free(o.comms);
	free(o.comms_buf);
	free(o.dsos);
	free(o.dsos_buf);
	return rc;
}
