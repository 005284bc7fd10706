// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Checkpoints a process asks for itself.
 *
 * A thread cannot freeze its own process, so a helper does it: a child made
 * with a raw clone (no fork handlers run; exit signal 0, so the program's
 * own wait() and SIGCHLD never see it) that asks the engine, writes the
 * image to a temporary name, renames it into place and leaves its result in
 * a page shared with the parent. The process's callbacks run as for any
 * other checkpoint. When the process runs again from the image there is no
 * helper: the callback thread marks every outstanding request restarted.
 *
 * Under Yama's ptrace_scope 1 a child may not attach to its parent, and the
 * engine applies the same rule: the process names its helper as its ptracer
 * (PR_SET_PTRACER) before letting it start, and Yama forgets the exception
 * when the helper exits. This replaces a ptracer the program had named
 * itself (Yama keeps one per process); libckpt(7) says so.
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include <linux/ckpt.h>

#include "engine.h"
#include "internal.h"

enum { RUNNING, DONE, RESTARTED };

struct shared {
	_Atomic int go;		/* the parent has named the helper its ptracer */
	_Atomic int state;
	int err;
	char msg[MSG_LEN];
};

struct ckpt_request {
	pid_t helper;
	char tmp[4096 + 32];	/* the image's name until it is complete */
	struct shared *sh;
	struct ckpt_request *next;
};

static pthread_mutex_t list_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ckpt_request *outstanding;

static void helper_done(struct shared *sh, int err, const char *msg)
{
	size_t n = msg ? strnlen(msg, sizeof(sh->msg) - 1) : 0;

	sh->err = err;
	memcpy(sh->msg, msg ? msg : "", n);
	sh->msg[n] = '\0';
	atomic_store(&sh->state, DONE);
	futex((_Atomic int *)&sh->state, FUTEX_WAKE, INT_MAX, NULL);
}

/* The helper: only system calls from here on. */
static void __attribute__((noreturn))
helper(const char *path, char *tmp, const struct ckpt_request_args *a,
       pid_t target, struct shared *sh)
{
	struct ckpt_checkpoint c;
	enum ckpt_dev_step step;
	char msg[MSG_LEN] = "";
	struct timespec ts = { 1, 0 };
	int err, i;

	/* Bounded: a parent killed before it said go leaves nothing to do. */
	for (i = 0; i < 10 && !atomic_load(&sh->go); i++)
		futex(&sh->go, FUTEX_WAIT, 0, &ts);
	memset(&c, 0, sizeof(c));
	c.pid = target;
	/* Killed only once the image is in place: stopped until then. */
	c.flags = a->flags & CKPT_REQUEST_KILL ? CKPT_CHECKPOINT_STOP : a->flags;
	c.timeout_ms = a->timeout_ms;
	c.errmsg = (uintptr_t)msg;
	c.errmsg_len = sizeof(msg);
	err = -ckpt_dev_checkpoint_to(ckpt_lib.devfd, &c, path, tmp, &step);
	if (err && step == CKPT_DEV_CREATE) {
		helper_done(sh, err, "cannot create the image file");
		syscall(SYS_exit_group, 0);
	}
	/* Stopped only if captured (the engine fills nr_threads then). */
	if (a->flags & CKPT_REQUEST_KILL && c.nr_threads)
		kill(target, err ? SIGCONT : SIGKILL);
	helper_done(sh, err, err && !msg[0] ? "cannot write the image" : msg);
	syscall(SYS_exit_group, 0);
	__builtin_unreachable();
}

static bool request_running(void)
{
	struct ckpt_request *req;
	bool running = false;

	pthread_mutex_lock(&list_lock);
	for (req = outstanding; req && !running; req = req->next)
		running = atomic_load(&req->sh->state) == RUNNING;
	pthread_mutex_unlock(&list_lock);
	return running;
}

/* Yama's ptrace_scope, or -1 without Yama. */
static int yama_scope(void)
{
	char c = 0;
	int fd;

	fd = open("/proc/sys/kernel/yama/ptrace_scope", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (read(fd, &c, 1) != 1)
		c = 0;
	close(fd);
	return c >= '0' && c <= '9' ? c - '0' : -1;
}

static void release(struct ckpt_request *req)
{
	struct ckpt_request **p;

	pthread_mutex_lock(&list_lock);
	for (p = &outstanding; *p; p = &(*p)->next) {
		if (*p == req) {
			*p = req->next;
			break;
		}
	}
	pthread_mutex_unlock(&list_lock);
	munmap(req->sh, sizeof(*req->sh));
	free(req);
}

CKPT_EXPORT int ckpt_request_checkpoint(const struct ckpt_request_args *args,
					struct ckpt_request **out)
{
	static const struct ckpt_request_args none;
	const struct ckpt_request_args *a = args ? args : &none;
	char path[4096];
	struct ckpt_request *req;
	unsigned int i;
	pid_t pid;
	int ret;

	for (i = 0; i < sizeof(a->reserved) / sizeof(a->reserved[0]); i++)
		if (a->reserved[i])
			return ckpt_fail(EINVAL, "reserved fields must be 0");
	if (a->flags & ~(CKPT_REQUEST_STOP | CKPT_REQUEST_KILL) ||
	    a->flags == (CKPT_REQUEST_STOP | CKPT_REQUEST_KILL))
		return ckpt_fail(EINVAL, "unknown or conflicting flags");
	if (ckpt_in_callback)
		return ckpt_fail(EDEADLK, "a checkpoint cannot be requested from inside a callback");
	if (!out && ckpt_cs_depth && !ckpt_cs_uncounted)
		return ckpt_fail(EDEADLK,
				 "a synchronous request inside a critical section would wait for itself");
	ret = ckpt_init();
	if (ret)
		return ret;
	/* The engine takes one checkpoint of a process at a time, and Yama
	 * one ptracer exception: a second helper would undo the first's. */
	if (request_running())
		return ckpt_fail(EBUSY, "a checkpoint this process asked for is still in progress");

	if (a->path)
		ret = snprintf(path, sizeof(path), "%s", a->path);
	else
		ret = snprintf(path, sizeof(path), "context.%d", (int)getpid());
	if (ret <= 0 || ret >= (int)sizeof(path))
		return ckpt_fail(ENAMETOOLONG, "image path too long");
	req = calloc(1, sizeof(*req));
	if (!req)
		return ckpt_fail(ENOMEM, "out of memory");
	snprintf(req->tmp, sizeof(req->tmp), "%s.part", path);
	req->sh = mmap(NULL, sizeof(*req->sh), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (req->sh == MAP_FAILED) {
		free(req);
		return ckpt_fail(ENOMEM, "out of memory");
	}
	pthread_mutex_lock(&list_lock);
	req->next = outstanding;
	outstanding = req;
	pthread_mutex_unlock(&list_lock);

	pid = getpid();
	req->helper = syscall(SYS_clone, 0, NULL, NULL, NULL, NULL);
	if (req->helper < 0) {
		ret = errno;
		release(req);
		return ckpt_fail(ret, "cannot start the checkpoint helper: %s",
				 strerror(ret));
	}
	if (!req->helper)
		helper(path, req->tmp, a, pid, req->sh);
	if (yama_scope() == 1)
		prctl(PR_SET_PTRACER, req->helper, 0, 0, 0);
	atomic_store(&req->sh->go, 1);
	futex(&req->sh->go, FUTEX_WAKE, 1, NULL);
	if (out) {
		*out = req;
		return 0;
	}
	return ckpt_wait_checkpoint(req);
}

/*
 * A helper that died without saying DONE (SIGKILL, the OOM killer) is an
 * exited child still unreaped (WNOWAIT). Not our child at all means the
 * process runs again from its image, where the callback thread is about to
 * say RESTARTED: not a death.
 */
static bool helper_died(struct ckpt_request *req)
{
	siginfo_t si = { 0 };

	if (waitid(P_PID, req->helper, &si, WEXITED | WNOHANG | WNOWAIT | __WALL))
		return false;
	if (si.si_pid != req->helper || atomic_load(&req->sh->state) != RUNNING)
		return false;
	/* Its temporary file would make every later request fail (EEXIST). */
	unlink(req->tmp);
	req->sh->err = ECHILD;
	snprintf(req->sh->msg, sizeof(req->sh->msg),
		 "the checkpoint helper (pid %d) died before it finished",
		 (int)req->helper);
	return true;
}

/* Returns 1 with *@ret set once the request is over (and freed), else 0. */
static int finish(struct ckpt_request *req, const struct timespec *ts, int *ret)
{
	static const struct timespec slice = { 1, 0 };
	int state = atomic_load(&req->sh->state);

	/*
	 * EINTR and timeouts alike end a wait; a restart ends it with EINTR.
	 * An unbounded wait looks in on the helper every second.
	 */
	if (state == RUNNING) {
		futex((_Atomic int *)&req->sh->state, FUTEX_WAIT, RUNNING,
		      ts ? ts : &slice);
		state = atomic_load(&req->sh->state);
	}
	if (state == RUNNING && helper_died(req))
		state = DONE;
	if (state == RUNNING)
		return 0;
	if (state == RESTARTED) {
		*ret = 1;
	} else {
		while (waitpid(req->helper, NULL, __WALL) < 0 && errno == EINTR)
			;
		*ret = -req->sh->err;
		if (*ret)
			ckpt_fail(req->sh->err, "%s", req->sh->msg);
	}
	release(req);
	return 1;
}

CKPT_EXPORT int ckpt_poll_checkpoint(struct ckpt_request *req, int timeout_ms)
{
	struct timespec ts = { 0, 0 };
	int ret;

	if (!req)
		return ckpt_fail(EINVAL, "no request");
	if (timeout_ms < 0)
		return ckpt_wait_checkpoint(req);
	ts.tv_sec = timeout_ms / 1000;
	ts.tv_nsec = (timeout_ms % 1000) * 1000000L;
	if (finish(req, &ts, &ret))
		return ret;
	return ckpt_fail(EAGAIN, "the checkpoint is still in progress");
}

CKPT_EXPORT int ckpt_wait_checkpoint(struct ckpt_request *req)
{
	int ret;

	if (!req)
		return ckpt_fail(EINVAL, "no request");
	while (!finish(req, NULL, &ret))
		;
	return ret;
}

/* Called by the callback thread in a process that runs again from its image. */
void ckpt_requests_restarted(void)
{
	struct ckpt_request *req;

	pthread_mutex_lock(&list_lock);
	for (req = outstanding; req; req = req->next) {
		if (atomic_load(&req->sh->state) != RUNNING)
			continue;
		atomic_store(&req->sh->state, RESTARTED);
		futex((_Atomic int *)&req->sh->state, FUTEX_WAKE, INT_MAX, NULL);
	}
	pthread_mutex_unlock(&list_lock);
}

/* The parent's requests are not the child's to wait for. */
void ckpt_requests_after_fork(void)
{
	outstanding = NULL;
	pthread_mutex_init(&list_lock, NULL);
}
