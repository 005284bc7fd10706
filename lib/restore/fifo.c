// SPDX-License-Identifier: GPL-2.0
/*
 * A named FIFO whose path is gone at restart: on another node (a job
 * restarted with --hosts: Open MPI's mpirun holds a FIFO in its session
 * directory under /tmp, which is the old node's), or on the same node
 * once its temporary files were cleaned. A FIFO keeps nothing on disk
 * (its bytes are in the image), so it is made again where it was, with
 * its mode, its missing directories 0700, all as the process's user (its
 * fsuid, fsgid and groups, which drop root's file capabilities): nothing
 * is made where the user could not make it, no symbolic link is followed
 * and no other user's directory is used on the way. A FIFO that exists is
 * never replaced.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
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

/*
 * @path's missing directories (0700), then the FIFO, as whoever calls,
 * walked from "/" one directory at a time: each a real directory (not a
 * symbolic link) owned by root or @uid, so that no other user's directory
 * or link decides where it goes. The FIFO's identity into made[].
 */
static int make_path(const char *path, mode_t mode, uid_t uid)
{
	char buf[PATH_MAX], *comp, *next;
	int dfd, fd, ret = 0;
	struct stat st;
	mode_t mask;

	if (nr_made == FIFOS_MADE_MAX)
		return -ENFILE;
	dfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	strcpy(buf, path + 1);
	for (comp = buf; !ret && (next = strchr(comp, '/')); comp = next + 1) {
		*next = '\0';
		if (!*comp || !strcmp(comp, ".") || !strcmp(comp, ".."))
			ret = -EINVAL;
		fd = ret ? -1 : openat(dfd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (!ret && fd < 0 && errno == ENOENT &&
		    (!mkdirat(dfd, comp, 0700) || errno == EEXIST))
			fd = openat(dfd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (!ret && fd < 0)
			ret = -errno;
		else if (!ret && (fstat(fd, &st) || (st.st_uid && st.st_uid != uid)))
			ret = -EPERM;
		close(dfd);
		dfd = fd;
	}
	if (!ret) {
		mask = umask(0);
		if (mkfifoat(dfd, comp, mode & 07777) ||
		    fstatat(dfd, comp, &st, AT_SYMLINK_NOFOLLOW) || !S_ISFIFO(st.st_mode))
			ret = -errno ?: -EEXIST;
		umask(mask);
	}
	if (dfd >= 0)
		close(dfd);
	if (ret)
		return ret;
	made[nr_made].dev = st.st_dev;
	made[nr_made].ino = st.st_ino;
	nr_made++;
	return 0;
}

/* The process's file-system ids and groups, or the restarter's back (@back). */
static int become(uid_t uid, gid_t gid, const gid_t *groups, size_t n)
{
	if (setgroups(n, groups))
		return -errno;
	setfsgid(gid);
	setfsuid(uid);
	/* setfsuid() says nothing of a failure but what it leaves. */
	if ((uid_t)setfsuid(-1) != uid || (gid_t)setfsgid(-1) != gid)
		return -EPERM;
	return 0;
}

int restore_fifo_make(const struct ckpt_image *img,
		      const struct ckpt_img_fileobj *o, struct ckpt_err *err)
{
	uid_t uid = img->has_creds ? img->creds.fsuid : img->proc.uid;
	gid_t gid = img->has_creds ? img->creds.fsgid : img->proc.gid;
	uid_t old_uid = setfsuid(-1);
	gid_t old_gid = setfsgid(-1), groups[NGROUPS_MAX];
	int ngroups = getgroups(NGROUPS_MAX, groups), ret;

	if (o->name[0] != '/' || strlen(o->name) >= PATH_MAX)
		return ckpt_err_set(err, EINVAL, "FIFO %.64s: not an absolute path",
				    o->name);
	if (ngroups < 0)
		return ckpt_err_set(err, errno, "getgroups: %s", strerror(errno));
	ret = become(uid, gid, img->has_creds ? (const gid_t *)img->groups : NULL,
		     img->has_creds ? img->creds.nr_groups : 0);
	if (!ret)
		ret = make_path(o->name, o->mode, uid);
	if (become(old_uid, old_gid, groups, ngroups))
		return ckpt_err_set(err, EPERM, "cannot take back the restarter's ids after making FIFO %s",
				    o->name);
	if (ret)
		return ckpt_err_set(err, -ret, "FIFO %s is gone and cannot be made again as uid %u: %s",
				    o->name, (unsigned int)uid,
				    ret == -EPERM ? "a directory on its path is another user's, or a symbolic link" :
				    ret == -ENFILE ? "too many FIFOs to make" : strerror(-ret));
	return 0;
}
