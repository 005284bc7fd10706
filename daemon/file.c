// SPDX-License-Identifier: GPL-2.0
/*
 * Files ckptd writes whole (job records, snapshot metadata and its MAC):
 * a temporary name, fsync, rename over the final name, fsync of the
 * directory. A reader sees the old file or the new one, never a part.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ckptd.h"

int fsync_dir(int dirfd)
{
	return fsync(dirfd) ? -errno : 0;
}

int file_write_atomic(int dirfd, const char *name, const void *buf,
		      size_t len, mode_t mode)
{
	char tmp[NAME_MAX + 1];
	const char *p = buf;
	int fd, ret = 0;
	ssize_t n;

	if (snprintf(tmp, sizeof(tmp), ".%s.tmp", name) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW |
		    O_CLOEXEC, mode);
	if (fd < 0)
		return -errno;
	while (len) {
		n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ret = n < 0 ? -errno : -ENOSPC;
			break;
		}
		p += n;
		len -= n;
	}
	if (!ret && fsync(fd))
		ret = -errno;
	if (close(fd) && !ret)
		ret = -errno;
	if (!ret && renameat(dirfd, tmp, dirfd, name))
		ret = -errno;
	if (ret)
		unlinkat(dirfd, tmp, 0);
	else
		ret = fsync_dir(dirfd);
	return ret;
}

int file_read_max(int dirfd, const char *name, char **buf, size_t *len,
		  size_t max)
{
	struct stat st;
	size_t have = 0;
	ssize_t n;
	int fd;

	*buf = NULL;
	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (size_t)st.st_size > max) {
		close(fd);
		return -EFBIG;
	}
	*buf = malloc(st.st_size + 1);
	if (!*buf) {
		close(fd);
		return -ENOMEM;
	}
	while (have < (size_t)st.st_size) {
		n = read(fd, *buf + have, st.st_size - have);
		if (n <= 0)
			break;
		have += n;
	}
	close(fd);
	if (have != (size_t)st.st_size) {
		free(*buf);
		*buf = NULL;
		return -EIO;
	}
	(*buf)[have] = '\0';
	*len = have;
	return 0;
}

static int rm_one(const char *path, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

void file_remove_tree(const char *path)
{
	nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}
