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
 * so the names are not kept (engine.md). A listening socket with no
 * connection waiting is recorded by its name (ULISTEN section) and bound
 * and listening again at restart.
 * Anything else about a socket is refused by the caller, naming the
 * descriptor: a datagram socket with a name, an unconnected socket, a
 * connection not accepted yet, another family, a descriptor in flight
 * (SCM_RIGHTS), out-of-band data.
 *
 * The queue is read while the process (and the peer's holder) is frozen,
 * under the queue's lock: a stream skb holds skb->len bytes of which
 * UNIXCB(skb).consumed were read already; a message skb is one message.
 */

#include <linux/cred.h>
#include <linux/dcache.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/path.h>
#include <linux/net.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <net/af_unix.h>
#include <net/sock.h>

#include "usock.h"

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
	if (sk->sk_state == TCP_LISTEN) {
		/* Read by ckpt_usock_listener(): no peer. */
	} else if (!peer || (sk->sk_type != SOCK_DGRAM &&
			     sk->sk_state != TCP_ESTABLISHED)) {
		*why = "an unconnected UNIX socket: not supported yet";
		ret = -EOPNOTSUPP;
	} else if (sk->sk_type == SOCK_DGRAM &&
		   (unix_sk(sk)->addr || unix_sk(peer)->addr)) {
		*why = "a UNIX datagram socket bound or connected to a name: not supported yet";
		ret = -EOPNOTSUPP;
	} else {
		/*
		 * The peer's holder may be outside the tree, not frozen, and
		 * closing it: sock_orphan() clears sk_socket under this lock,
		 * before the socket or its file go. A peer with no socket
		 * that is not dead is a connection waiting in a listening
		 * socket's queue, accepted by nobody yet.
		 */
		read_lock_bh(&peer->sk_callback_lock);
		if (peer->sk_socket && peer->sk_socket->file) {
			*peer_file = peer->sk_socket->file;
			*peer_ino = SOCK_INODE(peer->sk_socket)->i_ino;
		} else if (!sock_flag(peer, SOCK_DEAD)) {
			*why = "connected to a listening socket that has not accepted it yet: not supported yet";
			ret = -EBUSY;
		}
		read_unlock_bh(&peer->sk_callback_lock);
	}
	unix_state_unlock(sk);
	return ret;
}

/*
 * What is queued on @sk (a message socket's: each message's length, its
 * bytes, padding to 4), or -errno; @buf NULL: only counts it.
 */
static int walk_queue(struct sock *sk, u8 *buf, size_t room, size_t *len)
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

int ckpt_usock_capture(struct file *file, u64 peer_ino,
		       struct ckpt_img_usock **out, size_t *out_len,
		       const char **why)
{
	struct sock *sk = unix_sock_of(file);
	struct ckpt_img_usock *u;
	size_t len, got;
	int ret;

	*out = NULL;
#if IS_ENABLED(CONFIG_AF_UNIX_OOB)
	if (READ_ONCE(unix_sk(sk)->oob_skb)) {
		*why = "out-of-band data is queued on it: not supported";
		return -EOPNOTSUPP;
	}
#endif
	ret = walk_queue(sk, NULL, 0, &len);
	if (ret == -EBADF) {
		*why = "a descriptor is in flight on it (SCM_RIGHTS): not supported yet";
		return -EOPNOTSUPP;
	}
	if (ret)
		return ret;
	if (len > CKPT_IMG_MAX_USOCK) {
		*why = "more bytes are queued on it than an image holds (4 MiB)";
		return -EFBIG;
	}
	u = kvzalloc(sizeof(*u) + len, GFP_KERNEL);
	if (!u)
		return -ENOMEM;
	/* Frozen on both ends: the queue cannot change meanwhile. */
	ret = walk_queue(sk, u->data, len, &got);
	if (!ret && got != len)
		ret = -EAGAIN;
	if (ret) {
		kvfree(u);
		return ret == -EBADF ? -EAGAIN : ret;
	}
	u->ino = file_inode(file)->i_ino;
	u->peer = peer_ino;
	u->type = sk->sk_type;
	u->shutdown = (sk->sk_shutdown & RCV_SHUTDOWN ? CKPT_USOCK_SHUT_RD : 0) |
		      (sk->sk_shutdown & SEND_SHUTDOWN ? CKPT_USOCK_SHUT_WR : 0);
	u->sndbuf = READ_ONCE(sk->sk_sndbuf);
	u->len = len;
	*out = u;
	*out_len = sizeof(*u) + len;
	return 0;
}

/* A path's name in @l: absolute, still linked, fitting sun_path. */
static int listener_path(const struct path *path, struct ckpt_img_ulisten *l,
			 const char **why)
{
	struct inode *inode = d_inode(path->dentry);
	char *buf, *p;
	size_t n;
	int ret = 0;

	if (d_unlinked(path->dentry)) {
		*why = "a listening UNIX socket whose name was removed: not supported";
		return -EOPNOTSUPP;
	}
	buf = kmalloc(PATH_MAX, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	p = d_path(path, buf, PATH_MAX);
	n = IS_ERR(p) ? 0 : strlen(p) + 1;
	if (IS_ERR(p) || *p != '/') {
		*why = "a listening UNIX socket whose path lies outside the checkpointer's root";
		ret = -EOPNOTSUPP;
	} else if (n > CKPT_USOCK_ADDR_MAX) {
		*why = "a listening UNIX socket whose absolute path is longer than a socket name holds (108 bytes)";
		ret = -ENAMETOOLONG;
	} else {
		memset(l->addr, 0, sizeof(l->addr));
		memcpy(l->addr, p, n);
		l->addr_len = n;
		l->mode = inode->i_mode & 07777;
		l->uid = from_kuid_munged(current_user_ns(), inode->i_uid);
		l->gid = from_kgid_munged(current_user_ns(), inode->i_gid);
	}
	kfree(buf);
	return ret;
}

int ckpt_usock_listener(struct file *file, struct ckpt_img_ulisten *l,
			const char **why)
{
	struct sock *sk = unix_sock_of(file);
	struct unix_address *addr;
	struct path path = {};
	u32 waiting;
	int len = 0, ret = 0;

	BUILD_BUG_ON(sizeof(*l) != 144);
	memset(l, 0, sizeof(*l));
	unix_state_lock(sk);
	waiting = skb_queue_len(&sk->sk_receive_queue);
	addr = unix_sk(sk)->addr;
	if (addr) {
		len = addr->len - (int)offsetof(struct sockaddr_un, sun_path);
		if (len > 0 && len <= CKPT_USOCK_ADDR_MAX)
			memcpy(l->addr, addr->name->sun_path, len);
	}
	if (unix_sk(sk)->path.dentry) {
		path = unix_sk(sk)->path;
		path_get(&path);
	}
	l->backlog = READ_ONCE(sk->sk_max_ack_backlog);
	unix_state_unlock(sk);

	l->ino = file_inode(file)->i_ino;
	l->type = sk->sk_type;
	l->addr_len = len;
	if (waiting) {
		*why = "a listening UNIX socket with connections waiting to be accepted: not supported yet";
		ret = -EBUSY;
	} else if (path.dentry) {
		ret = listener_path(&path, l, why);
	} else if (len < 2 || len > CKPT_USOCK_ADDR_MAX || l->addr[0]) {
		*why = "a listening UNIX socket with a name this engine cannot record";
		ret = -EOPNOTSUPP;
	}
	if (path.dentry)
		path_put(&path);
	return ret;
}
