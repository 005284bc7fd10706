// SPDX-License-Identifier: GPL-2.0
/*
 * The coordinator's join of a job's TCP connections between nodes
 * (Documentation/ckptd.md, "TCP between nodes"): each node's share lists
 * the ends of its connections whose other end is in none of its members
 * (ckptd's tcpjoin.c); every end must meet its other end in another
 * node's list, and the two must fit as the engine checks the two ends of
 * a connection inside a tree: what the receiver holds starts no later
 * than the first byte the sender still holds. The lists come from the
 * other nodes: everything is bounded and checked before use.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "proto.h"
#include "tcpjoin.h"

/* One end as the coordinator reads it from a node's list. */
struct tcp_end {
	const char *node, *from, *to;
	int pid, fd;
	json_int_t una, wseq, rnxt;
	int peer_shut;		/* its other end shut down writing */
	bool outside;		/* no other end: a process outside the job's */
	bool listen;		/* a listening socket of the share's, at @from */
	const char *waiting;	/* waiting to be accepted: its bytes, hex */
	json_int_t held;	/* ... or their count, too many to carry */
	size_t order;		/* its place in its node's list */
	struct tcp_end *peer;	/* waiting, joined: its other end */
};

static bool seq_ok(json_int_t v)
{
	return v >= 0 && v <= UINT32_MAX;
}

bool tcp_join_bytes_ok(const char *s)
{
	size_t len = strlen(s);

	return !(len & 1) && len <= 2 * TCP_JOIN_WAIT_MAX &&
	       strspn(s, "0123456789abcdef") == len;
}

/* Entry @e of node @node's list: 0, or -EPROTO for one of the wrong shape. */
static int end_read(const json_t *e, const char *node, struct tcp_end *out,
		    struct ckpt_err *err)
{
	out->node = node;
	/* A listening socket: its address alone, a string. */
	if (json_is_string(e)) {
		out->from = json_string_value(e);
		out->to = "";
		out->listen = true;
		if (strlen(out->from) > TCP_JOIN_ADDR_MAX || !strrchr(out->from, ':'))
			return ckpt_err_set(err, EPROTO, "node %.64s: a TCP listener of the wrong shape",
					    node);
		return 0;
	}
	if ((json_unpack((json_t *)e, "[iissIIIb!]", &out->pid, &out->fd,
			 &out->from, &out->to, &out->una, &out->wseq,
			 &out->rnxt, &out->peer_shut) &&
	     json_unpack((json_t *)e, "[iissIIIbs!]", &out->pid, &out->fd,
			 &out->from, &out->to, &out->una, &out->wseq,
			 &out->rnxt, &out->peer_shut, &out->waiting) &&
	     json_unpack((json_t *)e, "[iissIIIbI!]", &out->pid, &out->fd,
			 &out->from, &out->to, &out->una, &out->wseq,
			 &out->rnxt, &out->peer_shut, &out->held)) ||
	    out->pid <= 0 || out->fd < 0 ||
	    !strrchr(out->from, ':') || !strrchr(out->to, ':') ||
	    strlen(out->from) > TCP_JOIN_ADDR_MAX || strlen(out->to) > TCP_JOIN_ADDR_MAX ||
	    !seq_ok(out->una) || !seq_ok(out->wseq) || !seq_ok(out->rnxt) ||
	    (out->waiting && !tcp_join_bytes_ok(out->waiting)) ||
	    (json_is_integer(json_array_get(e, 8)) &&
	     (out->held < 1 || out->held > UINT32_MAX)))
		return ckpt_err_set(err, EPROTO, "node %.64s: a TCP end of the wrong shape",
				    node);
	return 0;
}

/* By local address, then peer address: the order bsearch() finds a peer in. */
static int by_ends(const void *a, const void *b)
{
	const struct tcp_end *x = a, *y = b;
	int c = strcmp(x->from, y->from);

	return c ? c : strcmp(x->to, y->to);
}

/* Every node's list into @all (@n of them): 0 or -errno with @err. */
static int read_all(const json_t *shares, struct tcp_end *all, size_t n,
		    struct ckpt_err *err)
{
	const json_t *share, *e;
	size_t i, k, have = 0;
	int ret = 0;

	json_array_foreach(shares, i, share) {
		const char *node = ckptd_msg_str(share, "node");

		if (!node)
			return ckpt_err_set(err, EPROTO, "a node's TCP ends without its name");
		json_array_foreach(json_object_get(share, "tcp"), k, e)
			if (!ret && have < n) {
				all[have].order = have;
				ret = end_read(e, node, &all[have++], err);
			}
	}
	return ret;
}

/*
 * Whether @t goes to a listening socket of another node's share: its port,
 * and its address or a wildcard ("HOST:PORT", "[V6]:PORT": the host is
 * what is before the last colon).
 */
static bool to_job_listener(const struct tcp_end *all, size_t n,
			    const struct tcp_end *t)
{
	const char *colon = strrchr(t->to, ':'), *c;
	size_t len = colon ? (size_t)(colon - t->to) : 0;
	size_t i;

	if (!colon)
		return false;
	for (i = 0; i < n; i++) {
		if (!all[i].listen || !strcmp(all[i].node, t->node))
			continue;
		c = strrchr(all[i].from, ':');
		if (strcmp(c, colon))
			continue;	/* another port */
		if (((size_t)(c - all[i].from) == len &&
		     !strncmp(all[i].from, t->to, len)) ||
		    !strncmp(all[i].from, "0.0.0.0:", 8) ||
		    !strncmp(all[i].from, "[::]:", 5))
			return true;
	}
	return false;
}

/* @e appended to @later's list @key of @node's: 0 or -ENOMEM. */
static int later_add(json_t *later, const char *node, const char *key,
		     json_t *e)
{
	json_t *n = json_object_get(later, node), *list;

	if (!n && json_object_set_new(later, node, n = json_object()))
		n = NULL;
	list = n ? json_object_get(n, key) : NULL;
	if (n && !list && json_object_set_new(n, key, list = json_array()))
		list = NULL;
	if (!list || json_array_append_new(list, e))
		return -ENOMEM;
	return 0;
}

static int by_order(const void *a, const void *b)
{
	const struct tcp_end *x = *(struct tcp_end *const *)a;
	const struct tcp_end *y = *(struct tcp_end *const *)b;

	return x->order < y->order ? -1 : x->order > y->order;
}

/*
 * Every connection of @all waiting to be accepted, joined with its other
 * end, which connects again at the restart: what each node's restart
 * needs, in @later (tcpjoin.h), in the order of the listeners' node's
 * list, which is its queues' order.
 */
static int waiting_later(json_t *later, struct tcp_end *all, size_t n,
			 struct ckpt_err *err)
{
	struct tcp_end **w = calloc(n + 1, sizeof(*w));
	size_t i, nw = 0, bytes = 0;
	int ret = 0;

	if (!w)
		return ckpt_err_set(err, ENOMEM, "out of memory");
	for (i = 0; i < n; i++)
		if (all[i].waiting && all[i].peer) {
			w[nw++] = &all[i];
			bytes += strlen(all[i].waiting) / 2;
		}
	/* The metadata carries them: bounded for the whole job too. */
	if (bytes > TCP_JOIN_WAIT_JOB) {
		free(w);
		return ckpt_err_set(err, EAGAIN, "the job's TCP connections waiting to be accepted from another node hold %zu bytes in all, more than its snapshot's metadata carries (%d); try again",
				    bytes, TCP_JOIN_WAIT_JOB);
	}
	qsort(w, nw, sizeof(*w), by_order);
	for (i = 0; !ret && i < nw; i++)
		if (later_add(later, w[i]->peer->node, "reconnect",
			      json_pack("[i, i, I, s]", w[i]->peer->pid, w[i]->peer->fd,
					w[i]->rnxt, w[i]->waiting)) ||
		    later_add(later, w[i]->node, "awaited",
			      json_pack("[i, i]", w[i]->pid, w[i]->fd)))
			ret = ckpt_err_set(err, ENOMEM, "out of memory");
	free(w);
	return ret;
}

/*
 * End @i of @all (@n, sorted): its own checks (@pass 0), or the gap (1).
 * With @outside, an end with no other end is added to it, not refused.
 */
static int check_end(struct tcp_end *all, size_t n, size_t i, int pass,
		     json_t *outside, struct ckpt_err *err)
{
	struct tcp_end *t = &all[i], *p;
	struct tcp_end key;
	bool unpaired, waiting = t->waiting || t->held;
	json_t *list;

	if (t->outside || t->listen)
		return 0;
	/* One end listed twice: two nodes claim the same addresses. */
	if (!pass && i + 1 < n && !all[i + 1].listen && !by_ends(t, &all[i + 1]))
		return ckpt_err_set(err, EPROTO, "nodes %.64s and %.64s both hold a TCP connection from %s to %s",
				    t->node, all[i + 1].node, t->from, t->to);
	key.from = t->to;
	key.to = t->from;
	p = bsearch(&key, all, n, sizeof(*all), by_ends);
	unpaired = !p || p->listen || !strcmp(p->node, t->node);
	/*
	 * Waiting to be accepted: from a connection of another node's share
	 * (not one waiting too), or from outside the job, which the process
	 * mostly accepts in moments: told with the gaps, never outside.
	 */
	if (waiting && !unpaired && (p->waiting || p->held))
		return ckpt_err_set(err, EPROTO, "nodes %.64s and %.64s both list a TCP connection between %s and %s as waiting to be accepted",
				    t->node, p->node, t->from, t->to);
	if (waiting && unpaired)
		return !pass ? 0 : ckpt_err_set(err, EAGAIN,
				    "node %.64s: pid %d fd %d listens on %s with a TCP connection from %s waiting to be accepted, whose other end is in no share of the job; try again",
				    t->node, t->pid, t->fd, t->from, t->to);
	if (t->held)
		return !pass ? 0 : ckpt_err_set(err, EAGAIN,
				    "node %.64s: pid %d fd %d listens on %s with a TCP connection from %s (node %.64s) waiting to be accepted that holds %lld bytes, more than a share's answer carries (%d a connection, %d in all); try again",
				    t->node, t->pid, t->fd, t->from, t->to, p->node,
				    (long long)t->held, TCP_JOIN_WAIT_MAX, TCP_JOIN_WAIT_TOTAL);
	/*
	 * Closed by a socket no share holds, whose holder closes its own in
	 * moments: told with the gaps, after any refusal, as a retry mends it
	 * (with --outside close, outside as any other, as on one node).
	 */
	if (unpaired && t->peer_shut && !outside)
		return !pass ? 0 : ckpt_err_set(err, EAGAIN,
				    "node %.64s: pid %d fd %d is a TCP connection from %s to %s closed by its other end, which no share of the job holds; try again",
				    t->node, t->pid, t->fd, t->from, t->to);
	/*
	 * To a listener of another node's share, which has no end of it: the
	 * nodes are taken one after the other, not at one instant, and that
	 * node's kernel took the connection in after its share was taken,
	 * before this one's (its frozen processes could not have made it).
	 * A retry mends it; told with the gaps, and never taken for one to
	 * outside.
	 */
	if (unpaired && !t->peer_shut && to_job_listener(all, n, t))
		return !pass ? 0 : ckpt_err_set(err, EAGAIN,
				    "node %.64s: pid %d fd %d is a TCP connection from %s to %s, a listener of another node's share, which has no end of it (made between the two nodes' captures); try again",
				    t->node, t->pid, t->fd, t->from, t->to);
	if (!pass && unpaired && outside) {
		list = json_object_get(outside, t->node);
		if (!list)
			json_object_set_new(outside, t->node, list = json_array());
		json_array_append_new(list, json_pack("[iiss]", t->pid, t->fd,
						      t->from, t->to));
		t->outside = true;
		return 0;
	}
	if (!pass && unpaired)
		return ckpt_err_set(err, EOPNOTSUPP,
				    "node %.64s: pid %d fd %d is a TCP connection from %s to %s, a process in no share of the job",
				    t->node, t->pid, t->fd, t->from, t->to);
	/* What @p holds must start where @t's sent data ends. */
	if (pass && (uint32_t)(p->rnxt - t->una) > (uint32_t)(t->wseq - t->una))
		return ckpt_err_set(err, EAGAIN,
				    "node %.64s: pid %d fd %d: bytes in flight from %s to %s (node %.64s) moved between the two nodes' captures; try again",
				    t->node, t->pid, t->fd, t->from, t->to, p->node);
	if (pass && t->waiting)
		t->peer = p;
	return 0;
}

int tcp_join(const json_t *shares, json_t *outside, json_t *later,
	     struct ckpt_err *err)
{
	struct tcp_end *all;
	const json_t *share;
	size_t i, n = 0;
	int ret, pass;

	if (!json_is_array(shares) || json_array_size(shares) > TCP_JOIN_NODES_MAX)
		return ckpt_err_set(err, EPROTO, "not a list of at most %d nodes' TCP ends",
				    TCP_JOIN_NODES_MAX);
	json_array_foreach(shares, i, share) {
		const json_t *ends = json_object_get(share, "tcp");
		const char *node = ckptd_msg_str(share, "node") ?: "?";

		if (!json_is_array(ends))
			return ckpt_err_set(err, EPROTO, "node %.64s: no list of TCP ends",
					    node);
		if (json_array_size(ends) > TCP_JOIN_ENDS_MAX)
			return ckpt_err_set(err, E2BIG, "node %.64s: more than %d TCP ends",
					    node, TCP_JOIN_ENDS_MAX);
		n += json_array_size(ends);
	}
	all = calloc(n ?: 1, sizeof(*all));
	if (!all)
		return ckpt_err_set(err, ENOMEM, "out of memory");
	ret = read_all(shares, all, n, err);
	if (!ret)
		qsort(all, n, sizeof(*all), by_ends);
	/*
	 * Two passes: what no retry mends (an end claimed twice, one with
	 * no other end) is told before a gap, which a retry may mend.
	 */
	for (pass = 0; !ret && pass < 2; pass++)
		for (i = 0; !ret && i < n; i++)
			ret = check_end(all, n, i, pass, outside, err);
	if (!ret && later)
		ret = waiting_later(later, all, n, err);
	free(all);
	return ret;
}
