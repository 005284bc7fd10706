// SPDX-License-Identifier: GPL-2.0
/*
 * Files the image carries by content: FIFOs (reopened by path at restart,
 * or made anew if unlinked while open, their buffered bytes written back),
 * memfds and regular files unlinked while open (made anew at restart) and,
 * for a job's tree (CKPT_CHECKPOINT_LOCAL_FILES), regular files of the
 * node's own (a tmpfs; /tmp and /var/tmp on a local disk: node_local())
 * that it maps shared or holds readable, or
 * holds write-only and may read (fds.c, may_read()) (used at their path at
 * restart, made again where the path is gone).
 * One FILEOBJ entry per inode, however many descriptors and mappings name
 * it, so that a memfd mapped MAP_SHARED and open at a descriptor is one
 * file again after the restart.
 *
 * Such a file is restored as a private copy, so no other process may hold
 * it (but a tmpfs file: it has a name, which others may open, so its
 * content is a copy taken while the members are frozen, and one changed
 * meanwhile fails the checkpoint for now): every open file of it must be
 * referenced only by this process's descriptors and mappings
 * (file_count()), a memfd's or deleted file's dentry only by those files
 * (d_count()), and a FIFO's ends only by them (its reader and writer
 * counts). Otherwise the checkpoint is refused, naming the descriptor.
 *
 * Content is read through a file of our own (dentry_open(), read-only),
 * data extents only (SEEK_DATA/SEEK_HOLE): holes stay holes. It goes into
 * the image, which its checkpointer reads, only if the process holds the
 * file readable itself: a memfd or deleted file open write-only (handed
 * over by a more privileged process, say) is refused, as is a FIFO with
 * bytes buffered that the process holds only the write end of; a tmpfs
 * file held write-only is an object only if the process could open it
 * for reading (fds.c, may_read()), and stays by path otherwise.
 *
 * At restart, every file the engine maps for the restarted process (those
 * the restarter made for the file objects, and the files the image names
 * by path) is opened with the credentials the process will run with, and
 * only for the access its mapping needs: the checks open() makes (the
 * mode, ACLs, capabilities, LSMs, read-only and immutable files), never a
 * wider mode than the restarter's own descriptor had. An edited image can
 * thus give the process no file its user could not open itself.
 */

#include <linux/cred.h>
#include <linux/dcache.h>
#include <linux/delay.h>
#include <linux/ktime.h>
#include <linux/fcntl.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/fs_struct.h>
#include <linux/kdev_t.h>
#include <linux/magic.h>
#include <linux/mm.h>
#include <linux/mount.h>
#include <linux/namei.h>
#include <linux/nsproxy.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/shmem_fs.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "fileobj.h"
#include "image.h"
#include "layout.h"
#include "pipes.h"
#include "why.h"

#define MAX_USES	(4 * CKPT_IMG_MAX_FILEOBJS)


int ckpt_fileobjs_init(struct ckpt_fileobjs *o)
{
	memset(o, 0, sizeof(*o));
	o->img = kvcalloc(CKPT_IMG_MAX_FILEOBJS, sizeof(*o->img), GFP_KERNEL);
	o->key = kvcalloc(CKPT_IMG_MAX_FILEOBJS, sizeof(*o->key), GFP_KERNEL);
	o->file = kvcalloc(CKPT_IMG_MAX_FILEOBJS, sizeof(*o->file), GFP_KERNEL);
	o->rfile = kvcalloc(CKPT_IMG_MAX_FILEOBJS, sizeof(*o->rfile), GFP_KERNEL);
	o->fifo = kvcalloc(CKPT_IMG_MAX_FILEOBJS, sizeof(*o->fifo), GFP_KERNEL);
	o->uses = kvcalloc(MAX_USES, sizeof(*o->uses), GFP_KERNEL);
	if (!o->img || !o->key || !o->file || !o->rfile || !o->fifo || !o->uses)
		return -ENOMEM;
	return 0;
}

void ckpt_fileobjs_free(struct ckpt_fileobjs *o)
{
	u32 i;

	for (i = 0; i < o->nr; i++) {
		fput(o->file[i]);
		if (o->rfile[i])
			fput(o->rfile[i]);
		kvfree(o->fifo[i]);
	}
	for (i = 0; i < o->nr_uses; i++)
		fput(o->uses[i].file);
	for (i = 0; i < o->nr_scratch; i++)
		path_put(&o->scratch[i]);
	kvfree(o->img);
	kvfree(o->key);
	kvfree(o->file);
	kvfree(o->rfile);
	kvfree(o->fifo);
	kvfree(o->uses);
	memset(o, 0, sizeof(*o));
}

/* The shmem file of a MAP_SHARED | MAP_ANONYMOUS mapping. */
static bool shmem_anon(struct file *file, const char *p)
{
	return (file->f_path.mnt->mnt_flags & MNT_INTERNAL) && shmem_file(file) &&
	       !strcmp(p, "/dev/zero (deleted)");
}

int ckpt_fileobj_kind(struct file *file, const char *p)
{
	struct inode *inode = file_inode(file);
	size_t len = strlen(p);
	bool deleted = len > 10 && !strcmp(p + len - 10, " (deleted)");
	bool internal = file->f_path.mnt->mnt_flags & MNT_INTERNAL;

	if (*p != '/')
		return -1;
	/*
	 * A FIFO unlinked while open is made anew, unlinked, at restart: its
	 * name says so. A live one whose name ends as if it were is refused,
	 * as is one unlinked here but linked elsewhere (which others may
	 * still open: a FIFO made anew would not be theirs).
	 */
	if (S_ISFIFO(inode->i_mode))
		return internal || deleted != d_unlinked(file->f_path.dentry) ||
		       (deleted && inode->i_nlink) ? -1 : CKPT_FILE_FIFO;
	/* SysV shm and the like have files of their own over shmem inodes. */
	if (!S_ISREG(inode->i_mode) || !deleted || file->f_op != inode->i_fop)
		return -1;
	if (internal)
		return inode->i_sb->s_magic == TMPFS_MAGIC &&
		       !strncmp(p, "/memfd:", 7) ? CKPT_FILE_MEMFD : -1;
	return CKPT_FILE_DELETED;
}

char *ckpt_file_path(const struct file *file, char *buf, int len)
{
	struct dentry *dentry = file->f_path.dentry, *alias;
	struct inode *inode = d_inode(dentry);
	struct path linked = { .mnt = file->f_path.mnt };
	char *p;

	if (!S_ISREG(inode->i_mode) || !d_unlinked(dentry) ||
	    !READ_ONCE(inode->i_nlink) ||
	    file->f_path.mnt->mnt_flags & MNT_INTERNAL)
		return d_path(&file->f_path, buf, len);
	alias = d_find_alias(inode);	/* a hashed one, or NULL */
	if (!alias)
		return d_path(&file->f_path, buf, len);
	linked.dentry = alias;
	p = is_subdir(alias, linked.mnt->mnt_root) ?
	    d_path(&linked, buf, len) : d_path(&file->f_path, buf, len);
	dput(alias);
	return p;
}

/*
 * The root directory of @p's mount namespace as its processes see it, into
 * @top (a reference): the top of its mount tree (the initramfs's rootfs,
 * on a system booted through one), then down the mounts stacked on that
 * (the real root, mounted over the rootfs's / and entered by the boot).
 * d_path() names a file of a mount the caller cannot reach from the top
 * of its tree, which is the same name as from there.
 */
static void mount_view_root(const struct path *p, struct path *top)
{
	*top = *p;
	path_get(top);
	while (follow_up(top))
		;
	dput(top->dentry);
	top->dentry = dget(top->mnt->mnt_root);
	while (follow_down_one(top))
		;
}

/* What a copy of the checkpointer's namespace has as the checkpointer has. */
static const char *const shared_dirs[] = { "/tmp", "/var/tmp", "/dev/shm" };

bool ckpt_names_dir(const char *name, const struct path *dir)
{
	struct path p;
	bool same;

	if (kern_path(name, LOOKUP_FOLLOW | LOOKUP_DIRECTORY, &p))
		return !dir;
	same = dir && p.dentry == dir->dentry;
	path_put(&p);
	return same;
}

/* @dir names the same directory, or none, from @top and from the checkpointer's root. */
static bool same_dir(const struct path *top, const char *dir)
{
	struct path p;
	bool same;

	if (vfs_path_lookup(top->dentry, top->mnt, dir,
			    LOOKUP_FOLLOW | LOOKUP_DIRECTORY, &p))
		return ckpt_names_dir(dir, NULL);
	same = ckpt_names_dir(dir, &p);
	path_put(&p);
	return same;
}

int ckpt_mount_view(struct task_struct *task, const struct path *root,
		    struct path *top)
{
	struct path mine;
	bool other, ok;
	unsigned int i;

	task_lock(task);
	other = task->nsproxy && current->nsproxy &&
		task->nsproxy->mnt_ns != current->nsproxy->mnt_ns;
	task_unlock(task);
	if (!other)
		return -EXDEV;
	mount_view_root(root, top);
	get_fs_root(current->fs, &mine);
	ok = top->dentry == mine.dentry;
	path_put(&mine);
	for (i = 0; ok && i < ARRAY_SIZE(shared_dirs); i++)
		ok = same_dir(top, shared_dirs[i]);
	if (!ok) {
		path_put(top);
		return -EOPNOTSUPP;
	}
	return 0;
}

/*
 * /tmp and /var/tmp from the root of the task that runs the scan (whose
 * view d_path() gives), links followed: a /tmp that is a link to a
 * scratch file system's directory counts, and a file of a mount no longer
 * reachable from that root (lazily unmounted, an overlay's private upper
 * layer) is under neither, whatever its path reads. A @task in a mount
 * namespace of its own, a copy of the checkpointer's, has its own mounts
 * of them: those are looked up from its namespace's root the same way.
 */
void ckpt_fileobjs_find_scratch(struct ckpt_fileobjs *o,
				struct task_struct *task)
{
	static const char *const dirs[] = { "/tmp", "/var/tmp" };
	struct path root = {}, top;
	unsigned int i;

	if (!o->local)
		return;
	for (i = 0; i < ARRAY_SIZE(dirs); i++)
		if (!kern_path(dirs[i], LOOKUP_FOLLOW | LOOKUP_DIRECTORY,
			       &o->scratch[o->nr_scratch]))
			o->nr_scratch++;
	task_lock(task);
	if (task->fs)
		get_fs_root(task->fs, &root);
	task_unlock(task);
	if (!root.mnt)
		return;
	if (!ckpt_mount_view(task, &root, &top)) {
		for (i = 0; i < ARRAY_SIZE(dirs); i++)
			if (!vfs_path_lookup(top.dentry, top.mnt, dirs[i],
					     LOOKUP_FOLLOW | LOOKUP_DIRECTORY,
					     &o->scratch[o->nr_scratch]))
				o->nr_scratch++;
		path_put(&top);
	}
	path_put(&root);
}

/*
 * What a node keeps for itself: a tmpfs anywhere (/dev/shm, a /tmp in
 * memory), and its scratch directories, /tmp and /var/tmp, on whatever
 * local disk file system holds them (Debian 12's /tmp is the root file
 * system's). Not a network file system's: other nodes see those files.
 */
static bool node_local(const struct ckpt_fileobjs *o, struct file *file)
{
	const struct super_block *sb = file_inode(file)->i_sb;
	unsigned int i;

	if (sb->s_magic == TMPFS_MAGIC)
		return true;
	/*
	 * Unlinked from its name, linked at another (ckpt_file_path()): its
	 * old directory says nothing of where the other name is. By path.
	 */
	if (!(sb->s_type->fs_flags & FS_REQUIRES_DEV) ||
	    d_unlinked(file->f_path.dentry))
		return false;
	for (i = 0; i < o->nr_scratch; i++)
		if (path_is_under(&file->f_path, &o->scratch[i]))
			return true;
	return false;
}

bool ckpt_fileobj_local(const struct ckpt_fileobjs *o, struct file *file,
			const char *p)
{
	struct inode *inode = file_inode(file);
	size_t len = strlen(p);

	return *p == '/' && S_ISREG(inode->i_mode) &&
	       !(file->f_path.mnt->mnt_flags & MNT_INTERNAL) &&
	       file->f_op == inode->i_fop &&
	       !(len > 10 && !strcmp(p + len - 10, " (deleted)")) &&
	       i_size_read(inode) <= CKPT_IMG_MAX_FILESIZE &&
	       node_local(o, file);
}

static struct fileobj_use *use_of(struct ckpt_fileobjs *o, struct file *file,
				  u32 obj)
{
	struct fileobj_use *u;
	u32 i;

	for (i = 0; i < o->nr_uses; i++)
		if (o->uses[i].file == file)
			return &o->uses[i];
	if (o->nr_uses == MAX_USES)
		return NULL;
	u = &o->uses[o->nr_uses++];
	u->file = get_file(file);
	u->obj = obj;
	u->known = 0;
	u->fd = -1;
	return u;
}

int ckpt_fileobj_add(struct ckpt_fileobjs *o, struct file *file, int kind,
		     const char *path, int fd)
{
	struct inode *key = d_real_inode(file->f_path.dentry);
	struct ckpt_img_fileobj *img;
	struct fileobj_use *u;
	size_t len;
	u32 i;

	for (i = 0; i < o->nr; i++)
		if (o->key[i] == key)
			break;
	if (i == o->nr) {
		if (o->nr == CKPT_IMG_MAX_FILEOBJS)
			return -E2BIG;
		img = &o->img[i];
		memset(img, 0, sizeof(*img));
		img->kind = kind;
		len = strlen(path);
		if (kind == CKPT_FILE_MEMFD) {
			strscpy(img->name, file->f_path.dentry->d_name.name + 6,
				CKPT_IMG_MEMFD_NAME_MAX + 1);
		} else {
			if (kind == CKPT_FILE_DELETED || kind == CKPT_FILE_SHMEM)
				len -= 10;	/* " (deleted)" */
			if (len >= sizeof(img->name))
				return -ENAMETOOLONG;
			memcpy(img->name, path, len);
			img->name[len] = '\0';
		}
		o->key[i] = key;
		o->file[i] = get_file(file);
		o->nr++;
	}
	u = use_of(o, file, i);
	if (!u)
		return -E2BIG;
	u->known++;
	if (u->fd < 0)
		u->fd = fd;
	return i;
}

int ckpt_fileobj_vma(struct ckpt_fileobjs *o, struct vm_area_struct *vma,
		     const char *path, struct ckpt_img_vma *v,
		     struct ckpt_why *why)
{
	struct file *file = vma->vm_file;
	unsigned long fl = vma->vm_flags;
	int kind = ckpt_fileobj_kind(file, path), idx;

	/* A tree's members share it by its file (ckpt_fileobjs_tree()). */
	if (o->tree && shmem_anon(file, path))
		kind = CKPT_FILE_SHMEM;
	if (o->local && (fl & VM_MAYSHARE) && ckpt_fileobj_local(o, file, path))
		kind = CKPT_FILE_LOCAL;
	if (kind != CKPT_FILE_MEMFD && kind != CKPT_FILE_DELETED &&
	    kind != CKPT_FILE_SHMEM && kind != CKPT_FILE_LOCAL) {
		ckpt_whyf(why,
			  "mapping %lx-%lx of %s cannot be restored yet",
			  vma->vm_start, vma->vm_end, path);
		return -EOPNOTSUPP;
	}
	/* The restarter seals before the engine maps: that order must work. */
	if (kind == CKPT_FILE_MEMFD && (fl & VM_SHARED) && (fl & VM_WRITE) &&
	    SHMEM_I(file_inode(file))->seals & F_SEAL_FUTURE_WRITE) {
		ckpt_whyf(why,
			  "writable shared mapping %lx-%lx of %s predates its F_SEAL_FUTURE_WRITE: not supported",
			  vma->vm_start, vma->vm_end, path);
		return -EOPNOTSUPP;
	}
	idx = ckpt_fileobj_add(o, file, kind, path, -1);
	if (idx < 0) {
		ckpt_whyf(why, "mapping %lx-%lx of %s: %s",
			  vma->vm_start, vma->vm_end, path,
			  idx == -E2BIG ? "too many memfds, deleted, node-local files and FIFOs" :
			  "path too long");
		return idx;
	}
	v->flags |= CKPT_VMA_FILE | CKPT_VMA_FILEOBJ;
	if ((fl & VM_MAYSHARE) && (fl & VM_MAYWRITE))
		v->flags |= CKPT_VMA_MAYWRITE;
	v->dev = 0;
	v->ino = idx;
	v->size = i_size_read(file_inode(file));
	strscpy(v->path, path, sizeof(v->path));
	return 0;
}

/* Calls @fn on every run of data of @rf below @size, in chunks. */
int ckpt_walk_data(struct file *rf, u64 size,
		   int (*fn)(void *arg, loff_t off, size_t len), void *arg)
{
	loff_t pos = 0, data, hole, off;
	size_t n;
	int ret;

	while (pos < size) {
		data = vfs_llseek(rf, pos, SEEK_DATA);
		if (data == -ENXIO)
			break;
		hole = size;
		if (data == -EINVAL)	/* no SEEK_DATA here: all of it */
			data = pos;
		else if (data >= 0)
			hole = vfs_llseek(rf, data, SEEK_HOLE);
		if (data < 0)
			return data;
		if (hole < 0)
			return hole;
		if (data >= size)
			break;
		if (hole > size)
			hole = size;
		for (off = data; off < hole; off += n) {
			n = min_t(u64, hole - off, CKPT_IMG_MAX_FILECHUNK);
			ret = fn(arg, off, n);
			if (ret)
				return ret;
		}
		pos = hole;
		cond_resched();
		if (fatal_signal_pending(current))
			return -EINTR;
	}
	return 0;
}

static int count_fn(void *arg, loff_t off, size_t len)
{
	*(u64 *)arg += len;
	return 0;
}

int ckpt_count_data(struct file *rf, u64 size, u64 *stored)
{
	*stored = 0;
	return ckpt_walk_data(rf, size, count_fn, stored);
}

static const char *const kind_names[__CKPT_FILE_KIND_MAX] = {
	[CKPT_FILE_FIFO] = "FIFO", [CKPT_FILE_MEMFD] = "memfd",
	[CKPT_FILE_DELETED] = "deleted file",
	[CKPT_FILE_SHMEM] = "shared anonymous memory",
	[CKPT_FILE_LOCAL] = "node-local file",
};

/*
 * How long a count above the expected one may take to come down. A reader
 * in a loop (lsof, watch) holds the file for most of each system call but
 * not between two. The count is read again after short sleeps, which let
 * such a reader run, here or on another CPU, to the end of its call: one
 * that shares this CPU, or whose virtual CPU the host has set aside, may
 * otherwise hold the file for longer than a spin would wait (stop 64's CI
 * run: under two VMs on two CPUs, a spin of 20 ms was not always enough).
 */
#define REFS_SETTLE_NS	(100 * NSEC_PER_MSEC)

static unsigned long file_refs(const void *p)
{
	return file_count((struct file *)p);
}

static unsigned long dentry_refs(const void *p)
{
	return d_count((const struct dentry *)p);
}

static bool refs_settle(unsigned long (*count)(const void *), const void *p,
			unsigned long refs)
{
	u64 end = ktime_get_ns() + REFS_SETTLE_NS;
	unsigned long n;

	for (;;) {
		n = count(p);
		if (n == refs)
			return true;
		if (n < refs || ktime_get_ns() > end)
			return false;
		usleep_range(10, 50);
	}
}

bool ckpt_file_refs_are(struct file *file, unsigned long refs)
{
	return refs_settle(file_refs, file, refs);
}

bool ckpt_dentry_refs_are(struct dentry *dentry, unsigned int refs)
{
	return refs_settle(dentry_refs, dentry, refs);
}

/* Names use @u (its descriptor, or that it is a mapping) in @why. */
static int shared(struct ckpt_fileobjs *o, const struct fileobj_use *u,
		  pid_t pid, struct ckpt_why *why)
{
	const struct ckpt_img_fileobj *img = &o->img[u->obj];

	if (u->fd >= 0)
		ckpt_whyf(why,
			  "pid %d fd %d (%s %s) is open in another process too: not supported yet",
			  pid, u->fd, kind_names[img->kind], img->name);
	else
		ckpt_whyf(why,
			  "pid %d maps %s %s, which another process holds too: not supported yet",
			  pid, kind_names[img->kind], img->name);
	return -EOPNOTSUPP;
}

static int capture_fifo(struct ckpt_fileobjs *o, u32 i, pid_t pid,
			struct ckpt_why *why)
{
	unsigned int readers = 0, writers = 0;
	const struct fileobj_use *first = NULL;
	size_t len;
	u32 j;
	int ret;

	for (j = 0; j < o->nr_uses; j++) {
		const struct fileobj_use *u = &o->uses[j];

		if (u->obj != i)
			continue;
		first = first ?: u;
		readers += !!(u->file->f_mode & FMODE_READ);
		writers += !!(u->file->f_mode & FMODE_WRITE);
	}
	/* A tree's members' ends are counted together (tree_files.c). */
	ret = ckpt_pipe_capture(o->file[i], o->tree ? CKPT_PIPE_ANY : readers,
				o->tree ? CKPT_PIPE_ANY : writers, &o->fifo[i],
				&len);
	if (ret == -EXDEV)
		return shared(o, first, pid, why);
	if (ret == -ENOPKG) {
		ckpt_whyf(why, "pid %d fd %d: FIFO %s cannot be read by this engine on this kernel (%s)",
			  pid, first->fd, o->img[i].name,
			  ckpt_layout_why(CKPT_LAYOUT_PIPES));
		return -EOPNOTSUPP;
	}
	if (ret == -EMSGSIZE) {
		ckpt_whyf(why, "pid %d fd %d: FIFO %s holds more bytes than its capacity (pages spliced into it): not supported",
			  pid, first->fd, o->img[i].name);
		return -EOPNOTSUPP;
	}
	if (ret) {
		ckpt_whyf(why, "cannot read FIFO %s%s", o->img[i].name,
			  ret == -EOPNOTSUPP ? " (packet mode)" : "");
		return ret == -EOPNOTSUPP ? ret : -EIO;
	}
	if (!readers && o->fifo[i]->len && !o->tree) {
		ckpt_whyf(why,
			  "pid %d fd %d: FIFO %s holds %u bytes and is open write-only: they cannot be saved",
			  pid, first->fd, o->img[i].name, o->fifo[i]->len);
		return -EACCES;
	}
	o->img[i].size = o->fifo[i]->len;
	o->img[i].stored = o->fifo[i]->len;
	o->img[i].capacity = o->fifo[i]->capacity;
	return 0;
}

static int capture_content(struct ckpt_fileobjs *o, u32 i, pid_t pid,
			   struct ckpt_why *why)
{
	struct ckpt_img_fileobj *img = &o->img[i];
	struct inode *inode = file_inode(o->file[i]);
	const struct fileobj_use *u, *first = NULL;
	struct dentry *dentry = NULL;
	bool readable = false;
	unsigned int n = 0;
	struct file *rf;
	u32 j;
	int ret;

	/* Every open file of it is ours: the dentry holds no other. */
	for (j = 0; j < o->nr_uses; j++) {
		u = &o->uses[j];
		if (u->obj != i)
			continue;
		if (!first || (first->fd < 0 && u->fd >= 0))
			first = u;
		if (dentry && dentry != u->file->f_path.dentry)
			dentry = ERR_PTR(-EXDEV);	/* stacked: not comparable */
		else if (!dentry)
			dentry = u->file->f_path.dentry;
		readable |= !!(u->file->f_mode & FMODE_READ);
		n++;
	}
	/*
	 * A tree's members count together: ckpt_fileobjs_tree(). A tmpfs
	 * file has a name: anyone may hold it.
	 */
	if (!o->tree && img->kind != CKPT_FILE_LOCAL &&
	    !IS_ERR_OR_NULL(dentry) && !ckpt_dentry_refs_are(dentry, n))
		return shared(o, first, pid, why);
	/*
	 * A mapping is always readable: @first is a descriptor here. A tmpfs
	 * file held only write-only is one its process may read (fds.c).
	 */
	if (!readable && img->kind != CKPT_FILE_LOCAL) {
		ckpt_whyf(why,
			  "pid %d fd %d: a %s open write-only cannot be saved (%s)",
			  pid, first->fd,
			  img->kind == CKPT_FILE_MEMFD ? "memfd" : "deleted file",
			  img->name);
		return -EACCES;
	}
	if (img->kind == CKPT_FILE_DELETED && inode->i_nlink) {
		ckpt_whyf(why,
			  "pid %d: deleted file %s has another link: not supported yet",
			  pid, img->name);
		return -EOPNOTSUPP;
	}
	if (img->kind == CKPT_FILE_MEMFD)
		img->seals = SHMEM_I(inode)->seals & CKPT_IMG_SEALS_ALL;
	img->size = i_size_read(inode);
	if (img->size > CKPT_IMG_MAX_FILESIZE) {
		ckpt_whyf(why,
			  "pid %d: %s %s holds %llu bytes, more than the image's 1 GiB per file",
			  pid, kind_names[img->kind], img->name, img->size);
		return -EFBIG;
	}
	rf = dentry_open(&o->file[i]->f_path, O_RDONLY | O_LARGEFILE,
			 current_cred());
	if (IS_ERR(rf)) {
		ckpt_whyf(why, "cannot read %s: error %ld", img->name,
			  PTR_ERR(rf));
		return PTR_ERR(rf);
	}
	o->rfile[i] = rf;
	ret = ckpt_count_data(rf, img->size, &img->stored);
	if (ret)
		ckpt_whyf(why, "cannot find the data of %s: error %d",
			  img->name, ret);
	return ret;
}

int ckpt_fileobjs_capture(struct ckpt_fileobjs *o, pid_t pid, struct ckpt_why *why)
{
	struct kstat st;
	u32 i;
	int ret;

	/*
	 * Each open file: referenced by the process's descriptors, its
	 * mappings and us (the use, and the object for its first file).
	 */
	for (i = 0; i < o->nr_uses && !o->tree; i++) {
		const struct fileobj_use *u = &o->uses[i];

		if (o->img[u->obj].kind != CKPT_FILE_LOCAL &&
		    !ckpt_file_refs_are(u->file, u->known + 1 +
					(o->file[u->obj] == u->file)))
			return shared(o, u, pid, why);
	}

	for (i = 0; i < o->nr; i++) {
		struct ckpt_img_fileobj *img = &o->img[i];

		ret = vfs_getattr(&o->file[i]->f_path, &st, STATX_INO | STATX_MODE,
				  AT_STATX_SYNC_AS_STAT);
		if (ret) {
			ckpt_whyf(why, "cannot read the identity of %s",
				  img->name);
			return ret;
		}
		img->dev = new_encode_dev(st.dev);
		img->ino = st.ino;
		img->mode = st.mode & 07777;
		if (img->kind == CKPT_FILE_FIFO)
			ret = capture_fifo(o, i, pid, why);
		else
			ret = capture_content(o, i, pid, why);
		if (ret)
			return ret;
	}
	return 0;
}

struct writing {
	struct ckpt_writer *w;
	struct file *rf;
	void *buf;
	u32 type, obj;
	u64 written;
};

static int write_fn(void *arg, loff_t off, size_t len)
{
	struct writing *wr = arg;
	struct ckpt_img_filedata hdr = { .obj = wr->obj, .offset = off };
	loff_t pos = off;

	if (kernel_read(wr->rf, wr->buf, len, &pos) != len)
		return -EIO;
	wr->written += len;
	return ckpt_write_sect(wr->w, wr->type, &hdr, sizeof(hdr), wr->buf, len);
}

int ckpt_write_runs(struct ckpt_writer *w, u32 type, u32 obj,
		    struct file *rf, u64 size, u64 stored)
{
	struct writing wr = {
		.w = w, .rf = rf, .type = type, .obj = obj,
	};
	int ret;

	/* SYSVDATA's header is FILEDATA's: an object's number, its offset. */
	BUILD_BUG_ON(sizeof(struct ckpt_img_sysvdata) !=
		     sizeof(struct ckpt_img_filedata));
	BUILD_BUG_ON(offsetof(struct ckpt_img_sysvdata, offset) !=
		     offsetof(struct ckpt_img_filedata, offset));
	if (!stored)
		return 0;
	wr.buf = kvmalloc(CKPT_IMG_MAX_FILECHUNK, GFP_KERNEL);
	if (!wr.buf)
		return -ENOMEM;
	ret = ckpt_walk_data(rf, size, write_fn, &wr);
	kvfree(wr.buf);
	/* Frozen and held by no one else: it cannot have changed. */
	if (!ret && wr.written != stored)
		ret = -EAGAIN;
	return ret;
}

int ckpt_fileobjs_write(struct ckpt_fileobjs *o, struct ckpt_writer *w,
			struct ckpt_why *why)
{
	int ret = 0;
	u32 i;

	for (i = 0; i < o->nr && !ret; i++) {
		const struct ckpt_img_fileobj *img = &o->img[i];

		if (img->kind == CKPT_FILE_FIFO) {
			struct ckpt_img_filedata hdr = { .obj = i };

			if (img->stored)
				ret = ckpt_write_sect(w, CKPT_SECT_FILEDATA, &hdr,
						      sizeof(hdr), o->fifo[i]->data,
						      img->stored);
			continue;
		}
		ret = ckpt_write_runs(w, CKPT_SECT_FILEDATA, i, o->rfile[i],
				      img->size, img->stored);
		/* Others may write or truncate a node-local file: try again later. */
		if ((ret == -EAGAIN || ret == -EIO) &&
		    img->kind == CKPT_FILE_LOCAL) {
			ckpt_whyf(why,
				  "node-local file %s changed during the checkpoint (a process outside writes it)",
				  img->name);
			ret = -EAGAIN;
		}
	}
	return ret;
}

int ckpt_fileobj_get_files(u64 ufds, u32 nr, struct ckpt_objfiles *of,
			   struct ckpt_why *why)
{
	u32 i;

	memset(of, 0, sizeof(*of));
	if (!nr)
		return 0;
	of->fds = kvmalloc_array(nr, sizeof(*of->fds), GFP_KERNEL);
	of->files = kvcalloc(nr, sizeof(*of->files), GFP_KERNEL);
	if (!of->fds || !of->files)
		goto nomem;
	of->nr = nr;
	if (copy_from_user(of->fds, u64_to_user_ptr(ufds), nr * sizeof(*of->fds))) {
		ckpt_fileobj_put_files(of);
		return -EFAULT;
	}
	for (i = 0; i < nr; i++) {
		if (of->fds[i] < 0)
			continue;
		of->files[i] = fget(of->fds[i]);
		if (!of->files[i]) {
			why->msg = "a file object's descriptor is not open";
			ckpt_fileobj_put_files(of);
			return -EBADF;
		}
		if (!S_ISREG(file_inode(of->files[i])->i_mode)) {
			why->msg = "a file object's descriptor is not a regular file";
			ckpt_fileobj_put_files(of);
			return -EINVAL;
		}
	}
	return 0;
nomem:
	ckpt_fileobj_put_files(of);
	return -ENOMEM;
}

void ckpt_fileobj_put_files(struct ckpt_objfiles *of)
{
	u32 i;

	for (i = 0; of->files && i < of->nr; i++)
		if (of->files[i])
			fput(of->files[i]);
	for (i = 0; i < of->nr_flocked; i++)
		fput(of->flocked[i]);
	kvfree(of->files);
	kvfree(of->fds);
	memset(of, 0, sizeof(*of));
}

/* The restarted process's file-system uid, for messages. */
static uid_t restarted_uid(const struct ckpt_objfiles *of)
{
	return from_kuid_munged(current_user_ns(),
				(of->cred ?: current_cred())->fsuid);
}

/*
 * Whether the restarted process may open @path for @mask (MAY_READ,
 * MAY_WRITE): inode_permission() under its credentials, as open() checks.
 */
static int may_open_as(const struct ckpt_objfiles *of, const struct path *path,
		       int mask)
{
	const struct cred *old = of->cred ? override_creds(of->cred) : NULL;
	int ret = ckpt_inode_permission(path, mask | MAY_OPEN);

	if (old)
		revert_creds(old);
	return ret;
}

struct file *ckpt_fileobj_open(const struct ckpt_objfiles *of,
			       const struct ckpt_img_vma *v, struct ckpt_why *why)
{
	struct file *file = v->ino < of->nr ? of->files[v->ino] : NULL;
	bool rw = v->flags & CKPT_VMA_MAYWRITE;
	fmode_t need = FMODE_READ | (rw ? FMODE_WRITE : 0);
	const char *what = rw ? "reading and writing" : "reading";
	char *buf, *name;
	int ret = 0;

	if (!file) {
		ckpt_whyf(why,
			  "no file was made for %s (object %llu, mapped at %llx)",
			  v->path, v->ino, v->start);
		return ERR_PTR(-EBADF);
	}
	if ((file->f_mode & need) != need)
		ret = -EBADF;
	else
		ret = may_open_as(of, &file->f_path,
				  MAY_READ | (rw ? MAY_WRITE : 0));
	if (ret) {
		buf = kmalloc(CKPT_IMG_PATH_MAX, GFP_KERNEL);
		name = buf ? d_path(&file->f_path, buf, CKPT_IMG_PATH_MAX) :
			     ERR_PTR(-ENOMEM);
		if (ret == -EBADF)
			ckpt_whyf(why,
				  "the restarter's descriptor %d (%s), given for %s mapped at %llx, is not open for %s",
				  of->fds[v->ino], IS_ERR(name) ? "?" : name,
				  v->path, v->start, what);
		else
			ckpt_whyf(why,
				  "the restarted process (uid %u) may not open %s for %s (given for %s mapped at %llx): error %d",
				  restarted_uid(of), IS_ERR(name) ? "?" : name,
				  what, v->path, v->start, ret);
		kfree(buf);
		return ERR_PTR(ret);
	}
	if (rw)
		return get_file(file);
	return dentry_open(&file->f_path, O_RDONLY | O_LARGEFILE,
			   of->cred ?: current_cred());
}

struct file *ckpt_fileobj_open_path(const struct ckpt_objfiles *of,
				    const struct path *root,
				    const struct ckpt_img_vma *v, struct ckpt_why *why)
{
	bool rw = v->flags & CKPT_VMA_MAYWRITE;
	const struct cred *old = of->cred ? override_creds(of->cred) : NULL;
	struct file *file;

	/* file_open_root() checks what open() does: may_open(), the LSMs. */
	file = file_open_root(root, v->path,
			      (rw ? O_RDWR : O_RDONLY) | O_LARGEFILE, 0);
	if (old)
		revert_creds(old);
	if (file == ERR_PTR(-EACCES) || file == ERR_PTR(-EPERM))
		ckpt_whyf(why,
			  "the restarted process (uid %u) may not open %s for %s (mapped at %llx): error %ld",
			  restarted_uid(of), v->path,
			  rw ? "reading and writing" : "reading", v->start,
			  PTR_ERR(file));
	else if (IS_ERR(file))
		ckpt_whyf(why, "cannot open %s (mapped at %llx): error %ld",
			  v->path, v->start, PTR_ERR(file));
	return file;
}
