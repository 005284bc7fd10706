/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _CKPT_USOCK_H
#define _CKPT_USOCK_H

#include <linux/types.h>
#include <uapi/linux/ckpt_image.h>

struct file;
struct ckpt_cp_group;

/* Whether @file is an AF_UNIX socket. */
bool ckpt_is_usock(struct file *file);

/* Whether @file is a listening AF_UNIX socket. */
bool ckpt_usock_listening(struct file *file);

/*
 * @file's socket's inode number and its peer's (0, *@peer_file NULL: the
 * peer is closed, or @file is listening): 0 for an end of a connected
 * pair (a datagram pair: unnamed) or a listening socket,
 * CKPT_USOCK_NAMED for a socket ckpt_usock_capture_named() records (no
 * peer given), -EOPNOTSUPP with @why for another. *@peer_file is compared
 * only.
 */
#define CKPT_USOCK_NAMED	1

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
 * for a path, the socket file's owner and mode. -EOPNOTSUPP or
 * -ENAMETOOLONG with @why for a name the restart could not bind again.
 */
int ckpt_usock_listener(struct file *file, struct ckpt_img_ulisten *l,
			const char **why);

/*
 * The UNAME section of @file's socket, which ckpt_usock_record() said is
 * CKPT_USOCK_NAMED (kvmalloc'ed, *@len bytes): its name, its peer's, its
 * queued messages, shutdown state and send buffer. -EOPNOTSUPP or
 * -ENAMETOOLONG with @why for a name the restart could not bind or
 * connect to again, messages on a socket with no name, a descriptor in
 * flight.
 */
int ckpt_usock_capture_named(struct file *file, struct ckpt_img_uname **out,
			     size_t *len, const char **why);

/*
 * The connections waiting on @file's listening socket, in accept order:
 * one kvmalloc'ed UPEND section each in @out[0..*@nr) (@len bytes each),
 * at most @room. -E2BIG, -EOPNOTSUPP with @why.
 */
int ckpt_usock_pending(struct file *file, struct ckpt_img_upend **out,
		       size_t *len, u32 room, u32 *nr, const char **why);

/*
 * Once every member of @g is captured: each connection waiting to be
 * accepted has both its client (or none: closed) and its listening socket
 * among the members' (or the process's) sockets; -EOPNOTSUPP naming the
 * member and descriptor otherwise.
 */
int ckpt_usock_check_pending(struct ckpt_cp_group *g);

#endif /* _CKPT_USOCK_H */
