/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _CKPT_CALLBACK_H
#define _CKPT_CALLBACK_H

#include <linux/types.h>
#include <uapi/linux/ckpt.h>

struct ckpt_reg;
struct file;
struct task_struct;
struct ckpt_why;

long ckpt_ioctl_register(struct file *file, struct ckpt_register __user *uarg);
long ckpt_ioctl_cb_wait(struct file *file, struct ckpt_cb_request __user *uarg);
long ckpt_ioctl_cb_ready(struct file *file, struct ckpt_cb_ready __user *uarg);
void ckpt_cb_flush(struct file *file);
void ckpt_cb_release(struct file *file);

/* The registration of @task's process, referenced, or NULL. */
struct ckpt_reg *ckpt_cb_find(struct task_struct *task);
void ckpt_cb_put(struct ckpt_reg *reg);

/*
 * Hands a checkpoint request to the process's callback thread and waits for
 * its verdict. 0: go ahead (then *@idp must be completed with
 * ckpt_cb_complete()); otherwise the request is over and @why says why.
 */
int ckpt_cb_request(struct ckpt_reg *reg, u32 flags, unsigned int timeout_ms,
		    u64 *idp, struct ckpt_why *why);
void ckpt_cb_complete(struct ckpt_reg *reg, u64 id, int result);

/* The /dev/ckpt file that carries @reg (not referenced; may be NULL). */
const struct file *ckpt_cb_file(const struct ckpt_reg *reg);

/* Whether @file is an open /dev/ckpt. */
bool ckpt_is_dev_file(const struct file *file);

#endif /* _CKPT_CALLBACK_H */
