// SPDX-License-Identifier: GPL-2.0
/*
 * Credentials: recorded at checkpoint.
 *
 * Checkpoint: the process's user and group ids (real, effective, saved,
 * file system), supplementary groups and capability sets, as the
 * checkpointer's user namespace names them, and its dumpability. Every
 * thread must have the same ones (glibc keeps them so; a raw setuid() in one
 * thread does not), and the process must be in the checkpointer's user
 * namespace: capabilities held in another mean something else here.
 */

#include <linux/cred.h>
#include <linux/mm_types.h>
#include <linux/sched.h>
#include <linux/sched/coredump.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/uidgid.h>

#include "creds.h"

static bool same_groups(const struct group_info *a, const struct group_info *b)
{
	int i;

	if (a == b)
		return true;
	if (a->ngroups != b->ngroups)
		return false;
	for (i = 0; i < a->ngroups; i++)
		if (!gid_eq(a->gid[i], b->gid[i]))
			return false;
	return true;
}

static bool same_ids(const struct cred *a, const struct cred *b)
{
	return uid_eq(a->uid, b->uid) && uid_eq(a->euid, b->euid) &&
	       uid_eq(a->suid, b->suid) && uid_eq(a->fsuid, b->fsuid) &&
	       gid_eq(a->gid, b->gid) && gid_eq(a->egid, b->egid) &&
	       gid_eq(a->sgid, b->sgid) && gid_eq(a->fsgid, b->fsgid) &&
	       same_groups(a->group_info, b->group_info);
}

static bool same_caps(const struct cred *a, const struct cred *b)
{
	return ckpt_cap_u64(a->cap_inheritable) == ckpt_cap_u64(b->cap_inheritable) &&
	       ckpt_cap_u64(a->cap_permitted) == ckpt_cap_u64(b->cap_permitted) &&
	       ckpt_cap_u64(a->cap_effective) == ckpt_cap_u64(b->cap_effective) &&
	       ckpt_cap_u64(a->cap_bset) == ckpt_cap_u64(b->cap_bset) &&
	       ckpt_cap_u64(a->cap_ambient) == ckpt_cap_u64(b->cap_ambient);
}

static int cmp_u32(const void *a, const void *b)
{
	u32 x = *(const u32 *)a, y = *(const u32 *)b;

	return x < y ? -1 : x > y;
}

/* @c's ids and groups in @ns into @img and its groups; false if unnamed. */
static bool name_ids(struct user_namespace *ns, const struct cred *c,
		     struct ckpt_img_creds *img)
{
	u32 *g = (u32 *)(img + 1);
	int i;

	img->uid = from_kuid(ns, c->uid);
	img->euid = from_kuid(ns, c->euid);
	img->suid = from_kuid(ns, c->suid);
	img->fsuid = from_kuid(ns, c->fsuid);
	img->gid = from_kgid(ns, c->gid);
	img->egid = from_kgid(ns, c->egid);
	img->sgid = from_kgid(ns, c->sgid);
	img->fsgid = from_kgid(ns, c->fsgid);
	if (img->uid == CKPT_IMG_NO_ID || img->euid == CKPT_IMG_NO_ID ||
	    img->suid == CKPT_IMG_NO_ID || img->fsuid == CKPT_IMG_NO_ID ||
	    img->gid == CKPT_IMG_NO_ID || img->egid == CKPT_IMG_NO_ID ||
	    img->sgid == CKPT_IMG_NO_ID || img->fsgid == CKPT_IMG_NO_ID)
		return false;
	for (i = 0; i < c->group_info->ngroups; i++) {
		g[i] = from_kgid(ns, c->group_info->gid[i]);
		if (g[i] == CKPT_IMG_NO_ID)
			return false;
	}
	/* Sorted by kernel id; another namespace's names may sort otherwise. */
	sort(g, img->nr_groups, sizeof(*g), cmp_u32, NULL);
	return true;
}

int ckpt_creds_capture(struct task_struct *task,
		       struct task_struct *const *tasks, unsigned int nr,
		       struct mm_struct *mm, struct ckpt_img_creds **creds,
		       size_t *len, char *whybuf, size_t size)
{
	struct user_namespace *ns = current_user_ns();
	const struct cred *cred = get_task_cred(task);
	struct ckpt_img_creds *img = NULL;
	pid_t other = 0;
	unsigned int i;
	int ret;

	/* The threads are parked: none changes its credentials meanwhile. */
	rcu_read_lock();
	for (i = 0; i < nr && !other; i++) {
		const struct cred *tc;

		if (!tasks[i])
			continue;
		tc = __task_cred(tasks[i]);
		if (!same_ids(tc, cred) || !same_caps(tc, cred) ||
		    tc->user_ns != cred->user_ns)
			other = task_pid_vnr(tasks[i]);
	}
	rcu_read_unlock();
	ret = -EOPNOTSUPP;
	if (other) {
		snprintf(whybuf, size,
			 "pid %d thread %d runs with other credentials than its process: not supported yet",
			 task_tgid_vnr(task), other);
		goto out;
	}
	if (cred->user_ns != ns) {
		snprintf(whybuf, size,
			 "pid %d is in another user namespace than the checkpointer: not supported yet",
			 task_tgid_vnr(task));
		goto out;
	}

	ret = -ENOMEM;
	*len = sizeof(*img) + cred->group_info->ngroups * sizeof(u32);
	img = kvzalloc(*len, GFP_KERNEL);
	if (!img)
		goto out;
	img->nr_groups = cred->group_info->ngroups;
	if (!name_ids(ns, cred, img)) {
		snprintf(whybuf, size,
			 "pid %d runs with a user or group id that has no name in the checkpointer's user namespace",
			 task_tgid_vnr(task));
		ret = -EOVERFLOW;
		goto out;
	}
	img->cap_inheritable = ckpt_cap_u64(cred->cap_inheritable);
	img->cap_permitted = ckpt_cap_u64(cred->cap_permitted);
	img->cap_effective = ckpt_cap_u64(cred->cap_effective);
	img->cap_bset = ckpt_cap_u64(cred->cap_bset);
	img->cap_ambient = ckpt_cap_u64(cred->cap_ambient);
	img->dumpable = get_dumpable(mm);
	*creds = img;
	img = NULL;
	ret = 0;
out:
	kvfree(img);
	put_cred(cred);
	return ret;
}
