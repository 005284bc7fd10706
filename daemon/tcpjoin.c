// SPDX-License-Identifier: GPL-2.0
/*
 * Channel kind TCP (channel.h): connections between a job's nodes
 * (Documentation/ckptd.md, "TCP between nodes"). Each node's share is
 * captured with CKPT_CHECKPOINT_PEERS_AWAY: a connection whose other end
 * is in no member there is captured, its end alone. tcp_ends() lists
 * those ends from the share's images (addresses, sequence numbers, the
 * pid and descriptor to name); the coordinator joins the lists
 * (lib/ckptd/tcpjoin.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "channel.h"
#include "ckptd.h"
#include "err.h"
#include "image.h"
#include "tcpjoin.h"
#include "treedir.h"

/* Whether @a and @b are the two ends of one connection. */
static bool ends_meet(const struct ckpt_img_tcp *a, const struct ckpt_img_tcp *b)
{
	return a->family == b->family && a->sport == b->dport &&
	       a->dport == b->sport && !memcmp(a->src, b->dst, 16) &&
	       !memcmp(a->dst, b->src, 16);
}

/* The descriptor of socket @ino in @img, or -1. */
static int fd_of(const struct ckpt_image *img, uint64_t ino)
{
	uint32_t k;

	for (k = 0; k < img->nr_files; k++)
		if (img->files[k].kind == CKPT_FILE_TCP && img->files[k].ino == ino)
			return (int)img->files[k].fd;
	return -1;
}

/* Member @i's image, read (page data left unchecked): 0 or -errno. */
static int read_member(const char *dir, const struct ckpt_tree *t, uint32_t i,
		       struct ckpt_image *img, struct ckpt_err *err)
{
	char path[PATH_MAX];
	int fd, ret;

	ckpt_image_init(img);
	ret = ckpt_tree_image_path(dir, t, i, path, sizeof(path));
	if (ret)
		return ckpt_err_set(err, -ret, "%s: path too long", dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return ckpt_err_set(err, errno, "%s: %s", path, strerror(errno));
	ret = ckpt_image_read(img, fd, CKPT_IMAGE_PAGES_TO_ENGINE);
	close(fd);
	if (ret)
		return ckpt_err_set(err, -ret, "%s: %s", path, strerror(-ret));
	return 0;
}

/*
 * Whether @t's other end is in one of @imgs, or @t was listed already: the
 * same socket held by an earlier member, or (waiting to be accepted, its
 * ino its listener's) the same connection in an earlier member's copy of
 * that listener's queue.
 */
static bool inside_or_seen(struct ckpt_image *imgs, uint32_t n, uint32_t i,
			   uint32_t k)
{
	const struct ckpt_img_tcp *t = imgs[i].tcps[k], *o;
	bool waiting = t->state == CKPT_TCP_WAITING;
	uint32_t a, b;

	for (a = 0; a < n; a++)
		for (b = 0; b < imgs[a].nr_tcps; b++) {
			o = imgs[a].tcps[b];
			if (ends_meet(t, o))
				return true;
			if (!(a < i || (a == i && b < k)) || o->ino != t->ino ||
			    waiting != (o->state == CKPT_TCP_WAITING))
				continue;
			if (!waiting || (o->sport == t->sport && o->dport == t->dport &&
					 !memcmp(o->dst, t->dst, 16)))
				return true;
		}
	return false;
}

/*
 * Connection @c waiting to be accepted: the bytes it received, as hex
 * (json), while they fit TCP_JOIN_WAIT_MAX and, with those of the share's
 * connections before it (*@total), TCP_JOIN_WAIT_TOTAL; else their count,
 * which the join refuses with -EAGAIN (a retry finds it accepted). NULL:
 * out of memory.
 */
static json_t *waiting_data(const struct ckpt_img_tcp *c, uint32_t *total)
{
	char *s;
	json_t *j;

	if (c->len > TCP_JOIN_WAIT_MAX || *total + c->len > TCP_JOIN_WAIT_TOTAL)
		return json_integer(c->len);
	*total += c->len;
	s = malloc(2 * c->len + 1);
	if (!s)
		return NULL;
	ckptd_hex(c->data, c->len, s);
	j = json_string(s);
	free(s);
	return j;
}

/*
 * [pid, fd, from, to, una, wseq, rnxt, peer_shut], and for a connection
 * waiting to be accepted its bytes (waiting_data(), *@total the share's so
 * far), or a listener's "ADDR:PORT":
 * lib/ckptd/tcpjoin.h. An IPv6
 * socket's IPv4-mapped addresses (::ffff:a.b.c.d: a dual-stack listener's
 * connection) are given as the IPv4 addresses its peer has.
 */
static json_t *end_json(const struct ckpt_img_tcp *c, pid_t pid, int fd,
		       uint32_t *total)
{
	static const uint8_t prefix[12] = { [10] = 0xff, [11] = 0xff };
	struct ckpt_img_tcp t = *c;
	char from[64], to[64];
	json_t *e;

	if (t.family == AF_INET6 && !memcmp(t.src, prefix, 12) &&
	    (c->state == CKPT_TCP_LISTEN || !memcmp(t.dst, prefix, 12))) {
		memmove(t.src, t.src + 12, 4);
		memmove(t.dst, t.dst + 12, 4);
		t.family = AF_INET;
	}
	ckpt_image_tcp_end(from, sizeof(from), &t, false);
	/* A listener: "ADDR:PORT", which a connection the node took in late meets. */
	if (c->state == CKPT_TCP_LISTEN)
		return json_string(from);
	ckpt_image_tcp_end(to, sizeof(to), &t, true);
	e = json_pack("[i, i, s, s, I, I, I, b]", (int)pid, fd, from, to,
		      (json_int_t)t.snd_una, (json_int_t)t.write_seq,
		      (json_int_t)t.rcv_nxt, !!(t.flags & CKPT_TCP_FIN_IN));
	if (e && c->state == CKPT_TCP_WAITING &&
	    json_array_append_new(e, waiting_data(c, total))) {
		json_decref(e);
		return NULL;
	}
	return e;
}

static json_t *tcp_ends(const char *dir, const struct ckpt_tree *t, struct ckpt_err *err)
{
	struct ckpt_image *imgs = calloc(t->nr ?: 1, sizeof(*imgs));
	json_t *ends = json_array();
	uint32_t i, k, n = 0, total = 0;
	int ret = 0;

	if (!imgs || !ends)
		ret = ckpt_err_set(err, ENOMEM, "out of memory");
	for (; !ret && n < t->nr; n++)
		ret = read_member(dir, t, n, &imgs[n], err);
	for (i = 0; !ret && i < n; i++)
		for (k = 0; !ret && k < imgs[i].nr_tcps; k++) {
			const struct ckpt_img_tcp *c = imgs[i].tcps[k];

			json_t *e;

			if ((c->state != CKPT_TCP_ESTABLISHED &&
			     c->state != CKPT_TCP_LISTEN &&
			     c->state != CKPT_TCP_WAITING) ||
			    inside_or_seen(imgs, n, i, k))
				continue;
			if (json_array_size(ends) >= TCP_JOIN_ENDS_MAX) {
				ret = ckpt_err_set(err, E2BIG, "more than %d TCP connections to other nodes",
						   TCP_JOIN_ENDS_MAX);
				break;
			}
			e = end_json(c, t->m[i].pid, fd_of(&imgs[i], c->ino), &total);
			if (e)
				json_array_append_new(ends, e);
			else
				ret = ckpt_err_set(err, ENOMEM, "out of memory");
		}
	for (i = 0; i < n; i++)
		ckpt_image_free(&imgs[i]);
	free(imgs);
	if (ret) {
		json_decref(ends);
		return NULL;
	}
	return ends;
}

/*
 * [pid, fd, from, to]: the metadata's entry of a connection to outside;
 * NULL for a listener's entry, which is none, and for a connection
 * waiting to be accepted (only a join takes one, never as outside).
 */
static json_t *tcp_outside(const json_t *e)
{
	if (json_is_string(e) || json_array_size(e) != 8)
		return NULL;
	return json_pack("[OOOO]", json_array_get(e, 0), json_array_get(e, 1),
			 json_array_get(e, 2), json_array_get(e, 3));
}

const struct channel_kind channel_tcp = {
	.name = "tcp",
	.ends = tcp_ends,
	.join = tcp_join,
	.outside = tcp_outside,
};
