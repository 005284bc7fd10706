// SPDX-License-Identifier: GPL-2.0
/*
 * The other nodes' ckptd. Daemons talk TCP under TLS 1.3 with an external
 * pre-shared key derived from the cluster key (key.c), and no
 * certificates: a peer without the key cannot finish the handshake, so it
 * neither joins, requests nor reads anything. The messages are the local
 * protocol's frames (proto.h) inside TLS.
 *
 * Each connection a peer makes is served by a worker of its own (forked
 * on accept, with blocking TLS there, so the loop never waits on a
 * network), which tells ckptd what changed through its report socket. A
 * node's requests to others are made from its workers, blocking, each
 * wait bounded.
 *
 *   peer-join {job, uid, node}           node joins the job (coordinator)
 *   peer-checkpoint {job, seq, dir, ...} its share, then {action} (snapshot.c)
 *   peer-restart {job, dir, node, ...}   its share of a snapshot (restart.c)
 *   peer-ask {job, uid, node, mode, ...} a detached checkpoint (ask.c)
 *   peer-copy {job, seq, keep, names}    a snapshot's copy (copy.c)
 * Each request also carries "proto" (proto.h), checked first.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <netdb.h>
#include <signal.h>
#include <time.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "ckptd.h"
#include "err.h"

#define PSK_IDENTITY	"ckptd"
#define PEER_CONNECT_S	10
#define NODE_ASK_S	3	/* whether a host is a node: a plain ssh waits */
#define MAX_PEER_WORKERS	32
/*
 * Handshakes made at once by peer_connect_all(): each costs CPU on this
 * node, and a node waits PEER_CONNECT_S for its part.
 */
#define CONNECT_AT_ONCE		8

struct peer {
	SSL *ssl;
	int fd;
	char name[HOST_NAME_MAX + 1];
};

/* The key for OpenSSL's callbacks, which take no argument of ours. */
static const uint8_t *psk_key;

static unsigned int psk_client(SSL *ssl, const char *hint, char *identity,
			       unsigned int max_identity, unsigned char *psk,
			       unsigned int max_psk)
{
	(void)ssl;
	(void)hint;
	if (max_identity < sizeof(PSK_IDENTITY) || max_psk < CKPTD_MAC_LEN)
		return 0;
	memcpy(identity, PSK_IDENTITY, sizeof(PSK_IDENTITY));
	memcpy(psk, psk_key, CKPTD_MAC_LEN);
	return CKPTD_MAC_LEN;
}

static unsigned int psk_server(SSL *ssl, const char *identity,
			       unsigned char *psk, unsigned int max_psk)
{
	(void)ssl;
	if (!identity || strcmp(identity, PSK_IDENTITY) || max_psk < CKPTD_MAC_LEN)
		return 0;
	memcpy(psk, psk_key, CKPTD_MAC_LEN);
	return CKPTD_MAC_LEN;
}

static SSL_CTX *tls_ctx(struct ckptd *d, bool server)
{
	SSL_CTX *ctx;

	/* The same key for every thread of peer_connect_all(): set first. */
	if (psk_key != d->psk)
		psk_key = d->psk;
	ctx = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());
	if (!ctx)
		return NULL;
	/* TLS 1.3 only, with a SHA-256 suite: what an external PSK needs. */
	if (!SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION) ||
	    !SSL_CTX_set_ciphersuites(ctx, "TLS_AES_128_GCM_SHA256")) {
		SSL_CTX_free(ctx);
		return NULL;
	}
	if (server)
		SSL_CTX_set_psk_server_callback(ctx, psk_server);
	else
		SSL_CTX_set_psk_client_callback(ctx, psk_client);
	return ctx;
}

static void set_timeout(int fd, int secs)
{
	struct timeval tv = { .tv_sec = secs };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

static const char *tls_error(void)
{
	unsigned long e = ERR_get_error();

	return e ? ERR_reason_error_string(e) ?: "TLS error" : "connection closed";
}

static struct peer *peer_new(SSL_CTX *ctx, int fd, const char *name)
{
	struct peer *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->fd = fd;
	snprintf(p->name, sizeof(p->name), "%s", name);
	p->ssl = SSL_new(ctx);
	if (!p->ssl || !SSL_set_fd(p->ssl, fd)) {
		SSL_free(p->ssl);
		free(p);
		return NULL;
	}
	return p;
}

/*
 * A peer gone must be an error, not SIGPIPE's end of the worker: it
 * would leave its node's share stopped, or a checkpoint without its
 * answer. Blocked around a write, and one it raised taken, since a
 * restarter's children inherit the disposition (workers keep SIGPIPE's
 * default for them).
 */
static void pipe_block(sigset_t *old)
{
	sigset_t pipe;

	sigemptyset(&pipe);
	sigaddset(&pipe, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe, old);
}

static void pipe_unblock(const sigset_t *old)
{
	const struct timespec now = { 0, 0 };
	int saved = errno;	/* the I/O's, for its message */
	sigset_t pipe;

	sigemptyset(&pipe);
	sigaddset(&pipe, SIGPIPE);
	sigtimedwait(&pipe, NULL, &now);
	pthread_sigmask(SIG_SETMASK, old, NULL);
	errno = saved;
}

void peer_close(struct peer *p)
{
	sigset_t old;

	if (!p)
		return;
	/* Its close_notify, to a peer that may have closed first. */
	pipe_block(&old);
	SSL_shutdown(p->ssl);
	pipe_unblock(&old);
	SSL_free(p->ssl);
	close(p->fd);
	free(p);
}

const char *peer_name(const struct peer *p)
{
	return p->name;
}

/* peer_connect(), each wait on the network bounded by @secs. */
static struct peer *connect_within(struct ckptd *d, const char *node, int secs,
				   struct ckpt_err *err)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai, *a;
	char port[16];
	struct peer *p = NULL;
	SSL_CTX *ctx;
	int fd = -1, one = 1, ret;
	sigset_t old;
	bool ok;

	snprintf(port, sizeof(port), "%u", d->cfg.port);
	ret = getaddrinfo(node, port, &hints, &ai);
	if (ret) {
		ckpt_err_set(err, EHOSTUNREACH, "node %s: %s", node, gai_strerror(ret));
		return NULL;
	}
	for (a = ai; a; a = a->ai_next) {
		fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, 0);
		if (fd < 0)
			continue;
		set_timeout(fd, secs);
		if (!connect(fd, a->ai_addr, a->ai_addrlen))
			break;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(ai);
	if (fd < 0) {
		ckpt_err_set(err, errno, "node %s: ckptd does not answer on port %u: %s",
			     node, d->cfg.port, strerror(errno));
		return NULL;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	ctx = tls_ctx(d, false);
	p = ctx ? peer_new(ctx, fd, node) : NULL;
	SSL_CTX_free(ctx);
	if (!p) {
		close(fd);
		ckpt_err_set(err, ENOMEM, "node %s: cannot set up TLS", node);
		return NULL;
	}
	/* The ClientHello goes to a peer that may have reset already. */
	pipe_block(&old);
	ok = SSL_connect(p->ssl) == 1;
	pipe_unblock(&old);
	if (!ok) {
		ckpt_err_set(err, EACCES, "node %s: TLS handshake failed (%s): not the same cluster key?",
			     node, tls_error());
		peer_close(p);
		return NULL;
	}
	return p;
}

struct peer *peer_connect(struct ckptd *d, const char *node,
			  struct ckpt_err *err)
{
	return connect_within(d, node, PEER_CONNECT_S, err);
}

struct connect_one {
	struct ckptd *d;
	const char *node;
	struct peer *p;
	struct ckpt_err err;
	pthread_t thread;
	bool threaded;
};

static void *connect_one(void *arg)
{
	struct connect_one *c = arg;

	c->p = peer_connect(c->d, c->node, &c->err);
	return NULL;
}

int peer_connect_all(struct ckptd *d, const char *const *nodes, size_t n,
		     struct peer **out, struct ckpt_err *err)
{
	struct connect_one *c = calloc(n ?: 1, sizeof(*c));
	size_t i;
	int ret = 0;

	if (!c)
		return ckpt_err_set(err, ENOMEM, "out of memory");
	psk_key = d->psk;
	for (i = 0; i < n; i++) {
		/* At most CONNECT_AT_ONCE under way: the oldest ends first. */
		if (i >= CONNECT_AT_ONCE && c[i - CONNECT_AT_ONCE].threaded) {
			pthread_join(c[i - CONNECT_AT_ONCE].thread, NULL);
			c[i - CONNECT_AT_ONCE].threaded = false;
		}
		c[i].d = d;
		c[i].node = nodes[i];
		c[i].threaded = !pthread_create(&c[i].thread, NULL, connect_one, &c[i]);
		if (!c[i].threaded)
			connect_one(&c[i]);
	}
	for (i = 0; i < n; i++) {
		if (c[i].threaded)
			pthread_join(c[i].thread, NULL);
		out[i] = c[i].p;
		if (!c[i].p && !ret) {
			if (err)
				*err = c[i].err;
			ret = -EHOSTUNREACH;
		}
	}
	if (ret)
		for (i = 0; i < n; i++) {
			peer_close(out[i]);
			out[i] = NULL;
		}
	free(c);
	return ret;
}

static int tls_io(struct peer *p, void *buf, size_t len, bool out)
{
	size_t done = 0;
	int n, ret = 0;
	sigset_t old;

	/* A read may write too (TLS 1.3's key updates, an alert). */
	pipe_block(&old);
	while (done < len) {
		/* EAGAIN after it means the socket's timeout, not an old call's. */
		errno = 0;
		n = out ? SSL_write(p->ssl, (char *)buf + done, len - done) :
			  SSL_read(p->ssl, (char *)buf + done, len - done);
		if (n <= 0) {
			ret = -EIO;
			break;
		}
		done += n;
	}
	pipe_unblock(&old);
	return ret;
}

int peer_send(struct peer *p, json_t *msg, struct ckpt_err *err)
{
	uint8_t hdr[4];
	char *text;
	size_t len;
	int ret;

	/* A request says which protocol it speaks (proto.h). */
	if (json_object_get(msg, "op"))
		json_object_set_new(msg, "proto", json_integer(CKPTD_PEER_PROTO));
	text = json_dumps(msg, JSON_COMPACT);
	len = text ? strlen(text) : 0;
	hdr[0] = len;
	hdr[1] = len >> 8;
	hdr[2] = len >> 16;
	hdr[3] = len >> 24;

	json_decref(msg);
	if (!text || len > CKPTD_MSG_MAX) {
		free(text);
		return ckpt_err_set(err, EMSGSIZE, "node %s: message too long", p->name);
	}
	ret = tls_io(p, hdr, 4, true);
	if (!ret)
		ret = tls_io(p, text, len, true);
	free(text);
	if (ret)
		return ckpt_err_set(err, EIO, "node %s: sending: %s", p->name,
				    tls_error());
	return 0;
}

int peer_recv(struct peer *p, json_t **msg, int secs, struct ckpt_err *err)
{
	uint8_t hdr[4];
	size_t len;
	char *buf;
	int ret;

	set_timeout(p->fd, secs);
	if (tls_io(p, hdr, 4, false))
		return ckpt_err_set(err, EIO, "node %s: no answer (%s)", p->name,
				    errno == EAGAIN ? "timed out" : tls_error());
	len = hdr[0] | hdr[1] << 8 | hdr[2] << 16 | (size_t)hdr[3] << 24;
	if (!len || len > CKPTD_MSG_MAX)
		return ckpt_err_set(err, EMSGSIZE, "node %s: message of %zu bytes",
				    p->name, len);
	buf = malloc(len);
	if (!buf)
		return ckpt_err_set(err, ENOMEM, "out of memory");
	ret = tls_io(p, buf, len, false);
	if (ret)
		ret = ckpt_err_set(err, EIO, "node %s: connection lost (%s)",
				   p->name, tls_error());
	else
		ret = ckptd_msg_decode(buf, len, msg, err);
	free(buf);
	return ret;
}

int peer_send_raw(struct peer *p, const void *buf, size_t len,
		  struct ckpt_err *err)
{
	if (tls_io(p, (void *)buf, len, true))
		return ckpt_err_set(err, EIO, "node %s: sending: %s", p->name,
				    tls_error());
	return 0;
}

int peer_recv_raw(struct peer *p, void *buf, size_t len, int secs,
		  struct ckpt_err *err)
{
	set_timeout(p->fd, secs);
	if (tls_io(p, buf, len, false))
		return ckpt_err_set(err, EIO, "node %s: connection lost (%s)",
				    p->name, errno == EAGAIN ? "timed out" : tls_error());
	return 0;
}

int peer_wait(struct peer *p, int ms)
{
	struct pollfd pfd = { .fd = p->fd, .events = POLLIN };
	int ret;

	if (SSL_pending(p->ssl) > 0)
		return 1;
	while ((ret = poll(&pfd, 1, ms)) < 0 && errno == EINTR)
		;
	return ret > 0;
}

int peer_reply(struct peer *p, json_t **reply, int secs, struct ckpt_err *err)
{
	json_t *r;
	int ret;

	ret = peer_recv(p, &r, secs, err);
	if (ret)
		return ret;
	if (!json_is_true(json_object_get(r, "ok"))) {
		const char *e = ckptd_msg_str(r, "error") ?: "refused";
		size_t n = strlen(p->name);

		/* Named once: a node's refusals may name it already. */
		if (!strncmp(e, "node ", 5) && !strncmp(e + 5, p->name, n) &&
		    e[5 + n] == ':')
			ckpt_err_set(err, EPERM, "%s", e);
		else
			ckpt_err_set(err, EPERM, "node %s: %s", p->name, e);
		json_decref(r);
		return -EPERM;
	}
	*reply = r;
	return 0;
}

int peer_call(struct peer *p, json_t *req, json_t **reply, int secs,
	      struct ckpt_err *err)
{
	int ret = peer_send(p, req, err);

	return ret ? ret : peer_reply(p, reply, secs, err);
}

/* In a peer worker: a refusal, named. */
void peer_fail(struct peer *p, const char *fmt, ...)
{
	va_list ap;
	json_t *m;

	va_start(ap, fmt);
	m = ckptd_msg_error(fmt, ap);
	va_end(ap);
	peer_send(p, m, NULL);
}

/* peer-join: another node's process joins a job this node coordinates. */
static void peer_join(struct ckptd *d, struct peer *p, const json_t *req,
		      int out)
{
	const char *id = ckptd_msg_str(req, "job");
	const char *node = ckptd_msg_str(req, "node");
	json_int_t uid;
	struct job *j = job_find(d, id);

	if (json_unpack((json_t *)req, "{s:I}", "uid", &uid) || !node ||
	    !*node || strlen(node) > HOST_NAME_MAX || strchr(node, '/') ||
	    *node == '.') {
		peer_fail(p, "peer-join: needs \"job\", \"uid\" and \"node\"");
		return;
	}
	if (!j || j->coordinator[0] || uid != j->uid) {
		peer_fail(p, "no job %.16s of uid %lld coordinated by %s", id ?: "",
			  (long long)uid, d->node);
		return;
	}
	worker_send(out, json_pack("{s:s, s:s, s:s}", "event", "joined",
				   "job", j->id, "node", node));
	peer_send(p, json_pack("{s:b, s:o}", "ok", 1, "job", job_info(j)), NULL);
}

/* A peer worker: one connection, one request. */
static void peer_serve(struct ckptd *d, struct job *unused, int out, void *arg)
{
	int fd = (int)(intptr_t)arg;
	struct ckpt_err err;
	struct peer *p;
	SSL_CTX *ctx;
	json_t *req;
	const char *op;

	(void)unused;
	set_timeout(fd, PEER_CONNECT_S);
	ctx = tls_ctx(d, true);
	p = ctx ? peer_new(ctx, fd, "peer") : NULL;
	SSL_CTX_free(ctx);
	if (!p || SSL_accept(p->ssl) != 1) {
		ckptd_log(d, 1, "a connection from another node failed its TLS handshake (%s)",
			  tls_error());
		_exit(1);
	}
	if (peer_recv(p, &req, CKPTD_PEER_WAIT_S, &err)) {
		ckptd_log(d, 1, "a peer: %s", err.msg);
		_exit(1);
	}
	op = ckptd_msg_str(req, "op");
	if (ckptd_peer_proto_check(req, &err)) {
		ckptd_log(d, 1, "a peer's %.64s: %s", op ?: "request", err.msg);
		peer_fail(p, "%s", err.msg);
	} else if (op && !strcmp(op, "peer-join"))
		peer_join(d, p, req, out);
	else if (op && !strcmp(op, "peer-checkpoint"))
		peer_checkpoint(d, p, req);
	else if (op && !strcmp(op, "peer-restart"))
		peer_restart(d, p, req, out);
	else if (op && !strcmp(op, "peer-ask"))
		peer_ask(d, p, req, out);
	else if (op && !strcmp(op, "peer-copy"))
		peer_copy(d, p, req);
	else if (op && !strcmp(op, "peer-ping"))	/* op_node's question */
		peer_send(p, json_pack("{s:b}", "ok", 1), NULL);
	else
		peer_fail(p, "unknown op '%.64s'", op ?: "");
	json_decref(req);
	peer_close(p);
}

bool peer_list_has(const json_t *list, const char *s)
{
	const json_t *v;
	size_t i;

	json_array_foreach(list, i, v)
		if (json_is_string(v) && !strcmp(json_string_value(v), s))
			return true;
	return false;
}

/* In ckptd: what a peer worker changed. */
static void peer_report(struct worker *w, json_t *msg)
{
	struct ckptd *d = worker_daemon(w);
	const char *ev = msg ? ckptd_msg_str(msg, "event") : NULL;
	struct job *j;

	if (!msg)
		restart_ended(d, worker_pid(w));	/* a share's restarter, maybe */
	if (!ev)
		return;
	if (!strcmp(ev, "joined")) {
		j = job_find(d, ckptd_msg_str(msg, "job"));
		if (!j)
			return;
		if (!j->nodes)
			j->nodes = json_array();
		if (json_array_size(j->nodes) < CKPTD_MAX_NODES &&
		    !peer_list_has(j->nodes, ckptd_msg_str(msg, "node")))
			json_array_append_new(j->nodes,
					      json_string(ckptd_msg_str(msg, "node")));
		job_save(d, j);
		ckptd_log(d, 1, "job %s: node %s joined", j->id,
			  ckptd_msg_str(msg, "node"));
	} else if (!strcmp(ev, "started")) {
		restart_started(d, w, msg);
	} else if (!strcmp(ev, "ask")) {
		ask_report(d, msg);
	}
}

/* In a worker: whether node @arg's ckptd answers under the cluster key. */
static void node_worker(struct ckptd *d, struct job *unused, int out, void *arg)
{
	json_t *reply = NULL;
	struct ckpt_err err;
	struct peer *p;
	int ret = -EIO;

	(void)unused;
	/* A request of its own, answered: the node's ckptd logs no failure. */
	p = connect_within(d, arg, NODE_ASK_S, &err);
	if (p)
		ret = peer_call(p, json_pack("{s:s}", "op", "peer-ping"), &reply,
				NODE_ASK_S, &err);
	worker_send(out, !ret ? json_pack("{s:b, s:b}", "ok", 1, "cluster", 1) :
		    json_pack("{s:b, s:b, s:s}", "ok", 1, "cluster", 0,
			      "why", err.msg));
	json_decref(reply);
	peer_close(p);
}

/* Questions to other nodes under way: a few, so that peers keep theirs. */
static unsigned int node_asks;
#define MAX_NODE_ASKS	4

static void node_report(struct worker *w, json_t *msg)
{
	if (!msg) {
		free(worker_arg(w));
		worker_set_arg(w, NULL);
		node_asks--;
	}
}

/*
 * node {node}: whether @node is one of the cluster's (its ckptd answers
 * under the cluster key; this node is): {cluster: true|false, why?}. A
 * job's plain ssh asks it (ckpt-ssh's shim) before it joins the job there.
 * Any local user may ask: one TLS handshake within NODE_ASK_S, at most
 * MAX_NODE_ASKS at once (the rest are told ckptd is busy), so that
 * questions never take the workers peers' connections need.
 */
void op_node(struct conn *c, const json_t *req)
{
	struct ckptd *d = conn_daemon(c);
	struct ckpt_err err;
	const char *node;
	char *arg;

	if (ckptd_node_check(req, &node, &err)) {
		conn_fail(c, "%s", err.msg);
		return;
	}
	if (!strcmp(node, d->node)) {
		conn_reply(c, json_pack("{s:b}", "cluster", 1));
		return;
	}
	arg = strdup(node);
	if (!arg || node_asks >= MAX_NODE_ASKS ||
	    workers_without_job(d) >= MAX_PEER_WORKERS ||
	    !worker_start(d, c, NULL, node_worker, node_report, arg)) {
		conn_fail(c, "node: busy (too many questions to other nodes at once)");
		free(arg);
		return;
	}
	node_asks++;
}

static void on_peer(evutil_socket_t lfd, short what, void *arg)
{
	struct ckptd *d = arg;
	int fd;

	(void)what;
	/* A share's "started", sent to ckptd before its coordinator, taken. */
	workers_catch_up(d);
	fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return;
	if (workers_without_job(d) >= MAX_PEER_WORKERS ||
	    !worker_start(d, NULL, NULL, peer_serve, peer_report,
			  (void *)(intptr_t)fd))
		ckptd_log(d, 0, "a connection from another node refused: too many, or no worker");
	close(fd);
}

int peer_listen(struct ckptd *d)
{
	struct addrinfo hints = {
		.ai_socktype = SOCK_STREAM,
		.ai_flags = AI_PASSIVE,
	}, *ai;
	char port[16];
	int fd, one = 1, ret;

	if (!d->cfg.listen[0])
		return 0;
	snprintf(port, sizeof(port), "%u", d->cfg.port);
	ret = getaddrinfo(strcmp(d->cfg.listen, "*") ? d->cfg.listen : NULL,
			  port, &hints, &ai);
	if (ret) {
		ckptd_log(d, 0, "listen %s: %s", d->cfg.listen, gai_strerror(ret));
		return -1;
	}
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd >= 0)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (fd < 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 16)) {
		ckptd_log(d, 0, "cannot listen on %s port %u: %s", d->cfg.listen,
			  d->cfg.port, strerror(errno));
		freeaddrinfo(ai);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	freeaddrinfo(ai);
	d->peer_fd = fd;
	d->peer_ev = event_new(d->base, fd, EV_READ | EV_PERSIST, on_peer, d);
	if (!d->peer_ev || event_add(d->peer_ev, NULL))
		return -1;
	ckptd_log(d, 1, "other nodes' ckptd: port %u", d->cfg.port);
	return 0;
}
