// SPDX-License-Identifier: GPL-2.0
/*
 * What must fail, fails clearly and loses nothing: bad requests, missing
 * rights, resources the engine cannot restore yet, processes that do not
 * reach a safe point, damaged images and taken pids. After every refused
 * checkpoint the target still runs as before; no refused restart creates a
 * process; the kernel logs no warning (the VM harness checks that).
 */
#define _GNU_SOURCE
#include <stdint.h>

#include <linux/ckpt_image.h>

#include <grp.h>
#include <sys/epoll.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/sem.h>
#include <sys/ptrace.h>
#include <sys/socket.h>

#include "kselftest_harness.h"
#include "ckpt_test.h"

/* A target holding a descriptor the engine cannot restore yet: UDP. */
static void fd_target(void)
{
	if (socket(AF_INET, SOCK_DGRAM, 0) != 3)
		_exit(9);
	counter_target();
}

/*
 * A target that used semaphore undo: an operation with SEM_UNDO on a set
 * of an IPC namespace of its own, which a single process's image does not
 * hold (only a tree's does).
 */
static void undo_target(void)
{
	struct sembuf op = { 0, 1, SEM_UNDO };
	int id;

	if (unshare(CLONE_NEWIPC))
		_exit(9);
	id = semget(IPC_PRIVATE, 1, 0600);
	if (id < 0 || semop(id, &op, 1))
		_exit(9);
	counter_target();
}

/*
 * A socket pair (fds 3 and 4) whose fd 3 takes its senders' credentials
 * (SO_PASSCRED): a message from fd 4 waits there, with them; with
 * @passcred 0, the same without.
 */
static void creds_target_of(int passcred)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) || sv[0] != 3 ||
	    setsockopt(sv[0], SOL_SOCKET, SO_PASSCRED, &passcred,
		       sizeof(passcred)) ||
	    send(sv[1], "who", 3, 0) != 3)
		_exit(9);
	counter_target();
}

static void creds_target(void)
{
	creds_target_of(1);
}

static void no_creds_target(void)
{
	creds_target_of(0);
}

/*
 * The same, fd 4, between an epoll (fd 3) and the pipe it watches (fd 5),
 * which the scan never reaches.
 */
static void fd_epoll_target(void)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int p[2];

	if (epoll_create1(0) != 3 || socket(AF_INET, SOCK_DGRAM, 0) != 4 ||
	    pipe(p) || p[0] != 5 || epoll_ctl(3, EPOLL_CTL_ADD, 5, &ev))
		_exit(9);
	counter_target();
}

/*
 * A target with a relative the image cannot hold: a child ('c', which
 * exits at once and stays a zombie until 'w' reaps it) or a tracee ('t',
 * a child that then leaves to init but stays traced). It prints the other
 * pid each time.
 */
static void relatives_target(void)
{
	unsigned long n = 0;
	pid_t other = 0;
	char c;

	for (;;) {
		if (read(0, &c, 1) != 1)
			_exit(3);
		switch (c) {
		case 'c':
			other = fork();
			if (!other)
				_exit(0);
			break;
		case 't': {
			int p[2];
			pid_t child;

			if (pipe(p))
				_exit(9);
			child = fork();
			if (!child) {
				/* A grandchild, so that the tracee is no child. */
				other = getpid();
				if (fork())
					_exit(0);
				other = getpid();
				if (write(p[1], &other, sizeof(other)) != sizeof(other))
					_exit(9);
				for (;;)
					pause();
			}
			if (waitpid(child, NULL, 0) != child ||
			    read(p[0], &other, sizeof(other)) != sizeof(other) ||
			    ptrace(PTRACE_SEIZE, other, 0, 0))
				_exit(9);
			close(p[0]);
			close(p[1]);
			break;
		}
		case 'w':
			waitpid(other, NULL, 0);
			other = 0;
			break;
		case 's':
			n++;
			break;
		}
		printf("%lu %d\n", n, other);
		fflush(stdout);
	}
}

/* Stops @pid and waits until it really is stopped (state T). */
/* Waits (at most 5 s) until @pid is in @state as /proc/PID/stat shows it. */
static int wait_state(pid_t pid, char state)
{
	char path[64], buf[256], *p;
	int i, fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	for (i = 0; i < 5000; i++) {
		fd = open(path, O_RDONLY);
		n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
		if (fd >= 0)
			close(fd);
		if (n > 0) {
			buf[n] = '\0';
			p = strrchr(buf, ')');
			if (p && p[1] == ' ' && p[2] == state)
				return 0;
		}
		usleep(1000);
	}
	return -ETIMEDOUT;
}

static int stop_and_wait(pid_t pid)
{
	if (kill(pid, SIGSTOP))
		return -errno;
	return wait_state(pid, 'T');
}

static int ioctl_checkpoint(struct ckpt_checkpoint *a)
{
	int dev = open("/dev/ckpt", O_RDWR | O_CLOEXEC), ret;

	if (dev < 0)
		return -errno;
	ret = ioctl(dev, CKPT_IOC_CHECKPOINT, a) ? -errno : 0;
	close(dev);
	return ret;
}

FIXTURE(errors) {
	char image[64];
	struct target t;
	char msg[256];
};

FIXTURE_SETUP(errors)
{
	const char *path = ckpt_module_path();

	if (!path)
		SKIP(return, "CKPT_MODULE does not name a readable ckpt.ko");
	if (!ckpt_module_loaded())
		ASSERT_EQ(0, ckpt_load_module(path));
	snprintf(self->image, sizeof(self->image), "/tmp/cr_errors.%d.img",
		 getpid());
	ASSERT_EQ(0, target_start(&self->t, counter_target));
	/*
	 * Counted before any test runs: an image taken with the 's' still
	 * in the pipe (a busy machine) would restart counting 0.
	 */
	ASSERT_EQ(0, target_ask(&self->t, "sp", self->msg, sizeof(self->msg)));
	ASSERT_STREQ("1", self->msg);
}

FIXTURE_TEARDOWN(errors)
{
	if (self->t.pid > 0) {
		kill(self->t.pid, SIGKILL);
		target_end(&self->t);
	}
	unlink(self->image);
}

/* The target still answers, with its count intact. */
static bool target_alive(struct target *t, const char *want)
{
	char buf[32];

	return !target_ask(t, "p", buf, sizeof(buf)) && !strcmp(buf, want);
}

TEST_F(errors, bad_requests)
{
	struct ckpt_checkpoint a = { .pid = self->t.pid, .fd = 1 };

	CKPT_SETUP_SKIPPED();

	a.flags = __CKPT_CHECKPOINT_F_ALL + 1;	/* unknown */
	EXPECT_EQ(-EINVAL, ioctl_checkpoint(&a));
	a.flags = CKPT_CHECKPOINT_STOP | CKPT_CHECKPOINT_KILL;
	EXPECT_EQ(-EINVAL, ioctl_checkpoint(&a));
	a.flags = 0;
	a.reserved[2] = 1;
	EXPECT_EQ(-EINVAL, ioctl_checkpoint(&a));
	a.reserved[2] = 0;
	a.fd = -1;
	EXPECT_EQ(-EBADF, ioctl_checkpoint(&a));
	EXPECT_TRUE(target_alive(&self->t, "1"));
}

/*
 * The timeout is a u32 of milliseconds: up to 49 days of a frozen
 * process. More than CKPT_TIMEOUT_MAX_MS (10 minutes) is refused, named,
 * before anything is looked at; the limit itself is taken.
 */
TEST_F(errors, timeout_above_ten_minutes_is_refused)
{
	struct ckpt_checkpoint a = {
		.pid = self->t.pid,
		.timeout_ms = CKPT_TIMEOUT_MAX_MS + 1,
		.errmsg = (unsigned long)self->msg,
		.errmsg_len = sizeof(self->msg),
	};
	int fd;

	CKPT_SETUP_SKIPPED();

	fd = open(self->image, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ASSERT_LE(0, fd);
	a.fd = fd;
	EXPECT_EQ(-EINVAL, ioctl_checkpoint(&a));
	EXPECT_NE(NULL, strstr(self->msg, "timeout_ms is above")) TH_LOG("%s", self->msg);
	a.timeout_ms = ~0U;
	EXPECT_EQ(-EINVAL, ioctl_checkpoint(&a));
	a.timeout_ms = CKPT_TIMEOUT_MAX_MS;
	EXPECT_EQ(0, ioctl_checkpoint(&a)) TH_LOG("%s", self->msg);
	close(fd);
	EXPECT_TRUE(target_alive(&self->t, "1"));
}

TEST_F(errors, no_such_process)
{
	CKPT_SETUP_SKIPPED();

	EXPECT_EQ(-ESRCH, ckpt_checkpoint_to(0x3ffffff, self->image, 0,
					     self->msg, sizeof(self->msg), NULL));
	EXPECT_NE(NULL, strstr(self->msg, "no process with pid"));
}

TEST_F(errors, not_itself)
{
	CKPT_SETUP_SKIPPED();

	EXPECT_EQ(-EDEADLK, ckpt_checkpoint_to(getpid(), self->image, 0,
					       self->msg, sizeof(self->msg),
					       NULL));
}

#define NOBODY	65534

/*
 * Targets of user nobody, as a setuid or setgid program or one keeping
 * capabilities would be: kind 0 plain, 1 with a saved uid of root, 2 with
 * a saved gid of root, 3 holding permitted capabilities, 4 not dumpable.
 * All but 4 say they are dumpable (changing ids made them not).
 */
static int nobody_kind;

static void nobody_target(void)
{
	int k = nobody_kind;

	if (setgroups(0, NULL) ||
	    setresgid(NOBODY, NOBODY, k == 2 ? 0 : NOBODY) ||
	    (k == 3 && prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0)) ||
	    setresuid(NOBODY, NOBODY, k == 1 ? 0 : NOBODY) ||
	    prctl(PR_SET_DUMPABLE, k != 4, 0, 0, 0))
		_exit(9);
	counter_target();
}

/* As user nobody: checkpoints @pid, 0 or -errno and the message. */
static int checkpoint_as_nobody(pid_t pid, char *msg, size_t len)
{
	int p[2], status, ret = -EIO;
	pid_t child;

	if (pipe(p))
		return -errno;
	child = fork();
	if (!child) {
		char image[64], buf[256];

		snprintf(image, sizeof(image), "/tmp/cr_errors.nobody.%d.img",
			 getpid());
		if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
		    setresuid(NOBODY, NOBODY, NOBODY))
			_exit(2);
		ret = ckpt_checkpoint_to(pid, image, 0, buf, sizeof(buf), NULL);
		unlink(image);
		if (write(p[1], &ret, sizeof(ret)) != sizeof(ret) ||
		    write(p[1], buf, strlen(buf) + 1) < 0)
			_exit(3);
		_exit(0);
	}
	close(p[1]);
	msg[0] = '\0';
	if (read(p[0], &ret, sizeof(ret)) != sizeof(ret) ||
	    read(p[0], msg, len - 1) < 0)
		ret = -EIO;
	msg[len - 1] = '\0';
	close(p[0]);
	waitpid(child, &status, 0);
	return ret;
}

TEST_F(errors, a_privileged_process_of_the_same_user_is_refused)
{
	static const char *const why[] = {
		NULL,
		"the process belongs to another user or is privileged",
		"the process belongs to another user or is privileged",
		"the process belongs to another user or is privileged",
		"the process is not dumpable (setuid, setgid or it said so)",
	};
	struct target t = {};
	char buf[32];
	int k;

	CKPT_SETUP_SKIPPED();

	for (k = 0; k < 5; k++) {
		nobody_kind = k;
		ASSERT_EQ(0, target_start(&t, nobody_target)) TH_LOG("kind %d", k);
		ASSERT_EQ(0, target_send(&t, "s"));
		/* It says "ready" before it changes ids: wait until it has. */
		ASSERT_TRUE(target_alive(&t, "1")) TH_LOG("kind %d", k);
		if (!why[k]) {
			/* The same user may checkpoint its own plain process. */
			EXPECT_EQ(0, checkpoint_as_nobody(t.pid, self->msg,
							  sizeof(self->msg)))
				TH_LOG("%s", self->msg);
		} else {
			EXPECT_EQ(-EPERM, checkpoint_as_nobody(t.pid, self->msg,
							       sizeof(self->msg)))
				TH_LOG("kind %d", k);
			EXPECT_NE(NULL, strstr(self->msg, why[k]))
				TH_LOG("kind %d: %s", k, self->msg);
		}
		/* Untouched either way. */
		EXPECT_EQ(0, target_ask(&t, "p", buf, sizeof(buf)));
		EXPECT_STREQ("1", buf);
		ASSERT_EQ(0, target_send(&t, "q"));
		target_end(&t);
	}
}

TEST_F(errors, other_users_process)
{
	int status;
	pid_t pid;

	CKPT_SETUP_SKIPPED();

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		char msg[256], image[] = "/tmp/cr_errors.nobody.img";

		if (setgid(65534) || setuid(65534))
			_exit(2);
		_exit(ckpt_checkpoint_to(self->t.pid, image, 0, msg,
					 sizeof(msg), NULL) == -EPERM &&
		      strstr(msg, "another user") ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_TRUE(target_alive(&self->t, "1"));
}

TEST_F(errors, unsupported_fd_is_named)
{
	struct target t = {};

	CKPT_SETUP_SKIPPED();

	ASSERT_EQ(0, target_start(&t, fd_target));
	ASSERT_EQ(0, target_send(&t, "s"));
	ASSERT_TRUE(target_alive(&t, "1"));	/* fd 3 is open by now */
	ASSERT_EQ(0, target_send(&t, "s"));
	EXPECT_EQ(-EOPNOTSUPP, ckpt_checkpoint_to(t.pid, self->image, 0,
						  self->msg, sizeof(self->msg),
						  NULL));
	EXPECT_NE(NULL, strstr(self->msg, "fd 3 (socket:["))
		TH_LOG("message: %s", self->msg);
	EXPECT_TRUE(target_alive(&t, "2"));
	kill(t.pid, SIGKILL);
	target_end(&t);
}

/* Its adjustments would be lost: refused by name, and it runs on. */
TEST_F(errors, semaphore_undo_of_a_single_process_is_refused_named)
{
	struct target t = {};
	char want[160];

	CKPT_SETUP_SKIPPED();

	ASSERT_EQ(0, target_start(&t, undo_target));
	ASSERT_EQ(0, target_send(&t, "s"));
	ASSERT_TRUE(target_alive(&t, "1"));	/* its semop() is done by now */
	ASSERT_EQ(0, target_send(&t, "s"));
	EXPECT_EQ(-EOPNOTSUPP, ckpt_checkpoint_to(t.pid, self->image, 0,
						  self->msg, sizeof(self->msg),
						  NULL));
	snprintf(want, sizeof(want),
		 "pid %d uses System V semaphore undo (SEM_UNDO): restored only in a process tree",
		 t.pid);
	EXPECT_NE(NULL, strstr(self->msg, want)) TH_LOG("message: %s", self->msg);
	EXPECT_TRUE(target_alive(&t, "2"));
	kill(t.pid, SIGKILL);
	target_end(&t);
}

/*
 * A queued message's credentials, which its reader takes, would come back
 * as the restarter's: refused by name, and it runs on. Without
 * SO_PASSCRED the same message is no obstacle.
 */
TEST_F(errors, credentials_queued_for_a_reader_that_takes_them_are_refused_named)
{
	struct target t = {};

	CKPT_SETUP_SKIPPED();

	ASSERT_EQ(0, target_start(&t, creds_target));
	ASSERT_EQ(0, target_send(&t, "s"));
	ASSERT_TRUE(target_alive(&t, "1"));	/* its message is queued by now */
	ASSERT_EQ(0, target_send(&t, "s"));
	EXPECT_EQ(-EOPNOTSUPP, ckpt_checkpoint_to(t.pid, self->image, 0,
						  self->msg, sizeof(self->msg),
						  NULL));
	EXPECT_EQ(0, strncmp(self->msg, "fd 3 (socket:[", 14))
		TH_LOG("message: %s", self->msg);
	EXPECT_NE(NULL, strstr(self->msg, "carries its sender's credentials, which its reader takes (SO_PASSCRED)"))
		TH_LOG("message: %s", self->msg);
	EXPECT_TRUE(target_alive(&t, "2"));
	kill(t.pid, SIGKILL);
	target_end(&t);

	memset(&t, 0, sizeof(t));
	ASSERT_EQ(0, target_start(&t, no_creds_target));
	ASSERT_EQ(0, target_send(&t, "s"));
	ASSERT_TRUE(target_alive(&t, "1"));
	ASSERT_EQ(0, target_send(&t, "s"));
	EXPECT_EQ(0, ckpt_checkpoint_to(t.pid, self->image, 0, self->msg,
					sizeof(self->msg), NULL))
		TH_LOG("message: %s", self->msg);
	EXPECT_TRUE(target_alive(&t, "2"));
	kill(t.pid, SIGKILL);
	target_end(&t);
}

/* Not a misleading "epoll fd 3 watches fd 5, which is closed". */
TEST_F(errors, unsupported_fd_is_named_before_an_epoll)
{
	struct target t = {};

	CKPT_SETUP_SKIPPED();

	ASSERT_EQ(0, target_start(&t, fd_epoll_target));
	ASSERT_EQ(0, target_send(&t, "s"));
	ASSERT_TRUE(target_alive(&t, "1"));
	EXPECT_EQ(-EOPNOTSUPP, ckpt_checkpoint_to(t.pid, self->image, 0,
						  self->msg, sizeof(self->msg),
						  NULL));
	EXPECT_NE(NULL, strstr(self->msg, "fd 4 (socket:["))
		TH_LOG("message: %s", self->msg);
	EXPECT_TRUE(target_alive(&t, "1"));
	kill(t.pid, SIGKILL);
	target_end(&t);
}

/*
 * A child (even a zombie) or a tracee would be missing after a restart: the
 * checkpoint is refused, naming both pids, and the process runs on. Once
 * the zombie is reaped the same process checkpoints.
 */
TEST_F(errors, a_child_or_a_tracee_is_refused_named)
{
	struct target t = {};
	char buf[64], want[160];
	pid_t other;

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, target_start(&t, relatives_target));

	ASSERT_EQ(0, target_ask(&t, "c", buf, sizeof(buf)));
	ASSERT_EQ(1, sscanf(buf, "0 %d", &other)) TH_LOG("%s", buf);
	EXPECT_EQ(-EBUSY, ckpt_checkpoint_to(t.pid, self->image, 0, self->msg,
					     sizeof(self->msg), NULL));
	snprintf(want, sizeof(want),
		 "pid %d has a child process %d: process trees are not supported yet",
		 t.pid, other);
	EXPECT_NE(NULL, strstr(self->msg, want)) TH_LOG("message: %s", self->msg);
	ASSERT_EQ(0, target_ask(&t, "s", buf, sizeof(buf)));
	snprintf(want, sizeof(want), "1 %d", other);
	EXPECT_STREQ(want, buf);
	ASSERT_EQ(0, target_ask(&t, "w", buf, sizeof(buf)));
	EXPECT_EQ(0, ckpt_checkpoint_to(t.pid, self->image, 0, self->msg,
					sizeof(self->msg), NULL)) TH_LOG("%s", self->msg);

	ASSERT_EQ(0, target_ask(&t, "t", buf, sizeof(buf)));
	ASSERT_EQ(1, sscanf(buf, "1 %d", &other)) TH_LOG("%s", buf);
	EXPECT_EQ(-EBUSY, ckpt_checkpoint_to(t.pid, self->image, 0, self->msg,
					     sizeof(self->msg), NULL));
	snprintf(want, sizeof(want), "pid %d traces process %d", t.pid, other);
	EXPECT_NE(NULL, strstr(self->msg, want)) TH_LOG("message: %s", self->msg);
	ASSERT_EQ(0, kill(other, SIGKILL));
	ASSERT_EQ(0, target_ask(&t, "w", buf, sizeof(buf)));
	EXPECT_STREQ("1 0", buf);
	kill(t.pid, SIGKILL);
	target_end(&t);
}

/*
 * The checkpointer dies while the process is frozen (its image goes to a
 * pipe nobody reads, so the write blocks): the process is thawed and goes
 * on as if nothing happened.
 */
TEST_F(errors, killing_the_checkpointer_thaws_the_process)
{
	struct pollfd pfd = { .fd = self->t.out, .events = POLLIN };
	int p[2], status;
	pid_t req;

	CKPT_SETUP_SKIPPED();

	ASSERT_TRUE(target_alive(&self->t, "1"));
	ASSERT_EQ(0, pipe(p));
	/* Any image is larger than a one-page pipe. */
	ASSERT_EQ(0, fcntl(p[1], F_SETPIPE_SZ, 4096) < 0);
	req = fork();
	ASSERT_LE(0, req);
	if (!req) {
		struct ckpt_checkpoint a = { .pid = self->t.pid, .fd = p[1] };
		int dev = open("/dev/ckpt", O_RDWR);

		close(p[0]);
		ioctl(dev, CKPT_IOC_CHECKPOINT, &a);
		_exit(0);
	}
	close(p[1]);
	/* Frozen (parked in the engine, uninterruptible): no answer. */
	ASSERT_EQ(0, wait_state(self->t.pid, 'D'));
	ASSERT_EQ(0, target_send(&self->t, "sp"));
	EXPECT_EQ(0, poll(&pfd, 1, 2000));
	ASSERT_EQ(0, kill(req, SIGKILL));
	ASSERT_EQ(req, waitpid(req, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status));
	/* Thawed: the answer comes, the count intact. */
	EXPECT_TRUE(target_alive(&self->t, "2"));
	close(p[0]);
}

/* Stops @pid and tries to checkpoint it, which must time out. */
static int checkpoint_stopped(pid_t pid, const char *image)
{
	struct ckpt_checkpoint a = { .pid = pid, .timeout_ms = 300 };
	int fd, ret;

	fd = open(image, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return -errno;
	a.fd = fd;
	ret = stop_and_wait(pid);
	if (!ret)
		ret = ioctl_checkpoint(&a);
	close(fd);
	return ret;
}

TEST_F(errors, stopped_process_times_out)
{
	CKPT_SETUP_SKIPPED();

	EXPECT_EQ(-ETIMEDOUT, checkpoint_stopped(self->t.pid, self->image));
	ASSERT_EQ(0, kill(self->t.pid, SIGCONT));
	EXPECT_TRUE(target_alive(&self->t, "1"));
}

/*
 * A thread the engine asked to park but that has not run since (stopped)
 * keeps the module busy; once it runs it lets go, and the module unloads.
 */
TEST_F(errors, unload_refused_while_a_park_is_pending)
{
	CKPT_SETUP_SKIPPED();

	EXPECT_EQ(-ETIMEDOUT, checkpoint_stopped(self->t.pid, self->image));
	EXPECT_EQ(-EWOULDBLOCK, ckpt_unload_module());
	EXPECT_TRUE(ckpt_module_loaded());

	ASSERT_EQ(0, kill(self->t.pid, SIGCONT));
	EXPECT_TRUE(target_alive(&self->t, "1"));
	EXPECT_EQ(0, ckpt_unload_module());
	EXPECT_FALSE(ckpt_module_loaded());
}

/* Shortens @path by @n bytes. */
static int truncate_by(const char *path, off_t n)
{
	struct stat st;

	if (stat(path, &st) || st.st_size < n)
		return -1;
	return truncate(path, st.st_size - n);
}

TEST_F(errors, damaged_image_refused_before_anything_runs)
{
	char err[512];
	int status;

	CKPT_SETUP_SKIPPED();

	ASSERT_EQ(0, ckpt_checkpoint_to(self->t.pid, self->image,
					CKPT_CHECKPOINT_KILL, self->msg,
					sizeof(self->msg), NULL)) TH_LOG("%s", self->msg);
	target_end(&self->t);
	self->t.pid = 0;

	/*
	 * A flipped bit in the last stored page: found as the engine copies
	 * the page in, before the process runs, and the section is named by
	 * the memory it holds.
	 */
	ASSERT_EQ(0, flip_byte(self->image, -100));
	status = ckpt_run_restart(self->image, NULL, err, sizeof(err));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(1, WEXITSTATUS(status));
	EXPECT_NE(NULL, strstr(err, "checksum mismatch, in the section of"))
		TH_LOG("%s", err);
	EXPECT_NE(NULL, strstr(err, " pages at ")) TH_LOG("%s", err);

	/* Left to the engine, the damage is found too, and named. */
	status = ckpt_run_restart(self->image, "--no-verify", err, sizeof(err));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(1, WEXITSTATUS(status));
	EXPECT_NE(NULL, strstr(err, "checksum mismatch")) TH_LOG("%s", err);

	/*
	 * Cut inside the last stored page: the engine, which reads page data
	 * in place after it has walked past it, still finds it.
	 */
	ASSERT_EQ(0, truncate_by(self->image, 200));
	status = ckpt_run_restart(self->image, "--no-verify", err, sizeof(err));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(1, WEXITSTATUS(status));
	EXPECT_NE(NULL, strstr(err, "truncated")) TH_LOG("%s", err);

	/* A truncated image. */
	ASSERT_EQ(0, truncate(self->image, 5000));
	status = ckpt_run_restart(self->image, NULL, err, sizeof(err));
	EXPECT_EQ(1, WEXITSTATUS(status));
	EXPECT_NE(NULL, strstr(err, "truncated")) TH_LOG("%s", err);
}

TEST_F(errors, engine_checks_the_image_itself)
{
	struct ckpt_restart r = { .nr_threads = 1 };
	char msg[256] = "";
	int dev, fd;

	CKPT_SETUP_SKIPPED();

	ASSERT_EQ(0, ckpt_checkpoint_to(self->t.pid, self->image, 0, self->msg,
					sizeof(self->msg), NULL)) TH_LOG("%s", self->msg);
	/* A byte inside the PROCESS section's payload, which follows HEADER. */
	ASSERT_EQ(0, flip_byte(self->image, 2 * sizeof(struct ckpt_sect) +
					    sizeof(struct ckpt_img_header) + 8));
	dev = open("/dev/ckpt", O_RDWR);
	fd = open(self->image, O_RDONLY);
	ASSERT_LE(0, dev);
	ASSERT_LE(0, fd);
	r.fd = fd;
	r.err_fd = -1;
	r.errmsg = (unsigned long)msg;
	r.errmsg_len = sizeof(msg);
	/* Refused before anything changes: this process carries on. */
	EXPECT_EQ(-1, ioctl(dev, CKPT_IOC_RESTART, &r));
	EXPECT_EQ(EBADMSG, errno);
	EXPECT_NE(NULL, strstr(msg, "checksum mismatch")) TH_LOG("%s", msg);
	close(fd);
	close(dev);
	EXPECT_TRUE(target_alive(&self->t, "1"));
}

/* CKPT_IOC_RESTART on a fresh /dev/ckpt (a refused call uses one up). */
static int ioctl_restart(struct ckpt_restart *r)
{
	int dev = open("/dev/ckpt", O_RDWR), ret;

	if (dev < 0)
		return -errno;
	ret = ioctl(dev, CKPT_IOC_RESTART, r) ? -errno : 0;
	close(dev);
	return ret;
}

/*
 * Unknown flags, a flag without its mate, a root for the image's paths that
 * is none, and an err_fd that cannot be written.
 */
TEST_F(errors, restart_flags_and_root_descriptor)
{
	struct ckpt_restart r = { .nr_threads = 1, .err_fd = -1 };
	char msg[256] = "";
	int fd, sock;

	CKPT_SETUP_SKIPPED();

	ASSERT_EQ(0, ckpt_checkpoint_to(self->t.pid, self->image, 0, self->msg,
					sizeof(self->msg), NULL)) TH_LOG("%s", self->msg);
	fd = open(self->image, O_RDONLY);
	ASSERT_LE(0, fd);
	r.fd = fd;
	r.errmsg = (unsigned long)msg;
	r.errmsg_len = sizeof(msg);
	r.flags = 1 << 5;
	EXPECT_EQ(-EINVAL, ioctl_restart(&r));
	/* Untied from its parent: only a lazy restart has a tie to undo. */
	r.flags = CKPT_RESTART_LAZY_UNTIED;
	EXPECT_EQ(-EINVAL, ioctl_restart(&r));
	EXPECT_NE(NULL, strstr(msg, "CKPT_RESTART_LAZY_UNTIED is set without CKPT_RESTART_LAZY")) TH_LOG("%s", msg);
	/* A descriptor without the flag that says there is one. */
	r.flags = 0;
	r.root_fd = fd;
	EXPECT_EQ(-EINVAL, ioctl_restart(&r));
	r.flags = CKPT_RESTART_ROOT_FD;
	EXPECT_EQ(-ENOTDIR, ioctl_restart(&r));
	EXPECT_NE(NULL, strstr(msg, "root descriptor is not a directory")) TH_LOG("%s", msg);
	r.root_fd = 1000;
	EXPECT_EQ(-EBADF, ioctl_restart(&r));
	/* A hold (CKPT_RESTART_HOLD) on no socket, or on none of UNIX stream. */
	r.flags = 0;
	r.root_fd = 0;
	r.hold_fd = fd;
	EXPECT_EQ(-EINVAL, ioctl_restart(&r));
	EXPECT_NE(NULL, strstr(msg, "hold_fd is set without CKPT_RESTART_HOLD")) TH_LOG("%s", msg);
	r.flags = CKPT_RESTART_HOLD;
	EXPECT_EQ(-EINVAL, ioctl_restart(&r));
	EXPECT_NE(NULL, strstr(msg, "not a connected UNIX stream socket")) TH_LOG("%s", msg);
	/* Not connected: found before anything changes, not at the hold. */
	sock = socket(AF_UNIX, SOCK_STREAM, 0);
	ASSERT_LE(0, sock);
	r.hold_fd = sock;
	msg[0] = '\0';
	EXPECT_EQ(-EINVAL, ioctl_restart(&r));
	EXPECT_NE(NULL, strstr(msg, "not a connected UNIX stream socket")) TH_LOG("%s", msg);
	close(sock);
	r.hold_fd = 1000;
	EXPECT_EQ(-EBADF, ioctl_restart(&r));
	EXPECT_NE(NULL, strstr(msg, "hold descriptor is not open")) TH_LOG("%s", msg);
	/*
	 * Late errors to a descriptor the kernel may not write: refused at
	 * once (it once reached kernel_write() at a late failure, and warned).
	 */
	r.flags = 0;
	r.hold_fd = 0;
	r.err_fd = fd;
	msg[0] = '\0';
	EXPECT_EQ(-EBADF, ioctl_restart(&r));
	EXPECT_NE(NULL, strstr(msg, "err_fd is not open for writing")) TH_LOG("%s", msg);
	r.err_fd = 1000;
	msg[0] = '\0';
	EXPECT_EQ(-EBADF, ioctl_restart(&r));
	EXPECT_NE(NULL, strstr(msg, "err_fd is not open")) TH_LOG("%s", msg);
	EXPECT_EQ(NULL, strstr(msg, "for writing")) TH_LOG("%s", msg);
	close(fd);
	EXPECT_TRUE(target_alive(&self->t, "1"));
}

TEST_F(errors, pid_in_use)
{
	char err[512];
	int status;

	CKPT_SETUP_SKIPPED();

	ASSERT_EQ(0, ckpt_checkpoint_to(self->t.pid, self->image, 0, self->msg,
					sizeof(self->msg), NULL)) TH_LOG("%s", self->msg);
	/* The original still runs, so its pid is taken. */
	status = ckpt_run_restart(self->image, NULL, err, sizeof(err));
	EXPECT_EQ(1, WEXITSTATUS(status));
	EXPECT_NE(NULL, strstr(err, "is in use")) TH_LOG("%s", err);
	EXPECT_TRUE(target_alive(&self->t, "1"));
}

/* [vvar, end of vdso) of @image, as ckpt inspect shows them. 0 or -1. */
static int image_specials(const char *image, unsigned long *lo,
			  unsigned long *hi)
{
	unsigned long vvar, vvar_size, vdso, vdso_size;
	char cmd[128], line[256];
	int ret = -1;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "ckpt inspect -v %s", image);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, " vvar %lx +%lu, vdso %lx +%lu", &vvar,
			   &vvar_size, &vdso, &vdso_size) == 4) {
			*lo = vvar < vdso ? vvar : vdso;
			*hi = vvar < vdso ? vdso + vdso_size : vvar + vvar_size;
			ret = 0;
		}
	return pclose(f) ? -1 : ret;
}

static char block_range[64], block_tries[8];

/* In ckpt restart's child: tests/preload/inthevdsosway.c, set to block. */
static void block_vdso(void)
{
	char lib[256];

	snprintf(lib, sizeof(lib), "%s/build/tests/preload/inthevdsosway.so",
		 getenv("CKPT_TOP") ?: ".");
	setenv("LD_PRELOAD", lib, 1);
	setenv("CKPT_TEST_BLOCK", block_range, 1);
	setenv("CKPT_TEST_BLOCK_TRIES", block_tries, 1);
	unsetenv("CKPT_RESTART_TRIES");
}

/*
 * The restarter's own memory, which the kernel places at random, can sit
 * where the image's vdso goes (same kernel: this vdso moves there). ckpt
 * restart runs itself again, placed elsewhere; when every run finds it
 * taken, the error names the address, and nothing was started.
 */
TEST_F(errors, the_restarters_memory_in_the_vdsos_way)
{
	unsigned long lo, hi;
	struct target t;
	char err[512];
	int status;

	CKPT_SETUP_SKIPPED();

	ASSERT_EQ(0, ckpt_checkpoint_to(self->t.pid, self->image,
					CKPT_CHECKPOINT_KILL, self->msg,
					sizeof(self->msg), NULL)) TH_LOG("%s", self->msg);
	target_end(&self->t);
	self->t.pid = 0;
	ASSERT_EQ(0, image_specials(self->image, &lo, &hi));
	snprintf(block_range, sizeof(block_range), "%lx-%lx", lo, hi);

	snprintf(block_tries, sizeof(block_tries), "99");
	status = ckpt_run_restart_after(block_vdso, self->image, NULL, err,
					sizeof(err));
	EXPECT_EQ(1, WEXITSTATUS(status));
	EXPECT_NE(NULL, strstr(err, "is taken in the restarter")) TH_LOG("%s", err);
	EXPECT_EQ(NULL, strstr(err, "inthevdsosway")) TH_LOG("%s", err);

	snprintf(block_tries, sizeof(block_tries), "2");
	ASSERT_EQ(0, target_restart_after(&t, self->image, block_vdso));
	EXPECT_TRUE(target_alive(&t, "1"));
	EXPECT_EQ(0, target_send(&t, "q"));
	status = target_end(&t);
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status)) TH_LOG("status %#x", status);
}

TEST_HARNESS_MAIN
