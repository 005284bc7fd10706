/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _CKPT_MM_H
#define _CKPT_MM_H

#include <linux/types.h>
#include <uapi/linux/ckpt_image.h>

struct task_struct;
struct mm_struct;
struct ckpt_writer;
struct ckpt_reader;
struct ckpt_fileobjs;
struct ckpt_objfiles;
struct path;
struct file;
struct ckpt_why;

/* What a checkpoint learned about a frozen process's memory. */
struct ckpt_mm_capture {
	struct ckpt_img_vma *vmas;
	u32 nr_vmas;
	u64 nr_pages;		/* populated: the VMA table's counts add up to it */
	u64 nr_stored;		/* written: zero pages of anonymous memory left out */
	struct file *pagemap;		/* not referenced: the caller's */
	unsigned long ubuf;	/* scratch buffer in the caller's memory */
	char *path_buf;
	struct ckpt_img_vdso *vdso;	/* the VDSO section */
};

/* The restart's fill workers' queue, made at load, drained at unload. */
int ckpt_mm_init(void);
void ckpt_mm_uninit(void);

/*
 * The VMA table and mm fields, with the target's threads parked; which
 * pages are populated from @pagemap, the process's /proc/PID/pagemap
 * (ckpt_access_check()), which the caller keeps and puts.
 */
int ckpt_mm_capture(struct task_struct *task, struct mm_struct *mm,
		    struct file *pagemap, struct ckpt_mm_capture *c,
		    struct ckpt_img_process *proc, struct ckpt_fileobjs *objs,
		    struct ckpt_why *why);
/*
 * Memory for copies of a process's pages (mm.c, "Staging"): prepared before
 * the freeze, filled while frozen, written after the thaw.
 */
struct ckpt_stage {
	void **chunks;		/* of CKPT_IMG_MAX_RUN_PAGES pages each */
	u32 nr_chunks, max_chunks;
	u32 cur;		/* the chunk being filled, from cur_off */
	size_t cur_off;
	u64 budget;		/* bytes of chunks at most */
	struct ckpt_staged *runs;	/* in image order */
	u32 nr_runs, max_runs;
};

int ckpt_stage_prepare(struct ckpt_stage *st, struct mm_struct *mm);
void ckpt_stage_free(struct ckpt_stage *st);

/*
 * The PAGES sections, one run of populated pages at a time. With a stage,
 * runs are copied into it as far as it goes, for ckpt_mm_write_staged() to
 * write once the process runs again; without, they are written directly.
 */
int ckpt_mm_write_pages(struct task_struct *task, struct ckpt_mm_capture *c,
			struct ckpt_writer *w, struct ckpt_stage *st);
int ckpt_mm_write_staged(struct ckpt_mm_capture *c, struct ckpt_stage *st,
			 struct ckpt_writer *w);
void ckpt_mm_capture_free(struct ckpt_mm_capture *c);

/*
 * Restart, as PROCESS is read: the mm fields and auxv the way
 * prctl(PR_SET_MM_MAP) checks them against the running kernel and current
 * (the restarter, with the image's rlimits): below TASK_SIZE, not below
 * mmap_min_addr, within RLIMIT_DATA, and the auxv's AT_NULL entry within
 * mm->saved_auxv. image_check.c checked the rest.
 */
int ckpt_mm_check_process(const struct ckpt_img_process *p, const char **why);
/*
 * Restart, before anything is changed: every mapped file is still there,
 * opened from @root; a mapping's flock() lock is taken on the file it
 * will map, kept in @of (the point of no return is past only once every
 * lock is held).
 */
int ckpt_mm_check_files(const struct ckpt_img_vma *vmas, u32 nr_vmas,
			const struct path *root, struct ckpt_objfiles *of,
			struct ckpt_why *why);
/*
 * Replace current's memory with the image's: unmap everything but the
 * vdso, map the image's VMAs (their files opened from @root, and
 * @vdso_proxy, the image's vdso turned into jumps to this kernel's, when
 * not NULL), fill them from the PAGES sections that follow in @r, and set
 * the mm's fields. With @lazy (the image a regular file) the pages of the
 * mappings ckpt_img_vma_lazy() picks are skipped: the restarter fills
 * them. Past this point there is no way back.
 */
int ckpt_mm_restore(struct ckpt_reader *r, const struct ckpt_img_process *proc,
		    const struct ckpt_img_vma *vmas, u32 nr_vmas,
		    const struct path *root, const struct ckpt_objfiles *of,
		    const u8 *vdso_proxy, bool lazy, struct ckpt_why *why);

#endif /* _CKPT_MM_H */
