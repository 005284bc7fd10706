// SPDX-License-Identifier: GPL-2.0
/*
 * The restart door as a hostile local user meets it (security.md): who
 * may call it at all, one restart per open /dev/ckpt, counts checked
 * before the engine allocates for them, every thread of the caller taking
 * part, and a lazy restart's death signal that only the engine's own
 * arming may clear. Each refusal returns an error with a message; the
 * kernel logs nothing (the VM harness checks that).
 */
#define _GNU_SOURCE
#include <stdint.h>

#include <linux/capability.h>
#include <linux/ckpt_image.h>

#include <grp.h>
#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/socket.h>

#include "kselftest_harness.h"
#include "ckpt_test.h"

#define NOBODY	65534

FIXTURE(restart) {
	char image[64];
	struct target t;
	char msg[256];
};

FIXTURE_SETUP(restart)
{
	const char *path = ckpt_module_path();

	if (!path)
		SKIP(return, "CKPT_MODULE does not name a readable ckpt.ko");
	if (!ckpt_module_loaded())
		ASSERT_EQ(0, ckpt_load_module(path));
	snprintf(self->image, sizeof(self->image), "/tmp/sec_restart.%d.img",
		 getpid());
	ASSERT_EQ(0, target_start(&self->t, counter_target));
	ASSERT_EQ(0, ckpt_checkpoint_to(self->t.pid, self->image, 0, self->msg,
					sizeof(self->msg), NULL)) TH_LOG("%s", self->msg);
}

FIXTURE_TEARDOWN(restart)
{
	if (self->t.pid > 0) {
		kill(self->t.pid, SIGKILL);
		target_end(&self->t);
	}
	unlink(self->image);
}

/* CKPT_IOC_RESTART on @dev with the image @fd; -errno, message in @msg. */
static int restart_on(int dev, int fd, __u32 nr_threads, __u32 timeout_ms,
		      char *msg, size_t len)
{
	struct ckpt_restart r = {
		.fd = fd,
		.err_fd = -1,
		.nr_threads = nr_threads,
		.timeout_ms = timeout_ms,
		.errmsg = (unsigned long)msg,
		.errmsg_len = len,
	};

	msg[0] = '\0';
	return ioctl(dev, CKPT_IOC_RESTART, &r) ? -errno : 0;
}

static int drop_to_nobody(void)
{
	/* Dumpable again, so that its /proc files are its own. */
	return setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
	       setresuid(NOBODY, NOBODY, NOBODY) ||
	       prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) ? -1 : 0;
}

/* Becomes root of a new user namespace (with every capability there). */
static int own_user_namespace(void)
{
	char map[64];
	int fd;

	if (unshare(CLONE_NEWUSER))
		return -1;
	fd = open("/proc/self/setgroups", O_WRONLY);
	if (fd < 0 || write(fd, "deny", 4) != 4)
		return -1;
	close(fd);
	snprintf(map, sizeof(map), "0 %d 1", NOBODY);
	fd = open("/proc/self/uid_map", O_WRONLY);
	if (fd < 0 || write(fd, map, strlen(map)) != (ssize_t)strlen(map))
		return -1;
	close(fd);
	fd = open("/proc/self/gid_map", O_WRONLY);
	if (fd < 0 || write(fd, map, strlen(map)) != (ssize_t)strlen(map))
		return -1;
	close(fd);
	return 0;
}

/*
 * In a child that dropped to nobody (and, with @userns, made itself root
 * of a user namespace of its own): the restart and restart-thread calls,
 * and a held restart. Exit 0: all refused with EPERM, the message naming
 * the capability, nothing sent on the hold's socket.
 */
static int unprivileged_restart(const char *image, bool userns)
{
	int status;
	pid_t pid = fork();

	if (!pid) {
		struct ckpt_restart h = {
			.err_fd = -1, .nr_threads = 1, .flags = CKPT_RESTART_HOLD,
		};
		char msg[256];
		__u32 index = 1;
		int dev, fd, sv[2];

		fd = open(image, O_RDONLY);
		dev = open("/dev/ckpt", O_RDWR);
		if (fd < 0 || dev < 0 || drop_to_nobody())
			_exit(10);
		if (userns && own_user_namespace())
			_exit(11);
		if (restart_on(dev, fd, 1, 0, msg, sizeof(msg)) != -EPERM)
			_exit(12);
		if (!strstr(msg, "CAP_CHECKPOINT_RESTORE in the initial user namespace"))
			_exit(13);
		if (ioctl(dev, CKPT_IOC_RESTART_THREAD, &index) != -1 ||
		    errno != EPERM)
			_exit(14);
		/* A held restart too, refused before its socket is used. */
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
			_exit(15);
		h.fd = fd;
		h.hold_fd = sv[0];
		if (ioctl(dev, CKPT_IOC_RESTART, &h) != -1 || errno != EPERM)
			_exit(16);
		if (recv(sv[1], msg, 1, MSG_DONTWAIT) != -1 || errno != EAGAIN)
			_exit(17);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST_F(restart, an_unprivileged_user_cannot_restart)
{
	CKPT_SETUP_SKIPPED();
	EXPECT_EQ(0, unprivileged_restart(self->image, false));
}

TEST_F(restart, a_user_namespace_of_ones_own_gives_no_restart)
{
	CKPT_SETUP_SKIPPED();
	EXPECT_EQ(0, unprivileged_restart(self->image, true));
}

/*
 * Waits up to @ms for @pid; its exit status, or -ETIMEDOUT (it is killed
 * and reaped then).
 */
static int wait_bounded(pid_t pid, int ms)
{
	int status, i;

	for (i = 0; i < ms / 10; i++) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) :
			       128 + WTERMSIG(status);
		usleep(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return -ETIMEDOUT;
}

/*
 * A restart blocked reading its image from a pipe holds the descriptor's
 * restart: a second CKPT_IOC_RESTART on the same open /dev/ckpt (a fork
 * shares it) is refused, not run beside it on the same state; so is a
 * third, after the first has failed.
 */
TEST_F(restart, one_restart_at_a_time_per_descriptor)
{
	char msg[256];
	int dev, p[2], ret;
	pid_t first;

	CKPT_SETUP_SKIPPED();
	dev = open("/dev/ckpt", O_RDWR);
	ASSERT_LE(0, dev);
	ASSERT_EQ(0, pipe(p));
	first = fork();
	ASSERT_LE(0, first);
	if (!first) {
		close(p[1]);
		/* Stalls in the read of the image: nothing is written. */
		_exit(-restart_on(dev, p[0], 1, 0, msg, sizeof(msg)));
	}
	/* The first is in when its reader waits on the pipe. */
	usleep(300000);
	ret = restart_on(dev, p[0], 1, 0, msg, sizeof(msg));
	EXPECT_EQ(-EBUSY, ret);
	EXPECT_NE(NULL, strstr(msg, "a restart already ran or runs")) TH_LOG("%s", msg);
	/* End of the image: the first fails, as a damaged image does. */
	close(p[1]);
	ret = wait_bounded(first, 10000);
	EXPECT_NE(-ETIMEDOUT, ret);
	EXPECT_NE(0, ret);
	ret = restart_on(dev, p[0], 1, 0, msg, sizeof(msg));
	EXPECT_EQ(-EBUSY, ret);
	close(p[0]);
	close(dev);
	EXPECT_TRUE(!target_send(&self->t, "s"));
}

static void *idle(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

/*
 * An image that claims more threads than the restarter made is refused
 * at its header, before the engine reads (and allocates for) the rest:
 * here the rest never comes, and the call must still return at once.
 */
TEST_F(restart, counts_are_checked_before_the_engine_allocates)
{
	struct ckpt_sect s;
	char *hdr;
	int fd, p[2], dev, ret;
	ssize_t len;
	pid_t pid;

	CKPT_SETUP_SKIPPED();
	fd = open(self->image, O_RDONLY);
	ASSERT_LE(0, fd);
	ASSERT_EQ((ssize_t)sizeof(s), read(fd, &s, sizeof(s)));
	ASSERT_EQ((__u32)CKPT_SECT_HEADER, s.type);
	len = sizeof(s) + s.len;
	hdr = malloc(len);
	ASSERT_NE(NULL, hdr);
	ASSERT_EQ(len, pread(fd, hdr, len, 0));
	close(fd);

	ASSERT_EQ(0, pipe(p));
	ASSERT_EQ(len, write(p[1], hdr, len));
	free(hdr);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		char msg[256];
		pthread_t th;

		close(p[1]);
		dev = open("/dev/ckpt", O_RDWR);
		/* The engine sees two threads made, the image has one. */
		if (dev < 0 || pthread_create(&th, NULL, idle, NULL))
			_exit(10);
		ret = restart_on(dev, p[0], 2, 0, msg, sizeof(msg));
		if (ret != -EINVAL)
			_exit(11);
		if (!strstr(msg, "the image has 1 threads, the restarter made 2"))
			_exit(12);
		_exit(0);
	}
	/* The pipe stays open: a reader that went on would wait forever. */
	ret = wait_bounded(pid, 10000);
	close(p[0]);
	close(p[1]);
	EXPECT_EQ(0, ret);
}

/*
 * A thread of the caller that does not take part would return to user
 * mode into the image's memory: a caller with more threads than it says
 * take part is refused before anything is read.
 */
TEST_F(restart, every_thread_of_the_caller_takes_part)
{
	int status;
	pid_t pid;

	CKPT_SETUP_SKIPPED();
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		char msg[256];
		pthread_t th;
		int dev, fd, ret;

		fd = open(self->image, O_RDONLY);
		dev = open("/dev/ckpt", O_RDWR);
		if (fd < 0 || dev < 0 || pthread_create(&th, NULL, idle, NULL))
			_exit(10);
		ret = restart_on(dev, fd, 1, 0, msg, sizeof(msg));
		if (ret != -EINVAL)
			_exit(11);
		if (!strstr(msg, "has 2 threads, of which 1 take part"))
			_exit(12);
		_exit(0);
	}
	status = wait_bounded(pid, 10000);
	EXPECT_EQ(0, status);
}

/* Timeouts are bounded: a u32 of milliseconds is 49 days. */
TEST_F(restart, a_timeout_above_the_limit_is_refused)
{
	char msg[256];
	int dev, fd;

	CKPT_SETUP_SKIPPED();
	fd = open(self->image, O_RDONLY);
	dev = open("/dev/ckpt", O_RDWR);
	ASSERT_LE(0, fd);
	ASSERT_LE(0, dev);
	EXPECT_EQ(-EINVAL, restart_on(dev, fd, 1, CKPT_TIMEOUT_MAX_MS + 1,
				      msg, sizeof(msg)));
	EXPECT_NE(NULL, strstr(msg, "CKPT_TIMEOUT_MAX_MS")) TH_LOG("%s", msg);
	close(fd);
	close(dev);
}

/*
 * CKPT_IOC_LAZY_DONE clears only a death signal a lazy restart armed: a
 * child's own PR_SET_PDEATHSIG is its business, not its parent's.
 */
TEST_F(restart, lazy_done_leaves_a_death_signal_the_process_set)
{
	int in[2], out[2], dev, sig = 0;
	__u32 nr;
	pid_t pid;
	char c;

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, pipe(in));
	ASSERT_EQ(0, pipe(out));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(in[1]);
		close(out[0]);
		if (prctl(PR_SET_PDEATHSIG, SIGKILL))
			_exit(10);
		if (write(out[1], "r", 1) != 1 || read(in[0], &c, 1) != 1)
			_exit(11);
		if (prctl(PR_GET_PDEATHSIG, &sig))
			_exit(12);
		_exit(sig == SIGKILL ? 0 : 13);
	}
	close(in[0]);
	close(out[1]);
	ASSERT_EQ(1, read(out[0], &c, 1));
	dev = open("/dev/ckpt", O_RDWR);
	ASSERT_LE(0, dev);
	nr = pid;
	EXPECT_EQ(-1, ioctl(dev, CKPT_IOC_LAZY_DONE, &nr));
	EXPECT_EQ(ENOENT, errno);
	close(dev);
	ASSERT_EQ(1, write(in[1], "g", 1));
	EXPECT_EQ(0, wait_bounded(pid, 10000));
	close(in[1]);
	close(out[0]);
}

TEST_HARNESS_MAIN
