// SPDX-License-Identifier: GPL-2.0
/*
 * Copies of a snapshot on other nodes (Documentation/ckptd.md, "Copies on
 * other nodes"). Nodes whose snapshot roots are their own have each
 * snapshot whole on its coordinator, gathered there (ship.c); a node lost
 * with its disk would take its snapshots with it. With "copies = N"
 * (ckptd.conf, 1 by default) the coordinator, once a snapshot is
 * committed, sends it whole to N of the nodes it gathered shares from,
 * one after the other, on a peer connection of its own:
 *
 *   peer-copy {job, seq, keep, names}   "ok" (ready), the snapshot's files
 *                                       (ship.c), then "ok" or an error
 *
 * The receiver takes them into a stage, checks the metadata's MAC and
 * that it is snapshot SEQ of JOB, and renames the stage to ROOT/JOB/SEQ,
 * never over one there; "latest" follows unless it names a newer one,
 * and the job's --keep applies there too. A copy that fails leaves the
 * snapshot whole and committed on its coordinator: `ckpt job` says which
 * node has no copy and why.
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
#include <unistd.h>

#include "ckptd.h"
#include "err.h"
#include "proto.h"
#include "treedir.h"

/* The entries of snapshot directory @dfd, into @names. */
static int snapshot_names(int dfd, json_t *names, struct ckpt_err *err)
{
	struct dirent *e;
	DIR *dir;
	int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int ret = 0;

	dir = fd < 0 ? NULL : fdopendir(fd);
	if (!dir) {
		if (fd >= 0)
			close(fd);
		return ckpt_err_set(err, errno, "listing the snapshot: %s",
				    strerror(errno));
	}
	while (!ret && (e = readdir(dir))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (json_array_size(names) == CKPTD_COPY_NAMES_MAX)
			ret = ckpt_err_set(err, E2BIG, "more than %d entries in the snapshot",
					   CKPTD_COPY_NAMES_MAX);
		else
			json_array_append_new(names, json_string(e->d_name));
	}
	closedir(dir);
	return ret;
}

/*
 * Snapshot @seq of @j, whose directory is @dfd and holds @list, to @node,
 * into the same --dir @udir there (NULL: its snapshot root).
 */
static int copy_to(struct ckptd *d, const struct job *j, unsigned int seq,
		   const char *udir, int dfd, json_t *list, const char *node,
		   struct ckpt_err *err)
{
	const char *names[CKPTD_COPY_NAMES_MAX + 1];
	json_t *reply = NULL, *v, *req;
	unsigned int keep;
	struct peer *p;
	size_t i;
	int ret = 0;

	json_array_foreach(list, i, v)
		names[i] = json_string_value(v);
	names[json_array_size(list)] = NULL;
	p = peer_connect(d, node, err);
	if (!p)
		return -EHOSTUNREACH;
	/* --keep where the coordinator applies it: not in a one-off ckpt job --dir. */
	keep = udir && strcmp(udir, j->dir) ? 0 : j->keep;
	req = json_pack("{s:s, s:s, s:I, s:I, s:O}", "op", "peer-copy", "job", j->id,
			"seq", (json_int_t)seq, "keep", (json_int_t)keep, "names", list);
	/* Its owner with it: the node may have forgotten a job that ended. */
	if (req && udir) {
		json_object_set_new(req, "dir", json_string(udir));
		json_object_set_new(req, "uid", json_integer(j->uid));
	}
	ret = peer_call(p, req, &reply, CKPTD_PEER_WAIT_S, err);
	json_decref(reply);
	reply = NULL;
	if (!ret)
		ret = ship_send(p, dfd, names, true, NULL, err);
	/* The receiver syncs and checks what it took: its own time. */
	if (!ret)
		ret = peer_reply(p, &reply, CKPTD_PEER_WAIT_S, err);
	json_decref(reply);
	peer_close(p);
	return ret;
}

int copy_out(struct ckptd *d, const struct job *j, unsigned int seq,
	     const char *udir, const char *dir, const char *const *nodes,
	     json_t **made, struct ckpt_err *err)
{
	json_t *list = json_array();
	struct ckpt_err why;
	unsigned int i;
	int dfd, ret, first = 0;

	*made = json_array();
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ret = dfd < 0 ? ckpt_err_set(&why, errno, "%s", strerror(errno)) :
			snapshot_names(dfd, list, &why);
	if (ret) {
		first = ckpt_err_set(err, -ret, "no copy of snapshot %u: %s: %s",
				     seq, dir, why.msg);
		goto close;
	}
	/* A node that fails is named; the next one is tried in its place. */
	for (i = 0; nodes[i] && json_array_size(*made) < d->cfg.copies; i++) {
		ret = copy_to(d, j, seq, udir, dfd, list, nodes[i], &why);
		if (ret) {
			ckptd_log(d, 0, "job %s: no copy of snapshot %u on node %s: %s",
				  j->id, seq, nodes[i], why.msg);
			if (!first)
				first = ckpt_err_set(err, -ret, "no copy of snapshot %u on node %s: %s",
						     seq, nodes[i], why.msg);
			continue;
		}
		json_array_append_new(*made, json_string(nodes[i]));
		ckptd_log(d, 1, "job %s: snapshot %u copied to node %s", j->id, seq,
			  nodes[i]);
	}
close:
	if (dfd >= 0)
		close(dfd);
	json_decref(list);
	/* Enough copies made: a node that failed on the way was only logged. */
	return json_array_size(*made) < d->cfg.copies ? first : 0;
}

/*
 * The copy in @stage, checked (its MAC, snapshot @seq of job @id) and
 * renamed SEQ in @sd, the job's directory (ROOT/ID or DIR/ID) held open
 * since the request was taken: its path in @shown.
 */
static int copy_place(struct ckptd *d, const struct snapdir *sd, const char *id,
		      unsigned int seq, struct ship_stage *stage,
		      char shown[PATH_MAX], struct ckpt_err *err)
{
	const char *mid;
	json_t *meta = NULL;
	char name[16];
	int ret;

	ret = snapshot_meta_read(d, stage->path, NULL, &meta, NULL, err);
	mid = ret ? NULL : ckptd_msg_str(meta, "job");
	if (!ret && (!mid || strcmp(mid, id) ||
		     json_integer_value(json_object_get(meta, "seq")) != seq))
		ret = ckpt_err_set(err, EINVAL, "the copy is not snapshot %u of job %s",
				   seq, id);
	/* Whole: every node's images, those the metadata names. */
	if (!ret)
		ret = snapshot_check_images(stage->path, meta, err);
	json_decref(meta);
	if (ret)
		return ret;
	snprintf(name, sizeof(name), "%u", seq);
	if (snprintf(shown, PATH_MAX, "%s/%s", sd->shown, name) >= PATH_MAX)
		return ckpt_err_set(err, ENAMETOOLONG, "%s: too long", sd->shown);
	if (ckpt_rename_noreplace(AT_FDCWD, stage->path, sd->fd, name))
		return ckpt_err_set(err, errno, errno == EEXIST ?
				    "%s is here already" : "cannot make %s: %s",
				    shown, strerror(errno));
	/* Moved: nothing of it is the stage's to remove now. */
	stage->path[0] = '\0';
	close(stage->fd);
	stage->fd = -1;
	ret = snapdir_latest(sd->fd, seq, true);
	if (ret)
		ckptd_log(d, 0, "job %s: the copy of snapshot %u is whole, but 'latest' was not moved to it: %s",
			  id, seq, strerror(-ret));
	fsync_dir(sd->fd);
	return 0;
}

/* Whether @sd has no snapshot @seq: 0, or -EEXIST. */
static int copy_free(const struct snapdir *sd, json_int_t seq, struct ckpt_err *err)
{
	char name[16];

	snprintf(name, sizeof(name), "%u", (unsigned int)seq);
	if (!faccessat(sd->fd, name, F_OK, AT_SYMLINK_NOFOLLOW))
		return ckpt_err_set(err, EEXIST, "%s/%s is here already", sd->shown, name);
	return 0;
}


/*
 * A copy into a --dir is staged in DIR/ID/SEQ.tmp (@sd), so that its
 * rename stays on the directory's file system, locked as a checkpoint's
 * is: a sweep leaves it while this worker lives, and one that took it
 * between its making and the lock is found (another inode, or none).
 */
static int copy_stage_dir(const struct snapdir *sd, json_int_t seq,
			  struct ship_stage *st, struct ckpt_err *err)
{
	struct stat a, b;
	char name[32];

	st->fd = -1;
	snprintf(name, sizeof(name), "%u.tmp", (unsigned int)seq);
	if (mkdirat(sd->fd, name, 0700))
		return ckpt_err_set(err, errno, "cannot create %s/%s: %s", sd->shown,
				    name, strerror(errno));
	snprintf(st->path, sizeof(st->path), "%s/%s", sd->path, name);
	st->fd = openat(sd->fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (st->fd < 0) {
		st->path[0] = '\0';	/* whatever has the name now is not ours */
		return ckpt_err_set(err, errno, "%s/%s: %s", sd->shown, name,
				    strerror(errno));
	}
	if (flock(st->fd, LOCK_EX) || fstat(st->fd, &a) ||
	    fstatat(sd->fd, name, &b, AT_SYMLINK_NOFOLLOW) ||
	    a.st_ino != b.st_ino || a.st_dev != b.st_dev) {
		st->path[0] = '\0';
		return ckpt_err_set(err, EBUSY, "%s/%s was taken away while it was made",
				    sd->shown, name);
	}
	return 0;
}

/*
 * The directory a copy goes to, open: ROOT/ID, or for a --dir DIR/ID as
 * its owner's (@c->uid, sent by the coordinator, which knows the job;
 * this node's record of the job, if it still has one, must agree).
 */
static int copy_dest(struct ckptd *d, const char *id, const struct ckptd_copy *c,
		     struct snapdir *sd, struct ckpt_err *err)
{
	const struct job *j;

	if (!c->dir)
		return snapdir_open(sd, d, NULL, id, 0, true, err);
	j = job_find(d, id);
	if (j && j->uid != c->uid)
		return ckpt_err_set(err, EPERM, "job %s is uid %u's here, not uid %lld's",
				    id, (unsigned int)j->uid, (long long)c->uid);
	return snapdir_open(sd, d, c->dir, id, c->uid, true, err);
}

void peer_copy(struct ckptd *d, struct peer *p, const json_t *req)
{
	const char *id = ckptd_msg_str(req, "job");
	struct ship_stage stage = { .fd = -1 };
	struct snapdir sd = { .fd = -1 };
	struct ckpt_err err = { .msg = "" };
	char what[64], shown[PATH_MAX];
	struct ckptd_copy c;
	int ret;

	ret = ckptd_copy_check(req, &c, &err);
	if (!ret && !job_id_valid(id))
		ret = ckpt_err_set(&err, EINVAL, "peer-copy: \"job\" is not a job id");
	/* One open of the job's directory, for every step that follows. */
	if (!ret)
		ret = copy_dest(d, id, &c, &sd, &err);
	if (!ret)
		ret = copy_free(&sd, c.seq, &err);
	snprintf(what, sizeof(what), "%.16s.copy", id ?: "");
	if (!ret && c.dir) {
		/* A --dir's copies cut short are this node's to sweep. */
		snapdir_sweep(d, &sd, id, "copy");
		ret = copy_stage_dir(&sd, c.seq, &stage, &err);
	} else if (!ret) {
		ret = ship_stage_make(d, what, &stage, &err);
	}
	if (!ret)
		ret = peer_send(p, json_pack("{s:b}", "ok", 1), &err);
	if (!ret)
		ret = ship_recv(p, stage.fd, c.names, true, NULL, NULL, &err);
	if (!ret)
		ret = copy_place(d, &sd, id, c.seq, &stage, shown, &err);
	/* Its path may be under sd's descriptor: removed before that closes. */
	ship_stage_remove(&stage);
	if (ret)
		snapdir_shown(&sd, &err);
	snapdir_close(&sd);
	if (ret) {
		ckptd_log(d, 1, "job %s: no copy of snapshot %lld here: %s",
			  id, (long long)c.seq, err.msg);
		peer_fail(p, "node %s: %s", d->node, err.msg);
		return;
	}
	ckptd_log(d, 1, "job %s: a copy of snapshot %lld from its coordinator, in %s",
		  id, (long long)c.seq, shown);
	/* --keep here too: the copies of the job's newest K stay. */
	snapshot_retain(d, c.dir ?: "", id, c.dir ? c.uid : 0, c.keep);
	peer_send(p, json_pack("{s:b, s:s}", "ok", 1, "copy", shown), NULL);
}
