/* SPDX-License-Identifier: MIT */
/*
 * hpm-truth MODE N [-c]: small kernel workloads whose per-call instruction counts can be
 * known exactly, the ground truth of the lab's precise sampling (docs/pes.md).
 *
 *   dup N        900 fds open with one hole (ksuite fd-alloc's pattern); N x (dup + close)
 *   getppid N    N x getppid()
 *   pipe N       N x (write 1 byte + read 1 byte) through one pipe
 *   unix N       N x (send 64 bytes + recv) over an AF_UNIX socketpair
 *   udp N SIZE   N x (sendto + recvfrom) of SIZE-byte datagrams over loopback
 *   tcp N SIZE   N x (send + recv) of SIZE bytes over a loopback TCP connection
 *   fork N       N x (fork + _exit in the child + waitpid)
 *   mix N        N x (getpid, getcwd, stat, sched_yield)
 *   sleep N      N x clock_nanosleep(200 us): timer-driven, mostly idle (like cyclictest)
 *
 * With -c, the instructions of each call (user + kernel) are read around it with
 * perf_event_open, independently of any profiler, and printed as "call: total calls
 * per-call" lines. With -m (udp/tcp), the user buffers are misaligned by one byte.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAXCALLS 4

static int counter = -1;
static struct {
	const char *name;
	uint64_t total, n;
} calls[MAXCALLS];

static uint64_t now(void)
{
	uint64_t v = 0;
	if (counter >= 0 && read(counter, &v, sizeof v) != sizeof v)
		v = 0;
	return v;
}

/* COUNT(i, "name", expr): run expr; with -c also add its instructions to calls[i].
 * The read() that follows the call is counted up to its kernel entry: a constant that
 * the "empty" baseline (two reads back to back) removes in report(). */
#define COUNT(i, nm, expr)                                                                 \
	do {                                                                               \
		if (counter < 0) {                                                         \
			expr;                                                              \
			break;                                                             \
		}                                                                          \
		uint64_t t0_ = now();                                                      \
		expr;                                                                      \
		uint64_t t1_ = now();                                                      \
		calls[i].name = nm;                                                        \
		calls[i].total += t1_ - t0_;                                               \
		calls[i].n++;                                                              \
	} while (0)

static void die(const char *what)
{
	fprintf(stderr, "hpm-truth: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void open_counter(void)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	a.type = PERF_TYPE_HARDWARE;
	a.config = PERF_COUNT_HW_INSTRUCTIONS;
	counter = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	if (counter < 0)
		die("perf_event_open(instructions, user+kernel)");
}

static void report(void)
{
	if (counter < 0)
		return;
	/* the cost of the measurement itself: two reads with nothing between */
	uint64_t base = 0;
	for (int k = 0; k < 1000; k++) {
		uint64_t t0 = now(), t1 = now();
		base += t1 - t0;
	}
	printf("empty: %llu 1000 %.1f\n", (unsigned long long)base, base / 1000.0);
	for (int i = 0; i < MAXCALLS; i++)
		if (calls[i].n)
			printf("%s: %llu %llu %.1f\n", calls[i].name, (unsigned long long)calls[i].total,
			       (unsigned long long)calls[i].n,
			       (double)calls[i].total / calls[i].n - base / 1000.0);
}

static void w_dup(long n)
{
	int null = open("/dev/null", O_RDONLY);
	if (null < 0)
		die("open /dev/null");
	for (int i = 0; i < 900; i++)
		if (dup(null) < 0)
			die("dup (setup)");
	close(500); /* the hole dup() finds: a bit search over the fd bitmap */
	for (long i = 0; i < n; i++) {
		int fd;
		COUNT(0, "dup", fd = dup(null));
		COUNT(1, "close", close(fd));
	}
}

static void w_getppid(long n)
{
	for (long i = 0; i < n; i++)
		COUNT(0, "getppid", syscall(SYS_getppid));
}

static void w_pipe(long n)
{
	int p[2];
	char c = 'x';
	if (pipe(p))
		die("pipe");
	for (long i = 0; i < n; i++) {
		COUNT(0, "write", if (write(p[1], &c, 1) != 1) die("write"));
		COUNT(1, "read", if (read(p[0], &c, 1) != 1) die("read"));
	}
}

static void w_unix(long n)
{
	int s[2];
	char buf[64] = {0};
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, s))
		die("socketpair(AF_UNIX)");
	for (long i = 0; i < n; i++) {
		COUNT(0, "send", if (send(s[0], buf, sizeof buf, 0) != sizeof buf) die("send"));
		COUNT(1, "recv", if (recv(s[1], buf, sizeof buf, MSG_WAITALL) != sizeof buf) die("recv"));
	}
}

static char *buffer(size_t size, int misalign)
{
	char *b = aligned_alloc(64, size + 64);
	if (!b)
		die("malloc");
	memset(b, 'a', size + 64);
	return b + (misalign ? 1 : 0);
}

static void w_udp(long n, size_t size, int misalign)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof a;
	int rx = socket(AF_INET, SOCK_DGRAM, 0), tx = socket(AF_INET, SOCK_DGRAM, 0);
	if (rx < 0 || tx < 0)
		die("socket(AF_INET, SOCK_DGRAM)");
	int big = 1 << 20;
	setsockopt(rx, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
	if (bind(rx, (struct sockaddr *)&a, sizeof a) || getsockname(rx, (struct sockaddr *)&a, &len))
		die("bind 127.0.0.1");
	char *out = buffer(size, misalign), *in = buffer(size, misalign);
	for (long i = 0; i < n; i++) {
		COUNT(0, "sendto", if (sendto(tx, out, size, 0, (struct sockaddr *)&a, sizeof a) != (ssize_t)size) die("sendto"));
		COUNT(1, "recvfrom", if (recvfrom(rx, in, size, 0, NULL, NULL) != (ssize_t)size) die("recvfrom"));
	}
}

static void w_tcp(long n, size_t size, int misalign)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof a;
	int l = socket(AF_INET, SOCK_STREAM, 0), c = socket(AF_INET, SOCK_STREAM, 0);
	if (l < 0 || c < 0)
		die("socket(AF_INET, SOCK_STREAM)");
	if (bind(l, (struct sockaddr *)&a, sizeof a) || listen(l, 1) ||
	    getsockname(l, (struct sockaddr *)&a, &len))
		die("bind/listen 127.0.0.1");
	if (connect(c, (struct sockaddr *)&a, sizeof a))
		die("connect 127.0.0.1");
	int s = accept(l, NULL, NULL);
	if (s < 0)
		die("accept");
	char *out = buffer(size, misalign), *in = buffer(size, misalign);
	for (long i = 0; i < n; i++) {
		COUNT(0, "send", if (send(c, out, size, 0) != (ssize_t)size) die("send"));
		COUNT(1, "recv", if (recv(s, in, size, MSG_WAITALL) != (ssize_t)size) die("recv"));
	}
}

static void w_fork(long n)
{
	for (long i = 0; i < n; i++) {
		pid_t p = fork();
		if (p < 0)
			die("fork");
		if (p == 0)
			_exit(0);
		if (waitpid(p, NULL, 0) != p)
			die("waitpid");
	}
}

static void w_mix(long n)
{
	char cwd[256];
	struct stat st;
	for (long i = 0; i < n; i++) {
		COUNT(0, "getpid", syscall(SYS_getpid));
		COUNT(1, "getcwd", if (!getcwd(cwd, sizeof cwd)) die("getcwd"));
		COUNT(2, "stat", if (stat("/bin", &st)) die("stat /bin"));
		COUNT(3, "sched_yield", sched_yield());
	}
}

static void w_sleep(long n)
{
	struct timespec ts = {0, 200000};
	for (long i = 0; i < n; i++)
		COUNT(0, "clock_nanosleep", clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL));
}

static int usage(void)
{
	fprintf(stderr, "usage: hpm-truth MODE N [SIZE] [-c] [-m]\n"
			"  MODE: dup getppid pipe unix udp tcp fork mix sleep (udp/tcp take SIZE)\n"
			"  -c: count each call's instructions (perf_event_open) and print them\n"
			"  -m: misalign the user buffers by one byte (udp/tcp)\n"
			"example: hpm-truth udp 200 6500 -c\n");
	return 2;
}

int main(int argc, char **argv)
{
	int count = 0, misalign = 0, npos = 0;
	char *pos[3];
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-c"))
			count = 1;
		else if (!strcmp(argv[i], "-m"))
			misalign = 1;
		else if (npos < 3)
			pos[npos++] = argv[i];
		else
			return usage();
	}
	if (npos < 2)
		return usage();
	char *end;
	long n = strtol(pos[1], &end, 0);
	if (*end || n < 0) {
		fprintf(stderr, "hpm-truth: N must be a non-negative integer, got '%s'\n", pos[1]);
		return 2;
	}
	size_t size = npos > 2 ? strtoul(pos[2], NULL, 0) : 6500;
	if (count)
		open_counter();
	const char *m = pos[0];
	if (!strcmp(m, "dup"))
		w_dup(n);
	else if (!strcmp(m, "getppid"))
		w_getppid(n);
	else if (!strcmp(m, "pipe"))
		w_pipe(n);
	else if (!strcmp(m, "unix"))
		w_unix(n);
	else if (!strcmp(m, "udp"))
		w_udp(n, size, misalign);
	else if (!strcmp(m, "tcp"))
		w_tcp(n, size, misalign);
	else if (!strcmp(m, "fork"))
		w_fork(n);
	else if (!strcmp(m, "mix"))
		w_mix(n);
	else if (!strcmp(m, "sleep"))
		w_sleep(n);
	else {
		fprintf(stderr, "hpm-truth: unknown mode '%s'\n", m);
		return usage();
	}
	report();
	return 0;
}
