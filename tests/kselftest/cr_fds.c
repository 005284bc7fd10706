// SPDX-License-Identifier: GPL-2.0
/*
 * eventfd, signalfd and epoll descriptors survive a checkpoint and restart:
 * an eventfd keeps its count and semaphore mode, a signalfd its mask (and
 * the signal pending for it), an epoll instance its interest list with
 * events and data. An epoll watching a descriptor since closed is refused,
 * named.
 */
#define _GNU_SOURCE

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>

#include "kselftest_harness.h"
#include "ckpt_test.h"

static void say(const char *line)
{
	if (write(1, line, strlen(line)) < 0 || write(1, "\n", 1) != 1)
		_exit(8);
}

/*
 * fd 3: eventfd, count 5; fd 4: eventfd, semaphore, count 3, non-blocking;
 * fd 5: signalfd for SIGUSR1 (pending); fd 6: epoll watching 3 (data 33)
 * and 5 (data 55), and 4 once-only (already fired, so disabled).
 */
static void anon_target(void)
{
	struct epoll_event ev = { .events = EPOLLIN };
	char c, line[256];
	sigset_t mask;
	uint64_t v;
	int n, i;

	sigemptyset(&mask);
	sigaddset(&mask, SIGUSR1);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	if (eventfd(5, 0) != 3 || eventfd(3, EFD_SEMAPHORE | EFD_NONBLOCK) != 4 ||
	    signalfd(-1, &mask, 0) != 5 || epoll_create1(0) != 6)
		_exit(9);
	ev.data.u64 = 33;
	epoll_ctl(6, EPOLL_CTL_ADD, 3, &ev);
	ev.data.u64 = 55;
	epoll_ctl(6, EPOLL_CTL_ADD, 5, &ev);
	ev.events = EPOLLIN | EPOLLONESHOT;
	ev.data.u64 = 44;
	epoll_ctl(6, EPOLL_CTL_ADD, 4, &ev);
	kill(getpid(), SIGUSR1);
	for (;;) {
		struct epoll_event got[8];
		struct signalfd_siginfo ssi;
		unsigned long long seen = 0;

		if (read(0, &c, 1) != 1)
			_exit(3);
		if (c == 'q')
			_exit(0);
		if (c == 'e') {		/* fire the once-only item */
			n = epoll_wait(6, got, 8, 0);
			say(n == 3 ? "fired" : "not fired");
			continue;
		}
		if (c != 'p')
			continue;
		/* What epoll reports now, by data, summed as a set. */
		n = epoll_wait(6, got, 8, 0);
		for (i = 0; i < n; i++)
			seen |= 1ULL << (got[i].data.u64 % 64);
		line[0] = '\0';
		snprintf(line, sizeof(line), "epoll %d:%llx", n, seen);
		/* The semaphore hands out ones; the plain one its whole count. */
		if (read(4, &v, 8) != 8)
			_exit(10);
		snprintf(line + strlen(line), sizeof(line) - strlen(line), " sem %llu",
			 (unsigned long long)v);
		if (read(3, &v, 8) != 8)
			_exit(10);
		snprintf(line + strlen(line), sizeof(line) - strlen(line), " plain %llu",
			 (unsigned long long)v);
		if (read(5, &ssi, sizeof(ssi)) != sizeof(ssi))
			_exit(10);
		snprintf(line + strlen(line), sizeof(line) - strlen(line), " sig %u",
			 ssi.ssi_signo);
		/* Left: sem 2 (non-blocking), plain 0; give them back. */
		v = 1;
		if (write(4, &v, 8) != 8)
			_exit(10);
		v = 5;
		if (write(3, &v, 8) != 8)
			_exit(10);
		kill(getpid(), SIGUSR1);
		n = fcntl(4, F_GETFL) & O_NONBLOCK;
		snprintf(line + strlen(line), sizeof(line) - strlen(line), " nb %d",
			 !!n);
		say(line);
	}
}

/* fd 4: epoll watching fd 3, which is then closed (the item stays). */
static void stale_epoll_target(void)
{
	struct epoll_event ev = { .events = EPOLLIN };
	char c;
	int fd = eventfd(0, 0), dup;

	if (fd != 3 || epoll_create1(0) != 4)
		_exit(9);
	dup = fcntl(3, F_DUPFD, 10);	/* keeps the file open */
	epoll_ctl(4, EPOLL_CTL_ADD, 3, &ev);
	close(3);
	(void)dup;
	while (read(0, &c, 1) == 1 && c != 'q')
		say("set");
	_exit(0);
}

FIXTURE(fds) {
	char image[64];
	char msg[256];
};

FIXTURE_SETUP(fds)
{
	const char *path = ckpt_module_path();

	if (!path)
		SKIP(return, "CKPT_MODULE does not name a readable ckpt.ko");
	if (!ckpt_module_loaded())
		ASSERT_EQ(0, ckpt_load_module(path));
	snprintf(self->image, sizeof(self->image), "/tmp/cr_fds.%d.img", getpid());
}

FIXTURE_TEARDOWN(fds)
{
	unlink(self->image);
}

TEST_F(fds, eventfd_signalfd_and_epoll_come_back)
{
	struct target t = {};
	char before[256], after[256];
	pid_t pid;
	int cycle;

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, target_start(&t, anon_target));
	pid = t.pid;
	ASSERT_EQ(0, target_ask(&t, "e", before, sizeof(before)));
	ASSERT_STREQ("fired", before);
	/* 33 and 55 ready (44 disabled); sem gives 1, plain 5; SIGUSR1. */
	ASSERT_EQ(0, target_ask(&t, "p", before, sizeof(before)));
	EXPECT_STREQ("epoll 2:80000200000000 sem 1 plain 5 sig 10 nb 1", before);

	for (cycle = 0; cycle < 2; cycle++) {
		ASSERT_EQ(0, ckpt_checkpoint_to(pid, self->image, CKPT_CHECKPOINT_KILL,
						self->msg, sizeof(self->msg), NULL))
			TH_LOG("%s", self->msg);
		target_end(&t);
		ASSERT_EQ(0, target_restart(&t, self->image));
		ASSERT_EQ(0, target_ask(&t, "p", after, sizeof(after)));
		EXPECT_STREQ(before, after);
	}
	ASSERT_EQ(0, target_send(&t, "q"));
	EXPECT_EQ(0, target_end(&t));
}

TEST_F(fds, an_epoll_watching_a_closed_descriptor_is_refused)
{
	struct target t = {};
	char buf[16];

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, target_start(&t, stale_epoll_target));
	ASSERT_EQ(0, target_ask(&t, "s", buf, sizeof(buf)));
	EXPECT_EQ(-EOPNOTSUPP, ckpt_checkpoint_to(t.pid, self->image, 0, self->msg,
						  sizeof(self->msg), NULL));
	EXPECT_NE(NULL, strstr(self->msg, "epoll fd 4 watches fd 3")) TH_LOG("%s", self->msg);
	EXPECT_EQ(0, kill(t.pid, 0));
	ASSERT_EQ(0, target_send(&t, "q"));
	target_end(&t);
}

TEST_HARNESS_MAIN
