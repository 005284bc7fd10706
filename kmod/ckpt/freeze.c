// SPDX-License-Identifier: GPL-2.0
/*
 * Freezing a process at safe points.
 *
 * Each thread gets a task_work queued with TWA_SIGNAL: it wakes from any
 * interruptible sleep and runs the work on its way back to user mode,
 * before the kernel decides whether to restart an interrupted system call.
 * There the thread captures its own registers (so its FPU state is live and
 * exact) and sleeps until the checkpoint lets it go. A thread parked this
 * way holds no locks, and its user state is complete in its pt_regs.
 *
 * task_work cannot be cancelled by a module, so a work queued for a thread
 * that never reaches user mode again (it exits, or stays stopped) runs
 * later or at exit: every queued work holds a reference on the freeze and
 * on the module, and finds the freeze released when it comes too late.
 */

#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/task_work.h>

#include "freeze.h"
#include "why.h"

static void freeze_put(struct ckpt_freeze *fz)
{
	unsigned int i;

	if (!refcount_dec_and_test(&fz->ref))
		return;
	for (i = 0; i < fz->nr; i++) {
		kvfree(fz->threads[i].ts.xstate);
		put_task_struct(fz->threads[i].task);
	}
	kvfree(fz->threads);
	kfree(fz);
}

static void park_work(struct callback_head *head)
{
	struct ckpt_parked *p = container_of(head, struct ckpt_parked, work);
	struct ckpt_freeze *fz = p->fz;

	if (!READ_ONCE(fz->released)) {
		if (current->flags & PF_EXITING)
			p->exited = true;
		else
			p->ts.err = ckpt_thread_capture(&p->ts);
		atomic_inc(&fz->arrived);
		wake_up_all(&fz->wq);
		if (!p->exited)
			wait_event_killable(fz->wq, READ_ONCE(fz->released));
	}
	freeze_put(fz);
	module_put(THIS_MODULE);
}

/* Takes a reference on each of @leader's threads, leader first. */
static int collect_threads(struct ckpt_freeze *fz, struct task_struct *leader)
{
	struct task_struct *t;
	unsigned int n = 0, cap;

again:
	cap = get_nr_threads(leader) + 8;
	fz->threads = kvcalloc(cap, sizeof(*fz->threads), GFP_KERNEL);
	if (!fz->threads)
		return -ENOMEM;

	rcu_read_lock();
	for_each_thread(leader, t) {
		if (n == cap) {
			rcu_read_unlock();
			while (n)
				put_task_struct(fz->threads[--n].task);
			kvfree(fz->threads);
			goto again;
		}
		get_task_struct(t);
		fz->threads[n++].task = t;
	}
	rcu_read_unlock();
	fz->nr = n;
	return n ? 0 : -ESRCH;
}

static unsigned int count_live_threads(struct task_struct *leader)
{
	struct task_struct *t;
	unsigned int n = 0;

	rcu_read_lock();
	for_each_thread(leader, t)
		if (!(t->flags & PF_EXITING))
			n++;
	rcu_read_unlock();
	return n;
}

static int freeze_once(struct task_struct *leader, unsigned long deadline,
		       struct ckpt_freeze **out, struct ckpt_why *why)
{
	struct ckpt_freeze *fz;
	unsigned int i, parked = 0;
	long left;
	int ret;

	fz = kzalloc(sizeof(*fz), GFP_KERNEL);
	if (!fz)
		return -ENOMEM;
	refcount_set(&fz->ref, 1);
	init_waitqueue_head(&fz->wq);
	atomic_set(&fz->arrived, 0);
	fz->xstate_size = ckpt_xstate_size();

	ret = collect_threads(fz, leader);
	if (ret == -ESRCH)
		why->msg = "the process exited";
	if (ret)
		goto err_put;

	for (i = 0; i < fz->nr; i++) {
		struct ckpt_parked *p = &fz->threads[i];

		p->fz = fz;
		p->ts.img.xstate_size = fz->xstate_size;
		p->ts.xstate = kvzalloc(fz->xstate_size, GFP_KERNEL);
		if (!p->ts.xstate) {
			ret = -ENOMEM;
			goto err_release;
		}
	}

	for (i = 0; i < fz->nr; i++) {
		struct ckpt_parked *p = &fz->threads[i];

		if (!try_module_get(THIS_MODULE)) {
			ret = -ENODEV;
			goto err_release;
		}
		refcount_inc(&fz->ref);
		init_task_work(&p->work, park_work);
		if (task_work_add(p->task, &p->work, TWA_SIGNAL)) {
			/* Already exiting: it will not return to user mode. */
			p->exited = true;
			atomic_inc(&fz->arrived);
			refcount_dec(&fz->ref);
			module_put(THIS_MODULE);
		}
	}

	left = wait_event_interruptible_timeout(fz->wq,
			atomic_read(&fz->arrived) == fz->nr,
			time_before(jiffies, deadline) ? deadline - jiffies : 0);
	if (left == 0) {
		why->msg = "not every thread reached a safe point in time (stopped, traced or in uninterruptible sleep?)";
		ret = -ETIMEDOUT;
		goto err_release;
	}
	if (left < 0) {
		ret = -EINTR;
		goto err_release;
	}

	for (i = 0; i < fz->nr; i++)
		if (!fz->threads[i].exited)
			parked++;
	/* A thread still being cloned when we looked has appeared since. */
	if (count_live_threads(leader) > parked) {
		ret = -EAGAIN;
		goto err_release;
	}
	if (!parked || fz->threads[0].exited) {
		why->msg = "the process is exiting";
		ret = -ESRCH;
		goto err_release;
	}
	*out = fz;
	return 0;

err_release:
	WRITE_ONCE(fz->released, true);
	wake_up_all(&fz->wq);
err_put:
	freeze_put(fz);
	return ret;
}

int ckpt_freeze(struct task_struct *leader, unsigned int timeout_ms,
		struct ckpt_freeze **out, struct ckpt_why *why)
{
	/* One deadline for every try. */
	unsigned long deadline = jiffies + msecs_to_jiffies(timeout_ms);
	int tries = 0, ret;

	do {
		ret = freeze_once(leader, deadline, out, why);
	} while (ret == -EAGAIN && ++tries < 8);
	if (ret == -EAGAIN)
		why->msg = "the process keeps creating threads";
	return ret;
}

void ckpt_thaw(struct ckpt_freeze *fz)
{
	WRITE_ONCE(fz->released, true);
	wake_up_all(&fz->wq);
	freeze_put(fz);
}
