// SPDX-License-Identifier: GPL-2.0
/*
 * inotify instances. `tail -f` on a node's own file system, a build tool
 * or a Python watcher keeps one, its watches on files and directories it
 * named by path. Each watch is read the way /proc/PID/fdinfo shows it
 * (fdinfo.c): its number, mask and the watched inode by number and
 * device. The image names the watched file by path: the restarter adds
 * the watch again there, with its number (lib/restore/inotify.c).
 *
 * A mark holds an inode, not a path. The path is found through a mount of
 * that inode's file system under which an alias of the inode lies: the
 * process's root's, its working directory's, one of its open files' (tail
 * holds the file it follows), or else any the checkpointer's
 * /proc/self/mountinfo lists for that device. A watch on a file no mount
 * reaches, or on a deleted one, is refused by name.
 *
 * Events already queued cannot be queued again from outside the kernel's
 * inotify code: a checkpoint that finds some fails with EAGAIN, which
 * `ckpt checkpoint --tree` and ckptd try again (the reader takes them
 * within moments). A watch of no event (IN_UNMOUNT alone) is refused:
 * fdinfo shows no mask to add it again with.
 */

#include <linux/dcache.h>
#include <linux/fs.h>
#include <linux/fs_struct.h>
#include <linux/fsnotify_backend.h>
#include <linux/idr.h>
#include <linux/inotify.h>
#include <linux/mount.h>
#include <linux/namei.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <uapi/linux/ckpt_image.h>

#include "fdinfo.h"
#include "fds.h"
#include "inotify.h"
#include "layout.h"
#include "why.h"

#define INOTIFY_USER_MASK	(IN_ALL_EVENTS | IN_ONESHOT | IN_EXCL_UNLINK)

/*
 * The path of @inode through @mnt if an alias of it lies under @mnt's
 * root: 1 and @out filled, 0 if not through @mnt, or -errno.
 */
static int path_through(struct vfsmount *mnt, struct inode *inode,
			struct ckpt_img_inotify *out, char *buf)
{
	struct path path = { .mnt = mnt };
	struct kstat st;
	char *p;
	int ret = 0;

	if (!mnt || mnt->mnt_sb != inode->i_sb)
		return 0;
	path.dentry = d_find_any_alias(inode);
	if (!path.dentry)
		return 0;
	if (d_unlinked(path.dentry) || !is_subdir(path.dentry, mnt->mnt_root))
		goto out;
	p = d_path(&path, buf, PATH_MAX);
	if (IS_ERR(p) || *p != '/')
		goto out;
	if (strlen(p) >= sizeof(out->path)) {
		ret = -ENAMETOOLONG;
		goto out;
	}
	ret = vfs_getattr(&path, &st, STATX_INO, AT_STATX_SYNC_AS_STAT);
	if (ret)
		goto out;
	strscpy(out->path, p, sizeof(out->path));
	out->dev = new_encode_dev(st.dev);
	out->ino = st.ino;
	ret = 1;
out:
	dput(path.dentry);
	return ret;
}

/*
 * Through the mounts of @inode's device the checkpointer sees, each looked
 * up by its mount point in /proc/self/mountinfo (mount points with
 * escaped characters are passed over).
 */
static int path_by_mountinfo(struct inode *inode, struct ckpt_img_inotify *out,
			     char *buf)
{
	size_t size = 1 << 20, len = 0;
	char *text, *line, *next, *mp;
	unsigned int major, minor;
	struct file *mi;
	struct path mnt;
	loff_t pos = 0;
	ssize_t n;
	int ret = 0;

	mi = filp_open("/proc/self/mountinfo", O_RDONLY, 0);
	if (IS_ERR(mi))
		return 0;
	text = kvmalloc(size, GFP_KERNEL);
	while (text && len < size - 1 &&
	       (n = kernel_read(mi, text + len, size - 1 - len, &pos)) > 0)
		len += n;
	filp_close(mi, NULL);
	if (!text)
		return -ENOMEM;
	text[len] = '\0';
	for (line = text; !ret && line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		/* ID PARENT MAJOR:MINOR ROOT MOUNT-POINT ... */
		mp = buf;
		if (sscanf(line, "%*u %*u %u:%u %*s %4095s", &major, &minor, mp) != 3 ||
		    MKDEV(major, minor) != inode->i_sb->s_dev || strchr(mp, '\\'))
			continue;
		if (kern_path(mp, 0, &mnt))
			continue;
		ret = path_through(mnt.mnt, inode, out, buf);
		path_put(&mnt);
	}
	kvfree(text);
	return ret;
}

/*
 * Through the process's root, working directory, then its open files,
 * and then any mount of the file's device.
 */
static int find_path(struct ckpt_fds *scan, struct inode *inode,
		     struct ckpt_img_inotify *out, char *buf)
{
	struct path root = {}, pwd = {};
	int ret = 0;
	u32 j;

	task_lock(scan->task);
	if (scan->task->fs) {
		get_fs_root(scan->task->fs, &root);
		get_fs_pwd(scan->task->fs, &pwd);
	}
	task_unlock(scan->task);
	ret = path_through(root.mnt, inode, out, buf);
	if (!ret)
		ret = path_through(pwd.mnt, inode, out, buf);
	for (j = 0; !ret && j < scan->nr; j++)
		if (scan->refs[j])
			ret = path_through(scan->refs[j]->f_path.mnt, inode, out,
					   buf);
	path_put(&root);
	path_put(&pwd);
	if (!ret)
		ret = path_by_mountinfo(inode, out, buf);
	return ret;
}

/*
 * The inode a mark's connector is on: its @obj points at the inode's
 * i_fsnotify_marks on 6.1, at the inode itself on 6.12 (a void *).
 */
static struct inode *conn_inode(struct fsnotify_mark_connector *conn)
{
	return __builtin_choose_expr(__builtin_types_compatible_p(typeof(conn->obj),
								  void *),
				     (struct inode *)conn->obj,
				     container_of(conn->obj, struct inode,
						  i_fsnotify_marks));
}

/*
 * The inodes @group's marks are on, referenced, in @inodes (at most @max,
 * *@nr of them), as its fdinfo walks them: under the group's mark lock,
 * attached inode marks only.
 */
static void mark_inodes(struct fsnotify_group *group, struct inode **inodes,
			u32 max, u32 *nr)
{
	struct fsnotify_mark *mark;

	*nr = 0;
	fsnotify_group_lock(group);
	list_for_each_entry(mark, &group->marks_list, g_list) {
		struct inode *inode;

		if (*nr == max)
			break;
		if (!(mark->flags & FSNOTIFY_MARK_FLAG_ATTACHED) ||
		    !mark->connector ||
		    mark->connector->type != FSNOTIFY_OBJ_TYPE_INODE)
			continue;
		inode = igrab(conn_inode(mark->connector));
		if (inode)
			inodes[(*nr)++] = inode;
	}
	fsnotify_group_unlock(group);
}

/* Of @inodes, the one @w is on, by number and device. */
static struct inode *watched(struct inode **inodes, u32 nr,
			     const struct ckpt_fdinfo_watch *w)
{
	u32 k;

	for (k = 0; k < nr; k++)
		if (inodes[k]->i_ino == w->ino && inodes[k]->i_sb->s_dev == w->sdev)
			return inodes[k];
	return NULL;
}

static int add_watches(struct ckpt_fds *scan, struct ckpt_img_file *f,
		       const struct ckpt_fdinfo_watch *w, u32 nr,
		       struct ckpt_why *why)
{
	struct fsnotify_group *group = scan->refs[f - scan->files]->private_data;
	char *buf = kmalloc(PATH_MAX, GFP_KERNEL);
	struct inode **inodes = kvcalloc(nr + 1, sizeof(*inodes), GFP_KERNEL);
	struct inode *inode;
	u32 k, nr_inodes = 0;
	int ret = 0;

	if (!buf || !inodes) {
		ret = -ENOMEM;
		goto out;
	}
	mark_inodes(group, inodes, nr + 1, &nr_inodes);
	for (k = 0; !ret && k < nr; k++) {
		struct ckpt_img_inotify *out = &scan->inotify[scan->nr_inotify];

		if (w[k].wd <= 0 || w[k].wd >= CKPT_INOTIFY_MAX_WD) {
			ckpt_whyf(why, "fd %u (inotify) has watch %d, a number past %u: not supported",
				  f->fd, w[k].wd, CKPT_INOTIFY_MAX_WD - 1);
			ret = -EOPNOTSUPP;
			break;
		}
		if (!(w[k].mask & IN_ALL_EVENTS)) {
			ckpt_whyf(why, "fd %u (inotify) watch %d watches no event that can be asked for again (IN_UNMOUNT alone?): not supported",
				  f->fd, w[k].wd);
			ret = -EOPNOTSUPP;
			break;
		}
		memset(out, 0, sizeof(*out));
		out->fd = f->fd;
		out->wd = w[k].wd;
		out->mask = w[k].mask & INOTIFY_USER_MASK;
		inode = watched(inodes, nr_inodes, &w[k]);
		ret = inode ? find_path(scan, inode, out, buf) : 0;
		if (ret == 1) {
			scan->nr_inotify++;
			ret = 0;
		} else if (ret < 0) {
			ckpt_whyf(why, "fd %u (inotify) watch %d: cannot name the file it watches (error %d)",
				  f->fd, w[k].wd, ret);
		} else {
			ckpt_whyf(why, "fd %u (inotify) watch %d: inode %lu of device %u:%u is deleted, or under no mount the checkpointer sees",
				  f->fd, w[k].wd, w[k].ino, MAJOR(w[k].sdev),
				  MINOR(w[k].sdev));
			ret = -EOPNOTSUPP;
		}
	}
out:
	for (k = 0; inodes && k < nr_inodes; k++)
		iput(inodes[k]);
	kvfree(inodes);
	kfree(buf);
	return ret;
}

/* By watch descriptor: as the restarter adds them again. */
static void sort_watches(struct ckpt_fdinfo_watch *w, u32 nr)
{
	u32 a, b;

	for (a = 1; a < nr; a++)
		for (b = a; b > 0 && w[b - 1].wd > w[b].wd; b--)
			swap(w[b - 1], w[b]);
}

int ckpt_inotify_capture(struct ckpt_fds *scan, u32 i, struct ckpt_why *why)
{
	struct ckpt_img_file *f = &scan->files[i];
	struct file *file = scan->refs[i];
	struct fsnotify_group *group = file->private_data;
	u32 room = CKPT_IMG_MAX_INOTIFY - scan->nr_inotify, nr = 0, queued;
	struct ckpt_fdinfo_watch *w;
	int ret;

	if (!ckpt_layout_ok(CKPT_LAYOUT_INOTIFY)) {
		ckpt_whyf(why, "fd %u is an inotify instance, whose watches this engine cannot read on this kernel (%s)",
			  f->fd, ckpt_layout_why(CKPT_LAYOUT_INOTIFY));
		return -EOPNOTSUPP;
	}
	queued = READ_ONCE(group->q_len);
	if (queued) {
		ckpt_whyf(why, "fd %u (inotify) has %u events unread; try again",
			  f->fd, queued);
		return -EAGAIN;
	}
	if (!scan->inotify) {
		scan->inotify = kvcalloc(CKPT_IMG_MAX_INOTIFY,
					 sizeof(*scan->inotify), GFP_KERNEL);
		if (!scan->inotify)
			return -ENOMEM;
	}
	w = kvcalloc(room + 1, sizeof(*w), GFP_KERNEL);
	if (!w)
		return -ENOMEM;
	ret = ckpt_fdinfo_inotify(file, w, room, &nr);
	if (ret == -E2BIG)
		ckpt_whyf(why, "fd %u (inotify) has more watches than an image holds (%u)",
			  f->fd, CKPT_IMG_MAX_INOTIFY);
	else if (ret)
		ckpt_whyf(why, "cannot read the watches of fd %u (inotify)", f->fd);
	if (!ret) {
		sort_watches(w, nr);
		ret = add_watches(scan, f, w, nr, why);
	}
	/* The number the next watch gets: the allocator's cursor. */
	if (!ret) {
		spin_lock(&group->inotify_data.idr_lock);
		f->pos = idr_get_cursor(&group->inotify_data.idr);
		spin_unlock(&group->inotify_data.idr_lock);
		/* 0 on a new instance: numbers start at 1. */
		if (f->pos < 1)
			f->pos = 1;
		/* Past the bound, or wrapped: the next after the highest. */
		if (f->pos > CKPT_INOTIFY_MAX_WD ||
		    (nr && f->pos <= w[nr - 1].wd))
			f->pos = nr ? w[nr - 1].wd + 1 : 1;
	}
	kvfree(w);
	return ret;
}
