// SPDX-License-Identifier: GPL-2.0
/*
 * libckpt with the engine: callbacks, critical sections, self-requested
 * checkpoints, fork and exec, the way a program uses them.
 *
 * Each target links libckpt, registers, and reports what its callbacks saw
 * on request; the test drives checkpoints from outside (the engine's ioctl,
 * as ckpt checkpoint does) or asks the target to request its own.
 */
#define _GNU_SOURCE

#include <dirent.h>
#include <grp.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>

#include "kselftest_harness.h"
#include "ckpt_test.h"
#include "libckpt.h"

static char image2[64];


static void nap_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static pid_t tid(void)
{
	return syscall(SYS_gettid);
}

static void must_init(void)
{
	if (ckpt_init())
		_exit(20);
}

/* ---------------------------------------------------------------- events */

struct ev {
	char kind;		/* 'T' thread context, 'S' signal context */
	char post;		/* after ckpt_checkpoint() */
	int id;
	pid_t tid;
	int ret;
};

static struct ev evs[256];
static _Atomic int nev;

static void log_ev(char kind, int id, int post, int ret)
{
	int i = atomic_fetch_add(&nev, 1);

	if (i < (int)(sizeof(evs) / sizeof(evs[0])))
		evs[i] = (struct ev){ kind, post, id, tid(), ret };
}

static int thread_cb(void *arg)
{
	int id = (int)(long)arg, ret;

	log_ev('T', id, 0, 0);
	ret = ckpt_checkpoint(0);
	log_ev('T', id, 1, ret);
	return 0;
}

/* Runs in a signal handler: only async-signal-safe calls. */
static int signal_cb(void *arg)
{
	int id = (int)(long)arg, ret;

	log_ev('S', id, 0, 0);
	ret = ckpt_checkpoint(0);
	log_ev('S', id, 1, ret);
	return 0;
}

/* Waits up to 10 s for @n events. */
static int wait_events(int n)
{
	int i;

	for (i = 0; i < 1000 && atomic_load(&nev) < n; i++)
		nap_ms(10);
	return atomic_load(&nev) == n;
}

static int find(char kind, int id, int post)
{
	int i;

	for (i = 0; i < atomic_load(&nev); i++)
		if (evs[i].kind == kind && evs[i].id == id && evs[i].post == post)
			return i;
	return -1;
}

/* ---------------------------------------------------------------- ordering */

#define WORKERS 3
static pid_t worker_tid[WORKERS + 1];
static _Atomic int workers_ready;

static void *order_worker(void *arg)
{
	int w = (int)(long)arg;

	worker_tid[w] = tid();
	if (ckpt_register_callback(signal_cb, (void *)(long)(10 * w), CKPT_CB_SIGNAL) < 0 ||
	    ckpt_register_callback(signal_cb, (void *)(long)(10 * w + 1), CKPT_CB_SIGNAL) < 0)
		_exit(21);
	atomic_fetch_add(&workers_ready, 1);
	for (;;)
		pause();
	return NULL;
}

/*
 * Checks one round: thread callbacks newest first, all of them before any
 * signal callback; each worker's signal callbacks in its own thread, newest
 * first; every "before" before every "after"; unwinding oldest first; one
 * return value for all.
 */
static const char *check_order(int *ret)
{
	int n = 2 * (2 + 2 * WORKERS), i, w, last_pre = -1, first_post = n;

	if (!wait_events(n)) {
		static char why[256];
		int k, m;

		m = snprintf(why, sizeof(why), "%d callback events, not %d:",
			     atomic_load(&nev), n);
		for (k = 0; k < atomic_load(&nev) && m < 240; k++)
			m += snprintf(why + m, sizeof(why) - m, " %c%d%c",
				      evs[k].kind, evs[k].id, evs[k].post ? '+' : '-');
		return why;
	}
	*ret = evs[n - 1].ret;
	for (i = 0; i < n; i++) {
		if (evs[i].post && evs[i].ret != *ret)
			return "callbacks got different return values";
		if (evs[i].post && i < first_post)
			first_post = i;
		if (!evs[i].post)
			last_pre = i;
	}
	if (last_pre > first_post)
		return "a callback resumed before all had reached ckpt_checkpoint()";
	if (find('T', 1, 0) != 0 || find('T', 0, 0) != 1)
		return "thread callbacks did not start newest first, before signal ones";
	if (find('T', 0, 1) > find('T', 1, 1))
		return "thread callbacks did not unwind oldest first";
	if (evs[0].tid != evs[1].tid || evs[0].tid == getpid())
		return "thread callbacks did not run in the callback thread";
	for (w = 1; w <= WORKERS; w++) {
		int a0 = find('S', 10 * w, 0), a1 = find('S', 10 * w + 1, 0);
		int b0 = find('S', 10 * w, 1), b1 = find('S', 10 * w + 1, 1);

		if (a0 < 0 || a1 < 0 || b0 < 0 || b1 < 0)
			return "a signal callback is missing";
		if (a1 > a0 || b0 > b1)
			return "signal callbacks of a thread were not nested newest first";
		if (evs[a0].tid != worker_tid[w] || evs[a1].tid != worker_tid[w])
			return "a signal callback ran in another thread";
	}
	return NULL;
}

static void order_target(void)
{
	pthread_t th;
	const char *why;
	char c;
	long w;
	int ret;

	must_init();
	if (ckpt_register_callback(thread_cb, (void *)0, CKPT_CB_THREAD) < 0 ||
	    ckpt_register_callback(thread_cb, (void *)1, CKPT_CB_THREAD) < 0)
		_exit(21);
	for (w = 1; w <= WORKERS; w++)
		pthread_create(&th, NULL, order_worker, (void *)w);
	while (atomic_load(&workers_ready) < WORKERS)
		nap_ms(1);
	target_say("started");
	while (read(0, &c, 1) == 1) {
		if (c != 'r')
			continue;
		why = check_order(&ret);
		/* Before answering: the next round may start at once. */
		atomic_store(&nev, 0);
		if (why)
			target_say("bad: %s", why);
		else
			target_say("ok %d", ret);
	}
	_exit(0);
}

/* ---------------------------------------------------------------- aborts */

static _Atomic int abort_mode, thread_ret = 99, sig_ret = 99, rounds, silent;
static _Atomic int slow_in, slow_go;	/* mode 4's callbacks begun, let go */

/* The oldest callback: returns without ckpt_checkpoint(), which is made for it. */
static int silent_cb(void *arg)
{
	(void)arg;
	atomic_fetch_add(&silent, 1);
	return 0;
}

static int abort_thread_cb(void *arg)
{
	int ret;

	(void)arg;
	switch (atomic_load(&abort_mode)) {
	case 1:
		ret = ckpt_abort(CKPT_ABORT_TEMP, "busy: try later");
		break;
	case 2:
		ret = ckpt_abort(CKPT_ABORT_PERM, "never while the tape is mounted");
		break;
	case 4:		/* held until 'g' (10 s at most): its requester gives up meanwhile */
		atomic_fetch_add(&slow_in, 1);
		for (ret = 0; ret < 1000 && !atomic_load(&slow_go); ret++)
			nap_ms(10);
		ret = ckpt_checkpoint(0);
		break;
	default:
		ret = ckpt_checkpoint(0);
	}
	atomic_store(&thread_ret, ret);
	atomic_fetch_add(&rounds, 1);
	return 0;
}

static int abort_signal_cb(void *arg)
{
	int ret;

	(void)arg;
	if (atomic_load(&abort_mode) == 3)
		ret = ckpt_abort(CKPT_ABORT_TEMP, "signal side busy");
	else
		ret = ckpt_checkpoint(0);
	atomic_store(&sig_ret, ret);
	return 0;
}

static void *abort_worker(void *arg)
{
	(void)arg;
	if (ckpt_register_callback(abort_signal_cb, NULL, CKPT_CB_SIGNAL) < 0)
		_exit(21);
	atomic_fetch_add(&workers_ready, 1);
	for (;;)
		pause();
	return NULL;
}

static void abort_target(void)
{
	int seen = 0, pipefd[2] = { -1, -1 };
	pthread_t th;
	char c;

	must_init();
	if (ckpt_register_callback(silent_cb, NULL, CKPT_CB_THREAD) < 0 ||
	    ckpt_register_callback(abort_thread_cb, NULL, CKPT_CB_THREAD) < 0)
		_exit(21);
	pthread_create(&th, NULL, abort_worker, NULL);
	while (!atomic_load(&workers_ready))
		nap_ms(1);
	target_say("started");
	while (read(0, &c, 1) == 1) {
		if (c >= '0' && c <= '4') {
			atomic_store(&abort_mode, c - '0');
			target_say("mode %c", c);
		} else if (c == 'p') {	/* something the engine refuses */
			pipefd[0] = socket(AF_INET, SOCK_DGRAM, 0);
			pipefd[1] = -1;
			if (pipefd[0] < 0)
				_exit(24);
			target_say("udp %d", pipefd[0]);
		} else if (c == 'c') {
			close(pipefd[0]);
			close(pipefd[1]);
			target_say("closed");
		} else if (c == 'h') {
			target_say("enter %d", ckpt_enter_cs());
		} else if (c == 'u') {
			target_say("leave %d", ckpt_leave_cs());
		} else if (c == 'x') {	/* a daemon closing all it has */
			target_say("close_range %d",
			    (int)syscall(SYS_close_range, 3, ~0U, 0));
		} else if (c == 'n') {
			target_say("rounds %d", atomic_load(&rounds));
		} else if (c == 'z') {
			target_say("silent %d", atomic_load(&silent));
		} else if (c == 'e') {
			target_say("slow %d", atomic_load(&slow_in));
		} else if (c == 'g') {
			atomic_store(&slow_go, 1);
			target_say("go");
		} else if (c == 'r') {
			int i;

			for (i = 0; i < 1000 && atomic_load(&rounds) == seen; i++)
				nap_ms(10);
			seen = atomic_load(&rounds);
			target_say("thread %d signal %d", atomic_load(&thread_ret),
			    atomic_load(&sig_ret));
			atomic_store(&sig_ret, 99);
		}
	}
	_exit(0);
}

/* ---------------------------------------------------------------- sections */

static _Atomic int inside, violations, iterations, want_try, try_result;

/* Asked from a callback: a checkpoint is pending, a try fails at once. */
static void *try_thread(void *arg)
{
	(void)arg;
	for (;;) {
		if (atomic_load(&want_try) == 1) {
			int ret = ckpt_tryenter_cs();

			if (!ret)
				ckpt_leave_cs();
			atomic_store(&try_result, ret);
			atomic_store(&want_try, 2);
		}
		nap_ms(1);
	}
	return NULL;
}

static void *cs_worker(void *arg)
{
	volatile int spin;

	(void)arg;
	for (;;) {
		if (ckpt_enter_cs() || ckpt_enter_cs())
			_exit(22);
		atomic_fetch_add(&inside, 1);
		for (spin = 0; spin < 2000; spin++)
			;
		atomic_fetch_sub(&inside, 1);
		if (ckpt_leave_cs() || ckpt_leave_cs())
			_exit(22);
		atomic_fetch_add(&iterations, 1);
	}
	return NULL;
}

static int cs_thread_cb(void *arg)
{
	int i;

	(void)arg;
	if (atomic_load(&inside))
		atomic_fetch_add(&violations, 1);
	/* Entering from inside a callback returns at once. */
	if (ckpt_enter_cs() || ckpt_enter_cs() || ckpt_leave_cs() || ckpt_leave_cs())
		atomic_fetch_add(&violations, 100);
	if (atomic_load(&want_try) == 0) {
		atomic_store(&want_try, 1);
		for (i = 0; i < 500 && atomic_load(&want_try) == 1; i++)
			nap_ms(10);
	}
	ckpt_checkpoint(0);
	atomic_fetch_add(&rounds, 1);
	return 0;
}

static int cs_signal_cb(void *arg)
{
	(void)arg;
	if (atomic_load(&inside))
		atomic_fetch_add(&violations, 1);
	ckpt_checkpoint(0);
	return 0;
}

static void *cs_signal_thread(void *arg)
{
	(void)arg;
	if (ckpt_register_callback(cs_signal_cb, NULL, CKPT_CB_SIGNAL) < 0)
		_exit(21);
	cs_worker(NULL);
	return NULL;
}

static void cs_target(void)
{
	pthread_t th;
	char c;
	int i;

	must_init();
	if (ckpt_register_callback(cs_thread_cb, NULL, CKPT_CB_THREAD) < 0)
		_exit(21);
	for (i = 0; i < 2; i++)
		pthread_create(&th, NULL, cs_worker, NULL);
	pthread_create(&th, NULL, cs_signal_thread, NULL);
	pthread_create(&th, NULL, try_thread, NULL);
	target_say("started");
	while (read(0, &c, 1) == 1) {
		int before = atomic_load(&iterations);

		if (c != 'r')
			continue;
		/* Still running: the sections keep being entered. */
		for (i = 0; i < 500 && atomic_load(&iterations) == before; i++)
			nap_ms(10);
		target_say("rounds %d violations %d try %d moving %d",
		    atomic_load(&rounds), atomic_load(&violations),
		    atomic_load(&try_result), atomic_load(&iterations) != before);
	}
	_exit(0);
}

/* ---------------------------------------------------------------- requests */

static _Atomic int left_section, saw_left = -1;

static int request_cb(void *arg)
{
	(void)arg;
	atomic_store(&saw_left, atomic_load(&left_section));
	ckpt_checkpoint(0);
	return 0;
}

static void request_target(void)
{
	struct ckpt_request_args args = { .path = image2 };
	struct ckpt_request *req;
	struct ckpt_status st;
	int ret, poll, before;
	char c;

	must_init();
	if (ckpt_register_callback(request_cb, NULL, CKPT_CB_THREAD) < 0)
		_exit(21);
	target_say("started");
	while (read(0, &c, 1) == 1) {
		switch (c) {
		case 'a':	/* asynchronous, from inside a critical section */
			atomic_store(&left_section, 0);
			ckpt_enter_cs();
			ret = ckpt_request_checkpoint(&args, &req);
			if (ret) {
				target_say("request failed: %s", ckpt_last_error());
				break;
			}
			poll = ckpt_poll_checkpoint(req, 300);
			ckpt_status(&st);
			before = !access(image2, F_OK);
			atomic_store(&left_section, 1);
			ckpt_leave_cs();
			ret = ckpt_wait_checkpoint(req);
			target_say("poll %d pending %d image %d ret %d image %d saw_left %d",
			    poll, st.in_progress, before, ret,
			    !access(image2, F_OK), atomic_load(&saw_left));
			break;
		case 'x':	/* asynchronous, held up by a section */
			ckpt_enter_cs();
			ret = ckpt_request_checkpoint(&args, &req);
			if (ret)
				ckpt_leave_cs();
			target_say("requested %d", ret);
			break;
		case 'w':	/* wait for it, whatever happened to the helper */
			ret = ckpt_wait_checkpoint(req);
			ckpt_leave_cs();
			target_say("wait %d %s", ret, ret < 0 ? ckpt_last_error() : "-");
			break;
		case 'd':	/* synchronous, inside a section: refused */
			ckpt_enter_cs();
			ret = ckpt_request_checkpoint(&args, NULL);
			ckpt_leave_cs();
			target_say("deadlock %d", ret);
			break;
		case 's':	/* synchronous: continue */
		case 'k':	/* synchronous: and end the process */
			args.flags = c == 'k' ? CKPT_REQUEST_KILL : 0;
			ret = ckpt_request_checkpoint(&args, NULL);
			ckpt_status(&st);
			target_say("sync %d restarts %u from %s", ret, st.restarts,
			    st.restarted_from[0] ? st.restarted_from : "-");
			break;
		}
	}
	_exit(0);
}

/*
 * nobody's process asking for its own checkpoint: its helper is its child,
 * and Yama's ptrace_scope 1 lets a child attach to its parent only when the
 * parent named it (request.c does).
 */
static void nobody_request_target(void)
{
	struct ckpt_request_args args = { .path = image2 };
	int ret;

	if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
	    setresuid(65534, 65534, 65534) ||
	    prctl(PR_SET_DUMPABLE, 1, 0, 0, 0))
		_exit(20);
	must_init();
	ret = ckpt_request_checkpoint(&args, NULL);
	target_say("sync %d %s", ret, ret ? ckpt_last_error() : "-");
	_exit(0);
}

/* ---------------------------------------------------------------- fork */

static _Atomic int fork_thread_calls, fork_signal_calls;
static _Atomic pid_t fork_cb_pid;

static int fork_thread_cb(void *arg)
{
	(void)arg;
	atomic_store(&fork_cb_pid, getpid());
	atomic_fetch_add(&fork_thread_calls, 1);
	return ckpt_checkpoint(0) < 0;
}

static int fork_signal_cb(void *arg)
{
	(void)arg;
	atomic_fetch_add(&fork_signal_calls, 1);
	return ckpt_checkpoint(0) < 0;
}

static void fork_child(int ready)
{
	int seen = 0;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	close(0);
	/* fork() returned here, so the child is registered: tell the parent. */
	if (write(ready, "r", 1) != 1)
		_exit(24);
	close(ready);
	for (;;) {
		int now = atomic_load(&fork_thread_calls);

		if (now != seen) {
			seen = now;
			nap_ms(100);	/* let the signal side finish */
			target_say("child %d thread %d signal %d", atomic_load(&fork_cb_pid),
			    now, atomic_load(&fork_signal_calls));
		}
		nap_ms(10);
	}
}

static void fork_target(void)
{
	int ready[2];
	pid_t child;
	char c;

	must_init();
	if (ckpt_register_callback(fork_thread_cb, NULL, CKPT_CB_THREAD) < 0 ||
	    ckpt_register_callback(fork_signal_cb, NULL, CKPT_CB_SIGNAL) < 0)
		_exit(21);
	if (pipe2(ready, O_CLOEXEC))
		_exit(22);
	child = fork();
	if (child < 0)
		_exit(23);
	if (!child) {
		close(ready[0]);
		fork_child(ready[1]);
	}
	/*
	 * The test checkpoints the child as soon as it reads its pid: wait
	 * until the child has registered, or that checkpoint runs no callback.
	 */
	close(ready[1]);
	if (read(ready[0], &c, 1) != 1)
		_exit(25);
	close(ready[0]);
	target_say("child %d", child);
	while (read(0, &c, 1) == 1) {
		if (c == 'k') {		/* a process with a child is refused */
			kill(child, SIGKILL);
			waitpid(child, NULL, 0);
			child = 0;
			target_say("alone");
			continue;
		}
		if (c != 'p')
			continue;
		nap_ms(100);
		target_say("parent %d thread %d signal %d", atomic_load(&fork_cb_pid),
		    atomic_load(&fork_thread_calls), atomic_load(&fork_signal_calls));
	}
	if (child)
		kill(child, SIGKILL);
	_exit(0);
}

/* ---------------------------------------------------------------- resources */

/*
 * A socket pair the program would rather make anew (as one to another
 * node would have to be): the callback closes it before the checkpoint
 * and opens a new one after, in both outcomes.
 */
static int sock[2] = { -1, -1 };
static _Atomic int reopen_ret = 99, reopen_ok;

static int reopen_cb(void *arg)
{
	int ret;

	(void)arg;
	close(sock[0]);
	close(sock[1]);
	ret = ckpt_checkpoint(0);
	atomic_store(&reopen_ok, !socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sock));
	atomic_store(&reopen_ret, ret);
	atomic_fetch_add(&rounds, 1);
	return 0;
}

static void reopen_target(void)
{
	int seen = 0, i;
	char c, b;

	must_init();
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sock) ||
	    ckpt_register_callback(reopen_cb, NULL, CKPT_CB_THREAD) < 0)
		_exit(21);
	target_say("started");
	while (read(0, &c, 1) == 1) {
		if (c != 'r')
			continue;
		for (i = 0; i < 1000 && atomic_load(&rounds) == seen; i++)
			nap_ms(10);
		seen = atomic_load(&rounds);
		b = 0;
		/* The socket works: a byte goes through it. */
		if (write(sock[0], "x", 1) != 1 || read(sock[1], &b, 1) != 1)
			b = '?';
		target_say("ret %d reopened %d byte %c", atomic_load(&reopen_ret),
		    atomic_load(&reopen_ok), b ? b : '-');
	}
	_exit(0);
}

/*
 * A copy of libckpt's /dev/ckpt descriptor (at fd 100): after a restart it
 * is one open file with the original again, which carries the registration
 * the restarter made once.
 */
static void dup_dev_target(void)
{
	static unsigned int last;	/* restarts seen, kept in the image */
	char path[64], link[64];
	struct ckpt_status st;
	int fd, dev = -1, i;
	ssize_t n;
	char c;

	must_init();
	if (ckpt_register_callback(thread_cb, (void *)0, CKPT_CB_THREAD) < 0)
		_exit(21);
	for (fd = 3; dev < 0 && fd < 64; fd++) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n = readlink(path, link, sizeof(link) - 1);
		if (n > 0) {
			link[n] = '\0';
			if (!strcmp(link, "/dev/ckpt"))
				dev = fd;
		}
	}
	if (dev < 0 || fcntl(dev, F_DUPFD_CLOEXEC, 100) != 100)
		_exit(22);
	target_say("started");
	while (read(0, &c, 1) == 1) {
		if (c != 's')
			continue;
		/*
		 * Asked after a restart: the callback thread counts it once it
		 * runs, which may be after this thread has read the question
		 * (10 s at most).
		 */
		for (i = 0; i < 1000; i++) {
			if (ckpt_status(&st))
				_exit(23);
			if (st.restarts != last)
				break;
			nap_ms(10);
		}
		last = st.restarts;
		/* kcmp(KCMP_FILE): 0 when both are one open file. */
		target_say("restarts %u kcmp %ld cloexec %d", st.restarts,
			   syscall(SYS_kcmp, getpid(), getpid(), 0, dev, 100),
			   fcntl(100, F_GETFD));
	}
	_exit(0);
}

/* ---------------------------------------------------------------- fixture */

FIXTURE(lib) {
	char image[64];
	char msg[256];
};

FIXTURE_SETUP(lib)
{
	const char *path = ckpt_module_path();

	if (!path)
		SKIP(return, "CKPT_MODULE does not name a readable ckpt.ko");
	if (!ckpt_module_loaded())
		ASSERT_EQ(0, ckpt_load_module(path));
	snprintf(self->image, sizeof(self->image), "/tmp/libckpt.%d.img", getpid());
	snprintf(image2, sizeof(image2), "/tmp/libckpt.%d.self", getpid());
	unlink(image2);
}

FIXTURE_TEARDOWN(lib)
{
	unlink(self->image);
	unlink(image2);
}

static int checkpoint(struct __test_metadata *_metadata, pid_t pid,
		      const char *image, unsigned int flags, char *msg)
{
	return ckpt_checkpoint_to(pid, image, flags, msg, 256, NULL);
}

TEST_F(lib, callbacks_run_in_order_and_see_continue_then_restart)
{
	struct target t = {};
	char buf[256];
	pid_t pid;

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, target_start(&t, order_target));
	pid = t.pid;
	ASSERT_EQ(0, target_line(&t, buf, sizeof(buf)));
	ASSERT_STREQ("started", buf);

	ASSERT_EQ(0, checkpoint(_metadata, t.pid, self->image, 0, self->msg))
		TH_LOG("%s", self->msg);
	ASSERT_EQ(0, target_ask(&t, "r", buf, sizeof(buf)));
	EXPECT_STREQ("ok 0", buf);

	/* Checkpoint-and-kill, then the process runs again from the image. */
	ASSERT_EQ(0, checkpoint(_metadata, t.pid, self->image,
				CKPT_CHECKPOINT_KILL, self->msg))
		TH_LOG("%s", self->msg);
	target_end(&t);
	ASSERT_EQ(0, target_restart(&t, self->image));
	ASSERT_EQ(0, target_ask(&t, "r", buf, sizeof(buf)));
	EXPECT_STREQ("ok 1", buf);

	/* The restarted process takes part in the next checkpoint too. */
	ASSERT_EQ(0, checkpoint(_metadata, pid, self->image, 0, self->msg))
		TH_LOG("%s", self->msg);
	ASSERT_EQ(0, target_ask(&t, "r", buf, sizeof(buf)));
	EXPECT_STREQ("ok 0", buf);
	target_end(&t);
}

TEST_F(lib, a_copy_of_the_registered_descriptor_stays_one_open_file)
{
	struct target t = {};
	char buf[256];
	pid_t pid;
	int cycle;

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, target_start(&t, dup_dev_target));
	pid = t.pid;
	ASSERT_EQ(0, target_line(&t, buf, sizeof(buf)));
	ASSERT_STREQ("started", buf);
	for (cycle = 1; cycle <= 2; cycle++) {
		char want[64];

		ASSERT_EQ(0, checkpoint(_metadata, pid, self->image,
					CKPT_CHECKPOINT_KILL, self->msg))
			TH_LOG("%s", self->msg);
		target_end(&t);
		ASSERT_EQ(0, target_restart(&t, self->image));
		snprintf(want, sizeof(want), "restarts %d kcmp 0 cloexec 1", cycle);
		ASSERT_EQ(0, target_ask(&t, "s", buf, sizeof(buf)));
		EXPECT_STREQ(want, buf);
	}
	target_end(&t);
}

TEST_F(lib, callbacks_abort_for_now_or_for_good)
{
	struct target t = {};
	char buf[256];

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, target_start(&t, abort_target));
	ASSERT_EQ(0, target_line(&t, buf, sizeof(buf)));

	ASSERT_EQ(0, target_ask(&t, "1", buf, sizeof(buf)));
	EXPECT_EQ(-EAGAIN, checkpoint(_metadata, t.pid, self->image, 0, self->msg));
	EXPECT_NE(NULL, strstr(self->msg, "busy: try later")) TH_LOG("%s", self->msg);
	ASSERT_EQ(0, target_ask(&t, "r", buf, sizeof(buf)));
	/* No signal-context callback runs after a thread-context abort... */
	EXPECT_STREQ("thread -11 signal 99", buf);
	/* ...and no older thread-context one. */
	ASSERT_EQ(0, target_ask(&t, "z", buf, sizeof(buf)));
	EXPECT_STREQ("silent 0", buf);

	ASSERT_EQ(0, target_ask(&t, "2", buf, sizeof(buf)));
	EXPECT_EQ(-ECANCELED, checkpoint(_metadata, t.pid, self->image, 0, self->msg));
	EXPECT_NE(NULL, strstr(self->msg, "never while the tape is mounted"))
		TH_LOG("%s", self->msg);
	ASSERT_EQ(0, target_ask(&t, "r", buf, sizeof(buf)));
	EXPECT_STREQ("thread -125 signal 99", buf);

	ASSERT_EQ(0, target_ask(&t, "3", buf, sizeof(buf)));
	EXPECT_EQ(-EAGAIN, checkpoint(_metadata, t.pid, self->image, 0, self->msg));
	EXPECT_NE(NULL, strstr(self->msg, "signal side busy")) TH_LOG("%s", self->msg);
	ASSERT_EQ(0, target_ask(&t, "r", buf, sizeof(buf)));
	EXPECT_STREQ("thread -11 signal -11", buf);

	/* Past the callbacks, the engine fails: they get its error. */
	ASSERT_EQ(0, target_ask(&t, "0", buf, sizeof(buf)));
	ASSERT_EQ(0, target_ask(&t, "p", buf, sizeof(buf)));
	EXPECT_EQ(-EOPNOTSUPP, checkpoint(_metadata, t.pid, self->image, 0, self->msg));
	EXPECT_NE(NULL, strstr(self->msg, "socket:[")) TH_LOG("%s", self->msg);
	ASSERT_EQ(0, target_ask(&t, "r", buf, sizeof(buf)));
	EXPECT_STREQ("thread -95 signal -95", buf);
	ASSERT_EQ(0, target_ask(&t, "c", buf, sizeof(buf)));

	/*
	 * Everyone went on; the next checkpoint is taken, through the oldest
	 * callback, which never calls ckpt_checkpoint() itself.
	 */
	ASSERT_EQ(0, target_ask(&t, "0", buf, sizeof(buf)));
	ASSERT_EQ(0, target_ask(&t, "z", buf, sizeof(buf)));
	ASSERT_STREQ("silent 2", buf);	/* the signal abort and the engine failure ran it */
	ASSERT_EQ(0, checkpoint(_metadata, t.pid, self->image, 0, self->msg))
		TH_LOG("%s", self->msg);
	ASSERT_EQ(0, target_ask(&t, "r", buf, sizeof(buf)));
	EXPECT_STREQ("thread 0 signal 0", buf);
	ASSERT_EQ(0, target_ask(&t, "z", buf, sizeof(buf)));
	EXPECT_STREQ("silent 3", buf);
	target_end(&t);
}

static int checkpoint_timeout(pid_t pid, const char *image, unsigned int ms,
			      char *msg)
{
	struct ckpt_checkpoint a = {
		.pid = pid,
		.timeout_ms = ms,
		.errmsg = (unsigned long)msg,
		.errmsg_len = 256,
	};
	int dev, fd, ret = 0;

	dev = open("/dev/ckpt", O_RDWR | O_CLOEXEC);
	fd = open(image, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (dev < 0 || fd < 0)
		return -EBADF;
	a.fd = fd;
	msg[0] = '\0';
	if (ioctl(dev, CKPT_IOC_CHECKPOINT, &a))
		ret = -errno;
	close(fd);
	close(dev);
	return ret;
}

TEST_F(lib, a_section_held_too_long_fails_the_request_then_yields)
{
	struct target t = {};
	char buf[256];
	int ret;

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, target_start(&t, abort_target));
	ASSERT_EQ(0, target_line(&t, buf, sizeof(buf)));
	ASSERT_EQ(0, target_ask(&t, "h", buf, sizeof(buf)));
	ASSERT_STREQ("enter 0", buf);
	ret = checkpoint_timeout(t.pid, self->image, 1000, self->msg);
	EXPECT_TRUE(ret == -ETIMEDOUT || ret == -EAGAIN) TH_LOG("%d %s", ret, self->msg);
	/* No callback ran for it, and the process still answers. */
	ASSERT_EQ(0, target_ask(&t, "n", buf, sizeof(buf)));
	EXPECT_STREQ("rounds 0", buf);
	ASSERT_EQ(0, target_ask(&t, "u", buf, sizeof(buf)));
	ASSERT_STREQ("leave 0", buf);
	/* Nor once the section is left: that request is over. */
	nap_ms(500);
	ASSERT_EQ(0, target_ask(&t, "n", buf, sizeof(buf)));
	EXPECT_STREQ("rounds 0", buf);
	/* The callback thread is back waiting: the next request is served. */
	ASSERT_EQ(0, checkpoint_timeout(t.pid, self->image, 10000, self->msg))
		TH_LOG("%s", self->msg);
	ASSERT_EQ(0, target_ask(&t, "r", buf, sizeof(buf)));
	EXPECT_STREQ("thread 0 signal 0", buf);
	target_end(&t);
}

static void on_usr1(int sig)
{
	(void)sig;
}

TEST_F(lib, a_requester_interrupted_during_the_callbacks_ends_the_round)
{
	struct sigaction sa = { .sa_handler = on_usr1 };	/* no SA_RESTART */
	struct target t = {};
	char buf[256];
	int i, status;
	pid_t req;

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, target_start(&t, abort_target));
	ASSERT_EQ(0, target_line(&t, buf, sizeof(buf)));
	ASSERT_EQ(0, target_ask(&t, "4", buf, sizeof(buf)));
	/* A requester (ckpt checkpoint, say) interrupted by a signal. */
	req = fork();
	ASSERT_LE(0, req);
	if (!req) {
		sigaction(SIGUSR1, &sa, NULL);
		_exit(-checkpoint_timeout(t.pid, self->image, 10000, self->msg));
	}
	/* Once its callbacks run (10 s at most). */
	for (i = 0; i < 1000; i++) {
		ASSERT_EQ(0, target_ask(&t, "e", buf, sizeof(buf)));
		if (!strcmp(buf, "slow 1"))
			break;
		nap_ms(10);
	}
	ASSERT_STREQ("slow 1", buf);
	kill(req, SIGUSR1);
	ASSERT_EQ(req, waitpid(req, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(EINTR, WEXITSTATUS(status));
	ASSERT_EQ(0, target_ask(&t, "g", buf, sizeof(buf)));
	/* Its callbacks learn that it ended so, and the process goes on. */
	ASSERT_EQ(0, target_ask(&t, "r", buf, sizeof(buf)));
	EXPECT_STREQ("thread -4 signal -4", buf);
	ASSERT_EQ(0, target_ask(&t, "0", buf, sizeof(buf)));
	ASSERT_EQ(0, checkpoint_timeout(t.pid, self->image, 10000, self->msg))
		TH_LOG("%s", self->msg);
	ASSERT_EQ(0, target_ask(&t, "r", buf, sizeof(buf)));
	EXPECT_STREQ("thread 0 signal 0", buf);
	target_end(&t);
}

TEST_F(lib, closing_the_descriptor_ends_the_registration)
{
	struct target t = {};
	char buf[256];

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, target_start(&t, abort_target));
	ASSERT_EQ(0, target_line(&t, buf, sizeof(buf)));
	ASSERT_EQ(0, target_ask(&t, "x", buf, sizeof(buf)));
	ASSERT_STREQ("close_range 0", buf);
	/* Even with its callback thread asleep in the engine: no callbacks. */
	ASSERT_EQ(0, checkpoint_timeout(t.pid, self->image, 3000, self->msg))
		TH_LOG("%s", self->msg);
	ASSERT_EQ(0, target_ask(&t, "n", buf, sizeof(buf)));
	EXPECT_STREQ("rounds 0", buf);
	target_end(&t);
}

TEST_F(lib, critical_sections_hold_checkpoints_off_without_starving_them)
{
	struct target t = {};
	char buf[256];
	int i;

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, target_start(&t, cs_target));
	ASSERT_EQ(0, target_line(&t, buf, sizeof(buf)));
	/* Three threads enter nested sections back to back all along. */
	for (i = 0; i < 5; i++)
		ASSERT_EQ(0, checkpoint(_metadata, t.pid, self->image, 0, self->msg))
			TH_LOG("round %d: %s", i, self->msg);
	ASSERT_EQ(0, target_ask(&t, "r", buf, sizeof(buf)));
	EXPECT_STREQ("rounds 5 violations 0 try -11 moving 1", buf);
	target_end(&t);
}

TEST_F(lib, self_requests)
{
	struct target t = {};
	char buf[512], want[600];
	int status;

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, target_start(&t, request_target));
	ASSERT_EQ(0, target_line(&t, buf, sizeof(buf)));

	/* Inside a section, an asynchronous request waits for the leave. */
	ASSERT_EQ(0, target_ask(&t, "a", buf, sizeof(buf)));
	EXPECT_STREQ("poll -11 pending 1 image 0 ret 0 image 1 saw_left 1", buf);
	ASSERT_EQ(0, target_ask(&t, "d", buf, sizeof(buf)));
	EXPECT_STREQ("deadlock -35", buf);
	unlink(image2);
	ASSERT_EQ(0, target_ask(&t, "s", buf, sizeof(buf)));
	EXPECT_STREQ("sync 0 restarts 0 from -", buf);
	EXPECT_EQ(0, access(image2, F_OK));

	/* Checkpoint me and end me; the restart finishes the call with 1. */
	unlink(image2);
	ASSERT_EQ(0, target_send(&t, "k"));
	status = target_end(&t);
	ASSERT_TRUE(WIFSIGNALED(status));
	ASSERT_EQ(0, access(image2, F_OK));
	ASSERT_EQ(0, target_restart(&t, image2));
	ASSERT_EQ(0, target_line(&t, buf, sizeof(buf)));
	snprintf(want, sizeof(want), "sync 1 restarts 1 from %s", image2);
	EXPECT_STREQ(want, buf);
	target_end(&t);
}

/* The helper, the target's one child: read from /proc. */
static pid_t helper_of(pid_t pid)
{
	char path[64];
	int child = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", pid, pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%d", &child) != 1)
		child = -1;
	fclose(f);
	return child;
}

TEST_F(lib, a_self_request_whose_helper_is_killed_ends_with_echild)
{
	struct target t = {};
	char buf[512], want[512];
	pid_t helper;

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, target_start(&t, request_target));
	ASSERT_EQ(0, target_line(&t, buf, sizeof(buf)));
	/* Inside a section the helper waits in the engine: killed there. */
	ASSERT_EQ(0, target_ask(&t, "x", buf, sizeof(buf)));
	ASSERT_STREQ("requested 0", buf);
	/* A second request while the first runs is refused at once. */
	ASSERT_EQ(0, target_ask(&t, "x", buf, sizeof(buf)));
	EXPECT_STREQ("requested -16", buf);
	helper = helper_of(t.pid);
	ASSERT_LT(0, helper);
	ASSERT_EQ(0, kill(helper, SIGKILL));
	ASSERT_EQ(0, target_ask(&t, "w", buf, sizeof(buf)));
	snprintf(want, sizeof(want),
		 "wait -10 the checkpoint helper (pid %d) died before it finished",
		 helper);
	EXPECT_STREQ(want, buf);
	/* The process was thawed and goes on; a new request works. */
	unlink(image2);
	ASSERT_EQ(0, target_ask(&t, "s", buf, sizeof(buf)));
	EXPECT_STREQ("sync 0 restarts 0 from -", buf);
	unlink(image2);
	target_end(&t);
}

TEST_F(lib, a_user_s_self_request_works_under_yama_scope_1)
{
	const char *scope = "/proc/sys/kernel/yama/ptrace_scope";
	struct target t = {};
	char buf[512], old[8] = "";
	FILE *f;

	CKPT_SETUP_SKIPPED();
	f = fopen(scope, "r+");
	if (!f)
		SKIP(return, "Yama is not in this kernel (no %s)", scope);
	if (!fgets(old, sizeof(old), f) || old[0] == '3') {
		fclose(f);
		SKIP(return, "ptrace_scope 3 cannot be lowered to 1");
	}
	rewind(f);
	ASSERT_LT(0, fputs("1\n", f));
	ASSERT_EQ(0, fflush(f));
	unlink(image2);
	EXPECT_EQ(0, target_start(&t, nobody_request_target));
	if (t.pid > 0) {
		EXPECT_EQ(0, target_line(&t, buf, sizeof(buf)));
		EXPECT_STREQ("sync 0 -", buf);
		target_end(&t);
	}
	EXPECT_EQ(0, access(image2, F_OK));
	unlink(image2);
	rewind(f);
	fputs(old, f);
	fclose(f);
}

TEST_F(lib, a_forked_child_has_its_own_registration)
{
	struct target t = {};
	char buf[256], want[256];
	int child;

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, target_start(&t, fork_target));
	ASSERT_EQ(0, target_line(&t, buf, sizeof(buf)));
	ASSERT_EQ(1, sscanf(buf, "child %d", &child)) TH_LOG("%s", buf);

	/* The child's callbacks run in the child, the parent's are untouched. */
	ASSERT_EQ(0, checkpoint(_metadata, child, self->image, 0, self->msg))
		TH_LOG("%s", self->msg);
	ASSERT_EQ(0, target_line(&t, buf, sizeof(buf)));
	snprintf(want, sizeof(want), "child %d thread 1 signal 1", child);
	EXPECT_STREQ(want, buf);
	ASSERT_EQ(0, target_ask(&t, "p", buf, sizeof(buf)));
	EXPECT_STREQ("parent 0 thread 0 signal 0", buf);

	ASSERT_EQ(0, target_ask(&t, "k", buf, sizeof(buf)));
	ASSERT_STREQ("alone", buf);
	ASSERT_EQ(0, checkpoint(_metadata, t.pid, self->image, 0, self->msg))
		TH_LOG("%s", self->msg);
	ASSERT_EQ(0, target_ask(&t, "p", buf, sizeof(buf)));
	snprintf(want, sizeof(want), "parent %d thread 1 signal 1", t.pid);
	EXPECT_STREQ(want, buf);
	target_end(&t);
}

TEST_F(lib, a_callback_closes_and_reopens_what_cannot_be_saved)
{
	struct target t = {};
	char buf[256];
	int cycle;
	pid_t pid;

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, target_start(&t, reopen_target));
	pid = t.pid;
	ASSERT_EQ(0, target_line(&t, buf, sizeof(buf)));

	ASSERT_EQ(0, checkpoint(_metadata, t.pid, self->image, 0, self->msg))
		TH_LOG("%s", self->msg);
	ASSERT_EQ(0, target_ask(&t, "r", buf, sizeof(buf)));
	EXPECT_STREQ("ret 0 reopened 1 byte x", buf);

	for (cycle = 0; cycle < 3; cycle++) {
		ASSERT_EQ(0, checkpoint(_metadata, pid, self->image,
					CKPT_CHECKPOINT_KILL, self->msg))
			TH_LOG("cycle %d: %s", cycle, self->msg);
		target_end(&t);
		ASSERT_EQ(0, target_restart(&t, self->image));
		ASSERT_EQ(0, target_ask(&t, "r", buf, sizeof(buf)));
		EXPECT_STREQ("ret 1 reopened 1 byte x", buf);
	}
	target_end(&t);
}

/* True once @pid runs @comm with a libckpt callback thread. */
static int registered_as(pid_t pid, const char *comm)
{
	char path[128], buf[64];
	struct dirent *de;
	int found = 0;
	DIR *dir;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	f = fopen(path, "r");
	if (!f || !fgets(buf, sizeof(buf), f) || strncmp(buf, comm, strlen(comm))) {
		if (f)
			fclose(f);
		return 0;
	}
	fclose(f);
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	while (dir && !found && (de = readdir(dir))) {
		snprintf(path, sizeof(path), "/proc/%d/task/%.16s/comm", pid,
			 de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		found = fgets(buf, sizeof(buf), f) && !strcmp(buf, "ckpt-callbacks\n");
		fclose(f);
	}
	if (dir)
		closedir(dir);
	return found;
}

static int wait_registered(pid_t pid, const char *comm)
{
	int i;

	for (i = 0; i < 1000; i++) {
		if (registered_as(pid, comm))
			return 1;
		nap_ms(10);
	}
	return 0;
}

TEST_F(lib, ckpt_run_registers_unmodified_programs_across_exec)
{
	char *argv[] = { "ckpt-run", "--no-job", "sh", "-c", "exec sleep 1000", NULL };
	struct target t = {};
	pid_t pid;

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, target_spawn(&t, NULL, argv));
	pid = t.pid;
	/* sh was registered, and sleep, which it executed, is again. */
	ASSERT_TRUE(wait_registered(pid, "sleep"));

	ASSERT_EQ(0, checkpoint(_metadata, pid, self->image,
				CKPT_CHECKPOINT_KILL, self->msg))
		TH_LOG("%s", self->msg);
	target_end(&t);
	ASSERT_EQ(0, target_restart(&t, self->image));
	/* sleep runs again, with its callback thread, and takes part again. */
	ASSERT_TRUE(wait_registered(pid, "sleep"));
	ASSERT_EQ(0, checkpoint(_metadata, pid, self->image, 0, self->msg))
		TH_LOG("%s", self->msg);
	ASSERT_TRUE(wait_registered(pid, "sleep"));
	kill(pid, SIGKILL);
	target_end(&t);
}

TEST_HARNESS_MAIN
