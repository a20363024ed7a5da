/* SPDX-License-Identifier: MIT */
/* hpm stat: count events of a command (-- cmd), a process (-p) or CPUs (-a/-C). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"

static const char stat_help[] =
	"usage: hpm stat [options] [--] COMMAND [ARGS...]\n"
	"       hpm stat [options] -p PID [-- COMMAND]   (count PID while COMMAND runs, or\n"
	"                                                  until Ctrl-C / PID exits)\n"
	"\n"
	"  -e, --event LIST      events, perf syntax: cycles,instructions:u,{a,b}\n"
	"                        (braces: one group that must be counted together)\n"
	"  -M, --metrics GROUPS  metric groups (see 'hpm list --metrics'), comma-separated\n"
	"  -r, --repeat N        run the command N times; print mean and +- stddev of the mean\n"
	"  -x, --field-separator SEP  CSV: value,unit,event,running,pct,metric,unit,path\n"
	"      --json            JSON on stdout (format hpm-stat v1)\n"
	"  -p, --pid PID         attach to a running process\n"
	"  -a, --all-cpus        count every online CPU (system-wide)\n"
	"  -C, --cpu N           count CPU N (system-wide on that CPU)\n"
	"  -i, --no-inherit      do not count child processes\n"
	"  -o, --output FILE     write the report to FILE (written whole or not at all)\n"
	"      --group-max N     at most N events per perf group (default: the PMU's counters)\n"
	"  -h, --help\n"
	"\n"
	"Counts, multiplexing scale and the read path of each event go to stderr (like\n"
	"perf stat) unless --json or -o is given. Exit status: the command's.\n"
	"\n"
	"examples:\n"
	"  hpm stat -- ./app                          default events\n"
	"  hpm stat -e cycles,instructions:u -r 5 -- ./app\n"
	"  hpm stat -M ipc,mpki -- ./app              metric groups of this CPU\n"
	"  hpm stat -e PAPI_L1_DCM,PAPI_TOT_INS -- ./app\n"
	"  hpm stat -e page-faults -x, -- ./app       CSV\n"
	"  hpm stat -a -e task-clock -- sleep 1       system-wide for one second\n";

static const char *const default_events[] = {
	"task-clock", "context-switches", "cpu-migrations", "page-faults",
	"cycles", "instructions", "branches", "branch-misses",
};

struct opts {
	char *events[64];
	int nevents;
	char *metrics[16];
	int nmetrics;
	int repeat;
	const char *sep;
	bool json;
	pid_t pid;
	int cpu;
	bool all_cpus, no_inherit;
	const char *output;
	int group_max;
	char **cmd;
};

struct stats {
	int n;
	double *sum, *sumsq;       /* per event, over runs (scaled) */
	struct hpm_value *last;    /* last run's values */
	double *msum, *msumsq;     /* per metric */
	int *mvalid;
	char quirks[1024];
	double elapsed_sum;
	int status;
};

static volatile sig_atomic_t interrupted;
static void on_sigint(int sig)
{
	(void)sig;
	interrupted = 1;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Build the event set for one run. not_supported[] marks default events that
 * this machine cannot count (shown as <not supported>, like perf). */
static int build_set(struct hpm_ctx *ctx, struct opts *o, pid_t pid, int cpu, unsigned flags,
		     struct hpm_evset **out, char skipped[][64], int *nskipped)
{
	struct hpm_evset *set;
	int r = hpm_evset__new(ctx, &set);
	if (!r)
		r = hpm_evset__set_target(set, pid, cpu, flags);
	if (!r && o->group_max)
		r = hpm_evset__set_group_max(set, o->group_max);
	for (int i = 0; !r && i < o->nevents; i++)
		r = hpm_evset__add_list(set, o->events[i]) < 0 ? -1 : 0;
	for (int i = 0; !r && i < o->nmetrics; i++) {
		char buf[256];
		snprintf(buf, sizeof(buf), "%s", o->metrics[i]);
		for (char *save, *g = strtok_r(buf, ",", &save); g && !r;
		     g = strtok_r(NULL, ",", &save))
			r = hpm_evset__add_metric_group(set, g) < 0 ? -1 : 0;
	}
	*nskipped = 0;
	if (!r && !o->nevents && !o->nmetrics) {
		/* like perf: default events are not grouped, so one event the PMU
		 * cannot schedule does not take the others down with it */
		if (!o->group_max)
			hpm_evset__set_group_max(set, 1);
		for (unsigned i = 0; i < sizeof(default_events) / sizeof(*default_events); i++)
			if (hpm_evset__add(set, default_events[i]) < 0)
				snprintf(skipped[(*nskipped)++], 64, "%s", default_events[i]);
	}
	if (r) {
		hpm_evset__delete(set);
		return -1;
	}
	*out = set;
	return 0;
}

/* Let the stopped child exec and wait for it; -127 when the exec failed. */
static int release_and_wait(struct opts *o, pid_t child, int go, int errfd, int *status)
{
	int e = spawn_release(child, go, errfd);
	if (e < 0) {
		fprintf(stderr, "hpm stat: lost the child process\n");
		return -1;
	}
	waitpid(child, status, 0);
	if (e) {
		fprintf(stderr, "hpm stat: cannot run '%s': %s\n", o->cmd[0], strerror(e));
		return -127;
	}
	return 0;
}

static int run_once(struct hpm_ctx *ctx, struct opts *o, struct stats *st,
		    struct hpm_evset **setp, char skipped[][64], int *nskipped)
{
	struct hpm_evset *set = NULL;
	pid_t child = -1;
	int go = -1, errfd = -1, status = 0;
	unsigned flags = o->no_inherit ? 0 : HPM_TARGET_INHERIT;
	double t0;

	if (o->cmd && o->pid <= 0 && !o->all_cpus && o->cpu < 0) {
		child = spawn(o->cmd, &go, &errfd);
		if (child < 0) {
			fprintf(stderr, "hpm stat: cannot fork: %s\n", strerror(errno));
			return -1;
		}
		if (build_set(ctx, o, child, -1, flags | HPM_TARGET_ENABLE_ON_EXEC, &set, skipped,
			      nskipped) < 0) {
			kill(child, SIGKILL);
			waitpid(child, NULL, 0);
			fprintf(stderr, "hpm stat: %s\n", hpm_ctx__last_error(ctx));
			return -1;
		}
		t0 = now_s();
		int r = release_and_wait(o, child, go, errfd, &status);
		if (r < 0) {
			hpm_evset__delete(set);
			return r;
		}
	} else {
		pid_t pid = o->pid > 0 ? o->pid : -1;
		int cpu = o->all_cpus ? HPM_CPU_ALL : o->cpu;
		if (build_set(ctx, o, pid, cpu, pid > 0 ? flags : 0, &set, skipped, nskipped) < 0) {
			fprintf(stderr, "hpm stat: %s\n", hpm_ctx__last_error(ctx));
			return -1;
		}
		if (o->cmd && (child = spawn(o->cmd, &go, &errfd)) < 0) {
			fprintf(stderr, "hpm stat: cannot fork: %s\n", strerror(errno));
			hpm_evset__delete(set);
			return -1;
		}
		t0 = now_s();
		hpm_evset__start(set);
		if (child > 0) {
			int r = release_and_wait(o, child, go, errfd, &status);
			if (r < 0) {
				hpm_evset__delete(set);
				return r;
			}
		} else {
			signal(SIGINT, on_sigint);
			while (!interrupted && (pid <= 0 || kill(pid, 0) == 0)) {
				struct timespec ts = { 0, 100 * 1000 * 1000 };
				nanosleep(&ts, NULL);
			}
		}
		hpm_evset__stop(set);
	}
	double elapsed = now_s() - t0;
	int n = hpm_evset__nr(set);
	if (!st->sum) {
		int m = hpm_evset__nr_metrics(set);
		st->sum = calloc((size_t)n + 1, sizeof(double));
		st->sumsq = calloc((size_t)n + 1, sizeof(double));
		st->last = calloc((size_t)n + 1, sizeof(struct hpm_value));
		st->msum = calloc((size_t)m + 1, sizeof(double));
		st->msumsq = calloc((size_t)m + 1, sizeof(double));
		st->mvalid = calloc((size_t)m + 1, sizeof(int));
	}
	if (hpm_evset__read_all(set, st->last) < 0) {
		fprintf(stderr, "hpm stat: %s\n", hpm_ctx__last_error(ctx));
		hpm_evset__delete(set);
		return -1;
	}
	if (st->n == 0)
		hpm_evset__check_quirks(set, st->last, st->quirks, sizeof(st->quirks));
	for (int i = 0; i < n; i++) {
		st->sum[i] += st->last[i].scaled;
		st->sumsq[i] += st->last[i].scaled * st->last[i].scaled;
	}
	for (int i = 0; i < hpm_evset__nr_metrics(set); i++) {
		double v;
		if (hpm_evset__metric(set, i, st->last, NULL, NULL, &v) == 0) {
			st->msum[i] += v;
			st->msumsq[i] += v * v;
			st->mvalid[i]++;
		}
	}
	st->n++;
	st->elapsed_sum += elapsed;
	st->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	if (*setp)
		hpm_evset__delete(*setp);
	*setp = set;
	return 0;
}

/* stddev of the mean, relative to the mean, in percent (perf's "+-") */
static double rel_err(double sum, double sumsq, int n)
{
	if (n < 2 || sum == 0)
		return 0;
	double mean = sum / n, var = (sumsq - n * mean * mean) / (n - 1);
	if (var < 0)
		var = 0;
	return 100.0 * sqrt(var / n) / fabs(mean);
}

static const char *path_name(int p)
{
	return p == HPM_READ_MMAP ? "mmap" : p == HPM_READ_SYSCALL ? "read" : "none";
}

static const char *unit_of(const char *name)
{
	return !strncmp(name, "task-clock", 10) || !strncmp(name, "cpu-clock", 9) ? "msec" : "";
}

static void report_text(FILE *f, struct opts *o, struct hpm_ctx *ctx, struct hpm_evset *set,
			struct stats *st, char skipped[][64], int nskipped)
{
	char target[512] = "", num[64];
	if (o->cmd) {
		for (char **a = o->cmd; *a; a++) {
			size_t l = strlen(target);
			snprintf(target + l, sizeof(target) - l, "%s%s", l ? " " : "", *a);
		}
	} else if (o->pid > 0) {
		snprintf(target, sizeof(target), "process id '%d'", o->pid);
	} else {
		snprintf(target, sizeof(target), "%s", o->all_cpus ? "system wide" : "CPU");
	}
	char runs[32] = "";
	if (st->n > 1)
		snprintf(runs, sizeof(runs), " (%d runs)", st->n);
	fprintf(f, "\n Performance counter stats for '%s'%s:\n\n", target, runs);
	int n = hpm_evset__nr(set);
	for (int i = 0; i < n; i++) {
		const char *name = hpm_evset__name(set, i);
		struct hpm_value *v = &st->last[i];
		double mean = st->sum[i] / st->n;
		bool msec = *unit_of(name);
		char why[200];
		int path = hpm_evset__read_path(set, i, why, sizeof(why));
		if (!v->running && v->enabled) {
			int g = hpm_evset__group_of(set, i), members = 0;
			for (int k = 0; k < n; k++)
				members += hpm_evset__group_of(set, k) == g;
			fprintf(f, " %18s      %-28s (never scheduled: %s)\n", "<not counted>", name,
				members > 1 ? "the PMU could not fit its group; try --group-max 1"
					    : "the kernel accepted it but the PMU never counted it");
			continue;
		}
		if (msec)
			fprintf(f, " %18.2f msec %-28s", mean / 1e6, name);
		else
			fprintf(f, " %18s      %-28s", thousands(mean, num, sizeof(num)), name);
		if (st->n > 1)
			fprintf(f, " ( +- %5.2f%% )", rel_err(st->sum[i], st->sumsq[i], st->n));
		if (v->running < v->enabled)
			fprintf(f, " (%.2f%% scaled)", 100.0 * (double)v->running / (double)v->enabled);
		fprintf(f, "  [%s]\n", path_name(v->path ? v->path : path));
	}
	for (int i = 0; i < nskipped; i++)
		fprintf(f, " %18s      %-28s\n", "<not supported>", skipped[i]);
	int m = hpm_evset__nr_metrics(set);
	if (m)
		fprintf(f, "\n");
	for (int i = 0; i < m; i++) {
		const char *name, *unit;
		double v;
		hpm_evset__metric(set, i, st->last, &name, &unit, &v);
		if (st->mvalid[i] == st->n)
			fprintf(f, " %18.3f %-5s %-28s\n", st->msum[i] / st->n,
				strcmp(unit, "-") ? unit : "", name);
		else
			fprintf(f, " %18s %-5s %-28s (an input never counted)\n", "n/a", "", name);
	}
	fprintf(f, "\n %18.9f seconds time elapsed", st->elapsed_sum / st->n);
	if (st->n > 1)
		fprintf(f, "  (mean of %d runs)", st->n);
	fprintf(f, "\n\n read path: [mmap] = user-space counter read, [read] = read(2)");
	char why[200];
	for (int i = 0; i < n; i++)
		if (hpm_evset__read_path(set, i, why, sizeof(why)) == HPM_READ_SYSCALL &&
		    strstr(why, "kernel does not allow")) {
			fprintf(f, "; %s", why);
			break;
		}
	fprintf(f, "\n PMU table: %s (%s)\n", hpm_ctx__pmu(ctx) ? hpm_ctx__pmu(ctx) : "none",
		hpm_ctx__cpu_id(ctx));
	char q[sizeof(st->quirks)];
	memcpy(q, st->quirks, sizeof(q));
	for (char *save, *l = strtok_r(q, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
		fprintf(f, " warning: %s\n", l);
	fprintf(f, "\n");
}

static void report_csv(FILE *f, struct opts *o, struct hpm_evset *set, struct stats *st,
		       char skipped[][64], int nskipped)
{
	const char *s = o->sep;
	int n = hpm_evset__nr(set);
	for (int i = 0; i < n; i++) {
		const char *name = hpm_evset__name(set, i);
		struct hpm_value *v = &st->last[i];
		double mean = st->sum[i] / st->n;
		bool msec = *unit_of(name);
		if (!v->running && v->enabled)
			fprintf(f, "<not counted>%s%s%s%s", s, msec ? "msec" : "", s, name);
		else if (msec)
			fprintf(f, "%.2f%smsec%s%s", mean / 1e6, s, s, name);
		else
			fprintf(f, "%.0f%s%s%s", mean, s, s, name);
		/* perf's fields, then the read path: ,running,pct,metric,metric-unit,path */
		fprintf(f, "%s%llu%s%.2f%s%s%s%s\n", s, (unsigned long long)v->running, s,
			v->enabled ? 100.0 * (double)v->running / (double)v->enabled : 0.0, s, s, s,
			path_name(v->path));
	}
	for (int i = 0; i < nskipped; i++)
		fprintf(f, "<not supported>%s%s%s%s0%s0.00%s%s%snone\n", s, s, skipped[i], s, s, s, s,
			s);
	int m = hpm_evset__nr_metrics(set);
	for (int i = 0; i < m; i++) {
		const char *name, *unit;
		hpm_evset__metric(set, i, st->last, &name, &unit, NULL);
		if (st->mvalid[i] == st->n)
			fprintf(f, "%s%s%s%s%s%.6f%s%s%s\n", s, s, s, s, s, st->msum[i] / st->n, s,
				name, s);
		else
			fprintf(f, "%s%s%s%s%sn/a%s%s%s\n", s, s, s, s, s, s, name, s);
	}
	char q[sizeof(st->quirks)];
	memcpy(q, st->quirks, sizeof(q));
	for (char *save, *l = strtok_r(q, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
		fprintf(f, "# warning: %s\n", l);
}

static void report_json(FILE *f, struct opts *o, struct hpm_ctx *ctx, struct hpm_evset *set,
			struct stats *st, char skipped[][64], int nskipped)
{
	fprintf(f, "{\n  \"format\": \"hpm-stat\",\n  \"version\": 1,\n  \"command\": [");
	for (char **a = o->cmd; a && *a; a++) {
		fputs(a == o->cmd ? "" : ", ", f);
		json_string(f, *a);
	}
	fprintf(f, "],\n  \"pid\": %d,\n  \"all_cpus\": %s,\n  \"pmu\": ", o->pid,
		o->all_cpus ? "true" : "false");
	if (hpm_ctx__pmu(ctx))
		json_string(f, hpm_ctx__pmu(ctx));
	else
		fputs("null", f);
	fprintf(f, ",\n  \"cpu_id\": ");
	json_string(f, hpm_ctx__cpu_id(ctx));
	fprintf(f, ",\n  \"runs\": %d,\n  \"exit_status\": %d,\n  \"elapsed_s\": %.9f,\n", st->n,
		st->status, st->elapsed_sum / st->n);
	fprintf(f, "  \"events\": [");
	int n = hpm_evset__nr(set);
	for (int i = 0; i < n; i++) {
		struct hpm_value *v = &st->last[i];
		char why[200];
		hpm_evset__read_path(set, i, why, sizeof(why));
		fprintf(f, "%s\n    {\"name\": ", i ? "," : "");
		json_string(f, hpm_evset__name(set, i));
		fprintf(f, ", \"value\": %.1f, \"stddev_pct\": %.4f, \"raw\": %llu, "
			   "\"enabled_ns\": %llu, \"running_ns\": %llu, \"scaled\": %s, "
			   "\"group\": %d, \"read_path\": \"%s\", \"read_path_reason\": ",
			st->sum[i] / st->n, rel_err(st->sum[i], st->sumsq[i], st->n),
			(unsigned long long)v->raw, (unsigned long long)v->enabled,
			(unsigned long long)v->running, v->running < v->enabled ? "true" : "false",
			hpm_evset__group_of(set, i), path_name(v->path));
		json_string(f, why);
		fprintf(f, ", \"counted\": %s}", v->running || !v->enabled ? "true" : "false");
	}
	fprintf(f, "%s],\n  \"not_supported\": [", n ? "\n  " : "");
	for (int i = 0; i < nskipped; i++) {
		fputs(i ? ", " : "", f);
		json_string(f, skipped[i]);
	}
	fprintf(f, "],\n  \"quirks\": [");
	char q[sizeof(st->quirks)];
	memcpy(q, st->quirks, sizeof(q));
	int nq = 0;
	for (char *save, *l = strtok_r(q, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		fputs(nq++ ? ", " : "", f);
		json_string(f, l);
	}
	fprintf(f, "],\n  \"metrics\": [");
	int m = hpm_evset__nr_metrics(set);
	for (int i = 0; i < m; i++) {
		const char *name, *unit;
		hpm_evset__metric(set, i, st->last, &name, &unit, NULL);
		fprintf(f, "%s\n    {\"name\": ", i ? "," : "");
		json_string(f, name);
		fprintf(f, ", \"unit\": ");
		json_string(f, unit);
		if (st->mvalid[i] == st->n)
			fprintf(f, ", \"value\": %.9g}", st->msum[i] / st->n);
		else
			fprintf(f, ", \"value\": null}");
	}
	fprintf(f, "%s]\n}\n", m ? "\n  " : "");
}

int cmd_stat(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "event", required_argument, 0, 'e' },  { "metrics", required_argument, 0, 'M' },
		{ "repeat", required_argument, 0, 'r' }, { "field-separator", required_argument, 0, 'x' },
		{ "json", no_argument, 0, 'j' },         { "pid", required_argument, 0, 'p' },
		{ "all-cpus", no_argument, 0, 'a' },     { "cpu", required_argument, 0, 'C' },
		{ "no-inherit", no_argument, 0, 'i' },   { "output", required_argument, 0, 'o' },
		{ "group-max", required_argument, 0, 'G' }, { "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 }
	};
	struct opts o = { .repeat = 1, .cpu = -1 };
	unsigned long long v;
	int c;
	optind = 1;
	/* '+': stop at the first non-option, the command */
	while ((c = getopt_long(argc, argv, "+e:M:r:x:p:aC:io:h", lopts, NULL)) != -1) {
		switch (c) {
		case 'e':
			if (o.nevents == 64) {
				fprintf(stderr, "hpm stat: too many -e options (at most 64)\n");
				return 2;
			}
			o.events[o.nevents++] = optarg;
			break;
		case 'M':
			if (o.nmetrics == 16) {
				fprintf(stderr, "hpm stat: too many -M options (at most 16)\n");
				return 2;
			}
			o.metrics[o.nmetrics++] = optarg;
			break;
		case 'r':
			if (parse_count("stat", optarg, "-r", 1, 100000, &v))
				return 2;
			o.repeat = (int)v;
			break;
		case 'x': o.sep = optarg; break;
		case 'j': o.json = true; break;
		case 'p':
			if (parse_count("stat", optarg, "-p", 1, 1L << 30, &v))
				return 2;
			o.pid = (pid_t)v;
			break;
		case 'a': o.all_cpus = true; break;
		case 'C':
			if (parse_count("stat", optarg, "-C", 0, 1 << 20, &v))
				return 2;
			o.cpu = (int)v;
			break;
		case 'i': o.no_inherit = true; break;
		case 'o': o.output = optarg; break;
		case 'G':
			if (parse_count("stat", optarg, "--group-max", 1, 64, &v))
				return 2;
			o.group_max = (int)v;
			break;
		case 'h': fputs(stat_help, stdout); return 0;
		default: fputs(stat_help, stderr); return 2;
		}
	}
	if (optind < argc)
		o.cmd = argv + optind;
	if (!o.cmd && o.pid <= 0 && !o.all_cpus && o.cpu < 0) {
		fprintf(stderr, "hpm stat: nothing to count: give a command after '--', -p PID, -a or "
				"-C CPU (hpm stat --help)\n");
		return 2;
	}
	if (o.repeat > 1 && !o.cmd) {
		fprintf(stderr, "hpm stat: -r needs a command to repeat\n");
		return 2;
	}
	struct hpm_ctx *ctx;
	if (hpm_ctx__new(&ctx))
		return 1;
	struct stats st = { 0 };
	struct hpm_evset *set = NULL;
	char skipped[16][64];
	int nskipped = 0, rc = 0;
	for (int i = 0; i < o.repeat && !interrupted; i++) {
		int r = run_once(ctx, &o, &st, &set, skipped, &nskipped);
		if (r < 0) {
			rc = r == -127 ? 127 : 1;
			goto out;
		}
	}
	struct outfile of;
	FILE *f = o.json ? stdout : stderr;
	if (o.output) {
		int r = outfile_open(&of, o.output);
		if (r < 0) {
			fprintf(stderr, "hpm stat: cannot write '%s': %s\n", o.output, strerror(-r));
			rc = 1;
			goto out;
		}
		f = of.f;
	}
	if (o.json)
		report_json(f, &o, ctx, set, &st, skipped, nskipped);
	else if (o.sep)
		report_csv(f, &o, set, &st, skipped, nskipped);
	else
		report_text(f, &o, ctx, set, &st, skipped, nskipped);
	if (o.output) {
		int r = outfile_commit(&of);
		if (r < 0) {
			fprintf(stderr, "hpm stat: cannot write '%s': %s\n", o.output, strerror(-r));
			rc = 1;
			goto out;
		}
	}
	rc = st.status;
out:
	hpm_evset__delete(set);
	free(st.sum);
	free(st.sumsq);
	free(st.last);
	free(st.msum);
	free(st.msumsq);
	free(st.mvalid);
	hpm_ctx__delete(ctx);
	return rc;
}
