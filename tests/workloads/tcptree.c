// SPDX-License-Identifier: GPL-2.0
/*
 * tcptree READYFILE GOFILE: a process tree whose members talk over TCP on
 * the loopback, for the tree tests. The root listens on 127.0.0.1 and on
 * [::1] (IPV6_V6ONLY), both on ephemeral ports, then forks child A, which
 * connects over IPv4, and child B, which connects over IPv6; the root
 * accepts both. Each connection carries a stream of TOTAL bytes each way,
 * byte i of stream s being (i * 131 + s * 7 + (i >> 9)) & 0xff. Before any
 * data, A sets TCP_NODELAY, SO_KEEPALIVE and TCP_KEEPIDLE 77 on its
 * socket, B sets SO_SNDBUF and SO_RCVBUF to 65536, and the root makes its
 * socket of A's connection O_NONBLOCK.
 *
 * First, every reader takes the first FIRST bytes of its stream and stops,
 * and every writer writes until its send queue is full (more than FIRST
 * bytes written, then writes refused for SETTLE_MS; or, where the send
 * buffer is larger, until MAX1 written and SETTLE_MS passed): in all four
 * directions, bytes wait in the receiver's queue and in the sender's. On
 * the loopback, that is some 2.4 MB in the sender's queue, but 100 to 160
 * KB in B's, which its SO_SNDBUF bounds, and 28 to 95 KB in every
 * receiver's (what its window let in). Then the root
 * creates READYFILE, and all three wait for GOFILE (still topping up their
 * send queues), 120 s at most (exit 99). The checkpoint happens there.
 * Then every reader reads the rest, checking each byte, and expects the
 * end of the stream exactly at TOTAL (nothing lost, nothing twice, nothing
 * out of order), every writer writes the rest and shuts its side down.
 * Each process then checks that the options it set are still set, and A
 * connects to the root's IPv4 listening socket anew (after a restart it
 * must listen again): it sends "late\n", the root answers "ok\n".
 *
 * The root reaps A and B, and given both exited 0, prints one line and
 * exits 3; any failure is said on standard error, exit 1 (a process that
 * is still there after 180 s says so and exits 98). Only the root writes
 * to standard output, once: a run restarted from any point prints the
 * same line as one never interrupted.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TOTAL		(3UL << 20)	/* bytes per stream */
#define FIRST		100000UL	/* bytes read before the checkpoint */
#define MAX1		(TOTAL - (512UL << 10))	/* bytes written before it, at most */
#define SETTLE_MS	250		/* writes refused that long: full */
#define CHUNK		65536
#define KEEPIDLE	77
#define BUFSZ		65536

struct conn {
	int fd;
	int out, in;		/* the streams written and read */
	unsigned long sent, got;
	long long idle;		/* since when it writes no more, or -1 */
	int shut, eof;
};

static const char *role = "root";
static const char *const names[] = { "root->A", "A->root", "root->B", "B->root" };
static struct sockaddr_in addr4;
static struct sockaddr_in6 addr6;

static void __attribute__((noreturn, format(printf, 1, 2))) die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "tcptree: %s: ", role);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static char alarm_msg[64];

static void on_alarm(int sig)
{
	(void)sig;
	if (write(2, alarm_msg, strlen(alarm_msg)) < 0)
		_exit(98);
	_exit(98);
}

/* 180 s for the process at most: then it says so and exits 98. */
static void bound(void)
{
	snprintf(alarm_msg, sizeof(alarm_msg),
		 "tcptree: %s: still running after 180 s\n", role);
	signal(SIGALRM, on_alarm);
	alarm(180);
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static unsigned char gen(int s, unsigned long i)
{
	return (i * 131 + s * 7 + (i >> 9)) & 0xff;
}

/* As much of @c's stream as the socket takes now: 0 once it takes none. */
static long put(struct conn *c)
{
	unsigned char buf[CHUNK];
	unsigned long i, n = TOTAL - c->sent;
	ssize_t w;

	if (n > CHUNK)
		n = CHUNK;
	for (i = 0; i < n; i++)
		buf[i] = gen(c->out, c->sent + i);
	w = send(c->fd, buf, n, MSG_DONTWAIT | MSG_NOSIGNAL);
	if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
		if (c->idle < 0)
			c->idle = now_ms();
		return 0;
	}
	if (w <= 0)
		die("%s: write at byte %lu: %s", names[c->out], c->sent,
		    w ? strerror(errno) : "wrote nothing");
	c->idle = c->sent + w < MAX1 ? -1 : now_ms();
	c->sent += w;
	if (c->sent == TOTAL && !c->shut) {
		if (shutdown(c->fd, SHUT_WR))
			die("%s: shutdown: %s", names[c->out], strerror(errno));
		c->shut = 1;
	}
	return w;
}

/* What @c's socket holds now, up to @upto bytes of the stream, checked. */
static void take(struct conn *c, unsigned long upto)
{
	unsigned char buf[CHUNK];
	unsigned long i, n = upto - c->got;
	ssize_t r;

	if (n > CHUNK)
		n = CHUNK;
	r = recv(c->fd, buf, n, MSG_DONTWAIT);
	if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return;
	if (r < 0)
		die("%s: read at byte %lu: %s", names[c->in], c->got, strerror(errno));
	if (!r) {
		if (c->got != TOTAL)
			die("%s: end of stream at byte %lu, not %lu: bytes lost",
			    names[c->in], c->got, TOTAL);
		c->eof = 1;
		return;
	}
	if (c->got + r > TOTAL)
		die("%s: %lu bytes past the end of the stream: bytes duplicated",
		    names[c->in], c->got + r - TOTAL);
	for (i = 0; i < (unsigned long)r; i++)
		if (buf[i] != gen(c->in, c->got + i))
			die("%s: byte %lu is %#x, not %#x: first mismatch",
			    names[c->in], c->got + i, buf[i], gen(c->in, c->got + i));
	c->got += r;
}

/*
 * Until GOFILE exists, @c's send queues kept full; 120 s at most, counted
 * in rounds of 50 ms, not by the clock: the time a checkpoint and restart
 * take between two rounds does not count.
 */
static void hold(struct conn *c, int n, const char *gofile)
{
	struct pollfd p[2];
	int i, rounds = 0;

	while (access(gofile, F_OK)) {
		if (++rounds > 2400) {
			fprintf(stderr, "tcptree: %s: no %s after 120 s\n", role, gofile);
			exit(99);
		}
		for (i = 0; i < n; i++)
			p[i] = (struct pollfd){ .fd = c[i].sent < MAX1 ? c[i].fd : -1,
						.events = POLLOUT };
		if (poll(p, n, 50) < 0 && errno != EINTR)
			die("poll: %s", strerror(errno));
		for (i = 0; i < n; i++)
			if (p[i].revents & POLLOUT)
				while (c[i].sent < MAX1 && put(&c[i]) > 0)
					;
	}
}

/*
 * A writer is full once it wrote more than its reader takes first, and
 * since SETTLE_MS its writes are refused, or it wrote MAX1 bytes (time for
 * them to reach the receiver's queue).
 */
static int full(const struct conn *c)
{
	return c->sent > FIRST && c->idle >= 0 && now_ms() - c->idle >= SETTLE_MS;
}

/* Readers take FIRST bytes, writers fill their send queues. */
static void phase1(struct conn *c, int n)
{
	struct pollfd p[2];
	int i, done;

	for (;;) {
		done = 0;
		for (i = 0; i < n; i++) {
			p[i] = (struct pollfd){ .fd = c[i].fd };
			if (c[i].got < FIRST)
				p[i].events |= POLLIN;
			if (c[i].sent < MAX1 && !full(&c[i]))
				p[i].events |= POLLOUT;
			done += c[i].got >= FIRST && full(&c[i]);
		}
		if (done == n)
			return;
		if (poll(p, n, 50) < 0 && errno != EINTR)
			die("poll: %s", strerror(errno));
		for (i = 0; i < n; i++) {
			if (c[i].got < FIRST && (p[i].revents & (POLLIN | POLLERR | POLLHUP)))
				take(&c[i], FIRST);
			/* Also when poll says nothing: time tells it full. */
			while (!full(&c[i]) && c[i].sent < MAX1 && put(&c[i]) > 0)
				;
		}
	}
}

/* Every stream to its end, both ways at once. */
static void phase2(struct conn *c, int n)
{
	struct pollfd p[2];
	int i, done;

	for (;;) {
		done = 0;
		for (i = 0; i < n; i++) {
			p[i] = (struct pollfd){ .fd = c[i].fd };
			if (!c[i].eof)
				p[i].events |= POLLIN;
			if (c[i].sent < TOTAL)
				p[i].events |= POLLOUT;
			done += !p[i].events;
		}
		if (done == n)
			return;
		if (poll(p, n, 1000) < 0 && errno != EINTR)
			die("poll: %s", strerror(errno));
		for (i = 0; i < n; i++) {
			if (!c[i].eof && (p[i].revents & (POLLIN | POLLERR | POLLHUP)))
				take(&c[i], TOTAL + 1);
			if (c[i].sent < TOTAL && (p[i].revents & (POLLOUT | POLLERR)))
				put(&c[i]);
		}
	}
}

static int getint(int fd, int level, int opt, const char *what)
{
	socklen_t len = sizeof(int);
	int v;

	if (getsockopt(fd, level, opt, &v, &len))
		die("getsockopt %s: %s", what, strerror(errno));
	return v;
}

static void setint(int fd, int level, int opt, int v, const char *what)
{
	if (setsockopt(fd, level, opt, &v, sizeof(v)))
		die("setsockopt %s: %s", what, strerror(errno));
}

static void expect(int fd, int level, int opt, int v, const char *what)
{
	int now = getint(fd, level, opt, what);

	if (now != v)
		die("%s is %d after the run, was %d", what, now, v);
}

static void conn_init(struct conn *c, int fd, int out, int in)
{
	*c = (struct conn){ .fd = fd, .out = out, .in = in, .idle = -1 };
}

/* @n bytes, all of them, or die naming @what. */
static void read_all(int fd, char *buf, size_t n, const char *what)
{
	size_t got = 0;
	ssize_t r;

	while (got < n) {
		r = read(fd, buf + got, n - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			die("%s: %s", what, r ? strerror(errno) : "end of stream");
		got += r;
	}
}

static void say(int ready)
{
	if (write(ready, "r", 1) != 1)
		die("ready pipe: %s", strerror(errno));
	close(ready);
}

/* The late connection: "late\n" there, "ok\n" back. */
static void late_connection(void)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	char buf[3];

	if (fd < 0 || connect(fd, (struct sockaddr *)&addr4, sizeof(addr4)))
		die("late connection to 127.0.0.1:%u: %s", ntohs(addr4.sin_port),
		    strerror(errno));
	if (send(fd, "late\n", 5, MSG_NOSIGNAL) != 5)
		die("late connection: send: %s", strerror(errno));
	read_all(fd, buf, 3, "late connection's answer");
	if (memcmp(buf, "ok\n", 3))
		die("late connection: answer %.3s, not ok", buf);
	close(fd);
}

static void __attribute__((noreturn)) child_a(int ready, const char *gofile)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int nodelay, keep, idle;
	struct conn c;

	role = "A";
	bound();
	if (fd < 0)
		die("socket: %s", strerror(errno));
	setint(fd, IPPROTO_TCP, TCP_NODELAY, 1, "TCP_NODELAY");
	setint(fd, SOL_SOCKET, SO_KEEPALIVE, 1, "SO_KEEPALIVE");
	setint(fd, IPPROTO_TCP, TCP_KEEPIDLE, KEEPIDLE, "TCP_KEEPIDLE");
	if (connect(fd, (struct sockaddr *)&addr4, sizeof(addr4)))
		die("connect to 127.0.0.1:%u: %s", ntohs(addr4.sin_port), strerror(errno));
	nodelay = getint(fd, IPPROTO_TCP, TCP_NODELAY, "TCP_NODELAY");
	keep = getint(fd, SOL_SOCKET, SO_KEEPALIVE, "SO_KEEPALIVE");
	idle = getint(fd, IPPROTO_TCP, TCP_KEEPIDLE, "TCP_KEEPIDLE");
	if (nodelay != 1 || keep != 1 || idle != KEEPIDLE)
		die("options not set: TCP_NODELAY %d SO_KEEPALIVE %d TCP_KEEPIDLE %d",
		    nodelay, keep, idle);
	conn_init(&c, fd, 1, 0);
	phase1(&c, 1);
	say(ready);
	hold(&c, 1, gofile);
	phase2(&c, 1);
	expect(fd, IPPROTO_TCP, TCP_NODELAY, nodelay, "TCP_NODELAY");
	expect(fd, SOL_SOCKET, SO_KEEPALIVE, keep, "SO_KEEPALIVE");
	expect(fd, IPPROTO_TCP, TCP_KEEPIDLE, idle, "TCP_KEEPIDLE");
	close(fd);
	late_connection();
	exit(0);
}

static void __attribute__((noreturn)) child_b(int ready, const char *gofile)
{
	int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int snd, rcv;
	struct conn c;

	role = "B";
	bound();
	if (fd < 0)
		die("socket: %s", strerror(errno));
	setint(fd, SOL_SOCKET, SO_SNDBUF, BUFSZ, "SO_SNDBUF");
	setint(fd, SOL_SOCKET, SO_RCVBUF, BUFSZ, "SO_RCVBUF");
	if (connect(fd, (struct sockaddr *)&addr6, sizeof(addr6)))
		die("connect to [::1]:%u: %s", ntohs(addr6.sin6_port), strerror(errno));
	snd = getint(fd, SOL_SOCKET, SO_SNDBUF, "SO_SNDBUF");
	rcv = getint(fd, SOL_SOCKET, SO_RCVBUF, "SO_RCVBUF");
	if (snd < BUFSZ || rcv < BUFSZ)
		die("options not set: SO_SNDBUF %d SO_RCVBUF %d", snd, rcv);
	conn_init(&c, fd, 3, 2);
	phase1(&c, 1);
	say(ready);
	hold(&c, 1, gofile);
	phase2(&c, 1);
	expect(fd, SOL_SOCKET, SO_SNDBUF, snd, "SO_SNDBUF");
	expect(fd, SOL_SOCKET, SO_RCVBUF, rcv, "SO_RCVBUF");
	close(fd);
	exit(0);
}

static int listener(int family, struct sockaddr *sa, socklen_t len)
{
	int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		die("socket: %s", strerror(errno));
	if (family == AF_INET6)
		setint(fd, IPPROTO_IPV6, IPV6_V6ONLY, 1, "IPV6_V6ONLY");
	if (bind(fd, sa, len) || listen(fd, 8) || getsockname(fd, sa, &len))
		die("listening on %s: %s", family == AF_INET ? "127.0.0.1" : "[::1]",
		    strerror(errno));
	return fd;
}

static int accept_or_die(int l, const char *what)
{
	int fd;

	do
		fd = accept4(l, NULL, NULL, SOCK_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	if (fd < 0)
		die("accept %s: %s", what, strerror(errno));
	return fd;
}

/* The root's side of the late connection, which A makes before it ends. */
static void answer_late(int l4, pid_t a)
{
	struct pollfd p = { .fd = l4, .events = POLLIN };
	char buf[5];
	int fd, st;

	while (poll(&p, 1, 100) != 1) {
		if (waitpid(a, &st, WNOHANG) == a)
			die("child A ended with wait status %#x before its late connection", st);
	}
	fd = accept_or_die(l4, "the late connection");

	read_all(fd, buf, 5, "late connection");
	if (memcmp(buf, "late\n", 5))
		die("late connection: got %.5s, not late", buf);
	if (send(fd, "ok\n", 3, MSG_NOSIGNAL) != 3)
		die("late connection: send: %s", strerror(errno));
	close(fd);
}

static void reap(pid_t pid, const char *who)
{
	int st;

	if (waitpid(pid, &st, 0) != pid)
		die("waitpid %s: %s", who, strerror(errno));
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		die("child %s ended with wait status %#x", who, st);
}

int main(int argc, char **argv)
{
	int l4, l6, p[2], fl, fd;
	struct conn c[2];
	const char *gofile;
	pid_t a, b;
	char r[2];

	if (argc != 3) {
		fprintf(stderr, "usage: tcptree READYFILE GOFILE\n");
		return 2;
	}
	gofile = argv[2];
	bound();
	addr4 = (struct sockaddr_in){ .sin_family = AF_INET,
				      .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	addr6 = (struct sockaddr_in6){ .sin6_family = AF_INET6,
				       .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	l4 = listener(AF_INET, (struct sockaddr *)&addr4, sizeof(addr4));
	l6 = listener(AF_INET6, (struct sockaddr *)&addr6, sizeof(addr6));
	if (pipe2(p, O_CLOEXEC))
		die("pipe: %s", strerror(errno));
	fflush(NULL);
	a = fork();
	if (a < 0)
		die("fork: %s", strerror(errno));
	if (!a) {
		close(l4);
		close(l6);
		close(p[0]);
		child_a(p[1], gofile);
	}
	b = fork();
	if (b < 0)
		die("fork: %s", strerror(errno));
	if (!b) {
		close(l4);
		close(l6);
		close(p[0]);
		child_b(p[1], gofile);
	}
	close(p[1]);
	conn_init(&c[0], accept_or_die(l4, "A"), 0, 1);
	conn_init(&c[1], accept_or_die(l6, "B"), 2, 3);
	fd = c[0].fd;
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK))
		die("O_NONBLOCK: %s", strerror(errno));
	phase1(c, 2);
	/* Both children are full too; the pipe is gone again. */
	read_all(p[0], r, 2, "children's readiness");
	close(p[0]);
	fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || close(fd))
		die("%s: %s", argv[1], strerror(errno));
	hold(c, 2, gofile);
	phase2(c, 2);
	fl = fcntl(c[0].fd, F_GETFL);
	if (fl < 0 || !(fl & O_NONBLOCK))
		die("A's socket is no longer O_NONBLOCK (flags %#x)", fl);
	close(c[0].fd);
	close(c[1].fd);
	answer_late(l4, a);
	reap(a, "A");
	reap(b, "B");
	printf("tcptree: 2 connections, 4 streams of %lu bytes verified, late connection ok\n",
	       TOTAL);
	return 3;
}
