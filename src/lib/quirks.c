/* SPDX-License-Identifier: MIT */
/*
 * Platform quirks, detected rather than assumed: emulators and young PMU
 * drivers give numbers that look fine and are wrong. Known in QEMU riscv64
 * (sscofpmf): a second counter on the same event reads 0 while the first
 * counts (7.2 and 10.0); exclude_kernel is ignored (7.2 only; 10.0 honours it).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "internal.h"

/* Instructions counted per getppid() syscall by an instructions:u counter on
 * this thread; user-side cost of a raw syscall is ~10 instructions, kernel
 * entry/exit is hundreds. Returns -1 when the probe cannot run. */
static long user_count_per_syscall(struct hpm_ctx *ctx)
{
	struct hpm_evset *set;
	struct hpm_value a, b;
	long per = -1;
	if (hpm_evset__new(ctx, &set))
		return -1;
	if (hpm_evset__add(set, "instructions:u") == 0 && hpm_evset__start(set) == 0) {
		hpm_evset__read(set, 0, &a);
		for (int i = 0; i < 256; i++)
			syscall(SYS_getppid);
		hpm_evset__read(set, 0, &b);
		per = (long)((b.raw - a.raw) / 256);
	}
	hpm_evset__delete(set);
	return per;
}

static void add_line(char *msg, size_t len, int *n, const char *line)
{
	size_t o = strlen(msg);
	snprintf(msg + o, len - o, "%s%s", o ? "\n" : "", line);
	(*n)++;
}

HPM_API int hpm_evset__check_quirks(struct hpm_evset *s, const struct hpm_value *vals, char *msg,
				    size_t len)
{
	if (!s || !msg || !len)
		return -EINVAL;
	int n = 0, nev = hpm_evset__nr(s);
	msg[0] = 0;
	bool user_only_hw = false;
	const struct perf_event_attr *attrs[256];
	for (int i = 0; i < nev && i < 256; i++) {
		attrs[i] = evset_attr(s, i);
		user_only_hw |= attrs[i]->exclude_kernel && !attrs[i]->exclude_user &&
				attrs[i]->type != PERF_TYPE_SOFTWARE;
	}
	if (user_only_hw) {
		long per = user_count_per_syscall(evset_ctx(s));
		if (per > 100) {
			char line[300];
			snprintf(line, sizeof(line),
				 "this PMU counts kernel work in ':u' events (%ld instructions per "
				 "syscall, where user space runs ~10): treat ':u' counts as user+kernel "
				 "(known for QEMU 7.2 riscv64)",
				 per);
			add_line(msg, len, &n, line);
		}
	}
	for (int i = 0; vals && i < nev && i < 256; i++)
		for (int k = i + 1; k < nev && k < 256; k++) {
			const struct perf_event_attr *x = attrs[i], *y = attrs[k];
			if (x->type != y->type || x->config != y->config || x->type == PERF_TYPE_SOFTWARE)
				continue;
			if ((vals[i].raw == 0) != (vals[k].raw == 0) && vals[i].running &&
			    vals[k].running) {
				char line[300];
				snprintf(line, sizeof(line),
					 "'%s' and '%s' count the same event but one reads 0 while "
					 "running: this PMU cannot count one event twice; trust the "
					 "non-zero one",
					 hpm_evset__name(s, i), hpm_evset__name(s, k));
				add_line(msg, len, &n, line);
				return n;
			}
		}
	return n;
}
