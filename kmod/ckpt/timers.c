// SPDX-License-Identifier: GPL-2.0
/*
 * POSIX timers (timer_create()) of a frozen process.
 *
 * Each timer is read under its it_lock and then the process's siglock,
 * the order the kernel takes them in when a timer queues its signal. The
 * time left is what timer_gettime() would say (a periodic timer whose
 * signal waits, and a SIGEV_NONE one, moved forward by whole intervals
 * past now), computed without changing the timer. A timer whose pending
 * signal would re-arm it when delivered is saved as if that delivery
 * happened at the checkpoint: armed for its next expiry, with the overrun
 * count the delivery would have given, which its signal also carries into
 * SIGNALS (signals.c) as a plain queued signal.
 *
 * Nothing the kernel exports creates or arms a timer, so at restart the
 * restarter does both with system calls before the engine takes over;
 * ckpt_timers_restore() then checks that what it made is the image's and
 * sets the overrun counts, which no system call sets.
 */

#include <linux/hrtimer.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/pid.h>
#include <linux/posix-timers.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/sort.h>

#include "layout.h"
#include "signals.h"
#include "timers.h"
#include "why.h"

struct timer_ctx {
	struct task_struct *leader;
	struct task_struct *const *threads;
	unsigned int nr;
	struct pid_namespace *ns;	/* the image's pids are numbered in */
	struct ckpt_why *why;
};

static __printf(3, 4) int refuse(const struct timer_ctx *c,
				 const struct k_itimer *t, const char *fmt, ...)
{
	char *buf = c->why->buf;
	int n = scnprintf(buf, sizeof(c->why->buf), "pid %d timer %d: ",
			  task_tgid_vnr(c->leader), t->it_id);
	va_list ap;

	va_start(ap, fmt);
	vscnprintf(buf + n, sizeof(c->why->buf) - n, fmt, ap);
	va_end(ap);
	c->why->msg = buf;
	return -EOPNOTSUPP;
}

/*
 * The process was released (killed and reaped while parked): the caller
 * says so, naming the pid it asked for, which the task no longer has.
 */
static int exited(const struct timer_ctx *c)
{
	c->why->msg = NULL;
	return -ESRCH;
}

/* Whether @p is one of the frozen process's live threads. */
static bool live_thread(const struct timer_ctx *c, const struct task_struct *p)
{
	unsigned int i;

	for (i = 0; p && i < c->nr; i++)
		if (c->threads[i] == p)
			return true;
	return false;
}

static u32 clamp_overrun(s64 v)
{
	return v < 0 ? 0 : v > INT_MAX ? INT_MAX : v;
}

/* Intervals that move an expiry @exp past @now, as hrtimer_forward() counts. */
static u64 forward(u64 exp, u64 now, u64 iv)
{
	return now < exp ? 0 : div64_u64(now - exp, iv) + 1;
}

/* Now on the clock of the hrtimer base a timer is queued on. */
static u64 base_now(const struct hrtimer *h)
{
	switch (h->base->clockid) {
	case CLOCK_REALTIME:
		return ktime_to_ns(ktime_get_real());
	case CLOCK_BOOTTIME:
		return ktime_to_ns(ktime_get_boottime());
	case CLOCK_TAI:
		return ktime_to_ns(ktime_get_clocktai());
	default:
		return ktime_to_ns(ktime_get());
	}
}

void ckpt_process_cputime(struct task_struct *leader, u64 *samples)
{
	struct signal_struct *sig = leader->signal;
	struct task_struct *t;
	u64 utime, stime, rtime;

	if (READ_ONCE(sig->posix_cputimers.timers_active)) {
		/* What timers are armed against while it runs. */
		utime = atomic64_read(&sig->cputimer.cputime_atomic.utime);
		stime = atomic64_read(&sig->cputimer.cputime_atomic.stime);
		rtime = atomic64_read(&sig->cputimer.cputime_atomic.sum_exec_runtime);
	} else {
		/* The dead threads' times, and the live ones' (all parked). */
		utime = sig->utime;
		stime = sig->stime;
		rtime = sig->sum_sched_runtime;
		rcu_read_lock();
		for_each_thread(leader, t) {
			utime += t->utime;
			stime += t->stime;
			rtime += t->se.sum_exec_runtime;
		}
		rcu_read_unlock();
	}
	samples[CPUCLOCK_PROF] = utime + stime;
	samples[CPUCLOCK_VIRT] = utime;
	samples[CPUCLOCK_SCHED] = rtime;
}

/* A parked thread's CPU clock (it is not running: nothing is pending). */
static u64 thread_cputime(const struct task_struct *p, int which)
{
	switch (which) {
	case CPUCLOCK_PROF:
		return p->utime + p->stime;
	case CPUCLOCK_VIRT:
		return p->utime;
	default:
		return p->se.sum_exec_runtime;
	}
}

/* Under the timer's it_lock and the process's siglock. */
static int capture_one(const struct timer_ctx *c, struct k_itimer *t,
		       struct ckpt_img_timer *e, u32 *sig_overrun)
{
	const struct sigqueue *q = t->sigq;
	clockid_t clock = t->it_clock;
	bool sig_none = t->it_sigev_notify == SIGEV_NONE;
	bool pending = !list_empty(&q->list);
	u64 iv = ktime_to_ns(t->it_interval), exp = 0, now = 0, next, k = 0;
	u64 samples[CPUCLOCK_MAX];
	bool rearm, armed = false;
	struct task_struct *p;

	/* Delivering the pending signal would re-arm the timer. */
	rearm = pending && iv && t->it_requeue_pending & REQUEUE_PENDING &&
		q->info.si_sys_private == t->it_requeue_pending;
	e->id = t->it_id;
	e->notify = t->it_sigev_notify;
	e->signo = q->info.si_signo;
	e->sival = (unsigned long)q->info.si_value.sival_ptr;
	e->interval_ns = iv;
	e->flags = pending ? CKPT_TIMER_PENDING : 0;
	if (e->id >= CKPT_IMG_MAX_TIMER_ID)
		return refuse(c, t, "ids from %u on cannot be made again (the kernel hands them out in order)",
			      CKPT_IMG_MAX_TIMER_ID);

	switch (e->notify) {
	case SIGEV_SIGNAL:
	case SIGEV_NONE:
	case SIGEV_THREAD:
		break;
	case SIGEV_SIGNAL | SIGEV_THREAD_ID:
		p = pid_task(t->it_pid, PIDTYPE_PID);
		if (!live_thread(c, p))
			return refuse(c, t, "its signal goes to thread %d, which has exited",
				      pid_vnr(t->it_pid));
		e->tid = task_pid_nr_ns(p, c->ns);
		break;
	default:
		return refuse(c, t, "unknown notification %u", e->notify);
	}

	switch (clock) {
	case CLOCK_REALTIME:
	case CLOCK_MONOTONIC:
	case CLOCK_BOOTTIME:
	case CLOCK_TAI: {
		const struct hrtimer *h = &t->it.real.timer;
		ktime_t hexp = hrtimer_get_expires(h);

		e->clockid = clock;
		/* A one-shot timer that fired, or never was armed. */
		if (!iv && !t->it_active && !sig_none)
			break;
		armed = true;
		now = base_now(h);
		exp = hexp > 0 ? hexp : 0;
		if (iv && (t->it_requeue_pending & REQUEUE_PENDING || sig_none))
			k = forward(exp, now, max_t(u64, iv, hrtimer_resolution));
		/* A relative CLOCK_REALTIME timer runs on CLOCK_MONOTONIC. */
		if (clock == CLOCK_REALTIME && h->base->clockid == CLOCK_REALTIME)
			e->flags |= CKPT_TIMER_ABSTIME;
		break;
	}
	case CLOCK_REALTIME_ALARM:
	case CLOCK_BOOTTIME_ALARM:
		return refuse(c, t, "alarm clocks (%d) are not supported", clock);
	default:
		if (clock >= 0 || (clock & CLOCKFD_MASK) == CLOCKFD)
			return refuse(c, t, "clock %d is not supported", clock);
		if (CPUCLOCK_PERTHREAD(clock)) {
			p = pid_task(t->it.cpu.pid, PIDTYPE_PID);
			if (!live_thread(c, p))
				return refuse(c, t, "it counts the CPU time of thread %d, which has exited",
					      pid_vnr(t->it.cpu.pid));
			e->clockid = make_thread_cpuclock(task_pid_nr_ns(p, c->ns),
							  CPUCLOCK_WHICH(clock));
			now = thread_cputime(p, CPUCLOCK_WHICH(clock));
		} else {
			p = pid_task(t->it.cpu.pid, PIDTYPE_TGID);
			if (!p || !same_thread_group(p, c->leader))
				return refuse(c, t, "it counts the CPU time of another process (%d)",
					      pid_vnr(t->it.cpu.pid));
			/* Its own pid, or 0: the clock of the process itself. */
			e->clockid = CPUCLOCK_PID(clock) ?
				make_process_cpuclock(task_tgid_nr_ns(c->leader, c->ns),
						      CPUCLOCK_WHICH(clock)) :
				clock;
			ckpt_process_cputime(c->leader, samples);
			now = samples[CPUCLOCK_WHICH(clock)];
		}
		exp = cpu_timer_getexpires(&t->it.cpu);
		armed = exp != 0;
		if (armed && iv && (rearm || sig_none))
			k = forward(exp, now, iv);
	}

	if (armed) {
		/* No overflow: k * iv is at most now - exp + iv. */
		next = exp + k * iv;
		if (next > now)
			e->value_ns = next - now;
		else
			e->value_ns = sig_none && !iv ? 0 : 1;
		if (e->flags & CKPT_TIMER_ABSTIME && e->value_ns)
			e->value_ns = min_t(u64, next, KTIME_MAX);
	}
	if (rearm) {
		/* As posixtimer_rearm() would count it at delivery now. */
		e->overrun_last = clamp_overrun(t->it_overrun + k);
		e->overrun = 0;
		*sig_overrun = clamp_overrun((s64)e->overrun_last +
					     q->info.si_overrun);
	} else {
		/* timer_gettime() of a forwarded timer counts as overruns. */
		e->overrun_last = clamp_overrun(t->it_overrun_last);
		e->overrun = clamp_overrun(t->it_overrun + k + 1);
		*sig_overrun = q->info.si_overrun;
	}
	return 0;
}

static int cmp_id(const void *a, const void *b)
{
	const struct k_itimer *x = *(struct k_itimer *const *)a;
	const struct k_itimer *y = *(struct k_itimer *const *)b;

	return x->it_id < y->it_id ? -1 : x->it_id > y->it_id;
}

void ckpt_timers_free(struct ckpt_timers *t)
{
	kvfree(t->img);
	kvfree(t->sig_overrun);
	t->img = NULL;
	t->sig_overrun = NULL;
}

int ckpt_capture_timers(struct task_struct *leader,
			struct task_struct *const *threads, unsigned int nr,
			struct pid_namespace *ns, struct ckpt_timers *out,
			struct ckpt_why *why)
{
	struct timer_ctx c = {
		.leader = leader, .threads = threads, .nr = nr, .ns = ns,
		.why = why,
	};
	struct signal_struct *sig = leader->signal;
	struct sighand_struct *sighand;
	struct ckpt_img_timer *ents;
	struct k_itimer *t, **timers;
	unsigned int count = 0, n = 0, i;
	unsigned long flags, sflags;
	u32 next_id;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	if (!ckpt_layout_ok(CKPT_LAYOUT_TIMERS) &&
	    (ckpt_has_posix_timers(sig) || READ_ONCE(sig->next_posix_timer_id))) {
		ckpt_whyf(why, "pid %d has POSIX timers, which this engine cannot read on this kernel (%s)",
			  task_tgid_vnr(leader), ckpt_layout_why(CKPT_LAYOUT_TIMERS));
		return -EOPNOTSUPP;
	}
	/*
	 * Count them first. The process is frozen: none of its threads can
	 * make or delete a timer now; it can only die.
	 */
	sighand = ckpt_lock_sighand(leader, &sflags);
	if (!sighand)
		return exited(&c);
	ckpt_for_each_posix_timer(t, sig)
		count++;
	next_id = READ_ONCE(sig->next_posix_timer_id);
	ckpt_unlock_sighand(sighand, &sflags);
	if (!count && !next_id)
		return 0;
	if (count > CKPT_IMG_MAX_TIMERS) {
		ckpt_whyf(why, "pid %d has more than %u POSIX timers",
			  task_tgid_vnr(leader), CKPT_IMG_MAX_TIMERS);
		return -EOPNOTSUPP;
	}

	out->len = sizeof(*out->img) + count * sizeof(*ents);
	out->img = kvzalloc(out->len, GFP_KERNEL);
	out->sig_overrun = kvcalloc(count ?: 1, sizeof(*out->sig_overrun),
				    GFP_KERNEL);
	timers = kvcalloc(count ?: 1, sizeof(*timers), GFP_KERNEL);
	if (!out->img || !out->sig_overrun || !timers) {
		ret = -ENOMEM;
		goto out;
	}
	out->img->nr = count;
	out->img->next_id = next_id;
	ents = (struct ckpt_img_timer *)(out->img + 1);

	/* RCU keeps every timer's memory while it is read under its lock. */
	rcu_read_lock();
	sighand = ckpt_lock_sighand(leader, &sflags);
	if (!sighand) {
		ret = exited(&c);
		goto out_rcu;
	}
	ckpt_for_each_posix_timer(t, sig)
		if (n++ < count)
			timers[n - 1] = t;
	ckpt_unlock_sighand(sighand, &sflags);
	if (n != count) {
		ckpt_whyf(why, "the timers of pid %d changed while it was frozen",
			  task_tgid_vnr(leader));
		ret = -EAGAIN;
	} else {
		sort(timers, n, sizeof(*timers), cmp_id, NULL);
	}
	for (i = 0; !ret && i < n; i++) {
		t = timers[i];
		spin_lock_irqsave(&t->it_lock, flags);
		sighand = ckpt_lock_sighand(leader, &sflags);
		if (!sighand) {
			ret = exited(&c);
		} else {
			if (t->it_signal != sig)
				ret = exited(&c);
			else
				ret = capture_one(&c, t, &ents[i],
						  &out->sig_overrun[i]);
			ckpt_unlock_sighand(sighand, &sflags);
		}
		spin_unlock_irqrestore(&t->it_lock, flags);
	}
out_rcu:
	rcu_read_unlock();
out:
	kvfree(timers);
	if (ret)
		ckpt_timers_free(out);
	return ret;
}

static const struct ckpt_img_timer *find(const struct ckpt_img_timer *ents,
					 u32 nr, u32 id)
{
	u32 lo = 0, hi = nr;

	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;

		if (ents[mid].id == id)
			return &ents[mid];
		if (ents[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const struct ckpt_img_timer *ckpt_timers_find(const struct ckpt_timers *t,
					      u32 id, u32 *sig_overrun)
{
	const struct ckpt_img_timer *ents, *e;

	if (!t->img)
		return NULL;
	ents = (const struct ckpt_img_timer *)(t->img + 1);
	e = find(ents, t->img->nr, id);
	if (e)
		*sig_overrun = t->sig_overrun[e - ents];
	return e;
}

int ckpt_timers_restore(const struct ckpt_img_timers *h, struct ckpt_why *why)
{
	const struct ckpt_img_timer *ents = h ? (const void *)(h + 1) : NULL;
	struct signal_struct *sig = current->signal;
	struct sighand_struct *sighand;
	u32 nr = h ? h->nr : 0, i;
	const struct ckpt_img_timer *e;
	struct k_itimer *t, **live;
	int ret = 0, bad = 0;

	if (!ckpt_layout_ok(CKPT_LAYOUT_TIMERS)) {
		if (!h && !ckpt_has_posix_timers(sig))
			return 0;
		ckpt_whyf(why, "the image has POSIX timers, which this engine cannot restore on this kernel (%s)",
			  ckpt_layout_why(CKPT_LAYOUT_TIMERS));
		return -EOPNOTSUPP;
	}
	live = kcalloc(nr ?: 1, sizeof(*live), GFP_KERNEL);
	if (!live)
		return -ENOMEM;
	/*
	 * The timers stay while unlocked: only this process's threads could
	 * delete them, and the others wait for this one in the engine.
	 */
	rcu_read_lock();
	sighand = rcu_dereference(current->sighand);
	spin_lock_irq(&sighand->siglock);
	ckpt_for_each_posix_timer(t, sig) {
		e = find(ents, nr, t->it_id);
		if (!e || live[e - ents]) {
			bad = t->it_id;
			ret = -EINVAL;
			break;
		}
		live[e - ents] = t;
	}
	spin_unlock_irq(&sighand->siglock);
	rcu_read_unlock();
	if (ret) {
		ckpt_whyf(why, "the restarter made timer %d, which the image does not have",
			  bad);
		goto out;
	}
	for (i = 0; i < nr; i++) {
		unsigned long flags;

		e = &ents[i];
		t = live[i];
		if (!t) {
			ckpt_whyf(why, "timer %u of the image was not made again",
				  e->id);
			ret = -EINVAL;
			goto out;
		}
		spin_lock_irqsave(&t->it_lock, flags);
		if (t->it_clock != e->clockid || t->it_sigev_notify != e->notify ||
		    t->sigq->info.si_signo != e->signo ||
		    (unsigned long)t->sigq->info.si_value.sival_ptr != e->sival ||
		    (e->notify & SIGEV_THREAD_ID && pid_vnr(t->it_pid) != e->tid)) {
			ret = -EINVAL;
		} else {
			/* After timer_settime(), which resets them. */
			t->it_overrun += e->overrun;
			t->it_overrun_last = e->overrun_last;
		}
		spin_unlock_irqrestore(&t->it_lock, flags);
		if (ret) {
			ckpt_whyf(why, "timer %u is not the image's (clock, notification or signal differ)",
				  e->id);
			goto out;
		}
	}
	/* The restarter gets there unless ids wrapped or went too far. */
	if (h && h->next_id <= CKPT_IMG_MAX_TIMER_ID &&
	    (!nr || h->next_id > ents[nr - 1].id) &&
	    READ_ONCE(sig->next_posix_timer_id) != h->next_id) {
		ckpt_whyf(why, "the next timer id is %u, the image's %u",
			  READ_ONCE(sig->next_posix_timer_id), h->next_id);
		ret = -EINVAL;
	}
out:
	kfree(live);
	return ret;
}
