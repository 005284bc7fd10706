/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _CKPT_INOTIFY_H
#define _CKPT_INOTIFY_H

#include <linux/types.h>

struct ckpt_fds;
struct ckpt_why;

/*
 * The watches of inotify entry @i of @scan (its file referenced), each by
 * the path of what it watches, appended to @scan's INOTIFY section, and
 * the number its next watch gets in the entry's @pos. Refused, named in
 * @why: events unread (-EAGAIN: tried again), a watched file no path of
 * the process reaches or deleted, too many watches, a number too high.
 */
int ckpt_inotify_capture(struct ckpt_fds *scan, u32 i, struct ckpt_why *why);

#endif /* _CKPT_INOTIFY_H */
