// SPDX-License-Identifier: GPL-2.0
/*
 * The job's own link between ckpt-ssh and the remote command
 * (Documentation/ckptd.md, "The job's own link"). ssh's connection ends
 * in sshd, which is no process of the job: a checkpoint would find it and
 * refuse. So ssh only starts ckpt-join; ckpt-join connects back to
 * ckpt-ssh over TCP, proves it is the one ssh started (a token ckpt-ssh
 * gave it on ssh's standard input), and leaves a relay of the job's in
 * its place while it and ssh end. The remote command's standard input,
 * output and error and its exit status travel as frames over that one
 * connection, both of whose ends are the job's: checkpointed and
 * restarted like any connection between two nodes' shares.
 *
 * A frame: its type (1 byte), 3 bytes 0, its length (4 bytes, little
 * endian, at most LINK_FRAME_MAX), the bytes. Anything else ends the link.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "link.h"

#define LINK_FRAME_MAX	65536

enum {
	LINK_STDIN,		/* bytes for the command's standard input */
	LINK_STDOUT,		/* of its standard output */
	LINK_STDERR,		/* of its standard error */
	LINK_STDIN_EOF,		/* its standard input ends */
	LINK_EXIT,		/* its wait status, 4 bytes, little endian */
};

/* All of @len bytes written (@out) or read: 0, or -1 (an end, an error). */
static int io_all(int fd, void *buf, size_t len, bool out)
{
	struct pollfd pfd = { .fd = fd, .events = POLLOUT };
	char *p = buf;
	ssize_t n;

	while (len) {
		n = out ? write(fd, p, len) : read(fd, p, len);
		if (n < 0 && out && errno == EAGAIN) {
			poll(&pfd, 1, -1);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

static int write_all(int fd, const void *buf, size_t len)
{
	return io_all(fd, (void *)buf, len, true);
}

static int read_all(int fd, void *buf, size_t len)
{
	return io_all(fd, buf, len, false);
}

static int send_frame(int link, int type, const void *buf, uint32_t len)
{
	uint8_t h[8] = { type, 0, 0, 0, len, len >> 8, len >> 16, len >> 24 };

	return write_all(link, h, sizeof(h)) || write_all(link, buf, len) ? -1 : 0;
}

/* One frame into @buf (LINK_FRAME_MAX bytes): its type, or -1. */
static int recv_frame(int link, void *buf, uint32_t *len)
{
	uint8_t h[8];

	if (read_all(link, h, sizeof(h)) || h[1] || h[2] || h[3])
		return -1;
	*len = h[4] | h[5] << 8 | h[6] << 16 | (uint32_t)h[7] << 24;
	if (*len > LINK_FRAME_MAX || h[0] > LINK_EXIT ||
	    (h[0] == LINK_EXIT && *len != 4) || read_all(link, buf, *len))
		return -1;
	return h[0];
}

int link_token(char token[LINK_TOKEN_LEN + 1])
{
	unsigned char b[LINK_TOKEN_LEN / 2];
	size_t i;

	if (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b))
		return -1;
	for (i = 0; i < sizeof(b); i++)
		sprintf(token + 2 * i, "%02x", b[i]);
	return 0;
}

int link_listen(unsigned int *port)
{
	struct sockaddr_storage ss = {};
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
	socklen_t len = sizeof(*a6);
	int fd, off = 0;

	/* Both families where IPv6 is there, IPv4 alone where it is not. */
	a6->sin6_family = AF_INET6;
	fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
	if (fd < 0) {
		ss.ss_family = AF_INET;
		len = sizeof(struct sockaddr_in);
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	}
	if (fd < 0 || bind(fd, (struct sockaddr *)&ss, len) || listen(fd, 8) ||
	    getsockname(fd, (struct sockaddr *)&ss, &len)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	*port = ntohs(ss.ss_family == AF_INET6 ? a6->sin6_port :
		      ((struct sockaddr_in *)&ss)->sin_port);
	return fd;
}

/* The token from @fd within @ms: 0 if it is @token. */
static int check_token(int fd, const char *token, int ms)
{
	char got[LINK_TOKEN_LEN];
	struct timeval tv = { ms / 1000, ms % 1000 * 1000 };
	unsigned char diff = 0;
	size_t i;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (read_all(fd, got, sizeof(got)))
		return -1;
	for (i = 0; i < sizeof(got); i++)
		diff |= got[i] ^ token[i];
	tv.tv_sec = tv.tv_usec = 0;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return diff ? -1 : 0;
}

int link_accept(int l, const char *token, pid_t ssh, int *ssh_status)
{
	struct pollfd pfd = { .fd = l, .events = POLLIN };
	time_t end = time(NULL) + LINK_WAIT_S;
	int fd, tries = 0;
	bool ended = false;

	while (time(NULL) < end && tries < 16) {
		/*
		 * ssh may end as soon as the remote side has connected: a
		 * connection waiting counts first. ssh ended with none: the
		 * remote side failed, and said why.
		 */
		if (!ended) {
			pid_t w = waitpid(ssh, ssh_status, WNOHANG);

			/* (ECHILD: SIGCHLD ignored, the child reaped unseen.) */
			ended = w == ssh || (w < 0 && errno == ECHILD);
		}
		if (poll(&pfd, 1, ended ? 0 : 200) <= 0) {
			if (ended)
				return -ECHILD;
			continue;
		}
		fd = accept4(l, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		tries++;
		if (!check_token(fd, token, 10000))
			return fd;
		close(fd);	/* someone else's: not ours to serve */
	}
	return -ETIMEDOUT;
}

int link_connect(const char *node, const char *port, const char *token)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res, *ai;
	int fd = -1;

	if (getaddrinfo(node, port, &hints, &res))
		return -1;
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
			    ai->ai_protocol);
		if (fd >= 0 && !connect(fd, ai->ai_addr, ai->ai_addrlen))
			break;
		if (fd >= 0)
			close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd >= 0 && write_all(fd, token, LINK_TOKEN_LEN)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* A wait status as the exit status of a command that ended so (ssh's way). */
static int exit_code(int st)
{
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/*
 * One way of the link from ckpt-ssh: its standard input as frames, until
 * it ends (LINK_STDIN_EOF) or the link takes no more. A process of its
 * own, so that a writer blocked on one way never holds up the other.
 */
static pid_t stdin_pump(int link)
{
	static char buf[LINK_FRAME_MAX];
	pid_t pid = fork();
	ssize_t n;

	if (pid)
		return pid;
	for (;;) {
		n = read(0, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			send_frame(link, LINK_STDIN_EOF, buf, 0);
			_exit(0);
		}
		if (send_frame(link, LINK_STDIN, buf, n))
			_exit(0);	/* the remote side takes no more */
	}
}

int link_local(int link)
{
	static char buf[LINK_FRAME_MAX];
	int type, ret = 255;
	uint32_t len;
	pid_t pump;

	signal(SIGPIPE, SIG_IGN);
	pump = stdin_pump(link);
	for (;;) {
		type = recv_frame(link, buf, &len);
		if (type == LINK_EXIT) {
			ret = exit_code((buf[0] & 0xff) | (buf[1] & 0xff) << 8 |
					(buf[2] & 0xff) << 16 | (buf[3] & 0xff) << 24);
			break;
		}
		if (type != LINK_STDOUT && type != LINK_STDERR)
			break;
		write_all(type == LINK_STDOUT ? 1 : 2, buf, len);
	}
	if (pump > 0) {
		kill(pump, SIGKILL);
		waitpid(pump, NULL, 0);
	}
	if (ret == 255)
		fprintf(stderr, "%s: the link to the remote command ended before it did\n",
			prog);
	return ret;
}

/*
 * The relay's other way: frames from ckpt-ssh into the command's standard
 * input (@in), in a process of its own. When the link ends first
 * (ckpt-ssh is gone), the command's process group is hung up, as sshd
 * does.
 */
static pid_t stdin_feeder(int link, pid_t child, int in)
{
	static char buf[LINK_FRAME_MAX];
	pid_t pid = fork();
	uint32_t len;
	int type;

	if (pid)
		return pid;
	for (;;) {
		type = recv_frame(link, buf, &len);
		if (type == LINK_STDIN && in >= 0) {
			if (write_all(in, buf, len)) {
				close(in);	/* the command reads no more */
				in = -1;
			}
		} else if (type == LINK_STDIN_EOF && in >= 0) {
			close(in);
			in = -1;
		} else if (type != LINK_STDIN && type != LINK_STDIN_EOF) {
			kill(-child, SIGHUP);
			_exit(0);
		}
	}
}

int link_remote(int link, pid_t child, int in, int out, int err)
{
	static char buf[LINK_FRAME_MAX];
	struct pollfd pfd[2] = {
		{ .fd = out, .events = POLLIN }, { .fd = err, .events = POLLIN },
	};
	bool linked = true;
	pid_t feeder;
	ssize_t n;
	int i, st;
	uint8_t s[4];

	signal(SIGPIPE, SIG_IGN);
	feeder = stdin_feeder(link, child, in);
	close(in);
	while (pfd[0].fd >= 0 || pfd[1].fd >= 0) {
		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (i = 0; i < 2; i++) {
			if (!pfd[i].revents)
				continue;
			n = read(pfd[i].fd, buf, sizeof(buf));
			if (n < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (n <= 0) {
				close(pfd[i].fd);
				pfd[i].fd = -1;
			} else if (linked && send_frame(link, i ? LINK_STDERR : LINK_STDOUT,
							buf, n)) {
				linked = false;	/* ckpt-ssh is gone: hang up */
				kill(-child, SIGHUP);
			}
		}
	}
	while (waitpid(child, &st, 0) < 0 && errno == EINTR)
		;
	if (feeder > 0) {
		kill(feeder, SIGKILL);
		waitpid(feeder, NULL, 0);
	}
	s[0] = st;
	s[1] = st >> 8;
	s[2] = st >> 16;
	s[3] = st >> 24;
	/*
	 * The status, then an orderly end: what ckpt-ssh still sends is read
	 * and dropped (5 s at most), as closing with bytes unread would
	 * reset the connection and lose the status on its way.
	 */
	if (linked && !send_frame(link, LINK_EXIT, s, sizeof(s)) &&
	    !shutdown(link, SHUT_WR)) {
		struct timeval tv = { 5, 0 };

		setsockopt(link, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		while (read(link, buf, sizeof(buf)) > 0)
			;
	}
	return exit_code(st);
}
