// SPDX-License-Identifier: GPL-2.0
/*
 * tcphalf READYFILE GOFILE: half-closed TCP connections inside a process
 * tree, for tree_tcp.sh. The root listens on 127.0.0.1 and on [::1]
 * (IPV6_V6ONLY); child A connects to it twice over IPv4 (connections A
 * and C), child B once over IPv6 (connection B). Byte i of stream s is
 * (i * 131 + s * 7 + (i >> 9)) & 0xff. Before the checkpoint:
 *
 *   A: A writes A_OUT bytes of stream 0 and shuts down writing; the root
 *      reads none of them but waits for the FIN (POLLRDHUP), and writes
 *      R_FIRST bytes of stream 1, which A reads only once GOFILE exists.
 *      A's end is in FIN_WAIT2 with bytes to read, the root's in
 *      CLOSE_WAIT with bytes and the FIN unread.
 *   B: B makes its send buffer large (SO_SNDBUFFORCE), writes B_OUT bytes
 *      of stream 2 at once and shuts down writing; the root reads none, so
 *      most of them and the FIN wait unsent in B's queue: FIN_WAIT1.
 *   C: A writes C_OUT bytes of stream 4 and shuts down writing; the root
 *      reads them and the end of the stream: CLOSE_WAIT, everything read.
 *
 * Then the root creates READYFILE and waits for GOFILE (120 s at most,
 * counted in rounds, exit 99). The checkpoint happens there. Then the
 * root reads A's stream and its end (exactly A_OUT bytes), C's end again,
 * and closes C (A reads C's end: a FIN into a FIN_WAIT2 end), reads B's
 * stream and its end (exactly B_OUT bytes), writes the rest of stream 1
 * to A and stream 3 (R_B bytes) to B, each followed by its end; A and B
 * read them to their ends. No byte lost, none twice, none out of order,
 * every end of stream where it was.
 *
 * The root reaps A and B and, given both exited 0, prints one line and
 * exits 3; a failure is said on standard error, exit 1; a process still
 * there after 180 s says so and exits 98. A run restarted from any point
 * prints the same line as one never interrupted.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define A_OUT		10000UL		/* A -> root, then A's FIN */
#define R_FIRST		5000UL		/* root -> A before the checkpoint */
#define R_A		12000UL		/* root -> A in all */
#define B_OUT		400000UL	/* B -> root, then B's FIN */
#define R_B		7000UL		/* root -> B, after the checkpoint */
#define C_OUT		100UL		/* A -> root on C, read to its end */
#define B_SNDBUF	(2 << 20)	/* SO_SNDBUFFORCE: B_OUT fits */

static const char *role = "root";

static void __attribute__((noreturn, format(printf, 1, 2))) die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "tcphalf: %s: ", role);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void on_alarm(int sig)
{
	static const char msg[] = "tcphalf: still running after 180 s\n";

	(void)sig;
	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(98);
	_exit(98);
}

static unsigned char gen(int s, unsigned long i)
{
	return (i * 131 + s * 7 + (i >> 9)) & 0xff;
}

/* Bytes [@from, @to) of stream @s written to @fd, all of them. */
static void put(int fd, int s, unsigned long from, unsigned long to)
{
	unsigned char buf[65536];
	unsigned long i, n;
	ssize_t w;

	while (from < to) {
		n = to - from < sizeof(buf) ? to - from : sizeof(buf);
		for (i = 0; i < n; i++)
			buf[i] = gen(s, from + i);
		w = send(fd, buf, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			die("stream %d: write at byte %lu: %s", s, from,
			    w ? strerror(errno) : "wrote nothing");
		from += w;
	}
}

/* Stream @s read from @fd, from byte @from to its end exactly at @total. */
static void take(int fd, int s, unsigned long from, unsigned long total)
{
	unsigned char buf[65536];
	unsigned long i;
	ssize_t r;

	for (;;) {
		r = recv(fd, buf, sizeof(buf), 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			die("stream %d: read at byte %lu: %s", s, from, strerror(errno));
		if (!r)
			break;
		if (from + r > total)
			die("stream %d: %lu bytes past its end: bytes duplicated",
			    s, from + r - total);
		for (i = 0; i < (unsigned long)r; i++)
			if (buf[i] != gen(s, from + i))
				die("stream %d: byte %lu is %#x, not %#x: first mismatch",
				    s, from + i, buf[i], gen(s, from + i));
		from += r;
	}
	if (from != total)
		die("stream %d: end of stream at byte %lu, not %lu: bytes lost",
		    s, from, total);
}

static int dial(const struct sockaddr *a, socklen_t len)
{
	int fd = socket(a->sa_family, SOCK_STREAM, 0);

	if (fd < 0 || connect(fd, a, len))
		die("connect: %s", strerror(errno));
	return fd;
}

static void hold(const char *gofile);

static void child_a(const struct sockaddr_in *a4, int ready, const char *gofile)
{
	int a, c;

	role = "A";
	a = dial((const struct sockaddr *)a4, sizeof(*a4));
	c = dial((const struct sockaddr *)a4, sizeof(*a4));
	put(a, 0, 0, A_OUT);
	put(c, 4, 0, C_OUT);
	if (shutdown(a, SHUT_WR) || shutdown(c, SHUT_WR))
		die("shutdown: %s", strerror(errno));
	if (write(ready, "a", 1) != 1)
		die("ready: %s", strerror(errno));
	close(ready);
	hold(gofile);	/* R_FIRST bytes wait in its queue */
	take(a, 1, 0, R_A);
	take(c, 5, 0, 0);	/* the root's close: its end at once */
	exit(0);
}

static void child_b(const struct sockaddr_in6 *a6, int ready)
{
	int size = B_SNDBUF, b;

	role = "B";
	b = socket(AF_INET6, SOCK_STREAM, 0);
	if (b < 0 || setsockopt(b, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof(size)) ||
	    connect(b, (const struct sockaddr *)a6, sizeof(*a6)))
		die("connect: %s", strerror(errno));
	put(b, 2, 0, B_OUT);
	if (shutdown(b, SHUT_WR))
		die("shutdown: %s", strerror(errno));
	if (write(ready, "b", 1) != 1)
		die("ready: %s", strerror(errno));
	close(ready);
	take(b, 3, 0, R_B);
	exit(0);
}

static int listener(int family, struct sockaddr *a, socklen_t len)
{
	int one = 1, fd = socket(family, SOCK_STREAM, 0);

	if (fd < 0 || (family == AF_INET6 &&
		       setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one))) ||
	    bind(fd, a, len) || listen(fd, 4) || getsockname(fd, a, &len))
		die("listen: %s", strerror(errno));
	return fd;
}

/* Until GOFILE exists: 120 s at most, in rounds of 50 ms. */
static void hold(const char *gofile)
{
	int rounds = 0;

	while (access(gofile, F_OK)) {
		if (++rounds > 2400) {
			fprintf(stderr, "tcphalf: %s: no %s after 120 s\n", role, gofile);
			exit(99);
		}
		usleep(50000);
	}
}

static int reap(pid_t pid, const char *who)
{
	int st;

	if (waitpid(pid, &st, 0) != pid)
		die("waitpid %s: %s", who, strerror(errno));
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "tcphalf: %s ended with status %#x\n", who, st);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_in a4 = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6,
				   .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	int l4, l6, a, b, c, p[2], bad;
	ssize_t n, r;
	struct pollfd rdhup;
	pid_t pa, pb;
	char ch[2];
	FILE *f;

	if (argc != 3) {
		fprintf(stderr, "usage: tcphalf READYFILE GOFILE\n");
		return 2;
	}
	signal(SIGALRM, on_alarm);
	alarm(180);
	l4 = listener(AF_INET, (struct sockaddr *)&a4, sizeof(a4));
	l6 = listener(AF_INET6, (struct sockaddr *)&a6, sizeof(a6));
	if (pipe(p))
		die("pipe: %s", strerror(errno));
	pa = fork();
	if (!pa)
		child_a(&a4, p[1], argv[2]);
	a = accept(l4, NULL, NULL);
	c = accept(l4, NULL, NULL);
	pb = fork();
	if (!pb)
		child_b(&a6, p[1]);
	b = accept(l6, NULL, NULL);
	if (pa < 0 || pb < 0 || a < 0 || b < 0 || c < 0)
		die("fork or accept: %s", strerror(errno));
	close(p[1]);
	/* One byte from each child once it shut down writing. */
	for (n = 0; n < 2; n += r) {
		r = read(p[0], ch, sizeof(ch));
		if (r <= 0 && !(r < 0 && errno == EINTR))
			die("the children did not get ready");
		r = r > 0 ? r : 0;
	}
	close(p[0]);

	put(a, 1, 0, R_FIRST);
	take(c, 4, 0, C_OUT);
	rdhup = (struct pollfd){ .fd = a, .events = POLLRDHUP };
	if (poll(&rdhup, 1, 10000) != 1)
		die("A's end of stream did not come");
	f = fopen(argv[1], "w");
	if (!f || fclose(f))
		die("%s: %s", argv[1], strerror(errno));
	hold(argv[2]);

	take(a, 0, 0, A_OUT);
	take(c, 4, C_OUT, C_OUT);	/* read to its end before: again */
	close(c);
	take(b, 2, 0, B_OUT);
	put(a, 1, R_FIRST, R_A);
	put(b, 3, 0, R_B);
	if (shutdown(a, SHUT_WR) || shutdown(b, SHUT_WR))
		die("shutdown: %s", strerror(errno));
	bad = reap(pa, "A") | reap(pb, "B");
	if (bad)
		return 1;
	printf("tcphalf: 3 half-closed connections, 5 streams and their ends verified\n");
	return 3;
}
