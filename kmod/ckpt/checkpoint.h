/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _CKPT_CHECKPOINT_H
#define _CKPT_CHECKPOINT_H

#include <uapi/linux/ckpt.h>

long ckpt_ioctl_checkpoint(struct ckpt_checkpoint __user *uarg);

#endif /* _CKPT_CHECKPOINT_H */
