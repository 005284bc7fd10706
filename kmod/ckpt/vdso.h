/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _CKPT_VDSO_H
#define _CKPT_VDSO_H

#include <linux/mm_types.h>
#include <linux/sched.h>
#include <uapi/linux/ckpt_image.h>

#include "image_check.h"

struct ckpt_why;

/* Where @mm's vdso and the vvar pages below it are. */
void ckpt_vdso_ranges(struct mm_struct *mm, u64 *vdso, u64 *vdso_size,
		      u64 *vvar, u64 *vvar_size);

/*
 * The VDSO section of a frozen process (proc's vdso fields set): this
 * kernel's entry points and the process's vdso text; sets proc->vdso_csum.
 * kvfree() it. ERR_PTR with *why on failure.
 */
struct ckpt_img_vdso *ckpt_vdso_capture(struct task_struct *task,
					struct mm_struct *mm,
					struct ckpt_img_process *proc,
					struct ckpt_why *why);

/*
 * At restart, before anything is changed: whether current's vdso is the
 * image's (then it must be where the image had it; NULL) or not, and then
 * whether the image can run with it (@old may be NULL: no VDSO section).
 * For another vdso, returns the text to map at the image's vdso address
 * (ckpt_vdso_proxy(); kvfree() it). ERR_PTR with *why when refused.
 */
u8 *ckpt_vdso_check(const struct ckpt_img_process *proc,
		    const struct ckpt_img_vdso *old,
		    const struct ckpt_img_vma *vmas, u32 nr_vmas,
		    struct ckpt_img_thread *const *threads, u32 nr_threads,
		    struct ckpt_why *why);

/* Once the image's memory is mapped: @text at the image's vdso address. */
int ckpt_vdso_proxy(const struct ckpt_img_process *proc, const u8 *text,
		    struct ckpt_why *why);

#endif /* _CKPT_VDSO_H */
