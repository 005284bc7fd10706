/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _CKPT_RESTART_H
#define _CKPT_RESTART_H

#include <uapi/linux/ckpt.h>

struct file;
struct ckpt_restart_ctx;

long ckpt_ioctl_restart(struct file *file, struct ckpt_restart __user *uarg);
long ckpt_ioctl_restart_thread(struct file *file, u32 __user *uindex);
long ckpt_ioctl_restart_creds(struct file *file, unsigned long arg);
/* Frees what a restart left on an open /dev/ckpt, at its release. */
void ckpt_restart_release(struct ckpt_restart_ctx *ctx);

#endif /* _CKPT_RESTART_H */
