/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _CKPT_CHECKPOINT_H
#define _CKPT_CHECKPOINT_H

#include <linux/types.h>
#include <linux/workqueue.h>
#include <uapi/linux/ckpt.h>
#include <uapi/linux/ckpt_image.h>

#include "fds.h"
#include "ipc.h"
#include "image.h"
#include "mm.h"
#include "timers.h"
#include "why.h"

struct ckpt_freeze;
struct ckpt_reg;
struct pid_namespace;

/*
 * One process's checkpoint, from the ioctl's arguments to the image's
 * last byte: what the steps of checkpoint.c take, hold and hand on. One
 * per member of a request (struct ckpt_cp_group); everything it
 * references is dropped by release_member() on the way out.
 */
struct ckpt_cp_ctx {
	struct ckpt_checkpoint *a;	/* the arguments; results go back here */
	struct ckpt_why why;
	bool have_target, have_writer;	/* what release_member() drops */
	bool in_tree;			/* TREE section, tree.c's checks */
	struct pid_namespace *ns;	/* the image's pids are numbered in */
	struct ckpt_img_tree tree;	/* in_tree: the TREE section */
	u32 ns_pid;			/* in_tree: its pid in @ns */
	const void *ctty;		/* in_tree: its terminal's pty master, compared only */
	struct task_struct *task;	/* referenced */
	struct mm_struct *mm;		/* referenced: the program checked */
	struct file *pagemap;		/* referenced, from the rights check */
	unsigned int timeout;		/* ms, for the callbacks and freeze */
	unsigned long deadline;		/* jiffies */
	u64 t0, t1;			/* request start, every thread parked */
	/* Only a process that runs on has a reason to wait less. */
	bool stage;
	struct ckpt_reg *reg;		/* libckpt's registration, if any */
	u64 req;			/* its request id */
	struct ckpt_freeze *fz;
	struct task_struct **tasks;	/* per parked thread, NULL if exited */
	struct ckpt_writer w;
	struct ckpt_stage st;
	/* What goes into the image. */
	struct ckpt_img_process *proc;
	struct ckpt_img_fs *fs;
	struct ckpt_fds scan;
	struct ckpt_img_signals *sigs;
	size_t sigs_len;
	struct ckpt_timers timers;
	struct ckpt_img_creds *creds;
	size_t creds_len;
	struct ckpt_mm_capture mc;
	const struct ckpt_ipc *ipc;	/* a tree's root: System V objects to write */
	struct ckpt_img_zombie *zombies;	/* a tree's member: its zombie children */
	u32 nr_zombies, max_zombies;
	struct ckpt_sem_undo_img undo;	/* a tree's member: SEM_UNDO adjustments */
	/* A step run in a worker (each_member_parallel()). */
	struct work_struct work;
	int (*step)(struct ckpt_cp_ctx *ctx);
	int step_ret;
	struct mm_struct *caller_mm;	/* lent to the worker: pagemap reads land there */
	atomic_t *pending;		/* workers not done yet */
	wait_queue_head_t *done;	/* woken by the last of them */
};

/*
 * One request: its members, in order (CKPT_IOC_CHECKPOINT is a group of
 * one), under one deadline. Each step runs for every member before the
 * next step starts (Documentation/engine.md, "Process trees").
 */
struct ckpt_cp_group {
	struct ckpt_cp_ctx *m;		/* members; m[0] a tree's root */
	unsigned int nr;
	u32 flags;			/* CKPT_CHECKPOINT_* */
	unsigned int timeout;		/* ms; 0: the default */
	unsigned long deadline;		/* jiffies */
	bool stage;			/* pages staged, written after the thaw */
	struct eventfd_ctx *staged_ev;	/* tree, CKPT_CHECKPOINT_STAGED */
	bool tree;			/* CKPT_IOC_CHECKPOINT_TREE */
	unsigned int failed;		/* the member whose why tells */
	struct pid_namespace *ns;	/* tree: the root's, referenced */
	u32 *sorted;			/* tree: member indexes, by task */
	u8 id[CKPT_TREE_ID_LEN];	/* tree: the TREE sections' id */
	struct ckpt_ipc ipc;		/* tree: System V IPC (ipc.c) */
	u64 t0, t1;			/* request start, first freeze */
	u64 frozen_ns, total_ns;
	struct ckpt_why why;		/* a message naming its member */
};

int ckpt_cp_group_run(struct ckpt_cp_group *g);

/* The workers that write a tree's images side by side. */
int ckpt_checkpoint_init(void);
void ckpt_checkpoint_uninit(void);
const char *ckpt_cp_group_why(struct ckpt_cp_group *g);

long ckpt_ioctl_checkpoint(struct ckpt_checkpoint __user *uarg);

#endif /* _CKPT_CHECKPOINT_H */
