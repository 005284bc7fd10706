// SPDX-License-Identifier: GPL-2.0
/*
 * ckptd's local clients. Every message is hostile until checked: framed
 * and bounded by proto.c, decoded by its one decoder, then checked here
 * for a known op, and by the op for its members. The caller's uid and pid
 * are the kernel's (SO_PEERCRED), never the message's. Connections are
 * bounded in all (root exempt) and per uid; a connection has one request
 * in flight, and a malformed one is answered with the fault and closed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "ckptd.h"
#include "err.h"

struct conn {
	struct ckptd *d;
	int fd;
	struct event *ev;
	struct ucred cred;
	struct ckptd_frame fr;
	bool busy;		/* a request is being served */
	struct worker *w;	/* the worker serving it, if any */
	struct {		/* a detached checkpoint, started at the close */
		char job[CKPTD_JOB_ID_LEN + 1];	/* "": none */
		const char *mode;
		unsigned int timeout_s;
	} detached;
	struct {		/* a join held back by a checkpoint */
		char job[CKPTD_JOB_ID_LEN + 1];	/* "": none */
		pid_t pid;
		uint64_t since_ns;
	} held;
	struct conn *next;
};

static const struct {
	const char *op;
	void (*fn)(struct conn *c, const json_t *req);
} ops[] = {
	{ "run", op_run },
	{ "ls", op_ls },
	{ "status", op_status },
	{ "checkpoint", op_checkpoint },
	{ "restart", op_restart },
	{ "signal", op_signal },
	{ "join", op_join },
	{ "cancel", op_cancel },
	{ "inspect", op_inspect },
	{ "node", op_node },
};

uid_t conn_uid(const struct conn *c)
{
	return c->cred.uid;
}

pid_t conn_pid(const struct conn *c)
{
	return c->cred.pid;
}

struct ckptd *conn_daemon(const struct conn *c)
{
	return c->d;
}

void conn_set_worker(struct conn *c, struct worker *w)
{
	c->w = w;
}

struct worker *conn_worker(const struct conn *c)
{
	return c->w;
}

struct conn *conn_next(const struct conn *c)
{
	return c->next;
}

int conn_fd(const struct conn *c)
{
	return c->fd;
}

void conn_done(struct conn *c)
{
	c->busy = false;
}

void conn_busy(struct conn *c)
{
	c->busy = true;
}

int conn_take_fds(struct conn *c, int *fds, int max)
{
	int i, n = c->fr.nfds < max ? c->fr.nfds : max;

	for (i = 0; i < n; i++) {
		fds[i] = c->fr.fds[i];
		c->fr.fds[i] = -1;
	}
	return n;
}

void conn_set_detached(struct conn *c, const char *job, const char *mode,
		       unsigned int timeout_s)
{
	snprintf(c->detached.job, sizeof(c->detached.job), "%s", job);
	c->detached.mode = mode;
	c->detached.timeout_s = timeout_s;
}

void conn_hold_join(struct conn *c, const char *job, pid_t pid)
{
	snprintf(c->held.job, sizeof(c->held.job), "%s", job);
	c->held.pid = pid;
	c->held.since_ns = ckptd_now_ns();
}

const char *conn_held_join(const struct conn *c, pid_t *pid, uint64_t *since_ns)
{
	if (!c->held.job[0])
		return NULL;
	*pid = c->held.pid;
	*since_ns = c->held.since_ns;
	return c->held.job;
}

void conn_release_join(struct conn *c)
{
	c->held.job[0] = '\0';
}

void conn_close(struct conn *c)
{
	struct conn **p;

	for (p = &c->d->conns; *p; p = &(*p)->next)
		if (*p == c) {
			*p = c->next;
			break;
		}
	c->d->nconns--;
	if (c->w)
		worker_detach_conn(c->w);
	ckptd_frame_reset(&c->fr);
	event_free(c->ev);
	close(c->fd);
	if (c->detached.job[0])
		checkpoint_detached(c->d, c->detached.job, c->detached.mode,
				    c->detached.timeout_s);
	free(c);
}

void conn_send(struct conn *c, json_t *msg)
{
	struct ckpt_err err;

	if (ckptd_msg_send(c->fd, msg, NULL, 0, &err))
		ckptd_log(c->d, 2, "pid %d: %s", (int)c->cred.pid, err.msg);
	json_decref(msg);
}

void conn_reply(struct conn *c, json_t *res)
{
	json_object_set_new(res, "ok", json_true());
	conn_send(c, res);
	c->busy = false;
}

void conn_fail(struct conn *c, const char *fmt, ...)
{
	va_list ap;
	json_t *m;

	va_start(ap, fmt);
	m = ckptd_msg_error(fmt, ap);
	va_end(ap);
	ckptd_log(c->d, 2, "uid %u pid %d: refused: %s", (unsigned int)c->cred.uid,
		  (int)c->cred.pid, ckptd_msg_str(m, "error") ?: "");
	conn_send(c, m);
	c->busy = false;
}

/* The request in c->fr, whole: decoded, its op found and run. */
static bool serve(struct conn *c)
{
	struct ckpt_err err;
	const char *op;
	json_t *req;
	size_t i;

	if (ckptd_msg_decode(c->fr.buf + 4, c->fr.have - 4, &req, &err)) {
		conn_fail(c, "%s", err.msg);
		return false;
	}
	op = ckptd_msg_str(req, "op");
	/* A signal for the restarted job is the one message while busy. */
	if (c->busy && (!op || strcmp(op, "signal"))) {
		json_decref(req);
		conn_fail(c, "one request at a time on a connection");
		return false;
	}
	for (i = 0; op && i < sizeof(ops) / sizeof(ops[0]); i++) {
		if (strcmp(op, ops[i].op))
			continue;
		if (ops[i].fn != op_signal)
			c->busy = true;
		ops[i].fn(c, req);
		json_decref(req);
		return true;
	}
	conn_fail(c, op ? "unknown op '%.64s'" : "a request names its \"op\"", op);
	json_decref(req);
	return false;
}

static void on_readable(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;
	struct ckpt_err err;
	int ret;

	(void)what;
	/*
	 * Before a request is read (its descriptors not yet here, for no
	 * worker forked meanwhile to inherit), what the workers reported is
	 * taken: the request sees what its client heard. Not on a busy
	 * connection (a signal for a restart that may end meanwhile).
	 */
	if (!c->busy && !c->fr.have)
		workers_catch_up(c->d);
	for (;;) {
		ret = ckptd_frame_read(fd, &c->fr, &err);
		if (!ret)
			return;
		if (ret < 0) {
			if (ret != -EPIPE)
				conn_fail(c, "%s", err.msg);
			conn_close(c);
			return;
		}
		if (!serve(c)) {
			conn_close(c);
			return;
		}
		ckptd_frame_reset(&c->fr);
	}
}

static unsigned int conns_of(const struct ckptd *d, uid_t uid)
{
	const struct conn *c;
	unsigned int n = 0;

	for (c = d->conns; c; c = c->next)
		n += c->cred.uid == uid;
	return n;
}

static void on_accept(evutil_socket_t lfd, short what, void *arg)
{
	struct ckptd *d = arg;
	socklen_t len;
	struct conn *c;
	int fd;

	(void)what;
	fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0)
		return;
	c = calloc(1, sizeof(*c));
	len = sizeof(c ? c->cred : (struct ucred){});
	if (!c || getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c->cred, &len)) {
		free(c);
		close(fd);
		return;
	}
	c->d = d;
	c->fd = fd;
	ckptd_frame_init(&c->fr);
	/* Root is never locked out by users who hold every connection. */
	if (c->cred.uid && (d->nconns >= CKPTD_MAX_CONNS ||
			    conns_of(d, c->cred.uid) >= CKPTD_MAX_CONNS_UID)) {
		/* Told why, then closed: not kept waiting. */
		json_t *m = json_pack("{s:b, s:s}", "ok", 0, "error",
				      "too many connections to ckptd");
		ckptd_msg_send(fd, m, NULL, 0, NULL);
		json_decref(m);
		ckptd_log(d, 1, "uid %u: connection refused, too many",
			  (unsigned int)c->cred.uid);
		free(c);
		close(fd);
		return;
	}
	c->ev = event_new(d->base, fd, EV_READ | EV_PERSIST, on_readable, c);
	if (!c->ev || event_add(c->ev, NULL)) {
		if (c->ev)
			event_free(c->ev);
		free(c);
		close(fd);
		return;
	}
	c->next = d->conns;
	d->conns = c;
	d->nconns++;
}

int conn_listen(struct ckptd *d)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char dir[PATH_MAX], *slash;
	int fd = -1, probe;

	if (strlen(d->cfg.socket) >= sizeof(sa.sun_path)) {
		ckptd_log(d, 0, "socket path too long: %s", d->cfg.socket);
		return -1;
	}
	strcpy(sa.sun_path, d->cfg.socket);
	snprintf(dir, sizeof(dir), "%s", d->cfg.socket);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		mkdir(dir, 0755);
	}
	/* A socket left by a ckptd that died is replaced, a live one's not. */
	probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (probe >= 0 && !connect(probe, (struct sockaddr *)&sa, sizeof(sa))) {
		ckptd_log(d, 0, "another ckptd is listening on %s", sa.sun_path);
		close(probe);
		return -1;
	}
	if (probe >= 0)
		close(probe);
	unlink(sa.sun_path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		goto fail;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    chmod(sa.sun_path, 0666) || listen(fd, 16))
		goto fail;
	d->listen_fd = fd;
	d->listen_ev = event_new(d->base, fd, EV_READ | EV_PERSIST, on_accept, d);
	if (!d->listen_ev || event_add(d->listen_ev, NULL))
		goto fail;
	return 0;
fail:
	ckptd_log(d, 0, "cannot listen on %s: %s", sa.sun_path, strerror(errno));
	if (fd >= 0)
		close(fd);
	return -1;
}
