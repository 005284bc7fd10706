/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _CKPT_KERNFS_H
#define _CKPT_KERNFS_H

#include <linux/types.h>

struct file;
struct pid;
struct ckpt_img_file;
struct ckpt_why;

/*
 * Marks @f, a regular file or directory entry for @file, CKPT_FILE_PROCFS
 * or CKPT_FILE_SYSFS when it is on one of those. A file of a /proc/PID
 * directory must be of @tgid's process, and of its main thread where it is
 * a /proc/PID/task/TID one: 0, or -EOPNOTSUPP named in @why.
 */
int ckpt_kernfs_note(struct ckpt_img_file *f, struct file *file,
		     struct pid *tgid, struct ckpt_why *why);

#endif /* _CKPT_KERNFS_H */
