// SPDX-License-Identifier: GPL-2.0
/*
 * Credentials: recorded at checkpoint, checked and installed at restart,
 * never raised.
 *
 * Checkpoint: the process's user and group ids (real, effective, saved,
 * file system), supplementary groups and capability sets, as the
 * checkpointer's user namespace names them, its dumpability and
 * no_new_privs. Every thread must have the same ones (glibc keeps them so;
 * a raw setuid() in one thread does not), and the process must be in the
 * checkpointer's user namespace: capabilities held in another mean
 * something else here. A process under a seccomp filter is refused: it
 * would come back without it.
 *
 * Restart: a module cannot make credentials for another user by itself.
 * setresuid() gives a new uid its user_struct and ucounts (alloc_uid(),
 * set_cred_ucounts(), not exported), which carry the user's process count
 * and find its keyrings; a cred with only the ids changed would run user
 * 1000 with root's keyring. So the restarter switches a helper process to
 * the image's groups and ids with the system calls themselves, whose checks
 * decide whether it may, and hands its credentials over
 * (CKPT_IOC_RESTART_CREDS). Before the point of no return the engine checks
 * that they are the image's, and that the restarting process itself could
 * have switched to them (each id one of its own, or CAP_SETUID/CAP_SETGID
 * in its user namespace), lowers every capability set to what both the
 * image and the restarter have, and each thread installs the result on its
 * way back to user mode (commit_creds() works on current only).
 */

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/kref.h>
#include <linux/mm_types.h>
#include <linux/sched.h>
#include <linux/sched/coredump.h>
#include <linux/seccomp.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/uidgid.h>
#include <linux/wait.h>

#include "creds.h"
#include "why.h"

/*
 * What the restarted threads install, and how many have yet to: none
 * returns to user mode before all have, so that no thread runs the image's
 * code, or shows in /proc, with the restarter's credentials beside one
 * with the image's.
 */
struct ckpt_creds_set {
	struct kref ref;
	atomic_t left;		/* threads that hold it and have not installed */
	wait_queue_head_t wq;
	struct cred *cred;	/* NULL: each thread keeps its own */
	u32 dumpable;
	u32 flags;		/* CKPT_CREDS_* */
};

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
		       size_t *len, struct ckpt_why *why)
{
	struct user_namespace *ns = current_user_ns();
	const struct cred *cred = get_task_cred(task);
	struct ckpt_img_creds *img = NULL;
	pid_t other = 0, filtered = 0;
	unsigned int i;
	int ret;

	/* The threads are parked: none changes its credentials meanwhile. */
	rcu_read_lock();
	for (i = 0; i < nr && !other && !filtered; i++) {
		const struct cred *tc;

		if (!tasks[i])
			continue;
		tc = __task_cred(tasks[i]);
		if (!same_ids(tc, cred) || !same_caps(tc, cred) ||
		    tc->user_ns != cred->user_ns ||
		    task_no_new_privs(tasks[i]) != task_no_new_privs(task))
			other = task_pid_vnr(tasks[i]);
#ifdef CONFIG_SECCOMP
		if (READ_ONCE(tasks[i]->seccomp.mode) != SECCOMP_MODE_DISABLED)
			filtered = task_pid_vnr(tasks[i]);
#endif
	}
	rcu_read_unlock();
	ret = -EOPNOTSUPP;
	if (filtered) {
		ckpt_whyf(why,
			  "pid %d thread %d runs under seccomp: not supported yet",
			  task_tgid_vnr(task), filtered);
		goto out;
	}
	if (other) {
		ckpt_whyf(why,
			  "pid %d thread %d runs with other credentials than its process: not supported yet",
			  task_tgid_vnr(task), other);
		goto out;
	}
	if (cred->user_ns != ns) {
		ckpt_whyf(why,
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
		ckpt_whyf(why,
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
	img->flags = task_no_new_privs(task) ? CKPT_CREDS_NO_NEW_PRIVS : 0;
	*creds = img;
	img = NULL;
	ret = 0;
out:
	kvfree(img);
	put_cred(cred);
	return ret;
}

/* The image's ids and groups as kernel ids of the caller's namespace. */
struct kids {
	kuid_t uid, euid, suid, fsuid;
	kgid_t gid, egid, sgid, fsgid;
	struct group_info *groups;
};

static int map_ids(const struct ckpt_img_creds *img, struct kids *k)
{
	struct user_namespace *ns = current_user_ns();
	const u32 *g = (const void *)(img + 1);
	u32 i;

	k->uid = make_kuid(ns, img->uid);
	k->euid = make_kuid(ns, img->euid);
	k->suid = make_kuid(ns, img->suid);
	k->fsuid = make_kuid(ns, img->fsuid);
	k->gid = make_kgid(ns, img->gid);
	k->egid = make_kgid(ns, img->egid);
	k->sgid = make_kgid(ns, img->sgid);
	k->fsgid = make_kgid(ns, img->fsgid);
	if (!uid_valid(k->uid) || !uid_valid(k->euid) || !uid_valid(k->suid) ||
	    !uid_valid(k->fsuid) || !gid_valid(k->gid) || !gid_valid(k->egid) ||
	    !gid_valid(k->sgid) || !gid_valid(k->fsgid))
		return -EOVERFLOW;
	k->groups = groups_alloc(img->nr_groups);
	if (!k->groups)
		return -ENOMEM;
	for (i = 0; i < img->nr_groups; i++) {
		k->groups->gid[i] = make_kgid(ns, g[i]);
		if (!gid_valid(k->groups->gid[i]))
			return -EOVERFLOW;
	}
	groups_sort(k->groups);
	return 0;
}

static bool has_ids(const struct cred *c, const struct kids *k)
{
	return uid_eq(c->uid, k->uid) && uid_eq(c->euid, k->euid) &&
	       uid_eq(c->suid, k->suid) && uid_eq(c->fsuid, k->fsuid) &&
	       gid_eq(c->gid, k->gid) && gid_eq(c->egid, k->egid) &&
	       gid_eq(c->sgid, k->sgid) && gid_eq(c->fsgid, k->fsgid) &&
	       same_groups(c->group_info, k->groups);
}

static bool own_uid(const struct cred *c, kuid_t id)
{
	return uid_eq(id, c->uid) || uid_eq(id, c->euid) || uid_eq(id, c->suid);
}

static bool own_gid(const struct cred *c, kgid_t id)
{
	return gid_eq(id, c->gid) || gid_eq(id, c->egid) || gid_eq(id, c->sgid);
}

/*
 * What setresuid(), setfsuid(), setresgid(), setfsgid() and setgroups()
 * would let @c (the caller's credentials) do: take ids it has, or any with
 * CAP_SETUID / CAP_SETGID in its user namespace; groups only with
 * CAP_SETGID, unless they are its own.
 */
static bool may_switch(const struct cred *c, const struct kids *k)
{
	struct user_namespace *ns = current_user_ns();

	if ((!own_uid(c, k->uid) || !own_uid(c, k->euid) ||
	     !own_uid(c, k->suid) ||
	     (!own_uid(c, k->fsuid) && !uid_eq(k->fsuid, c->fsuid))) &&
	    !ns_capable(ns, CAP_SETUID))
		return false;
	if ((!own_gid(c, k->gid) || !own_gid(c, k->egid) ||
	     !own_gid(c, k->sgid) ||
	     (!own_gid(c, k->fsgid) && !gid_eq(k->fsgid, c->fsgid)) ||
	     !same_groups(c->group_info, k->groups)) &&
	    !ns_capable(ns, CAP_SETGID))
		return false;
	return true;
}

/* "uid U, gid G (N groups)" of @c, in the caller's namespace. */
static void describe(char *buf, size_t size, const struct cred *c)
{
	struct user_namespace *ns = current_user_ns();
	int n = c->group_info->ngroups;

	snprintf(buf, size, "uid %u, gid %u (%d group%s)",
		 from_kuid_munged(ns, c->uid), from_kgid_munged(ns, c->gid), n,
		 n == 1 ? "" : "s");
}

/* Each set: what @new has, and the image and the restarter (@cur) too. */
static void lower_caps(struct cred *new, const struct ckpt_img_creds *img,
		       const struct cred *cur)
{
	u64 perm = ckpt_cap_u64(new->cap_permitted) & img->cap_permitted &
		   ckpt_cap_u64(cur->cap_permitted);
	u64 inh = ckpt_cap_u64(new->cap_inheritable) & img->cap_inheritable &
		  ckpt_cap_u64(cur->cap_inheritable);
	u64 bset = ckpt_cap_u64(new->cap_bset) & img->cap_bset &
		   ckpt_cap_u64(cur->cap_bset);
	u64 eff = ckpt_cap_u64(new->cap_effective) & img->cap_effective & perm;
	u64 amb = ckpt_cap_u64(new->cap_ambient) & img->cap_ambient & perm &
		  inh;

	ckpt_cap_set_u64(new->cap_permitted, perm);
	ckpt_cap_set_u64(new->cap_inheritable, inh);
	ckpt_cap_set_u64(new->cap_bset, bset);
	ckpt_cap_set_u64(new->cap_effective, eff);
	ckpt_cap_set_u64(new->cap_ambient, amb);
}

static struct ckpt_creds_set *new_set(struct cred *cred,
				     const struct ckpt_img_creds *img)
{
	struct ckpt_creds_set *cs = kzalloc(sizeof(*cs), GFP_KERNEL);

	if (!cs)
		return NULL;
	kref_init(&cs->ref);
	init_waitqueue_head(&cs->wq);
	cs->cred = cred;
	cs->dumpable = img->dumpable;
	cs->flags = img->flags;
	return cs;
}

struct ckpt_creds_set *ckpt_creds_prepare(const struct ckpt_img_creds *img,
					  struct cred *given, bool trusted,
					  struct ckpt_why *why)
{
	const struct cred *cur = current_cred();
	struct ckpt_creds_set *cs = NULL;
	struct kids k = {};
	char mine[64], theirs[64];
	struct cred *new = NULL;
	int ret;

	ret = -EBADMSG;
	if (!img) {
		ckpt_whyf(why, "the image holds no credentials");
		goto out;
	}
	ret = map_ids(img, &k);
	if (ret == -EOVERFLOW)
		ckpt_whyf(why,
			  "the image's process ran as uid %u, gid %u, ids this user namespace has no name for",
			  img->uid, img->gid);
	if (ret)
		goto out;

	describe(mine, sizeof(mine), cur);
	snprintf(theirs, sizeof(theirs), "uid %u, gid %u (%u group%s)",
		 img->uid, img->gid, img->nr_groups,
		 img->nr_groups == 1 ? "" : "s");
	ret = -EPERM;
	/* Ids that no MAC vouches for are the restarter's own, or nothing. */
	if (!trusted && (given || !has_ids(cur, &k))) {
		ckpt_whyf(why,
			  "the image carries no MAC and claims %s; unauthenticated, it restarts only as the restarter itself (%s)",
			  theirs, mine);
		goto out;
	}
	if (!has_ids(cur, &k) && !may_switch(cur, &k)) {
		ckpt_whyf(why,
			  "the image's process ran as %s; the restarter runs as %s and cannot switch to it",
			  theirs, mine);
		goto out;
	}
	if (given && (given->user_ns != cur->user_ns || !has_ids(given, &k))) {
		describe(mine, sizeof(mine), given);
		ckpt_whyf(why,
			  "the image's process ran as %s; the credentials handed over are %s",
			  theirs, mine);
		goto out;
	}
	if (!given && !has_ids(cur, &k)) {
		ckpt_whyf(why,
			  "the image's process ran as %s; the restarter runs as %s and handed over no other credentials",
			  theirs, mine);
		goto out;
	}

	ret = -ENOMEM;
	new = given ?: prepare_creds();
	given = NULL;
	if (!new)
		goto out;
	lower_caps(new, img, cur);
	if (same_ids(new, cur) && same_caps(new, cur)) {
		/* The restarter's own: nothing changes. */
		abort_creds(new);
		new = NULL;
	}
	cs = new_set(new, img);
	if (!cs)
		goto out;
	new = NULL;
	ret = 0;
out:
	if (k.groups)
		put_group_info(k.groups);
	if (given)
		abort_creds(given);
	if (new)
		abort_creds(new);
	return ret ? ERR_PTR(ret) : cs;
}

const struct cred *ckpt_creds_cred(const struct ckpt_creds_set *cs)
{
	return cs->cred;
}

static void free_set(struct kref *ref)
{
	struct ckpt_creds_set *cs = container_of(ref, struct ckpt_creds_set,
						 ref);

	if (cs->cred)
		put_cred(cs->cred);
	kfree(cs);
}

void ckpt_creds_put(struct ckpt_creds_set *cs)
{
	kref_put(&cs->ref, free_set);
}

struct ckpt_creds_set *ckpt_creds_get(struct ckpt_creds_set *cs)
{
	kref_get(&cs->ref);
	atomic_inc(&cs->left);
	return cs;
}

void ckpt_creds_drop(struct ckpt_creds_set *cs)
{
	if (atomic_dec_and_test(&cs->left))
		wake_up_all(&cs->wq);
	ckpt_creds_put(cs);
}

void ckpt_creds_install(struct ckpt_creds_set *cs)
{
	if (cs->cred)
		commit_creds(get_new_cred(cs->cred));
	/* Setting it is never a privilege: anyone may. */
	if (cs->flags & CKPT_CREDS_NO_NEW_PRIVS)
		task_set_no_new_privs(current);
	/*
	 * commit_creds() makes a process whose ids changed undumpable
	 * (fs.suid_dumpable): what it held under the old ones stays out of
	 * others' reach. Here memory and registers are the image's, so the
	 * image's dumpability is the process's, as set_dumpable() sets it;
	 * every thread sets it after its own commit_creds().
	 */
	if (current->mm && cs->dumpable <= SUID_DUMP_ROOT)
		set_mask_bits(&current->mm->flags, MMF_DUMPABLE_MASK,
			      cs->dumpable);
	if (!atomic_dec_and_test(&cs->left))
		wait_event_killable(cs->wq, !atomic_read(&cs->left));
	else
		wake_up_all(&cs->wq);
	ckpt_creds_put(cs);
}
