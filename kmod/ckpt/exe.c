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
 * An executable deleted while the process ran (a program rebuilt or a
 * package upgraded under a running job: the linker and the package
 * manager unlink the old file, they do not write into it), or a memfd run
 * with fexecve(), has no name to open again. It is the file its text is
 * mapped from, so it becomes a file object (fileobj.c) like those
 * mappings, carried by content and made anew, unlinked, by the restarter,
 * which hands it over read-only: an exe file denies writes.
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

#include "compat.h"
#include "exe.h"
#include "fds.h"
#include "fileobj.h"
#include "why.h"

/*
 * @p: d_path()'s name of @exe, which ends in " (deleted)"; @kind, what
 * ckpt_fileobj_kind() makes of it.
 */
static int exe_object(struct file *exe, char *p, int kind,
		      struct ckpt_img_process *proc, struct ckpt_fds *scan,
		      pid_t pid, struct ckpt_why *why)
{
	int idx = -EOPNOTSUPP;
	size_t len = strlen(p);
	const struct cred *old;

	/*
	 * exec() needs no read permission (its file is open for reading all
	 * the same): the content of one the process could not read (mode
	 * 0711) must not reach its image. The permission only, as the
	 * process: a file opened to ask the LSMs too would be given back only
	 * once the request returns (fput() is deferred), and be counted as a
	 * holder by the checks of fileobj.c.
	 */
	old = override_creds(scan->cred);
	if (ckpt_inode_permission(&exe->f_path, MAY_READ | MAY_OPEN))
		idx = -EACCES;
	revert_creds(old);
	if (idx != -EACCES &&
	    (kind == CKPT_FILE_DELETED || kind == CKPT_FILE_MEMFD))
		idx = ckpt_fileobj_add(&scan->objs, exe, kind, p, -1);
	if (len > 10 && !strcmp(p + len - 10, " (deleted)"))
		p[len - 10] = '\0';
	if (idx < 0) {
		ckpt_whyf(why, "the executable of pid %d (%s) was deleted, and %s",
			  pid, p,
			  idx == -EACCES ? "the process may not read it: its content cannot be saved" :
			  idx == -E2BIG ? "the process holds too many memfds, deleted, node-local files and FIFOs" :
			  idx == -ENAMETOOLONG ? "its name is too long to carry it" :
			  "is no file the image can carry: not supported yet");
		return idx;
	}
	strscpy(proc->exe, p, sizeof(proc->exe));
	proc->exe_dev = CKPT_IMG_EXE_OBJ;
	proc->exe_ino = idx;
	return 0;
}

int ckpt_exe_capture(struct mm_struct *mm, struct ckpt_img_process *proc,
		     pid_t pid, struct ckpt_fds *scan, struct ckpt_why *why)
{
	struct file *exe;
	struct kstat st;
	char *buf, *p;
	int ret, kind;

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
	/* A memfd's dentry is a root of its own: never "unlinked". */
	kind = ckpt_fileobj_kind(exe, p);
	if (d_unlinked(exe->f_path.dentry) || kind == CKPT_FILE_MEMFD) {
		ret = exe_object(exe, p, kind, proc, scan, pid, why);
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

/* The executable at its path, if it is still the file it was. */
static struct file *exe_at_path(const struct ckpt_img_process *proc,
				const struct path *root, bool same_boot,
				struct ckpt_why *why)
{
	struct file *file;
	struct kstat st;
	int ret;

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
	}
	if (ret) {
		fput(file);
		return ERR_PTR(ret);
	}
	return file;
}

/*
 * A deleted executable the image carries: a new open file, read-only, of
 * the one the restarter made for its object, as the process's mappings of
 * it are (ckpt_fileobj_open()).
 */
static struct file *exe_made(const struct ckpt_img_process *proc,
			     const struct ckpt_objfiles *of,
			     struct ckpt_why *why)
{
	struct file *made = proc->exe_ino < of->nr ? of->files[proc->exe_ino] : NULL;
	struct file *file;

	if (!made) {
		ckpt_whyf(why,
			  "no file was made for the deleted executable %s (object %llu)",
			  proc->exe, proc->exe_ino);
		return ERR_PTR(-EBADF);
	}
	file = dentry_open(&made->f_path, O_RDONLY | O_LARGEFILE,
			   of->cred ?: current_cred());
	if (IS_ERR(file))
		ckpt_whyf(why,
			  "cannot open the file made for the deleted executable %s: error %ld",
			  proc->exe, PTR_ERR(file));
	return file;
}

struct file *ckpt_exe_open(const struct ckpt_img_process *proc,
			   const struct path *root,
			   const struct ckpt_objfiles *of,
			   struct ckpt_why *why)
{
	struct file *file;
	int ret = 0;

	if (!checkpoint_restore_ns_capable(current_user_ns())) {
		ckpt_whyf(why,
			  "restoring the executable link (%s) needs CAP_CHECKPOINT_RESTORE",
			  proc->exe);
		return ERR_PTR(-EPERM);
	}
	if (proc->exe_dev == CKPT_IMG_EXE_OBJ)
		file = exe_made(proc, of, why);
	else
		file = exe_at_path(proc, root, of->same_boot, why);
	if (IS_ERR(file))
		return file;
	if (!S_ISREG(file_inode(file)->i_mode) || noexec(&file->f_path)) {
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
