// SPDX-License-Identifier: GPL-2.0
/*
 * Pending signals and interval timers of a frozen process.
 *
 * Every queued signal is recorded with its siginfo, per thread and for the
 * process, in queue order; the restarter queues them again (its main
 * thread may queue any siginfo to its own process) while every thread
 * still blocks all signals, so they are delivered only once the image's
 * masks are back. ITIMER_REAL is recorded as time left and interval.
 */

#include <linux/hrtimer.h>
#include <linux/ktime.h>
#include <linux/sched/signal.h>
#include <linux/signal.h>
#include <linux/slab.h>

#include "signals.h"

struct sig_capture {
	struct ckpt_img_signals *hdr;
	struct ckpt_img_siginfo *q;
	u32 max;
};

static int add(struct sig_capture *c, u32 tid, int sig,
	       const kernel_siginfo_t *info)
{
	struct ckpt_img_siginfo *e;

	if (c->hdr->nr == c->max)
		return -E2BIG;
	e = &c->q[c->hdr->nr++];
	e->tid = tid;
	e->signo = sig;
	if (info) {
		BUILD_BUG_ON(sizeof(*info) > sizeof(e->info));
		memcpy(e->info, info, sizeof(*info));
	} else {
		kernel_siginfo_t k = { .si_signo = sig, .si_code = SI_KERNEL };

		memcpy(e->info, &k, sizeof(k));
	}
	return 0;
}

/* A queue's entries, then its set bits that have none (they were dropped). */
static int add_pending(struct sig_capture *c, u32 tid, struct sigpending *p)
{
	struct sigqueue *q;
	sigset_t seen;
	int sig, ret;

	sigemptyset(&seen);
	list_for_each_entry(q, &p->list, list) {
		ret = add(c, tid, q->info.si_signo, &q->info);
		if (ret)
			return ret;
		sigaddset(&seen, q->info.si_signo);
	}
	for (sig = 1; sig <= 64; sig++) {
		if (sigismember(&p->signal, sig) && !sigismember(&seen, sig)) {
			ret = add(c, tid, sig, NULL);
			if (ret)
				return ret;
		}
	}
	return 0;
}

int ckpt_capture_signals(struct task_struct *leader,
			 struct task_struct *const *threads, unsigned int nr,
			 struct ckpt_img_signals **out, size_t *len,
			 const char **why)
{
	struct signal_struct *sig = leader->signal;
	struct sig_capture c = { .max = CKPT_IMG_MAX_SIGQUEUE };
	struct sighand_struct *sighand;
	unsigned int i;
	int ret = 0;

	c.hdr = kvzalloc(sizeof(*c.hdr) + c.max * sizeof(*c.q), GFP_KERNEL);
	if (!c.hdr)
		return -ENOMEM;
	c.q = (struct ckpt_img_siginfo *)(c.hdr + 1);

	/* What lock_task_sighand() does; the threads are parked, so it holds. */
	rcu_read_lock();
	sighand = rcu_dereference(leader->sighand);
	spin_lock_irq(&sighand->siglock);
	if (sig->it[0].expires || sig->it[1].expires) {
		*why = "a virtual or profiling interval timer is armed: not supported yet";
		ret = -EOPNOTSUPP;
	} else if (ckpt_has_posix_timers(sig)) {
		*why = "the process has POSIX timers (timer_create): not supported yet";
		ret = -EOPNOTSUPP;
	}
	if (!ret && hrtimer_active(&sig->real_timer)) {
		s64 left = ktime_to_ns(hrtimer_get_remaining(&sig->real_timer));

		c.hdr->real_value_ns = left > 0 ? left : 1;
		c.hdr->real_interval_ns = ktime_to_ns(sig->it_real_incr);
	}
	for (i = 0; !ret && i < nr; i++)
		if (threads[i])
			ret = add_pending(&c, task_pid_vnr(threads[i]),
					  &threads[i]->pending);
	if (!ret)
		ret = add_pending(&c, 0, &sig->shared_pending);
	spin_unlock_irq(&sighand->siglock);
	rcu_read_unlock();

	if (ret == -E2BIG) {
		*why = "more pending signals than an image holds";
		ret = -EOPNOTSUPP;
	}
	if (ret) {
		kvfree(c.hdr);
		return ret;
	}
	*out = c.hdr;
	*len = sizeof(*c.hdr) + c.hdr->nr * sizeof(*c.q);
	return 0;
}
