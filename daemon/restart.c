// SPDX-License-Identifier: GPL-2.0
/*
 * A job's restart from its snapshot, through ckptd: the way an ordinary
 * user restarts, since the engine keeps restart for root.
 *
 * ckptd checks the metadata (its MAC, its shape, that the caller's uid is
 * the job's) before anything else; a worker then joins the job's cgroup,
 * checks every image against the metadata's checksum, takes the client's
 * standard descriptors as its own and runs the restorer, which makes the
 * tree under an init of its own. The worker and that init are the job's
 * helpers, not its processes. The client stays connected as the job's
 * foreground: it gets "started", then the root's status, and may send
 * "signal" meanwhile.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "ckptd.h"
#include "err.h"
#include "meta.h"

struct restart {
	char dir[PATH_MAX];	/* the snapshot */
	json_t *meta;
	const json_t *tree;	/* the tree this node restarts */
	int fds[3];
};

/* meta.json under a valid MAC, of the right shape: 0 or -errno with @err. */
static int read_meta(const struct ckptd *d, const char *dir, json_t **meta,
		     struct ckpt_err *err)
{
	uint8_t mac[CKPTD_MAC_LEN];
	char hex[2 * CKPTD_MAC_LEN + 1], *text = NULL, *want = NULL;
	size_t len, wlen;
	unsigned int i;
	int dfd, ret;

	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return ckpt_err_set(err, errno, "%s: %s", dir, strerror(errno));
	ret = file_read_max(dfd, CKPT_META_FILE, &text, &len, CKPT_META_MAX);
	if (ret) {
		ckpt_err_set(err, -ret, "%s/%s: %s", dir, CKPT_META_FILE,
			     ret == -EFBIG ? "not a file of at most 1 MiB" :
			     strerror(-ret));
		goto out;
	}
	ret = file_read_max(dfd, CKPT_META_MAC_FILE, &want, &wlen, 256);
	if (ret) {
		ckpt_err_set(err, -ret, "%s/%s: %s", dir, CKPT_META_MAC_FILE,
			     strerror(-ret));
		goto out;
	}
	key_mac(d, text, len, mac);
	for (i = 0; i < CKPTD_MAC_LEN; i++)
		sprintf(hex + 2 * i, "%02x", mac[i]);
	if (wlen != sizeof(hex) || want[wlen - 1] != '\n' ||
	    CRYPTO_memcmp(hex, want, sizeof(hex) - 1)) {
		ret = ckpt_err_set(err, EBADMSG, "%s: the metadata's MAC does not match: the snapshot was changed, or made under another cluster key",
				   dir);
		goto out;
	}
	ret = ckptd_msg_decode(text, len, meta, err);
	if (!ret) {
		ret = ckpt_meta_check(*meta, err);
		if (ret) {
			json_decref(*meta);
			*meta = NULL;
		}
	}
out:
	free(text);
	free(want);
	close(dfd);
	return ret;
}

/* Every image of the tree is the one the metadata names, byte for byte. */
static int check_images(const char *dir, const json_t *tree,
			struct ckpt_err *err)
{
	const char *tdir = json_string_value(json_object_get(tree, "dir"));
	const json_t *members = json_object_get(tree, "members");
	char path[PATH_MAX], sum[65];
	uint64_t size;
	json_t *m;
	size_t i;
	int ret;

	json_array_foreach(members, i, m) {
		if (snprintf(path, sizeof(path), "%s/%s/%s", dir, tdir,
			     json_string_value(json_object_get(m, "image"))) >=
		    (int)sizeof(path))
			return ckpt_err_set(err, ENAMETOOLONG, "%s: path too long", dir);
		ret = ckptd_sha256_file(path, sum, &size);
		if (ret)
			return ckpt_err_set(err, -ret, "%s: %s", path, strerror(-ret));
		if (size != (uint64_t)json_integer_value(json_object_get(m, "bytes")) ||
		    strcmp(sum, json_string_value(json_object_get(m, "sha256"))))
			return ckpt_err_set(err, EBADMSG, "%s is not the image the snapshot's metadata names (size or checksum differs)",
					    path);
	}
	return 0;
}

struct started_ctx {
	int out;
	const char *job;
};

static void on_started(void *arg, pid_t init, pid_t root)
{
	struct started_ctx *s = arg;

	worker_send(s->out, json_pack("{s:s, s:s, s:i, s:i}", "event", "started",
				      "job", s->job, "init", (int)init,
				      "root", (int)root));
}

static void restart_worker(struct ckptd *d, struct job *j, int out, void *arg)
{
	struct restart *r = arg;
	struct started_ctx sc = { .out = out, .job = j->id };
	struct ckpt_restore_opts o = {
		.forward_signals = true,
		.started = on_started,
		.started_arg = &sc,
	};
	char image[PATH_MAX];
	struct ckpt_err err;
	int i, ret, status;

	ret = job_add_pid(d, j, getpid());
	if (ret)
		ckpt_err_set(&err, -ret, "cannot join the job's cgroup: %s",
			     strerror(-ret));
	if (!ret)
		ret = check_images(r->dir, r->tree, &err);
	for (i = 0; !ret && i < 3; i++)
		if (dup2(r->fds[i], i) < 0)
			ret = ckpt_err_set(&err, errno, "%s", strerror(errno));
	if (!ret && snprintf(image, sizeof(image), "%s/%s", r->dir,
			     json_string_value(json_object_get(r->tree, "dir"))) >=
		    (int)sizeof(image))
		ret = ckpt_err_set(&err, ENAMETOOLONG, "%s: path too long", r->dir);
	o.image = image;
	if (!ret)
		ret = ckpt_restore(&o, &status, &err);
	if (ret) {
		worker_send(out, json_pack("{s:b, s:o}", "ok", 0, "error",
					   json_sprintf("job %s: %s", j->id, err.msg)));
		return;
	}
	worker_send(out, json_pack("{s:b, s:s, s:i}", "ok", 1, "job", j->id,
				   "status", status));
}

/* In ckptd: the job's helpers, once the tree runs; the job is free again. */
static void restart_report(struct worker *w, json_t *msg)
{
	struct job *j = worker_job(w);
	json_int_t init;

	if (!msg || json_unpack(msg, "{s:I}", "init", &init))
		return;
	j->helpers[0] = worker_pid(w);
	j->helpers[1] = init;
	if (j->busy == w)
		j->busy = NULL;
	job_save(worker_daemon(w), j);
	ckptd_log(worker_daemon(w), 1, "job %s restarted", j->id);
}

/* The job a restart makes: the snapshot's id if no job has it here. */
static struct job *restart_job(struct conn *c, const json_t *meta)
{
	struct ckptd *d = conn_daemon(c);
	const char *id = json_string_value(json_object_get(meta, "job"));
	char err[512];
	struct job *j;

	/* A job that just ended gives its id back now, not at the next tick. */
	job_reap(d);
	j = job_new(d, job_find(d, id) ? NULL : id,
		    json_integer_value(json_object_get(meta, "uid")),
		    json_integer_value(json_object_get(meta, "gid")),
		    json_string_value(json_object_get(meta, "name")),
		    json_object_get(meta, "cmd"),
		    json_string_value(json_object_get(meta, "cwd")),
		    err, sizeof(err));
	if (!j) {
		conn_fail(c, "restart: %s", err);
		return NULL;
	}
	j->seq = json_integer_value(json_object_get(meta, "seq"));
	return j;
}

/* restart {dir}, with the client's descriptors 0, 1 and 2. */
void op_restart(struct conn *c, const json_t *req)
{
	struct ckptd *d = conn_daemon(c);
	struct restart r = { .fds = { -1, -1, -1 } };
	const char *dir = ckptd_msg_str(req, "dir");
	const json_t *nodes;
	struct ckpt_err err;
	struct worker *w;
	struct job *j;
	int i;

	if (conn_take_fds(c, r.fds, 3) != 3) {
		conn_fail(c, "restart: send the standard descriptors (0, 1, 2) with the request");
		goto out;
	}
	if (!dir || *dir != '/' || !realpath(dir, r.dir)) {
		conn_fail(c, "restart: \"dir\" must be a snapshot directory's absolute path%s%s",
			  dir && *dir == '/' ? ": " : "",
			  dir && *dir == '/' ? strerror(errno) : "");
		goto out;
	}
	if (read_meta(d, r.dir, &r.meta, &err)) {
		conn_fail(c, "restart: %s", err.msg);
		goto out;
	}
	if (conn_uid(c) &&
	    json_integer_value(json_object_get(r.meta, "uid")) != conn_uid(c)) {
		conn_fail(c, "restart: %s is a snapshot of another user's job",
			  r.dir);
		goto out;
	}
	nodes = json_object_get(r.meta, "nodes");
	if (json_array_size(nodes) != 1) {
		conn_fail(c, "restart: %s is a job over %zu nodes; ckptd restarts one node's yet",
			  r.dir, json_array_size(nodes));
		goto out;
	}
	r.tree = json_array_get(json_object_get(json_array_get(nodes, 0), "trees"), 0);
	j = restart_job(c, r.meta);
	if (!j)
		goto out;
	w = worker_start(d, c, j, restart_worker, restart_report, &r);
	if (!w) {
		conn_fail(c, "restart: cannot start a worker: %s", strerror(errno));
		job_drop(d, j);
		goto out;
	}
	ckptd_log(d, 1, "job %s: uid %u restarts %s", j->id,
		  (unsigned int)conn_uid(c), r.dir);
out:
	for (i = 0; i < 3; i++)
		if (r.fds[i] >= 0)
			close(r.fds[i]);
	json_decref(r.meta);
}

/* signal {sig}: to the job this connection restarted, through its worker. */
void op_signal(struct conn *c, const json_t *req)
{
	static const int allowed[] = {
		SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGCONT,
	};
	struct worker *w = conn_worker(c);
	json_int_t sig;
	size_t i;

	if (!w) {
		conn_fail(c, "signal: this connection restarted no job");
		return;
	}
	if (json_unpack((json_t *)req, "{s:I}", "sig", &sig))
		sig = 0;
	for (i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++)
		if (sig == allowed[i])
			break;
	/* No reply: the restart's own reply is still to come. */
	if (i < sizeof(allowed) / sizeof(allowed[0]))
		kill(worker_pid(w), sig);
}
