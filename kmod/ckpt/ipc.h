/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _CKPT_IPC_H
#define _CKPT_IPC_H

#include <linux/list.h>
#include <linux/refcount.h>
#include <linux/ipc.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <uapi/linux/ckpt_image.h>

#include "why.h"

struct ckpt_cp_group;
struct ckpt_writer;
struct file;
struct ipc_namespace;
struct vm_area_struct;

/*
 * Copies of ipc/shm.c's, sem.c's, msg.c's and msgutil.c's private
 * structures, up to the last member the engine reads: checked against the
 * running kernel's BTF at load (layout.c, feature "sysvipc").
 */
struct ckpt_shmid_kernel {
	struct kern_ipc_perm shm_perm;
	struct file *shm_file;
	unsigned long shm_nattch;
	unsigned long shm_segsz;
};

struct ckpt_sem {
	int semval;
	struct pid *sempid;
	spinlock_t lock;
	struct list_head pending_alter;
	struct list_head pending_const;
	time64_t sem_otime;
} ____cacheline_aligned_in_smp;

struct ckpt_sem_array {
	struct kern_ipc_perm sem_perm;
	time64_t sem_ctime;
	struct list_head pending_alter;
	struct list_head pending_const;
	struct list_head list_id;
	int sem_nsems;
	int complex_count;
	unsigned int use_global_lock;
	struct ckpt_sem sems[];
};

struct ckpt_msg_queue {
	struct kern_ipc_perm q_perm;
	time64_t q_stime;
	time64_t q_rtime;
	time64_t q_ctime;
	unsigned long q_cbytes;
	unsigned long q_qnum;
	unsigned long q_qbytes;
	struct pid *q_lspid;
	struct pid *q_lrpid;
	struct list_head q_messages;
};

struct ckpt_sem_undo_list {
	refcount_t refcnt;
	spinlock_t lock;
	struct list_head list_proc;
};

struct ckpt_msg_msgseg {
	struct ckpt_msg_msgseg *next;
};

/*
 * A tree's System V IPC: the members' IPC namespace and, when the tree
 * has it to itself (@own), every object in it, read while the members are
 * frozen. The root's image carries them.
 */
struct ckpt_ipc {
	struct ipc_namespace *ns;	/* the members'; held by them, frozen */
	bool own;			/* no process outside the tree in @ns */
	bool initial;			/* @ns is the initial IPC namespace */
	pid_t outsider;			/* else, !own: one outside in it, to name */
	struct ckpt_img_sysvshm *shm;	/* [nr_shm] */
	struct file **shm_file;		/* [nr_shm], referenced */
	u32 nr_shm;
	void **sem, **msg;		/* sections: struct ckpt_img_sysv{sem,msg} + */
	size_t *sem_len, *msg_len;
	u32 nr_sem, nr_msg;
};

/*
 * Once the members are frozen: their IPC namespace, whether the tree has
 * it alone and, if so, its objects. A member that uses semaphore undo
 * (SEM_UNDO), or is in another IPC namespace than the root, is refused.
 */
int ckpt_ipc_capture(struct ckpt_cp_group *g);
void ckpt_ipc_free(struct ckpt_ipc *c);

/* The sections of @c, into the root's image (before VMAS). */
int ckpt_ipc_write(const struct ckpt_ipc *c, struct ckpt_writer *w);

/*
 * Whether @file is a mapping's file of a System V shared memory segment
 * (shmat()'s; its inode number is the segment's id).
 */
bool ckpt_ipc_shm_file(const struct file *file);

/*
 * Describes @vma, a mapping of a segment, in @v: a segment of @c (NULL:
 * not a tree), or refused by name.
 */
int ckpt_ipc_vma(const struct ckpt_ipc *c, const struct vm_area_struct *vma,
		 struct ckpt_img_vma *v, struct ckpt_why *why);

#endif /* _CKPT_IPC_H */
