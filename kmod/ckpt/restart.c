// SPDX-License-Identifier: GPL-2.0
/*
 * CKPT_IOC_RESTART and CKPT_IOC_RESTART_THREAD: the calling process becomes
 * the process in an image.
 *
 * The restarter (userspace) has already created one thread per image thread
 * with the image's tids, restored what system calls restore well (signal
 * handlers, rlimits, umask) and moved its vdso where the image had it. Its
 * other threads wait here (CKPT_IOC_RESTART_THREAD) with their FPU
 * registers handed to memory, while the main thread:
 *
 *   1. reads and validates the image up to its memory and checks that this
 *      machine and this process can take it (the credentials it is to run
 *      with, threads, tids, XSAVE layout and features, vdso, the executable
 *      and mapped files, the POSIX timers the restarter made, whose overrun
 *      counts it then sets) -- errors so far return normally;
 *   2. replaces its memory with the image's, and its exe file -- from here
 *      a failure kills the process and the message goes to err_fd;
 *   3. has a worker write every thread's XSAVE state (the regset code will
 *      not rewrite the running task's own);
 *   4. with CKPT_RESTART_HOLD, says the process is whole and waits for the
 *      holder's go (hold.c);
 *   5. lets every thread go; each queues a task_work on itself that loads
 *      its registers and per-thread state, and installs the image's
 *      credentials (creds.c), on the way back to user mode, where the
 *      kernel then restarts an interrupted system call exactly as it would
 *      have at the checkpoint.
 */

#include <linux/cred.h>
#include <linux/fdtable.h>
#include <linux/file.h>
#include <linux/fs_struct.h>
#include <linux/module.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/task_work.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>

#include <uapi/linux/ckpt_image.h>

#include "creds.h"
#include "exe.h"
#include "fileobj.h"
#include "hold.h"
#include "image.h"
#include "lazy.h"
#include "mm.h"
#include "restart.h"
#include "threads.h"
#include "vdso.h"
#include "timers.h"
#include "why.h"

#define CKPT_DEFAULT_TIMEOUT_MS	10000

/*
 * Restart feeds an image to the kernel's parser and makes a process of
 * it: only for CAP_CHECKPOINT_RESTORE (or CAP_SYS_ADMIN) in the initial
 * user namespace. Ordinary users restart through ckptd. A user namespace
 * of one's own gives neither (security.md).
 */
static bool may_restart(void)
{
	return capable(CAP_CHECKPOINT_RESTORE) || capable(CAP_SYS_ADMIN);
}

/* What one thread loads on its way back to user mode; owns itself. */
struct restore_work {
	struct callback_head cb;
	struct file *dev;	/* /dev/ckpt: pins the module until after the work */
	struct ckpt_img_thread img;
	struct ckpt_img_sched sched;	/* its SCHED entry, if has_sched */
	bool has_sched;
	struct ckpt_creds_set *creds;	/* this thread's to install or drop */
	pid_t lazy_ppid;	/* main thread of a lazy restart: its restarter */
};

struct arrival {
	struct list_head node;
	u32 index;
	struct task_struct *task;	/* referenced */
	const struct ckpt_img_thread *img;	/* set by the main thread */
	struct restore_work *work;	/* handed to the thread at go */
};

struct ckpt_restart_ctx {
	struct mutex lock;
	wait_queue_head_t wq;
	struct list_head arrivals;
	u32 nr_arrived;
	int state;		/* 0 gathering, 1 go, < 0 failed */
	bool busy;		/* a CKPT_IOC_RESTART is running on it */
	struct work_struct fpu_work;
	/* Per image thread, for the worker; only during CKPT_IOC_RESTART. */
	void **xstates;
	struct task_struct **tasks;
	u32 nr_threads;
	u32 xstate_size;
	int fpu_err;
	struct cred *creds;	/* CKPT_IOC_RESTART_CREDS; until the restart */
};

static struct ckpt_restart_ctx *get_ctx(struct file *file)
{
	struct ckpt_restart_ctx *ctx = READ_ONCE(file->private_data), *old;

	if (ctx)
		return ctx;
	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return NULL;
	mutex_init(&ctx->lock);
	init_waitqueue_head(&ctx->wq);
	INIT_LIST_HEAD(&ctx->arrivals);
	old = cmpxchg(&file->private_data, NULL, ctx);
	if (old) {
		kfree(ctx);
		return old;
	}
	return ctx;
}

static void free_work(struct restore_work *w)
{
	if (w && w->creds)
		ckpt_creds_drop(w->creds);
	if (w && w->dev)
		fput(w->dev);
	kfree(w);
}

void ckpt_restart_release(struct ckpt_restart_ctx *ctx)
{
	struct arrival *a, *tmp;

	if (!ctx)
		return;
	list_for_each_entry_safe(a, tmp, &ctx->arrivals, node) {
		free_work(a->work);
		put_task_struct(a->task);
		kfree(a);
	}
	if (ctx->creds)
		abort_creds(ctx->creds);
	kfree(ctx);
}

static void restore_fn(struct callback_head *cb)
{
	struct restore_work *w = container_of(cb, struct restore_work, cb);
	struct ckpt_why why = {};
	struct file *dev;

	if (ckpt_thread_restore(&w->img, w->has_sched ? &w->sched : NULL,
				&why)) {
		pr_info_ratelimited("restart of pid %d failed: %s\n",
				    task_tgid_vnr(current), why.msg);
		force_sig(SIGKILL);
	} else {
		ckpt_creds_install(w->creds);
		w->creds = NULL;
		if (w->lazy_ppid && ckpt_lazy_arm(w->lazy_ppid)) {
			pr_info_ratelimited("lazy restart of pid %d: its restarter died\n",
					    task_tgid_vnr(current));
			force_sig(SIGKILL);
		}
	}
	dev = w->dev;
	w->dev = NULL;
	free_work(w);
	/*
	 * The last reference to /dev/ckpt may be this one, and with it the
	 * module's: fput() from a task defers the release to a task_work
	 * that runs after this function has returned out of module code.
	 */
	fput(dev);
}

/* Thread @index's SCHED entry into @w, if the image has them. */
static void set_sched(struct restore_work *w, const struct ckpt_img_sched *s,
		      u32 index)
{
	w->has_sched = s;
	if (s)
		w->sched = s[index];
}

/* Hands @w to current, to run on its way back to user mode. */
static int queue_restore(struct file *dev, struct restore_work *w)
{
	init_task_work(&w->cb, restore_fn);
	w->dev = get_file(dev);
	if (task_work_add(current, &w->cb, TWA_SIGNAL)) {
		fput(w->dev);
		w->dev = NULL;
		return -ESRCH;
	}
	return 0;
}

long ckpt_ioctl_restart_thread(struct file *file, u32 __user *uindex)
{
	struct ckpt_restart_ctx *ctx;
	struct restore_work *w;
	struct arrival *a;
	u32 index;
	int ret;

	if (!may_restart())
		return -EPERM;
	if (get_user(index, uindex))
		return -EFAULT;
	if (!index || index >= CKPT_IMG_MAX_THREADS)
		return -EINVAL;
	ctx = get_ctx(file);
	if (!ctx)
		return -ENOMEM;
	a = kzalloc(sizeof(*a), GFP_KERNEL_ACCOUNT);
	if (!a)
		return -ENOMEM;
	a->index = index;
	a->task = get_task_struct(current);

	ckpt_thread_release_fpu();
	mutex_lock(&ctx->lock);
	if (ctx->state || ctx->nr_arrived >= CKPT_IMG_MAX_THREADS - 1) {
		mutex_unlock(&ctx->lock);
		put_task_struct(a->task);
		kfree(a);
		return -EBUSY;
	}
	list_add_tail(&a->node, &ctx->arrivals);
	ctx->nr_arrived++;
	mutex_unlock(&ctx->lock);
	wake_up_all(&ctx->wq);

	ret = wait_event_killable(ctx->wq, READ_ONCE(ctx->state) != 0);
	if (ret)
		return ret;
	mutex_lock(&ctx->lock);
	ret = ctx->state < 0 ? ctx->state : 0;
	w = a->work;
	a->work = NULL;
	mutex_unlock(&ctx->lock);
	if (ret) {
		free_work(w);
		return ret;
	}
	ret = queue_restore(file, w);
	if (ret)
		free_work(w);
	return ret;
}

/*
 * A helper of the restarter that switched to the image's groups and ids
 * hands its credentials over, for the restarted process (creds.c).
 */
long ckpt_ioctl_restart_creds(struct file *file, unsigned long arg)
{
	struct ckpt_restart_ctx *ctx = get_ctx(file);
	struct cred *new;

	if (!ctx)
		return -ENOMEM;
	if (arg)
		return -EINVAL;
	new = prepare_creds();
	if (!new)
		return -ENOMEM;
	mutex_lock(&ctx->lock);
	if (ctx->state || ctx->creds) {
		mutex_unlock(&ctx->lock);
		abort_creds(new);
		return -EBUSY;
	}
	ctx->creds = new;
	mutex_unlock(&ctx->lock);
	return 0;
}

static void fpu_work_fn(struct work_struct *work)
{
	struct ckpt_restart_ctx *ctx =
		container_of(work, struct ckpt_restart_ctx, fpu_work);
	u32 i;

	for (i = 0; i < ctx->nr_threads && !ctx->fpu_err; i++)
		ctx->fpu_err = ckpt_thread_set_xstate(ctx->tasks[i],
						      ctx->xstates[i],
						      ctx->xstate_size);
}

/* The image's threads, read and checked against this machine. */
struct image_threads {
	struct ckpt_img_thread **t;	/* payloads: struct + xstate */
	u32 nr;
};

static void free_threads(struct image_threads *it)
{
	u32 i;

	for (i = 0; it->t && i < it->nr; i++)
		kvfree(it->t[i]);
	kfree(it->t);
}

/*
 * One CKPT_IOC_RESTART: what do_restart() reads from the image, checks
 * and holds until the process is the image's (or the restart failed).
 * The per-open struct ckpt_restart_ctx outlives it: its busy flag makes
 * this the only one on that /dev/ckpt, and the waiting threads meet it
 * there.
 */
struct ckpt_restart_req {
	struct file *dev;		/* the /dev/ckpt it runs on */
	struct ckpt_restart_ctx *ctx;
	const struct ckpt_restart *args;
	struct ckpt_why why;
	bool fatal;			/* past the point of no return */
	struct ckpt_reader r;
	struct path root;		/* where the image's paths start */
	struct file *uffd;		/* a lazy restart's, referenced */
	struct file *hold;		/* a held restart's socket, referenced */
	struct file *err;		/* where late errors go, referenced */
	struct ckpt_objfiles of;
	/* The image up to its VMAS section, read and validated. */
	struct ckpt_img_header *hdr;
	struct ckpt_img_process *proc;
	struct image_threads it;
	struct ckpt_img_timers *timers;
	struct ckpt_img_sched *sched;	/* SCHED: [nr_threads], or NULL */
	struct ckpt_img_vdso *vdso;
	struct ckpt_img_creds *creds;
	struct ckpt_img_vma *vmas;
	/* What the checks made of it. */
	struct ckpt_creds_set *cs;
	u8 *proxy;			/* the vdso proxy, if one is needed */
	struct file *exe;
	struct restore_work *own;	/* the main thread's */
};

/*
 * The header's counts against what the restarter made and this machine
 * has, before anything is allocated for them: an image cannot make the
 * engine hold more than one thread section per thread the caller made.
 */
static int check_header(const struct ckpt_img_header *hdr,
			const struct ckpt_restart *args, struct ckpt_why *why)
{
	if (hdr->nr_threads != args->nr_threads) {
		ckpt_whyf(why, "the image has %u threads, the restarter made %u",
			  hdr->nr_threads, args->nr_threads);
		return -EINVAL;
	}
	if (hdr->xstate_size != ckpt_xstate_size()) {
		ckpt_whyf(why,
			  "the image's XSAVE layout (%u bytes) differs from this machine's (%u bytes)",
			  hdr->xstate_size, ckpt_xstate_size());
		return -ENOEXEC;
	}
	return 0;
}

static int read_front(struct ckpt_restart_req *q)
{
	struct ckpt_reader *r = &q->r;
	struct image_threads *it = &q->it;
	struct ckpt_sect s;
	void *p, *objs = NULL, *files = NULL;
	int ret;

	ret = ckpt_read_sect(r, &s, &p);
	if (ret)
		goto bad;
	q->hdr = p;
	ret = check_header(q->hdr, q->args, &q->why);
	if (ret)
		return ret;
	ret = ckpt_read_sect(r, &s, &p);
	if (ret)
		goto bad;
	q->proc = p;
	it->t = kcalloc(q->hdr->nr_threads, sizeof(*it->t), GFP_KERNEL_ACCOUNT);
	if (!it->t)
		return -ENOMEM;
	for (it->nr = 0; it->nr < q->hdr->nr_threads; it->nr++) {
		ret = ckpt_read_sect(r, &s, &p);
		/*
		 * A tree member's place (validated by the checker) is the
		 * restarter's business: it made the process a child of the
		 * right member already.
		 */
		if (!ret && s.type == CKPT_SECT_TREE) {
			kvfree(p);
			ret = ckpt_read_sect(r, &s, &p);
		}
		if (ret)
			goto bad;
		it->t[it->nr] = p;
	}
	ret = ckpt_read_sect(r, &s, &p);
	/*
	 * Files, epoll items, the working directory, pending signals and
	 * timers (the sections the checker lets come before VMAS) were
	 * restored by the restarter; the engine validates them, and checks
	 * the timers against what the restarter made. The credentials are
	 * the engine's to check and install.
	 */
	while (!ret && s.type != CKPT_SECT_VMAS) {
		/*
		 * The checker reads FILEOBJ's table and FILES (for EPOLL)
		 * until VMAS is accepted.
		 */
		if (s.type == CKPT_SECT_FILEOBJ)
			objs = p;
		else if (s.type == CKPT_SECT_FILES)
			files = p;
		else if (s.type == CKPT_SECT_VDSO)
			q->vdso = p;
		else if (s.type == CKPT_SECT_TIMERS)
			q->timers = p;
		else if (s.type == CKPT_SECT_SCHED)
			q->sched = p;
		else if (s.type == CKPT_SECT_CREDS)
			q->creds = p;
		else
			kvfree(p);
		ret = ckpt_read_sect(r, &s, &p);
	}
	kvfree(objs);
	kvfree(files);
	if (ret)
		goto bad;
	q->vmas = p;
	return 0;
bad:
	q->why.msg = r->st.why;
	return ret;
}

/*
 * What the image's MAC says (security.md): an image this engine's key
 * authenticates is trusted for the credentials it names; one changed
 * since, or made under another key, is refused; one without MAC restarts
 * only when asked to, and then only as the restarter itself (creds.c).
 * The reader's words are copied: the reader is gone when the ioctl copies
 * the message out (the debug kernel showed the pointer going stale).
 */
static int check_auth(const struct ckpt_reader *r,
		      const struct ckpt_restart *args, bool *trusted,
		      struct ckpt_why *why)
{
	switch (r->verdict) {
	case CKPT_AUTH_OK:
		*trusted = true;
		return 0;
	case CKPT_AUTH_NONE:
		*trusted = false;
		if (args->flags & CKPT_RESTART_UNAUTHENTICATED)
			return 0;
		why->msg = "the image carries no MAC (made by hand, or by an older engine): it can restart only unauthenticated, as the restarter itself";
		return -ENOKEY;
	case CKPT_AUTH_BAD:
		ckpt_whyf(why, "%s", r->auth_why.msg);
		return -EKEYREJECTED;
	default:
		why->msg = "the image's MAC was not checked";
		return -EBADMSG;
	}
}

static int check_machine(const struct ckpt_img_header *hdr,
			 const struct image_threads *it, struct ckpt_why *why)
{
	u64 xcr0, need = 0;
	u32 i;
	int ret;

	ret = ckpt_machine_xfeatures(&xcr0);
	if (ret)
		return ret;
	for (i = 0; i < it->nr; i++)
		need |= ckpt_xstate_bv((void *)(it->t[i] + 1));
	if (need & ~xcr0) {
		ckpt_whyf(why,
			  "the image uses CPU state this machine lacks (XSAVE features %#llx, machine has %#llx)",
			  need, xcr0);
		return -ENOEXEC;
	}
	return 0;
}

/* Matches the waiting threads to the image's, by index and tid. */
static int match_threads(struct ckpt_restart_ctx *ctx,
			 const struct image_threads *it, struct ckpt_why *why)
{
	struct arrival *a;

	ctx->tasks[0] = current;
	ctx->xstates[0] = it->t[0] + 1;
	if (task_pid_vnr(current) != it->t[0]->tid ||
	    task_tgid_vnr(current) != it->t[0]->tid) {
		ckpt_whyf(why, "the restarting process has pid %d, the image pid %u",
			  task_tgid_vnr(current), it->t[0]->tid);
		return -EINVAL;
	}
	list_for_each_entry(a, &ctx->arrivals, node) {
		if (a->index >= it->nr || ctx->tasks[a->index]) {
			why->msg = "a waiting thread gave a wrong or repeated index";
			return -EINVAL;
		}
		if (!same_thread_group(a->task, current)) {
			why->msg = "a waiting thread belongs to another process";
			return -EINVAL;
		}
		if (task_pid_vnr(a->task) != it->t[a->index]->tid) {
			ckpt_whyf(why, "thread %u has tid %d, the image tid %u",
				  a->index, task_pid_vnr(a->task),
				  it->t[a->index]->tid);
			return -EINVAL;
		}
		if (a->task->flags & PF_EXITING) {
			ckpt_whyf(why, "thread %u (tid %d) is exiting",
				  a->index, task_pid_vnr(a->task));
			return -ESRCH;
		}
		ctx->tasks[a->index] = a->task;
		ctx->xstates[a->index] = it->t[a->index] + 1;
		a->img = it->t[a->index];
	}
	/*
	 * Every thread of the process takes part: one that does not would
	 * return to user mode into the image's memory with the restarter's
	 * registers. The threads that arrived are parked here and cannot
	 * make more.
	 */
	if (get_nr_threads(current) != it->nr) {
		ckpt_whyf(why,
			  "the restarting process has %d threads, of which %u take part",
			  get_nr_threads(current), it->nr);
		return -EINVAL;
	}
	return 0;
}

/* Closes @file's descriptor in current, if it has one. */
static int match_file(const void *p, struct file *file, unsigned int fd)
{
	return file == p ? fd + 1 : 0;
}

static void close_restarter_fds(struct file *dev,
				const struct ckpt_restart *args)
{
	int fd = iterate_fd(current->files, 0, match_file, dev);

	if (fd > 0)
		close_fd(fd - 1);
	close_fd(args->fd);
	if (args->err_fd >= 0)
		close_fd(args->err_fd);
	if (args->flags & CKPT_RESTART_ROOT_FD)
		close_fd(args->root_fd);
	if (args->flags & CKPT_RESTART_LAZY)
		close_fd(args->uffd);
	if (args->flags & CKPT_RESTART_HOLD)
		close_fd(args->hold_fd);
}

/*
 * The descriptor late errors go to, taken when the restart starts: a
 * restart whose failure could not be told is refused while it still can
 * be, and the file written later is the one checked now.
 */
static int get_err_file(struct ckpt_restart_req *q)
{
	int fd = q->args->err_fd;
	struct file *f;

	if (fd < 0)
		return 0;
	f = fget(fd);
	if (!f) {
		q->why.msg = "err_fd is not open";
		return -EBADF;
	}
	if (!(f->f_mode & FMODE_WRITE)) {
		fput(f);
		q->why.msg = "err_fd is not open for writing";
		return -EBADF;
	}
	q->err = f;
	return 0;
}

/*
 * The message, on a file kernel_write() takes: one with write_iter alone
 * (a pipe, a socket, a regular file), not /dev/null's kind, which has
 * write too (and would only be warned about).
 */
static void late_error(struct file *f, const char *why)
{
	char buf[CKPT_WHY_LEN];
	loff_t pos = 0;
	int len;

	if (!(f->f_mode & FMODE_CAN_WRITE) || !f->f_op->write_iter ||
	    f->f_op->write)
		return;
	len = scnprintf(buf, sizeof(buf), "%s\n", why ?: "restart failed");
	kernel_write(f, buf, len, &pos);
}

/*
 * Where the image's paths are opened from: the directory the restarter
 * handed over (its root before it entered the image's root directory),
 * or its root.
 */
static int get_root(const struct ckpt_restart *args, struct path *root,
		    struct ckpt_why *why)
{
	struct file *f;

	if (!(args->flags & CKPT_RESTART_ROOT_FD)) {
		get_fs_root(current->fs, root);
		return 0;
	}
	f = fget_raw(args->root_fd);
	if (!f) {
		why->msg = "the root descriptor is not open";
		return -EBADF;
	}
	if (!S_ISDIR(file_inode(f)->i_mode)) {
		why->msg = "the root descriptor is not a directory";
		fput(f);
		return -ENOTDIR;
	}
	*root = f->f_path;
	path_get(root);
	fput(f);
	return 0;
}

/*
 * The restarter's descriptors of file objects: the mappings hold them now.
 * Not close_fd(), which drops the process's record locks on the file: the
 * restarted process took its own again (lib/restore/locks.c).
 */
static void close_obj_fds(const struct ckpt_objfiles *of)
{
	struct file *f;
	u32 i;

	for (i = 0; i < of->nr; i++) {
		f = of->fds[i] >= 0 ? ckpt_close_fd_get_file(of->fds[i]) : NULL;
		if (f)
			fput(f);
	}
}

/*
 * Where the image's paths open from, a lazy restart's userfaultfd, a held
 * restart's socket and the restarter's descriptors of file objects: what
 * the caller handed over.
 */
static int get_inputs(struct ckpt_restart_req *q)
{
	const struct ckpt_restart *args = q->args;
	int ret;

	ret = get_err_file(q);
	if (!ret)
		ret = get_root(args, &q->root, &q->why);
	if (ret)
		return ret;
	if (args->flags & CKPT_RESTART_LAZY) {
		if (!S_ISREG(file_inode(q->r.file)->i_mode)) {
			q->why.msg = "a lazy restart needs the image in a regular file";
			return -EINVAL;
		}
		q->uffd = ckpt_lazy_get(args->uffd, &q->why);
		if (IS_ERR(q->uffd)) {
			ret = PTR_ERR(q->uffd);
			q->uffd = NULL;
			return ret;
		}
	}
	if (args->flags & CKPT_RESTART_HOLD) {
		q->hold = ckpt_hold_get(args->hold_fd, &q->why);
		if (IS_ERR(q->hold)) {
			ret = PTR_ERR(q->hold);
			q->hold = NULL;
			return ret;
		}
	}
	return ckpt_fileobj_get_files(args->obj_fds, args->nr_obj_fds, &q->of,
				      &q->why);
}

/*
 * The image up to its memory, and whether this machine and this process
 * can take it: its MAC, the credentials to run with, XSAVE features, the
 * vdso, the executable and the mapped files. Nothing is changed yet.
 */
static int check_image(struct ckpt_restart_req *q)
{
	struct ckpt_restart_ctx *ctx = q->ctx;
	bool trusted = false;
	struct cred *cred;
	int ret;

	ret = read_front(q);
	if (!ret)
		ret = check_auth(&q->r, q->args, &trusted, &q->why);
	if (ret)
		return ret;
	mutex_lock(&ctx->lock);
	cred = ctx->creds;
	ctx->creds = NULL;
	mutex_unlock(&ctx->lock);
	q->cs = ckpt_creds_prepare(q->creds, cred, trusted, &q->why);
	if (IS_ERR(q->cs)) {
		ret = PTR_ERR(q->cs);
		q->cs = NULL;
		return ret;
	}
	q->of.same_boot = ckpt_same_boot(q->hdr->boot_id);
	q->of.cred = ckpt_creds_cred(q->cs);	/* files are opened with these */
	ret = check_machine(q->hdr, &q->it, &q->why);
	if (ret)
		return ret;
	q->proxy = ckpt_vdso_check(q->proc, q->vdso, q->vmas, q->hdr->nr_vmas,
				   q->it.t, q->it.nr, &q->why);
	if (IS_ERR(q->proxy)) {
		ret = PTR_ERR(q->proxy);
		q->proxy = NULL;
		return ret;
	}
	q->exe = ckpt_exe_open(q->proc, &q->root, &q->of, &q->why);
	if (IS_ERR(q->exe)) {
		ret = PTR_ERR(q->exe);
		q->exe = NULL;
		return ret;
	}
	return ckpt_mm_check_files(q->vmas, q->hdr->nr_vmas, &q->root, &q->of,
				   &q->why);
}

/*
 * Every thread of the restarter, matched to the image's, each given the
 * work it will load on its way back to user mode; then the POSIX timers
 * the restarter made, checked and set.
 */
static int gather_threads(struct ckpt_restart_req *q)
{
	struct ckpt_restart_ctx *ctx = q->ctx;
	const struct ckpt_restart *args = q->args;
	struct arrival *a;
	long left;
	int ret;

	left = wait_event_killable_timeout(ctx->wq,
			READ_ONCE(ctx->nr_arrived) == args->nr_threads - 1,
			msecs_to_jiffies(args->timeout_ms ?: CKPT_DEFAULT_TIMEOUT_MS));
	if (left <= 0) {
		q->why.msg = "not all of the restarter's threads arrived";
		return left < 0 ? left : -ETIMEDOUT;
	}

	ctx->tasks = kcalloc(q->hdr->nr_threads, sizeof(*ctx->tasks),
			     GFP_KERNEL_ACCOUNT);
	ctx->xstates = kcalloc(q->hdr->nr_threads, sizeof(*ctx->xstates),
			       GFP_KERNEL_ACCOUNT);
	q->own = kzalloc(sizeof(*q->own), GFP_KERNEL_ACCOUNT);
	if (!ctx->tasks || !ctx->xstates || !q->own)
		return -ENOMEM;
	mutex_lock(&ctx->lock);
	ret = match_threads(ctx, &q->it, &q->why);
	list_for_each_entry(a, &ctx->arrivals, node) {
		a->work = kzalloc(sizeof(*a->work), GFP_KERNEL_ACCOUNT);
		if (!a->work) {
			ret = -ENOMEM;
			continue;
		}
		/* Matched: its index is one of the image's threads. */
		if (a->img) {
			a->work->img = *a->img;
			set_sched(a->work, q->sched, a->index);
		}
		a->work->creds = ckpt_creds_get(q->cs);
	}
	mutex_unlock(&ctx->lock);
	if (ret)
		return ret;
	q->own->img = *q->it.t[0];
	set_sched(q->own, q->sched, 0);
	q->own->creds = ckpt_creds_get(q->cs);
	if (q->uffd && !(q->args->flags & CKPT_RESTART_LAZY_UNTIED)) {
		rcu_read_lock();
		q->own->lazy_ppid = task_tgid_nr(rcu_dereference(current->real_parent));
		rcu_read_unlock();
	}
	ctx->nr_threads = q->hdr->nr_threads;
	ctx->xstate_size = q->hdr->xstate_size;
	return ckpt_timers_restore(q->timers, &q->why);
}

/*
 * Past the point of no return: the image's memory and exe file replace
 * the restarter's, every thread's XSAVE state is written, the holder (if
 * any) says go, and the main thread's work is queued. A failure from here
 * kills the process.
 */
static int restore(struct ckpt_restart_req *q)
{
	struct ckpt_restart_ctx *ctx = q->ctx;
	int ret;

	q->fatal = true;
	ckpt_thread_release_fpu();
	ret = ckpt_mm_restore(&q->r, q->proc, q->vmas, q->hdr->nr_vmas,
			      &q->root, &q->of, q->proxy, q->uffd, &q->why);
	if (!ret && q->uffd)
		ret = ckpt_lazy_register(q->uffd, q->vmas, q->hdr->nr_vmas,
					 &q->why);
	if (ret)
		return ret;
	/* The restarter's binary is no longer mapped: /proc/PID/exe. */
	ckpt_exe_set(q->exe);
	q->exe = NULL;

	INIT_WORK(&ctx->fpu_work, fpu_work_fn);
	queue_work(system_unbound_wq, &ctx->fpu_work);
	flush_work(&ctx->fpu_work);
	if (ctx->fpu_err) {
		q->why.msg = "cannot load the threads' FPU state";
		return ctx->fpu_err;
	}
	if (q->hold) {
		ret = ckpt_hold_wait(q->hold, &q->why);
		if (ret)
			return ret;
	}

	ret = queue_restore(q->dev, q->own);
	if (!ret) {
		q->own = NULL;
		close_obj_fds(&q->of);
	}
	return ret;
}

/* Drops what the request holds, whether it succeeded or not. */
static void put_req(struct ckpt_restart_req *q)
{
	struct ckpt_restart_ctx *ctx = q->ctx;

	if (q->uffd)
		fput(q->uffd);
	if (q->hold)
		fput(q->hold);
	ckpt_exe_put(q->exe);
	ckpt_fileobj_put_files(&q->of);
	if (q->root.mnt)
		path_put(&q->root);
	kfree(ctx->tasks);
	kfree(ctx->xstates);
	ctx->tasks = NULL;
	ctx->xstates = NULL;
	ckpt_reader_done(&q->r);
	free_work(q->own);
	if (q->cs)
		ckpt_creds_put(q->cs);
	free_threads(&q->it);
	kvfree(q->creds);
	kvfree(q->timers);
	kvfree(q->sched);
	kvfree(q->vmas);
	kvfree(q->vdso);
	kvfree(q->proxy);
	kvfree(q->proc);
	kvfree(q->hdr);
}

static int do_restart(struct ckpt_restart_req *q)
{
	const struct ckpt_restart *args = q->args;
	int ret;

	/* Before the image is read; match_threads() checks it again. */
	if (get_nr_threads(current) != args->nr_threads) {
		ckpt_whyf(&q->why,
			  "the restarting process has %d threads, of which %u take part",
			  get_nr_threads(current), args->nr_threads);
		return -EINVAL;
	}
	ret = ckpt_reader_init(&q->r, args->fd);
	if (ret) {
		q->why.msg = ret == -EBADF ?
			     "the image descriptor is not open for reading" :
			     "cannot compute image MACs (hmac(sha256))";
		return ret;
	}
	ret = get_inputs(q);
	if (!ret)
		ret = check_image(q);
	if (!ret)
		ret = gather_threads(q);
	if (!ret)
		ret = restore(q);
	put_req(q);
	return ret;
}

/* The arguments, checked before anything else: each refusal is named. */
static int check_args(const struct ckpt_restart *args)
{
	const char *why = NULL;
	int ret = -EINVAL;

	if (!may_restart()) {
		why = "restart needs CAP_CHECKPOINT_RESTORE in the initial user namespace";
		ret = -EPERM;
	} else if (args->timeout_ms > CKPT_TIMEOUT_MAX_MS) {
		why = "timeout_ms is above CKPT_TIMEOUT_MAX_MS";
	} else if (args->flags & ~__CKPT_RESTART_F_ALL || !args->nr_threads ||
		   args->nr_threads > CKPT_IMG_MAX_THREADS ||
		   args->nr_obj_fds > CKPT_RESTART_MAX_OBJ_FDS) {
		why = "bad flags, thread or file object count";
	} else if (!(args->flags & CKPT_RESTART_ROOT_FD) && args->root_fd) {
		why = "root_fd is set without CKPT_RESTART_ROOT_FD";
	} else if (!(args->flags & CKPT_RESTART_LAZY) &&
		   (args->uffd || args->flags & CKPT_RESTART_LAZY_UNTIED)) {
		why = "uffd or CKPT_RESTART_LAZY_UNTIED is set without CKPT_RESTART_LAZY";
	} else if (!(args->flags & CKPT_RESTART_HOLD) && args->hold_fd) {
		why = "hold_fd is set without CKPT_RESTART_HOLD";
	} else if (memchr_inv(args->reserved, 0, sizeof(args->reserved))) {
		why = "reserved fields must be 0";
	} else {
		return 0;
	}
	ckpt_put_errmsg(args->errmsg, args->errmsg_len, why);
	return ret;
}

long ckpt_ioctl_restart(struct file *file, struct ckpt_restart __user *uarg)
{
	struct ckpt_restart_req *q;
	struct ckpt_restart_ctx *ctx;
	struct ckpt_restart args;
	int ret;

	if (copy_from_user(&args, uarg, sizeof(args)))
		return -EFAULT;
	ret = check_args(&args);
	if (ret)
		return ret;
	ctx = get_ctx(file);
	if (!ctx)
		return -ENOMEM;
	q = kzalloc(sizeof(*q), GFP_KERNEL);
	if (!q)
		return -ENOMEM;
	/* One restart per open /dev/ckpt, ever: it is one process's. */
	mutex_lock(&ctx->lock);
	if (ctx->state || ctx->busy) {
		mutex_unlock(&ctx->lock);
		kfree(q);
		ckpt_put_errmsg(args.errmsg, args.errmsg_len,
				"a restart already ran or runs on this /dev/ckpt descriptor");
		return -EBUSY;
	}
	ctx->busy = true;
	mutex_unlock(&ctx->lock);

	q->dev = file;
	q->ctx = ctx;
	q->args = &args;
	ret = do_restart(q);

	/*
	 * Nothing of the restarter is left to return to: the kill comes
	 * first, so that the threads woken below die before user mode,
	 * where the image's memory (not their code) is now.
	 */
	if (ret && q->fatal)
		send_sig_info(SIGKILL, SEND_SIG_PRIV, current);
	mutex_lock(&ctx->lock);
	ctx->state = ret ? ret : 1;
	mutex_unlock(&ctx->lock);
	wake_up_all(&ctx->wq);

	if (ret && q->fatal) {
		if (q->err)
			late_error(q->err, q->why.msg);
	} else if (ret)
		ckpt_put_errmsg(args.errmsg, args.errmsg_len, q->why.msg);
	else
		close_restarter_fds(file, &args);
	if (q->err)
		fput(q->err);
	kfree(q);
	return ret;
}
