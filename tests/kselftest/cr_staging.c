// SPDX-License-Identifier: GPL-2.0
/*
 * A checkpoint that lets the process continue copies its pages while it is
 * frozen and writes them after the thaw (mm.c, "Staging"). The image must
 * still be one instant of the process: a thread sweeps a 48 MiB buffer
 * without pause, writing the pass number into every word, so the buffer
 * always reads "k up to some word, k - 1 after it"; an image with any page
 * taken after the thaw shows a later pass behind an earlier one. Checked
 * with staging as it comes (everything staged), with none (stage_max_mb=0)
 * and with a 1 MiB budget (some staged, the rest written frozen). And a
 * checkpoint whose image cannot be written (a full file system) fails
 * naming it, with the process running on unharmed, whether it was to
 * continue or to be killed.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mount.h>
#include <time.h>

#include "kselftest_harness.h"
#include "ckpt_test.h"

#define WORDS		((48UL << 20) / sizeof(uint64_t))
#define PARAM		"/sys/module/ckpt/parameters/stage_max_mb"

static uint64_t *words;
static atomic_int stop;

/* Sweeps until told to stop, or for at most 10 minutes. */
static void *sweeper(void *arg)
{
	time_t end = time(NULL) + 600;
	uint64_t k;
	size_t i;

	(void)arg;
	for (k = 1; time(NULL) < end; k++) {
		for (i = 0; i < WORDS; i++) {
			if (!(i & 4095) &&
			    atomic_load_explicit(&stop, memory_order_relaxed))
				return NULL;
			words[i] = k;
		}
	}
	return NULL;
}

/*
 * Stops the sweep and checks the buffer: "ok" or where it is torn. A word
 * is stored whole, so the sweeper can stop between any two.
 */
static void check(pthread_t thread)
{
	uint64_t a, b;
	size_t i;

	atomic_store(&stop, 1);
	pthread_join(thread, NULL);
	a = words[0];
	b = words[WORDS - 1];
	if (a != b && a != b + 1) {
		target_say("torn: first %llu, last %llu", (unsigned long long)a,
			   (unsigned long long)b);
		return;
	}
	for (i = 0; i < WORDS && words[i] == a; i++)
		;
	for (; i < WORDS && words[i] == b; i++)
		;
	if (i < WORDS)
		target_say("torn at word %zu: %llu after %llu..%llu", i,
			   (unsigned long long)words[i], (unsigned long long)a,
			   (unsigned long long)b);
	else
		target_say("ok %llu", (unsigned long long)a);
}

static void sweep_target(void)
{
	pthread_t thread;
	char c;

	words = mmap(NULL, WORDS * sizeof(uint64_t), PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (words == MAP_FAILED)
		_exit(10);
	memset(words, 0, WORDS * sizeof(uint64_t));
	if (pthread_create(&thread, NULL, sweeper, NULL))
		_exit(11);
	/* Under way: at least one pass done. */
	while (!words[WORDS - 1])
		sched_yield();
	for (;;) {
		if (read(0, &c, 1) != 1)
			_exit(3);
		switch (c) {
		case 'a':	/* alive: the sweep goes on */
			target_say("%llu", (unsigned long long)words[0]);
			break;
		case 'v':
			check(thread);
			break;
		case 'q':
			_exit(0);
		}
	}
}

static int set_param(const char *value)
{
	int fd = open(PARAM, O_WRONLY | O_CLOEXEC);
	ssize_t len = strlen(value);
	int ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, value, len) != len)
		ret = -errno;
	close(fd);
	return ret;
}

FIXTURE(staging) {
	char image[64];
};

FIXTURE_VARIANT(staging) {
	const char *max_mb;
};

FIXTURE_VARIANT_ADD(staging, all) {
	.max_mb = "-1",
};

FIXTURE_VARIANT_ADD(staging, none) {
	.max_mb = "0",
};

FIXTURE_VARIANT_ADD(staging, one_mb) {
	.max_mb = "1",
};

FIXTURE_SETUP(staging)
{
	const char *path = ckpt_module_path();

	if (!path)
		SKIP(return, "CKPT_MODULE does not name a readable ckpt.ko");
	if (!ckpt_module_loaded())
		ASSERT_EQ(0, ckpt_load_module(path));
	ASSERT_EQ(0, set_param(variant->max_mb));
	snprintf(self->image, sizeof(self->image), "/tmp/cr_staging.%d.img",
		 getpid());
}

FIXTURE_TEARDOWN(staging)
{
	set_param("-1");
	unlink(self->image);
}

TEST_F(staging, one_instant)
{
	struct ckpt_checkpoint info = {};
	struct target t = {};
	char msg[256], buf[128], a1[32], a2[32];
	int status;

	CKPT_SETUP_SKIPPED();

	ASSERT_EQ(0, target_start(&t, sweep_target));
	/* Answered once the sweep is under way. */
	ASSERT_EQ(0, target_ask(&t, "a", a1, sizeof(a1)));
	ASSERT_EQ(0, ckpt_checkpoint_to(t.pid, self->image, 0, msg, sizeof(msg),
					&info)) TH_LOG("checkpoint: %s", msg);
	EXPECT_EQ(2U, info.nr_threads);
	EXPECT_GE(info.nr_pages, WORDS * sizeof(uint64_t) / 4096);

	/* The original sweeps on, and its buffer is whole. */
	ASSERT_EQ(0, target_ask(&t, "a", a1, sizeof(a1)));
	do {
		ASSERT_EQ(0, target_ask(&t, "a", a2, sizeof(a2)));
	} while (!strcmp(a1, a2));
	ASSERT_EQ(0, target_ask(&t, "v", buf, sizeof(buf)));
	EXPECT_EQ(0, strncmp(buf, "ok ", 3)) TH_LOG("original: %s", buf);
	status = target_end(&t);
	ASSERT_TRUE(WIFEXITED(status));

	/* The restored one sweeps on from the instant of the checkpoint. */
	ASSERT_EQ(0, target_restart(&t, self->image));
	ASSERT_EQ(0, target_ask(&t, "a", a1, sizeof(a1)));
	do {
		ASSERT_EQ(0, target_ask(&t, "a", a2, sizeof(a2)));
	} while (!strcmp(a1, a2));
	ASSERT_EQ(0, target_ask(&t, "v", buf, sizeof(buf)));
	EXPECT_EQ(0, strncmp(buf, "ok ", 3)) TH_LOG("restored: %s", buf);
	ASSERT_EQ(0, target_send(&t, "q"));
	status = target_end(&t);
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

/*
 * A file system too small for the image: the checkpoint fails with ENOSPC
 * and says so; the process, to continue or to be killed, runs on.
 */
TEST_F(staging, full_disk)
{
	static const unsigned int modes[] = { 0, CKPT_CHECKPOINT_KILL };
	char dir[64], image[96], msg[256], buf[128], a1[32], a2[32];
	struct target t = {};
	unsigned int i;
	int status, ret;

	CKPT_SETUP_SKIPPED();

	snprintf(dir, sizeof(dir), "/tmp/cr_staging.%d.full", getpid());
	snprintf(image, sizeof(image), "%s/img", dir);
	ASSERT_EQ(0, mkdir(dir, 0700));
	ASSERT_EQ(0, mount("none", dir, "tmpfs", 0, "size=4m"));
	ASSERT_EQ(0, target_start(&t, sweep_target));
	ASSERT_EQ(0, target_ask(&t, "a", a1, sizeof(a1)));
	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		ret = ckpt_checkpoint_to(t.pid, image, modes[i], msg,
					 sizeof(msg), NULL);
		EXPECT_EQ(-ENOSPC, ret) TH_LOG("mode %u: %s", modes[i], msg);
		EXPECT_NE(NULL, strstr(msg, "writing the image failed"))
			TH_LOG("mode %u: %s", modes[i], msg);
		unlink(image);
		ASSERT_EQ(0, target_ask(&t, "a", a1, sizeof(a1)));
		do {
			ASSERT_EQ(0, target_ask(&t, "a", a2, sizeof(a2)));
		} while (!strcmp(a1, a2));
	}
	ASSERT_EQ(0, target_ask(&t, "v", buf, sizeof(buf)));
	EXPECT_EQ(0, strncmp(buf, "ok ", 3)) TH_LOG("%s", buf);
	ASSERT_EQ(0, target_send(&t, "q"));
	status = target_end(&t);
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	umount(dir);
	rmdir(dir);
}

TEST_HARNESS_MAIN
