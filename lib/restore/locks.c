// SPDX-License-Identifier: GPL-2.0
/*
 * The file locks of an image taken again (Documentation/engine.md, "File
 * locks"), by the restarted process itself once its descriptors are all in
 * place and the restarter's copies closed: closing any descriptor of a
 * file drops the process's record locks on it (the engine closes the
 * restarter's descriptors of file objects without that: restart.c). A lock
 * another process holds now, conflicting, fails the restart, naming it:
 * the restarted process would otherwise run without a lock it had. One
 * held for a moment (a monitor's flock -n) is waited for, 2 s at most, as
 * the engine does for a mapping's flock() (kmod/ckpt/locks.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>

#include "err.h"
#include "restore_int.h"

static const char *lock_name(const struct ckpt_img_lock *l)
{
	static const char *const names[2][3] = {
		{ "flock() read", "record read", "open file description read" },
		{ "flock() write", "record write", "open file description write" },
	};

	return names[l->type == CKPT_LOCK_WRITE][l->kind - CKPT_LOCK_FLOCK];
}

static int take(const struct ckpt_img_lock *l)
{
	struct flock fl = {
		.l_type = l->type == CKPT_LOCK_WRITE ? F_WRLCK : F_RDLCK,
		.l_whence = SEEK_SET,
		.l_start = (off_t)l->start,
		.l_len = l->end == CKPT_LOCK_TO_EOF ? 0 :
			 (off_t)(l->end - l->start + 1),
	};

	if (l->kind == CKPT_LOCK_FLOCK)
		return flock(l->fd, (l->type == CKPT_LOCK_WRITE ? LOCK_EX :
				     LOCK_SH) | LOCK_NB);
	return fcntl(l->fd, l->kind == CKPT_LOCK_OFD ? F_OFD_SETLK : F_SETLK,
		     &fl);
}

#define LOCK_NAP_NS	20000000L	/* 20 ms */
#define LOCK_TRIES	100		/* 2 s in all, for every lock */

static bool in_the_way(int e)
{
	return e == EAGAIN || e == EACCES || e == EWOULDBLOCK;
}

int restore_take_locks(const struct ckpt_image *img, struct ckpt_err *err)
{
	const struct timespec nap = { 0, LOCK_NAP_NS };
	unsigned int tries = 0;
	uint32_t i, k;

	for (i = 0; i < img->nr_locks; i++) {
		const struct ckpt_img_lock *l = &img->locks[i];
		const char *path = "?";
		int ret;

		while ((ret = take(l)) && in_the_way(errno) &&
		       tries++ < LOCK_TRIES)
			nanosleep(&nap, NULL);
		if (!ret)
			continue;
		for (k = 0; k < img->nr_files; k++)
			if (img->files[k].fd == l->fd)
				path = img->files[k].path;
		if (in_the_way(errno))
			return ckpt_err_set(err, EBUSY, "pid %u fd %u (%s): cannot take its %s lock again: another process holds a lock on it now",
					    img->proc.pid, l->fd, path,
					    lock_name(l));
		return ckpt_err_set(err, errno, "pid %u fd %u (%s): cannot take its %s lock again: %s",
				    img->proc.pid, l->fd, path, lock_name(l),
				    strerror(errno));
	}
	return 0;
}
