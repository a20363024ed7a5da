/* SPDX-License-Identifier: MIT */
/*
 * hpm top: the hottest functions, live, like `perf top`, without the perf
 * tool. Samples an event (or a {group}: every sample carries the members'
 * counts) on every CPU, on processes/threads, or on a command, resolves each
 * sampled address to a kernel function (/proc/kallsyms) or a function of the
 * mapped file (ELF symbols, src/sym/tasksyms.c) and shows a table sorted by share.
 * On a terminal the table refreshes in place; with --batch (or when output
 * is not a terminal) it prints plain tables, one per refresh, -n of them.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cli.h"
#include "top.h"
#include "usage_error.h"

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

static volatile sig_atomic_t stop_sig;
static void on_signal(int sig)
{
	stop_sig = sig;
}

static const char *const key_names[K_N] = { "comm", "pid", "tid", "dso", "sym", "cpu" };

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

static int parse_keys(struct top_opts *o, const char *s)
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

static int parse_opts(int argc, char **argv, struct top_opts *o)
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
	opterr = 0; /* usage_error() says it in one line */
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
		default: return usage_error("top", "+e:c:F:aC:p:t:id:bn:E:s:S:KUzm:h", argv);
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
	struct top_opts *o = tp->o;
	if (o->batch) {
		top_print_table(tp, stdout, 1 << 20, o->entries_set ? o->entries : 40, final);
		fputs("\n", stdout);
	} else {
		struct winsize ws = { 0 };
		ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws);
		int width = ws.ws_col ? ws.ws_col : 120, height = ws.ws_row ? ws.ws_row : 40;
		long rows = o->entries_set ? o->entries : height - 4;
		fputs("\033[H\033[2J", stdout);
		top_print_table(tp, stdout, width, rows < 1 ? 1 : rows, final);
		if (!final)
			fprintf(stdout, "q quit  K kernel %s  U user %s  z zero %s",
				o->hide_kernel ? "off" : "on", o->hide_user ? "off" : "on",
				o->zero ? "on" : "off");
	}
	fflush(stdout);
	tp->t_table = top_now();
	if (o->zero)
		top_zero_table(tp);
}

static int run(struct top *tp)
{
	struct top_opts *o = tp->o;
	pid_t child = -1;
	int go = -1, errfd = -1, status = 0;
	if (o->cmd && (child = spawn(o->cmd, &go, &errfd)) < 0) {
		fprintf(stderr, "hpm top: cannot start '%s': %s\n", o->cmd[0], strerror(errno));
		return 1;
	}
	long page = sysconf(_SC_PAGESIZE);
	tp->datasz = (size_t)o->pages * (size_t)page;
	tp->mapsz = tp->datasz + (size_t)page;
	int r = top_setup_events(tp);
	if (!r)
		r = top_choose_sort(tp);
	if (!r)
		r = top_make_targets(tp, child);
	/* open_all returns 1 after a fallback (user-only, no inherit): try again */
	for (int tries = 0; !r && tries < 4; tries++)
		if ((r = top_open_all(tp)) == 1)
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
	tp->ksyms = tasksyms_kernel(tp->syms) > 0;
	struct sigaction sa = { .sa_handler = on_signal };
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	bool own_cmd = child > 0 && !o->all_cpus && !o->ncpus && !o->npids && !o->ntids;
	if (!own_cmd)
		for (int i = 0; i < tp->nt; i++)
			ioctl(tp->t[i].fd[0], PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
	tp->t0 = tp->t_table = top_now();
	if (child > 0) {
		int e = spawn_release(child, go, errfd);
		if (e) {
			waitpid(child, &status, 0);
			fprintf(stderr, "hpm top: cannot run '%s': %s\n", o->cmd[0],
				e > 0 ? strerror(e) : "lost the child process");
			top_close_targets(tp);
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
		double now = top_now();
		int wait_ms = (int)((next - now) * 1000);
		if (wait_ms > 100)
			wait_ms = 100;
		if (wait_ms < 0)
			wait_ms = 0;
		poll(pfd, (nfds_t)tp->nt + 1, wait_ms);
		for (int i = 0; i < tp->nt; i++)
			top_drain(tp, &tp->t[i]);
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
		now = top_now();
		if (child_done) {
			for (int i = 0; i < tp->nt; i++)
				top_drain(tp, &tp->t[i]);
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
	top_close_targets(tp);
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
	struct top_opts o = { .delay = 2.0, .pages = 64, .keys = { K_DSO, K_SYM }, .nkeys = 2 };
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
	if (hpm_ctx__new(&tp.ctx) || !(tp.syms = tasksyms_new()))
		goto out;
	rc = run(&tp);
out:
	if (tp.ctx)
		hpm_ctx__delete(tp.ctx);
	tasksyms_free(tp.syms);
	top_zero_table(&tp);
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
