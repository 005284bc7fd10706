/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _CKPT_KERNFS_H
#define _CKPT_KERNFS_H

#include <linux/types.h>

struct file;
struct super_block;
struct ckpt_fds;
struct ckpt_img_file;
struct ckpt_why;

/*
 * Marks @f, a regular file or directory entry for @file, CKPT_FILE_PROCFS
 * or CKPT_FILE_SYSFS when it is on one of those. A file of a /proc/PID
 * directory must be of @scan's process (its main thread's where it is a
 * /proc/PID/task/TID one), in a /proc of @scan's pid namespace: 0, or
 * -EOPNOTSUPP named in @why.
 */
int ckpt_kernfs_note(struct ckpt_img_file *f, struct file *file,
		     const struct ckpt_fds *scan, struct ckpt_why *why);

/* Whether @sb is a procfs or a sysfs. */
bool ckpt_kernfs_sb(const struct super_block *sb);

#endif /* _CKPT_KERNFS_H */
