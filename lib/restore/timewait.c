// SPDX-License-Identifier: GPL-2.0
/*
 * The original's closed connections, ended (Documentation/engine.md,
 * "TCP"): a job killed and restarted at once finds the connections its
 * original closed still in TIME_WAIT for a minute, or, on a slow machine,
 * still closing (FIN_WAIT1/2, CLOSING, LAST_ACK), holding the addresses
 * and ports the restart makes its sockets on again. Those that stand in a
 * restarted socket's way (its listening port, its connection's four
 * addresses) and that no process holds any more (orphans: sock_diag gives
 * them no inode) are ended through sock_diag's SOCK_DESTROY, as `ss -K`
 * does (the restarter's CAP_NET_ADMIN): they are the original's past,
 * which the restart continues. A socket some process still holds is never
 * touched.
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

/* The states of a connection its process closed (include/net/tcp_states.h). */
#define TW_STATES	(1U << 4 | 1U << 5 | 1U << 6 | 1U << 9 | 1U << 11)
		/* FIN_WAIT1, FIN_WAIT2, TIME_WAIT, LAST_ACK, CLOSING */
#define TW_MAX		256	/* ended at most, per socket made */

struct tw_req {
	struct nlmsghdr nh;
	struct inet_diag_req_v2 r;
};

/*
 * Whether closed socket @m is an orphan standing in @t's way: to bind
 * (@bind), one on its address and port; to connect, one on its four
 * addresses.
 */
static bool in_the_way(const struct ckpt_img_tcp *t, bool bind,
		       const struct inet_diag_msg *m)
{
	static const uint8_t any[16];
	size_t alen = m->idiag_family == AF_INET ? 4 : 16;

	if (m->idiag_inode)	/* a process holds it */
		return false;
	if (ntohs(m->id.idiag_sport) != t->sport)
		return false;
	if (bind)
		return m->idiag_family != t->family || !memcmp(t->src, any, 16) ||
		       !memcmp(m->id.idiag_src, t->src, alen);
	return m->idiag_family == t->family &&
	       ntohs(m->id.idiag_dport) == t->dport &&
	       !memcmp(m->id.idiag_src, t->src, alen) &&
	       !memcmp(m->id.idiag_dst, t->dst, alen);
}

/* The closed orphans of @family in @t's way, into @ids: how many. */
static int find(int nl, int family, const struct ckpt_img_tcp *t, bool bind,
		struct inet_diag_sockid *ids, int have)
{
	struct tw_req req = {
		.nh = { .nlmsg_len = sizeof(req), .nlmsg_type = SOCK_DIAG_BY_FAMILY,
			.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP },
		.r = { .sdiag_family = family, .sdiag_protocol = IPPROTO_TCP,
		       .idiag_states = TW_STATES },
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
			if (have < TW_MAX && in_the_way(t, bind, NLMSG_DATA(h)))
				ids[have++] = ((struct inet_diag_msg *)NLMSG_DATA(h))->id;
		}
	}
}

/* Ends closed orphan @id of @family; 0 or -errno. */
static int destroy(int nl, int family, const struct inet_diag_sockid *id)
{
	struct tw_req req = {
		.nh = { .nlmsg_len = sizeof(req), .nlmsg_type = SOCK_DESTROY,
			.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK },
		.r = { .sdiag_family = family, .sdiag_protocol = IPPROTO_TCP,
		       .idiag_states = TW_STATES, .id = *id },
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

int restore_end_time_wait(const struct ckpt_img_tcp *t, bool bind)
{
	struct inet_diag_sockid ids[TW_MAX];
	int families[2] = { t->family, 0 }, nl, f, i, n, ended = 0, ret = 0;

	/* An IPv6 port not IPv6-only is IPv4's too. */
	if (t->family == AF_INET6 && bind &&
	    !(t->flags & CKPT_TCP_V6ONLY))
		families[1] = AF_INET;
	nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (nl < 0)
		return -errno;
	for (f = 0; f < 2 && families[f] && !ret; f++) {
		n = find(nl, families[f], t, bind, ids, 0);
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
