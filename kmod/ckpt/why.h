/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _CKPT_WHY_H
#define _CKPT_WHY_H

#include <linux/compiler.h>
#include <linux/types.h>

#define CKPT_WHY_LEN	256

/*
 * Why a checkpoint or restart failed, for user space (the errmsg buffer,
 * or a restart's err_fd). Every function that can refuse takes one and,
 * returning an error, may set @msg: to a constant string, or with
 * ckpt_whyf() to @buf. NULL is no message; the last one set is the one
 * user space gets.
 */
struct ckpt_why {
	const char *msg;
	char buf[CKPT_WHY_LEN];
};

/* Formats the message into @why->buf (truncated) and points @msg at it. */
__printf(2, 3) void ckpt_whyf(struct ckpt_why *why, const char *fmt, ...);

/* Copies @msg, truncated and terminated, to a user buffer (if any). */
void ckpt_put_errmsg(u64 ubuf, u32 len, const char *msg);

#endif /* _CKPT_WHY_H */
