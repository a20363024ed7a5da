/* SPDX-License-Identifier: MIT */
/*
 * Tracepoints "subsys:name": the kernel publishes one directory per
 * tracepoint under tracefs (events/<subsys>/<name>/id); the id is the
 * perf_event_attr.config of a PERF_TYPE_TRACEPOINT event. hpm reads tracefs
 * where it is mounted. Where it is not, hpm mounts it at its standard place
 * /sys/kernel/tracing, as perf does (tools/lib/api/fs: perf mounts tracefs
 * on demand; systemd mounts it there at boot on most systems): only root can,
 * anyone else gets the message saying how.
 */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>
#include "internal.h"

/* The two places tracefs is mounted on Linux 4.1+ (the second through debugfs). */
static const char *const tracefs_roots[] = { "/sys/kernel/tracing/events",
					     "/sys/kernel/debug/tracing/events" };

/* events/ directory of a mounted tracefs, or NULL. *eacces is set when one
 * exists but this user cannot read it (tracefs is root-only by default). */
static const char *find_events_dir(char *buf, size_t len, bool *eacces, bool *faked)
{
	*eacces = false;
	*faked = false;
	for (unsigned i = 0; i < ARRAY_SIZE(tracefs_roots); i++) {
		const char *p = sysroot_path(tracefs_roots[i], buf, len);
		if (p != buf)
			snprintf(buf, len, "%s", p);
		else
			*faked = true;	/* a test's fake sysroot: never mount anything */
		if (access(buf, R_OK | X_OK) == 0)
			return buf;
		if (errno == EACCES)
			*eacces = true;
	}
	return NULL;
}

static const char *events_dir(char *buf, size_t len, bool *eacces)
{
	bool faked;
	const char *d = find_events_dir(buf, len, eacces, &faked);
	if (d || faked || *eacces)
		return d;
	/* not mounted: mount it where perf would (fails harmlessly with EPERM for
	 * users other than root, or EBUSY/ENOENT where something else is there) */
	if (mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL) != 0)
		return NULL;
	return find_events_dir(buf, len, eacces, &faked);
}

static bool is_ident(const char *s, size_t n)
{
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '-' || c == '.'))
			return false;
	}
	return true;
}

bool tracepoint_subsys_exists(const char *sys)
{
	char dir[512], path[1024];
	bool eacces;
	if (!events_dir(dir, sizeof(dir), &eacces))
		return false;
	struct stat st;
	snprintf(path, sizeof(path), "%s/%s", dir, sys);
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Closest tracepoint names of one subsystem, for "did you mean". */
static void suggest_in_subsys(const char *dir, const char *sys, const char *name, char *out,
			      size_t len)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/%s", dir, sys);
	DIR *d = opendir(path);
	out[0] = 0;
	if (!d)
		return;
	char best[3][128] = { "", "", "" };
	int dist[3] = { 99, 99, 99 };
	for (struct dirent *de; (de = readdir(d));) {
		if (de->d_name[0] == '.' || !strcmp(de->d_name, "enable") ||
		    !strcmp(de->d_name, "filter"))
			continue;
		int dd = levenshtein(name, de->d_name);
		if (strlen(name) >= 4 && strstr(de->d_name, name))
			dd = dd < 2 ? dd : 2;
		for (int i = 0; i < 3; i++)
			if (dd < dist[i]) {
				for (int k = 2; k > i; k--) {
					dist[k] = dist[k - 1];
					memcpy(best[k], best[k - 1], sizeof(best[k]));
				}
				dist[i] = dd;
				snprintf(best[i], sizeof(best[i]), "%.127s", de->d_name);
				break;
			}
	}
	closedir(d);
	int limit = (int)strlen(name) / 3 + 1;
	for (int i = 0; i < 3; i++)
		if (best[i][0] && dist[i] <= limit) {
			size_t o = strlen(out);
			snprintf(out + o, len - o, "%s%s:%s", o ? ", " : "", sys, best[i]);
		}
}

/* events/<sys>/<name>/id -> *id; -errno when it cannot be read */
static int read_id(const char *dir, const char *sys, const char *name, uint64_t *id)
{
	char path[1024], buf[32];
	snprintf(path, sizeof(path), "%s/%s/%s/id", dir, sys, name);
	FILE *f = fopen(path, "r");
	if (!f)
		return -errno;
	bool ok = fgets(buf, sizeof(buf), f) != NULL;
	fclose(f);
	char *end;
	unsigned long long v = ok ? strtoull(buf, &end, 10) : 0;
	if (!ok || end == buf)
		return -EIO;
	*id = v;
	return 0;
}

int tracepoint_resolve(struct hpm_ctx *ctx, const char *sys, const char *name, uint64_t *id)
{
	char dir[512];
	bool eacces;
	if (!events_dir(dir, sizeof(dir), &eacces)) {
		if (eacces)
			return hpm__err(ctx, -EACCES,
					"tracepoint '%s:%s': tracefs (/sys/kernel/tracing) is readable "
					"by root only; run as root (hpm never changes its permissions)",
					sys, name);
		return hpm__err(ctx, -ENOENT,
				"tracepoint '%s:%s': tracefs is not mounted; mount it with 'mount -t "
				"tracefs nodev /sys/kernel/tracing' (hpm mounts it itself when run as root, like perf)",
				sys, name);
	}
	int r = read_id(dir, sys, name, id);
	if (r == 0)
		return 0;
	if (r == -EACCES)
		return hpm__err(ctx, r, "tracepoint '%s:%s': its id in tracefs is readable by root "
				"only; run as root", sys, name);
	if (r == -EIO)
		return hpm__err(ctx, r, "tracepoint '%s:%s': unreadable id in tracefs", sys, name);
	if (!tracepoint_subsys_exists(sys))
		return hpm__err(ctx, -ENOENT,
				"unknown tracepoint subsystem '%s' in '%s:%s' (hpm list tracepoint)",
				sys, sys, name);
	char sug[400];
	suggest_in_subsys(dir, sys, name, sug, sizeof(sug));
	if (sug[0])
		return hpm__err(ctx, -ENOENT,
				"unknown tracepoint '%s:%s'; did you mean: %s? (hpm list tracepoint)",
				sys, name, sug);
	return hpm__err(ctx, -ENOENT, "unknown tracepoint '%s:%s' (hpm list tracepoint)", sys,
			name);
}

/* "sys:name" split at the single colon; false when it is not of that shape. */
bool tracepoint_split(const char *s, size_t n, char *sys, size_t syslen, char *name,
		      size_t namelen)
{
	const char *c = memchr(s, ':', n);
	if (!c || (size_t)(c - s) >= syslen || n - (size_t)(c - s) - 1 >= namelen)
		return false;
	size_t a = (size_t)(c - s), b = n - a - 1;
	if (!is_ident(s, a) || !is_ident(c + 1, b))
		return false;
	memcpy(sys, s, a);
	sys[a] = 0;
	memcpy(name, c + 1, b);
	name[b] = 0;
	return true;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every tracepoint whose "sys:name" matches the glob (NULL: all), sorted. */
int tracepoint_for_each(struct hpm_ctx *ctx, const char *glob,
			int (*cb)(const char *sys, const char *name, uint64_t id, void *arg),
			void *arg)
{
	char dir[512];
	bool eacces;
	if (!events_dir(dir, sizeof(dir), &eacces))
		return hpm__err(ctx, eacces ? -EACCES : -ENOENT,
				eacces ? "tracefs (/sys/kernel/tracing) is readable by root only; run "
					 "as root to list or use tracepoints"
				       : "tracefs is not mounted; mount it with 'mount -t tracefs "
					 "nodev /sys/kernel/tracing' (hpm mounts it itself when run as root, like perf)");
	DIR *d = opendir(dir);
	if (!d)
		return hpm__err(ctx, -errno, "cannot read %s: %s", dir, strerror(errno));
	char **names = NULL;
	size_t n = 0, cap = 0;
	int ret = 0;
	for (struct dirent *de; (de = readdir(d));) {
		if (de->d_name[0] == '.')
			continue;
		char sub[1024];
		snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name);
		DIR *sd = opendir(sub);
		if (!sd)
			continue;
		for (struct dirent *e; (e = readdir(sd));) {
			if (e->d_name[0] == '.' || e->d_type == DT_REG)
				continue;
			char full[512];
			snprintf(full, sizeof(full), "%s:%s", de->d_name, e->d_name);
			if (glob && fnmatch(glob, full, 0))
				continue;
			if (n == cap) {
				char **nn = realloc(names, sizeof(*names) * (cap = cap ? cap * 2 : 256));
				if (!nn) {
					ret = -ENOMEM;
					break;
				}
				names = nn;
			}
			if (!(names[n] = strdup(full))) {
				ret = -ENOMEM;
				break;
			}
			n++;
		}
		closedir(sd);
		if (ret)
			break;
	}
	closedir(d);
	if (!ret && n) /* no match: names is NULL, which qsort must not get (UBSan, fuzzing) */
		qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n; i++) {
		if (!ret) {
			char *c = strchr(names[i], ':');
			*c = 0;
			uint64_t id;
			/* a directory without an id (ftrace's own entries) is not a tracepoint */
			if (read_id(dir, names[i], c + 1, &id) == 0)
				ret = cb(names[i], c + 1, id, arg);
		}
		free(names[i]);
	}
	free(names);
	return ret;
}
