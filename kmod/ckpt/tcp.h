/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _CKPT_TCP_H
#define _CKPT_TCP_H

#include <linux/types.h>
#include <uapi/linux/ckpt_image.h>

struct file;
struct ckpt_cp_group;

/* Whether @file is a TCP socket, IPv4 or IPv6. */
bool ckpt_is_tcp(struct file *file);

/*
 * @file's TCP section, with its queues, kvmalloc'ed in *@out (*@out_len
 * bytes), read while its holder is frozen; a state the engine cannot
 * restore fails with *@why saying what it is. *@net is the socket's
 * network namespace, compared only.
 */
int ckpt_tcp_capture(struct file *file, struct ckpt_img_tcp **out,
		     size_t *out_len, const void **net, const char **why);

/*
 * The connections waiting in listening socket @file's accept queue, one
 * CKPT_TCP_WAITING section each at @out[0..), at most @room: how many,
 * or a refusal with *@why (-EAGAIN for a moment's state). Not a
 * listening socket: 0.
 */
int ckpt_tcp_capture_waiting(struct file *file, struct ckpt_img_tcp **out,
			     size_t *out_len, const void **net, u32 room,
			     const char **why);

/*
 * Once every member of @g is captured: every connection's peer is a
 * member's socket (a single process: its own), and the two ends' queues
 * join without a gap. Fails naming the member and its descriptor.
 */
int ckpt_tcp_check_pairs(struct ckpt_cp_group *g);

#endif /* _CKPT_TCP_H */
