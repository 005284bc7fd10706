// SPDX-License-Identifier: GPL-2.0
/*
 * The file locks a frozen process holds (Documentation/engine.md, "File
 * locks"), read from the lock lists of the files it has open, so that the
 * restarter takes them again: flock() locks and open file description
 * locks are its open files', named by a descriptor of the open file;
 * fcntl()'s record locks are its file table's, named by a descriptor of
 * the file open for what the lock needs. A lock of another process on the
 * same file is not the image's. Refused by name: a lease, a lock on a
 * pipe, socket or device, and one the restart could not take again
 * through a descriptor of the image (a single process's standard
 * descriptors are the restarter's), but for a flock() lock of an open file
 * only mappings hold, which the restart takes on the file it maps at the
 * first of them (ckpt_locks_mark_vmas()).
 */

#include <linux/fdtable.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/dcache.h>
#include <linux/hash.h>
#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>

#include "fds.h"
#include "fileobj.h"
#include "locks.h"
#include "why.h"

/* What a walk found that the image cannot hold, named after the lock. */
enum {
	LK_OK, LK_LEASE, LK_KIND, LK_NO_ENTRY, LK_MODE, LK_MAPPED, LK_MAPS,
	LK_SHARED, LK_FULL
};

/*
 * The process's open files, hashed: a lock list is walked under its
 * spinlock, and may be long (every eventfd, epoll, signalfd and timerfd
 * has one inode, which anyone may put locks on), so each lock's owner is
 * looked up in constant time.
 */
#define LK_HASH_BITS	11
#define LK_HASH		(1U << LK_HASH_BITS)	/* 2 * CKPT_IMG_MAX_FILES */

struct lk_walk {
	struct ckpt_fds *scan;
	const struct file **set;	/* LK_HASH slots, NULL: free */
	struct ckpt_img_lock *out;
	u32 nr;
	struct file *stdio[3];		/* referenced: not in the image */
	int bad;			/* LK_* */
	u32 bad_entry;			/* LK_KIND, LK_MODE: the entry */
	const struct file *bad_file;	/* LK_NO_ENTRY, LK_LEASE: compared */
	struct file *mapped;		/* LK_MAPPED, _MAPS, _SHARED: referenced */
};

static bool lockable(u32 kind)
{
	return kind == CKPT_FILE_REGULAR || kind == CKPT_FILE_DIR ||
	       kind == CKPT_FILE_MEMFD || kind == CKPT_FILE_DELETED;
}

static void set_add(struct lk_walk *w, const struct file *file)
{
	u32 i = hash_ptr(file, LK_HASH_BITS);

	while (w->set[i] && w->set[i] != file)
		i = (i + 1) & (LK_HASH - 1);
	w->set[i] = file;
}

static bool ours(const struct lk_walk *w, const struct file *file)
{
	u32 i;

	for (i = hash_ptr(file, LK_HASH_BITS); w->set[i];
	     i = (i + 1) & (LK_HASH - 1))
		if (w->set[i] == file)
			return true;
	return false;
}

static bool mode_allows(const struct ckpt_img_file *f, u32 type)
{
	u32 acc = f->open_flags & O_ACCMODE;

	return type == CKPT_LOCK_READ ? acc != O_WRONLY : acc != O_RDONLY;
}

/*
 * The entry a lock names: the first (lowest) descriptor of @file or, for
 * a record lock (@file NULL), of @inode open for its @type.
 */
static void add(struct lk_walk *w, const struct file *file,
		const struct inode *inode, u16 kind, u16 type,
		loff_t start, loff_t end)
{
	const struct ckpt_fds *scan = w->scan;
	u32 i, first = scan->nr;

	if (w->bad)
		return;
	for (i = 0; i < scan->nr; i++) {
		const struct file *f = scan->seen[i];

		if (file ? f != file : file_inode(f) != inode)
			continue;
		if (first == scan->nr)
			first = i;
		if (lockable(scan->files[i].kind) &&
		    (file || mode_allows(&scan->files[i], type)))
			break;
	}
	if (i == scan->nr) {
		/* A tree's root's standard descriptor: the restarter's. */
		if (first < scan->nr && scan->files[first].kind == CKPT_FILE_STDIO)
			first = scan->nr;
		w->bad = first == scan->nr ? LK_NO_ENTRY :
			 lockable(scan->files[first].kind) ? LK_MODE : LK_KIND;
		w->bad_entry = first;
		/* No entry: the file is a standard descriptor's. */
		for (i = 0; !file && i < 3; i++)
			if (w->stdio[i] && file_inode(w->stdio[i]) == inode)
				file = w->stdio[i];
		for (i = 0; !file && i < scan->nr; i++)
			if (file_inode(scan->seen[i]) == inode)
				file = scan->seen[i];
		w->bad_file = file;
		return;
	}
	if (w->nr == CKPT_IMG_MAX_LOCKS) {
		w->bad = LK_FULL;
		return;
	}
	w->out[w->nr++] = (struct ckpt_img_lock){
		.fd = scan->files[i].fd, .kind = kind, .type = type,
		.start = start, .end = end,
	};
}

static u16 lock_type(unsigned char t)
{
	return t == F_RDLCK ? CKPT_LOCK_READ : CKPT_LOCK_WRITE;
}

/* Under the inode's lock list lock: the process's locks of @inode. */
static void walk_inode(struct lk_walk *w, const struct inode *inode,
		       struct file_lock_context *ctx)
{
	struct files_struct *table = w->scan->files_table;
	struct ckpt_lease *le;
	struct file_lock *fl;

	spin_lock(&ctx->flc_lock);
	ckpt_for_each_lock(fl, &ctx->flc_flock)
		if (ours(w, ckpt_lock_file(fl)))
			add(w, ckpt_lock_file(fl), NULL, CKPT_LOCK_FLOCK,
			    lock_type(ckpt_lock_type(fl)), 0, OFFSET_MAX);
	ckpt_for_each_lock(fl, &ctx->flc_posix) {
		if (ckpt_lock_flags(fl) & FL_OFDLCK) {
			if (ours(w, ckpt_lock_file(fl)))
				add(w, ckpt_lock_file(fl), NULL, CKPT_LOCK_OFD,
				    lock_type(ckpt_lock_type(fl)),
				    fl->fl_start, fl->fl_end);
		} else if (ckpt_lock_owner(fl) == table) {
			add(w, NULL, inode, CKPT_LOCK_POSIX,
			    lock_type(ckpt_lock_type(fl)),
			    fl->fl_start, fl->fl_end);
		}
	}
	ckpt_for_each_lock(le, &ctx->flc_lease)
		if (!w->bad && ours(w, ckpt_lock_file(le))) {
			w->bad = LK_LEASE;
			w->bad_file = ckpt_lock_file(le);
		}
	spin_unlock(&ctx->flc_lock);
}

/* Every inode the process's descriptors open, each once. */
static void walk_files(struct lk_walk *w)
{
	const struct ckpt_fds *scan = w->scan;
	struct file_lock_context *ctx;
	const struct inode *inode;
	u32 i, j;

	for (i = 0; i < 3 + scan->nr && !w->bad; i++) {
		const struct file *f = i < 3 ? w->stdio[i] : scan->seen[i - 3];

		if (!f)
			continue;
		inode = file_inode(f);
		ctx = locks_inode_context(inode);
		if (!ctx)
			continue;
		for (j = 0; j < i; j++) {
			const struct file *g = j < 3 ? w->stdio[j] :
					       scan->seen[j - 3];

			if (g && file_inode(g) == inode)
				break;
		}
		if (j == i)
			walk_inode(w, inode, ctx);
		cond_resched();
	}
}

/* Whether @file is one of the flock()ed files of the process's mappings. */
static bool flock_mapped(const struct ckpt_fds *scan, const struct file *file)
{
	u32 i;

	for (i = 0; i < scan->nr_flock_maps; i++)
		if (scan->flock_maps[i] == file)
			return true;
	return false;
}

/*
 * Under the mmap lock: refused, a flocked open file of the process's
 * mappings that anything but those mappings holds (a child forked with
 * it mapped: the restart makes one open file for each process, whose
 * locks would conflict; or the kernel for a moment). Each mapping holds
 * one reference to its file; the engine holds none.
 */
static void held_elsewhere(struct lk_walk *w, struct mm_struct *mm)
{
	const struct ckpt_fds *scan = w->scan;
	struct vm_area_struct *vma;
	u32 i;

	for (i = 0; i < scan->nr_flock_maps; i++) {
		VMA_ITERATOR(vmi, mm, 0);
		struct file *file = NULL;
		long n = 0;

		for_each_vma(vmi, vma) {
			if (vma->vm_file != scan->flock_maps[i])
				continue;
			file = vma->vm_file;
			n++;
		}
		/* A reader of the moment (the kernel's) may come and go. */
		if (file && !ckpt_file_refs_are(file, n)) {
			w->bad = LK_SHARED;
			w->mapped = get_file(file);
			return;
		}
	}
}

/*
 * Locks on open files the process holds through mappings only (no
 * descriptor): a flock() lock is kept, its file noted for
 * ckpt_locks_mark_vmas() (a JVM's hsperfdata file: opened, mapped, locked
 * and closed); an open file description lock or a lease is refused.
 */
static void walk_mappings(struct lk_walk *w, struct mm_struct *mm)
{
	VMA_ITERATOR(vmi, mm, 0);
	struct ckpt_fds *scan = w->scan;
	const struct file *last = NULL;
	struct vm_area_struct *vma;

	mmap_read_lock(mm);
	for_each_vma(vmi, vma) {
		struct file_lock_context *ctx;
		struct file *file = vma->vm_file;
		struct ckpt_lease *le;
		struct file_lock *fl;
		bool other = false;
		u32 flag = 0;

		/* A file's mappings are often side by side: one look each. */
		if (!file || file == last || ours(w, file) ||
		    flock_mapped(scan, file))
			continue;
		last = file;
		ctx = locks_inode_context(file_inode(file));
		if (!ctx)
			continue;
		spin_lock(&ctx->flc_lock);
		ckpt_for_each_lock(fl, &ctx->flc_flock)
			if (ckpt_lock_file(fl) == file)
				flag = ckpt_lock_type(fl) == F_RDLCK ?
				       CKPT_VMA_FLOCK_READ : CKPT_VMA_FLOCK_WRITE;
		ckpt_for_each_lock(fl, &ctx->flc_posix)
			other |= ckpt_lock_file(fl) == file &&
				 ckpt_lock_flags(fl) & FL_OFDLCK;
		ckpt_for_each_lock(le, &ctx->flc_lease)
			other |= ckpt_lock_file(le) == file;
		spin_unlock(&ctx->flc_lock);
		if (other || (flag && scan->nr_flock_maps == CKPT_IMG_MAX_FLOCK_MAPS)) {
			w->bad = other ? LK_MAPPED : LK_MAPS;
			w->mapped = get_file(file);
			break;
		}
		if (flag) {
			scan->flock_maps[scan->nr_flock_maps] = file;
			scan->flock_map_flag[scan->nr_flock_maps++] = flag;
		}
		cond_resched();
	}
	if (!w->bad)
		held_elsewhere(w, mm);
	mmap_read_unlock(mm);
}

static int get_stdio(const void *p, struct file *file, unsigned int fd)
{
	struct lk_walk *w = (struct lk_walk *)p;

	if (fd > 2)
		return 1;
	w->stdio[fd] = get_file(file);
	return 0;
}

/* Why the walk stopped, naming the process, the descriptor and the file. */
static int refuse(const struct lk_walk *w, pid_t pid, struct ckpt_why *why)
{
	const struct ckpt_img_file *f = &w->scan->files[w->bad_entry];
	const struct file *file = w->mapped ?: w->bad_file;
	char *buf = NULL, *p = "?";

	if (file) {
		buf = kmalloc(PATH_MAX, GFP_KERNEL);
		p = buf ? d_path(&file->f_path, buf, PATH_MAX) : NULL;
		if (IS_ERR_OR_NULL(p))
			p = "?";
	}
	switch (w->bad) {
	case LK_LEASE:
		ckpt_whyf(why, "pid %d holds a lease on %s: not supported", pid, p);
		break;
	case LK_KIND:
		ckpt_whyf(why, "pid %d fd %u (%s) holds a file lock: only a file's (regular, directory, memfd, deleted) can be taken again",
			  pid, f->fd, f->path);
		break;
	case LK_MODE:
		ckpt_whyf(why, "pid %d holds a record lock on %s (fd %u) that no descriptor of it is open for now",
			  pid, f->path, f->fd);
		break;
	case LK_NO_ENTRY:
		ckpt_whyf(why, "pid %d holds a lock on %s through a standard descriptor only, which the restart replaces: not supported",
			  pid, p);
		break;
	case LK_MAPPED:
		ckpt_whyf(why, "pid %d holds an open file description lock or a lease on %s through a mapping only, which the restart cannot take again: not supported",
			  pid, p);
		break;
	case LK_SHARED:
		ckpt_whyf(why, "pid %d holds a flock() lock on %s through a mapping only, and something else holds that open file too (a child forked with it mapped): not supported",
			  pid, p);
		break;
	case LK_MAPS:
		ckpt_whyf(why, "pid %d holds flock() locks through mappings only on more than %u files (%s the first past them)",
			  pid, CKPT_IMG_MAX_FLOCK_MAPS, p);
		kfree(buf);
		return -E2BIG;
	default:
		ckpt_whyf(why, "pid %d holds more than %u file locks", pid,
			  CKPT_IMG_MAX_LOCKS);
		kfree(buf);
		return -E2BIG;
	}
	kfree(buf);
	return -EOPNOTSUPP;
}

int ckpt_locks_capture(struct task_struct *task, struct mm_struct *mm,
		       struct ckpt_fds *scan, struct ckpt_why *why)
{
	struct lk_walk w = { .scan = scan };
	int ret = 0;
	u32 i;

	scan->nr_flock_maps = 0;

	/* More slots than files (at most half full): a probe ends. */
	BUILD_BUG_ON(LK_HASH < 2 * CKPT_IMG_MAX_FILES);
	w.out = kvcalloc(CKPT_IMG_MAX_LOCKS, sizeof(*w.out), GFP_KERNEL);
	w.set = kvcalloc(LK_HASH, sizeof(*w.set), GFP_KERNEL);
	if (!w.out || !w.set) {
		kvfree(w.out);
		kvfree(w.set);
		return -ENOMEM;
	}
	/* Not in a single process's image: the restart gives it others. */
	if (!scan->all_fds) {
		task_lock(task);
		if (task->files)
			iterate_fd(task->files, 0, get_stdio, &w);
		task_unlock(task);
	}
	for (i = 0; i < 3; i++)
		if (w.stdio[i])
			set_add(&w, w.stdio[i]);
	for (i = 0; i < scan->nr; i++)
		set_add(&w, scan->seen[i]);
	walk_files(&w);
	if (!w.bad && mm)
		walk_mappings(&w, mm);
	if (w.bad)
		ret = refuse(&w, task_tgid_vnr(task), why);
	if (w.mapped)
		fput(w.mapped);
	for (i = 0; i < 3; i++)
		if (w.stdio[i])
			fput(w.stdio[i]);
	kvfree(w.set);
	if (ret || !w.nr) {
		kvfree(w.out);
		return ret;
	}
	scan->locks = w.out;
	scan->nr_locks = w.nr;
	return 0;
}

/*
 * Whether @file (a mapping's, held by it) carries a flock() lock of the
 * kind @flag says: the open file walk_mappings() saw, not another one
 * made since at the same address.
 */
static bool still_flocked(struct file *file, u32 flag)
{
	struct file_lock_context *ctx = locks_inode_context(file_inode(file));
	struct file_lock *fl;
	bool found = false;

	if (!ctx)
		return false;
	spin_lock(&ctx->flc_lock);
	ckpt_for_each_lock(fl, &ctx->flc_flock)
		found |= ckpt_lock_file(fl) == file &&
			 (ckpt_lock_type(fl) == F_RDLCK) ==
			 (flag == CKPT_VMA_FLOCK_READ);
	spin_unlock(&ctx->flc_lock);
	return found;
}

int ckpt_locks_mark_vmas(const struct ckpt_fds *scan, struct mm_struct *mm,
			 struct ckpt_img_vma *vmas, u32 nr_vmas, pid_t pid,
			 struct ckpt_why *why)
{
	struct vm_area_struct *vma;
	int ret = 0;
	u32 i, n;

	if (!scan->nr_flock_maps)
		return 0;
	mmap_read_lock(mm);
	for (i = 0; i < scan->nr_flock_maps && !ret; i++) {
		VMA_ITERATOR(vmi, mm, 0);

		n = 0;
		for_each_vma(vmi, vma) {
			if (vma->vm_file == scan->flock_maps[i])
				break;
			n++;
		}
		/* The process is frozen: its mappings are those captured. */
		if (!vma || n >= nr_vmas || vmas[n].start != vma->vm_start) {
			ckpt_whyf(why, "pid %d: the mappings of a file it holds a flock() lock on through them changed while it was captured",
				  pid);
			ret = -EAGAIN;
		} else if (!(vmas[n].flags & CKPT_VMA_FILE)) {
			ckpt_whyf(why, "pid %d holds a flock() lock through mapping %llx-%llx (%s) only, whose file the image does not keep: not supported",
				  pid, vmas[n].start, vmas[n].end, vmas[n].path);
			ret = -EOPNOTSUPP;
		} else if (!still_flocked(vma->vm_file,
					  scan->flock_map_flag[i])) {
			ckpt_whyf(why, "pid %d: its flock() lock on %s (mapped at %llx) changed while it was captured",
				  pid, vmas[n].path, vmas[n].start);
			ret = -EAGAIN;
		} else {
			vmas[n].flags |= scan->flock_map_flag[i];
		}
	}
	mmap_read_unlock(mm);
	return ret;
}

int ckpt_locks_take_mapped(struct file *file, const struct ckpt_img_vma *v,
			   unsigned int *tries, struct ckpt_why *why)
{
	bool ex = v->flags & CKPT_VMA_FLOCK_WRITE;
	struct file_lock fl;
	int ret;

	if (!(v->flags & (CKPT_VMA_FLOCK_READ | CKPT_VMA_FLOCK_WRITE)))
		return 0;
	/*
	 * A stacked file system (overlayfs) maps the file beneath: the lock
	 * would be on a file the mapping does not hold, gone once put.
	 */
	if (d_real_inode(file->f_path.dentry) != file_inode(file)) {
		ckpt_whyf(why, "cannot take its flock() lock on %s (mapped at %llx) again: it is on a stacked file system now, whose mapping holds the file beneath",
			  v->path, v->start);
		return -EOPNOTSUPP;
	}
	/*
	 * As flock(2) makes one (without its LSM hook, which modules do not
	 * get), not waiting in the kernel: a holder of a moment (a monitor's
	 * flock -n) is waited for, the restart's @tries of CKPT_LOCK_NAP_MS.
	 */
	locks_init_lock(&fl);
	ckpt_lock_file(&fl) = file;
	ckpt_lock_owner(&fl) = file;
	ckpt_lock_pid(&fl) = current->tgid;
	ckpt_lock_flags(&fl) = FL_FLOCK;
	ckpt_lock_type(&fl) = ex ? F_WRLCK : F_RDLCK;
	fl.fl_end = OFFSET_MAX;
	for (;;) {
		if (file->f_op->flock)
			ret = file->f_op->flock(file, F_SETLK, &fl);
		else
			ret = locks_lock_inode_wait(file_inode(file), &fl);
		if (ret != -EAGAIN || !*tries)
			break;
		--*tries;
		if (schedule_timeout_killable(msecs_to_jiffies(CKPT_LOCK_NAP_MS)) ||
		    fatal_signal_pending(current)) {
			ret = -EINTR;
			break;
		}
	}
	locks_release_private(&fl);
	if (ret == -EINTR) {
		ckpt_whyf(why, "killed while waiting to take its flock() lock on %s (mapped at %llx) again",
			  v->path, v->start);
		return ret;
	}
	if (ret == -EAGAIN) {
		ckpt_whyf(why, "cannot take its flock() %s lock on %s (mapped at %llx) again: another process holds a lock on it now",
			  ex ? "write" : "read", v->path, v->start);
		return -EBUSY;
	}
	if (ret)
		ckpt_whyf(why, "cannot take its flock() %s lock on %s (mapped at %llx) again: error %d",
			  ex ? "write" : "read", v->path, v->start, ret);
	return ret;
}
