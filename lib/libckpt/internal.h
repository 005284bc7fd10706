/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libckpt's shared state. Everything a signal handler touches is either
 * written before it is published (the callback table is append-only) or an
 * atomic; waits are raw futexes, which are async-signal-safe.
 */
#ifndef LIBCKPT_INTERNAL_H
#define LIBCKPT_INTERNAL_H

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "libckpt.h"

#define CKPT_EXPORT	__attribute__((visibility("default")))
#define CKPT_TLS	__thread __attribute__((tls_model("initial-exec")))

#define MAX_CALLBACKS	128
#define MSG_LEN		256

struct callback {
	ckpt_callback_t fn;
	void *arg;
	int flags;			/* CKPT_CB_THREAD or CKPT_CB_SIGNAL */
	_Atomic pid_t tid;		/* signal context: its thread; 0: dropped */
};

/* One checkpoint, as the callback thread and the signal handlers see it. */
struct round {
	_Atomic int gen;		/* which round; carried by the signal */
	unsigned int nr_callbacks;	/* the table as it was at the start */
	unsigned int flags;		/* the request's CKPT_CHECKPOINT_* */
	unsigned int timeout_ms;
	_Atomic int abort;		/* CKPT_ABORT_* of the first abort, or 0 */
	char abort_msg[MSG_LEN];
	_Atomic int arrived;		/* signal threads at their innermost call */
	_Atomic int finished;		/* signal threads done with callbacks */
	_Atomic int result;		/* RESULT_PENDING until the engine answers */
	int told;			/* the engine has the verdict */
};

#define RESULT_PENDING	INT_MIN

struct lib {
	int devfd;			/* registered /dev/ckpt, or -1 */
	pid_t pid;			/* getpid() when registered */
	int signo;
	struct callback callbacks[MAX_CALLBACKS];
	_Atomic unsigned int nr_callbacks;

	_Atomic int pending;		/* a checkpoint waits for or runs callbacks */
	_Atomic int cs_count;		/* threads inside an outermost section */
	struct round round;

	unsigned int checkpoints, restarts;
	int last_result;
	char restarted_from[4096];
};

extern struct lib ckpt_lib;

/* Per thread. */
struct frame {
	int pos;			/* callback table index */
	int called;			/* ckpt_checkpoint() was called */
	int result;
	struct frame *up;
};

extern CKPT_TLS int ckpt_in_callback;
extern CKPT_TLS struct frame *ckpt_frame;
extern CKPT_TLS int ckpt_cs_depth;
extern CKPT_TLS int ckpt_cs_uncounted;

/* init.c */
int ckpt_fail(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int ckpt_fail_str(int err, const char *msg);
int ckpt_start_callback_thread(void);

/* callbacks.c */
int ckpt_run_round(unsigned int flags, unsigned int timeout_ms, uint64_t id);
void ckpt_signal_handler(int sig, siginfo_t *si, void *uc);
void ckpt_callbacks_lock(void);
void ckpt_callbacks_unlock(void);
void ckpt_callbacks_after_fork(pid_t old_tid, pid_t new_tid);

/* cs.c */
int ckpt_cs_drain(const struct timespec *end, unsigned int timeout_ms);
void ckpt_cs_release(void);
void ckpt_cs_after_fork(void);
void ckpt_cs_hold(void);

/* mpi.c */
const char *ckpt_mpi_wait(const struct timespec *end, unsigned int ms);
const char *ckpt_mpi_held(void);
void ckpt_mpi_after_fork(void);

/* request.c */
void ckpt_requests_restarted(void);
void ckpt_requests_after_fork(void);

static inline long futex(_Atomic int *uaddr, int op, int val,
			 const struct timespec *ts)
{
	return syscall(SYS_futex, (int *)uaddr, op, val, ts, NULL, 0);
}

static inline void futex_wake_all(_Atomic int *uaddr)
{
	futex(uaddr, FUTEX_WAKE_PRIVATE, INT_MAX, NULL);
}

/* Sleeps while *@uaddr is @val, at most @ts (relative; NULL: no limit). */
static inline void futex_wait(_Atomic int *uaddr, int val,
			      const struct timespec *ts)
{
	futex(uaddr, FUTEX_WAIT_PRIVATE, val, ts);
}

/* @end = now + @ms on CLOCK_MONOTONIC (0 ms: no limit, @end unused). */
static inline void ckpt_deadline(struct timespec *end, unsigned int ms)
{
	clock_gettime(CLOCK_MONOTONIC, end);
	end->tv_sec += ms / 1000;
	end->tv_nsec += (ms % 1000) * 1000000L;
	if (end->tv_nsec >= 1000000000L) {
		end->tv_sec++;
		end->tv_nsec -= 1000000000L;
	}
}

/* Time until @end into @left; 1 once it has passed (never when ms is 0). */
static inline int ckpt_time_left(const struct timespec *end, unsigned int ms,
				 struct timespec *left)
{
	struct timespec now;

	if (!ms)
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &now);
	left->tv_sec = end->tv_sec - now.tv_sec;
	left->tv_nsec = end->tv_nsec - now.tv_nsec;
	if (left->tv_nsec < 0) {
		left->tv_sec--;
		left->tv_nsec += 1000000000L;
	}
	return left->tv_sec < 0;
}

static inline pid_t ckpt_gettid(void)
{
	return syscall(SYS_gettid);
}

/*
 * After a restart: the address map of the namespace the process is in
 * now (addrmap.c), taken on before the next checkpoint.
 */
void ckpt_addrmap_sync(void);

#endif /* LIBCKPT_INTERNAL_H */
