/* SPDX-License-Identifier: MIT */
/* hpm stat: count events of a command (-- cmd), processes or threads (-p/-t)
 * or CPUs (-a/-C), in total, per CPU/core/socket/thread, and per interval. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "stat.h"
#include "usage_error.h"

static const char stat_help[] =
	"usage: hpm stat [options] [--] COMMAND [ARGS...]\n"
	"       hpm stat [options] -p PID[,PID...] | -t TID[,...] | -a | -C CPUS [-- COMMAND]\n"
	"       (count them while COMMAND runs, or until Ctrl-C / they exit)\n"
	"\n"
	"  -e, --event LIST      events, perf syntax: cycles,instructions:u,{a,b},\n"
	"                        sched:sched_switch, sched:sched_*, cpu/event=0x3c,umask=0/,\n"
	"                        modifiers :u :k :h :p :pp :ppp :P :G :H :I :D :S\n"
	"                        (braces: one group that must be counted together)\n"
	"  -M, --metrics GROUPS  metric groups (see 'hpm list --metrics'), comma-separated\n"
	"  -d, --detailed        add cache events of this CPU's table (-dd: and TLB and\n"
	"                        L1i, -ddd: and prefetch); <not supported> where it lacks them\n"
	"  -r, --repeat N        run the command N times; print mean and +- stddev of the mean\n"
	"  -I, --interval-print MSEC  print the counts of every MSEC milliseconds (>= 10)\n"
	"  -D, --delay MSEC      start counting MSEC milliseconds after the command starts\n"
	"  -x, --field-separator SEP  CSV: value,unit,event,running,pct,metric,unit,path\n"
	"      --json            JSON on stdout (format hpm-stat v1; hpmkit stat-report)\n"
	"  -j, --json-output     perf stat -j's JSON: one object per count (stderr or -o)\n"
	"  -p, --pid PIDS        attach to running processes (all their threads)\n"
	"  -t, --tid TIDS        attach to running threads\n"
	"  -a, --all-cpus        count every online CPU (system-wide)\n"
	"  -C, --cpu CPUS        count these CPUs, e.g. 0 or 0,2-3 (system-wide on them)\n"
	"  -A, --no-aggr         one line per CPU (with -a or -C)\n"
	"      --per-core        one line per core, --per-socket per socket (with -a or -C)\n"
	"      --per-thread      one line per thread (of a command, or with -p, -t or -a)\n"
	"  -i, --no-inherit      do not count child processes\n"
	"  -B, --big-num         1,234,567 (the default); --no-big-num: 1234567\n"
	"  -o, --output FILE     write the report to FILE (written whole or not at all),\n"
	"                        after perf's '# started on DATE' line\n"
	"      --append          add the report to -o FILE instead of replacing it\n"
	"      --group-max N     at most N events per perf group (default: the PMU's counters)\n"
	"  -v, --verbose         print the perf_event_attr of every event\n"
	"  -h, --help\n"
	"\n"
	"Counts, multiplexing scale and the read path of each event go to stderr (like\n"
	"perf stat) unless --json or -o is given. An event this machine cannot count is\n"
	"shown as <not supported> and the others are counted (only when none can be\n"
	"counted is it an error); so is an event a metric group needs, and its metrics\n"
	"are n/a with the reason. Exit status: the command's.\n"
	"\n"
	"Ctrl-C (SIGINT), as in perf stat: the command gets it from the terminal and\n"
	"handles it; hpm does not stop it but waits for it to end, then prints the\n"
	"counts (and 'COMMAND: Interrupt' when a signal ended it). hpm then exits with\n"
	"the command's status when it exited, else ends by SIGINT (a shell sees 130).\n"
	"With -I, or without a command, SIGINT stops hpm at once (a command goes on).\n"
	"SIGTERM to hpm stops the command (SIGTERM) and prints the counts at once; then\n"
	"hpm ends by the command's signal, or without a command by SIGTERM.\n"
	"\n"
	"--per-thread of a command follows its threads and child processes with\n"
	"ptrace(2): each gets its own counters before its first instruction and is read\n"
	"when it exits (a context switch or two more per new task; without -I). The\n"
	"kernel's work for a fork()ed child before then is in no row: with glibc's\n"
	"fork() one page fault each, which the total without --per-thread counts.\n"
	"\n"
	"examples:\n"
	"  hpm stat -- ./app                          default events\n"
	"  hpm stat -e cycles,instructions:u -r 5 -- ./app\n"
	"  hpm stat -M ipc,mpki -- ./app              metric groups of this CPU\n"
	"  hpm stat -e PAPI_L1_DCM,PAPI_TOT_INS -- ./app\n"
	"  hpm stat -e page-faults -x, -- ./app       CSV\n"
	"  hpm stat -j -e task-clock,cycles -- ./app  perf's JSON lines\n"
	"  hpm stat -d -- ./app                       default + cache events\n"
	"  hpm stat -I 100 -e task-clock -- ./app     counts of every 100 ms\n"
	"  hpm stat -e sched:sched_switch -a -- sleep 1   a tracepoint, system-wide\n"
	"  hpm stat -a -A -e cpu-clock -- sleep 1     one line per CPU\n"
	"  hpm stat -C 0,2-3 --per-core -e cpu-clock -- sleep 1\n"
	"  hpm stat --per-thread -p 1234 -- sleep 5   each thread of process 1234 for 5 s\n"
	"  hpm stat --per-thread -e page-faults -- ./app   each thread and child of ./app\n"
	"  hpm stat -D 500 -e task-clock -- ./app     skip the first 500 ms\n";

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int add_unit(struct stat_state *st, pid_t tid, int cpu)
{
	struct unit *nv = realloc(st->units, sizeof(*nv) * (size_t)(st->nunits + 1));
	if (!nv)
		return -1;
	st->units = nv;
	st->units[st->nunits++] = (struct unit){ .tid = tid, .cpu = cpu };
	return 0;
}

/* Every thread of the system (for --per-thread -a), as perf does it. */
static int all_threads(struct stat_state *st)
{
	DIR *d = opendir("/proc");
	if (!d)
		return -1;
	for (struct dirent *de; (de = readdir(d));) {
		pid_t pid = atoi(de->d_name);
		pid_t *tids;
		int n;
		if (pid <= 0 || process_threads(pid, &tids, &n))
			continue;
		for (int i = 0; i < n; i++)
			if (add_unit(st, tids[i], -1)) {
				free(tids);
				closedir(d);
				return -1;
			}
		free(tids);
	}
	closedir(d);
	return 0;
}

static int make_units(struct stat_state *st, struct stat_opts *o)
{
	if (o->all_cpus && o->aggr == AGGR_THREAD)
		return all_threads(st);
	if (o->all_cpus || o->ncpus) {
		int *cpus = o->cpus, n = o->ncpus;
		if (o->all_cpus && online_cpus_list(&cpus, &n))
			return -1;
		for (int i = 0; i < n; i++)
			if (add_unit(st, -1, cpus[i]))
				return -1;
		if (cpus != o->cpus)
			free(cpus);
		return 0;
	}
	if (o->npids) {
		for (int p = 0; p < o->npids; p++) {
			pid_t *tids;
			int n;
			if (process_threads(o->pids[p], &tids, &n)) {
				fprintf(stderr, "hpm stat: process %d is gone\n", (int)o->pids[p]);
				return -1;
			}
			for (int i = 0; i < n; i++)
				if (add_unit(st, tids[i], -1)) {
					free(tids);
					return -1;
				}
			free(tids);
		}
		return 0;
	}
	for (int i = 0; i < o->ntids; i++)
		if (add_unit(st, o->tids[i], -1))
			return -1;
	if (!o->ntids)
		return add_unit(st, -1, -1); /* the command */
	return 0;
}

static bool targets_alive(struct stat_opts *o)
{
	pid_t *v = o->npids ? o->pids : o->tids;
	int n = o->npids ? o->npids : o->ntids;
	for (int i = 0; i < n; i++)
		if (task_alive(v[i]))
			return true;
	return false;
}

/* Units without a set are followed threads that exited: their counts are final. */
static int read_units(struct stat_state *st)
{
	for (int u = 0; u < st->nunits; u++)
		if (st->units[u].set && hpm_evset__read_all(st->units[u].set, st->units[u].now) < 0) {
			fprintf(stderr, "hpm stat: %s\n", hpm_ctx__last_error(st->ctx));
			return -1;
		}
	return 0;
}

static void units_ioctl(struct stat_state *st, bool start)
{
	for (int u = 0; u < st->nunits; u++)
		if (st->units[u].set)
			start ? hpm_evset__start(st->units[u].set) : hpm_evset__stop(st->units[u].set);
}

static void snapshot(struct stat_state *st)
{
	for (int u = 0; u < st->nunits; u++)
		memcpy(st->units[u].prev, st->units[u].now, sizeof(struct hpm_value) * (size_t)st->nev);
}

static volatile int caught; /* SIGINT/SIGTERM received (number) */

/* One run: start the command (if any), count until it or the targets end, a
 * signal arrives, and read the totals. */
static int run_once(struct stat_state *st, struct stat_opts *o, const sigset_t *waitset)
{
	pid_t child = -1;
	int go = -1, errfd = -1, status = 0;
	bool own_target = o->cmd && !o->npids && !o->ntids && !o->all_cpus && !o->ncpus;
	/* --per-thread of a command: each task its own counters, none inherited */
	bool follow = stat_follows(o);
	unsigned flags = o->no_inherit || follow ? 0 : HPM_TARGET_INHERIT;
	if (own_target && !o->delay_ms)
		flags |= HPM_TARGET_ENABLE_ON_EXEC;
	if (o->cmd && (child = spawn(o->cmd, &go, &errfd)) < 0) {
		fprintf(stderr, "hpm stat: cannot fork: %s\n", strerror(errno));
		return -1;
	}
	if (follow) { /* its first thread; the others are added as they start */
		st->nunits = 1;
		st->units[0] = (struct unit){ .tid = -1, .cpu = -1 };
	}
	if (stat_build(st, o, own_target ? child : -1, flags) || stat_make_bins(st, o) ||
	    (follow && follow_start(st, o, child))) {
		if (child > 0) {
			kill(child, SIGKILL);
			waitpid(child, NULL, 0);
		}
		return -1;
	}
	bool enabled = own_target && !o->delay_ms;
	if (o->delay_ms)
		fprintf(stderr, "Events disabled\n");
	else if (!own_target)
		units_ioctl(st, true), enabled = true;
	double t0 = now_s();
	/* the command's user and system time, as perf prints them: what the children this
	 * process waits for used, before and after the run */
	struct rusage ru0;
	getrusage(RUSAGE_CHILDREN, &ru0);
	st->ru_known = false;
	if (child > 0) {
		int e = spawn_release(child, go, errfd);
		if (e) {
			waitpid(child, &status, 0);
			follow_end(st);
			if (e < 0)
				fprintf(stderr, "hpm stat: lost the child process\n");
			else
				fprintf(stderr, "hpm stat: cannot run '%s': %s\n", o->cmd[0], strerror(e));
			return e < 0 ? -1 : -127;
		}
	}
	double enable_at = t0 + (double)o->delay_ms / 1e3, count_start = t0;
	double next_tick = o->interval_ms ? t0 + (double)o->interval_ms / 1e3 : 0;
	bool child_done = false, killed = false, interrupted = false;
	for (;;) {
		double now = now_s(), wake = now + 3600;
		if (!enabled)
			wake = enable_at;
		else if (next_tick && next_tick < wake)
			wake = next_tick;
		if (child <= 0 && now + 0.1 < wake)
			wake = now + 0.1; /* attached targets: notice when they exit */
		double dt = wake > now ? wake - now : 0;
		struct timespec ts = { (time_t)dt, (long)((dt - (double)(time_t)dt) * 1e9) };
		siginfo_t si;
		int sig = sigtimedwait(waitset, &si, &ts);
		if (follow) {
			/* births, execs, signals and ends of the command's tasks */
			if (!child_done && follow_events(st, o, enabled, &child_done, &status)) {
				follow_kill(st);
				return -1;
			}
		} else if (sig == SIGCHLD && child > 0 && waitpid(child, &status, WNOHANG) == child)
			child_done = true;
		if (sig == SIGTERM) {
			caught = sig;
			if (child > 0 && !child_done && !killed) {
				/* stop the workload and report at once */
				kill(child, SIGTERM);
				killed = true;
			}
		} else if (sig == SIGINT) {
			/* like perf stat: Ctrl-C is the command's (the terminal sends it to
			 * the command too, which is in hpm's process group); hpm waits for
			 * it to end and then reports, or with -I stops at once and leaves
			 * it running, as perf does */
			caught = sig;
			if (child > 0 && !child_done && o->interval_ms && !killed)
				interrupted = true;
		}
		now = now_s();
		if (!enabled && now >= enable_at && !child_done) {
			units_ioctl(st, true);
			enabled = true;
			count_start = now;
			if (o->interval_ms)
				next_tick = now + (double)o->interval_ms / 1e3;
			fprintf(stderr, "Events enabled\n");
		}
		if (enabled && next_tick && now >= next_tick && !child_done) {
			if (read_units(st))
				return -1;
			stat_print_interval(st, o, now - count_start);
			snapshot(st);
			while (next_tick <= now)
				next_tick += (double)o->interval_ms / 1e3;
		}
		if (child_done || interrupted)
			break;
		if (child <= 0 && (caught || ((o->npids || o->ntids) && !targets_alive(o))))
			break;
	}
	double end = now_s();
	units_ioctl(st, false);
	int r = read_units(st);
	if (follow) {
		/* tasks of the command still running go on, untraced; one row per task */
		follow_end(st);
		if (!r && stat_make_bins(st, o))
			r = -1;
	}
	if (r)
		return -1;
	if (o->interval_ms && enabled)
		stat_print_interval(st, o, end - count_start); /* the last, partial interval */
	double el = enabled ? end - count_start : 0;
	st->elapsed_sum += el;
	st->elapsed_sumsq += el * el;
	if (child > 0 && child_done) {
		struct rusage ru1;
		getrusage(RUSAGE_CHILDREN, &ru1);
#define RU_S(a, b) ((double)((b).tv_sec - (a).tv_sec) + (double)((b).tv_usec - (a).tv_usec) * 1e-6)
		st->ru_user = RU_S(ru0.ru_utime, ru1.ru_utime);
		st->ru_sys = RU_S(ru0.ru_stime, ru1.ru_stime);
#undef RU_S
		st->ru_known = true;
	}
	if (child > 0 && !child_done) {
		/* -I and Ctrl-C: the command goes on, not waited for (as perf) */
		st->status = 0;
		st->status_sig = 0;
		st->cmd_exited = false;
		return 0;
	}
	st->status = child > 0 ? (WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status))
			       : 0;
	st->status_sig = child > 0 && WIFSIGNALED(status) ? WTERMSIG(status) : 0;
	st->cmd_exited = child > 0 && WIFEXITED(status);
	if (st->status_sig) /* perf's line, on stderr whatever the output: "sleep: Interrupt" */
		psignal(st->status_sig, o->cmd[0]);
	return 0;
}

/* Totals of this run into the state (sums over runs, per-bin values). */
static int account(struct stat_state *st)
{
	struct bin all = { .nunits = st->nunits };
	all.units = malloc(sizeof(int) * (size_t)st->nunits);
	if (!all.units)
		return -1;
	for (int u = 0; u < st->nunits; u++)
		all.units[u] = u;
	if (!st->sum) {
		int m = hpm_evset__nr_metrics(st->units[0].set);
		st->sum = calloc((size_t)st->nev + 1, sizeof(double));
		st->sumsq = calloc((size_t)st->nev + 1, sizeof(double));
		st->runsum = calloc((size_t)st->nev + 1, sizeof(double));
		st->ensum = calloc((size_t)st->nev + 1, sizeof(double));
		st->total = calloc((size_t)st->nev + 1, sizeof(struct hpm_value));
		st->msum = calloc((size_t)m + 1, sizeof(double));
		st->mvalid = calloc((size_t)m + 1, sizeof(int));
	}
	if (!st->bin_total || st->nbin_total != st->nbins) {
		/* per bin, this run: a followed command's threads differ from run to run */
		for (int b = 0; st->bin_total && b < st->nbin_total; b++)
			free(st->bin_total[b]);
		free(st->bin_total);
		st->nbin_total = st->nbins;
		st->bin_total = calloc((size_t)st->nbins + 1, sizeof(*st->bin_total));
		for (int b = 0; st->bin_total && b < st->nbins; b++)
			if (!(st->bin_total[b] = calloc((size_t)st->nev + 1, sizeof(struct hpm_value))))
				st->nbin_total = b;
	}
	if (st->bin_total && st->nbin_total != st->nbins) {
		free(all.units);
		return -1;
	}
	if (!st->sum || !st->sumsq || !st->runsum || !st->ensum || !st->total || !st->msum ||
	    !st->mvalid || !st->bin_total) {
		free(all.units);
		return -1;
	}
	stat_sum(st, &all, false, st->total);
	free(all.units);
	for (int b = 0; b < st->nbins; b++)
		stat_sum(st, &st->bins[b], false, st->bin_total[b]);
	if (st->runs == 0)
		hpm_evset__check_quirks(st->units[0].set, st->total, st->quirks, sizeof(st->quirks));
	for (int i = 0; i < st->nev; i++) {
		st->sum[i] += st->total[i].scaled;
		st->sumsq[i] += st->total[i].scaled * st->total[i].scaled;
		st->runsum[i] += (double)st->total[i].running;
		st->ensum[i] += (double)st->total[i].enabled;
	}
	for (int i = 0; i < hpm_evset__nr_metrics(st->units[0].set); i++) {
		double v;
		if (hpm_evset__metric(st->units[0].set, i, st->total, NULL, NULL, &v) == 0) {
			st->msum[i] += v;
			st->mvalid[i]++;
		}
	}
	st->runs++;
	return 0;
}

enum {
	OPT_JSON = 256, OPT_GROUP_MAX, OPT_PER_THREAD, OPT_PER_CORE, OPT_PER_SOCKET, OPT_NO_BIG_NUM,
	OPT_APPEND
};

static int parse_opts(int argc, char **argv, struct stat_opts *o)
{
	static const struct option lopts[] = {
		{ "event", required_argument, 0, 'e' },  { "metrics", required_argument, 0, 'M' },
		{ "repeat", required_argument, 0, 'r' }, { "field-separator", required_argument, 0, 'x' },
		{ "json", no_argument, 0, OPT_JSON },    { "pid", required_argument, 0, 'p' },
		{ "json-output", no_argument, 0, 'j' },
		{ "tid", required_argument, 0, 't' },    { "all-cpus", no_argument, 0, 'a' },
		{ "cpu", required_argument, 0, 'C' },    { "no-inherit", no_argument, 0, 'i' },
		{ "output", required_argument, 0, 'o' }, { "append", no_argument, 0, OPT_APPEND },
		{ "group-max", required_argument, 0, OPT_GROUP_MAX },
		{ "interval-print", required_argument, 0, 'I' },
		{ "delay", required_argument, 0, 'D' },  { "detailed", no_argument, 0, 'd' },
		{ "no-aggr", no_argument, 0, 'A' },      { "per-thread", no_argument, 0, OPT_PER_THREAD },
		{ "per-core", no_argument, 0, OPT_PER_CORE },
		{ "per-socket", no_argument, 0, OPT_PER_SOCKET },
		{ "big-num", no_argument, 0, 'B' },      { "no-big-num", no_argument, 0, OPT_NO_BIG_NUM },
		{ "verbose", no_argument, 0, 'v' },      { "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 }
	};
	unsigned long long v;
	int c, naggr = 0;
	optind = 1;
	/* '+': stop at the first non-option, the command */
	opterr = 0; /* usage_error() says it in one line */
	while ((c = getopt_long(argc, argv, "+e:M:r:x:p:t:aC:io:I:D:dABjvh", lopts, NULL)) != -1) {
		switch (c) {
		case 'e':
			if (o->nevents == STAT_MAX_LISTS) {
				fprintf(stderr, "hpm stat: too many -e options (at most %d)\n",
					STAT_MAX_LISTS);
				return 2;
			}
			o->events[o->nevents++] = optarg;
			break;
		case 'M':
			if (o->nmetrics == 16) {
				fprintf(stderr, "hpm stat: too many -M options (at most 16)\n");
				return 2;
			}
			o->metrics[o->nmetrics++] = optarg;
			break;
		case 'r':
			if (parse_count("stat", optarg, "-r", 1, 100000, &v))
				return 2;
			o->repeat = (int)v;
			break;
		case 'x': o->sep = optarg; break;
		case OPT_JSON: o->json = true; break;
		case 'j': o->perf_json = true; break;
		case 'p':
			free(o->pids);
			if (parse_pid_list("stat", "-p", optarg, &o->pids, &o->npids))
				return 2;
			break;
		case 't':
			free(o->tids);
			if (parse_pid_list("stat", "-t", optarg, &o->tids, &o->ntids))
				return 2;
			break;
		case 'a': o->all_cpus = true; break;
		case 'C':
			free(o->cpus);
			if (parse_cpu_list("stat", optarg, &o->cpus, &o->ncpus))
				return 2;
			o->cpu_arg = optarg;
			break;
		case 'i': o->no_inherit = true; break;
		case 'o': o->output = optarg; break;
		case OPT_APPEND: o->append = true; break;
		case OPT_GROUP_MAX:
			if (parse_count("stat", optarg, "--group-max", 1, 64, &v))
				return 2;
			o->group_max = (int)v;
			break;
		case 'I':
			if (parse_count("stat", optarg, "-I", 10, 1ULL << 31, &v))
				return 2;
			o->interval_ms = (long)v;
			break;
		case 'D':
			if (parse_count("stat", optarg, "-D", 1, 1ULL << 31, &v))
				return 2;
			o->delay_ms = (long)v;
			break;
		case 'd': o->detailed++; break;
		case 'A': o->aggr = AGGR_CPU, naggr++; break;
		case OPT_PER_THREAD: o->aggr = AGGR_THREAD, naggr++; break;
		case OPT_PER_CORE: o->aggr = AGGR_CORE, naggr++; break;
		case OPT_PER_SOCKET: o->aggr = AGGR_SOCKET, naggr++; break;
		case 'B': o->big_num = true; break;
		case OPT_NO_BIG_NUM: o->big_num = false; break;
		case 'v': o->verbose = true; break;
		case 'h': fputs(stat_help, stdout); return 0;
		default: return usage_error("stat", "+e:M:r:x:p:t:aC:io:I:D:dABjvh", argv);
		}
	}
	if (optind < argc)
		o->cmd = argv + optind;
	bool sys = o->all_cpus || o->ncpus;
	if (!o->cmd && !o->npids && !o->ntids && !sys) {
		fprintf(stderr, "hpm stat: nothing to count: give a command after '--', -p PID, -t "
				"TID, -a or -C CPUS (hpm stat --help)\n");
		return 2;
	}
	if ((o->npids || o->ntids) && (sys || (o->npids && o->ntids))) {
		fprintf(stderr, "hpm stat: choose one target: -p PIDS, -t TIDS, or -a/-C CPUS\n");
		return 2;
	}
	if (o->repeat > 1 && (!o->cmd || o->npids || o->ntids || sys)) {
		fprintf(stderr, "hpm stat: -r needs a command to repeat (and no -p, -t, -a or -C)\n");
		return 2;
	}
	if (o->repeat > 1 && o->interval_ms) {
		fprintf(stderr, "hpm stat: -I cannot be combined with -r\n");
		return 2;
	}
	if (naggr > 1) {
		fprintf(stderr, "hpm stat: choose one of -A, --per-core, --per-socket, --per-thread\n");
		return 2;
	}
	if ((o->aggr == AGGR_CPU || o->aggr == AGGR_CORE || o->aggr == AGGR_SOCKET) && !sys) {
		fprintf(stderr, "hpm stat: -A, --per-core and --per-socket count CPUs: add -a or -C "
				"CPUS (as in perf)\n");
		return 2;
	}
	if (stat_follows(o) && o->interval_ms) {
		fprintf(stderr, "hpm stat: -I with --per-thread needs -p PID, -t TID or -a (as in "
				"perf); a command's threads are counted per thread over the whole "
				"run\n");
		return 2;
	}
	if (o->aggr == AGGR_THREAD && o->ncpus) {
		fprintf(stderr, "hpm stat: --per-thread cannot be combined with -C\n");
		return 2;
	}
	if ((o->json && o->sep) || (o->perf_json && (o->json || o->sep))) {
		fprintf(stderr, "hpm stat: choose one of --json, -j and -x\n");
		return 2;
	}
	return -1;
}

static void free_state(struct stat_state *st)
{
	stat_free_units(st);
	free(st->units);
	free(st->rows);
	for (int b = 0; b < st->nbins; b++)
		free(st->bins[b].units);
	for (int b = 0; st->bin_total && b < st->nbin_total; b++)
		free(st->bin_total[b]);
	stat_free_ops(st);
	free(st->bins);
	free(st->bin_total);
	free(st->sum);
	free(st->sumsq);
	free(st->runsum);
	free(st->ensum);
	free(st->total);
	free(st->msum);
	free(st->mvalid);
	free(st->ivals);
	free(st->itimes);
}

int cmd_stat(int argc, char **argv)
{
	struct stat_opts o = { .repeat = 1, .big_num = true };
	int rc = parse_opts(argc, argv, &o);
	if (rc >= 0)
		goto done;
	struct stat_state st = { 0 };
	if (hpm_ctx__new(&st.ctx)) {
		rc = 1;
		goto done;
	}
	/* signals are taken with sigtimedwait: blocked here, unblocked in the command */
	sigset_t waitset, old;
	sigemptyset(&waitset);
	sigaddset(&waitset, SIGCHLD);
	sigaddset(&waitset, SIGINT);
	sigaddset(&waitset, SIGTERM);
	sigprocmask(SIG_BLOCK, &waitset, &old);
	/* SIGINT is hpm's (taken with sigtimedwait) and, as perf's handler makes it,
	 * the default in the command even when hpm was started with it ignored (a
	 * background job of a script): Ctrl-C to the group reaches the command */
	struct sigaction dfl = { .sa_handler = SIG_DFL }, old_int;
	sigemptyset(&dfl.sa_mask);
	sigaction(SIGINT, &dfl, &old_int);
	struct outfile of;
	bool have_file = false, reported = false; /* reported: the counts are out */
	/* --append: the block is built in memory and added to the file at the end */
	FILE *app = NULL;
	char *app_buf = NULL;
	size_t app_len = 0;
	st.out = o.json ? stdout : stderr;
	if (o.output && o.append) {
		app = fopen(o.output, "a");
		if (!app) {
			fprintf(stderr, "hpm stat: cannot write '%s': %s\n", o.output, strerror(errno));
			rc = 1;
			goto out;
		}
		if (!(st.out = open_memstream(&app_buf, &app_len))) {
			fclose(app);
			app = NULL;
			rc = 1;
			goto out;
		}
	} else if (o.output) {
		int r = outfile_open(&of, o.output);
		if (r < 0) {
			fprintf(stderr, "hpm stat: cannot write '%s': %s\n", o.output, strerror(-r));
			rc = 1;
			goto out;
		}
		have_file = true;
		st.out = of.f;
	}
	if (o.output && !o.json) {
		/* perf's first line of an output file (ctime ends in a newline: then a
		 * blank line); not in hpm's JSON document */
		time_t now = time(NULL);
		fprintf(st.out, "# started on %s\n", ctime(&now));
	}
	if (make_units(&st, &o)) {
		rc = 1;
		goto out;
	}
	for (int i = 0; i < o.repeat && !caught; i++) {
		int r = run_once(&st, &o, &waitset);
		if (r < 0) {
			rc = r == -127 ? 127 : 1;
			goto out;
		}
		if (account(&st)) {
			rc = 1;
			goto out;
		}
		if (i + 1 < o.repeat && !caught)
			stat_free_units(&st);
	}
	if (!o.interval_ms || o.json)
		stat_report(st.out, &st, &o);
	if (have_file) {
		have_file = false;
		int r = outfile_commit(&of);
		if (r < 0) {
			fprintf(stderr, "hpm stat: cannot write '%s': %s\n", o.output, strerror(-r));
			rc = 1;
			goto out;
		}
	}
	if (app) {
		fclose(st.out); /* app_buf, app_len: the block */
		st.out = NULL;
		bool bad = fwrite(app_buf, 1, app_len, app) != app_len;
		bad |= fclose(app) != 0;
		app = NULL;
		if (bad) {
			fprintf(stderr, "hpm stat: cannot write '%s': %s\n", o.output,
				strerror(errno ? errno : EIO));
			rc = 1;
			goto out;
		}
	}
	rc = st.status;
	reported = true;
out:
	if (have_file)
		outfile_abort(&of);
	if (app) { /* nothing is added to the file */
		fclose(st.out);
		fclose(app);
	}
	free(app_buf);
	int end_sig = o.cmd && st.status_sig ? st.status_sig : caught;
	if (caught == SIGINT) /* Ctrl-C: the command's exit status when it exited, else SIGINT */
		end_sig = o.cmd && st.cmd_exited ? 0 : SIGINT;
	free_state(&st);
	hpm_ctx__delete(st.ctx);
	sigaction(SIGINT, &old_int, NULL);
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (caught && end_sig && reported) {
		/* like perf: a run stopped by a signal ends by a signal once the counts are
		 * out (a shell sees 130 for SIGINT, 143 for SIGTERM). SIGTERM: the command's
		 * when it died by one (the SIGTERM hpm stopped it with), else SIGTERM.
		 * SIGINT: SIGINT, unless the command exited (trapped it): then its status */
		end_by_signal(end_sig);
		rc = 128 + end_sig;
	}
done:
	free(o.pids);
	free(o.tids);
	free(o.cpus);
	return rc;
}
