// SPDX-License-Identifier: GPL-2.0
/*
 * The messages that tell user space why a checkpoint or restart failed:
 * one struct ckpt_why per request, filled by whatever refused.
 */

#include <linux/kernel.h>
#include <linux/minmax.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "why.h"

void ckpt_whyf(struct ckpt_why *why, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why->buf, sizeof(why->buf), fmt, ap);
	va_end(ap);
	why->msg = why->buf;
}

void ckpt_put_errmsg(u64 ubuf, u32 len, const char *msg)
{
	char buf[CKPT_WHY_LEN];

	if (!ubuf || !len || !msg)
		return;
	strscpy(buf, msg, min_t(u32, len, sizeof(buf)));
	if (copy_to_user(u64_to_user_ptr(ubuf), buf, strlen(buf) + 1))
		return;
}
