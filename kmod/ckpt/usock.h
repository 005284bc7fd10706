/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _CKPT_USOCK_H
#define _CKPT_USOCK_H

#include <linux/types.h>
#include <uapi/linux/ckpt_image.h>

struct file;

/* Whether @file is an AF_UNIX socket. */
bool ckpt_is_usock(struct file *file);

/* Whether @file is a listening AF_UNIX socket. */
bool ckpt_usock_listening(struct file *file);

/*
 * @file's socket's inode number and its peer's (0, *@peer_file NULL: the
 * peer is closed, or @file is listening): -EOPNOTSUPP or -EBUSY with @why
 * for a socket that is neither an end of a connected pair (a datagram
 * pair: unnamed) nor listening. *@peer_file is compared only.
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

/*
 * The ULISTEN section of @file's listening socket: its name, backlog and,
 * for a path, the socket file's owner and mode. -EBUSY with @why while a
 * connection waits to be accepted; -EOPNOTSUPP or -ENAMETOOLONG for a name
 * the restart could not bind again.
 */
int ckpt_usock_listener(struct file *file, struct ckpt_img_ulisten *l,
			const char **why);

#endif /* _CKPT_USOCK_H */
