/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _CKPT_CREDS_H
#define _CKPT_CREDS_H

#include <linux/types.h>
#include <uapi/linux/ckpt_image.h>

struct cred;
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

/*
 * At restart, before the point of no return: the credentials the restarted
 * process is to run with, from @given (what CKPT_IOC_RESTART_CREDS handed
 * over, consumed; NULL: none) or the caller's own. NULL when nothing is to
 * change; an ERR_PTR, named in @whybuf, when the image's ids are not the
 * ones given or the caller could not have switched to them itself.
 */
struct cred *ckpt_creds_prepare(const struct ckpt_img_creds *img,
				struct cred *given, char *whybuf, size_t size);

/*
 * In each restarted thread on its way back to user mode: installs @cred
 * (NULL: none; one reference consumed) and the image's dumpability.
 */
void ckpt_creds_install(struct cred *cred, u32 dumpable);

#endif /* _CKPT_CREDS_H */
