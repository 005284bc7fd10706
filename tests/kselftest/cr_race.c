// SPDX-License-Identifier: GPL-2.0
/*
 * A process that dies, exits or execs while it is being checkpointed: the
 * checkpoint either succeeds or fails with a message, and the kernel logs
 * nothing (the VM harness fails the run on any oops or warning). The park
 * is a killable wait, so a process killed and reaped while parked has no
 * signal handlers any more (tsk->sighand NULL) when the engine reads them.
 *
 * Each try: a parent that reaps its children at once (SIGCHLD ignored)
 * starts the target, which holds nothing but its stdio and has no child;
 * on "go" the test checkpoints the target while the parent kills it, or
 * the target exits or execs (from its main thread or another one), after a
 * random delay of up to one and a half checkpoints. Bounded: at most 100
 * tries and 20 s per kind (the harness gives each 60 s).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <time.h>

#include "kselftest_harness.h"
#include "ckpt_test.h"

#define TRIES		100
#define SECONDS		20

enum race { KILL, EXIT, EXEC, EXEC_THREAD };

static unsigned int delay_us;

static void *exec_later(void *arg)
{
	(void)arg;
	usleep(delay_us);
	execl("/bin/sleep", "sleep", "1", (char *)NULL);
	_exit(7);
}

/* The target: idles in short sleeps until it is killed, exits or execs. */
static void target(enum race race)
{
	pthread_t th;
	int i;

	if (race == EXEC_THREAD && pthread_create(&th, NULL, exec_later, NULL))
		_exit(6);
	for (i = 0; i < 2000; i++) {
		if ((race == EXIT || race == EXEC) &&
		    (unsigned int)i * 1000 >= delay_us) {
			if (race == EXIT)
				_exit(0);
			execl("/bin/sleep", "sleep", "1", (char *)NULL);
			_exit(7);
		}
		usleep(1000);
	}
	_exit(5);
}

/*
 * One try: the target's parent, told "go" over @go, kills the target after
 * delay_us (or lets it exit or exec on its own, killing it later).
 */
static pid_t start(enum race race, int go[2], pid_t *tpid)
{
	int info[2];
	pid_t parent;
	char c;

	if (pipe(go) || pipe(info))
		return -1;
	parent = fork();
	if (!parent) {
		pid_t t;

		signal(SIGCHLD, SIG_IGN);	/* released as soon as it dies */
		t = fork();
		if (!t) {
			/* Told once it holds nothing the engine refuses. */
			t = getpid();
			close(go[0]);
			close(go[1]);
			close(info[0]);
			syscall(SYS_close_range, 3, info[1] - 1, 0);
			syscall(SYS_close_range, info[1] + 1, ~0U, 0);
			if (write(info[1], &t, sizeof(t)) != sizeof(t))
				_exit(3);
			close(info[1]);
			target(race);
		}
		close(go[1]);
		close(info[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(2);
		/* Else past its own exit or exec, and the checkpoint. */
		usleep(race == KILL ? delay_us : delay_us + 100000);
		kill(t, SIGKILL);
		usleep(10000);
		_exit(0);
	}
	close(info[1]);
	close(go[0]);
	if (parent < 0 || read(info[0], tpid, sizeof(*tpid)) != sizeof(*tpid)) {
		close(info[0]);
		return -1;
	}
	close(info[0]);
	return parent;
}

/* For the first, timed checkpoint: idles until its stdin closes. */
static void idle_target(void)
{
	char c;

	while (read(0, &c, 1) == 1)
		;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

FIXTURE(race) {
	char image[64];
	unsigned long long span_us;	/* one and a half checkpoints */
};

FIXTURE_SETUP(race)
{
	const char *path = ckpt_module_path();
	struct ckpt_checkpoint a = {};
	struct target t = {};
	char msg[256];

	if (!path)
		SKIP(return, "CKPT_MODULE does not name a readable ckpt.ko");
	if (!ckpt_module_loaded())
		ASSERT_EQ(0, ckpt_load_module(path));
	snprintf(self->image, sizeof(self->image), "/tmp/cr_race.%d.img",
		 getpid());
	srand(getpid());

	/* How long one checkpoint of such a process takes here. */
	delay_us = 0;
	ASSERT_EQ(0, target_start(&t, idle_target));
	ASSERT_EQ(0, ckpt_checkpoint_to(t.pid, self->image, 0, msg, sizeof(msg),
					&a)) TH_LOG("%s", msg);
	kill(t.pid, SIGKILL);
	target_end(&t);
	self->span_us = a.total_ns / 1000 * 3 / 2 + 1000;
	TH_LOG("one checkpoint: %llu us; delays up to %llu us",
	       (unsigned long long)a.total_ns / 1000, self->span_us);
}

FIXTURE_TEARDOWN(race)
{
	unlink(self->image);
}

static void race(struct __test_metadata *_metadata,
		 FIXTURE_DATA(race) *self, enum race race)
{
	unsigned int tries, done = 0, failed = 0, bad = 0;
	long long end = now_ms() + SECONDS * 1000;
	char msg[256], last[256] = "";
	int go[2], status;
	pid_t parent, t;

	for (tries = 0; tries < TRIES && now_ms() < end; tries++) {
		int ret;

		delay_us = rand() % self->span_us;
		parent = start(race, go, &t);
		ASSERT_LT(0, parent);
		ASSERT_EQ(1, write(go[1], "g", 1));
		close(go[1]);
		ret = ckpt_checkpoint_to(t, self->image, 0, msg, sizeof(msg),
					 NULL);
		if (!ret) {
			done++;
		} else if (msg[0]) {
			failed++;
			snprintf(last, sizeof(last), "%d: %s", ret, msg);
		} else {
			bad++;
			TH_LOG("try %u (delay %u us): error %d without a message",
			       tries, delay_us, ret);
		}
		ASSERT_EQ(parent, waitpid(parent, &status, 0));
	}
	TH_LOG("%u tries: %u checkpointed, %u refused (last: %s)", tries, done,
	       failed, last);
	EXPECT_EQ(0U, bad);
	EXPECT_LT(0U, tries);
}

TEST_F_TIMEOUT(race, killed_during_the_checkpoint, 60)
{
	CKPT_SETUP_SKIPPED();
	race(_metadata, self, KILL);
}

TEST_F_TIMEOUT(race, exits_during_the_checkpoint, 60)
{
	CKPT_SETUP_SKIPPED();
	race(_metadata, self, EXIT);
}

TEST_F_TIMEOUT(race, execs_during_the_checkpoint, 60)
{
	CKPT_SETUP_SKIPPED();
	race(_metadata, self, EXEC);
}

TEST_F_TIMEOUT(race, another_thread_execs_during_the_checkpoint, 60)
{
	CKPT_SETUP_SKIPPED();
	race(_metadata, self, EXEC_THREAD);
}

TEST_HARNESS_MAIN
