/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _CKPT_HOLD_H
#define _CKPT_HOLD_H

#include <linux/fs.h>

#include "why.h"

/* The hold socket of a CKPT_RESTART_HOLD restart, referenced, or an ERR_PTR. */
struct file *ckpt_hold_get(int fd, struct ckpt_why *why);

/* Says the process is whole, then waits for the go: 0, or why not. */
int ckpt_hold_wait(struct file *hold, struct ckpt_why *why);

#endif /* _CKPT_HOLD_H */
