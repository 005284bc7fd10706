// SPDX-License-Identifier: GPL-2.0
/*
 * Memory: the VMA table, the pages worth storing, and the mm's fields.
 *
 * Which pages to store comes from the target's /proc/PID/pagemap (present,
 * swapped, file-backed bits), read through the VFS with the caller's
 * credentials: only populated pages are stored, and of a private file
 * mapping only the pages the process changed (now anonymous). Page content
 * is read with access_process_vm(). Shared file mappings keep their data in
 * the file; the vdso and vvar are never stored, the restarter moves its own
 * to where the image had them.
 *
 * Restart maps each VMA with vm_mmap() at its address and with its final
 * protection, then writes the stored pages with access_process_vm() and
 * FOLL_FORCE, the way a debugger writes into read-only text.
 */

#include <linux/fs.h>
#include <linux/file.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <asm/vdso.h>

#include "fileobj.h"
#include "image.h"
#include "mm.h"

#define PM_PRESENT	BIT_ULL(63)
#define PM_SWAP		BIT_ULL(62)
#define PM_FILE		BIT_ULL(61)
#define PM_CHUNK	512	/* pagemap entries read at a time */

static unsigned long vdso_start(struct mm_struct *mm)
{
	return (unsigned long)mm->context.vdso;
}

static void vdso_ranges(struct mm_struct *mm, u64 *vdso, u64 *vdso_size,
			u64 *vvar, u64 *vvar_size)
{
	const struct vdso_image *img = mm->context.vdso_image;

	*vdso = vdso_start(mm);
	*vdso_size = img ? img->size : 0;
	*vvar_size = img ? -img->sym_vvar_start : 0;
	*vvar = *vdso - *vvar_size;
}

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
	return !((v->flags & CKPT_VMA_SHARED) && (v->flags & CKPT_VMA_FILE));
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
			struct ckpt_fileobjs *objs, const char **why,
			char *whybuf, size_t whylen)
{
	u64 vdso, vdso_size, vvar, vvar_size;
	struct file *file = vma->vm_file;
	unsigned long fl = vma->vm_flags;

	memset(v, 0, sizeof(*v));
	v->start = vma->vm_start;
	v->end = vma->vm_end;
	v->pgoff = vma->vm_pgoff;
	v->prot = vma_prot(fl);

	vdso_ranges(mm, &vdso, &vdso_size, &vvar, &vvar_size);
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
		snprintf(whybuf, whylen,
			 "mapping %lx-%lx is a device or hugetlb mapping, which cannot be restored",
			 vma->vm_start, vma->vm_end);
		*why = whybuf;
		return -EOPNOTSUPP;
	}

	if (file) {
		struct inode *inode = d_real_inode(file->f_path.dentry);
		char *p = d_path(&file->f_path, buf, PATH_MAX);
		size_t len;

		if (IS_ERR(p))
			return PTR_ERR(p);
		len = strlen(p);
		if ((fl & VM_MAYSHARE) && !strcmp(p, "/dev/zero (deleted)")) {
			/* MAP_SHARED | MAP_ANONYMOUS: its content is stored. */
			v->pgoff = 0;
			return 0;
		}
		if (len > 10 && !strcmp(p + len - 10, " (deleted)")) {
			/* A memfd or deleted file: the image carries it. */
			int ret = ckpt_fileobj_vma(objs, vma, p, v, whybuf, whylen);

			if (ret)
				*why = whybuf;
			return ret;
		}
		if (len >= sizeof(v->path)) {
			snprintf(whybuf, whylen,
				 "mapping %lx-%lx: file path longer than %zu bytes",
				 vma->vm_start, vma->vm_end, sizeof(v->path) - 1);
			*why = whybuf;
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

	pm = kmalloc_array(PM_CHUNK, sizeof(u64), GFP_KERNEL);
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
		    struct ckpt_mm_capture *c, struct ckpt_img_process *proc,
		    struct ckpt_fileobjs *objs, const char **why, char *whybuf,
		    size_t whylen)
{
	struct vm_area_struct *vma;
	char name[32];
	u32 n = 0;
	int ret = 0;

	memset(c, 0, sizeof(*c));
	c->path_buf = kmalloc(PATH_MAX, GFP_KERNEL);
	if (!c->path_buf)
		return -ENOMEM;

	mmap_read_lock(mm);
	c->vmas = kvcalloc(mm->map_count, sizeof(*c->vmas), GFP_KERNEL);
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
					   objs, why, whybuf, whylen);
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
	vdso_ranges(mm, &proc->vdso, &proc->vdso_size, &proc->vvar,
		    &proc->vvar_size);
out_unlock:
	mmap_read_unlock(mm);
	if (ret)
		return ret;
	if (!n || n > CKPT_IMG_MAX_VMAS) {
		*why = "mapping count out of bounds";
		return -E2BIG;
	}
	if (!proc->vdso_size) {
		*why = "the process has no vdso";
		return -EOPNOTSUPP;
	}

	/* The vdso's text, so a restart can tell it runs the same one. */
	{
		void *text = kvmalloc(proc->vdso_size, GFP_KERNEL);

		if (!text)
			return -ENOMEM;
		if (access_process_vm(task, proc->vdso, text, proc->vdso_size,
				      FOLL_FORCE) != proc->vdso_size)
			ret = -EIO;
		else
			proc->vdso_crc = ckpt_crc32(0, text, proc->vdso_size);
		kvfree(text);
		if (ret)
			return ret;
	}

	snprintf(name, sizeof(name), "/proc/%d/pagemap",
		 task_tgid_vnr(task));
	c->pagemap = filp_open(name, O_RDONLY, 0);
	if (IS_ERR(c->pagemap)) {
		ret = PTR_ERR(c->pagemap);
		c->pagemap = NULL;
		*why = "cannot read the process's pagemap (is /proc mounted?)";
		return ret;
	}
	if (!c->pagemap->f_op->read) {
		*why = "this kernel's pagemap cannot be read";
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
 * Reads a run of populated pages and writes it. Of anonymous mappings,
 * pages that hold only zeros are left out: restored unpopulated, they read
 * the same (this is what huge pages, populated around a few touched bytes,
 * cost otherwise). A file mapping's changed page stays, zero or not: the
 * file underneath need not be zero.
 */
static int write_run(struct task_struct *task, struct ckpt_writer *w,
		     const struct ckpt_img_vma *v, u32 vma, u64 addr,
		     unsigned int n, void *data, u64 *stored)
{
	size_t len = (size_t)n << PAGE_SHIFT;
	unsigned int i, first = 0;
	int ret = 0;

	if (access_process_vm(task, addr, data, len, FOLL_FORCE) != len)
		return -EIO;
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

/* A run of wanted pages being gathered across pagemap chunks. */
struct run {
	struct task_struct *task;
	struct ckpt_writer *w;
	const struct ckpt_img_vma *v;
	u32 vma;
	u64 start;
	unsigned int n;
	void *data;
	u64 written, stored;
};

static int flush_run(struct run *r)
{
	int ret = 0;

	if (r->n)
		ret = write_run(r->task, r->w, r->v, r->vma, r->start, r->n,
				r->data, &r->stored);
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
			struct ckpt_writer *w)
{
	struct run r = { .task = task, .w = w };
	u64 *pm;
	u32 i;
	int ret = 0;

	pm = kmalloc_array(PM_CHUNK, sizeof(u64), GFP_KERNEL);
	r.data = kvmalloc((size_t)CKPT_IMG_MAX_RUN_PAGES << PAGE_SHIFT, GFP_KERNEL);
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
	c->nr_stored = r.stored;
out:
	kvfree(r.data);
	kfree(pm);
	return ret;
}

void ckpt_mm_capture_free(struct ckpt_mm_capture *c)
{
	if (c->pagemap)
		filp_close(c->pagemap, NULL);
	if (c->ubuf)
		vm_munmap(c->ubuf, PM_CHUNK * sizeof(u64));
	kvfree(c->vmas);
	kfree(c->path_buf);
	memset(c, 0, sizeof(*c));
}

int ckpt_mm_check_vdso(const struct ckpt_img_process *proc, const char **why)
{
	struct mm_struct *mm = current->mm;
	u64 vdso, vdso_size, vvar, vvar_size;
	void *text;
	int ret = 0;

	mmap_read_lock(mm);
	vdso_ranges(mm, &vdso, &vdso_size, &vvar, &vvar_size);
	mmap_read_unlock(mm);
	if (vdso != proc->vdso || vvar != proc->vvar) {
		*why = "the restarter's vdso is not where the image had it";
		return -EINVAL;
	}
	if (vdso_size != proc->vdso_size || vvar_size != proc->vvar_size) {
		*why = "this kernel's vdso differs from the image's";
		return -ENOEXEC;
	}
	text = kvmalloc(vdso_size, GFP_KERNEL);
	if (!text)
		return -ENOMEM;
	if (copy_from_user(text, (void __user *)(unsigned long)vdso, vdso_size))
		ret = -EFAULT;
	else if (ckpt_crc32(0, text, vdso_size) != proc->vdso_crc) {
		*why = "this kernel's vdso differs from the image's (another kernel build)";
		ret = -ENOEXEC;
	}
	kvfree(text);
	return ret;
}

/* Unmaps everything of current's but the vdso and vvar. */
static int unmap_all(struct mm_struct *mm)
{
	u64 vdso, vdso_size, vvar, vvar_size;
	struct vm_area_struct *vma;
	struct { unsigned long start, end; } *r;
	unsigned int n = 0, i;
	int ret = 0;

	mmap_read_lock(mm);
	vdso_ranges(mm, &vdso, &vdso_size, &vvar, &vvar_size);
	r = kvcalloc(mm->map_count, sizeof(*r), GFP_KERNEL);
	if (r) {
		VMA_ITERATOR(vmi, mm, 0);

		for_each_vma(vmi, vma) {
			if (vma->vm_start >= vvar && vma->vm_end <= vdso + vdso_size)
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
 * Opens the file a mapping was of, and checks it is still that file (on an
 * overlay, mappings hold the real file underneath, so compare real inodes).
 */
static struct file *open_mapped_file(const struct ckpt_img_vma *v,
				     const struct ckpt_objfiles *of,
				     const char **why, char *whybuf,
				     size_t whylen)
{
	struct inode *inode;
	struct file *file;

	if (v->flags & CKPT_VMA_FILEOBJ) {
		/* Made by the restarter (memfd, unlinked file): no identity. */
		file = ckpt_fileobj_open(of, v, whybuf, whylen);
		if (IS_ERR(file))
			*why = whybuf;
		return file;
	}

	file = filp_open(v->path, v->flags & CKPT_VMA_MAYWRITE ? O_RDWR : O_RDONLY,
			 0);
	if (IS_ERR(file)) {
		snprintf(whybuf, whylen, "cannot open %s (mapped at %llx): error %ld",
			 v->path, v->start, PTR_ERR(file));
		*why = whybuf;
		return file;
	}
	inode = d_real_inode(file->f_path.dentry);
	if (inode->i_sb->s_dev != v->dev || inode->i_ino != v->ino) {
		snprintf(whybuf, whylen,
			 "%s (mapped at %llx) is not the file it was at the checkpoint",
			 v->path, v->start);
		*why = whybuf;
		fput(file);
		return ERR_PTR(-ESTALE);
	}
	return file;
}

int ckpt_mm_check_files(const struct ckpt_img_vma *vmas, u32 nr_vmas,
			const struct ckpt_objfiles *of, const char **why,
			char *whybuf, size_t whylen)
{
	struct file *file;
	u32 i;

	for (i = 0; i < nr_vmas; i++) {
		if (!(vmas[i].flags & CKPT_VMA_FILE))
			continue;
		file = open_mapped_file(&vmas[i], of, why, whybuf, whylen);
		if (IS_ERR(file))
			return PTR_ERR(file);
		fput(file);
	}
	return 0;
}

static int map_vma(const struct ckpt_img_vma *v,
		   const struct ckpt_objfiles *of, const char **why,
		   char *whybuf, size_t whylen)
{
	unsigned long flags = MAP_FIXED_NOREPLACE, addr, extra = 0;
	struct file *file = NULL;
	struct mm_struct *mm = current->mm;
	struct vm_area_struct *vma;

	flags |= v->flags & CKPT_VMA_SHARED ? MAP_SHARED : MAP_PRIVATE;
	if (v->flags & CKPT_VMA_GROWSDOWN)
		flags |= MAP_GROWSDOWN;
	if (v->flags & CKPT_VMA_NORESERVE)
		flags |= MAP_NORESERVE;
	if (v->flags & CKPT_VMA_FILE) {
		file = open_mapped_file(v, of, why, whybuf, whylen);
		if (IS_ERR(file))
			return PTR_ERR(file);
	} else {
		flags |= MAP_ANONYMOUS;
	}

	addr = vm_mmap(file, v->start, v->end - v->start, v->prot, flags,
		       file ? v->pgoff << PAGE_SHIFT : 0);
	if (file)
		fput(file);
	if (IS_ERR_VALUE(addr) || addr != v->start) {
		snprintf(whybuf, whylen, "cannot map %llx-%llx %s: error %ld",
			 v->start, v->end, v->path,
			 IS_ERR_VALUE(addr) ? (long)addr : -EEXIST);
		*why = whybuf;
		return IS_ERR_VALUE(addr) ? (int)addr : -EEXIST;
	}

	if (v->flags & CKPT_VMA_DONTFORK)
		extra |= VM_DONTCOPY;
	if (v->flags & CKPT_VMA_DONTDUMP)
		extra |= VM_DONTDUMP;
	if (extra) {
		mmap_write_lock(mm);
		vma = find_vma(mm, v->start);
		if (vma && vma->vm_start == v->start)
			ckpt_vm_flags_set(vma, extra);
		mmap_write_unlock(mm);
	}
	return 0;
}

int ckpt_mm_restore(struct ckpt_reader *r, const struct ckpt_img_process *proc,
		    const struct ckpt_img_vma *vmas, u32 nr_vmas,
		    const struct ckpt_objfiles *of, const char **why,
		    char *whybuf, size_t whylen)
{
	struct mm_struct *mm = current->mm;
	struct ckpt_sect s;
	void *payload;
	u32 i;
	int ret;

	ret = unmap_all(mm);
	if (ret) {
		*why = "cannot unmap the restarter's memory";
		return ret;
	}
	for (i = 0; i < nr_vmas; i++) {
		if (vmas[i].flags & (CKPT_VMA_VDSO | CKPT_VMA_VVAR))
			continue;
		ret = map_vma(&vmas[i], of, why, whybuf, whylen);
		if (ret)
			return ret;
	}

	for (;;) {
		const struct ckpt_img_pages *p;
		size_t len;

		ret = ckpt_read_sect(r, &s, &payload);
		if (ret) {
			*why = r->st.why;
			return ret;
		}
		if (s.type == CKPT_SECT_END) {
			kvfree(payload);
			break;
		}
		p = payload;
		len = (size_t)p->nr_pages << PAGE_SHIFT;
		if (access_process_vm(current, p->addr, (void *)(p + 1), len,
				      FOLL_FORCE | FOLL_WRITE) != len) {
			snprintf(whybuf, whylen,
				 "cannot write %u pages at %llx (%s)",
				 p->nr_pages, p->addr, vmas[p->vma].path);
			*why = whybuf;
			return -EFAULT;
		}
		cond_resched();
		if (fatal_signal_pending(current))
			return -EINTR;
	}

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
	mmap_write_unlock(mm);
	return 0;
}
