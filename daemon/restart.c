// SPDX-License-Identifier: GPL-2.0
/*
 * A job's restart from its snapshot, through ckptd: the way an ordinary
 * user restarts, since the engine keeps restart for root.
 *
 * ckptd checks the metadata (its MAC, its shape, that the caller's uid is
 * the job's) before anything else; a worker then joins the job's cgroup,
 * checks its share's images against the metadata's checksums (each other
 * node checks its own before it is ready to start), takes the client's
 * standard descriptors as its own and runs the restorer, which makes the
 * tree under an init of its own. The worker and that init are the job's
 * helpers, not its processes. The client stays connected as the job's
 * foreground: it gets "started", then the root's status, and may send
 * "signal" meanwhile.
 *
 * A node that does not have the snapshot (its snapshot root is its own)
 * is shipped its share, with the metadata, into a stage (ship.c) that it
 * removes once its tree runs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "addrmap.h"
#include "ckptd.h"
#include "err.h"
#include "meta.h"
#include "treedir.h"

struct restart {
	char dir[PATH_MAX];	/* the snapshot */
	json_t *meta;
	const json_t *tree;	/* the tree this node restarts */
	int fds[3];
	bool tty;		/* fds[0] is to be the job's controlling terminal */
	json_t *targets;	/* per node of the snapshot, where it restarts */
	json_t *now;		/* per node of the snapshot, its target's addresses */
	struct peer *peers[CKPTD_MAX_NODES];
	json_t *map;		/* the address map, as "go" sends it */
	struct ckpt_addr_map addrmap[CKPT_ADDRMAP_MAX];
	unsigned int addrmap_len;
	json_t *total;		/* the job's whole map: the first run's addresses on */
	struct ckpt_addr_map filemap[CKPT_ADDRMAP_MAX];
	unsigned int filemap_len;
	char *mac;		/* meta.mac's text: which snapshot this is */
	int dirfd;		/* the snapshot, for shipping shares */
	bool checking[CKPTD_MAX_NODES];	/* the peers checking their share */
	bool waiting[CKPTD_MAX_NODES];	/* those ready: "wait" keeps them */
	int failed;		/* a checking peer's refusal, read meanwhile */
	struct ckpt_err fail_err;
};

/*
 * meta.json under a valid MAC, of the right shape: 0 or -errno with @err.
 * With @expect (meta.mac's text, as a coordinator sends it), that MAC and
 * no other: the very snapshot the coordinator checked, not another one of
 * the same job put in its place since. With @mac, the text checked there
 * (the caller frees it).
 */
int snapshot_meta_read(const struct ckptd *d, const char *dir,
		       const char *expect, json_t **meta, char **mac,
		       struct ckpt_err *err)
{
	char hex[2 * CKPTD_MAC_LEN + 1], *text = NULL, *want = NULL;
	size_t len, wlen;
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
	key_mac(d, text, len, hex);
	if (wlen != sizeof(hex) || want[wlen - 1] != '\n' ||
	    CRYPTO_memcmp(hex, want, sizeof(hex) - 1)) {
		ret = ckpt_err_set(err, EBADMSG, "%s: the metadata's MAC does not match: the snapshot was changed, or made under another cluster key",
				   dir);
		goto out;
	}
	if (expect && (strlen(expect) != wlen || CRYPTO_memcmp(expect, want, wlen))) {
		ret = ckpt_err_set(err, EBADMSG, "%s: not the snapshot its coordinator restarts (another %s)",
				   dir, CKPT_META_MAC_FILE);
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
	if (!ret && mac) {
		*mac = want;
		want = NULL;
	}
out:
	free(text);
	free(want);
	close(dfd);
	return ret;
}

/*
 * The images of a snapshot checked against its metadata: one read of
 * each for its SHA-256, as many at a time as there are CPUs (up to
 * CHECK_THREADS), since a snapshot of many processes is mostly bytes.
 */
#define CHECK_THREADS	8

struct image_check {
	char *path;
	uint64_t bytes;
	const char *sha256;
	uint64_t size;
	char sum[65];
	int ret;		/* reading it: 0 or -errno */
};

struct image_checks {
	struct image_check *c;
	size_t nr;
	size_t next;		/* the next to take, atomically */
};

/* Every image of @tree into @ic, nothing read yet. */
static int checks_add(struct image_checks *ic, const char *dir,
		      const json_t *tree, struct ckpt_err *err)
{
	const char *tdir = json_string_value(json_object_get(tree, "dir"));
	const json_t *members = json_object_get(tree, "members");
	struct image_check *c;
	json_t *m;
	size_t i;

	c = realloc(ic->c, (ic->nr + json_array_size(members) + 1) * sizeof(*c));
	if (!c)
		return ckpt_err_set(err, ENOMEM, "out of memory");
	ic->c = c;
	json_array_foreach(members, i, m) {
		c = &ic->c[ic->nr];
		memset(c, 0, sizeof(*c));
		if (asprintf(&c->path, "%s/%s/%s", dir, tdir,
			     json_string_value(json_object_get(m, "image"))) < 0)
			return ckpt_err_set(err, ENOMEM, "out of memory");
		if (strlen(c->path) >= PATH_MAX) {
			free(c->path);
			return ckpt_err_set(err, ENAMETOOLONG, "%s: path too long", dir);
		}
		c->bytes = json_integer_value(json_object_get(m, "bytes"));
		c->sha256 = json_string_value(json_object_get(m, "sha256"));
		ic->nr++;
	}
	return 0;
}

static void checks_free(struct image_checks *ic)
{
	size_t i;

	for (i = 0; i < ic->nr; i++)
		free(ic->c[i].path);
	free(ic->c);
}

static void *checks_work(void *arg)
{
	struct image_checks *ic = arg;
	struct image_check *c;
	size_t i;

	while ((i = __atomic_fetch_add(&ic->next, 1, __ATOMIC_RELAXED)) < ic->nr) {
		c = &ic->c[i];
		c->ret = ckptd_sha256_file(c->path, c->sum, &c->size);
	}
	return NULL;
}

/* Reads them all; the first (in the metadata's order) found wrong is named. */
static int checks_run(struct image_checks *ic, struct ckpt_err *err)
{
	pthread_t tid[CHECK_THREADS - 1];
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	struct image_check *c;
	size_t n = 0, i;

	if (cpus > CHECK_THREADS)
		cpus = CHECK_THREADS;
	/* Fewer threads is slower, not wrong: a failed create is fine. */
	while ((long)n + 1 < cpus && n + 1 < ic->nr &&
	       !pthread_create(&tid[n], NULL, checks_work, ic))
		n++;
	checks_work(ic);
	for (i = 0; i < n; i++)
		pthread_join(tid[i], NULL);
	for (i = 0; i < ic->nr; i++) {
		c = &ic->c[i];
		if (c->ret)
			return ckpt_err_set(err, -c->ret, "%s: %s", c->path,
					    strerror(-c->ret));
		if (c->size != c->bytes || !c->sha256 || strcmp(c->sum, c->sha256))
			return ckpt_err_set(err, EBADMSG, "%s is not the image the snapshot's metadata names (size or checksum differs)",
					    c->path);
	}
	return 0;
}

/* Every image of the tree is the one the metadata names, byte for byte. */
static int check_images(const char *dir, const json_t *tree,
			struct ckpt_err *err)
{
	struct image_checks ic = {};
	int ret;

	ret = checks_add(&ic, dir, tree, err);
	if (!ret)
		ret = checks_run(&ic, err);
	checks_free(&ic);
	return ret;
}

int snapshot_check_images(const char *dir, const json_t *meta,
			  struct ckpt_err *err)
{
	struct image_checks ic = {};
	const json_t *n;
	size_t k;
	int ret = 0;

	/* Every node's: the snapshot is whole where it is restarted. */
	json_array_foreach(json_object_get(meta, "nodes"), k, n) {
		ret = checks_add(&ic, dir,
				 json_array_get(json_object_get(n, "trees"), 0), err);
		if (ret)
			break;
	}
	if (!ret)
		ret = checks_run(&ic, err);
	checks_free(&ic);
	return ret;
}

int snapshot_open(struct conn *c, const char *dir, char abs[PATH_MAX],
		  json_t **meta, char **mac)
{
	struct ckpt_err err;

	*meta = NULL;
	if (mac)
		*mac = NULL;
	if (!dir || *dir != '/' || !realpath(dir, abs)) {
		conn_fail(c, "\"dir\" must be a snapshot directory's absolute path%s%s",
			  dir && *dir == '/' ? ": " : "",
			  dir && *dir == '/' ? strerror(errno) : "");
		return -1;
	}
	if (snapshot_meta_read(conn_daemon(c), abs, NULL, meta, mac, &err)) {
		conn_fail(c, "%s", err.msg);
		return -1;
	}
	if (conn_uid(c) &&
	    json_integer_value(json_object_get(*meta, "uid")) != conn_uid(c)) {
		conn_fail(c, "%s is a snapshot of another user's job", abs);
		json_decref(*meta);
		*meta = NULL;
		if (mac) {
			free(*mac);
			*mac = NULL;
		}
		return -1;
	}
	return 0;
}

/* The entry of node @node in the metadata, or NULL. */
static const json_t *node_of(const json_t *meta, const char *node)
{
	const json_t *nodes = json_object_get(meta, "nodes"), *n;
	size_t i;

	json_array_foreach(nodes, i, n)
		if (!strcmp(json_string_value(json_object_get(n, "node")), node))
			return n;
	return NULL;
}

/* The tree of node @node in the metadata, or NULL. */
static const json_t *tree_of(const json_t *meta, const char *node)
{
	return json_array_get(json_object_get(node_of(meta, node), "trees"), 0);
}

/* List @key of node entry @n's (checked metadata: [[pid, fd, ...]...]). */
static struct ckpt_restore_sock *socks_of(const json_t *n, const char *key,
					  unsigned int *nr)
{
	const json_t *list = json_object_get(n, key), *e;
	struct ckpt_restore_sock *c;
	size_t i;

	*nr = 0;
	c = calloc(json_array_size(list) + 1, sizeof(*c));
	if (!c)
		return NULL;
	json_array_foreach(list, i, e) {
		c[i].pid = json_integer_value(json_array_get(e, 0));
		c[i].fd = json_integer_value(json_array_get(e, 1));
	}
	*nr = i;
	return c;
}

/* Node entry @n's "reconnect" (checked: [[pid, fd, seq, hex]...]). */
static struct ckpt_restore_reconnect *reconnect_of(const json_t *n,
						   unsigned int *nr)
{
	const json_t *list = json_object_get(n, "reconnect"), *e;
	struct ckpt_restore_reconnect *c;
	const char *hex;
	uint8_t *data;
	size_t i;

	*nr = 0;
	c = calloc(json_array_size(list) + 1, sizeof(*c));
	if (!c)
		return NULL;
	json_array_foreach(list, i, e) {
		hex = json_string_value(json_array_get(e, 3));
		data = malloc(strlen(hex) / 2 + 1);
		if (!data)
			break;
		ckptd_unhex(hex, data);
		c[i] = (struct ckpt_restore_reconnect){
			.pid = json_integer_value(json_array_get(e, 0)),
			.fd = json_integer_value(json_array_get(e, 1)),
			.seq = json_integer_value(json_array_get(e, 2)),
			.len = strlen(hex) / 2, .data = data,
		};
		*nr = i + 1;
	}
	if (*nr == json_array_size(list))
		return c;
	for (i = 0; i < *nr; i++)
		free((void *)c[i].data);
	free(c);
	return NULL;
}

/*
 * What node entry @n (checked metadata) asks of its restart, into @o:
 * its connections to outside the job, made closed ("outside": [[pid, fd,
 * from, to]...]); those to connect again, whose other end waited to be
 * accepted on another node ("reconnect"), and its listeners such
 * connections waited on ("awaited"). Freed with entry_opts_free(). 0 or
 * -ENOMEM.
 */
static int entry_opts(const json_t *n, struct ckpt_restore_opts *o)
{
	o->closed = socks_of(n, "outside", &o->nr_closed);
	o->awaited = socks_of(n, "awaited", &o->nr_awaited);
	o->reconnect = reconnect_of(n, &o->nr_reconnect);
	return o->closed && o->awaited && o->reconnect ? 0 : -ENOMEM;
}

static void entry_opts_free(struct ckpt_restore_opts *o)
{
	unsigned int i;

	for (i = 0; o->reconnect && i < o->nr_reconnect; i++)
		free((void *)o->reconnect[i].data);
	free((void *)o->reconnect);
	free((void *)o->awaited);
	free((void *)o->closed);
	o->reconnect = NULL;
	o->awaited = o->closed = NULL;
	o->nr_reconnect = o->nr_awaited = o->nr_closed = 0;
}

struct started_ctx {
	struct ckptd *d;
	int out;
	struct job *j;
	const json_t *nodes;		/* the other nodes it runs on */
	const char *coordinator;	/* a share's: its coordinator */
	const json_t *total;		/* the coordinator's: the job's whole map */
	struct peer *p;			/* a share's: the coordinator's */
	struct peer **peers;		/* the coordinator's: the shares', from 1 */
	size_t npeers;
	struct ship_stage *stage;	/* a share's, shipped: gone once it runs */
	struct ckpt_err failed;		/* the coordinator's: a share failed once released */
};

/* A share's end of the restart, logged as such: its tree is killed. */
static void unconfirmed(const struct started_ctx *s, const char *why)
{
	ckptd_log(s->d, 0, "job %s: the restart was not confirmed by %s (%s); this node's share is ended",
		  s->j->id, s->coordinator, why);
}

/*
 * A share runs on only once the coordinator's own tree runs too: "confirm"
 * says so. Anything else (the connection closed because a later share or
 * the coordinator's failed to start, the coordinator gone, the wait over)
 * ends the share's tree: a job restarts whole or not at all.
 */
static void await_confirm(struct started_ctx *s, pid_t init)
{
	struct ckpt_err err;
	json_t *msg = NULL;

	if (!peer_recv(s->p, &msg, CKPTD_CONFIRM_WAIT_S, &err) &&
	    json_is_true(json_object_get(msg, "confirm"))) {
		json_decref(msg);
		return;
	}
	if (msg)
		ckpt_err_set(&err, EPROTO, "no confirm");
	json_decref(msg);
	unconfirmed(s, err.msg);
	kill(init, SIGKILL);
}

/*
 * A share's step of the restart: says @said to its coordinator and waits
 * for @word. -errno with @err if another word or none came: its tree is
 * ended then, as await_confirm() ends one that runs.
 */
static int share_step(struct started_ctx *s, const char *said,
		      const char *word, struct ckpt_err *err)
{
	json_t *msg = NULL;
	int ret;

	peer_send(s->p, json_pack("{s:b, s:s}", "ok", 1, said, s->d->node), NULL);
	ret = peer_recv(s->p, &msg, CKPTD_CONFIRM_WAIT_S, err);
	if (!ret && !json_is_true(json_object_get(msg, word)))
		ret = ckpt_err_set(err, EPROTO, "the coordinator %s did not say %s",
				   s->coordinator, word);
	json_decref(msg);
	if (ret)
		unconfirmed(s, err->msg);
	return ret;
}

/*
 * Every node's channels (TCP connections, in repair mode) are made before
 * any talks to its peer, which must exist by then (tcpjoin.c). A share
 * says "made" (its answer to "go") and waits for "talk"; the coordinator,
 * its own made too, says "talk" to every share, and each node goes on to
 * make its tree, all at once (on_held()). -errno with @err for a share
 * that did not answer.
 */
static int on_made(void *arg, struct ckpt_err *err)
{
	struct started_ctx *s = arg;
	size_t i;

	/* Every other node reads its images first: the confirm's wait. */
	if (s->p)
		return share_step(s, "made", "talk", err);
	for (i = 1; i < s->npeers; i++)
		peer_send(s->peers[i], json_pack("{s:b}", "talk", 1), NULL);
	return 0;
}

/* The coordinator's: @word from every share, in turn; -errno with @err. */
static int shares_say(struct started_ctx *s, const char *word,
		      struct ckpt_err *err)
{
	json_t *msg = NULL;
	size_t i;
	int ret = 0;

	for (i = 1; !ret && i < s->npeers; i++) {
		ret = peer_reply(s->peers[i], &msg, CKPTD_PEER_WAIT_S, err);
		if (!ret && !json_object_get(msg, word))
			ret = ckpt_err_set(err, EPROTO, "node %s did not say %s",
					   peer_name(s->peers[i]), word);
		json_decref(msg);
		msg = NULL;
	}
	return ret;
}

/*
 * Every node's tree whole and held by the engine before any runs: each
 * node fills its share's memory at the same time as the others, and a
 * share that fails (a member, a file, a node gone) leaves nothing of the
 * job that ran. A share says "held" and waits for "release"; the
 * coordinator, its own held too, waits for every share's "held", then
 * says "release". -errno with @err calls this node's tree off.
 */
static int on_held(void *arg, struct ckpt_err *err)
{
	struct started_ctx *s = arg;
	size_t i;
	int ret;

	if (s->p)
		return share_step(s, "held", "release", err);
	ret = shares_say(s, "held", err);
	/* One not told: the job ends before this node's tree runs too. */
	for (i = 1; !ret && i < s->npeers; i++)
		ret = peer_send(s->peers[i], json_pack("{s:b}", "release", 1), err);
	return ret;
}

/*
 * The coordinator's: every share's "started" (its members handed over).
 * One that failed past its release (a thread's state refused, say) ends
 * the job: this node's tree too, and no share is confirmed; the restart's
 * error names the share (s->failed).
 */
static int shares_started(struct started_ctx *s, pid_t init)
{
	int ret = shares_say(s, "started", &s->failed);

	if (ret) {
		ckptd_log(s->d, 0, "job %s: a share failed once released (%s); the job is ended",
			  s->j->id, s->failed.msg);
		kill(init, SIGKILL);
	}
	return ret;
}

static void on_started(void *arg, pid_t init, pid_t root)
{
	struct started_ctx *s = arg;
	json_t *msg;
	size_t i;

	msg = json_pack("{s:s, s:s, s:i, s:i, s:o}", "event", "started",
			"job", s->j->id, "init", (int)init, "root", (int)root,
			"info", job_info(s->j));
	if (s->nodes)
		json_object_set(msg, "nodes", (json_t *)s->nodes);
	if (s->coordinator)
		json_object_set_new(msg, "coordinator", json_string(s->coordinator));
	if (s->total)
		json_object_set(msg, "addrmap", (json_t *)s->total);
	/* Closed unconfirmed: the shares end. */
	if (!s->p && shares_started(s, init)) {
		json_decref(msg);
		return;
	}
	worker_send(s->out, msg);
	worker_watch_client(s->d, s->out);
	if (s->p) {
		peer_send(s->p, json_pack("{s:b, s:s}", "ok", 1, "started", s->j->id),
			  NULL);
		await_confirm(s, init);
	}
	/* Its images are read: the stage they came in goes. */
	if (s->stage)
		ship_stage_remove(s->stage);
	for (i = 1; i < s->npeers; i++) {
		peer_send(s->peers[i], json_pack("{s:b}", "confirm", 1), NULL);
		peer_close(s->peers[i]);
		s->peers[i] = NULL;
	}
}

/*
 * The original's closed connections in the way of share @image's sockets,
 * ended before this node says ready (the coordinator: before "go"): ending
 * one in FIN_WAIT resets its other end, which must not yet be a socket
 * another node has made (ckpt_restore_end_closed()). A failure is left to
 * the restore, which ends them again as it makes each socket.
 */
static void end_closed(struct ckptd *d, const struct job *j, const char *image,
		       const json_t *node)
{
	struct ckpt_restore_opts o = { .image = image };
	struct ckpt_err err;
	int n;

	/* Its connections to outside the job are left to close as they do. */
	o.closed = socks_of(node, "outside", &o.nr_closed);
	if (!o.closed)
		return;
	n = ckpt_restore_end_closed(image, &o, &err);
	free((void *)o.closed);

	if (n < 0)
		ckptd_log(d, 1, "job %s: %s", j->id, err.msg);
	else if (n)
		ckptd_log(d, 1, "job %s: %d closed connection%s of its original ended",
			  j->id, n, n == 1 ? "" : "s");
}

static void close_peers(struct restart *r)
{
	size_t i;

	for (i = 1; i < CKPTD_MAX_NODES; i++) {
		peer_close(r->peers[i]);
		r->peers[i] = NULL;
	}
}

/*
 * The address map of a restart (Documentation/decisions.md, "TCP on other
 * nodes"): each share's old node's addresses, from the metadata, to those
 * of the node it restarts on, its "ready"'s (this node's its own).
 */
static int build_map(struct ckptd *d, struct restart *r, struct job *j,
		     struct ckpt_err *err)
{
	const json_t *nodes = json_object_get(r->meta, "nodes"), *n;
	json_t *old = json_array();
	size_t i;
	int ret;

	json_array_foreach(nodes, i, n)
		json_array_append(old, json_object_get(n, "addrs") ?: json_null());
	json_array_set_new(r->now, 0, ckpt_addrs_local());
	ret = ckpt_addrmap_build(old, r->now, &r->map, err);
	json_decref(old);
	if (!ret)
		ret = ckpt_addrmap_read(r->map, r->addrmap, &r->addrmap_len, err);
	/* Where the addresses its first run knew are now. */
	if (!ret) {
		r->total = ckpt_addrmap_compose(json_object_get(r->meta, "addrmap"), r->map);
		if (!r->total)
			ret = ckpt_err_set(err, E2BIG, "more than %d addresses to map",
					   CKPT_ADDRMAP_MAX);
	}
	if (!ret)
		ret = ckpt_addrmap_read(r->total, r->filemap, &r->filemap_len, err);
	if (!ret && r->addrmap_len)
		ckptd_log(d, 1, "job %s: %u addresses of its old nodes map to its new nodes'",
			  j->id, r->addrmap_len);
	return ret;
}

/* How often the nodes that wait for "go" are told to wait on (as ship.c's). */
#define WAIT_TICK_S	20

static int share_ready(struct restart *r, size_t i, json_t *reply,
		       struct ckpt_err *err);

/*
 * A checking node's "ready", read now that it came, or its refusal, kept
 * in r->failed for the restart's error (the first one).
 */
static void take_ready(struct restart *r, size_t i)
{
	struct ckpt_err err;
	json_t *reply;
	int ret;

	r->checking[i] = false;
	ret = peer_reply(r->peers[i], &reply, CKPTD_PEER_WAIT_S, &err);
	if (!ret)
		ret = share_ready(r, i, reply, &err);
	if (ret && !r->failed) {
		r->failed = ret;
		r->fail_err = err;
	}
}

/*
 * While a share is on its way or checked: every "ready" that came is
 * read, and the nodes that said it wait anew for their "go" (which skips
 * "wait"). Only those: a node still checking reads nothing until then,
 * and one whose check fails closes with nothing of ours unread.
 */
static void keep_waiting(void *arg)
{
	struct restart *r = arg;
	size_t i;

	for (i = 1; i < CKPTD_MAX_NODES; i++)
		if (r->checking[i] && peer_wait(r->peers[i], 0))
			take_ready(r, i);
	for (i = 1; i < CKPTD_MAX_NODES; i++)
		if (r->waiting[i])
			peer_send(r->peers[i], json_pack("{s:b}", "wait", 1), NULL);
}

/*
 * keep_waiting() while a share is shipped, which stops once a node has
 * refused: the restart is over, and the rest of the share (gigabytes,
 * maybe) would go for nothing.
 */
static int ship_waiting(void *arg, struct ckpt_err *err)
{
	struct restart *r = arg;

	keep_waiting(r);
	if (r->failed)
		*err = r->fail_err;
	return r->failed;
}

/*
 * Node @i's reply, waiting up to CKPTD_PEER_WAIT_S, the others kept
 * waiting meanwhile: a node's 120 s for its "go" never runs out while
 * another is checked or shipped.
 */
static int reply_ticking(struct restart *r, size_t i, json_t **reply,
			 struct ckpt_err *err)
{
	int waited = 0;

	while (!peer_wait(r->peers[i], WAIT_TICK_S * 1000)) {
		waited += WAIT_TICK_S;
		if (waited >= CKPTD_PEER_WAIT_S)
			return ckpt_err_set(err, ETIMEDOUT, "node %s: no answer in %d s",
					    json_string_value(json_array_get(r->targets, i)),
					    CKPTD_PEER_WAIT_S);
		keep_waiting(r);
		/* Another node refused meanwhile: this restart is over. */
		if (r->failed) {
			*err = r->fail_err;
			return r->failed;
		}
	}
	return peer_reply(r->peers[i], reply, CKPTD_PEER_WAIT_S, err);
}

/*
 * Share @i's node has not this snapshot: the metadata, its MAC and the
 * files the metadata names of share @i (its tree's directory, manifest
 * and images, nothing else a copy may have picked up). The node checks
 * what came and says "ready" later, as one that had it does: the next
 * node's share is shipped meanwhile.
 */
static int ship_share(struct restart *r, size_t i, struct ckpt_err *err)
{
	const json_t *n = json_array_get(json_object_get(r->meta, "nodes"), i);
	const json_t *tree = json_array_get(json_object_get(n, "trees"), 0);
	const json_t *members = json_object_get(tree, "members"), *m;
	const char *node = json_string_value(json_object_get(n, "node"));
	const char *dir = json_string_value(json_object_get(tree, "dir"));
	const struct ship_tick tick = { ship_waiting, r };
	size_t k, nr = json_array_size(members), len = 0;
	const char **names;
	char *paths;
	int ret;

	/* The metadata checked: NODE/NAME, each image a plain name. */
	names = calloc(nr + 7, sizeof(*names));
	paths = malloc((nr + 1) * (PATH_MAX + 1));
	if (!names || !paths) {
		free(names);
		free(paths);
		return ckpt_err_set(err, ENOMEM, "out of memory");
	}
	names[len++] = CKPT_META_FILE;
	names[len++] = CKPT_META_MAC_FILE;
	names[len++] = node;
	names[len++] = dir;
	snprintf(paths, PATH_MAX + 1, "%s/%s", dir, CKPT_TREE_MANIFEST);
	names[len++] = paths;
	json_array_foreach(members, k, m) {
		char *at = paths + (k + 1) * (PATH_MAX + 1);

		snprintf(at, PATH_MAX + 1, "%s/%s", dir,
			 json_string_value(json_object_get(m, "image")));
		names[len++] = at;
	}
	ret = ship_send(r->peers[i], r->dirfd, names, false, &tick, err);
	free(names);
	free(paths);
	if (!ret)
		r->checking[i] = true;
	keep_waiting(r);
	return ret;
}

/*
 * The coordinator's own share, checked while the other nodes check
 * theirs (start_remote() asks them meanwhile), as each of them does its
 * own: until stop 56 the coordinator's check came first, the nodes'
 * hashing one after the other.
 */
struct own_check {
	const char *dir;
	const json_t *tree;	/* read only, as the asking thread reads the rest */
	struct ckpt_err err;
	int ret;
};

static void *own_check_run(void *arg)
{
	struct own_check *c = arg;

	c->ret = check_images(c->dir, c->tree, &c->err);
	return NULL;
}

/* Share @i's "ready": its node's addresses kept; 0 or -errno with @err. */
static int share_ready(struct restart *r, size_t i, json_t *reply,
		       struct ckpt_err *err)
{
	if (!ckptd_msg_str(reply, "ready")) {
		json_decref(reply);
		return ckpt_err_set(err, EPROTO, "node %s: no \"ready\" for its share",
				    json_string_value(json_array_get(r->targets, i)));
	}
	json_array_set(r->now, i, json_object_get(reply, "addrs") ?: json_null());
	json_decref(reply);
	r->waiting[i] = true;
	return 0;
}

/*
 * Share @i's node asked to restart it. It answers at once: it has the
 * share ("have": it checks it now, beside the others, and says "ready"
 * later), or it needs it shipped (ship_share(), after which it checks
 * it, while the next node is asked or shipped its share, and says
 * "ready"). Until stop 57 each node answered only once its check was
 * done, and the next was asked then: over K nodes, K - 1 checks one
 * after the other; until stop 58 a node shipped its share was waited
 * for until its check was done.
 */
static int ask_share(struct ckptd *d, struct restart *r, struct job *j,
		     size_t i, struct ckpt_err *err)
{
	const json_t *nodes = json_object_get(r->meta, "nodes");
	const char *target = json_string_value(json_array_get(r->targets, i));
	json_t *reply;
	int ret;

	keep_waiting(r);	/* a connect may take its 10 s */
	r->peers[i] = peer_connect(d, target, err);
	if (!r->peers[i])
		return -EHOSTUNREACH;
	ret = peer_call(r->peers[i], json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}",
			"op", "peer-restart", "job", j->id, "dir", r->dir,
			"node", json_string_value(json_object_get(json_array_get(nodes, i), "node")),
			"coordinator", d->node, "mac", r->mac), &reply,
			CKPTD_PEER_WAIT_S, err);
	if (ret)
		return ret;
	if (json_is_true(json_object_get(reply, "have"))) {
		json_decref(reply);
		r->checking[i] = true;
		return 0;
	}
	if (!json_is_true(json_object_get(reply, "need"))) {
		json_decref(reply);
		return ckpt_err_set(err, EPROTO, "node %s: neither \"have\" nor \"need\" for its share",
				    target);
	}
	json_decref(reply);
	return ship_share(r, i, err);
}

/*
 * The other nodes' shares, in steps: each checks the snapshot and says it
 * is ready, with its node's addresses; only when all are does each get
 * "go", with the address map, and make its share's connections ("made");
 * this node's made too, each gets "talk" and makes its share's tree, as
 * this node does its own (on_made()); every tree whole and held by the
 * engine, each gets "release" (on_held()) and says "started"; once this
 * node's runs too, each gets "confirm" (on_started()).
 * A failure before "go" starts none; one after it, or this node's own,
 * closes the connections unconfirmed, and the shares that started end.
 * On success the connections stay open for the confirm.
 */
static int start_remote(struct ckptd *d, struct restart *r, struct job *j,
			struct ckpt_err *err)
{
	size_t i, n = json_array_size(json_object_get(r->meta, "nodes"));
	struct own_check own = { .dir = r->dir, .tree = r->tree };
	struct timespec until;
	json_t *reply;
	pthread_t tid;
	bool apart;
	int ret = 0;

	if (n > CKPTD_MAX_NODES)
		return ckpt_err_set(err, E2BIG, "job %s: %zu nodes, at most %d", j->id,
				    n, CKPTD_MAX_NODES);
	/* Without a thread, the check comes first, as it did. */
	apart = !pthread_create(&tid, NULL, own_check_run, &own);
	if (!apart) {
		own_check_run(&own);
		if (own.ret) {
			*err = own.err;
			return own.ret;
		}
	}
	for (i = 1; !ret && !r->failed && i < n; i++)
		ret = ask_share(d, r, j, i, err);
	/* Every node checks its share now; each "ready" in turn. */
	for (i = 1; !ret && !r->failed && i < n; i++) {
		if (!r->checking[i])
			continue;	/* its "ready" read meanwhile */
		r->checking[i] = false;
		ret = reply_ticking(r, i, &reply, err);
		if (!ret)
			ret = share_ready(r, i, reply, err);
	}
	while (apart) {
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec += WAIT_TICK_S;
		if (pthread_clockjoin_np(tid, NULL, CLOCK_MONOTONIC, &until) != ETIMEDOUT)
			break;
		keep_waiting(r);
	}
	/* A refusal read while waiting for another: the first one told. */
	if (!ret && r->failed) {
		*err = r->fail_err;
		ret = r->failed;
	}
	/* Its own share damaged: the others, ready, never get "go". */
	if (!ret && own.ret) {
		*err = own.err;
		ret = own.ret;
	}
	if (!ret)
		ret = build_map(d, r, j, err);
	/* "go" to all at once: each reads its images while the others do. */
	for (i = 1; !ret && i < n; i++)
		ret = peer_send(r->peers[i], json_pack("{s:b, s:O, s:O}", "go", 1,
						       "addrmap", r->map, "addrmap_total", r->total),
				err);
	for (i = 1; !ret && i < n; i++) {
		ret = peer_reply(r->peers[i], &reply, CKPTD_PEER_WAIT_S, err);
		if (!ret)
			json_decref(reply);
		else
			ckptd_log(d, 0, "job %s: the other nodes' shares end unconfirmed; %s",
				  j->id, err->msg);
	}
	if (ret)
		close_peers(r);
	return ret;
}

/*
 * The snapshot's directory, for shipping shares. Which snapshot it is
 * (r->mac) was read with the metadata it authenticates (snapshot_open):
 * read again here, it could be another's put in its place meanwhile.
 */
static int snapshot_dir(struct restart *r, struct ckpt_err *err)
{
	r->dirfd = open(r->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (r->dirfd < 0)
		return ckpt_err_set(err, errno, "%s: %s", r->dir, strerror(errno));
	return 0;
}

/*
 * The job's processes in a session of the restarter's with the client's
 * terminal as its own (the tree's members stay in the restarter's
 * session, lib/restore/tree.c, which hands the terminal's foreground to
 * the tree's as ckpt restart DIR does, and passes its hangup to the
 * root). The terminal is checked here, not in ckptd's loop, where an
 * ioctl on it could wait on its user: one opened for reading and writing
 * (as root, TIOCSCTTY skips the kernel's check of that), and another
 * session's is refused (arg 0: never stolen). Until the tree takes the
 * foreground, a key typed there (Ctrl-C, Ctrl-\) reaches this process's
 * group: ignored, here and in the members until they have their own
 * dispositions back; a hangup meanwhile is held back (blocked) until the
 * restorer forwards signals to the tree, and then passed on.
 */
int restart_take_tty(int fd, struct ckpt_err *err)
{
	static const int ignored[] = {
		SIGINT, SIGQUIT, SIGTSTP, SIGTTIN, SIGTTOU,
	};
	int fl = fcntl(fd, F_GETFL);
	sigset_t hup;
	size_t i;

	if (!isatty(fd))
		return ckpt_err_set(err, ENOTTY,
				    "\"tty\" asks for descriptor 0 as the job's terminal, and it is no terminal");
	if (fl < 0 || (fl & O_ACCMODE) != O_RDWR)
		return ckpt_err_set(err, EBADF,
				    "the terminal sent as descriptor 0 is not open for reading and writing");
	for (i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
		signal(ignored[i], SIG_IGN);
	sigemptyset(&hup);
	sigaddset(&hup, SIGHUP);
	sigprocmask(SIG_BLOCK, &hup, NULL);
	if (setsid() < 0)
		return ckpt_err_set(err, errno, "cannot start a session for the job: %s",
				    strerror(errno));
	if (ioctl(fd, TIOCSCTTY, 0) < 0)
		return ckpt_err_set(err, errno,
				    "the terminal sent cannot be the job's controlling terminal: %s",
				    errno == EPERM ? "it is another session's" : strerror(errno));
	return 0;
}

/* In a worker whose job has ended: the signals its client passes on, held. */
static void block_forwarded(void)
{
	sigset_t set;

	ckptd_forwarded_set(&set);
	sigprocmask(SIG_BLOCK, &set, NULL);
}

/*
 * The worker's steps before the restorer: the terminal and the cgroup
 * taken, this node's share checked (one node) or every node's asked for
 * (several), the address map made, the client's descriptors its own;
 * @image gets the share's tree directory. 0, or -errno with @err.
 */
static int restart_prepare(struct ckptd *d, struct job *j, struct restart *r,
			   json_t *others, char image[PATH_MAX],
			   struct ckpt_err *err)
{
	const json_t *nodes = json_object_get(r->meta, "nodes");
	bool several = json_array_size(nodes) > 1;
	int i, ret;
	size_t k;

	ret = r->tty ? restart_take_tty(r->fds[0], err) : 0;
	if (!ret) {
		ret = job_add_pid(d, j, getpid());
		if (ret)
			ckpt_err_set(err, -ret, "cannot join the job's cgroup: %s",
				     strerror(-ret));
	}
	/*
	 * This node's share only: each peer checks its own before it says
	 * "ready", and no node makes a share's process or socket before
	 * every "ready" (the "go"), so no share starts if any is damaged.
	 * (What does come earlier is end_closed: the original's closed
	 * connections ended, on this node before the peers' checks.)
	 * Checking every share here as well had hashed each peer's twice.
	 * Over several nodes, start_remote() checks it while the peers
	 * check theirs.
	 */
	if (!ret && json_array_size(nodes) == 1)
		ret = check_images(r->dir, r->tree, err);
	for (k = 1; k < json_array_size(r->targets); k++)
		json_array_append(others, json_array_get(r->targets, k));
	for (k = 0; k < json_array_size(nodes); k++)
		json_array_append_new(r->now, json_null());
	if (!ret && several)
		ret = snapshot_dir(r, err);
	if (!ret && snprintf(image, PATH_MAX, "%s/%s", r->dir,
			     json_string_value(json_object_get(r->tree, "dir"))) >=
		    PATH_MAX)
		ret = ckpt_err_set(err, ENAMETOOLONG, "%s: path too long", r->dir);
	/* Every node ends what is in its share's way before any "go". */
	if (!ret && several)
		end_closed(d, j, image, json_array_get(nodes, 0));
	if (!ret && several)
		ret = start_remote(d, r, j, err);
	else if (!ret)
		ret = build_map(d, r, j, err);
	/* Shipped: the restarter, which stays, holds none of it. */
	if (r->dirfd >= 0)
		close(r->dirfd);
	free(r->mac);
	r->mac = NULL;
	for (i = 0; !ret && i < 3; i++)
		if (dup2(r->fds[i], i) < 0)
			ret = ckpt_err_set(err, errno, "%s", strerror(errno));
	return ret;
}

static void restart_worker(struct ckptd *d, struct job *j, int out, void *arg)
{
	struct restart *r = arg;
	const json_t *nodes = json_object_get(r->meta, "nodes");
	json_t *others = json_array();
	struct started_ctx sc = {
		.d = d, .out = out, .j = j, .nodes = others,
		.peers = r->peers, .npeers = json_array_size(nodes),
	};
	struct ckpt_restore_opts o = {
		.forward_signals = true,
		.started = on_started,
		.started_arg = &sc,
		.made = on_made,
		.made_arg = &sc,
		.held_arg = &sc,
	};
	char image[PATH_MAX];
	struct ckpt_err err;
	int ret, status;

	ret = restart_prepare(d, j, r, others, image, &err);
	o.image = image;
	if (json_array_size(nodes) > 1)
		o.held = on_held;
	o.addrmap = r->addrmap;
	o.addrmap_len = r->addrmap_len;
	o.filemap = r->filemap;
	o.filemap_len = r->filemap_len;
	sc.total = r->total;
	if (!ret && entry_opts(json_array_get(nodes, 0), &o))
		ret = ckpt_err_set(&err, ENOMEM, "out of memory");
	if (!ret)
		ret = ckpt_restore(&o, &status, &err);
	entry_opts_free(&o);
	/*
	 * The tree has ended and the signals it was sent have their old
	 * dispositions back: one passed on now (by ckptd, or by the watch of
	 * worker_watch_client()) must not end the worker before its reply.
	 */
	block_forwarded();
	/* Not confirmed (this node's tree did not start): the others end. */
	close_peers(r);
	/* Its own tree ended for a share's failure: that is the error. */
	if (*sc.failed.msg) {
		ret = -EIO;
		err = sc.failed;
	}
	if (ret) {
		worker_send(out, json_pack("{s:b, s:o}", "ok", 0, "error",
					   json_sprintf("job %s: %s", j->id, err.msg)));
		return;
	}
	worker_send(out, json_pack("{s:b, s:s, s:i}", "ok", 1, "job", j->id,
				   "status", status));
}

/*
 * In ckptd: the job's helpers, once its tree runs here; the job is free
 * again. A share another node coordinates becomes a job of this node's
 * only now.
 */
void restart_started(struct ckptd *d, struct worker *w, json_t *msg)
{
	const json_t *info = json_object_get(msg, "info");
	const char *coord = ckptd_msg_str(msg, "coordinator");
	struct job *j = worker_job(w);
	json_int_t init, uid, gid, seq;
	char err[256];

	if (json_unpack(msg, "{s:I}", "init", &init) ||
	    json_unpack((json_t *)info, "{s:I, s:I, s:I}", "uid", &uid, "gid", &gid,
			"seq", &seq))
		return;
	/* The same id is the same cgroup: an entry not yet reaped is this job. */
	if (!j)
		j = job_find(d, ckptd_msg_str(msg, "job"));
	if (!j) {
		j = job_new(d, ckptd_msg_str(msg, "job"), uid, gid,
			    ckptd_msg_str(info, "name"), json_object_get(info, "cmd"),
			    ckptd_msg_str(info, "cwd"), err, sizeof(err));
		if (!j) {
			ckptd_log(d, 0, "a restarted share: %s", err);
			return;
		}
		j->seq = seq;
	}
	snprintf(j->coordinator, sizeof(j->coordinator), "%s", coord ?: "");
	if (json_is_array(json_object_get(msg, "addrmap"))) {
		json_decref(j->addrmap);
		j->addrmap = json_incref(json_object_get(msg, "addrmap"));
	}
	if (coord || json_array_size(json_object_get(msg, "nodes"))) {
		json_decref(j->nodes);
		j->nodes = json_incref(json_object_get(msg, "nodes"));
	}
	j->helpers[0] = worker_pid(w);
	j->helpers[1] = init;
	if (j->busy == w)
		j->busy = NULL;
	job_save(d, j);
	ckptd_log(d, 1, "job %s restarted%s%s", j->id, coord ? ", coordinated by " : "",
		  coord ?: "");
}

/*
 * The restarter ended (its tree's first root did, or the restart failed):
 * no helper of its job any more, whose pid another process may get, of
 * the job even, now that several trees outlive it.
 */
void restart_ended(struct ckptd *d, pid_t pid)
{
	struct job *j;

	for (j = d->jobs; j; j = j->next) {
		if (j->helpers[0] != pid)
			continue;
		j->helpers[0] = 0;
		job_save(d, j);
	}
}

static void restart_report(struct worker *w, json_t *msg)
{
	if (msg && ckptd_msg_str(msg, "event"))
		restart_started(worker_daemon(w), w, msg);
	else if (!msg)
		restart_ended(worker_daemon(w), worker_pid(w));
}

/* The job a restart makes: the snapshot's id if no job has it here. */
static struct job *restart_job(struct conn *c, const json_t *meta)
{
	struct ckptd *d = conn_daemon(c);
	const char *id = json_string_value(json_object_get(meta, "job"));
	char err[512];
	struct job *j;

	/*
	 * A job that just ended gives its id back now, not at the next tick
	 * (its exited workers were reaped before this request: serve()): a
	 * new id would be refused by the job's other nodes (not the
	 * snapshot's job). One whose last worker gave its result but has
	 * not exited yet (a restart the client ran right after the last
	 * one's end, or its failure) is waited for, a second at most, when
	 * no process but its workers is left in the job (a restart worker
	 * is in its cgroup).
	 */
	j = job_find(d, id);
	if (j && job_idle(d, j))
		workers_await_replied(d, j, 1000);
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
	j->outside_close = !strcmp(ckptd_msg_str(meta, "outside") ?: "", "close");
	/* Its --dir, still checked as the user's at each checkpoint. */
	snprintf(j->dir, sizeof(j->dir), "%s", ckptd_msg_str(meta, "dir") ?: "");
	return j;
}

/*
 * Where each node's share of @nodes restarts: its own node, or the one
 * @hosts ({"old": "new"}) names. The first share, the job's root, is this
 * node's (the client's standard descriptors are here); no two on one
 * node. The list, or NULL with the refusal sent.
 */
static json_t *map_hosts(struct conn *c, const json_t *nodes, const json_t *hosts)
{
	struct ckptd *d = conn_daemon(c);
	json_t *targets = json_array(), *n, *t;
	const char *name, *to, *key;
	size_t i, k;

	if (json_is_null(hosts))
		hosts = NULL;
	if (hosts && (!json_is_object(hosts) || json_object_size(hosts) > CKPTD_MAX_NODES)) {
		conn_fail(c, "restart: \"hosts\" maps node names to node names");
		goto bad;
	}
	/* Every name mapped must be a node of the snapshot. */
	json_object_foreach((json_t *)hosts, key, t) {
		json_array_foreach(nodes, i, n)
			if (!strcmp(json_string_value(json_object_get(n, "node")), key))
				break;
		if (i == json_array_size(nodes)) {
			conn_fail(c, "restart: --hosts names %.64s, which has no share in the snapshot",
				  key);
			goto bad;
		}
	}
	json_array_foreach(nodes, i, n) {
		name = json_string_value(json_object_get(n, "node"));
		t = hosts ? json_object_get(hosts, name) : NULL;
		to = t ? json_string_value(t) : name;
		if (!to || !*to || strlen(to) > HOST_NAME_MAX || strchr(to, '/')) {
			conn_fail(c, "restart: --hosts: a bad node name for %s", name);
			goto bad;
		}
		if (!i && strcmp(to, d->node)) {
			conn_fail(c, "restart: the job's root was on %s; restart it from that node's share here (%s), or map %s=%s with --hosts",
				  name, d->node, name, d->node);
			goto bad;
		}
		for (k = 0; k < i; k++)
			if (!strcmp(json_string_value(json_array_get(targets, k)), to)) {
				conn_fail(c, "restart: two shares of the job would run on %s; one a node is what ckptd restarts",
					  to);
				goto bad;
			}
		json_array_append_new(targets, json_string(to));
	}
	return targets;
bad:
	json_decref(targets);
	return NULL;
}

/* restart {dir, hosts?, tty?}, with the client's descriptors 0, 1 and 2. */
void op_restart(struct conn *c, const json_t *req)
{
	struct ckptd *d = conn_daemon(c);
	struct restart r = { .fds = { -1, -1, -1 }, .now = json_array(), .dirfd = -1 };
	const char *dir = ckptd_msg_str(req, "dir");
	struct ckpt_err err;
	const json_t *nodes;
	struct worker *w;
	struct job *j;
	int i;

	if (conn_take_fds(c, r.fds, 3) != 3) {
		conn_fail(c, "restart: send the standard descriptors (0, 1, 2) with the request");
		goto out;
	}
	if (ckptd_restart_check(req, &r.tty, &err)) {
		conn_fail(c, "%s", err.msg);
		goto out;
	}
	if (snapshot_open(c, dir, r.dir, &r.meta, &r.mac))
		goto out;
	nodes = json_object_get(r.meta, "nodes");
	r.targets = map_hosts(c, nodes, json_object_get(req, "hosts"));
	if (!r.targets)
		goto out;
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
	free(r.mac);
	json_decref(r.meta);
	json_decref(r.targets);
	json_decref(r.now);
	json_decref(r.map);
	json_decref(r.total);
}

/* signal {sig}: to the job this connection restarted, through its worker. */
void op_signal(struct conn *c, const json_t *req)
{
	struct worker *w = conn_worker(c);
	int sig = ckptd_signal_of(req);

	if (!w) {
		conn_fail(c, "signal: this connection restarted no job");
		return;
	}
	/* No reply: the restart's own reply is still to come. */
	if (sig)
		kill(worker_pid(w), sig);
}

/*
 * A peer-restart's share, checked here (the MAC, the coordinator's
 * @mac, this share's images: the coordinator checks only its own) and
 * made job @id of this worker's (ckptd's own record comes later), this
 * worker in it: the share's tree directory in @image, the metadata in
 * *@meta.
 */
static int share_prepare(struct ckptd *d, const char *id, const char *real,
			 const char *node, const char *mac, struct started_ctx *sc,
			 char image[PATH_MAX], json_t **meta, struct ckpt_err *err)
{
	const json_t *tree;
	char errbuf[256];
	int ret;

	ret = snapshot_meta_read(d, real, mac, meta, NULL, err);
	/* A snapshot of this job, not another one's found or shipped instead. */
	if (!ret && strcmp(ckptd_msg_str(*meta, "job"), id))
		ret = ckpt_err_set(err, EINVAL, "%s is a snapshot of job %s, not of job %s",
				   real, ckptd_msg_str(*meta, "job"), id);
	tree = ret ? NULL : tree_of(*meta, node);
	if (!ret && !tree)
		ret = ckpt_err_set(err, ENOENT, "%s has no share of node %s", real, node);
	if (!ret && job_find(d, id) && job_running(job_find(d, id)))
		ret = ckpt_err_set(err, EBUSY, "job %s runs here already", id);
	if (!ret)
		ret = check_images(real, tree, err);
	if (!ret && snprintf(image, PATH_MAX, "%s/%s", real,
			     json_string_value(json_object_get(tree, "dir"))) >= PATH_MAX)
		ret = ckpt_err_set(err, ENAMETOOLONG, "path too long");
	if (ret)
		return ret;
	sc->j = job_new(d, id, json_integer_value(json_object_get(*meta, "uid")),
			json_integer_value(json_object_get(*meta, "gid")),
			ckptd_msg_str(*meta, "name"), json_object_get(*meta, "cmd"),
			ckptd_msg_str(*meta, "cwd"), errbuf, sizeof(errbuf));
	if (!sc->j)
		return ckpt_err_set(err, EIO, "%s", errbuf);
	sc->j->seq = json_integer_value(json_object_get(*meta, "seq"));
	ret = job_add_pid(d, sc->j, getpid());
	return ret ? ckpt_err_set(err, -ret, "cannot join job %s: %s", id,
				  strerror(-ret)) : 0;
}

/*
 * The coordinator's "go", with the address maps (into @addrmap and
 * @filemap, their lengths in @o): 0, -ECANCELED when it did not come, or
 * -errno and the reason in @err.
 */
static int share_go(struct ckptd *d, struct peer *p, const char *id,
		    struct ckpt_restore_opts *o, struct ckpt_addr_map *addrmap,
		    struct ckpt_addr_map *filemap, struct ckpt_err *err)
{
	json_t *msg = NULL;
	int ret;

	/* Another share on its way (ship_share()): "go" comes later. */
	while (!peer_recv(p, &msg, CKPTD_PEER_WAIT_S, err) &&
	       json_is_true(json_object_get(msg, "wait"))) {
		json_decref(msg);
		msg = NULL;
	}
	if (!json_is_true(json_object_get(msg, "go"))) {
		ckptd_log(d, 1, "job %s: the coordinator did not say go; the share stays down",
			  id);
		json_decref(msg);
		return -ECANCELED;
	}
	ret = ckpt_addrmap_read(json_object_get(msg, "addrmap"), addrmap,
				&o->addrmap_len, err);
	if (!ret)
		ret = ckpt_addrmap_read(json_object_get(msg, "addrmap_total"),
					filemap, &o->filemap_len, err);
	json_decref(msg);
	o->addrmap = addrmap;
	o->filemap = filemap;
	return ret;
}

/*
 * The snapshot the coordinator restarts, here: @dir itself if this node
 * sees it there with the share of @node in it (a root the nodes share:
 * the same meta.mac as @mac), its real path in @real; otherwise "need",
 * and the coordinator ships the metadata and the share of @node into
 * @stage, which @real names then.
 */
static int share_find(struct ckptd *d, struct peer *p, const char *id,
		      const char *dir, const char *node, const char *mac,
		      struct ship_stage *stage, char real[PATH_MAX],
		      struct ckpt_err *err)
{
	const char *allowed[] = { CKPT_META_FILE, CKPT_META_MAC_FILE, node, NULL };
	char what[64], *text = NULL;
	size_t len;
	bool same;
	int dfd, ret;

	if (!job_id_valid(id))
		return ckpt_err_set(err, EINVAL, "peer-restart: \"job\" is not a job id");
	dfd = realpath(dir, real) ? open(real, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	/* The same snapshot, with this share in it (not a copy of others'). */
	same = dfd >= 0 &&
	       !file_read_max(dfd, CKPT_META_MAC_FILE, &text, &len, 256) &&
	       !strcmp(text, mac) && !faccessat(dfd, node, F_OK, AT_SYMLINK_NOFOLLOW);
	free(text);
	if (dfd >= 0)
		close(dfd);
	/* Said at once: the coordinator asks the next node while this one checks. */
	if (same)
		return peer_send(p, json_pack("{s:b, s:b}", "ok", 1, "have", 1), err);
	snprintf(what, sizeof(what), "%.16s.in", id);
	ret = ship_stage_make(d, what, stage, err);
	if (ret)
		return ret;
	ret = peer_send(p, json_pack("{s:b, s:b}", "ok", 1, "need", 1), err);
	if (!ret)
		ret = ship_recv(p, stage->fd, allowed, false, NULL, NULL, err);
	if (ret)
		return ret;
	ckptd_log(d, 1, "job %s: its share of %s, shipped from its coordinator, in %s",
		  id, dir, stage->path);
	snprintf(real, PATH_MAX, "%s", stage->path);
	return 0;
}

/*
 * peer-restart {job, dir, node, coordinator, mac}: this node's share of a
 * snapshot (share_find(): on the root the nodes share, or shipped here),
 * as job @job of node @coordinator. Checked here too (MAC, images), then
 * "ready"; started on "go", with its standard descriptors on /dev/null;
 * "started" once its tree runs. The worker stays the share's restarter
 * until its root ends.
 */
void peer_restart(struct ckptd *d, struct peer *p, const json_t *req, int out)
{
	const char *id = ckptd_msg_str(req, "job"), *dir = ckptd_msg_str(req, "dir");
	const char *node = ckptd_msg_str(req, "node");
	const char *coord = ckptd_msg_str(req, "coordinator");
	const char *mac = ckptd_msg_str(req, "mac");
	struct ship_stage stage = { .fd = -1 };
	struct started_ctx sc = {
		.d = d, .out = out, .p = p, .coordinator = coord, .stage = &stage,
	};
	struct ckpt_restore_opts o = {
		.started = on_started, .started_arg = &sc,
		.made = on_made, .made_arg = &sc,
		.held = on_held, .held_arg = &sc,
	};
	struct ckpt_addr_map addrmap[CKPT_ADDRMAP_MAX], filemap[CKPT_ADDRMAP_MAX];
	char real[PATH_MAX], image[PATH_MAX];
	struct ckpt_err err;
	json_t *meta = NULL;
	int ret, status, i, null;

	if (!id || !dir || !node || !coord || !mac) {
		peer_fail(p, "node %s: peer-restart: needs \"job\", \"dir\", \"node\", \"coordinator\", \"mac\"",
			  d->node);
		return;
	}
	ret = share_find(d, p, id, dir, node, mac, &stage, real, &err);
	if (!ret)
		ret = share_prepare(d, id, real, node, mac, &sc, image, &meta, &err);
	if (ret) {
		peer_fail(p, "node %s: %s", d->node, err.msg);
		goto out;
	}
	end_closed(d, sc.j, image, node_of(meta, node));
	peer_send(p, json_pack("{s:b, s:s, s:o}", "ok", 1, "ready", d->node,
			       "addrs", ckpt_addrs_local()), NULL);
	ret = share_go(d, p, id, &o, addrmap, filemap, &err);
	if (ret == -ECANCELED)
		goto out;
	if (!ret && entry_opts(node_of(meta, node), &o))
		ret = ckpt_err_set(&err, ENOMEM, "out of memory");
	if (ret) {
		peer_fail(p, "node %s: %s", d->node, err.msg);
		goto out;
	}
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	for (i = 0; i < 3; i++)
		dup2(null, i);
	o.image = image;
	ret = ckpt_restore(&o, &status, &err);
	if (ret)
		peer_fail(p, "node %s: %s", d->node, err.msg);
	else
		ckptd_log(d, 1, "job %s: the share's root ended (status %d)", id, status);
out:
	ship_stage_remove(&stage);
	entry_opts_free(&o);
	json_decref(meta);
}
