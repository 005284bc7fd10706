// SPDX-License-Identifier: GPL-2.0
/*
 * TCP sockets made again (Documentation/engine.md, "TCP"), once for all
 * the members that hold them, before any member exists: listening
 * sockets and sockets neither connected nor listening first, bound as
 * they were; then every connection with TCP_REPAIR (the restarter's
 * CAP_NET_ADMIN): bound and connected to its addresses without a
 * handshake, its sequence numbers, negotiated options, queues and windows
 * as the image has them. Only once every connection of the tree exists
 * does repair end for each, so that the first segment one sends finds
 * its peer; the bytes it had not sent yet are sent then, and the stack
 * sends again what the peer had not acknowledged. A connection that
 * waited to be accepted is connected again instead, from its connecting
 * end, with a handshake (reconnect()).
 */

#define _GNU_SOURCE		/* POLLRDHUP */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "err.h"
#include "restore_int.h"
#include "treedir.h"

/* linux/tcp.h's, which netinet/tcp.h does not have on every libc. */
#ifndef TCP_REPAIR_WINDOW
#define TCP_REPAIR_WINDOW	29
#endif

struct repair_window {
	uint32_t snd_wl1, snd_wnd, max_window, rcv_wnd, rcv_wup;
};

enum { REPAIR_NO_QUEUE, REPAIR_RECV_QUEUE, REPAIR_SEND_QUEUE };

/* A socket in the making: which, and its descriptor. */
struct tcp_make {
	const struct ckpt_img_tcp *t;
	int fd;
	char name[192];		/* "socket:[INO] (A -> B)", for errors */
	struct ckpt_err *err;
	int end_err;		/* why closed connections were not ended */
};

static socklen_t sockaddr_of(const struct ckpt_img_tcp *t, bool peer,
			     struct sockaddr_storage *ss)
{
	const uint8_t *a = peer ? t->dst : t->src;
	uint16_t port = htons(peer ? t->dport : t->sport);

	memset(ss, 0, sizeof(*ss));
	if (t->family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)ss;

		in->sin_family = AF_INET;
		in->sin_port = port;
		memcpy(&in->sin_addr, a, 4);
		return sizeof(*in);
	}
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

	in6->sin6_family = AF_INET6;
	in6->sin6_port = port;
	memcpy(&in6->sin6_addr, a, 16);
	return sizeof(*in6);
}

static void name_it(struct tcp_make *m)
{
	char a[64], b[64];

	ckpt_image_tcp_end(a, sizeof(a), m->t, false);
	if (m->t->state != CKPT_TCP_ESTABLISHED &&
	    m->t->state != CKPT_TCP_CONNECTING) {
		snprintf(m->name, sizeof(m->name), "socket:[%llu] (%s)",
			 (unsigned long long)m->t->ino, a);
		return;
	}
	ckpt_image_tcp_end(b, sizeof(b), m->t, true);
	snprintf(m->name, sizeof(m->name), "socket:[%llu] (%s -> %s)",
		 (unsigned long long)m->t->ino, a, b);
}

/* setsockopt(), failing with what was set on which socket. */
static int set(struct tcp_make *m, int level, int opt, const char *what,
	       const void *val, socklen_t len)
{
	if (!setsockopt(m->fd, level, opt, val, len))
		return 0;
	return ckpt_err_set(m->err, errno, "%s: cannot set %s again: %s",
			    m->name, what, strerror(errno));
}

static int set_int(struct tcp_make *m, int level, int opt, const char *what,
		   int val)
{
	return set(m, level, opt, what, &val, sizeof(val));
}

/*
 * A buffer's size, as SO_SNDBUFFORCE and SO_RCVBUFFORCE take it (the
 * kernel doubles it, and getsockopt() reads that): the image's, or room
 * for @queued bytes if more (a queue may hold more than its buffer says,
 * and its skbs take more than their bytes).
 */
static int buffer_size(uint32_t size, uint32_t queued)
{
	uint64_t room = 2ULL * queued + 65536;

	return (int)((room > size ? room : size) / 2);
}

/*
 * What must be set before bind() (address reuse, IPv6 only) and the
 * buffer sizes: a size the user set is set again, and one whose queue
 * must fit again is made large enough until the queues are in.
 */
static int early_options(struct tcp_make *m)
{
	const struct ckpt_img_tcp *t = m->t;
	uint32_t sendq = t->write_seq - t->snd_una;
	uint32_t recvq = t->rcv_nxt - t->copied_seq;
	int ret = 0;

	if (t->flags & CKPT_TCP_REUSEADDR)
		ret = set_int(m, SOL_SOCKET, SO_REUSEADDR, "SO_REUSEADDR", 1);
	if (!ret && t->flags & CKPT_TCP_REUSEPORT)
		ret = set_int(m, SOL_SOCKET, SO_REUSEPORT, "SO_REUSEPORT", 1);
	if (!ret && t->family == AF_INET6)
		ret = set_int(m, IPPROTO_IPV6, IPV6_V6ONLY, "IPV6_V6ONLY",
			      !!(t->flags & CKPT_TCP_V6ONLY));
	if (!ret && (t->flags & CKPT_TCP_SNDBUF || sendq))
		ret = set_int(m, SOL_SOCKET, SO_SNDBUFFORCE, "SO_SNDBUF",
			      buffer_size(t->sndbuf, sendq));
	if (!ret && (t->flags & CKPT_TCP_RCVBUF || recvq))
		ret = set_int(m, SOL_SOCKET, SO_RCVBUFFORCE, "SO_RCVBUF",
			      buffer_size(t->rcvbuf, recvq));
	return ret;
}

/* What is set once the socket exists as it did: keepalive, Nagle. */
static int late_options(struct tcp_make *m)
{
	const struct ckpt_img_tcp *t = m->t;
	int ret = 0;

	if (t->flags & CKPT_TCP_KEEPALIVE)
		ret = set_int(m, SOL_SOCKET, SO_KEEPALIVE, "SO_KEEPALIVE", 1);
	/* Leaving repair mode cleared it. */
	if (!ret && t->flags & CKPT_TCP_REUSEADDR)
		ret = set_int(m, SOL_SOCKET, SO_REUSEADDR, "SO_REUSEADDR", 1);
	if (!ret && t->keepidle)
		ret = set_int(m, IPPROTO_TCP, TCP_KEEPIDLE, "TCP_KEEPIDLE",
			      t->keepidle);
	if (!ret && t->keepintvl)
		ret = set_int(m, IPPROTO_TCP, TCP_KEEPINTVL, "TCP_KEEPINTVL",
			      t->keepintvl);
	if (!ret && t->keepcnt)
		ret = set_int(m, IPPROTO_TCP, TCP_KEEPCNT, "TCP_KEEPCNT",
			      t->keepcnt);
	if (!ret && t->flags & CKPT_TCP_NODELAY)
		ret = set_int(m, IPPROTO_TCP, TCP_NODELAY, "TCP_NODELAY", 1);
	if (!ret && t->flags & CKPT_TCP_CORK)
		ret = set_int(m, IPPROTO_TCP, TCP_CORK, "TCP_CORK", 1);
	/* Once the queues are in, the sizes the user set. */
	if (!ret && t->flags & CKPT_TCP_SNDBUF)
		ret = set_int(m, SOL_SOCKET, SO_SNDBUFFORCE, "SO_SNDBUF",
			      t->sndbuf / 2);
	if (!ret && t->flags & CKPT_TCP_RCVBUF)
		ret = set_int(m, SOL_SOCKET, SO_RCVBUFFORCE, "SO_RCVBUF",
			      t->rcvbuf / 2);
	if (!ret && t->flags & CKPT_TCP_SHUT_RD && shutdown(m->fd, SHUT_RD))
		ret = ckpt_err_set(m->err, errno, "%s: cannot shut it down for reading again: %s",
				   m->name, strerror(errno));
	return ret;
}

/*
 * Whether a bind (@bind) or a connect that failed with @err may go
 * through once the original's closed connections in @m's way are ended
 * (timewait.c): it failed for the first time, on an address in use, and
 * some were ended. errno stays @err.
 */
static bool again(struct tcp_make *m, bool bind, int err, int *tries)
{
	int ret;

	if ((err != EADDRINUSE && err != EADDRNOTAVAIL) || (*tries)++)
		return false;
	ret = restore_end_time_wait(m->t, bind);
	if (ret < 0)
		m->end_err = -ret;
	errno = err;	/* the error to tell, if it fails again */
	return ret > 0;
}

/*
 * A bind, listen or connect (@what, a bind if @bind) that failed with
 * errno, told; an address in use, with what holds it.
 */
static int cannot(struct tcp_make *m, const char *what, bool bind)
{
	char holder[192] = "";
	int e = errno;

	if (e == EADDRINUSE && m->end_err)
		return ckpt_err_set(m->err, e, "%s: cannot %s again: %s (the closed connections in its way could not be ended: %s)",
				    m->name, what, strerror(e), strerror(m->end_err));
	if (e == EADDRINUSE)
		restore_port_holder(m->t, bind, holder, sizeof(holder));
	if (holder[0])
		return ckpt_err_set(m->err, e, "%s: cannot %s again: %s (%s)",
				    m->name, what, strerror(e), holder);
	return ckpt_err_set(m->err, e, "%s: cannot %s again: %s", m->name, what,
			    strerror(e));
}

/*
 * A connection's bind, in repair mode, which forces the port's reuse: a
 * refusal is not expected, but is met as bind_listen() meets it.
 */
static int bind_again(struct tcp_make *m)
{
	struct sockaddr_storage ss;
	socklen_t len = sockaddr_of(m->t, false, &ss);
	int tries = 0;

	while (bind(m->fd, (struct sockaddr *)&ss, len))
		if (!again(m, true, errno, &tries))
			return cannot(m, "bind to its address", true);
	return 0;
}

/*
 * A socket that connects later, bound to its address and port as a
 * connection is: in repair mode, which forces the port's reuse, then out
 * of it again.
 */
static int bind_repaired(struct tcp_make *m)
{
	int ret;

	ret = set_int(m, IPPROTO_TCP, TCP_REPAIR, "TCP_REPAIR (the restarter needs CAP_NET_ADMIN)", 1);
	if (!ret)
		ret = bind_again(m);
	return ret ?: set_int(m, IPPROTO_TCP, TCP_REPAIR, "TCP_REPAIR off", 0);
}

/* bind() and, a listening socket, listen() as the image says. */
static int bind_listen(struct tcp_make *m)
{
	const struct ckpt_img_tcp *t = m->t;
	struct sockaddr_storage ss;
	socklen_t len = sockaddr_of(t, false, &ss);
	bool bound = false;
	int tries = 0;

	for (;;) {
		if (!bound && !bind(m->fd, (struct sockaddr *)&ss, len))
			bound = true;
		if (bound && (t->state != CKPT_TCP_LISTEN ||
			      !listen(m->fd, t->backlog)))
			return 0;
		if (!again(m, true, errno, &tries))
			break;
	}
	return cannot(m, bound ? "listen" : "bind to its address", true);
}

/*
 * A listening socket, or one neither listening nor connected. It binds
 * and listens with SO_REUSEADDR, as a server started again does, then
 * takes the image's.
 */
static int make_plain(struct tcp_make *m)
{
	const struct ckpt_img_tcp *t = m->t;
	bool bound = t->state == CKPT_TCP_LISTEN || t->flags & CKPT_TCP_BOUND;
	int ret;

	ret = early_options(m);
	if (!ret && bound)
		ret = set_int(m, SOL_SOCKET, SO_REUSEADDR, "SO_REUSEADDR", 1);
	if (!ret && bound)
		ret = bind_listen(m);
	if (!ret && bound && !(t->flags & CKPT_TCP_REUSEADDR))
		ret = set_int(m, SOL_SOCKET, SO_REUSEADDR, "SO_REUSEADDR", 0);
	return ret ?: late_options(m);
}

/*
 * A socket whose connect() was under way, bound to its address and port
 * again (in repair mode, which forces the port's reuse, as a connection's
 * bind); connect_again() sends its SYN once every socket exists.
 */
static int make_connecting(struct tcp_make *m)
{
	return early_options(m) ?: bind_repaired(m) ?: late_options(m);
}

/*
 * Its connect() again, not waiting: to the same address and port (through
 * the job's address map), as the process had asked. One that fails at
 * once (no route to the address any more) leaves the socket unconnected,
 * as the process would have found it, and is told, not fatal.
 */
static void connect_again(struct tcp_make *m, const struct ckpt_restore_opts *o)
{
	struct sockaddr_storage ss;
	socklen_t len = sockaddr_of(m->t, true, &ss);
	int fl = fcntl(m->fd, F_GETFL);

	/* Its own flags come back when it is placed at its descriptor. */
	if (fl >= 0)
		fcntl(m->fd, F_SETFL, fl | O_NONBLOCK);
	if (connect(m->fd, (struct sockaddr *)&ss, len) && errno != EINPROGRESS)
		ckpt_notef(o, "%s: its connect again failed: %s", m->name,
			   strerror(errno));
}

/*
 * The connecting end of connection @w, which waited to be accepted: bound
 * as a connection is (repair mode forces the port's reuse), out of repair
 * again, its send buffer large enough for every byte reconnect() sends
 * before anyone reads. Its receive queue was empty: its peer had not
 * been accepted.
 */
static int make_reconnecting(struct tcp_make *m, const struct ckpt_img_tcp *w)
{
	const struct ckpt_img_tcp *t = m->t;
	uint32_t bytes = (w->rcv_nxt - w->copied_seq) + (t->write_seq - t->snd_una);
	int ret;

	if (t->rcv_nxt != t->copied_seq || t->flags & CKPT_TCP_FIN_IN ||
	    w->rcv_nxt - t->snd_una > t->write_seq - t->snd_una)
		return ckpt_err_set(m->err, EBADMSG, "%s: its other end waited to be accepted, but the two ends' sequence numbers do not join",
				    m->name);
	ret = early_options(m);
	if (!ret)
		ret = set_int(m, SOL_SOCKET, SO_SNDBUFFORCE, "SO_SNDBUF",
			      buffer_size(t->sndbuf, bytes));
	return ret ?: bind_repaired(m);
}

/* @len bytes of @data sent through @m, waiting for room 10 s at most. */
static int send_all(struct tcp_make *m, const uint8_t *data, uint32_t len)
{
	struct pollfd pfd = { .fd = m->fd, .events = POLLOUT };
	int waits = 0;
	ssize_t n;

	while (len) {
		n = send(m->fd, data, len, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN && waits++ < 100) {
			poll(&pfd, 1, 100);
			continue;
		}
		if (n <= 0)
			return ckpt_err_set(m->err, n ? errno : EIO, "%s: cannot send its %u bytes again: %s",
					    m->name, len, n ? strerror(errno) : "short write");
		data += n;
		len -= n;
	}
	return 0;
}

/*
 * The last of a connection made again: the bytes it had not sent (or, made
 * anew, not had acknowledged), its FIN again if it had shut down writing
 * (ckpt_image.h), then the options set once it exists.
 */
static int send_rest(struct tcp_make *m, const uint8_t *data, uint32_t len)
{
	int ret = send_all(m, data, len);

	if (!ret && m->t->flags & CKPT_TCP_FIN_OUT && shutdown(m->fd, SHUT_WR))
		ret = ckpt_err_set(m->err, errno, "%s: cannot shut it down for writing again: %s",
				   m->name, strerror(errno));
	return ret ?: late_options(m);
}

/*
 * Connection @w waited in its listener's queue: its connecting end, @m,
 * connects again to the listener, made again (the stack's handshake, new
 * sequence numbers: neither process had seen them), and the connection
 * waits in the listener's queue again. Then, in order, the bytes @w had
 * received and those @m had not had acknowledged, and its FIN if it had
 * shut down writing. 10 s at most for the handshake.
 */
static int reconnect(struct tcp_make *m, const struct ckpt_img_tcp *w)
{
	const struct ckpt_img_tcp *t = m->t;
	struct pollfd pfd = { .fd = m->fd, .events = POLLOUT };
	uint32_t from = w->rcv_nxt - t->snd_una;
	struct sockaddr_storage ss;
	socklen_t len = sockaddr_of(t, true, &ss), elen = sizeof(int);
	int fl = fcntl(m->fd, F_GETFL), e = 0, ret, tries = 0;

	/* Its own flags come back when it is placed at its descriptor. */
	if (fl >= 0)
		fcntl(m->fd, F_SETFL, fl | O_NONBLOCK);
	while (connect(m->fd, (struct sockaddr *)&ss, len) && errno != EINPROGRESS)
		if (!again(m, false, errno, &tries))
			return cannot(m, "connect it", false);
	while ((ret = poll(&pfd, 1, 10000)) < 0 && errno == EINTR)
		;
	if (ret <= 0)
		return ckpt_err_set(m->err, ret ? errno : ETIMEDOUT, "%s: its other end waited to be accepted; connected again, no answer in 10 s",
				    m->name);
	if (getsockopt(m->fd, SOL_SOCKET, SO_ERROR, &e, &elen) || e) {
		errno = e ?: errno;
		return cannot(m, "connect it", false);
	}
	return send_all(m, w->data, w->rcv_nxt - w->copied_seq) ?:
	       send_rest(m, t->data + from, t->write_seq - t->snd_una - from);
}

/* @len bytes of @data into the repair queue @queue. */
static int fill_queue(struct tcp_make *m, int queue, const uint8_t *data,
		      uint32_t len)
{
	ssize_t n;
	int ret;

	if (!len)
		return 0;
	ret = set_int(m, IPPROTO_TCP, TCP_REPAIR_QUEUE, "its repair queue", queue);
	while (!ret && len) {
		n = send(m->fd, data, len, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return ckpt_err_set(m->err, n ? errno : EIO, "%s: cannot queue its %s bytes again (%u left): %s",
					    m->name, queue == REPAIR_RECV_QUEUE ?
					    "received" : "sent", len,
					    n ? strerror(errno) : "short write");
		data += n;
		len -= n;
	}
	return ret;
}

/*
 * The options the two ends agreed on in their handshake: set once the
 * socket is connected and before any byte is queued.
 */
static int negotiated(struct tcp_make *m)
{
	const struct ckpt_img_tcp *t = m->t;
	struct tcp_repair_opt opts[4];
	unsigned int n = 0;
	int ret;

	opts[n++] = (struct tcp_repair_opt){ TCPOPT_MAXSEG, t->mss };
	if (t->flags & CKPT_TCP_OPT_WSCALE)
		opts[n++] = (struct tcp_repair_opt){
			TCPOPT_WINDOW, t->snd_wscale | t->rcv_wscale << 16,
		};
	if (t->flags & CKPT_TCP_OPT_SACK)
		opts[n++] = (struct tcp_repair_opt){ TCPOPT_SACK_PERMITTED, 0 };
	if (t->flags & CKPT_TCP_OPT_TSTAMP)
		opts[n++] = (struct tcp_repair_opt){ TCPOPT_TIMESTAMP, 0 };
	ret = set(m, IPPROTO_TCP, TCP_REPAIR_OPTIONS, "its negotiated options",
		  opts, n * sizeof(opts[0]));
	if (!ret && t->flags & CKPT_TCP_OPT_TSTAMP)
		ret = set_int(m, IPPROTO_TCP, TCP_TIMESTAMP, "its timestamp",
			      (int)t->timestamp);
	return ret;
}

/*
 * A connection in repair mode: bound, its queues' first sequence numbers,
 * connected without a handshake, its options, its received bytes and
 * those it sent and its peer had not acknowledged, then its windows (a
 * window the kernel will not take, a receive window its queue closed,
 * is left to the stack to open again).
 */
static int make_connection(struct tcp_make *m)
{
	const struct ckpt_img_tcp *t = m->t;
	uint32_t sendq = t->write_seq - t->snd_una;
	uint32_t sent = t->snd_nxt - t->snd_una;
	struct repair_window w = {
		t->snd_wl1, t->snd_wnd, t->max_window, t->rcv_wnd, t->rcv_wup,
	};
	struct sockaddr_storage ss;
	int ret, tries = 0;
	socklen_t len;

	/*
	 * Before repair mode: SO_REUSEADDR would replace the forced reuse
	 * repair mode gives its bind (a connection shares its port with its
	 * listener, made first), and the bind fail: set again at the end.
	 */
	ret = early_options(m);
	if (!ret)
		ret = set_int(m, IPPROTO_TCP, TCP_REPAIR, "TCP_REPAIR (the restarter needs CAP_NET_ADMIN)", 1);
	if (!ret)
		ret = set_int(m, IPPROTO_TCP, TCP_REPAIR_QUEUE, "its repair queue",
			      REPAIR_RECV_QUEUE);
	if (!ret)
		ret = set_int(m, IPPROTO_TCP, TCP_QUEUE_SEQ, "its receive sequence number",
			      (int)t->copied_seq);
	if (!ret)
		ret = set_int(m, IPPROTO_TCP, TCP_REPAIR_QUEUE, "its repair queue",
			      REPAIR_SEND_QUEUE);
	if (!ret)
		ret = set_int(m, IPPROTO_TCP, TCP_QUEUE_SEQ, "its send sequence number",
			      (int)t->snd_una);
	/*
	 * The segment size is computed once, when it connects, from the MSS
	 * clamp: the peer's, given before that as TCP_MAXSEG (which takes
	 * at most 32767; TCPOPT_MSS after connecting is too late for it).
	 */
	if (!ret && t->mss)
		ret = set_int(m, IPPROTO_TCP, TCP_MAXSEG, "TCP_MAXSEG",
			      t->mss < 32767 ? (int)t->mss : 32767);
	if (!ret)
		ret = bind_again(m);
	if (ret)
		return ret;
	len = sockaddr_of(t, true, &ss);
	while (connect(m->fd, (struct sockaddr *)&ss, len))
		if (!again(m, false, errno, &tries))
			return cannot(m, "connect it", false);
	ret = negotiated(m);
	if (!ret)
		ret = fill_queue(m, REPAIR_RECV_QUEUE, t->data + sendq,
				 t->rcv_nxt - t->copied_seq);
	if (!ret)
		ret = fill_queue(m, REPAIR_SEND_QUEUE, t->data, sent);
	if (!ret && setsockopt(m->fd, IPPROTO_TCP, TCP_REPAIR_WINDOW, &w,
			       sizeof(w)) && errno != EINVAL)
		ret = ckpt_err_set(m->err, errno, "%s: cannot set its windows again: %s",
				   m->name, strerror(errno));
	return ret;
}

/*
 * Repair ends (a window probe asks the peer where it stands); the bytes
 * not sent yet are sent now, as the application had written them, and a
 * connection it had shut down for writing sends its FIN after them again
 * (ckpt_image.h): its peer, made as if it had not received it, receives
 * it now.
 */
static int end_repair(struct tcp_make *m)
{
	const struct ckpt_img_tcp *t = m->t;

	return set_int(m, IPPROTO_TCP, TCP_REPAIR, "TCP_REPAIR off", 0) ?:
	       send_rest(m, t->data + (t->snd_nxt - t->snd_una),
			 t->write_seq - t->snd_nxt);
}

/*
 * The FINs sent again (end_repair()) reach the ends that had them, @fds[@n],
 * before any process runs: one that had read the end of its stream reads
 * it again at once, as it would have. A FIN from another node may take
 * longer than the bound (40 polls of at most 50 ms): it comes when it comes.
 */
static void await_fins(struct pollfd *fds, unsigned int n)
{
	unsigned int i, left = n, rounds;

	for (i = 0; i < n; i++)
		fds[i].events = POLLRDHUP;
	for (rounds = 0; left && rounds < 40; rounds++) {
		if (poll(fds, n, 50) < 0 && errno != EINTR)
			break;
		for (i = 0; i < n; i++)
			if (fds[i].fd >= 0 && fds[i].revents) {
				fds[i].fd = -1;	/* poll() skips it from now on */
				left--;
			}
	}
}

/* The next TCP section of @imgs[0..@n) from *@img's *@k-th on, or NULL. */
static const struct ckpt_img_tcp *next_tcp(struct ckpt_image *const *imgs,
					   uint32_t n, uint32_t *img, uint32_t *k)
{
	for (; *img < n; (*img)++, *k = 0)
		if (*k < imgs[*img]->nr_tcps)
			return imgs[*img]->tcps[(*k)++];
	return NULL;
}

/*
 * The first TCP section of socket @ino (members that share it have one
 * each), not one of the connections waiting on it.
 */
static const struct ckpt_img_tcp *find_tcp(struct ckpt_image *const *imgs,
					   uint32_t n, uint64_t ino)
{
	const struct ckpt_img_tcp *t;
	uint32_t i = 0, k = 0;

	while ((t = next_tcp(imgs, n, &i, &k)))
		if (t->ino == ino && t->state != CKPT_TCP_WAITING)
			return t;
	return NULL;
}

/* Whether @w is a connection waiting to be accepted from connection @t. */
static bool waits_for(const struct ckpt_img_tcp *w, const struct ckpt_img_tcp *t)
{
	return w->state == CKPT_TCP_WAITING && t->state == CKPT_TCP_ESTABLISHED &&
	       w->family == t->family && w->sport == t->dport &&
	       w->dport == t->sport && !memcmp(w->src, t->dst, 16) &&
	       !memcmp(w->dst, t->src, 16);
}

/*
 * The connection waiting to be accepted at the other end of connection
 * @t (the first copy: members that share its listener have one each), or
 * NULL: @t is connected again anew (reconnect()).
 */
static const struct ckpt_img_tcp *find_waiting(struct ckpt_image *const *imgs,
					       uint32_t n,
					       const struct ckpt_img_tcp *t)
{
	const struct ckpt_img_tcp *w;
	uint32_t i = 0, k = 0;

	while ((w = next_tcp(imgs, n, &i, &k)))
		if (waits_for(w, t))
			return w;
	return NULL;
}

/*
 * The other end of connection @t if it waited to be accepted on another
 * node (restore_remote_waits()), or NULL.
 */
static const struct ckpt_img_tcp *remote_waiting(const struct restore_chans *c,
						 const struct ckpt_img_tcp *t)
{
	uint32_t i;

	for (i = 0; c->waits && t->state == CKPT_TCP_ESTABLISHED &&
		    i < c->waits->nr; i++)
		if (c->waits->ino[i] == t->ino)
			return c->waits->w[i];
	return NULL;
}

/* Whether listening socket @ino had connections from another node waiting. */
static bool awaits_remote(const struct restore_chans *c, uint64_t ino)
{
	uint32_t i;

	for (i = 0; c->waits && i < c->waits->nr_awaited; i++)
		if (c->waits->awaited[i] == ino)
			return true;
	return false;
}

/* The other end of connection @t if it waited to be accepted, or NULL. */
static const struct ckpt_img_tcp *waiting_end(const struct restore_chans *c,
					      const struct ckpt_img_tcp *t)
{
	return find_waiting(c->imgs, c->n, t) ?: remote_waiting(c, t);
}

/* @a, of a socket of @family, through the map: once, if it is in it. */
static void map_address(const struct ckpt_restore_opts *o, uint32_t family,
			uint8_t *a)
{
	unsigned int i, len = family == AF_INET ? 4 : 16;

	/* An IPv6 socket's IPv4-mapped address is the IPv4 address's. */
	if (family == AF_INET6 && IN6_IS_ADDR_V4MAPPED((struct in6_addr *)a)) {
		family = AF_INET;
		a += 12;
		len = 4;
	}
	for (i = 0; i < o->addrmap_len; i++)
		if (o->addrmap[i].family == (int)family &&
		    !memcmp(o->addrmap[i].from, a, len)) {
			memcpy(a, o->addrmap[i].to, len);
			return;
		}
}

/*
 * Every TCP section of @imgs (each member's copy) at the addresses of the
 * nodes the job restarts on (restore.h, addrmap): both ends of a
 * connection between nodes go through the same map, so they still meet.
 */
static void map_addresses(struct ckpt_image *const *imgs, uint32_t n,
			  const struct ckpt_restore_opts *o)
{
	uint32_t i, k;

	for (i = 0; o && o->addrmap_len && i < n; i++)
		for (k = 0; k < imgs[i]->nr_tcps; k++) {
			map_address(o, imgs[i]->tcps[k]->family, imgs[i]->tcps[k]->src);
			map_address(o, imgs[i]->tcps[k]->family, imgs[i]->tcps[k]->dst);
		}
}

/*
 * Every connection that waited to be accepted, connected again from its
 * end among @sh[0..@nr) in its listener's queue's order (the order of the
 * WAITING sections; a copy another member holds is met again, and
 * passed): accept() takes them in the order it would have.
 */
static int reconnect_all(struct ckpt_image *const *imgs, uint32_t n,
			 const struct restore_shared *sh, uint32_t nr,
			 struct tcp_make *m)
{
	const struct ckpt_img_tcp *w, *t;
	uint32_t i = 0, k = 0, a = 0, b = 0, j;
	bool *done = calloc(nr + 1, sizeof(*done));
	int ret = 0;

	if (!done)
		return ckpt_err_set(m->err, ENOMEM, "out of memory");
	while (!ret && (w = next_tcp(imgs, n, &i, &k))) {
		if (w->state != CKPT_TCP_WAITING)
			continue;
		/* Its end (check_waiting() saw it is there). */
		for (a = 0, b = 0; (t = next_tcp(imgs, n, &a, &b)) && !waits_for(w, t);)
			;
		for (j = 0; t && j < nr; j++)
			if (sh[j].kind == CKPT_FILE_TCP && sh[j].ino == t->ino)
				break;
		if (!t || j == nr || done[j])
			continue;
		done[j] = true;
		m->t = t;
		m->fd = sh[j].fd[0];
		name_it(m);
		ret = reconnect(m, find_waiting(imgs, n, t));
	}
	free(done);
	return ret;
}

/*
 * Every connection whose other end waited to be accepted on another node,
 * connected again (in the order the coordinator's join listed them).
 */
static int reconnect_remote(const struct restore_chans *c, struct tcp_make *m)
{
	const struct restore_shared *sh;
	uint32_t i;
	int ret = 0;

	for (i = 0; !ret && c->waits && i < c->waits->nr; i++) {
		sh = restore_find_shared(c->sh + c->from, *c->nr - c->from,
					 CKPT_FILE_TCP, 0, c->waits->ino[i]);
		m->t = find_tcp(c->imgs, c->n, c->waits->ino[i]);
		if (!sh || !m->t)
			continue;
		m->fd = sh->fd[0];
		name_it(m);
		ret = reconnect(m, c->waits->w[i]);
	}
	return ret;
}

/*
 * Every connection waiting to be accepted follows its listener, and its
 * connecting end is a member's (the engine refuses a checkpoint
 * otherwise): nothing made would leave one out.
 */
static int check_waiting(const struct restore_chans *c)
{
	struct ckpt_image *const *imgs = c->imgs;
	uint32_t n = c->n;
	const struct ckpt_img_tcp *w, *l;
	uint32_t i = 0, k = 0, a, b;
	char from[64];
	bool end;

	while ((w = next_tcp(imgs, n, &i, &k))) {
		if (w->state != CKPT_TCP_WAITING)
			continue;
		l = find_tcp(imgs, n, w->ino);
		for (a = 0, end = false; a < n && !end; a++)
			for (b = 0; b < imgs[a]->nr_tcps && !end; b++)
				end = waits_for(w, imgs[a]->tcps[b]);
		/* From another node: connected again from there. */
		if (l && l->state == CKPT_TCP_LISTEN && (end || awaits_remote(c, w->ino)))
			continue;
		ckpt_image_tcp_end(from, sizeof(from), w, true);
		return ckpt_err_set(c->err, EBADMSG, "socket:[%llu]: a connection from %s waiting to be accepted %s",
				    (unsigned long long)w->ino, from,
				    l && l->state == CKPT_TCP_LISTEN ?
				    "whose other end is in no image" :
				    "on no listening socket");
	}
	return 0;
}

bool restore_is_closed(uint64_t ino, const uint64_t *closed, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (closed[i] == ino)
			return true;
	return false;
}

/*
 * The inode of member @pid's TCP socket at descriptor @fd (@what for the
 * refusal): 0 with *@ino, or -EINVAL with @err.
 */
static int sock_ino(const struct ckpt_tree *t, struct ckpt_image *const *imgs,
		    const struct ckpt_restore_opts *o, int pid, int fd,
		    const char *what, uint64_t *ino, struct ckpt_err *err)
{
	uint32_t k, m;

	for (m = 0; m < t->nr && (int)t->m[m].pid != pid; m++)
		;
	for (k = 0; m < t->nr && k < imgs[m]->nr_files; k++)
		if (imgs[m]->files[k].kind == CKPT_FILE_TCP &&
		    (int)imgs[m]->files[k].fd == fd)
			break;
	if (m == t->nr || k == imgs[m]->nr_files)
		return ckpt_err_set(err, EINVAL, "%s: pid %d fd %d, %s, is no TCP socket of the tree",
				    o->image, pid, fd, what);
	*ino = imgs[m]->files[k].ino;
	return 0;
}

int restore_closed_inos(const struct ckpt_tree *t, struct ckpt_image *const *imgs,
			const struct ckpt_restore_opts *o, uint64_t *inos,
			struct ckpt_err *err)
{
	uint32_t i;
	int ret;

	for (i = 0; i < o->nr_closed; i++) {
		ret = sock_ino(t, imgs, o, o->closed[i].pid, o->closed[i].fd,
			       "a connection to outside the job", &inos[i], err);
		if (ret)
			return ret;
	}
	return i;
}

int restore_remote_waits(const struct ckpt_tree *t, struct ckpt_image *const *imgs,
			 const struct ckpt_restore_opts *o,
			 struct restore_remote_waits *out, struct ckpt_err *err)
{
	const struct ckpt_restore_reconnect *r;
	struct ckpt_img_tcp *w;
	uint32_t i;
	int ret = 0;

	*out = (struct restore_remote_waits){ 0 };
	out->ino = calloc(o->nr_reconnect + 1, sizeof(*out->ino));
	out->w = calloc(o->nr_reconnect + 1, sizeof(*out->w));
	out->awaited = calloc(o->nr_awaited + 1, sizeof(*out->awaited));
	if (!out->ino || !out->w || !out->awaited)
		ret = ckpt_err_set(err, ENOMEM, "out of memory");
	for (i = 0; !ret && i < o->nr_awaited; i++, out->nr_awaited++)
		ret = sock_ino(t, imgs, o, o->awaited[i].pid, o->awaited[i].fd,
			       "a listening socket connections from another node waited on",
			       &out->awaited[i], err);
	for (i = 0; !ret && i < o->nr_reconnect; i++) {
		r = &o->reconnect[i];
		ret = sock_ino(t, imgs, o, r->pid, r->fd,
			       "a connection to connect again", &out->ino[i], err);
		w = ret ? NULL : calloc(1, sizeof(*w) + r->len);
		if (!ret && !w)
			ret = ckpt_err_set(err, ENOMEM, "out of memory");
		if (ret)
			break;
		/* Its other end's WAITING section, as far as reconnect() reads it. */
		w->state = CKPT_TCP_WAITING;
		w->rcv_nxt = r->seq;
		w->copied_seq = r->seq - r->len;
		w->len = r->len;
		memcpy(w->data, r->data, r->len);
		out->w[out->nr++] = w;
	}
	if (ret)
		restore_remote_waits_free(out);
	return ret;
}

void restore_remote_waits_free(struct restore_remote_waits *w)
{
	uint32_t i;

	for (i = 0; w->w && i < w->nr; i++)
		free(w->w[i]);
	free(w->w);
	free(w->ino);
	free(w->awaited);
	*w = (struct restore_remote_waits){ 0 };
}

/*
 * Channel kind TCP's first step (channel.c): every socket of @c made, each
 * once, listening ones and those neither connected nor listening first;
 * every connection in repair mode, sending nothing.
 */
static int tcp_make(struct restore_chans *c)
{
	struct ckpt_image *const *imgs = c->imgs;
	struct tcp_make m = { .err = c->err };
	const struct ckpt_img_tcp *w;
	uint32_t i, k, pass, n = c->n;
	int ret;

	map_addresses(imgs, n, c->o);
	ret = check_waiting(c);
	if (ret)
		return ret;
	/* Nothing of the original in the way of any, before one is made. */
	restore_end_closed(imgs, n, c->closed, c->nr_closed);

	/* Listening and plain sockets first: connections share their ports. */
	for (pass = 0; pass < 2 && !ret; pass++) {
		for (i = 0, k = 0; !ret && (m.t = next_tcp(imgs, n, &i, &k));) {
			if ((m.t->state == CKPT_TCP_ESTABLISHED) != pass ||
			    m.t->state == CKPT_TCP_WAITING ||
			    restore_find_shared(c->sh, *c->nr, CKPT_FILE_TCP, 0, m.t->ino))
				continue;
			name_it(&m);
			m.fd = socket(m.t->family, SOCK_STREAM | SOCK_CLOEXEC,
				      IPPROTO_TCP);
			if (m.fd < 0)
				return ckpt_err_set(c->err, errno, "%s: cannot make a socket: %s",
						    m.name, strerror(errno));
			c->sh[(*c->nr)++] = (struct restore_shared){
				.kind = CKPT_FILE_TCP, .ino = m.t->ino,
				.fd = { m.fd, -1 },
			};
			/* To outside the job: closed, with nothing to make. */
			if (pass && restore_is_closed(m.t->ino, c->closed, c->nr_closed))
				continue;
			w = pass ? waiting_end(c, m.t) : NULL;
			ret = w ? make_reconnecting(&m, w) :
			      pass ? make_connection(&m) :
			      m.t->state == CKPT_TCP_CONNECTING ? make_connecting(&m) :
			      make_plain(&m);
		}
	}
	return ret;
}

/*
 * Its second step, once every channel of the job exists, on every node:
 * each connection may talk to its peer. A connect under way is made again,
 * a connection that waited to be accepted connected anew, and repair ends
 * for the others, which send what they had not.
 */
static int tcp_talk(struct restore_chans *c)
{
	struct ckpt_image *const *imgs = c->imgs;
	struct restore_shared *sh = c->sh;
	struct tcp_make m = { .err = c->err };
	uint32_t i, n = c->n, nr = *c->nr;
	unsigned int nr_fins = 0;
	struct pollfd *fins;
	int ret;

	fins = calloc(nr - c->from + 1, sizeof(*fins));
	if (!fins)
		return ckpt_err_set(c->err, ENOMEM, "out of memory");
	ret = reconnect_all(imgs, n, sh + c->from, nr - c->from, &m) ?:
	      reconnect_remote(c, &m);
	for (i = c->from; !ret && i < nr; i++) {
		m.t = sh[i].kind == CKPT_FILE_TCP ? find_tcp(imgs, n, sh[i].ino) : NULL;
		if (!m.t || restore_is_closed(m.t->ino, c->closed, c->nr_closed))
			continue;
		name_it(&m);
		m.fd = sh[i].fd[0];
		/* Every listening socket of the job exists, on every node. */
		if (m.t->state == CKPT_TCP_CONNECTING)
			connect_again(&m, c->o);
		if (m.t->state != CKPT_TCP_ESTABLISHED || waiting_end(c, m.t))
			continue;
		ret = end_repair(&m);
		if (m.t->flags & CKPT_TCP_FIN_IN)
			fins[nr_fins++].fd = m.fd;
	}
	if (!ret)
		await_fins(fins, nr_fins);
	free(fins);
	return ret;
}

const struct restore_channel restore_channel_tcp = {
	.name = "TCP",
	.make = tcp_make,
	.talk = tcp_talk,
};
