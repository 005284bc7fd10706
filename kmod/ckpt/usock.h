/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _CKPT_USOCK_H
#define _CKPT_USOCK_H

#include <linux/types.h>
#include <uapi/linux/ckpt_image.h>

struct file;

/* Whether @file is an AF_UNIX socket. */
bool ckpt_is_usock(struct file *file);

/*
 * @file's socket's inode number and its peer's (0, *@peer_file NULL: the
 * peer is closed): -EOPNOTSUPP with @why for a socket that is not an end
 * of a connected, unnamed pair. *@peer_file is compared only.
 */
int ckpt_usock_record(struct file *file, u64 *ino, u64 *peer_ino,
		      struct file **peer_file, const char **why);

/*
 * The USOCK section of @file's socket (kvmalloc'ed, *@len bytes): its
 * queued bytes, shutdown state and send buffer. -EOPNOTSUPP with @why for
 * a descriptor in flight or out-of-band data.
 */
int ckpt_usock_capture(struct file *file, u64 peer_ino,
		       struct ckpt_img_usock **out, size_t *len,
		       const char **why);

#endif /* _CKPT_USOCK_H */
