// SPDX-License-Identifier: GPL-2.0
/*
 * Lazy restart: the pages of private writable anonymous mappings (heap,
 * stacks, anonymous mmaps: nearly all of a large process) are not read
 * before the process runs. Their mappings are registered, in missing mode,
 * with a userfaultfd the restarter made in this process before it called
 * CKPT_IOC_RESTART; the restarter (cli/lazy.c) fills each page from the
 * image on first touch and all the others behind, then closes it.
 *
 * The engine reaches the userfaultfd only through its file's ioctl, as the
 * restarter would. UFFDIO_REGISTER reads its argument from user memory, so
 * the engine maps a page for it in the process and unmaps it after; that
 * page is never registered, so unmapping it sends the restarter no event
 * (an unmap event would wait for a reader who is not reading yet).
 *
 * Without its restarter the process would find zeros where its pages were
 * not in yet, so the restarter's child sets PR_SET_PDEATHSIG to SIGKILL
 * before it restarts lazily, and the main thread sets it again once it has
 * the image's credentials (commit_creds() clears it when ids or
 * capabilities change), checking its restarter is still its parent; the
 * restarter clears it through CKPT_IOC_LAZY_DONE once every page is in.
 * The engine remembers which processes it armed so: LAZY_DONE clears no
 * death signal a process set for itself.
 */

#include <linux/file.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/sched/signal.h>
#include <linux/pid.h>
#include <linux/sched/task.h>
#include <linux/uaccess.h>
#include <uapi/linux/userfaultfd.h>

#include "image_check.h"
#include "lazy.h"
#include "why.h"

/* Processes a lazy restart armed, until LAZY_DONE or they are gone. */
struct armed {
	struct list_head node;
	struct pid *pid;
};

#define MAX_ARMED	4096

static DEFINE_MUTEX(armed_lock);
static LIST_HEAD(armed_list);
static unsigned int nr_armed;

static void forget(struct armed *a)
{
	list_del(&a->node);
	put_pid(a->pid);
	kfree(a);
	nr_armed--;
}

/* Drops the entries of processes that are gone; armed_lock held. */
static void prune_armed(void)
{
	struct armed *a, *tmp;

	list_for_each_entry_safe(a, tmp, &armed_list, node)
		if (!pid_has_task(a->pid, PIDTYPE_TGID))
			forget(a);
}

static int remember_armed(void)
{
	struct armed *a = kzalloc(sizeof(*a), GFP_KERNEL);
	int ret = 0;

	if (!a)
		return -ENOMEM;
	mutex_lock(&armed_lock);
	prune_armed();
	if (nr_armed >= MAX_ARMED) {
		ret = -EAGAIN;
		kfree(a);
	} else {
		a->pid = get_task_pid(current, PIDTYPE_TGID);
		list_add(&a->node, &armed_list);
		nr_armed++;
	}
	mutex_unlock(&armed_lock);
	return ret;
}

/* Whether the engine armed @pid, forgetting it if so. */
static bool take_armed(struct pid *pid)
{
	struct armed *a;
	bool found = false;

	mutex_lock(&armed_lock);
	list_for_each_entry(a, &armed_list, node) {
		if (a->pid == pid) {
			forget(a);
			found = true;
			break;
		}
	}
	mutex_unlock(&armed_lock);
	return found;
}

void ckpt_lazy_uninit(void)
{
	mutex_lock(&armed_lock);
	while (!list_empty(&armed_list))
		forget(list_first_entry(&armed_list, struct armed, node));
	mutex_unlock(&armed_lock);
}

/* A page of the process's for ioctl arguments. */
static unsigned long arg_page(void)
{
	return vm_mmap(NULL, 0, PAGE_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, 0);
}

/* The userfaultfd's ioctl on @arg, passed through the user page @ubuf. */
static long uffd_ioctl(struct file *uffd, unsigned int cmd, unsigned long ubuf,
		       void *arg, size_t len)
{
	long ret;

	if (copy_to_user((void __user *)ubuf, arg, len))
		return -EFAULT;
	ret = uffd->f_op->unlocked_ioctl(uffd, cmd, ubuf);
	if (!ret && copy_from_user(arg, (void __user *)ubuf, len))
		return -EFAULT;
	return ret;
}

static long uffd_register(struct file *uffd, unsigned long ubuf,
			  unsigned long start, unsigned long len)
{
	struct uffdio_register reg = {
		.range = { .start = start, .len = len },
		.mode = UFFDIO_REGISTER_MODE_MISSING,
	};
	long ret = uffd_ioctl(uffd, UFFDIO_REGISTER, ubuf, &reg, sizeof(reg));

	if (!ret && !(reg.ioctls & (1ULL << _UFFDIO_COPY)))
		ret = -EOPNOTSUPP;
	return ret;
}

/* Whether current's mapping at @addr is registered in missing mode. */
static bool registered(unsigned long addr)
{
	struct mm_struct *mm = current->mm;
	struct vm_area_struct *vma;
	bool ret;

	mmap_read_lock(mm);
	vma = find_vma(mm, addr);
	ret = vma && vma->vm_start <= addr && (vma->vm_flags & VM_UFFD_MISSING);
	mmap_read_unlock(mm);
	return ret;
}

/*
 * Registers a page of this process's and unregisters it again: a
 * userfaultfd made in another process, or not set up (UFFDIO_API), fails
 * here, before anything has changed, not once the memory is replaced.
 */
static int probe(struct file *uffd, struct ckpt_why *why)
{
	unsigned long ubuf = arg_page(), page = arg_page();
	struct uffdio_range range = { .start = page, .len = PAGE_SIZE };
	int ret = 0;

	if (IS_ERR_VALUE(ubuf) || IS_ERR_VALUE(page)) {
		ret = -ENOMEM;
		why->msg = "cannot map a page for the userfaultfd's arguments";
		goto out;
	}
	ret = uffd_register(uffd, ubuf, page, PAGE_SIZE);
	if (!ret && !registered(page)) {
		/* Another process's: undo what that did there. */
		uffd_ioctl(uffd, UFFDIO_UNREGISTER, ubuf, &range, sizeof(range));
		ret = -EINVAL;
	}
	if (ret) {
		why->msg = "the userfaultfd does not take this process's memory (not its own, or no UFFDIO_API)";
		goto out;
	}
	ret = uffd_ioctl(uffd, UFFDIO_UNREGISTER, ubuf, &range, sizeof(range));
	if (ret) {
		/* Still registered: unmapping it would wait on a reader. */
		why->msg = "cannot unregister from the userfaultfd";
		page = -EBUSY;
	}
out:
	if (!IS_ERR_VALUE(page))
		vm_munmap(page, PAGE_SIZE);
	if (!IS_ERR_VALUE(ubuf))
		vm_munmap(ubuf, PAGE_SIZE);
	return ret;
}

struct file *ckpt_lazy_get(int fd, struct ckpt_why *why)
{
	struct file *f = fget(fd);
	int ret;

	if (!f) {
		why->msg = "the userfaultfd descriptor is not open";
		return ERR_PTR(-EBADF);
	}
	if (file_inode(f)->i_sb->s_magic != ANON_INODE_FS_MAGIC ||
	    strcmp(f->f_path.dentry->d_name.name, "[userfaultfd]")) {
		fput(f);
		why->msg = "the lazy restart's descriptor is not a userfaultfd";
		return ERR_PTR(-EINVAL);
	}
	ret = probe(f, why);
	if (ret) {
		fput(f);
		return ERR_PTR(ret);
	}
	return f;
}

int ckpt_lazy_register(struct file *uffd, const struct ckpt_img_vma *vmas,
		       u32 nr_vmas, struct ckpt_why *why)
{
	unsigned long ubuf = arg_page();
	long ret = 0;
	u32 i;

	if (IS_ERR_VALUE(ubuf)) {
		why->msg = "cannot map a page for the userfaultfd's arguments";
		return (int)ubuf;
	}
	for (i = 0; i < nr_vmas && !ret; i++) {
		const struct ckpt_img_vma *v = &vmas[i];

		if (!ckpt_img_vma_lazy(v))
			continue;
		ret = uffd_register(uffd, ubuf, v->start, v->end - v->start);
		if (ret) {
			ckpt_whyf(why,
				  "cannot register %llx-%llx with the userfaultfd: error %ld",
				  v->start, v->end, ret);
		}
	}
	vm_munmap(ubuf, PAGE_SIZE);
	return ret;
}

int ckpt_lazy_arm(pid_t ppid)
{
	struct task_struct *parent;
	int ret;

	ret = remember_armed();
	if (ret)
		return ret;
	WRITE_ONCE(current->pdeath_signal, SIGKILL);
	/*
	 * The restarter's exit reparents, then reads the death signal,
	 * under tasklist_lock; here the signal is set, then the parent read:
	 * one of the two sees the other.
	 */
	smp_mb();
	rcu_read_lock();
	parent = rcu_dereference(current->real_parent);
	ret = task_tgid_nr(parent) == ppid && !(parent->flags & PF_EXITING) ?
	      0 : -ESRCH;
	rcu_read_unlock();
	return ret;
}

long ckpt_ioctl_lazy_done(u32 __user *upid)
{
	struct task_struct *task;
	struct pid *pid;
	long ret = -ESRCH;
	u32 nr;

	if (get_user(nr, upid))
		return -EFAULT;
	pid = find_get_pid(nr);
	task = pid ? get_pid_task(pid, PIDTYPE_TGID) : NULL;
	put_pid(pid);
	if (!task)
		return ret;
	rcu_read_lock();
	ret = -EPERM;
	if (task_tgid_nr(rcu_dereference(task->real_parent)) ==
	    task_tgid_nr(current))
		ret = 0;
	rcu_read_unlock();
	/* Only a death signal the engine armed is the engine's to clear. */
	if (!ret && !take_armed(task_tgid(task)))
		ret = -ENOENT;
	if (!ret)
		cmpxchg(&task->pdeath_signal, SIGKILL, 0);
	put_task_struct(task);
	return ret;
}
