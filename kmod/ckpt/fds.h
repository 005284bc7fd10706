/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _CKPT_FDS_H
#define _CKPT_FDS_H

#include <linux/types.h>
#include <uapi/linux/ckpt_image.h>

#include "fileobj.h"

struct task_struct;
struct pid_namespace;
struct files_struct;
struct file;
struct ckpt_reg;
struct ckpt_why;

/*
 * A frozen process's descriptors, as the image records them: one FILES
 * entry per descriptor above 2 (a tree's member: every descriptor), with what each kind needs beside it
 * (PIPE, TIMERFD and EPOLL sections, the file objects carried by content).
 */
struct ckpt_ipc;

struct ckpt_fds {
	struct ckpt_img_file *files;	/* CKPT_IMG_MAX_FILES of them */
	struct file **refs;		/* files needing more, referenced */
	const struct file **seen;	/* per entry: its open file, unreferenced */
	unsigned long *raw_ino;		/* per entry: the inode behind it */
	u32 *raw_dev;
	struct ckpt_img_epitem *epitems;	/* CKPT_IMG_MAX_EPITEMS */
	unsigned long *ep_ino;		/* per item: the watched file */
	u32 *ep_dev;
	u32 nr_epitems;
	struct ckpt_img_timerfd *timerfds;	/* CKPT_IMG_MAX_FILES */
	u32 nr_timerfds;
	struct ckpt_img_lock *locks;	/* the LOCKS section: locks.c */
	u32 nr_locks;
	/*
	 * flock() locks held through a mapping only (locks.c): their open
	 * files, compared only (a reference would count as another holder's
	 * in fileobj.c), and CKPT_VMA_FLOCK_* for the first VMA of each.
	 */
	const struct file *flock_maps[CKPT_IMG_MAX_FLOCK_MAPS];
	u32 flock_map_flag[CKPT_IMG_MAX_FLOCK_MAPS];
	u32 nr_flock_maps;
	struct ckpt_fileobjs objs;	/* FIFOs, memfds, deleted files */
	struct ckpt_img_pipe **pipes;	/* CKPT_IMG_MAX_FILES: PIPE sections */
	size_t *pipe_len;
	u32 nr_pipes;
	struct ckpt_img_usock **usocks;	/* CKPT_IMG_MAX_FILES: USOCK sections */
	size_t *usock_len;
	u32 nr_usocks;
	struct ckpt_img_ulisten *ulistens; /* CKPT_IMG_MAX_FILES, at the first */
	u32 nr_ulistens;
	struct ckpt_img_upend **upends;	/* CKPT_IMG_MAX_FILES, at the first */
	size_t *upend_len;
	u32 nr_upends;
	struct ckpt_img_uname **unames;	/* CKPT_IMG_MAX_FILES, at the first */
	size_t *uname_len;
	u32 nr_unames;
	struct ckpt_img_tcp **tcps;	/* CKPT_IMG_MAX_FILES: TCP sections */
	size_t *tcp_len;
	const void **tcp_net;		/* per section: its network namespace */
	u32 nr_tcps;
	struct ckpt_img_pty *ptys;	/* CKPT_IMG_MAX_FILES: PTY entries */
	const void **pty_master;	/* per entry: its master, compared only */
	u8 *pty_ends;			/* per entry: CKPT_PTY_* ends held */
	u32 nr_ptys;
	u32 nr;
	struct files_struct *files_table;
	unsigned int bad_fd;
	struct file *bad;		/* referenced */
	const struct file *registered;	/* the process's registration */
	struct pid *tgid;		/* the process's, compared only */
	struct task_struct *task;	/* the process, the caller's reference */
	/* Where the image numbers processes: a tree's, else the caller's. */
	struct pid_namespace *pid_ns;
	struct ckpt_img_inotify *inotify;	/* CKPT_IMG_MAX_INOTIFY, at the first */
	u32 nr_inotify;
	/*
	 * Set by tree.c for a tree's member before the scan: its pipes'
	 * ends were counted across the tree (tree_files.c), a descriptor
	 * of one of the root's standard files (compared only) is recorded
	 * as CKPT_FILE_STDIO, and a member other than the root has its
	 * descriptors 0-2 recorded too.
	 */
	bool in_tree, all_fds;
	bool local_files;		/* CKPT_CHECKPOINT_LOCAL_FILES */
	const struct cred *cred;	/* the process's, referenced */
	const struct file *root_stdio[3];
	const struct ckpt_ipc *ipc;	/* a tree's: ckpt_ipc_capture() */
};

/*
 * Walks @task's file table and reads what the walk could not: fails,
 * named in @why, on the first descriptor the engine cannot restore.
 * @reg is the process's libckpt registration, if any. Free with
 * ckpt_fds_free() whatever it returns.
 */
int ckpt_fds_capture(struct task_struct *task, struct ckpt_fds *scan,
		     const struct ckpt_reg *reg, struct ckpt_why *why);
void ckpt_fds_free(struct ckpt_fds *scan);

#endif /* _CKPT_FDS_H */
