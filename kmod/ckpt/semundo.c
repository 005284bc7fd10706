// SPDX-License-Identifier: GPL-2.0
/*
 * Semaphore undo of a process tree (Documentation/engine.md, "System V
 * IPC").
 *
 * A process that changes a semaphore with SEM_UNDO gets an adjustment the
 * kernel applies when it exits: ipc/sem.c keeps one struct sem_undo per
 * process (its threads share one list, CLONE_SYSVSEM) and set, on two
 * lists, the process's and the set's. In a namespace the tree has to
 * itself each member's adjustments go into its image; elsewhere a member
 * that has some is refused by name.
 *
 * The process's list is freed by its last thread's exit without a grace
 * period, and a frozen member can still be killed: its address, read from
 * its threads, is only compared here. The entries are found from each
 * set's list, under the set's lock, which their process takes to remove
 * them before it frees its list.
 */

#include <linux/bsearch.h>
#include <linux/ipc_namespace.h>
#include <linux/rwsem.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/sort.h>

#include "checkpoint.h"
#include "ipc.h"
#include "layout.h"
#include "why.h"

static int by_ulp(const void *a, const void *b)
{
	const struct ckpt_undo_owner *x = a, *y = b;

	if (x->ulp != y->ulp)
		return x->ulp < y->ulp ? -1 : 1;
	return 0;
}

/* Member @i's threads' lists, appended to c->owners (room for @max). */
static int add_owners(struct ckpt_ipc *c, struct task_struct *task, u32 i,
		      u32 max)
{
	u32 first = c->nr_owners, j;
	struct task_struct *t;
	int ret = 0;

	rcu_read_lock();
	for_each_thread(task, t) {
		const void *l = READ_ONCE(t->sysvsem.undo_list);

		if (!l)
			continue;
		for (j = first; j < c->nr_owners && c->owners[j].ulp != l; j++)
			;
		if (j < c->nr_owners)
			continue;
		if (c->nr_owners == max) {
			ret = -EAGAIN;
			break;
		}
		c->owners[c->nr_owners].ulp = l;
		c->owners[c->nr_owners++].member = i;
	}
	rcu_read_unlock();
	for (j = first; c->nr_owners - first > 1 && j < c->nr_owners; j++)
		c->owners[j].mixed = true;
	return ret;
}

int ckpt_semundo_owners(struct ckpt_cp_group *g)
{
	struct ckpt_ipc *c = &g->ipc;
	u32 max = 0, i;
	int ret = 0;

	for (i = 0; i < g->nr; i++)
		max += get_nr_threads(g->m[i].task);
	c->owners = kvcalloc(max ?: 1, sizeof(*c->owners), GFP_KERNEL);
	if (!c->owners)
		return -ENOMEM;
	for (i = 0; i < g->nr && !ret; i++) {
		ret = add_owners(c, g->m[i].task, i, max);
		if (ret) {
			g->failed = i;
			ckpt_whyf(&g->m[i].why,
				  "pid %u: its threads changed during the checkpoint",
				  g->m[i].a->pid);
		}
	}
	if (ret)
		return ret;
	sort(c->owners, c->nr_owners, sizeof(*c->owners), by_ulp, NULL);
	for (i = 1; i < c->nr_owners; i++) {
		struct ckpt_undo_owner *a = &c->owners[i - 1], *b = &c->owners[i];

		if (a->ulp == b->ulp) {
			a->shared_with = b->member + 1;
			b->shared_with = a->member + 1;
		}
	}
	return 0;
}

void ckpt_semundo_owners_free(struct ckpt_ipc *c)
{
	kvfree(c->owners);
	c->owners = NULL;
	c->nr_owners = 0;
}

static const struct ckpt_undo_owner *find_owner(const struct ckpt_ipc *c,
						const void *ulp)
{
	struct ckpt_undo_owner key = { .ulp = ulp };

	return bsearch(&key, c->owners, c->nr_owners, sizeof(key), by_ulp);
}

static struct ckpt_cp_group *group_of(struct ckpt_ipc *c)
{
	return container_of(c, struct ckpt_cp_group, ipc);
}

/*
 * Whether @un adjusts nothing: a process that takes a semaphore and gives
 * it back, both with SEM_UNDO, keeps its entry, at 0. Its adjustments
 * change only by its own operations (frozen) or under the set's lock.
 */
static bool undoes_nothing(const struct ckpt_sem_undo *un, u32 nsems)
{
	u32 i;

	for (i = 0; i < nsems; i++)
		if (un->semadj[i])
			return false;
	return true;
}

/* @o's list as one the image can hold, or refused naming its member. */
static int check_owner(struct ckpt_ipc *c, const struct ckpt_undo_owner *o)
{
	struct ckpt_cp_group *g = group_of(c);
	struct ckpt_why *why = &g->m[o->member].why;

	g->failed = o->member;
	if (o->mixed) {
		ckpt_whyf(why,
			  "pid %u uses System V semaphore undo (SEM_UNDO) with threads that have undo lists of their own (clone() without CLONE_SYSVSEM): not supported",
			  g->m[o->member].a->pid);
		return -EOPNOTSUPP;
	}
	if (o->shared_with) {
		ckpt_whyf(why,
			  "pid %u uses System V semaphore undo (SEM_UNDO) with a list pid %u shares (clone() with CLONE_SYSVSEM): not supported",
			  g->m[o->member].a->pid,
			  g->m[o->shared_with - 1].a->pid);
		return -EOPNOTSUPP;
	}
	return 0;
}

/* The entries on @sma's list, under its lock. */
static u32 count_entries(struct ckpt_sem_array *sma)
{
	struct ckpt_sem_undo *un;
	u32 n = 0;

	spin_lock(&sma->sem_perm.lock);
	if (!sma->sem_perm.deleted)
		list_for_each_entry(un, &sma->list_id, list_id)
			n++;
	spin_unlock(&sma->sem_perm.lock);
	return n;
}

/*
 * @sma's entries into @su (room for @n), under its lock: -EAGAIN if one
 * is no member's, or there are more (a member exited meanwhile).
 */
static int copy_entries(struct ckpt_ipc *c, struct ckpt_sem_array *sma,
			struct ckpt_set_undo *su, u32 n,
			const struct ckpt_undo_owner **bad)
{
	struct ckpt_sem_undo *un;
	int ret = 0;

	spin_lock(&sma->sem_perm.lock);
	if (!sma->sem_perm.deleted) {
		list_for_each_entry(un, &sma->list_id, list_id) {
			const struct ckpt_undo_owner *o = find_owner(c, un->ulp);

			if (undoes_nothing(un, su->nsems))
				continue;
			if (!o || su->nr == n) {
				ret = -EAGAIN;
				break;
			}
			if (o->mixed || o->shared_with) {
				*bad = o;
				ret = -EOPNOTSUPP;
				break;
			}
			su->member[su->nr] = o->member;
			memcpy(su->adj + (size_t)su->nr * su->nsems, un->semadj,
			       su->nsems * sizeof(su->adj[0]));
			su->nr++;
		}
	}
	spin_unlock(&sma->sem_perm.lock);
	return ret;
}

int ckpt_semundo_take_set(struct ckpt_ipc *c, u32 k,
			  struct ckpt_sem_array *sma, struct ckpt_why *why)
{
	const struct ckpt_img_sysvsem *img = c->sem[k];
	const struct ckpt_undo_owner *bad = NULL;
	struct ckpt_set_undo *su;
	u32 n;
	int ret;

	if (!c->nr_owners)
		return 0;
	n = count_entries(sma);
	if (!n)
		return 0;
	/* One entry per list: more, and some are no member's. */
	n = min(n, c->nr_owners);
	su = kvzalloc(sizeof(*su) + n * sizeof(*su->member) +
		      (size_t)n * img->nsems * sizeof(*su->adj),
		      GFP_KERNEL | __GFP_NOWARN);
	if (!su)
		return -ENOMEM;
	su->nsems = img->nsems;
	su->member = (u32 *)(su + 1);
	su->adj = (s16 *)(su->member + n);
	c->sem_undo[k] = su;
	ret = copy_entries(c, sma, su, n, &bad);
	if (bad)
		return check_owner(c, bad);
	if (ret)
		ckpt_whyf(why,
			  "System V semaphore set %u: its undo entries changed during the checkpoint (a member exited?)",
			  img->perm.id);
	return ret;
}

static size_t undo_len(u32 nsems)
{
	return ALIGN(struct_size((struct ckpt_img_semundo *)NULL, adj, nsems),
		     8);
}

/*
 * The sets' entries into their members' SEMUNDO sections. The sets are by
 * ascending id, and a member has one entry per set at most: its sections
 * ascend too.
 */
static int distribute(struct ckpt_cp_group *g)
{
	struct ckpt_ipc *c = &g->ipc;
	size_t *at;
	u32 k, e;
	int ret = 0;

	at = kvcalloc(g->nr, sizeof(*at), GFP_KERNEL);
	if (!at)
		return -ENOMEM;
	for (k = 0; k < c->nr_sem; k++) {
		const struct ckpt_set_undo *su = c->sem_undo[k];

		for (e = 0; su && e < su->nr; e++)
			at[su->member[e]] += undo_len(su->nsems);
	}
	for (e = 0; e < g->nr && !ret; e++) {
		if (!at[e])
			continue;
		g->m[e].undo.buf = kvzalloc(at[e], GFP_KERNEL);
		if (!g->m[e].undo.buf)
			ret = -ENOMEM;
		at[e] = 0;
	}
	for (k = 0; k < c->nr_sem && !ret; k++) {
		const struct ckpt_img_sysvsem *set = c->sem[k];
		const struct ckpt_set_undo *su = c->sem_undo[k];

		for (e = 0; su && e < su->nr; e++) {
			u32 i = su->member[e];
			struct ckpt_img_semundo *img = g->m[i].undo.buf + at[i];

			img->id = set->perm.id;
			img->nsems = su->nsems;
			memcpy(img->adj, su->adj + (size_t)e * su->nsems,
			       su->nsems * sizeof(img->adj[0]));
			at[i] += undo_len(su->nsems);
			g->m[i].undo.nr++;
		}
	}
	kvfree(at);
	return ret;
}

int ckpt_ipc_write_undo(const struct ckpt_sem_undo_img *u,
			struct ckpt_writer *w)
{
	const u8 *p = u->buf;
	int ret = 0;
	u32 i;

	for (i = 0; i < u->nr && !ret; i++) {
		const struct ckpt_img_semundo *img = (const void *)p;

		ret = ckpt_write_sect(w, CKPT_SECT_SEMUNDO, img,
				      struct_size(img, adj, img->nsems), NULL, 0);
		p += undo_len(img->nsems);
	}
	return ret;
}

void ckpt_ipc_free_undo(struct ckpt_sem_undo_img *u)
{
	kvfree(u->buf);
	memset(u, 0, sizeof(*u));
}

/*
 * In a namespace not the tree's own: the owner of the first entry of a
 * member found on any set's list, or NULL.
 */
static const struct ckpt_undo_owner *find_member_entry(struct ckpt_ipc *c)
{
	struct ipc_ids *s = &c->ns->ids[IDS_SEM];
	const struct ckpt_undo_owner *o = NULL;
	struct kern_ipc_perm *perm;
	struct ckpt_sem_undo *un;
	int id;

	down_read(&s->rwsem);
	idr_for_each_entry(&s->ipcs_idr, perm, id) {
		struct ckpt_sem_array *sma =
			container_of(perm, struct ckpt_sem_array, sem_perm);

		spin_lock(&perm->lock);
		if (!perm->deleted)
			list_for_each_entry(un, &sma->list_id, list_id) {
				o = find_owner(c, un->ulp);
				if (o && !undoes_nothing(un, sma->sem_nsems))
					break;
				o = NULL;
			}
		spin_unlock(&perm->lock);
		if (o)
			break;
		cond_resched();
	}
	up_read(&s->rwsem);
	return o;
}

/*
 * A member with adjustments where they cannot be kept: in another
 * namespace they would apply to its sets when the old processes exit, and
 * be lost to the restarted ones; a single process has no namespace of its
 * own restored.
 */
static int refuse_user(struct ckpt_cp_group *g, const struct ckpt_undo_owner *o)
{
	const struct ckpt_ipc *c = &g->ipc;
	struct ckpt_cp_ctx *m = &g->m[o->member];

	g->failed = o->member;
	if (!g->tree)
		ckpt_whyf(&m->why,
			  "pid %u uses System V semaphore undo (SEM_UNDO): restored only in a process tree (ckpt checkpoint --tree) with an IPC namespace of its own",
			  m->a->pid);
	else if (c->initial)
		ckpt_whyf(&m->why,
			  "pid %u uses System V semaphore undo (SEM_UNDO) in the initial IPC namespace: start the tree in an IPC namespace of its own (a job: ckpt-run --ns; a tree: unshare --ipc)",
			  m->a->pid);
	else
		ckpt_whyf(&m->why,
			  "pid %u uses System V semaphore undo (SEM_UNDO) in an IPC namespace that pid %d, outside the tree, shares",
			  m->a->pid, c->outsider);
	return -EOPNOTSUPP;
}

int ckpt_semundo_capture(struct ckpt_cp_group *g)
{
	struct ckpt_ipc *c = &g->ipc;
	const struct ckpt_undo_owner *o;

	if (!c->nr_owners || !c->ns)
		return 0;
	if (c->own)
		return distribute(g);
	if (!ckpt_layout_ok(CKPT_LAYOUT_SYSVIPC)) {
		/*
		 * Every multithreaded process holds a list (glibc clones with
		 * CLONE_SYSVSEM): a single process is not refused for what
		 * cannot be read, as before the check existed; a tree's
		 * members were refused then too.
		 */
		if (!g->tree)
			return 0;
		o = &c->owners[0];
		g->failed = o->member;
		ckpt_whyf(&g->m[o->member].why,
			  "pid %u: whether it uses System V semaphore undo cannot be read: %s",
			  g->m[o->member].a->pid,
			  ckpt_layout_why(CKPT_LAYOUT_SYSVIPC));
		return -EOPNOTSUPP;
	}
	o = find_member_entry(c);
	return o ? refuse_user(g, o) : 0;
}
