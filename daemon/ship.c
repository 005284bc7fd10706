// SPDX-License-Identifier: GPL-2.0
/*
 * A share's files between two daemons, on their peer connection, for
 * nodes whose snapshot roots are their own (Documentation/ckptd.md,
 * "Snapshot roots of their own"): a share captured on its node is
 * gathered to the coordinator's snapshot, and a restart ships each share
 * to the node it restarts on.
 *
 * A stream is peer messages, each a header lib/ckptd/proto.c checks:
 * {"ship": "dir", "path"}, {"ship": "file", "path", "bytes"} followed by
 * that many bytes as they are, and {"ship": "end"} last; {"ship":
 * "error"} instead when the sender fails between files (within one it
 * closes the connection). Paths are relative to each side's directory and
 * begin with a name the receiver expects; nothing is made but directories
 * and files, each new (O_EXCL), so no path can lead outside.
 *
 * Files waiting here on their way (a share before its coordinator takes
 * it, a share shipped for a restart) are in a stage: SNAPROOT/.ship/
 * NODE@WHAT.XXXXXX ('@' is in no host name), locked while its worker
 * lives, swept once it is gone. A lock on .ship itself keeps a sweep
 * from taking a stage between its mkdtemp() and its own lock.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ckptd.h"
#include "err.h"
#include "proto.h"

#define SHIP_CHUNK	(256 * 1024)
/* A stream's bounds: a whole snapshot's (a copy, copy.c), 64 nodes' shares. */
#define SHIP_MAX_FILES	65536
#define SHIP_MAX_DIRS	4096
#define SHIP_TICK_S	20

/* A stream's state, on either side. */
struct ship {
	struct peer *p;
	int dirfd;
	const struct ship_tick *tick;
	time_t last_tick;	/* CLOCK_MONOTONIC */
	char *buf;
	unsigned int files;
	uint64_t bytes;
	bool mid;	/* the sender's: within a file's bytes */
	bool recurse;	/* the sender's: a directory with all it holds */
	/* The receiver's */
	char **dirs;		/* SHIP_MAX_DIRS of them */
	unsigned int ndirs;
	bool sync;
	int failed;	/* -errno here: the rest is read and dropped, the sender told */
};

static time_t now_s(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec;
}

static int maybe_tick(struct ship *sh, struct ckpt_err *err)
{
	if (!sh->tick || !sh->tick->fn || now_s() - sh->last_tick < SHIP_TICK_S)
		return 0;
	sh->last_tick = now_s();
	return sh->tick->fn(sh->tick->arg, err);
}

static int send_file(struct ship *sh, const char *path, struct ckpt_err *err)
{
	struct stat st;
	uint64_t left;
	ssize_t n;
	int fd, ret;

	/* Never a FIFO's open or read that blocks: a regular file or nothing. */
	fd = openat(sh->dirfd, path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st))
		ret = ckpt_err_set(err, errno, "%s: %s", path, strerror(errno));
	else if (!S_ISREG(st.st_mode))
		ret = ckpt_err_set(err, EINVAL, "%s: not a regular file", path);
	else
		ret = peer_send(sh->p, json_pack("{s:s, s:s, s:I}", "ship", "file",
						 "path", path, "bytes", (json_int_t)st.st_size),
				err);
	sh->mid = !ret;
	for (left = ret ? 0 : st.st_size; left; left -= n) {
		n = read(fd, sh->buf, left < SHIP_CHUNK ? left : SHIP_CHUNK);
		if (n <= 0) {
			/* The header promised more: only a closed connection says so. */
			ret = ckpt_err_set(err, n ? errno : EIO, "%s: %s", path,
					   n ? strerror(errno) : "shorter than it was");
			break;
		}
		ret = peer_send_raw(sh->p, sh->buf, n, err);
		if (ret)
			break;
		sh->bytes += n;
		ret = maybe_tick(sh, err);
		if (ret)
			break;
	}
	if (fd >= 0)
		close(fd);
	if (!ret)
		sh->mid = false;
	sh->files++;
	return ret;
}

static int send_path(struct ship *sh, const char *path, unsigned int depth,
		     struct ckpt_err *err)
{
	char sub[CKPTD_SHIP_PATH_MAX + 1];
	struct dirent *e;
	struct stat st;
	DIR *dir;
	int fd, ret = 0;

	if (fstatat(sh->dirfd, path, &st, AT_SYMLINK_NOFOLLOW))
		return ckpt_err_set(err, errno, "%s: %s", path, strerror(errno));
	if (S_ISREG(st.st_mode))
		return send_file(sh, path, err);
	if (!S_ISDIR(st.st_mode) || depth >= CKPTD_SHIP_DEPTH)
		return ckpt_err_set(err, EINVAL, "%s: not a file or directory a share holds",
				    path);
	ret = peer_send(sh->p, json_pack("{s:s, s:s}", "ship", "dir", "path", path),
			err);
	if (ret || !sh->recurse)
		return ret;
	fd = openat(sh->dirfd, path, O_RDONLY | O_DIRECTORY |
			       O_NOFOLLOW | O_CLOEXEC);
	dir = fd < 0 ? NULL : fdopendir(fd);
	if (!dir) {
		if (fd >= 0)
			close(fd);
		return ckpt_err_set(err, errno, "%s: %s", path, strerror(errno));
	}
	while (!ret && (e = readdir(dir))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name) >=
		    (int)sizeof(sub))
			ret = ckpt_err_set(err, ENAMETOOLONG, "%s/%s: too long",
					   path, e->d_name);
		else
			ret = send_path(sh, sub, depth + 1, err);
	}
	if (dir)
		closedir(dir);
	return ret;
}

int ship_send(struct peer *p, int dirfd, const char *const *names,
	      bool recurse, const struct ship_tick *tick, struct ckpt_err *err)
{
	struct ship sh = { .p = p, .dirfd = dirfd, .tick = tick, .recurse = recurse };
	unsigned int i;
	int ret = 0;

	sh.last_tick = now_s();
	sh.buf = malloc(SHIP_CHUNK);
	if (!sh.buf)
		ret = ckpt_err_set(err, ENOMEM, "out of memory");
	for (i = 0; !ret && names[i]; i++)
		ret = send_path(&sh, names[i], 1, err);
	free(sh.buf);
	if (!ret)
		return peer_send(p, json_pack("{s:s, s:i, s:I}", "ship", "end",
					      "files", sh.files, "bytes", (json_int_t)sh.bytes),
				 err);
	/* Between files the other side can be told why; within, it sees the end. */
	if (!sh.mid)
		peer_send(p, json_pack("{s:s, s:s}", "ship", "error", "error", err->msg),
			  NULL);
	return ret;
}

static int recv_dir(struct ship *sh, const char *path, struct ckpt_err *err)
{
	if (sh->ndirs == SHIP_MAX_DIRS)
		return ckpt_err_set(err, E2BIG, "node %s: more than %d directories",
				    peer_name(sh->p), SHIP_MAX_DIRS);
	if (mkdirat(sh->dirfd, path, 0700))
		return ckpt_err_set(err, errno, "cannot create %s: %s", path,
				    strerror(errno));
	sh->dirs[sh->ndirs] = strdup(path);
	if (!sh->dirs[sh->ndirs])
		return ckpt_err_set(err, ENOMEM, "out of memory");
	sh->ndirs++;
	return 0;
}

static int write_all(int fd, const char *buf, size_t n, const char *path,
		     struct ckpt_err *err)
{
	ssize_t w;

	while (n) {
		w = write(fd, buf, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return ckpt_err_set(err, w ? errno : EIO, "writing %s: %s", path,
					    w ? strerror(errno) : "short write");
		buf += w;
		n -= w;
	}
	return 0;
}

/*
 * A file's bytes, all read whatever happens here: a write that fails
 * (a full disk) sets sh->failed and the stream goes on being read, so
 * the sender finishes and hears why. -errno only for the connection.
 */
static int recv_file(struct ship *sh, const char *path, uint64_t bytes,
		     struct ckpt_err *err)
{
	int fd = -1, ret;
	size_t n;

	if (!sh->failed && ++sh->files > SHIP_MAX_FILES)
		sh->failed = ckpt_err_set(err, E2BIG, "node %s: more than %d files",
					  peer_name(sh->p), SHIP_MAX_FILES);
	if (!sh->failed) {
		fd = openat(sh->dirfd, path, O_WRONLY | O_CREAT | O_EXCL |
			    O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0)
			sh->failed = ckpt_err_set(err, errno, "cannot create %s: %s",
						  path, strerror(errno));
	}
	while (bytes) {
		n = bytes < SHIP_CHUNK ? bytes : SHIP_CHUNK;
		ret = peer_recv_raw(sh->p, sh->buf, n, CKPTD_PEER_WAIT_S, err);
		if (ret) {
			if (fd >= 0)
				close(fd);
			return ret;
		}
		if (fd >= 0) {
			sh->failed = write_all(fd, sh->buf, n, path, err);
			if (sh->failed) {
				close(fd);
				fd = -1;
			}
		}
		bytes -= n;
		sh->bytes += n;
		maybe_tick(sh, NULL);
	}
	if (fd >= 0 && sh->sync && fsync(fd))
		sh->failed = ckpt_err_set(err, errno, "writing %s: %s", path,
					  strerror(errno));
	if (fd >= 0)
		close(fd);
	return 0;
}

/* What was made is on disk: each directory, then the one it all went into. */
static int sync_dirs(struct ship *sh, struct ckpt_err *err)
{
	unsigned int i;
	int fd, ret = 0;

	for (i = sh->ndirs; !ret && i-- > 0;) {
		fd = openat(sh->dirfd, sh->dirs[i], O_RDONLY | O_DIRECTORY |
			    O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 || fsync(fd))
			ret = ckpt_err_set(err, errno, "%s: %s", sh->dirs[i],
					   strerror(errno));
		if (fd >= 0)
			close(fd);
	}
	if (!ret && fsync(sh->dirfd))
		ret = ckpt_err_set(err, errno, "syncing: %s", strerror(errno));
	return ret;
}

int ship_recv(struct peer *p, int dirfd, const char *const *allowed,
	      bool sync, const struct ship_tick *tick, uint64_t *bytes,
	      struct ckpt_err *err)
{
	struct ship sh = { .p = p, .dirfd = dirfd, .tick = tick, .sync = sync };
	struct ckpt_err why;
	const char *path;
	uint64_t size;
	json_t *msg;
	int kind = 0, ret = 0;

	sh.last_tick = now_s();
	sh.buf = malloc(SHIP_CHUNK);
	sh.dirs = calloc(SHIP_MAX_DIRS, sizeof(*sh.dirs));
	if (!sh.buf || !sh.dirs)
		ret = ckpt_err_set(err, ENOMEM, "out of memory");
	while (!ret && kind != CKPTD_SHIP_END) {
		ret = peer_recv(p, &msg, CKPTD_PEER_WAIT_S, err);
		if (ret)
			break;
		kind = ckptd_ship_check(msg, allowed, &path, &size, &why);
		if (kind < 0)
			ret = ckpt_err_set(err, -kind, "node %s: %s", peer_name(p), why.msg);
		else if (kind == CKPTD_SHIP_DIR && !sh.failed)
			sh.failed = recv_dir(&sh, path, err);
		else if (kind == CKPTD_SHIP_FILE)
			ret = recv_file(&sh, path, size, err);
		json_decref(msg);
	}
	if (!ret)
		ret = sh.failed;	/* @err says why */
	if (!ret && sync)
		ret = sync_dirs(&sh, err);
	while (sh.ndirs)
		free(sh.dirs[--sh.ndirs]);
	free(sh.dirs);
	free(sh.buf);
	if (bytes)
		*bytes = sh.bytes;
	return ret;
}

static int ship_dir_open(const struct ckptd *d, struct ckpt_err *err)
{
	int rfd, fd;

	rfd = open(d->cfg.snapshot_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rfd < 0)
		return ckpt_err_set(err, errno, "%s: %s", d->cfg.snapshot_root,
				    strerror(errno));
	if (mkdirat(rfd, ".ship", 0700) && errno != EEXIST)
		fd = -1;
	else
		fd = openat(rfd, ".ship", O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
			    O_CLOEXEC);
	if (fd < 0)
		fd = ckpt_err_set(err, errno, "%s/.ship: %s", d->cfg.snapshot_root,
				  strerror(errno));
	close(rfd);
	return fd;
}

/* This node's stages whose workers have ended, removed; .ship is locked. */
static void sweep(struct ckptd *d, int fd)
{
	char path[PATH_MAX];
	struct dirent *e;
	size_t n = strlen(d->node);
	DIR *dir;
	int dfd, sfd;

	dfd = dup(fd);
	dir = dfd < 0 ? NULL : fdopendir(dfd);
	if (!dir) {
		if (dfd >= 0)
			close(dfd);
		return;
	}
	while ((e = readdir(dir))) {
		/* This node's alone: a root the nodes share holds the others' too. */
		if (strncmp(e->d_name, d->node, n) || e->d_name[n] != '@' ||
		    snprintf(path, sizeof(path), "%s/.ship/%s", d->cfg.snapshot_root,
			     e->d_name) >= (int)sizeof(path))
			continue;
		sfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sfd < 0)
			continue;
		if (!flock(sfd, LOCK_EX | LOCK_NB)) {
			file_remove_tree(path);
			ckptd_log(d, 1, "%s, left by a worker that ended, removed", path);
		}
		close(sfd);
	}
	closedir(dir);
}

void ship_stage_sweep(struct ckptd *d)
{
	struct ckpt_err err;
	int fd = ship_dir_open(d, &err);

	if (fd < 0)
		return;
	flock(fd, LOCK_EX);
	sweep(d, fd);
	close(fd);
}

int ship_stage_make(struct ckptd *d, const char *what, struct ship_stage *st,
		    struct ckpt_err *err)
{
	int fd, ret = 0;

	st->fd = -1;
	st->path[0] = '\0';
	fd = ship_dir_open(d, err);
	if (fd < 0)
		return fd;
	/* Held until the stage is locked itself: no sweep takes it before. */
	flock(fd, LOCK_EX);
	sweep(d, fd);
	if (snprintf(st->path, sizeof(st->path), "%s/.ship/%s@%s.XXXXXX",
		     d->cfg.snapshot_root, d->node, what) >= (int)sizeof(st->path))
		ret = ckpt_err_set(err, ENAMETOOLONG, "%s: too long", d->cfg.snapshot_root);
	else if (!mkdtemp(st->path))
		ret = ckpt_err_set(err, errno, "cannot create %s: %s", st->path,
				   strerror(errno));
	if (ret)
		st->path[0] = '\0';
	if (!ret) {
		st->fd = open(st->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (st->fd < 0 || flock(st->fd, LOCK_EX | LOCK_NB))
			ret = ckpt_err_set(err, errno, "%s: %s", st->path, strerror(errno));
	}
	close(fd);
	if (ret)
		ship_stage_remove(st);
	return ret;
}

void ship_stage_remove(struct ship_stage *st)
{
	if (!st->path[0])
		return;
	file_remove_tree(st->path);
	st->path[0] = '\0';
	if (st->fd >= 0)
		close(st->fd);
	st->fd = -1;
}
