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
	time64_t shm_atim;
	time64_t shm_dtim;
	time64_t shm_ctim;
	struct pid *shm_cprid;
	struct pid *shm_lprid;
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

struct ckpt_sem_undo {
	struct list_head list_proc;
	struct rcu_head rcu;
	void *ulp;		/* struct sem_undo_list: compared only */
	struct list_head list_id;
	int semid;
	short CKPT_SEM_UNDO_ADJ;	/* compat.h */
};

struct ckpt_msg_msgseg {
	struct ckpt_msg_msgseg *next;
};

/* ipc/util.h's indexes into ipc_namespace.ids[]. */
#define IDS_SEM		0
#define IDS_MSG		1
#define IDS_SHM		2

/*
 * One set's adjustments (SEM_UNDO) as taken, @nr members' of @nsems each,
 * in one allocation.
 */
struct ckpt_set_undo {
	u32 nr, nsems;
	u32 *member;		/* [nr]: indexes into the group */
	s16 *adj;		/* [nr][nsems] */
};

/* A member's undo list, by the address its threads hold (semundo.c). */
struct ckpt_undo_owner {
	const void *ulp;	/* compared only, never read */
	u32 member;
	u32 shared_with;	/* another member that holds it too, + 1 */
	bool mixed;		/* its member's threads hold other lists too */
};

/*
 * A tree's System V IPC: the members' IPC namespace and, when the tree
 * has it to itself (@own), every object in it, or else the segments only
 * members use (take_private()), read while the members are frozen. The
 * root's image carries them.
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
	struct ckpt_set_undo **sem_undo; /* [nr_sem]: NULL, none */
	u32 nr_sem, nr_msg;
	/* During ckpt_ipc_capture(): the members' undo lists, by address. */
	struct ckpt_undo_owner *owners;
	u32 nr_owners;
};

/*
 * A member's adjustments to semaphores at its exit (SEM_UNDO): its SEMUNDO
 * sections, @nr of them in @buf, each 8-byte aligned, by ascending id.
 */
struct ckpt_sem_undo_img {
	void *buf;
	u32 nr;
};

/*
 * Semaphore undo (semundo.c). The members' undo lists, by the address
 * their threads hold, into c->owners; ckpt_semundo_owners_free() drops
 * them. No list is ever read through that address: a member killed while
 * frozen frees its list as it exits. Each list is found instead from the
 * sets, under their lock: each entry is on its set's list too, until its
 * process removes it, before the list is freed.
 */
int ckpt_semundo_owners(struct ckpt_cp_group *g);
void ckpt_semundo_owners_free(struct ckpt_ipc *c);

/*
 * Set @k of @c (@sma, held by take_all()), in a namespace the tree has to
 * itself: the members' adjustments to it, into c->sem_undo[k].
 */
int ckpt_semundo_take_set(struct ckpt_ipc *c, u32 k,
			  struct ckpt_sem_array *sma, struct ckpt_why *why);

/*
 * Once the objects are taken: each member's adjustments into its SEMUNDO
 * sections, by ascending set; or, for a namespace not the tree's own (or
 * a single process), a member with adjustments refused by name.
 */
int ckpt_semundo_capture(struct ckpt_cp_group *g);

/*
 * Once the members are frozen: their IPC namespace, whether the tree has
 * it alone and, if so, its objects and each member's semaphore
 * adjustments. A member in another IPC namespace than the root, or that
 * used semaphore undo (SEM_UNDO) in a namespace the tree does not have to
 * itself, is refused. A single process (not a tree) is refused only for
 * semaphore undo.
 */
int ckpt_ipc_capture(struct ckpt_cp_group *g);
void ckpt_ipc_free(struct ckpt_ipc *c);

/* A member's SEMUNDO sections, into its image; and freed. */
int ckpt_ipc_write_undo(const struct ckpt_sem_undo_img *u,
			struct ckpt_writer *w);
void ckpt_ipc_free_undo(struct ckpt_sem_undo_img *u);

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
