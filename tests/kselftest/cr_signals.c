// SPDX-License-Identifier: GPL-2.0
/*
 * Pending signals and interval timers survive a checkpoint and restart:
 * queued signals keep their siginfo and their order, signals pending for
 * one thread stay that thread's, and an armed ITIMER_REAL fires after the
 * restart. A virtual itimer and a POSIX timer stay armed (cr_timers tests
 * those in depth).
 */
#define _GNU_SOURCE

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/time.h>
#include <time.h>

#include "kselftest_harness.h"
#include "ckpt_test.h"


static _Atomic int b_query;
static char b_answer[64];

/* Thread B: SIGUSR2 is pending for it alone. */
static void *thread_b(void *arg)
{
	sigset_t set;

	(void)arg;
	syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), SIGUSR2);
	for (;;) {
		if (atomic_load(&b_query) == 1) {
			sigpending(&set);
			snprintf(b_answer, sizeof(b_answer), "B usr2 %d",
				 sigismember(&set, SIGUSR2));
			atomic_store(&b_query, 2);
		}
		usleep(1000);
	}
	return NULL;
}

static void pending_target(void)
{
	union sigval v42 = { .sival_int = 42 }, v7 = { .sival_int = 7 };
	char c, line[256];
	pthread_t b;
	sigset_t all;
	siginfo_t si;
	int n;

	/* Every thread blocks everything: nothing is delivered, all stays pending. */
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	if (pthread_create(&b, NULL, thread_b, NULL))
		_exit(9);
	syscall(SYS_tgkill, getpid(), getpid(), SIGUSR1);
	if (sigqueue(getpid(), SIGRTMIN, v42) || sigqueue(getpid(), SIGRTMIN, v42) ||
	    sigqueue(getpid(), SIGRTMIN + 1, v7))
		_exit(9);
	for (;;) {
		if (read(0, &c, 1) != 1)
			_exit(3);
		if (c == 'q')
			_exit(0);
		if (c == 'b') {
			atomic_store(&b_query, 1);
			while (atomic_load(&b_query) != 2)
				usleep(1000);
			target_say("%s", b_answer);
			atomic_store(&b_query, 0);
			continue;
		}
		if (c != 'w')
			continue;
		/* What the main thread can take, in delivery order. */
		n = 0;
		line[0] = '\0';
		/* The raw call: glibc's sigtimedwait() reports SI_TKILL as SI_USER. */
		while (syscall(SYS_rt_sigtimedwait, &all, &si,
			       &(struct timespec){ 0, 0 }, 8) > 0) {
			n += snprintf(line + n, sizeof(line) - n, "%s%d:%d:%d:%d",
				      n ? " " : "", si.si_signo - (si.si_signo >= SIGRTMIN ? SIGRTMIN - 100 : 0),
				      si.si_code, si.si_pid == getpid(),
				      si.si_code == SI_QUEUE ? si.si_value.sival_int : 0);
		}
		target_say("%s", line);
	}
}

/*
 * glibc's own signals, SIGCANCEL and SIGSETXID (32, 33): glibc will not
 * block them (sigprocmask() leaves them out), a raw rt_sigprocmask() does.
 */
static void glibc_signals_target(void)
{
	uint64_t mask = 3ULL << 31, pending;
	char c;

	if (syscall(SYS_rt_sigprocmask, SIG_BLOCK, &mask, NULL, sizeof(mask)) ||
	    syscall(SYS_tgkill, getpid(), getpid(), 32) ||
	    syscall(SYS_tgkill, getpid(), getpid(), 33))
		_exit(9);
	while (read(0, &c, 1) == 1 && c != 'q') {
		syscall(SYS_rt_sigpending, &pending, sizeof(pending));
		target_say("pending %d %d", !!(pending & 1ULL << 31),
			   !!(pending & 1ULL << 32));
	}
	_exit(0);
}

static _Atomic int alarms;

static void on_alarm(int sig)
{
	(void)sig;
	atomic_fetch_add(&alarms, 1);
}

static void alarm_target(void)
{
	struct itimerval it = { .it_value = { 8, 0 } };
	char c, line[64];
	int i;

	signal(SIGALRM, on_alarm);
	if (setitimer(ITIMER_REAL, &it, NULL))
		_exit(9);
	for (;;) {
		if (read(0, &c, 1) != 1)
			_exit(3);
		if (c == 'q')
			_exit(0);
		if (c == 'g') {
			getitimer(ITIMER_REAL, &it);
			snprintf(line, sizeof(line), "armed %d",
				 it.it_value.tv_sec > 0 || it.it_value.tv_usec > 0);
			target_say("%s", line);
		}
		if (c == 'a') {
			for (i = 0; i < 300 && !atomic_load(&alarms); i++)
				usleep(100000);
			snprintf(line, sizeof(line), "alarms %d", atomic_load(&alarms));
			target_say("%s", line);
		}
	}
}

static void virtual_timer_target(void)
{
	struct itimerval it = { .it_value = { 100, 0 } };
	char c;

	signal(SIGVTALRM, SIG_IGN);
	if (setitimer(ITIMER_VIRTUAL, &it, NULL))
		_exit(9);
	while (read(0, &c, 1) == 1 && c != 'q') {
		getitimer(ITIMER_VIRTUAL, &it);
		target_say("armed %d", it.it_value.tv_sec > 0);
	}
	_exit(0);
}

static void posix_timer_target(void)
{
	struct itimerspec its = { .it_value = { 100, 0 } };
	timer_t t;
	char c;

	signal(SIGALRM, SIG_IGN);
	if (timer_create(CLOCK_MONOTONIC, NULL, &t) ||
	    timer_settime(t, 0, &its, NULL))
		_exit(9);
	while (read(0, &c, 1) == 1 && c != 'q') {
		timer_gettime(t, &its);
		target_say("armed %d", its.it_value.tv_sec > 0);
	}
	_exit(0);
}

FIXTURE(signals) {
	char image[64];
	char msg[256];
};

FIXTURE_SETUP(signals)
{
	const char *path = ckpt_module_path();

	if (!path)
		SKIP(return, "CKPT_MODULE does not name a readable ckpt.ko");
	if (!ckpt_module_loaded())
		ASSERT_EQ(0, ckpt_load_module(path));
	snprintf(self->image, sizeof(self->image), "/tmp/cr_signals.%d.img", getpid());
}

FIXTURE_TEARDOWN(signals)
{
	unlink(self->image);
}

TEST_F(signals, pending_signals_keep_their_info_order_and_thread)
{
	struct target t = {};
	char buf[256], want[256];

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, target_start(&t, pending_target));
	/* B's signal is pending by the time it answers. */
	ASSERT_EQ(0, target_ask(&t, "b", buf, sizeof(buf)));
	ASSERT_STREQ("B usr2 1", buf);
	ASSERT_EQ(0, target_cycle(&t, t.pid, self->image, self->msg,
				  sizeof(self->msg))) TH_LOG("%s", self->msg);
	ASSERT_EQ(0, target_ask(&t, "b", buf, sizeof(buf)));
	EXPECT_STREQ("B usr2 1", buf);
	/* SIGUSR1 (tkill), then SIGRTMIN twice and SIGRTMIN+1 with their values. */
	ASSERT_EQ(0, target_ask(&t, "w", buf, sizeof(buf)));
	snprintf(want, sizeof(want), "%d:%d:1:0 100:%d:1:42 100:%d:1:42 101:%d:1:7",
		 SIGUSR1, SI_TKILL, SI_QUEUE, SI_QUEUE, SI_QUEUE);
	EXPECT_STREQ(want, buf);
	/* SIGUSR2 stayed B's: the main thread could not take it. */
	ASSERT_EQ(0, target_ask(&t, "b", buf, sizeof(buf)));
	EXPECT_STREQ("B usr2 1", buf);
	ASSERT_EQ(0, target_send(&t, "q"));
	EXPECT_EQ(0, target_end(&t));
}

/*
 * The restarter blocks them too while it rebuilds the process, else they
 * would be delivered with its own dispositions (and kill it).
 */
TEST_F(signals, glibc_internal_signals_stay_pending)
{
	struct target t = {};
	char buf[64];

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, target_start(&t, glibc_signals_target));
	ASSERT_EQ(0, target_ask(&t, "g", buf, sizeof(buf)));
	ASSERT_STREQ("pending 1 1", buf);
	ASSERT_EQ(0, target_cycle(&t, t.pid, self->image, self->msg,
				  sizeof(self->msg))) TH_LOG("%s", self->msg);
	ASSERT_EQ(0, target_ask(&t, "g", buf, sizeof(buf)));
	EXPECT_STREQ("pending 1 1", buf);
	ASSERT_EQ(0, target_send(&t, "q"));
	EXPECT_EQ(0, target_end(&t));
}

TEST_F(signals, an_armed_real_timer_fires_after_restart)
{
	struct target t = {};
	char buf[64];

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, target_start(&t, alarm_target));
	ASSERT_EQ(0, target_ask(&t, "g", buf, sizeof(buf)));
	ASSERT_STREQ("armed 1", buf);
	ASSERT_EQ(0, target_cycle(&t, t.pid, self->image, self->msg,
				  sizeof(self->msg))) TH_LOG("%s", self->msg);
	ASSERT_EQ(0, target_ask(&t, "g", buf, sizeof(buf)));
	EXPECT_STREQ("armed 1", buf);
	ASSERT_EQ(0, target_ask(&t, "a", buf, sizeof(buf)));
	EXPECT_STREQ("alarms 1", buf);
	ASSERT_EQ(0, target_send(&t, "q"));
	EXPECT_EQ(0, target_end(&t));
}

TEST_F(signals, virtual_itimers_and_posix_timers_are_checkpointed)
{
	void (*fns[])(void) = { virtual_timer_target, posix_timer_target };
	struct target t = {};
	char buf[16];
	unsigned int i;

	CKPT_SETUP_SKIPPED();
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, target_start(&t, fns[i]));
		ASSERT_EQ(0, target_ask(&t, "g", buf, sizeof(buf)));
		ASSERT_STREQ("armed 1", buf);
		ASSERT_EQ(0, target_cycle(&t, t.pid, self->image, self->msg,
					  sizeof(self->msg))) TH_LOG("%s", self->msg);
		ASSERT_EQ(0, target_ask(&t, "g", buf, sizeof(buf)));
		EXPECT_STREQ("armed 1", buf);
		ASSERT_EQ(0, target_send(&t, "q"));
		EXPECT_EQ(0, target_end(&t));
	}
}

TEST_HARNESS_MAIN
