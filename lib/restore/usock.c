// SPDX-License-Identifier: GPL-2.0
/*
 * UNIX sockets again (engine.md, "UNIX socket pairs" and "UNIX sockets
 * with names"), made by the restarter for a tree's members, or by a single
 * process for itself, before they take their descriptors: pairs
 * (socketpair(), each end's queue sent again from the other), listening
 * sockets bound to their names with the connections that waited on them,
 * and sockets with names or connected to nothing (UNAME sections), bound
 * again, their messages sent to them again, then connected by name.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "err.h"
#include "restore_int.h"

/*
 * What socket @ino had queued (@len bytes of @data, of a socket of @type),
 * queued again on @to's peer, sent from @to: a stream's bytes, or each
 * message (checked to fill the data exactly).
 */
static int send_queue(int to, __u64 ino, __u32 type, const __u8 *data,
		      __u32 len, struct ckpt_err *err)
{
	bool stream = type == SOCK_STREAM;
	size_t off = 0, want;
	uint32_t msg;
	ssize_t n;

	while (off < len) {
		want = len - off;
		if (!stream) {
			memcpy(&msg, data + off, sizeof(msg));
			off += sizeof(msg);
			want = msg;
		}
		n = send(to, data + off, want, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR && stream)
			continue;
		if (n < 0 || (!stream && (size_t)n != want) || (stream && !n))
			return ckpt_err_set(err, n < 0 ? errno : EIO,
					    "cannot queue what socket:[%llu] had to read (%u bytes) again: %s",
					    (unsigned long long)ino, len,
					    n < 0 ? strerror(errno) : "short write");
		off += stream ? (size_t)n : (want + 3) & ~(size_t)3;
	}
	return 0;
}

static int queue_again(int to, const struct ckpt_img_usock *u,
		       struct ckpt_err *err)
{
	return send_queue(to, u->ino, u->type, u->data, u->len, err);
}

/* A send buffer (the kernel doubles what it is given) and a shutdown. */
static void socket_state(int fd, __u32 sndbuf)
{
	int half = sndbuf / 2;

	if (half && setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &half, sizeof(half)))
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &half, sizeof(half));
}

/*
 * Its shutdowns, and SO_PASSCRED: after its queue is sent again, whose
 * messages carry no credentials (the checkpoint refuses any that did).
 */
static void socket_shutdown(int fd, __u32 how)
{
	int on = 1;

	if (how & CKPT_USOCK_SHUT_RD)
		shutdown(fd, SHUT_RD);
	if (how & CKPT_USOCK_SHUT_WR)
		shutdown(fd, SHUT_WR);
	if (how & CKPT_USOCK_PASSCRED)
		setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &on, sizeof(on));
}

/* The USOCK section of socket @ino among @imgs[0..@n), or NULL. */
static const struct ckpt_img_usock *find_usock(struct ckpt_image *const *imgs,
					       uint32_t n, __u64 ino)
{
	uint32_t i, k;

	for (i = 0; i < n; i++)
		for (k = 0; k < imgs[i]->nr_usocks; k++)
			if (imgs[i]->usocks[k]->ino == ino)
				return imgs[i]->usocks[k];
	return NULL;
}

/*
 * The pair of @a (its peer @b, NULL when closed): both ends' queues sent
 * again from the other end, their send buffers and shutdowns; entries for
 * each end in @sh.
 */
static int make_pair(const struct ckpt_img_usock *a,
		     const struct ckpt_img_usock *b, struct restore_shared *sh,
		     uint32_t *nr, struct ckpt_err *err)
{
	int sv[2], ret;

	if (b && b->type != a->type)
		return ckpt_err_set(err, EBADMSG, "socket:[%llu] and its peer are of different types",
				    (unsigned long long)a->ino);
	if (socketpair(AF_UNIX, a->type | SOCK_CLOEXEC, 0, sv))
		return ckpt_err_set(err, errno, "cannot make a socket pair for socket:[%llu]: %s",
				    (unsigned long long)a->ino, strerror(errno));
	socket_state(sv[0], a->sndbuf);
	if (b)
		socket_state(sv[1], b->sndbuf);
	ret = queue_again(sv[1], a, err);
	if (!ret && b)
		ret = queue_again(sv[0], b, err);
	if (ret) {
		close(sv[0]);
		close(sv[1]);
		return ret;
	}
	socket_shutdown(sv[0], a->shutdown);
	sh[(*nr)++] = (struct restore_shared){
		.kind = CKPT_FILE_UNIX, .ino = a->ino, .fd = { sv[0], -1 },
	};
	if (!b) {
		close(sv[1]);	/* it was closed: end-of-file after the bytes */
		return 0;
	}
	socket_shutdown(sv[1], b->shutdown);
	sh[(*nr)++] = (struct restore_shared){
		.kind = CKPT_FILE_UNIX, .ino = b->ino, .fd = { sv[1], -1 },
	};
	return 0;
}

int restore_make_usocks(struct ckpt_image *const *imgs, uint32_t n,
			struct restore_shared *sh, uint32_t *nr,
			struct ckpt_err *err)
{
	const struct ckpt_img_usock *a, *b;
	uint32_t i, k;
	int ret;

	for (i = 0; i < n; i++) {
		for (k = 0; k < imgs[i]->nr_usocks; k++) {
			a = imgs[i]->usocks[k];
			/* A client waiting: made with its listening socket. */
			if (a->peer & CKPT_UPEND_ID ||
			    restore_find_shared(sh, *nr, CKPT_FILE_UNIX, 0, a->ino))
				continue;
			b = a->peer ? find_usock(imgs, n, a->peer) : NULL;
			if (a->peer && (!b || b->peer != a->ino))
				return ckpt_err_set(err, EBADMSG, "socket:[%llu]'s peer socket:[%llu] is not in the %s",
						    (unsigned long long)a->ino,
						    (unsigned long long)a->peer,
						    n > 1 ? "tree's images" : "image");
			ret = make_pair(a, b, sh, nr, err);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/* @a as connect() and bind() take it: in @sa, its length. */
static socklen_t uaddr_sa(const struct ckpt_img_uaddr *a, struct sockaddr_un *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	memcpy(sa->sun_path, a->addr, a->len);
	return offsetof(struct sockaddr_un, sun_path) + a->len;
}

/*
 * Socket @fd (@ino's) bound to @a (@name for messages) again: a socket
 * file left at its path (by the process that had it, or an earlier
 * restart) is unlinked, and the new one given its mode again. 0 or
 * -errno with @err.
 */
static int bind_again(int fd, __u64 ino, const struct ckpt_img_uaddr *a,
		      const char *name, struct ckpt_err *err)
{
	const char *path = a->addr[0] ? (const char *)a->addr : NULL;
	struct sockaddr_un sa;
	socklen_t len = uaddr_sa(a, &sa);
	struct stat st;

	if (path && !lstat(path, &st) && S_ISSOCK(st.st_mode) &&
	    unlink(path) && errno != ENOENT)
		return ckpt_err_set(err, errno, "cannot remove the socket file left at %s: %s",
				    path, strerror(errno));
	if (bind(fd, (struct sockaddr *)&sa, len))
		return ckpt_err_set(err, errno, "cannot bind socket:[%llu] to %s again: %s%s",
				    (unsigned long long)ino, name, strerror(errno),
				    errno == EADDRINUSE ? " (another socket, or another file, has that name now)" : "");
	if (path && chmod(path, a->mode))
		return ckpt_err_set(err, errno, "cannot give %s its mode %04o: %s",
				    path, a->mode, strerror(errno));
	return 0;
}

/*
 * @l's listening socket again, made in the member's helper (its
 * file-system ids): bound to its name again, and listening.
 */
static int make_listener(struct restore *r, const void *arg,
			 struct ckpt_err *err)
{
	const struct ckpt_img_ulisten *l = arg;
	char name[CKPT_USOCK_ADDR_MAX + 2];
	int fd, ret;

	(void)r;
	ckpt_image_uaddr(name, sizeof(name), &l->name);
	fd = socket(AF_UNIX, l->type | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return ckpt_err_set(err, errno, "cannot make listening socket:[%llu]: %s",
				    (unsigned long long)l->ino, strerror(errno));
	ret = bind_again(fd, l->ino, &l->name, name, err);
	if (!ret && listen(fd, l->backlog))
		ret = ckpt_err_set(err, errno, "cannot listen on %s again: %s",
				   name, strerror(errno));
	/* What it accepts inherits it. */
	if (!ret)
		socket_shutdown(fd, l->flags & CKPT_USOCK_PASSCRED);
	if (!ret)
		return fd;
	close(fd);
	return ret;
}

int restore_make_listener(struct restore *r, const struct ckpt_img_ulisten *l,
			  struct ckpt_err *err)
{
	char name[CKPT_USOCK_ADDR_MAX + 2];

	ckpt_image_uaddr(name, sizeof(name), &l->name);
	return restore_as_member(r, make_listener, l, name, err);
}

/*
 * Waiting connection @p to @l again: a client connects to @l's name and
 * sends what it had sent; it is its USOCK's socket, or closed.
 */
static int make_waiting(const struct ckpt_img_ulisten *l,
			const struct ckpt_img_upend *p,
			struct ckpt_image *const *imgs, uint32_t n,
			struct restore_shared *sh, uint32_t *nr,
			struct ckpt_err *err)
{
	const struct ckpt_img_usock *c = NULL;
	char name[CKPT_USOCK_ADDR_MAX + 2];
	struct sockaddr_un sa;
	socklen_t len = uaddr_sa(&l->name, &sa);
	int fd, ret;

	ckpt_image_uaddr(name, sizeof(name), &l->name);
	if (p->client) {
		c = find_usock(imgs, n, p->client);
		if (!c || c->peer != p->id || c->len || c->type != p->type)
			return ckpt_err_set(err, EBADMSG, "socket:[%llu], waiting on %s, is not in the %s as it waited",
					    (unsigned long long)p->client, name,
					    n > 1 ? "tree's images" : "image");
	}
	fd = socket(AF_UNIX, p->type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return ckpt_err_set(err, errno, "cannot make a socket to wait on %s: %s",
				    name, strerror(errno));
	if (connect(fd, (struct sockaddr *)&sa, len)) {
		ret = ckpt_err_set(err, errno, "cannot connect to %s again, as socket:[%llu] waited there: %s",
				   name, (unsigned long long)p->client,
				   strerror(errno));
		close(fd);
		return ret;
	}
	ret = send_queue(fd, p->client, p->type, p->data, p->len, err);
	if (!ret && fcntl(fd, F_SETFL, 0))
		ret = ckpt_err_set(err, errno, "fcntl: %s", strerror(errno));
	if (ret || !c) {
		close(fd);	/* the client had closed it: EOF after the bytes */
		return ret;
	}
	socket_state(fd, c->sndbuf);
	socket_shutdown(fd, c->shutdown);
	sh[(*nr)++] = (struct restore_shared){
		.kind = CKPT_FILE_UNIX, .ino = c->ino, .fd = { fd, -1 },
	};
	return 0;
}

int restore_make_pending(const struct ckpt_image *holder,
			 const struct ckpt_img_ulisten *l,
			 struct ckpt_image *const *imgs, uint32_t n,
			 struct restore_shared *sh, uint32_t *nr,
			 struct ckpt_err *err)
{
	uint32_t k;
	int ret;

	for (k = 0; k < holder->nr_upends; k++) {
		if (holder->upends[k]->listener != l->ino)
			continue;
		ret = make_waiting(l, holder->upends[k], imgs, n, sh, nr, err);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * @u's socket again, made in the member's helper (its file-system ids):
 * bound to its name, its messages sent to it from a socket with no name
 * (datagrams: their senders' names are not kept); connected later
 * (restore_connect_unames()).
 */
static int make_named(struct restore *r, const void *arg,
		      struct ckpt_err *err)
{
	const struct ckpt_img_uname *u = arg;
	char name[CKPT_USOCK_ADDR_MAX + 2];
	struct sockaddr_un sa;
	socklen_t len = uaddr_sa(&u->name, &sa);
	int fd, from, ret = 0;

	(void)r;
	ckpt_image_uaddr(name, sizeof(name), &u->name);
	fd = socket(AF_UNIX, u->type | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return ckpt_err_set(err, errno, "cannot make socket:[%llu] again: %s",
				    (unsigned long long)u->ino, strerror(errno));
	socket_state(fd, u->sndbuf);
	if (u->name.len)
		ret = bind_again(fd, u->ino, &u->name, name, err);
	if (!ret && u->len) {
		/* Room for every message at once, each with its overhead. */
		from = socket(AF_UNIX, u->type | SOCK_CLOEXEC, 0);
		if (from >= 0)
			socket_state(from, 2 * (u->len + (64 << 10)));
		if (from < 0 || connect(from, (struct sockaddr *)&sa, len))
			ret = ckpt_err_set(err, errno, "cannot send socket:[%llu] its messages again at %s: %s",
					   (unsigned long long)u->ino, name,
					   strerror(errno));
		else
			ret = send_queue(from, u->ino, u->type, u->data, u->len,
					 err);
		if (from >= 0)
			close(from);
	}
	if (!ret && !u->peer.len)
		socket_shutdown(fd, u->shutdown);
	if (!ret)
		return fd;
	close(fd);
	return ret;
}

int restore_make_unames(struct restore *r, const struct ckpt_image *img,
			struct restore_shared *sh, uint32_t *nr,
			struct ckpt_err *err)
{
	char name[CKPT_USOCK_ADDR_MAX + 2];
	uint32_t k;
	int fd;

	for (k = 0; k < img->nr_unames; k++) {
		const struct ckpt_img_uname *u = img->unames[k];

		if (restore_find_shared(sh, *nr, CKPT_FILE_UNIX, 0, u->ino))
			continue;
		/*
		 * Only a name is bound as the member (and only a socket with
		 * one has messages): one with none needs no helper.
		 */
		ckpt_image_uaddr(name, sizeof(name), &u->name);
		fd = u->name.len ? restore_as_member(r, make_named, u, name, err) :
				   make_named(r, u, err);
		if (fd < 0)
			return fd;
		sh[(*nr)++] = (struct restore_shared){
			.kind = CKPT_FILE_UNIX, .ino = u->ino, .fd = { fd, -1 },
		};
	}
	return 0;
}

/* A socket made (@fd) and the UNAME it is (@u), for connect_named(). */
struct named_fd {
	const struct ckpt_img_uname *u;
	int fd;
};

/*
 * Socket @arg connected to its peer's name, in the member's helper: as
 * the member's file-system ids, so a path it may not write to refuses it
 * as it would have refused the member. The same socket, for the caller to
 * close (it has it).
 */
static int connect_named(struct restore *r, const void *arg,
			 struct ckpt_err *err)
{
	const struct named_fd *n = arg;
	char name[CKPT_USOCK_ADDR_MAX + 2];
	struct sockaddr_un sa;
	socklen_t len = uaddr_sa(&n->u->peer, &sa);

	(void)r;
	ckpt_image_uaddr(name, sizeof(name), &n->u->peer);
	if (connect(n->fd, (struct sockaddr *)&sa, len))
		return ckpt_err_set(err, errno, "cannot connect socket:[%llu] to %s again: %s",
				    (unsigned long long)n->u->ino, name,
				    strerror(errno));
	socket_shutdown(n->fd, n->u->shutdown);
	return n->fd;
}

int restore_connect_unames(struct restore *r, const struct ckpt_image *img,
			   struct restore_shared *sh, uint32_t nr,
			   struct ckpt_err *err)
{
	struct restore_shared *s;
	struct named_fd n;
	uint32_t k;
	int fd;

	for (k = 0; k < img->nr_unames; k++) {
		n.u = img->unames[k];
		if (!n.u->peer.len)
			continue;
		s = (struct restore_shared *)restore_find_shared(sh, nr,
							CKPT_FILE_UNIX, 0, n.u->ino);
		if (!s)
			return ckpt_err_set(err, EBADMSG, "socket:[%llu] was not made",
					    (unsigned long long)n.u->ino);
		/* Once, by the first member that holds it, as it was made. */
		if (s->connected)
			continue;
		s->connected = true;
		n.fd = s->fd[0];
		fd = restore_as_member(r, connect_named, &n, "a connection", err);
		if (fd < 0)
			return fd;
		close(fd);
	}
	return 0;
}
