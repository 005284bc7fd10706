// SPDX-License-Identifier: GPL-2.0
/*
 * Open files a tree's members share (Documentation/engine.md, "Process
 * trees"): once every member is frozen and before any is captured, the
 * pipes whose ends the members hold are counted across the tree. A pipe
 * passes when every reference to each of its ends is a member's descriptor
 * and every end is one the members hold: then each member's image records
 * its descriptors of it and its content, and the restart makes it once for
 * all. One with a reference elsewhere is refused, naming the member and
 * its descriptor. The root's standard files are left out: they are
 * re-attached to the restarter's (fds.c, CKPT_FILE_STDIO).
 *
 * File objects (fileobj.h: memfds, deleted files, FIFOs and, in a tree,
 * MAP_SHARED anonymous memory) are counted across the tree once every
 * member is captured: every reference to each of their open files must be
 * a member's descriptor or mapping, and the object's dentry referenced by
 * those files only (not a tmpfs file's, which has a name). Each member's
 * image then names the object (the same identity in every image) and the
 * first member that holds it, in tree order, stores its content; the
 * restart makes it once for all, so that memory shared by fork is shared
 * again. A FIFO's ends are counted across
 * the tree instead; its bytes too are stored once.
 * Last, an open regular file or directory several members hold (fork
 * shares its position) is marked in each of their FILES entries, and the
 * restart opens it once for all.
 */

#include <linux/fdtable.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/sched/task.h>
#include <linux/bitmap.h>
#include <linux/slab.h>
#include <linux/sort.h>

#include "checkpoint.h"
#include "fileobj.h"
#include "pipes.h"
#include "tcp.h"
#include "usock.h"
#include "tree_files.h"
#include "why.h"

/* At most this many distinct pipe ends in a tree. */
#define TREE_MAX_PIPE_FILES	(16 * CKPT_IMG_MAX_FILES)

struct tf_end {
	struct file *file;	/* referenced */
	u32 count;		/* the members' descriptors of it */
	u32 member, fd;		/* the first of them, to name */
};

struct tf_scan {
	struct tf_end *e;
	u32 nr;
	u32 member;
	const struct file *const *stdio;	/* the root's 0-2 */
	bool full;
};

static int note_pipe(const void *arg, struct file *file, unsigned int fd)
{
	struct tf_scan *s = (struct tf_scan *)arg;
	u32 i;

	if ((!ckpt_is_pipe(file) && !ckpt_is_usock(file) && !ckpt_is_tcp(file)) ||
	    file == s->stdio[0] ||
	    file == s->stdio[1] || file == s->stdio[2])
		return 0;
	for (i = 0; i < s->nr; i++) {
		if (s->e[i].file == file) {
			s->e[i].count++;
			return 0;
		}
	}
	if (s->nr == TREE_MAX_PIPE_FILES) {
		s->full = true;
		return 1;
	}
	s->e[s->nr++] = (struct tf_end){
		.file = get_file(file),
		.count = 1,
		.member = s->member,
		.fd = fd,
	};
	return 0;
}

/* The ends of @e's pipe the members hold, by kind; -1: an end both ways. */
static int held_ends(const struct tf_scan *s, const struct tf_end *e,
		     unsigned int *readers, unsigned int *writers)
{
	const void *pipe = e->file->private_data;
	u32 i;

	*readers = *writers = 0;
	for (i = 0; i < s->nr; i++) {
		const struct file *f = s->e[i].file;

		if (f->private_data != pipe)
			continue;
		if ((f->f_mode & FMODE_READ) && (f->f_mode & FMODE_WRITE))
			return -1;
		if (f->f_mode & FMODE_READ)
			(*readers)++;
		else
			(*writers)++;
	}
	return 0;
}

/* Whether @file is one of the members' (a pipe end or socket noted). */
static bool noted(const struct tf_scan *s, const struct file *file)
{
	u32 i;

	for (i = 0; i < s->nr; i++)
		if (s->e[i].file == file)
			return true;
	return false;
}

/* A UNIX socket's peer must be a member's too, or closed. */
static int check_peer(struct ckpt_cp_group *g, const struct tf_scan *s,
		      const struct tf_end *e)
{
	struct ckpt_cp_ctx *ctx = &g->m[e->member];
	struct file *peer;
	const char *msg;
	u64 ino, peer_ino;

	/* One fds.c refuses, naming what it is, is left to it. */
	if (ckpt_usock_record(e->file, &ino, &peer_ino, &peer, &msg) ||
	    !peer || noted(s, peer))
		return 0;
	g->failed = e->member;
	ckpt_whyf(&ctx->why,
		  "pid %u fd %u (socket:[%llu]) is connected to a process outside the tree",
		  ctx->a->pid, e->fd, ino);
	return -EOPNOTSUPP;
}

/* Every pipe end and socket held, and held by members only. */
static int check_ends(struct ckpt_cp_group *g, const struct tf_scan *s)
{
	unsigned int readers, writers, have_r, have_w;
	u32 i;
	int ret;

	for (i = 0; i < s->nr; i++) {
		const struct tf_end *e = &s->e[i];
		struct ckpt_cp_ctx *ctx = &g->m[e->member];

		/* Ours is the one reference more. */
		if (!ckpt_file_refs_are(e->file, e->count + 1))
			goto outside;
		if (ckpt_is_usock(e->file)) {
			ret = check_peer(g, s, e);
			if (ret)
				return ret;
			continue;
		}
		/* A TCP peer is found once all are captured (tcp.c). */
		if (ckpt_is_tcp(e->file))
			continue;
		if (held_ends(s, e, &have_r, &have_w))
			continue;	/* fds.c names a pipe reopened read-write */
		ret = ckpt_pipe_ends(e->file, &readers, &writers);
		if (ret) {
			g->failed = e->member;
			ckpt_whyf(&ctx->why,
				  "pid %u fd %u is a pipe, which this engine cannot read on this kernel",
				  ctx->a->pid, e->fd);
			return -EOPNOTSUPP;
		}
		if (readers != have_r || writers != have_w)
			goto outside;
		continue;
outside:
		g->failed = e->member;
		ckpt_whyf(&ctx->why, ckpt_is_usock(e->file) || ckpt_is_tcp(e->file) ?
			  "pid %u fd %u (socket:[%lu]) is open in a process outside the tree too" :
			  "pid %u fd %u (pipe:[%lu]) has an end open in a process outside the tree",
			  ctx->a->pid, e->fd, file_inode(e->file)->i_ino);
		return -EOPNOTSUPP;
	}
	return 0;
}

/*
 * One open file of a file object (fileobj.h) as a member holds it, and the
 * references on it that are accounted for: the member's descriptors and
 * mappings, and those its capture took.
 */
struct tf_use {
	struct file *file;
	const struct inode *key;	/* the object, compared only */
	u32 member, obj, refs;
	int fd;				/* its first descriptor, or -1 */
};

static int cmp_ptr(const void *a, const void *b)
{
	return a < b ? -1 : a > b;
}

/* By open file, then member: a file's first use is its first holder's. */
static int by_file(const void *a, const void *b)
{
	const struct tf_use *x = a, *y = b;

	return cmp_ptr(x->file, y->file) ?:
	       (x->member < y->member ? -1 : x->member > y->member);
}

/* By object, then open file. */
static int by_key(const void *a, const void *b)
{
	const struct tf_use *x = a, *y = b;

	return cmp_ptr(x->key, y->key) ?: by_file(a, b);
}

static const char *const obj_kinds[__CKPT_FILE_KIND_MAX] = {
	[CKPT_FILE_FIFO] = "FIFO", [CKPT_FILE_MEMFD] = "memfd",
	[CKPT_FILE_DELETED] = "deleted file",
	[CKPT_FILE_SHMEM] = "shared anonymous memory",
	[CKPT_FILE_LOCAL] = "node-local file",
};

/* Fails naming @u's member and how it holds the object, held outside. */
static int obj_refused(struct ckpt_cp_group *g, const struct tf_use *u)
{
	struct ckpt_cp_ctx *ctx = &g->m[u->member];
	const struct ckpt_img_fileobj *img = &ctx->scan.objs.img[u->obj];

	g->failed = u->member;
	if (u->fd >= 0)
		ckpt_whyf(&ctx->why,
			  "pid %u fd %d (%s %s) is open in a process outside the tree",
			  ctx->a->pid, u->fd, obj_kinds[img->kind], img->name);
	else
		ckpt_whyf(&ctx->why,
			  "pid %u maps %s %s, which a process outside the tree holds too",
			  ctx->a->pid, obj_kinds[img->kind], img->name);
	return -EOPNOTSUPP;
}

static struct tf_use *gather_uses(struct ckpt_cp_group *g, u32 *nr)
{
	struct tf_use *u;
	u32 i, k, n = 0;

	for (i = 0; i < g->nr; i++)
		n += g->m[i].scan.objs.nr_uses;
	*nr = n;
	if (!n)
		return NULL;
	u = kvmalloc_array(n, sizeof(*u), GFP_KERNEL);
	if (!u)
		return ERR_PTR(-ENOMEM);
	for (i = 0, n = 0; i < g->nr; i++) {
		const struct ckpt_fileobjs *o = &g->m[i].scan.objs;

		for (k = 0; k < o->nr_uses; k++) {
			const struct fileobj_use *fu = &o->uses[k];

			u[n++] = (struct tf_use){
				.file = fu->file,
				.key = o->key[fu->obj],
				.member = i,
				.obj = fu->obj,
				.refs = fu->known + 1 + (o->file[fu->obj] == fu->file),
				.fd = fu->fd,
			};
		}
	}
	return u;
}

/*
 * A FIFO's open ends in @u[0..@n) against the ends it has; *@readers: how
 * many of them read.
 */
static bool fifo_ends_held(const struct tf_use *u, u32 n,
			   unsigned int *readers)
{
	unsigned int writers = 0, have_r, have_w;
	u32 i;

	*readers = 0;
	for (i = 0; i < n; i++) {
		if (i && u[i].file == u[i - 1].file)
			continue;
		*readers += !!(u[i].file->f_mode & FMODE_READ);
		writers += !!(u[i].file->f_mode & FMODE_WRITE);
	}
	return !ckpt_pipe_ends(u[0].file, &have_r, &have_w) &&
	       have_r == *readers && have_w == writers;
}

/*
 * One object's uses @u[0..@n): held by members only (its dentry, when all
 * its files share one, referenced by their files and the members' readers
 * only; a FIFO's ends all open in members); then its content stays in its
 * first holder's image only.
 */
static int check_object(struct ckpt_cp_group *g, struct tf_use *u, u32 n,
			unsigned long *seen)
{
	const struct dentry *dentry = u[0].file->f_path.dentry;
	u32 i, files = 0, readers = 0, first = 0, owner;
	bool comparable = true;

	bitmap_zero(seen, g->nr);
	for (i = 0; i < n; i++) {
		if (!i || u[i].file != u[i - 1].file)
			files++;
		if (u[i].file->f_path.dentry != dentry)
			comparable = false;	/* stacked */
		if (u[i].member < u[first].member)
			first = i;
		if (test_and_set_bit(u[i].member, seen))
			continue;
		if (g->m[u[i].member].scan.objs.rfile[u[i].obj])
			readers++;
	}
	/* Each member numbers its objects itself: @first's is the owner's. */
	owner = u[first].member;
	if (g->m[owner].scan.objs.img[u[first].obj].kind == CKPT_FILE_FIFO) {
		const struct ckpt_img_fileobj *img =
			&g->m[owner].scan.objs.img[u[first].obj];
		struct ckpt_cp_ctx *ctx = &g->m[u[0].member];

		/* By path: its dentry is the file system's. */
		if (!fifo_ends_held(u, n, &readers))
			return obj_refused(g, &u[0]);
		if (!readers && img->stored) {
			g->failed = u[0].member;
			ckpt_whyf(&ctx->why,
				  "pid %u fd %d: FIFO %s holds %llu bytes and the tree has only its write end open: they cannot be saved",
				  ctx->a->pid, u[0].fd, img->name, img->stored);
			return -EACCES;
		}
	} else if (g->m[owner].scan.objs.img[u[first].obj].kind !=
		   CKPT_FILE_LOCAL &&	/* named: anyone may hold it */
		   comparable &&
		   !ckpt_dentry_refs_are(u[0].file->f_path.dentry,
					 files + readers)) {
		return obj_refused(g, &u[0]);
	}
	for (i = 0; i < n; i++) {
		struct ckpt_fileobjs *o = &g->m[u[i].member].scan.objs;

		if (u[i].member == owner)
			continue;
		if (o->rfile[u[i].obj]) {
			fput(o->rfile[u[i].obj]);
			o->rfile[u[i].obj] = NULL;
		}
		o->img[u[i].obj].stored = 0;
	}
	return 0;
}

/* A member's descriptor of a regular file or directory. */
struct tf_desc {
	const struct file *file;	/* compared only */
	u32 member, entry;
};

static int desc_by_file(const void *a, const void *b)
{
	const struct tf_desc *x = a, *y = b;

	return cmp_ptr(x->file, y->file) ?:
	       (x->member < y->member ? -1 : x->member > y->member);
}

static const struct ckpt_img_file *desc_entry(struct ckpt_cp_group *g,
					      const struct tf_desc *d)
{
	return &g->m[d->member].scan.files[d->entry];
}

/* By the inode of the file, then the open file. */
static int desc_by_inode(const void *a, const void *b, const void *priv)
{
	struct ckpt_cp_group *g = (struct ckpt_cp_group *)priv;
	const struct ckpt_img_file *x = desc_entry(g, a), *y = desc_entry(g, b);

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return desc_by_file(a, b);
}

/* What a tree does with an open file several members hold, by kind. */
enum { SHARE_NONE, SHARE_OPEN, SHARE_MAKE };

static int share_kind(u32 kind)
{
	switch (kind) {
	case CKPT_FILE_REGULAR:
	case CKPT_FILE_DIR:
		return SHARE_OPEN;	/* named by dev and ino */
	case CKPT_FILE_EVENTFD:
	case CKPT_FILE_SIGNALFD:
	case CKPT_FILE_TIMERFD:
	case CKPT_FILE_EPOLL:
	case CKPT_FILE_MEMFD:	/* opened once from the tree's object */
	case CKPT_FILE_DELETED:
		return SHARE_MAKE;	/* named by a number of the tree's */
	}
	/* Pipes, STDIO: made once anyway; devices, FIFOs: reopened alike. */
	return SHARE_NONE;
}

/*
 * Open files several members hold (inherited by fork: one position, one
 * set of status flags): every descriptor of a regular file, a directory,
 * an eventfd, a signalfd, a timerfd, an epoll, a memfd or a deleted file
 * gets CKPT_FILE_TREE_SHARED, so that the restart opens or makes it once
 * for all; the entries of one that is made, or opened from the tree's
 * object (a memfd, a deleted file: the object is already the tree's,
 * check_objects()), get a number of the tree's to name it (make_id()).
 * Several such open files of one regular file or directory are numbered
 * in each entry's flags (CKPT_FILE_OPEN_NR()), as the images name them by
 * their file's identity. Every member holding an
 * epoll lists its items, each checked to watch that member's descriptor
 * (fds.c); the restart adds them once.
 */
/*
 * The number that names a made open file across the tree's images: in
 * @dev, but for a signalfd, whose @dev is its mask, in @ino.
 */
static void make_id(struct ckpt_img_file *f, u32 id)
{
	if (f->kind == CKPT_FILE_SIGNALFD)
		f->ino = id;
	else
		f->dev = id;
}

static int mark_shared_files(struct ckpt_cp_group *g)
{
	struct tf_desc *d, *shared;
	u32 n = 0, nr_shared = 0, i, j, k, id = 0, nr;
	int ret = 0;

	for (i = 0; i < g->nr; i++)
		n += g->m[i].scan.nr;
	d = kvmalloc_array(n ?: 1, sizeof(*d), GFP_KERNEL);
	shared = kvmalloc_array(n ?: 1, sizeof(*shared), GFP_KERNEL);
	if (!d || !shared) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0, n = 0; i < g->nr; i++) {
		const struct ckpt_fds *scan = &g->m[i].scan;

		for (k = 0; k < scan->nr; k++)
			if (share_kind(scan->files[k].kind) != SHARE_NONE)
				d[n++] = (struct tf_desc){
					.file = scan->seen[k], .member = i, .entry = k,
				};
	}
	sort(d, n, sizeof(*d), desc_by_file, NULL);
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && d[j].file == d[i].file; j++)
			;
		if (d[j - 1].member == d[i].member)
			continue;	/* one member's */
		if (share_kind(desc_entry(g, &d[i])->kind) == SHARE_MAKE)
			id++;
		for (k = i; k < j; k++) {
			struct ckpt_img_file *f =
				&g->m[d[k].member].scan.files[d[k].entry];

			f->flags |= CKPT_FILE_TREE_SHARED;
			if (share_kind(f->kind) == SHARE_MAKE)
				make_id(f, id);
			else
				shared[nr_shared++] = d[k];
		}
	}
	sort_r(shared, nr_shared, sizeof(*shared), desc_by_inode, NULL, g);
	for (i = 1, nr = 0; i < nr_shared; i++) {
		const struct ckpt_img_file *a = desc_entry(g, &shared[i - 1]);
		struct ckpt_cp_ctx *ctx = &g->m[shared[i].member];
		struct ckpt_img_file *b = &ctx->scan.files[shared[i].entry];

		if (a->dev != b->dev || a->ino != b->ino)
			nr = 0;		/* another file */
		else if (shared[i - 1].file != shared[i].file)
			nr++;		/* another open file of it */
		if (nr > CKPT_FILE_OPEN_NR_MAX) {
			g->failed = shared[i].member;
			ckpt_whyf(&ctx->why,
				  "pid %u fd %u: %s is open more than %u times, each open file held by several of the tree's processes",
				  ctx->a->pid, b->fd, b->path,
				  CKPT_FILE_OPEN_NR_MAX + 1);
			ret = -E2BIG;
			break;
		}
		b->flags |= nr << CKPT_FILE_OPEN_NR_SHIFT;
	}
out:
	kvfree(shared);
	kvfree(d);
	return ret;
}

static int check_objects(struct ckpt_cp_group *g)
{
	unsigned long *seen = NULL;
	struct tf_use *u;
	u32 nr, i, j, refs;
	int ret = 0;

	u = gather_uses(g, &nr);
	if (IS_ERR_OR_NULL(u))
		return PTR_ERR_OR_ZERO(u);
	/*
	 * Every reference to each open file is a member's, but a tmpfs
	 * file's: it has a name, anyone may hold it (its descriptors stay by
	 * path, as a process's alone do: ckpt_fileobjs_capture()).
	 */
	sort(u, nr, sizeof(*u), by_file, NULL);
	for (i = 0; i < nr && !ret; i = j) {
		for (j = i, refs = 0; j < nr && u[j].file == u[i].file; j++)
			refs += u[j].refs;
		if (g->m[u[i].member].scan.objs.img[u[i].obj].kind !=
		    CKPT_FILE_LOCAL && !ckpt_file_refs_are(u[i].file, refs))
			ret = obj_refused(g, &u[i]);
	}
	seen = bitmap_zalloc(g->nr, GFP_KERNEL);
	if (!ret && !seen)
		ret = -ENOMEM;
	sort(u, nr, sizeof(*u), by_key, NULL);
	for (i = 0; i < nr && !ret; i = j) {
		for (j = i; j < nr && u[j].key == u[i].key; j++)
			;
		ret = check_object(g, &u[i], j - i, seen);
	}
	bitmap_free(seen);
	kvfree(u);
	return ret;
}

int ckpt_tree_check_shared(struct ckpt_cp_group *g)
{
	return check_objects(g) ?: mark_shared_files(g);
}

int ckpt_tree_check_files(struct ckpt_cp_group *g,
			  const struct file *const root_stdio[3])
{
	struct tf_scan s = { .stdio = root_stdio };
	u32 i;
	int ret = 0;

	s.e = kvcalloc(TREE_MAX_PIPE_FILES, sizeof(*s.e), GFP_KERNEL);
	if (!s.e)
		return -ENOMEM;
	for (i = 0; i < g->nr && !s.full; i++) {
		struct task_struct *t = g->m[i].task;

		s.member = i;
		task_lock(t);
		if (t->files)
			iterate_fd(t->files, 0, note_pipe, &s);
		task_unlock(t);
	}
	if (s.full) {
		g->failed = s.member;
		ckpt_whyf(&g->m[s.member].why,
			  "pid %u: the tree holds more than %u pipe ends",
			  g->m[s.member].a->pid, TREE_MAX_PIPE_FILES);
		ret = -E2BIG;
	}
	if (!ret)
		ret = check_ends(g, &s);
	for (i = 0; i < s.nr; i++)
		fput(s.e[i].file);
	kvfree(s.e);
	return ret;
}
