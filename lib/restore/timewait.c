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

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "err.h"
#include "restore_int.h"
#include "treedir.h"

/* The states of a connection its process closed (include/net/tcp_states.h). */
#define TW_STATES	(1U << 4 | 1U << 5 | 1U << 6 | 1U << 9 | 1U << 11)
		/* FIN_WAIT1, FIN_WAIT2, TIME_WAIT, LAST_ACK, CLOSING */
#define TW_MAX		256	/* ended at most, per socket made */

struct tw_req {
	struct nlmsghdr nh;
	struct inet_diag_req_v2 r;
};

/*
 * Whether socket @m stands in @t's way: to bind (@bind), one on its
 * address and port; to connect, one on its four addresses. Only an
 * orphan (no process holds it: sock_diag gives it no inode) if @orphans.
 */
static bool in_the_way(const struct ckpt_img_tcp *t, bool bind, bool orphans,
		       const struct inet_diag_msg *m)
{
	static const uint8_t any[16];
	size_t alen = m->idiag_family == AF_INET ? 4 : 16;

	if (orphans && m->idiag_inode)
		return false;
	if (ntohs(m->id.idiag_sport) != t->sport)
		return false;
	if (bind)
		return m->idiag_family != t->family || !memcmp(t->src, any, 16) ||
		       !memcmp(m->id.idiag_src, any, alen) ||
		       !memcmp(m->id.idiag_src, t->src, alen);
	return m->idiag_family == t->family &&
	       ntohs(m->id.idiag_dport) == t->dport &&
	       !memcmp(m->id.idiag_src, t->src, alen) &&
	       !memcmp(m->id.idiag_dst, t->dst, alen);
}

/* A dump's question: the sockets of @family in @states. */
struct tw_find {
	int family;
	uint32_t states;
	bool orphans;		/* only those no process holds */
	struct inet_diag_msg *found;
	int max;
	/* Without @t: those on the four addresses of one of @ts[@nt]. */
	const struct ckpt_img_tcp *const *ts;
	uint32_t nt;
};

/* Whether @m is wanted by @q: in @t's way, or one of @q->ts's. */
static bool wanted(const struct tw_find *q, const struct ckpt_img_tcp *t,
		   bool bind, const struct inet_diag_msg *m)
{
	uint32_t i;

	if (t)
		return in_the_way(t, bind, q->orphans, m);
	for (i = 0; i < q->nt; i++)
		if (in_the_way(q->ts[i], false, q->orphans, m))
			return true;
	return false;
}

/* The sockets @q asks for in @t's way, into @q->found: how many, or -errno. */
static int find(int nl, const struct tw_find *q, const struct ckpt_img_tcp *t,
		bool bind)
{
	struct tw_req req = {
		.nh = { .nlmsg_len = sizeof(req), .nlmsg_type = SOCK_DIAG_BY_FAMILY,
			.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP },
		.r = { .sdiag_family = q->family, .sdiag_protocol = IPPROTO_TCP,
		       .idiag_states = q->states },
	};
	char buf[16384] __attribute__((aligned(NLMSG_ALIGNTO)));
	struct nlmsghdr *h;
	int have = 0;
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
			if (have < q->max && wanted(q, t, bind, NLMSG_DATA(h)))
				q->found[have++] = *(struct inet_diag_msg *)NLMSG_DATA(h);
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

/* The families whose sockets may stand in @t's way (the second, or 0). */
static void families_of(const struct ckpt_img_tcp *t, bool bind, int f[2])
{
	f[0] = t->family;
	f[1] = 0;
	/* An IPv6 port not IPv6-only is IPv4's too. */
	if (t->family == AF_INET6 && bind && !(t->flags & CKPT_TCP_V6ONLY))
		f[1] = AF_INET;
}

int restore_end_time_wait(const struct ckpt_img_tcp *t, bool bind)
{
	struct inet_diag_msg found[TW_MAX];
	struct tw_find q = { .states = TW_STATES, .orphans = true,
			     .found = found, .max = TW_MAX };
	int families[2], nl, f, i, n, ended = 0, ret = 0;

	families_of(t, bind, families);
	nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (nl < 0)
		return -errno;
	for (f = 0; f < 2 && families[f] && !ret; f++) {
		q.family = families[f];
		n = find(nl, &q, t, bind);
		if (n < 0)
			ret = n;
		for (i = 0; i < n && !ret; i++) {
			ret = destroy(nl, families[f], &found[i].id);
			ended += !ret;
			if (ret == -ENOENT)	/* gone meanwhile */
				ret = 0;
		}
	}
	close(nl);
	return ret ?: ended;
}

/*
 * Ending a connection in FIN_WAIT1 or FIN_WAIT2 resets its other end
 * (tcp_abort() sends a RST with the original's sequence numbers). Restarted
 * at once on the same addresses, that other end may be a socket a restart
 * has made already, in repair mode, which takes the RST when its sequence
 * matches (the original never sent its FIN: a full window): the connection
 * is reset before the job runs. So the closed connections on the four
 * addresses of any connection of the restart are ended before the first
 * socket is made: here, for the connections of @n images (at the
 * addresses they will have) but those whose socket is one of @closed
 * (connections to outside the job, made again unconnected: theirs are
 * left to close as they do), and by ckptd on every node of a job before
 * any makes its share (ckpt_restore_end_closed()). One dump a family. Those
 * on a listening or bound socket's port that no connection of the images
 * has are left to the making (again()): ending them resets only ends that
 * no restart makes. How many were ended; a failure is left to the making,
 * which tries again.
 */
int restore_end_closed(struct ckpt_image *const *imgs, uint32_t n,
		       const uint64_t *closed, uint32_t nr_closed)
{
	static const int families[] = { AF_INET, AF_INET6 };
	struct tw_find q = { .states = TW_STATES, .orphans = true, .max = TW_MAX };
	const struct ckpt_img_tcp **ts;
	struct inet_diag_msg *found;
	uint32_t i, k, nt = 0;
	int nl, f, j, got, ended = 0;

	for (i = 0; i < n; i++)
		nt += imgs[i]->nr_tcps;
	if (!nt)
		return 0;
	ts = calloc(nt, sizeof(*ts));
	found = calloc(TW_MAX, sizeof(*found));
	nl = ts && found ? socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG) : -1;
	for (f = 0; nl >= 0 && f < 2; f++) {
		q.family = families[f];
		q.ts = ts;
		q.found = found;
		q.nt = 0;
		for (i = 0; i < n; i++)
			for (k = 0; k < imgs[i]->nr_tcps; k++) {
				const struct ckpt_img_tcp *t = imgs[i]->tcps[k];

				if (t->state == CKPT_TCP_ESTABLISHED && (int)t->family == families[f] &&
				    !restore_is_closed(t->ino, closed, nr_closed))
					ts[q.nt++] = t;
			}
		got = q.nt ? find(nl, &q, NULL, false) : 0;
		for (j = 0; j < got; j++)
			ended += !destroy(nl, families[f], &found[j].id);
	}
	if (nl >= 0)
		close(nl);
	free(ts);
	free(found);
	return ended;
}

int ckpt_restore_end_closed(const char *dir, const struct ckpt_restore_opts *o,
			    struct ckpt_err *err)
{
	struct ckpt_image *img, **imgs = NULL;
	uint64_t *inos = NULL;
	char path[PATH_MAX];
	struct ckpt_tree t;
	uint32_t i, n = 0;
	int fd, ret;

	ret = ckpt_tree_read(dir, &t, err);
	if (ret)
		return ret;
	img = calloc(t.nr ?: 1, sizeof(*img));
	imgs = calloc(t.nr ?: 1, sizeof(*imgs));
	inos = calloc(o->nr_closed + 1, sizeof(*inos));
	if (!img || !imgs || !inos)
		ret = ckpt_err_set(err, ENOMEM, "out of memory");
	for (i = 0; !ret && i < t.nr; i++, n++) {
		ckpt_image_init(&img[i]);
		imgs[i] = &img[i];
		ret = ckpt_tree_image_path(dir, &t, i, path, sizeof(path));
		if (ret) {
			ret = ckpt_err_set(err, ENAMETOOLONG, "%s: path too long", dir);
			break;
		}
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			ret = ckpt_err_set(err, errno, "%s: %s", path, strerror(errno));
			break;
		}
		ret = ckpt_image_read(&img[i], fd, CKPT_IMAGE_PAGES_TO_ENGINE);
		close(fd);
		if (ret)
			ret = ckpt_err_set(err, -ret, "%s: %s", path, strerror(-ret));
	}
	if (!ret)
		ret = restore_closed_inos(&t, imgs, o, inos, err);
	if (ret >= 0)
		ret = restore_end_closed(imgs, n, inos, ret);
	for (i = 0; img && i < n; i++)
		ckpt_image_free(&img[i]);
	free(img);
	free(imgs);
	free(inos);
	ckpt_tree_free(&t);
	return ret;
}

/* include/net/tcp_states.h's, by number. */
static const char *const tcp_state[] = {
	"?", "ESTABLISHED", "SYN_SENT", "SYN_RECV", "FIN_WAIT1", "FIN_WAIT2",
	"TIME_WAIT", "CLOSE", "CLOSE_WAIT", "LAST_ACK", "LISTEN", "CLOSING",
	"NEW_SYN_RECV",
};

/* The process holding socket inode @ino (its pid), or 0. */
static pid_t holder_of(uint32_t ino, char *comm, size_t len)
{
	char want[32], path[64], link[32];
	struct dirent *p, *fd;
	pid_t pid = 0;
	DIR *proc, *fds;
	FILE *f;
	ssize_t n;

	snprintf(want, sizeof(want), "socket:[%u]", ino);
	proc = opendir("/proc");
	while (proc && !pid && (p = readdir(proc))) {
		if (p->d_name[0] < '1' || p->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%.16s/fd", p->d_name);
		fds = opendir(path);
		while (fds && !pid && (fd = readdir(fds))) {
			snprintf(path, sizeof(path), "/proc/%.16s/fd/%.16s",
				 p->d_name, fd->d_name);
			n = readlink(path, link, sizeof(link) - 1);
			if (n > 0 && (link[n] = '\0', !strcmp(link, want)))
				pid = atoi(p->d_name);
		}
		if (fds)
			closedir(fds);
	}
	if (proc)
		closedir(proc);
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	f = pid ? fopen(path, "re") : NULL;
	if (!f || !fgets(comm, len, f))
		snprintf(comm, len, "?");
	comm[strcspn(comm, "\n")] = '\0';
	if (f)
		fclose(f);
	return pid;
}

void restore_port_holder(const struct ckpt_img_tcp *t, bool bind, char *buf,
			 size_t len)
{
	struct inet_diag_msg m;
	struct tw_find q = { .states = ~0U, .found = &m, .max = 1 };
	int families[2], nl, f, n = 0;
	char addr[INET6_ADDRSTRLEN] = "?", end[INET6_ADDRSTRLEN + 8], comm[32];
	pid_t pid;

	buf[0] = '\0';
	families_of(t, bind, families);
	nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (nl < 0)
		return;
	for (f = 0; f < 2 && families[f] && n <= 0; f++) {
		q.family = families[f];
		n = find(nl, &q, t, bind);
	}
	close(nl);
	if (n <= 0)
		return;
	inet_ntop(m.idiag_family, m.id.idiag_src, addr, sizeof(addr));
	snprintf(end, sizeof(end), m.idiag_family == AF_INET6 ? "[%s]:%u" : "%s:%u",
		 addr, ntohs(m.id.idiag_sport));
	pid = m.idiag_inode ? holder_of(m.idiag_inode, comm, sizeof(comm)) : 0;
	if (pid)
		snprintf(buf, len, "pid %d (%s) holds socket:[%u] there, %s on %s",
			 (int)pid, comm, m.idiag_inode,
			 tcp_state[m.idiag_state < 13 ? m.idiag_state : 0], end);
	else
		snprintf(buf, len, "%s socket:[%u] is there, %s on %s",
			 m.idiag_inode ? "a" : "an orphan", m.idiag_inode,
			 tcp_state[m.idiag_state < 13 ? m.idiag_state : 0], end);
}
