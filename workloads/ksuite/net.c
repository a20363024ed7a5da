/* SPDX-License-Identifier: MIT */
/* Socket workloads: AF_UNIX streams between two processes (hackbench's default mode), UDP
 * datagrams and a TCP stream over loopback (seed 004's iperf3 case). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ksuite.h"

#define UNIX_MSG 100      /* hackbench's default message size */
#define UDP_MSG 6500      /* iperf3 -u --length 6500 (seed 004) */
#define TCP_CHUNK 16384

static void fill(unsigned char *b, size_t n, size_t base)
{
	for (size_t i = 0; i < n; i++)
		b[i] = ks_pattern(base + i);
}

static int check(const unsigned char *b, size_t n, size_t base)
{
	for (size_t i = 0; i < n; i++)
		if (b[i] != ks_pattern(base + i))
			return -1;
	return 0;
}

/*
 * Offset of the user buffers of udp-loopback and tcp-loopback from a 64-byte boundary:
 * $KSUITE_NET_MISALIGN (0..63) if set, else the workload's default (udp 1, tcp 0). It
 * selects which paths of the kernel's copy routines run (riscv's __asm_copy_*_user
 * shift-copies when user and kernel addresses differ mod 8), for seed 004's
 * aligned/misaligned comparison (docs/network.md), without new workload names.
 * Returns -1 after a ks_fail() line for a bad value.
 */
static int net_misalign(int def)
{
	const char *s = getenv("KSUITE_NET_MISALIGN");
	if (!s || !*s)
		return def;
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || *end || v < 0 || v > 63) {
		ks_fail("KSUITE_NET_MISALIGN='%s': give a byte offset 0..63", s);
		return -1;
	}
	return (int)v;
}

/* The bulk workloads fill their buffer once and check a received one fully every 64th
 * time, its ends otherwise: the kernel's copies, not the pattern loop, fill the profile. */
static int check_some(const unsigned char *b, size_t n, long i)
{
	if (i % 64 == 0)
		return check(b, n, 0);
	return check(b, 64, 0) || check(b + n - 64, 64, n - 64);
}

/* One writer process sends n messages over a socketpair, the parent reads and checks them:
 * unix_stream_sendmsg / unix_stream_read_generic, skb allocation and copies, wake-ups. */
int ks_unix_stream(long n)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return ks_fail_errno("socketpair(AF_UNIX, SOCK_STREAM)");
	pid_t pid = fork();
	if (pid < 0)
		return ks_fail_errno("fork");
	if (pid == 0) {
		unsigned char msg[UNIX_MSG];
		close(sv[0]);
		for (long i = 0; i < n; i++) {
			fill(msg, sizeof msg, (size_t)i);
			if (ks_write_all(sv[1], msg, sizeof msg))
				_exit(3);
		}
		_exit(0);
	}
	close(sv[1]);
	unsigned char msg[UNIX_MSG];
	int rc = 0;
	for (long i = 0; i < n && !rc; i++) {
		int e = ks_read_all(sv[0], msg, sizeof msg);
		if (e)
			rc = ks_fail("message %ld: %s", i, e == -EPIPE ? "writer closed early" : strerror(-e));
		else if (check(msg, sizeof msg, (size_t)i))
			rc = ks_fail("message %ld: wrong bytes", i);
	}
	close(sv[0]);
	int r = ks_reap(pid, 0, "writer");
	return rc ? rc : r;
}

/* sendto + recvfrom of 6,500-byte datagrams on 127.0.0.1 in one process (IP fragmentation
 * is not involved: loopback's MTU is 64 KiB). Buffers are misaligned by one byte by default,
 * as application buffers often are ($KSUITE_NET_MISALIGN changes it). */
int ks_udp_loopback(long n)
{
	int off = net_misalign(1);
	if (off < 0)
		return 1;
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof a;
	int rx = socket(AF_INET, SOCK_DGRAM, 0), tx = socket(AF_INET, SOCK_DGRAM, 0);
	if (rx < 0 || tx < 0)
		return ks_fail_errno("socket(AF_INET, SOCK_DGRAM)");
	if (bind(rx, (struct sockaddr *)&a, sizeof a) || getsockname(rx, (struct sockaddr *)&a, &len))
		return ks_fail_errno("bind 127.0.0.1");
	/* 64-byte aligned blocks, so the offset alone decides the buffers' alignment */
	unsigned char *out = aligned_alloc(64, UDP_MSG + 128), *in = aligned_alloc(64, UDP_MSG + 128);
	if (!out || !in)
		return ks_fail("out of memory");
	int rc = 0;
	fill(out + off, UDP_MSG, 0);
	for (long i = 0; i < n && !rc; i++) {
		in[off] = in[off + UDP_MSG - 1] = 0;
		if (sendto(tx, out + off, UDP_MSG, 0, (struct sockaddr *)&a, sizeof a) != UDP_MSG)
			rc = ks_fail_errno("sendto %ld", i);
		else if (recvfrom(rx, in + off, UDP_MSG, 0, NULL, NULL) != UDP_MSG)
			rc = ks_fail_errno("recvfrom %ld", i);
		else if (check_some(in + off, UDP_MSG, i))
			rc = ks_fail("datagram %ld: wrong bytes", i);
	}
	free(out);
	free(in);
	close(rx);
	close(tx);
	return rc;
}

/* A child streams n chunks of 16 KiB over a loopback TCP connection, the parent reads and
 * checks them: tcp_sendmsg / tcp_recvmsg, the loopback device, ACK processing. Both user
 * buffers are aligned by default ($KSUITE_NET_MISALIGN offsets them). */
int ks_tcp_loopback(long n)
{
	int off = net_misalign(0);
	if (off < 0)
		return 1;
	static _Alignas(64) unsigned char buf[TCP_CHUNK + 64];
	unsigned char *chunk = buf + off;
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof a;
	int l = socket(AF_INET, SOCK_STREAM, 0);
	if (l < 0)
		return ks_fail_errno("socket(AF_INET, SOCK_STREAM)");
	if (bind(l, (struct sockaddr *)&a, sizeof a) || listen(l, 1) ||
	    getsockname(l, (struct sockaddr *)&a, &len))
		return ks_fail_errno("bind/listen 127.0.0.1");
	pid_t pid = fork();
	if (pid < 0)
		return ks_fail_errno("fork");
	if (pid == 0) {
		/* the child's copy of buf (fork) is its send buffer */
		int c = socket(AF_INET, SOCK_STREAM, 0);
		if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof a))
			_exit(3);
		fill(chunk, TCP_CHUNK, 0);
		for (long i = 0; i < n; i++)
			if (ks_write_all(c, chunk, TCP_CHUNK))
				_exit(4);
		_exit(0);
	}
	int s = accept(l, NULL, NULL);
	if (s < 0)
		return ks_fail_errno("accept");
	int rc = 0;
	for (long i = 0; i < n && !rc; i++) {
		int e = ks_read_all(s, chunk, TCP_CHUNK);
		if (e)
			rc = ks_fail("chunk %ld: %s", i, e == -EPIPE ? "sender closed early" : strerror(-e));
		else if (check_some(chunk, TCP_CHUNK, i))
			rc = ks_fail("chunk %ld: wrong bytes", i);
		chunk[0] = chunk[TCP_CHUNK - 1] = 0;
	}
	close(s);
	close(l);
	int r = ks_reap(pid, 0, "sender");
	return rc ? rc : r;
}
