// SPDX-License-Identifier: GPL-2.0
/*
 * System V IPC of a process tree (Documentation/engine.md, "System V
 * IPC").
 *
 * Shared memory segments, semaphore sets and message queues live in an
 * IPC namespace, not in a process: a process names them by id, and nothing
 * says which ones it uses but the segments it maps. So the engine takes
 * the whole namespace, and only one the tree has to itself: once every
 * member is frozen, if no process outside the tree is in the members' IPC
 * namespace (and it is not the initial one), every object in it is read
 * here and goes into the root's image: a segment's attributes and bytes, a
 * set's values, a queue's messages in order. The restart makes a new IPC
 * namespace for the tree and each object again with its id.
 *
 * A tree in a namespace others share (the host's, typically) keeps using
 * its semaphore sets and queues where they are, as it does files. Its
 * segments that no process outside the tree has attached are its alone
 * (take_private()): they are taken as above, and the restart makes an IPC
 * namespace for them; any other segment it maps is refused by name (its
 * bytes would be stale or gone).
 *
 * The objects are read under their own lock with the members frozen: no
 * process that could change them runs. The structures are ipc/'s private
 * ones, checked against the running kernel at load (layout.c).
 */

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/idr.h>
#include <linux/ipc_namespace.h>
#include <linux/magic.h>
#include <linux/mm.h>
#include <linux/msg.h>
#include <linux/nsproxy.h>
#include <linux/rwsem.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/shm.h>
#include <linux/slab.h>
#include <linux/uidgid.h>

#include "checkpoint.h"
#include "fileobj.h"
#include "image.h"
#include "ipc.h"
#include "layout.h"
#include "tree.h"
#include "why.h"

/* ipc/shm.c's flags in a segment's mode. */
#define SHM_DEST	01000
#define SHM_LOCKED	02000

#define DATALEN_MSG	(PAGE_SIZE - sizeof(struct msg_msg))
#define DATALEN_SEG	(PAGE_SIZE - sizeof(struct ckpt_msg_msgseg))

static struct ipc_namespace *ipc_ns_of(struct task_struct *task)
{
	struct ipc_namespace *ns = NULL;

	task_lock(task);
	if (task->nsproxy)
		ns = task->nsproxy->ipc_ns;
	task_unlock(task);
	return ns;
}

/* A process outside the tree in @ns (its pid as the caller sees it), or 0. */
static pid_t outsider_in(const struct ckpt_cp_group *g,
			 struct ipc_namespace *ns)
{
	struct task_struct *p, *t;
	pid_t found = 0;

	rcu_read_lock();
	for_each_process_thread(p, t) {
		if (ipc_ns_of(t) != ns || ckpt_tree_member_of(g, p) >= 0)
			continue;
		found = task_tgid_vnr(p) ?: -1;
		break;
	}
	rcu_read_unlock();
	return found;
}

static void fill_perm(struct ckpt_img_ipcperm *img,
		      const struct kern_ipc_perm *perm)
{
	struct user_namespace *ns = current_user_ns();

	img->id = perm->id;
	img->key = perm->key;
	img->uid = from_kuid_munged(ns, perm->uid);
	img->gid = from_kgid_munged(ns, perm->gid);
	img->cuid = from_kuid_munged(ns, perm->cuid);
	img->cgid = from_kgid_munged(ns, perm->cgid);
	img->mode = perm->mode & 0777;
}

/*
 * Whether the caller may read a segment of a namespace others share, under
 * its lock: as its owner or creator, or by its mode as any process could
 * (ipcperms(), without the LSM's word), or with CAP_IPC_OWNER over the
 * namespace.
 */
static bool may_read(const struct ckpt_ipc *c, const struct kern_ipc_perm *perm)
{
	kuid_t euid = current_euid();
	umode_t bits;

	if (uid_eq(euid, perm->uid) || uid_eq(euid, perm->cuid))
		bits = 0400;
	else if (in_group_p(perm->gid) || in_group_p(perm->cgid))
		bits = 0040;
	else
		bits = 0004;
	return (READ_ONCE(perm->mode) & bits) ||
	       ns_capable_noaudit(c->ns->user_ns, CAP_IPC_OWNER);
}

/*
 * A segment's attributes and file, under its lock (and the namespace's
 * rwsem, which holds it); its bytes are counted by shm_contents(), after.
 * With @readable, only if may_read() says the caller may read it: -EACCES.
 */
static int grab_shm(struct ckpt_ipc *c, struct kern_ipc_perm *perm,
		    bool readable)
{
	struct ckpt_shmid_kernel *shp =
		container_of(perm, struct ckpt_shmid_kernel, shm_perm);
	struct ckpt_img_sysvshm *img = &c->shm[c->nr_shm];
	struct file *file = NULL;
	int ret = 0;

	memset(img, 0, sizeof(*img));
	spin_lock(&perm->lock);
	if (readable && !may_read(c, perm))
		ret = -EACCES;
	else if (!perm->deleted) {
		fill_perm(&img->perm, perm);
		if (perm->mode & SHM_DEST)
			img->perm.flags |= CKPT_IPC_DEST;
		if (perm->mode & SHM_LOCKED)
			img->perm.flags |= CKPT_IPC_LOCKED;
		img->size = shp->shm_segsz;
		file = get_file(shp->shm_file);
	}
	spin_unlock(&perm->lock);
	if (file)
		c->shm_file[c->nr_shm++] = file;
	return ret;
}

static int take_shm(struct ckpt_ipc *c, struct kern_ipc_perm *perm,
		    struct ckpt_why *why)
{
	return grab_shm(c, perm, false);
}

/*
 * The bytes of the segments grabbed from @first on, with no IPC lock held
 * (the walk takes the file's own).
 */
static int shm_contents(struct ckpt_ipc *c, u32 first, struct ckpt_why *why)
{
	struct ckpt_img_sysvshm *img;
	struct file *file;
	int ret = 0;
	u32 i;

	for (i = first; i < c->nr_shm && !ret; i++) {
		img = &c->shm[i];
		file = c->shm_file[i];
		if (file_inode(file)->i_sb->s_magic != TMPFS_MAGIC) {
			ckpt_whyf(why,
				  "System V shared memory segment %u is of huge pages: not supported yet",
				  img->perm.id);
			return -EOPNOTSUPP;
		}
		if (img->size > CKPT_IMG_MAX_SHMSZ) {
			ckpt_whyf(why,
				  "System V shared memory segment %u is larger than the image allows (1 TiB)",
				  img->perm.id);
			return -EFBIG;
		}
		ret = ckpt_count_data(file, img->size, &img->stored);
		if (ret)
			ckpt_whyf(why,
				  "cannot read System V shared memory segment %u",
				  img->perm.id);
		cond_resched();
	}
	return ret;
}

static int take_sem(struct ckpt_ipc *c, struct kern_ipc_perm *perm,
		    struct ckpt_why *why)
{
	struct ckpt_sem_array *sma =
		container_of(perm, struct ckpt_sem_array, sem_perm);
	int nsems = READ_ONCE(sma->sem_nsems), i;
	struct ckpt_img_sysvsem *img;
	bool live;
	size_t len;

	if (nsems < 0 || nsems > CKPT_IMG_MAX_SEMS) {
		ckpt_whyf(why, "System V semaphore set %d has %d semaphores",
			  perm->id, nsems);
		return -EINVAL;
	}
	len = struct_size(img, vals, nsems);
	img = kvzalloc(len, GFP_KERNEL);
	if (!img)
		return -ENOMEM;
	spin_lock(&perm->lock);
	live = !perm->deleted;
	if (live) {
		fill_perm(&img->perm, perm);
		img->nsems = nsems;
		for (i = 0; i < nsems; i++)
			img->vals[i] = READ_ONCE(sma->sems[i].semval);
	}
	spin_unlock(&perm->lock);
	if (!live) {
		kvfree(img);
		return 0;
	}
	c->sem[c->nr_sem] = img;
	c->sem_len[c->nr_sem++] = len;
	return ckpt_semundo_take_set(c, c->nr_sem - 1, sma, why);
}

/* Copies @msg's @len bytes, its first part and then its segments. */
static void copy_msg(u8 *to, const struct msg_msg *msg, size_t len)
{
	const struct ckpt_msg_msgseg *seg;
	size_t n = min_t(size_t, len, DATALEN_MSG);

	memcpy(to, msg + 1, n);
	to += n;
	len -= n;
	for (seg = (const void *)msg->next; seg && len; seg = seg->next) {
		n = min_t(size_t, len, DATALEN_SEG);
		memcpy(to, seg + 1, n);
		to += n;
		len -= n;
	}
}

static int take_msg(struct ckpt_ipc *c, struct kern_ipc_perm *perm,
		    struct ckpt_why *why)
{
	struct ckpt_msg_queue *q =
		container_of(perm, struct ckpt_msg_queue, q_perm);
	unsigned long qnum = READ_ONCE(q->q_qnum);
	unsigned long cbytes = READ_ONCE(q->q_cbytes);
	struct ckpt_img_sysvmsg *img;
	struct msg_msg *msg;
	size_t len, at;
	int ret = 0;

	if (cbytes > CKPT_IMG_MAX_MSGBYTES || qnum > CKPT_IMG_MAX_MSGS) {
		ckpt_whyf(why,
			  "System V message queue %d holds more than the image allows (16 MiB)",
			  perm->id);
		return -EFBIG;
	}
	/* Each message's header and padding, and its bytes. */
	len = sizeof(*img) + qnum * (sizeof(struct ckpt_img_sysvmsg_one) + 7) +
	      cbytes;
	img = kvzalloc(len, GFP_KERNEL);
	if (!img)
		return -ENOMEM;
	spin_lock(&perm->lock);
	if (perm->deleted) {
		ret = -ENOENT;	/* removed meanwhile: nothing to keep */
		goto unlock;
	}
	/* Frozen senders and receivers: nothing moves; if it did, refuse. */
	if (q->q_qnum != qnum || q->q_cbytes != cbytes) {
		ret = -EAGAIN;
		goto unlock;
	}
	fill_perm(&img->perm, perm);
	img->qbytes = q->q_qbytes;
	at = sizeof(*img);
	list_for_each_entry(msg, &q->q_messages, m_list) {
		struct ckpt_img_sysvmsg_one one = {
			.type = msg->m_type, .len = msg->m_ts,
		};

		if (img->nr == qnum || at + sizeof(one) + one.len > len) {
			ret = -EAGAIN;
			break;
		}
		if (one.len > CKPT_IMG_MAX_MSGSZ) {
			ret = -EFBIG;
			break;
		}
		memcpy((u8 *)img + at, &one, sizeof(one));
		at += sizeof(one);
		copy_msg((u8 *)img + at, msg, one.len);
		at += ALIGN(one.len, 8);
		img->nr++;
	}
unlock:
	spin_unlock(&perm->lock);
	if (ret == -ENOENT) {
		kvfree(img);
		return 0;
	}
	if (ret == -EFBIG) {
		ckpt_whyf(why,
			  "System V message queue %d holds a message larger than the image allows (1 MiB)",
			  perm->id);
		kvfree(img);
		return ret;
	}
	if (ret) {
		ckpt_whyf(why,
			  "System V message queue %d changed during the checkpoint: a process outside the tree uses it",
			  perm->id);
		kvfree(img);
		return ret;
	}
	c->msg[c->nr_msg] = img;
	c->msg_len[c->nr_msg++] = at;
	return 0;
}

typedef int (*take_fn)(struct ckpt_ipc *c, struct kern_ipc_perm *perm,
		       struct ckpt_why *why);

static int take_all(struct ckpt_ipc *c, int ids, take_fn take,
		    const char *what, struct ckpt_why *why)
{
	struct ipc_ids *s = &c->ns->ids[ids];
	struct kern_ipc_perm *perm;
	int id, ret = 0;

	down_read(&s->rwsem);
	if (s->in_use > CKPT_IMG_MAX_SYSV) {
		ckpt_whyf(why,
			  "the tree's IPC namespace has %d System V %s, more than an image holds (%d)",
			  s->in_use, what, CKPT_IMG_MAX_SYSV);
		ret = -E2BIG;
	}
	idr_for_each_entry(&s->ipcs_idr, perm, id) {
		if (ret)
			break;
		ret = take(c, perm, why);
	}
	up_read(&s->rwsem);
	return ret;
}

static u32 obj_id(const struct ckpt_ipc *c, int kind, u32 i)
{
	const struct ckpt_img_sysvsem *sem;
	const struct ckpt_img_sysvmsg *msg;

	switch (kind) {
	case IDS_SHM:
		return c->shm[i].perm.id;
	case IDS_SEM:
		sem = c->sem[i];
		return sem->perm.id;
	default:
		msg = c->msg[i];
		return msg->perm.id;
	}
}

static void swap_obj(struct ckpt_ipc *c, int kind, u32 a, u32 b)
{
	switch (kind) {
	case IDS_SHM:
		swap(c->shm[a], c->shm[b]);
		swap(c->shm_file[a], c->shm_file[b]);
		break;
	case IDS_SEM:
		swap(c->sem[a], c->sem[b]);
		swap(c->sem_len[a], c->sem_len[b]);
		swap(c->sem_undo[a], c->sem_undo[b]);
		break;
	default:
		swap(c->msg[a], c->msg[b]);
		swap(c->msg_len[a], c->msg_len[b]);
	}
}

/*
 * The objects of @kind by ascending id, the image's order. The idr hands
 * them out by index, and an id is its index under a sequence number that
 * grows each time the indexes wrap around (every 64 objects made, in a
 * small namespace): a late object's id is larger at a lower index. The
 * order is mostly right already, which insertion makes quick.
 */
static void sort_by_id(struct ckpt_ipc *c, int kind, u32 n)
{
	u32 i, j;

	for (i = 1; i < n; i++) {
		for (j = i; j && obj_id(c, kind, j - 1) > obj_id(c, kind, j); j--)
			swap_obj(c, kind, j - 1, j);
		cond_resched();
	}
}

static int alloc_tables(struct ckpt_ipc *c)
{
	const u32 n = CKPT_IMG_MAX_SYSV;

	c->shm = kvcalloc(n, sizeof(*c->shm), GFP_KERNEL);
	c->shm_file = kvcalloc(n, sizeof(*c->shm_file), GFP_KERNEL);
	c->sem = kvcalloc(n, sizeof(*c->sem), GFP_KERNEL);
	c->sem_len = kvcalloc(n, sizeof(*c->sem_len), GFP_KERNEL);
	c->sem_undo = kvcalloc(n, sizeof(*c->sem_undo), GFP_KERNEL);
	c->msg = kvcalloc(n, sizeof(*c->msg), GFP_KERNEL);
	c->msg_len = kvcalloc(n, sizeof(*c->msg_len), GFP_KERNEL);
	if (!c->shm || !c->shm_file || !c->sem || !c->sem_len ||
	    !c->sem_undo || !c->msg || !c->msg_len)
		return -ENOMEM;
	return 0;
}

/* Each member is in the root's IPC namespace. */
static int check_members(struct ckpt_cp_group *g)
{
	unsigned int i;

	for (i = 0; i < g->nr; i++) {
		struct ckpt_cp_ctx *m = &g->m[i];

		if (ipc_ns_of(m->task) != g->ipc.ns) {
			g->failed = i;
			ckpt_whyf(&m->why,
				  "pid %u is in another IPC namespace than the tree root (pid %u): not supported yet",
				  m->a->pid, g->m[0].a->pid);
			return -EOPNOTSUPP;
		}
	}
	return 0;
}

/*
 * In a namespace others share (the node's): the segments that are the
 * tree's alone. Nothing says which objects a process uses but the segments
 * it maps, and each mapping is one of a segment's attachments: a segment
 * all of whose attachments are members' mappings, or that a member made
 * and nobody has attached yet, is the tree's. The restart makes an IPC
 * namespace for the tree with these, so the tree would lose any other
 * object of the node's it uses: one that a member made, attached or
 * operated on last (its pids) refuses the checkpoint, by name.
 */

/* A segment the members map: its inode, and how many of their mappings. */
struct seg_use {
	const struct inode *inode;
	u32 maps;
};

/* The segments @mm maps, counted into @use (room for @max, *@nr used). */
static int count_maps(struct mm_struct *mm, struct seg_use *use, u32 max,
		      u32 *nr)
{
	VMA_ITERATOR(vmi, mm, 0);
	struct vm_area_struct *vma;
	int ret = 0;
	u32 k;

	mmap_read_lock(mm);
	for_each_vma(vmi, vma) {
		const struct inode *inode;

		if (!ckpt_ipc_shm_file(vma->vm_file))
			continue;
		inode = file_inode(vma->vm_file);
		for (k = 0; k < *nr && use[k].inode != inode; k++)
			;
		if (k == max) {
			ret = -E2BIG;
			break;
		}
		if (k == *nr)
			use[(*nr)++].inode = inode;
		use[k].maps++;
	}
	mmap_read_unlock(mm);
	return ret;
}

/* The segments of the members' mappings into @use (room for @max): *@nr. */
static int members_maps(const struct ckpt_cp_group *g, struct seg_use *use,
			u32 max, u32 *nr)
{
	unsigned int i, j;
	int ret = 0;

	*nr = 0;
	for (i = 0; !ret && i < g->nr; i++) {
		/* A memory members share (vfork()) counts once. */
		for (j = 0; j < i && g->m[j].mm != g->m[i].mm; j++)
			;
		if (j == i && g->m[i].mm)
			ret = count_maps(g->m[i].mm, use, max, nr);
		cond_resched();
	}
	return ret;
}

/* The member whose process @pid is (its pid as the caller sees it), or 0. */
static pid_t member_pid(const struct ckpt_cp_group *g, const struct pid *pid)
{
	unsigned int i;

	/* Compared, never followed: an outsider's may go at any time. */
	for (i = 0; pid && i < g->nr; i++)
		if (task_tgid(g->m[i].task) == pid)
			return g->m[i].a->pid;
	return 0;
}

/*
 * The same for a thread's pid (a queue's receiver handed its message by
 * a sender: msg.c's pipelined_send()): the members' threads are frozen.
 */
static pid_t member_thread_pid(const struct ckpt_cp_group *g,
			       const struct pid *pid)
{
	struct task_struct *t;
	unsigned int i;
	pid_t found = 0;

	if (!pid)
		return 0;
	rcu_read_lock();
	for (i = 0; !found && i < g->nr; i++)
		for_each_thread(g->m[i].task, t)
			if (task_pid(t) == pid) {
				found = g->m[i].a->pid;
				break;
			}
	rcu_read_unlock();
	return found;
}

static const char *ns_words(const struct ckpt_ipc *c, char *buf, size_t len)
{
	if (c->initial)
		return "the initial IPC namespace";
	snprintf(buf, len, "an IPC namespace that pid %d, outside the tree, shares",
		 c->outsider);
	return buf;
}

/* The member that operated on a semaphore of set @perm last, or 0. */
static pid_t sem_user(const struct ckpt_cp_group *g, struct kern_ipc_perm *perm)
{
	struct ckpt_sem_array *sma =
		container_of(perm, struct ckpt_sem_array, sem_perm);
	int i, nsems = READ_ONCE(sma->sem_nsems);
	pid_t who = 0;

	for (i = 0; !who && i < nsems; i++)
		who = member_pid(g, READ_ONCE(sma->sems[i].sempid));
	return who;
}

/* The member that sent to or received from queue @perm last, or 0. */
static pid_t msg_user(const struct ckpt_cp_group *g, struct kern_ipc_perm *perm)
{
	struct ckpt_msg_queue *q =
		container_of(perm, struct ckpt_msg_queue, q_perm);

	return member_pid(g, READ_ONCE(q->q_lspid)) ?:
	       member_thread_pid(g, READ_ONCE(q->q_lrpid));
}

/*
 * The first semaphore set or message queue of the namespace that a member
 * used last (the kernel's last pids), named in @why: -EOPNOTSUPP; or 0.
 */
static int used_elsewhere(const struct ckpt_cp_group *g, struct ckpt_why *why)
{
	static const struct {
		int ids;
		pid_t (*user)(const struct ckpt_cp_group *g,
			      struct kern_ipc_perm *perm);
		const char *what;
	} kinds[] = {
		{ IDS_SEM, sem_user, "operated on System V semaphore set" },
		{ IDS_MSG, msg_user, "used System V message queue" },
	};
	const struct ckpt_ipc *c = &g->ipc;
	struct kern_ipc_perm *perm;
	int id, used = -1;
	unsigned int k;
	pid_t who = 0;
	char buf[80];

	for (k = 0; k < ARRAY_SIZE(kinds); k++) {
		struct ipc_ids *s = &c->ns->ids[kinds[k].ids];

		down_read(&s->rwsem);
		idr_for_each_entry(&s->ipcs_idr, perm, id) {
			who = kinds[k].user(g, perm);
			if (who) {
				used = perm->id;	/* not the idr's index */
				break;
			}
			cond_resched();
		}
		up_read(&s->rwsem);
		if (who) {
			ckpt_whyf(why,
				  "pid %d %s %d of %s, which a restart with the tree's segments would not have: start the tree in an IPC namespace of its own (a job: ckpt-run --ns; a tree: unshare --ipc)",
				  who, kinds[k].what, used,
				  ns_words(c, buf, sizeof(buf)));
			return -EOPNOTSUPP;
		}
	}
	return 0;
}


/* take_private()'s walk of a namespace others share. */
struct private_scan {
	struct ckpt_cp_group *g;
	struct seg_use *use;	/* the members' mappings' segments */
	u32 nr;
	pid_t held_by;		/* a member's segment an outsider holds, */
	int held;		/* the first: its maker or user, its id */
};

/*
 * Segment @perm, under the namespace's rwsem: grabbed if it is the tree's
 * (one its members map, or one nobody has attached that a member made or
 * attached last); 0, or a refusal named in @why.
 */
static int take_if_ours(struct private_scan *ps, struct kern_ipc_perm *perm,
			struct ckpt_why *why)
{
	struct ckpt_shmid_kernel *shp =
		container_of(perm, struct ckpt_shmid_kernel, shm_perm);
	unsigned long nattch = READ_ONCE(shp->shm_nattch);
	struct ckpt_ipc *c = &ps->g->ipc;
	char buf[80];
	pid_t who;
	u32 k;

	/* The rwsem holds the segment: its file stays. */
	for (k = 0; k < ps->nr && ps->use[k].inode != file_inode(shp->shm_file); k++)
		;
	if (k == ps->nr) {
		who = member_pid(ps->g, READ_ONCE(shp->shm_cprid)) ?:
		      member_pid(ps->g, READ_ONCE(shp->shm_lprid));
		if (who && nattch && !ps->held_by) {
			ps->held_by = who;
			ps->held = perm->id;
		}
		if (!who || nattch)
			return 0;
	} else if (nattch != ps->use[k].maps) {
		ckpt_whyf(why,
			  "System V shared memory segment %d of %s has %lu attachments, %u of them the tree's: a process outside the tree has it attached too",
			  perm->id, ns_words(c, buf, sizeof(buf)), nattch,
			  ps->use[k].maps);
		return -EOPNOTSUPP;
	}
	if (c->nr_shm == CKPT_IMG_MAX_SYSV) {
		ckpt_whyf(why, "the tree has more System V shared memory segments than an image holds (%d)",
			  CKPT_IMG_MAX_SYSV);
		return -E2BIG;
	}
	if (grab_shm(c, perm, true)) {
		ckpt_whyf(why,
			  "System V shared memory segment %d of %s, which the tree uses, is not the checkpointer's to read (its owner, creator or mode)",
			  perm->id, ns_words(c, buf, sizeof(buf)));
		return -EACCES;
	}
	return 0;
}

/*
 * The tree's segments of a namespace others share, as above, if its
 * members map any (a tree that maps none stays in the node's namespace);
 * refused: a segment the members map that a process outside the tree has
 * attached too, one a member made or attached that an outsider holds, and
 * one of these the caller may not read.
 */
static int take_private(struct ckpt_cp_group *g, struct ckpt_why *why)
{
	struct ipc_ids *s = &g->ipc.ns->ids[IDS_SHM];
	struct private_scan ps = { .g = g };
	struct kern_ipc_perm *perm;
	char buf[80];
	int id, ret;

	ps.use = kvcalloc(CKPT_IMG_MAX_SYSV, sizeof(*ps.use), GFP_KERNEL);
	if (!ps.use)
		return -ENOMEM;
	ret = members_maps(g, ps.use, CKPT_IMG_MAX_SYSV, &ps.nr);
	if (ret)
		ckpt_whyf(why, "the tree maps more System V shared memory segments than an image holds (%d)",
			  CKPT_IMG_MAX_SYSV);
	if (ret || !ps.nr)
		goto out;
	ret = alloc_tables(&g->ipc);
	if (ret)
		goto out;
	/* Held only to decide and to take the files: the bytes come after. */
	down_read(&s->rwsem);
	idr_for_each_entry(&s->ipcs_idr, perm, id) {
		ret = take_if_ours(&ps, perm, why);
		if (ret)
			break;
		cond_resched();
	}
	up_read(&s->rwsem);
	if (!ret && ps.held_by) {
		ckpt_whyf(why,
			  "System V shared memory segment %d of %s, which pid %d made or attached, has a process outside the tree attached: a restart with the tree's segments would not have it",
			  ps.held, ns_words(&g->ipc, buf, sizeof(buf)), ps.held_by);
		ret = -EOPNOTSUPP;
	}
	if (!ret)
		ret = shm_contents(&g->ipc, 0, why);
out:
	kvfree(ps.use);
	return ret;
}

/*
 * The objects of the namespace the tree has to itself, if it does; of one
 * others share, the segments that are the tree's (take_private()).
 */
static int take_ns(struct ckpt_cp_group *g)
{
	struct ckpt_ipc *c = &g->ipc;
	struct ckpt_why *why = &g->m[0].why;
	unsigned int i;
	int ret;

	for (i = 0; i < g->nr; i++)
		g->m[i].scan.ipc = c;
	if (!c->ns)
		return 0;
	c->initial = c->ns == ipc_ns_of(&init_task);
	if (!c->initial)
		c->outsider = outsider_in(g, c->ns);
	if (!ckpt_layout_ok(CKPT_LAYOUT_SYSVIPC)) {
		/* A shared one's mappings are refused by name (ckpt_ipc_vma()). */
		if (c->initial || c->outsider)
			return 0;
		ckpt_whyf(why, "the tree's System V IPC cannot be read: %s",
			  ckpt_layout_why(CKPT_LAYOUT_SYSVIPC));
		return -EOPNOTSUPP;
	}
	if (c->initial || c->outsider) {
		ret = take_private(g, why);
		if (ret || !c->nr_shm)
			return ret;
		g->m[0].ipc = c;
		sort_by_id(c, IDS_SHM, c->nr_shm);
		return 0;
	}
	c->own = true;
	g->m[0].ipc = c;
	ret = alloc_tables(c);
	if (!ret)
		ret = take_all(c, IDS_SHM, take_shm, "shared memory segments", why);
	if (!ret)
		ret = shm_contents(c, 0, why);
	if (!ret)
		ret = take_all(c, IDS_SEM, take_sem, "semaphore sets", why);
	if (!ret)
		ret = take_all(c, IDS_MSG, take_msg, "message queues", why);
	if (ret)
		return ret;
	sort_by_id(c, IDS_SHM, c->nr_shm);
	sort_by_id(c, IDS_SEM, c->nr_sem);
	sort_by_id(c, IDS_MSG, c->nr_msg);
	return 0;
}

int ckpt_ipc_capture(struct ckpt_cp_group *g)
{
	int ret;

	g->ipc.ns = ipc_ns_of(g->m[0].task);
	ret = check_members(g);
	if (!ret)
		ret = ckpt_semundo_owners(g);
	if (!ret && g->tree)
		ret = take_ns(g);
	if (!ret)
		ret = ckpt_semundo_capture(g);
	/*
	 * Segments taken from a namespace others share (take_private()):
	 * after undo's refusal, which names the use better.
	 */
	if (!ret && !g->ipc.own && g->ipc.nr_shm)
		ret = used_elsewhere(g, &g->m[0].why);
	ckpt_semundo_owners_free(&g->ipc);
	return ret;
}

void ckpt_ipc_free(struct ckpt_ipc *c)
{
	u32 i;

	for (i = 0; i < c->nr_shm; i++)
		fput(c->shm_file[i]);
	for (i = 0; i < c->nr_sem; i++) {
		kvfree(c->sem[i]);
		kvfree(c->sem_undo[i]);
	}
	for (i = 0; i < c->nr_msg; i++)
		kvfree(c->msg[i]);
	kvfree(c->shm);
	kvfree(c->shm_file);
	kvfree(c->sem);
	kvfree(c->sem_len);
	kvfree(c->sem_undo);
	kvfree(c->msg);
	kvfree(c->msg_len);
	memset(c, 0, sizeof(*c));
}

int ckpt_ipc_write(const struct ckpt_ipc *c, struct ckpt_writer *w)
{
	int ret = 0;
	u32 i;

	for (i = 0; i < c->nr_shm && !ret; i++) {
		const struct ckpt_img_sysvshm *img = &c->shm[i];

		ret = ckpt_write_sect(w, CKPT_SECT_SYSVSHM, img, sizeof(*img),
				      NULL, 0);
		if (!ret)
			ret = ckpt_write_runs(w, CKPT_SECT_SYSVDATA, img->perm.id,
					      c->shm_file[i], img->size,
					      img->stored);
	}
	for (i = 0; i < c->nr_sem && !ret; i++)
		ret = ckpt_write_sect(w, CKPT_SECT_SYSVSEM, c->sem[i],
				      c->sem_len[i], NULL, 0);
	for (i = 0; i < c->nr_msg && !ret; i++)
		ret = ckpt_write_sect(w, CKPT_SECT_SYSVMSG, c->msg[i],
				      c->msg_len[i], NULL, 0);
	return ret;
}

bool ckpt_ipc_shm_file(const struct file *file)
{
	/* shmat()'s own file over the segment's, on the internal shm mount. */
	return file && (file->f_path.mnt->mnt_flags & MNT_INTERNAL) &&
	       file->f_op != file_inode(file)->i_fop &&
	       !strncmp(file->f_path.dentry->d_name.name, "SYSV", 4);
}

int ckpt_ipc_vma(const struct ckpt_ipc *c, const struct vm_area_struct *vma,
		 struct ckpt_img_vma *v, struct ckpt_why *why)
{
	u32 id = file_inode(vma->vm_file)->i_ino, i;

	if (!c) {
		ckpt_whyf(why,
			  "mapping %lx-%lx of System V shared memory segment %u: restored only in a process tree (ckpt checkpoint --tree) with an IPC namespace of its own",
			  vma->vm_start, vma->vm_end, id);
		return -EOPNOTSUPP;
	}
	/* The segment's own inode: an id alone could be another namespace's. */
	for (i = 0; i < c->nr_shm; i++)
		if (file_inode(c->shm_file[i]) == file_inode(vma->vm_file))
			break;
	if (i == c->nr_shm && !c->own) {
		/* Not the tree's (take_private()), or not readable here. */
		if (c->initial || !c->ns)
			ckpt_whyf(why,
				  "mapping %lx-%lx of System V shared memory segment %u of the initial IPC namespace: start the tree in an IPC namespace of its own (a job: ckpt-run --ns; a tree: unshare --ipc)",
				  vma->vm_start, vma->vm_end, id);
		else
			ckpt_whyf(why,
				  "mapping %lx-%lx of System V shared memory segment %u, in an IPC namespace that pid %d, outside the tree, shares",
				  vma->vm_start, vma->vm_end, id, c->outsider);
		return -EOPNOTSUPP;
	}
	if (i == c->nr_shm) {
		ckpt_whyf(why,
			  "mapping %lx-%lx of System V shared memory segment %u, which the tree's IPC namespace does not hold",
			  vma->vm_start, vma->vm_end, id);
		return -ESTALE;
	}
	v->flags |= CKPT_VMA_SYSV;
	if (vma->vm_flags & VM_MAYWRITE)
		v->flags |= CKPT_VMA_MAYWRITE;
	v->ino = id;
	v->size = c->shm[i].size;
	snprintf(v->path, sizeof(v->path), "/SYSV%08x", c->shm[i].perm.key);
	return 0;
}
