/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _CKPT_CHECKPOINT_H
#define _CKPT_CHECKPOINT_H

#include <uapi/linux/ckpt.h>

long ckpt_ioctl_checkpoint(struct ckpt_checkpoint __user *uarg);

/* Copies @msg, truncated and terminated, to a user buffer (if any). */
void ckpt_put_errmsg(u64 ubuf, u32 len, const char *msg);

#endif /* _CKPT_CHECKPOINT_H */
