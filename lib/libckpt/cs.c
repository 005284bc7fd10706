// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Critical sections: no checkpoint is taken while any thread is inside one.
 *
 * An outermost entry increments cs_count and then looks at pending; the
 * callback thread sets pending and then looks at cs_count (both sequentially
 * consistent), so one of the two always sees the other. An entry that sees a
 * pending checkpoint backs out and waits for it to end: the checkpoint
 * cannot be starved by threads that keep entering. Nested entries and
 * entries from inside a callback only count depth.
 */
#include "internal.h"

CKPT_TLS int ckpt_cs_depth;
CKPT_TLS int ckpt_cs_uncounted;

static void back_out(void)
{
	if (atomic_fetch_sub(&ckpt_lib.cs_count, 1) == 1)
		futex_wake_all(&ckpt_lib.cs_count);
}

static int enter(int try)
{
	int p;

	/*
	 * The depth counts only entries that are complete, so a signal
	 * handler that interrupts this one enters on its own account.
	 */
	if (ckpt_cs_depth) {
		ckpt_cs_depth++;
		return 0;
	}
	if (ckpt_in_callback) {
		ckpt_cs_uncounted = 1;
		ckpt_cs_depth = 1;
		return 0;
	}
	for (;;) {
		atomic_fetch_add(&ckpt_lib.cs_count, 1);
		if (!atomic_load(&ckpt_lib.pending)) {
			ckpt_cs_depth = 1;
			return 0;
		}
		back_out();
		if (try)
			return ckpt_fail_str(EAGAIN, "a checkpoint is pending");
		while ((p = atomic_load(&ckpt_lib.pending)))
			futex_wait(&ckpt_lib.pending, p, NULL);
	}
}

CKPT_EXPORT int ckpt_enter_cs(void)
{
	return enter(0);
}

CKPT_EXPORT int ckpt_tryenter_cs(void)
{
	return enter(1);
}

CKPT_EXPORT int ckpt_leave_cs(void)
{
	if (!ckpt_cs_depth)
		return ckpt_fail_str(EINVAL, "not inside a critical section");
	if (--ckpt_cs_depth)
		return 0;
	if (ckpt_cs_uncounted) {
		ckpt_cs_uncounted = 0;
		return 0;
	}
	if (atomic_fetch_sub(&ckpt_lib.cs_count, 1) == 1 &&
	    atomic_load(&ckpt_lib.pending))
		futex_wake_all(&ckpt_lib.cs_count);
	return 0;
}

/*
 * One section for the whole process, of no thread's (mpi.c's from
 * MPI_Finalize on): counted as an entry is, never left.
 */
void ckpt_cs_hold(void)
{
	int p;

	for (;;) {
		atomic_fetch_add(&ckpt_lib.cs_count, 1);
		if (!atomic_load(&ckpt_lib.pending))
			return;
		back_out();
		while ((p = atomic_load(&ckpt_lib.pending)))
			futex_wait(&ckpt_lib.pending, p, NULL);
	}
}

/*
 * The callback thread: hold new entries off and wait for the last to leave,
 * at most until @end (@timeout_ms 0: no limit). Returns -1 on timeout.
 */
int ckpt_cs_drain(const struct timespec *end, unsigned int timeout_ms)
{
	struct timespec left;
	int n;

	atomic_store(&ckpt_lib.pending, 1);
	while ((n = atomic_load(&ckpt_lib.cs_count))) {
		if (ckpt_time_left(end, timeout_ms, &left))
			return -1;
		futex_wait(&ckpt_lib.cs_count, n, timeout_ms ? &left : NULL);
	}
	return 0;
}

void ckpt_cs_release(void)
{
	atomic_store(&ckpt_lib.pending, 0);
	futex_wake_all(&ckpt_lib.pending);
}

/* The forking thread is the child's only thread. */
void ckpt_cs_after_fork(void)
{
	atomic_store(&ckpt_lib.pending, 0);
	atomic_store(&ckpt_lib.cs_count,
		     ckpt_cs_depth && !ckpt_cs_uncounted ? 1 : 0);
}
