/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _CKPT_CREDS_H
#define _CKPT_CREDS_H

#include <linux/types.h>
#include <uapi/linux/ckpt_image.h>

struct cred;
struct ckpt_creds_set;
struct mm_struct;
struct task_struct;
struct ckpt_why;

/*
 * While @task is frozen: its credentials and no_new_privs, which each of
 * its @nr threads @tasks (NULL: exited) must share, and whether @mm is
 * dumpable, as a new CREDS payload of *@len bytes. Refused, named in
 * @why: threads with other credentials, a process in another user
 * namespace than the checkpointer's, an id that namespace has no name
 * for, a thread under seccomp.
 */
int ckpt_creds_capture(struct task_struct *task,
		       struct task_struct *const *tasks, unsigned int nr,
		       struct mm_struct *mm, struct ckpt_img_creds **creds,
		       size_t *len, struct ckpt_why *why);

/*
 * At restart, before the point of no return: what the restarted threads
 * are to install (ckpt_creds_put() drops it): the credentials from @given
 * (what CKPT_IOC_RESTART_CREDS handed over, consumed; NULL: none) or the
 * caller's own, unless nothing is to change, with the image's dumpability
 * and flags. An ERR_PTR, named in @why, when the image's ids are not the
 * ones given or the caller could not have switched to them itself, or,
 * unless @trusted (the image's MAC is the engine's), are not the caller's
 * own.
 */
struct ckpt_creds_set *ckpt_creds_prepare(const struct ckpt_img_creds *img,
					  struct cred *given, bool trusted,
					  struct ckpt_why *why);
void ckpt_creds_put(struct ckpt_creds_set *cs);

/* The credentials the restarted threads install; NULL: the caller's own. */
const struct cred *ckpt_creds_cred(const struct ckpt_creds_set *cs);

/*
 * A reference for one restarted thread, which either installs it or drops
 * it: every thread that holds one waits in ckpt_creds_install() until none
 * has yet to.
 */
struct ckpt_creds_set *ckpt_creds_get(struct ckpt_creds_set *cs);
void ckpt_creds_drop(struct ckpt_creds_set *cs);

/*
 * In a restarted thread on its way back to user mode: installs the
 * credentials, dumpability and no_new_privs, waits for the other threads
 * to have, and drops the thread's reference.
 */
void ckpt_creds_install(struct ckpt_creds_set *cs);

#endif /* _CKPT_CREDS_H */
