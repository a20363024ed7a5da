/* SPDX-License-Identifier: MIT */
/* One line per perf_event_open failure: what went wrong and what the user can do.
 * hpm never changes perf_event_paranoid or perf_user_access itself. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "internal.h"

int perf_paranoid(void)
{
	char buf[32];
	if (read_small_file("/proc/sys/kernel/perf_event_paranoid", buf, sizeof(buf)) <= 0)
		return 99; /* unknown: perf_event probably not built into this kernel */
	return atoi(buf);
}

/* Does sysfs list a hardware PMU for the cores? */
static bool have_core_pmu(char *names, size_t len)
{
	char path[256];
	DIR *d = opendir(sysroot_path("/sys/bus/event_source/devices", path, sizeof(path)));
	bool found = false;
	names[0] = 0;
	if (!d)
		return false;
	static const char *const not_core[] = { "software", "tracepoint", "breakpoint", "kprobe",
						"uprobe", "msr", "power", "cstate_core",
						"cstate_pkg", "intel_bts", "intel_pt" };
	for (struct dirent *de; (de = readdir(d));) {
		if (de->d_name[0] == '.')
			continue;
		bool skip = false;
		for (unsigned i = 0; i < ARRAY_SIZE(not_core); i++)
			skip |= !strcmp(de->d_name, not_core[i]);
		size_t o = strlen(names);
		snprintf(names + o, len - o, "%s%s", o ? " " : "", de->d_name);
		if (!skip && (!strcmp(de->d_name, "cpu") || !strncmp(de->d_name, "armv8", 5) ||
			      !strncmp(de->d_name, "cpu_", 4) || !strncmp(de->d_name, "riscv", 5)))
			found = true;
	}
	closedir(d);
	return found;
}

int explain_open_error(struct hpm_ctx *ctx, int err, const char *name,
		       const struct perf_event_attr *attr, pid_t pid, int cpu)
{
	char pmus[512];
	int par = perf_paranoid();
	bool hw = attr->type != PERF_TYPE_SOFTWARE && attr->type != PERF_TYPE_TRACEPOINT;
	switch (-err) {
	case EACCES:
	case EPERM: {
		const char *what, *need;
		if (geteuid() == 0)
			/* root passes every paranoid and ptrace check: the refusal is the event's
			 * own (a tracepoint the kernel keeps to ftrace, say), as perf says */
			return hpm__err(ctx, err,
					"no permission to enable '%s': the kernel refuses this event "
					"even to root; see 'hpm list' for what can be counted here",
					name);
		if (pid == -1) {
			what = "counting whole CPUs";
			need = "kernel.perf_event_paranoid <= 0";
		} else if (!attr->exclude_kernel) {
			what = "counting kernel mode";
			need = "kernel.perf_event_paranoid <= 1 (or count user mode only with :u)";
		} else if (pid > 0) {
			what = "attaching to that process";
			need = "permission to ptrace it (same user, and kernel.yama.ptrace_scope)";
		} else {
			what = "any perf counting";
			need = "kernel.perf_event_paranoid <= 2";
		}
		return hpm__err(ctx, err,
				"permission denied for '%s': %s is not allowed to this user "
				"(kernel.perf_event_paranoid=%d); run as root or with CAP_PERFMON, or "
				"ask an administrator for %s. hpm never changes this setting",
				name, what, par, need);
	}
	case ENOENT:
	case EOPNOTSUPP:
	case ENODEV:
		if (hw && !have_core_pmu(pmus, sizeof(pmus)))
			return hpm__err(ctx, err,
					"event '%s' cannot be counted: this machine exposes no hardware "
					"PMU to Linux (event sources: %s), as in most VMs; software events "
					"(task-clock, page-faults, ...) still work",
					name, pmus[0] ? pmus : "none");
		return hpm__err(ctx, err,
				"event '%s' is not supported by this CPU's PMU or kernel (type %u, "
				"config 0x%llx); see 'hpm list' for what can be counted here",
				name, attr->type, (unsigned long long)attr->config);
	case ENOSYS:
		return hpm__err(ctx, err,
				"cannot open '%s': perf_event_open is not available here (kernel "
				"without CONFIG_PERF_EVENTS, a seccomp filter, or qemu-user); run on "
				"the real kernel or in 'hpmkit lab'",
				name);
	case ESRCH:
		return hpm__err(ctx, err, "no process with pid %d to count '%s'", pid, name);
	case EMFILE:
	case ENFILE:
		return hpm__err(ctx, err,
				"out of file descriptors opening '%s' (one per event per CPU): raise "
				"'ulimit -n'",
				name);
	case EBUSY:
		return hpm__err(ctx, err,
				"the counter for '%s' is in use by another tool (NMI watchdog, "
				"another profiler); free it and retry",
				name);
	case EINVAL:
		if (cpu >= 0 && pid == -1)
			return hpm__err(ctx, err, "the kernel rejected '%s' on CPU %d (offline CPU or "
					"an encoding this PMU does not accept)", name, cpu);
		return hpm__err(ctx, err,
				"the kernel rejected '%s' (type %u, config 0x%llx): an event code "
				"this PMU does not accept, or a modifier it cannot filter by",
				name, attr->type, (unsigned long long)attr->config);
	default:
		return hpm__err(ctx, err, "cannot open '%s': %s", name, strerror(-err));
	}
}

HPM_API int hpm_ctx__probe(struct hpm_ctx *ctx, const char *name)
{
	struct resolved r;
	int ret = names_resolve(ctx, name, &r);
	if (ret < 0)
		return ret;
	r.attr.disabled = 1;
	int fd = sys_perf_event_open(&r.attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0 && (fd == -EACCES || fd == -EPERM) && !strchr(name, ':')) {
		r.attr.exclude_kernel = 1;
		r.attr.exclude_hv = 1;
		fd = sys_perf_event_open(&r.attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	}
	if (fd < 0)
		return explain_open_error(ctx, fd, name, &r.attr, 0, -1);
	close(fd);
	return 0;
}

HPM_API int hpm_ctx__explain_open(struct hpm_ctx *ctx, int err, const char *name,
				  const struct perf_event_attr *attr, pid_t pid, int cpu)
{
	if (err >= 0)
		return err;
	return explain_open_error(ctx, err, name, attr, pid, cpu);
}
