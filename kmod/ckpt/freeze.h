/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _CKPT_FREEZE_H
#define _CKPT_FREEZE_H

#include <linux/refcount.h>
#include <linux/task_work.h>
#include <linux/wait.h>

#include "threads.h"

struct ckpt_freeze;
struct ckpt_why;

/* One thread of a frozen process. */
struct ckpt_parked {
	struct callback_head work;
	struct ckpt_freeze *fz;
	struct task_struct *task;	/* referenced */
	struct ckpt_thread_state ts;	/* captured by the thread itself */
	bool exited;			/* was leaving; not part of the image */
};

struct ckpt_freeze {
	refcount_t ref;
	wait_queue_head_t wq;
	atomic_t arrived;
	bool released;
	unsigned int nr;		/* threads asked to park */
	unsigned int xstate_size;
	struct ckpt_parked *threads;	/* nr of them, leader first */
};

/*
 * Parks every thread of @leader's process at its next return to user mode,
 * each having captured its own registers. Waits at most @timeout_ms in
 * all (threads created meanwhile make it try again, within the same
 * time); fails with -ETIMEDOUT naming no thread, or -EINTR if the caller
 * is signalled.
 */
int ckpt_freeze(struct task_struct *leader, unsigned int timeout_ms,
		struct ckpt_freeze **out, struct ckpt_why *why);
/* Lets every parked thread go and drops the caller's reference. */
void ckpt_thaw(struct ckpt_freeze *fz);

#endif /* _CKPT_FREEZE_H */
