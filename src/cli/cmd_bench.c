/* SPDX-License-Identifier: MIT */
/* hpm bench: list | run | compare | clocks | selftest (the engine is src/bench). */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include "bench.h"
#include "cli.h"
#include "hpm/cycles.h"

static const char bench_help[] =
	"usage: hpm bench list\n"
	"       hpm bench run [-b NAME]... [options]\n"
	"       hpm bench compare [--metric M] [--markdown] REF.json OTHER.json...\n"
	"       hpm bench --compare REF.json OTHER.json...   (same as compare)\n"
	"       hpm bench clocks       which cycle counters user space may read here, and why not\n"
	"       hpm bench selftest     check every reference copy/memmove/memset against libc\n"
	"\n"
	"run options:\n"
	"  -b, --bench NAME      run this benchmark (repeatable; default: all, see 'list')\n"
	"      --json FILE       write results as JSON (format hpm-bench v1, docs/bench.md);\n"
	"                        written whole or not at all; '-' = stdout (no table then)\n"
	"  -e, --events LIST     counters per case (default cycles:u,instructions:u,\n"
	"                        branch-misses:u; '' = none); missing ones are named with why\n"
	"      --sizes LIST      copy/io sizes: 1,64,1500,64K or a range LO-HI of powers of 2\n"
	"      --align LIST      src:dst offsets 0..7, e.g. 0:0,1:0,3:5, or 'all' (64 pairs)\n"
	"      --max-ws SIZE     largest working set of 'mem' (default 4x the largest cache)\n"
	"      --bits N          bitmap size of 'bitsearch' (default 32768)\n"
	"      --tmpfs DIR       directory on tmpfs for the io cases (default /dev/shm, /tmp)\n"
	"      --cpu N           pin to CPU N (default: the current CPU; -1 = do not pin)\n"
	"      --epochs N        timed epochs per case (default 16; counters\n"
	"                        come from pairs of epochs of N and 2N operations)\n"
	"      --min-epoch-us N  shortest epoch (default 200; at least 1000 clock ticks)\n"
	"      --quick           fewer sizes, offsets and working sets (lab, smoke tests)\n"
	"      --no-table        no table on stdout\n"
	"\n"
	"compare options:\n"
	"  --metric M            ns (default), ticks, gbps or a counter (instructions:u ...)\n"
	"  --markdown            a markdown table (for READMEs)\n"
	"\n"
	"Progress goes to stderr. Values are per unit (one call, one multiply, one load...),\n"
	"overhead of an empty epoch subtracted; median over epochs, min and MAD.\n"
	"\n"
	"examples:\n"
	"  hpm bench list\n"
	"  hpm bench clocks\n"
	"  hpm bench run -b memcpy --sizes 8,64,1500,9000 --align 0:0,1:0,0:3\n"
	"  hpm bench run -b mul                         multiply latency, constant-time check\n"
	"  hpm bench run -b mem --max-ws 64M            latency curve and bandwidth\n"
	"  hpm bench run --quick --json here.json       everything, small\n"
	"  hpm bench compare arm.json riscv.json        ratios riscv/arm per case\n";

static int parse_size(const char *s, size_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -1;
	if (*end == 'K' || *end == 'k')
		v <<= 10, end++;
	else if (*end == 'M' || *end == 'm')
		v <<= 20, end++;
	else if (*end == 'G' || *end == 'g')
		v <<= 30, end++;
	if (*end)
		return -1;
	*out = (size_t)v;
	return 0;
}

static int parse_sizes(const char *arg, struct bench_opts *o)
{
	char buf[512];
	snprintf(buf, sizeof(buf), "%s", arg);
	o->nsizes = 0;
	for (char *sv = NULL, *t = strtok_r(buf, ",", &sv); t; t = strtok_r(NULL, ",", &sv)) {
		char *dash = strchr(t, '-');
		size_t lo, hi;
		if (dash) {
			*dash = 0;
			if (parse_size(t, &lo) < 0 || parse_size(dash + 1, &hi) < 0 || !lo || hi < lo)
				return -1;
			for (size_t v = lo; v <= hi && o->nsizes < BENCH_MAX_SIZES; v *= 2)
				o->sizes[o->nsizes++] = v;
		} else {
			if (parse_size(t, &lo) < 0 || o->nsizes == BENCH_MAX_SIZES)
				return -1;
			o->sizes[o->nsizes++] = lo;
		}
	}
	return o->nsizes ? 0 : -1;
}

static int parse_align(const char *arg, struct bench_opts *o)
{
	o->nalign = 0;
	if (!strcmp(arg, "all")) {
		for (int s = 0; s < 8; s++)
			for (int d = 0; d < 8; d++) {
				o->align[o->nalign][0] = s;
				o->align[o->nalign++][1] = d;
			}
		return 0;
	}
	char buf[512];
	snprintf(buf, sizeof(buf), "%s", arg);
	for (char *sv = NULL, *t = strtok_r(buf, ",", &sv); t; t = strtok_r(NULL, ",", &sv)) {
		int s, d;
		char extra;
		if (sscanf(t, "%d:%d%c", &s, &d, &extra) != 2 || s < 0 || s > 7 || d < 0 || d > 7 ||
		    o->nalign == BENCH_MAX_ALIGN)
			return -1;
		o->align[o->nalign][0] = s;
		o->align[o->nalign++][1] = d;
	}
	return o->nalign ? 0 : -1;
}

/* 4x the largest cache of cpu0, 64 MiB when sysfs does not say */
static size_t default_max_ws(void)
{
	size_t best = 0;
	for (int i = 0; i < 8; i++) {
		char p[96], buf[32];
		snprintf(p, sizeof(p), "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
		FILE *f = fopen(p, "r");
		if (!f)
			continue;
		if (fgets(buf, sizeof(buf), f)) {
			size_t v = strtoul(buf, NULL, 10) * (strchr(buf, 'K') ? 1024 : strchr(buf, 'M') ? 1048576 : 1);
			if (v > best)
				best = v;
		}
		fclose(f);
	}
	return best ? best * 4 : 64u << 20;
}

static int bench_list(void)
{
	const char *name, *what;
	for (int i = 0; (name = bench_name(i, &what)); i++)
		printf("%-11s %s\n", name, what);
	return 0;
}

static int bench_run_cmd(int argc, char **argv)
{
	struct bench_opts o = { .cpu = -2, .epochs = 16, .min_epoch_ns = 200e3,
				.bitmap_bits = 32768 };
	const char *sizes = NULL, *align = NULL, *json = NULL;
	const char *events = "cycles:u,instructions:u,branch-misses:u";
	char *names[32];
	int nnames = 0;
	bool table = true;
	enum { O_JSON = 256, O_SIZES, O_ALIGN, O_MAXWS, O_BITS, O_TMPFS, O_CPU, O_EPOCHS, O_MINEP,
	       O_QUICK, O_NOTABLE };
	static const struct option lo[] = {
		{ "bench", required_argument, 0, 'b' }, { "json", required_argument, 0, O_JSON },
		{ "events", required_argument, 0, 'e' }, { "sizes", required_argument, 0, O_SIZES },
		{ "align", required_argument, 0, O_ALIGN }, { "max-ws", required_argument, 0, O_MAXWS },
		{ "bits", required_argument, 0, O_BITS }, { "tmpfs", required_argument, 0, O_TMPFS },
		{ "cpu", required_argument, 0, O_CPU }, { "epochs", required_argument, 0, O_EPOCHS },
		{ "min-epoch-us", required_argument, 0, O_MINEP }, { "quick", no_argument, 0, O_QUICK },
		{ "no-table", no_argument, 0, O_NOTABLE }, { "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	optind = 1;
	int c;
	size_t v;
	char *end;
	while ((c = getopt_long(argc, argv, "+b:e:h", lo, NULL)) != -1) {
		switch (c) {
		case 'b':
			if (nnames == 32) {
				fprintf(stderr, "hpm bench: at most 32 -b options\n");
				return 2;
			}
			names[nnames++] = optarg;
			break;
		case 'e':
			events = optarg;
			break;
		case O_JSON:
			json = optarg;
			break;
		case O_SIZES:
			sizes = optarg;
			break;
		case O_ALIGN:
			align = optarg;
			break;
		case O_MAXWS:
			if (parse_size(optarg, &v) < 0 || v < 8192) {
				fprintf(stderr, "hpm bench: --max-ws '%s': give a size >= 8K like 64M\n",
					optarg);
				return 2;
			}
			o.max_ws = v;
			break;
		case O_BITS:
			if (parse_size(optarg, &v) < 0 || v < 64 || v > (1u << 30)) {
				fprintf(stderr, "hpm bench: --bits '%s': give 64 .. 1G bits\n", optarg);
				return 2;
			}
			o.bitmap_bits = v;
			break;
		case O_TMPFS:
			o.tmpfs_dir = optarg;
			break;
		case O_CPU:
			o.cpu = (int)strtol(optarg, &end, 10);
			if (*end || end == optarg || o.cpu < -1) {
				fprintf(stderr, "hpm bench: --cpu '%s': give a CPU number or -1\n", optarg);
				return 2;
			}
			break;
		case O_EPOCHS:
			o.epochs = (int)strtol(optarg, &end, 10);
			if (*end || o.epochs < 1 || o.epochs > 10000) {
				fprintf(stderr, "hpm bench: --epochs '%s': give 1 .. 10000\n", optarg);
				return 2;
			}
			break;
		case O_MINEP:
			o.min_epoch_ns = strtod(optarg, &end) * 1e3;
			if (*end || end == optarg || o.min_epoch_ns < 0) {
				fprintf(stderr, "hpm bench: --min-epoch-us '%s': give microseconds\n",
					optarg);
				return 2;
			}
			break;
		case O_QUICK:
			o.quick = true;
			break;
		case O_NOTABLE:
			table = false;
			break;
		case 'h':
			fputs(bench_help, stdout);
			return 0;
		default:
			fprintf(stderr, "hpm bench run: see 'hpm bench --help'\n");
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "hpm bench run: unexpected argument '%s' (benchmarks go after -b)\n",
			argv[optind]);
		return 2;
	}
	if (sizes ? parse_sizes(sizes, &o) < 0
		  : parse_sizes(o.quick ? "8,64,1500,4096" : "1,7,8,16,64,256,1024,1500,4096,9000,16K,64K,256K,1M", &o) < 0) {
		fprintf(stderr, "hpm bench: --sizes '%s': give sizes like 1,64,1500,64K or 1-64K\n",
			sizes);
		return 2;
	}
	if (align ? parse_align(align, &o) < 0
		  : parse_align(o.quick ? "0:0,1:0,3:5" : "0:0,0:1,1:0,4:0,3:5,7:7", &o) < 0) {
		fprintf(stderr,
			"hpm bench: --align '%s': give src:dst offsets 0..7 like 0:0,1:0 or 'all'\n",
			align);
		return 2;
	}
	if (!o.max_ws)
		o.max_ws = o.quick ? 1u << 20 : default_max_ws();
	if (json && !strcmp(json, "-"))
		table = false;
	return bench_run(&o, names, nnames, json, events, table);
}

static int bench_clocks(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	struct hpm_cc_status st[HPM_CC_NSOURCES];
	int n = hpm_cycles__probe(st, HPM_CC_NSOURCES);
	if (n < 0) {
		fprintf(stderr, "hpm bench clocks: probe failed: %s\n", strerror(-n));
		return 1;
	}
	struct hpm_cycles *cc;
	int best = hpm_cycles__open(&cc, HPM_CC_AUTO) == 0 ? hpm_cycles__status(cc)->source : -1;
	for (int i = 0; i < n; i++) {
		printf("%-10s %-28s %s", hpm_cc_source_name(st[i].source), st[i].name,
		       st[i].available ? "yes" : "no ");
		if (st[i].available)
			printf("  %s, %.6g Hz%s, resolution %llu, read %.1f ns%s",
			       st[i].core_cycles ? "core cycles" : st[i].source == HPM_CC_CLOCK ? "ns" : "ticks",
			       st[i].hz, st[i].hz_measured ? " (measured)" : "",
			       (unsigned long long)st[i].resolution, st[i].read_ns,
			       st[i].source == best ? "  <- used by hpm bench" : "");
		printf("\n           %s\n", st[i].why);
	}
	if (best >= 0)
		hpm_cycles__close(cc);
	return 0;
}

int cmd_bench(int argc, char **argv)
{
	if (argc < 2) {
		fputs(bench_help, stderr);
		return 2;
	}
	const char *sub = argv[1];
	if (!strcmp(sub, "--help") || !strcmp(sub, "-h") || !strcmp(sub, "help")) {
		fputs(bench_help, stdout);
		return 0;
	}
	if (!strcmp(sub, "list"))
		return bench_list();
	if (!strcmp(sub, "run"))
		return bench_run_cmd(argc - 1, argv + 1);
	if (!strcmp(sub, "compare") || !strcmp(sub, "--compare"))
		return bench_compare(argc - 1, argv + 1);
	if (!strcmp(sub, "clocks"))
		return bench_clocks(argc - 1, argv + 1);
	if (!strcmp(sub, "selftest"))
		return bench_copy_selftest();
	fprintf(stderr, "hpm bench: '%s' is not a bench command (list, run, compare, clocks, "
			"selftest; see 'hpm bench --help')\n",
		sub);
	return 2;
}
