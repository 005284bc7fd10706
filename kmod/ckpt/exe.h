/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _CKPT_EXE_H
#define _CKPT_EXE_H

#include <linux/types.h>
#include <uapi/linux/ckpt_image.h>

struct mm_struct;
struct path;
struct file;
struct ckpt_why;
struct ckpt_fds;
struct ckpt_objfiles;

/*
 * Checkpoint, with the process frozen: the executable's path (from the
 * checkpointer's root) and identity into @proc; one deleted while it ran,
 * or a memfd, becomes a file object of @scan's (carried by content, as its
 * mappings are) if the process may read it. An unnamable executable is
 * refused.
 */
int ckpt_exe_capture(struct mm_struct *mm, struct ckpt_img_process *proc,
		     pid_t pid, struct ckpt_fds *scan, struct ckpt_why *why);

/*
 * Restart, before anything is changed: the image's executable, opened from
 * @root with the restarter's rights, checked to be the file it was (or, for
 * one the image carries, opened from the file the restarter made for it in
 * @of), with the write denial of an exe file taken. ckpt_exe_put() undoes
 * this.
 */
struct file *ckpt_exe_open(const struct ckpt_img_process *proc,
			   const struct path *root,
			   const struct ckpt_objfiles *of,
			   struct ckpt_why *why);
void ckpt_exe_put(struct file *file);

/*
 * Restart, once the restarter's own mappings are gone: @file (from
 * ckpt_exe_open(), whose reference and denial the mm takes over) becomes
 * current's exe file.
 */
void ckpt_exe_set(struct file *file);

#endif /* _CKPT_EXE_H */
