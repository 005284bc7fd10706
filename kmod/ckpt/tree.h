/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _CKPT_TREE_H
#define _CKPT_TREE_H

#include <uapi/linux/ckpt.h>

struct ckpt_cp_group;

long ckpt_ioctl_checkpoint_tree(struct ckpt_checkpoint_tree __user *uarg);

/*
 * The steps of a tree's request that a single process's has not
 * (checkpoint.c calls them): before anything is frozen, once every member
 * is frozen and before any is captured, and on the way out.
 */
int ckpt_tree_prepare(struct ckpt_cp_group *g);
int ckpt_tree_check(struct ckpt_cp_group *g);
void ckpt_tree_release(struct ckpt_cp_group *g);

/* The index of the member whose process @p is (a leader), or -1. */
int ckpt_tree_member_of(const struct ckpt_cp_group *g,
			const struct task_struct *p);

#endif /* _CKPT_TREE_H */
