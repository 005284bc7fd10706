// SPDX-License-Identifier: GPL-2.0
/*
 * CKPT_IOC_CHECKPOINT_TREE: a process and its descendants as one set.
 *
 * The members go through checkpoint.c's pipeline together (struct
 * ckpt_cp_group): all found and their rights checked, then all their
 * libckpt callbacks, then all frozen, then the tree's rules checked here
 * (while nothing can fork, exit unseen or change its descriptors), then all
 * captured and written. What is only a tree's: the arguments, the rules
 * and the TREE section, with pids numbered in the root's pid namespace.
 */

#include <linux/cgroup.h>
#include <linux/delay.h>
#include <linux/eventfd.h>
#include <linux/fdtable.h>
#include <linux/mm.h>
#include <linux/pid_namespace.h>
#include <linux/random.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/tty.h>
#include <linux/tty_driver.h>
#include <linux/uaccess.h>

#include "checkpoint.h"
#include "signals.h"
#include "tree.h"
#include "tree_files.h"
#include "why.h"

/* How long a frozen tree waits for a child no member forked late (ms). */
#define CKPT_TREE_CHILD_WAIT_MS	2000
/* A member's zombie child that started this long before the request: late. */
#define CKPT_TREE_LATE_MS	3000

/* The arguments alone, before anything is looked up. */
static const char *check_args(const struct ckpt_checkpoint_tree *a)
{
	unsigned int i;

	if (!a->nr_members || a->nr_members > CKPT_TREE_MAX_MEMBERS)
		return "nr_members must be 1 .. CKPT_TREE_MAX_MEMBERS (1024)";
	if (a->flags & ~__CKPT_CHECKPOINT_F_ALL ||
	    (a->flags & CKPT_CHECKPOINT_STOP && a->flags & CKPT_CHECKPOINT_KILL))
		return "unknown or conflicting flags";
	for (i = 0; i < ARRAY_SIZE(a->reserved); i++)
		if (a->reserved[i])
			return "reserved fields must be 0";
	if (a->reserved32)
		return "reserved fields must be 0";
	if (a->flags & CKPT_CHECKPOINT_STAGED && !(a->flags & CKPT_CHECKPOINT_STOP))
		return "CKPT_CHECKPOINT_STAGED needs CKPT_CHECKPOINT_STOP";
	if (a->flags & CKPT_CHECKPOINT_WAITING_AWAY &&
	    !(a->flags & CKPT_CHECKPOINT_PEERS_AWAY))
		return "CKPT_CHECKPOINT_WAITING_AWAY needs CKPT_CHECKPOINT_PEERS_AWAY";
	if (!(a->flags & CKPT_CHECKPOINT_STAGED) && a->staged_fd)
		return "staged_fd is set with CKPT_CHECKPOINT_STAGED, and only then";
	if (!(a->flags & CKPT_CHECKPOINT_DIGESTS) != !a->digests)
		return "digests is set with CKPT_CHECKPOINT_DIGESTS, and only then";
	if (a->timeout_ms > CKPT_TIMEOUT_MAX_MS)
		return "timeout_ms is above CKPT_TIMEOUT_MAX_MS (10 minutes)";
	return NULL;
}

/* Each member alone, and no pid or image descriptor twice. */
static int check_members(const struct ckpt_tree_member *mem, u32 nr,
			 struct ckpt_why *why)
{
	u32 i, j;

	for (i = 0; i < nr; i++) {
		if (mem[i].ns_pid) {
			ckpt_whyf(why, "member %u: ns_pid must be 0", i);
			return -EINVAL;
		}
		for (j = 0; j < i; j++) {
			if (mem[j].pid == mem[i].pid) {
				ckpt_whyf(why, "pid %u is listed twice (members %u and %u)",
					  mem[i].pid, j, i);
				return -EINVAL;
			}
			if (mem[j].fd == mem[i].fd) {
				ckpt_whyf(why, "members %u and %u have the same image descriptor %d",
					  j, i, mem[i].fd);
				return -EINVAL;
			}
		}
	}
	return 0;
}

static int cmp_task(const void *a, const void *b, const void *priv)
{
	const struct ckpt_cp_group *g = priv;
	const struct task_struct *x = g->m[*(const u32 *)a].task;
	const struct task_struct *y = g->m[*(const u32 *)b].task;

	return x < y ? -1 : x > y;
}

/* The index of the member whose process @p is (a leader), or -1. */
int ckpt_tree_member_of(const struct ckpt_cp_group *g, const struct task_struct *p)
{
	unsigned int lo = 0, hi = g->nr;

	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;
		const struct task_struct *t = g->m[g->sorted[mid]].task;

		if (t == p)
			return g->sorted[mid];
		if (t < p)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/*
 * Before anything is frozen: every member in the root's pid namespace,
 * whose numbers the images use, and the members sorted for lookups.
 */
int ckpt_tree_prepare(struct ckpt_cp_group *g)
{
	struct pid_namespace *ns;
	unsigned int i;

	ns = task_active_pid_ns(g->m[0].task);
	if (!ns) {
		g->failed = 0;
		ckpt_whyf(&g->m[0].why, "pid %u exited", g->m[0].a->pid);
		return -ESRCH;
	}
	g->ns = get_pid_ns(ns);
	for (i = 0; i < g->nr; i++) {
		if (task_active_pid_ns(g->m[i].task) != ns) {
			g->failed = i;
			ckpt_whyf(&g->m[i].why,
				  "pid %u is in another pid namespace than the tree root (pid %u): not supported yet",
				  g->m[i].a->pid, g->m[0].a->pid);
			return -EOPNOTSUPP;
		}
		g->m[i].ns = ns;
	}
	g->sorted = kvmalloc_array(g->nr, sizeof(*g->sorted), GFP_KERNEL);
	if (!g->sorted)
		return -ENOMEM;
	for (i = 0; i < g->nr; i++)
		g->sorted[i] = i;
	sort_r(g->sorted, g->nr, sizeof(*g->sorted), cmp_task, NULL, g);
	return 0;
}

void ckpt_tree_release(struct ckpt_cp_group *g)
{
	kvfree(g->sorted);
	g->sorted = NULL;
	if (g->ns)
		put_pid_ns(g->ns);
	g->ns = NULL;
}

static int note_stdio(const void *arg, struct file *file, unsigned int fd)
{
	struct file **f = (struct file **)arg;

	if (fd > 2)
		return 1;
	f[fd] = file;
	return 0;
}

/* The open files of descriptors 0-2, compared only, never dereferenced. */
static void get_stdio(struct task_struct *task, struct file *f[3])
{
	f[0] = f[1] = f[2] = NULL;
	task_lock(task);
	if (task->files)
		iterate_fd(task->files, 0, note_stdio, f);
	task_unlock(task);
}

/*
 * @t's controlling terminal: whether its process group is that
 * terminal's foreground (CKPT_TREE_FOREGROUND), and the master of the
 * pseudo-terminal whose slave it is, or NULL: compared with the members'
 * ptys (ckpt_pty_check_ctty()), never dereferenced.
 */
static bool read_ctty(struct task_struct *t, const void **master)
{
	struct sighand_struct *sighand;
	struct tty_struct *tty = NULL;
	unsigned long flags;
	struct pid *fg;
	bool ret;

	*master = NULL;
	sighand = ckpt_lock_sighand(t, &flags);
	if (sighand) {
		tty = tty_kref_get(t->signal->tty);
		ckpt_unlock_sighand(sighand, &flags);
	}
	if (!tty)
		return false;
	if (tty->driver->type == TTY_DRIVER_TYPE_PTY &&
	    tty->driver->subtype == PTY_TYPE_SLAVE)
		*master = tty->link;
	fg = tty_get_pgrp(tty);
	rcu_read_lock();
	ret = fg && fg == task_pgrp(t);
	rcu_read_unlock();
	put_pid(fg);
	tty_kref_put(tty);
	return ret;
}

/*
 * One member, frozen: alive, untraced, its parent listed before it. Fills
 * its TREE section, and tells its descriptor scan the root's standard
 * files (they become the restarter's).
 */
static int check_member(struct ckpt_cp_group *g, unsigned int i,
			const struct file *const root_stdio[3])
{
	struct ckpt_cp_ctx *ctx = &g->m[i];
	struct task_struct *t = ctx->task;
	int parent;

	if (t->exit_state) {
		ckpt_whyf(&ctx->why, "pid %u is a zombie: not supported yet",
			  ctx->a->pid);
		return -EBUSY;
	}
	if (t->ptrace) {
		ckpt_whyf(&ctx->why, "pid %u is being traced", ctx->a->pid);
		return -EBUSY;
	}
	rcu_read_lock();
	parent = ckpt_tree_member_of(g, rcu_dereference(t->real_parent)->group_leader);
	rcu_read_unlock();
	/* Another root: its parent is no member either (CKPT_CHECKPOINT_ROOTS). */
	if (i && parent < 0 && g->flags & CKPT_CHECKPOINT_ROOTS) {
		ctx->tree.flags |= CKPT_TREE_ROOT;
	} else if (!i && parent >= 0) {
		ckpt_whyf(&ctx->why, "the root, pid %u, is a child of member pid %u",
			  ctx->a->pid, g->m[parent].a->pid);
		return -EINVAL;
	} else if (i && (parent < 0 || parent >= i)) {
		ckpt_whyf(&ctx->why,
			  "pid %u is not a descendant of pid %u listed after its parent",
			  ctx->a->pid, g->m[0].a->pid);
		return -EINVAL;
	}
	ctx->ns_pid = task_tgid_nr_ns(t, g->ns);
	memcpy(ctx->tree.id, g->id, sizeof(ctx->tree.id));
	ctx->tree.index = i;
	ctx->tree.nr_members = g->nr;
	ctx->tree.parent = i && parent >= 0 ? parent : CKPT_TREE_NO_PARENT;
	ctx->tree.pgid = task_pgrp_nr_ns(t, g->ns);
	ctx->tree.sid = task_session_nr_ns(t, g->ns);
	if (t->signal->is_child_subreaper)
		ctx->tree.flags |= CKPT_TREE_SUBREAPER;
	if (read_ctty(t, &ctx->ctty))
		ctx->tree.flags |= CKPT_TREE_FOREGROUND;
	/* Its descriptors: stdio and pipes are the tree's (tree_files.c). */
	ctx->scan.in_tree = true;
	ctx->scan.pid_ns = g->ns;
	ctx->scan.all_fds = i != 0;
	ctx->scan.local_files = g->flags & CKPT_CHECKPOINT_LOCAL_FILES;
	memcpy(ctx->scan.root_stdio, root_stdio, sizeof(ctx->scan.root_stdio));
	return 0;
}

enum outsider_kind { NOT_IN_TREE, ZOMBIE_CHILD, TRACED };

/*
 * Whether process @p, a relative of the members, leaves the tree
 * incomplete: a child of a member that is no member, or a process a
 * member traces; or is a member's zombie child, which the member's image
 * records. Returns the member to name, or -1.
 */
static int outsider(const struct ckpt_cp_group *g, struct task_struct *p,
		    enum outsider_kind *kind)
{
	struct task_struct *parent, *tracer;
	int i;

	parent = rcu_dereference(p->real_parent)->group_leader;
	tracer = rcu_dereference(p->parent)->group_leader;
	i = ckpt_tree_member_of(g, parent);
	if (i >= 0 && p->exit_state && thread_group_empty(p)) {
		*kind = ZOMBIE_CHILD;
		return i;
	}
	if (i >= 0 && ckpt_tree_member_of(g, p) < 0) {
		*kind = NOT_IN_TREE;
		return i;
	}
	i = tracer != parent ? ckpt_tree_member_of(g, tracer) : -1;
	*kind = TRACED;
	return i;
}

/* Member @i's zombie child @p, as wait() would report it. */
static void note_zombie(struct ckpt_cp_group *g, int i, struct task_struct *p)
{
	struct ckpt_cp_ctx *ctx = &g->m[i];
	struct ckpt_img_zombie *z = &ctx->zombies[ctx->nr_zombies++];

	memset(z, 0, sizeof(*z));
	z->pid = task_tgid_nr_ns(p, g->ns);
	z->status = p->signal->flags & SIGNAL_GROUP_EXIT ?
		    p->signal->group_exit_code : p->exit_code;
	z->exit_signal = p->exit_signal;
	z->pgid = task_pgrp_nr_ns(p, g->ns);
	z->sid = task_session_nr_ns(p, g->ns);
}

/*
 * One pass over the processes: the members' zombie children counted (or,
 * with @fill, recorded: their parents are frozen, none is reaped between
 * the passes), and the first relative that leaves the tree incomplete
 * found. The checkpointer itself (libckpt's helper, a child of the
 * process that asked) is no member and no child that counts, as for a
 * single process.
 */
static int scan_relatives(struct ckpt_cp_group *g, bool fill,
			  enum outsider_kind *kind, pid_t *other)
{
	struct task_struct *p;
	int i = -1;

	rcu_read_lock();
	for_each_process(p) {
		if (same_thread_group(p, current))
			continue;
		i = outsider(g, p, kind);
		if (i < 0)
			continue;
		if (*kind != ZOMBIE_CHILD) {
			*other = task_pid_vnr(p);
			break;
		}
		if (fill && g->m[i].nr_zombies < g->m[i].max_zombies)
			note_zombie(g, i, p);
		else if (!fill)
			g->m[i].max_zombies++;
		i = -1;
	}
	rcu_read_unlock();
	return i;
}

/*
 * The earliest start of a member's child that is no member and has not
 * ended, or, with @zombies, also of one that ended lately (started less
 * than CKPT_TREE_LATE_MS before the request): U64_MAX if none.
 */
static u64 outsiders_since(const struct ckpt_cp_group *g, bool zombies)
{
	enum outsider_kind kind;
	struct task_struct *p;
	u64 since = U64_MAX;

	rcu_read_lock();
	for_each_process(p) {
		if (same_thread_group(p, current) || outsider(g, p, &kind) < 0)
			continue;
		if (kind == NOT_IN_TREE ||
		    (zombies && kind == ZOMBIE_CHILD &&
		     p->start_time + CKPT_TREE_LATE_MS * NSEC_PER_MSEC >= g->t0))
			since = min(since, p->start_time);
	}
	rcu_read_unlock();
	return since;
}

/*
 * A child a member forked between the caller's look at the tree and the
 * freeze (a shell loop's next command) is no member. Each such child is
 * given up to CKPT_TREE_CHILD_WAIT_MS, within the request's deadline, to
 * end: a zombie then, which its parent's image records. One that lives
 * on fails the try with -EBUSY, named, as before, and the caller looks
 * again. A loaded machine's callbacks and staging had let a loop's
 * short-lived children fail every one of a checkpoint's tries.
 */
static void await_outsiders(const struct ckpt_cp_group *g)
{
	unsigned long end = jiffies + msecs_to_jiffies(CKPT_TREE_CHILD_WAIT_MS);

	if (time_after(end, g->deadline))
		end = g->deadline;
	while (outsiders_since(g, false) != U64_MAX && time_before(jiffies, end) &&
	       !fatal_signal_pending(current))
		msleep(20);
}

/*
 * A process such a child left behind: one it started and ended before (a
 * double fork: `setsid -f`, `( cmd & )`) was given to a reaper, where no
 * member's children show it. Any live process that is no member, started
 * since @since, in member 0's cgroup, whose parent is the members' pid
 * namespace's init or a subreaper, is taken for one: its pid, or 0. (An
 * unrelated one fails a try the caller makes again.)
 */
static pid_t orphan_since(const struct ckpt_cp_group *g, u64 since)
{
	struct task_struct *p, *parent, *m0 = g->m[0].task;
	struct task_struct *reaper;
	pid_t ret = 0;

	rcu_read_lock();
	reaper = task_active_pid_ns(m0)->child_reaper;
	for_each_process(p) {
		if (p->start_time < since || p->exit_state ||
		    p->flags & PF_KTHREAD || same_thread_group(p, current) ||
		    ckpt_tree_member_of(g, p) >= 0 ||
		    task_dfl_cgroup(p) != task_dfl_cgroup(m0))
			continue;
		parent = rcu_dereference(p->real_parent)->group_leader;
		if (parent == reaper || parent->signal->is_child_subreaper) {
			ret = task_pid_vnr(p);
			break;
		}
	}
	rcu_read_unlock();
	return ret;
}

/*
 * The late children waited for; then none of them, nor a child that ended
 * lately, may have left a process of its own behind outside the tree.
 */
static int await_late_children(struct ckpt_cp_group *g)
{
	u64 since = outsiders_since(g, true);
	pid_t orphan;

	if (since == U64_MAX)
		return 0;
	await_outsiders(g);
	orphan = orphan_since(g, since);
	if (!orphan)
		return 0;
	g->failed = 0;
	ckpt_whyf(&g->m[0].why,
		  "process %d, started during the checkpoint by a child of the tree's that has ended since, is not in the tree",
		  orphan);
	return -EBUSY;
}

/* The members' zombie children, and every other relative: in the tree. */
static int check_relatives(struct ckpt_cp_group *g)
{
	enum outsider_kind kind = TRACED;
	struct ckpt_why *why;
	unsigned int j;
	pid_t other = 0;
	int i;
	u32 pid;

	i = await_late_children(g);
	if (i)
		return i;
	i = scan_relatives(g, false, &kind, &other);
	for (j = 0; i < 0 && j < g->nr; j++) {
		struct ckpt_cp_ctx *ctx = &g->m[j];

		if (!ctx->max_zombies)
			continue;
		if (ctx->max_zombies > CKPT_IMG_MAX_ZOMBIES) {
			g->failed = j;
			ckpt_whyf(&ctx->why,
				  "pid %u has %u zombie children, more than an image holds (%u)",
				  ctx->a->pid, ctx->max_zombies,
				  CKPT_IMG_MAX_ZOMBIES);
			return -E2BIG;
		}
		ctx->zombies = kvcalloc(ctx->max_zombies, sizeof(*ctx->zombies),
					GFP_KERNEL);
		if (!ctx->zombies)
			return -ENOMEM;
	}
	if (i < 0)
		i = scan_relatives(g, true, &kind, &other);
	if (i < 0)
		return 0;
	g->failed = i;
	why = &g->m[i].why;
	pid = g->m[i].a->pid;
	if (kind == NOT_IN_TREE)
		ckpt_whyf(why, "pid %u has a child process %d that is not in the tree",
			  pid, other);
	else
		ckpt_whyf(why, "pid %u traces process %d: process trees with tracers are not supported yet",
			  pid, other);
	return -EBUSY;
}

/*
 * Several trees: a root besides member 0 in the session of a member that
 * is no root (a double fork's orphan whose session's leader lives on
 * deeper in a tree) could not be made there again; the restart makes a
 * root in its own session, the restarter's, or another root's.
 */
static int check_root_sessions(struct ckpt_cp_group *g)
{
	unsigned int i, k;

	for (i = 1; i < g->nr; i++) {
		const struct ckpt_cp_ctx *r = &g->m[i];

		if (!(r->tree.flags & CKPT_TREE_ROOT) || r->tree.sid == r->ns_pid)
			continue;
		for (k = 1; k < g->nr; k++) {
			if (g->m[k].ns_pid != r->tree.sid ||
			    g->m[k].tree.flags & CKPT_TREE_ROOT)
				continue;
			g->failed = i;
			ckpt_whyf(&g->m[i].why,
				  "pid %u, a tree's root, is in the session of pid %u, which is no tree's root: not supported yet",
				  r->a->pid, g->m[k].a->pid);
			return -EOPNOTSUPP;
		}
	}
	return 0;
}

/*
 * Once every member is frozen, before any is captured: the members one
 * by one, then their relatives.
 */
int ckpt_tree_check(struct ckpt_cp_group *g)
{
	struct file *root_stdio[3];
	unsigned int i;
	int ret;

	get_stdio(g->m[0].task, root_stdio);
	for (i = 0; i < g->nr; i++) {
		ret = check_member(g, i, (const struct file *const *)root_stdio);
		if (ret) {
			g->failed = i;
			return ret;
		}
	}
	ret = check_root_sessions(g);
	if (!ret)
		ret = check_relatives(g);
	if (!ret)
		ret = ckpt_tree_check_files(g, (const struct file *const *)root_stdio);
	return ret;
}

/* Back to user space: every member's results, the request's. */
static int put_results(struct ckpt_checkpoint_tree __user *uarg,
		       struct ckpt_checkpoint_tree *a,
		       struct ckpt_tree_member *mem,
		       const struct ckpt_checkpoint *args, const u8 *sums)
{
	u32 i;

	for (i = 0; i < a->nr_members; i++) {
		mem[i].nr_threads = args[i].nr_threads;
		mem[i].image_bytes = args[i].image_bytes;
		mem[i].nr_pages = args[i].nr_pages;
	}
	if (copy_to_user(u64_to_user_ptr(a->members), mem,
			 array_size(a->nr_members, sizeof(*mem))) ||
	    (sums && copy_to_user(u64_to_user_ptr(a->digests), sums,
				  array_size(a->nr_members, CKPT_DIGEST_LEN))) ||
	    copy_to_user(uarg, a, sizeof(*a)))
		return -EFAULT;
	return 0;
}

/* The members as the pipeline takes them: one request of one each. */
static int run_tree(struct ckpt_checkpoint_tree *a,
		    struct ckpt_tree_member *mem,
		    struct ckpt_checkpoint *args, u8 *sums,
		    struct ckpt_why *why)
{
	struct ckpt_cp_group g = {
		.nr = a->nr_members, .flags = a->flags,
		.timeout = a->timeout_ms, .tree = true,
	};
	u32 i;
	int ret;

	if (a->flags & CKPT_CHECKPOINT_STAGED) {
		g.staged_ev = eventfd_ctx_fdget(a->staged_fd);
		if (IS_ERR(g.staged_ev)) {
			ckpt_whyf(why, "staged_fd %d is not an eventfd", a->staged_fd);
			return PTR_ERR(g.staged_ev);
		}
	}
	g.m = kvcalloc(g.nr, sizeof(*g.m), GFP_KERNEL);
	if (!g.m) {
		if (g.staged_ev)
			eventfd_ctx_put(g.staged_ev);
		return -ENOMEM;
	}
	for (i = 0; i < g.nr; i++) {
		args[i].pid = mem[i].pid;
		args[i].fd = mem[i].fd;
		args[i].flags = a->flags;
		args[i].timeout_ms = a->timeout_ms;
		g.m[i].a = &args[i];
	}
	get_random_bytes(g.id, sizeof(g.id));
	ret = ckpt_cp_group_run(&g);
	a->frozen_ns = g.frozen_ns;
	a->total_ns = g.total_ns;
	memcpy(a->id, g.id, sizeof(a->id));
	for (i = 0; !ret && i < g.nr; i++) {
		mem[i].ns_pid = g.m[i].ns_pid;
		/* The writers are done: each digest is final. */
		if (sums)
			memcpy(sums + i * CKPT_DIGEST_LEN, g.m[i].w.sum,
			       CKPT_DIGEST_LEN);
	}
	if (ret)
		ckpt_whyf(why, "%s", ckpt_cp_group_why(&g) ?: "the checkpoint failed");
	if (g.staged_ev)
		eventfd_ctx_put(g.staged_ev);
	kvfree(g.m);
	return ret;
}

long ckpt_ioctl_checkpoint_tree(struct ckpt_checkpoint_tree __user *uarg)
{
	struct ckpt_checkpoint_tree a;
	struct ckpt_tree_member *mem;
	struct ckpt_checkpoint *args;
	struct ckpt_why why = {};
	const char *msg;
	u8 *sums = NULL;
	long ret;

	if (copy_from_user(&a, uarg, sizeof(a)))
		return -EFAULT;
	msg = check_args(&a);
	if (msg) {
		ckpt_put_errmsg(a.errmsg, a.errmsg_len, msg);
		return -EINVAL;
	}
	/* Connections half captured are the daemon's to join, no one else's. */
	if (a.flags & CKPT_CHECKPOINT_PEERS_AWAY && !capable(CAP_NET_ADMIN)) {
		ckpt_put_errmsg(a.errmsg, a.errmsg_len,
				"CKPT_CHECKPOINT_PEERS_AWAY needs CAP_NET_ADMIN");
		return -EPERM;
	}
	mem = kvmalloc_array(a.nr_members, sizeof(*mem), GFP_KERNEL);
	args = kvcalloc(a.nr_members, sizeof(*args), GFP_KERNEL);
	if (a.flags & CKPT_CHECKPOINT_DIGESTS)
		sums = kvcalloc(a.nr_members, CKPT_DIGEST_LEN, GFP_KERNEL);
	ret = -ENOMEM;
	if (!mem || !args || (a.flags & CKPT_CHECKPOINT_DIGESTS && !sums))
		goto out_free;
	ret = -EFAULT;
	if (copy_from_user(mem, u64_to_user_ptr(a.members),
			   array_size(a.nr_members, sizeof(*mem))))
		goto out_free;
	ret = check_members(mem, a.nr_members, &why);
	if (!ret)
		ret = run_tree(&a, mem, args, sums, &why);
	if (!ret)
		ret = put_results(uarg, &a, mem, args, sums);
	else
		ckpt_put_errmsg(a.errmsg, a.errmsg_len, why.msg);
out_free:
	kvfree(sums);
	kvfree(args);
	kvfree(mem);
	return ret;
}
