/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ckptd, the per-node daemon (Documentation/ckptd.md). One event loop
 * (libevent) serves local clients on a UNIX socket; what may block for
 * long (a checkpoint, a restart) runs in a forked worker that reports back
 * over a socket pair. Files:
 *
 *   ckptd.c     main, configuration, the loop, signals, children
 *   conn.c      local clients: credentials, bounds, requests, replies
 *   job.c       jobs: ids, records in /run/ckpt/jobs, cgroups, ls/status
 *   snapshot.c  a node's checkpoint of a job, the snapshot and its metadata
 *   restart.c   a snapshot's checks and its restart
 *   inspect.c   what a snapshot holds, checked
 *   progress.c  a checkpoint's progress, for its client
 *   worker.c    forked workers and what they report
 *   peer.c      the other nodes' ckptd: TLS with the cluster key, requests
 *   key.c       the cluster key and the keys derived from it
 *   file.c      files written whole: temporary name, fsync, rename
 *   tcpjoin.c   TCP connections to other nodes: a share's ends, for
 *               lib/ckptd/tcpjoin.c's join
 */
#ifndef _CKPTD_H
#define _CKPTD_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <event2/event.h>
#include <jansson.h>

#include <linux/ckpt.h>

#include "meta.h"
#include "proto.h"
#include "restore.h"

#define CKPTD_CONF		"/etc/ckpt/ckptd.conf"
#define CKPTD_STATE		"/run/ckpt"
#define CKPTD_CGROUP		"/sys/fs/cgroup/ckpt"
#define CKPTD_JOB_ID_LEN	8	/* hex digits */
#define CKPTD_MAX_CONNS		64
#define CKPTD_MAX_CONNS_UID	8
#define CKPTD_MAX_JOBS_UID	64
#define CKPTD_MAC_LEN		32
#define CKPTD_PORT		7201
#define CKPTD_MAX_INTERVAL	(7 * 24 * 3600)
#define CKPTD_MAX_KEEP		1000
#define CKPTD_MAX_NODES		64
/* copies = N: at most this many other nodes keep each snapshot too. */
#define CKPTD_COPIES_MAX	4
/* How long a peer waits for a step of a coordinated checkpoint. */
#define CKPTD_PEER_WAIT_S	120
/* SEQ.tmp/.token: its random word tells a node it shares the root. */
#define CKPTD_TOKEN_FILE	".token"
#define CKPTD_TOKEN_LEN		16
/* Coordinated captures at most, while TCP bytes move between two (tcpjoin.c). */
#define CKPTD_JOIN_TRIES	4
/* How long a restarted share waits for the coordinator's tree to start. */
#define CKPTD_CONFIRM_WAIT_S	600

struct conn;
struct peer;
struct worker;

struct ckptd_config {
	char snapshot_root[PATH_MAX];	/* snapshot_root, /var/lib/ckpt */
	char key_file[PATH_MAX];	/* key_file, /etc/ckpt/cluster.key */
	char socket[PATH_MAX];		/* socket, CKPTD_SOCKET */
	int log_level;			/* log_level: 0 errors .. 2 debug */
	char listen[64];		/* listen: the daemons' address, "" none */
	unsigned int port;		/* port: theirs, cluster-wide */
	unsigned int copies;		/* copies: other nodes that keep a snapshot too */
};

#define CKPTD_DIR_MAX	CKPT_META_DIR_MAX	/* a --dir: room for JOB/SEQ.tmp/NODE/0/PID.img */

struct job {
	char id[CKPTD_JOB_ID_LEN + 1];
	uid_t uid;
	gid_t gid;
	char name[64];
	json_t *cmd;		/* array of strings */
	char cwd[PATH_MAX];
	unsigned int seq;	/* the newest snapshot's, 0 before any */
	pid_t helpers[2];	/* a restarter and its tree's init, not members */
	char coordinator[HOST_NAME_MAX + 1];	/* its node, "" when this one */
	json_t *nodes;		/* coordinator: the other nodes' names */
	struct worker *busy;	/* the checkpoint or restart under way */
	bool copying;		/* that checkpoint committed, its copies under way */
	unsigned int interval;	/* seconds between periodic checkpoints, 0: none */
	unsigned int keep;	/* snapshots kept, the newest; 0: all */
	bool outside_close;	/* connections outside the job come back closed */
	unsigned int orphan_seq;	/* a snapshot an earlier ckptd's worker writes */
	char dir[CKPTD_DIR_MAX];	/* ckpt-run --dir (snapdir.c), or "" */
	char latest[PATH_MAX];	/* the newest snapshot's path, or "" */
	json_t *addrmap;	/* its first run's addresses to its nodes' now, or NULL */
	time_t last;		/* the last checkpoint's start */
	struct job *next;
};

struct ckptd {
	struct event_base *base;
	struct ckptd_config cfg;
	bool foreground;
	char node[HOST_NAME_MAX + 1];
	uint8_t mac_key[CKPTD_MAC_LEN];	/* the snapshot MAC's (key.c) */
	uint8_t psk[CKPTD_MAC_LEN];	/* the daemons' TLS key (key.c) */
	int listen_fd;
	struct event *listen_ev;
	int peer_fd;			/* the daemons' TCP socket, or -1 */
	struct event *peer_ev;
	struct conn *conns;
	unsigned int nconns;
	struct job *jobs;
	struct worker *workers;
	unsigned int inspects;		/* inspect workers running */
	struct event *joins_ev;		/* joins held back: tried again */
};

/* ckptd.c */
/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t ckptd_now_ns(void);
void ckptd_log(const struct ckptd *d, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* conn.c */
int conn_listen(struct ckptd *d);
void conn_close(struct conn *c);
/* Replies: ok true with @res's members (taken), or ok false and the error. */
void conn_reply(struct conn *c, json_t *res);
void conn_fail(struct conn *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void conn_send(struct conn *c, json_t *msg);
/* The request is answered (a worker's reply went out): a new one may come. */
void conn_done(struct conn *c);
/* Not yet after all: another worker goes on with it (a join's start). */
void conn_busy(struct conn *c);
uid_t conn_uid(const struct conn *c);
pid_t conn_pid(const struct conn *c);
struct ckptd *conn_daemon(const struct conn *c);
/* The descriptors the request came with, taken by the caller. */
int conn_take_fds(struct conn *c, int *fds, int max);
void conn_set_worker(struct conn *c, struct worker *w);
void conn_set_detached(struct conn *c, const char *job, const char *mode,
		       unsigned int timeout_s);
struct worker *conn_worker(const struct conn *c);
struct conn *conn_next(const struct conn *c);
int conn_fd(const struct conn *c);
/* A join of @pid to job @job held back (job.c); one per connection. */
void conn_hold_join(struct conn *c, const char *job, pid_t pid);
/* The job of the join @c holds back, its pid and since when; NULL: none. */
const char *conn_held_join(const struct conn *c, pid_t *pid, uint64_t *since_ns);
void conn_release_join(struct conn *c);

/* job.c */
int job_load_all(struct ckptd *d);
struct job *job_find(struct ckptd *d, const char *id);
/* @c may act on @j (its uid's, or root's), else replies the refusal. */
bool job_allowed(struct conn *c, const struct job *j);
struct job *job_lookup(struct conn *c, const json_t *req);
struct job *job_new(struct ckptd *d, const char *id, uid_t uid, gid_t gid,
		    const char *name, json_t *cmd, const char *cwd,
		    char *errbuf, size_t errlen);
void job_drop(struct ckptd *d, struct job *j);
int job_save(struct ckptd *d, const struct job *j);
int job_add_pid(struct ckptd *d, const struct job *j, pid_t pid);
/*
 * The roots of the job's trees on this node, its processes whose parent is
 * not the job's (the process ckpt-run started, a process an ssh started,
 * one a double fork left), oldest first: count, or -errno (-E2BIG: more
 * than @max).
 */
int job_roots(const struct job *j, pid_t *roots, int max);
/* @id is a job id: CKPTD_JOB_ID_LEN lowercase hex digits. */
bool job_id_valid(const char *id);
bool job_running(const struct job *j);
/*
 * Whether job @j's cgroup holds no process but its helpers and its
 * workers: a job whose last restart has ended but whose worker has not.
 */
bool job_idle(const struct ckptd *d, const struct job *j);
/* The same by id, whether or not this ckptd has a record of it. */
bool job_id_running(const char *id);
/* @sig to every process of the job on this node, helpers left out. */
void job_signal(const struct job *j, int sig);
json_t *job_info(const struct job *j);
/*
 * A coordinated checkpoint leaves the job's share here stopped until all
 * nodes are done: marked so, a worker that dies meanwhile does not leave
 * it stopped for good (job_resume_cut(), after a worker, at start).
 */
void job_mark_stopped(const struct job *j, bool on);
void job_resume_cut(struct ckptd *d);
/*
 * In a worker: no process joins the job on this node from now until
 * job_let_joins() (ckptd.md, "Joins during a checkpoint"); @killed: its
 * processes were killed, and the joins held back are refused once they
 * are gone.
 */
void job_hold_joins(const struct job *j);
void job_let_joins(const struct job *j, bool killed);
/*
 * A join's side of that lock: held shared (a descriptor, closed to let
 * go) once no checkpoint holds it, tried every 100 ms for @wait_s
 * seconds; -EAGAIN if one held it throughout, or -errno.
 */
int job_joins_shared(const struct job *j, unsigned int wait_s);
/*
 * The longest a join waits for a checkpoint to let joins in: a
 * checkpoint's longest, and for several nodes the gather and commit a
 * stop or kill waits for.
 */
#define CKPTD_JOIN_HOLD_MAX_S	3600
void job_reap(struct ckptd *d);
/*
 * The job cgroups of no record here, empty and older than 10 s: a share's
 * restart that never started (no "go", its coordinator's own share
 * refused) leaves the one its worker made and joined. rmdir() refuses a
 * cgroup with a process in it. From the tick only.
 */
void job_sweep_cgroups(struct ckptd *d);
void op_run(struct conn *c, const json_t *req);
void op_ls(struct conn *c, const json_t *req);
void op_status(struct conn *c, const json_t *req);
void op_join(struct conn *c, const json_t *req);
/* peer.c */
void op_node(struct conn *c, const json_t *req);

/* snapshot.c */
void op_checkpoint(struct conn *c, const json_t *req);
void checkpoint_detached(struct ckptd *d, const char *id, const char *mode,
			 unsigned int timeout_s);
void checkpoint_due(struct ckptd *d);
void op_cancel(struct conn *c, const json_t *req);
/*
 * Removes what checkpoints cut short left of @j's snapshots (*.tmp), but
 * not one a live worker of an earlier ckptd still writes: its number, or
 * 0 (the newest such).
 */
unsigned int snapshot_sweep(struct ckptd *d, const struct job *j);
/*
 * @j's orphan_seq, once its worker has ended: its snapshot, if committed,
 * is the job's newest (status, ls); then forgotten. Whether that worker
 * still works.
 */
bool snapshot_catch_up(struct ckptd *d, struct job *j);
/*
 * @j, found again by a ckptd started anew: swept, an earlier ckptd's live
 * worker noted (orphan_seq), a snapshot committed after its record was
 * written taken as its newest.
 */
void snapshot_found_again(struct ckptd *d, struct job *j);
/* A peer's share of a coordinated checkpoint, in a peer worker. */
void peer_checkpoint(struct ckptd *d, struct peer *p, const json_t *req);
/*
 * Snapshots of job @id (in ckpt-run's --dir @jobdir, or "") beyond its
 * newest @keep removed, the oldest first; 0 keeps all.
 */
void snapshot_retain(struct ckptd *d, const char *jobdir, const char *id,
		     uid_t uid, unsigned int keep);

/*
 * copy.c: a committed snapshot kept whole on other nodes too, for nodes
 * whose snapshot roots are their own (Documentation/ckptd.md, "Copies on
 * other nodes"). Snapshot @seq of @j, in @dir, to @nodes one after the
 * other until "copies" (the configuration's) have it, a node that fails
 * logged and the next tried, into its snapshot root or, for a snapshot in
 * a --dir @udir, into @udir there: the nodes that took a copy, in
 * *@made; 0, or -errno with @err naming the first that failed when too
 * few did.
 */
int copy_out(struct ckptd *d, const struct job *j, unsigned int seq,
	     const char *udir, const char *dir, const char *const *nodes,
	     json_t **made, struct ckpt_err *err);
/* peer-copy, in a peer worker: a snapshot's copy received here. */
void peer_copy(struct ckptd *d, struct peer *p, const json_t *req);

/*
 * ask.c: a detached checkpoint request on a node that does not coordinate
 * the job, passed to the node that does (peer-ask).
 */
void ask_coordinator(struct ckptd *d, const struct job *j, const char *mode,
		     unsigned int timeout_s);
void peer_ask(struct ckptd *d, struct peer *p, const json_t *req, int out);
void ask_report(struct ckptd *d, const json_t *msg);

/* @path's SHA-256 in hex and its size: 0 or -errno. */
int ckptd_sha256_file(const char *path, char hex[65], uint64_t *size);

/* restart.c */
void op_restart(struct conn *c, const json_t *req);
/*
 * meta.json in @dir under a valid MAC (with @expect, that meta.mac text
 * and no other), of the right shape: 0 or -errno. With @mac, the
 * meta.mac text checked, for the caller to free.
 */
int snapshot_meta_read(const struct ckptd *d, const char *dir,
		       const char *expect, json_t **meta, char **mac,
		       struct ckpt_err *err);
/*
 * The snapshot @dir names, for a request of @c: its real path in @abs and
 * its metadata, under a valid MAC, of the right shape and the caller's
 * job; with @mac, that MAC's text (meta.mac), for the caller to free.
 * 0, or -1 with @c answered.
 */
int snapshot_open(struct conn *c, const char *dir, char abs[PATH_MAX],
		  json_t **meta, char **mac);
/* Every node's images in @dir are the ones @meta names: 0 or -errno. */
int snapshot_check_images(const char *dir, const json_t *meta,
			  struct ckpt_err *err);
/* inspect.c */
void op_inspect(struct conn *c, const json_t *req);
void op_signal(struct conn *c, const json_t *req);
void peer_restart(struct ckptd *d, struct peer *p, const json_t *req, int out);
/* A restarted share runs: its job, here, from the worker's "started". */
void restart_started(struct ckptd *d, struct worker *w, json_t *msg);
/* The restarter @pid ended: no job's helper any more. */
void restart_ended(struct ckptd *d, pid_t pid);
/*
 * In a worker: @fd, a terminal open for reading and writing, as the
 * controlling terminal of a new session of the worker's: 0 or -errno.
 */
int restart_take_tty(int fd, struct ckpt_err *err);

/* start.c: a job started in namespaces of its own (ckpt-run --ns). */
/*
 * Namespaces a job has on this node already (job.c's job_enter_at()):
 * its pid, IPC and mount namespaces, in that order, held open; -1 for
 * none.
 */
struct start_at {
	int fds[3];
};
void start_at_close(struct start_at *at);
/*
 * Job @j's program, run by a worker of @c's (the client's descriptors
 * @fds, closed here, a process of theirs read for the rest), in @cwd, on
 * the terminal sent as descriptor 0 with @tty; @req checked
 * (ckptd_run_ns_check()): 0, or -1 with @c answered; in new namespaces,
 * or with @at in those the job has here already. For a job that has
 * processes here already (a join on another node: ckpt-join --ns), its
 * worker waits for a checkpoint under way to let joins in first.
 */
int start_job(struct conn *c, struct job *j, const json_t *req, const char *cwd,
	      bool tty, int fds[3], const struct start_at *at);

/*
 * worker.c: @fn runs in the child with the report socket. A worker
 * answers client @c itself unless @c is NULL or @quiet (ckptd answers then,
 * from @report); @j may be NULL.
 */
struct worker *worker_start(struct ckptd *d, struct conn *c, struct job *j,
			    void (*fn)(struct ckptd *d, struct job *j, int out,
				       void *arg),
			    void (*report)(struct worker *w, json_t *msg),
			    void *arg);
/* The @n descriptors of @fds that are open closed, each -1 after. */
void ckptd_close_fds(int *fds, int n);
/* Whether descriptors @a and @b are one file (namespaces: one namespace). */
bool ckptd_fds_same(int a, int b);
/* Whether descriptor @fd is the file at @path (/proc/self/ns/mnt, ...). */
bool ckptd_fd_is(int fd, const char *path);
void worker_set_quiet(bool quiet);
void worker_set_arg(struct worker *w, void *arg);
void *worker_arg(const struct worker *w);
/*
 * Descriptors ckptd holds for @w's client meanwhile (a join's, until the
 * coordinator answers; -1 for none): closed in every worker started
 * after, which has nothing to do with them.
 */
void worker_set_fds(struct worker *w, const int fds[3]);
unsigned int workers_without_job(const struct ckptd *d);
/* The next worker_start() is a checkpoint's; whether @w is one. */
void worker_set_checkpoint(void);
bool worker_is_checkpoint(const struct worker *w);
pid_t worker_pid(const struct worker *w);
struct ckptd *worker_daemon(const struct worker *w);
bool worker_of_job(const struct ckptd *d, const struct job *j);
/* In a worker: one message to ckptd (@msg is taken). */
void worker_send(int out, json_t *msg);
/*
 * In a worker of a job's foreground, once its job runs: the client's
 * signals are passed on also after ckptd is gone (worker.c).
 */
void worker_watch_client(struct ckptd *d, int out);
/* In a worker: one event for its client alone (@msg is taken). */
void worker_tell_client(json_t *msg);

/*
 * progress.c, in a checkpoint worker: begin (phase "freezing", the clock
 * starts), watch the images under @dir grow (phase "writing", twice a
 * second, from a thread) until told to stop, and tell each later phase.
 */
void progress_begin(const char *dir);
void progress_watch(bool on);
void progress_phase(const char *phase, json_int_t procs, json_int_t bytes);
struct job *worker_job(const struct worker *w);
struct conn *worker_conn(const struct worker *w);
void worker_child_exited(struct ckptd *d, pid_t pid, int status);
/* Every worker that has exited, handled now rather than at its SIGCHLD. */
void workers_reap(struct ckptd *d);
/*
 * Every report the workers have sent, taken now, and the workers that
 * exited reaped: a request served next sees what its client has heard (a
 * checkpoint committed, a node that left, a job that ended).
 */
void workers_catch_up(struct ckptd *d);
/*
 * Job @j's workers that have given their result, waited for (@ms at most)
 * and reaped: whether none is left.
 */
bool workers_await_replied(struct ckptd *d, const struct job *j, int ms);
/* Whether @pid is a worker of job @j's (restart workers join its cgroup). */
bool worker_pid_of_job(const struct ckptd *d, const struct job *j, pid_t pid);
void worker_detach_conn(struct worker *w);

/*
 * ship.c: a share's files between two daemons on their peer connection,
 * for nodes whose snapshot roots are their own. @tick, if any, is called
 * every 20 s of a long stream (the other peers' keep-alive).
 */
struct ship_tick {
	/*
	 * Called every few seconds of a stream. Sending, -errno (with @err)
	 * stops it there (the caller has given up: another node refused);
	 * receiving, the stream is read on whatever it returns.
	 */
	int (*fn)(void *arg, struct ckpt_err *err);
	void *arg;
};
/*
 * The files and directories @names under @dirfd, then "end": with
 * @recurse, each directory with all it holds; without, only the names
 * given (a directory's before what it holds).
 */
int ship_send(struct peer *p, int dirfd, const char *const *names,
	      bool recurse, const struct ship_tick *tick, struct ckpt_err *err);
/*
 * A stream into @dirfd, each path's first name one of @allowed, synced if
 * @sync; its bytes in *@bytes. 0, or -errno with @err.
 */
int ship_recv(struct peer *p, int dirfd, const char *const *allowed,
	      bool sync, const struct ship_tick *tick, uint64_t *bytes,
	      struct ckpt_err *err);
/* A directory for files on their way: SNAPROOT/.ship/NODE@WHAT.XXXXXX. */
struct ship_stage {
	char path[PATH_MAX];
	int fd;		/* locked while its worker lives */
};
int ship_stage_make(struct ckptd *d, const char *what, struct ship_stage *st,
		    struct ckpt_err *err);
/* Removed with what it holds; nothing if it was never made. */
void ship_stage_remove(struct ship_stage *st);
/* This node's stages whose workers have ended, removed. */
void ship_stage_sweep(struct ckptd *d);

/* peer.c: a connection to another node's ckptd, TLS under the cluster key. */
struct peer;
int peer_listen(struct ckptd *d);
/* Connects to @node's ckptd: the peer, or NULL with @err. */
struct peer *peer_connect(struct ckptd *d, const char *node,
			  struct ckpt_err *err);
/*
 * peer_connect() to each of @n nodes at once (a TLS handshake is not free,
 * and one node after another made a job's checkpoint start later the more
 * nodes it has): 0 with every @out[i] set, or -EHOSTUNREACH with @err the
 * first failure in @nodes' order and none left open.
 */
int peer_connect_all(struct ckptd *d, const char *const *nodes, size_t n,
		     struct peer **out, struct ckpt_err *err);
int peer_send(struct peer *p, json_t *msg, struct ckpt_err *err);
/* The next message, waiting up to @secs: 0, or -errno with @err. */
int peer_recv(struct peer *p, json_t **msg, int secs, struct ckpt_err *err);
/* @len bytes as they are, after a message that says how many (ship.c). */
int peer_send_raw(struct peer *p, const void *buf, size_t len,
		  struct ckpt_err *err);
int peer_recv_raw(struct peer *p, void *buf, size_t len, int secs,
		  struct ckpt_err *err);
/*
 * Whether a message (or the connection's end) is there to read within
 * @ms: 1, or 0. It tells when peer_recv() would not wait.
 */
int peer_wait(struct peer *p, int ms);
/* The reply to a request sent ("ok" true, else -EPERM with its error). */
int peer_reply(struct peer *p, json_t **reply, int secs, struct ckpt_err *err);
/* In a peer worker: a refusal, named. */
void peer_fail(struct peer *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* One request and its reply ("ok" true, else -EPERM with its error). */
int peer_call(struct peer *p, json_t *req, json_t **reply, int secs,
	      struct ckpt_err *err);
const char *peer_name(const struct peer *p);
/* Whether the JSON array of strings @list holds @s. */
bool peer_list_has(const json_t *list, const char *s);
void peer_close(struct peer *p);

/* key.c */
int key_load(struct ckptd *d);
/* HMAC-SHA256 of @buf under the snapshot MAC key, in hex. */
void key_mac(const struct ckptd *d, const void *buf, size_t len,
	     char hex[2 * CKPTD_MAC_LEN + 1]);
/* @len bytes of @b as 2 * @len lower-case hex digits and a NUL, in @out. */
void ckptd_hex(const uint8_t *b, size_t len, char *out);
/* ckptd_hex()'s digits (checked: lower-case, whole bytes) back, at @out. */
void ckptd_unhex(const char *hex, uint8_t *out);

/* snapdir.c: ROOT/JOB, a job's snapshots' directory, and how it is reached. */
struct snapdir {
	int fd;			/* ROOT/JOB, open, or -1 */
	char path[32];		/* /proc/self/fd/FD: what ckptd works through */
	char shown[PATH_MAX];	/* ROOT/JOB: what it says */
};
/*
 * A --dir of @uid's (root's jobs: any directory), open: its descriptor, or
 * -errno and the refusal in @err.
 */
int snapdir_root_open(const char *dir, uid_t uid, struct ckpt_err *err);
/* The same, at a request: 0 if @dir may be a --dir of @uid's. */
int snapdir_root_check(const char *dir, uid_t uid, struct ckpt_err *err);
/*
 * Job @id's directory under @dir (NULL or "": ckptd's snapshot root), made
 * if @create, open in @sd; 0, or -errno and the reason in @err. Under a
 * --dir it must be ckptd's own (root's, 0700), whatever the user did.
 */
int snapdir_open(struct snapdir *sd, const struct ckptd *d, const char *dir,
		 const char *id, uid_t uid, bool create, struct ckpt_err *err);
void snapdir_close(struct snapdir *sd);
/*
 * Whether the SEQ.tmp at @path is a live worker's: it holds an flock on
 * it as long as it lives (a checkpoint's, a copy's), even with the ckptd
 * that started it gone.
 */
bool snapdir_tmp_in_use(const char *path);
/*
 * Every SEQ.tmp in @sd (job @id's directory) that no worker holds, left
 * by a @what ("checkpoint", "copy") cut short, removed and logged; the
 * highest SEQ of those still held, or 0.
 */
unsigned int snapdir_sweep(struct ckptd *d, const struct snapdir *sd,
			   const char *id, const char *what);
/*
 * "latest" in job directory @dfd pointed at snapshot @seq (with
 * @newer_only, unless it points at a newer one already): 0 or -errno.
 */
int snapdir_latest(int dfd, unsigned int seq, bool newer_only);
/* @err's mentions of sd->path, as sd->shown: what the user knows. */
void snapdir_shown(const struct snapdir *sd, struct ckpt_err *err);

/* file.c */
int file_write_atomic(int dirfd, const char *name, const void *buf,
		      size_t len, mode_t mode);
int file_read_max(int dirfd, const char *name, char **buf, size_t *len,
		  size_t max);
int fsync_dir(int dirfd);
/* A directory of ckptd's own and all in it (a .tmp snapshot, a stage). */
void file_remove_tree(const char *path);

#endif /* _CKPTD_H */
