/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _CKPT_LAZY_H
#define _CKPT_LAZY_H

#include <linux/types.h>
#include <uapi/linux/ckpt_image.h>

struct file;
struct ckpt_why;

/*
 * Lazy restart (lazy.c). Before the point of no return: the userfaultfd
 * the restarter made, checked to be one of this process's that takes
 * registrations. After the image's mappings are in place: those that
 * ckpt_img_vma_lazy() leaves to the restarter registered with it.
 */
struct file *ckpt_lazy_get(int fd, struct ckpt_why *why);
int ckpt_lazy_register(struct file *uffd, const struct ckpt_img_vma *vmas,
		       u32 nr_vmas, struct ckpt_why *why);

/*
 * In the main thread on its way back to user mode, after its credentials
 * are installed: dies with the restarter @ppid again; -ESRCH when that is
 * no longer its parent (gone already).
 */
int ckpt_lazy_arm(pid_t ppid);

/* Forgets every process a lazy restart armed, at module unload. */
void ckpt_lazy_uninit(void);

/* Clears the death signal of the caller's child @upid (see ckpt.h). */
long ckpt_ioctl_lazy_done(u32 __user *upid);

#endif /* _CKPT_LAZY_H */
