/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _CKPT_SIGNALS_H
#define _CKPT_SIGNALS_H

#include <linux/types.h>
#include <uapi/linux/ckpt_image.h>

struct task_struct;

/*
 * The SIGNALS section of a frozen process: ITIMER_REAL and the pending
 * signals of @threads (NULL entries skipped) and of the process. Fails,
 * with @why, on what cannot be restored (other timers, too many signals).
 * *@out is kvmalloc'ed, *@len bytes.
 */
int ckpt_capture_signals(struct task_struct *leader,
			 struct task_struct *const *threads, unsigned int nr,
			 struct ckpt_img_signals **out, size_t *len,
			 const char **why);

#endif /* _CKPT_SIGNALS_H */
