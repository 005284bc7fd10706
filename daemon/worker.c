// SPDX-License-Identifier: GPL-2.0
/*
 * Workers: what may block for long runs in a child of ckptd, so that the
 * loop goes on serving. A worker sends its messages, in the protocol's
 * frames, to its client itself (the connection is the one descriptor of
 * ckptd's it keeps), events ({"event": ...}) and last the reply ({"ok":
 * ...}), and a copy of each to ckptd over a socket pair, for the hook of
 * the op that started it. So a worker's client has its answer even when
 * ckptd is stopped or restarted meanwhile (a job restarted through ckptd
 * runs as long as its worker). When a worker ends without a reply, ckptd
 * says so to the client in its place.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ckptd.h"

/* In a worker: the connection of the client it answers, or -1. */
static int client_fd = -1;
/* The next worker leaves its client's answer to ckptd. */
static bool next_quiet;
/* The next worker is a checkpoint's (ckpt cancel ends those only). */
static bool next_checkpoint;

void worker_set_checkpoint(void)
{
	next_checkpoint = true;
}

void worker_set_quiet(bool quiet)
{
	next_quiet = quiet;
}


struct worker {
	struct ckptd *d;
	pid_t pid;
	int sock;
	struct event *ev;
	struct ckptd_frame fr;
	struct conn *conn;	/* NULL once the client is gone */
	struct job *job;
	bool replied;
	bool is_checkpoint;
	void *arg;
	int fds[3];		/* held for its client (worker_set_fds()) */
	void (*report)(struct worker *w, json_t *msg);
	struct worker *next;
};

void worker_set_fds(struct worker *w, const int fds[3])
{
	memcpy(w->fds, fds, sizeof(w->fds));
}

void worker_set_arg(struct worker *w, void *arg)
{
	w->arg = arg;
}

void *worker_arg(const struct worker *w)
{
	return w->arg;
}

unsigned int workers_without_job(const struct ckptd *d)
{
	const struct worker *w;
	unsigned int n = 0;

	for (w = d->workers; w; w = w->next)
		n += !w->job;
	return n;
}

pid_t worker_pid(const struct worker *w)
{
	return w->pid;
}

struct ckptd *worker_daemon(const struct worker *w)
{
	return w->d;
}

bool worker_is_checkpoint(const struct worker *w)
{
	return w->is_checkpoint;
}

bool worker_of_job(const struct ckptd *d, const struct job *j)
{
	const struct worker *w;

	for (w = d->workers; w; w = w->next)
		if (w->job == j)
			return true;
	return false;
}

struct job *worker_job(const struct worker *w)
{
	return w->job;
}

struct conn *worker_conn(const struct worker *w)
{
	return w->conn;
}

void worker_detach_conn(struct worker *w)
{
	w->conn = NULL;
}

/* One frame of the worker's (the client has it already): to the op's hook. */
static void take_report(struct worker *w)
{
	json_t *msg;

	if (ckptd_msg_decode(w->fr.buf + 4, w->fr.have - 4, &msg, NULL))
		return;
	if (json_object_get(msg, "ok")) {
		w->replied = true;
		if (w->conn)
			conn_done(w->conn);
	}
	if (w->report)
		w->report(w, msg);
	json_decref(msg);
}

static void drain(struct worker *w)
{
	int ret;

	while ((ret = ckptd_frame_read(w->sock, &w->fr, NULL)) > 0) {
		take_report(w);
		ckptd_frame_reset(&w->fr);
	}
	if (ret < 0 && w->ev) {
		event_free(w->ev);
		w->ev = NULL;
	}
}

static void on_report(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	drain(arg);
}

struct worker *worker_start(struct ckptd *d, struct conn *c, struct job *j,
			    void (*fn)(struct ckptd *d, struct job *j, int out,
				       void *arg),
			    void (*report)(struct worker *w, json_t *msg),
			    void *arg)
{
	bool checkpoint = next_checkpoint;
	struct worker *w;
	struct conn *o;
	int sv[2], i;

	next_checkpoint = false;
	w = calloc(1, sizeof(*w));
	if (!w || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
		free(w);
		return NULL;
	}
	w->pid = fork();
	if (w->pid < 0) {
		close(sv[0]);
		close(sv[1]);
		free(w);
		return NULL;
	}
	if (!w->pid) {
		/* Nothing of the daemon's stays open in a long-lived child. */
		client_fd = c && !next_quiet ? conn_fd(c) : -1;
		close(sv[0]);
		close(d->listen_fd);
		if (d->peer_fd >= 0)
			close(d->peer_fd);
		for (o = d->conns; o; o = conn_next(o))
			if (o != c)
				close(conn_fd(o));
		for (w = d->workers; w; w = w->next) {
			close(w->sock);
			for (i = 0; i < 3; i++)
				if (w->fds[i] >= 0)
					close(w->fds[i]);
		}
		signal(SIGCHLD, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		fn(d, j, sv[1], arg);
		_exit(0);
	}
	close(sv[1]);
	w->d = d;
	w->sock = sv[0];
	w->fds[0] = w->fds[1] = w->fds[2] = -1;
	w->conn = c;
	w->job = j;
	w->arg = arg;
	w->report = report;
	w->is_checkpoint = checkpoint;
	ckptd_frame_init(&w->fr);
	evutil_make_socket_nonblocking(w->sock);
	w->ev = event_new(d->base, w->sock, EV_READ | EV_PERSIST, on_report, w);
	if (w->ev)
		event_add(w->ev, NULL);
	if (j)
		j->busy = w;
	if (c)
		conn_set_worker(c, w);
	w->next = d->workers;
	d->workers = w;
	return w;
}

void worker_child_exited(struct ckptd *d, pid_t pid, int status)
{
	struct worker **p, *w;

	for (p = &d->workers; *p && (*p)->pid != pid; p = &(*p)->next)
		;
	w = *p;
	if (!w)
		return;
	*p = w->next;
	drain(w);
	if (WIFSIGNALED(status) || (!w->conn && WEXITSTATUS(status)))
		ckptd_log(d, 0, "worker %d%s%s ended by %s %d", (int)pid,
			  w->job ? " of job " : "", w->job ? w->job->id : "",
			  WIFSIGNALED(status) ? "signal" : "status",
			  WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	/*
	 * Its report first: a cancelled checkpoint's half-made snapshot is
	 * swept before its client hears of the end and looks.
	 */
	if (w->report)
		w->report(w, NULL);
	if (!w->replied && w->conn)
		conn_fail(w->conn, "ckptd's worker%s%s ended (%s %d) without a result",
			  w->job ? " for job " : "", w->job ? w->job->id : "",
			  WIFSIGNALED(status) ? "signal" : "status",
			  WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	/* Unless another worker serves the client now (a join's start). */
	if (w->conn && conn_worker(w->conn) == w)
		conn_set_worker(w->conn, NULL);
	if (w->job && w->job->busy == w)
		w->job->busy = NULL;
	if (w->ev)
		event_free(w->ev);
	ckptd_frame_reset(&w->fr);
	close(w->sock);
	free(w);
	job_resume_cut(d);
}

void workers_reap(struct ckptd *d)
{
	pid_t pid;
	int st;

	while ((pid = waitpid(-1, &st, WNOHANG)) > 0)
		worker_child_exited(d, pid, st);
}

/*
 * In a worker whose client is a job's foreground: waits for ckptd to be
 * gone (its end of the report socket closed), then reads the client's
 * "signal" requests itself, which no ckptd reads any more (a ckptd
 * started again does not know this client), and raises each here, where
 * the worker's handler passes it on as ckptd's kill() did. Anything else
 * is dropped; the connection's end, or a frame out of bounds (one ckptd
 * had begun to read when it died), ends the watch.
 */
static void *watch_client(void *arg)
{
	struct pollfd p = { .fd = (int)(intptr_t)arg };
	struct ckptd_frame *fr;
	json_t *msg;
	int ret, sig;

	while ((ret = poll(&p, 1, -1)) < 0 && errno == EINTR)
		;
	if (ret < 0 || !(p.revents & (POLLHUP | POLLERR)))
		return NULL;
	fr = malloc(sizeof(*fr));
	if (!fr)
		return NULL;
	ckptd_frame_init(fr);
	p = (struct pollfd){ .fd = client_fd, .events = POLLIN };
	for (;;) {
		ret = ckptd_frame_read(client_fd, fr, NULL);
		if (ret < 0)
			break;
		if (!ret) {
			if (poll(&p, 1, -1) < 0 && errno != EINTR)
				break;
			continue;
		}
		if (!ckptd_msg_decode(fr->buf + 4, fr->have - 4, &msg, NULL)) {
			sig = strcmp(ckptd_msg_str(msg, "op") ?: "", "signal") ? 0 :
			      ckptd_signal_of(msg);
			if (sig)
				kill(getpid(), sig);
			json_decref(msg);
		}
		ckptd_frame_reset(fr);
	}
	ckptd_frame_reset(fr);
	free(fr);
	return NULL;
}

void ckptd_close_fds(int *fds, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		if (fds[i] >= 0)
			close(fds[i]);
		fds[i] = -1;
	}
}

bool ckptd_fds_same(int a, int b)
{
	struct stat sa, sb;

	return !fstat(a, &sa) && !fstat(b, &sb) && sa.st_ino == sb.st_ino &&
	       sa.st_dev == sb.st_dev;
}

bool ckptd_fd_is(int fd, const char *path)
{
	struct stat a, b;

	return !fstat(fd, &a) && !stat(path, &b) && a.st_ino == b.st_ino &&
	       a.st_dev == b.st_dev;
}

void worker_watch_client(struct ckptd *d, int out)
{
	int self, children, ret;
	sigset_t all, old;
	bool moved = false;
	pthread_t t;

	if (client_fd < 0)
		return;
	/*
	 * A worker whose children go to a pid namespace of the job's
	 * (unshare) can make no thread there (clone refuses a thread across
	 * pid namespaces): its own, for the moment of pthread_create().
	 */
	self = open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC);
	children = open("/proc/self/ns/pid_for_children", O_RDONLY | O_CLOEXEC);
	if (self >= 0 && children >= 0 && !ckptd_fds_same(self, children))
		moved = !setns(self, CLONE_NEWPID);
	/* The thread takes no signal: they are the worker's to pass on. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = pthread_create(&t, NULL, watch_client, (void *)(intptr_t)out);
	if (!ret)
		pthread_detach(t);
	else
		ckptd_log(d, 0, "worker %d: no thread to pass its client's signals on once ckptd is gone: %s",
			  (int)getpid(), strerror(ret));
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (moved && setns(children, CLONE_NEWPID))
		ckptd_log(d, 0, "worker %d: cannot return to the job's pid namespace: %s",
			  (int)getpid(), strerror(errno));
	if (self >= 0)
		close(self);
	if (children >= 0)
		close(children);
}

/* In a worker: one frame to its client only, if it has one. */
void worker_tell_client(json_t *msg)
{
	if (client_fd >= 0 && msg)
		ckptd_msg_send(client_fd, msg, NULL, 0, NULL);
	json_decref(msg);
}

void workers_catch_up(struct ckptd *d)
{
	struct worker *w;

	for (w = d->workers; w; w = w->next)
		if (w->ev)
			drain(w);
	workers_reap(d);
}

bool worker_pid_of_job(const struct ckptd *d, const struct job *j, pid_t pid)
{
	const struct worker *w;

	for (w = d->workers; w; w = w->next)
		if (w->job == j && w->pid == pid)
			return true;
	return false;
}

/*
 * Job @j's workers that have given their result (and end in moments),
 * waited for up to @ms, reaped: whether none is left. A restart of the
 * job's snapshot right after the last restart's result must find the id
 * free (restart_job()), not get a new one its other nodes refuse.
 */
bool workers_await_replied(struct ckptd *d, const struct job *j, int ms)
{
	const struct worker *w;
	bool left;

	for (;;) {
		workers_catch_up(d);
		for (w = d->workers, left = false; w && !left; w = w->next)
			left = w->job == j && w->replied;
		if (!left || ms <= 0)
			return !left;
		usleep(10000);
		ms -= 10;
	}
}

/*
 * In a worker: one frame to ckptd and to its client; either may be gone.
 * ckptd's first: by the time the client acts on it, ckptd has it queued,
 * and takes it before the client's next request (workers_catch_up()).
 */
void worker_send(int out, json_t *msg)
{
	ckptd_msg_send(out, msg, NULL, 0, NULL);
	if (client_fd >= 0)
		ckptd_msg_send(client_fd, msg, NULL, 0, NULL);
	json_decref(msg);
}
