// SPDX-License-Identifier: GPL-2.0
/*
 * An inotify instance made again: its watches, each added at the path the
 * image names (the file it was: its identity, or one the restart made),
 * with the number it had, so the events a program reads carry the watch
 * descriptors it keeps (engine.md, "inotify").
 *
 * inotify_add_watch() takes no number: the kernel gives the lowest free one
 * from a cursor that only moves up. INOTIFY_IOC_SETNEXTWD (a kernel with
 * CONFIG_CHECKPOINT_RESTORE, as Debian's) sets that cursor: to each
 * watch's number before it is added, and at the end to the number the
 * next watch would have got. Without it, a number the image skips is used
 * up by a watch on a file of our own (a memfd) removed at once, its
 * IN_IGNORED event read away.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* <linux/inotify.h>'s, which <fcntl.h> cannot sit beside. */
#ifndef INOTIFY_IOC_SETNEXTWD
#define INOTIFY_IOC_SETNEXTWD	_IOW('I', 0, __s32)
#endif

#include "err.h"
#include "restore_int.h"

struct numbering {
	int ifd;
	int spare;	/* the memfd watched to use numbers up, or -1 */
	int next;	/* the number the next watch gets */
};

/* A watch on @path (a file of ours, /proc/self/fd/N): its number. */
static int add(struct numbering *n, const char *path, __u32 mask)
{
	int wd = inotify_add_watch(n->ifd, path, mask);

	if (wd >= 0)
		n->next = wd + 1;
	return wd;
}

/*
 * The next watch numbered @wd: the cursor set there, or the numbers below
 * it used up, and what that says on the queue read away.
 */
static int use_up_to(struct numbering *n, int wd, struct ckpt_err *err)
{
	char path[64], buf[4096];
	int got;

	if (!ioctl(n->ifd, INOTIFY_IOC_SETNEXTWD, wd)) {
		n->next = wd;
		return 0;
	}
	if (wd - n->next > 65536)
		return ckpt_err_set(err, ENOTSUP, "cannot number an inotify watch %d again: this kernel cannot set the next number (INOTIFY_IOC_SETNEXTWD)",
				    wd);
	while (n->next < wd) {
		if (n->spare < 0)
			n->spare = memfd_create("ckpt-inotify", MFD_CLOEXEC);
		snprintf(path, sizeof(path), "/proc/self/fd/%d", n->spare);
		got = n->spare < 0 ? -1 : add(n, path, IN_ATTRIB);
		if (got < 0 || inotify_rm_watch(n->ifd, got))
			return ckpt_err_set(err, errno, "cannot number an inotify watch %d again: %s",
					    wd, strerror(errno));
		while (read(n->ifd, buf, sizeof(buf)) > 0)
			;
	}
	return 0;
}

/* Watch @w at its path, as the file it was, with its number. */
static int add_watch(const struct restore *r, struct numbering *n,
		     const struct ckpt_img_inotify *w, struct ckpt_err *err)
{
	char path[64];
	struct stat st;
	int fd, got, ret;

	ret = use_up_to(n, w->wd, err);
	if (ret)
		return ret;
	fd = open(w->path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return ckpt_err_set(err, errno, "cannot watch %s with inotify fd %u again: %s",
				    w->path, w->fd, strerror(errno));
	if (fstat(fd, &st) || !restore_same_or_made(r, &st, w->dev, w->ino)) {
		close(fd);
		return ckpt_err_set(err, ESTALE, "%s, which inotify fd %u watches, is not the file it was at the checkpoint",
				    w->path, w->fd);
	}
	/* The magic link leads to that very file, even a symbolic link. */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	got = add(n, path, w->mask);
	ret = got < 0 ? errno : 0;
	close(fd);
	if (got < 0)
		return ckpt_err_set(err, ret, "cannot watch %s with inotify fd %u again: %s",
				    w->path, w->fd, strerror(ret));
	if (got != w->wd)
		return ckpt_err_set(err, EEXIST, "inotify fd %u watches %s again as %d, not %d",
				    w->fd, w->path, got, w->wd);
	return 0;
}

int restore_make_inotify(const struct restore *r, const struct ckpt_img_file *f,
			 struct ckpt_err *err)
{
	const struct ckpt_image *img = &r->img;
	struct numbering n = { .spare = -1, .next = 1 };
	char buf[4096];
	uint32_t i;
	int ret = 0;

	n.ifd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	if (n.ifd < 0)
		return ckpt_err_set(err, errno, "cannot make inotify fd %u again: %s",
				    f->fd, strerror(errno));
	for (i = 0; !ret && i < img->nr_inotify; i++)
		if (img->inotify[i].fd == f->fd)
			ret = add_watch(r, &n, &img->inotify[i], err);
	if (!ret)
		ret = use_up_to(&n, (int)f->pos, err);
	if (n.spare >= 0)
		close(n.spare);
	while (!ret && read(n.ifd, buf, sizeof(buf)) > 0)
		;
	if (!ret && !(f->open_flags & O_NONBLOCK) &&
	    fcntl(n.ifd, F_SETFL, 0))
		ret = ckpt_err_set(err, errno, "cannot make inotify fd %u blocking again: %s",
				   f->fd, strerror(errno));
	if (ret) {
		close(n.ifd);
		return ret;
	}
	return n.ifd;
}

void restore_inotify_drain(const struct ckpt_image *img)
{
	char buf[4096];
	uint32_t i;
	int fl;

	for (i = 0; i < img->nr_files; i++) {
		const struct ckpt_img_file *f = &img->files[i];

		if (f->kind != CKPT_FILE_INOTIFY)
			continue;
		fl = fcntl(f->fd, F_GETFL);
		if (fl < 0 || fcntl(f->fd, F_SETFL, fl | O_NONBLOCK))
			continue;
		while (read(f->fd, buf, sizeof(buf)) > 0)
			;
		fcntl(f->fd, F_SETFL, fl);
	}
}
