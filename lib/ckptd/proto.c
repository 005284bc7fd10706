// SPDX-License-Identifier: GPL-2.0
/*
 * The ckptd wire format (proto.h): frames in and out, and the one JSON
 * decoder every message goes through.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <linux/ckpt.h>

#include "err.h"
#include "meta.h"
#include "proto.h"

void ckptd_frame_init(struct ckptd_frame *fr)
{
	fr->have = 0;
	fr->nfds = 0;
}

void ckptd_frame_reset(struct ckptd_frame *fr)
{
	int i;

	for (i = 0; i < fr->nfds; i++)
		if (fr->fds[i] >= 0)
			close(fr->fds[i]);
	ckptd_frame_init(fr);
}

static size_t frame_len(const struct ckptd_frame *fr)
{
	return (size_t)fr->buf[0] | (size_t)fr->buf[1] << 8 |
	       (size_t)fr->buf[2] << 16 | (size_t)fr->buf[3] << 24;
}

/* Takes the descriptors of one recvmsg(): only with a frame's first byte. */
static int take_fds(struct ckptd_frame *fr, struct msghdr *mh, size_t before,
		    struct ckpt_err *err)
{
	struct cmsghdr *c;
	int bad = 0;

	for (c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		int *fds = (int *)CMSG_DATA(c);
		size_t i, n;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < n; i++) {
			if (before || fr->nfds == CKPTD_MAX_FDS) {
				close(fds[i]);
				bad = 1;
				continue;
			}
			fr->fds[fr->nfds++] = fds[i];
		}
	}
	if (bad || (mh->msg_flags & MSG_CTRUNC))
		return ckpt_err_set(err, EPROTO,
				    "descriptors sent other than up to %d with a message's first byte",
				    CKPTD_MAX_FDS);
	return 0;
}

int ckptd_frame_read(int fd, struct ckptd_frame *fr, struct ckpt_err *err)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * (CKPTD_MAX_FDS + 1))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov;
	struct msghdr mh;
	size_t want, len;
	ssize_t n;
	int ret;

	for (;;) {
		want = 4;
		if (fr->have >= 4) {
			len = frame_len(fr);
			if (!len || len > CKPTD_MSG_MAX)
				return ckpt_err_set(err, EMSGSIZE,
						    "message of %zu bytes (1 to %d)",
						    len, CKPTD_MSG_MAX);
			want = 4 + len;
			if (fr->have == want)
				return 1;
		}
		iov.iov_base = fr->buf + fr->have;
		iov.iov_len = want - fr->have;
		memset(&mh, 0, sizeof(mh));
		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		mh.msg_control = ctl.buf;
		mh.msg_controllen = sizeof(ctl.buf);
		n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n < 0)
			return ckpt_err_set(err, errno, "reading a message: %s",
					    strerror(errno));
		ret = take_fds(fr, &mh, fr->have, err);
		if (ret)
			return ret;
		if (!n)
			return ckpt_err_set(err, EPIPE, fr->have ?
					    "connection closed inside a message" :
					    "connection closed");
		fr->have += n;
	}
}

int ckptd_msg_decode(const void *buf, size_t len, json_t **msg,
		     struct ckpt_err *err)
{
	json_error_t je;
	json_t *m;

	/* Duplicate keys are refused: two "uid"s must not mean either one. */
	m = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
	if (!m)
		return ckpt_err_set(err, EBADMSG, "malformed message: %s at byte %d",
				    je.text, je.position);
	if (!json_is_object(m)) {
		json_decref(m);
		return ckpt_err_set(err, EBADMSG, "a message must be a JSON object");
	}
	*msg = m;
	return 0;
}

json_t *ckptd_msg_error(const char *fmt, va_list ap)
{
	char msg[1024];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	return json_pack("{s:b, s:s}", "ok", 0, "error", msg);
}

const char *ckptd_msg_str(const json_t *msg, const char *key)
{
	return json_string_value(json_object_get(msg, key));
}

static const int forwarded[] = { CKPTD_FORWARDED_SIGNALS };

void ckptd_forwarded_set(sigset_t *set)
{
	size_t i;

	sigemptyset(set);
	for (i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
		sigaddset(set, forwarded[i]);
}

int ckptd_signal_of(const json_t *req)
{
	json_int_t sig;
	size_t i;

	if (json_unpack((json_t *)req, "{s:I}", "sig", &sig))
		return 0;
	for (i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
		if (sig == forwarded[i])
			return sig;
	return 0;
}

const char *ckptd_mode(const char *mode)
{
	static const char *const modes[] = { "continue", "stop", "kill" };
	size_t i;

	for (i = 0; mode && i < sizeof(modes) / sizeof(modes[0]); i++)
		if (!strcmp(mode, modes[i]))
			return modes[i];
	return NULL;
}

int ckptd_peer_proto_check(const json_t *req, struct ckpt_err *err)
{
	const json_t *v = json_object_get(req, "proto");

	if (json_is_integer(v) && json_integer_value(v) == CKPTD_PEER_PROTO)
		return 0;
	if (!json_is_integer(v))
		return ckpt_err_set(err, EPROTO,
				    "it speaks an older ckptd peer protocol (no version), this node %d: every node must run the same ckpt version",
				    CKPTD_PEER_PROTO);
	return ckpt_err_set(err, EPROTO,
			    "it speaks ckptd peer protocol %lld, this node %d: every node must run the same ckpt version",
			    (long long)json_integer_value(v), CKPTD_PEER_PROTO);
}

int ckptd_ask_check(const json_t *req, const char **mode, json_int_t *uid,
		    json_int_t *timeout, struct ckpt_err *err)
{
	const char *job = ckptd_msg_str(req, "job");
	const char *node = ckptd_msg_str(req, "node");

	*mode = ckptd_mode(ckptd_msg_str(req, "mode"));
	if (!job || !node || !*mode ||
	    json_unpack((json_t *)req, "{s:I, s:I}", "uid", uid, "timeout", timeout) ||
	    *uid < 0 || *timeout < 0 || *timeout > CKPT_TIMEOUT_MAX_MS / 1000)
		return ckpt_err_set(err, EINVAL,
				    "peer-ask: needs \"job\", \"uid\", \"node\", \"mode\" (continue, stop or kill) and \"timeout\" (0 to %u seconds)",
				    CKPT_TIMEOUT_MAX_MS / 1000);
	return 0;
}

int ckptd_node_check(const json_t *req, const char **node,
		     struct ckpt_err *err)
{
	const char *s = ckptd_msg_str(req, "node");
	size_t n = s ? strlen(s) : 0;

	if (!n || n > HOST_NAME_MAX || s[0] == '-' ||
	    strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		      "0123456789.-_:") != n)
		return ckpt_err_set(err, EINVAL,
				    "node: needs \"node\", a host name or address");
	*node = s;
	return 0;
}

int ckptd_restart_check(const json_t *req, bool *tty, struct ckpt_err *err)
{
	const json_t *v = json_object_get(req, "tty");

	if (v && !json_is_boolean(v))
		return ckpt_err_set(err, EINVAL, "restart: \"tty\" is true or false");
	*tty = json_is_true(v);
	return 0;
}

/* Strings; for the environment, each NAME=VALUE. */
static bool strings_ok(const json_t *a, size_t max, bool env)
{
	const char *v;
	size_t i;
	json_t *s;

	if (!json_is_array(a) || json_array_size(a) > max)
		return false;
	json_array_foreach(a, i, s) {
		v = json_string_value(s);
		if (!v || strlen(v) != json_string_length(s))
			return false;
		if (env && (!strchr(v, '=') || *v == '='))
			return false;
	}
	return true;
}

int ckptd_run_ns_check(const json_t *req, bool *tty, struct ckpt_err *err)
{
	const json_t *cmd = json_object_get(req, "cmd"), *v = json_object_get(req, "tty");
	const char *cwd = json_string_value(json_object_get(req, "cwd"));
	const char *op = ckptd_msg_str(req, "op") ?: "run";

	if (json_object_get(req, "pid"))
		return ckpt_err_set(err, EINVAL, "%.16s: \"ns\" starts the program here: no \"pid\"",
				    op);
	if (!strings_ok(cmd, CKPTD_MSG_MAX, false) || !json_array_size(cmd) ||
	    !strings_ok(json_object_get(req, "env"), CKPTD_ENV_MAX, true) ||
	    (v && !json_is_boolean(v)))
		return ckpt_err_set(err, EINVAL,
				    "%.16s: \"ns\" needs \"cmd\" (strings), \"env\" (at most %d NAME=VALUE strings), \"tty\" true or false",
				    op, CKPTD_ENV_MAX);
	if (!cwd || *cwd != '/' || strlen(cwd) >= PATH_MAX)
		return ckpt_err_set(err, EINVAL, "%.16s: \"cwd\" is to be an absolute path",
				    op);
	*tty = json_is_true(v);
	return 0;
}

int ckptd_copy_check(const json_t *req, struct ckptd_copy *c, struct ckpt_err *err)
{
	const json_t *list = json_object_get(req, "names"), *v;
	const json_t *d = json_object_get(req, "dir");
	size_t i, n;

	c->names[0] = NULL;
	c->dir = NULL;
	c->uid = 0;
	if (d && (!json_is_string(d) || json_string_value(d)[0] != '/' ||
		  json_string_length(d) >= CKPT_META_DIR_MAX ||
		  strlen(json_string_value(d)) != json_string_length(d)))
		return ckpt_err_set(err, EINVAL,
				    "peer-copy: \"dir\" must be an absolute path of at most %d bytes",
				    CKPT_META_DIR_MAX - 1);
	if (d && (json_unpack((json_t *)req, "{s:I}", "uid", &c->uid) ||
		  c->uid < 0 || c->uid >= UINT32_MAX))
		return ckpt_err_set(err, EINVAL,
				    "peer-copy: a \"dir\" needs its owner's \"uid\" (0 .. 2^32-2)");
	if (!ckptd_msg_str(req, "job") ||
	    json_unpack((json_t *)req, "{s:I, s:I}", "seq", &c->seq, "keep", &c->keep) ||
	    c->seq < 1 || c->seq > UINT32_MAX || c->keep < 0 || c->keep > UINT32_MAX ||
	    !json_is_array(list) || !json_array_size(list) ||
	    json_array_size(list) > CKPTD_COPY_NAMES_MAX)
		return ckpt_err_set(err, EINVAL,
				    "peer-copy: needs \"job\", \"seq\" (1 .. 2^32-1), \"keep\" (0 .. 2^32-1) and \"names\" (1 to %d)",
				    CKPTD_COPY_NAMES_MAX);
	json_array_foreach(list, i, v) {
		const char *s = json_string_value(v);

		n = s ? strlen(s) : 0;
		if (!n || n > HOST_NAME_MAX || !strcmp(s, ".") || !strcmp(s, "..") ||
		    strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			      "0123456789._-") != n) {
			c->names[0] = NULL;
			return ckpt_err_set(err, EINVAL,
					    "peer-copy: \"names\" %zu is not a name a snapshot holds",
					    i);
		}
		c->names[i] = s;
		c->names[i + 1] = NULL;
	}
	c->dir = d ? json_string_value(d) : NULL;
	return 0;
}

static bool ship_path_ok(const char *s, const char *const *allowed)
{
	size_t n = strlen(s), first = strcspn(s, "/"), depth = 1, i;
	const char *c;

	if (!n || n > CKPTD_SHIP_PATH_MAX ||
	    strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		      "0123456789._-/") != n)
		return false;
	for (c = s;; c++) {
		size_t len = strcspn(c, "/");

		if (!len || (len == 1 && c[0] == '.') ||
		    (len == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		c += len;
		if (!*c)
			break;
		if (++depth > CKPTD_SHIP_DEPTH)
			return false;
	}
	for (i = 0; allowed && allowed[i]; i++)
		if (strlen(allowed[i]) == first && !strncmp(s, allowed[i], first))
			return true;
	return false;
}

int ckptd_ship_check(const json_t *msg, const char *const *allowed,
		     const char **path, uint64_t *bytes, struct ckpt_err *err)
{
	const char *kind = ckptd_msg_str(msg, "ship");
	const json_t *b = json_object_get(msg, "bytes");

	*path = ckptd_msg_str(msg, "path");
	*bytes = 0;
	if (kind && !strcmp(kind, "error"))
		return ckpt_err_set(err, EREMOTEIO, "%.512s",
				    ckptd_msg_str(msg, "error") ?: "failed");
	if (kind && !strcmp(kind, "end"))
		return CKPTD_SHIP_END;
	if (!kind || (strcmp(kind, "dir") && strcmp(kind, "file")))
		return ckpt_err_set(err, EINVAL, "ship: needs \"ship\", one of dir, file, end, error");
	if (!*path || !ship_path_ok(*path, allowed))
		return ckpt_err_set(err, EINVAL, "ship: \"path\" %.64s%s is not a path this share may have",
				    *path ?: "(none)", *path && strlen(*path) > 64 ? "..." : "");
	if (!strcmp(kind, "dir"))
		return CKPTD_SHIP_DIR;
	if (!json_is_integer(b) || json_integer_value(b) < 0 ||
	    (uint64_t)json_integer_value(b) > CKPTD_SHIP_BYTES_MAX)
		return ckpt_err_set(err, EINVAL, "ship: %s: \"bytes\" must be 0 .. 2^46", *path);
	*bytes = json_integer_value(b);
	return CKPTD_SHIP_FILE;
}

static bool sum_ok(const json_t *sum)
{
	const char *s = json_string_value(sum);
	size_t i;

	if (!s || json_string_length(sum) != 64)
		return false;
	for (i = 0; i < 64; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

int ckptd_sums_merge(json_t *entry, const json_t *sums, const char *name,
		     struct ckpt_err *err)
{
	json_t *trees = json_object_get(entry, "trees");
	json_t *members = json_object_get(json_array_get(trees, 0), "members");
	size_t i, n = json_array_size(members);

	if (json_array_size(trees) != 1 || !json_is_array(members))
		return ckpt_err_set(err, EPROTO, "node %.64s: its entry has not one tree of members",
				    name);
	if (!json_is_array(sums) || json_array_size(sums) != n)
		return ckpt_err_set(err, EPROTO, "node %.64s: %zu image checksums for %zu images",
				    name, json_array_size(sums), n);
	for (i = 0; i < n; i++) {
		if (!json_is_object(json_array_get(members, i)))
			return ckpt_err_set(err, EPROTO, "node %.64s: image %zu is not described",
					    name, i);
		if (!sum_ok(json_array_get(sums, i)))
			return ckpt_err_set(err, EPROTO, "node %.64s: image %zu's checksum is not 64 hex digits",
					    name, i);
	}
	for (i = 0; i < n; i++)
		json_object_set(json_array_get(members, i), "sha256", json_array_get(sums, i));
	return 0;
}

int ckptd_msg_send(int fd, const json_t *msg, const int *fds, int nfds,
		   struct ckpt_err *err)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * CKPTD_MAX_FDS)];
		struct cmsghdr align;
	} ctl;
	struct iovec iov[2];
	struct msghdr mh;
	uint8_t hdr[4];
	size_t len, off = 0, total;
	char *text;
	ssize_t n;

	text = json_dumps(msg, JSON_COMPACT);
	if (!text)
		return ckpt_err_set(err, ENOMEM, "out of memory");
	len = strlen(text);
	if (len > CKPTD_MSG_MAX || nfds > CKPTD_MAX_FDS) {
		free(text);
		return ckpt_err_set(err, EMSGSIZE, "message too long (%zu bytes)",
				    len);
	}
	hdr[0] = len;
	hdr[1] = len >> 8;
	hdr[2] = len >> 16;
	hdr[3] = len >> 24;
	total = 4 + len;
	while (off < total) {
		memset(&mh, 0, sizeof(mh));
		iov[0].iov_base = hdr + (off < 4 ? off : 4);
		iov[0].iov_len = off < 4 ? 4 - off : 0;
		iov[1].iov_base = text + (off > 4 ? off - 4 : 0);
		iov[1].iov_len = len - (off > 4 ? off - 4 : 0);
		mh.msg_iov = iov;
		mh.msg_iovlen = 2;
		if (!off && nfds) {
			struct cmsghdr *c;

			mh.msg_control = ctl.buf;
			mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
			c = CMSG_FIRSTHDR(&mh);
			c->cmsg_level = SOL_SOCKET;
			c->cmsg_type = SCM_RIGHTS;
			c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
			memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
		}
		n = sendmsg(fd, &mh, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		/* A non-blocking socket: a reader that keeps it full is dropped. */
		if (n < 0 && errno == EAGAIN) {
			struct pollfd p = { .fd = fd, .events = POLLOUT };

			if (poll(&p, 1, CKPTD_SEND_WAIT_MS) > 0)
				continue;
			errno = ETIMEDOUT;
		}
		if (n < 0) {
			int e = errno;

			free(text);
			return ckpt_err_set(err, e, "sending a message: %s",
					    strerror(e));
		}
		off += n;
	}
	free(text);
	return 0;
}

int ckptd_msg_recv(int fd, json_t **msg, struct ckpt_err *err)
{
	static struct ckptd_frame fr;
	int ret;

	ckptd_frame_init(&fr);
	ret = ckptd_frame_read(fd, &fr, err);
	if (!ret)
		ret = ckpt_err_set(err, EAGAIN, "no message");
	if (ret > 0)
		ret = ckptd_msg_decode(fr.buf + 4, fr.have - 4, msg, err);
	ckptd_frame_reset(&fr);
	return ret;
}

int ckptd_connect(struct ckpt_err *err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *path = getenv("CKPTD_SOCKET");
	int fd;

	if (!path || !*path)
		path = CKPTD_SOCKET;
	if (strlen(path) >= sizeof(sa.sun_path))
		return ckpt_err_set(err, ENAMETOOLONG, "socket path too long: %s",
				    path);
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return ckpt_err_set(err, errno, "socket: %s", strerror(errno));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		int e = errno;

		close(fd);
		return ckpt_err_set(err, e, "ckptd is not running (%s: %s)", path,
				    strerror(e));
	}
	return fd;
}

int ckptd_reply(int fd, json_t **reply, struct ckpt_err *err)
{
	return ckptd_reply_events(fd, reply, NULL, NULL, err);
}

int ckptd_reply_events(int fd, json_t **reply, ckptd_event_fn on_event,
		       void *arg, struct ckpt_err *err)
{
	json_t *r;
	int ret;

	for (;;) {
		ret = ckptd_msg_recv(fd, &r, err);
		if (ret == -EPIPE)
			return ckpt_err_set(err, EPIPE, "ckptd closed the connection");
		if (ret)
			return ret;
		if (json_object_get(r, "ok"))
			break;
		if (on_event)
			on_event(arg, r);
		json_decref(r);
	}
	if (!json_is_true(json_object_get(r, "ok"))) {
		ckpt_err_set(err, EPERM, "%s", ckptd_msg_str(r, "error") ?
			     ckptd_msg_str(r, "error") : "ckptd refused, saying nothing");
		json_decref(r);
		return -EPERM;
	}
	*reply = r;
	return 0;
}

int ckptd_call(const json_t *req, json_t **reply, struct ckpt_err *err)
{
	return ckptd_call_events(req, reply, NULL, NULL, err);
}

int ckptd_call_events(const json_t *req, json_t **reply,
		      ckptd_event_fn on_event, void *arg, struct ckpt_err *err)
{
	int fd, ret;

	fd = ckptd_connect(err);
	if (fd < 0)
		return fd;
	ret = ckptd_msg_send(fd, req, NULL, 0, err);
	if (!ret)
		ret = ckptd_reply_events(fd, reply, on_event, arg, err);
	close(fd);
	return ret;
}
