// SPDX-License-Identifier: GPL-2.0
/*
 * Memory: the VMA table, the pages worth storing, and the mm's fields.
 *
 * Which pages to store comes from the target's /proc/PID/pagemap (present,
 * swapped, file-backed bits), opened by the rights check (access.c) and
 * read through the VFS: only populated pages are stored, and of a private file
 * mapping only the pages the process changed (now anonymous). Page content
 * is read with access_process_vm(), into kernel memory while the process is
 * frozen when it is to continue (see "Staging"). Shared file mappings keep their data in
 * the file; the vdso and vvar are never stored (vdso.c).
 *
 * Restart maps each VMA with vm_mmap() at its address and with its final
 * protection, then reads the stored pages of writable mappings from the
 * image straight into place (current is the process being restored), and
 * writes the others with access_process_vm() and FOLL_FORCE, the way a
 * debugger writes into read-only text.
 */

#include <linux/auxvec.h>
#include <linux/fs.h>
#include <linux/file.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/moduleparam.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/userfaultfd_k.h>
#include <linux/workqueue.h>
#include <asm/vdso.h>

#include "fileobj.h"
#include "image.h"
#include "layout.h"
#include "locks.h"
#include "mm.h"
#include "vdso.h"
#include "ipc.h"
#include "why.h"

#define PM_PRESENT	BIT_ULL(63)
#define PM_SWAP		BIT_ULL(62)
#define PM_FILE		BIT_ULL(61)
#define PM_CHUNK	512	/* pagemap entries read at a time */

static u32 vma_prot(unsigned long vm_flags)
{
	return (vm_flags & VM_READ ? PROT_READ : 0) |
	       (vm_flags & VM_WRITE ? PROT_WRITE : 0) |
	       (vm_flags & VM_EXEC ? PROT_EXEC : 0);
}

static bool stores_pages(const struct ckpt_img_vma *v)
{
	if (v->flags & (CKPT_VMA_VDSO | CKPT_VMA_VVAR))
		return false;
	return !((v->flags & CKPT_VMA_SHARED) &&
		 (v->flags & (CKPT_VMA_FILE | CKPT_VMA_SYSV)));
}

/* Whether pagemap entry @pm is a page this mapping must store. */
static bool page_wanted(const struct ckpt_img_vma *v, u64 pm)
{
	if (pm & PM_SWAP)
		return true;
	if (!(pm & PM_PRESENT))
		return false;
	/* Of a private file mapping, only the pages written to (anonymous). */
	if ((v->flags & CKPT_VMA_FILE) && !(v->flags & CKPT_VMA_SHARED))
		return !(pm & PM_FILE);
	return true;
}

static int describe_vma(struct vm_area_struct *vma, struct mm_struct *mm,
			struct ckpt_img_vma *v, char *buf,
			struct ckpt_fileobjs *objs, struct ckpt_why *why)
{
	u64 vdso, vdso_size, vvar, vvar_size;
	struct file *file = vma->vm_file;
	unsigned long fl = vma->vm_flags;

	memset(v, 0, sizeof(*v));
	v->start = vma->vm_start;
	v->end = vma->vm_end;
	v->pgoff = vma->vm_pgoff;
	v->prot = vma_prot(fl);

	ckpt_vdso_ranges(mm, &vdso, &vdso_size, &vvar, &vvar_size);
	if (vdso_size && v->start >= vdso && v->end <= vdso + vdso_size) {
		v->flags = CKPT_VMA_VDSO;
		strscpy(v->path, "[vdso]", sizeof(v->path));
		return 0;
	}
	if (vvar_size && v->start >= vvar && v->end <= vvar + vvar_size) {
		v->flags = CKPT_VMA_VVAR;
		strscpy(v->path, "[vvar]", sizeof(v->path));
		return 0;
	}

	if (fl & VM_MAYSHARE)
		v->flags |= CKPT_VMA_SHARED;
	if (fl & VM_GROWSDOWN)
		v->flags |= CKPT_VMA_GROWSDOWN;
	if (fl & VM_DONTCOPY)
		v->flags |= CKPT_VMA_DONTFORK;
	if (fl & VM_DONTDUMP)
		v->flags |= CKPT_VMA_DONTDUMP;
	if (fl & VM_NORESERVE)
		v->flags |= CKPT_VMA_NORESERVE;
	if (v->start <= mm->brk && v->end >= mm->start_brk && !file)
		v->flags |= CKPT_VMA_HEAP;
	if (v->start <= mm->start_stack && v->end >= mm->start_stack)
		v->flags |= CKPT_VMA_STACK;

	if (fl & (VM_IO | VM_PFNMAP | VM_MIXEDMAP | VM_HUGETLB)) {
		ckpt_whyf(why,
			  "mapping %lx-%lx is a device or hugetlb mapping, which cannot be restored",
			  vma->vm_start, vma->vm_end);
		return -EOPNOTSUPP;
	}
	if (fl & __VM_UFFD_FLAGS) {
		ckpt_whyf(why,
			  "mapping %lx-%lx is registered with a userfaultfd (a lazy restart still bringing its pages in, or the program's own), which cannot be restored",
			  vma->vm_start, vma->vm_end);
		return -EBUSY;
	}

	if (file) {
		struct inode *inode = d_real_inode(file->f_path.dentry);
		char *p = ckpt_file_path(file, buf, PATH_MAX);
		size_t len;

		if (IS_ERR(p))
			return PTR_ERR(p);
		len = strlen(p);
		if (ckpt_ipc_shm_file(file))
			return ckpt_ipc_vma(objs->ipc, vma, v, why);
		if ((fl & VM_MAYSHARE) && !strcmp(p, "/dev/zero (deleted)") &&
		    objs->tree) {
			/* A tree shares it by its file: an object. */
			return ckpt_fileobj_vma(objs, vma, p, v, why);
		}
		if ((fl & VM_MAYSHARE) && !strcmp(p, "/dev/zero (deleted)")) {
			/* MAP_SHARED | MAP_ANONYMOUS: its content is stored. */
			v->pgoff = 0;
			return 0;
		}
		if (len > 10 && !strcmp(p + len - 10, " (deleted)")) {
			/* A memfd or deleted file: the image carries it. */
			return ckpt_fileobj_vma(objs, vma, p, v, why);
		}
		if (objs->local && (fl & VM_MAYSHARE) &&
		    ckpt_fileobj_local(objs, file, p)) {
			/* A job's tmpfs file: the image carries it too. */
			return ckpt_fileobj_vma(objs, vma, p, v, why);
		}
		if (len >= sizeof(v->path)) {
			ckpt_whyf(why,
				  "mapping %lx-%lx: file path longer than %zu bytes",
				  vma->vm_start, vma->vm_end, sizeof(v->path) - 1);
			return -ENAMETOOLONG;
		}
		strscpy(v->path, p, sizeof(v->path));
		v->flags |= CKPT_VMA_FILE;
		if ((fl & VM_MAYSHARE) && (fl & VM_MAYWRITE))
			v->flags |= CKPT_VMA_MAYWRITE;
		v->dev = inode->i_sb->s_dev;
		v->ino = inode->i_ino;
		v->size = i_size_read(inode);
	}
	return 0;
}

/*
 * pagemap has no read_iter, so kernel_read() refuses it; its read() wants a
 * user buffer, and the caller's address space lends one (c->ubuf).
 */
static int read_pagemap(struct ckpt_mm_capture *c, u64 addr, u64 *pm,
			unsigned int n)
{
	loff_t pos = (addr >> PAGE_SHIFT) * sizeof(u64);
	size_t want = n * sizeof(u64);
	ssize_t ret;

	ret = c->pagemap->f_op->read(c->pagemap, (char __user *)c->ubuf, want,
				     &pos);
	if (ret < 0)
		return ret;
	if (ret != want)
		return -EIO;
	return copy_from_user(pm, (void __user *)c->ubuf, want) ? -EFAULT : 0;
}

/*
 * Walks @v's pagemap a chunk at a time, calling @fn with each chunk's
 * first address and entries.
 */
static int walk_pagemap(struct ckpt_mm_capture *c, const struct ckpt_img_vma *v,
			u64 *pm, int (*fn)(void *arg, u64 addr, const u64 *pm,
					   unsigned int n),
			void *arg)
{
	u64 addr;
	int ret = 0;

	for (addr = v->start; addr < v->end && !ret;) {
		unsigned int n = min_t(u64, PM_CHUNK,
				       (v->end - addr) >> PAGE_SHIFT);

		ret = read_pagemap(c, addr, pm, n);
		if (!ret)
			ret = fn(arg, addr, pm, n);
		addr += (u64)n << PAGE_SHIFT;
		cond_resched();
		if (!ret && fatal_signal_pending(current))
			ret = -EINTR;
	}
	return ret;
}

static int count_chunk(void *arg, u64 addr, const u64 *pm, unsigned int n)
{
	struct ckpt_img_vma *v = arg;
	unsigned int j;

	for (j = 0; j < n; j++)
		if (page_wanted(v, pm[j]))
			v->nr_pages++;
	return 0;
}

/* Counts the pages each VMA will store (they are stable: threads parked). */
static int count_pages(struct ckpt_mm_capture *c)
{
	u64 *pm;
	u32 i;
	int ret = 0;

	pm = kmalloc_array(PM_CHUNK, sizeof(u64), GFP_KERNEL_ACCOUNT);
	if (!pm)
		return -ENOMEM;
	c->nr_pages = 0;
	for (i = 0; i < c->nr_vmas && !ret; i++) {
		struct ckpt_img_vma *v = &c->vmas[i];

		if (!stores_pages(v))
			continue;
		ret = walk_pagemap(c, v, pm, count_chunk, v);
		c->nr_pages += v->nr_pages;
	}
	kfree(pm);
	return ret;
}

int ckpt_mm_capture(struct task_struct *task, struct mm_struct *mm,
		    struct file *pagemap, struct ckpt_mm_capture *c,
		    struct ckpt_img_process *proc, struct ckpt_fileobjs *objs,
		    struct ckpt_why *why)
{
	struct vm_area_struct *vma;
	u32 n = 0;
	int ret = 0;

	memset(c, 0, sizeof(*c));
	if (!ckpt_layout_ok(CKPT_LAYOUT_VDSO)) {
		ckpt_whyf(why, "this engine cannot find the vdso on this kernel (%s)",
			  ckpt_layout_why(CKPT_LAYOUT_VDSO));
		return -EOPNOTSUPP;
	}
	c->path_buf = kmalloc(PATH_MAX, GFP_KERNEL_ACCOUNT);
	if (!c->path_buf)
		return -ENOMEM;

	mmap_read_lock(mm);
	c->vmas = kvcalloc(mm->map_count, sizeof(*c->vmas), GFP_KERNEL_ACCOUNT);
	if (!c->vmas) {
		ret = -ENOMEM;
		goto out_unlock;
	}
	{
		VMA_ITERATOR(vmi, mm, 0);

		for_each_vma(vmi, vma) {
			if (n == mm->map_count) {
				ret = -EAGAIN;
				break;
			}
			ret = describe_vma(vma, mm, &c->vmas[n], c->path_buf,
					   objs, why);
			if (ret)
				break;
			n++;
		}
	}
	c->nr_vmas = n;

	proc->start_code = mm->start_code;
	proc->end_code = mm->end_code;
	proc->start_data = mm->start_data;
	proc->end_data = mm->end_data;
	proc->start_brk = mm->start_brk;
	proc->brk = mm->brk;
	proc->start_stack = mm->start_stack;
	proc->arg_start = mm->arg_start;
	proc->arg_end = mm->arg_end;
	proc->env_start = mm->env_start;
	proc->env_end = mm->env_end;
	BUILD_BUG_ON(ARRAY_SIZE(mm->saved_auxv) > CKPT_IMG_AUXV_WORDS);
	memcpy(proc->auxv, mm->saved_auxv, sizeof(mm->saved_auxv));
	ckpt_vdso_ranges(mm, &proc->vdso, &proc->vdso_size, &proc->vvar,
		    &proc->vvar_size);
out_unlock:
	mmap_read_unlock(mm);
	if (ret)
		return ret;
	if (!n || n > CKPT_IMG_MAX_VMAS) {
		why->msg = "mapping count out of bounds";
		return -E2BIG;
	}
	if (!proc->vdso_size) {
		why->msg = "the process has no vdso";
		return -EOPNOTSUPP;
	}

	/* The vdso's text and entry points, for a restart on another kernel. */
	c->vdso = ckpt_vdso_capture(task, mm, proc, why);
	if (IS_ERR(c->vdso)) {
		ret = PTR_ERR(c->vdso);
		c->vdso = NULL;
		return ret;
	}

	c->pagemap = pagemap;
	if (!c->pagemap->f_op->read) {
		why->msg = "this kernel's pagemap cannot be read";
		return -EOPNOTSUPP;
	}
	c->ubuf = vm_mmap(NULL, 0, PM_CHUNK * sizeof(u64), PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, 0);
	if (IS_ERR_VALUE(c->ubuf)) {
		ret = (int)c->ubuf;
		c->ubuf = 0;
		return ret;
	}
	return count_pages(c);
}

static int write_sect(struct ckpt_writer *w, u32 vma, u64 addr,
		      unsigned int n, const void *data)
{
	struct ckpt_img_pages hdr = {
		.addr = addr,
		.nr_pages = n,
		.vma = vma,
	};

	return ckpt_write_sect(w, CKPT_SECT_PAGES, &hdr, sizeof(hdr), data,
			       (size_t)n << PAGE_SHIFT);
}

/*
 * Writes a run of pages already copied out of the process. Of anonymous
 * mappings, pages that hold only zeros are left out: restored unpopulated,
 * they read the same (this is what huge pages, populated around a few
 * touched bytes, cost otherwise). A file mapping's changed page stays, zero
 * or not: the file underneath need not be zero.
 */
static int emit_run(struct ckpt_writer *w, const struct ckpt_img_vma *v,
		    u32 vma, u64 addr, unsigned int n, const void *data,
		    u64 *stored)
{
	unsigned int i, first = 0;
	int ret = 0;

	if (v->flags & CKPT_VMA_FILE) {
		*stored += n;
		return write_sect(w, vma, addr, n, data);
	}
	for (i = 0; i <= n && !ret; i++) {
		if (i < n && memchr_inv(data + ((size_t)i << PAGE_SHIFT), 0,
					PAGE_SIZE))
			continue;
		if (i > first) {
			ret = write_sect(w, vma, addr + ((u64)first << PAGE_SHIFT),
					 i - first, data + ((size_t)first << PAGE_SHIFT));
			*stored += i - first;
		}
		first = i + 1;
	}
	return ret;
}

/*
 * Staging: a checkpoint that lets the process continue copies its pages
 * into kernel memory while it is frozen and writes them out after the thaw,
 * so that the process waits for a memory copy, not for the image's file
 * system. The memory is taken before the freeze, sized by the process's
 * resident anonymous and shared memory, since taking it (and zeroing it, as
 * Debian's kernels do on every allocation) costs more than the copy. The
 * copies may use at most half of the memory available when the checkpoint
 * starts (or stage_max_mb, if set); past that, the runs staged so far are
 * written and the rest goes straight to the image, still frozen.
 */
static int stage_max_mb = -1;
module_param(stage_max_mb, int, 0644);
MODULE_PARM_DESC(stage_max_mb,
		 "memory a checkpoint may stage while frozen, MiB (-1: half of what is available, 0: none)");

#define STAGE_CHUNK	((size_t)CKPT_IMG_MAX_RUN_PAGES << PAGE_SHIFT)
#define STAGE_GFP	(GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL | __GFP_NOWARN)

struct ckpt_staged {
	void *data;
	u64 addr;
	u32 vma;
	unsigned int n;
};

/* Grows @arr (of @size-byte elements) to hold twice as many, or 64. */
static int grow(void **arr, u32 *max, size_t size, u32 used)
{
	u32 more = *max ? 2 * *max : 64;
	void *p = kvmalloc_array(more, size, STAGE_GFP);

	if (!p)
		return -ENOMEM;
	if (used)
		memcpy(p, *arr, used * size);
	kvfree(*arr);
	*arr = p;
	*max = more;
	return 0;
}

static int add_chunk(struct ckpt_stage *st)
{
	void *chunk;

	if ((u64)(st->nr_chunks + 1) * STAGE_CHUNK > st->budget)
		return -ENOSPC;
	if (st->nr_chunks == st->max_chunks &&
	    grow((void **)&st->chunks, &st->max_chunks, sizeof(void *),
		 st->nr_chunks))
		return -ENOMEM;
	chunk = kvmalloc(STAGE_CHUNK, STAGE_GFP);
	if (!chunk)
		return -ENOMEM;
	st->chunks[st->nr_chunks++] = chunk;
	return 0;
}

int ckpt_stage_prepare(struct ckpt_stage *st, struct mm_struct *mm)
{
	int max = READ_ONCE(stage_max_mb);
	u64 want;

	memset(st, 0, sizeof(*st));
	st->budget = ((u64)si_mem_available() << PAGE_SHIFT) / 2;
	if (max >= 0)
		st->budget = min_t(u64, st->budget, (u64)max << 20);
	want = (u64)(get_mm_counter(mm, MM_ANONPAGES) +
		     get_mm_counter(mm, MM_SHMEMPAGES)) << PAGE_SHIFT;
	want = min(want, st->budget);
	while ((u64)st->nr_chunks * STAGE_CHUNK < want) {
		if (add_chunk(st))
			break;	/* whatever is short is taken when needed */
		cond_resched();
		if (fatal_signal_pending(current))
			return -EINTR;
	}
	return 0;
}

void ckpt_stage_free(struct ckpt_stage *st)
{
	u32 i;

	for (i = 0; i < st->nr_chunks; i++)
		kvfree(st->chunks[i]);
	kvfree(st->chunks);
	kvfree(st->runs);
	memset(st, 0, sizeof(*st));
}

/* Room for a run of @len bytes (at most a chunk), or NULL. */
static void *stage_alloc(struct ckpt_stage *st, size_t len)
{
	void *p;

	if (st->nr_runs == st->max_runs &&
	    grow((void **)&st->runs, &st->max_runs, sizeof(*st->runs),
		 st->nr_runs))
		return NULL;
	if (st->cur_off + len > STAGE_CHUNK) {
		st->cur++;
		st->cur_off = 0;
	}
	if (st->cur == st->nr_chunks && add_chunk(st))
		return NULL;
	p = st->chunks[st->cur] + st->cur_off;
	st->cur_off += len;
	return p;
}

/* Writes what was staged, in order; the memory stays until freed. */
int ckpt_mm_write_staged(struct ckpt_mm_capture *c, struct ckpt_stage *st,
			 struct ckpt_writer *w)
{
	u32 i;
	int ret = 0;

	for (i = 0; i < st->nr_runs && !ret; i++) {
		struct ckpt_staged *run = &st->runs[i];

		ret = emit_run(w, &c->vmas[run->vma], run->vma, run->addr,
			       run->n, run->data, &c->nr_stored);
		cond_resched();
		if (!ret && fatal_signal_pending(current))
			ret = -EINTR;
	}
	st->nr_runs = 0;
	return ret;
}

/* A run of wanted pages being gathered across pagemap chunks. */
struct run {
	struct task_struct *task;
	struct ckpt_mm_capture *c;
	struct ckpt_stage *st;	/* NULL: not staging (any more) */
	struct ckpt_writer *w;
	const struct ckpt_img_vma *v;
	u32 vma;
	u64 start;
	unsigned int n;
	void *data;
	u64 written;
};

static int flush_run(struct run *r)
{
	size_t len = (size_t)r->n << PAGE_SHIFT;
	void *buf = NULL;
	int ret = 0;

	if (!r->n)
		return 0;
	if (r->st) {
		buf = stage_alloc(r->st, len);
		if (!buf) {
			/* Out of budget: what is staged goes first, then the rest. */
			ret = ckpt_mm_write_staged(r->c, r->st, r->w);
			r->st = NULL;
		}
	}
	if (!ret && access_process_vm(r->task, r->start, buf ?: r->data, len,
				      FOLL_FORCE) != len)
		ret = -EIO;
	if (!ret && buf)
		r->st->runs[r->st->nr_runs++] = (struct ckpt_staged) {
			.data = buf, .addr = r->start, .vma = r->vma, .n = r->n,
		};
	else if (!ret)
		ret = emit_run(r->w, r->v, r->vma, r->start, r->n, r->data,
			       &r->c->nr_stored);
	r->n = 0;
	return ret;
}

static int write_chunk(void *arg, u64 addr, const u64 *pm, unsigned int n)
{
	struct run *r = arg;
	unsigned int j;
	int ret = 0;

	for (j = 0; j < n && !ret; j++) {
		bool want = page_wanted(r->v, pm[j]);

		if (want) {
			if (!r->n)
				r->start = addr + ((u64)j << PAGE_SHIFT);
			r->n++;
			r->written++;
		}
		if (r->n && (!want || r->n == CKPT_IMG_MAX_RUN_PAGES))
			ret = flush_run(r);
	}
	return ret;
}

int ckpt_mm_write_pages(struct task_struct *task, struct ckpt_mm_capture *c,
			struct ckpt_writer *w, struct ckpt_stage *st)
{
	struct run r = { .task = task, .c = c, .w = w, .st = st };
	u64 *pm;
	u32 i;
	int ret = 0;

	pm = kmalloc_array(PM_CHUNK, sizeof(u64), GFP_KERNEL_ACCOUNT);
	r.data = kvmalloc((size_t)CKPT_IMG_MAX_RUN_PAGES << PAGE_SHIFT,
			  GFP_KERNEL_ACCOUNT);
	if (!pm || !r.data) {
		ret = -ENOMEM;
		goto out;
	}

	for (i = 0; i < c->nr_vmas && !ret; i++) {
		r.v = &c->vmas[i];
		r.vma = i;
		if (!stores_pages(r.v) || !r.v->nr_pages)
			continue;
		ret = walk_pagemap(c, r.v, pm, write_chunk, &r);
		if (!ret)
			ret = flush_run(&r);
	}
	/* Memory that changed under a frozen process means a bug, or sharing. */
	if (!ret && r.written != c->nr_pages)
		ret = -EAGAIN;
out:
	kvfree(r.data);
	kfree(pm);
	return ret;
}

void ckpt_mm_capture_free(struct ckpt_mm_capture *c)
{
	if (c->ubuf)
		vm_munmap(c->ubuf, PM_CHUNK * sizeof(u64));
	kvfree(c->vmas);
	kvfree(c->vdso);
	kfree(c->path_buf);
	memset(c, 0, sizeof(*c));
}

/*
 * The restarter's attachments of System V segments (ckpt_ipc_shm_file()),
 * made for this restart in the tree's new IPC namespace: mapped anew
 * where the image has the segment, and only then detached, so that a
 * segment already removed never has no attachment in between.
 */
struct sysv_att {
	unsigned long start, end;
	u32 id;
	struct file *file;	/* referenced */
};

struct sysv_atts {
	struct sysv_att *a;
	u32 nr;
};

static bool kept(const struct sysv_atts *sa, unsigned long start)
{
	u32 i;

	for (i = 0; i < sa->nr; i++)
		if (sa->a[i].start == start)
			return true;
	return false;
}

/* The vmi of each walk is its own: a VMA_ITERATOR is one walk. */
static u32 count_sysv(struct mm_struct *mm)
{
	struct vm_area_struct *vma;
	u32 n = 0;

	{
		VMA_ITERATOR(vmi, mm, 0);

		for_each_vma(vmi, vma)
			n += ckpt_ipc_shm_file(vma->vm_file);
	}
	return n;
}

static int find_sysv(struct mm_struct *mm, struct sysv_atts *sa)
{
	struct vm_area_struct *vma;
	u32 n;

	mmap_read_lock(mm);
	n = count_sysv(mm);
	sa->a = n ? kvcalloc(n, sizeof(*sa->a), GFP_KERNEL) : NULL;
	if (n && !sa->a) {
		mmap_read_unlock(mm);
		return -ENOMEM;
	}
	if (n) {
		VMA_ITERATOR(vmi, mm, 0);

		for_each_vma(vmi, vma) {
			if (!ckpt_ipc_shm_file(vma->vm_file) || sa->nr == n)
				continue;
			sa->a[sa->nr++] = (struct sysv_att) {
				.start = vma->vm_start, .end = vma->vm_end,
				.id = file_inode(vma->vm_file)->i_ino,
				.file = get_file(vma->vm_file),
			};
		}
	}
	mmap_read_unlock(mm);
	return 0;
}

static void drop_sysv(struct sysv_atts *sa, bool unmap)
{
	u32 i;

	for (i = 0; i < sa->nr; i++) {
		if (unmap)
			vm_munmap(sa->a[i].start, sa->a[i].end - sa->a[i].start);
		fput(sa->a[i].file);
	}
	kvfree(sa->a);
	memset(sa, 0, sizeof(*sa));
}

static struct file *sysv_file(const struct sysv_atts *sa,
			      const struct ckpt_img_vma *v, struct ckpt_why *why)
{
	u32 i;

	for (i = 0; i < sa->nr; i++)
		if (sa->a[i].id == v->ino)
			return get_file(sa->a[i].file);
	ckpt_whyf(why,
		  "%llx-%llx maps System V segment %llu, which the restarter did not attach",
		  v->start, v->end, v->ino);
	return ERR_PTR(-ENOENT);
}

/* Unmaps everything of current's but the vdso, vvar and @sa's. */
static int unmap_all(struct mm_struct *mm, const struct sysv_atts *sa)
{
	u64 vdso, vdso_size, vvar, vvar_size;
	struct vm_area_struct *vma;
	struct { unsigned long start, end; } *r;
	unsigned int n = 0, i;
	int ret = 0;

	mmap_read_lock(mm);
	ckpt_vdso_ranges(mm, &vdso, &vdso_size, &vvar, &vvar_size);
	r = kvcalloc(mm->map_count, sizeof(*r), GFP_KERNEL_ACCOUNT);
	if (r) {
		VMA_ITERATOR(vmi, mm, 0);

		for_each_vma(vmi, vma) {
			if (vma->vm_start >= vvar && vma->vm_end <= vdso + vdso_size)
				continue;
			if (kept(sa, vma->vm_start))
				continue;
			if (n == mm->map_count)
				break;
			r[n].start = vma->vm_start;
			r[n].end = vma->vm_end;
			n++;
		}
	}
	mmap_read_unlock(mm);
	if (!r)
		return -ENOMEM;
	for (i = 0; i < n && !ret; i++)
		ret = vm_munmap(r[i].start, r[i].end - r[i].start);
	kvfree(r);
	return ret;
}

/*
 * Opens the file a mapping was of, from @root (the restarter's root: the
 * image names files as the checkpointer's root saw them), and checks it is
 * still that file (on an overlay, mappings hold the real file underneath,
 * so compare real inodes).
 */
/*
 * Whether @inode is the file @v mapped. Device numbers hold within one boot
 * only; elsewhere the size of a file mapped read-only (text, libraries)
 * stands in for them.
 */
static bool same_mapped_file(struct inode *inode, const struct ckpt_img_vma *v,
			     bool same_boot)
{
	if (inode->i_ino != v->ino)
		return false;
	if (same_boot)
		return inode->i_sb->s_dev == v->dev;
	return (v->flags & CKPT_VMA_MAYWRITE) ||
	       (u64)i_size_read(inode) == v->size;
}

static struct file *open_mapped_file(const struct ckpt_img_vma *v,
				     const struct path *root,
				     const struct ckpt_objfiles *of,
				     struct ckpt_why *why)
{
	struct file *file, *own;
	struct inode *inode;

	if (v->flags & CKPT_VMA_FILEOBJ) {
		/* Made by the restarter (memfd, unlinked file): no identity. */
		file = ckpt_fileobj_open(of, v, why);
		if (IS_ERR(file) || !(v->flags & CKPT_VMA_MAYWRITE) ||
		    !(v->flags & (CKPT_VMA_FLOCK_READ | CKPT_VMA_FLOCK_WRITE)))
			return file;
		/*
		 * Locked: an open file of its own, as it had, not the
		 * restarter's, which other mappings may share (one opened
		 * read-only is the mapping's own already).
		 */
		own = dentry_open(&file->f_path, file->f_flags &
				  (O_ACCMODE | O_LARGEFILE),
				  of->cred ?: current_cred());
		fput(file);
		if (IS_ERR(own))
			ckpt_whyf(why, "cannot open %s (mapped at %llx) again: error %ld",
				  v->path, v->start, PTR_ERR(own));
		return own;
	}

	file = ckpt_fileobj_open_path(of, root, v, why);
	if (IS_ERR(file))
		return file;
	inode = d_real_inode(file->f_path.dentry);
	if (!same_mapped_file(inode, v, of->same_boot)) {
		ckpt_whyf(why,
			  "%s (mapped at %llx) is not the file it was at the checkpoint",
			  v->path, v->start);
		fput(file);
		return ERR_PTR(-ESTALE);
	}
	return file;
}

/*
 * The lowest address prctl(PR_SET_MM_MAP) accepts is mmap_min_addr, which
 * is not exported: the engine holds the image to the floor the kernel was
 * built with (64 KiB on Debian), never below one page.
 */
#define MM_MIN_ADDR	max_t(unsigned long, CONFIG_DEFAULT_MMAP_MIN_ADDR, PAGE_SIZE)

int ckpt_mm_check_process(const struct ckpt_img_process *p, const char **why)
{
	const u64 range[] = {
		p->start_code, p->end_code, p->start_data, p->end_data,
		p->start_brk, p->brk, p->start_stack, p->arg_start,
		p->arg_end, p->env_start, p->env_end,
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(range); i++) {
		if (range[i] >= TASK_SIZE) {
			*why = "process address above this process's address space (TASK_SIZE)";
			return -EINVAL;
		}
		if (range[i] < MM_MIN_ADDR) {
			*why = "process address below mmap_min_addr";
			return -EINVAL;
		}
	}
	if (check_data_rlimit(rlimit(RLIMIT_DATA), p->brk, p->start_brk,
			      p->end_data, p->start_data)) {
		*why = "heap and data of the image exceed RLIMIT_DATA";
		return -ENOSPC;
	}
	/* image_check.c found the AT_NULL entry: it must be in the mm's copy. */
	BUILD_BUG_ON(ARRAY_SIZE(current->mm->saved_auxv) % 2);
	for (i = 0; i < ARRAY_SIZE(current->mm->saved_auxv); i += 2)
		if (!p->auxv[i])
			return 0;
	*why = "auxv longer than this kernel keeps (no AT_NULL entry within mm->saved_auxv)";
	return -E2BIG;
}

int ckpt_mm_check_files(const struct ckpt_img_vma *vmas, u32 nr_vmas,
			const struct path *root, struct ckpt_objfiles *of,
			struct ckpt_why *why)
{
	unsigned int tries = CKPT_LOCK_TRIES;
	struct file *file;
	int ret;
	u32 i;

	for (i = 0; i < nr_vmas; i++) {
		if (!(vmas[i].flags & CKPT_VMA_FILE))
			continue;
		file = open_mapped_file(&vmas[i], root, of, why);
		if (IS_ERR(file))
			return PTR_ERR(file);
		if (!(vmas[i].flags & (CKPT_VMA_FLOCK_READ |
				       CKPT_VMA_FLOCK_WRITE))) {
			fput(file);
			continue;
		}
		/* Held from now on: ckpt_mm_restore() maps this file. */
		ret = ckpt_locks_take_mapped(file, &vmas[i], &tries, why);
		if (ret || of->nr_flocked == CKPT_IMG_MAX_FLOCK_MAPS) {
			fput(file);
			return ret ?: -E2BIG;
		}
		of->flocked_at[of->nr_flocked] = vmas[i].start;
		of->flocked[of->nr_flocked++] = file;
	}
	return 0;
}

/* The file ckpt_mm_check_files() locked for @v, referenced. */
static struct file *flocked_file(const struct ckpt_objfiles *of,
				 const struct ckpt_img_vma *v,
				 struct ckpt_why *why)
{
	u32 i;

	for (i = 0; i < of->nr_flocked; i++)
		if (of->flocked_at[i] == v->start)
			return get_file(of->flocked[i]);
	ckpt_whyf(why, "%s (mapped at %llx): its flock() lock was not taken",
		  v->path, v->start);
	return ERR_PTR(-EINVAL);
}

static int map_vma(const struct ckpt_img_vma *v, const struct path *root,
		   const struct ckpt_objfiles *of, const struct sysv_atts *sa,
		   struct ckpt_why *why)
{
	unsigned long flags = MAP_FIXED_NOREPLACE, addr, extra = 0;
	struct file *file = NULL;
	struct mm_struct *mm = current->mm;
	struct vm_area_struct *vma;
	bool alone;

	flags |= v->flags & CKPT_VMA_SHARED ? MAP_SHARED : MAP_PRIVATE;
	if (v->flags & CKPT_VMA_GROWSDOWN)
		flags |= MAP_GROWSDOWN;
	if (v->flags & CKPT_VMA_NORESERVE)
		flags |= MAP_NORESERVE;
	if (v->flags & (CKPT_VMA_FILE | CKPT_VMA_SYSV)) {
		if (v->flags & CKPT_VMA_SYSV)
			file = sysv_file(sa, v, why);
		else if (v->flags & (CKPT_VMA_FLOCK_READ | CKPT_VMA_FLOCK_WRITE))
			file = flocked_file(of, v, why);
		else
			file = open_mapped_file(v, root, of, why);
		if (IS_ERR(file))
			return PTR_ERR(file);
	} else {
		flags |= MAP_ANONYMOUS;
	}

	addr = vm_mmap(file, v->start, v->end - v->start, v->prot, flags,
		       file ? v->pgoff << PAGE_SHIFT : 0);
	if (IS_ERR_VALUE(addr) || addr != v->start) {
		if (file)
			fput(file);
		ckpt_whyf(why, "cannot map %llx-%llx %s: error %ld",
			  v->start, v->end, v->path,
			  IS_ERR_VALUE(addr) ? (long)addr : -EEXIST);
		return IS_ERR_VALUE(addr) ? (int)addr : -EEXIST;
	}
	if (file)
		fput(file);	/* the mapping holds it, and any lock on it */

	if (v->flags & CKPT_VMA_DONTFORK)
		extra |= VM_DONTCOPY;
	if (v->flags & CKPT_VMA_DONTDUMP)
		extra |= VM_DONTDUMP;
	if (!extra)
		return 0;
	mmap_write_lock(mm);
	vma = find_vma(mm, v->start);
	alone = vma && vma->vm_start == v->start && vma->vm_end == v->end;
	if (alone)
		ckpt_vm_flags_set(vma, extra);
	mmap_write_unlock(mm);
	if (alone)
		return 0;
	/* Merged with a neighbour after all: the flags would spread. */
	ckpt_whyf(why, "cannot set the madvise flags of %llx-%llx %s",
		  v->start, v->end, v->path);
	return -EINVAL;
}

/*
 * Restart fills writable mappings in parallel: the main thread walks the
 * PAGES sections, placing those of read-only mappings itself and collecting
 * the others, a batch at a time, which it and up to FILL_WORKERS kernel
 * workers (each borrowing the process's mm) then read into place and
 * verify. Filling memory is page faults, zeroing and copying: work that
 * scales with CPUs.
 */
#define FILL_WORKERS	7
#define FILL_BATCH	1024

static int restart_threads = -1;
module_param(restart_threads, int, 0644);
MODULE_PARM_DESC(restart_threads,
		 "threads that fill a restarted process's memory (-1: one per CPU, up to 8)");

struct fill_item {
	loff_t pos;
	struct ckpt_img_pages p;
	u32 csum;
};

struct fill;

struct fill_worker {
	struct work_struct work;
	struct fill *f;
	struct page **pages;
};

/*
 * Shared by the restarter and its workers, and freed by whichever lets go
 * last: a restarter killed while it waits leaves the workers to finish the
 * piece they are reading (from an image on a stalled file system, maybe
 * much later) with everything they use still theirs.
 */
struct fill {
	refcount_t ref;		/* the restarter's, and one per queued worker */
	struct file *file;	/* the image, held */
	struct ckpt_image_map map;
	struct mm_struct *mm;	/* held (mmgrab); workers mmget() it to use it */
	struct fill_item *items;
	u32 nr;
	atomic_t next;
	atomic_t busy;		/* workers still on this batch */
	wait_queue_head_t idle;	/* woken when busy drops to 0 */
	spinlock_t lock;
	int err;
	const char *why;
	struct fill_item bad;
	unsigned int nr_workers;
	struct fill_worker w[FILL_WORKERS];
};

/* Workers run on the engine's own queue, which module unload drains. */
static struct workqueue_struct *fill_wq;

int ckpt_mm_init(void)
{
	fill_wq = alloc_workqueue("ckpt_fill", WQ_UNBOUND, 0);
	return fill_wq ? 0 : -ENOMEM;
}

void ckpt_mm_uninit(void)
{
	destroy_workqueue(fill_wq);
}

static int fill_item(struct fill *f, const struct fill_item *it,
		     struct page **pages, const char **why)
{
	/* Sections are 8-byte aligned from where the image starts. */
	if (f->map.base && !(it->pos & 7))
		return ckpt_fill_mapped(&f->map, it->pos, &it->p, it->csum,
					why);
	return ckpt_fill_direct(f->file, it->pos, &it->p, it->csum, pages,
				why);
}

/*
 * Each thread takes FILL_SPAN items at a time, about 16 MiB of neighbouring
 * memory: two threads filling the same transparent huge page at once would
 * each fault in, and zero, one of their own, and one be thrown away, which
 * is what happened when they took every other run.
 */
#define FILL_SPAN	16

static void fill_fail(struct fill *f, int err, const char *why,
		      const struct fill_item *it)
{
	spin_lock(&f->lock);
	if (!f->err) {
		f->err = err;
		f->why = why;
		if (it)
			f->bad = *it;
	}
	spin_unlock(&f->lock);
}

static void fill_run(struct fill *f, struct page **pages)
{
	for (;;) {
		u32 i = atomic_add_return(FILL_SPAN, &f->next) - FILL_SPAN;
		u32 end = min_t(u32, i + FILL_SPAN, f->nr);
		const char *why = NULL;
		int ret = 0;

		for (; i < end && !ret && !READ_ONCE(f->err); i++)
			ret = fill_item(f, &f->items[i], pages, &why);
		if (ret)
			fill_fail(f, ret, why, &f->items[i - 1]);
		if (i >= f->nr || READ_ONCE(f->err))
			return;
		cond_resched();
	}
}

static void fill_put(struct fill *f)
{
	unsigned int i;

	if (!refcount_dec_and_test(&f->ref))
		return;
	for (i = 0; i < f->nr_workers; i++)
		kvfree(f->w[i].pages);
	kvfree(f->items);
	fput(f->file);
	mmdrop(f->mm);
	kfree(f);
}

static void fill_work_fn(struct work_struct *work)
{
	struct fill_worker *w = container_of(work, struct fill_worker, work);
	struct fill *f = w->f;

	/* A restarter killed while waiting may have dropped its mm. */
	if (mmget_not_zero(f->mm)) {
		kthread_use_mm(f->mm);
		fill_run(f, w->pages);
		kthread_unuse_mm(f->mm);
		mmput(f->mm);
	}
	if (atomic_dec_and_test(&f->busy))
		wake_up(&f->idle);
	fill_put(f);
}

/*
 * Fills what was collected, with the workers, then empties the batch. The
 * wait for the workers is killable: a killed restarter stops them at their
 * next piece and leaves without them (-EINTR).
 */
static int fill_batch(struct fill *f, struct page **pages)
{
	unsigned int i, n = min_t(unsigned int, f->nr_workers,
				  DIV_ROUND_UP(f->nr, FILL_SPAN) - 1);

	atomic_set(&f->next, 0);
	atomic_set(&f->busy, n);
	for (i = 0; i < n; i++) {
		refcount_inc(&f->ref);
		queue_work(fill_wq, &f->w[i].work);
	}
	fill_run(f, pages);
	if (wait_event_killable(f->idle, !atomic_read(&f->busy))) {
		fill_fail(f, -EINTR, "killed while the image was read", NULL);
		return -EINTR;
	}
	f->nr = 0;
	return f->err;
}

/*
 * Maps the image, when it is a file that can be, read-only into the process
 * being restarted, for the time of the fill: pages are then copied from the
 * page cache with plain moves (ckpt_fill_mapped()). Anything else, or a
 * mapping refused, is read with the file's read_iter instead.
 */
static bool restart_map_image = true;
module_param(restart_map_image, bool, 0644);
MODULE_PARM_DESC(restart_map_image,
		 "map an image file to fill a restarted process's memory (N: read it)");

static void map_image(struct fill *f)
{
	struct file *file = f->file;
	loff_t size = i_size_read(file_inode(file));
	unsigned long base;

	if (!READ_ONCE(restart_map_image) ||
	    !S_ISREG(file_inode(file)->i_mode) || !file->f_op->mmap ||
	    size <= 0 || size > (loff_t)TASK_SIZE_MAX / 4)
		return;
	base = vm_mmap(file, 0, PAGE_ALIGN(size), PROT_READ, MAP_SHARED, 0);
	if (IS_ERR_VALUE(base))
		return;
	f->map.file = file;
	f->map.base = base;
	f->map.size = size;
}

/*
 * The restarter lets go: the image mapping goes (unless it was killed: its
 * mm goes as it exits), then its reference (the workers may hold more).
 */
static void fill_free(struct fill *f)
{
	if (f->map.base && !fatal_signal_pending(current)) {
		vm_munmap(f->map.base, PAGE_ALIGN(f->map.size));
		/*
		 * The image was never the process's memory: its peak (VmHWM,
		 * VmPeak, ru_maxrss) starts from what it has now.
		 */
		if (!mmap_write_lock_killable(f->mm)) {
			reset_mm_hiwater_rss(f->mm);
			f->mm->hiwater_vm = f->mm->total_vm;
			mmap_write_unlock(f->mm);
		}
	}
	fill_put(f);
}

static struct fill *fill_init(struct ckpt_reader *r)
{
	struct fill *f;
	unsigned int i;

	f = kzalloc(sizeof(*f), GFP_KERNEL_ACCOUNT);
	if (!f)
		return ERR_PTR(-ENOMEM);
	refcount_set(&f->ref, 1);
	init_waitqueue_head(&f->idle);
	spin_lock_init(&f->lock);
	f->file = get_file(r->file);
	f->mm = current->mm;
	mmgrab(f->mm);
	map_image(f);
	f->items = kvmalloc_array(FILL_BATCH, sizeof(*f->items),
				  GFP_KERNEL_ACCOUNT);
	if (!f->items)
		goto nomem;
	i = READ_ONCE(restart_threads) > 0 ? READ_ONCE(restart_threads) :
					       num_online_cpus();
	for (; f->nr_workers < min_t(unsigned int, i - 1, FILL_WORKERS);
	     f->nr_workers++) {
		struct fill_worker *w = &f->w[f->nr_workers];

		w->f = f;
		INIT_WORK(&w->work, fill_work_fn);
		w->pages = kvmalloc_array(CKPT_IMG_MAX_RUN_PAGES,
					  sizeof(struct page *),
					  GFP_KERNEL_ACCOUNT);
		if (!w->pages)
			goto nomem;
	}
	return f;
nomem:
	fill_free(f);
	return ERR_PTR(-ENOMEM);
}

/*
 * "cannot write 16 pages at 7f00 (anonymous memory)", say. @p passed
 * ckpt_img_pages_hdr(), so its mapping is one of @vmas; checked again all
 * the same, as a message is no reason to read out of bounds.
 */
static void name_pages(const char *what, const struct ckpt_img_pages *p,
		       const struct ckpt_img_vma *vmas, u32 nr_vmas,
		       struct ckpt_why *why)
{
	const char *path = p->vma < nr_vmas ? vmas[p->vma].path : "";

	ckpt_whyf(why, "%s %u pages at %llx (%s)", what,
		  p->nr_pages, p->addr, *path ? path : "anonymous memory");
}

static void cannot_write(const struct ckpt_img_pages *p,
			 const struct ckpt_img_vma *vmas, u32 nr_vmas,
			 struct ckpt_why *why)
{
	name_pages("cannot write", p, vmas, nr_vmas, why);
}

/* The image's mappings, once the restarter's own are gone. */
static int map_all(const struct ckpt_img_vma *vmas, u32 nr_vmas,
		   const struct path *root, const struct ckpt_objfiles *of,
		   struct ckpt_why *why)
{
	struct mm_struct *mm = current->mm;
	struct sysv_atts sa = {};
	int ret, pass;
	u32 i;

	ret = find_sysv(mm, &sa);
	if (!ret)
		ret = unmap_all(mm, &sa);
	if (ret) {
		drop_sysv(&sa, false);
		why->msg = "cannot unmap the restarter's memory";
		return ret;
	}
	/*
	 * Mappings with flags set after vm_mmap() first: a fresh mapping
	 * next to an older one of the same kind merges into it, and the
	 * flags would be set on the merged whole, or missed. Mapped first,
	 * they have no neighbours yet, and the rest cannot merge into them.
	 */
	for (pass = 0; pass < 2 && !ret; pass++) {
		for (i = 0; i < nr_vmas; i++) {
			bool extra = vmas[i].flags & (CKPT_VMA_DONTFORK |
						      CKPT_VMA_DONTDUMP);

			if (vmas[i].flags & (CKPT_VMA_VDSO | CKPT_VMA_VVAR) ||
			    extra != !pass)
				continue;
			ret = map_vma(&vmas[i], root, of, &sa, why);
			if (ret)
				break;
		}
	}
	drop_sysv(&sa, true);
	return ret;
}

/*
 * One PAGES section (header @s read): queued for the fill workers when it
 * can be read where it lies, written now when it came inline, left to
 * the page server when lazy.
 */
static int fill_sect(struct fill *f, struct ckpt_reader *r,
		     const struct ckpt_sect *s, const struct ckpt_img_vma *vmas,
		     u32 nr_vmas, bool lazy, struct ckpt_why *why)
{
	struct ckpt_img_pages p = {};
	void *payload;
	loff_t defer;
	size_t len;
	int ret;

	ret = ckpt_read_pages(r, s, &p, &payload, &defer);
	/*
	 * -EFAULT names the pages only when their header was accepted
	 * (ckpt_read_pages() leaves it zero otherwise): the same errno comes
	 * from reading the image (a FUSE server may send any), before the
	 * header is read whole, or checked.
	 */
	if (ret) {
		if (ret == -EFAULT && p.nr_pages)
			cannot_write(&p, vmas, nr_vmas, why);
		else
			why->msg = r->st.why ?: "cannot read the image";
		return ret;
	}
	if (defer >= 0 && lazy && ckpt_img_vma_lazy(&vmas[p.vma]))
		return 0;	/* the restarter's, from its verified image */
	if (defer >= 0) {
		f->items[f->nr++] = (struct fill_item) {
			.pos = defer, .p = p, .csum = s->csum,
		};
		/* A failed batch is told by f->err, after the loop. */
		if (f->nr == FILL_BATCH && fill_batch(f, r->pages))
			return 1;
		return 0;
	}
	if (!payload)
		return 0;
	len = (size_t)p.nr_pages << PAGE_SHIFT;
	if (access_process_vm(current, p.addr, payload, len,
			      FOLL_FORCE | FOLL_WRITE) != len) {
		cannot_write(&p, vmas, nr_vmas, why);
		return -EFAULT;
	}
	return 0;
}

/* What the fill workers found wrong, named by the memory it is. */
static void fill_why(const struct fill *f, const struct ckpt_img_vma *vmas,
		     u32 nr_vmas, struct ckpt_why *why)
{
	char what[64];

	if (!f->bad.p.nr_pages) {
		/* Killed waiting for the workers: no section to name. */
		why->msg = f->why;
		return;
	}
	if (f->err == -EFAULT) {
		cannot_write(&f->bad.p, vmas, nr_vmas, why);
		return;
	}
	if (f->why)
		snprintf(what, sizeof(what), "%s, in the section of", f->why);
	else
		snprintf(what, sizeof(what), "cannot fill (%pe) the section of",
			 ERR_PTR(f->err));
	name_pages(what, &f->bad.p, vmas, nr_vmas, why);
}

/* Every PAGES section up to END, their pages where the image has them. */
static int fill_all(struct ckpt_reader *r, const struct ckpt_img_vma *vmas,
		    u32 nr_vmas, bool lazy, struct ckpt_why *why)
{
	struct ckpt_sect s;
	struct fill *f;
	void *payload;
	int ret;

	f = fill_init(r);
	if (IS_ERR(f))
		return PTR_ERR(f);
	for (;;) {
		ret = ckpt_read_hdr(r, &s);
		if (!ret && s.type == CKPT_SECT_END) {
			ret = ckpt_read_payload(r, &s, &payload);
			kvfree(payload);
			if (ret)
				why->msg = r->st.why;
			break;
		}
		if (ret) {
			why->msg = r->st.why ?: "cannot read the image";
			goto out;
		}
		ret = fill_sect(f, r, &s, vmas, nr_vmas, lazy, why);
		if (ret > 0) {
			ret = 0;
			break;
		}
		if (ret)
			goto out;
		cond_resched();
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			goto out;
		}
	}
	/* Not after a failed batch: its workers may still be at it. */
	if (!ret && f->nr && !READ_ONCE(f->err))
		fill_batch(f, r->pages);
	if (!ret && READ_ONCE(f->err)) {
		ret = f->err;
		fill_why(f, vmas, nr_vmas, why);
	}
out:
	fill_free(f);
	return ret;
}

/* The layout /proc/PID/stat and prctl(PR_SET_MM) show, and the auxv. */
static void set_layout(struct mm_struct *mm, const struct ckpt_img_process *proc)
{
	mmap_write_lock(mm);
	mm->start_code = proc->start_code;
	mm->end_code = proc->end_code;
	mm->start_data = proc->start_data;
	mm->end_data = proc->end_data;
	mm->start_brk = proc->start_brk;
	mm->brk = proc->brk;
	mm->start_stack = proc->start_stack;
	mm->arg_start = proc->arg_start;
	mm->arg_end = proc->arg_end;
	mm->env_start = proc->env_start;
	mm->env_end = proc->env_end;
	memcpy(mm->saved_auxv, proc->auxv, sizeof(mm->saved_auxv));
	/* Checked before; still always terminated, as prctl() makes it. */
	mm->saved_auxv[ARRAY_SIZE(mm->saved_auxv) - 2] = AT_NULL;
	mm->saved_auxv[ARRAY_SIZE(mm->saved_auxv) - 1] = 0;
	mmap_write_unlock(mm);
}

int ckpt_mm_restore(struct ckpt_reader *r, const struct ckpt_img_process *proc,
		    const struct ckpt_img_vma *vmas, u32 nr_vmas,
		    const struct path *root, const struct ckpt_objfiles *of,
		    const u8 *vdso_proxy, bool lazy, struct ckpt_why *why)
{
	int ret;

	ret = map_all(vmas, nr_vmas, root, of, why);
	if (!ret && vdso_proxy)
		ret = ckpt_vdso_proxy(proc, vdso_proxy, why);
	if (!ret)
		ret = fill_all(r, vmas, nr_vmas, lazy, why);
	if (!ret)
		set_layout(current->mm, proc);
	return ret;
}
