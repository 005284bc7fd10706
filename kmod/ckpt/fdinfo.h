/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _CKPT_FDINFO_H
#define _CKPT_FDINFO_H

#include <linux/types.h>

struct file;
struct ckpt_img_epitem;
struct ckpt_img_timerfd;

/* CKPT_FILE_EVENTFD, _SIGNALFD, _EPOLL, _TIMERFD or _INOTIFY for such a file; else -1. */
int ckpt_anon_kind(const struct file *file);

/* An eventfd's count and CKPT_EVENTFD_* flags. -EPROTO if unreadable. */
int ckpt_fdinfo_eventfd(struct file *file, u64 *count, u64 *flags);

/* A signalfd's mask (bit n-1 for signal n). */
int ckpt_fdinfo_signalfd(struct file *file, u64 *mask);

/* A timerfd's clock, flags, unread ticks, time left and interval (not fd). */
int ckpt_fdinfo_timerfd(struct file *file, struct ckpt_img_timerfd *t);

/*
 * Appends the interest list of epoll @file (descriptor @epfd) to @items
 * (at most @max in all, *@nr so far), with the watched files' inode numbers
 * and devices in @ino and @sdev at the same indices. -E2BIG past @max.
 */
int ckpt_fdinfo_epoll(struct file *file, u32 epfd,
		      struct ckpt_img_epitem *items, u32 max, u32 *nr,
		      unsigned long *ino, u32 *sdev);

/* An inotify watch as fdinfo shows it: the watched inode by number. */
struct ckpt_fdinfo_watch {
	int wd;
	unsigned long ino;
	u32 sdev;	/* the kernel's encoding (super_block.s_dev) */
	u32 mask;	/* events, IN_ONESHOT, IN_EXCL_UNLINK */
};

/* The watches of inotify @file, at most @max (-E2BIG past it) in *@nr. */
int ckpt_fdinfo_inotify(struct file *file, struct ckpt_fdinfo_watch *w,
			u32 max, u32 *nr);

#endif /* _CKPT_FDINFO_H */
