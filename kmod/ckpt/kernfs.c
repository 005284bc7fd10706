// SPDX-License-Identifier: GPL-2.0
/*
 * Files of the kernel's own file systems, procfs and sysfs, that a process
 * holds open: vmstat and top keep /proc/stat, /proc/meminfo and
 * /proc/vmstat open and read them again from the start; a monitor thread
 * keeps /proc/self/status or a /sys counter. Their inode numbers are the
 * mount's and the boot's (a restarted tree's /proc is a mount of its own
 * pid namespace), so the restarter reopens them by path and checks the
 * file system's type, not the identity (CKPT_FILE_PROCFS, _SYSFS).
 *
 * A file of a /proc/PID directory shows that process. The restarter opens
 * a process's files in the process, with its pid back, but before any
 * other member exists and before its other threads do: a process's own
 * files come back; another process's, or another thread's under
 * /proc/PID/task, are refused by name, as are those of a /proc of another
 * pid namespace than the one the image numbers the process in (the
 * restart opens the path in a /proc of that one).
 */

#include <linux/dcache.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/proc_fs.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <uapi/linux/ckpt_image.h>

#include "fds.h"
#include "kernfs.h"
#include "why.h"

/* The number that begins @s, a path component, or -1 if it is not one. */
static long component_nr(const char *s, const char **end)
{
	long nr = 0;
	const char *p;

	for (p = s; *p >= '0' && *p <= '9'; p++) {
		nr = nr * 10 + (*p - '0');
		if (nr > PID_MAX_LIMIT)
			return -1;
	}
	if (p == s || (*p && *p != '/'))
		return -1;
	*end = p;
	return nr;
}

/*
 * @rel, a path from the procfs root: 0 for a file of no process's or one
 * of @tgid's own (its main thread's under task/), else -EOPNOTSUPP.
 */
static int own_proc_file(const char *rel, struct super_block *sb,
			 const struct ckpt_fds *scan,
			 const struct ckpt_img_file *f, struct ckpt_why *why)
{
	const char *rest, *trest;
	struct task_struct *t;
	bool own, thread;
	struct pid *pid;
	long nr, tid;

	nr = component_nr(rel + 1, &rest);
	if (nr < 0)
		return 0;		/* /proc/vmstat, /proc/sys/...: the node's */
	/* Its number must be the one the image gives the process. */
	if (proc_pid_ns(sb) != scan->pid_ns) {
		ckpt_whyf(why, "fd %u (%.64s) is a file of a /proc of another pid namespace than the one the image numbers processes in: not supported",
			  f->fd, f->path);
		return -EOPNOTSUPP;
	}
	rcu_read_lock();
	pid = find_pid_ns(nr, scan->pid_ns);
	own = pid == scan->tgid;
	t = pid ? pid_task(pid, PIDTYPE_PID) : NULL;
	thread = t && task_tgid(t) == scan->tgid;
	rcu_read_unlock();
	if (thread && !own) {
		ckpt_whyf(why, "fd %u (%.64s) is a /proc file of thread %ld, not the main thread's: not supported",
			  f->fd, f->path, nr);
		return -EOPNOTSUPP;
	}
	if (!own) {
		ckpt_whyf(why, "fd %u (%.64s) is a /proc file of another process: only a process's own come back",
			  f->fd, f->path);
		return -EOPNOTSUPP;
	}
	if (strncmp(rest, "/task/", 6))
		return 0;
	tid = component_nr(rest + 6, &trest);
	if (tid >= 0 && tid != nr) {
		ckpt_whyf(why, "fd %u (%.64s) is a /proc file of thread %ld, not the main thread's: not supported",
			  f->fd, f->path, tid);
		return -EOPNOTSUPP;
	}
	return 0;
}

bool ckpt_kernfs_sb(const struct super_block *sb)
{
	return sb->s_magic == PROC_SUPER_MAGIC || sb->s_magic == SYSFS_MAGIC;
}

int ckpt_kernfs_note(struct ckpt_img_file *f, struct file *file,
		     const struct ckpt_fds *scan, struct ckpt_why *why)
{
	struct super_block *sb = file_inode(file)->i_sb;
	char *buf, *rel;
	int ret;

	if (sb->s_magic == SYSFS_MAGIC) {
		f->flags |= CKPT_FILE_SYSFS;
		return 0;
	}
	if (sb->s_magic != PROC_SUPER_MAGIC)
		return 0;
	f->flags |= CKPT_FILE_PROCFS;
	buf = kmalloc(PATH_MAX, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	rel = dentry_path_raw(file->f_path.dentry, buf, PATH_MAX);
	ret = IS_ERR(rel) ? PTR_ERR(rel) : own_proc_file(rel, sb, scan, f, why);
	kfree(buf);
	return ret;
}
