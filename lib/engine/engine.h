/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The one door to the engine: every open of /dev/ckpt and every ioctl on
 * it that the CLI, the restorer (lib/restore) and libckpt make goes
 * through here. Linked into the ckpt program and into libckpt (a shared
 * library loaded into applications), so it is built position-independent
 * with hidden symbols, depends on libc alone and never prints.
 *
 * Every function returns 0 (or a descriptor) on success, -errno on failure
 * with errno set as well. The ones a raw-cloned helper of libckpt calls
 * (ckpt_dev_checkpoint_to() and what it calls) make system calls only.
 *
 * One exception stays outside: the restorer's raw threads, which have no
 * glibc thread behind them, ask for CKPT_IOC_RESTART_THREAD with a raw
 * system call of their own (lib/restore/restore.c, thread_main()).
 */
#ifndef _CKPT_LIB_ENGINE_H
#define _CKPT_LIB_ENGINE_H

#include <stddef.h>
#include <sys/types.h>

#include <linux/ckpt.h>

/* Path of the engine's character device ($CKPT_DEVICE overrides it). */
const char *ckpt_dev_path(void);

/* Opens the device with @flags (O_RDWR...), close-on-exec: a descriptor or -errno. */
int ckpt_dev_open(int flags);

/* Asks the engine for its version. */
int ckpt_dev_version(struct ckpt_version *ver);

/* Sets the key of the engine's image MACs (CKPT_IOC_SET_KEY). */
int ckpt_dev_set_key(const void *key, unsigned int len);

/* Registers the caller's process on @dev (CKPT_IOC_REGISTER). */
int ckpt_dev_register(int dev, struct ckpt_register *reg);

/* Waits for the next checkpoint of the registered process (CKPT_IOC_CB_WAIT). */
int ckpt_dev_cb_wait(int dev, struct ckpt_cb_request *rq);

/* Gives the callbacks' verdict (CKPT_IOC_CB_READY): 0, 1 (restarted) or -errno. */
int ckpt_dev_cb_ready(int dev, struct ckpt_cb_ready *rd);

/* CKPT_IOC_CHECKPOINT of @a (its fd set by the caller) on @dev. */
int ckpt_dev_checkpoint(int dev, struct ckpt_checkpoint *a);

/* CKPT_IOC_CHECKPOINT_TREE of @a (its members' fds set by the caller) on @dev. */
int ckpt_dev_checkpoint_tree(int dev, struct ckpt_checkpoint_tree *a);

/* Where ckpt_dev_checkpoint_to() stopped, for the caller's message. */
enum ckpt_dev_step {
	CKPT_DEV_CREATE,	/* creating the temporary file */
	CKPT_DEV_CHECKPOINT,	/* the engine refused (a->errmsg says why) */
	CKPT_DEV_WRITE,		/* fsync() or close() of the temporary file */
	CKPT_DEV_RENAME,	/* renaming it to its final name */
};

/*
 * Checkpoints into the file @path so that a failure never damages an
 * earlier image of that name: the image goes to the temporary file @tmp
 * (mode 0600; a name ending in XXXXXX is made unique in place, as by
 * mkostemp(), any other must not exist yet), is synced, closed and renamed
 * to @path. On failure @tmp is gone and *@step says what failed.
 */
int ckpt_dev_checkpoint_to(int dev, struct ckpt_checkpoint *a,
			   const char *path, char *tmp,
			   enum ckpt_dev_step *step);

/* CKPT_IOC_RESTART of @a on @dev: returns only if the engine refused. */
int ckpt_dev_restart(int dev, struct ckpt_restart *a);

/* Hands the caller's credentials to the engine (CKPT_IOC_RESTART_CREDS). */
int ckpt_dev_restart_creds(int dev);

/* Every page of lazily restarted @pid is in (CKPT_IOC_LAZY_DONE). */
int ckpt_dev_lazy_done(int dev, pid_t pid);

#endif /* _CKPT_LIB_ENGINE_H */
