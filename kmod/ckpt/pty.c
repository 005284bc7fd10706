// SPDX-License-Identifier: GPL-2.0
/*
 * Pseudo-terminals between a tree's members (Open MPI's mpirun reads each
 * rank's output through one). What a pair is, beside its two ends, is its
 * slave's termios and window size and its master's packet mode and lock:
 * the restart opens a new pair and sets them. Bytes waiting in the line
 * discipline are not carried: a pty that has unread bytes at either end a
 * member holds fails the checkpoint with -EAGAIN (they are read within
 * moments by a running reader; ckptd and ckpt try again).
 */
#include <linux/errno.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/kdev_t.h>
#include <linux/major.h>
#include <linux/mm.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/tty.h>
#include <linux/tty_driver.h>

#include "checkpoint.h"
#include "fds.h"
#include "pty.h"
#include "why.h"

bool ckpt_is_pty(struct file *file)
{
	const struct inode *inode = file_inode(file);
	unsigned int major = MAJOR(inode->i_rdev);

	if (!S_ISCHR(inode->i_mode))
		return false;
	return inode->i_rdev == MKDEV(TTYAUX_MAJOR, 2) ||
	       (major >= UNIX98_PTY_SLAVE_MAJOR &&
		major < UNIX98_PTY_SLAVE_MAJOR + UNIX98_PTY_MAJOR_COUNT);
}

/* The tty of an open tty file (tty_io.c keeps it in private_data). */
static struct tty_struct *tty_of(struct file *file)
{
	const struct tty_file_private *priv = file->private_data;

	return priv ? priv->tty : NULL;
}

static void read_pair(struct tty_struct *master, struct ckpt_img_pty *p)
{
	struct tty_struct *slave = master->link;
	int k;

	p->index = master->index;
	down_read(&slave->termios_rwsem);
	p->iflag = slave->termios.c_iflag;
	p->oflag = slave->termios.c_oflag;
	p->cflag = slave->termios.c_cflag;
	p->lflag = slave->termios.c_lflag;
	p->line = slave->termios.c_line;
	for (k = 0; k < CKPT_PTY_NCCS; k++)
		p->cc[k] = slave->termios.c_cc[k];
	p->ispeed = slave->termios.c_ispeed;
	p->ospeed = slave->termios.c_ospeed;
	up_read(&slave->termios_rwsem);
	mutex_lock(&slave->winsize_mutex);
	p->rows = slave->winsize.ws_row;
	p->cols = slave->winsize.ws_col;
	p->xpixel = slave->winsize.ws_xpixel;
	p->ypixel = slave->winsize.ws_ypixel;
	mutex_unlock(&slave->winsize_mutex);
	if (READ_ONCE(master->ctrl.packet))
		p->flags |= CKPT_PTY_PACKET;
	if (test_bit(TTY_PTY_LOCK, &master->flags))
		p->flags |= CKPT_PTY_LOCKED;
}

int ckpt_pty_capture(struct ckpt_fds *scan, u32 i, struct ckpt_why *why)
{
	struct ckpt_img_file *f = &scan->files[i];
	struct file *file = scan->refs[i];
	struct tty_struct *tty = tty_of(file), *master;
	u32 k;

	if (!tty || tty->driver->type != TTY_DRIVER_TYPE_PTY || !tty->link) {
		ckpt_whyf(why, "fd %u (%s) is a terminal that cannot be checkpointed yet",
			  f->fd, f->path);
		return -EOPNOTSUPP;
	}
	master = tty->driver->subtype == PTY_TYPE_MASTER ? tty : tty->link;
	f->dev = tty == master ? CKPT_PTY_MASTER : CKPT_PTY_SLAVE;
	f->ino = master->index;
	/* The line discipline's buffer is not carried: it must be empty. */
	if (vfs_poll(file, NULL) & EPOLLIN) {
		ckpt_whyf(why, "fd %u (%s): bytes wait unread in the pseudo-terminal; try again",
			  f->fd, f->path);
		return -EAGAIN;
	}
	for (k = 0; k < scan->nr_ptys; k++)
		if (scan->pty_master[k] == master)
			break;
	if (k == scan->nr_ptys) {
		if (!scan->ptys) {
			scan->ptys = kvcalloc(CKPT_IMG_MAX_FILES,
					      sizeof(*scan->ptys), GFP_KERNEL);
			scan->pty_master = kvcalloc(CKPT_IMG_MAX_FILES,
						    sizeof(*scan->pty_master),
						    GFP_KERNEL);
			scan->pty_ends = kvcalloc(CKPT_IMG_MAX_FILES,
						  sizeof(*scan->pty_ends),
						  GFP_KERNEL);
			if (!scan->ptys || !scan->pty_master || !scan->pty_ends)
				return -ENOMEM;
		}
		read_pair(master, &scan->ptys[k]);
		scan->pty_master[k] = master;
		scan->nr_ptys++;
	}
	scan->pty_ends[k] |= f->dev;
	return 0;
}

/* Whether a member holds the master of @master's pair. */
static bool master_held(const struct ckpt_cp_group *g, const void *master)
{
	u32 i, k;

	for (i = 0; i < g->nr; i++) {
		const struct ckpt_fds *scan = &g->m[i].scan;

		for (k = 0; k < scan->nr_ptys; k++)
			if (scan->pty_master[k] == master &&
			    scan->pty_ends[k] & CKPT_PTY_MASTER)
				return true;
	}
	return false;
}

/* Whether another pty than @master numbered as it is held by a member. */
static bool number_taken(const struct ckpt_cp_group *g, const void *master,
			 u32 index)
{
	u32 i, k;

	for (i = 0; i < g->nr; i++) {
		const struct ckpt_fds *scan = &g->m[i].scan;

		for (k = 0; k < scan->nr_ptys; k++)
			if (scan->ptys[k].index == index &&
			    scan->pty_master[k] != master)
				return true;
	}
	return false;
}

static u32 fd_of(const struct ckpt_fds *scan, u32 index)
{
	u32 k;

	for (k = 0; k < scan->nr; k++)
		if (scan->files[k].kind == CKPT_FILE_PTY &&
		    scan->files[k].ino == index)
			return scan->files[k].fd;
	return 0;
}

int ckpt_pty_check_pairs(struct ckpt_cp_group *g)
{
	u32 i, k;

	for (i = 0; i < g->nr; i++) {
		struct ckpt_cp_ctx *ctx = &g->m[i];
		const struct ckpt_fds *scan = &ctx->scan;

		for (k = 0; k < scan->nr_ptys; k++) {
			const void *master = scan->pty_master[k];
			u32 index = scan->ptys[k].index;

			if (!master_held(g, master)) {
				g->failed = i;
				ckpt_whyf(&ctx->why,
					  "pid %u fd %u (/dev/pts/%u) is a pseudo-terminal whose master is closed or held outside the tree",
					  ctx->a->pid, fd_of(scan, index), index);
				return -EOPNOTSUPP;
			}
			if (number_taken(g, master, index)) {
				g->failed = i;
				ckpt_whyf(&ctx->why,
					  "pid %u fd %u (/dev/pts/%u): another devpts instance's pseudo-terminal has the same number: not supported",
					  ctx->a->pid, fd_of(scan, index), index);
				return -EOPNOTSUPP;
			}
		}
	}
	return 0;
}

/* The number of the pty with @master that a member holds, or -1. */
static int number_of(const struct ckpt_cp_group *g, const void *master)
{
	u32 i, k;

	for (i = 0; i < g->nr; i++) {
		const struct ckpt_fds *scan = &g->m[i].scan;

		for (k = 0; k < scan->nr_ptys; k++)
			if (scan->pty_master[k] == master)
				return scan->ptys[k].index;
	}
	return -1;
}

/* The member of @g leading the session @sid (a pid in the tree's namespace). */
static const struct ckpt_cp_ctx *session_leader(const struct ckpt_cp_group *g,
						u32 sid)
{
	u32 i;

	for (i = 0; sid && i < g->nr; i++)
		if (g->m[i].ns_pid == sid)
			return &g->m[i];
	return NULL;
}

void ckpt_pty_mark_ctty(struct ckpt_cp_group *g)
{
	const struct ckpt_cp_ctx *lead;
	u32 i;
	int n;

	for (i = 0; i < g->nr; i++) {
		struct ckpt_cp_ctx *ctx = &g->m[i];

		n = ctx->ctty ? number_of(g, ctx->ctty) : -1;
		if (n < 0)
			continue;
		ctx->tree.flags |= CKPT_TREE_CTTY;
		ctx->tree.ctty = n;
	}
	/* A leader keeps its mark; the others, with their leader's. */
	for (i = 0; i < g->nr; i++) {
		struct ckpt_cp_ctx *ctx = &g->m[i];

		lead = session_leader(g, ctx->tree.sid);
		if (lead && lead->tree.flags & CKPT_TREE_CTTY &&
		    lead->ctty == ctx->ctty)
			continue;
		ctx->tree.flags &= ~CKPT_TREE_CTTY;
		ctx->tree.ctty = 0;
	}
}
