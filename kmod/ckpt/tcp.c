// SPDX-License-Identifier: GPL-2.0
/*
 * TCP sockets (Documentation/engine.md, "TCP"), IPv4 and IPv6: a
 * connection both of whose ends are the process's (a tree's: members'), a
 * listening socket and the connections waiting in its queue whose other
 * ends are, a socket neither connected nor listening, one whose connect()
 * is under way (made again). A
 * connection's image holds what the TCP_REPAIR interface would read: its
 * addresses, sequence numbers, windows, negotiated options and both
 * queues, the send queue from the first byte its peer has not
 * acknowledged. The restarter makes it again with TCP_REPAIR, and
 * the stack sends again whatever the peer had not acknowledged: a byte its
 * peer's receive queue already holds is dropped there as a duplicate, so
 * none is lost and none delivered twice.
 *
 * Everything is read under the socket's lock, which holds off the stack
 * (packets arriving meanwhile wait in its backlog), while its holder is
 * frozen. The two ends of a connection are read one after the other; a
 * segment its receiver acknowledged in between would be in neither image,
 * and ckpt_tcp_check_pairs() fails the checkpoint then (-EAGAIN: bytes
 * were in flight; trying again finds them in place).
 */

#include <linux/file.h>
#include <linux/net.h>
#include <linux/slab.h>
#include <linux/tcp.h>
#include <net/inet_connection_sock.h>
#include <net/inet_sock.h>
#include <net/ipv6.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "checkpoint.h"
#include "tcp.h"
#include "why.h"

static struct sock *tcp_sock_of(struct file *file)
{
	struct socket *sock = sock_from_file(file);
	struct sock *sk = sock ? sock->sk : NULL;

	if (!sk || (sk->sk_family != AF_INET && sk->sk_family != AF_INET6) ||
	    sk->sk_type != SOCK_STREAM || sk->sk_protocol != IPPROTO_TCP)
		return NULL;
	return sk;
}

bool ckpt_is_tcp(struct file *file)
{
	return tcp_sock_of(file);
}

static void addresses(const struct sock *sk, struct ckpt_img_tcp *t)
{
	const struct inet_sock *inet = inet_sk(sk);

	t->family = sk->sk_family;
	if (sk->sk_family == AF_INET) {
		memcpy(t->src, &inet->inet_rcv_saddr, 4);
		memcpy(t->dst, &inet->inet_daddr, 4);
	}
#if IS_ENABLED(CONFIG_IPV6)
	if (sk->sk_family == AF_INET6) {
		memcpy(t->src, &sk->sk_v6_rcv_saddr, 16);
		memcpy(t->dst, &sk->sk_v6_daddr, 16);
	}
#endif
	t->sport = inet->inet_num;
	t->dport = ntohs(inet->inet_dport);
}

/* The options a user sets, which the restart sets again. */
static void options(const struct sock *sk, struct ckpt_img_tcp *t)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	t->flags = (tp->nonagle & TCP_NAGLE_OFF ? CKPT_TCP_NODELAY : 0) |
		   (tp->nonagle & TCP_NAGLE_CORK ? CKPT_TCP_CORK : 0) |
		   (sock_flag(sk, SOCK_KEEPOPEN) ? CKPT_TCP_KEEPALIVE : 0) |
		   (sk->sk_reuse ? CKPT_TCP_REUSEADDR : 0) |
		   (sk->sk_reuseport ? CKPT_TCP_REUSEPORT : 0) |
		   (sk->sk_userlocks & SOCK_SNDBUF_LOCK ? CKPT_TCP_SNDBUF : 0) |
		   (sk->sk_userlocks & SOCK_RCVBUF_LOCK ? CKPT_TCP_RCVBUF : 0) |
		   (sk->sk_shutdown & RCV_SHUTDOWN ? CKPT_TCP_SHUT_RD : 0);
#if IS_ENABLED(CONFIG_IPV6)
	if (sk->sk_family == AF_INET6 && sk->sk_ipv6only)
		t->flags |= CKPT_TCP_V6ONLY;
#endif
	t->sndbuf = READ_ONCE(sk->sk_sndbuf);
	t->rcvbuf = READ_ONCE(sk->sk_rcvbuf);
	t->keepidle = READ_ONCE(tp->keepalive_time) / HZ;
	t->keepintvl = READ_ONCE(tp->keepalive_intvl) / HZ;
	t->keepcnt = READ_ONCE(tp->keepalive_probes);
}

/*
 * @skb's bytes from sequence number @from + *@at on, at @buf + *@at;
 * @syn: a SYN takes the first sequence number. -EAGAIN on a hole.
 */
static int copy_skb(const struct sk_buff *skb, u32 from, u8 *buf, u32 want,
		    u32 *at, bool syn)
{
	u32 seq = TCP_SKB_CB(skb)->seq + syn, skip = 0, n;

	if (before(seq, from + *at))
		skip = from + *at - seq;
	if (skip >= skb->len)
		return 0;	/* acknowledged or read already */
	if (seq + skip != from + *at)
		return -EAGAIN;
	n = skb->len - skip;
	if (n > want - *at)
		return -EIO;
	if (skb_copy_bits(skb, skip, buf + *at, n))
		return -EIO;
	*at += n;
	return 0;
}

/* The send queue, sent and not sent, from snd_una to write_seq. */
static int copy_send_queue(struct sock *sk, u8 *buf, u32 want)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct sk_buff *skb;
	u32 at = 0;
	int ret = 0;

	for (skb = tcp_rtx_queue_head(sk); !ret && skb; skb = skb_rb_next(skb))
		ret = copy_skb(skb, tp->snd_una, buf, want, &at, false);
	skb_queue_walk(&sk->sk_write_queue, skb) {
		if (ret)
			break;
		ret = copy_skb(skb, tp->snd_una, buf, want, &at, false);
	}
	return ret ?: at == want ? 0 : -EAGAIN;
}

/* The receive queue, from copied_seq (what was read) to rcv_nxt. */
static int copy_receive_queue(struct sock *sk, u8 *buf, u32 want)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct sk_buff *skb;
	u32 at = 0;
	int ret = 0;

	skb_queue_walk(&sk->sk_receive_queue, skb) {
		ret = copy_skb(skb, tp->copied_seq, buf, want, &at,
			       TCP_SKB_CB(skb)->tcp_flags & TCPHDR_SYN);
		if (ret)
			break;
	}
	return ret ?: at == want ? 0 : -EAGAIN;
}

/* What about a connection the restart cannot make again, or NULL. */
static const char *connection_refused(const struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	if (tp->repair)
		return "a TCP connection in repair mode";
	if (READ_ONCE(tp->urg_data))
		return "a TCP connection with urgent data: not supported";
	if (inet_csk(sk)->icsk_ulp_ops)
		return "a TCP connection with an upper-layer protocol (kernel TLS): not supported";
	if (rcu_access_pointer(tp->fastopen_rsk))
		return "a TCP Fast Open connection still in its handshake: not supported yet";
	if (sk->sk_bound_dev_if)
		return "a TCP socket bound to a device: not supported yet";
	/* A FIN received (CLOSE_WAIT) is done reading too: that is captured. */
	if (sk->sk_err ||
	    (sock_flag(sk, SOCK_DONE) && sk->sk_state != TCP_CLOSE_WAIT))
		return "a TCP connection that was reset or closed: not supported yet";
	return NULL;
}

/*
 * A connection in a state the engine does not capture: the reason in @why,
 * and -EAGAIN for the rest of the handshake and for both ends' FINs under
 * way, which last a round trip (a Fast Open child; a close answered by a
 * close, its last ACK not in yet) and which a checkpoint tries again.
 */
static int state_refused(const struct sock *sk, const char **why)
{
	switch (sk->sk_state) {
	case TCP_SYN_RECV:
		*why = "a TCP connection still in its handshake: not supported yet";
		return -EAGAIN;
	case TCP_CLOSING:
	case TCP_LAST_ACK:
		*why = "a TCP connection closing both ways (its last ACK not in yet): not supported yet";
		return -EAGAIN;
	}
	*why = "a TCP socket in a state this engine does not know";
	return -EOPNOTSUPP;
}

/* The sequence numbers, windows and negotiated options of a connection. */
static void connection(const struct sock *sk, struct ckpt_img_tcp *t)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	t->state = CKPT_TCP_ESTABLISHED;
	t->snd_una = tp->snd_una;
	t->snd_nxt = tp->snd_nxt;
	t->write_seq = tp->write_seq;
	t->copied_seq = tp->copied_seq;
	t->rcv_nxt = tp->rcv_nxt;
	t->snd_wl1 = tp->snd_wl1;
	t->snd_wnd = tp->snd_wnd;
	t->max_window = tp->max_window;
	t->rcv_wnd = tp->rcv_wnd;
	t->rcv_wup = tp->rcv_wup;
	t->mss = tp->rx_opt.mss_clamp;
	if (tp->rx_opt.sack_ok)
		t->flags |= CKPT_TCP_OPT_SACK;
	if (tp->rx_opt.tstamp_ok)
		t->flags |= CKPT_TCP_OPT_TSTAMP;
	if (tp->rx_opt.wscale_ok) {
		t->flags |= CKPT_TCP_OPT_WSCALE;
		t->snd_wscale = tp->rx_opt.snd_wscale;
		t->rcv_wscale = tp->rx_opt.rcv_wscale;
	}
	t->timestamp = ckpt_tcp_timestamp(tp);
}

/* Whether @skb, the last of a send queue, carries the connection's FIN. */
static bool has_fin(const struct sk_buff *skb)
{
	return skb && TCP_SKB_CB(skb)->tcp_flags & TCPHDR_FIN;
}

/*
 * A half-closed connection as an established one (ckpt_image.h): the FIN
 * it sent, or the one it received, taken out of its sequence numbers; the
 * windows' right edges stay where they were (a window moved back by the
 * FIN's one would hold the FIN sent again at a closed window, and
 * TCP_REPAIR_WINDOW refuses an update from past the receive window).
 * -EOPNOTSUPP if it shut down writing but its FIN is not queued: the
 * kernel could not allocate one, and does not try again.
 */
static int half_closed(struct sock *sk, struct ckpt_img_tcp *t)
{
	u32 end;

	if (sk->sk_state == TCP_FIN_WAIT1 &&
	    !has_fin(tcp_write_queue_tail(sk)) &&
	    !has_fin(skb_rb_last(&sk->tcp_rtx_queue)))
		return -EOPNOTSUPP;
	if (sk->sk_state == TCP_FIN_WAIT1 || sk->sk_state == TCP_FIN_WAIT2) {
		end = t->write_seq - 1;	/* the FIN's sequence number */
		t->flags |= CKPT_TCP_FIN_OUT;
		t->write_seq = end;
		if (after(t->snd_nxt, end))
			t->snd_nxt = end;
		if (after(t->snd_una, end)) {
			t->snd_wnd += t->snd_una - end;
			t->max_window = max(t->max_window, t->snd_wnd);
			t->snd_una = end;
		}
	}
	if (sk->sk_state == TCP_CLOSE_WAIT) {
		end = t->rcv_nxt - 1;	/* the peer's FIN's */
		/* Its FIN shut reading, not the process: it comes again. */
		t->flags = (t->flags | CKPT_TCP_FIN_IN) & ~CKPT_TCP_SHUT_RD;
		t->rcv_nxt = end;
		if (after(t->copied_seq, end))
			t->copied_seq = end;	/* the end of the stream read */
		if (after(t->rcv_wup, end)) {
			t->rcv_wnd += t->rcv_wup - end;
			t->rcv_wup = end;
		}
		if (after(t->snd_wl1, end))
			t->snd_wl1 = end;
	}
	return 0;
}

/* Under the socket's lock: what @t's fixed part says, or a refusal. */
static int read_socket(struct sock *sk, struct ckpt_img_tcp *t,
		       const char **why)
{
	u32 sendq, recvq;

	addresses(sk, t);
	options(sk, t);
	switch (sk->sk_state) {
	case TCP_LISTEN:
		/*
		 * Its half-open connections are a moment's state (a runtime
		 * connecting lazily): -EAGAIN, which a tree's checkpoint
		 * tries again a little later. Those established and waiting
		 * to be accepted: ckpt_tcp_capture_waiting().
		 */
		if (inet_csk_reqsk_queue_len(sk)) {
			*why = "a listening TCP socket with a connection still in its handshake (SYN_RECV): not supported yet";
			return -EAGAIN;
		}
		t->state = CKPT_TCP_LISTEN;
		t->backlog = READ_ONCE(sk->sk_max_ack_backlog);
		return 0;
	case TCP_CLOSE:
		/*
		 * Mostly a moment's state too: a duplicate connection an MPI
		 * runtime gave up (both ends dialled at once), its holder
		 * closing it in its next poll. Tried again.
		 */
		if (sk->sk_err || sock_flag(sk, SOCK_DONE)) {
			*why = "a TCP connection that was reset or closed, which its process has not closed yet: not supported; try again";
			return -EAGAIN;
		}
		t->state = CKPT_TCP_CLOSED;
		memset(t->dst, 0, sizeof(t->dst));
		t->dport = 0;
		if (t->sport)
			t->flags |= CKPT_TCP_BOUND;
		return 0;
	case TCP_SYN_SENT:
		/*
		 * A connect() with no answer yet, which may wait a long time
		 * (a host that is down): made again at restart, so nothing of
		 * it is kept but its ends. Data sent with its SYN (Fast
		 * Open) would be lost: refused.
		 */
		if (tcp_sk(sk)->fastopen_req || tcp_sk(sk)->syn_data) {
			*why = "a TCP connect under way with data in its SYN (Fast Open): not supported";
			return -EOPNOTSUPP;
		}
		t->state = CKPT_TCP_CONNECTING;
		return 0;
	case TCP_ESTABLISHED:
	case TCP_FIN_WAIT1:
	case TCP_FIN_WAIT2:
	case TCP_CLOSE_WAIT:
		break;
	default:
		return state_refused(sk, why);
	}
	*why = connection_refused(sk);
	if (*why)
		return -EOPNOTSUPP;
	connection(sk, t);
	if (half_closed(sk, t)) {
		*why = "a TCP connection shut down for writing whose FIN the kernel did not queue (out of memory then): not supported";
		return -EOPNOTSUPP;
	}
	sendq = t->write_seq - t->snd_una;
	recvq = t->rcv_nxt - t->copied_seq;
	if (after(t->snd_nxt, t->write_seq) || before(t->snd_nxt, t->snd_una) ||
	    sendq > CKPT_IMG_MAX_TCPQ || recvq > CKPT_IMG_MAX_TCPQ ||
	    sendq + recvq > CKPT_IMG_MAX_TCPQ) {
		*why = "a TCP connection with more bytes queued than an image holds (16 MiB)";
		return -EFBIG;
	}
	t->len = sendq + recvq;
	return 0;
}

/*
 * @head's section, with the queues its sequence numbers say (a
 * connection's), read from @sk under its lock: *@out, *@out_len bytes.
 */
static int section_of(struct sock *sk, const struct ckpt_img_tcp *head,
		      struct ckpt_img_tcp **out, size_t *out_len,
		      const char **why)
{
	/*
	 * Sequence numbers wrap: the sizes are u32 differences, never a
	 * pointer plus one number minus another.
	 */
	u32 sendq = head->write_seq - head->snd_una;
	struct ckpt_img_tcp *t;
	int ret = 0;

	t = kvzalloc(sizeof(*t) + head->len, GFP_KERNEL);
	if (!t)
		return -ENOMEM;
	*t = *head;
	if (t->state == CKPT_TCP_ESTABLISHED || t->state == CKPT_TCP_WAITING) {
		ret = copy_send_queue(sk, t->data, sendq);
		if (!ret)
			ret = copy_receive_queue(sk, t->data + sendq,
						 t->rcv_nxt - t->copied_seq);
	}
	if (ret) {
		*why = "a TCP connection whose queues do not hold what its sequence numbers say";
		kvfree(t);
		return ret;
	}
	*out = t;
	*out_len = sizeof(*t) + t->len;
	return 0;
}

int ckpt_tcp_capture(struct file *file, struct ckpt_img_tcp **out,
		     size_t *out_len, const void **net, const char **why)
{
	struct sock *sk = tcp_sock_of(file);
	struct ckpt_img_tcp head = {};
	int ret;

	*out = NULL;
	if (!sk)
		return -EINVAL;
	*net = sock_net(sk);
	lock_sock(sk);
	ret = read_socket(sk, &head, why);
	head.ino = file_inode(file)->i_ino;
	if (!ret)
		ret = section_of(sk, &head, out, out_len, why);
	release_sock(sk);
	return ret;
}

/*
 * Connection @sk, waiting in a listening socket's accept queue: its
 * section, or -EAGAIN (*@why) for one reset or closed meanwhile or in a
 * state its handshake left (a Fast Open child), which accept() or a
 * moment mends.
 */
static int capture_waiting(struct sock *sk, u64 ino, struct ckpt_img_tcp **out,
			   size_t *out_len, const char **why)
{
	struct ckpt_img_tcp head = {};
	int ret = -EAGAIN;

	/* Under its listener's lock (ckpt_tcp_capture_waiting()). */
	lock_sock_nested(sk, SINGLE_DEPTH_NESTING);
	/* A connection as any (read_socket()), but one that sent nothing. */
	if (sk->sk_state != TCP_ESTABLISHED && sk->sk_state != TCP_CLOSE_WAIT)
		*why = "a listening TCP socket with a connection waiting to be accepted that was reset or closed: not supported yet";
	else
		ret = read_socket(sk, &head, why);
	if (!ret && head.write_seq != head.snd_una) {
		*why = "a listening TCP socket with a connection waiting to be accepted that is still sending its handshake: not supported yet";
		ret = -EAGAIN;
	}
	if (!ret) {
		head.state = CKPT_TCP_WAITING;
		head.ino = ino;
		ret = section_of(sk, &head, out, out_len, why);
	}
	release_sock(sk);
	return ret;
}

int ckpt_tcp_capture_waiting(struct file *file, struct ckpt_img_tcp **out,
			     size_t *out_len, const void **net, u32 room,
			     const char **why)
{
	struct sock *sk = tcp_sock_of(file), **kids;
	struct request_sock_queue *q;
	struct request_sock *req;
	int ret = 0, n = 0, i;

	if (!sk || READ_ONCE(sk->sk_state) != TCP_LISTEN)
		return 0;
	kids = kcalloc(CKPT_TCP_MAX_WAITING, sizeof(*kids), GFP_KERNEL);
	if (!kids)
		return -ENOMEM;
	/*
	 * The listener's lock keeps accept() and its close (which empties
	 * each child's queues) out until every child is read. The stack
	 * still adds a connection at the tail as its handshake ends: one
	 * added after the walk is in no image, and its other end's check
	 * (to_a_listener()) tries again.
	 */
	lock_sock(sk);
	if (sk->sk_state != TCP_LISTEN) {
		release_sock(sk);
		kfree(kids);
		return 0;
	}
	q = &inet_csk(sk)->icsk_accept_queue;
	spin_lock_bh(&q->rskq_lock);
	for (req = q->rskq_accept_head; req; req = req->dl_next) {
		if (n == CKPT_TCP_MAX_WAITING || n == room) {
			ret = -EFBIG;
			break;
		}
		if (req->sk) {
			sock_hold(req->sk);
			kids[n++] = req->sk;
		}
	}
	spin_unlock_bh(&q->rskq_lock);
	if (ret)
		*why = "a listening TCP socket with more connections waiting to be accepted than an image holds (64 a listening socket, 1024 TCP sockets a process)";
	for (i = 0; i < n; i++) {
		if (!ret) {
			ret = capture_waiting(kids[i], file_inode(file)->i_ino,
					      &out[i], &out_len[i], why);
			net[i] = sock_net(kids[i]);
		}
		sock_put(kids[i]);
	}
	release_sock(sk);
	kfree(kids);
	if (ret < 0) {
		for (i = 0; i < n; i++) {
			kvfree(out[i]);
			out[i] = NULL;
		}
		return ret;
	}
	return n;
}

/* "ADDR:PORT" of @t's peer (@peer) or its own. */
static void format_end(const struct ckpt_img_tcp *t, bool peer, char *buf,
		       size_t size)
{
	const u8 *a = peer ? t->dst : t->src;
	u16 port = peer ? t->dport : t->sport;

	if (t->family == AF_INET)
		snprintf(buf, size, "%pI4:%u", a, port);
	else
		snprintf(buf, size, "[%pI6c]:%u", a, port);
}

static bool is_peer(const struct ckpt_img_tcp *a, const void *a_net,
		    const struct ckpt_img_tcp *b, const void *b_net)
{
	return (b->state == CKPT_TCP_ESTABLISHED ||
		b->state == CKPT_TCP_WAITING) && a_net == b_net &&
	       a->family == b->family && a->sport == b->dport &&
	       a->dport == b->sport && !memcmp(a->src, b->dst, 16) &&
	       !memcmp(a->dst, b->src, 16);
}

/* The other end of connection @t among @g's captured sockets, or NULL. */
static const struct ckpt_img_tcp *find_peer(struct ckpt_cp_group *g,
					    const struct ckpt_img_tcp *t,
					    const void *net)
{
	u32 i, k;

	for (i = 0; i < g->nr; i++) {
		const struct ckpt_fds *scan = &g->m[i].scan;

		for (k = 0; k < scan->nr_tcps; k++)
			if (scan->tcps[k] != t &&
			    is_peer(t, net, scan->tcps[k], scan->tcp_net[k]))
				return scan->tcps[k];
	}
	return NULL;
}

/* Whether @t's peer is on this machine as far as its addresses tell. */
static bool to_itself(const struct ckpt_img_tcp *t)
{
	static const u8 lo6[16] = { [15] = 1 };

	return !memcmp(t->src, t->dst, 16) ||
	       (t->family == AF_INET && t->dst[0] == 127) ||
	       (t->family == AF_INET6 && !memcmp(t->dst, lo6, 16));
}

/*
 * Whether connection @t goes to a listening socket of @g's, on this
 * machine: its other end not captured, it is being accepted (its
 * handshake's last step between the two captures).
 */
static bool to_a_listener(struct ckpt_cp_group *g, const struct ckpt_img_tcp *t,
			  const void *net)
{
	static const u8 any[16];
	const struct ckpt_img_tcp *l;
	u32 i, k;

	if (!to_itself(t))
		return false;
	for (i = 0; i < g->nr; i++)
		for (k = 0; k < g->m[i].scan.nr_tcps; k++) {
			l = g->m[i].scan.tcps[k];
			if (l->state == CKPT_TCP_LISTEN &&
			    g->m[i].scan.tcp_net[k] == net &&
			    l->family == t->family && l->sport == t->dport &&
			    (!memcmp(l->src, t->dst, 16) ||
			     !memcmp(l->src, any, 16)))
				return true;
		}
	return false;
}

/* The descriptor of socket @ino in @scan (its first FILES entry). */
static u32 fd_of(const struct ckpt_fds *scan, u64 ino)
{
	u32 k;

	for (k = 0; k < scan->nr; k++)
		if (scan->files[k].kind == CKPT_FILE_TCP &&
		    scan->files[k].ino == ino)
			return scan->files[k].fd;
	return 0;
}

/* Waiting connection @k of member @i, whose other end no member holds. */
static int waiting_alone(struct ckpt_cp_group *g, u32 i, u32 k)
{
	struct ckpt_cp_ctx *ctx = &g->m[i];
	const struct ckpt_img_tcp *t = ctx->scan.tcps[k];
	char a[64], b[64];

	g->failed = i;
	format_end(t, false, a, sizeof(a));
	format_end(t, true, b, sizeof(b));
	ckpt_whyf(&ctx->why,
		  "pid %u fd %u (socket:[%llu]) listens on %s with a TCP connection from %s waiting to be accepted, %s: not supported yet; try again",
		  ctx->a->pid, fd_of(&ctx->scan, t->ino), t->ino, a, b,
		  g->flags & CKPT_CHECKPOINT_PEERS_AWAY ?
		  "whose other end is outside the job" :
		  g->tree ? "whose other end is outside the tree" :
			    "whose other end is another process's");
	return -EAGAIN;
}

/*
 * Connection @k of member @i: its refusal (@pass 0), or what a retry may
 * mend (@pass 1: its peer's FIN in and no member holds the peer, mostly
 * a socket a member closed whose holder closes its own end in moments;
 * bytes moved between the captures of its two ends).
 */
static int check_pair(struct ckpt_cp_group *g, u32 i, u32 k, int pass)
{
	struct ckpt_cp_ctx *ctx = &g->m[i];
	const struct ckpt_fds *scan = &ctx->scan;
	const struct ckpt_img_tcp *t = scan->tcps[k], *p;
	bool closed_by_peer = t->flags & CKPT_TCP_FIN_IN;
	char a[64], b[64];
	int ret;

	if (t->state != CKPT_TCP_ESTABLISHED && t->state != CKPT_TCP_WAITING)
		return 0;
	p = find_peer(g, t, scan->tcp_net[k]);
	/*
	 * Waiting to be accepted, from outside the tree: the restart could
	 * not connect its other end again (but from another node, which
	 * ckptd asks for). Accepted, mostly in moments, it is a connection
	 * as any.
	 */
	if (t->state == CKPT_TCP_WAITING) {
		/*
		 * Each member sharing the listener has a copy, read at its
		 * own moment: each must end within @p's sent data.
		 */
		if (!pass || (p && t->rcv_nxt - p->snd_una <=
				   p->write_seq - p->snd_una))
			return 0;
		/*
		 * From another node: ckptd joins it with its other end, which
		 * connects again at the restart (Documentation/ckptd.md,
		 * "TCP between nodes").
		 */
		if (!p && g->flags & CKPT_CHECKPOINT_WAITING_AWAY)
			return 0;
		if (!p)
			return waiting_alone(g, i, k);
		ret = -EAGAIN;
		goto tell;
	}
	/* Its other end on another node: ckptd joins the two. */
	if (!p && g->flags & CKPT_CHECKPOINT_PEERS_AWAY)
		return 0;
	if (!p && to_a_listener(g, t, scan->tcp_net[k])) {
		if (!pass)
			return 0;
		ret = -EAGAIN;
	} else if (!p && pass == closed_by_peer)
		ret = closed_by_peer ? -EAGAIN : -EOPNOTSUPP;
	/* What @p holds must start where @t's sent data ends. */
	else if (p && pass && p->rcv_nxt - t->snd_una > t->write_seq - t->snd_una)
		ret = -EAGAIN;
	else
		return 0;
tell:
	g->failed = i;
	/* Bytes to a waiting connection come from its other end. */
	format_end(t, t->state == CKPT_TCP_WAITING, a, sizeof(a));
	format_end(t, t->state != CKPT_TCP_WAITING, b, sizeof(b));
	if (p)
		ckpt_whyf(&ctx->why,
			  "pid %u fd %u (socket:[%llu]): bytes in flight from %s to %s moved while it was captured; try again",
			  ctx->a->pid, fd_of(scan, t->ino), t->ino, a, b);
	else if (ret == -EAGAIN && !closed_by_peer)
		ckpt_whyf(&ctx->why,
			  "pid %u fd %u (socket:[%llu]) is a TCP connection from %s to %s, a listening socket of the %s, still being accepted; try again",
			  ctx->a->pid, fd_of(scan, t->ino), t->ino, a, b,
			  g->tree ? "tree" : "process");
	else
		ckpt_whyf(&ctx->why,
			  "pid %u fd %u (socket:[%llu]) is a TCP connection from %s to %s%s",
			  ctx->a->pid, fd_of(scan, t->ino), t->ino, a, b,
			  closed_by_peer ? " closed by its other end, which no member holds; try again" :
			  g->tree ? ", a process outside the tree" :
				    ", another process: not supported yet");
	return ret;
}

int ckpt_tcp_check_pairs(struct ckpt_cp_group *g)
{
	int pass, ret;
	u32 i, k;

	/* Refusals first: a retry would not mend them. */
	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < g->nr; i++)
			for (k = 0; k < g->m[i].scan.nr_tcps; k++) {
				ret = check_pair(g, i, k, pass);
				if (ret)
					return ret;
			}
	return 0;
}
