// SPDX-License-Identifier: GPL-2.0
/*
 * Who may checkpoint a process: whoever may ptrace-attach to it, by the
 * kernel's own rule, ptrace_may_access(PTRACE_MODE_ATTACH_REALCREDS) with
 * the security modules' hook (commoncap's capability subset, Yama's
 * ptrace_scope, SELinux's process:ptrace). A checkpoint reads everything
 * a debugger could, so it asks what a debugger asks.
 *
 * Modules cannot call ptrace_may_access(). Opening /proc/PID/mem runs it:
 * proc_mem_open() -> mm_access(PTRACE_MODE_ATTACH | PTRACE_MODE_FSCREDS),
 * which also waits out an exec in progress (exec_update_lock), so the ids
 * it compares are the ones the process will run with. The FSCREDS variant
 * compares the caller's fsuid and fsgid; the open is made with a copy of
 * the caller's credentials whose fsuid and fsgid are its real ids, which
 * is what REALCREDS compares (capabilities unchanged).
 *
 * /proc is found once, through the caller's root, and must be a procfs;
 * the pid it is asked about is the target's number in that procfs's pid
 * namespace, not in the caller's (the two differ when the caller's root
 * holds another namespace's /proc). The process's pagemap, which the
 * memory capture reads (mm.c), is opened there with the same credentials,
 * once the attach rule has said yes.
 *
 * All of it happens before anything is frozen or asked of the process.
 */

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/proc_fs.h>
#include <linux/sched/coredump.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>

#include "access.h"
#include "why.h"

/*
 * Why the kernel said no, as far as the caller may be told: the ptrace
 * rule's own steps, read only to word the message. Nothing of the
 * process's files or memory is named.
 */
static const char *refusal(struct task_struct *task)
{
	const struct cred *cred = current_cred(), *tcred;
	const char *why = NULL;
	struct mm_struct *mm;
	bool ptrace_cap;

	rcu_read_lock();
	tcred = __task_cred(task);
	ptrace_cap = ns_capable_noaudit(tcred->user_ns, CAP_SYS_PTRACE);
	if (!ptrace_cap &&
	    (!uid_eq(cred->uid, tcred->euid) || !uid_eq(cred->uid, tcred->suid) ||
	     !uid_eq(cred->uid, tcred->uid) || !gid_eq(cred->gid, tcred->egid) ||
	     !gid_eq(cred->gid, tcred->sgid) || !gid_eq(cred->gid, tcred->gid) ||
	     !cap_issubset(tcred->cap_permitted, cred->cap_permitted)))
		why = "the process belongs to another user or is privileged";
	rcu_read_unlock();
	if (why)
		return why;

	task_lock(task);
	mm = task->mm;
	if (!ptrace_cap && mm && get_dumpable(mm) != SUID_DUMP_USER)
		why = "the process is not dumpable (setuid, setgid or it said so)";
	task_unlock(task);
	return why ?: "ptrace access is refused (Yama's ptrace_scope or another security module)";
}

/* The caller's credentials, with the real ids as file-system ids. */
static const struct cred *real_fscreds(void)
{
	struct cred *new = prepare_creds();

	if (!new)
		return NULL;
	new->fsuid = new->uid;
	new->fsgid = new->gid;
	return new;
}

int ckpt_access_check(struct task_struct *task, struct file **pagemap,
		      struct ckpt_why *why)
{
	const struct cred *creds, *old;
	pid_t tgid = task_tgid_vnr(task);
	struct file *proc, *mem;
	struct pid *pid;
	char name[32];
	pid_t nr;
	int ret;

	*pagemap = NULL;
	creds = real_fscreds();
	if (!creds)
		return -ENOMEM;
	old = override_creds(creds);

	proc = filp_open("/proc", O_RDONLY | O_DIRECTORY, 0);
	if (IS_ERR(proc)) {
		ret = PTR_ERR(proc);
		ckpt_whyf(why,
			  "cannot open /proc (error %d): it is needed to check the rights on pid %d",
			  ret, tgid);
		goto out_creds;
	}
	if (proc->f_path.dentry->d_sb->s_magic != PROC_SUPER_MAGIC ||
	    proc->f_path.dentry != proc->f_path.mnt->mnt_root) {
		ckpt_whyf(why,
			  "/proc is not a procfs: it is needed to check the rights on pid %d",
			  tgid);
		ret = -ENOENT;
		goto out_proc;
	}

	pid = get_task_pid(task, PIDTYPE_TGID);
	nr = pid ? pid_nr_ns(pid, proc_pid_ns(proc->f_path.dentry->d_sb)) : 0;
	put_pid(pid);
	if (!nr) {
		ckpt_whyf(why,
			  "pid %d is not visible in /proc (another pid namespace's): its rights cannot be checked",
			  tgid);
		ret = -EPERM;
		goto out_proc;
	}

	snprintf(name, sizeof(name), "%d/mem", nr);
	mem = file_open_root(&proc->f_path, name, O_RDONLY | O_LARGEFILE, 0);
	if (IS_ERR(mem)) {
		ret = PTR_ERR(mem);
		if (ret == -ENOENT || ret == -ESRCH) {
			ckpt_whyf(why,
				  "pid %d is not visible in /proc (hidden, or it exited)",
				  tgid);
			ret = -ESRCH;
		} else if (ret == -EACCES || ret == -EPERM) {
			ckpt_whyf(why, "no right to checkpoint pid %d: %s",
				  tgid, refusal(task));
			ret = -EPERM;
		} else {
			ckpt_whyf(why,
				  "cannot check the rights on pid %d (error %d)",
				  tgid, ret);
		}
		goto out_proc;
	}
	fput(mem);

	snprintf(name, sizeof(name), "%d/pagemap", nr);
	*pagemap = file_open_root(&proc->f_path, name, O_RDONLY | O_LARGEFILE,
				  0);
	if (IS_ERR(*pagemap)) {
		ret = PTR_ERR(*pagemap);
		*pagemap = NULL;
		ckpt_whyf(why, "cannot open the pagemap of pid %d (error %d)",
			  tgid, ret);
		goto out_proc;
	}
	ret = 0;
out_proc:
	fput(proc);
out_creds:
	revert_creds(old);
	put_cred(creds);
	return ret;
}
