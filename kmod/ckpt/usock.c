// SPDX-License-Identifier: GPL-2.0
/*
 * UNIX socket pairs (Documentation/engine.md): an end of a connected,
 * unnamed AF_UNIX stream, datagram or seqpacket socket whose peer is held by the same
 * process (a tree's: by a member) or closed. Its image records the
 * socket, its peer and the bytes queued for it to read (USOCK section);
 * the restart makes the pair again with socketpair() and sends those bytes
 * (a datagram or seqpacket socket's messages, one by one) from the peer.
 * A stream or seqpacket pair may have names (a connection accepted on a
 * listening socket): the restart makes it with socketpair() all the same,
 * so the names are not kept (engine.md). A listening socket is recorded
 * by its name (ULISTEN section), each connection waiting on it with what
 * its client sent (UPEND), and the restart binds and listens again and
 * connects each client anew.
 * A datagram socket with a name or connected to one, and a socket of any
 * type connected to nothing, is recorded by its name and its peer's (UNAME
 * section): the restart binds and connects it again by those names.
 * Anything else about a socket is refused by the caller, naming the
 * descriptor: another family, a descriptor in flight (SCM_RIGHTS),
 * messages with their senders' credentials for a reader that takes them
 * (SO_PASSCRED), out-of-band data.
 *
 * The queue is read while the process (and the peer's holder) is frozen,
 * under the queue's lock: a stream skb holds skb->len bytes of which
 * UNIXCB(skb).consumed were read already; a message skb is one message.
 */

#include <linux/cred.h>
#include <linux/dcache.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/once.h>
#include <linux/path.h>
#include <linux/random.h>
#include <linux/siphash.h>
#include <linux/net.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <net/af_unix.h>
#include <net/sock.h>

#include "checkpoint.h"
#include "usock.h"
#include "why.h"

static siphash_key_t embryo_key;

/*
 * The name of a connection waiting in a listening socket's queue (its
 * embryo socket, which has no inode yet): the same for its client and its
 * listener within one checkpoint, a kernel address to no one.
 */
static u64 embryo_id(const struct sock *e)
{
	get_random_once(&embryo_key, sizeof(embryo_key));
	return CKPT_UPEND_ID |
	       (siphash_1u64((u64)(unsigned long)e, &embryo_key) >> 1);
}

static struct sock *unix_sock_of(struct file *file)
{
	struct socket *sock = sock_from_file(file);

	if (!sock || !sock->sk || sock->sk->sk_family != AF_UNIX)
		return NULL;
	return sock->sk;
}

bool ckpt_is_usock(struct file *file)
{
	return unix_sock_of(file);
}

bool ckpt_usock_listening(struct file *file)
{
	struct sock *sk = unix_sock_of(file);

	return sk && READ_ONCE(sk->sk_state) == TCP_LISTEN;
}

int ckpt_usock_record(struct file *file, u64 *ino, u64 *peer_ino,
		      struct file **peer_file, const char **why)
{
	struct sock *sk = unix_sock_of(file), *peer;
	bool named;
	int ret = 0;

	*peer_file = NULL;
	*peer_ino = 0;
	if (!sk)
		return -EINVAL;
	*ino = file_inode(file)->i_ino;
	if (sk->sk_type != SOCK_STREAM && sk->sk_type != SOCK_DGRAM &&
	    sk->sk_type != SOCK_SEQPACKET) {
		*why = "a UNIX socket of a type this engine does not know";
		return -EOPNOTSUPP;
	}
	unix_state_lock(sk);
	peer = unix_sk(sk)->peer;
	/*
	 * A datagram pair has no names, each end the other's peer (a closed
	 * end has none: its close cleared it).
	 */
	if (sk->sk_type == SOCK_DGRAM)
		named = !peer || unix_sk(sk)->addr ||
			READ_ONCE(unix_sk(peer)->addr) ||
			(READ_ONCE(unix_sk(peer)->peer) != sk &&
			 !sock_flag(peer, SOCK_DEAD));
	else
		named = !peer && sk->sk_state == TCP_CLOSE;
	if (sk->sk_state == TCP_LISTEN) {
		/* Read by ckpt_usock_listener(): no peer. */
	} else if (named) {
		/* Read by ckpt_usock_capture_named(): no pair. */
		ret = CKPT_USOCK_NAMED;
	} else if (!peer || (sk->sk_type != SOCK_DGRAM &&
			     sk->sk_state != TCP_ESTABLISHED)) {
		*why = "a UNIX socket in a state this engine does not restore";
		ret = -EOPNOTSUPP;
	} else {
		/*
		 * The peer's holder may be outside the tree, not frozen, and
		 * closing it: sock_orphan() clears sk_socket under this lock,
		 * before the socket or its file go. A peer with no socket
		 * that is not dead is a connection waiting in a listening
		 * socket's queue, accepted by nobody yet: named by
		 * embryo_id(), its listener checked after the capture.
		 */
		read_lock_bh(&peer->sk_callback_lock);
		if (peer->sk_socket && peer->sk_socket->file) {
			*peer_file = peer->sk_socket->file;
			*peer_ino = SOCK_INODE(peer->sk_socket)->i_ino;
		} else if (!sock_flag(peer, SOCK_DEAD)) {
			*peer_ino = embryo_id(peer);
		}
		read_unlock_bh(&peer->sk_callback_lock);
	}
	unix_state_unlock(sk);
	return ret;
}

/* Whether option @bit (SOCK_PASSCRED...) is set on @sk's socket, if any. */
static bool sock_opt(const struct sock *sk, int bit)
{
	const struct socket *sock = READ_ONCE(sk->sk_socket);

	return sock && test_bit(bit, &sock->flags);
}

/*
 * Whether @sk's reader is given each message's sender's credentials
 * (SO_PASSCRED, SO_PASSPIDFD). An embryo (a connection not accepted yet)
 * has no socket: its listener's, whose flags it will inherit, is asked.
 */
static bool reader_takes_creds(const struct sock *sk)
{
#ifdef SOCK_PASSPIDFD
	if (sock_opt(sk, SOCK_PASSPIDFD))
		return true;
#endif
	return sock_opt(sk, SOCK_PASSCRED);
}

/* SO_PASSPIDFD (6.5 on), which the image does not hold: refused. */
static int check_passpidfd(const struct sock *sk, const char **why)
{
#ifdef SOCK_PASSPIDFD
	if (sock_opt(sk, SOCK_PASSPIDFD)) {
		*why = "a UNIX socket with SO_PASSPIDFD set: not supported";
		return -EOPNOTSUPP;
	}
#endif
	return 0;
}

/* @sk's shutdowns, and whether its reader takes credentials (SO_PASSCRED). */
static u32 sock_flags_of(const struct sock *sk)
{
	return (sk->sk_shutdown & RCV_SHUTDOWN ? CKPT_USOCK_SHUT_RD : 0) |
	       (sk->sk_shutdown & SEND_SHUTDOWN ? CKPT_USOCK_SHUT_WR : 0) |
	       (sock_opt(sk, SOCK_PASSCRED) ? CKPT_USOCK_PASSCRED : 0);
}

/*
 * What is queued on @sk (a message socket's: each message's length, its
 * bytes, padding to 4), or -errno; @buf NULL: only counts it. -EBADF: a
 * descriptor in flight; -EPERM: a message carries credentials its reader
 * takes, which the restart cannot give again.
 */
static int walk_queue(struct sock *sk, bool creds, u8 *buf, size_t room,
		      size_t *len)
{
	struct sk_buff_head *q = &sk->sk_receive_queue;
	bool stream = sk->sk_type == SOCK_STREAM;
	struct sk_buff *skb;
	int ret = 0;

	*len = 0;
	spin_lock(&q->lock);
	skb_queue_walk(q, skb) {
		u32 off = stream ? UNIXCB(skb).consumed : 0, n, head;

		if (UNIXCB(skb).fp) {
			ret = -EBADF;
			break;
		}
		if (creds && UNIXCB(skb).pid) {
			ret = -EPERM;
			break;
		}
		if (off > skb->len) {
			ret = -EIO;
			break;
		}
		n = skb->len - off;
		head = stream ? 0 : sizeof(u32);
		if (buf) {
			if (*len + head + ALIGN(n, stream ? 1 : 4) > room) {
				ret = -EAGAIN;
				break;
			}
			if (head)
				memcpy(buf + *len, &n, head);
			ret = skb_copy_bits(skb, off, buf + *len + head, n);
			if (ret)
				break;
		}
		*len += head + ALIGN(n, stream ? 1 : 4);
	}
	spin_unlock(&q->lock);
	return ret;
}

/*
 * What is queued on @sk, after @head bytes of a section header left zero:
 * kvmalloc'ed in *@out, *@len bytes in all. @reader: who reads it, @sk
 * itself or, for an embryo, its listener.
 */
static int read_queue(struct sock *sk, const struct sock *reader, size_t head,
		      void **out, size_t *len, const char **why)
{
	bool creds = reader_takes_creds(reader);
	size_t n, got;
	u8 *buf;
	int ret;

	*out = NULL;
#if IS_ENABLED(CONFIG_AF_UNIX_OOB)
	if (READ_ONCE(unix_sk(sk)->oob_skb)) {
		*why = "out-of-band data is queued on it: not supported";
		return -EOPNOTSUPP;
	}
#endif
	ret = walk_queue(sk, creds, NULL, 0, &n);
	if (ret == -EBADF) {
		*why = "a descriptor is in flight on it (SCM_RIGHTS): not supported yet";
		return -EOPNOTSUPP;
	}
	if (ret == -EPERM) {
		*why = "a message queued on it carries its sender's credentials, which its reader takes (SO_PASSCRED): the restart would give the restarter's; not supported";
		return -EOPNOTSUPP;
	}
	if (ret)
		return ret;
	if (n > CKPT_IMG_MAX_USOCK) {
		*why = "more bytes are queued on it than an image holds (4 MiB)";
		return -EFBIG;
	}
	buf = kvzalloc(head + n, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	/*
	 * Frozen on both ends: the queue cannot change meanwhile; but a
	 * socket with a name may have senders outside, running.
	 */
	ret = walk_queue(sk, creds, buf + head, n, &got);
	if (!ret && got != n) {
		*why = "messages came while its queue was read; try again";
		ret = -EAGAIN;
	}
	if (ret) {
		kvfree(buf);
		return ret == -EBADF || ret == -EPERM ? -EAGAIN : ret;
	}
	*out = buf;
	*len = head + n;
	return 0;
}

int ckpt_usock_capture(struct file *file, u64 peer_ino,
		       struct ckpt_img_usock **out, size_t *out_len,
		       const char **why)
{
	struct sock *sk = unix_sock_of(file);
	struct ckpt_img_usock *u;
	int ret;

	ret = check_passpidfd(sk, why);
	if (!ret)
		ret = read_queue(sk, sk, sizeof(*u), (void **)out, out_len, why);
	if (ret)
		return ret;
	u = *out;
	u->ino = file_inode(file)->i_ino;
	u->peer = peer_ino;
	u->type = sk->sk_type;
	u->shutdown = sock_flags_of(sk);
	u->sndbuf = READ_ONCE(sk->sk_sndbuf);
	u->len = *out_len - sizeof(*u);
	return 0;
}

/*
 * A path's name in @a: absolute, still linked, fitting sun_path; whether
 * a @listener's says a refusal.
 */
static int path_name(const struct path *path, struct ckpt_img_uaddr *a,
		     bool listener, const char **why)
{
	struct inode *inode = d_inode(path->dentry);
	char *buf, *p;
	size_t n;
	int ret = 0;

	if (d_unlinked(path->dentry)) {
		*why = listener ?
		       "a listening UNIX socket whose name was removed: not supported" :
		       "a UNIX socket whose name, or whose peer's, was removed: not supported";
		return -EOPNOTSUPP;
	}
	buf = kmalloc(PATH_MAX, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	p = d_path(path, buf, PATH_MAX);
	n = IS_ERR(p) ? 0 : strlen(p) + 1;
	if (IS_ERR(p) || *p != '/') {
		*why = listener ?
		       "a listening UNIX socket whose path lies outside the checkpointer's root" :
		       "a UNIX socket whose path, or whose peer's, lies outside the checkpointer's root";
		ret = -EOPNOTSUPP;
	} else if (n > CKPT_USOCK_ADDR_MAX) {
		*why = listener ?
		       "a listening UNIX socket whose absolute path is longer than a socket name holds (108 bytes)" :
		       "a UNIX socket whose absolute path, or whose peer's, is longer than a socket name holds (108 bytes)";
		ret = -ENAMETOOLONG;
	} else {
		memset(a->addr, 0, sizeof(a->addr));
		memcpy(a->addr, p, n);
		a->len = n;
		a->mode = inode->i_mode & 07777;
		a->uid = from_kuid_munged(current_user_ns(), inode->i_uid);
		a->gid = from_kgid_munged(current_user_ns(), inode->i_gid);
	}
	kfree(buf);
	return ret;
}

/*
 * @sk's name in @a (zeroed: none), a path's made absolute; whether a
 * @listener's says a refusal.
 */
static int read_name(struct sock *sk, struct ckpt_img_uaddr *a,
		     bool listener, const char **why)
{
	struct unix_address *addr;
	struct path path = {};
	int len = 0, ret = 0;

	memset(a, 0, sizeof(*a));
	unix_state_lock(sk);
	addr = unix_sk(sk)->addr;
	if (addr) {
		len = addr->len - (int)offsetof(struct sockaddr_un, sun_path);
		if (len > 0 && len <= CKPT_USOCK_ADDR_MAX)
			memcpy(a->addr, addr->name->sun_path, len);
	}
	if (unix_sk(sk)->path.dentry) {
		path = unix_sk(sk)->path;
		path_get(&path);
	}
	unix_state_unlock(sk);

	if (path.dentry) {
		ret = path_name(&path, a, listener, why);
		path_put(&path);
	} else if (addr && len >= 2 && len <= CKPT_USOCK_ADDR_MAX &&
		   a->addr[0] == '/' && !a->addr[len - 1]) {
		/* A closed socket's path (a peer gone), as it was bound. */
		a->len = len;
	} else if (addr && (len < 2 || len > CKPT_USOCK_ADDR_MAX || a->addr[0])) {
		*why = listener ?
		       "a listening UNIX socket with a name this engine cannot record" :
		       "a UNIX socket with a name, or a peer's, this engine cannot record";
		ret = -EOPNOTSUPP;
	} else if (addr) {
		a->len = len;
	}
	return ret;
}

int ckpt_usock_listener(struct file *file, struct ckpt_img_ulisten *l,
			const char **why)
{
	struct sock *sk = unix_sock_of(file);
	int ret;

	BUILD_BUG_ON(sizeof(*l) != 144);
	memset(l, 0, sizeof(*l));
	l->ino = file_inode(file)->i_ino;
	l->type = sk->sk_type;
	l->backlog = READ_ONCE(sk->sk_max_ack_backlog);
	l->flags = sock_flags_of(sk) & CKPT_USOCK_PASSCRED;
	ret = check_passpidfd(sk, why);
	if (!ret)
		ret = read_name(sk, &l->name, true, why);
	if (!ret && !l->name.len) {
		*why = "a listening UNIX socket with a name this engine cannot record";
		ret = -EOPNOTSUPP;
	}
	return ret;
}

int ckpt_usock_capture_named(struct file *file, struct ckpt_img_uname **out,
			     size_t *out_len, const char **why)
{
	struct sock *sk = unix_sock_of(file), *peer;
	struct ckpt_img_uname *u;
	int ret;

	BUILD_BUG_ON(sizeof(*u) != 272);
	/*
	 * The restart queues the messages again from a socket that is no
	 * peer of this one's, which the kernel lets queue one more than the
	 * socket's backlog (net.unix.max_dgram_qlen when it was made): its
	 * peer may have queued more, which its reader takes within moments.
	 */
	if (skb_queue_len_lockless(&sk->sk_receive_queue) >
	    READ_ONCE(sk->sk_max_ack_backlog) + 1) {
		*why = "more messages are queued on it than a restart could queue again (its backlog, net.unix.max_dgram_qlen, and one); try again";
		return -EAGAIN;
	}
	ret = check_passpidfd(sk, why);
	if (!ret)
		ret = read_queue(sk, sk, sizeof(*u), (void **)out, out_len, why);
	if (ret)
		return ret;
	u = *out;
	u->ino = file_inode(file)->i_ino;
	u->type = sk->sk_type;
	u->shutdown = sock_flags_of(sk);
	u->sndbuf = READ_ONCE(sk->sk_sndbuf);
	u->len = *out_len - sizeof(*u);
	ret = read_name(sk, &u->name, false, why);
	if (!ret && u->len && !u->name.len) {
		*why = "messages are queued on a UNIX socket with no name: not supported";
		ret = -EOPNOTSUPP;
	}
	unix_state_lock(sk);
	peer = unix_sk(sk)->peer;
	if (peer)
		sock_hold(peer);
	unix_state_unlock(sk);
	if (!ret && peer) {
		ret = read_name(peer, &u->peer, false, why);
		u->peer.mode = u->peer.uid = u->peer.gid = 0;
		if (!ret && !u->peer.len) {
			*why = "a UNIX datagram socket connected to a socket with no name that is not its pair: not supported";
			ret = -EOPNOTSUPP;
		}
	}
	if (peer)
		sock_put(peer);
	if (ret) {
		kvfree(*out);
		*out = NULL;
	}
	return ret;
}

/* Waiting connection @e of listening socket @l (@ino): its UPEND section. */
static int capture_embryo(struct sock *e, const struct sock *l, u64 ino,
			  u32 type, struct ckpt_img_upend **out, size_t *len,
			  const char **why)
{
	struct ckpt_img_upend *p;
	struct sock *c;
	u64 client = 0;
	int ret;

	unix_state_lock(e);
	c = unix_sk(e)->peer;
	if (c)
		sock_hold(c);
	unix_state_unlock(e);
	if (c) {
		read_lock_bh(&c->sk_callback_lock);
		if (c->sk_socket)
			client = SOCK_INODE(c->sk_socket)->i_ino;
		read_unlock_bh(&c->sk_callback_lock);
		sock_put(c);
	}
	ret = read_queue(e, l, sizeof(*p), (void **)out, len, why);
	if (ret)
		return ret;
	p = *out;
	p->listener = ino;
	p->id = embryo_id(e);
	p->client = client;
	p->type = type;
	p->len = *len - sizeof(*p);
	return 0;
}

int ckpt_usock_pending(struct file *file, struct ckpt_img_upend **out,
		       size_t *len, u32 room, u32 *nr, const char **why)
{
	struct sock *sk = unix_sock_of(file), **e;
	u64 ino = file_inode(file)->i_ino;
	struct sk_buff *skb;
	u32 n = 0, i;
	int ret = 0;

	*nr = 0;
	e = kcalloc(CKPT_IMG_MAX_UPENDS, sizeof(*e), GFP_KERNEL);
	if (!e)
		return -ENOMEM;
	/* The members holding it are frozen: nobody accepts meanwhile. */
	spin_lock(&sk->sk_receive_queue.lock);
	skb_queue_walk(&sk->sk_receive_queue, skb) {
		if (n == CKPT_IMG_MAX_UPENDS || n == room) {
			ret = -E2BIG;
			break;
		}
		sock_hold(skb->sk);
		e[n++] = skb->sk;
	}
	spin_unlock(&sk->sk_receive_queue.lock);
	if (ret)
		*why = "a listening UNIX socket with more connections waiting to be accepted than an image holds (64)";
	for (i = 0; i < n && !ret; i++) {
		ret = capture_embryo(e[i], sk, ino, sk->sk_type, &out[i], &len[i],
				     why);
		if (!ret)
			(*nr)++;
	}
	for (i = 0; i < n; i++)
		sock_put(e[i]);
	kfree(e);
	return ret;
}

/* The member of @g whose image has USOCK @ino, and its descriptor. */
static bool holder_of(struct ckpt_cp_group *g, u64 ino, u32 *m, u32 *fd)
{
	u32 i, k;

	for (i = 0; i < g->nr; i++) {
		const struct ckpt_fds *scan = &g->m[i].scan;

		for (k = 0; k < scan->nr; k++) {
			if (scan->files[k].kind == CKPT_FILE_UNIX &&
			    scan->files[k].ino == ino) {
				*m = i;
				*fd = scan->files[k].fd;
				return true;
			}
		}
	}
	return false;
}

/* Whether a member's image has a USOCK @ino connected to @peer. */
static bool has_usock(struct ckpt_cp_group *g, u64 ino, u64 peer)
{
	u32 i, k;

	for (i = 0; i < g->nr; i++)
		for (k = 0; k < g->m[i].scan.nr_usocks; k++)
			if (g->m[i].scan.usocks[k]->ino == ino &&
			    g->m[i].scan.usocks[k]->peer == peer)
				return true;
	return false;
}

/* Whether a member's image has an UPEND @id. */
static bool has_upend(struct ckpt_cp_group *g, u64 id)
{
	u32 i, k;

	for (i = 0; i < g->nr; i++)
		for (k = 0; k < g->m[i].scan.nr_upends; k++)
			if (g->m[i].scan.upends[k]->id == id)
				return true;
	return false;
}

int ckpt_usock_check_pending(struct ckpt_cp_group *g)
{
	u32 i, k, m, fd;

	for (i = 0; i < g->nr; i++) {
		struct ckpt_cp_ctx *ctx = &g->m[i];
		const struct ckpt_fds *scan = &ctx->scan;

		for (k = 0; k < scan->nr_usocks; k++) {
			const struct ckpt_img_usock *u = scan->usocks[k];

			if (!(u->peer & CKPT_UPEND_ID) || has_upend(g, u->peer))
				continue;
			holder_of(g, u->ino, &m, &fd);
			g->failed = m;
			ckpt_whyf(&g->m[m].why,
				  "pid %u fd %u (socket:[%llu]) waits to be accepted by a listening socket %s",
				  g->m[m].a->pid, fd, u->ino,
				  g->tree ? "outside the tree" : "of another process");
			return -EOPNOTSUPP;
		}
		for (k = 0; k < scan->nr_upends; k++) {
			const struct ckpt_img_upend *p = scan->upends[k];

			if (!p->client || has_usock(g, p->client, p->id))
				continue;
			holder_of(g, p->listener, &m, &fd);
			g->failed = m;
			ckpt_whyf(&g->m[m].why,
				  "pid %u fd %u (socket:[%llu]) listens with a connection waiting from %s",
				  g->m[m].a->pid, fd, p->listener,
				  g->tree ? "a process outside the tree" : "another process");
			return -EOPNOTSUPP;
		}
	}
	return 0;
}
