/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Differences between the kernel lines the engine supports (Debian 12's 6.1
 * and 6.12), kept out of the core files. Force-included by Kbuild.
 */
#ifndef _CKPT_COMPAT_H
#define _CKPT_COMPAT_H

#include <linux/version.h>

struct task_struct;

/*
 * Extensible rseq (6.3) records the registered area's length; before it,
 * the only possible length was the original 32 bytes.
 */
/*
 * rseq_set_notify_resume() moved from linux/sched.h to a new linux/rseq.h
 * after 6.1; of the supported lines, 6.12 has it there.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
#include <linux/rseq.h>
#endif

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
#define ckpt_rseq_len(t)	((t)->rseq_len)
#define ckpt_set_rseq_len(t, len)	((t)->rseq_len = (len))
#else
#define ckpt_rseq_len(t)	((t)->rseq ? 32U : 0U)
#define ckpt_set_rseq_len(t, len)	do { } while (0)
#endif

/*
 * ipc/sem.c's struct sem_undo (a copy in ipc.h) ends with its adjustments
 * as an array from 6.6, a pointer to them before; either reads the same.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 6, 0)
#define CKPT_SEM_UNDO_ADJ	(semadj[])
#else
#define CKPT_SEM_UNDO_ADJ	(*semadj)
#endif

/* VMA flags became write-protected behind helpers in 6.3. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
#define ckpt_vm_flags_set(vma, flags)	vm_flags_set(vma, flags)
#else
#define ckpt_vm_flags_set(vma, flags)	((vma)->vm_flags |= (flags))
#endif

/* inode_permission() takes the mount's idmap from 6.3, its user ns before. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
#define ckpt_inode_permission(path, mask) \
	inode_permission(mnt_idmap((path)->mnt), d_inode((path)->dentry), mask)
#else
#define ckpt_inode_permission(path, mask) \
	inode_permission(mnt_user_ns((path)->mnt), d_inode((path)->dentry), mask)
#endif

/* close_on_exec() takes the fdtable in 6.1, the files_struct in 6.12. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
#define ckpt_fd_cloexec(files, fd)	close_on_exec(fd, files)
#else
#define ckpt_fd_cloexec(files, fd)	close_on_exec(fd, files_fdtable(files))
#endif

/*
 * Whether @t's CPUs may be ones it asked for: since 6.2 sched_setaffinity()
 * keeps the request in user_cpus_ptr (NULL: never asked, its CPUs are its
 * cpuset's); before, the kernel does not say.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
#define ckpt_cpus_asked(t)	((t)->user_cpus_ptr != NULL)
#else
#define ckpt_cpus_asked(t)	true
#endif

/* eventfd_signal() lost its count in 6.8: it adds 1. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 8, 0)
#define ckpt_eventfd_signal(ctx)	eventfd_signal(ctx)
#else
#define ckpt_eventfd_signal(ctx)	eventfd_signal(ctx, 1)
#endif

/* The process's POSIX timers became an hlist in 6.10. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 10, 0)
#define ckpt_for_each_posix_timer(t, sig) \
	hlist_for_each_entry(t, &(sig)->posix_timers, list)
#define ckpt_has_posix_timers(sig)	(!hlist_empty(&(sig)->posix_timers))
#else
#define ckpt_for_each_posix_timer(t, sig) \
	list_for_each_entry(t, &(sig)->posix_timers, list)
#define ckpt_has_posix_timers(sig)	(!list_empty(&(sig)->posix_timers))
#endif

/*
 * A file lock's owner, flags, type, file and pid moved into its struct
 * file_lock_core in 6.9, which split leases into a struct file_lease of
 * their own (linux/filelock.h, out of linux/fs.h since 6.3).
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
#include <linux/filelock.h>
#endif
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 9, 0)
#define ckpt_for_each_lock(fl, head)	list_for_each_entry(fl, head, c.flc_list)
#define ckpt_lock_owner(fl)		((fl)->c.flc_owner)
#define ckpt_lock_flags(fl)		((fl)->c.flc_flags)
#define ckpt_lock_type(fl)		((fl)->c.flc_type)
#define ckpt_lock_file(fl)		((fl)->c.flc_file)
#define ckpt_lock_pid(fl)		((fl)->c.flc_pid)
#define ckpt_lease			file_lease
#else
#define ckpt_for_each_lock(fl, head)	list_for_each_entry(fl, head, fl_list)
#define ckpt_lock_owner(fl)		((fl)->fl_owner)
#define ckpt_lock_flags(fl)		((fl)->fl_flags)
#define ckpt_lock_type(fl)		((fl)->fl_type)
#define ckpt_lock_file(fl)		((fl)->fl_file)
#define ckpt_lock_pid(fl)		((fl)->fl_pid)
#define ckpt_lease			file_lock
#endif

/* close_fd_get_file() became file_close_fd() in 6.8. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 8, 0)
#define ckpt_close_fd_get_file(fd)	file_close_fd(fd)
#else
#define ckpt_close_fd_get_file(fd)	close_fd_get_file(fd)
#endif

/*
 * fdinfo shows an eventfd's EFD_SEMAPHORE mode only from 6.4 on. Before,
 * read it from the context, a copy of fs/eventfd.c's private struct
 * eventfd_ctx: checked against the running kernel's BTF at load (layout.c;
 * -1 when it differs) and, per file, against what fdinfo shows (count and
 * id; -1 when they disagree).
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 4, 0)
#include <linux/fs.h>
#include <linux/kref.h>
#include <linux/wait.h>
#include "layout.h"

#define CKPT_EVENTFD_CTX_COPY	1

struct ckpt_eventfd_ctx_6_1 {
	struct kref kref;
	wait_queue_head_t wqh;
	__u64 count;
	unsigned int flags;
	int id;
};

static inline int ckpt_eventfd_semaphore(struct file *file, u64 count, int id)
{
	const struct ckpt_eventfd_ctx_6_1 *ctx = file->private_data;

	if (!ckpt_layout_ok(CKPT_LAYOUT_EVENTFD))
		return -1;
	if (!ctx || READ_ONCE(ctx->count) != count || ctx->id != id)
		return -1;
	return !!(ctx->flags & 1);	/* EFD_SEMAPHORE */
}
#else
#define ckpt_eventfd_semaphore(file, count, id)	(-1)
#endif

/* kernel_cap_t became one u64 in 6.3; before, two u32 (low word first). */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
#define ckpt_cap_u64(c)		((c).val)
#define ckpt_cap_set_u64(c, v)	((c).val = (v))
#else
#define ckpt_cap_u64(c)		((c).cap[0] | (u64)(c).cap[1] << 32)
#define ckpt_cap_set_u64(c, v) \
	((c).cap[0] = (u32)(v), (c).cap[1] = (u32)((u64)(v) >> 32))
#endif

/*
 * An mm's exe file (/proc/PID/exe) holds a write denial on its inode for as
 * long as it is the exe file (kernel/fork.c: dup_mm_exe_file(),
 * set_mm_exe_file(), replace_mm_exe_file()), and mmput() gives it back. A
 * file put there by hand must carry the same denial, taken the way that
 * kernel takes it:
 *
 *  - exe_file_deny_write_access(), which leaves files watched by fsnotify
 *    pre-content events writable: 6.14, and the stable releases it went
 *    back to, both Debian lines among them. Their fs.h defines
 *    FMODE_FSNOTIFY_HSM(), which tells them apart.
 *  - none at all: 6.11 to 6.11.10 and 6.12 to 6.12.1 ("fs: don't block
 *    i_writecount during exec", reverted in 6.13, 6.11.11 and 6.12.2).
 *  - deny_write_access() otherwise (6.1 as released).
 */
#include <linux/fs.h>

#if defined(FMODE_FSNOTIFY_HSM)
#define ckpt_exe_deny_write(file)	exe_file_deny_write_access(file)
#define ckpt_exe_allow_write(file)	exe_file_allow_write_access(file)
#elif (LINUX_VERSION_CODE >= KERNEL_VERSION(6, 11, 0) && \
	LINUX_VERSION_CODE < KERNEL_VERSION(6, 11, 11)) || \
	(LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0) && \
	LINUX_VERSION_CODE < KERNEL_VERSION(6, 12, 2))
#define ckpt_exe_deny_write(file)	0
#define ckpt_exe_allow_write(file)	do { } while (0)
#else
#define ckpt_exe_deny_write(file)	deny_write_access(file)
#define ckpt_exe_allow_write(file)	allow_write_access(file)
#endif

/*
 * A reference on the file *@fpp points to, read under rcu_read_lock(), or
 * NULL when there is none or it is being freed (its count already 0, as
 * an exe file being replaced may be): get_mm_exe_file(), which is not
 * exported. 6.7 made files SLAB_TYPESAFE_BY_RCU and get_file_rcu() take
 * the pointer's address, to read it again once it holds a reference;
 * before, a file was freed after a grace period and get_file_rcu(file) is
 * atomic_long_inc_not_zero() on its count.
 */
#include <linux/rcupdate.h>

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 7, 0)
#define ckpt_get_file_rcu(fpp)	get_file_rcu(fpp)
#else
static inline struct file *ckpt_get_file_rcu(struct file __rcu **fpp)
{
	struct file *file = rcu_dereference(*fpp);

	return file && get_file_rcu(file) ? file : NULL;
}
#endif

/*
 * What getsockopt(TCP_TIMESTAMP) reads: 6.7 added TSval in microseconds
 * (tcp_clock_ts()), before it the clock was tcp_time_stamp_raw()'s.
 * Macros: the callers include net/tcp.h, this header does not.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 7, 0)
#define ckpt_tcp_timestamp(tp) \
	(tcp_clock_ts((tp)->tcp_usec_ts) + READ_ONCE((tp)->tsoffset))
#else
#define ckpt_tcp_timestamp(tp) \
	(tcp_time_stamp_raw() + READ_ONCE((tp)->tsoffset))
#endif

/*
 * vfs_path_lookup(), exported on both lines, is declared in linux/namei.h
 * only on 6.12; 6.1 keeps its declaration in fs/internal.h.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 12, 0)
struct dentry;
struct path;
struct vfsmount;
int vfs_path_lookup(struct dentry *dentry, struct vfsmount *mnt,
		    const char *name, unsigned int flags, struct path *path);
#endif

#endif /* _CKPT_COMPAT_H */
