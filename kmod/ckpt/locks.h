/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _CKPT_LOCKS_H
#define _CKPT_LOCKS_H

#include <linux/types.h>

struct task_struct;
struct mm_struct;
struct ckpt_fds;
struct ckpt_why;
struct ckpt_img_vma;
struct file;

/*
 * The file locks frozen @task holds, into @scan's LOCKS entries (naming
 * its FILES entries, which ckpt_fds_capture() made): fails, named in @why,
 * on a lock the restart could not take again (a lease, one on a pipe or
 * socket, one held through a standard descriptor the restart replaces or
 * through a mapping only).
 */
int ckpt_locks_capture(struct task_struct *task, struct mm_struct *mm,
		       struct ckpt_fds *scan, struct ckpt_why *why);

/*
 * After ckpt_mm_capture(): the first of @vmas (in the mm's order) that
 * maps each open file the process holds a flock() lock on through
 * mappings only gets CKPT_VMA_FLOCK_READ or _WRITE.
 */
int ckpt_locks_mark_vmas(const struct ckpt_fds *scan, struct mm_struct *mm,
			 struct ckpt_img_vma *vmas, u32 nr_vmas, pid_t pid,
			 struct ckpt_why *why);

/*
 * A lock another process holds when the restart takes it again is tried
 * again every CKPT_LOCK_NAP_MS, CKPT_LOCK_TRIES times in all for one
 * restart's locks (2 s: a holder of a moment), then fails the restart
 * (lib/restore/locks.c does the same).
 */
#define CKPT_LOCK_NAP_MS	20
#define CKPT_LOCK_TRIES		100

/*
 * At restart, on @file opened for @v's mapping: the flock() lock @v
 * carries (-EBUSY, named, if another holds one in its way once @tries,
 * the restart's tries left, are spent; -EINTR if killed meanwhile). The
 * lock is @file's: it lasts as long as the file's mapping.
 */
int ckpt_locks_take_mapped(struct file *file, const struct ckpt_img_vma *v,
			   unsigned int *tries, struct ckpt_why *why);

#endif /* _CKPT_LOCKS_H */
