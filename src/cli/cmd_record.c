/* SPDX-License-Identifier: MIT */
/* hpm record: sample events with call stacks into a perf.data file that Linux
 * perf reads. Groups "{leader,member,...}" sample on the leader and carry the
 * members' counts in every sample (PERF_SAMPLE_READ). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"
#include "record.h"
#include "usage_error.h"

#define MAX_EV 32
#define MAX_TARGETS 1024

static const char record_help[] =
	"usage: hpm record [options] [-- COMMAND [ARGS]]\n"
	"\n"
	"Sample events with call stacks into a perf.data file (Linux perf reads it:\n"
	"perf script, perf report). Works where the perf tool is missing or old.\n"
	"\n"
	"  -e, --event LIST      events to sample (perf syntax). In a group\n"
	"                        '{leader,a,b}' the leader samples and every sample\n"
	"                        carries the counts of a and b since the last one.\n"
	"                        Default: cycles, or cpu-clock without a hardware PMU;\n"
	"                        as in perf, cycles (cpu-cycles) that cannot be opened\n"
	"                        becomes cpu-clock, with a warning\n"
	"  -c, --count N         sample every N events of the leader\n"
	"  -F, --freq HZ         sample HZ times per second (default 4000)\n"
	"  -g                    record call stacks (frame pointers, kernel + user)\n"
	"      --call-graph fp   the same (only frame-pointer stacks are supported)\n"
	"  -o, --output FILE     output file (default perf.data); it appears only when\n"
	"                        complete (never a half file or a temporary one), mode\n"
	"                        0600, and a non-empty FILE already there becomes\n"
	"                        FILE.old, as with perf. '-' (and no -o while standard\n"
	"                        output is a pipe): perf's pipe mode on standard output\n"
	"                        ('| perf script -i -'); the command's standard output\n"
	"                        then goes to standard error\n"
	"  -p, --pid PIDS        record existing processes (all their threads), e.g. 12,34;\n"
	"                        with '-- COMMAND', for as long as COMMAND runs (perf's\n"
	"                        'hpm record -p PID -- sleep 5')\n"
	"  -t, --tid TIDS        record existing threads (same rules as -p)\n"
	"  -a, --all-cpus        record everything on all CPUs\n"
	"  -C, --cpu CPUS        record everything on these CPUs, e.g. 0 or 0,2-3\n"
	"  -i, --no-inherit      do not follow the command's children\n"
	"  -m, --mmap-pages N    ring buffer pages per buffer, a power of 2 (default 64)\n"
	"      --kallsyms WHICH  kernel symbols stored in the file: used (default: the\n"
	"                        functions samples fall into), all, or none\n"
	"  -q, --quiet           no summary line\n"
	"\n"
	"examples:\n"
	"  hpm record -g -- ./app                       cycles (or cpu-clock) with stacks\n"
	"  hpm record -e '{cycles,instructions}' -c 100000 -g -- ./app\n"
	"                                               per-sample cycles and instructions\n"
	"  hpm record -e '{cpu-clock,cycles,instructions}' -c 1000000 -g -a -- ./app\n"
	"  hpm record -g -p 1234 -- sleep 5             process 1234 for five seconds\n"
	"  hpm record -e sched:sched_switch -a -- sleep 1   a tracepoint (every hit)\n"
	"                                               timer sampling + counter group (the\n"
	"                                               way to sample on QEMU riscv64)\n"
	"  perf script -i perf.data                     read it with Linux perf\n"
	"  hpm record -g -- ./app | perf report -i - --stdio   pipe mode\n"
	"  hpmkit profile import perf.data              the same in hpmkit (Parquet)\n"
	"\n"
	"Events and modifiers as in perf (hpm stat --help); a tracepoint leader samples\n"
	"every hit unless -c/-F says otherwise. As under perf, the command runs in\n"
	"hpm's process group with SIGINT, SIGTERM and SIGHUP at their default action\n"
	"(even when hpm was started with them ignored, as by '&' in a script), so a\n"
	"terminal's Ctrl-C reaches the command and hpm alike. A stop signal to hpm\n"
	"(SIGINT, SIGTERM, SIGHUP) sends the command SIGTERM if it still runs and\n"
	"writes the file at once; then hpm ends, as perf does, by the command's signal\n"
	"when it died by one, else by the one hpm got (a shell sees 130 for Ctrl-C,\n"
	"143 for SIGTERM). A file that cannot be completed (disk full) is not left\n"
	"behind, not even under a temporary name.\n"
	"Kernel frames are symbolised from the copy of /proc/kallsyms hpm stores in the\n"
	"file (feature section 250), so another machine can read them; not in pipe mode,\n"
	"where perf refuses a section of its own (readers then use --kallsyms or the\n"
	"local /proc/kallsyms). Lost samples\n"
	"(ring buffer full) are counted and reported. hpm never changes\n"
	"kernel.perf_event_paranoid: without permission for kernel sampling it falls back\n"
	"to user space (':u') and says so.\n";

struct rec_ev {
	char name[128];
	struct perf_event_attr attr;
	int group; /* index of the leader */
	bool explicit_mods;
	bool precise_max; /* ":P": lower precise_ip until the PMU takes it */
	bool own_period;  /* period=/freq= term: keep it */
};

struct target {
	pid_t pid;
	int cpu;
	int fds[MAX_EV];
	void *ring;
};

struct opts {
	const char *events[16];
	int nevents;
	uint64_t period, freq;
	bool callchain, all_cpus, no_inherit, quiet, no_kallsyms, all_kallsyms, grouped;
	bool rate_given; /* -c or -F on the command line */
	int pages;
	int *cpus, ncpus;    /* -C */
	pid_t *pids, *tids;  /* -p, -t */
	int npids, ntids;
	const char *output;
	char **cmd;
};

/* the command is what is recorded (not just how long, as with -p/-t/-a/-C) */
static bool own_command(const struct opts *o)
{
	return o->cmd && !o->all_cpus && !o->ncpus && !o->npids && !o->ntids;
}

/* the signal that asked hpm to stop (SIGINT, SIGTERM or SIGHUP), 0 while none did */
static volatile sig_atomic_t interrupted;
static void on_signal(int sig)
{
	interrupted = sig;
}

/* 0 when `path` can be created: its folder exists, is a folder, can be written; else an errno */
static int output_writable(const char *path)
{
	char dir[4096];
	struct stat st;
	const char *slash = strrchr(path, '/');
	snprintf(dir, sizeof(dir), "%.*s", slash ? (slash == path ? 1 : (int)(slash - path)) : 1,
		 slash ? path : ".");
	if (stat(dir, &st))
		return errno;
	if (!S_ISDIR(st.st_mode))
		return ENOTDIR;
	if (!stat(path, &st) && S_ISDIR(st.st_mode))
		return EISDIR;
	return access(dir, W_OK | X_OK) ? errno : 0;
}

static long perf_open(struct perf_event_attr *a, pid_t pid, int cpu, int group)
{
	return syscall(SYS_perf_event_open, a, pid, cpu, group, PERF_FLAG_FD_CLOEXEC);
}

/* Does an event of this attr type count on a core's PMU, whose overflow interrupt is
 * what may lose user-mode samples? Hardware, hardware-cache and raw events, and the
 * dynamic PMUs perf calls core PMUs ("cpu", s390's "cpum_cf", or a PMU whose sysfs
 * folder lists its "cpus": Arm's armv8_*, hybrid x86's cpu_core/cpu_atom). Not
 * software events, tracepoints, breakpoints, nor other dynamic PMUs (msr, uncore, ...):
 * they sample in the kernel or on a timer whatever mode the task ran in. */
static bool core_pmu_type(uint32_t type)
{
	if (type == PERF_TYPE_HARDWARE || type == PERF_TYPE_HW_CACHE || type == PERF_TYPE_RAW)
		return true;
	if (type == PERF_TYPE_SOFTWARE || type == PERF_TYPE_TRACEPOINT || type == PERF_TYPE_BREAKPOINT)
		return false;
	static const char dir[] = "/sys/bus/event_source/devices";
	DIR *d = opendir(dir);
	if (!d)
		return false;
	bool core = false;
	struct dirent *de;
	while ((de = readdir(d))) {
		char path[512], buf[32];
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/type", dir, de->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		bool same = fgets(buf, sizeof(buf), f) && strtoul(buf, NULL, 10) == type;
		fclose(f);
		if (!same)
			continue;
		snprintf(path, sizeof(path), "%s/%s/cpus", dir, de->d_name);
		core = !strcmp(de->d_name, "cpu") || !strcmp(de->d_name, "cpum_cf") ||
		       access(path, F_OK) == 0;
		break;
	}
	closedir(d);
	return core;
}

static bool has_explicit_mods(const char *name)
{
	const char *c = strrchr(name, ':');
	if (!c || c == name || c[-1] == ':' || !c[1])
		return false;
	return strspn(c + 1, "ukhHGpPSID") == strlen(c + 1);
}

static bool has_mod(const char *name, char m)
{
	return has_explicit_mods(name) && strchr(strrchr(name, ':'), m);
}

struct parse_arg {
	struct hpm_ctx *ctx;
	struct rec_ev *ev;
	int *n;
	int leader;
};

static int parse_one(const char *name, unsigned flags, void *arg)
{
	struct parse_arg *pa = arg;
	if (*pa->n == MAX_EV) {
		fprintf(stderr, "hpm record: too many events (at most %d)\n", MAX_EV);
		return -ECANCELED;
	}
	struct rec_ev *e = &pa->ev[*pa->n];
	memset(e, 0, sizeof(*e));
	if (hpm_ctx__event_attr(pa->ctx, name, &e->attr, e->name, sizeof(e->name)) < 0) {
		fprintf(stderr, "hpm record: %s\n", hpm_ctx__last_error(pa->ctx));
		return -ECANCELED; /* said already */
	}
	if (!(flags & HPM_LIST_IN_GROUP) || (flags & HPM_LIST_GROUP_START))
		pa->leader = *pa->n;
	e->group = pa->leader;
	e->explicit_mods = has_explicit_mods(name);
	e->precise_max = has_mod(name, 'P');
	e->own_period = e->attr.sample_period != 0;
	(*pa->n)++;
	return 0;
}

/* "{a,b},c" -> events with their group leaders (the shared perf grammar) */
static int parse_events(struct hpm_ctx *ctx, const char *list, struct rec_ev *ev, int *n)
{
	struct parse_arg pa = { ctx, ev, n, 0 };
	int r = hpm_ctx__parse_list(ctx, list, parse_one, &pa);
	if (r < 0 && r != -ECANCELED)
		fprintf(stderr, "hpm record: %s\n", hpm_ctx__last_error(ctx));
	return r < 0 ? -1 : 0;
}

static int group_size(const struct rec_ev *ev, int nev, int leader)
{
	int k = 0;
	for (int i = 0; i < nev; i++)
		k += ev[i].group == leader;
	return k;
}

static void setup_attrs(struct opts *o, struct rec_ev *ev, int nev, bool grouped, bool inherit)
{
	for (int i = 0; i < nev; i++) {
		struct perf_event_attr *a = &ev[i].attr;
		bool leader = ev[i].group == i;
		a->sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
				 PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
		if (o->callchain)
			a->sample_type |= PERF_SAMPLE_CALLCHAIN;
		if (a->type == PERF_TYPE_TRACEPOINT)
			a->sample_type |= PERF_SAMPLE_RAW; /* the tracepoint's fields, as perf */
		a->read_format = PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_ENABLED |
				 PERF_FORMAT_TOTAL_TIME_RUNNING;
		if (grouped) {
			a->sample_type |= PERF_SAMPLE_READ;
			a->read_format |= PERF_FORMAT_GROUP;
		}
		a->sample_id_all = 1;
		a->inherit = inherit;
		bool own = ev[i].own_period;
		if (!own) {
			a->freq = 0;
			a->sample_period = 0;
		}
		if (leader && !own) {
			if (o->period)
				a->sample_period = o->period;
			else if (a->type == PERF_TYPE_TRACEPOINT && !o->rate_given)
				a->sample_period = 1; /* like perf: every tracepoint hit */
			else {
				a->freq = 1;
				a->sample_freq = o->freq;
			}
		}
		if (leader) {
			a->disabled = 1;
			/* only task events can wait for the exec; CPU-wide ones are
			 * enabled just before the command is released */
			a->enable_on_exec = own_command(o);
		}
		/* the first event tracks tasks and maps (one is enough) */
		a->mmap = a->mmap2 = a->comm = a->comm_exec = a->task = i == 0;
		a->watermark = 1;
		a->wakeup_watermark = (uint32_t)(o->pages * sysconf(_SC_PAGESIZE) / 4);
	}
}

static void close_targets(struct target *t, int nt, int nev, size_t mapsz)
{
	for (int i = 0; i < nt; i++) {
		if (t[i].ring)
			munmap(t[i].ring, mapsz);
		t[i].ring = NULL;
		for (int j = 0; j < nev; j++)
			if (t[i].fds[j] >= 0) {
				close(t[i].fds[j]);
				t[i].fds[j] = -1;
			}
	}
}

/* cycles -> cpu-clock (PERF_COUNT_SW_CPU_CLOCK), the attr otherwise unchanged (modes,
 * precision, period); named "cpu-clock" with the modifiers the event was given ("cycles:u"
 * -> "cpu-clock:u") */
static void cycles_to_cpu_clock(struct rec_ev *e)
{
	char mods[64] = "";
	const char *colon = strrchr(e->name, ':');
	if (e->explicit_mods && colon)
		snprintf(mods, sizeof(mods), "%s", colon);
	e->attr.type = PERF_TYPE_SOFTWARE;
	e->attr.config = PERF_COUNT_SW_CPU_CLOCK;
	snprintf(e->name, sizeof(e->name), "cpu-clock%s", mods);
}

/* Open every event for every target. Returns 0, 1 to retry with changed
 * attrs (a fallback was applied), or -1 with the error printed. */
static int open_all(struct hpm_ctx *ctx, struct opts *o, struct rec_ev *ev, int nev,
		    struct target *t, int nt, size_t mapsz, bool *inherit, bool grouped)
{
	for (int i = 0; i < nt; i++)
		for (int j = 0; j < nev; j++)
			t[i].fds[j] = -1;
	for (int i = 0; i < nt; i++) {
		for (int j = 0; j < nev; j++) {
			int gfd = ev[j].group == j ? -1 : t[i].fds[ev[j].group];
			long fd = perf_open(&ev[j].attr, t[i].pid, t[i].cpu, gfd);
			if (fd >= 0) {
				t[i].fds[j] = (int)fd;
				continue;
			}
			int err = errno;
			if ((err == ENOENT || err == ENXIO || err == ENODEV || err == EOPNOTSUPP) &&
			    ev[j].attr.type == PERF_TYPE_HARDWARE &&
			    ev[j].attr.config == PERF_COUNT_HW_CPU_CYCLES) {
				/* perf's rule: cycles that cannot be opened (no hardware PMU, as in
				 * most VMs) become the cpu-clock software event, same modifiers */
				close_targets(t, nt, nev, mapsz);
				char was[128];
				snprintf(was, sizeof(was), "%s", ev[j].name);
				cycles_to_cpu_clock(&ev[j]);
				if (!o->quiet)
					fprintf(stderr, "hpm record: %s cannot be counted here (no hardware "
							"cycle counter); sampling %s instead, as perf does\n",
						was, ev[j].name);
				return 1;
			}
			if ((err == EOPNOTSUPP || err == EINVAL) && ev[j].precise_max &&
			    ev[j].attr.precise_ip) {
				/* ":P" like perf: the highest precise level this PMU takes */
				close_targets(t, nt, nev, mapsz);
				ev[j].attr.precise_ip--;
				return 1;
			}
			close_targets(t, nt, nev, mapsz);
			if ((err == EACCES || err == EPERM) && !ev[j].explicit_mods &&
			    !ev[j].attr.exclude_kernel) {
				for (int k = 0; k < nev; k++)
					if (!ev[k].explicit_mods) {
						ev[k].attr.exclude_kernel = ev[k].attr.exclude_hv = 1;
						if (!strchr(ev[k].name, ':'))
							strncat(ev[k].name, ":u", sizeof(ev[k].name) - strlen(ev[k].name) - 1);
					}
				char par[16] = "?";
				FILE *pf = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
				if (pf) {
					if (fgets(par, sizeof(par), pf))
						par[strcspn(par, "\n")] = 0;
					fclose(pf);
				}
				fprintf(stderr, "hpm record: kernel sampling is not allowed to this user "
						"(kernel.perf_event_paranoid=%s); recording user space only (:u). "
						"Run as root or with CAP_PERFMON for kernel stacks; hpm never "
						"changes this setting\n", par);
				return 1;
			}
			if (err == EINVAL && *inherit && grouped) {
				*inherit = false;
				for (int k = 0; k < nev; k++)
					ev[k].attr.inherit = 0;
				fprintf(stderr, "hpm record: this kernel cannot follow children while "
						"reading a counter group in each sample (Linux < 6.12); recording "
						"the command's own process only. Use -a to include its children\n");
				return 1;
			}
			hpm_ctx__explain_open(ctx, -err, ev[j].name, &ev[j].attr, t[i].pid, t[i].cpu);
			fprintf(stderr, "hpm record: %s\n", hpm_ctx__last_error(ctx));
			return -1;
		}
		t[i].ring = mmap(NULL, mapsz, PROT_READ | PROT_WRITE, MAP_SHARED, t[i].fds[0], 0);
		if (t[i].ring == MAP_FAILED) {
			int err = errno;
			t[i].ring = NULL;
			close_targets(t, nt, nev, mapsz);
			fprintf(stderr, "hpm record: cannot map the %zu KiB sample buffer: %s; use a "
					"smaller -m (the limit is kernel.perf_event_mlock_kb plus "
					"ulimit -l)\n", mapsz >> 10, strerror(err));
			return -1;
		}
		for (int j = 1; j < nev; j++)
			if (ioctl(t[i].fds[j], PERF_EVENT_IOC_SET_OUTPUT, t[i].fds[0])) {
				int err = errno;
				close_targets(t, nt, nev, mapsz);
				fprintf(stderr, "hpm record: cannot share the sample buffer: %s\n",
					strerror(err));
				return -1;
			}
	}
	(void)o;
	return 0;
}

struct counts {
	uint64_t samples, user_samples, lost, lost_samples, records, bytes;
	bool grouped, callchain;
};

/* Kernel addresses of a sample (layout fixed by setup_attrs: IDENTIFIER, IP,
 * TID, TIME, CPU, PERIOD, [READ group], [CALLCHAIN]); the kallsyms copy keeps
 * only the symbols they fall into. */
static void note_kernel_addrs(const struct counts *c, const uint64_t *w, size_t n)
{
	if (n < 6)
		return;
	rec_kernel_addr(w[1]);
	size_t i = 6;
	if (c->grouped) {
		if (i >= n)
			return;
		i += 3 + 2 * w[i];
	}
	if (!c->callchain || i >= n)
		return;
	uint64_t nr = w[i++];
	for (uint64_t k = 0; k < nr && i < n; k++, i++)
		if (w[i] < (uint64_t)PERF_CONTEXT_MAX)
			rec_kernel_addr(w[i]);
}

/* Copy the new records of one ring buffer into the file. */
static int drain(struct target *t, size_t datasz, struct perf_file *pf, struct counts *c)
{
	struct perf_event_mmap_page *pg = t->ring;
	char *data = (char *)t->ring + sysconf(_SC_PAGESIZE);
	uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = pg->data_tail;
	static char rec[65536];
	int r = 0;
	while (tail < head && !r) {
		struct perf_event_header h;
		size_t off = tail % datasz;
		if (off + sizeof(h) <= datasz)
			memcpy(&h, data + off, sizeof(h));
		else {
			size_t k = datasz - off;
			memcpy(&h, data + off, k);
			memcpy((char *)&h + k, data, sizeof(h) - k);
		}
		if (h.size < sizeof(h) || tail + h.size > head)
			break; /* cannot happen with a sane kernel; stop rather than loop */
		const char *p = data + off;
		if (off + h.size > datasz) {
			size_t k = datasz - off;
			memcpy(rec, data + off, k);
			memcpy(rec + k, data, h.size - k);
			p = rec;
		}
		if (h.type == PERF_RECORD_SAMPLE) {
			c->samples++;
			c->user_samples += (h.misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_USER;
			note_kernel_addrs(c, (const uint64_t *)(p + sizeof(h)), (h.size - sizeof(h)) / 8);
		}
		else if (h.type == PERF_RECORD_LOST)
			c->lost += ((const uint64_t *)(p + sizeof(h)))[1];
		else if (h.type == PERF_RECORD_LOST_SAMPLES)
			c->lost_samples += ((const uint64_t *)(p + sizeof(h)))[0];
		c->records++;
		r = perf_file__write(pf, p, h.size);
		tail += h.size;
	}
	__atomic_store_n(&pg->data_tail, tail, __ATOMIC_RELEASE);
	return r;
}

static int drain_all(struct target *t, int nt, size_t datasz, struct perf_file *pf, struct counts *c)
{
	uint64_t before = c->records;
	for (int i = 0; i < nt; i++) {
		int r = drain(&t[i], datasz, pf, c);
		if (r)
			return r;
	}
	if (c->records != before) {
		/* everything before this point is in the file: perf may sort and flush */
		struct perf_event_header h = { .type = 68 /* FINISHED_ROUND */, .size = sizeof(h) };
		int r = perf_file__write(pf, &h, sizeof(h));
		return r ? r : perf_file__flush(pf); /* pipe mode: the reader gets the round now */
	}
	return 0;
}

/* PERF_RECORD_READ with the closing count of every event (single-counter
 * layout: value, time_enabled, time_running, id), so that totals are known
 * and per-sample deltas can be checked against them. */
static int write_final_counts(struct target *t, int nt, struct rec_ev *ev, int nev, bool grouped,
			      struct perf_file *pf, uint64_t *totals)
{
	for (int i = 0; i < nt; i++) {
		for (int j = 0; j < nev; j++) {
			if (ev[j].group != j || t[i].fds[j] < 0)
				continue;
			uint64_t buf[4 + 2 * MAX_EV];
			ssize_t got = read(t[i].fds[j], buf, sizeof(buf));
			if (got <= 0)
				continue;
			int n = grouped ? (int)buf[0] : 1;
			uint64_t ena = grouped ? buf[1] : buf[1], run = grouped ? buf[2] : buf[2];
			for (int k = 0; k < n; k++) {
				uint64_t val = grouped ? buf[3 + 2 * k] : buf[0];
				if (j + k < nev)
					totals[j + k] += val;
				uint64_t id = grouped ? buf[4 + 2 * k] : buf[3];
				struct {
					uint32_t pid, tid;
					uint64_t value, enabled, running, id;
				} b = { (uint32_t)t[i].pid, (uint32_t)t[i].pid, val, ena, run, id };
				int r = rec_emit(pf, PERF_RECORD_READ, 0, &b, sizeof(b), (uint32_t)t[i].pid,
						 (uint32_t)t[i].pid, id);
				if (r)
					return r;
			}
		}
	}
	return 0;
}

static void header_features(struct perf_file *pf, int argc, char **argv)
{
	struct utsname u;
	if (!uname(&u)) {
		perf_file__feat_string(pf, PF_FEAT_HOSTNAME, u.nodename);
		perf_file__feat_string(pf, PF_FEAT_OSRELEASE, u.release);
		perf_file__feat_string(pf, PF_FEAT_ARCH, u.machine);
	}
	char v[64];
	snprintf(v, sizeof(v), "hpm %s", hpm_version());
	perf_file__feat_string(pf, PF_FEAT_VERSION, v);
	perf_file__feat_u32(pf, PF_FEAT_NRCPUS, (uint32_t)sysconf(_SC_NPROCESSORS_CONF));
	perf_file__feat_u32(pf, PF_FEAT_NRCPUS, (uint32_t)sysconf(_SC_NPROCESSORS_ONLN));
	char desc[256] = "unknown", line[512];
	FILE *f = fopen("/proc/cpuinfo", "r");
	while (f && fgets(line, sizeof(line), f)) {
		char *c = strchr(line, ':');
		if (c && (!strncmp(line, "model name", 10) || !strncmp(line, "uarch", 5) ||
			  !strncmp(line, "CPU part", 8))) {
			snprintf(desc, sizeof(desc), "%s", c + 2);
			desc[strcspn(desc, "\n")] = 0;
			break;
		}
	}
	if (f)
		fclose(f);
	perf_file__feat_string(pf, PF_FEAT_CPUDESC, desc);
	perf_file__feat_u32(pf, PF_FEAT_CMDLINE, (uint32_t)argc + 1);
	perf_file__feat_string(pf, PF_FEAT_CMDLINE, "hpm");
	for (int i = 0; i < argc; i++)
		perf_file__feat_string(pf, PF_FEAT_CMDLINE, argv[i]);
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option lopts[] = {
		{ "event", required_argument, 0, 'e' },   { "count", required_argument, 0, 'c' },
		{ "freq", required_argument, 0, 'F' },    { "call-graph", required_argument, 0, 'G' },
		{ "output", required_argument, 0, 'o' },  { "pid", required_argument, 0, 'p' },
		{ "tid", required_argument, 0, 't' },
		{ "all-cpus", no_argument, 0, 'a' },      { "cpu", required_argument, 0, 'C' },
		{ "no-inherit", no_argument, 0, 'i' },    { "mmap-pages", required_argument, 0, 'm' },
		{ "quiet", no_argument, 0, 'q' },         { "no-kallsyms", no_argument, 0, 'K' },
		{ "kallsyms", required_argument, 0, 'k' },
		{ "help", no_argument, 0, 'h' },          { 0, 0, 0, 0 }
	};
	unsigned long long v;
	int c;
	optind = 1;
	opterr = 0; /* usage_error() says it in one line */
	while ((c = getopt_long(argc, argv, "+e:c:F:go:p:t:aC:im:qh", lopts, NULL)) != -1) {
		switch (c) {
		case 'e':
			if (o->nevents == 16) {
				fprintf(stderr, "hpm record: too many -e options (at most 16)\n");
				return 2;
			}
			o->events[o->nevents++] = optarg;
			break;
		case 'c':
			if (parse_count("record", optarg, "-c", 1, 1ULL << 62, &v))
				return 2;
			o->period = v;
			o->rate_given = true;
			break;
		case 'F':
			if (parse_count("record", optarg, "-F", 1, 1000000, &v))
				return 2;
			o->freq = v;
			o->rate_given = true;
			break;
		case 'g': o->callchain = true; break;
		case 'G':
			if (!strcmp(optarg, "fp"))
				o->callchain = true;
			else if (strcmp(optarg, "none")) {
				fprintf(stderr, "hpm record: --call-graph %s is not supported: hpm records "
						"frame-pointer stacks (fp); build the program with "
						"-fno-omit-frame-pointer\n", optarg);
				return 2;
			}
			break;
		case 'o': o->output = optarg; break;
		case 'p':
			free(o->pids);
			if (parse_pid_list("record", "-p", optarg, &o->pids, &o->npids))
				return 2;
			break;
		case 't':
			free(o->tids);
			if (parse_pid_list("record", "-t", optarg, &o->tids, &o->ntids))
				return 2;
			break;
		case 'a': o->all_cpus = true; break;
		case 'C':
			free(o->cpus);
			if (parse_cpu_list("record", optarg, &o->cpus, &o->ncpus))
				return 2;
			break;
		case 'i': o->no_inherit = true; break;
		case 'm':
			if (parse_count("record", optarg, "-m", 1, 1 << 20, &v))
				return 2;
			if (v & (v - 1)) {
				fprintf(stderr, "hpm record: -m must be a power of 2, got %llu\n", v);
				return 2;
			}
			o->pages = (int)v;
			break;
		case 'q': o->quiet = true; break;
		case 'K': o->no_kallsyms = true; break;
		case 'k':
			if (!strcmp(optarg, "all"))
				o->all_kallsyms = true;
			else if (!strcmp(optarg, "none"))
				o->no_kallsyms = true;
			else if (strcmp(optarg, "used")) {
				fprintf(stderr, "hpm record: --kallsyms takes used, all or none, got '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 'h': fputs(record_help, stdout); return 0;
		default: return usage_error("record", "+e:c:F:go:p:t:aC:im:qh", argv);
		}
	}
	if (o->period && o->freq) {
		fprintf(stderr, "hpm record: give either -c (period) or -F (frequency), not both\n");
		return 2;
	}
	if (optind < argc)
		o->cmd = argv + optind;
	bool sys = o->all_cpus || o->ncpus;
	if (!o->cmd && !o->npids && !o->ntids && !sys) {
		fprintf(stderr, "hpm record: nothing to record: give a command after '--', -p PID, -t "
				"TID, -a or -C CPUS (hpm record --help)\n");
		return 2;
	}
	if ((o->npids || o->ntids) && (sys || (o->npids && o->ntids))) {
		fprintf(stderr, "hpm record: choose one target: -p PIDS, -t TIDS, or -a/-C CPUS "
				"(a command after '--' then only sets the duration)\n");
		return 2;
	}
	return -1;
}

static int add_target(struct target *t, int *nt, pid_t pid, int cpu)
{
	if (*nt == MAX_TARGETS) {
		fprintf(stderr, "hpm record: too many threads or CPUs to record (at most %d)\n",
			MAX_TARGETS);
		return -1;
	}
	t[(*nt)++] = (struct target){ .pid = pid, .cpu = cpu };
	return 0;
}

/* Who is recorded: CPUs, the threads of -p/-t, or the command. The kernel
 * refuses to mmap an inherited per-task event (children would all write into
 * one buffer), so a followed command is recorded per CPU, like perf. */
static int make_targets(struct opts *o, pid_t child, bool inherit, struct target *t)
{
	int nt = 0, *cpus = o->cpus, ncpus = o->ncpus;
	if (o->all_cpus || (inherit && own_command(o))) {
		if (online_cpus_list(&cpus, &ncpus)) {
			fprintf(stderr, "hpm record: cannot list the online CPUs\n");
			return -1;
		}
	}
	if (o->all_cpus || o->ncpus) {
		for (int c = 0; c < ncpus; c++)
			if (add_target(t, &nt, -1, cpus[c]))
				goto fail;
	} else if (o->npids) {
		for (int p = 0; p < o->npids; p++) {
			pid_t *tids;
			int n;
			if (process_threads(o->pids[p], &tids, &n)) {
				fprintf(stderr, "hpm record: no process %d\n", (int)o->pids[p]);
				goto fail;
			}
			for (int i = 0; i < n; i++)
				if (add_target(t, &nt, tids[i], -1)) {
					free(tids);
					goto fail;
				}
			free(tids);
		}
	} else if (o->ntids) {
		for (int i = 0; i < o->ntids; i++)
			if (add_target(t, &nt, o->tids[i], -1))
				goto fail;
	} else if (inherit) {
		for (int c = 0; c < ncpus; c++)
			if (add_target(t, &nt, child, cpus[c]))
				goto fail;
	} else {
		add_target(t, &nt, child, -1);
	}
	if (cpus != o->cpus)
		free(cpus);
	return nt;
fail:
	if (cpus != o->cpus)
		free(cpus);
	return -1;
}

/* Any of the attached threads still running (zombies count as gone)? */
static bool targets_alive(const struct target *t, int nt)
{
	for (int i = 0; i < nt; i++)
		if (task_alive(t[i].pid))
			return true;
	return false;
}

int cmd_record(int argc, char **argv)
{
	struct opts o = { .pages = 64, .freq = 0 };
	int rc = parse_opts(argc, argv, &o);
	if (rc >= 0) {
		free(o.pids);
		free(o.tids);
		free(o.cpus);
		return rc;
	}
	/* perf's rule: '-o -' is pipe mode on standard output, and so is no -o when standard
	 * output is a pipe ('hpm record -- CMD | perf script -i -') */
	struct stat ost;
	if (!o.output)
		o.output = !fstat(STDOUT_FILENO, &ost) && S_ISFIFO(ost.st_mode) ? "-" : "perf.data";
	bool pipe_out = !strcmp(o.output, "-");
	rc = 1; /* the exit status at fail: (a signal before the command ran sets 128 + it) */
	if (!o.period && !o.freq)
		o.freq = 4000;

	struct hpm_ctx *ctx;
	if (hpm_ctx__new(&ctx))
		return 1;
	static struct rec_ev ev[MAX_EV];
	int nev = 0;
	for (int i = 0; i < o.nevents; i++)
		if (parse_events(ctx, o.events[i], ev, &nev)) {
			hpm_ctx__delete(ctx);
			return 2;
		}
	int werr = pipe_out ? 0 : output_writable(o.output);
	if (werr) { /* before any note or the command's start: a bad -o is the one line said */
		fprintf(stderr, "hpm record: cannot write '%s': %s\n", o.output, strerror(werr));
		hpm_ctx__delete(ctx);
		return 1;
	}
	if (!nev) {
		const char *def = hpm_ctx__probe(ctx, "cycles") == 0 ? "cycles" : "cpu-clock";
		parse_events(ctx, def, ev, &nev);
		if (!o.quiet && strcmp(def, "cycles"))
			fprintf(stderr, "hpm record: no hardware cycle counter here; sampling cpu-clock\n");
	}
	bool grouped = false;
	for (int i = 0; i < nev; i++)
		grouped |= ev[i].group == i && group_size(ev, nev, i) > 1;

	static struct target t[MAX_TARGETS];
	static struct perf_file pf;
	int go = -1, errfd = -1, outfd = -1;
	pid_t child = 0;
	if (pipe_out) {
		/* the stream goes to a copy of standard output; hpm's (and so the command's)
		 * standard output becomes standard error, so the command's output cannot get
		 * into the stream */
		outfd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
		if (outfd < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
			fprintf(stderr, "hpm record: cannot write to standard output: %s\n", strerror(errno));
			hpm_ctx__delete(ctx);
			return 1;
		}
	}
	/* From here on a stop signal (Ctrl-C, kill, a closed terminal) is a request: the file
	 * is finished and written (or, before the command runs, not made at all), never left
	 * half-written. Caught before the command is forked, as perf record does: the command
	 * then starts with these signals at their default action (exec resets a caught signal)
	 * even when hpm was started with them ignored (a '&' in a script ignores SIGINT), so it
	 * takes a terminal's Ctrl-C itself, as under perf. SA_RESTART only while the forked
	 * command waits to exec, so that the wait is not cut short. */
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_RESTART };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	if (o.cmd) {
		child = spawn(o.cmd, &go, &errfd);
		if (child < 0) {
			fprintf(stderr, "hpm record: cannot start '%s': %s\n", o.cmd[0], strerror(errno));
			hpm_ctx__delete(ctx);
			return 1;
		}
	}
	bool inherit = !o.no_inherit && own_command(&o);
	int nt = make_targets(&o, child, inherit, t);
	size_t pagesz = (size_t)sysconf(_SC_PAGESIZE), datasz = (size_t)o.pages * pagesz;
	size_t mapsz = datasz + pagesz;
	int r = nt < 0 ? -1 : 1;
	setup_attrs(&o, ev, nev, grouped, inherit);
	for (int tries = 0; r == 1 && tries < 4 + nev; tries++)
		r = open_all(ctx, &o, ev, nev, t, nt, mapsz, &inherit, grouped);
	if (r) {
		if (child > 0) {
			kill(child, SIGKILL);
			waitpid(child, NULL, 0);
		}
		hpm_ctx__delete(ctx);
		return 1;
	}
	sa.sa_flags = 0; /* hpm's waits end at a stop signal */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	/* 0600 and an earlier file kept as FILE.old, as perf record: the file holds kernel
	 * addresses (samples, the kallsyms copy) */
	r = pipe_out ? perf_file__open_pipe(&pf, outfd)
		     : perf_file__open_flags(&pf, o.output, PF_OPEN_PRIVATE | PF_OPEN_BACKUP);
	if (outfd >= 0)
		close(outfd);
	outfd = -1;
	if (r) {
		fprintf(stderr, "hpm record: cannot write '%s': %s\n", o.output, strerror(-r));
		goto fail;
	}
	for (int j = 0; j < nev; j++) {
		int idx = perf_file__add_attr(&pf, &ev[j].attr, ev[j].name);
		for (int i = 0; i < nt; i++) {
			uint64_t id;
			if (!ioctl(t[i].fds[j], PERF_EVENT_IOC_ID, &id))
				perf_file__add_id(&pf, idx, id);
		}
		if (ev[j].group == j && group_size(ev, nev, j) > 1) {
			char gname[128];
			snprintf(gname, sizeof(gname), "{%s,...}", ev[j].name);
			perf_file__add_group(&pf, j, group_size(ev, nev, j), gname);
		}
	}
	r = perf_file__begin_data(&pf);
	header_features(&pf, argc, argv);
	const char *tp[MAX_EV];
	int ntp = 0;
	for (int j = 0; j < nev; j++) {
		bool dup = false;
		for (int k = 0; k < ntp; k++)
			dup |= !strncmp(tp[k], ev[j].name, strcspn(ev[j].name, ":") + 1 +
				 strcspn(ev[j].name + strcspn(ev[j].name, ":") + 1, ":"));
		if (ev[j].attr.type == PERF_TYPE_TRACEPOINT && !dup)
			tp[ntp++] = ev[j].name;
	}
	if (!r && ntp && rec_tracing_data(&pf, tp, ntp) < 0) {
		fprintf(stderr, "hpm record: cannot read the tracepoint formats in tracefs that perf "
				"needs to read the samples of '%s'\n", tp[0]);
		goto fail;
	}
	int nsyms = 0, nsynth = 0;
	bool kernel_wanted = false;
	for (int j = 0; j < nev; j++)
		kernel_wanted |= !ev[j].attr.exclude_kernel;
	if (!r && !o.no_kallsyms) {
		int k = rec_kernel_begin(&pf, &nsyms);
		if (k == -EACCES || k == -ENOENT) {
			if (kernel_wanted && !o.quiet)
				fprintf(stderr, "hpm record: kernel symbol addresses are hidden "
						"(kernel.kptr_restrict); kernel frames will stay addresses. "
						"Record as root to include them\n");
		} else
			r = k;
	}
	if (!r && own_command(&o))
		r = rec_comm(&pf, child, child, strrchr(o.cmd[0], '/') ? strrchr(o.cmd[0], '/') + 1 : o.cmd[0]);
	for (int i = 0; !r && i < o.npids; i++)
		r = rec_synth_task(&pf, o.pids[i], &nsynth);
	for (int i = 0; !r && i < o.ntids; i++)
		r = rec_synth_task(&pf, o.tids[i], &nsynth);
	if (!r && (o.all_cpus || o.ncpus))
		r = rec_synth_all(&pf, &nsynth);
	if (r) {
		fprintf(stderr, "hpm record: cannot write '%s': %s\n", o.output, strerror(-r));
		goto fail;
	}

	if (interrupted) {
		fprintf(stderr, "hpm record: stopped by %s before the command ran; nothing was written\n",
			strsignal(interrupted));
		rc = 128 + interrupted;
		goto fail;
	}
	if (!ev[0].attr.enable_on_exec)
		for (int i = 0; i < nt; i++)
			for (int j = 0; j < nev; j++)
				if (ev[j].group == j)
					ioctl(t[i].fds[j], PERF_EVENT_IOC_ENABLE, 0);
	int status = 0, exec_err = 0;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (o.cmd) {
		exec_err = spawn_release(child, go, errfd);
		go = errfd = -1;
		if (exec_err) {
			waitpid(child, &status, 0);
			fprintf(stderr, "hpm record: cannot run '%s': %s\n", o.cmd[0],
				exec_err > 0 ? strerror(exec_err) : "lost the child process");
			perf_file__abort(&pf);
			close_targets(t, nt, nev, mapsz);
			hpm_ctx__delete(ctx);
			return 127;
		}
	}
	struct counts cnt = { .grouped = grouped, .callchain = o.callchain };
	uint64_t totals[MAX_EV] = { 0 };
	struct pollfd pfd[MAX_TARGETS];
	for (int i = 0; i < nt; i++)
		pfd[i] = (struct pollfd){ .fd = t[i].fds[0], .events = POLLIN };
	bool child_done = false, attached = o.npids || o.ntids;
	while (!r) {
		r = drain_all(t, nt, datasz, &pf, &cnt);
		if (r || child_done || interrupted)
			break;
		if (o.cmd && waitpid(child, &status, WNOHANG) == child)
			child_done = true; /* one more pass for the last records */
		else if (!o.cmd && attached && !targets_alive(t, nt))
			child_done = true; /* everything attached to has exited */
		else
			poll(pfd, (nfds_t)nt, 100);
	}
	if (o.cmd && !child_done) {
		/* interrupted: like perf, stop the command and write the file now */
		kill(child, SIGTERM);
		waitpid(child, &status, 0);
	}
	for (int i = 0; i < nt; i++)
		for (int j = 0; j < nev; j++)
			if (ev[j].group == j)
				ioctl(t[i].fds[j], PERF_EVENT_IOC_DISABLE, 0);
	if (!r)
		r = drain_all(t, nt, datasz, &pf, &cnt);
	if (!r)
		r = write_final_counts(t, nt, ev, nev, grouped, &pf, totals);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	close_targets(t, nt, nev, mapsz);
	if (nsyms)
		nsyms = rec_kernel_end(&pf, o.all_kallsyms);
	if (pipe_out)
		nsyms = 0; /* perf takes no hpm section in a stream: the copy is left out */
	if (!r)
		r = perf_file__commit(&pf);
	if (r) {
		fprintf(stderr, "hpm record: cannot write '%s': %s; nothing was written\n", o.output,
			strerror(-r));
		perf_file__abort(&pf);
		hpm_ctx__delete(ctx);
		return 1;
	}
	if (!o.quiet) {
		struct stat st;
		double mb = pipe_out ? (double)(pf.data_size + 16) / 1e6 /* header + records */
			    : stat(o.output, &st) ? 0 : (double)st.st_size / 1e6;
		fprintf(stderr, "hpm record: %llu samples in %.3f MB written to %s (%.2f s",
			(unsigned long long)cnt.samples, mb, pipe_out ? "standard output" : o.output,
			(double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9);
		if (nsyms)
			fprintf(stderr, ", %d kernel symbols", nsyms);
		fprintf(stderr, ")\n");
		bool hw_leader = false, user = false;
		for (int j = 0; j < nev; j++)
			if (ev[j].group == j) {
				hw_leader |= core_pmu_type(ev[j].attr.type);
				user |= !ev[j].attr.exclude_user;
			}
		/* seen on QEMU riscv64 (SBI PMU): overflow samples of hardware
		 * events taken in user mode never arrive */
		if (hw_leader && user && o.cmd && cnt.samples >= 10 && !cnt.user_samples)
			fprintf(stderr, "hpm record: warning: none of the %llu samples is from user "
					"space although the command ran there: this PMU loses user-mode "
					"samples of hardware events (QEMU riscv64 does); sample on a timer "
					"and read the counters in a group instead: "
					"-e '{cpu-clock,cycles,instructions}'\n",
				(unsigned long long)cnt.samples);
		/* a fixed period and the final count say how many overflows there
		 * were; QEMU's emulated PMUs deliver only some of them */
		uint64_t expect = 0;
		for (int j = 0; j < nev; j++)
			if (ev[j].group == j && !ev[j].attr.freq && ev[j].attr.sample_period)
				expect += totals[j] / ev[j].attr.sample_period;
		if (expect >= 10 && cnt.samples + cnt.lost + cnt.lost_samples < expect / 2)
			fprintf(stderr, "hpm record: warning: the PMU delivered %llu samples where the "
					"final counts imply %llu overflows: it loses overflow interrupts "
					"(QEMU's emulated PMUs do); sample on a timer and read the counters "
					"in a group: -e '{cpu-clock,cycles,instructions}'\n",
				(unsigned long long)cnt.samples, (unsigned long long)expect);
		if (cnt.lost || cnt.lost_samples)
			fprintf(stderr, "hpm record: warning: %llu samples lost (ring buffer full or "
					"kernel throttling); use a larger -m, a longer -c or a lower -F\n",
				(unsigned long long)(cnt.lost + cnt.lost_samples));
	}
	if (pipe_out) {
		/* said even with -q: the stream lacks what a file would hold */
		char names[512];
		int n = perf_file__pipe_left_out(&pf, names, sizeof(names));
		if (n)
			fprintf(stderr, "hpm record: warning: %d header section(s) left out of the stream, "
					"too large for one record (64 KiB, as in perf): %s; record to a file "
					"(-o FILE) to keep them\n", n, names);
	}
	hpm_ctx__delete(ctx);
	free(o.pids);
	free(o.tids);
	free(o.cpus);
	if (interrupted) {
		/* The file is written and the command stopped: end by a signal as perf record
		 * does, so that a shell sees 130 for SIGINT, 143 for SIGTERM; by the command's
		 * signal when it died by one (the SIGTERM hpm stopped it with), as perf takes
		 * the workload's, else by the one that stopped hpm. */
		int sig = o.cmd && WIFSIGNALED(status) ? WTERMSIG(status) : interrupted;
		end_by_signal(sig);
		return 128 + sig;
	}
	if (o.cmd)
		return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	return 0;

fail:
	perf_file__abort(&pf);
	close_targets(t, nt, nev, mapsz);
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	hpm_ctx__delete(ctx);
	return rc;
}
