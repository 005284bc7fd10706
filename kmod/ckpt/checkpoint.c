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
#include <linux/fdtable.h>
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
#include "fdinfo.h"
#include "fileobj.h"
#include "freeze.h"
#include "image.h"
#include "layout.h"
#include "mm.h"
#include "pipes.h"
#include "signals.h"
#include "timers.h"

#define CKPT_DEFAULT_TIMEOUT_MS	10000
#define WHY_LEN			256

void ckpt_put_errmsg(u64 ubuf, u32 len, const char *msg)
{
	char buf[WHY_LEN];

	if (!ubuf || !len || !msg)
		return;
	strscpy(buf, msg, min_t(u32, len, sizeof(buf)));
	if (copy_to_user(u64_to_user_ptr(ubuf), buf, strlen(buf) + 1))
		return;
}

/*
 * The rights of ptrace-attaching, asked of the kernel (access.c), before
 * anything is frozen or asked of the process. A process cannot checkpoint
 * itself this way: its own threads would have to park.
 */
static int may_checkpoint(struct task_struct *task, struct file **pagemap,
			  const char **why, char *whybuf)
{
	int ret;

	if (same_thread_group(task, current)) {
		*why = "a process cannot checkpoint itself this way";
		return -EDEADLK;
	}
	ret = ckpt_access_check(task, pagemap, whybuf, WHY_LEN);
	if (ret)
		*why = whybuf;
	return ret;
}

struct fd_scan {
	struct ckpt_img_file *files;	/* CKPT_IMG_MAX_FILES of them */
	struct file **refs;		/* files needing more, referenced */
	const struct file **seen;	/* per entry: its open file, unreferenced */
	unsigned long *raw_ino;		/* per entry: the inode behind it */
	u32 *raw_dev;
	struct ckpt_img_epitem *epitems;	/* CKPT_IMG_MAX_EPITEMS */
	unsigned long *ep_ino;		/* per item: the watched file */
	u32 *ep_dev;
	u32 nr_epitems;
	struct ckpt_img_timerfd *timerfds;	/* CKPT_IMG_MAX_FILES */
	u32 nr_timerfds;
	struct ckpt_fileobjs objs;	/* FIFOs, memfds, deleted files */
	struct ckpt_img_pipe **pipes;	/* CKPT_IMG_MAX_FILES: PIPE sections */
	size_t *pipe_len;
	u32 nr_pipes;
	u32 nr;
	struct files_struct *files_table;
	unsigned int bad_fd;
	struct file *bad;		/* referenced */
	const struct file *registered;	/* the process's registration */
};

/*
 * The entry of a lower descriptor whose open file is @file, if that one
 * can be restored by a dup() of it: not a pipe end (a pipe's ends are
 * shared by its PIPE section). A copy of /dev/ckpt is one: the open file
 * carries libckpt's registration, which the restarter makes once.
 */
static const struct ckpt_img_file *shares(const struct fd_scan *scan,
					  const struct file *file)
{
	const struct ckpt_img_file *o;
	u32 j;

	/* Only the descriptor table holds a file no lower descriptor has. */
	if (file_count(file) < 2)
		return NULL;
	for (j = 0; j < scan->nr; j++) {
		if (scan->seen[j] != file)
			continue;
		o = &scan->files[j];
		return o->kind == CKPT_FILE_PIPE ? NULL : o;
	}
	return NULL;
}

/*
 * Under the file table's lock: each descriptor is recorded, as another
 * descriptor of a lower one's open file, or by its kind (regular files by
 * path, flags, position and identity); a kind the engine does not know
 * stops the scan. Inherited stdio is re-attached to the restarter's, as
 * BLCR did.
 */
static int scan_fd(const void *arg, struct file *file, unsigned int fd)
{
	struct fd_scan *scan = (struct fd_scan *)arg;
	struct inode *inode = file_inode(file);
	const struct ckpt_img_file *o;
	struct ckpt_img_file *f;
	char *p;

	if (fd <= 2)
		return 0;
	if (scan->nr == CKPT_IMG_MAX_FILES)
		goto bad;
	f = &scan->files[scan->nr];
	scan->raw_ino[scan->nr] = inode->i_ino;
	scan->raw_dev[scan->nr] = inode->i_sb->s_dev;
	scan->seen[scan->nr] = file;
	o = shares(scan, file);
	if (o) {
		/* Its state is its lower descriptor's. */
		f->fd = fd;
		f->kind = CKPT_FILE_SHARED;
		f->ino = o->fd;
		f->open_flags = o->open_flags;
		f->flags = ckpt_fd_cloexec(scan->files_table, fd) ?
			   CKPT_FILE_CLOEXEC : 0;
		memcpy(f->path, o->path, sizeof(f->path));
		scan->refs[scan->nr] = get_file(file);	/* a FIFO's, a memfd's use */
		scan->nr++;
		return 0;
	}
	if (ckpt_is_dev_file(file)) {
		strscpy(f->path, "/dev/" CKPT_DEVICE_NAME, sizeof(f->path));
		f->fd = fd;
		f->kind = CKPT_FILE_CKPT_DEV;
		f->open_flags = file->f_flags & O_ACCMODE;
		f->flags = ckpt_fd_cloexec(scan->files_table, fd) ?
			   CKPT_FILE_CLOEXEC : 0;
		if (file == scan->registered)
			f->flags |= CKPT_FILE_REGISTERED;
		scan->nr++;
		return 0;
	}
	if (S_ISCHR(inode->i_mode)) {
		/* Devices whose state is nothing but being open. */
		switch (inode->i_rdev) {
		case MKDEV(1, 3):	/* null */
		case MKDEV(1, 5):	/* zero */
		case MKDEV(1, 7):	/* full */
		case MKDEV(1, 8):	/* random */
		case MKDEV(1, 9):	/* urandom */
			break;
		default:
			goto bad;
		}
		p = d_path(&file->f_path, f->path, sizeof(f->path));
		if (IS_ERR(p) || *p != '/')
			goto bad;
		memmove(f->path, p, strlen(p) + 1);
		f->fd = fd;
		f->kind = CKPT_FILE_CHR;
		f->open_flags = file->f_flags & (O_ACCMODE | O_NONBLOCK);
		f->flags = ckpt_fd_cloexec(scan->files_table, fd) ?
			   CKPT_FILE_CLOEXEC : 0;
		f->dev = new_encode_dev(inode->i_rdev);
		scan->nr++;
		return 0;
	}
	if (ckpt_is_pipe(file)) {
		f->kind = CKPT_FILE_PIPE;
		f->fd = fd;
		f->ino = inode->i_ino;
		f->open_flags = file->f_flags & (O_ACCMODE | O_NONBLOCK);
		f->flags = ckpt_fd_cloexec(scan->files_table, fd) ?
			   CKPT_FILE_CLOEXEC : 0;
		snprintf(f->path, sizeof(f->path), "pipe:[%lu]", inode->i_ino);
		scan->refs[scan->nr] = get_file(file);
		scan->nr++;
		return 0;
	}
	if (S_ISFIFO(inode->i_mode)) {
		/* A named pipe: reopened by path, its bytes in the image. */
		p = d_path(&file->f_path, f->path, sizeof(f->path));
		if (IS_ERR(p) || ckpt_fileobj_kind(file, p) != CKPT_FILE_FIFO)
			goto bad;
		memmove(f->path, p, strlen(p) + 1);
		f->kind = CKPT_FILE_FIFO;
		f->fd = fd;
		f->open_flags = file->f_flags & (O_ACCMODE | O_NONBLOCK);
		f->flags = ckpt_fd_cloexec(scan->files_table, fd) ?
			   CKPT_FILE_CLOEXEC : 0;
		scan->refs[scan->nr] = get_file(file);
		scan->nr++;
		return 0;
	}
	if (ckpt_anon_kind(file) >= 0) {
		/* eventfd, signalfd, epoll: their state is read after the scan. */
		f->kind = ckpt_anon_kind(file);
		f->fd = fd;
		f->open_flags = file->f_flags & (O_ACCMODE | O_NONBLOCK);
		f->flags = ckpt_fd_cloexec(scan->files_table, fd) ?
			   CKPT_FILE_CLOEXEC : 0;
		snprintf(f->path, sizeof(f->path), "anon_inode:%s",
			 file->f_path.dentry->d_name.name);
		scan->refs[scan->nr] = get_file(file);
		scan->nr++;
		return 0;
	}
	if (!S_ISREG(inode->i_mode) && !S_ISDIR(inode->i_mode))
		goto bad;
	if (S_ISDIR(inode->i_mode))
		f->kind = CKPT_FILE_DIR;
	p = d_path(&file->f_path, f->path, sizeof(f->path));
	if (IS_ERR(p) || *p != '/')
		goto bad;
	if (strstr(p, " (deleted)")) {
		/* A memfd or an unlinked file: the image carries its content. */
		int kind = ckpt_fileobj_kind(file, p);

		if (kind != CKPT_FILE_MEMFD && kind != CKPT_FILE_DELETED)
			goto bad;
		f->kind = kind;
	}
	memmove(f->path, p, strlen(p) + 1);
	f->fd = fd;
	f->open_flags = file->f_flags & (O_ACCMODE | O_APPEND | O_NONBLOCK |
					 O_SYNC);
	f->flags = ckpt_fd_cloexec(scan->files_table, fd) ? CKPT_FILE_CLOEXEC : 0;
	f->pos = file->f_pos;
	scan->refs[scan->nr] = get_file(file);	/* identity: after the scan */
	scan->nr++;
	return 0;
bad:
	scan->bad_fd = fd;
	scan->bad = get_file(file);
	return 1;
}

/* Every epoll item must watch a descriptor the image restores as it was. */
static int check_epitems(struct fd_scan *scan, char *whybuf)
{
	u32 i, j;

	for (i = 0; i < scan->nr_epitems; i++) {
		const struct ckpt_img_epitem *e = &scan->epitems[i];

		if (e->tfd <= 2)
			continue;	/* re-attached with the stdio */
		for (j = 0; j < scan->nr; j++)
			if (scan->files[j].fd == e->tfd)
				break;
		if (j == scan->nr || scan->raw_ino[j] != scan->ep_ino[i] ||
		    scan->raw_dev[j] != scan->ep_dev[i]) {
			snprintf(whybuf, WHY_LEN,
				 "epoll fd %u watches fd %u, which is closed or now another file",
				 e->epfd, e->tfd);
			return -EOPNOTSUPP;
		}
	}
	return 0;
}

/*
 * A pipe whose every end is open here only: once per pipe, at its first
 * entry @i. Each end's open files must all be this process's descriptors
 * (the scan holds one more reference per descriptor), else an end is in
 * another process (shared by fork, say) and the pipe cannot be restored.
 */
static int capture_pipe(struct fd_scan *scan, u32 i, char *whybuf)
{
	struct file *distinct[2] = {};
	unsigned int ends[2] = {}, fds[2] = {};
	u32 j;
	int ret;

	for (j = 0; j < i; j++)
		if (scan->files[j].kind == CKPT_FILE_PIPE &&
		    scan->files[j].ino == scan->files[i].ino)
			return 0;	/* done at its first entry */
	for (j = i; j < scan->nr; j++) {
		const struct ckpt_img_file *f = &scan->files[j];
		int end = (f->open_flags & O_ACCMODE) == O_WRONLY;

		if (f->kind != CKPT_FILE_PIPE || f->ino != scan->files[i].ino)
			continue;
		if ((f->open_flags & O_ACCMODE) == O_RDWR ||
		    (distinct[end] && distinct[end] != scan->refs[j]))
			goto elsewhere;	/* reopened through /proc: not yet */
		distinct[end] = scan->refs[j];
		ends[end] = 1;
		fds[end]++;
	}
	for (j = 0; j < 2; j++)
		if (distinct[j] && file_count(distinct[j]) != 2 * fds[j])
			goto elsewhere;
	ret = ckpt_pipe_capture(scan->refs[i], ends[0], ends[1],
				&scan->pipes[scan->nr_pipes],
				&scan->pipe_len[scan->nr_pipes]);
	if (ret == -EXDEV)
		goto elsewhere;
	if (ret == -ENOPKG) {
		snprintf(whybuf, WHY_LEN, "fd %u is a pipe, which this engine cannot read on this kernel (%s)",
			 scan->files[i].fd, ckpt_layout_why(CKPT_LAYOUT_PIPES));
		return -EOPNOTSUPP;
	}
	if (ret) {
		snprintf(whybuf, WHY_LEN, "cannot read pipe fd %u%s",
			 scan->files[i].fd,
			 ret == -EOPNOTSUPP ? " (packet mode)" : "");
		return ret == -EOPNOTSUPP ? ret : -EIO;
	}
	scan->nr_pipes++;
	return 0;
elsewhere:
	snprintf(whybuf, WHY_LEN,
		 "fd %u (pipe:[%llu]) has an end open in another process: not supported yet",
		 scan->files[i].fd, scan->files[i].ino);
	return -EOPNOTSUPP;
}

/* The kind of the lower descriptor shared entry @i names. */
static int lower_kind(const struct fd_scan *scan, u32 i)
{
	u32 j;

	for (j = 0; j < i; j++)
		if (scan->files[j].fd == scan->files[i].ino)
			return scan->files[j].kind;
	return -1;
}

/*
 * What the scan could not read under the file table's lock: the device
 * and inode numbers stat() shows (on overlayfs they are not those of the
 * inode behind the file), and the state of eventfd, signalfd and epoll
 * files.
 */
static int file_details(struct fd_scan *scan, char *whybuf)
{
	struct kstat st;
	int ret = 0, kind;
	u32 i;

	/* Pipes first: they look at all their descriptors' files at once. */
	for (i = 0; !ret && i < scan->nr; i++)
		if (scan->files[i].kind == CKPT_FILE_PIPE)
			ret = capture_pipe(scan, i, whybuf);

	for (i = 0; i < scan->nr; i++) {
		struct ckpt_img_file *f = &scan->files[i];
		struct file *file = scan->refs[i];

		if (!file)
			continue;
		if (ret || f->kind == CKPT_FILE_PIPE)
			goto put;
		switch (f->kind) {
		case CKPT_FILE_EVENTFD:
			ret = ckpt_fdinfo_eventfd(file, &f->pos, &f->ino);
			if (ret == -ENOPKG) {
				snprintf(whybuf, WHY_LEN, "fd %u is an eventfd, whose mode this engine cannot read on this kernel (%s)",
					 f->fd, ckpt_layout_why(CKPT_LAYOUT_EVENTFD));
				ret = -EOPNOTSUPP;
				goto put;
			}
			break;
		case CKPT_FILE_SIGNALFD:
			ret = ckpt_fdinfo_signalfd(file, &f->dev);
			break;
		case CKPT_FILE_TIMERFD:
			scan->timerfds[scan->nr_timerfds].fd = f->fd;
			ret = ckpt_fdinfo_timerfd(file,
					&scan->timerfds[scan->nr_timerfds]);
			if (!ret)
				scan->nr_timerfds++;
			break;
		case CKPT_FILE_EPOLL:
			ret = ckpt_fdinfo_epoll(file, f->fd, scan->epitems,
						CKPT_IMG_MAX_EPITEMS,
						&scan->nr_epitems, scan->ep_ino,
						scan->ep_dev);
			break;
		case CKPT_FILE_FIFO:
		case CKPT_FILE_MEMFD:
		case CKPT_FILE_DELETED:
			/* Named by its object; checked once mappings are known. */
			ret = ckpt_fileobj_add(&scan->objs, file, f->kind,
					       f->path, f->fd);
			if (ret >= 0) {
				f->ino = ret;
				ret = 0;
			}
			break;
		case CKPT_FILE_SHARED:
			/* One more descriptor of an object's open file. */
			kind = lower_kind(scan, i);
			if (kind >= CKPT_FILE_FIFO && kind <= CKPT_FILE_DELETED)
				ret = ckpt_fileobj_add(&scan->objs, file, kind,
						       f->path, f->fd);
			ret = min(ret, 0);
			break;
		default:
			ret = vfs_getattr(&file->f_path, &st, STATX_INO,
					  AT_STATX_SYNC_AS_STAT);
			if (!ret) {
				f->dev = new_encode_dev(st.dev);
				f->ino = st.ino;
			}
		}
		if (ret)
			snprintf(whybuf, WHY_LEN, "cannot read the state of fd %u (%.64s)%s",
				 f->fd, f->path,
				 ret != -E2BIG ? "" : f->kind == CKPT_FILE_EPOLL ?
				 ": too many epoll items" :
				 ": too many FIFOs, memfds and deleted files");
put:
		fput(file);
		scan->refs[i] = NULL;
	}
	if (!ret)
		ret = check_epitems(scan, whybuf);
	return ret;
}

static int capture_files(struct task_struct *task, struct fd_scan *scan,
			 const struct ckpt_reg *reg, const char **why,
			 char *whybuf)
{
	char *path, *p;
	int ret;

	scan->files = kvcalloc(CKPT_IMG_MAX_FILES, sizeof(*scan->files),
			       GFP_KERNEL);
	scan->refs = kvcalloc(CKPT_IMG_MAX_FILES, sizeof(*scan->refs),
			      GFP_KERNEL);
	scan->raw_ino = kvcalloc(CKPT_IMG_MAX_FILES, sizeof(*scan->raw_ino),
				 GFP_KERNEL);
	scan->raw_dev = kvcalloc(CKPT_IMG_MAX_FILES, sizeof(*scan->raw_dev),
				 GFP_KERNEL);
	scan->seen = kvcalloc(CKPT_IMG_MAX_FILES, sizeof(*scan->seen),
			      GFP_KERNEL);
	scan->epitems = kvcalloc(CKPT_IMG_MAX_EPITEMS, sizeof(*scan->epitems),
				 GFP_KERNEL);
	scan->ep_ino = kvcalloc(CKPT_IMG_MAX_EPITEMS, sizeof(*scan->ep_ino),
				GFP_KERNEL);
	scan->ep_dev = kvcalloc(CKPT_IMG_MAX_EPITEMS, sizeof(*scan->ep_dev),
				GFP_KERNEL);
	scan->pipes = kvcalloc(CKPT_IMG_MAX_FILES, sizeof(*scan->pipes),
			       GFP_KERNEL);
	scan->timerfds = kvcalloc(CKPT_IMG_MAX_FILES, sizeof(*scan->timerfds),
				  GFP_KERNEL);
	scan->pipe_len = kvcalloc(CKPT_IMG_MAX_FILES, sizeof(*scan->pipe_len),
				  GFP_KERNEL);
	if (!scan->files || !scan->refs || !scan->raw_ino || !scan->raw_dev ||
	    !scan->seen || !scan->epitems || !scan->ep_ino || !scan->ep_dev ||
	    !scan->pipes || !scan->pipe_len || !scan->timerfds)
		return -ENOMEM;
	ret = ckpt_fileobjs_init(&scan->objs);
	if (ret)
		return ret;
	scan->registered = ckpt_cb_file(reg);
	task_lock(task);
	scan->files_table = task->files;
	if (task->files)
		iterate_fd(task->files, 0, scan_fd, scan);
	task_unlock(task);
	ret = file_details(scan, whybuf);
	if (ret) {
		*why = whybuf;
		if (scan->bad)
			fput(scan->bad);
		scan->bad = NULL;
		return ret;
	}
	if (!scan->bad)
		return 0;

	path = kmalloc(PATH_MAX, GFP_KERNEL);
	p = path ? d_path(&scan->bad->f_path, path, PATH_MAX) : NULL;
	snprintf(whybuf, WHY_LEN, "pid %d fd %u (%s) cannot be checkpointed yet",
		 task_tgid_vnr(task), scan->bad_fd,
		 IS_ERR_OR_NULL(p) ? "?" : p);
	*why = whybuf;
	kfree(path);
	fput(scan->bad);
	scan->bad = NULL;
	return -EOPNOTSUPP;
}

/*
 * Other processes are not in the image: a restarted parent would find its
 * children gone (wait() failing, exit statuses lost) and a tracer its
 * tracees. So a process with a child, live or zombie, or a tracee is
 * refused, named. The one exception is the checkpointer itself: libckpt's
 * helper for a self-requested checkpoint is a child of the process. Runs
 * while frozen, so the process makes no new child meanwhile.
 */
static int check_relatives(struct task_struct *task, char *whybuf)
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
	snprintf(whybuf, WHY_LEN,
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
		      const char **why, char *whybuf)
{
	struct path pwd, root, myroot;
	struct kstat st;
	char *p;
	int ret;

	task_lock(task);
	if (!task->fs) {
		task_unlock(task);
		*why = "the process has no file system context (exiting)";
		return -ESRCH;
	}
	get_fs_pwd(task->fs, &pwd);
	get_fs_root(task->fs, &root);
	task_unlock(task);
	get_fs_root(current->fs, &myroot);

	ret = -EOPNOTSUPP;
	if (!path_is_under(&root, &myroot)) {
		snprintf(whybuf, WHY_LEN,
			 "the root directory of pid %d is outside the checkpointer's",
			 task_tgid_vnr(task));
		*why = whybuf;
		goto out;
	}
	if (path_equal(&root, &myroot)) {
		strscpy(fs->root, "/", sizeof(fs->root));
	} else {
		p = d_path(&root, fs->root, sizeof(fs->root));
		if (IS_ERR(p) || *p != '/' || d_unlinked(root.dentry)) {
			snprintf(whybuf, WHY_LEN,
				 "the root directory of pid %d was removed or is unreachable",
				 task_tgid_vnr(task));
			*why = whybuf;
			goto out;
		}
		memmove(fs->root, p, strlen(p) + 1);
	}
	ret = vfs_getattr(&root, &st, STATX_INO, AT_STATX_SYNC_AS_STAT);
	if (ret) {
		*why = "cannot read the identity of the root directory";
		goto out;
	}
	fs->root_dev = new_encode_dev(st.dev);
	fs->root_ino = st.ino;

	ret = -EOPNOTSUPP;
	p = d_path(&pwd, fs->cwd, sizeof(fs->cwd));
	if (IS_ERR(p) || *p != '/' || strstr(p, " (deleted)")) {
		snprintf(whybuf, WHY_LEN,
			 "the working directory of pid %d was removed or is unreachable",
			 task_tgid_vnr(task));
		*why = whybuf;
		goto out;
	}
	memmove(fs->cwd, p, strlen(p) + 1);
	ret = vfs_getattr(&pwd, &st, STATX_INO, AT_STATX_SYNC_AS_STAT);
	if (ret) {
		*why = "cannot read the identity of the working directory";
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
		       struct fd_scan *scan, const struct ckpt_img_fs *fs,
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

static int do_checkpoint(struct ckpt_checkpoint *a, const char **why,
			 char *whybuf)
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
	struct fd_scan scan = {};
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
		snprintf(whybuf, WHY_LEN, "no process with pid %u", a->pid);
		*why = whybuf;
		return -ESRCH;
	}
	/*
	 * The memory first: the rights are checked against the program that
	 * runs in it, and one exec'ed since is found once frozen.
	 */
	mm = get_task_mm(task);
	if (!mm) {
		snprintf(whybuf, WHY_LEN,
			 "pid %u has no memory (kernel thread or exiting)",
			 a->pid);
		*why = whybuf;
		ret = -ESRCH;
		goto out_put_task;
	}
	ret = may_checkpoint(task, &pagemap, why, whybuf);
	if (ret)
		goto out_put_mm;
	if (task->ptrace) {
		*why = "the process is being traced";
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
		*why = ret == -EBADF ? "the image descriptor is not open for writing" :
		       "cannot compute image MACs (hmac(sha256))";
		goto out_free;
	}

	/* libckpt's thread-context callbacks run before anything is frozen. */
	reg = ckpt_cb_find(task);
	if (reg) {
		ret = ckpt_cb_request(reg, a->flags, timeout, &req, whybuf,
				      WHY_LEN);
		if (ret) {
			*why = whybuf;
			goto out_writer;
		}
	}
	if (stage) {
		ret = ckpt_stage_prepare(&st, mm);
		if (ret)
			goto out_writer;
	}
	/* The callbacks and the freeze share the timeout. */
	if (!time_before(jiffies, deadline)) {
		snprintf(whybuf, WHY_LEN,
			 "the timeout (%u ms) passed before pid %u could be frozen",
			 timeout, a->pid);
		*why = whybuf;
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
		snprintf(whybuf, WHY_LEN,
			 "pid %d executed a program or exited during the checkpoint",
			 task_tgid_vnr(task));
		*why = whybuf;
		goto out_thaw;
	}

	for (i = 0; i < fz->nr; i++) {
		struct ckpt_parked *p = &fz->threads[i];

		if (p->exited || !p->ts.err)
			continue;
		ret = p->ts.err;
		snprintf(whybuf, WHY_LEN, "thread %d: %s", task_pid_vnr(p->task),
			 p->ts.why ?: "cannot capture its registers");
		*why = whybuf;
		goto out_thaw;
	}
	ret = capture_files(task, &scan, reg, why, whybuf);
	if (!ret)
		ret = capture_fs(task, fs, why, whybuf);
	if (!ret)
		ret = ckpt_exe_capture(mm, proc, task_tgid_vnr(task), why,
				       whybuf, WHY_LEN);
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
	ret = ckpt_capture_timers(task, tasks, fz->nr, &timers, whybuf, WHY_LEN);
	if (ret == -ESRCH)
		goto out_exited;
	if (ret) {
		*why = whybuf;
		goto out_thaw;
	}
	ret = ckpt_capture_signals(task, tasks, fz->nr, &timers, &sigs,
				   &sigs_len, why);
	if (ret == -ESRCH)
		goto out_exited;
	if (ret)
		goto out_thaw;
	ret = ckpt_mm_capture(task, mm, pagemap, &mc, proc, &scan.objs, why,
			      whybuf, WHY_LEN);
	if (ret)
		goto out_thaw;
	ret = ckpt_fileobjs_capture(&scan.objs, task_tgid_vnr(task), whybuf,
				    WHY_LEN);
	/* After the files: one shared with a child is named as such. */
	if (!ret)
		ret = check_relatives(task, whybuf);
	if (!ret)
		ret = ckpt_creds_capture(task, tasks, fz->nr, mm, &creds,
					 &creds_len, whybuf, WHY_LEN);
	if (ret) {
		*why = whybuf;
		goto out_thaw;
	}
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
			snprintf(whybuf, WHY_LEN,
				 "pid %u exited or executed a program during the checkpoint",
				 a->pid);
			*why = whybuf;
			ret = -ESRCH;
			goto out_thaw;
		}
		if (!*why)
			*why = "writing the image failed";
		goto out_thaw;
	}

	if (a->flags & CKPT_CHECKPOINT_KILL)
		send_sig_info(SIGKILL, SEND_SIG_PRIV, task);
	else if (a->flags & CKPT_CHECKPOINT_STOP)
		send_sig_info(SIGSTOP, SEND_SIG_PRIV, task);
	goto out_thaw;

out_exited:
	/* Killed and reaped while parked: the task has no pid of its own now. */
	snprintf(whybuf, WHY_LEN, "pid %u exited during the checkpoint", a->pid);
	*why = whybuf;
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
			*why = "writing the image failed (the process runs on)";
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
	kvfree(scan.files);
	kvfree(scan.refs);
	kvfree(scan.raw_ino);
	kvfree(scan.raw_dev);
	kvfree(scan.seen);
	kvfree(scan.epitems);
	kvfree(scan.ep_ino);
	kvfree(scan.ep_dev);
	for (i = 0; scan.pipes && i < scan.nr_pipes; i++)
		kvfree(scan.pipes[i]);
	kvfree(scan.pipes);
	kvfree(scan.pipe_len);
	kvfree(scan.timerfds);
	ckpt_fileobjs_free(&scan.objs);
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
	const char *why = NULL;
	char *whybuf;
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

	whybuf = kzalloc(WHY_LEN, GFP_KERNEL);
	if (!whybuf)
		return -ENOMEM;
	ret = do_checkpoint(&a, &why, whybuf);
	if (ret)
		ckpt_put_errmsg(a.errmsg, a.errmsg_len, why);
	kfree(whybuf);
	if (!ret && copy_to_user(uarg, &a, sizeof(a)))
		ret = -EFAULT;
	return ret;
}
