/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _CKPT_TIMERS_H
#define _CKPT_TIMERS_H

#include <linux/types.h>
#include <uapi/linux/ckpt_image.h>

struct task_struct;
struct ckpt_why;

/* The TIMERS section of a frozen process, and what SIGNALS needs of it. */
struct ckpt_timers {
	struct ckpt_img_timers *img;	/* header and entries, kvmalloc'ed */
	size_t len;			/* of the section */
	u32 *sig_overrun;		/* per entry: its pending signal's si_overrun */
};

/*
 * The POSIX timers of the process @leader, whose live threads are
 * @threads (NULL entries skipped), each read under its lock. Fails, with
 * a message in @why, on what a restart cannot make again; with -ESRCH
 * and an empty message once the process was released (exited, reaped).
 */
struct pid_namespace;

/* Thread ids (SIGEV_THREAD_ID, CPU clocks) are numbered in @ns. */
int ckpt_capture_timers(struct task_struct *leader,
			struct task_struct *const *threads, unsigned int nr,
			struct pid_namespace *ns, struct ckpt_timers *out,
			struct ckpt_why *why);
void ckpt_timers_free(struct ckpt_timers *t);

/* Timer @id's entry, with its signal's si_overrun in @sig_overrun; or NULL. */
const struct ckpt_img_timer *ckpt_timers_find(const struct ckpt_timers *t,
					      u32 id, u32 *sig_overrun);

/*
 * The process CPU clocks of @leader's process (CPUCLOCK_PROF, _VIRT,
 * _SCHED), as the kernel samples them for its timers. Under siglock.
 */
void ckpt_process_cputime(struct task_struct *leader, u64 *samples);

/*
 * At restart, in the restarting process: its timers (the restarter made
 * them) must be exactly @h's; then their overrun counts are set, which no
 * system call does. @h may be NULL: then there must be none.
 */
int ckpt_timers_restore(const struct ckpt_img_timers *h, struct ckpt_why *why);

#endif /* _CKPT_TIMERS_H */
