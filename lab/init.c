/* SPDX-License-Identifier: MIT */
/*
 * hpmlab-init: PID 1 of the lab guests (riscv64, aarch64 under QEMU).
 *
 * Mounts proc/sys/dev/tmpfs, runs the command stored in /lab/argv (NUL
 * separated) with PATH=/bin in the folder /out, then reports on the console:
 *
 *   @@HPMLAB BEGIN 1@@
 *   @@HPMLAB STATUS <exit status>@@             (or EXECFAIL <errno>)
 *   @@HPMLAB FILE <name> <size> <crc32>@@        name: stdout, stderr, out/<file>
 *   <base64, 76 columns>
 *   @@HPMLAB END@@
 *   @@HPMLAB DONE <files>@@
 *
 * and powers off. The host checks sizes and CRCs, so kernel messages
 * interleaved on the console cannot silently corrupt a result.
 * Optional /lab/sysctl lines "path value" are written first (for settings the
 * experiment itself needs inside this throwaway guest, e.g. perf_user_access).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static uint32_t crc32_update(uint32_t crc, const unsigned char *p, size_t n)
{
	crc = ~crc;
	while (n--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1)));
	}
	return ~crc;
}

static void out(const char *s)
{
	size_t n = strlen(s);
	while (n) {
		ssize_t w = write(1, s, n);
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

static char *slurp(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return NULL;
	size_t cap = 65536, n = 0;
	char *buf = malloc(cap);
	for (;;) {
		if (n == cap) {
			char *nb = realloc(buf, cap *= 2);
			if (!nb)
				break;
			buf = nb;
		}
		ssize_t r = read(fd, buf + n, cap - n);
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	*len = n;
	return buf;
}

static void send_file(const char *name, const char *path)
{
	static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t n;
	unsigned char *d = (unsigned char *)slurp(path, &n);
	if (!d)
		return;
	char line[128];
	snprintf(line, sizeof(line), "@@HPMLAB FILE %s %zu %08x@@\n", name, n, crc32_update(0, d, n));
	out(line);
	char enc[80];
	size_t col = 0;
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)d[i] << 16 | (i + 1 < n ? (uint32_t)d[i + 1] << 8 : 0) |
			     (i + 2 < n ? d[i + 2] : 0);
		enc[col++] = b64[(v >> 18) & 63];
		enc[col++] = b64[(v >> 12) & 63];
		enc[col++] = i + 1 < n ? b64[(v >> 6) & 63] : '=';
		enc[col++] = i + 2 < n ? b64[v & 63] : '=';
		if (col >= 76 || i + 3 >= n) {
			enc[col++] = '\n';
			enc[col] = 0;
			out(enc);
			col = 0;
		}
	}
	out("@@HPMLAB END@@\n");
	free(d);
}

static void apply_sysctls(void)
{
	size_t n;
	char *s = slurp("/lab/sysctl", &n);
	if (!s)
		return;
	s = realloc(s, n + 1);
	s[n] = 0;
	for (char *save, *l = strtok_r(s, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *sp = strchr(l, ' ');
		if (!sp)
			continue;
		*sp = 0;
		int fd = open(l, O_WRONLY);
		if (fd < 0 || write(fd, sp + 1, strlen(sp + 1)) < 0) {
			char m[256];
			snprintf(m, sizeof(m), "@@HPMLAB WARN cannot set %s: %s@@\n", l, strerror(errno));
			out(m);
		}
		if (fd >= 0)
			close(fd);
	}
	free(s);
}

static void power_off(void)
{
	sync();
	reboot(RB_POWER_OFF);
	for (;;)
		pause();
}

/* Bring up `lo` (127.0.0.1 is configured by the kernel with the device) so socket
 * workloads can use loopback; kernels built without networking just skip it. */
static void loopback_up(void)
{
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return;
	struct ifreq ifr;
	memset(&ifr, 0, sizeof ifr);
	strcpy(ifr.ifr_name, "lo");
	if (ioctl(s, SIOCGIFFLAGS, &ifr) == 0) {
		ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
		ioctl(s, SIOCSIFFLAGS, &ifr);
	}
	close(s);
}

int main(void)
{
	mount("proc", "/proc", "proc", 0, NULL);
	mount("sysfs", "/sys", "sysfs", 0, NULL);
	mount("devtmpfs", "/dev", "devtmpfs", 0, NULL);
	mount("tmpfs", "/tmp", "tmpfs", 0, NULL);
	mount("tmpfs", "/out", "tmpfs", 0, NULL);
	loopback_up();
	setenv("PATH", "/bin", 1);
	setenv("HOME", "/out", 1);
	apply_sysctls();
	/* /lab/env: NAME=VALUE lines for the command's environment */
	size_t en;
	char *env = slurp("/lab/env", &en);
	for (char *save, *l = env ? strtok_r(env, "\n", &save) : NULL; l; l = strtok_r(NULL, "\n", &save))
		putenv(l);

	size_t n;
	char *argbuf = slurp("/lab/argv", &n);
	char *argv[256];
	int argc = 0;
	for (size_t i = 0; argbuf && i < n && argc < 255; i += strlen(argbuf + i) + 1)
		argv[argc++] = argbuf + i;
	argv[argc] = NULL;
	out("\n@@HPMLAB BEGIN 1@@\n");
	if (!argc) {
		out("@@HPMLAB EXECFAIL 22@@\n@@HPMLAB DONE 0@@\n");
		power_off();
	}
	int errpipe[2];
	if (pipe2(errpipe, O_CLOEXEC) < 0)
		power_off();
	pid_t pid = fork();
	if (pid == 0) {
		close(errpipe[0]);
		if (chdir("/out") < 0)
			_exit(126);
		int fo = open("/tmp/stdout", O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int fe = open("/tmp/stderr", O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(fo, 1);
		dup2(fe, 2);
		execvp(argv[0], argv);
		int e = errno;
		if (write(errpipe[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(errpipe[1]);
	int e = 0, status = 0;
	ssize_t got = read(errpipe[0], &e, sizeof(e));
	/* PID 1 reaps everything; wait for our command specifically */
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	char line[96];
	if (got == (ssize_t)sizeof(e))
		snprintf(line, sizeof(line), "@@HPMLAB EXECFAIL %d@@\n", e);
	else
		snprintf(line, sizeof(line), "@@HPMLAB STATUS %d@@\n",
			 WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	out(line);
	int files = 0;
	send_file("stdout", "/tmp/stdout");
	send_file("stderr", "/tmp/stderr");
	DIR *d = opendir("/out");
	for (struct dirent *de; d && (de = readdir(d));) {
		char path[300], name[300];
		struct stat st;
		snprintf(path, sizeof(path), "/out/%s", de->d_name);
		if (de->d_name[0] == '.' || stat(path, &st) || !S_ISREG(st.st_mode))
			continue;
		snprintf(name, sizeof(name), "out/%s", de->d_name);
		send_file(name, path);
		files++;
	}
	snprintf(line, sizeof(line), "@@HPMLAB DONE %d@@\n", files);
	out(line);
	power_off();
	return 0;
}
