// SPDX-License-Identifier: GPL-2.0
/*
 * The executable: the file /proc/PID/exe names (mm->exe_file).
 *
 * A checkpoint records its path, as the checkpointer's root sees it, and
 * its identity as stat() shows it. A restart opens that path from the
 * restarter's root with the restarter's rights, before anything is
 * changed, and refuses a file that is gone or another one, as it refuses a
 * mapped file that changed; then, once the restarter's own mappings are
 * gone, makes it the exe file.
 *
 * prctl(PR_SET_MM_EXE_FILE) cannot be used for that: it runs in user mode,
 * where the restarter is still the restarter and its binary still mapped
 * (replace_mm_exe_file() refuses while the old exe file is mapped), and
 * no system call runs once the engine has replaced the memory. The kernel
 * exports neither set_mm_exe_file() nor replace_mm_exe_file(), so the swap
 * is done here the way they do it: the new file's write denial taken first
 * (compat.h: how each kernel takes it), the pointer replaced under the
 * mmap lock, the old file's denial and reference given back. The rights
 * asked are prctl(PR_SET_MM_MAP)'s: CAP_CHECKPOINT_RESTORE (or
 * CAP_SYS_ADMIN) in the restarter's user namespace, and a regular file the
 * restarter may execute, not on a noexec mount.
 */

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/file.h>
#include <linux/kdev_t.h>
#include <linux/mm.h>
#include <linux/mount.h>
#include <linux/namei.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "exe.h"
#include "why.h"

int ckpt_exe_capture(struct mm_struct *mm, struct ckpt_img_process *proc,
		     pid_t pid, struct ckpt_why *why)
{
	struct file *exe;
	struct kstat st;
	char *buf, *p;
	int ret;

	/*
	 * No thread of the process can exec or change it now, but a process
	 * sharing the memory (CLONE_VM without CLONE_THREAD) still can: the
	 * file read may be on its way out, and is taken only if it is not.
	 */
	rcu_read_lock();
	exe = ckpt_get_file_rcu(&mm->exe_file);
	rcu_read_unlock();
	if (!exe) {
		ckpt_whyf(why,
			  "pid %d has no executable (none, or it was being replaced)",
			  pid);
		return -EOPNOTSUPP;
	}
	buf = kmalloc(PATH_MAX, GFP_KERNEL);
	if (!buf) {
		ret = -ENOMEM;
		goto out;
	}
	p = d_path(&exe->f_path, buf, PATH_MAX);
	if (IS_ERR(p) || *p != '/') {
		ckpt_whyf(why, "the executable of pid %d cannot be named (error %ld)",
			  pid, IS_ERR(p) ? PTR_ERR(p) : -ENOENT);
		ret = IS_ERR(p) ? PTR_ERR(p) : -EOPNOTSUPP;
		goto out;
	}
	if (d_unlinked(exe->f_path.dentry)) {
		size_t len = strlen(p);

		if (len > 10 && !strcmp(p + len - 10, " (deleted)"))
			p[len - 10] = '\0';
		ckpt_whyf(why, "the executable of pid %d (%s) was deleted: not supported yet",
			  pid, p);
		ret = -EOPNOTSUPP;
		goto out;
	}
	BUILD_BUG_ON(CKPT_IMG_EXE_MAX < PATH_MAX);
	strscpy(proc->exe, p, sizeof(proc->exe));
	ret = vfs_getattr(&exe->f_path, &st, STATX_INO, AT_STATX_SYNC_AS_STAT);
	if (ret) {
		why->msg = "cannot read the identity of the executable";
		goto out;
	}
	proc->exe_dev = new_encode_dev(st.dev);
	proc->exe_ino = st.ino;
out:
	kfree(buf);
	fput(exe);
	return ret;
}

/* path_noexec(), which modules cannot call. */
static bool noexec(const struct path *path)
{
	return (path->mnt->mnt_flags & MNT_NOEXEC) ||
	       (path->mnt->mnt_sb->s_iflags & SB_I_NOEXEC);
}

struct file *ckpt_exe_open(const struct ckpt_img_process *proc,
			   const struct path *root, bool same_boot,
			   struct ckpt_why *why)
{
	struct file *file;
	struct kstat st;
	int ret;

	if (!checkpoint_restore_ns_capable(current_user_ns())) {
		ckpt_whyf(why,
			  "restoring the executable link (%s) needs CAP_CHECKPOINT_RESTORE",
			  proc->exe);
		return ERR_PTR(-EPERM);
	}
	file = file_open_root(root, proc->exe, O_RDONLY | O_LARGEFILE, 0);
	if (IS_ERR(file)) {
		ckpt_whyf(why, "cannot open the executable %s: error %ld",
			  proc->exe, PTR_ERR(file));
		return file;
	}
	ret = vfs_getattr(&file->f_path, &st, STATX_INO, AT_STATX_SYNC_AS_STAT);
	if (ret) {
		ckpt_whyf(why, "cannot read the identity of the executable %s",
			  proc->exe);
	} else if (st.ino != proc->exe_ino ||
		   (same_boot && new_encode_dev(st.dev) != proc->exe_dev)) {
		ckpt_whyf(why,
			  "the executable %s is not the file it was at the checkpoint",
			  proc->exe);
		ret = -ESTALE;
	} else if (!S_ISREG(file_inode(file)->i_mode) || noexec(&file->f_path)) {
		ckpt_whyf(why,
			  "the executable %s is not a regular file on an exec mount here",
			  proc->exe);
		ret = -EACCES;
	} else if (file_permission(file, MAY_EXEC)) {
		ckpt_whyf(why, "the restarter may not execute %s",
			  proc->exe);
		ret = -EACCES;
	} else if (ckpt_exe_deny_write(file)) {
		ckpt_whyf(why,
			  "the executable %s is open for writing (text file busy)",
			  proc->exe);
		ret = -ETXTBSY;
	}
	if (ret) {
		fput(file);
		return ERR_PTR(ret);
	}
	return file;
}

void ckpt_exe_put(struct file *file)
{
	if (IS_ERR_OR_NULL(file))
		return;
	ckpt_exe_allow_write(file);
	fput(file);
}

void ckpt_exe_set(struct file *file)
{
	struct mm_struct *mm = current->mm;
	struct file *old;

	/*
	 * Under the mmap lock held for writing, as replace_mm_exe_file() does
	 * on 6.12: fork copies the exe file and takes its denial under the
	 * parent's mmap lock (dup_mmap()), so it copies either file with its
	 * denial still standing. 6.1 swaps locklessly (xchg()) and holds the
	 * lock, for reading, only while giving the old denial back; holding
	 * it across the swap as well is as safe there. Other readers take the
	 * file under RCU (get_mm_exe_file()).
	 */
	mmap_write_lock(mm);
	old = rcu_dereference_protected(mm->exe_file,
					lockdep_is_held(&mm->mmap_lock));
	rcu_assign_pointer(mm->exe_file, file);
	mmap_write_unlock(mm);
	if (old) {
		ckpt_exe_allow_write(old);
		fput(old);
	}
}
