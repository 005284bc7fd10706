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
#include <linux/eventfd.h>
#include <linux/file.h>
#include <linux/fs_struct.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/kdev_t.h>
#include <linux/ktime.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
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
#include "locks.h"
#include "mm.h"
#include "signals.h"
#include "pty.h"
#include "tcp.h"
#include "timers.h"
#include "tree.h"
#include "tree_files.h"
#include "usock.h"
#include "why.h"

#define CKPT_DEFAULT_TIMEOUT_MS	10000


/*
 * The rights of ptrace-attaching, asked of the kernel (access.c), before
 * anything is frozen or asked of the process. A process cannot checkpoint
 * itself this way: its own threads would have to park.
 */
static int may_checkpoint(struct ckpt_cp_ctx *ctx)
{
	if (same_thread_group(ctx->task, current)) {
		ctx->why.msg = "a process cannot checkpoint itself this way";
		return -EDEADLK;
	}
	return ckpt_access_check(ctx->task, &ctx->pagemap, &ctx->why);
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
 * checkpointer's: from anywhere else (another mount namespace's tree, a
 * root the checkpointer is itself confined below) no path names it. In a
 * copy of the checkpointer's mount namespace (ckpt_mount_view(): a
 * restarted tree's /proc of its own needs one) d_path() names it, and
 * every path of the task, from that namespace's top, the checkpointer's
 * root directory: the same names but for what is mounted in one only.
 */
static int capture_fs(struct task_struct *task, struct ckpt_img_fs *fs,
		      struct ckpt_why *why)
{
	struct path pwd, root, myroot, top;
	struct kstat st;
	char *p;
	int ret, view;

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
	view = ckpt_mount_view(task, &root, &top);
	if (!view)
		path_put(&top);
	if (view == -EOPNOTSUPP) {
		ckpt_whyf(why,
			  "the root directory of pid %d is outside the checkpointer's: in another mount namespace, whose root directory, /tmp, /var/tmp or /dev/shm is not the checkpointer's",
			  task_tgid_vnr(task));
		goto out;
	}
	if (view && !path_is_under(&root, &myroot)) {
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
	/* Named in its namespace: the same directory in the checkpointer's. */
	if (!view && !ckpt_names_dir(fs->root, &root)) {
		ckpt_whyf(why,
			  "the root directory of pid %d, %s in its mount namespace, is another directory in the checkpointer's",
			  task_tgid_vnr(task), fs->root);
		goto out;
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
			   struct pid_namespace *ns,
			   struct ckpt_img_process *proc)
{
	struct sighand_struct *sighand;
	struct k_sigaction *k;
	const struct cred *cred;
	unsigned long flags;
	int i;

	proc->pid = task_tgid_nr_ns(task, ns);
	rcu_read_lock();
	proc->ppid = task_tgid_nr_ns(rcu_dereference(task->real_parent), ns);
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
/* SCHED: the live threads' entries, in the order of their THREADs. */
static int write_sched(struct ckpt_cp_ctx *ctx, u32 nr)
{
	struct ckpt_freeze *fz = ctx->fz;
	struct ckpt_img_sched *s;
	unsigned int i, n = 0;
	int ret;

	s = kvcalloc(nr, sizeof(*s), GFP_KERNEL);
	if (!s)
		return -ENOMEM;
	for (i = 0; i < fz->nr && n < nr; i++)
		if (!fz->threads[i].exited)
			s[n++] = fz->threads[i].ts.sched;
	ret = ckpt_write_sect(&ctx->w, CKPT_SECT_SCHED, s, nr * sizeof(*s),
			      NULL, 0);
	kvfree(s);
	return ret;
}

/* HEADER, PROCESS, a THREAD section per live thread, and SCHED. */
static int write_threads(struct ckpt_cp_ctx *ctx)
{
	struct ckpt_freeze *fz = ctx->fz;
	struct ckpt_img_header hdr = {
		.magic = CKPT_IMG_MAGIC,
		.version = CKPT_IMG_VERSION,
		.arch = CKPT_IMG_ARCH_X86_64,
		.page_size = PAGE_SIZE,
		.nr_vmas = ctx->mc.nr_vmas,
		.xstate_size = fz->xstate_size,
		.created_ns = ktime_get_real_ns(),
	};
	struct ckpt_writer *w = &ctx->w;
	unsigned int i;
	int ret;

	for (i = 0; i < fz->nr; i++) {
		if (fz->threads[i].exited)
			continue;
		hdr.nr_threads++;
		hdr.xfeatures |= ckpt_xstate_bv(fz->threads[i].ts.xstate);
	}
	ctx->a->nr_threads = hdr.nr_threads;
	strscpy(hdr.kernel, utsname()->release, sizeof(hdr.kernel));
	BUILD_BUG_ON(sizeof(hdr.boot_id) != sizeof(ckpt_boot_id));
	memcpy(hdr.boot_id, ckpt_boot_id, sizeof(hdr.boot_id));

	ret = ckpt_write_sect(w, CKPT_SECT_HEADER, &hdr, sizeof(hdr), NULL, 0);
	if (!ret)
		ret = ckpt_write_sect(w, CKPT_SECT_PROCESS, ctx->proc,
				      sizeof(*ctx->proc), NULL, 0);
	if (!ret && ctx->in_tree)
		ret = ckpt_write_sect(w, CKPT_SECT_TREE, &ctx->tree,
				      sizeof(ctx->tree), NULL, 0);
	for (i = 0; !ret && i < fz->nr; i++) {
		struct ckpt_parked *p = &fz->threads[i];

		if (p->exited)
			continue;
		p->ts.img.tid = task_pid_nr_ns(p->task, ctx->ns);
		ret = ckpt_write_sect(w, CKPT_SECT_THREAD, &p->ts.img,
				      sizeof(p->ts.img), p->ts.xstate,
				      fz->xstate_size);
	}
	return ret ?: write_sched(ctx, hdr.nr_threads);
}

/* What the descriptor scan found (fds.c). */
static int write_files(struct ckpt_writer *w, struct ckpt_fds *scan,
		       struct ckpt_why *why)
{
	unsigned int i;
	int ret = 0;

	/* FILEOBJ first: FILES entries and FILEDATA name its entries. */
	if (scan->objs.nr)
		ret = ckpt_write_sect(w, CKPT_SECT_FILEOBJ, scan->objs.img,
				      scan->objs.nr * sizeof(*scan->objs.img),
				      NULL, 0);
	if (!ret && scan->nr)
		ret = ckpt_write_sect(w, CKPT_SECT_FILES, scan->files,
				      scan->nr * sizeof(*scan->files), NULL, 0);
	if (!ret)
		ret = ckpt_fileobjs_write(&scan->objs, w, why);
	for (i = 0; !ret && i < scan->nr_pipes; i++)
		ret = ckpt_write_sect(w, CKPT_SECT_PIPE, scan->pipes[i],
				      scan->pipe_len[i], NULL, 0);
	for (i = 0; !ret && i < scan->nr_usocks; i++)
		ret = ckpt_write_sect(w, CKPT_SECT_USOCK, scan->usocks[i],
				      scan->usock_len[i], NULL, 0);
	for (i = 0; !ret && i < scan->nr_ulistens; i++)
		ret = ckpt_write_sect(w, CKPT_SECT_ULISTEN, &scan->ulistens[i],
				      sizeof(scan->ulistens[i]), NULL, 0);
	for (i = 0; !ret && i < scan->nr_unames; i++)
		ret = ckpt_write_sect(w, CKPT_SECT_UNAME, scan->unames[i],
				      scan->uname_len[i], NULL, 0);
	for (i = 0; !ret && i < scan->nr_upends; i++)
		ret = ckpt_write_sect(w, CKPT_SECT_UPEND, scan->upends[i],
				      scan->upend_len[i], NULL, 0);
	for (i = 0; !ret && i < scan->nr_tcps; i++)
		ret = ckpt_write_sect(w, CKPT_SECT_TCP, scan->tcps[i],
				      scan->tcp_len[i], NULL, 0);
	if (!ret && scan->nr_ptys)
		ret = ckpt_write_sect(w, CKPT_SECT_PTY, scan->ptys,
				      scan->nr_ptys * sizeof(*scan->ptys),
				      NULL, 0);
	if (!ret && scan->nr_timerfds)
		ret = ckpt_write_sect(w, CKPT_SECT_TIMERFD, scan->timerfds,
				      scan->nr_timerfds * sizeof(*scan->timerfds),
				      NULL, 0);
	if (!ret && scan->nr_epitems)
		ret = ckpt_write_sect(w, CKPT_SECT_EPOLL, scan->epitems,
				      scan->nr_epitems * sizeof(*scan->epitems),
				      NULL, 0);
	if (!ret && scan->nr_locks)
		ret = ckpt_write_sect(w, CKPT_SECT_LOCKS, scan->locks,
				      scan->nr_locks * sizeof(*scan->locks),
				      NULL, 0);
	if (!ret && scan->nr_inotify)
		ret = ckpt_write_sect(w, CKPT_SECT_INOTIFY, scan->inotify,
				      scan->nr_inotify * sizeof(*scan->inotify),
				      NULL, 0);
	return ret;
}

/* Everything but the staged pages and END, while the process is frozen. */
static int write_image(struct ckpt_cp_ctx *ctx)
{
	struct ckpt_mm_capture *mc = &ctx->mc;
	struct ckpt_writer *w = &ctx->w;
	u32 i;
	int ret;

	ret = write_threads(ctx);
	if (!ret)
		ret = ckpt_write_sect(w, CKPT_SECT_CREDS, ctx->creds,
				      ctx->creds_len, NULL, 0);
	if (!ret)
		ret = write_files(w, &ctx->scan, &ctx->why);
	if (!ret && ctx->ipc)
		ret = ckpt_ipc_write(ctx->ipc, w);
	for (i = 0; !ret && i < ctx->nr_zombies; i++)
		ret = ckpt_write_sect(w, CKPT_SECT_ZOMBIE, &ctx->zombies[i],
				      sizeof(ctx->zombies[i]), NULL, 0);
	if (!ret)
		ret = ckpt_ipc_write_undo(&ctx->undo, w);
	if (!ret)
		ret = ckpt_write_sect(w, CKPT_SECT_FS, ctx->fs, sizeof(*ctx->fs),
				      NULL, 0);
	if (!ret)
		ret = ckpt_write_sect(w, CKPT_SECT_SIGNALS, ctx->sigs,
				      ctx->sigs_len, NULL, 0);
	if (!ret && ctx->timers.img)
		ret = ckpt_write_sect(w, CKPT_SECT_TIMERS, ctx->timers.img,
				      ctx->timers.len, NULL, 0);
	if (!ret)
		ret = ckpt_write_sect(w, CKPT_SECT_VDSO, mc->vdso,
				      sizeof(*mc->vdso) + ctx->proc->vdso_size,
				      NULL, 0);
	if (!ret)
		ret = ckpt_write_sect(w, CKPT_SECT_VMAS, mc->vmas,
				      mc->nr_vmas * sizeof(*mc->vmas), NULL, 0);
	if (!ret)
		ret = ckpt_mm_write_pages(ctx->task, mc, w,
					  ctx->stage ? &ctx->st : NULL);
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

/* Killed and reaped while parked: the task has no pid of its own now. */
static int reaped(struct ckpt_cp_ctx *ctx)
{
	ckpt_whyf(&ctx->why, "pid %u exited during the checkpoint", ctx->a->pid);
	return -ESRCH;
}

/* The process and the memory it runs in, referenced. */
static int get_target(struct ckpt_cp_ctx *ctx)
{
	struct pid *pid;

	pid = find_get_pid(ctx->a->pid);
	ctx->task = get_pid_task(pid, PIDTYPE_TGID);
	put_pid(pid);
	if (!ctx->task) {
		ckpt_whyf(&ctx->why, "no process with pid %u", ctx->a->pid);
		return -ESRCH;
	}
	/*
	 * The memory first: the rights are checked against the program that
	 * runs in it, and one exec'ed since is found once frozen.
	 */
	ctx->mm = get_task_mm(ctx->task);
	if (ctx->mm)
		return 0;
	if (READ_ONCE(ctx->task->exit_state))
		/* A tree leaves zombies out: its parent's image records them. */
		ckpt_whyf(&ctx->why, "pid %u is a zombie (ended, not reaped)",
			  ctx->a->pid);
	else
		ckpt_whyf(&ctx->why,
			  "pid %u has no memory (kernel thread or exiting)",
			  ctx->a->pid);
	put_task_struct(ctx->task);
	ctx->task = NULL;
	return -ESRCH;
}

static void put_target(struct ckpt_cp_ctx *ctx)
{
	if (ctx->pagemap)
		fput(ctx->pagemap);
	mmput(ctx->mm);
	put_task_struct(ctx->task);
}

/*
 * libckpt's thread-context callbacks, which run before anything is
 * frozen (for a tree: before any member is), within the shared deadline.
 */
static int request_callbacks(struct ckpt_cp_ctx *ctx)
{
	unsigned long left;

	ctx->reg = ckpt_cb_find(ctx->task);
	if (!ctx->reg)
		return 0;
	left = time_before(jiffies, ctx->deadline) ? ctx->deadline - jiffies : 0;
	return ckpt_cb_request(ctx->reg, ctx->a->flags,
			       min(ctx->timeout, jiffies_to_msecs(left)),
			       &ctx->req, &ctx->why);
}

/*
 * The staging memory of a process that runs on: for a tree, every
 * member's before any is frozen, so that no member waits frozen while
 * another's is allocated.
 */
static int prepare_staging(struct ckpt_cp_ctx *ctx)
{
	return ctx->stage ? ckpt_stage_prepare(&ctx->st, ctx->mm) : 0;
}

/*
 * The freeze, within what the callbacks left of the deadline. ctx->fz is
 * set only once the process is frozen.
 */
static int freeze(struct ckpt_cp_ctx *ctx)
{
	int ret;

	/* The callbacks and the freeze share the timeout. */
	if (!time_before(jiffies, ctx->deadline)) {
		ckpt_whyf(&ctx->why,
			  "the timeout (%u ms) passed before pid %u could be frozen",
			  ctx->timeout, ctx->a->pid);
		return -ETIMEDOUT;
	}
	ret = ckpt_freeze(ctx->task, jiffies_to_msecs(ctx->deadline - jiffies),
			  &ctx->fz, &ctx->why);
	if (ret)
		return ret;
	ctx->t1 = ktime_get_ns();
	return 0;
}

/* The parked process: the program that was checked, every thread read. */
static int check_parked(struct ckpt_cp_ctx *ctx)
{
	struct ckpt_freeze *fz = ctx->fz;
	unsigned int i;

	/* The program whose rights were checked, not one exec'ed since. */
	if (!runs_in(ctx->task, ctx->mm)) {
		ckpt_whyf(&ctx->why,
			  "pid %d executed a program or exited during the checkpoint",
			  task_tgid_vnr(ctx->task));
		return -EAGAIN;
	}
	for (i = 0; i < fz->nr; i++) {
		struct ckpt_parked *p = &fz->threads[i];

		if (p->exited || !p->ts.err)
			continue;
		ckpt_whyf(&ctx->why, "thread %d: %s", task_pid_vnr(p->task),
			  p->ts.why ?: "cannot capture its registers");
		return p->ts.err;
	}
	return 0;
}

/* Timers first: their pending signals are saved as they were. */
static int capture_signals(struct ckpt_cp_ctx *ctx)
{
	struct ckpt_freeze *fz = ctx->fz;
	unsigned int i;
	int ret;

	ctx->tasks = kcalloc(fz->nr, sizeof(*ctx->tasks), GFP_KERNEL);
	if (!ctx->tasks)
		return -ENOMEM;
	for (i = 0; i < fz->nr; i++)
		ctx->tasks[i] = fz->threads[i].exited ? NULL :
				fz->threads[i].task;
	ret = ckpt_capture_timers(ctx->task, ctx->tasks, fz->nr, ctx->ns,
				  &ctx->timers, &ctx->why);
	if (!ret)
		ret = ckpt_capture_signals(ctx->task, ctx->tasks, fz->nr, ctx->ns,
					   &ctx->timers, &ctx->sigs,
					   &ctx->sigs_len, &ctx->why);
	return ret == -ESRCH ? reaped(ctx) : ret;
}

/*
 * Everything the image holds, read from the parked process; a failure
 * names what cannot be restored, before anything is written.
 */
static int capture(struct ckpt_cp_ctx *ctx)
{
	struct task_struct *task = ctx->task;
	int ret;

	ret = check_parked(ctx);
	/* A tree's member: its tree's namespace (tree.c); else the caller's. */
	if (!ctx->scan.pid_ns)
		ctx->scan.pid_ns = ctx->ns;
	if (!ret)
		ret = ckpt_fds_capture(task, &ctx->scan, ctx->reg, &ctx->why);
	if (!ret)
		ret = ckpt_locks_capture(task, ctx->mm, &ctx->scan, &ctx->why);
	if (!ret)
		ret = capture_fs(task, ctx->fs, &ctx->why);
	if (!ret)
		ret = ckpt_exe_capture(ctx->mm, ctx->proc, task_tgid_vnr(task),
				       &ctx->scan, &ctx->why);
	if (!ret)
		ret = capture_signals(ctx);
	if (!ret)
		ret = ckpt_mm_capture(task, ctx->mm, ctx->pagemap, &ctx->mc,
				      ctx->proc, &ctx->scan.objs, &ctx->why);
	if (!ret)
		ret = ckpt_locks_mark_vmas(&ctx->scan, ctx->mm, ctx->mc.vmas,
					   ctx->mc.nr_vmas, task_tgid_vnr(task),
					   &ctx->why);
	if (!ret)
		ret = ckpt_fileobjs_capture(&ctx->scan.objs,
					    task_tgid_vnr(task), &ctx->why);
	/*
	 * After the files: one shared with a child is named as such. A
	 * tree's members were checked together (tree.c) before any capture.
	 */
	if (!ret && !ctx->in_tree)
		ret = check_relatives(task, &ctx->why);
	if (!ret)
		ret = ckpt_creds_capture(task, ctx->tasks, ctx->fz->nr, ctx->mm,
					 &ctx->creds, &ctx->creds_len,
					 &ctx->why);
	if (!ret && capture_process(task, ctx->ns, ctx->proc))
		ret = reaped(ctx);
	return ret;
}

/* The image while frozen: all of it, or all but the staged pages. */
static int write_frozen(struct ckpt_cp_ctx *ctx)
{
	int ret;

	ret = write_image(ctx);
	if (!ret && !ctx->stage)
		ret = finish_image(&ctx->mc, &ctx->st, &ctx->w);
	if (!ret)
		return 0;
	/* Its pages are read through the task, which may be gone. */
	if (ret == -EIO && !runs_in(ctx->task, ctx->mm)) {
		ckpt_whyf(&ctx->why,
			  "pid %u exited or executed a program during the checkpoint",
			  ctx->a->pid);
		return -ESRCH;
	}
	if (!ctx->why.msg)
		ctx->why.msg = "writing the image failed";
	return ret;
}


/* Runs @step on every member in order; the first failure stops it. */
static int each_member(struct ckpt_cp_group *g,
		       int (*step)(struct ckpt_cp_ctx *ctx))
{
	unsigned int i;
	int ret;

	for (i = 0; i < g->nr; i++) {
		ret = step(&g->m[i]);
		if (ret) {
			g->failed = i;
			return ret;
		}
	}
	return 0;
}

static struct workqueue_struct *write_wq;

int ckpt_checkpoint_init(void)
{
	write_wq = alloc_workqueue("ckpt_write", WQ_UNBOUND,
				   max_t(int, num_online_cpus(), 1));
	return write_wq ? 0 : -ENOMEM;
}

void ckpt_checkpoint_uninit(void)
{
	destroy_workqueue(write_wq);
}

static void member_work(struct work_struct *work)
{
	struct ckpt_cp_ctx *ctx = container_of(work, struct ckpt_cp_ctx, work);
	wait_queue_head_t *done = ctx->done;

	/* The pagemap is read through a buffer in the caller's memory (mm.c). */
	kthread_use_mm(ctx->caller_mm);
	ctx->step_ret = ctx->step(ctx);
	kthread_unuse_mm(ctx->caller_mm);
	if (atomic_dec_and_test(ctx->pending))
		wake_up(done);
}

/* Whether every member's image goes to a regular file, which never waits on a reader. */
static bool all_to_files(const struct ckpt_cp_group *g)
{
	unsigned int i;

	for (i = 0; i < g->nr; i++)
		if (!S_ISREG(file_inode(g->m[i].w.file)->i_mode))
			return false;
	return true;
}

/*
 * Runs @step on every member, each to its end whatever the others do, side
 * by side, one worker each (as many at once as there are CPUs): the
 * members' images are independent, and writing them is most of the time a
 * tree stays frozen. Side by side only when every image goes to a regular
 * file: a worker cannot be interrupted, and one writing to a pipe nobody
 * reads would wait for ever; otherwise one after the other, here. The
 * caller waits idle (not counted as a hung task however long the writes
 * take), and the first failure in member order is returned.
 */
static int each_member_parallel(struct ckpt_cp_group *g,
				int (*step)(struct ckpt_cp_ctx *ctx))
{
	DECLARE_WAIT_QUEUE_HEAD_ONSTACK(done);
	atomic_t pending;
	unsigned int i;

	if (g->nr == 1 || !current->mm || !all_to_files(g)) {
		for (i = 0; i < g->nr; i++)
			g->m[i].step_ret = step(&g->m[i]);
	} else {
		atomic_set(&pending, g->nr);
		for (i = 0; i < g->nr; i++) {
			g->m[i].step = step;
			g->m[i].caller_mm = current->mm;
			g->m[i].pending = &pending;
			g->m[i].done = &done;
			INIT_WORK(&g->m[i].work, member_work);
			queue_work(write_wq, &g->m[i].work);
		}
		wait_event_idle(done, !atomic_read(&pending));
		/* Until each worker has left member_work(), @done included. */
		for (i = 0; i < g->nr; i++)
			flush_work(&g->m[i].work);
	}
	for (i = 0; i < g->nr; i++) {
		if (g->m[i].step_ret) {
			g->failed = i;
			return g->m[i].step_ret;
		}
	}
	return 0;
}

/* A member's staged pages and END, after the thaw; its callbacks learn how it went. */
static int finish_staged(struct ckpt_cp_ctx *ctx)
{
	int err = finish_image(&ctx->mc, &ctx->st, &ctx->w);

	/* Never one a caller tries again for: the members may run already. */
	if (err == -EAGAIN || err == -EBUSY || err == -ESRCH)
		err = -EIO;
	if (err)
		ctx->why.msg = "writing the image failed (after the process was let go)";
	if (ctx->reg)
		ckpt_cb_complete(ctx->reg, ctx->req, err);
	return err;
}

/*
 * Lets the members go, after every image is complete (or failed): the
 * callback threads' restarted calls then see the outcome. Staged images
 * are completed after all are thawed, and the callback threads wait for
 * that. Every member frozen is thawed, whatever failed.
 */
static int thaw_group(struct ckpt_cp_group *g, int ret)
{
	bool staged = g->stage && !ret;
	struct ckpt_cp_ctx *ctx;
	unsigned int i;

	for (i = 0; i < g->nr; i++) {
		ctx = &g->m[i];
		if (!ctx->fz)
			continue;
		if (ctx->reg && !staged)
			ckpt_cb_complete(ctx->reg, ctx->req, ret);
		ckpt_thaw(ctx->fz);
	}
	g->frozen_ns = g->t1 ? ktime_get_ns() - g->t1 : 0;
	/* Stopped, with CKPT_CHECKPOINT_STAGED: the caller may let them go. */
	if (staged && g->staged_ev)
		ckpt_eventfd_signal(g->staged_ev);
	/* The members run on meanwhile: their staged pages, side by side. */
	if (staged)
		ret = each_member_parallel(g, finish_staged);
	for (i = 0; !ret && i < g->nr; i++) {
		ctx = &g->m[i];
		ctx->a->frozen_ns = g->frozen_ns;
		ctx->a->image_bytes = ctx->w.bytes;
		ctx->a->nr_pages = ctx->mc.nr_stored;
	}
	return ret;
}

/* Every member's callbacks, then every freeze: none is frozen on a "no". */
static int freeze_group(struct ckpt_cp_group *g)
{
	int ret;

	ret = each_member(g, request_callbacks);
	if (!ret)
		ret = each_member(g, prepare_staging);
	if (!ret)
		ret = each_member(g, freeze);
	if (g->nr && g->m[0].fz)
		g->t1 = g->m[0].t1;
	return ret;
}

/*
 * From the callbacks to the thaw: all members frozen before any is
 * captured, every image written before any is stopped or killed; any
 * failure thaws them all untouched.
 */
static int run_group(struct ckpt_cp_group *g)
{
	unsigned int i;
	int ret;

	ret = freeze_group(g);
	if (!ret && g->tree)
		ret = ckpt_tree_check(g);
	if (!ret)
		ret = ckpt_ipc_capture(g);
	if (!ret)
		ret = each_member(g, capture);
	if (!ret)
		ret = ckpt_usock_check_pending(g);
	if (!ret)
		ret = ckpt_tcp_check_pairs(g);
	if (!ret)
		ret = ckpt_pty_check_pairs(g);
	if (!ret && g->tree)
		ckpt_pty_mark_ctty(g);
	if (!ret && g->tree)
		ret = ckpt_tree_check_shared(g);
	if (!ret)
		ret = each_member_parallel(g, write_frozen);
	for (i = 0; !ret && i < g->nr; i++) {
		if (g->flags & CKPT_CHECKPOINT_KILL)
			send_sig_info(SIGKILL, SEND_SIG_PRIV, g->m[i].task);
		else if (g->flags & CKPT_CHECKPOINT_STOP)
			send_sig_info(SIGSTOP, SEND_SIG_PRIV, g->m[i].task);
	}
	ret = thaw_group(g, ret);
	for (i = 0; i < g->nr; i++) {
		struct ckpt_cp_ctx *ctx = &g->m[i];

		/* Never frozen: the callbacks' request ends here. */
		if (ctx->reg && ret && !ctx->fz)
			ckpt_cb_complete(ctx->reg, ctx->req, ret);
		ckpt_cb_put(ctx->reg);
	}
	return ret;
}

static void free_capture(struct ckpt_cp_ctx *ctx)
{
	ckpt_fds_free(&ctx->scan);
	ckpt_mm_capture_free(&ctx->mc);
	ckpt_stage_free(&ctx->st);
	kvfree(ctx->proc);
	kvfree(ctx->fs);
	kvfree(ctx->sigs);
	kvfree(ctx->creds);
	kvfree(ctx->zombies);
	ckpt_ipc_free_undo(&ctx->undo);
	ckpt_timers_free(&ctx->timers);
	kfree(ctx->tasks);
}

/*
 * One member, before anything is frozen: the process, the caller's rights
 * over it, its image's writer. What it takes, release_member() drops.
 */
static int prepare_member(struct ckpt_cp_group *g, struct ckpt_cp_ctx *ctx)
{
	int ret;

	ctx->timeout = g->timeout;
	ctx->deadline = g->deadline;
	ctx->stage = g->stage;
	ctx->in_tree = g->tree;
	ctx->ns = task_active_pid_ns(current);
	ret = get_target(ctx);
	if (ret)
		return ret;
	ctx->have_target = true;
	ret = may_checkpoint(ctx);
	if (ret)
		return ret;
	if (ctx->task->ptrace) {
		if (g->tree)
			ckpt_whyf(&ctx->why, "pid %u is being traced",
				  ctx->a->pid);
		else
			ctx->why.msg = "the process is being traced";
		return -EBUSY;
	}
	ctx->proc = kvzalloc(sizeof(*ctx->proc), GFP_KERNEL);
	ctx->fs = kvzalloc(sizeof(*ctx->fs), GFP_KERNEL);
	if (!ctx->proc || !ctx->fs)
		return -ENOMEM;
	ret = ckpt_writer_init(&ctx->w, ctx->a->fd);
	if (ret == -EBADF && g->tree)
		ckpt_whyf(&ctx->why,
			  "pid %u: its image descriptor %d is not open for writing",
			  ctx->a->pid, ctx->a->fd);
	else if (ret)
		ctx->why.msg = ret == -EBADF ?
			       "the image descriptor is not open for writing" :
			       "cannot compute image MACs (hmac(sha256))";
	if (ret)
		return ret;
	ctx->have_writer = true;
	if (g->flags & CKPT_CHECKPOINT_DIGESTS) {
		ret = ckpt_writer_digest(&ctx->w);
		if (ret)
			ctx->why.msg = "cannot compute image digests (sha256)";
	}
	return ret;
}

static void release_member(struct ckpt_cp_ctx *ctx)
{
	if (ctx->have_writer)
		ckpt_writer_done(&ctx->w);
	free_capture(ctx);
	if (ctx->have_target)
		put_target(ctx);
}

/* The message of a failed request: a tree's names its member. */
const char *ckpt_cp_group_why(struct ckpt_cp_group *g)
{
	const char *msg = g->m[g->failed].why.msg;

	if (!g->tree || !msg || !strncmp(msg, "pid ", 4))
		return msg;
	ckpt_whyf(&g->why, "pid %u: %s", g->m[g->failed].a->pid, msg);
	return g->why.msg;
}

int ckpt_cp_group_run(struct ckpt_cp_group *g)
{
	unsigned int i;
	int ret = 0;

	g->t0 = ktime_get_ns();
	g->timeout = g->timeout ?: CKPT_DEFAULT_TIMEOUT_MS;
	g->deadline = jiffies + msecs_to_jiffies(g->timeout);
	g->stage = !(g->flags & (CKPT_CHECKPOINT_KILL | CKPT_CHECKPOINT_STOP)) ||
		   g->flags & CKPT_CHECKPOINT_STAGED;
	for (i = 0; i < g->nr && !ret; i++) {
		ret = prepare_member(g, &g->m[i]);
		if (ret)
			g->failed = i;
	}
	if (!ret && g->tree)
		ret = ckpt_tree_prepare(g);
	if (!ret)
		ret = run_group(g);
	for (i = 0; i < g->nr; i++)
		release_member(&g->m[i]);
	if (g->tree) {
		ckpt_tree_release(g);
		ckpt_ipc_free(&g->ipc);
	}
	g->total_ns = ktime_get_ns() - g->t0;
	return ret;
}

long ckpt_ioctl_checkpoint(struct ckpt_checkpoint __user *uarg)
{
	struct ckpt_cp_group g = {};
	struct ckpt_checkpoint a;
	long ret;
	int i;

	if (copy_from_user(&a, uarg, sizeof(a)))
		return -EFAULT;
	if (a.flags & ~__CKPT_CHECKPOINT_F_ALL ||
	    a.flags & (CKPT_CHECKPOINT_PEERS_AWAY |	/* a tree's only */
		       CKPT_CHECKPOINT_LOCAL_FILES | CKPT_CHECKPOINT_ROOTS |
		       CKPT_CHECKPOINT_DIGESTS | CKPT_CHECKPOINT_STAGED |
		       CKPT_CHECKPOINT_WAITING_AWAY) ||
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

	/* A group of one: the tree's pipeline, without its rules. */
	g.m = kzalloc(sizeof(*g.m), GFP_KERNEL);
	if (!g.m)
		return -ENOMEM;
	g.m->a = &a;
	g.nr = 1;
	g.flags = a.flags;
	g.timeout = a.timeout_ms;
	ret = ckpt_cp_group_run(&g);
	a.total_ns = g.total_ns;
	if (ret)
		ckpt_put_errmsg(a.errmsg, a.errmsg_len, ckpt_cp_group_why(&g));
	kfree(g.m);
	if (!ret && copy_to_user(uarg, &a, sizeof(a)))
		ret = -EFAULT;
	return ret;
}
