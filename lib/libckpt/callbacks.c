// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Callbacks and one round of them per checkpoint.
 *
 * Callbacks nest, newest first: ckpt_checkpoint() called by a callback runs
 * the next older one, and the call made by the oldest goes on to the next
 * phase. So the code before ckpt_checkpoint() runs newest first, the code
 * after it oldest first, and a library registered on top of another
 * quiesces before it and resumes after it.
 *
 * The phases of a round, in the callback thread:
 *   1. critical sections drain (cs.c);
 *   2. thread-context callbacks, nested;
 *   3. each thread with signal-context callbacks gets the library's signal;
 *      its handler runs that thread's callbacks, nested, and waits in the
 *      innermost call;
 *   4. once all have arrived, the engine is told to go ahead (or that a
 *      callback aborted) and captures the process; its answer is published
 *      to the waiting handlers, and everything unwinds.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <linux/ckpt.h>

#include "engine.h"
#include "internal.h"

CKPT_TLS int ckpt_in_callback;
CKPT_TLS struct frame *ckpt_frame;

/* What the innermost signal-context call returns before it waits. */
#define INNERMOST	(INT_MIN + 1)

static int signal_phase(void);

/* Writers of the table take turns; readers (signal handlers) never wait. */
static _Atomic int table_lock;

void ckpt_callbacks_lock(void)
{
	while (atomic_exchange(&table_lock, 1))
		futex_wait(&table_lock, 1, NULL);
}

void ckpt_callbacks_unlock(void)
{
	atomic_store(&table_lock, 0);
	futex_wake_all(&table_lock);
}

CKPT_EXPORT int ckpt_register_callback(ckpt_callback_t fn, void *arg,
				       int flags)
{
	struct callback *cb;
	unsigned int n;

	if (!fn || (flags != CKPT_CB_THREAD && flags != CKPT_CB_SIGNAL))
		return ckpt_fail_str(EINVAL,
				 "a callback needs a function and exactly one of CKPT_CB_THREAD, CKPT_CB_SIGNAL");
	ckpt_callbacks_lock();
	n = atomic_load(&ckpt_lib.nr_callbacks);
	if (n == MAX_CALLBACKS) {
		ckpt_callbacks_unlock();
		return ckpt_fail(ENOSPC, "at most %d callbacks", MAX_CALLBACKS);
	}
	cb = &ckpt_lib.callbacks[n];
	cb->fn = fn;
	cb->arg = arg;
	cb->flags = flags;
	atomic_store(&cb->tid, flags == CKPT_CB_SIGNAL ? ckpt_gettid() : 0);
	atomic_store(&ckpt_lib.nr_callbacks, n + 1);
	ckpt_callbacks_unlock();
	return n;
}

/* Whether callback @i belongs to the phase @tid runs (0: thread context). */
static int mine(unsigned int i, pid_t tid)
{
	const struct callback *cb = &ckpt_lib.callbacks[i];

	if (!tid)
		return cb->flags == CKPT_CB_THREAD;
	return cb->flags == CKPT_CB_SIGNAL && atomic_load(&cb->tid) == tid;
}

/* Runs the newest callback of this phase below @pos, or the next phase. */
static int descend(int pos, pid_t tid)
{
	struct frame f = { .up = ckpt_frame };

	while (--pos >= 0 && !mine(pos, tid))
		;
	if (pos < 0)
		return tid ? INNERMOST : signal_phase();

	f.pos = pos;
	ckpt_frame = &f;
	ckpt_lib.callbacks[pos].fn(ckpt_lib.callbacks[pos].arg);
	ckpt_frame = f.up;
	/* A callback that did not call ckpt_checkpoint() gets it made for it. */
	if (!f.called)
		f.result = descend(pos, tid);
	return f.result;
}

static void set_abort(int how, const char *reason)
{
	struct round *r = &ckpt_lib.round;
	int none = 0;

	if (atomic_compare_exchange_strong(&r->abort, &none, how)) {
		size_t n = reason ? strlen(reason) : 0;

		if (n >= sizeof(r->abort_msg))
			n = sizeof(r->abort_msg) - 1;
		memcpy(r->abort_msg, reason ? reason : "", n);
		r->abort_msg[n] = '\0';
	}
}

static int abort_error(int how)
{
	return how == CKPT_ABORT_PERM ? -ECANCELED : -EAGAIN;
}

/*
 * In a signal handler, the innermost call: report arrival and wait for the
 * engine's answer, which the callback thread publishes.
 */
static int arrive(void)
{
	struct round *r = &ckpt_lib.round;
	int res;

	atomic_fetch_add(&r->arrived, 1);
	futex_wake_all(&r->arrived);
	while ((res = atomic_load(&r->result)) == RESULT_PENDING)
		futex_wait(&r->result, RESULT_PENDING, NULL);
	return res;
}

static int checkpoint(int flags, const char *reason)
{
	struct frame *f = ckpt_frame;
	pid_t tid;

	if (!ckpt_in_callback || !f)
		return ckpt_fail_str(EINVAL, "ckpt_checkpoint() outside a callback");
	if (flags & ~(CKPT_ABORT_TEMP | CKPT_ABORT_PERM) ||
	    flags == (CKPT_ABORT_TEMP | CKPT_ABORT_PERM))
		return ckpt_fail_str(EINVAL, "unknown or conflicting flags");
	if (f->called)
		return f->result;
	f->called = 1;
	tid = ckpt_lib.callbacks[f->pos].flags == CKPT_CB_SIGNAL ?
	      atomic_load(&ckpt_lib.callbacks[f->pos].tid) : 0;
	if (flags) {
		set_abort(flags, reason);
		f->result = abort_error(flags);
		/* A signal thread that aborts has arrived, without waiting. */
		if (tid) {
			atomic_fetch_add(&ckpt_lib.round.arrived, 1);
			futex_wake_all(&ckpt_lib.round.arrived);
		}
		return f->result;
	}
	f->result = descend(f->pos, tid);
	if (f->result == INNERMOST)
		f->result = arrive();
	return f->result;
}

CKPT_EXPORT int ckpt_checkpoint(int flags)
{
	int ret = checkpoint(flags, NULL);

	if (ret < 0)
		errno = -ret;
	return ret;
}

CKPT_EXPORT int ckpt_abort(int flags, const char *reason)
{
	if (flags != CKPT_ABORT_TEMP && flags != CKPT_ABORT_PERM)
		return ckpt_fail_str(EINVAL, "ckpt_abort() needs CKPT_ABORT_TEMP or CKPT_ABORT_PERM");
	return checkpoint(flags, reason);
}

void ckpt_signal_handler(int sig, siginfo_t *si, void *uc)
{
	int saved = errno, inside = ckpt_in_callback;
	struct frame *up = ckpt_frame;
	int gen = atomic_load(&ckpt_lib.round.gen);
	pid_t tid;
	int res;

	(void)sig;
	(void)uc;
	/* Only the current round's signal; a late one of an earlier round is dropped. */
	if (si->si_code != SI_QUEUE || si->si_pid != ckpt_lib.pid ||
	    si->si_value.sival_int != gen || !atomic_load(&ckpt_lib.pending) ||
	    inside)
		return;
	tid = ckpt_gettid();
	ckpt_in_callback = 1;
	ckpt_frame = NULL;
	res = descend(ckpt_lib.round.nr_callbacks, tid);
	if (res == INNERMOST)	/* no callback called ckpt_checkpoint() */
		arrive();
	ckpt_frame = up;
	ckpt_in_callback = inside;
	if (atomic_load(&ckpt_lib.round.gen) == gen) {
		atomic_fetch_add(&ckpt_lib.round.finished, 1);
		futex_wake_all(&ckpt_lib.round.finished);
	}
	errno = saved;
}

/* Waits until *@v reaches @want; gives up after @ms (0: never). */
static int wait_count(_Atomic int *v, int want, unsigned int ms)
{
	struct timespec end, left;
	int n;

	ckpt_deadline(&end, ms);
	while ((n = atomic_load(v)) < want) {
		if (ckpt_time_left(&end, ms, &left))
			return -1;
		futex_wait(v, n, ms ? &left : NULL);
	}
	return 0;
}

static int engine_ready(struct round *r, uint64_t id)
{
	char source[sizeof(ckpt_lib.restarted_from)];
	struct ckpt_cb_ready rd;
	int how = atomic_load(&r->abort), verdict, ret;

	memset(&rd, 0, sizeof(rd));
	rd.id = id;
	verdict = how == CKPT_ABORT_PERM ? CKPT_CB_ABORT_PERM :
		  how == CKPT_ABORT_TEMP ? CKPT_CB_ABORT_TEMP : CKPT_CB_GO;
	if (how) {
		rd.msg = (uintptr_t)r->abort_msg;
		rd.msg_len = strlen(r->abort_msg);
	}
	rd.source = (uintptr_t)source;
	rd.source_len = sizeof(source);
	source[0] = '\0';
	for (;;) {
		rd.verdict = verdict;
		ret = ckpt_dev_cb_ready(ckpt_lib.devfd, &rd);
		if (ret != -EINTR)
			break;
		/*
		 * A signal of ours, or a request that ended interrupted (its
		 * requester was): a probe tells, without waiting. Still under
		 * way, the call is made again; the verdict given stands.
		 */
		rd.verdict = CKPT_CB_PROBE;
		ret = ckpt_dev_cb_ready(ckpt_lib.devfd, &rd);
		if (ret != -EALREADY && ret != 0)
			break;
	}
	if (ret < 0)
		return ret;
	if (ret > 0) {
		memcpy(ckpt_lib.restarted_from, source, sizeof(source));
		ckpt_lib.restarts++;
		return 1;
	}
	return how ? abort_error(how) : 0;
}

static uint64_t round_id;

/* 0 while request @id still waits for the callbacks, else how it ended. */
static int probe(uint64_t id)
{
	struct ckpt_cb_ready rd;

	memset(&rd, 0, sizeof(rd));
	rd.id = id;
	rd.verdict = CKPT_CB_PROBE;
	return ckpt_dev_cb_ready(ckpt_lib.devfd, &rd);
}

/* The library's signal, queued with the round's number. */
static int send_signal(pid_t tid, int gen)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	si.si_signo = ckpt_lib.signo;
	si.si_code = SI_QUEUE;
	si.si_pid = ckpt_lib.pid;
	si.si_uid = getuid();
	si.si_value.sival_int = gen;
	return syscall(SYS_rt_tgsigqueueinfo, ckpt_lib.pid, tid, ckpt_lib.signo,
		       &si);
}

static int signal_phase(void)
{
	struct round *r = &ckpt_lib.round;
	pid_t sent[MAX_CALLBACKS];
	unsigned int i, j, nr = 0;
	int res;

	if (atomic_load(&r->abort))
		goto ready;
	for (i = 0; i < r->nr_callbacks; i++) {
		pid_t tid = atomic_load(&ckpt_lib.callbacks[i].tid);

		if (ckpt_lib.callbacks[i].flags != CKPT_CB_SIGNAL || !tid)
			continue;
		for (j = 0; j < nr && sent[j] != tid; j++)
			;
		if (j < nr)
			continue;
		/* A thread that is gone has no callbacks to run. */
		if (send_signal(tid, atomic_load(&r->gen))) {
			atomic_store(&ckpt_lib.callbacks[i].tid, 0);
			continue;
		}
		sent[nr++] = tid;
	}
	if (wait_count(&r->arrived, nr, r->timeout_ms)) {
		set_abort(CKPT_ABORT_TEMP,
			  "a thread did not run its signal-context callbacks (signal blocked?)");
		/* Its handler may still run: it will find the answer waiting. */
	}
ready:
	r->told = 1;
	res = engine_ready(r, round_id);
	atomic_store(&r->result, res);
	futex_wake_all(&r->result);
	/* Handlers unwind their callbacks with the answer. */
	wait_count(&r->finished, atomic_load(&r->arrived), 0);
	return res;
}

/* How much sooner than the engine the library gives up waiting. */
static unsigned int early(unsigned int timeout_ms)
{
	unsigned int ms = timeout_ms / 5;

	return ms > 2000 ? 2000 : ms;
}

int ckpt_run_round(unsigned int flags, unsigned int timeout_ms, uint64_t id)
{
	struct round *r = &ckpt_lib.round;
	struct timespec end;
	char msg[MSG_LEN];
	unsigned int ms;
	const char *why;
	int res;

	/* The round is set up before it is announced (pending). */
	memset(r->abort_msg, 0, sizeof(r->abort_msg));
	atomic_store(&r->abort, 0);
	atomic_store(&r->arrived, 0);
	atomic_store(&r->finished, 0);
	atomic_store(&r->result, RESULT_PENDING);
	r->flags = flags;
	r->timeout_ms = timeout_ms;
	r->nr_callbacks = atomic_load(&ckpt_lib.nr_callbacks);
	r->told = 0;
	round_id = id;
	atomic_fetch_add(&r->gen, 1);

	/*
	 * An MPI rank first (pending would hold its MPI_Finalize off). Both
	 * waits end before the engine's, which began earlier and would
	 * only say the callbacks took too long.
	 */
	ms = timeout_ms ? timeout_ms - early(timeout_ms) : 0;
	ckpt_deadline(&end, ms);
	why = ckpt_mpi_wait(&end, ms);
	if (!why && ckpt_cs_drain(&end, ms))
		why = ckpt_mpi_held() ?: "a critical section was held";
	if (why) {
		snprintf(msg, sizeof(msg), "%s longer than the timeout", why);
		set_abort(CKPT_ABORT_TEMP, msg);
		res = engine_ready(r, round_id);
		goto out;
	}
	/* The requester may have given up while sections drained. */
	res = probe(round_id);
	if (res)
		goto out;
	ckpt_in_callback = 1;
	res = descend(r->nr_callbacks, 0);
	ckpt_in_callback = 0;
	/* A thread-context abort ends the round before the engine heard. */
	if (!r->told)
		engine_ready(r, round_id);

	if (res == 0)
		ckpt_lib.checkpoints++;
	if (res == 1) {
		ckpt_addrmap_sync();
		ckpt_requests_restarted();
	}
out:
	ckpt_lib.last_result = res;
	ckpt_cs_release();
	return res;
}

/* In a child of fork(): only the forking thread's signal callbacks stay. */
void ckpt_callbacks_after_fork(pid_t old_tid, pid_t new_tid)
{
	unsigned int i, n = atomic_load(&ckpt_lib.nr_callbacks);

	for (i = 0; i < n; i++) {
		struct callback *cb = &ckpt_lib.callbacks[i];
		pid_t t = atomic_load(&cb->tid);

		if (cb->flags == CKPT_CB_SIGNAL && t)
			atomic_store(&cb->tid, t == old_tid ? new_tid : 0);
	}
}
