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
 * Anonymous memory mapped MAP_SHARED and shared by fork between members
 * would come back as one copy per member, no longer shared: refused,
 * naming both, until the restart can share it again. (A memfd or deleted
 * file two members hold is refused by fileobj.c, as held elsewhere.)
 */

#include <linux/fdtable.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/sched/task.h>
#include <linux/slab.h>

#include "checkpoint.h"
#include "pipes.h"
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

	if (!ckpt_is_pipe(file) || file == s->stdio[0] ||
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

/* Every pipe end held, and held by members only. */
static int check_ends(struct ckpt_cp_group *g, const struct tf_scan *s)
{
	unsigned int readers, writers, have_r, have_w;
	u32 i;
	int ret;

	for (i = 0; i < s->nr; i++) {
		const struct tf_end *e = &s->e[i];
		struct ckpt_cp_ctx *ctx = &g->m[e->member];

		/* Ours is the one reference more. */
		if (file_count(e->file) != e->count + 1)
			goto outside;
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
		ckpt_whyf(&ctx->why,
			  "pid %u fd %u (pipe:[%lu]) has an end open in a process outside the tree",
			  ctx->a->pid, e->fd, file_inode(e->file)->i_ino);
		return -EOPNOTSUPP;
	}
	return 0;
}

/* At most this many MAP_SHARED anonymous mappings in a tree. */
#define TREE_MAX_SHARED_ANON	4096

struct tf_anon {
	const struct inode *inode;	/* compared only */
	u32 member;
	unsigned long start, end;
};

/* MAP_SHARED | MAP_ANONYMOUS: a shmem file of its own, named "dev/zero". */
static bool shared_anon(const struct vm_area_struct *vma)
{
	return vma->vm_file && (vma->vm_flags & VM_MAYSHARE) &&
	       !strcmp(vma->vm_file->f_path.dentry->d_name.name, "dev/zero");
}

/*
 * Member @i's shared anonymous mappings into @a (*@nr so far): -EEXIST
 * with *@other the entry another member maps too, -E2BIG when full.
 */
static int note_anon(struct ckpt_cp_ctx *ctx, u32 i, struct tf_anon *a,
		     u32 *nr, u32 *other, unsigned long *start)
{
	struct vm_area_struct *vma;
	int ret = 0;
	u32 j;

	mmap_read_lock(ctx->mm);
	{
		VMA_ITERATOR(vmi, ctx->mm, 0);

		for_each_vma(vmi, vma) {
			if (!shared_anon(vma))
				continue;
			for (j = 0; j < *nr; j++)
				if (a[j].inode == file_inode(vma->vm_file) &&
				    a[j].member != i)
					break;
			if (j < *nr) {
				*other = j;
				*start = vma->vm_start;
				ret = -EEXIST;
				break;
			}
			if (*nr == TREE_MAX_SHARED_ANON) {
				ret = -E2BIG;
				break;
			}
			a[(*nr)++] = (struct tf_anon){
				.inode = file_inode(vma->vm_file),
				.member = i,
				.start = vma->vm_start, .end = vma->vm_end,
			};
		}
	}
	mmap_read_unlock(ctx->mm);
	return ret;
}

static int check_shared_anon(struct ckpt_cp_group *g)
{
	unsigned long start = 0;
	struct tf_anon *a;
	u32 i, nr = 0, other = 0;
	int ret = 0;

	a = kvcalloc(TREE_MAX_SHARED_ANON, sizeof(*a), GFP_KERNEL);
	if (!a)
		return -ENOMEM;
	for (i = 0; !ret && i < g->nr; i++)
		ret = note_anon(&g->m[i], i, a, &nr, &other, &start);
	if (ret) {
		struct ckpt_cp_ctx *ctx = &g->m[--i];

		g->failed = i;
		if (ret == -EEXIST)
			ckpt_whyf(&ctx->why,
				  "pid %u maps anonymous memory at %lx shared with pid %u (at %lx-%lx, MAP_SHARED before a fork): not supported yet",
				  ctx->a->pid, start, g->m[a[other].member].a->pid,
				  a[other].start, a[other].end);
		else
			ckpt_whyf(&ctx->why,
				  "pid %u: the tree has more than %u shared anonymous mappings",
				  ctx->a->pid, TREE_MAX_SHARED_ANON);
		ret = -EOPNOTSUPP;
	}
	kvfree(a);
	return ret;
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
	if (!ret)
		ret = check_shared_anon(g);
	for (i = 0; i < s.nr; i++)
		fput(s.e[i].file);
	kvfree(s.e);
	return ret;
}
