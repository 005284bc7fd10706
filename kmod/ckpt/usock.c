// SPDX-License-Identifier: GPL-2.0
/*
 * UNIX socket pairs (Documentation/engine.md): an end of a connected,
 * unnamed AF_UNIX stream, datagram or seqpacket socket whose peer is held by the same
 * process (a tree's: by a member) or closed. Its image records the
 * socket, its peer and the bytes queued for it to read (USOCK section);
 * the restart makes the pair again with socketpair() and sends those bytes
 * (a datagram or seqpacket socket's messages, one by one) from the peer.
 * Anything else about a socket is refused by the caller, naming the
 * descriptor: a name bound or connected to, a listening socket, another
 * family, a descriptor in flight (SCM_RIGHTS), out-of-band data.
 *
 * The queue is read while the process (and the peer's holder) is frozen,
 * under the queue's lock: a stream skb holds skb->len bytes of which
 * UNIXCB(skb).consumed were read already; a message skb is one message.
 */

#include <linux/file.h>
#include <linux/fs.h>
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
		*why = "a listening UNIX socket: not supported yet";
		ret = -EOPNOTSUPP;
	} else if (unix_sk(sk)->addr) {
		*why = "a UNIX socket bound to a name: not supported yet";
		ret = -EOPNOTSUPP;
	} else if (!peer || (sk->sk_type != SOCK_DGRAM &&
			     sk->sk_state != TCP_ESTABLISHED)) {
		*why = "an unconnected UNIX socket: not supported yet";
		ret = -EOPNOTSUPP;
	} else if (unix_sk(peer)->addr) {
		*why = "a UNIX socket connected to a name: not supported yet";
		ret = -EOPNOTSUPP;
	} else {
		/*
		 * The peer's holder may be outside the tree, not frozen, and
		 * closing it: sock_orphan() clears sk_socket under this lock,
		 * before the socket or its file go.
		 */
		read_lock_bh(&peer->sk_callback_lock);
		if (peer->sk_socket && peer->sk_socket->file) {
			*peer_file = peer->sk_socket->file;
			*peer_ino = SOCK_INODE(peer->sk_socket)->i_ino;
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
