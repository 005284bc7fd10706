// SPDX-License-Identifier: GPL-2.0
/*
 * Where a job's snapshots go (Documentation/ckptd.md, "Snapshot
 * directories"): ROOT/JOB, ROOT being ckptd's snapshot root or a
 * directory the job's user named with --dir.
 *
 * A --dir is the user's: they may rename what is in it at any moment, ROOT/JOB
 * too, and put a symbolic link to /etc in its place. So ckptd never
 * walks that path again once ROOT/JOB is open: it checks that what it
 * opened is its own (root's, mode 0700, made by ckptd), and works through
 * /proc/self/fd/N, which names that directory whatever is done to the
 * names around it. What is inside is root's alone.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ckptd.h"
#include "err.h"

int snapdir_root_open(const char *dir, uid_t uid, struct ckpt_err *err)
{
	struct stat st;
	int fd;

	if (!dir || *dir != '/' || strlen(dir) >= CKPTD_DIR_MAX)
		return ckpt_err_set(err, EINVAL, "--dir must be an absolute path of at most %d bytes",
				    CKPTD_DIR_MAX - 1);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return ckpt_err_set(err, errno, "--dir %s: %s", dir, strerror(errno));
	if (fstat(fd, &st)) {
		close(fd);
		return ckpt_err_set(err, errno, "--dir %s: %s", dir, strerror(errno));
	}
	if (uid && (st.st_uid != uid || !(st.st_mode & S_IWUSR))) {
		close(fd);
		return ckpt_err_set(err, EPERM, "--dir %s is not a directory of yours (its owner is uid %u)",
				    dir, (unsigned int)st.st_uid);
	}
	return fd;
}

int snapdir_root_check(const char *dir, uid_t uid, struct ckpt_err *err)
{
	int fd = snapdir_root_open(dir, uid, err);

	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

int snapdir_open(struct snapdir *sd, const struct ckptd *d, const char *dir,
		 const char *id, uid_t uid, bool create, struct ckpt_err *err)
{
	bool user = dir && *dir;
	const char *root = user ? dir : d->cfg.snapshot_root;
	struct stat st;
	int rfd, ret = 0;

	sd->fd = -1;
	if (snprintf(sd->shown, sizeof(sd->shown), "%s/%s", root, id) >=
	    (int)sizeof(sd->shown))
		return ckpt_err_set(err, ENAMETOOLONG, "%s: too long", root);
	rfd = user ? snapdir_root_open(dir, uid, err) :
		     open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rfd < 0)
		return user ? rfd : ckpt_err_set(err, errno, "%s: %s", root,
						 strerror(errno));
	if (create && mkdirat(rfd, id, 0700) && errno != EEXIST)
		ret = ckpt_err_set(err, errno, "cannot create %s: %s", sd->shown,
				   strerror(errno));
	if (!ret) {
		sd->fd = openat(rfd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sd->fd < 0)
			ret = ckpt_err_set(err, errno, "%s: %s", sd->shown,
					   strerror(errno));
	}
	close(rfd);
	if (!ret && user && (fstat(sd->fd, &st) || st.st_uid || (st.st_mode & 077)))
		ret = ckpt_err_set(err, EPERM, "%s is not ckptd's (owner uid %u, mode %04o): nothing is written there",
				   sd->shown, (unsigned int)st.st_uid,
				   (unsigned int)(st.st_mode & 07777));
	if (ret) {
		snapdir_close(sd);
		return ret;
	}
	snprintf(sd->path, sizeof(sd->path), "/proc/self/fd/%d", sd->fd);
	return 0;
}

/*
 * Whether SEQ.tmp at @path is still a live worker's: it holds an flock on
 * it as long as it lives (prepare()), even with the ckptd that started it
 * gone, and finishes (or removes) it on its own.
 */
bool snapdir_tmp_in_use(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	bool busy;

	if (fd < 0)
		return false;
	busy = flock(fd, LOCK_EX | LOCK_NB) && errno == EWOULDBLOCK;
	close(fd);
	return busy;
}

unsigned int snapdir_sweep(struct ckptd *d, const struct snapdir *sd,
			   const char *id, const char *what)
{
	unsigned int live = 0;
	char path[PATH_MAX];
	struct dirent *e;
	int fd = dup(sd->fd);
	DIR *dir = fd < 0 ? NULL : fdopendir(fd);
	size_t n;

	if (!dir) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	while ((e = readdir(dir))) {
		n = strlen(e->d_name);
		if (n < 5 || strcmp(e->d_name + n - 4, ".tmp") ||
		    snprintf(path, sizeof(path), "%s/%s", sd->path, e->d_name) >=
		    (int)sizeof(path))
			continue;
		if (snapdir_tmp_in_use(path)) {
			unsigned long seq = strtoul(e->d_name, NULL, 10);

			ckptd_log(d, 1, "job %s: %s is a live worker's, which finishes it",
				  id, e->d_name);
			if (seq > live && seq <= UINT32_MAX)
				live = seq;
			continue;
		}
		file_remove_tree(path);
		ckptd_log(d, 1, "job %s: %s, left by a %s cut short, removed", id,
			  e->d_name, what);
	}
	closedir(dir);
	return live;
}

void snapdir_close(struct snapdir *sd)
{
	if (sd->fd >= 0)
		close(sd->fd);
	sd->fd = -1;
}

void snapdir_shown(const struct snapdir *sd, struct ckpt_err *err)
{
	size_t plen = strlen(sd->path), slen = strlen(sd->shown), n = 0;
	const char *from = err->msg, *at;
	char out[sizeof(err->msg)];

	if (sd->fd < 0)
		return;
	while ((at = strstr(from, sd->path)) &&
	       n + (at - from) + slen < sizeof(out)) {
		memcpy(out + n, from, at - from);
		n += at - from;
		memcpy(out + n, sd->shown, slen);
		n += slen;
		from = at + plen;
	}
	snprintf(out + n, sizeof(out) - n, "%s", from);
	memcpy(err->msg, out, sizeof(out));
}

int snapdir_latest(int dfd, unsigned int seq, bool newer_only)
{
	char name[16], link[16], *end;
	ssize_t n;

	if (newer_only) {
		n = readlinkat(dfd, "latest", link, sizeof(link) - 1);
		link[n > 0 ? n : 0] = '\0';
		if (n > 0 && strtoul(link, &end, 10) >= seq && !*end)
			return 0;
	}
	snprintf(name, sizeof(name), "%u", seq);
	/* A new link renamed over the old: latest is never missing. */
	unlinkat(dfd, ".latest", 0);
	if (symlinkat(name, dfd, ".latest") ||
	    renameat(dfd, ".latest", dfd, "latest"))
		return -errno;
	return 0;
}
