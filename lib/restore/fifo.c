// SPDX-License-Identifier: GPL-2.0
/*
 * A named FIFO whose path is gone at restart: on another node (a job
 * restarted with --hosts: Open MPI's mpirun holds a FIFO in its session
 * directory under /tmp, which is the old node's), or on the same node
 * once its temporary files were cleaned. A FIFO keeps nothing on disk
 * (its bytes are in the image), so it is made again where it was, with
 * its mode, its missing directories 0700, all as the process's user (its
 * fsuid and fsgid, which drop root's file capabilities): nothing is made
 * where the user could not make it, and a symbolic link is followed only
 * as the user would follow it. A FIFO that exists is never replaced.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "restore_int.h"

/* The FIFOs this restart made: a tree's members may share one. */
#define FIFOS_MADE_MAX	64

static struct {
	dev_t dev;
	ino_t ino;
} made[FIFOS_MADE_MAX];
static unsigned int nr_made;

bool restore_fifo_made(dev_t dev, ino_t ino)
{
	unsigned int i;

	for (i = 0; i < nr_made; i++)
		if (made[i].dev == dev && made[i].ino == ino)
			return true;
	return false;
}

/* @path's missing directories, then the FIFO, as whoever calls. */
static int make_path(char *path, mode_t mode)
{
	char *slash;
	struct stat st;

	for (slash = strchr(path + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		if (mkdir(path, 0700) && errno != EEXIST) {
			*slash = '/';
			return -errno;
		}
		*slash = '/';
	}
	if (mkfifo(path, mode & 07777))
		return -errno;
	if (chmod(path, mode & 07777) || stat(path, &st))
		return -errno;
	if (nr_made < FIFOS_MADE_MAX) {
		made[nr_made].dev = st.st_dev;
		made[nr_made].ino = st.st_ino;
		nr_made++;
	}
	return 0;
}

int restore_fifo_make(const struct ckpt_image *img,
		      const struct ckpt_img_fileobj *o, struct ckpt_err *err)
{
	uid_t uid = img->has_creds ? img->creds.fsuid : img->proc.uid;
	gid_t gid = img->has_creds ? img->creds.fsgid : img->proc.gid;
	uid_t old_uid;
	gid_t old_gid;
	char path[PATH_MAX];
	int ret;

	if (o->name[0] != '/' || strlen(o->name) >= sizeof(path))
		return ckpt_err_set(err, EINVAL, "FIFO %.64s: not an absolute path",
				    o->name);
	strcpy(path, o->name);
	old_gid = setfsgid(gid);
	old_uid = setfsuid(uid);
	ret = make_path(path, o->mode);
	setfsuid(old_uid);
	setfsgid(old_gid);
	if (ret)
		return ckpt_err_set(err, -ret, "FIFO %s is gone and cannot be made again as uid %u: %s",
				    o->name, (unsigned int)uid, strerror(-ret));
	return 0;
}
