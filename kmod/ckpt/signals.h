/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _CKPT_SIGNALS_H
#define _CKPT_SIGNALS_H

#include <linux/sched/signal.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <uapi/linux/ckpt_image.h>

struct task_struct;
struct ckpt_timers;
struct ckpt_why;

/*
 * lock_task_sighand() and unlock_task_sighand() for the engine, which may
 * call neither (__lock_task_sighand() is not exported): @tsk's sighand
 * locked, interrupts saved in *@flags; NULL, nothing locked, once @tsk was
 * released (exited and reaped), even with the threads parked: the park is
 * a killable wait.
 */
struct sighand_struct *__ckpt_lock_sighand(struct task_struct *tsk,
					   unsigned long *flags);

/* As lock_task_sighand(): the lock held when not NULL, for sparse too. */
static inline struct sighand_struct *
ckpt_lock_sighand(struct task_struct *tsk, unsigned long *flags)
{
	struct sighand_struct *ret = __ckpt_lock_sighand(tsk, flags);

	(void)__cond_lock(&tsk->sighand->siglock, ret);
	return ret;
}

static inline void ckpt_unlock_sighand(struct sighand_struct *sighand,
				       unsigned long *flags)
	__releases(&sighand->siglock)
{
	spin_unlock_irqrestore(&sighand->siglock, *flags);
}

/*
 * The SIGNALS section of a frozen process: its interval timers and the
 * pending signals of @threads (NULL entries skipped) and of the process,
 * those of the POSIX timers in @timers (ckpt_capture_timers(), just
 * before) as it saved them. Fails, with @why, when there are more signals
 * than an image holds; with -ESRCH, @why untouched, once the process was
 * released (exited, reaped). *@out is kvmalloc'ed, *@len bytes.
 */
struct pid_namespace;

/* Thread ids are numbered in @ns (the tree root's, or the caller's). */
int ckpt_capture_signals(struct task_struct *leader,
			 struct task_struct *const *threads, unsigned int nr,
			 struct pid_namespace *ns,
			 const struct ckpt_timers *timers,
			 struct ckpt_img_signals **out, size_t *len,
			 struct ckpt_why *why);

#endif /* _CKPT_SIGNALS_H */
