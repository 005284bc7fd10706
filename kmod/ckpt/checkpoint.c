// SPDX-License-Identifier: GPL-2.0
/*
 * CKPT_IOC_CHECKPOINT: capture a process into an image.
 *
 * Order: find the process and check the caller's rights; freeze every
 * thread at a safe point (each captures its own registers); check that
 * everything the process holds can be restored, and fail naming what cannot
 * before writing anything; write the image; then let the process continue,
 * stop or die. A failure at any point thaws the process untouched.
 *
 * A process that continues is frozen only while its state is copied: its
 * pages go to kernel memory (mm.c, "Staging") and reach the image after the
 * thaw; a failure then leaves the process running and the image incomplete
 * (the caller discards it). One that stops or dies stays frozen until its
 * image is complete, so that a failed write leaves it running.
 */

#include <linux/cred.h>
#include <linux/file.h>
#include <linux/fs_struct.h>
#include <linux/jiffies.h>
#include <linux/kdev_t.h>
#include <linux/ktime.h>
#include <linux/pid.h>
#include <linux/sched/coredump.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/utsname.h>

#include <uapi/linux/ckpt_image.h>

#include "access.h"
#include "callback.h"
#include "checkpoint.h"
#include "creds.h"
#include "exe.h"
#include "fds.h"
#include "fileobj.h"
#include "freeze.h"
#include "image.h"
#include "mm.h"
#include "signals.h"
#include "timers.h"
#include "why.h"

#define CKPT_DEFAULT_TIMEOUT_MS	10000

/*
 * The rights of ptrace-attaching, asked of the kernel (access.c), before
 * anything is frozen or asked of the process. A process cannot checkpoint
 * itself this way: its own threads would have to park.
 */
static int may_checkpoint(struct task_struct *task, struct file **pagemap,
			  struct ckpt_why *why)
{
	if (same_thread_group(task, current)) {
		why->msg = "a process cannot checkpoint itself this way";
		return -EDEADLK;
	}
	return ckpt_access_check(task, pagemap, why);
}

/*
 * Other processes are not in the image: a restarted parent would find its
 * children gone (wait() failing, exit statuses lost) and a tracer its
 * tracees. So a process with a child, live or zombie, or a tracee is
 * refused, named. The one exception is the checkpointer itself: libckpt's
 * helper for a self-requested checkpoint is a child of the process. Runs
 * while frozen, so the process makes no new child meanwhile.
 */
static int check_relatives(struct task_struct *task, struct ckpt_why *why)
{
	const char *kind = NULL;
	struct task_struct *p;
	pid_t other = 0;

	rcu_read_lock();
	for_each_process(p) {
		if (same_thread_group(p, current))
			continue;
		if (same_thread_group(rcu_dereference(p->real_parent), task))
			kind = "has a child process";
		else if (same_thread_group(rcu_dereference(p->parent), task))
			kind = "traces process";
		if (kind) {
			other = task_pid_vnr(p);
			break;
		}
	}
	rcu_read_unlock();
	if (!kind)
		return 0;
	ckpt_whyf(why,
		  "pid %d %s %d: process trees are not supported yet",
		  task_tgid_vnr(task), kind, other);
	return -EBUSY;
}

/*
 * The working and root directories by path (from the checkpointer's root,
 * as every path of the image) and identity. The root must lie under the
 * checkpointer's: from anywhere else (another mount namespace, a root the
 * checkpointer is itself confined below) no path names it.
 */
static int capture_fs(struct task_struct *task, struct ckpt_img_fs *fs,
		      struct ckpt_why *why)
{
	struct path pwd, root, myroot;
	struct kstat st;
	char *p;
	int ret;

	task_lock(task);
	if (!task->fs) {
		task_unlock(task);
		why->msg = "the process has no file system context (exiting)";
		return -ESRCH;
	}
	get_fs_pwd(task->fs, &pwd);
	get_fs_root(task->fs, &root);
	task_unlock(task);
	get_fs_root(current->fs, &myroot);

	ret = -EOPNOTSUPP;
	if (!path_is_under(&root, &myroot)) {
		ckpt_whyf(why,
			  "the root directory of pid %d is outside the checkpointer's",
			  task_tgid_vnr(task));
		goto out;
	}
	if (path_equal(&root, &myroot)) {
		strscpy(fs->root, "/", sizeof(fs->root));
	} else {
		p = d_path(&root, fs->root, sizeof(fs->root));
		if (IS_ERR(p) || *p != '/' || d_unlinked(root.dentry)) {
			ckpt_whyf(why,
				  "the root directory of pid %d was removed or is unreachable",
				  task_tgid_vnr(task));
			goto out;
		}
		memmove(fs->root, p, strlen(p) + 1);
	}
	ret = vfs_getattr(&root, &st, STATX_INO, AT_STATX_SYNC_AS_STAT);
	if (ret) {
		why->msg = "cannot read the identity of the root directory";
		goto out;
	}
	fs->root_dev = new_encode_dev(st.dev);
	fs->root_ino = st.ino;

	ret = -EOPNOTSUPP;
	p = d_path(&pwd, fs->cwd, sizeof(fs->cwd));
	if (IS_ERR(p) || *p != '/' || strstr(p, " (deleted)")) {
		ckpt_whyf(why,
			  "the working directory of pid %d was removed or is unreachable",
			  task_tgid_vnr(task));
		goto out;
	}
	memmove(fs->cwd, p, strlen(p) + 1);
	ret = vfs_getattr(&pwd, &st, STATX_INO, AT_STATX_SYNC_AS_STAT);
	if (ret) {
		why->msg = "cannot read the identity of the working directory";
		goto out;
	}
	fs->cwd_dev = new_encode_dev(st.dev);
	fs->cwd_ino = st.ino;
out:
	path_put(&myroot);
	path_put(&root);
	path_put(&pwd);
	return ret;
}

/* -ESRCH once the process was released (killed and reaped while parked). */
static int capture_process(struct task_struct *task,
			   struct ckpt_img_process *proc)
{
	struct sighand_struct *sighand;
	struct k_sigaction *k;
	const struct cred *cred;
	unsigned long flags;
	int i;

	proc->pid = task_tgid_vnr(task);
	rcu_read_lock();
	proc->ppid = task_tgid_vnr(rcu_dereference(task->real_parent));
	cred = __task_cred(task);
	proc->uid = from_kuid_munged(current_user_ns(), cred->uid);
	proc->euid = from_kuid_munged(current_user_ns(), cred->euid);
	proc->gid = from_kgid_munged(current_user_ns(), cred->gid);
	proc->egid = from_kgid_munged(current_user_ns(), cred->egid);
	rcu_read_unlock();

	proc->personality = task->personality;
	proc->exit_signal = task->exit_signal;
	__get_task_comm(proc->comm, sizeof(proc->comm), task);

	task_lock(task);
	proc->umask = task->fs ? task->fs->umask : 0022;
	BUILD_BUG_ON(RLIM_NLIMITS > CKPT_IMG_NRLIMITS);
	for (i = 0; i < RLIM_NLIMITS; i++) {
		proc->rlimit[i].cur = task->signal->rlim[i].rlim_cur;
		proc->rlimit[i].max = task->signal->rlim[i].rlim_max;
	}
	task_unlock(task);

	sighand = ckpt_lock_sighand(task, &flags);
	if (!sighand)
		return -ESRCH;
	for (i = 0; i < CKPT_IMG_NSIG && i < _NSIG; i++) {
		k = &sighand->action[i];
		proc->sigaction[i].handler = (unsigned long)k->sa.sa_handler;
		proc->sigaction[i].flags = k->sa.sa_flags;
		proc->sigaction[i].restorer = (unsigned long)k->sa.sa_restorer;
		proc->sigaction[i].mask = k->sa.sa_mask.sig[0];
	}
	ckpt_unlock_sighand(sighand, &flags);
	return 0;
}

/* Everything but the staged pages and END, while the process is frozen. */
static int write_image(struct task_struct *task, struct ckpt_freeze *fz,
		       struct ckpt_img_process *proc, struct ckpt_mm_capture *mc,
		       struct ckpt_fds *scan, const struct ckpt_img_fs *fs,
		       const struct ckpt_img_signals *sigs, size_t sigs_len,
		       const struct ckpt_timers *timers,
		       const struct ckpt_img_creds *creds, size_t creds_len,
		       struct ckpt_writer *w, u32 *nr_threads,
		       struct ckpt_stage *stage)
{
	struct ckpt_img_header hdr = {
		.magic = CKPT_IMG_MAGIC,
		.version = CKPT_IMG_VERSION,
		.arch = CKPT_IMG_ARCH_X86_64,
		.page_size = PAGE_SIZE,
		.nr_vmas = mc->nr_vmas,
		.xstate_size = fz->xstate_size,
		.created_ns = ktime_get_real_ns(),
	};
	unsigned int i;
	int ret;

	for (i = 0; i < fz->nr; i++) {
		if (fz->threads[i].exited)
			continue;
		hdr.nr_threads++;
		hdr.xfeatures |= ckpt_xstate_bv(fz->threads[i].ts.xstate);
	}
	strscpy(hdr.kernel, utsname()->release, sizeof(hdr.kernel));
	BUILD_BUG_ON(sizeof(hdr.boot_id) != sizeof(ckpt_boot_id));
	memcpy(hdr.boot_id, ckpt_boot_id, sizeof(hdr.boot_id));

	ret = ckpt_write_sect(w, CKPT_SECT_HEADER, &hdr, sizeof(hdr), NULL, 0);
	if (!ret)
		ret = ckpt_write_sect(w, CKPT_SECT_PROCESS, proc, sizeof(*proc),
				      NULL, 0);
	for (i = 0; !ret && i < fz->nr; i++) {
		struct ckpt_parked *p = &fz->threads[i];

		if (p->exited)
			continue;
		p->ts.img.tid = task_pid_vnr(p->task);
		ret = ckpt_write_sect(w, CKPT_SECT_THREAD, &p->ts.img,
				      sizeof(p->ts.img), p->ts.xstate,
				      fz->xstate_size);
	}
	if (!ret)
		ret = ckpt_write_sect(w, CKPT_SECT_CREDS, creds, creds_len, NULL,
				      0);
	/* FILEOBJ first: FILES entries and FILEDATA name its entries. */
	if (!ret && scan->objs.nr)
		ret = ckpt_write_sect(w, CKPT_SECT_FILEOBJ, scan->objs.img,
				      scan->objs.nr * sizeof(*scan->objs.img),
				      NULL, 0);
	if (!ret && scan->nr)
		ret = ckpt_write_sect(w, CKPT_SECT_FILES, scan->files,
				      scan->nr * sizeof(*scan->files), NULL, 0);
	if (!ret)
		ret = ckpt_fileobjs_write(&scan->objs, w);
	for (i = 0; !ret && i < scan->nr_pipes; i++)
		ret = ckpt_write_sect(w, CKPT_SECT_PIPE, scan->pipes[i],
				      scan->pipe_len[i], NULL, 0);
	if (!ret && scan->nr_timerfds)
		ret = ckpt_write_sect(w, CKPT_SECT_TIMERFD, scan->timerfds,
				      scan->nr_timerfds * sizeof(*scan->timerfds),
				      NULL, 0);
	if (!ret && scan->nr_epitems)
		ret = ckpt_write_sect(w, CKPT_SECT_EPOLL, scan->epitems,
				      scan->nr_epitems * sizeof(*scan->epitems),
				      NULL, 0);
	if (!ret)
		ret = ckpt_write_sect(w, CKPT_SECT_FS, fs, sizeof(*fs), NULL, 0);
	if (!ret)
		ret = ckpt_write_sect(w, CKPT_SECT_SIGNALS, sigs, sigs_len, NULL, 0);
	if (!ret && timers->img)
		ret = ckpt_write_sect(w, CKPT_SECT_TIMERS, timers->img,
				      timers->len, NULL, 0);
	if (!ret)
		ret = ckpt_write_sect(w, CKPT_SECT_VDSO, mc->vdso,
				      sizeof(*mc->vdso) + proc->vdso_size, NULL, 0);
	if (!ret)
		ret = ckpt_write_sect(w, CKPT_SECT_VMAS, mc->vmas,
				      mc->nr_vmas * sizeof(*mc->vmas), NULL, 0);
	if (!ret)
		ret = ckpt_mm_write_pages(task, mc, w, stage);
	*nr_threads = hdr.nr_threads;
	return ret;
}

/* The pages staged while the process was frozen, then END. */
static int finish_image(struct ckpt_mm_capture *mc, struct ckpt_stage *stage,
			struct ckpt_writer *w)
{
	struct ckpt_img_end end = {};
	int ret;

	ret = ckpt_mm_write_staged(mc, stage, w);
	if (ret)
		return ret;
	end.nr_sections = w->nr_sections;
	end.nr_pages = mc->nr_stored;
	return ckpt_write_sect(w, CKPT_SECT_END, &end, sizeof(end), NULL, 0);
}

/* Whether @task still runs in @mm: it neither exec'ed nor exited. */
static bool runs_in(struct task_struct *task, struct mm_struct *mm)
{
	bool ret;

	task_lock(task);
	ret = task->mm == mm;
	task_unlock(task);
	return ret;
}

static int do_checkpoint(struct ckpt_checkpoint *a, struct ckpt_why *why)
{
	struct ckpt_img_process *proc = NULL;
	struct ckpt_img_fs *fs = NULL;
	struct ckpt_img_signals *sigs = NULL;
	struct ckpt_img_creds *creds = NULL;
	size_t creds_len = 0;
	struct ckpt_timers timers = {};
	struct task_struct **tasks = NULL;
	struct ckpt_mm_capture mc = {};
	size_t sigs_len = 0;
	struct ckpt_fds scan = {};
	struct ckpt_freeze *fz = NULL;
	struct ckpt_writer w = {};
	struct ckpt_reg *reg = NULL;
	struct task_struct *task;
	struct file *pagemap = NULL;
	struct mm_struct *mm;
	unsigned int timeout = a->timeout_ms ?: CKPT_DEFAULT_TIMEOUT_MS;
	unsigned long deadline = jiffies + msecs_to_jiffies(timeout);
	u64 t0 = ktime_get_ns(), t1, req = 0;
	/* Only a process that runs on has a reason to wait less. */
	bool stage = !(a->flags & (CKPT_CHECKPOINT_KILL | CKPT_CHECKPOINT_STOP));
	struct ckpt_stage st = {};
	struct pid *pid;
	unsigned int i;
	int ret;

	pid = find_get_pid(a->pid);
	task = get_pid_task(pid, PIDTYPE_TGID);
	put_pid(pid);
	if (!task) {
		ckpt_whyf(why, "no process with pid %u", a->pid);
		return -ESRCH;
	}
	/*
	 * The memory first: the rights are checked against the program that
	 * runs in it, and one exec'ed since is found once frozen.
	 */
	mm = get_task_mm(task);
	if (!mm) {
		ckpt_whyf(why,
			  "pid %u has no memory (kernel thread or exiting)",
			  a->pid);
		ret = -ESRCH;
		goto out_put_task;
	}
	ret = may_checkpoint(task, &pagemap, why);
	if (ret)
		goto out_put_mm;
	if (task->ptrace) {
		why->msg = "the process is being traced";
		ret = -EBUSY;
		goto out_put_mm;
	}
	proc = kvzalloc(sizeof(*proc), GFP_KERNEL);
	fs = kvzalloc(sizeof(*fs), GFP_KERNEL);
	if (!proc || !fs) {
		ret = -ENOMEM;
		goto out_free;
	}
	ret = ckpt_writer_init(&w, a->fd);
	if (ret) {
		why->msg = ret == -EBADF ?
			   "the image descriptor is not open for writing" :
			   "cannot compute image MACs (hmac(sha256))";
		goto out_free;
	}

	/* libckpt's thread-context callbacks run before anything is frozen. */
	reg = ckpt_cb_find(task);
	if (reg) {
		ret = ckpt_cb_request(reg, a->flags, timeout, &req, why);
		if (ret)
			goto out_writer;
	}
	if (stage) {
		ret = ckpt_stage_prepare(&st, mm);
		if (ret)
			goto out_writer;
	}
	/* The callbacks and the freeze share the timeout. */
	if (!time_before(jiffies, deadline)) {
		ckpt_whyf(why,
			  "the timeout (%u ms) passed before pid %u could be frozen",
			  timeout, a->pid);
		ret = -ETIMEDOUT;
		goto out_writer;
	}
	ret = ckpt_freeze(task, jiffies_to_msecs(deadline - jiffies), &fz, why);
	if (ret)
		goto out_writer;
	t1 = ktime_get_ns();

	/* The program whose rights were checked, not one exec'ed since. */
	if (!runs_in(task, mm)) {
		ret = -EAGAIN;
		ckpt_whyf(why,
			  "pid %d executed a program or exited during the checkpoint",
			  task_tgid_vnr(task));
		goto out_thaw;
	}

	for (i = 0; i < fz->nr; i++) {
		struct ckpt_parked *p = &fz->threads[i];

		if (p->exited || !p->ts.err)
			continue;
		ret = p->ts.err;
		ckpt_whyf(why, "thread %d: %s", task_pid_vnr(p->task),
			  p->ts.why ?: "cannot capture its registers");
		goto out_thaw;
	}
	ret = ckpt_fds_capture(task, &scan, reg, why);
	if (!ret)
		ret = capture_fs(task, fs, why);
	if (!ret)
		ret = ckpt_exe_capture(mm, proc, task_tgid_vnr(task), why);
	if (ret)
		goto out_thaw;
	tasks = kcalloc(fz->nr, sizeof(*tasks), GFP_KERNEL);
	if (!tasks) {
		ret = -ENOMEM;
		goto out_thaw;
	}
	for (i = 0; i < fz->nr; i++)
		tasks[i] = fz->threads[i].exited ? NULL : fz->threads[i].task;
	/* Timers first: their pending signals are saved as they were. */
	ret = ckpt_capture_timers(task, tasks, fz->nr, &timers, why);
	if (ret == -ESRCH)
		goto out_exited;
	if (ret)
		goto out_thaw;
	ret = ckpt_capture_signals(task, tasks, fz->nr, &timers, &sigs,
				   &sigs_len, why);
	if (ret == -ESRCH)
		goto out_exited;
	if (ret)
		goto out_thaw;
	ret = ckpt_mm_capture(task, mm, pagemap, &mc, proc, &scan.objs, why);
	if (ret)
		goto out_thaw;
	ret = ckpt_fileobjs_capture(&scan.objs, task_tgid_vnr(task), why);
	/* After the files: one shared with a child is named as such. */
	if (!ret)
		ret = check_relatives(task, why);
	if (!ret)
		ret = ckpt_creds_capture(task, tasks, fz->nr, mm, &creds,
					 &creds_len, why);
	if (ret)
		goto out_thaw;
	ret = capture_process(task, proc);
	if (ret)
		goto out_exited;

	ret = write_image(task, fz, proc, &mc, &scan, fs, sigs, sigs_len,
			  &timers, creds, creds_len, &w, &a->nr_threads,
			  stage ? &st : NULL);
	if (!ret && !stage)
		ret = finish_image(&mc, &st, &w);
	if (ret) {
		/* Its pages are read through the task, which may be gone. */
		if (ret == -EIO && !runs_in(task, mm)) {
			ckpt_whyf(why,
				  "pid %u exited or executed a program during the checkpoint",
				  a->pid);
			ret = -ESRCH;
			goto out_thaw;
		}
		if (!why->msg)
			why->msg = "writing the image failed";
		goto out_thaw;
	}

	if (a->flags & CKPT_CHECKPOINT_KILL)
		send_sig_info(SIGKILL, SEND_SIG_PRIV, task);
	else if (a->flags & CKPT_CHECKPOINT_STOP)
		send_sig_info(SIGSTOP, SEND_SIG_PRIV, task);
	goto out_thaw;

out_exited:
	/* Killed and reaped while parked: the task has no pid of its own now. */
	ckpt_whyf(why, "pid %u exited during the checkpoint", a->pid);
	ret = -ESRCH;
out_thaw:
	/*
	 * Before the thaw when the image is complete (or failed): the callback
	 * thread's restarted call then sees the outcome. A staged image is
	 * completed after the thaw, and the callback thread waits for that.
	 */
	if (reg && !(stage && !ret))
		ckpt_cb_complete(reg, req, ret);
	ckpt_thaw(fz);
	a->frozen_ns = ktime_get_ns() - t1;
	if (stage && !ret) {
		ret = finish_image(&mc, &st, &w);
		if (ret)
			why->msg = "writing the image failed (the process runs on)";
		if (reg)
			ckpt_cb_complete(reg, req, ret);
	}
	if (!ret) {
		a->image_bytes = w.bytes;
		a->nr_pages = mc.nr_stored;
	}
out_writer:
	if (reg && ret && !fz)
		ckpt_cb_complete(reg, req, ret);
	ckpt_cb_put(reg);
	ckpt_writer_done(&w);
out_free:
	ckpt_fds_free(&scan);
	ckpt_mm_capture_free(&mc);
	ckpt_stage_free(&st);
	kvfree(proc);
	kvfree(fs);
	kvfree(sigs);
	kvfree(creds);
	ckpt_timers_free(&timers);
	kfree(tasks);
out_put_mm:
	if (pagemap)
		fput(pagemap);
	mmput(mm);
out_put_task:
	put_task_struct(task);
	a->total_ns = ktime_get_ns() - t0;
	return ret;
}

long ckpt_ioctl_checkpoint(struct ckpt_checkpoint __user *uarg)
{
	struct ckpt_checkpoint a;
	struct ckpt_why *why;
	long ret;
	int i;

	if (copy_from_user(&a, uarg, sizeof(a)))
		return -EFAULT;
	if (a.flags & ~__CKPT_CHECKPOINT_F_ALL ||
	    (a.flags & CKPT_CHECKPOINT_STOP && a.flags & CKPT_CHECKPOINT_KILL)) {
		ckpt_put_errmsg(a.errmsg, a.errmsg_len, "unknown or conflicting flags");
		return -EINVAL;
	}
	for (i = 0; i < ARRAY_SIZE(a.reserved); i++) {
		if (a.reserved[i]) {
			ckpt_put_errmsg(a.errmsg, a.errmsg_len, "reserved fields must be 0");
			return -EINVAL;
		}
	}
	if (a.timeout_ms > CKPT_TIMEOUT_MAX_MS) {
		ckpt_put_errmsg(a.errmsg, a.errmsg_len,
				"timeout_ms is above CKPT_TIMEOUT_MAX_MS (10 minutes)");
		return -EINVAL;
	}

	why = kzalloc(sizeof(*why), GFP_KERNEL);
	if (!why)
		return -ENOMEM;
	ret = do_checkpoint(&a, why);
	if (ret)
		ckpt_put_errmsg(a.errmsg, a.errmsg_len, why->msg);
	kfree(why);
	if (!ret && copy_to_user(uarg, &a, sizeof(a)))
		ret = -EFAULT;
	return ret;
}
