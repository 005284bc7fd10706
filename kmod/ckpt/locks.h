/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _CKPT_LOCKS_H
#define _CKPT_LOCKS_H

struct task_struct;
struct mm_struct;
struct ckpt_fds;
struct ckpt_why;

/*
 * The file locks frozen @task holds, into @scan's LOCKS entries (naming
 * its FILES entries, which ckpt_fds_capture() made): fails, named in @why,
 * on a lock the restart could not take again (a lease, one on a pipe or
 * socket, one held through a standard descriptor the restart replaces or
 * through a mapping only).
 */
int ckpt_locks_capture(struct task_struct *task, struct mm_struct *mm,
		       struct ckpt_fds *scan, struct ckpt_why *why);

#endif /* _CKPT_LOCKS_H */
