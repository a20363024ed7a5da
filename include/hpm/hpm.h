/* SPDX-License-Identifier: MIT */
/*
 * libhpm — portable named hardware counters on Linux perf_event.
 *
 * Objects are opaque; functions are named object__verb and return 0 (or a
 * non-negative value) on success and a negative errno on failure. After a
 * failure, hpm_ctx__last_error() holds one line saying what went wrong and
 * what to do about it.
 *
 *   struct hpm_ctx *ctx; struct hpm_evset *set; struct hpm_value v;
 *   hpm_ctx__new(&ctx);
 *   hpm_evset__new(ctx, &set);
 *   hpm_evset__add(set, "instructions:u");
 *   hpm_evset__start(set);  ...work...  hpm_evset__stop(set);
 *   hpm_evset__read(set, 0, &v);
 *   hpm_evset__delete(set); hpm_ctx__delete(ctx);
 */
#ifndef HPM_HPM_H
#define HPM_HPM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HPM_VERSION_MAJOR 0
#define HPM_VERSION_MINOR 1
#define HPM_VERSION_PATCH 0

struct hpm_ctx;
struct hpm_evset;

/* How a value was read. */
enum hpm_read_path {
	HPM_READ_NONE = 0,    /* not read yet */
	HPM_READ_SYSCALL = 1, /* read(2) on the event fd */
	HPM_READ_MMAP = 2,    /* perf mmap page + user-space counter instruction */
};

struct hpm_value {
	uint64_t raw;     /* count as the kernel gives it */
	uint64_t enabled; /* ns the event was enabled */
	uint64_t running; /* ns the event was on a counter (< enabled when multiplexed) */
	double scaled;    /* raw * enabled / running; raw when not multiplexed; 0 if never ran */
	int path;         /* enum hpm_read_path */
};

/* ---- context: event tables, PMU detection, error text ---------------- */
int hpm_ctx__new(struct hpm_ctx **ctx);
void hpm_ctx__delete(struct hpm_ctx *ctx);
const char *hpm_ctx__last_error(const struct hpm_ctx *ctx);
/* Event table name of the running CPU's core PMU ("neoverse_n1", ...), or NULL
 * when no table matches (generic perf events still work). Detection is lazy. */
const char *hpm_ctx__pmu(struct hpm_ctx *ctx);
/* A human-readable CPU identity ("arm midr=0x41:0xd0c", "riscv mvendorid=...") */
const char *hpm_ctx__cpu_id(struct hpm_ctx *ctx);

struct hpm_event_info {
	const char *name;     /* as written in its table, or the generic perf name */
	const char *pmu;      /* table name, or "generic" */
	const char *desc;
	const char *alias_of; /* for aliases (PAPI presets): the target name, else NULL */
	uint32_t type;        /* perf_event_attr.type */
	uint64_t config;      /* perf_event_attr.config (the table's code for raw events) */
};
/* Resolve a name (with modifiers) to its perf encoding without opening it. */
int hpm_ctx__resolve(struct hpm_ctx *ctx, const char *name, struct hpm_event_info *info);
/* For tools that open events themselves (hpm record): fill *attr with the
 * encoding of `name` (type, config, config1/2, exclude_* from modifiers; size
 * set, everything else zero) and copy its printed name into canon. */
struct perf_event_attr;
int hpm_ctx__event_attr(struct hpm_ctx *ctx, const char *name, struct perf_event_attr *attr,
			char *canon, size_t len);
/* Turn a failed perf_event_open (-errno) of `name` with `attr` for pid/cpu
 * into hpm's one-line explanation (hpm_ctx__last_error); returns err. */
int hpm_ctx__explain_open(struct hpm_ctx *ctx, int err, const char *name,
			  const struct perf_event_attr *attr, pid_t pid, int cpu);
/* Try to open the event on this machine (self, disabled) and close it again:
 * 0 if it can be counted here, else -errno with last_error explaining. */
int hpm_ctx__probe(struct hpm_ctx *ctx, const char *name);

/* Split an event list in perf's syntax into event names, in order: "a,b",
 * groups "{a,b}" (with member modifiers "{a,b}:u"), "pmu/term=v,.../" (its
 * commas stay inside), tracepoint globs "sys:name*" (every match). flags
 * tell the group structure. Names are not resolved here. cb returns 0 to go
 * on or a negative errno to stop. Returns the number of events or -errno
 * (last_error says what is wrong with the list). */
#define HPM_LIST_GROUP_START 0x1 /* first member of a {...} group */
#define HPM_LIST_IN_GROUP 0x2    /* member of a {...} group */
#define HPM_LIST_GROUP_END 0x4   /* last member of a {...} group */
typedef int (*hpm_list_cb)(const char *name, unsigned flags, void *arg);
int hpm_ctx__parse_list(struct hpm_ctx *ctx, const char *list, hpm_list_cb cb, void *arg);

typedef int (*hpm_event_cb)(const struct hpm_event_info *info, void *arg);
/* Every event of table `pmu` (NULL: generic events + the detected table),
 * including included tables and aliases; pmu "tracepoint": the kernel's
 * tracepoints (from tracefs). Stops when cb returns non-zero. */
int hpm_ctx__for_each_event(struct hpm_ctx *ctx, const char *pmu, hpm_event_cb cb, void *arg);
typedef int (*hpm_pmu_cb)(const char *pmu, const char *title, const char *isa, void *arg);
int hpm_ctx__for_each_pmu(struct hpm_ctx *ctx, hpm_pmu_cb cb, void *arg);

struct hpm_metric_info {
	const char *pmu, *group, *group_desc, *name, *unit, *expr;
};
typedef int (*hpm_metric_cb)(const struct hpm_metric_info *info, void *arg);
/* Metrics of table `pmu` (NULL: detected table + generic) in group `group` (NULL: all). */
int hpm_ctx__for_each_metric(struct hpm_ctx *ctx, const char *pmu, const char *group,
			     hpm_metric_cb cb, void *arg);

/* ---- event sets ------------------------------------------------------- */
/* Target flags for hpm_evset__set_target(). */
#define HPM_TARGET_INHERIT 0x1        /* count children created after open */
#define HPM_TARGET_ENABLE_ON_EXEC 0x2 /* start counting at the target's next exec */
#define HPM_CPU_ALL (-2)              /* cpu argument: one counter per online CPU */

int hpm_evset__new(struct hpm_ctx *ctx, struct hpm_evset **set);
void hpm_evset__delete(struct hpm_evset *set);
/* Who is counted; call before adding events. pid 0 = calling thread, pid > 0 =
 * that task, pid -1 with cpu >= 0 or HPM_CPU_ALL = everything on those CPUs. */
int hpm_evset__set_target(struct hpm_evset *set, pid_t pid, int cpu, unsigned flags);
/* Largest number of events hpm puts in one perf group (default: the PMU
 * table's counter count, or unlimited). Events beyond it start a new group. */
int hpm_evset__set_group_max(struct hpm_evset *set, int max);
/* Add and open one event; returns its index. It joins the current group; if
 * the kernel refuses the group (too many counters, another PMU), it starts
 * a new group instead. */
int hpm_evset__add(struct hpm_evset *set, const char *name);
/* Comma-separated list, perf syntax: "cycles,instructions:u,{a,b}". Braces
 * make a group that must be scheduled whole (error if it cannot be). Returns
 * the number of events added. */
int hpm_evset__add_list(struct hpm_evset *set, const char *list);
/* Add the events every metric of group `group` needs; returns the number of
 * metrics. */
int hpm_evset__add_metric_group(struct hpm_evset *set, const char *group);

int hpm_evset__start(struct hpm_evset *set);
int hpm_evset__stop(struct hpm_evset *set);
int hpm_evset__reset(struct hpm_evset *set);
/* Read event idx (summed over CPUs in per-CPU mode). */
int hpm_evset__read(struct hpm_evset *set, int idx, struct hpm_value *val);
/* Read all events, one read per group; vals has hpm_evset__nr() entries. */
int hpm_evset__read_all(struct hpm_evset *set, struct hpm_value *vals);

int hpm_evset__nr(const struct hpm_evset *set);
int hpm_evset__nr_groups(const struct hpm_evset *set);
const char *hpm_evset__name(const struct hpm_evset *set, int idx);
int hpm_evset__group_of(const struct hpm_evset *set, int idx);
/* Path the next read of event idx will take, and why (NULL ok) when it is not
 * the mmap path. */
int hpm_evset__read_path(struct hpm_evset *set, int idx, char *why, size_t len);

/* Platform quirks that make counts of this set wrong, checked for real:
 * a PMU that counts kernel work in exclude_kernel (":u") events (probed with
 * a burst of syscalls), and twin events where one reads 0 while the other
 * counts (vals from the last read_all, or NULL to skip that check). Writes one
 * line per quirk into msg (newline-separated); returns how many. */
int hpm_evset__check_quirks(struct hpm_evset *set, const struct hpm_value *vals, char *msg,
			    size_t len);

/* Metrics added with add_metric_group, evaluated on the last read_all(). */
int hpm_evset__nr_metrics(const struct hpm_evset *set);
/* Returns 0 and sets *value, or -EDOM when undefined (division by zero,
 * an event that never ran), or -ENODATA when the metric needs a fact this
 * machine does not give (#slots: the core PMU has no caps/slots, or 0 there),
 * or -EOPNOTSUPP when it needs an event the kernel would not open here
 * (hpm_evset__missing); then hpm_ctx__last_error() says which (one reason: when a
 * metric lacks several things, the last one the expression names). */
int hpm_evset__metric(struct hpm_evset *set, int i, const struct hpm_value *vals,
		      const char **name, const char **unit, double *value);

/* Events the metric groups need that the kernel would not open here (perf stat's
 * <not supported>: no such event on this PMU or kernel). They are not in the set; the
 * metrics that need one are unavailable (hpm_evset__metric: -EOPNOTSUPP), the others
 * count. hpm_evset__missing returns the event's name and, in *why (NULL ok), the
 * kernel's answer as libhpm explains it; NULL (why untouched) when i is out of range.
 * The strings live until the next add_metric_group or delete of the set. */
int hpm_evset__nr_missing(const struct hpm_evset *set);
const char *hpm_evset__missing(const struct hpm_evset *set, int i, const char **why);

/* Evaluate a metric expression over named values (used by tools and tests).
 * lookup is asked for event names and for HPM_EXPR_SLOTS ("#slots", the
 * core's issue slots per cycle); a negative return other than -EDOM is
 * returned by hpm_expr__eval, -EDOM makes the result undefined. */
#define HPM_EXPR_SLOTS "#slots"
typedef int (*hpm_lookup_fn)(const char *name, double *value, void *arg);
int hpm_expr__eval(const char *expr, hpm_lookup_fn lookup, void *arg, double *out);

/* Scaling used everywhere: raw * enabled / running (0 when running == 0). */
double hpm_scale(uint64_t raw, uint64_t enabled, uint64_t running);

/* Version string "0.1.0". */
const char *hpm_version(void);

#ifdef __cplusplus
}
#endif
#endif
