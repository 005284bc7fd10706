// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Registration with the engine, the callback thread, fork and status.
 *
 * The callback thread blocks every signal and sleeps in CKPT_IOC_CB_WAIT.
 * A request runs one round of callbacks (callbacks.c), whose innermost step
 * tells the engine to go ahead and sleeps in CKPT_IOC_CB_READY while the
 * process is captured; that call returns 0 when the process continues and
 * 1 when it runs again from the image.
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include <linux/ckpt.h>

#include "engine.h"
#include "internal.h"

struct lib ckpt_lib = { .devfd = -1 };

static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static CKPT_TLS char last_error[MSG_LEN];
static CKPT_TLS pid_t fork_tid;		/* the forking thread, before fork */

int ckpt_fail(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	errno = err;
	return -err;
}

/* The same for a constant message: async-signal-safe. */
int ckpt_fail_str(int err, const char *msg)
{
	size_t n = strlen(msg);

	if (n >= sizeof(last_error))
		n = sizeof(last_error) - 1;
	memcpy(last_error, msg, n);
	last_error[n] = '\0';
	errno = err;
	return -err;
}

CKPT_EXPORT const char *ckpt_last_error(void)
{
	return last_error;
}

static void *callback_thread(void *unused)
{
	(void)unused;
	prctl(PR_SET_NAME, "ckpt-callbacks");
	for (;;) {
		struct ckpt_cb_request rq;

		memset(&rq, 0, sizeof(rq));
		if (ckpt_dev_cb_wait(ckpt_lib.devfd, &rq)) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			/* Unregistered (the descriptor was closed): done. */
			return NULL;
		}
		ckpt_run_round(rq.flags, rq.timeout_ms, rq.id);
	}
}

int ckpt_start_callback_thread(void)
{
	sigset_t all, old;
	pthread_attr_t attr;
	pthread_t thread;
	int ret;

	sigfillset(&all);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	/* It inherits a mask that blocks everything. */
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = pthread_create(&thread, &attr, callback_thread, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (ret)
		return ckpt_fail(ret, "cannot start the callback thread: %s",
				 strerror(ret));
	return 0;
}

static int choose_signal(void)
{
	const char *s = getenv("CKPT_SIGNAL");
	char *end;
	long n;

	if (!s || !*s)
		return SIGRTMAX - 2;
	n = strtol(s, &end, 10);
	if (*end || n < SIGRTMIN || n > SIGRTMAX)
		return -1;
	return n;
}

static int do_register(void)
{
	struct ckpt_register reg = { 0 };
	int fd, ret;

	fd = ckpt_dev_open(O_RDWR);
	if (fd < 0)
		return ckpt_fail(-fd, "cannot open %s (is the ckpt module loaded?): %s",
				 ckpt_dev_path(), strerror(-fd));
	ret = ckpt_dev_register(fd, &reg);
	if (ret) {
		close(fd);
		return ckpt_fail(-ret, "the engine refused the registration: %s",
				 strerror(-ret));
	}
	ckpt_lib.devfd = fd;
	ckpt_lib.pid = getpid();
	return 0;
}

static void unregister(void)
{
	close(ckpt_lib.devfd);
	ckpt_lib.devfd = -1;
}

/*
 * In the child of a fork: the parent's registration (shared open file) and
 * callback thread stay the parent's. A child forked outside a callback
 * registers anew and keeps the thread callbacks and the signal callbacks of
 * the thread that forked; one forked from inside a callback does not.
 */
/* No lock of the library is held across fork (the child inherits it held). */
static void atfork_prepare(void)
{
	pthread_mutex_lock(&init_lock);
	ckpt_callbacks_lock();
	fork_tid = ckpt_gettid();
}

static void atfork_parent(void)
{
	ckpt_callbacks_unlock();
	pthread_mutex_unlock(&init_lock);
}

static void atfork_child(void)
{
	int inside = ckpt_in_callback;

	ckpt_callbacks_unlock();
	pthread_mutex_unlock(&init_lock);
	ckpt_mpi_after_fork();
	if (ckpt_lib.devfd < 0)
		return;
	close(ckpt_lib.devfd);
	ckpt_lib.devfd = -1;
	ckpt_in_callback = 0;
	ckpt_frame = NULL;
	ckpt_cs_after_fork();
	ckpt_requests_after_fork();
	ckpt_callbacks_after_fork(fork_tid, ckpt_gettid());
	ckpt_lib.checkpoints = 0;
	if (inside)
		return;
	if (!do_register() && ckpt_start_callback_thread())
		unregister();
}

CKPT_EXPORT int ckpt_init(void)
{
	static int atfork_done;
	struct sigaction sa;
	int ret = 0, signo;

	pthread_mutex_lock(&init_lock);
	if (ckpt_lib.devfd >= 0)
		goto out;
	signo = choose_signal();
	if (signo < 0) {
		ret = ckpt_fail(EINVAL, "CKPT_SIGNAL must be a real-time signal number (%d-%d)",
				SIGRTMIN, SIGRTMAX);
		goto out;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = ckpt_signal_handler;
	sa.sa_flags = SA_RESTART | SA_SIGINFO;
	sigfillset(&sa.sa_mask);
	if (sigaction(signo, &sa, NULL)) {
		ret = ckpt_fail(errno, "cannot handle signal %d: %s", signo,
				strerror(errno));
		goto out;
	}
	ckpt_lib.signo = signo;
	ret = do_register();
	if (ret)
		goto out;
	ret = ckpt_start_callback_thread();
	if (ret) {
		unregister();
		goto out;
	}
	if (!atfork_done) {
		pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
		atfork_done = 1;
	}
out:
	pthread_mutex_unlock(&init_lock);
	return ret;
}

CKPT_EXPORT int ckpt_status(struct ckpt_status *st)
{
	if (!st)
		return ckpt_fail_str(EINVAL, "no status buffer");
	memset(st, 0, sizeof(*st));
	st->registered = ckpt_lib.devfd >= 0;
	st->in_progress = atomic_load(&ckpt_lib.pending);
	if (st->in_progress)
		st->request_flags = ckpt_lib.round.flags;
	st->checkpoints = ckpt_lib.checkpoints;
	st->restarts = ckpt_lib.restarts;
	st->last_result = ckpt_lib.last_result;
	memcpy(st->restarted_from, ckpt_lib.restarted_from,
	       sizeof(st->restarted_from));
	return 0;
}

/* Under ckpt-run (CKPT_PRELOAD=1), programs register without a code change. */
__attribute__((constructor)) static void preload_init(void)
{
	const char *s = getenv("CKPT_PRELOAD");

	if (s && !strcmp(s, "1") && ckpt_init() && getenv("CKPT_DEBUG"))
		fprintf(stderr, "libckpt: %s\n", last_error);
}
