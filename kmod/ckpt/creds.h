/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _CKPT_CREDS_H
#define _CKPT_CREDS_H

#include <linux/types.h>
#include <uapi/linux/ckpt_image.h>

struct mm_struct;
struct task_struct;

/*
 * While @task is frozen: its credentials, which each of its @nr threads
 * @tasks (NULL: exited) must share, and whether @mm is dumpable, as a new
 * CREDS payload of *@len bytes. Refused, named in @whybuf: threads with
 * other credentials, a process in another user namespace than the
 * checkpointer's, an id that namespace has no name for.
 */
int ckpt_creds_capture(struct task_struct *task,
		       struct task_struct *const *tasks, unsigned int nr,
		       struct mm_struct *mm, struct ckpt_img_creds **creds,
		       size_t *len, char *whybuf, size_t size);

#endif /* _CKPT_CREDS_H */
