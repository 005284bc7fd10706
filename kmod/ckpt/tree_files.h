/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _CKPT_TREE_FILES_H
#define _CKPT_TREE_FILES_H

struct ckpt_cp_group;
struct file;

/*
 * The pipes a frozen tree's members hold, counted across the tree: 0
 * when every end of each is held by members only, else fails naming the
 * first member and descriptor that holds one with an end elsewhere.
 * @root_stdio (the root's 0-2, compared only) are not counted.
 */
int ckpt_tree_check_files(struct ckpt_cp_group *g,
			  const struct file *const root_stdio[3]);

/*
 * Once every member is captured: the file objects the members hold
 * (memfds, deleted files, FIFOs, MAP_SHARED anonymous memory), counted
 * across the tree. 0 when only members hold each, else fails naming the
 * member and the descriptor or mapping; on success every object's content
 * is left to its first holder's image. Then the open regular files and
 * directories several members hold are marked CKPT_FILE_TREE_SHARED.
 */
int ckpt_tree_check_shared(struct ckpt_cp_group *g);

#endif /* _CKPT_TREE_FILES_H */
