/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _CKPT_PIPES_H
#define _CKPT_PIPES_H

#include <linux/types.h>
#include <uapi/linux/ckpt_image.h>

struct file;

/* Whether @file is an end of an anonymous pipe. */
bool ckpt_is_pipe(const struct file *file);

/* For ckpt_pipe_capture(): the ends were counted by the caller. */
#define CKPT_PIPE_ANY	(~0U)

/*
 * The PIPE section of the pipe @file is an end of: its content and size.
 * -EXDEV if it has other than @readers and @writers open ends (an end in
 * another process), -EOPNOTSUPP for a packet (O_DIRECT) pipe, -EMSGSIZE
 * for one holding more bytes than its capacity (pages spliced into it
 * are pieces of compound pages, bigger than a page). *@out is
 * kvmalloc'ed, *@len bytes.
 */
int ckpt_pipe_capture(struct file *file, unsigned int readers,
		      unsigned int writers, struct ckpt_img_pipe **out,
		      size_t *len);

/*
 * The open files of each end of the pipe @file is an end of (what
 * ckpt_pipe_capture() compares): 0, or -ENOPKG when this kernel's pipes
 * cannot be read.
 */
int ckpt_pipe_ends(struct file *file, unsigned int *readers,
		   unsigned int *writers);

#endif /* _CKPT_PIPES_H */
