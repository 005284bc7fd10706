/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _CKPT_PTY_H
#define _CKPT_PTY_H

#include <linux/types.h>

struct file;
struct ckpt_fds;
struct ckpt_why;
struct ckpt_cp_group;

/* Whether @file is an end of a Unix 98 pseudo-terminal (ptmx, /dev/pts/N). */
bool ckpt_is_pty(struct file *file);

/*
 * The pseudo-terminal of the scan's entry @i: its PTY entry, once per
 * pair, read while its holder is frozen; the entry's @dev gets its end.
 * Bytes unread at this end fail it (-EAGAIN), named.
 */
int ckpt_pty_capture(struct ckpt_fds *scan, u32 i, struct ckpt_why *why);

/*
 * Once every member of @g is captured: the master of every pty a member
 * holds is a member's, and no two ptys share a number. Fails naming the
 * member and its descriptor.
 */
int ckpt_pty_check_pairs(struct ckpt_cp_group *g);

/*
 * Once the pairs are checked: each member of tree @g whose controlling
 * terminal is the slave of a pty the members hold, in a session a member
 * leads with the same terminal, has its TREE section say which
 * (CKPT_TREE_CTTY). Any other terminal is left out (engine.md, "The
 * terminal").
 */
void ckpt_pty_mark_ctty(struct ckpt_cp_group *g);

#endif /* _CKPT_PTY_H */
