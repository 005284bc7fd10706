// SPDX-License-Identifier: GPL-2.0
/*
 * Anonymous pipes whose both ends are the process's own (the self-pipe of
 * event loops): which descriptors are which end, and the bytes buffered in
 * them, read without consuming them. A pipe with an end in another process
 * is refused by the caller, unless that process is a member of the same
 * tree (tree_files.c counts the ends across the tree).
 */

#include <linux/fs.h>
#include <linux/highmem.h>
#include <linux/magic.h>
#include <linux/pipe_fs_i.h>
#include <linux/slab.h>

#include "layout.h"
#include "pipes.h"

bool ckpt_is_pipe(const struct file *file)
{
	return S_ISFIFO(file_inode(file)->i_mode) &&
	       file_inode(file)->i_sb->s_magic == PIPEFS_MAGIC &&
	       file->private_data;
}

int ckpt_pipe_ends(struct file *file, unsigned int *readers,
		   unsigned int *writers)
{
	struct pipe_inode_info *pipe = file->private_data;

	if (!ckpt_layout_ok(CKPT_LAYOUT_PIPES))
		return -ENOPKG;
	pipe_lock(pipe);
	*readers = pipe->readers;
	*writers = pipe->writers;
	pipe_unlock(pipe);
	return 0;
}

int ckpt_pipe_capture(struct file *file, unsigned int readers,
		      unsigned int writers, struct ckpt_img_pipe **out,
		      size_t *len)
{
	struct pipe_inode_info *pipe = file->private_data;
	struct ckpt_img_pipe *p;
	unsigned int i, mask;
	size_t size, n = 0;
	int ret = 0;

	if (!ckpt_layout_ok(CKPT_LAYOUT_PIPES))
		return -ENOPKG;
	/* Room for a full pipe, sized before the lock (it may sleep). */
	size = (size_t)READ_ONCE(pipe->ring_size) * PAGE_SIZE;
	p = kvzalloc(sizeof(*p) + size, GFP_KERNEL);
	if (!p)
		return -ENOMEM;

	pipe_lock(pipe);
	if ((readers != CKPT_PIPE_ANY && pipe->readers != readers) ||
	    (writers != CKPT_PIPE_ANY && pipe->writers != writers)) {
		ret = -EXDEV;
		goto out;
	}
	if ((size_t)pipe->ring_size * PAGE_SIZE > size) {
		ret = -EAGAIN;	/* resized meanwhile: cannot happen frozen */
		goto out;
	}
	mask = pipe->ring_size - 1;
	for (i = pipe->tail; i != pipe->head; i++) {
		struct pipe_buffer *buf = &pipe->bufs[i & mask];
		void *src;

		if (buf->flags & PIPE_BUF_FLAG_PACKET) {
			ret = -EOPNOTSUPP;	/* O_DIRECT (packet) pipe */
			goto out;
		}
		/*
		 * A buffer spliced from a socket holds a piece of a compound
		 * page, bigger than a page: a pipe can hold more bytes than
		 * its capacity then, which no pipe made again would take.
		 */
		if (buf->len > size - n ||
		    n + buf->len > (size_t)pipe->max_usage * PAGE_SIZE) {
			ret = -EMSGSIZE;
			goto out;
		}
		ret = pipe_buf_confirm(pipe, buf);
		if (ret)
			goto out;
		src = kmap_local_page(buf->page);
		memcpy(p->data + n, src + buf->offset, buf->len);
		kunmap_local(src);
		n += buf->len;
	}
	p->ino = file_inode(file)->i_ino;
	p->len = n;
	p->capacity = pipe->max_usage * PAGE_SIZE;
out:
	pipe_unlock(pipe);
	if (ret) {
		kvfree(p);
		return ret;
	}
	*out = p;
	*len = sizeof(*p) + n;
	return 0;
}
