// SPDX-License-Identifier: GPL-2.0
/*
 * The original's TIME_WAIT sockets, ended (Documentation/engine.md,
 * "TCP"): a job killed and restarted at once finds the connections its
 * original closed still in TIME_WAIT for a minute, holding the addresses
 * and ports the restart makes its sockets on again. Those that stand in a
 * restarted socket's way (its listening port, its connection's four
 * addresses) are ended through sock_diag's SOCK_DESTROY, as `ss -K` does
 * (the restarter's CAP_NET_ADMIN): they are the original's past, which
 * the restart continues.
 */

#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "restore_int.h"

#define TW_STATE	6	/* TCP_TIME_WAIT */
#define TW_MAX		256	/* ended at most, per socket made */

struct tw_req {
	struct nlmsghdr nh;
	struct inet_diag_req_v2 r;
};

/* Whether TIME_WAIT socket @m stands in @t's way. */
static bool in_the_way(const struct ckpt_img_tcp *t,
		       const struct inet_diag_msg *m)
{
	static const uint8_t any[16];
	size_t alen = m->idiag_family == AF_INET ? 4 : 16;

	if (ntohs(m->id.idiag_sport) != t->sport)
		return false;
	if (t->state != CKPT_TCP_ESTABLISHED)	/* a port to bind */
		return m->idiag_family != t->family || !memcmp(t->src, any, 16) ||
		       !memcmp(m->id.idiag_src, t->src, alen);
	return m->idiag_family == t->family &&
	       ntohs(m->id.idiag_dport) == t->dport &&
	       !memcmp(m->id.idiag_src, t->src, alen) &&
	       !memcmp(m->id.idiag_dst, t->dst, alen);
}

/* The TIME_WAIT sockets of @family in @t's way, into @ids: how many. */
static int find(int nl, int family, const struct ckpt_img_tcp *t,
		struct inet_diag_sockid *ids, int have)
{
	struct tw_req req = {
		.nh = { .nlmsg_len = sizeof(req), .nlmsg_type = SOCK_DIAG_BY_FAMILY,
			.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP },
		.r = { .sdiag_family = family, .sdiag_protocol = IPPROTO_TCP,
		       .idiag_states = 1U << TW_STATE },
	};
	char buf[16384] __attribute__((aligned(NLMSG_ALIGNTO)));
	struct nlmsghdr *h;
	ssize_t n;

	if (send(nl, &req, sizeof(req), 0) < 0)
		return -errno;
	for (;;) {
		n = recv(nl, buf, sizeof(buf), 0);
		if (n < 0)
			return -errno;
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n);
		     h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_type == NLMSG_DONE)
				return have;
			if (h->nlmsg_type == NLMSG_ERROR)
				return -EIO;
			if (h->nlmsg_len < NLMSG_LENGTH(sizeof(struct inet_diag_msg)))
				continue;
			if (have < TW_MAX && in_the_way(t, NLMSG_DATA(h)))
				ids[have++] = ((struct inet_diag_msg *)NLMSG_DATA(h))->id;
		}
	}
}

/* Ends TIME_WAIT socket @id of @family; 0 or -errno. */
static int destroy(int nl, int family, const struct inet_diag_sockid *id)
{
	struct tw_req req = {
		.nh = { .nlmsg_len = sizeof(req), .nlmsg_type = SOCK_DESTROY,
			.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK },
		.r = { .sdiag_family = family, .sdiag_protocol = IPPROTO_TCP,
		       .idiag_states = 1U << TW_STATE, .id = *id },
	};
	struct {
		struct nlmsghdr nh;
		struct nlmsgerr e;
	} ack;

	if (send(nl, &req, sizeof(req), 0) < 0)
		return -errno;
	if (recv(nl, &ack, sizeof(ack), 0) < (ssize_t)sizeof(ack))
		return -EIO;
	return ack.nh.nlmsg_type == NLMSG_ERROR ? ack.e.error : 0;
}

int restore_end_time_wait(const struct ckpt_img_tcp *t)
{
	struct inet_diag_sockid ids[TW_MAX];
	int families[2] = { t->family, 0 }, nl, f, i, n, ended = 0, ret = 0;

	/* An IPv6 port not IPv6-only is IPv4's too. */
	if (t->family == AF_INET6 && t->state != CKPT_TCP_ESTABLISHED &&
	    !(t->flags & CKPT_TCP_V6ONLY))
		families[1] = AF_INET;
	nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (nl < 0)
		return -errno;
	for (f = 0; f < 2 && families[f] && !ret; f++) {
		n = find(nl, families[f], t, ids, 0);
		if (n < 0)
			ret = n;
		for (i = 0; i < n && !ret; i++) {
			ret = destroy(nl, families[f], &ids[i]);
			ended += !ret;
			if (ret == -ENOENT)	/* gone meanwhile */
				ret = 0;
		}
	}
	close(nl);
	return ret ?: ended;
}
