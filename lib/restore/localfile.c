// SPDX-License-Identifier: GPL-2.0
/*
 * Files of a node's own file systems whose path is gone at restart: on
 * another node (a job restarted with --hosts: Open MPI's mpirun and orted
 * hold a FIFO and files in their session directory under /tmp, which is
 * the old node's), or on the same node once its temporary files were
 * cleaned. A FIFO keeps nothing on disk (its bytes are in the image); a
 * job's node-local file (CKPT_FILE_LOCAL) has its content in the image. Either
 * is made again where it was, its missing directories 0700, all as the
 * process's user (its fsuid, fsgid and groups, which drop root's file
 * capabilities): nothing is made where the user could not make it, no
 * symbolic link is followed and no other user's directory is used on the
 * way. A file that exists is never replaced: it is used if it is the one
 * it was (the caller checks), else the restart is refused.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "restore_int.h"

/* The files this restart made: a tree's members may share one. */
#define FILES_MADE_MAX	256

static struct {
	dev_t dev;
	ino_t ino;
} made[FILES_MADE_MAX];
static unsigned int nr_made;

bool restore_file_made(dev_t dev, ino_t ino)
{
	unsigned int i;

	for (i = 0; i < nr_made; i++)
		if (made[i].dev == dev && made[i].ino == ino)
			return true;
	return false;
}

bool restore_file_made_fd(int fd)
{
	struct stat st;

	return !fstat(fd, &st) && restore_file_made(st.st_dev, st.st_ino);
}

/*
 * @path's missing directories (0700), then the FIFO (@fdp NULL) or the
 * regular file (its descriptor, read-write, into *@fdp), as whoever calls,
 * walked from "/" one directory at a time: each a real directory (not a
 * symbolic link) owned by root or @uid, so that no other user's directory
 * or link decides where it goes. The file's identity into made[].
 */
static int make_path(const char *path, mode_t mode, uid_t uid, int *fdp)
{
	char buf[PATH_MAX], *comp, *next;
	int dfd, fd = -1, ret = 0;
	struct stat st;
	mode_t mask;

	if (nr_made == FILES_MADE_MAX)
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
	fd = -1;
	if (!ret && fdp) {
		/* Its mode once filled (restore_finish_object()). */
		fd = openat(dfd, comp, O_CREAT | O_EXCL | O_RDWR | O_NOFOLLOW |
			    O_CLOEXEC, 0600);
		if (fd < 0 || fstat(fd, &st))
			ret = -errno;
	} else if (!ret) {
		mask = umask(0);
		if (mkfifoat(dfd, comp, mode & 07777) ||
		    fstatat(dfd, comp, &st, AT_SYMLINK_NOFOLLOW) || !S_ISFIFO(st.st_mode))
			ret = -errno ?: -EEXIST;
		umask(mask);
	}
	if (dfd >= 0)
		close(dfd);
	if (ret) {
		if (fd >= 0)
			close(fd);
		return ret;
	}
	made[nr_made].dev = st.st_dev;
	made[nr_made].ino = st.st_ino;
	nr_made++;
	if (fdp)
		*fdp = fd;
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

/*
 * As @img's process's user: @o's file opened (@make false: -ENOENT if gone)
 * or made (@make true; a regular file's descriptor into *@fdp).
 */
static int as_user(const struct ckpt_image *img, const struct ckpt_img_fileobj *o,
		   bool make, int *fdp, struct ckpt_err *err)
{
	uid_t uid = img->has_creds ? img->creds.fsuid : img->proc.uid;
	gid_t gid = img->has_creds ? img->creds.fsgid : img->proc.gid;
	uid_t old_uid = setfsuid(-1);
	gid_t old_gid = setfsgid(-1), groups[NGROUPS_MAX];
	int ngroups = getgroups(NGROUPS_MAX, groups), ret;
	const char *what = o->kind == CKPT_FILE_FIFO ? "FIFO" : "node-local file";

	if (o->name[0] != '/' || strlen(o->name) >= PATH_MAX)
		return ckpt_err_set(err, EINVAL, "%s %.64s: not an absolute path",
				    what, o->name);
	if (ngroups < 0)
		return ckpt_err_set(err, errno, "getgroups: %s", strerror(errno));
	ret = become(uid, gid, img->has_creds ? (const gid_t *)img->groups : NULL,
		     img->has_creds ? img->creds.nr_groups : 0);
	if (!ret && make) {
		ret = make_path(o->name, o->mode, uid, fdp);
	} else if (!ret) {
		/* Read-write if the user may: a shared mapping may write. */
		*fdp = open(o->name, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
		if (*fdp < 0 && (errno == EACCES || errno == EROFS || errno == EPERM))
			*fdp = open(o->name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		ret = *fdp < 0 ? -errno : 0;
	}
	if (become(old_uid, old_gid, groups, ngroups)) {
		if (fdp && *fdp >= 0)
			close(*fdp);
		return ckpt_err_set(err, EPERM, "cannot take back the restarter's ids after %s %s %s",
				    make ? "making" : "opening", what, o->name);
	}
	if (ret == -ENOENT && !make)
		return ret;
	if (ret && make)
		return ckpt_err_set(err, -ret, "%s %s is gone and cannot be made again as uid %u: %s",
				    what, o->name, (unsigned int)uid,
				    ret == -EPERM ? "a directory on its path is another user's, or a symbolic link" :
				    ret == -ENFILE ? "too many files to make" : strerror(-ret));
	if (ret)
		return ckpt_err_set(err, -ret, "cannot open %s %s as uid %u: %s",
				    what, o->name, (unsigned int)uid, strerror(-ret));
	return 0;
}

bool restore_fifo_deleted(const struct ckpt_img_fileobj *o)
{
	size_t len = strnlen(o->name, sizeof(o->name));

	return o->kind == CKPT_FILE_FIFO && len > 10 &&
	       !memcmp(o->name + len - 10, " (deleted)", 10);
}

/*
 * In a directory of its own (0700, the restarter's: root's, or the
 * image's user's where a member makes it for itself) for the moment the
 * name exists: no other user can open it by that name before it is gone.
 */
int restore_fifo_unlinked(const struct ckpt_image *img,
			  const struct ckpt_img_fileobj *o, struct ckpt_err *err)
{
	uid_t uid = img->has_creds ? img->creds.fsuid : img->proc.uid;
	gid_t gid = img->has_creds ? img->creds.fsgid : img->proc.gid;
	char dir[] = "/tmp/ckpt-fifo.XXXXXX", path[sizeof(dir) + 8];
	int fd, ret;

	if (!mkdtemp(dir))
		return ckpt_err_set(err, errno, "cannot make a directory for unlinked FIFO %s: %s",
				    o->name, strerror(errno));
	snprintf(path, sizeof(path), "%s/fifo", dir);
	fd = mkfifo(path, 0600) ? -1 :
	     open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
	ret = fd < 0 ? -errno : 0;
	unlink(path);
	rmdir(dir);
	/* Its own mode once its descriptors are open (restore_finish_object()). */
	if (!ret && (fchown(fd, uid, gid) || fchmod(fd, 0600)))
		ret = -errno;
	if (ret) {
		if (fd >= 0)
			close(fd);
		return ckpt_err_set(err, -ret, "cannot make unlinked FIFO %s again (uid %u): %s",
				    o->name, (unsigned int)uid, strerror(-ret));
	}
	return fd;
}

int restore_fifo_make(const struct ckpt_image *img,
		      const struct ckpt_img_fileobj *o, struct ckpt_err *err)
{
	return as_user(img, o, true, NULL, err);
}

int restore_local_open(const struct ckpt_image *img,
		       const struct ckpt_img_fileobj *o, bool *made,
		       struct ckpt_err *err)
{
	int fd = -1, ret;

	*made = false;
	ret = as_user(img, o, false, &fd, err);
	if (ret == -ENOENT) {
		*made = true;
		ret = as_user(img, o, true, &fd, err);
	}
	return ret ? ret : fd;
}
