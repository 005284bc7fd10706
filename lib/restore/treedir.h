/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The image directory of a process tree (Documentation/image-format.md,
 * "Tree directories"): one image per member, named PID.img, and a
 * manifest listing them, parents first:
 *
 *     ckpt-tree 1
 *     id 0f1e...(32 hex digits, the TREE sections' id)
 *     members 4
 *     member 1200 -          (the root: no parent)
 *     member 1201 0          (its parent: member 0)
 *     member 1300 -          (another root: CKPT_TREE_ROOT)
 *     ...
 *
 * The manifest is a table of contents, not an authority: what a restart
 * trusts (pids, parents, the id) is in each image's TREE section, under
 * the engine's MAC, and must agree with it. Written by ckpt checkpoint
 * --tree (and ckptd later), read by the restorer and ckpt inspect; the
 * same error convention as the restorer's (restore.h).
 */
#ifndef _CKPT_RESTORE_TREEDIR_H
#define _CKPT_RESTORE_TREEDIR_H

#include <stdint.h>
#include <sys/types.h>

#include <linux/ckpt.h>
#include <linux/ckpt_image.h>

#include "restore.h"

#define CKPT_TREE_MANIFEST	"manifest"
#define CKPT_TREE_MAGIC		"ckpt-tree 1"

struct ckpt_tree_member_ent {
	pid_t pid;		/* in the tree's pid namespace */
	uint32_t parent;	/* member index, CKPT_TREE_NO_PARENT for the root */
};

struct ckpt_tree {
	uint8_t id[CKPT_TREE_ID_LEN];
	uint32_t nr;
	struct ckpt_tree_member_ent *m;	/* [nr], parents before children */
	/* [nr]: each image's SHA-256, when asked (CKPT_CHECKPOINT_DIGESTS) */
	uint8_t (*sums)[CKPT_DIGEST_LEN];
};

/*
 * Process @root and its descendants as they are now, parents first (each
 * one's children in the order /proc lists them): 0, or -errno with @err.
 */
int ckpt_tree_find(pid_t root, struct ckpt_tree *t, struct ckpt_err *err);

/*
 * Several trees as one set, @roots first, in that order, then their
 * descendants (a job's processes on a node whose parents are not the
 * job's: ckptd). @roots[0] is member 0, whose standard files are the
 * restarter's at a restart and whose status is the restart's.
 */
int ckpt_tree_find_roots(const pid_t *roots, uint32_t nr_roots,
			 struct ckpt_tree *t, struct ckpt_err *err);

/*
 * Checkpoints the tree of @root into the directory @dir, which must not
 * exist: the images and the manifest go to a temporary directory next to
 * it, are synced and the directory renamed to @dir only once complete, so
 * a failure leaves nothing. @a carries flags and timeout in, the engine's
 * results out; @t gets the members as the manifest has them (pids in the
 * tree's own pid namespace), *@res the engine's results per member
 * (caller's pids in pid). A tree that forked or lost a process meanwhile
 * is looked at again (eight tries in all); after a try in which a listed
 * process ended, the looks leave out children younger than a second that
 * have none of their own, which the engine waits for.
 */
int ckpt_tree_checkpoint(int dev, struct ckpt_checkpoint_tree *a, pid_t root,
			 const char *dir, struct ckpt_tree *t,
			 struct ckpt_tree_member **res, struct ckpt_err *err);

/* Several trees taken as one set: at most this many. */
#define CKPT_TREE_MAX_ROOTS	64

/*
 * Where the trees are: @find fills @roots (at most @max, member 0 first:
 * ckpt_tree_find_roots()) and returns their count, or -errno with @err.
 * Called before each try, as the trees may change between two.
 */
struct ckpt_roots {
	int (*find)(void *arg, pid_t *roots, uint32_t max, struct ckpt_err *err);
	void *arg;
};

/* The same for the trees @roots finds (CKPT_CHECKPOINT_ROOTS for several). */
int ckpt_trees_checkpoint(int dev, struct ckpt_checkpoint_tree *a,
			  const struct ckpt_roots *roots,
			  const char *dir, struct ckpt_tree *t,
			  struct ckpt_tree_member **res, struct ckpt_err *err);

/*
 * renameat2(RENAME_NOREPLACE), and where the file system lacks the flag
 * (EINVAL: 9p, older NFS, where shared snapshot roots live) a check for
 * the name, then renameat(). 0, or -1 with errno.
 */
int ckpt_rename_noreplace(int olddfd, const char *old, int newdfd,
			  const char *new);

/* Reads and checks @dir's manifest: 0, or -errno with @err naming the line. */
int ckpt_tree_read(const char *dir, struct ckpt_tree *t, struct ckpt_err *err);

/* @dir/PID.img of member @i, into @buf of @len bytes: 0 or -ENAMETOOLONG. */
int ckpt_tree_image_path(const char *dir, const struct ckpt_tree *t,
			 uint32_t i, char *buf, size_t len);

struct ckpt_image;

/*
 * Member @i's image @img (read from @path) against the manifest: its TREE
 * section has the manifest's id, place and parent, its pids the
 * manifest's. 0, or -EINVAL with @err naming @path and what differs.
 */
int ckpt_tree_check(const struct ckpt_tree *t, uint32_t i,
		    const struct ckpt_image *img, const char *path,
		    struct ckpt_err *err);

void ckpt_tree_free(struct ckpt_tree *t);

/*
 * @pid's state letter, parent and start time (clock ticks after boot),
 * from /proc/PID/stat: 0, or -1 if it is gone or cannot be read.
 */
int ckpt_proc_stat(long pid, char *state, long *ppid, unsigned long long *start);

#endif /* _CKPT_RESTORE_TREEDIR_H */
