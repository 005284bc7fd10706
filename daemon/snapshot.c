// SPDX-License-Identifier: GPL-2.0
/*
 * A node's checkpoint of a job, into a snapshot directory
 * (Documentation/ckptd.md, "Snapshots"):
 *
 *   ROOT/JOB/SEQ.tmp/NODE/0/   the tree's images and manifest
 *   ROOT/JOB/SEQ.tmp/meta.json, meta.mac
 *
 * renamed to SEQ once whole and synced, and JOB/latest pointed at it.
 * ROOT is ckptd's snapshot root or the job's --dir; ROOT/JOB is reached
 * through its descriptor (snapdir.c), s->jobdir and the paths under it
 * name it so, and what the user is told names it as they know it.
 * Until the rename nothing of the snapshot exists; a failure removes the
 * .tmp directory and leaves earlier snapshots as they were.
 *
 * A node that does not share the coordinator's snapshot root (it does not
 * find SEQ.tmp/.token, with the coordinator's random word, at the same
 * path) takes its share into a stage of its own, and the coordinator
 * gathers it into SEQ.tmp/NODE (ship.c) before the metadata is written.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "addrmap.h"
#include "ckptd.h"
#include "engine.h"
#include "err.h"
#include "meta.h"
#include "channel.h"
#include "treedir.h"

/* What a checkpoint worker works with: the pipeline's state, in one place. */
struct snap {
	struct ckptd *d;
	struct job *j;
	struct ckpt_checkpoint_tree a;
	unsigned int seq;
	char dir[CKPTD_DIR_MAX];	/* a --dir, or "": ckptd's snapshot root */
	struct snapdir sd;
	char shown[PATH_MAX];		/* ROOT/JOB/SEQ, as the user knows it */
	char jobdir[PATH_MAX];
	char tmp[PATH_MAX];
	int tmp_fd;		/* SEQ.tmp, locked while this worker lives */
	char token[2 * CKPTD_TOKEN_LEN + 1];	/* SEQ.tmp/.token's */
	char treedir[PATH_MAX];
	char final[PATH_MAX];
	struct ckpt_tree t;
	struct ckpt_tree_member *res;
	json_t *meta;
	/* A job over several nodes: the coordinator's side. */
	const char *mode;	/* continue, stop, kill: applied at the end */
	struct peer *peers[CKPTD_MAX_NODES];
	char *gather[CKPTD_MAX_NODES];	/* a share to gather: its node's name */
	unsigned int npeers;
	unsigned int shipping;	/* the peer whose share is on its way */
	bool released;		/* continue: every share runs on already */
	struct ship_stage stage;	/* a peer's: its share, not shared */
	json_t *remote;		/* the other nodes' entries of the metadata */
	json_t *entry[CKPTD_MAX_NODES];	/* peer i's, in s->remote (borrowed) */
	json_t *local;		/* this node's entry, read back after a release */
	bool no_sums;		/* a share's entry: its sums come after release */
	json_t *chans;		/* every node's channel ends: channel_add() */
	json_t *outside;	/* --outside close: {node: its ends to outside the job} */
	json_t *later;		/* the join's for the restart: {node: {key: list}} */
	json_t *ended;		/* the nodes whose share has ended */
	json_int_t nr_all;	/* processes and bytes, every node's */
	json_int_t bytes_all;
	uint64_t verify_ns;	/* this node's images read back for their SHA-256 */
	/* Several nodes: how long the job's shares stayed stopped, the commit */
	uint64_t stop_t0, stopped_ns, commit_t0, commit_ns;
	/* A continue over several nodes, let go once every share is staged */
	json_t *early[CKPTD_MAX_NODES];	/* peer i's answer, given first */
	struct ckpt_err early_err;	/* or its failure: why (the first such) */
	bool early_failed[CKPTD_MAX_NODES];
	bool running;		/* let go once staged: no second SIGCONT */
	json_t *copies;		/* the nodes that keep a copy of it (copy.c) */
	uint64_t copy_t0, copy_ns;	/* the copies' start, time */
	struct ckpt_err copy_err;	/* why one did not (msg "" if none) */
};

/* The directory of job @id's snapshots, open in @sd and listed, or NULL. */
static DIR *snapshots_of(const struct ckptd *d, const char *jobdir,
			 const char *id, uid_t uid, struct snapdir *sd)
{
	struct ckpt_err err;
	DIR *dir;
	int fd;

	if (snapdir_open(sd, d, jobdir, id, uid, false, &err))
		return NULL;
	fd = dup(sd->fd);
	dir = fd < 0 ? NULL : fdopendir(fd);
	if (!dir) {
		if (fd >= 0)
			close(fd);
		snapdir_close(sd);
	}
	return dir;
}

unsigned int snapshot_sweep(struct ckptd *d, const struct job *j)
{
	struct ckpt_err err;
	struct snapdir sd;
	unsigned int live;

	/* A job coordinated elsewhere: its snapshots are its coordinator's. */
	if (j->coordinator[0] ||
	    snapdir_open(&sd, d, j->dir, j->id, j->uid, false, &err))
		return 0;
	live = snapdir_sweep(d, &sd, j->id, "checkpoint");
	snapdir_close(&sd);
	return live;
}

/* Whether @j's orphan_seq is still its worker's (SEQ.tmp locked). */
static bool orphan_busy(struct ckptd *d, const struct job *j)
{
	char path[PATH_MAX];
	struct snapdir sd;
	struct ckpt_err err;
	bool busy;

	if (!j->orphan_seq ||
	    snapdir_open(&sd, d, j->dir, j->id, j->uid, false, &err))
		return false;
	snprintf(path, sizeof(path), "%s/%u.tmp", sd.path, j->orphan_seq);
	busy = snapdir_tmp_in_use(path);
	snapdir_close(&sd);
	return busy;
}

/* Snapshot @seq of @j, if it is whole (SEQ, a directory), is its newest. */
static void adopt(struct ckptd *d, struct job *j, unsigned long seq)
{
	char name[16], path[PATH_MAX];
	struct ckpt_err err;
	struct snapdir sd;
	struct stat st;

	if (seq <= j->seq || seq > UINT32_MAX ||
	    snapdir_open(&sd, d, j->dir, j->id, j->uid, false, &err))
		return;
	snprintf(name, sizeof(name), "%lu", seq);
	if (!fstatat(sd.fd, name, &st, AT_SYMLINK_NOFOLLOW) &&
	    S_ISDIR(st.st_mode) &&
	    snprintf(path, sizeof(path), "%s/%s", sd.shown, name) <
	    (int)sizeof(path)) {
		j->seq = seq;
		memcpy(j->latest, path, sizeof(j->latest));
		ckptd_log(d, 1, "job %s: snapshot %s, committed by an earlier ckptd's worker, is its newest",
			  j->id, name);
		job_save(d, j);
	}
	snapdir_close(&sd);
}

bool snapshot_catch_up(struct ckptd *d, struct job *j)
{
	if (!j->orphan_seq || j->busy)
		return false;
	if (orphan_busy(d, j))
		return true;
	adopt(d, j, j->orphan_seq);
	j->orphan_seq = 0;
	/* A worker that died (killed late) leaves its .tmp: swept now. */
	snapshot_sweep(d, j);
	return false;
}

void snapshot_found_again(struct ckptd *d, struct job *j)
{
	char link[16], *end;
	struct ckpt_err err;
	struct snapdir sd;
	unsigned long seq;
	ssize_t n;

	j->orphan_seq = snapshot_sweep(d, j);
	/*
	 * Its worker ended after the record was last written: the record's
	 * latest was its own (not a restart's, which has none yet), and the
	 * job's latest is newer.
	 */
	if (j->orphan_seq || !j->latest[0] ||
	    snapdir_open(&sd, d, j->dir, j->id, j->uid, false, &err))
		return;
	n = readlinkat(sd.fd, "latest", link, sizeof(link) - 1);
	snapdir_close(&sd);
	if (n <= 0)
		return;
	link[n] = '\0';
	seq = strtoul(link, &end, 10);
	if (!*end && link[0] != '0')
		adopt(d, j, seq);
}

int ckptd_sha256_file(const char *path, char hex[65], uint64_t *size)
{
	unsigned char md[EVP_MAX_MD_SIZE], buf[1 << 16];
	unsigned int mdlen;
	EVP_MD_CTX *ctx;
	ssize_t n;
	int fd, ret = 0;

	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ctx = EVP_MD_CTX_new();
	if (!ctx || !EVP_DigestInit_ex(ctx, EVP_sha256(), NULL)) {
		close(fd);
		EVP_MD_CTX_free(ctx);
		return -ENOMEM;
	}
	*size = 0;
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		EVP_DigestUpdate(ctx, buf, n);
		*size += n;
	}
	if (n < 0)
		ret = -errno;
	EVP_DigestFinal_ex(ctx, md, &mdlen);
	EVP_MD_CTX_free(ctx);
	close(fd);
	ckptd_hex(md, mdlen < 32 ? mdlen : 32, hex);
	return ret;
}

static int file_size(const char *path, uint64_t *size)
{
	struct stat st;

	if (stat(path, &st))
		return -errno;
	*size = st.st_size;
	return 0;
}

/*
 * The tree's members as the metadata lists them, with their checksums
 * (read back now; with s->no_sums, not: tree_sums() later).
 */
static json_t *tree_members(struct snap *s, struct ckpt_err *err)
{
	char path[PATH_MAX], sum[65];
	json_t *list = json_array();
	uint64_t size;
	uint32_t i;
	int ret;

	for (i = 0; list && i < s->t.nr; i++) {
		ret = ckpt_tree_image_path(s->treedir, &s->t, i, path, sizeof(path));
		/* The engine's digests, taken as it wrote: nothing to read. */
		if (!ret && (s->no_sums || s->t.sums))
			ret = file_size(path, &size);
		else if (!ret)
			ret = ckptd_sha256_file(path, sum, &size);
		if (!ret && s->t.sums)
			ckptd_hex(s->t.sums[i], CKPT_DIGEST_LEN, sum);
		if (ret) {
			ckpt_err_set(err, -ret, "reading back %s: %s", path,
				     strerror(-ret));
			json_decref(list);
			return NULL;
		}
		json_array_append_new(list, json_pack("{s:i, s:s, s:I, s:s*}",
			"pid", (int)s->t.m[i].pid, "image", strrchr(path, '/') + 1,
			"bytes", (json_int_t)size, "sha256", s->no_sums ? NULL : sum));
	}
	return list;
}

/* The SHA-256 of every image of this node's share, in member order. */
static json_t *tree_sums(struct snap *s, struct ckpt_err *err)
{
	json_t *members, *m, *sums;
	size_t i;

	s->no_sums = false;
	members = tree_members(s, err);
	sums = members ? json_array() : NULL;
	json_array_foreach(members, i, m)
		json_array_append(sums, json_object_get(m, "sha256"));
	json_decref(members);
	return sums;
}

/* This node's entry of the metadata: its name, kernel, addresses and tree. */
static json_t *node_entry(struct snap *s, struct ckpt_err *err)
{
	char id[2 * CKPT_TREE_ID_LEN + 1], dir[HOST_NAME_MAX + 8];
	struct utsname u;
	json_t *members;

	members = tree_members(s, err);
	if (!members)
		return NULL;
	uname(&u);
	ckptd_hex(s->t.id, sizeof(s->t.id), id);
	snprintf(dir, sizeof(dir), "%s/0", s->d->node);
	return json_pack("{s:s, s:s, s:o, s:[{s:s, s:s, s:o}]}", "node", s->d->node,
			 "kernel", u.release, "addrs", ckpt_addrs_local(),
			 "trees", "dir", dir, "id", id, "members", members);
}

static int build_meta(struct snap *s, struct ckpt_err *err)
{
	uint64_t t0 = ckptd_now_ns();
	json_t *nodes = json_array(), *local, *n;
	size_t i;

	/* Released, its images were read back then (release()). */
	if (s->local) {
		local = s->local;
		s->local = NULL;
	} else {
		local = node_entry(s, err);
		s->verify_ns = ckptd_now_ns() - t0;
	}
	if (!local) {
		json_decref(nodes);
		return -EIO;
	}
	/* The coordinator's first: its tree holds the job's root. */
	json_array_append_new(nodes, local);
	if (s->remote)
		json_array_extend(nodes, s->remote);
	/*
	 * Connections to outside the job, each node's: closed at restart;
	 * and what the channels' join left for each node's restart.
	 */
	json_array_foreach(nodes, i, n) {
		const char *name = json_string_value(json_object_get(n, "node"));
		json_t *ends = s->outside ? json_object_get(s->outside, name) : NULL;
		json_t *later = s->later ? json_object_get(s->later, name) : NULL;

		if (ends)
			json_object_set(n, "outside", ends);
		if (later)
			json_object_update(n, later);
	}
	s->meta = json_pack("{s:s, s:i, s:s, s:s, s:I, s:I, s:I, s:I, s:O, s:s, s:o}",
		"format", CKPT_META_FORMAT, "version", CKPT_META_VERSION,
		"job", s->j->id, "name", s->j->name, "uid", (json_int_t)s->j->uid,
		"gid", (json_int_t)s->j->gid, "seq", (json_int_t)s->seq,
		"time", (json_int_t)time(NULL), "cmd", s->j->cmd, "cwd", s->j->cwd,
		"nodes", nodes);
	if (s->meta && s->j->outside_close)
		json_object_set_new(s->meta, "outside", json_string("close"));
	/* The job's --dir, which its restarts keep. */
	if (s->meta && s->j->dir[0])
		json_object_set_new(s->meta, "dir", json_string(s->j->dir));
	/* Restarted on other nodes: the addresses its processes know. */
	if (s->meta && json_array_size(s->j->addrmap))
		json_object_set(s->meta, "addrmap", s->j->addrmap);
	if (!s->meta)
		return ckpt_err_set(err, ENOMEM, "out of memory");
	/* What we write is what a restart will check: the one checker. */
	if (ckpt_meta_check(s->meta, err))
		return -EINVAL;
	ckpt_meta_count(s->meta, NULL, &s->nr_all, &s->bytes_all);
	return 0;
}

/* The end of a coordinated checkpoint on a node: @action for its share. */
static void apply_action(const struct job *j, const char *action)
{
	if (!strcmp(action, "kill"))
		job_signal(j, SIGKILL);
	else if (strcmp(action, "stop"))
		job_signal(j, SIGCONT);	/* continue, abort, or no word */
	job_mark_stopped(j, false);
	job_let_joins(j, !strcmp(action, "kill"));
}

/*
 * apply_action() for @s's share, which gets a SIGCONT once only: a share
 * let go once staged runs already, and a second one would continue what
 * the job (or its user) stopped since.
 */
static void snap_apply(struct snap *s, const char *action)
{
	bool resumes = strcmp(action, "kill") && strcmp(action, "stop");

	if (s->running && resumes) {
		job_mark_stopped(s->j, false);
		job_let_joins(s->j, false);
		return;
	}
	apply_action(s->j, action);
	s->running = resumes;
}

/* This node's channel ends to other nodes, for channel_join(). */
static int add_own_ends(struct snap *s, struct ckpt_err *err)
{
	json_t *ends = channel_ends(s->treedir, &s->t, err);
	int ret;

	if (!ends)
		return -EIO;
	ret = channel_add(s->chans, s->d->node, ends, err);
	json_decref(ends);
	return ret;
}

/*
 * Share @i is in a stage on its node: noted for gather(), under the name
 * it joined the job with, which its entry (@node) must have.
 */
static int gather_note(struct snap *s, unsigned int i, const json_t *node,
		       struct ckpt_err *err)
{
	const char *name = json_string_value(json_object_get(node, "node"));

	if (!name || strcmp(name, peer_name(s->peers[i])))
		return ckpt_err_set(err, EPROTO, "node %s: its share names another node (%.64s)",
				    peer_name(s->peers[i]), name ?: "none");
	s->gather[i] = strdup(name);
	return s->gather[i] ? 0 : ckpt_err_set(err, ENOMEM, "out of memory");
}

/* The job's trees on this node (struct ckpt_roots), looked at now. */
static int snap_roots(void *arg, pid_t *roots, uint32_t max,
		      struct ckpt_err *err)
{
	const struct snap *s = arg;
	int n = job_roots(s->j, roots, max);

	if (n == 0 || n == -ENOENT)
		return ckpt_err_set(err, ESRCH, "job %s has no process on this node",
				    s->j->id);
	if (n == -E2BIG)
		return ckpt_err_set(err, E2BIG, "job %s is more than %u processes or %u process trees on this node",
				    s->j->id, CKPT_TREE_MAX_MEMBERS, max);
	if (n < 0)
		return ckpt_err_set(err, -n, "job %s: cannot list its processes: %s",
				    s->j->id, strerror(-n));
	return n;
}

/*
 * The job's trees on this node, checkpointed with s->a into s->treedir as
 * one set; looked at before each try, as one may have ended, or a double
 * fork made another, since the request came.
 */
static int snap_take(struct snap *s, int dev, struct ckpt_err *err)
{
	const struct ckpt_roots roots = { .find = snap_roots, .arg = s };

	/* Let go once the processes' fate is applied: apply_action(), one_node(). */
	job_hold_joins(s->j);
	return ckpt_trees_checkpoint(dev, &s->a, &roots, s->treedir, &s->t,
				     &s->res, err);
}

/* snap_take() beside its caller, in a thread of its own. */
struct take {
	struct snap *s;
	int dev, ret;
	int done;		/* a pipe's end, closed once the engine returns */
	struct ckpt_err *err;
};

static void *take_run(void *arg)
{
	struct take *t = arg;

	/* The caller waits on the engine meanwhile: nothing of the job's is shared. */
	t->ret = snap_take(t->s, t->dev, t->err);
	close(t->done);
	return NULL;
}

/*
 * snap_take() with CKPT_CHECKPOINT_STAGED, for a continue over several
 * nodes: @staged(@s, @arg, true) is called once every process of the
 * share is captured, staged and stopped, while the engine writes the
 * images (in a thread of its own meanwhile), so that the caller may let
 * them go on before the images are whole; @staged(@s, @arg, false) once
 * the capture is over if that never came (a failure first, or an engine
 * without the flag, which takes the share snap_take()'s way). The result
 * is snap_take()'s.
 */
static int snap_take_staged(struct snap *s, int dev,
			    void (*staged)(struct snap *s, void *arg, bool told),
			    void *arg, struct ckpt_err *err)
{
	struct take t = { .s = s, .dev = dev, .err = err };
	uint32_t flags = s->a.flags;
	struct pollfd pfd[2];
	bool told = false, no_thread = false;
	int pipefd[2], ev;
	pthread_t th;
	uint64_t n;

	ev = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (ev < 0 || pipe2(pipefd, O_CLOEXEC)) {
		if (ev >= 0)
			close(ev);
		t.ret = snap_take(s, dev, err);
		staged(s, arg, false);
		return t.ret;
	}
	t.done = pipefd[1];
	s->a.flags |= CKPT_CHECKPOINT_STAGED;
	s->a.staged_fd = ev;
	if (pthread_create(&th, NULL, take_run, &t)) {
		close(pipefd[1]);
		no_thread = true;
	} else {
		pfd[0] = (struct pollfd){ .fd = ev, .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = pipefd[0], .events = POLLIN };
		/* The engine's call ends: its timeout bounds the freeze, a write fails. */
		while (poll(pfd, 2, -1) < 0 && errno == EINTR)
			;
		/* Staged, then done at once: both may be ready; the count tells. */
		told = read(ev, &n, sizeof(n)) == sizeof(n);
		if (told)
			staged(s, arg, true);
		pthread_join(th, NULL);
	}
	close(pipefd[0]);
	close(ev);
	s->a.staged_fd = 0;
	/* An engine that does not know the flag, or no thread: the plain way. */
	if (no_thread || (!told && t.ret == -EINVAL &&
			  strstr(err->msg, "unknown or conflicting flags"))) {
		s->a.flags = flags;
		t.ret = snap_take(s, dev, err);
	}
	s->a.flags &= ~CKPT_CHECKPOINT_STAGED;
	if (!told)
		staged(s, arg, false);
	return t.ret;
}

/*
 * The coordinator's share is staged (@own) or not: every node's first
 * word on its share, then, to each that said it is staged, whether all
 * are ({"release": true}: they go on now, this share too) or not (they
 * wait for the word after the captures, as before). A node's first word
 * may be its answer (failed, ended): coordinated() takes it.
 */
static void hear_staged(struct snap *s, void *arg, bool own)
{
	uint64_t now, end = ckptd_now_ns() + CKPTD_PEER_WAIT_S * 1000000000ULL;
	bool staged[CKPTD_MAX_NODES] = { false };
	struct ckpt_err perr;
	bool all = own;
	json_t *r;
	unsigned int i;
	int secs;

	for (i = 0; i < s->npeers; i++) {
		if (!s->peers[i])
			continue;
		/* One wait for them all, not one each. */
		now = ckptd_now_ns();
		secs = now >= end ? 1 : (int)((end - now) / 1000000000ULL) + 1;
		if (peer_reply(s->peers[i], &r, secs, &perr)) {
			if (!s->early_err.msg[0])
				s->early_err = perr;
			s->early_failed[i] = true;
			all = false;
		} else if (json_is_true(json_object_get(r, "staged"))) {
			staged[i] = true;
			json_decref(r);
		} else {
			s->early[i] = r;
			all &= json_is_true(json_object_get(r, "ended"));
		}
	}
	(void)arg;
	for (i = 0; i < s->npeers; i++)
		if (staged[i])
			peer_send(s->peers[i], json_pack("{s:b}", "release", all), NULL);
	if (!all)
		return;
	snap_apply(s, "continue");
	s->stopped_ns = ckptd_now_ns() - s->stop_t0;
	ckptd_log(s->d, 2, "job %s: every share staged, the job goes on", s->j->id);
}

/*
 * A job over several nodes: every node's share is captured and left
 * stopped (so nothing of the job moves on while others are captured),
 * here and on each node of the job at once; 0 once every share is in
 * SEQ.tmp and the remote entries in s->remote. A continue lets them all
 * go on then (release()); a stop or kill is applied at the end
 * (finish()), by every node, after the commit.
 */
static int coordinated(struct snap *s, int dev, struct ckpt_err *err)
{
	const char *names[CKPTD_MAX_NODES];
	struct ckpt_err perr;
	json_t *reply, *node;
	bool continued = !strcmp(s->mode, "continue");
	unsigned int i, n;
	int ret = 0;

	s->remote = json_array();
	s->ended = json_array();
	s->running = false;
	s->early_err.msg[0] = '\0';
	memset(s->early_failed, 0, sizeof(s->early_failed));
	json_decref(s->outside);
	s->outside = s->j->outside_close ? json_object() : NULL;
	json_decref(s->later);
	s->later = json_object();
	n = json_array_size(s->j->nodes);
	if (n > CKPTD_MAX_NODES)
		return ckpt_err_set(err, E2BIG, "job %s: %u nodes, at most %d", s->j->id,
				    n, CKPTD_MAX_NODES);
	for (i = 0; i < n; i++)
		names[i] = json_string_value(json_array_get(s->j->nodes, i));
	if (peer_connect_all(s->d, names, n, s->peers, err))
		return -EIO;
	/* s->npeers: those asked, whom an abort must reach. */
	for (i = 0; i < n; i++) {
		/* A continue: each share's images read back once it goes on. */
		if (peer_send(s->peers[i], json_pack("{s:s, s:s, s:I, s:s+, s:I, s:s*, s:s, s:s*, s:b}",
				"op", "peer-checkpoint", "job", s->j->id,
				"seq", (json_int_t)s->seq, "dir", s->shown, ".tmp",
				"timeout", (json_int_t)s->a.timeout_ms / 1000,
				"root", *s->dir ? s->dir : NULL, "token", s->token,
				"sums", continued ? "later" : NULL, "staged", continued), err)) {
			for (; i < n; i++) {
				peer_close(s->peers[i]);
				s->peers[i] = NULL;
			}
			return -EIO;
		}
		s->npeers = i + 1;
	}
	s->a.flags = CKPT_CHECKPOINT_STOP | CKPT_CHECKPOINT_PEERS_AWAY |
		     CKPT_CHECKPOINT_WAITING_AWAY | CKPT_CHECKPOINT_LOCAL_FILES |
		     CKPT_CHECKPOINT_DIGESTS;
	s->stop_t0 = ckptd_now_ns();
	s->stopped_ns = 0;
	job_mark_stopped(s->j, true);
	if (continued)
		ret = snap_take_staged(s, dev, hear_staged, NULL, err);
	else
		ret = snap_take(s, dev, err);
	s->chans = json_object();
	if (!ret)
		ret = add_own_ends(s, err);
	/* Every answer is awaited, so that no node is left stopped unasked. */
	for (i = 0; i < s->npeers; i++) {
		if (s->early_failed[i]) {
			if (!ret)
				ret = ckpt_err_set(err, EIO, "%s", s->early_err.msg);
			continue;
		}
		reply = s->early[i];
		s->early[i] = NULL;
		if (!reply && peer_reply(s->peers[i], &reply, CKPTD_PEER_WAIT_S, &perr)) {
			if (!ret)
				ret = ckpt_err_set(err, EIO, "%s", perr.msg);
			continue;
		}
		node = json_object_get(reply, "node");
		if (node && !json_array_append(s->remote, node))
			s->entry[i] = node;	/* s->remote holds it */
		/* Its share is in a stage of its own: gather() takes it. */
		if (node && json_is_true(json_object_get(reply, "gather")) && !ret)
			ret = gather_note(s, i, node, err);
		if (node && !ret)
			ret = channel_add(s->chans, peer_name(s->peers[i]), reply, err);
		/* A share that has ended is no part of the snapshot: it left. */
		if (json_is_true(json_object_get(reply, "ended"))) {
			json_array_append(s->ended, json_array_get(s->j->nodes, i));
			peer_close(s->peers[i]);
			s->peers[i] = NULL;
		}
		json_decref(reply);
	}
	/* Both ends of every channel between nodes, and they fit. */
	if (!ret)
		ret = channel_join(s->chans, s->outside, s->later, err);
	return ret;
}

static void finish(struct snap *s, const char *action);
static int prepare(struct snap *s, struct ckpt_err *err);

/*
 * What came of node @name's share is what its entry in s->remote lists:
 * each image there, of its size (their checksums are a restart's check,
 * as on a shared root).
 */
static int gathered_whole(struct snap *s, const char *name,
			  struct ckpt_err *err)
{
	const json_t *n, *tree, *m;
	struct stat st;
	char path[PATH_MAX];
	size_t i, k;

	json_array_foreach(s->remote, i, n) {
		if (strcmp(json_string_value(json_object_get(n, "node")) ?: "", name))
			continue;
		tree = json_array_get(json_object_get(n, "trees"), 0);
		json_array_foreach(json_object_get(tree, "members"), k, m) {
			snprintf(path, sizeof(path), "%s/%s",
				 json_string_value(json_object_get(tree, "dir")) ?: "",
				 json_string_value(json_object_get(m, "image")) ?: "");
			if (fstatat(s->tmp_fd, path, &st, AT_SYMLINK_NOFOLLOW) ||
			    !S_ISREG(st.st_mode) ||
			    st.st_size != json_integer_value(json_object_get(m, "bytes")))
				return ckpt_err_set(err, EIO, "gathering node %s's share: %s did not come whole",
						    name, path);
		}
		return 0;
	}
	return ckpt_err_set(err, EPROTO, "gathering node %s's share: no entry of it", name);
}

/* Peer @i is done with this checkpoint (released, its share here). */
static void let_go(struct snap *s, unsigned int i)
{
	peer_close(s->peers[i]);
	s->peers[i] = NULL;
}

static void gather_forget(struct snap *s)
{
	unsigned int i;

	for (i = 0; i < CKPTD_MAX_NODES; i++) {
		free(s->gather[i]);
		s->gather[i] = NULL;
	}
}

/* While one share is on its way, the others wait for their word anew. */
static int keep_waiting(void *arg, struct ckpt_err *err)
{
	struct snap *s = arg;
	unsigned int i;

	(void)err;
	for (i = 0; i < s->npeers; i++)
		if (s->peers[i] && i != s->shipping)
			peer_send(s->peers[i], json_pack("{s:b}", "wait", 1), NULL);
	return 0;
}

/*
 * The shares of nodes whose snapshot root is their own, into SEQ.tmp/NODE
 * (ship.c), synced: the snapshot is whole on this node. The job runs on
 * meanwhile for a continue (release()); for a stop or kill its shares
 * stay stopped until the commit.
 */
static int gather(struct snap *s, struct ckpt_err *err)
{
	const struct ship_tick tick = { keep_waiting, s };
	uint64_t bytes, total = 0;
	unsigned int i, n = 0;
	struct ckpt_err why;
	int ret;

	for (i = 0; i < s->npeers; i++) {
		const char *allowed[] = { s->gather[i], NULL };

		if (!s->peers[i] || !s->gather[i])
			continue;
		if (!n++)
			progress_phase("gathering", 0, 0);
		s->shipping = i;
		keep_waiting(s, NULL);
		ret = peer_send(s->peers[i], json_pack("{s:b}", "send", 1), &why);
		if (!ret)
			ret = ship_recv(s->peers[i], s->tmp_fd, allowed, true, &tick,
					&bytes, &why);
		if (ret)
			return ckpt_err_set(err, -ret, "gathering node %s's share: %s",
					    s->gather[i], why.msg);
		/* Released, the share's part ended with its last file. */
		if (s->released)
			let_go(s, i);
		ret = gathered_whole(s, s->gather[i], err);
		if (ret)
			return ret;
		total += bytes;
		ckptd_log(s->d, 2, "job %s: node %s's share gathered, %llu bytes",
			  s->j->id, s->gather[i], (unsigned long long)bytes);
	}
	if (n)
		ckptd_log(s->d, 1, "job %s: the shares of %u other node%s gathered, %llu bytes",
			  s->j->id, n, n == 1 ? "" : "s", (unsigned long long)total);
	return 0;
}

/*
 * A job on this node only. With --outside close, a connection to a
 * process outside the job is captured, this end alone, and listed in
 * s->outside; without, the engine refuses it by name.
 */
static int one_node(struct snap *s, int dev, struct ckpt_err *err)
{
	json_t *ends, *list;
	int ret;

	if (s->j->outside_close)
		s->a.flags |= CKPT_CHECKPOINT_PEERS_AWAY;
	ret = snap_take(s, dev, err);
	/* The engine has continued, stopped or killed them: joins may go on. */
	job_let_joins(s->j, !ret && s->a.flags & CKPT_CHECKPOINT_KILL);
	if (ret || !s->j->outside_close)
		return ret;
	ends = channel_ends(s->treedir, &s->t, err);
	if (!ends)
		return -EIO;
	list = channel_outside(ends);
	json_decref(ends);
	s->outside = json_object();
	if (json_array_size(list))
		json_object_set(s->outside, s->d->node, list);
	json_decref(list);
	return 0;
}

/*
 * coordinated(), tried again while bytes in flight between two nodes moved
 * between their captures (-EAGAIN from channel_join()), within the timeout:
 * the job runs on a moment in between, everything of the try undone.
 */
static int coordinated_tries(struct snap *s, int dev, struct ckpt_err *err)
{
	uint64_t t0 = ckptd_now_ns();
	int ret, tries = 0;

	for (;;) {
		ret = coordinated(s, dev, err);
		if (ret != -EAGAIN || ++tries == CKPTD_JOIN_TRIES)
			return ret;
		/*
		 * Nor once the timeout is spent: a share's callbacks that held
		 * the checkpoint off until it (an MPI rank outside its window)
		 * answer -EAGAIN too, and the timeout bounds the whole
		 * checkpoint, not each try.
		 */
		if (s->a.timeout_ms &&
		    ckptd_now_ns() - t0 >= (uint64_t)s->a.timeout_ms * 1000000)
			return ret;
		ckptd_log(s->d, 1, "job %s: %s (try %d)", s->j->id, err->msg, tries);
		finish(s, "abort");
		gather_forget(s);
		s->npeers = 0;
		memset(s->entry, 0, sizeof(s->entry));
		json_decref(s->remote);
		json_decref(s->ended);
		json_decref(s->chans);
		s->chans = NULL;
		ckpt_tree_free(&s->t);
		free(s->res);
		s->res = NULL;
		usleep(50000 * tries);
		ret = prepare(s, err);	/* SEQ.tmp anew, the other nodes' shares gone */
		if (ret)
			return ret;
	}
}

/* @msg to every node's share, each answer awaited; their connections stay. */
static void tell_all(struct snap *s, json_t *msg)
{
	struct ckpt_err err;
	json_t *reply;
	unsigned int i;

	for (i = 0; i < s->npeers; i++) {
		if (s->peers[i] &&
		    !peer_call(s->peers[i], json_deep_copy(msg), &reply,
			       CKPTD_PEER_WAIT_S, &err))
			json_decref(reply);
		else if (s->peers[i])
			ckptd_log(s->d, 0, "job %s: node %s: %s", s->j->id,
				  peer_name(s->peers[i]), err.msg);
	}
	json_decref(msg);
}

/* The staged shares, answered or not, wait on for their gather. */
static void stages_wait(struct snap *s)
{
	unsigned int i;

	for (i = 0; i < s->npeers; i++)
		if (s->peers[i] && s->gather[i])
			peer_send(s->peers[i], json_pack("{s:b}", "wait", 1), NULL);
}

/*
 * A checkpoint that lets the job go on: once every share is captured, all
 * of it runs on (the images are what they are, whatever it does now), and
 * the gather, the read-back and the commit happen while it runs. A
 * failure after this point is the abort it would have been: the job
 * continues, no snapshot is made.
 */
static int release(struct snap *s, struct ckpt_err *err)
{
	struct ckpt_err perr;
	uint64_t t0;
	json_t *reply;
	unsigned int i;
	int ret = 0;

	/* All told before any answer is awaited: a slow node holds up none. */
	for (i = 0; i < s->npeers; i++)
		if (s->peers[i] &&
		    peer_send(s->peers[i], json_pack("{s:s, s:b}", "action", "continue",
						     "more", 1), &perr))
			ckptd_log(s->d, 0, "job %s: %s", s->j->id, perr.msg);
	snap_apply(s, "continue");
	/* Let go when every share was staged already: hear_staged(). */
	if (!s->stopped_ns)
		s->stopped_ns = ckptd_now_ns() - s->stop_t0;
	s->released = true;
	/* Every node reads its images back now, this one too. */
	progress_phase("verifying", s->t.nr, 0);
	t0 = ckptd_now_ns();
	s->local = node_entry(s, err);
	s->verify_ns = ckptd_now_ns() - t0;
	if (!s->local)
		ret = -EIO;
	/* Each answer carries its share's sums (ckptd_sums_merge()). */
	for (i = 0; i < s->npeers; i++) {
		if (!s->peers[i])
			continue;
		stages_wait(s);
		if (peer_reply(s->peers[i], &reply, CKPTD_PEER_WAIT_S, &perr)) {
			if (!ret)
				ret = ckpt_err_set(err, EIO, "%s", perr.msg);
		} else {
			if (!ret)
				ret = ckptd_sums_merge(s->entry[i], json_object_get(reply, "sums"),
						       peer_name(s->peers[i]), err);
			json_decref(reply);
		}
		/* A share with nothing to send has ended its part: let it go. */
		if (!s->gather[i])
			let_go(s, i);
	}
	return ret;
}

/* Every node (this one too) applies @action and says it has. */
static void finish(struct snap *s, const char *action)
{
	unsigned int i;

	/*
	 * Released, a share still here has not given its part (the gather
	 * failed before it): it hears "abort", and gets no second SIGCONT.
	 */
	if (s->released)
		action = "abort";
	tell_all(s, json_pack("{s:s}", "action", action));
	for (i = 0; i < s->npeers; i++)
		peer_close(s->peers[i]);
	if (!s->released) {
		snap_apply(s, action);
		if (!s->stopped_ns)
			s->stopped_ns = ckptd_now_ns() - s->stop_t0;
	}
}

/* meta.json and its MAC into the .tmp directory, synced. */
static int write_meta(struct snap *s, struct ckpt_err *err)
{
	char hex[2 * CKPTD_MAC_LEN + 2];
	char *text;
	int dfd, ret;

	text = json_dumps(s->meta, JSON_INDENT(1) | JSON_SORT_KEYS);
	if (!text)
		return ckpt_err_set(err, ENOMEM, "out of memory");
	key_mac(s->d, text, strlen(text), hex);
	strcat(hex, "\n");
	dfd = open(s->tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ret = dfd < 0 ? -errno : file_write_atomic(dfd, CKPT_META_FILE, text,
						     strlen(text), 0600);
	if (!ret)
		ret = file_write_atomic(dfd, CKPT_META_MAC_FILE, hex,
					strlen(hex), 0600);
	if (dfd >= 0)
		close(dfd);
	free(text);
	if (ret)
		return ckpt_err_set(err, -ret, "writing the metadata into %s: %s",
				    s->tmp, strerror(-ret));
	return 0;
}

/* SEQ.tmp becomes SEQ, and latest points at it: the commit. */
static int commit(struct snap *s, struct ckpt_err *err)
{
	char name[32];
	int dfd, ret = 0;

	dfd = open(s->jobdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return ckpt_err_set(err, errno, "%s: %s", s->jobdir, strerror(errno));
	snprintf(name, sizeof(name), "%u", s->seq);
	if (ckpt_rename_noreplace(dfd, strrchr(s->tmp, '/') + 1, dfd, name))
		ret = ckpt_err_set(err, errno, "cannot rename %s to %s: %s",
				   s->tmp, s->final, strerror(errno));
	if (!ret && (ret = snapdir_latest(dfd, s->seq, false))) {
		ckptd_log(s->d, 0, "job %s: snapshot %u is whole, but 'latest' was not moved to it: %s",
			  s->j->id, s->seq, strerror(-ret));
		ret = 0;
	}
	fsync_dir(dfd);
	close(dfd);
	return ret;
}

/*
 * A random word in SEQ.tmp/.token: a node that reads it there, at the path
 * it was told, shares this snapshot root (root_shared()).
 */
static int write_token(struct snap *s, struct ckpt_err *err)
{
	uint8_t raw[CKPTD_TOKEN_LEN];
	int ret;

	if (getrandom(raw, sizeof(raw), 0) != sizeof(raw))
		return ckpt_err_set(err, errno, "getrandom: %s", strerror(errno));
	ckptd_hex(raw, sizeof(raw), s->token);
	ret = file_write_atomic(s->tmp_fd, CKPTD_TOKEN_FILE, s->token,
				strlen(s->token), 0600);
	return ret ? ckpt_err_set(err, -ret, "writing %s/%s: %s", s->tmp,
				  CKPTD_TOKEN_FILE, strerror(-ret)) : 0;
}

static int prepare(struct snap *s, struct ckpt_err *err)
{
	struct stat st, lst;
	int ret;

	/* A try again (coordinated_tries()): the last try's SEQ.tmp goes. */
	if (s->tmp_fd >= 0) {
		file_remove_tree(s->tmp);
		close(s->tmp_fd);
		s->tmp_fd = -1;
	}

	if (s->sd.fd < 0) {
		ret = snapdir_open(&s->sd, s->d, s->dir, s->j->id, s->j->uid,
				   true, err);
		if (ret)
			return ret;
	}
	snprintf(s->jobdir, sizeof(s->jobdir), "%s", s->sd.path);
	/*
	 * Numbers already taken (by a copy restarted as another job, or by a
	 * worker of a ckptd that died, still at work) are skipped.
	 */
	for (s->seq = s->j->seq + 1;; s->seq++) {
		if (snprintf(s->final, sizeof(s->final), "%s/%u", s->jobdir,
			     s->seq) >= (int)sizeof(s->final) - 8)
			return ckpt_err_set(err, ENAMETOOLONG, "snapshot root too long");
		snprintf(s->tmp, sizeof(s->tmp), "%.*s.tmp", PATH_MAX - 8, s->final);
		if (stat(s->final, &st) && !snapdir_tmp_in_use(s->tmp))
			break;
	}
	if (snprintf(s->shown, sizeof(s->shown), "%s/%u", s->sd.shown, s->seq) >=
	    (int)sizeof(s->shown) - 8)
		return ckpt_err_set(err, ENAMETOOLONG, "%s: too long", s->sd.shown);
	/* One left by a ckptd that died mid-checkpoint is nobody's. */
	file_remove_tree(s->tmp);
	if (snprintf(s->treedir, sizeof(s->treedir), "%s/%s", s->tmp,
		     s->d->node) >= (int)sizeof(s->treedir) - 2)
		return ckpt_err_set(err, ENAMETOOLONG, "snapshot root too long");
	if (mkdir(s->tmp, 0700) || mkdir(s->treedir, 0700))
		return ckpt_err_set(err, errno, "cannot create %s: %s",
				    s->treedir, strerror(errno));
	strcat(s->treedir, "/0");
	/*
	 * Ours while this worker lives: no sweep takes it (tmp_in_use()).
	 * A file system without locks (NFS without lockd, say) gives no
	 * such word: a ckptd started meanwhile may take it, as before.
	 */
	s->tmp_fd = open(s->tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (s->tmp_fd < 0)
		return ckpt_err_set(err, errno, "%s: %s", s->tmp, strerror(errno));
	/* A sweep's look takes it a moment: waited for. */
	if (flock(s->tmp_fd, LOCK_EX))
		ckptd_log(s->d, 2, "job %s: %s not locked: %s", s->j->id,
			  s->tmp, strerror(errno));
	/* Swept between its mkdir and the lock: not ours any more. */
	if (fstat(s->tmp_fd, &st) || stat(s->tmp, &lst) || st.st_ino != lst.st_ino)
		return ckpt_err_set(err, ESTALE, "%s was removed as it was made (a ckptd starting?); try again",
				    s->tmp);
	/* The shares' question: whether they see this SEQ.tmp. */
	return json_array_size(s->j->nodes) ? write_token(s, err) : 0;
}

/*
 * The committed snapshot, copied to nodes whose shares were gathered
 * (copy.c): into s->copies, or why not in s->copy_err. ckptd is told of
 * the commit first: the job's newest snapshot is its now, and a cancel no
 * longer ends this worker. A snapshot in a --dir is copied into the same
 * --dir on the other node, as the job's owner's there.
 */
static void copies(struct snap *s, int out)
{
	const char *nodes[CKPTD_MAX_NODES + 1];
	unsigned int i, n = 0;

	for (i = 0; i < CKPTD_MAX_NODES; i++)
		if (s->gather[i])
			nodes[n++] = s->gather[i];
	nodes[n] = NULL;
	if (!n || !s->d->cfg.copies)
		return;
	worker_send(out, json_pack("{s:s, s:I, s:s, s:O*}", "event", "committed",
				   "seq", (json_int_t)s->seq, "snapshot", s->shown,
				   "ended", json_array_size(s->ended) ? s->ended : NULL));
	progress_phase("copying", 0, 0);
	s->copy_t0 = ckptd_now_ns();
	if (copy_out(s->d, s->j, s->seq, s->dir[0] ? s->dir : NULL, s->final,
		     nodes, &s->copies, &s->copy_err))
		ckptd_log(s->d, 0, "job %s: %s", s->j->id, s->copy_err.msg);
	s->copy_ns = ckptd_now_ns() - s->copy_t0;
}

/* The worker: checkpoint, metadata, commit; one reply to ckptd. */
static void checkpoint_worker(struct ckptd *d, struct job *j, int out, void *arg)
{
	struct snap *s = arg;
	struct ckpt_err err;
	json_t *res;
	int dev, ret;

	s->d = d;
	s->j = j;
	ret = prepare(s, &err);
	dev = ret ? -1 : ckpt_dev_open(O_RDWR);
	if (!ret && dev < 0)
		ret = ckpt_err_set(&err, -dev, "engine not loaded: %s: %s",
				   ckpt_dev_path(), strerror(-dev));
	if (!ret) {
		progress_begin(s->tmp);
		progress_watch(true);
	}
	if (!ret && json_array_size(j->nodes))
		ret = coordinated_tries(s, dev, &err);
	else if (!ret)
		ret = one_node(s, dev, &err);
	progress_watch(false);
	s->commit_t0 = ckptd_now_ns();
	if (!ret && json_array_size(j->nodes) && !strcmp(s->mode, "continue"))
		ret = release(s, &err);
	if (!ret)
		ret = gather(s, &err);
	/* Read by the shares: no part of the snapshot. */
	if (!ret && json_array_size(j->nodes) &&
	    unlinkat(s->tmp_fd, CKPTD_TOKEN_FILE, 0))
		ret = ckpt_err_set(&err, errno, "%s/%s: %s", s->tmp, CKPTD_TOKEN_FILE,
				   strerror(errno));
	if (!ret) {
		if (!s->local)
			progress_phase("verifying", s->t.nr, 0);
		ret = build_meta(s, &err);
	}
	if (!ret) {
		progress_phase("committing", s->nr_all, s->bytes_all);
		ret = write_meta(s, &err);
	}
	if (!ret)
		ret = commit(s, &err);
	s->commit_ns = ckptd_now_ns() - s->commit_t0;
	if (json_array_size(j->nodes))
		finish(s, ret ? "abort" : s->mode);
	if (!ret)
		copies(s, out);
	gather_forget(s);
	json_decref(s->local);
	s->local = NULL;
	if (ret) {
		if (*s->tmp)
			file_remove_tree(s->tmp);
		snapdir_shown(&s->sd, &err);
		worker_send(out, json_pack("{s:b, s:o}", "ok", 0, "error",
					   json_sprintf("job %s: %s", j->id, err.msg)));
		return;
	}
	res = json_pack("{s:b, s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:O*}",
		"ok", 1, "job", j->id, "snapshot", s->shown,
		"seq", (json_int_t)s->seq, "processes", s->nr_all,
		"bytes", s->bytes_all,
		"frozen_us", (json_int_t)(s->a.frozen_ns / 1000),
		"total_us", (json_int_t)(s->a.total_ns / 1000),
		"verify_us", (json_int_t)(s->verify_ns / 1000),
		"ended", json_array_size(s->ended) ? s->ended : NULL);
	if (res && json_array_size(s->copies))
		json_object_set(res, "copies", s->copies);
	if (res && s->copy_t0)
		json_object_set_new(res, "copy_us", json_integer(s->copy_ns / 1000));
	if (res && s->copy_err.msg[0])
		json_object_set_new(res, "copy_error", json_string(s->copy_err.msg));
	json_decref(s->copies);
	/*
	 * Several nodes: how long every share stayed stopped (SIGSTOP after
	 * its capture), and the gather, read-back, metadata and commit after
	 * the captures, which a continue no longer waits for.
	 */
	if (res && json_array_size(j->nodes)) {
		json_object_set_new(res, "stopped_us", json_integer(s->stopped_ns / 1000));
		json_object_set_new(res, "commit_us", json_integer(s->commit_ns / 1000));
	}
	worker_send(out, res);
}

/* In ckptd: the nodes whose share ended leave the job's list. */
static void drop_ended(struct ckptd *d, struct job *j, const json_t *ended)
{
	const json_t *name;
	size_t i, k;

	json_array_foreach(ended, i, name)
		for (k = 0; k < json_array_size(j->nodes); k++)
			if (json_equal(json_array_get(j->nodes, k), name)) {
				ckptd_log(d, 1, "job %s: the share on %s has ended; the job goes on without it",
					  j->id, json_string_value(name));
				json_array_remove(j->nodes, k);
				break;
			}
}

/* In ckptd: the job's newest snapshot is the worker's, once it says so. */
static void checkpoint_report(struct worker *w, json_t *msg)
{
	const char *ev = msg ? ckptd_msg_str(msg, "event") : NULL;
	bool committed = ev && !strcmp(ev, "committed");
	struct job *j = worker_job(w);
	const char *shown;
	json_int_t seq;

	if (ev && !committed)
		return;		/* progress, for the client */
	/* Its copies under way or done (copy.c), the worker's reply. */
	if (!committed && j->copying) {
		j->copying = false;
		return;
	}
	if (msg && (committed || json_is_true(json_object_get(msg, "ok"))) &&
	    !json_unpack(msg, "{s:I, s:s}", "seq", &seq, "snapshot", &shown)) {
		j->seq = seq;
		snprintf(j->latest, sizeof(j->latest), "%s", shown);
		drop_ended(worker_daemon(w), j, json_object_get(msg, "ended"));
		job_save(worker_daemon(w), j);
		ckptd_log(worker_daemon(w), 1, "job %s: snapshot %u taken",
			  j->id, j->seq);
		snapshot_retain(worker_daemon(w), j->dir, j->id, j->uid, j->keep);
		j->copying = committed;
	} else if (msg && !worker_conn(w)) {
		ckptd_log(worker_daemon(w), 0, "%s", ckptd_msg_str(msg, "error") ?: "");
	} else if (!msg) {
		/* The worker is gone (cancelled, killed): nothing half-made stays. */
		snapshot_sweep(worker_daemon(w), j);
	}
}

/*
 * Why @j cannot be checkpointed from this node now, in @why, or NULL.
 * (Its trees are looked at again as the checkpoint starts: snap_take().)
 */
static const char *checkpoint_refusal(struct ckptd *d, struct job *j,
				      char *why, size_t len)
{
	pid_t roots[CKPT_TREE_MAX_ROOTS];
	int n;

	if (j->coordinator[0])
		snprintf(why, len, "job %s is coordinated by node %s: checkpoint it there",
			 j->id, j->coordinator);
	else if (j->busy)
		snprintf(why, len, "job %s: a checkpoint or restart of it is under way",
			 j->id);
	if (j->coordinator[0] || j->busy)
		return why;
	/* An earlier ckptd's worker still at it: this one waits its turn. */
	if (snapshot_catch_up(d, j)) {
		snprintf(why, len, "job %s: snapshot %u, begun before ckptd was started again, is still being written; try again",
			 j->id, j->orphan_seq);
		return why;
	}
	n = job_roots(j, roots, CKPT_TREE_MAX_ROOTS);
	if (n == 0 || n == -ENOENT)
		snprintf(why, len, "job %s has no process on this node", j->id);
	else if (n == -E2BIG)
		snprintf(why, len, "job %s is more than %u processes or %u process trees on this node",
			 j->id, CKPT_TREE_MAX_MEMBERS, CKPT_TREE_MAX_ROOTS);
	else if (n < 0)
		snprintf(why, len, "job %s: cannot list its processes: %s", j->id,
			 strerror(-n));
	return n > 0 ? NULL : why;
}

/*
 * Starts a checkpoint of @j in @mode for client @c (NULL: ckptd's own,
 * periodic or detached), into @dir (NULL: the job's). NULL, or the
 * refusal in @why.
 */
static const char *checkpoint_start(struct ckptd *d, struct conn *c,
				    struct job *j, const char *mode,
				    unsigned int timeout_s, const char *dir,
				    char *why, size_t len)
{
	struct snap s = { .mode = mode, .sd.fd = -1, .tmp_fd = -1 };

	/* A job's tmpfs files travel with it (engine.md, "Files"). */
	s.a.flags = CKPT_CHECKPOINT_LOCAL_FILES | CKPT_CHECKPOINT_DIGESTS |
		    (!strcmp(mode, "stop") ? CKPT_CHECKPOINT_STOP :
		     !strcmp(mode, "kill") ? CKPT_CHECKPOINT_KILL : 0);
	s.a.timeout_ms = timeout_s * 1000;
	if (checkpoint_refusal(d, j, why, len))
		return why;
	snprintf(s.dir, sizeof(s.dir), "%s", dir ?: j->dir);
	j->last = time(NULL);
	worker_set_checkpoint();
	if (!worker_start(d, c, j, checkpoint_worker, checkpoint_report, &s)) {
		snprintf(why, len, "job %s: cannot start a worker: %s", j->id,
			 strerror(errno));
		return why;
	}
	return NULL;
}

/*
 * checkpoint {job, mode: continue|stop|kill, timeout?, detach?, dir?}, DIR
 * a directory of the caller's for this snapshot (snapdir.c). Detached
 * (MPIX_Checkpoint's: its caller is a process of the job), the request is
 * checked and answered at once, and the checkpoint starts once the client
 * has closed the connection, which a checkpoint of the caller could not
 * hold; its result is the job's, and the log's.
 */
void op_checkpoint(struct conn *c, const json_t *req)
{
	const char *mode = "continue", *literal, *why, *dir = NULL;
	json_int_t timeout = 0;
	struct ckpt_err err;
	int detach = 0;
	struct job *j;
	char buf[512];
	j = job_lookup(c, req);
	if (!j)
		return;
	if (json_unpack((json_t *)req, "{s?:s, s?:I, s?:b, s?:s}", "mode", &mode,
			"timeout", &timeout, "detach", &detach, "dir", &dir) ||
	    timeout < 0 || timeout > CKPT_TIMEOUT_MAX_MS / 1000 || (dir && detach)) {
		conn_fail(c, "checkpoint: \"mode\" is a string, \"timeout\" 0 to %u seconds, \"detach\" a boolean, \"dir\" a string (not detached)",
			  CKPT_TIMEOUT_MAX_MS / 1000);
		return;
	}
	if (dir && snapdir_root_check(dir, conn_uid(c), &err)) {
		conn_fail(c, "job %s: %s", j->id, err.msg);
		return;
	}
	/* The mode's own literal: the request is gone when the worker runs. */
	literal = ckptd_mode(mode);
	if (!literal) {
		conn_fail(c, "checkpoint: mode '%.16s' is none of continue, stop, kill",
			  mode);
		return;
	}
	mode = literal;
	if (detach) {
		/* Another node coordinates it: that node is asked (ask.c). */
		why = j->coordinator[0] ? NULL :
		      checkpoint_refusal(conn_daemon(c), j, buf, sizeof(buf));
		if (why) {
			conn_fail(c, "%s", why);
			return;
		}
		conn_set_detached(c, j->id, mode, timeout);
		conn_reply(c, json_pack("{s:s, s:b}", "job", j->id, "detached", 1));
		return;
	}
	why = checkpoint_start(conn_daemon(c), c, j, mode, timeout, dir, buf,
			       sizeof(buf));
	if (why)
		conn_fail(c, "%s", why);
}

/* A detached request's checkpoint, its client gone. */
void checkpoint_detached(struct ckptd *d, const char *id, const char *mode,
			 unsigned int timeout_s)
{
	struct job *j = job_find(d, id);
	char why[512];

	if (!j)
		ckptd_log(d, 0, "job %s: the detached checkpoint: the job has ended", id);
	else if (j->coordinator[0])
		ask_coordinator(d, j, mode, timeout_s);
	else if (checkpoint_start(d, NULL, j, mode, timeout_s, NULL, why, sizeof(why)))
		ckptd_log(d, 0, "job %s: the detached checkpoint: %s", id, why);
	else
		ckptd_log(d, 1, "job %s: the detached checkpoint starts", id);
}

/* The periodic checkpoints of jobs run with --interval, when due. */
void checkpoint_due(struct ckptd *d)
{
	time_t now = time(NULL);
	struct job *j;
	char why[512];

	for (j = d->jobs; j; j = j->next) {
		/* An earlier ckptd's worker: its end is seen within a second. */
		snapshot_catch_up(d, j);
		if (!j->interval || j->busy || j->coordinator[0] ||
		    now - j->last < (time_t)j->interval || !job_running(j))
			continue;
		if (checkpoint_start(d, NULL, j, "continue", 0, NULL, why, sizeof(why)))
			ckptd_log(d, 0, "job %s: the periodic checkpoint: %s", j->id, why);
	}
}

void snapshot_retain(struct ckptd *d, const char *jobdir, const char *id,
		     uid_t uid, unsigned int keep)
{
	char path[PATH_MAX];
	struct dirent *e;
	unsigned int *seqs = NULL, n = 0, i, k, tmp;
	struct snapdir sd;
	char *end;
	DIR *dir;

	if (!keep)
		return;
	dir = snapshots_of(d, jobdir, id, uid, &sd);
	if (!dir)
		return;
	while ((e = readdir(dir))) {
		unsigned long v = strtoul(e->d_name, &end, 10);
		unsigned int *more;

		if (*end || !v || v > UINT32_MAX || !isdigit((unsigned char)e->d_name[0]))
			continue;
		more = realloc(seqs, (n + 1) * sizeof(*seqs));
		if (!more)
			break;
		seqs = more;
		seqs[n++] = v;
	}
	closedir(dir);
	for (i = 0; i < n; i++)
		for (k = i + 1; k < n; k++)
			if (seqs[k] > seqs[i]) {
				tmp = seqs[i];
				seqs[i] = seqs[k];
				seqs[k] = tmp;
			}
	for (i = keep; i < n; i++) {
		if (snprintf(path, sizeof(path), "%s/%u", sd.path, seqs[i]) >=
		    (int)sizeof(path))
			continue;
		file_remove_tree(path);
		ckptd_log(d, 1, "job %s: snapshot %u removed (--keep %u)", id,
			  seqs[i], keep);
	}
	free(seqs);
	snapdir_close(&sd);
}

/* A peer-checkpoint: the request, and this node's share of the snapshot. */
struct share {
	struct snap s;
	const char *id;		/* the job's */
	const char *dir;	/* the coordinator's ROOT/JOB/SEQ.tmp */
	const char *root;	/* the job's --dir, or NULL */
	const char *token;	/* the coordinator's SEQ.tmp/.token */
	json_int_t seq;
	json_int_t timeout;	/* seconds */
	bool sums_later;	/* a continue: the images read back once it goes on */
	bool staged;		/* a continue: the word comes once it is staged */
	bool lost;		/* staged, no word came: the share goes on, no part */
	struct peer *p;		/* the coordinator */
};

/*
 * Whether this node sees the coordinator's SEQ.tmp at @dir, the path it
 * was told (its snapshot root or --dir is the coordinator's): its token
 * is there.
 */
static bool root_shared(struct ckptd *d, struct share *sh, const char *want)
{
	char name[32], *text = NULL;
	struct ckpt_err err;
	size_t len;
	bool same;

	if (strcmp(want, sh->dir) ||
	    snapdir_open(&sh->s.sd, d, sh->root, sh->s.j->id, sh->s.j->uid,
			 false, &err))
		return false;
	snprintf(name, sizeof(name), "%u.tmp/%s", (unsigned int)sh->seq,
		 CKPTD_TOKEN_FILE);
	same = !file_read_max(sh->s.sd.fd, name, &text, &len, 64) &&
	       !strcmp(text, sh->token);
	free(text);
	if (!same)
		snapdir_close(&sh->s.sd);
	return same;
}

/*
 * Where this node's share goes: DIR/NODE/0 under the snapshot root the
 * nodes share (or the job's --dir there), reached through ROOT/JOB as
 * ckptd made it (snapdir.c); or, on a root of its own, a stage the
 * coordinator gathers it from (s->stage).
 */
static int share_dir(struct ckptd *d, struct share *sh, struct ckpt_err *err)
{
	struct snap *s = &sh->s;
	char want[PATH_MAX], what[64];
	const char *at;
	int ret;

	if (snprintf(want, sizeof(want), "%s/%s/%u.tmp", sh->root ?: d->cfg.snapshot_root,
		     s->j->id, (unsigned int)sh->seq) < (int)sizeof(want) &&
	    root_shared(d, sh, want)) {
		at = s->sd.path;
		snprintf(what, sizeof(what), "%u.tmp/", (unsigned int)sh->seq);
	} else {
		snprintf(what, sizeof(what), "%s.%u", s->j->id, (unsigned int)sh->seq);
		ret = ship_stage_make(d, what, &s->stage, err);
		if (ret)
			return ret;
		at = s->stage.path;
		what[0] = '\0';
	}
	if (snprintf(s->treedir, sizeof(s->treedir), "%s/%s%s", at, what,
		     d->node) >= (int)sizeof(s->treedir) - 2 ||
	    mkdir(s->treedir, 0700))
		return ckpt_err_set(err, errno ?: ENAMETOOLONG, "cannot create %s: %s",
				    s->treedir, strerror(errno));
	strcat(s->treedir, "/0");
	return 0;
}

/*
 * The directory share_dir() made under the shared root (DIR/NODE), gone
 * with the share it held no part of; a stage is removed as always.
 */
static void share_dir_remove(struct share *sh)
{
	char *slash = strrchr(sh->s.treedir, '/');

	if (sh->s.stage.fd >= 0 || !slash || strcmp(slash, "/0"))
		return;
	*slash = '\0';
	file_remove_tree(sh->s.treedir);
}

/*
 * A continue's share, staged and stopped while the engine writes its
 * images: the coordinator hears so, and says whether every share is
 * ({"release": true}: it goes on now). No word, or another: it waits for
 * the word after the captures, as before.
 */
static void share_staged(struct snap *s, void *arg, bool told)
{
	struct share *sh = arg;
	json_t *msg = NULL;

	/* Not staged: its answer, after the capture, is its first word. */
	if (!told)
		return;
	/* The coordinator's own capture may take its timeout first. */
	if (peer_send(sh->p, json_pack("{s:b, s:b}", "ok", 1, "staged", 1), NULL) ||
	    peer_recv(sh->p, &msg, sh->timeout + CKPTD_PEER_WAIT_S, NULL) ||
	    !json_is_boolean(json_object_get(msg, "release"))) {
		/* No word: the share goes on, and gives no part to commit. */
		json_decref(msg);
		sh->lost = true;
		snap_apply(s, "abort");
		ckptd_log(s->d, 0, "job %s: no word from the coordinator once its share was staged; the job continues",
			  s->j->id);
		return;
	}
	if (json_is_true(json_object_get(msg, "release"))) {
		snap_apply(s, "continue");
		ckptd_log(s->d, 2, "job %s: every share staged, the job goes on", s->j->id);
	}
	json_decref(msg);
}

/*
 * This node's share, taken into its directory (share_dir()) and left
 * stopped: its entry of the metadata in @node and its channels' ends in @chans
 * (the caller's to free), or -errno and the reason in @err. A continue's
 * may be let go as soon as every share is staged (share_staged()).
 */
static int share_take(struct ckptd *d, struct share *sh, json_t **node,
		      json_t **chans, struct ckpt_err *err)
{
	struct snap *s = &sh->s;
	int dev, ret;

	ret = share_dir(d, sh, err);
	if (ret)
		return ret;
	dev = ckpt_dev_open(O_RDWR);
	if (dev < 0)
		return ckpt_err_set(err, -dev, "engine not loaded");
	s->a.flags = CKPT_CHECKPOINT_STOP | CKPT_CHECKPOINT_PEERS_AWAY |
		     CKPT_CHECKPOINT_WAITING_AWAY | CKPT_CHECKPOINT_LOCAL_FILES |
		     CKPT_CHECKPOINT_DIGESTS;
	s->a.timeout_ms = sh->timeout * 1000;
	job_mark_stopped(s->j, true);
	if (sh->staged)
		ret = snap_take_staged(s, dev, share_staged, sh, err);
	else
		ret = snap_take(s, dev, err);
	close(dev);
	if (!ret && sh->lost)
		ret = ckpt_err_set(err, EPROTO, "no word from the coordinator once the share was staged");
	if (ret)
		return ret;
	*chans = channel_ends(s->treedir, &s->t, err);
	s->no_sums = sh->sums_later;
	if (*chans)
		*node = node_entry(s, err);
	return *node ? 0 : -EIO;
}

/*
 * The coordinator's word on job @j's share, applied: continue, stop, kill,
 * or abort (anything else, or no word in time: the share continues).
 */
static const char *share_await(struct ckptd *d, struct peer *p,
			       struct share *sh)
{
	const char *action, *word, *names[] = { d->node, NULL };
	const struct ship_stage *stage = &sh->s.stage;
	const struct job *j = sh->s.j;
	bool released = false;
	struct ckpt_err err;
	json_t *msg;

	for (;;) {
		if (peer_recv(p, &msg, CKPTD_PEER_WAIT_S, &err)) {
			ckptd_log(d, 0, "job %s: the coordinator's word did not come (%s); the job continues",
				  j->id, err.msg);
			if (!released)
				snap_apply(&sh->s, "abort");
			return released ? "continue" : "abort";
		}
		/* Another share on its way: the word comes later. */
		if (json_is_true(json_object_get(msg, "wait")) ||
		    json_object_get(msg, "release")) {
			json_decref(msg);
			continue;
		}
		/* Continue: the job runs on now; gather and commit come after. */
		if (!released && json_is_true(json_object_get(msg, "more")) &&
		    !strcmp(ckptd_msg_str(msg, "action") ?: "", "continue")) {
			snap_apply(&sh->s, "continue");
			released = true;
			json_decref(msg);
			/* Running again: its images read back for the metadata. */
			msg = sh->sums_later ? tree_sums(&sh->s, &err) : NULL;
			if (sh->sums_later && !msg) {
				snapdir_shown(&sh->s.sd, &err);
				ckptd_log(d, 0, "job %s: %s", j->id, err.msg);
				peer_send(p, json_pack("{s:b, s:o}", "ok", 0, "error",
						       json_sprintf("node %s: %s", d->node, err.msg)),
					  NULL);
				return "continue";
			}
			peer_send(p, json_pack("{s:b, s:o*}", "ok", 1, "sums", msg), NULL);
			/* On the root the nodes share: its part is done. */
			if (stage->fd < 0)
				return "continue";
			continue;
		}
		if (!json_is_true(json_object_get(msg, "send")))
			break;
		json_decref(msg);
		if (stage->fd < 0) {
			peer_send(p, json_pack("{s:s, s:s}", "ship", "error", "error",
					       "its share is on the snapshot root already"), NULL);
			continue;
		}
		if (ship_send(p, stage->fd, names, true, NULL, &err)) {
			ckptd_log(d, 0, "job %s: its share did not reach the coordinator (%s); the job continues",
				  j->id, err.msg);
			if (!released)
				snap_apply(&sh->s, "abort");
			return released ? "continue" : "abort";
		}
		/* Released and gathered: nothing more to wait for. */
		if (released)
			return "continue";
	}
	word = ckptd_msg_str(msg, "action") ?: "";
	/* Only the words it knows, as its own literals. */
	action = !strcmp(word, "kill") ? "kill" : !strcmp(word, "stop") ? "stop" :
		 !strcmp(word, "continue") ? "continue" : "abort";
	/* Released before: a word now is the coordinator giving up. */
	if (released)
		action = "abort";
	else
		snap_apply(&sh->s, action);
	peer_send(p, json_pack("{s:b}", "ok", 1), NULL);
	json_decref(msg);
	return action;
}

/*
 * Whether the job's share on this node has ended: no record, no process
 * left, or no cgroup. A peer worker's records are ckptd's at its fork, and
 * ckptd may since have dropped the job, its cgroup with it (job_reap()).
 */
static bool share_ended(const struct job *j)
{
	pid_t roots[CKPT_TREE_MAX_ROOTS];
	int n;

	if (!j)
		return true;
	n = job_roots(j, roots, CKPT_TREE_MAX_ROOTS);
	return !n || n == -ENOENT;
}

/*
 * peer-checkpoint {job, seq, dir, timeout, root?, token}: this node's
 * share of a coordinated checkpoint into DIR/NODE/0 (DIR, the
 * coordinator's SEQ.tmp, under the snapshot root the job's nodes share or
 * the job's --dir ROOT) or into a stage the coordinator gathers it from
 * (share_dir()), left stopped; then the coordinator's {action}, or, if
 * none comes in time, the share continues.
 */
void peer_checkpoint(struct ckptd *d, struct peer *p, const json_t *req)
{
	struct share sh = { .s = { .d = d, .sd.fd = -1, .tmp_fd = -1, .stage.fd = -1 } };
	json_t *node = NULL, *chans = NULL, *msg;
	struct ckpt_err err;
	bool taken;
	int ret = 0;

	sh.id = ckptd_msg_str(req, "job");
	sh.dir = ckptd_msg_str(req, "dir");
	sh.root = ckptd_msg_str(req, "root");
	sh.token = ckptd_msg_str(req, "token");
	sh.sums_later = !strcmp(ckptd_msg_str(req, "sums") ?: "", "later");
	sh.staged = json_is_true(json_object_get(req, "staged"));
	sh.p = p;
	sh.s.j = job_find(d, sh.id);
	if (json_unpack((json_t *)req, "{s:I, s?:I}", "seq", &sh.seq,
			"timeout", &sh.timeout) ||
	    !sh.id || !sh.dir || !sh.token || sh.seq <= 0 || sh.seq > UINT32_MAX ||
	    sh.timeout < 0 || sh.timeout > CKPT_TIMEOUT_MAX_MS / 1000)
		ret = ckpt_err_set(&err, EINVAL, "a bad request");
	/*
	 * No record, but processes in the job's cgroup: a share restarted
	 * here whose "started" ckptd has not read yet. Not "ended", which
	 * would drop this node from the job for good.
	 */
	if (!ret && !sh.s.j && job_id_running(sh.id))
		ret = ckpt_err_set(&err, EAGAIN,
				   "job %.16s: its share here is still being restarted; try again",
				   sh.id);
	/* Its processes all gone (its record too, maybe): the share ended. */
	if (!ret && share_ended(sh.s.j)) {
		ckptd_log(d, 1, "job %.16s: its share here has ended; no part of snapshot %lld",
			  sh.id, (long long)sh.seq);
		peer_send(p, json_pack("{s:b, s:b}", "ok", 1, "ended", 1), NULL);
		return;
	}
	taken = !ret;
	if (taken)
		ret = share_take(d, &sh, &node, &chans, &err);
	/* Open until the share is done: its sums may be read after release. */
	snapdir_shown(&sh.s.sd, &err);
	if (ret) {
		json_decref(chans);
		if (sh.s.j)
			snap_apply(&sh.s, "abort");
		/*
		 * Its last process gone while it was taken: it ended, as
		 * above, and nothing of it stays in the snapshot.
		 */
		if (taken && share_ended(sh.s.j)) {
			ckptd_log(d, 1, "job %.16s: its share here ended as it was taken (%s); no part of snapshot %lld",
				  sh.id, err.msg, (long long)sh.seq);
			share_dir_remove(&sh);
			peer_send(p, json_pack("{s:b, s:b}", "ok", 1, "ended", 1), NULL);
			goto out;
		}
		ckptd_log(d, 1, "job %.16s: no share of snapshot %lld: %s", sh.id ?: "",
			  (long long)sh.seq, err.msg);
		peer_send(p, json_pack("{s:b, s:o}", "ok", 0, "error",
				       json_sprintf("node %s: %s", d->node, err.msg)), NULL);
		goto out;
	}
	/* An answer too long for one message must not leave the job stopped. */
	msg = json_pack("{s:b, s:o, s:b}", "ok", 1, "node", node, "gather",
			sh.s.stage.fd >= 0);
	/* Each channel kind's ends under its name: channel_add() reads them. */
	if (msg)
		json_object_update(msg, chans);
	json_decref(chans);
	if (peer_send(p, msg, &err)) {
		ckptd_log(d, 0, "job %s: no share of snapshot %lld: %s", sh.s.j->id,
			  (long long)sh.seq, err.msg);
		peer_send(p, json_pack("{s:b, s:o}", "ok", 0, "error",
				       json_sprintf("node %s: its share's description does not fit one message (%s)",
						    d->node, err.msg)), NULL);
		snap_apply(&sh.s, "abort");
		goto out;
	}
	ckptd_log(d, 1, "job %s: share of snapshot %u, %s", sh.s.j->id,
		  (unsigned int)sh.seq, share_await(d, p, &sh));
out:
	snapdir_close(&sh.s.sd);
	/* Gathered, or no part of a snapshot: nothing of it stays here. */
	ship_stage_remove(&sh.s.stage);
}

/* cancel {job}: the checkpoint under way ends, as if it had failed. */
void op_cancel(struct conn *c, const json_t *req)
{
	struct job *j = job_lookup(c, req);

	if (!j)
		return;
	if (!j->busy || !worker_is_checkpoint(j->busy)) {
		conn_fail(c, "job %s: no checkpoint under way here", j->id);
		return;
	}
	if (j->copying) {
		conn_fail(c, "job %s: snapshot %u is committed; only its copies to other nodes are under way",
			  j->id, j->seq);
		return;
	}
	/*
	 * The engine thaws what the worker froze when the worker dies; its
	 * end sweeps the .tmp and continues a share it left stopped
	 * (job_resume_cut()); the coordinator's peers, losing it, continue
	 * theirs.
	 */
	kill(worker_pid(j->busy), SIGKILL);
	ckptd_log(conn_daemon(c), 1, "job %s: checkpoint cancelled by uid %u", j->id,
		  (unsigned int)conn_uid(c));
	conn_reply(c, json_pack("{s:s, s:b}", "job", j->id, "cancelled", 1));
}
