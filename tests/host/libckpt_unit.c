// SPDX-License-Identifier: GPL-2.0
/*
 * libckpt's calls without an engine: argument checks, critical-section
 * nesting and the errors a program sees when the engine is missing. TAP on
 * stdout. (With the engine: tests/kselftest/libckpt.c, in the VM.)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pthread.h>

#include "internal.h"

static int nr, failed;

/*
 * A stand-in MPI library's two questions (exported: -rdynamic), which
 * libckpt asks before a checkpoint (lib/libckpt/mpi.c).
 */
static _Atomic int fake_init, fake_final;

int PMPI_Initialized(int *flag);
int PMPI_Finalized(int *flag);

int PMPI_Initialized(int *flag)
{
	*flag = atomic_load(&fake_init);
	return 0;
}

int PMPI_Finalized(int *flag)
{
	*flag = atomic_load(&fake_final);
	return 0;
}

static void *init_later(void *arg)
{
	const struct timespec ts = { 0, 100 * 1000000L };

	(void)arg;
	nanosleep(&ts, NULL);
	atomic_store(&fake_init, 1);
	return NULL;
}

/* ckpt_mpi_wait() with @ms to wait: its answer, and the time it took. */
static const char *mpi_wait(unsigned int ms, long *took_ms)
{
	struct timespec end, a, b;
	const char *why;

	ckpt_deadline(&end, ms);
	clock_gettime(CLOCK_MONOTONIC, &a);
	why = ckpt_mpi_wait(&end, ms);
	clock_gettime(CLOCK_MONOTONIC, &b);
	*took_ms = (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000;
	return why;
}

static void check(int ok, const char *what)
{
	printf("%sok %d %s\n", ok ? "" : "not ", ++nr, what);
	if (!ok)
		failed++;
}

static int cb(void *arg)
{
	(void)arg;
	return 0;
}

int main(void)
{
	struct ckpt_request_args args = { 0 };
	struct ckpt_status st;
	const char *why;
	pthread_t th;
	long took;
	int i, ret;

	printf("TAP version 13\n1..20\n");

	setenv("CKPT_DEVICE", "/nonexistent/ckpt", 1);
	setenv("CKPT_SIGNAL", "5", 1);
	check(ckpt_init() == -EINVAL && errno == EINVAL &&
	      strstr(ckpt_last_error(), "real-time signal"),
	      "CKPT_SIGNAL that is not a real-time signal is refused");
	unsetenv("CKPT_SIGNAL");
	ret = ckpt_init();
	check(ret == -ENOENT && errno == ENOENT &&
	      strstr(ckpt_last_error(), "/nonexistent/ckpt") &&
	      strstr(ckpt_last_error(), "module loaded"),
	      "engine missing: ckpt_init names the device");
	check(!ckpt_status(&st) && !st.registered && !st.in_progress &&
	      !st.restarts && !st.restarted_from[0],
	      "status of an unregistered process");
	check(ckpt_status(NULL) == -EINVAL, "status without a buffer");

	check(!ckpt_enter_cs() && !ckpt_enter_cs() && !ckpt_tryenter_cs() &&
	      !ckpt_leave_cs() && !ckpt_leave_cs() && !ckpt_leave_cs(),
	      "critical sections nest");
	check(ckpt_leave_cs() == -EINVAL && strstr(ckpt_last_error(), "not inside"),
	      "leaving without entering");

	check(ckpt_checkpoint(0) == -EINVAL && errno == EINVAL &&
	      strstr(ckpt_last_error(), "outside a callback"),
	      "ckpt_checkpoint outside a callback");
	check(ckpt_abort(0, "x") == -EINVAL, "ckpt_abort needs TEMP or PERM");
	check(ckpt_register_callback(NULL, NULL, CKPT_CB_THREAD) == -EINVAL,
	      "a callback needs a function");
	check(ckpt_register_callback(cb, NULL, CKPT_CB_THREAD | CKPT_CB_SIGNAL) == -EINVAL &&
	      ckpt_register_callback(cb, NULL, 0) == -EINVAL,
	      "a callback needs exactly one context");
	for (i = 0; i < 128; i++)
		if (ckpt_register_callback(cb, NULL, CKPT_CB_THREAD) != i)
			break;
	check(i == 128, "callbacks get their index");
	check(ckpt_register_callback(cb, NULL, CKPT_CB_THREAD) == -ENOSPC,
	      "the 129th callback is refused");

	args.reserved[1] = 1;
	check(ckpt_request_checkpoint(&args, NULL) == -EINVAL, "request: reserved fields");
	args.reserved[1] = 0;
	args.flags = CKPT_REQUEST_STOP | CKPT_REQUEST_KILL;
	check(ckpt_request_checkpoint(&args, NULL) == -EINVAL, "request: conflicting flags");
	args.flags = 0;
	ckpt_enter_cs();
	ret = ckpt_request_checkpoint(&args, NULL);
	ckpt_leave_cs();
	check(ret == -EDEADLK && strstr(ckpt_last_error(), "critical section"),
	      "a synchronous request inside a critical section");
	check(ckpt_request_checkpoint(&args, NULL) == -ENOENT &&
	      ckpt_poll_checkpoint(NULL, 0) == -EINVAL,
	      "request without an engine; poll without a request");

	/* The MPI window: a rank is checkpointed only inside it. */
	why = mpi_wait(200, &took);
	check(why && strstr(why, "before the end of MPI_Init") && took >= 150,
	      "MPI: before MPI_Init ends, a checkpoint waits its time, then has the reason");
	pthread_create(&th, NULL, init_later, NULL);
	why = mpi_wait(5000, &took);
	pthread_join(th, NULL);
	check(!why && took < 4000, "MPI: one that waits goes ahead once MPI_Init has ended");
	atomic_store(&fake_final, 1);
	why = mpi_wait(50, &took);
	check(why && strstr(why, "past MPI_Finalize"), "MPI: past MPI_Finalize, the reason");
	check(!ckpt_mpi_held(), "MPI: no section held without a call of MPI_Finalize");
	return failed ? 1 : 0;
}
