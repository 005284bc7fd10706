// SPDX-License-Identifier: GPL-2.0
/*
 * A held restart (CKPT_RESTART_HOLD): once the process is whole -- its
 * memory filled, its exe file and every thread's XSAVE state in place --
 * and before any of its threads returns to the image's code, the engine
 * sends one byte on the restarter's UNIX stream socket and waits for one
 * byte back, the go. End of file (the holder closed its end or died) or
 * an error calls the restart off: the process is killed having run none
 * of its code. Only a fatal signal ends the wait otherwise; a stop or
 * any other signal waits with it, and so does a freeze (suspend). ckptd
 * holds the shares of a job restarted over several nodes so, each node
 * filling its memory at the same time as the others and none running
 * before all are whole (Documentation/ckptd.md, "Restart").
 *
 * The wait sleeps killable on the socket's wait queue with a wake
 * function of its own: the socket's wake-ups are for interruptible
 * sleepers, which a killable one is not.
 */

#include <linux/file.h>
#include <linux/net.h>
#include <linux/sched/signal.h>
#include <linux/socket.h>
#include <linux/wait.h>
#include <net/sock.h>

#include "hold.h"

struct file *ckpt_hold_get(int fd, struct ckpt_why *why)
{
	struct file *f = fget(fd);
	struct socket *sock = f ? sock_from_file(f) : NULL;

	if (!f) {
		why->msg = "the hold descriptor is not open";
		return ERR_PTR(-EBADF);
	}
	if (!sock || sock->type != SOCK_STREAM ||
	    sock->sk->sk_family != AF_UNIX ||
	    READ_ONCE(sock->sk->sk_state) != TCP_ESTABLISHED) {
		fput(f);
		why->msg = "the hold descriptor is not a connected UNIX stream socket";
		return ERR_PTR(-EINVAL);
	}
	return f;
}

static int hold_wake(struct wait_queue_entry *wq, unsigned int mode, int sync,
		     void *key)
{
	return wake_up_process(wq->private);
}

/* Something to read, the peer gone, or an error: the wait is over. */
static bool can_recv(struct sock *sk)
{
	return !skb_queue_empty_lockless(&sk->sk_receive_queue) ||
	       (READ_ONCE(sk->sk_shutdown) & RCV_SHUTDOWN) ||
	       READ_ONCE(sk->sk_err);
}

/* Room to send (the socket wakes its writers at less), or the peer gone. */
static bool can_send(struct sock *sk)
{
	return sock_writeable(sk) ||
	       (READ_ONCE(sk->sk_shutdown) & SEND_SHUTDOWN) ||
	       READ_ONCE(sk->sk_err);
}

/*
 * Killable only; freezable, and out of the load average, since the
 * holder may take minutes (other nodes' shares). 0 once @ready, -EINTR
 * when killed.
 */
static int hold_sleep(struct sock *sk, bool (*ready)(struct sock *sk),
		      struct ckpt_why *why)
{
	struct wait_queue_entry wq;
	wait_queue_head_t *head = sk_sleep(sk);

	init_waitqueue_func_entry(&wq, hold_wake);
	wq.private = current;
	add_wait_queue(head, &wq);
	for (;;) {
		set_current_state(TASK_KILLABLE | TASK_FREEZABLE | TASK_NOLOAD);
		if (ready(sk) || fatal_signal_pending(current))
			break;
		schedule();
	}
	__set_current_state(TASK_RUNNING);
	remove_wait_queue(head, &wq);
	if (!fatal_signal_pending(current))
		return 0;
	why->msg = "killed while held";
	return -EINTR;
}

int ckpt_hold_wait(struct file *hold, struct ckpt_why *why)
{
	struct socket *sock = sock_from_file(hold);
	struct msghdr msg;
	char c = 'w';
	struct kvec v = { .iov_base = &c, .iov_len = 1 };
	int ret;

	/*
	 * Members of a tree share one socket, each byte a message on its
	 * send buffer until the holder reads it: wait for room.
	 */
	for (;;) {
		msg = (struct msghdr){ .msg_flags = MSG_DONTWAIT | MSG_NOSIGNAL };
		ret = kernel_sendmsg(sock, &msg, &v, 1, 1);
		if (ret != -EAGAIN)
			break;
		ret = hold_sleep(sock->sk, can_send, why);
		if (ret)
			return ret;
	}
	if (ret != 1) {
		why->msg = "cannot tell the holder the process is whole";
		return ret < 0 ? ret : -EIO;
	}
	/* Members of a tree share one socket: another may take the byte seen. */
	do {
		ret = hold_sleep(sock->sk, can_recv, why);
		if (ret)
			return ret;
		msg = (struct msghdr){ .msg_flags = MSG_DONTWAIT };
		ret = kernel_recvmsg(sock, &msg, &v, 1, 1, MSG_DONTWAIT);
	} while (ret == -EAGAIN);
	if (ret == 1)
		return 0;
	why->msg = "the holder called the restart off";
	return ret < 0 ? ret : -ECANCELED;
}
