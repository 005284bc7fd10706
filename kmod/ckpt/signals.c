// SPDX-License-Identifier: GPL-2.0
/*
 * Pending signals and interval timers of a frozen process.
 *
 * Every queued signal is recorded with its siginfo, per thread and for the
 * process, in queue order; the restarter queues them again (its main
 * thread may queue any siginfo to its own process) while every thread
 * still blocks all signals, so they are delivered only once the image's
 * masks are back. The three interval timers are recorded as setitimer()
 * re-arms them, value and interval: real time left for ITIMER_REAL,
 * process CPU time for ITIMER_VIRTUAL and ITIMER_PROF, sampled as the
 * kernel samples it for them.
 *
 * A POSIX timer's queued signal is its own preallocated sigqueue entry,
 * which re-arms the timer when delivered. It is recorded as a plain signal
 * with what that delivery would have reported (timers.c saves the timer
 * as if it had been delivered now); its kernel-private field is cleared,
 * so that the copy queued at restart re-arms nothing.
 */

#include <linux/hrtimer.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/posix-timers.h>
#include <linux/sched/signal.h>
#include <linux/signal.h>
#include <linux/slab.h>

#include "layout.h"
#include "signals.h"
#include "timers.h"
#include "why.h"

struct sig_capture {
	struct ckpt_img_signals *hdr;
	struct ckpt_img_siginfo *q;
	u32 max;
	const struct ckpt_timers *timers;
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
	const struct ckpt_img_timer *t;
	kernel_siginfo_t info;
	struct sigqueue *q;
	u32 overrun;
	sigset_t seen;
	int sig, ret;

	if (!list_empty(&p->list) && !ckpt_layout_ok(CKPT_LAYOUT_SIGQUEUE))
		return -ENOPKG;
	sigemptyset(&seen);
	list_for_each_entry(q, &p->list, list) {
		sigaddset(&seen, q->info.si_signo);
		info = q->info;
		if (info.si_code == SI_TIMER) {
			info.si_sys_private = 0;
			t = q->flags & SIGQUEUE_PREALLOC ?
			    ckpt_timers_find(c->timers, info.si_tid, &overrun) :
			    NULL;
			/*
			 * Queued after the timer was read: it was saved armed
			 * with (about) no time left, and fires again at once.
			 */
			if (t && !(t->flags & CKPT_TIMER_PENDING))
				continue;
			if (t)
				info.si_overrun = overrun;
		}
		ret = add(c, tid, info.si_signo, &info);
		if (ret)
			return ret;
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

/*
 * The kernel's __lock_task_sighand() (kernel/signal.c), step for step.
 * sighand_struct is SLAB_TYPESAFE_BY_RCU: under rcu_read_lock() the memory
 * read from tsk->sighand stays a sighand_struct with a valid lock, though
 * it may have been freed and given to another process meanwhile; so the
 * lock is taken and the pointer read again under it. __exit_signal() sets
 * it to NULL under the same lock when the task is released.
 */
struct sighand_struct *__ckpt_lock_sighand(struct task_struct *tsk,
					   unsigned long *flags)
{
	struct sighand_struct *sighand;

	rcu_read_lock();
	for (;;) {
		sighand = rcu_dereference(tsk->sighand);
		if (unlikely(!sighand))
			break;
		spin_lock_irqsave(&sighand->siglock, *flags);
		if (likely(sighand == rcu_access_pointer(tsk->sighand))) {
			/* For sparse: ckpt_lock_sighand() says who holds it. */
			__release(&sighand->siglock);
			break;
		}
		spin_unlock_irqrestore(&sighand->siglock, *flags);
	}
	rcu_read_unlock();
	return sighand;
}

/*
 * What setitimer() re-arms CPU interval timer @it (ITIMER_VIRTUAL, _PROF)
 * with: the time left less the tick setitimer() adds to every CPU-time
 * value it arms (a restart runs on the kernel that made the image).
 */
static u64 cpu_itimer_left(const struct cpu_itimer *it, u64 now)
{
	if (!it->expires)
		return 0;
	return it->expires > now + TICK_NSEC ? it->expires - now - TICK_NSEC : 1;
}

int ckpt_capture_signals(struct task_struct *leader,
			 struct task_struct *const *threads, unsigned int nr,
			 struct pid_namespace *ns,
			 const struct ckpt_timers *timers,
			 struct ckpt_img_signals **out, size_t *len,
			 struct ckpt_why *why)
{
	struct signal_struct *sig = leader->signal;
	struct sig_capture c = {
		.max = CKPT_IMG_MAX_SIGQUEUE, .timers = timers,
	};
	struct sighand_struct *sighand;
	u64 cpu[CPUCLOCK_MAX];
	unsigned long flags;
	unsigned int i;
	int ret = 0;

	c.hdr = kvzalloc(sizeof(*c.hdr) + c.max * sizeof(*c.q), GFP_KERNEL);
	if (!c.hdr)
		return -ENOMEM;
	c.q = (struct ckpt_img_siginfo *)(c.hdr + 1);

	sighand = ckpt_lock_sighand(leader, &flags);
	if (!sighand) {
		kvfree(c.hdr);
		return -ESRCH;
	}
	if (sig->it[CPUCLOCK_PROF].expires || sig->it[CPUCLOCK_VIRT].expires) {
		ckpt_process_cputime(leader, cpu);
		c.hdr->prof_value_ns = cpu_itimer_left(&sig->it[CPUCLOCK_PROF],
						       cpu[CPUCLOCK_PROF]);
		c.hdr->prof_interval_ns = sig->it[CPUCLOCK_PROF].incr;
		c.hdr->virt_value_ns = cpu_itimer_left(&sig->it[CPUCLOCK_VIRT],
						       cpu[CPUCLOCK_VIRT]);
		c.hdr->virt_interval_ns = sig->it[CPUCLOCK_VIRT].incr;
	}
	if (hrtimer_active(&sig->real_timer)) {
		s64 left = ktime_to_ns(hrtimer_get_remaining(&sig->real_timer));

		c.hdr->real_value_ns = left > 0 ? left : 1;
		c.hdr->real_interval_ns = ktime_to_ns(sig->it_real_incr);
	}
	for (i = 0; !ret && i < nr; i++)
		if (threads[i])
			ret = add_pending(&c, task_pid_nr_ns(threads[i], ns),
					  &threads[i]->pending);
	if (!ret)
		ret = add_pending(&c, 0, &sig->shared_pending);
	ckpt_unlock_sighand(sighand, &flags);

	if (ret == -E2BIG) {
		why->msg = "more pending signals than an image holds";
		ret = -EOPNOTSUPP;
	}
	if (ret == -ENOPKG) {
		why->msg = "it has queued signals, which this engine cannot read on this kernel (struct sigqueue differs from this engine's build)";
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
