// SPDX-License-Identifier: GPL-2.0
/*
 * eventfd, signalfd and epoll descriptors survive a checkpoint and restart:
 * an eventfd keeps its count and semaphore mode, a signalfd its mask (and
 * the signal pending for it), an epoll instance its interest list with
 * events and data. An epoll watching a descriptor since closed is refused,
 * named. Descriptors made by dup() share one open file again (position,
 * status flags, the eventfd an epoll watches through either of them), each
 * keeping its own close-on-exec flag. UNIX sockets: pairs keep their
 * bytes and messages, listening sockets listen by name again, sockets
 * with names (datagram servers and clients, one connected outside the
 * process, one whose server went away) are bound and connected by name.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <netinet/in.h>
#include <stddef.h>

#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>

#include "kselftest_harness.h"
#include "ckpt_test.h"


/*
 * fd 3: eventfd, count 5; fd 4: eventfd, semaphore, count 3, non-blocking;
 * fd 5: signalfd for SIGUSR1 (pending); fd 6: epoll watching 3 (data 33)
 * and 5 (data 55), and 4 once-only (already fired, so disabled).
 */
static void anon_target(void)
{
	struct epoll_event ev = { .events = EPOLLIN };
	char c, line[256];
	sigset_t mask;
	uint64_t v;
	int n, i;

	sigemptyset(&mask);
	sigaddset(&mask, SIGUSR1);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	if (eventfd(5, 0) != 3 || eventfd(3, EFD_SEMAPHORE | EFD_NONBLOCK) != 4 ||
	    signalfd(-1, &mask, 0) != 5 || epoll_create1(0) != 6)
		_exit(9);
	ev.data.u64 = 33;
	epoll_ctl(6, EPOLL_CTL_ADD, 3, &ev);
	ev.data.u64 = 55;
	epoll_ctl(6, EPOLL_CTL_ADD, 5, &ev);
	ev.events = EPOLLIN | EPOLLONESHOT;
	ev.data.u64 = 44;
	epoll_ctl(6, EPOLL_CTL_ADD, 4, &ev);
	kill(getpid(), SIGUSR1);
	for (;;) {
		struct epoll_event got[8];
		struct signalfd_siginfo ssi;
		unsigned long long seen = 0;

		if (read(0, &c, 1) != 1)
			_exit(3);
		if (c == 'q')
			_exit(0);
		if (c == 'e') {		/* fire the once-only item */
			n = epoll_wait(6, got, 8, 0);
			target_say(n == 3 ? "fired" : "not fired");
			continue;
		}
		if (c != 'p')
			continue;
		/* What epoll reports now, by data, summed as a set. */
		n = epoll_wait(6, got, 8, 0);
		for (i = 0; i < n; i++)
			seen |= 1ULL << (got[i].data.u64 % 64);
		line[0] = '\0';
		snprintf(line, sizeof(line), "epoll %d:%llx", n, seen);
		/* The semaphore hands out ones; the plain one its whole count. */
		if (read(4, &v, 8) != 8)
			_exit(10);
		snprintf(line + strlen(line), sizeof(line) - strlen(line), " sem %llu",
			 (unsigned long long)v);
		if (read(3, &v, 8) != 8)
			_exit(10);
		snprintf(line + strlen(line), sizeof(line) - strlen(line), " plain %llu",
			 (unsigned long long)v);
		if (read(5, &ssi, sizeof(ssi)) != sizeof(ssi))
			_exit(10);
		snprintf(line + strlen(line), sizeof(line) - strlen(line), " sig %u",
			 ssi.ssi_signo);
		/* Left: sem 2 (non-blocking), plain 0; give them back. */
		v = 1;
		if (write(4, &v, 8) != 8)
			_exit(10);
		v = 5;
		if (write(3, &v, 8) != 8)
			_exit(10);
		kill(getpid(), SIGUSR1);
		n = fcntl(4, F_GETFL) & O_NONBLOCK;
		snprintf(line + strlen(line), sizeof(line) - strlen(line), " nb %d",
			 !!n);
		target_say("%s", line);
	}
}

/* fd 4: epoll watching fd 3, which is then closed (the item stays). */
static void stale_epoll_target(void)
{
	struct epoll_event ev = { .events = EPOLLIN };
	char c;
	int fd = eventfd(0, 0), dup;

	if (fd != 3 || epoll_create1(0) != 4)
		_exit(9);
	dup = fcntl(3, F_DUPFD, 10);	/* keeps the file open */
	epoll_ctl(4, EPOLL_CTL_ADD, 3, &ev);
	close(3);
	(void)dup;
	while (read(0, &c, 1) == 1 && c != 'q')
		target_say("set");
	_exit(0);
}

/*
 * fd 7: read end (non-blocking) of a pipe holding "hello world", also at
 * fd 9; fd 8 its write end. fd 10: read end of a pipe holding "bye" whose
 * write end is closed (EOF after the bytes).
 */
static void pipe_probe(void)
{
	char buf[64], line[256];
	ssize_t n;

	n = read(7, buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	snprintf(line, sizeof(line), "7:%s", buf);
	n = read(7, buf, 1);
	snprintf(line + strlen(line), sizeof(line) - strlen(line),
		 " again:%zd/%d", n, n < 0 && errno == EAGAIN);
	if (write(8, "x", 1) != 1 || read(9, buf, 1) != 1)
		_exit(10);
	snprintf(line + strlen(line), sizeof(line) - strlen(line), " 9:%c", buf[0]);
	n = read(10, buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	snprintf(line + strlen(line), sizeof(line) - strlen(line), " 10:%s", buf);
	n = read(10, buf, 1);
	snprintf(line + strlen(line), sizeof(line) - strlen(line), " eof:%zd", n);
	target_say("%s", line);
}

static void pipe_target(void)
{
	int p[2], q[2];

	if (pipe2(p, O_NONBLOCK) || dup2(p[0], 7) != 7 || dup2(p[1], 8) != 8 ||
	    dup2(7, 9) != 9 || pipe(q) || dup2(q[0], 10) != 10)
		_exit(9);
	close(p[0]);
	close(p[1]);
	fcntl(8, F_SETFL, 0);	/* only the read end is non-blocking */
	if (write(8, "hello world", 11) != 11 || write(q[1], "bye", 3) != 3)
		_exit(9);
	close(q[0]);
	close(q[1]);
	target_serve(pipe_probe);
}

/* Appends " NAME:" and each message queued on @fd, then ":" (non-blocking). */
static void messages(char *line, size_t size, const char *name, int fd)
{
	char buf[64];
	ssize_t n;

	snprintf(line + strlen(line), size - strlen(line), " %s", name);
	while ((n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT)) > 0) {
		buf[n] = '\0';
		snprintf(line + strlen(line), size - strlen(line), ":%s", buf);
	}
}

/* Whether a message from fd 14 comes to fd 12 with this process's credentials. */
static int creds_come(void)
{
	char c, ctl[CMSG_SPACE(sizeof(struct ucred))];
	struct iovec iov = { &c, 1 };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctl, .msg_controllen = sizeof(ctl),
	};
	struct cmsghdr *cm;
	struct ucred uc;

	if (write(14, "c", 1) != 1 || recvmsg(12, &mh, MSG_DONTWAIT) != 1)
		return -1;
	cm = CMSG_FIRSTHDR(&mh);
	if (!cm || cm->cmsg_type != SCM_CREDENTIALS)
		return 0;
	memcpy(&uc, CMSG_DATA(cm), sizeof(uc));
	return uc.pid == getpid() && uc.uid == getuid();
}

/*
 * UNIX socket pairs: fds 7 and 8 the two ends of a stream pair (7
 * non-blocking, also at fd 9), "ping" queued for 7 and "pong!" for 8, 8
 * shut down for writing after; fd 10 an end whose peer is closed, "last"
 * queued for it; fd 11 a seqpacket end with messages "a" and "bcd" queued,
 * fd 12 a datagram end with "xy" and "z" (their peers at 13 and 14), which
 * takes its senders' credentials (SO_PASSCRED, set after they were sent):
 * a message from 14 brings this process's.
 */
static void usock_probe(void)
{
	char buf[64], line[256];
	ssize_t n;

	n = read(9, buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	snprintf(line, sizeof(line), "7:%s", buf);
	n = read(7, buf, 1);
	snprintf(line + strlen(line), sizeof(line) - strlen(line),
		 " eof:%zd", n);
	n = read(8, buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	snprintf(line + strlen(line), sizeof(line) - strlen(line),
		 " 8:%s", buf);
	if (write(7, "more", 4) != 4 || read(8, buf, 4) != 4)
		_exit(10);
	n = read(10, buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	snprintf(line + strlen(line), sizeof(line) - strlen(line),
		 " 10:%s eof:%zd nb:%d", buf, read(10, buf, 1),
		 !!(fcntl(9, F_GETFL) & O_NONBLOCK));
	messages(line, sizeof(line), "11", 11);
	messages(line, sizeof(line), "12", 12);
	snprintf(line + strlen(line), sizeof(line) - strlen(line), " creds:%d",
		 creds_come());
	target_say("%s", line);
}

static void usock_target(void)
{
	int sv[2], tv[2], qv[2], dv[2], on = 1;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) || dup2(sv[0], 7) != 7 ||
	    dup2(sv[1], 8) != 8 || dup2(7, 9) != 9 ||
	    socketpair(AF_UNIX, SOCK_STREAM, 0, tv) || dup2(tv[0], 10) != 10)
		_exit(9);
	close(sv[0]);
	close(sv[1]);
	fcntl(7, F_SETFL, O_NONBLOCK);
	if (write(8, "ping", 4) != 4 || write(7, "pong!", 5) != 5 ||
	    shutdown(8, SHUT_WR) || write(tv[1], "last", 4) != 4)
		_exit(9);
	close(tv[0]);
	close(tv[1]);
	if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, qv) || dup2(qv[0], 11) != 11 ||
	    dup2(qv[1], 13) != 13 || socketpair(AF_UNIX, SOCK_DGRAM, 0, dv) ||
	    dup2(dv[0], 12) != 12 || dup2(dv[1], 14) != 14 ||
	    write(13, "a", 1) != 1 || write(13, "bcd", 3) != 3 ||
	    write(14, "xy", 2) != 2 || write(14, "z", 1) != 1 ||
	    setsockopt(12, SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)))
		_exit(9);
	close(qv[0]);
	close(qv[1]);
	close(dv[0]);
	close(dv[1]);
	target_serve(usock_probe);
}

/* @sa: the abstract name "cr_fds.TAG.PID"; its length. */
static socklen_t abstract_name(struct sockaddr_un *sa, const char *tag, pid_t pid)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	return offsetof(struct sockaddr_un, sun_path) + 1 +
	       snprintf(sa->sun_path + 1, sizeof(sa->sun_path) - 1,
			"cr_fds.%s.%d", tag, pid);
}

/* The path the listening socket of listen_target() is bound to. */
static void listen_path(char *buf, size_t size)
{
	snprintf(buf, size, "/tmp/cr_fds.%d.sock", getpid());
}

/* A connection to @sa on @lfd, accepted, with @msg sent across it. */
static int connect_accept(int type, int lfd, const struct sockaddr_un *sa,
			  socklen_t len, const char *msg, char *got)
{
	int c = socket(AF_UNIX, type, 0), a;
	ssize_t n;

	if (c < 0 || connect(c, (const struct sockaddr *)sa, len))
		return -1;
	a = accept(lfd, NULL, NULL);
	if (a < 0 || write(c, msg, strlen(msg)) != (ssize_t)strlen(msg))
		return -1;
	n = read(a, got, 15);
	got[n > 0 ? n : 0] = '\0';
	close(a);
	close(c);
	return 0;
}

/*
 * Listening UNIX sockets: fd 7 a stream socket listening on
 * /tmp/cr_fds.PID.sock (mode 0640), fd 8 a seqpacket socket on the
 * abstract name "cr_fds.a.PID"; fds 9 and 10 a connection accepted on 7
 * (9 the client), "hello" queued for 10 and "world" for 9; 7 has
 * SO_PASSCRED (set last), which what it accepts inherits.
 */
static void listen_probe(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX }, ab, got = sa;
	socklen_t len = sizeof(got), ablen = abstract_name(&ab, "a", getpid());
	char a[16] = "", b[16] = "", line[256], c1[16], c2[16];
	socklen_t pclen = sizeof(int);
	struct stat st;
	int pc = -1;
	ssize_t n;

	listen_path(sa.sun_path, sizeof(sa.sun_path));
	n = read(10, a, sizeof(a) - 1);
	a[n > 0 ? n : 0] = '\0';
	n = read(9, b, sizeof(b) - 1);
	b[n > 0 ? n : 0] = '\0';
	if (getsockname(7, (struct sockaddr *)&got, &len) ||
	    strcmp(got.sun_path, sa.sun_path) || stat(sa.sun_path, &st) ||
	    connect_accept(SOCK_STREAM, 7, &sa, sizeof(sa), "x", c1) ||
	    connect_accept(SOCK_SEQPACKET, 8, &ab, ablen, "y", c2))
		_exit(10);
	if (getsockopt(7, SOL_SOCKET, SO_PASSCRED, &pc, &pclen))
		_exit(10);
	snprintf(line, sizeof(line), "10:%s 9:%s mode:%o new:%s abstract:%s passcred:%d",
		 a, b, st.st_mode & 07777, c1, c2, pc);
	target_say("%s", line);
}

static void listen_target(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX }, ab;
	socklen_t ablen = abstract_name(&ab, "a", getpid());
	int l, q, c, a, on = 1;

	listen_path(sa.sun_path, sizeof(sa.sun_path));
	unlink(sa.sun_path);
	l = socket(AF_UNIX, SOCK_STREAM, 0);
	q = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	c = socket(AF_UNIX, SOCK_STREAM, 0);
	if (l < 0 || q < 0 || c < 0 ||
	    bind(l, (struct sockaddr *)&sa, sizeof(sa)) || chmod(sa.sun_path, 0640) ||
	    listen(l, 4) || bind(q, (struct sockaddr *)&ab, ablen) || listen(q, 2) ||
	    connect(c, (struct sockaddr *)&sa, sizeof(sa)))
		_exit(9);
	a = accept(l, NULL, NULL);
	if (a < 0 || dup2(l, 7) != 7 || dup2(q, 8) != 8 || dup2(c, 9) != 9 ||
	    dup2(a, 10) != 10 || write(9, "hello", 5) != 5 ||
	    write(10, "world", 5) != 5 ||
	    setsockopt(7, SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)))
		_exit(9);
	close(l);
	close(q);
	close(c);
	close(a);
	target_serve(listen_probe);
}

/*
 * Connections waiting on the listening socket at fd 7: the first from fd
 * 8, which sent "one"; the second from a client that sent "two" and
 * closed. 'p' accepts both: "A:one back B:two eof" when the first's bytes,
 * a reply to fd 8 and the second's bytes and end are all there.
 */
static void waiting_probe(void)
{
	char a[16] = "", b[16] = "", back[16] = "";
	int x = accept(7, NULL, NULL), y;
	ssize_t n;

	n = x < 0 ? -1 : read(x, a, sizeof(a) - 1);
	a[n > 0 ? n : 0] = '\0';
	if (x < 0 || write(x, "back", 4) != 4)
		_exit(10);
	n = read(8, back, sizeof(back) - 1);
	back[n > 0 ? n : 0] = '\0';
	y = accept(7, NULL, NULL);
	n = y < 0 ? -1 : read(y, b, sizeof(b) - 1);
	b[n > 0 ? n : 0] = '\0';
	target_say("A:%s %s B:%s %s", a, back, b,
		   y >= 0 && read(y, b, 1) == 0 ? "eof" : "more");
}

static void waiting_target(void)
{
	struct sockaddr_un sa;
	socklen_t len = abstract_name(&sa, "w", getpid());
	int l = socket(AF_UNIX, SOCK_STREAM, 0), c = socket(AF_UNIX, SOCK_STREAM, 0);
	int d = socket(AF_UNIX, SOCK_STREAM, 0);

	if (l < 0 || c < 0 || d < 0 || bind(l, (struct sockaddr *)&sa, len) ||
	    listen(l, 4) || connect(c, (struct sockaddr *)&sa, len) ||
	    write(c, "one", 3) != 3 || connect(d, (struct sockaddr *)&sa, len) ||
	    write(d, "two", 3) != 3 || dup2(l, 7) != 7 || dup2(c, 8) != 8)
		_exit(9);
	close(l);
	close(c);
	close(d);
	target_serve(waiting_probe);
}

/* A listening socket at fd 7 the test connects to. */
static void listening_target(void)
{
	struct sockaddr_un sa;
	socklen_t len = abstract_name(&sa, "l", getpid());
	int l = socket(AF_UNIX, SOCK_STREAM, 0);
	char ch;

	if (l < 0 || bind(l, (struct sockaddr *)&sa, len) || listen(l, 4) ||
	    dup2(l, 7) != 7)
		_exit(9);
	close(l);
	while (read(0, &ch, 1) == 1 && ch != 'q')
		target_say("set");
	_exit(0);
}

/* A connection at fd 7 waiting on the test's listening socket. */
static void dialing_target(void)
{
	struct sockaddr_un sa;
	socklen_t len = abstract_name(&sa, "t", getppid());
	int c = socket(AF_UNIX, SOCK_STREAM, 0);
	char ch;

	if (c < 0 || connect(c, (struct sockaddr *)&sa, len) || dup2(c, 7) != 7)
		_exit(9);
	close(c);
	while (read(0, &ch, 1) == 1 && ch != 'q')
		target_say("set");
	_exit(0);
}

/* The message waiting on @fd, as a string in @buf ("" for none). */
static const char *waiting(int fd, char *buf, size_t size)
{
	ssize_t n = recv(fd, buf, size - 1, MSG_DONTWAIT);

	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

/* The path the datagram socket of named_target() is bound to. */
static void dgram_path(char *buf, size_t size, pid_t pid)
{
	snprintf(buf, size, "/tmp/cr_fds.%d.dg", pid);
}

/*
 * UNIX sockets with names, or connected to nothing: fd 7 a datagram
 * socket bound to /tmp/cr_fds.PID.dg (mode 0640), messages "m1" and "m22"
 * queued for it; fd 8 a datagram socket with no name connected to 7; fd 9
 * one connected to the test's datagram socket, the abstract name
 * "cr_fds.o.PPID", outside the process; fd 10 a stream socket never bound
 * or connected; fd 11 a datagram socket bound to the abstract name
 * "cr_fds.d.PID", connected to nothing; fd 12 a datagram pair's end
 * whose peer is closed, "last" queued for it (a pair still). 'p': what 7
 * has queued, then "again" sent from 8 to 7 and "ab" from 8 to 11's name,
 * each read back, "out" sent on 9, what 12 has; and 7's mode, 10's type
 * and that it has no name.
 */
static void named_probe(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX }, ab, got;
	socklen_t len = abstract_name(&ab, "d", getpid()), glen = sizeof(got);
	char line[256] = "", buf[16];
	const char *fail = NULL;
	int type = 0;
	socklen_t tlen = sizeof(type);
	struct stat st;
	ssize_t n;

	dgram_path(sa.sun_path, sizeof(sa.sun_path), getpid());
	messages(line, sizeof(line), "7", 7);
	if (send(8, "again", 5, 0) != 5)
		fail = "8 cannot send";
	else if (sendto(8, "ab", 2, 0, (struct sockaddr *)&ab, len) != 2)
		fail = "8 cannot send to 11";
	else if (send(9, "out", 3, 0) != 3)
		fail = "9 cannot send";
	else if (stat(sa.sun_path, &st) ||
		 getsockopt(10, SOL_SOCKET, SO_TYPE, &type, &tlen) ||
		 getsockname(10, (struct sockaddr *)&got, &glen))
		fail = "7's path or 10";
	if (fail) {
		target_say("%s: %m", fail);
		return;
	}
	messages(line, sizeof(line), "7", 7);
	messages(line, sizeof(line), "12", 12);
	n = recv(11, buf, sizeof(buf) - 1, MSG_DONTWAIT);
	buf[n > 0 ? n : 0] = '\0';
	target_say("%s 11:%s mode:%o 10:%s,%s", line + 1, buf, st.st_mode & 07777,
		   type == SOCK_STREAM ? "stream" : "?",
		   glen == sizeof(sa_family_t) ? "no name" : "named");
}

/* Socket @fd moved to descriptor @want, or exit 9. */
static void place(int fd, int want)
{
	if (fd < 0 || (fd != want && (dup2(fd, want) != want || close(fd))))
		_exit(9);
}

/* Each socket made and placed at once: none made where one is placed. */
static void named_target(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX }, out, ab;
	socklen_t olen = abstract_name(&out, "o", getppid());
	socklen_t alen = abstract_name(&ab, "d", getpid());
	int pair[2];

	dgram_path(sa.sun_path, sizeof(sa.sun_path), getpid());
	unlink(sa.sun_path);
	place(socket(AF_UNIX, SOCK_DGRAM, 0), 7);
	place(socket(AF_UNIX, SOCK_DGRAM, 0), 8);
	place(socket(AF_UNIX, SOCK_DGRAM, 0), 9);
	place(socket(AF_UNIX, SOCK_STREAM, 0), 10);
	place(socket(AF_UNIX, SOCK_DGRAM, 0), 11);
	if (socketpair(AF_UNIX, SOCK_DGRAM, 0, pair) ||
	    send(pair[1], "last", 4, 0) != 4 || close(pair[1]))
		_exit(9);
	place(pair[0], 12);
	if (bind(7, (struct sockaddr *)&sa, sizeof(sa)) ||
	    chmod(sa.sun_path, 0640) ||
	    connect(8, (struct sockaddr *)&sa, sizeof(sa)) ||
	    connect(9, (struct sockaddr *)&out, olen) ||
	    bind(11, (struct sockaddr *)&ab, alen) ||
	    send(8, "m1", 2, 0) != 2 || send(8, "m22", 3, 0) != 3)
		_exit(9);
	target_serve(named_probe);
}

/* The path of the test's datagram server in relog_target(). */
static void log_path(char *buf, size_t size, pid_t pid)
{
	snprintf(buf, size, "/tmp/cr_fds.%d.log", pid);
}

/* 'p': "hi" sent on fd 7. */
static void relog_probe(void)
{
	target_say("%s", send(7, "hi", 2, 0) == 2 ? "sent" : "not sent");
}

/* fd 7: a datagram socket connected to the test's server, as to /dev/log. */
static void relog_target(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int c = socket(AF_UNIX, SOCK_DGRAM, 0);

	log_path(sa.sun_path, sizeof(sa.sun_path), getppid());
	if (c < 0 || connect(c, (struct sockaddr *)&sa, sizeof(sa)) ||
	    dup2(c, 7) != 7)
		_exit(9);
	close(c);
	target_serve(relog_probe);
}

/* A socket pair whose other end a forked child holds. */
static void shared_usock_target(void)
{
	int sv[2];
	char c;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		_exit(9);
	if (!fork()) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(sv[0]);
		pause();
		_exit(0);
	}
	close(sv[1]);
	while (read(0, &c, 1) == 1 && c != 'q')
		target_say("set");
	_exit(0);
}

/*
 * A listening TCP socket on 127.0.0.1 with a connection waiting to be
 * accepted from another process: a grandchild (not a child, which the
 * engine refuses first), holding nothing of the target's, which ends
 * once the target is gone.
 */
static void waiting_from_another_target(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM, 0), c, ok[2];
	pid_t pid, target = getpid();
	char ch;

	if (l < 0 || pipe(ok) || bind(l, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(l, 4) || getsockname(l, (struct sockaddr *)&a, &len))
		_exit(9);
	pid = fork();
	if (!pid) {
		if (fork())
			_exit(0);
		close(l);
		close(ok[0]);
		c = socket(AF_INET, SOCK_STREAM, 0);
		if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof(a)) ||
		    write(ok[1], "c", 1) != 1)
			_exit(9);
		close(ok[1]);
		while (!kill(target, 0))
			usleep(100000);
		_exit(0);
	}
	close(ok[1]);
	if (pid < 0 || waitpid(pid, NULL, 0) != pid || read(ok[0], &ch, 1) != 1)
		_exit(9);
	close(ok[0]);
	while (read(0, &ch, 1) == 1 && ch != 'q')
		target_say("set");
	_exit(0);
}

/* A pipe shared with a child made by fork(): an end is in another process. */
static void shared_pipe_target(void)
{
	int p[2];
	char c;

	if (pipe(p))
		_exit(9);
	if (!fork()) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		pause();
		_exit(0);
	}
	while (read(0, &c, 1) == 1 && c != 'q')
		target_say("set");
	_exit(0);
}

/*
 * A listening TCP socket on 127.0.0.1 with a connection of its own
 * waiting to be accepted, "hello" sent through it. 'r' accepts it and
 * says what it reads. 'a' accepts it and shuts its client end down
 * for writing (both ends half-closed); 'h' closes the client end; 'c'
 * closes both.
 */
static void pending_accept_target(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM, 0);
	int c = socket(AF_INET, SOCK_STREAM, 0);
	int s = -1;
	char ch;

	if (l < 0 || c < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(l, 4) || getsockname(l, (struct sockaddr *)&a, &len) ||
	    connect(c, (struct sockaddr *)&a, sizeof(a)) ||
	    write(c, "hello", 5) != 5)
		_exit(9);
	while (read(0, &ch, 1) == 1 && ch != 'q') {
		if (ch == 'r') {
			char got[8] = "";

			if ((s = accept(l, NULL, NULL)) < 0 || read(s, got, 5) != 5)
				_exit(9);
			target_say(strcmp(got, "hello") ? "wrong" : got);
			continue;
		}
		if (ch == 'a' && ((s = accept(l, NULL, NULL)) < 0 ||
				  shutdown(c, SHUT_WR)))
			_exit(9);
		if (ch == 'h' && c >= 0) {
			close(c);
			c = -1;
		}
		if (ch == 'c') {
			close(s);
			if (c >= 0)
				close(c);
		}
		target_say("set");
	}
	_exit(0);
}

/*
 * fd 3: a one-shot timerfd that already fired (one unread expiration);
 * fd 4: a non-blocking monotonic timerfd, 4 s left, 500 ms interval.
 */
static void timerfd_target(void)
{
	struct itimerspec fired = { .it_value = { 0, 1000000 } };
	struct itimerspec armed = { .it_value = { 4, 0 }, .it_interval = { 0, 500000000 } };
	struct itimerspec now;
	struct pollfd p = { .fd = 3, .events = POLLIN };
	uint64_t ticks;
	char c;

	if (timerfd_create(CLOCK_MONOTONIC, 0) != 3 ||
	    timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK) != 4 ||
	    timerfd_settime(3, 0, &fired, NULL) || timerfd_settime(4, 0, &armed, NULL) ||
	    poll(&p, 1, 5000) != 1)
		_exit(9);
	for (;;) {
		if (read(0, &c, 1) != 1)
			_exit(3);
		if (c == 'q')
			_exit(0);
		if (c == 's') {
			target_say("set");
			continue;
		}
		if (c != 'p')
			continue;
		/* fd 3: its tick; fd 4: armed, its interval, nothing yet, then a tick. */
		timerfd_gettime(4, &now);
		if (read(3, &ticks, 8) != 8)
			_exit(10);
		target_say("3:%llu 4:%d %ld.%09ld %d %d", (unsigned long long)ticks,
			   (now.it_value.tv_sec > 0 || now.it_value.tv_nsec > 0) &&
			   now.it_value.tv_sec <= 4,
			   (long)now.it_interval.tv_sec, now.it_interval.tv_nsec,
			   read(4, &ticks, 8) < 0 && errno == EAGAIN,
			   fcntl(4, F_GETFL) & O_NONBLOCK ? 1 : 0);
		p.fd = 4;
		if (poll(&p, 1, 10000) != 1 || read(4, &ticks, 8) != 8 || !ticks)
			_exit(11);
		target_say("fired");
	}
}

/* 'c' says how many descriptors the process has, 'q' quits. */
static void fd_count_target(void)
{
	char c;

	for (;;) {
		struct dirent *d;
		DIR *dir;
		int n = -1;	/* the directory's own */

		if (read(0, &c, 1) != 1)
			_exit(3);
		if (c == 'q')
			_exit(0);
		dir = opendir("/proc/self/fd");
		while (dir && (d = readdir(dir)))
			n += d->d_name[0] != '.';
		if (dir)
			closedir(dir);
		target_say("fds %d", n);
	}
}

/*
 * fd 3: a file, with fd 4 its dup() and fd 10 an F_DUPFD_CLOEXEC copy;
 * fd 5: an eventfd, fd 6 its dup(); fd 7: a memfd, fd 8 a close-on-exec
 * copy; fd 9: epoll watching the eventfd through fd 6 (data 66).
 */
static void dup_target(void)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 66 };
	char c, path[64], buf[32] = "";
	uint64_t v = 7;
	int n;

	snprintf(path, sizeof(path), "/tmp/cr_fds.dup.%d", getpid());
	if (open(path, O_RDWR | O_CREAT | O_TRUNC, 0600) != 3 || dup(3) != 4 ||
	    eventfd(0, 0) != 5 || dup(5) != 6 || memfd_create("m", 0) != 7 ||
	    fcntl(7, F_DUPFD_CLOEXEC, 8) != 8 || epoll_create1(0) != 9 ||
	    epoll_ctl(9, EPOLL_CTL_ADD, 6, &ev) ||
	    fcntl(3, F_DUPFD_CLOEXEC, 10) != 10 ||
	    write(3, "ab", 2) != 2 || write(7, "x", 1) != 1)
		_exit(9);
	for (;;) {
		if (read(0, &c, 1) != 1)
			_exit(3);
		if (c == 's')
			target_say("set");
		if (c == 'q')
			_exit(0);
		if (c != 'p')
			continue;
		/* One position: each write goes on where the last one ended. */
		if (write(4, "cd", 2) != 2 || write(3, "ef", 2) != 2 ||
		    write(10, "gh", 2) != 2)
			_exit(10);
		n = pread(3, buf, sizeof(buf) - 1, 0);
		buf[n > 0 ? n : 0] = '\0';
		fcntl(5, F_SETFL, O_NONBLOCK);
		memset(&ev, 0, sizeof(ev));
		if (write(5, &v, sizeof(v)) != sizeof(v) ||
		    epoll_wait(9, &ev, 1, 1000) != 1 || read(6, &v, sizeof(v)) != 8 ||
		    write(8, "y", 1) != 1)
			_exit(11);
		target_say("file %s nb %d epoll %llu ev %llu memfd %lld cloexec %d%d%d%d",
			   buf, !!(fcntl(6, F_GETFL) & O_NONBLOCK),
			   (unsigned long long)ev.data.u64, (unsigned long long)v,
			   (long long)lseek(7, 0, SEEK_CUR), fcntl(3, F_GETFD),
			   fcntl(4, F_GETFD), fcntl(8, F_GETFD), fcntl(10, F_GETFD));
	}
}

FIXTURE(fds) {
	char image[64];
	char msg[256];
};

FIXTURE_SETUP(fds)
{
	const char *path = ckpt_module_path();

	if (!path)
		SKIP(return, "CKPT_MODULE does not name a readable ckpt.ko");
	if (!ckpt_module_loaded())
		ASSERT_EQ(0, ckpt_load_module(path));
	snprintf(self->image, sizeof(self->image), "/tmp/cr_fds.%d.img", getpid());
}

FIXTURE_TEARDOWN(fds)
{
	unlink(self->image);
}

TEST_F(fds, eventfd_signalfd_and_epoll_come_back)
{
	struct target t = {};
	char before[256], after[256];
	pid_t pid;
	int cycle;

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, target_start(&t, anon_target));
	pid = t.pid;
	ASSERT_EQ(0, target_ask(&t, "e", before, sizeof(before)));
	ASSERT_STREQ("fired", before);
	/* 33 and 55 ready (44 disabled); sem gives 1, plain 5; SIGUSR1. */
	ASSERT_EQ(0, target_ask(&t, "p", before, sizeof(before)));
	EXPECT_STREQ("epoll 2:80000200000000 sem 1 plain 5 sig 10 nb 1", before);

	for (cycle = 0; cycle < 2; cycle++) {
		ASSERT_EQ(0, ckpt_checkpoint_to(pid, self->image, CKPT_CHECKPOINT_KILL,
						self->msg, sizeof(self->msg), NULL))
			TH_LOG("%s", self->msg);
		target_end(&t);
		ASSERT_EQ(0, target_restart(&t, self->image));
		ASSERT_EQ(0, target_ask(&t, "p", after, sizeof(after)));
		EXPECT_STREQ(before, after);
	}
	ASSERT_EQ(0, target_send(&t, "q"));
	EXPECT_EQ(0, target_end(&t));
}

TEST_F(fds, an_epoll_watching_a_closed_descriptor_is_refused)
{
	struct target t = {};
	char buf[16];

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, target_start(&t, stale_epoll_target));
	ASSERT_EQ(0, target_ask(&t, "s", buf, sizeof(buf)));
	EXPECT_EQ(-EOPNOTSUPP, ckpt_checkpoint_to(t.pid, self->image, 0, self->msg,
						  sizeof(self->msg), NULL));
	EXPECT_NE(NULL, strstr(self->msg, "epoll fd 4 watches fd 3")) TH_LOG("%s", self->msg);
	EXPECT_EQ(0, kill(t.pid, 0));
	ASSERT_EQ(0, target_send(&t, "q"));
	target_end(&t);
}

TEST_F(fds, a_pipe_within_the_process_keeps_its_bytes)
{
	struct target t = {};
	char buf[256];

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, target_start(&t, pipe_target));
	ASSERT_EQ(0, target_ask(&t, "s", buf, sizeof(buf)));
	ASSERT_EQ(0, target_cycle(&t, t.pid, self->image, self->msg,
				  sizeof(self->msg))) TH_LOG("%s", self->msg);
	ASSERT_EQ(0, target_ask(&t, "p", buf, sizeof(buf)));
	EXPECT_STREQ("7:hello world again:-1/1 9:x 10:bye eof:0", buf);
	ASSERT_EQ(0, target_send(&t, "q"));
	EXPECT_EQ(0, target_end(&t));
}

/*
 * fd 7: the read end of a pipe (write end closed) that took up to
 * spliced_want bytes spliced from a TCP connection on 127.0.0.1, closed
 * since; byte i of the stream is i % 251. Loopback's segments hold pieces
 * of compound pages (32 KiB), and splice moves them into the pipe as they
 * are: one buffer can hold more than a page, and the pipe more bytes than
 * its capacity. "set N": the bytes it holds (FIONREAD). 'p': "N ok" once
 * it read them all, each the byte it should be.
 */
static size_t spliced_want;

static void spliced_probe(void)
{
	static unsigned char buf[65536];
	size_t at = 0;
	ssize_t n, i;
	int ok = 1;

	while ((n = read(7, buf, sizeof(buf))) > 0)
		for (i = 0; i < n; i++, at++)
			ok &= buf[i] == at % 251;
	target_say("%zu %s", at, ok && n == 0 ? "ok" : "bad");
}

static void spliced_target(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	static unsigned char buf[1 << 20];
	size_t sent = 0, moved = 0, i;
	socklen_t al = sizeof(a);
	int l, c, s, p[2], tries, held;
	ssize_t n;
	char cmd;

	for (i = 0; i < spliced_want; i++)
		buf[i] = i % 251;
	l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (l < 0 || c < 0 || bind(l, (struct sockaddr *)&a, al) ||
	    listen(l, 1) || getsockname(l, (struct sockaddr *)&a, &al) ||
	    connect(c, (struct sockaddr *)&a, al) || pipe(p))
		_exit(9);
	s = accept(l, NULL, NULL);
	if (s < 0)
		_exit(9);
	/* Until all moved, or the pipe full (2 s of nothing moving). */
	for (tries = 0; moved < spliced_want && tries < 2000; tries++) {
		if (sent < spliced_want) {
			n = send(c, buf + sent, spliced_want - sent, MSG_DONTWAIT);
			sent += n > 0 ? n : 0;
		}
		n = splice(s, NULL, p[1], NULL, spliced_want - moved,
			   SPLICE_F_NONBLOCK);
		if (n > 0) {
			moved += n;
			tries = 0;
		} else {
			usleep(1000);
		}
	}
	close(s);	/* one of them may be 7 */
	close(c);
	close(l);
	close(p[1]);
	if (p[0] != 7 && (dup2(p[0], 7) != 7 || close(p[0])))
		_exit(9);
	fcntl(7, F_SETFL, O_NONBLOCK);
	if (ioctl(7, FIONREAD, &held))
		_exit(9);
	while (read(0, &cmd, 1) == 1 && cmd != 'q') {
		if (cmd == 's')
			target_say("set %d", held);
		else if (cmd == 'p')
			spliced_probe();
	}
	_exit(0);
}

/* Pieces of pages bigger than a page, within the pipe's capacity: kept. */
TEST_F(fds, a_pipe_holding_bytes_spliced_from_a_socket_keeps_them)
{
	struct target t = {};
	char buf[64];

	CKPT_SETUP_SKIPPED();
	spliced_want = 40000;
	ASSERT_EQ(0, target_start(&t, spliced_target));
	ASSERT_EQ(0, target_ask(&t, "s", buf, sizeof(buf)));
	ASSERT_STREQ("set 40000", buf);
	ASSERT_EQ(0, target_cycle(&t, t.pid, self->image, self->msg,
				  sizeof(self->msg))) TH_LOG("%s", self->msg);
	ASSERT_EQ(0, target_ask(&t, "p", buf, sizeof(buf)));
	EXPECT_STREQ("40000 ok", buf);
	ASSERT_EQ(0, target_send(&t, "q"));
	EXPECT_EQ(0, target_end(&t));
}

/*
 * More bytes than its capacity (64 KiB): no pipe made again takes them.
 * Refused by name, the process untouched, every byte still there (the
 * engine once copied them past the end of its buffer).
 */
TEST_F(fds, a_pipe_holding_more_than_its_capacity_is_refused)
{
	struct target t = {};
	char buf[64], want[64];
	int held;

	CKPT_SETUP_SKIPPED();
	spliced_want = 1 << 20;
	ASSERT_EQ(0, target_start(&t, spliced_target));
	ASSERT_EQ(0, target_ask(&t, "s", buf, sizeof(buf)));
	ASSERT_EQ(1, sscanf(buf, "set %d", &held)) TH_LOG("%s", buf);
	/* What the case needs of the kernel: buffers bigger than a page. */
	ASSERT_LT(65536, held) TH_LOG("splice left %d bytes in the pipe", held);
	EXPECT_EQ(-EOPNOTSUPP, ckpt_checkpoint_to(t.pid, self->image, 0,
						  self->msg, sizeof(self->msg),
						  NULL));
	EXPECT_NE(NULL, strstr(self->msg, "fd 7 (pipe:[")) TH_LOG("%s", self->msg);
	EXPECT_NE(NULL, strstr(self->msg, "holds more bytes than its capacity"))
		TH_LOG("%s", self->msg);
	ASSERT_EQ(0, target_ask(&t, "p", buf, sizeof(buf)));
	snprintf(want, sizeof(want), "%d ok", held);
	EXPECT_STREQ(want, buf);
	ASSERT_EQ(0, target_send(&t, "q"));
	EXPECT_EQ(0, target_end(&t));
}

TEST_F(fds, unix_socket_pairs_keep_their_bytes_messages_and_shutdowns)
{
	struct target t = {};
	char buf[256];

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, target_start(&t, usock_target));
	ASSERT_EQ(0, target_ask(&t, "s", buf, sizeof(buf)));
	ASSERT_EQ(0, target_cycle(&t, t.pid, self->image, self->msg,
				  sizeof(self->msg))) TH_LOG("%s", self->msg);
	ASSERT_EQ(0, target_ask(&t, "p", buf, sizeof(buf)));
	/* 8 wrote "ping" for 7 and shut its writes: 7 sees the end after. */
	EXPECT_STREQ("7:ping eof:0 8:pong! 10:last eof:0 nb:1 11:a:bcd 12:xy:z creds:1", buf);
	ASSERT_EQ(0, target_send(&t, "q"));
	EXPECT_EQ(0, target_end(&t));
}

TEST_F(fds, listening_unix_sockets_listen_again_by_name)
{
	struct target t = {};
	char buf[256], path[64];
	pid_t pid;
	int cycle;

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, target_start(&t, listen_target));
	pid = t.pid;
	ASSERT_EQ(0, target_ask(&t, "s", buf, sizeof(buf)));
	snprintf(path, sizeof(path), "/tmp/cr_fds.%d.sock", pid);
	/* Twice: the second restart finds the first's socket file. */
	for (cycle = 0; cycle < 2; cycle++) {
		ASSERT_EQ(0, target_cycle(&t, pid, self->image, self->msg,
					  sizeof(self->msg)))
			TH_LOG("cycle %d: %s", cycle, self->msg);
		ASSERT_EQ(0, target_ask(&t, "s", buf, sizeof(buf)));
	}
	ASSERT_EQ(0, target_ask(&t, "p", buf, sizeof(buf)));
	EXPECT_STREQ("10:hello 9:world mode:640 new:x abstract:y passcred:1", buf);
	ASSERT_EQ(0, target_send(&t, "q"));
	EXPECT_EQ(0, target_end(&t));
	unlink(path);
}

TEST_F(fds, unix_sockets_with_names_are_bound_and_connected_again_by_name)
{
	struct target t = {};
	struct sockaddr_un out;
	socklen_t len = abstract_name(&out, "o", getpid());
	char buf[256], path[64], got[16];
	int o, cycle;
	pid_t pid;

	CKPT_SETUP_SKIPPED();
	/* The target's fd 9 is connected to this, outside it. */
	o = socket(AF_UNIX, SOCK_DGRAM, 0);
	ASSERT_LE(0, o);
	ASSERT_EQ(0, bind(o, (struct sockaddr *)&out, len));
	ASSERT_EQ(0, target_start(&t, named_target));
	pid = t.pid;
	ASSERT_EQ(0, target_ask(&t, "s", buf, sizeof(buf)));
	dgram_path(path, sizeof(path), pid);
	/* Twice: the second restart finds the first's socket file. */
	for (cycle = 0; cycle < 2; cycle++) {
		ASSERT_EQ(0, target_cycle(&t, pid, self->image, self->msg,
					  sizeof(self->msg)))
			TH_LOG("cycle %d: %s", cycle, self->msg);
		ASSERT_EQ(0, target_ask(&t, "s", buf, sizeof(buf)));
	}
	ASSERT_EQ(0, target_ask(&t, "p", buf, sizeof(buf)));
	EXPECT_STREQ("7:m1:m22 7:again 12:last 11:ab mode:640 10:stream,no name", buf);
	EXPECT_STREQ("out", waiting(o, got, sizeof(got)));
	ASSERT_EQ(0, target_send(&t, "q"));
	EXPECT_EQ(0, target_end(&t));
	close(o);
	unlink(path);
}

/* A datagram server at @path, bound anew. */
static int log_server(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int s = socket(AF_UNIX, SOCK_DGRAM, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	unlink(path);
	if (s >= 0 && bind(s, (struct sockaddr *)&sa, sizeof(sa))) {
		close(s);
		return -1;
	}
	return s;
}

/*
 * As a syslog client whose daemon was restarted: its server gone (the
 * socket file left), the client is checkpointed, a new server binds the
 * path, and the restarted client sends to it.
 */
TEST_F(fds, a_datagram_client_of_a_server_gone_sends_to_the_one_at_its_path_after_restart)
{
	struct target t = {};
	char buf[64], path[64], got[16];
	int s;

	CKPT_SETUP_SKIPPED();
	log_path(path, sizeof(path), getpid());
	s = log_server(path);
	ASSERT_LE(0, s);
	ASSERT_EQ(0, target_start(&t, relog_target));
	ASSERT_EQ(0, target_ask(&t, "s", buf, sizeof(buf)));
	close(s);
	ASSERT_EQ(0, ckpt_checkpoint_to(t.pid, self->image, CKPT_CHECKPOINT_KILL,
					self->msg, sizeof(self->msg), NULL))
		TH_LOG("%s", self->msg);
	target_end(&t);
	s = log_server(path);
	ASSERT_LE(0, s);
	ASSERT_EQ(0, target_restart(&t, self->image));
	ASSERT_EQ(0, target_ask(&t, "p", buf, sizeof(buf)));
	EXPECT_STREQ("sent", buf);
	EXPECT_STREQ("hi", waiting(s, got, sizeof(got)));
	ASSERT_EQ(0, target_send(&t, "q"));
	EXPECT_EQ(0, target_end(&t));
	close(s);
	unlink(path);
}

TEST_F(fds, connections_waiting_to_be_accepted_wait_again)
{
	struct target t = {};
	char buf[256];

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, target_start(&t, waiting_target));
	ASSERT_EQ(0, target_ask(&t, "s", buf, sizeof(buf)));
	ASSERT_EQ(0, target_cycle(&t, t.pid, self->image, self->msg,
				  sizeof(self->msg))) TH_LOG("%s", self->msg);
	ASSERT_EQ(0, target_ask(&t, "p", buf, sizeof(buf)));
	EXPECT_STREQ("A:one back B:two eof", buf);
	ASSERT_EQ(0, target_send(&t, "q"));
	EXPECT_EQ(0, target_end(&t));
}

TEST_F(fds, a_connection_waiting_across_processes_is_refused)
{
	struct target t = {}, u = {};
	struct sockaddr_un sa;
	socklen_t len;
	char buf[16];
	int c, l;

	CKPT_SETUP_SKIPPED();
	/* Another process waits on the target's listening socket. */
	ASSERT_EQ(0, target_start(&t, listening_target));
	ASSERT_EQ(0, target_ask(&t, "s", buf, sizeof(buf)));
	len = abstract_name(&sa, "l", t.pid);
	c = socket(AF_UNIX, SOCK_STREAM, 0);
	ASSERT_EQ(0, connect(c, (struct sockaddr *)&sa, len));
	EXPECT_EQ(-EOPNOTSUPP, ckpt_checkpoint_to(t.pid, self->image, 0, self->msg,
						  sizeof(self->msg), NULL));
	EXPECT_NE(NULL, strstr(self->msg, "fd 7 (socket:[")) TH_LOG("%s", self->msg);
	EXPECT_NE(NULL, strstr(self->msg, "listens with a connection waiting from another process"))
		TH_LOG("%s", self->msg);
	EXPECT_EQ(0, kill(t.pid, 0));
	close(c);
	ASSERT_EQ(0, target_send(&t, "q"));
	target_end(&t);

	/* The target waits on the test's. */
	len = abstract_name(&sa, "t", getpid());
	l = socket(AF_UNIX, SOCK_STREAM, 0);
	ASSERT_EQ(0, bind(l, (struct sockaddr *)&sa, len));
	ASSERT_EQ(0, listen(l, 4));
	ASSERT_EQ(0, target_start(&u, dialing_target));
	ASSERT_EQ(0, target_ask(&u, "s", buf, sizeof(buf)));
	EXPECT_EQ(-EOPNOTSUPP, ckpt_checkpoint_to(u.pid, self->image, 0, self->msg,
						  sizeof(self->msg), NULL));
	EXPECT_NE(NULL, strstr(self->msg, "fd 7 (socket:[")) TH_LOG("%s", self->msg);
	EXPECT_NE(NULL, strstr(self->msg, "waits to be accepted by a listening socket of another process"))
		TH_LOG("%s", self->msg);
	EXPECT_EQ(0, kill(u.pid, 0));
	ASSERT_EQ(0, target_send(&u, "q"));
	target_end(&u);
	close(l);
}

/* @target's checkpoint fails with EOPNOTSUPP, naming @words; it runs on. */
static void refused(struct __test_metadata *_metadata,
		    FIXTURE_DATA(fds) *self, void (*target)(void),
		    const char *words)
{
	struct target t = {};
	char buf[16];

	ASSERT_EQ(0, target_start(&t, target));
	ASSERT_EQ(0, target_ask(&t, "s", buf, sizeof(buf)));
	EXPECT_EQ(-EOPNOTSUPP, ckpt_checkpoint_to(t.pid, self->image, 0, self->msg,
						  sizeof(self->msg), NULL));
	EXPECT_NE(NULL, strstr(self->msg, words)) TH_LOG("%s", self->msg);
	EXPECT_EQ(0, kill(t.pid, 0));
	ASSERT_EQ(0, target_send(&t, "q"));
	target_end(&t);
}

TEST_F(fds, a_unix_socket_connected_to_another_process_is_refused)
{
	CKPT_SETUP_SKIPPED();
	refused(_metadata, self, shared_usock_target,
		"is connected to, or open in, another process");
}

/*
 * How many of @image's TCP sections are connections in @state whose FIN
 * flags are exactly @fin; -1 if the image cannot be read.
 */
static int tcp_ends(const char *image, __u32 state, __u32 fin)
{
	const __u32 both = CKPT_TCP_FIN_OUT | CKPT_TCP_FIN_IN;
	int fd = open(image, O_RDONLY | O_CLOEXEC), n = 0;
	struct ckpt_img_tcp t;
	struct ckpt_sect s;
	off_t at = 0;

	if (fd < 0)
		return -1;
	while (pread(fd, &s, sizeof(s), at) == sizeof(s)) {
		if (s.type == CKPT_SECT_TCP && s.len >= sizeof(t) &&
		    pread(fd, &t, sizeof(t), at + sizeof(s)) == sizeof(t) &&
		    t.state == state && (t.flags & both) == fin)
			n++;
		at += sizeof(s) + s.len + (-s.len & 7);
	}
	close(fd);
	return n;
}

/*
 * Whether @image has a WAITING TCP section holding exactly @bytes: 1 or 0;
 * -1 if the image cannot be read.
 */
static int tcp_waiting_bytes(const char *image, const char *bytes)
{
	int fd = open(image, O_RDONLY | O_CLOEXEC), found = 0;
	size_t len = strlen(bytes);
	struct ckpt_img_tcp t;
	struct ckpt_sect s;
	char data[64];
	off_t at = 0;

	if (fd < 0)
		return -1;
	while (pread(fd, &s, sizeof(s), at) == sizeof(s)) {
		if (s.type == CKPT_SECT_TCP && s.len == sizeof(t) + len &&
		    pread(fd, &t, sizeof(t), at + sizeof(s)) == sizeof(t) &&
		    t.state == CKPT_TCP_WAITING && len < sizeof(data) &&
		    pread(fd, data, len, at + sizeof(s) + sizeof(t)) == (ssize_t)len &&
		    !memcmp(data, bytes, len))
			found = 1;
		at += sizeof(s) + s.len + (-s.len & 7);
	}
	close(fd);
	return found;
}

/*
 * A connection waiting to be accepted, its client's bytes in: captured,
 * a WAITING section after its listener's with the bytes, its client end
 * an established connection. Once accepted and half-closed (FIN_WAIT2 and
 * CLOSE_WAIT), it is captured, its two ends marked so. Its client end
 * closed, the server's end has no other end in the process: EAGAIN, named
 * (its holder closes it in moments, mostly). Once both are closed, the
 * listening socket alone is checkpointed.
 */
TEST_F(fds, a_connection_waiting_to_be_accepted_is_captured_so_is_a_half_closed_one)
{
	struct target t = {};
	char buf[16];

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, target_start(&t, pending_accept_target));
	ASSERT_EQ(0, target_ask(&t, "s", buf, sizeof(buf)));
	usleep(100000);		/* the client's bytes over the loopback */
	EXPECT_EQ(0, ckpt_checkpoint_to(t.pid, self->image, 0, self->msg,
					sizeof(self->msg), NULL)) TH_LOG("%s", self->msg);
	EXPECT_EQ(1, tcp_ends(self->image, CKPT_TCP_WAITING, 0));
	EXPECT_EQ(1, tcp_ends(self->image, CKPT_TCP_ESTABLISHED, 0));
	EXPECT_EQ(1, tcp_waiting_bytes(self->image, "hello"));
	ASSERT_EQ(0, target_ask(&t, "a", buf, sizeof(buf)));
	EXPECT_STREQ("set", buf);
	usleep(100000);		/* the FIN and its ACK over the loopback */
	EXPECT_EQ(0, ckpt_checkpoint_to(t.pid, self->image, 0, self->msg,
					sizeof(self->msg), NULL)) TH_LOG("%s", self->msg);
	/* The client's end shut down writing, the server's end its peer. */
	EXPECT_EQ(1, tcp_ends(self->image, CKPT_TCP_ESTABLISHED, CKPT_TCP_FIN_OUT));
	EXPECT_EQ(1, tcp_ends(self->image, CKPT_TCP_ESTABLISHED, CKPT_TCP_FIN_IN));
	EXPECT_EQ(0, tcp_ends(self->image, CKPT_TCP_ESTABLISHED, 0));
	EXPECT_EQ(0, tcp_ends(self->image, CKPT_TCP_WAITING, 0));
	ASSERT_EQ(0, target_ask(&t, "h", buf, sizeof(buf)));
	EXPECT_STREQ("set", buf);
	EXPECT_EQ(-EAGAIN, ckpt_checkpoint_to(t.pid, self->image, 0, self->msg,
					      sizeof(self->msg), NULL));
	EXPECT_NE(NULL, strstr(self->msg, "closed by its other end, which no member holds; try again"))
		TH_LOG("%s", self->msg);
	ASSERT_EQ(0, target_ask(&t, "c", buf, sizeof(buf)));
	EXPECT_STREQ("set", buf);
	EXPECT_EQ(0, ckpt_checkpoint_to(t.pid, self->image, 0, self->msg,
					sizeof(self->msg), NULL)) TH_LOG("%s", self->msg);
	ASSERT_EQ(0, target_send(&t, "q"));
	target_end(&t);
}

/*
 * A connection waiting to be accepted from another process: the restart
 * could not connect its other end again. Refused with EAGAIN (accepted,
 * mostly in moments, it is a connection as any), named; the process runs
 * on.
 */
TEST_F(fds, a_tcp_connection_waiting_from_another_process_is_refused_for_now)
{
	struct target t = {};
	char buf[16];

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, target_start(&t, waiting_from_another_target));
	ASSERT_EQ(0, target_ask(&t, "s", buf, sizeof(buf)));
	usleep(100000);		/* the handshake's last ACK over the loopback */
	EXPECT_EQ(-EAGAIN, ckpt_checkpoint_to(t.pid, self->image, 0, self->msg,
					      sizeof(self->msg), NULL));
	EXPECT_NE(NULL, strstr(self->msg, "waiting to be accepted, whose other end is another process's"))
		TH_LOG("%s", self->msg);
	EXPECT_NE(NULL, strstr(self->msg, "fd 3 (socket:")) TH_LOG("%s", self->msg);
	EXPECT_EQ(0, kill(t.pid, 0));
	ASSERT_EQ(0, target_send(&t, "q"));
	target_end(&t);
}

/*
 * The same connection, waiting with its bytes, through a checkpoint with
 * --kill and a restart of the process alone: connected again, it waits
 * again, and accept() finds the bytes.
 */
TEST_F(fds, a_tcp_connection_waiting_to_be_accepted_comes_back_waiting)
{
	struct target t = {};
	char buf[16];

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, target_start(&t, pending_accept_target));
	ASSERT_EQ(0, target_ask(&t, "s", buf, sizeof(buf)));
	usleep(100000);		/* the client's bytes over the loopback */
	ASSERT_EQ(0, target_cycle(&t, t.pid, self->image, self->msg,
				  sizeof(self->msg))) TH_LOG("%s", self->msg);
	EXPECT_EQ(1, tcp_ends(self->image, CKPT_TCP_WAITING, 0));
	ASSERT_EQ(0, target_ask(&t, "r", buf, sizeof(buf)));
	EXPECT_STREQ("hello", buf);
	ASSERT_EQ(0, target_send(&t, "q"));
	EXPECT_EQ(0, target_end(&t));
}

TEST_F(fds, a_pipe_shared_with_another_process_is_refused)
{
	CKPT_SETUP_SKIPPED();
	refused(_metadata, self, shared_pipe_target, "end open in another process");
}

TEST_F(fds, descriptors_the_restarter_inherited_stay_out)
{
	struct target t = {};
	char buf[32];
	int stray;

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, target_start(&t, fd_count_target));
	ASSERT_EQ(0, target_ask(&t, "c", buf, sizeof(buf)));
	EXPECT_STREQ("fds 3", buf);
	ASSERT_EQ(0, ckpt_checkpoint_to(t.pid, self->image, CKPT_CHECKPOINT_KILL,
					self->msg, sizeof(self->msg), NULL))
		TH_LOG("%s", self->msg);
	target_end(&t);
	/* Not close-on-exec: ckpt restart gets it, the process must not. */
	stray = open("/dev/null", O_RDONLY);
	ASSERT_LE(0, stray);
	ASSERT_EQ(0, target_restart(&t, self->image));
	close(stray);
	ASSERT_EQ(0, target_ask(&t, "c", buf, sizeof(buf)));
	EXPECT_STREQ("fds 3", buf);
	ASSERT_EQ(0, target_send(&t, "q"));
	EXPECT_EQ(0, target_end(&t));
}

TEST_F(fds, dup_ed_descriptors_share_one_open_file)
{
	char buf[256], cmd[128];
	struct target t = {};
	pid_t pid;
	FILE *f;
	int cycle, shared = 0;

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, target_start(&t, dup_target));
	pid = t.pid;
	ASSERT_EQ(0, target_ask(&t, "s", buf, sizeof(buf)));
	ASSERT_STREQ("set", buf);
	/* Twice: a restarted process's copies are copies again. */
	for (cycle = 0; cycle < 2; cycle++) {
		ASSERT_EQ(0, target_cycle(&t, pid, self->image, self->msg,
					  sizeof(self->msg))) TH_LOG("%s", self->msg);
		ASSERT_EQ(0, target_ask(&t, "s", buf, sizeof(buf)));
		ASSERT_STREQ("set", buf);
	}
	snprintf(cmd, sizeof(cmd), "ckpt inspect '%s'", self->image);
	f = popen(cmd, "r");
	ASSERT_NE(NULL, f);
	while (fgets(buf, sizeof(buf), f)) {
		static const char *const want[] = {
			"  fd 3 at 2 flags 02 /tmp/cr_fds.dup.%d\n",
			"  fd 4 shares fd 3 flags 02 /tmp/cr_fds.dup.%d\n",
			"  fd 6 shares fd 5 flags 02 anon_inode:[eventfd]\n",
			"  fd 8 shares fd 7 flags 02 cloexec /memfd:m (deleted)\n",
			"  fd 10 shares fd 3 flags 02 cloexec /tmp/cr_fds.dup.%d\n",
		};
		char line[128];
		size_t k;

		for (k = 0; k < ARRAY_SIZE(want); k++) {
			snprintf(line, sizeof(line), want[k], pid);
			shared += !strcmp(buf, line);
		}
	}
	pclose(f);
	EXPECT_EQ(5, shared);
	ASSERT_EQ(0, target_ask(&t, "p", buf, sizeof(buf)));
	EXPECT_STREQ("file abcdefgh nb 1 epoll 66 ev 7 memfd 2 cloexec 0011", buf);
	ASSERT_EQ(0, target_send(&t, "q"));
	EXPECT_EQ(0, target_end(&t));
	snprintf(cmd, sizeof(cmd), "/tmp/cr_fds.dup.%d", pid);
	unlink(cmd);
}

TEST_F(fds, timerfds_keep_their_ticks_and_timers)
{
	struct target t = {};
	char buf[128];

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, target_start(&t, timerfd_target));
	ASSERT_EQ(0, target_ask(&t, "s", buf, sizeof(buf)));
	ASSERT_EQ(0, target_cycle(&t, t.pid, self->image, self->msg, sizeof(self->msg)))
		TH_LOG("%s", self->msg);
	ASSERT_EQ(0, target_ask(&t, "p", buf, sizeof(buf)));
	EXPECT_STREQ("3:1 4:1 0.500000000 1 1", buf);
	ASSERT_EQ(0, target_line(&t, buf, sizeof(buf)));
	EXPECT_STREQ("fired", buf);
	ASSERT_EQ(0, target_send(&t, "q"));
	EXPECT_EQ(0, target_end(&t));
}

TEST_HARNESS_MAIN
