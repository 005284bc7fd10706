// SPDX-License-Identifier: GPL-2.0
/*
 * The engine's half of the libckpt callback protocol.
 *
 * A process registers through an open /dev/ckpt (CKPT_IOC_REGISTER); its
 * callback thread then sleeps in CKPT_IOC_CB_WAIT. A checkpoint of the
 * process hands that thread a request and waits for its verdict
 * (CKPT_IOC_CB_READY): go, or abort. On go the requester freezes and
 * captures the process and then completes the request; the callback
 * thread, parked inside CKPT_IOC_CB_READY like every other thread, finds
 * the request completed when its call restarts after the thaw. In a
 * restarted process the call restarts on a /dev/ckpt the restarter
 * registered as restarted, and returns 1.
 */

#include <linux/fs.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/wait.h>

#include "callback.h"
#include "why.h"

struct ckpt_reg {
	struct kref ref;
	struct list_head node;	/* in reg_list, while the file is open */
	struct file *file;	/* not referenced: the entry dies with it */
	struct pid *tgid;
	wait_queue_head_t wq;

	/* Under reg_lock. */
	bool dead;
	u64 req_id;		/* the request in progress, or 0 */
	u32 req_flags;
	u32 req_timeout_ms;
	bool req_taken;		/* handed to CKPT_IOC_CB_WAIT */
	int verdict;		/* -1 while the callbacks run */
	char *msg;		/* abort reason */
	u64 done_id;		/* the last request that ended */
	int done_result;
	bool restarted;
	char *source;
};

static DEFINE_MUTEX(reg_lock);
static LIST_HEAD(reg_list);
static u64 next_req_id;

static void reg_free(struct kref *ref)
{
	struct ckpt_reg *reg = container_of(ref, struct ckpt_reg, ref);

	put_pid(reg->tgid);
	kfree(reg->msg);
	kfree(reg->source);
	kfree(reg);
}

void ckpt_cb_put(struct ckpt_reg *reg)
{
	if (reg)
		kref_put(&reg->ref, reg_free);
}

static struct ckpt_reg *find_locked(struct file *file, struct pid *tgid)
{
	struct ckpt_reg *reg;

	list_for_each_entry(reg, &reg_list, node)
		if ((file && reg->file == file) || (tgid && reg->tgid == tgid))
			return reg;
	return NULL;
}

struct ckpt_reg *ckpt_cb_find(struct task_struct *task)
{
	struct ckpt_reg *reg;

	mutex_lock(&reg_lock);
	reg = find_locked(NULL, task_tgid(task));
	if (reg)
		kref_get(&reg->ref);
	mutex_unlock(&reg_lock);
	return reg;
}

const struct file *ckpt_cb_file(const struct ckpt_reg *reg)
{
	return reg ? reg->file : NULL;
}

/*
 * Every close() of the registered file by its own process (exec's
 * close-on-exec and exit included) ends the registration, even while its
 * callback thread holds the file in a sleeping call; closes by children
 * that inherited the descriptor do not.
 */
void ckpt_cb_flush(struct file *file)
{
	struct ckpt_reg *reg;

	mutex_lock(&reg_lock);
	reg = find_locked(file, NULL);
	if (reg && reg->tgid == task_tgid(current)) {
		list_del(&reg->node);
		reg->dead = true;
	} else {
		reg = NULL;
	}
	mutex_unlock(&reg_lock);
	if (!reg)
		return;
	wake_up_all(&reg->wq);
	ckpt_cb_put(reg);
}

void ckpt_cb_release(struct file *file)
{
	struct ckpt_reg *reg;

	mutex_lock(&reg_lock);
	reg = find_locked(file, NULL);
	if (reg) {
		list_del(&reg->node);
		reg->dead = true;
	}
	mutex_unlock(&reg_lock);
	if (!reg)
		return;
	wake_up_all(&reg->wq);
	ckpt_cb_put(reg);
}

/* The caller must belong to the registered process. */
static struct ckpt_reg *get_own(struct file *file)
{
	struct ckpt_reg *reg;

	mutex_lock(&reg_lock);
	reg = find_locked(file, NULL);
	if (reg && reg->tgid == task_tgid(current))
		kref_get(&reg->ref);
	else
		reg = NULL;
	mutex_unlock(&reg_lock);
	return reg;
}

long ckpt_ioctl_register(struct file *file, struct ckpt_register __user *uarg)
{
	struct ckpt_register a;
	struct ckpt_reg *reg;
	char *source = NULL;
	long ret;

	if (copy_from_user(&a, uarg, sizeof(a)))
		return -EFAULT;
	if (a.flags & ~__CKPT_REGISTER_F_ALL || a.reserved[0] || a.reserved[1] ||
	    a.source_len >= CKPT_SOURCE_MAX ||
	    (!(a.flags & CKPT_REGISTER_RESTARTED) && (a.source || a.source_len)))
		return -EINVAL;
	if (a.source_len) {
		source = memdup_user_nul(u64_to_user_ptr(a.source), a.source_len);
		if (IS_ERR(source))
			return PTR_ERR(source);
	}
	reg = kzalloc(sizeof(*reg), GFP_KERNEL);
	if (!reg) {
		kfree(source);
		return -ENOMEM;
	}
	kref_init(&reg->ref);
	init_waitqueue_head(&reg->wq);
	reg->file = file;
	reg->tgid = get_pid(task_tgid(current));
	reg->verdict = -1;
	reg->restarted = a.flags & CKPT_REGISTER_RESTARTED;
	reg->source = source;

	mutex_lock(&reg_lock);
	if (find_locked(file, reg->tgid)) {
		ret = -EBUSY;
	} else {
		list_add(&reg->node, &reg_list);
		ret = 0;
	}
	mutex_unlock(&reg_lock);
	if (ret)
		ckpt_cb_put(reg);
	return ret;
}

long ckpt_ioctl_cb_wait(struct file *file, struct ckpt_cb_request __user *uarg)
{
	struct ckpt_cb_request a;
	struct ckpt_reg *reg;
	long ret;

	if (copy_from_user(&a, uarg, sizeof(a)))
		return -EFAULT;
	if (memchr_inv(a.reserved, 0, sizeof(a.reserved)))
		return -EINVAL;
	reg = get_own(file);
	if (!reg)
		return -ENOENT;

	ret = wait_event_interruptible(reg->wq, READ_ONCE(reg->dead) ||
				       (READ_ONCE(reg->req_id) &&
					!READ_ONCE(reg->req_taken)));
	if (!ret) {
		mutex_lock(&reg_lock);
		if (reg->dead) {
			ret = -ENOENT;
		} else if (!reg->req_id || reg->req_taken) {
			ret = -EAGAIN;	/* cancelled meanwhile */
		} else {
			reg->req_taken = true;
			a.id = reg->req_id;
			a.flags = reg->req_flags;
			a.timeout_ms = reg->req_timeout_ms;
		}
		mutex_unlock(&reg_lock);
	}
	ckpt_cb_put(reg);
	if (!ret && copy_to_user(uarg, &a, sizeof(a)))
		ret = -EFAULT;
	return ret;
}

/* Best effort, truncated: the restart must be reported whatever happens. */
static void put_source(struct ckpt_reg *reg, struct ckpt_cb_ready *a)
{
	const char *s = reg->source ?: "";
	size_t n = min_t(size_t, strlen(s), a->source_len - 1);
	char __user *u = u64_to_user_ptr(a->source);

	if (!a->source || !a->source_len)
		return;
	if (copy_to_user(u, s, n) || put_user('\0', u + n))
		return;
}

long ckpt_ioctl_cb_ready(struct file *file, struct ckpt_cb_ready __user *uarg)
{
	struct ckpt_cb_ready a;
	struct ckpt_reg *reg;
	char *msg = NULL;
	long ret;

	if (copy_from_user(&a, uarg, sizeof(a)))
		return -EFAULT;
	if (memchr_inv(a.reserved, 0, sizeof(a.reserved)))
		return -EINVAL;
	if (a.verdict < CKPT_CB_GO || a.verdict > CKPT_CB_PROBE ||
	    a.msg_len >= 256)
		return -EINVAL;
	if (a.msg && a.msg_len) {
		msg = memdup_user_nul(u64_to_user_ptr(a.msg), a.msg_len);
		if (IS_ERR(msg))
			return PTR_ERR(msg);
	}
	reg = get_own(file);
	if (!reg) {
		kfree(msg);
		return -ENOENT;
	}

	mutex_lock(&reg_lock);
	if (reg->restarted) {
		/* The call a restored callback thread restarts. */
		reg->restarted = false;
		mutex_unlock(&reg_lock);
		put_source(reg, &a);
		ret = 1;
		goto out;
	}
	if (a.id != reg->req_id) {
		ret = a.id && a.id == reg->done_id ? reg->done_result : -ESRCH;
		mutex_unlock(&reg_lock);
		goto out;
	}
	if (a.verdict == CKPT_CB_PROBE) {
		ret = reg->verdict < 0 ? 0 : -EALREADY;
		mutex_unlock(&reg_lock);
		goto out;
	}
	if (reg->verdict < 0) {
		reg->verdict = a.verdict;
		swap(reg->msg, msg);
	}
	mutex_unlock(&reg_lock);
	wake_up_all(&reg->wq);

	if (a.verdict == CKPT_CB_ABORT_TEMP) {
		ret = -EAGAIN;
		goto out;
	}
	if (a.verdict == CKPT_CB_ABORT_PERM) {
		ret = -ECANCELED;
		goto out;
	}
	/* Parked here during the capture; the call restarts after the thaw. */
	ret = wait_event_interruptible(reg->wq, READ_ONCE(reg->dead) ||
				       READ_ONCE(reg->req_id) != a.id);
	if (!ret) {
		mutex_lock(&reg_lock);
		ret = reg->done_id == a.id ? reg->done_result : -ESRCH;
		mutex_unlock(&reg_lock);
	}
out:
	kfree(msg);
	ckpt_cb_put(reg);
	return ret;
}

/* Ends request @id with @result and wakes its callback thread. */
static void finish_locked(struct ckpt_reg *reg, u64 id, int result)
{
	if (!id || reg->req_id != id)
		return;
	reg->req_id = 0;
	reg->req_taken = false;
	reg->verdict = -1;
	reg->done_id = id;
	reg->done_result = result;
}

void ckpt_cb_complete(struct ckpt_reg *reg, u64 id, int result)
{
	/* The callback thread has no signal to restart for. */
	if (result == -ERESTARTSYS || result == -ERESTARTNOINTR ||
	    result == -ERESTARTNOHAND || result == -ERESTART_RESTARTBLOCK)
		result = -EINTR;
	mutex_lock(&reg_lock);
	finish_locked(reg, id, result);
	mutex_unlock(&reg_lock);
	wake_up_all(&reg->wq);
}

int ckpt_cb_request(struct ckpt_reg *reg, u32 flags, unsigned int timeout_ms,
		    u64 *idp, struct ckpt_why *why)
{
	pid_t pid = pid_vnr(reg->tgid);
	long left;
	u64 id;
	int ret;

	mutex_lock(&reg_lock);
	if (reg->dead) {
		mutex_unlock(&reg_lock);
		return 0;	/* unregistered meanwhile: no callbacks */
	}
	if (reg->req_id) {
		mutex_unlock(&reg_lock);
		ckpt_whyf(why,
			  "a checkpoint of pid %d is already in progress", pid);
		return -EBUSY;
	}
	id = ++next_req_id;
	reg->req_id = id;
	reg->req_flags = flags;
	reg->req_timeout_ms = timeout_ms;
	reg->req_taken = false;
	reg->verdict = -1;
	mutex_unlock(&reg_lock);
	wake_up_all(&reg->wq);

	left = wait_event_interruptible_timeout(reg->wq,
			READ_ONCE(reg->dead) || READ_ONCE(reg->verdict) >= 0,
			msecs_to_jiffies(timeout_ms));

	mutex_lock(&reg_lock);
	if (reg->dead) {
		ret = -ESRCH;
		ckpt_whyf(why,
			  "pid %d ended its callback registration during the callbacks",
			  pid);
	} else if (reg->verdict == CKPT_CB_GO) {
		*idp = id;
		mutex_unlock(&reg_lock);
		return 0;
	} else if (reg->verdict == CKPT_CB_ABORT_TEMP) {
		ret = -EAGAIN;
		ckpt_whyf(why,
			  "pid %d aborted the checkpoint for now: %s", pid,
			  reg->msg ?: "a callback asked to try again later");
	} else if (reg->verdict == CKPT_CB_ABORT_PERM) {
		ret = -ECANCELED;
		ckpt_whyf(why, "pid %d refused the checkpoint: %s",
			  pid, reg->msg ?: "a callback refused it");
	} else if (left < 0) {
		ret = -EINTR;
		ckpt_whyf(why,
			  "interrupted while pid %d ran its callbacks", pid);
	} else {
		ret = -ETIMEDOUT;
		ckpt_whyf(why,
			  "the callbacks of pid %d did not finish within %u ms",
			  pid, timeout_ms);
	}
	finish_locked(reg, id, ret);
	mutex_unlock(&reg_lock);
	wake_up_all(&reg->wq);
	return ret;
}
