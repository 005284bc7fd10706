// SPDX-License-Identifier: GPL-2.0
/*
 * A tree's pseudo-terminals (PTY sections, image-format.md): each pair
 * made once, before any member exists, by the restarter: a new master
 * from /dev/ptmx and its slave, the slave's termios and window size and
 * the master's packet mode and lock set as they were, the slave owned by
 * the user of the first image that holds it. Members then place their
 * descriptors on the master (fd[0]) or the slave (fd[1]). The pair's
 * number in /dev/pts is the kernel's to give: it may differ.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "err.h"
#include "restore_int.h"

static int set_pair(const struct ckpt_img_pty *p, int master, int slave)
{
	struct winsize ws = {
		.ws_row = p->rows, .ws_col = p->cols,
		.ws_xpixel = p->xpixel, .ws_ypixel = p->ypixel,
	};
	struct termios t = {
		.c_iflag = p->iflag, .c_oflag = p->oflag,
		.c_cflag = p->cflag, .c_lflag = p->lflag,
		.c_line = p->line,
	};
	int on = 1;

	memcpy(t.c_cc, p->cc, CKPT_PTY_NCCS);
	if (tcsetattr(slave, TCSANOW, &t) || ioctl(master, TIOCSWINSZ, &ws))
		return -errno;
	if (p->flags & CKPT_PTY_PACKET && ioctl(master, TIOCPKT, &on))
		return -errno;
	if (p->flags & CKPT_PTY_LOCKED && ioctl(master, TIOCSPTLCK, &on))
		return -errno;
	return 0;
}

/* A new pair like @p, its ends at fd[0] (master) and fd[1] (slave). */
static int make_pair(const struct ckpt_img_pty *p, uid_t uid, int fd[2])
{
	char path[64];
	int unlock = 0, ret;

	fd[1] = -1;
	fd[0] = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (fd[0] < 0)
		return -errno;
	if (ioctl(fd[0], TIOCSPTLCK, &unlock) ||
	    ptsname_r(fd[0], path, sizeof(path)))
		goto fail;
	fd[1] = open(path, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (fd[1] < 0 || fchown(fd[1], uid, -1))
		goto fail;
	ret = set_pair(p, fd[0], fd[1]);
	if (!ret)
		return 0;
	errno = -ret;
fail:
	ret = -errno;
	close(fd[0]);
	if (fd[1] >= 0)
		close(fd[1]);
	return ret;
}

int restore_make_ptys(struct ckpt_image *const *imgs, uint32_t n,
		      struct restore_shared *sh, uint32_t *nr,
		      struct ckpt_err *err)
{
	uint32_t i, k;
	int ret;

	for (i = 0; i < n; i++) {
		for (k = 0; k < imgs[i]->nr_ptys; k++) {
			const struct ckpt_img_pty *p = &imgs[i]->ptys[k];
			struct restore_shared *s = &sh[*nr];

			if (restore_find_shared(sh, *nr, CKPT_FILE_PTY, 0,
						p->index))
				continue;
			ret = make_pair(p, imgs[i]->creds.uid, s->fd);
			if (ret)
				return ckpt_err_set(err, -ret, "cannot make a pseudo-terminal again for /dev/pts/%u: %s",
						    p->index, strerror(-ret));
			s->kind = CKPT_FILE_PTY;
			s->dev = 0;
			s->ino = p->index;
			(*nr)++;
		}
	}
	return 0;
}
