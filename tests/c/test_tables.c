/* SPDX-License-Identifier: MIT */
/* Event tables and metric files: they parse, their names resolve, the spot
 * checks (values verified against the vendors' manuals) hold, and the
 * parser rejects broken files with file:line messages. */
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdlib.h>
#include "check.h"
#include "internal.h"

static const char *data_dir(void)
{
	const char *d = getenv("HPM_TEST_DATA");
	if (d)
		return d;
	/* from the source tree, or where the lab guest keeps a copy */
	return access("tests/data", F_OK) == 0 ? "tests/data" : "/tests/data";
}

/* Every row of tests/data/spotchecks/<file>: pmu, event, code, source */
static void spotcheck_file(const char *file, int *rows)
{
	char path[512], line[1024];
	snprintf(path, sizeof(path), "%s/spotchecks/%s", data_dir(), file);
	FILE *f = fopen(path, "r");
	CHECK(f != NULL);
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char pmu[64], ev[96], code[40];
		if (!strncmp(line, "pmu\t", 4) || sscanf(line, "%63[^\t]\t%95[^\t]\t%39[^\t]", pmu, ev,
							  code) != 3)
			continue;
		test_tables_only(pmu);
		struct hpm_ctx *ctx;
		struct hpm_event_info info;
		hpm_ctx__new(&ctx);
		char full[200];
		snprintf(full, sizeof(full), "%s::%s", pmu, ev);
		int r = hpm_ctx__resolve(ctx, full, &info);
		if (r) {
			printf("    %s: %s\n", full, hpm_ctx__last_error(ctx));
			test_failures++;
		} else if (info.config != strtoull(code, NULL, 0) || info.type != PERF_TYPE_RAW) {
			printf("    %s: code 0x%llx, spot check says %s\n", full,
			       (unsigned long long)info.config, code);
			test_failures++;
		}
		(*rows)++;
		hpm_ctx__delete(ctx);
	}
	fclose(f);
	test_tables_only(NULL);
}

TEST(spotchecks_hold)
{
	int rows = 0;
	spotcheck_file("arm.tsv", &rows);
	spotcheck_file("riscv_x86.tsv", &rows);
	CHECK(rows >= 50);
}

TEST(u74_examples_from_issue)
{
	test_tables_only("sifive_u74");
	struct hpm_ctx *ctx;
	struct hpm_event_info i;
	hpm_ctx__new(&ctx);
	CHECK_EQ_INT(hpm_ctx__resolve(ctx, "INT_LOAD_RETIRED", &i), 0);
	CHECK_EQ_INT(i.config, 0x200);
	CHECK_EQ_INT(hpm_ctx__resolve(ctx, "DCACHE_MISS_MMIO", &i), 0);
	CHECK_EQ_INT(i.config, 0x202);
	CHECK_EQ_INT(hpm_ctx__resolve(ctx, "BRANCH_DIRECTION_MISPREDICT", &i), 0);
	CHECK_EQ_INT(i.config, 0x2001);
	/* SBI firmware events come through the include, bit 63 set */
	CHECK_EQ_INT(hpm_ctx__resolve(ctx, "FW_MISALIGNED_LOAD", &i), 0);
	CHECK_EQ_INT(i.config, 0x8000000000000000ULL);
	hpm_ctx__delete(ctx);
	test_tables_only(NULL);
}

struct count_arg {
	struct hpm_ctx *ctx;
	int events, aliases, bad;
};

static int check_alias(const struct hpm_event_info *info, void *arg)
{
	struct count_arg *ca = arg;
	struct hpm_event_info tmp;
	if (info->alias_of) {
		ca->aliases++;
		if (hpm_ctx__resolve(ca->ctx, info->name, &tmp)) {
			printf("    alias %s (%s) -> %s: %s\n", info->name, info->pmu, info->alias_of,
			       hpm_ctx__last_error(ca->ctx));
			ca->bad++;
		}
	} else {
		ca->events++;
	}
	return 0;
}

static int metric_ident(const char *ident, void *arg)
{
	struct count_arg *ca = arg;
	struct hpm_event_info tmp;
	if (hpm_ctx__resolve(ca->ctx, ident, &tmp)) {
		printf("    metric identifier %s: %s\n", ident, hpm_ctx__last_error(ca->ctx));
		ca->bad++;
	}
	return 0;
}

static int check_metric(const struct hpm_metric_info *m, void *arg)
{
	expr_identifiers(m->expr, metric_ident, arg);
	return 0;
}

static int each_pmu(const char *pmu, const char *title, const char *isa, void *arg)
{
	int *n = arg;
	test_tables_only(pmu);
	struct count_arg ca = { 0 };
	hpm_ctx__new(&ca.ctx);
	CHECK_EQ_INT(hpm_ctx__for_each_event(ca.ctx, pmu, check_alias, &ca), 0);
	CHECK_EQ_INT(hpm_ctx__for_each_metric(ca.ctx, pmu, NULL, check_metric, &ca), 0);
	if (ca.bad)
		printf("    table %s: %d names do not resolve\n", pmu, ca.bad);
	CHECK_EQ_INT(ca.bad, 0);
	CHECK(ca.events > 0 || !strcmp(pmu, "x86_generic"));
	CHECK(*title != 0);
	hpm_ctx__delete(ca.ctx);
	(*n)++;
	return 0;
}

TEST(every_alias_and_metric_resolves)
{
	struct hpm_ctx *ctx;
	int n = 0, files = 0;
	/* every embedded event table is listed (hand-written and generated alike) */
	for (int i = 0; i < hpm_embedded_nfiles; i++) {
		size_t l = strlen(hpm_embedded_files[i].name);
		files += l > 4 && !strcmp(hpm_embedded_files[i].name + l - 4, ".evt");
	}
	hpm_ctx__new(&ctx);
	CHECK_EQ_INT(hpm_ctx__for_each_pmu(ctx, each_pmu, &n), 0);
	CHECK_EQ_INT(n, files);
	CHECK(n >= 33);
	hpm_ctx__delete(ctx);
	test_tables_only(NULL);
	/* generic metrics under whatever this machine is */
	struct count_arg ca = { 0 };
	hpm_ctx__new(&ca.ctx);
	CHECK_EQ_INT(hpm_ctx__for_each_metric(ca.ctx, "generic", NULL, check_metric, &ca), 0);
	CHECK_EQ_INT(ca.bad, 0);
	hpm_ctx__delete(ca.ctx);
}

static int parse_text(const char *text, char kind, char *err, size_t len)
{
	struct evtab t = { 0 };
	int r = evtab_parse(&t, text, "x.evt", kind, err, len);
	evtab_free(&t);
	return r;
}

TEST(parser_rejects_broken_files)
{
	char err[300];
	CHECK_EQ_INT(parse_text("pmu x\n", 'e', err, sizeof(err)), -EINVAL);
	CHECK_CONTAINS(err, "x.evt:1: first line must be 'format 1'");
	CHECK_EQ_INT(parse_text("format 2\n", 'e', err, sizeof(err)), -EINVAL);
	CHECK_CONTAINS(err, "unsupported format");
	CHECK_EQ_INT(parse_text("format 1\npmu x\nsource s\nevent A 0xzz desc\n", 'e', err,
				sizeof(err)),
		     -EINVAL);
	CHECK_CONTAINS(err, "x.evt:4: event A: bad code");
	CHECK_EQ_INT(parse_text("format 1\npmu x\nsource s\nevent A 0x1\n", 'e', err, sizeof(err)),
		     -EINVAL);
	CHECK_CONTAINS(err, "description missing");
	CHECK_EQ_INT(parse_text("format 1\npmu x\nsource s\nevent A 1 a\nevent a 2 b\n", 'e', err,
				sizeof(err)),
		     -EINVAL);
	CHECK_CONTAINS(err, "defined twice");
	CHECK_EQ_INT(parse_text("format 1\npmu x\nevent A 1 a\n", 'e', err, sizeof(err)), -EINVAL);
	CHECK_CONTAINS(err, "no 'source' line");
	CHECK_EQ_INT(parse_text("format 1\npmu x\nfrobnicate 1\n", 'e', err, sizeof(err)), -EINVAL);
	CHECK_CONTAINS(err, "x.evt:3: unknown keyword 'frobnicate'");
	CHECK_EQ_INT(parse_text("format 1\npmu x\nmetric a - b\n", 'm', err, sizeof(err)), -EINVAL);
	CHECK_CONTAINS(err, "metric before any group");
	CHECK_EQ_INT(parse_text("format 1\npmu x\ngroup g d\nmetric a - (b\n", 'm', err,
				sizeof(err)),
		     -EINVAL);
	CHECK_CONTAINS(err, "cannot parse expression");
	CHECK_EQ_INT(parse_text("format 1\npmu x\nsource s\nlacks\n", 'e', err, sizeof(err)),
		     -EINVAL);
	CHECK_CONTAINS(err, "x.evt:4: lacks needs event names");
	CHECK_EQ_INT(parse_text("format 1\npmu x\nsource s\nlacks A b/c\n", 'e', err, sizeof(err)),
		     -EINVAL);
	CHECK_CONTAINS(err, "lacks: 'b/c' is not an event name");
	/* a good one, with comments and CRLF */
	CHECK_EQ_INT(parse_text("# c\r\nformat 1\r\npmu x # trailing\r\nsource manual\r\n"
				"event A 0x10 first # not a comment\r\n",
				'e', err, sizeof(err)),
		     0);
}

static int lists_name(const struct hpm_event_info *info, void *arg)
{
	const char **want = arg;
	if (*want && !strcasecmp(info->name, *want))
		*want = NULL;
	return 0;
}

static bool listed(struct hpm_ctx *ctx, const char *pmu, const char *name)
{
	const char *want = name;
	hpm_ctx__for_each_event(ctx, pmu, lists_name, &want);
	return want == NULL;
}

/* issue 16: a core table's 'lacks' hides the common events the core does not have, and a
 * preset inherited from armv8_pmuv3 that names one is unavailable, not a wrong event */
TEST(lacked_events_and_their_presets_are_unavailable)
{
	struct hpm_ctx *ctx;
	struct hpm_event_info i;
	test_tables_only("cortex_a72");
	hpm_ctx__new(&ctx);
	CHECK_EQ_INT(hpm_ctx__resolve(ctx, "PAPI_RES_STL", &i), -ENOENT);
	CHECK_CONTAINS(hpm_ctx__last_error(ctx),
		       "'PAPI_RES_STL' is not available on cortex_a72: it stands for STALL_BACKEND, "
		       "which this core does not implement");
	CHECK_EQ_INT(hpm_ctx__resolve(ctx, "PAPI_STL_ICY", &i), -ENOENT);
	CHECK_CONTAINS(hpm_ctx__last_error(ctx), "it stands for STALL,");
	CHECK_EQ_INT(hpm_ctx__resolve(ctx, "STALL", &i), -ENOENT);
	CHECK_CONTAINS(hpm_ctx__last_error(ctx), "event 'STALL' is not implemented by this core");
	CHECK_EQ_INT(hpm_ctx__resolve(ctx, "cortex_a72::STALL_BACKEND", &i), -ENOENT);
	CHECK_EQ_INT(hpm_ctx__resolve(ctx, "PAPI_TOT_CYC", &i), 0); /* still inherited */
	CHECK_EQ_INT(i.config, 0x11);
	CHECK_EQ_INT(hpm_ctx__resolve(ctx, "PAPI_BR_INS", &i), 0); /* the A72's own choice */
	CHECK_EQ_INT(i.config, 0x12);
	CHECK(!listed(ctx, "cortex_a72", "STALL") && !listed(ctx, "cortex_a72", "PAPI_STL_ICY"));
	CHECK(listed(ctx, "cortex_a72", "CPU_CYCLES") && listed(ctx, "cortex_a72", "PAPI_TOT_CYC"));
	hpm_ctx__delete(ctx);
	test_tables_only("neoverse_n1");
	hpm_ctx__new(&ctx);
	CHECK_EQ_INT(hpm_ctx__resolve(ctx, "PAPI_STL_ICY", &i), -ENOENT);
	CHECK_CONTAINS(hpm_ctx__last_error(ctx), "not available on neoverse_n1: it stands for STALL,");
	CHECK_EQ_INT(hpm_ctx__resolve(ctx, "PAPI_RES_STL", &i), 0); /* the N1 has STALL_BACKEND */
	CHECK_EQ_INT(i.config, 0x24);
	hpm_ctx__delete(ctx);
	/* the architectural fallback keeps every common event and preset */
	test_tables_only("armv8_pmuv3");
	hpm_ctx__new(&ctx);
	CHECK_EQ_INT(hpm_ctx__resolve(ctx, "PAPI_STL_ICY", &i), 0);
	CHECK_EQ_INT(i.config, 0x3c);
	hpm_ctx__delete(ctx);
	/* a generated table: Neoverse V1 has STALL, not LD_RETIRED (its preset uses LD_SPEC) */
	test_tables_only("neoverse_v1");
	hpm_ctx__new(&ctx);
	CHECK_EQ_INT(hpm_ctx__resolve(ctx, "PAPI_STL_ICY", &i), 0);
	CHECK_EQ_INT(i.config, 0x3c);
	CHECK_EQ_INT(hpm_ctx__resolve(ctx, "PAPI_LD_INS", &i), 0);
	CHECK_EQ_INT(i.config, 0x70);
	CHECK_EQ_INT(hpm_ctx__resolve(ctx, "LD_RETIRED", &i), -ENOENT);
	hpm_ctx__delete(ctx);
	test_tables_only(NULL);
}

/* issue 16: Linux's spellings (and the RISC-V PAPI fork's) name the same events */
TEST(kernel_names_are_aliases)
{
	static const struct {
		const char *pmu, *name;
		uint64_t code;
	} cases[] = {
		{ "sifive_u74", "INTEGER_LOAD_RETIRED", 0x200 },
		{ "sifive_u74", "INST_TLB_MISS", 0x802 },
		{ "sifive_u74", "DATA_TLB_MISS", 0x1002 },
		{ "sifive_u74", "ICACHE_RETIRED", 0x102 },
		{ "sifive_u74", "INT_LOAD_RETIRED", 0x200 }, /* hpm's own name stays */
		{ "thead_c910", "INST_BRANCH", 0x7 },
		{ "thead_c910", "LL_CACHE_READ_MISS", 0x11 },
		{ "thead_c910", "IFU_STALLED_CYCLE", 0x27 },
		{ "thead_c910", "L2_CACHE_READ_MISS", 0x11 },
		{ "andes_ax45", "dcache_miss", 0x51 },
		{ "andes_ax45", "PAPI_L1_DCM", 0x51 },
		{ "starfive_dubhe_80", "PAPI_BR_MSP", 0xb },
		{ "starfive_dubhe_80", "FW_IPI_SENT", 0x8000000000000006ULL },
	};
	for (unsigned k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		struct hpm_ctx *ctx;
		struct hpm_event_info i;
		test_tables_only(cases[k].pmu);
		hpm_ctx__new(&ctx);
		int r = hpm_ctx__resolve(ctx, cases[k].name, &i);
		if (r)
			printf("    %s::%s: %s\n", cases[k].pmu, cases[k].name, hpm_ctx__last_error(ctx));
		CHECK_EQ_INT(r, 0);
		CHECK_EQ_INT(i.config, cases[k].code);
		CHECK_EQ_INT(i.type, PERF_TYPE_RAW);
		hpm_ctx__delete(ctx);
	}
	test_tables_only(NULL);
}

TEST(data_dir_override_reports_bad_file)
{
	char dir[] = "/tmp/hpmtest.XXXXXX", path[600];
	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/events", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/metrics", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/events/mine.evt", dir);
	FILE *f = fopen(path, "w");
	fputs("format 1\npmu mine\nsource test\nevent GOOD 0x11 ok\nevent BAD zz nope\n", f);
	fclose(f);
	setenv("HPM_DATA_DIR", dir, 1);
	test_tables_only("mine");
	struct hpm_ctx *ctx;
	struct hpm_event_info i;
	hpm_ctx__new(&ctx);
	CHECK_EQ_INT(hpm_ctx__resolve(ctx, "GOOD", &i), -EINVAL);
	CHECK_CONTAINS(hpm_ctx__last_error(ctx), "mine.evt:5: event BAD: bad code");
	hpm_ctx__delete(ctx);
	/* fixed file loads and wins over the built-in tables */
	f = fopen(path, "w");
	fputs("format 1\npmu mine\nsource test\nevent GOOD 0x11 ok\n", f);
	fclose(f);
	hpm_ctx__new(&ctx);
	CHECK_EQ_INT(hpm_ctx__resolve(ctx, "GOOD", &i), 0);
	CHECK_EQ_INT(i.config, 0x11);
	hpm_ctx__delete(ctx);
	/* 'lacks' names an event of an included table: a typo is an error, not a no-op */
	snprintf(path, sizeof(path), "%s/events/sub.evt", dir);
	f = fopen(path, "w");
	fputs("format 1\npmu sub\nsource test\ninclude mine\nlacks GOOD\nlacks GOOF\n", f);
	fclose(f);
	hpm_ctx__new(&ctx);
	CHECK_EQ_INT(hpm_ctx__resolve(ctx, "GOOD", &i), -EINVAL);
	CHECK_CONTAINS(hpm_ctx__last_error(ctx),
		       "table sub lacks GOOF, an event none of its included tables has");
	hpm_ctx__delete(ctx);
	unsetenv("HPM_DATA_DIR");
	test_tables_only(NULL);
	CHECK_EQ_INT(test_rmtree(dir), 0);
}
