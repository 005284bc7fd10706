// SPDX-License-Identifier: GPL-2.0
/*
 * The engine module loads, offers both doors (/dev/ckpt and the "ckpt"
 * generic-netlink family), refuses to unload while it is in use (a
 * descriptor open, a checkpoint in flight), and leaves nothing behind when
 * it goes: a process it checkpointed runs on after the unload.
 *
 * CKPT_MODULE names the ckpt.ko built for the running kernel; the tests skip
 * when it is not there or when they cannot load modules.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

#include <linux/ckpt.h>

#include "kselftest_harness.h"
#include "ckpt_test.h"

struct genl_reply {
	__u32 uapi_version;
	char release[CKPT_RELEASE_LEN];
	bool seen;
};

static int version_cb(struct nl_msg *msg, void *arg)
{
	struct nlattr *tb[CKPT_A_MAX + 1];
	struct genl_reply *reply = arg;

	if (genlmsg_parse(nlmsg_hdr(msg), 0, tb, CKPT_A_MAX, NULL))
		return NL_SKIP;
	if (tb[CKPT_A_UAPI_VERSION])
		reply->uapi_version = nla_get_u32(tb[CKPT_A_UAPI_VERSION]);
	if (tb[CKPT_A_RELEASE])
		nla_strlcpy(reply->release, tb[CKPT_A_RELEASE],
			    sizeof(reply->release));
	reply->seen = true;
	return NL_OK;
}

/*
 * Sends CKPT_CMD_GET_VERSION, with an extra attribute when @bogus_attr is
 * set, and returns the kernel's answer: 0 or a negative errno.
 */
static int genl_get_version(struct genl_reply *reply, bool bogus_attr)
{
	struct nl_sock *sk;
	struct nl_msg *msg = NULL;
	int family, ret;

	sk = nl_socket_alloc();
	if (!sk)
		return -ENOMEM;
	ret = genl_connect(sk);
	if (ret)
		goto out;
	family = genl_ctrl_resolve(sk, CKPT_GENL_NAME);
	if (family < 0) {
		ret = -ENOENT;
		goto out;
	}
	msg = nlmsg_alloc();
	if (!msg) {
		ret = -ENOMEM;
		goto out;
	}
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, 0,
			 CKPT_CMD_GET_VERSION, CKPT_GENL_VERSION)) {
		ret = -EMSGSIZE;
		goto out;
	}
	/* CKPT_A_MAX + 1 is an attribute no policy knows. */
	if (bogus_attr && nla_put_u32(msg, CKPT_A_MAX + 1, 1)) {
		ret = -EMSGSIZE;
		goto out;
	}
	nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_CUSTOM, version_cb, reply);
	ret = nl_send_auto(sk, msg);
	if (ret < 0)
		goto out;
	ret = nl_recvmsgs_default(sk);
	if (ret == -NLE_INVAL)
		ret = -EINVAL;
	else if (ret < 0)
		ret = -EIO;
out:
	nlmsg_free(msg);
	nl_socket_free(sk);
	return ret;
}

FIXTURE(module) {
	const char *path;
};

FIXTURE_SETUP(module)
{
	self->path = ckpt_module_path();
	if (!self->path)
		SKIP(return, "CKPT_MODULE does not name a readable ckpt.ko");
	if (geteuid() != 0)
		SKIP(return, "loading modules needs root");
	if (ckpt_module_loaded())
		ASSERT_EQ(0, ckpt_unload_module());
}

FIXTURE_TEARDOWN(module)
{
	if (ckpt_module_loaded())
		ckpt_unload_module();
}

TEST_F(module, load_unload)
{
	CKPT_SETUP_SKIPPED();

	ASSERT_EQ(0, ckpt_load_module(self->path));
	EXPECT_TRUE(ckpt_module_loaded());
	EXPECT_EQ(0, access("/dev/ckpt", F_OK));

	ASSERT_EQ(0, ckpt_unload_module());
	EXPECT_FALSE(ckpt_module_loaded());
	EXPECT_NE(0, access("/dev/ckpt", F_OK));
	EXPECT_EQ(ENOENT, errno);
}

TEST_F(module, load_twice_refused)
{
	CKPT_SETUP_SKIPPED();

	ASSERT_EQ(0, ckpt_load_module(self->path));
	EXPECT_EQ(-EEXIST, ckpt_load_module(self->path));
}

TEST_F(module, version_ioctl)
{
	struct ckpt_version ver;
	int fd;

	CKPT_SETUP_SKIPPED();

	ASSERT_EQ(0, ckpt_load_module(self->path));
	fd = open("/dev/ckpt", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);

	memset(&ver, 0, sizeof(ver));
	ASSERT_EQ(0, ioctl(fd, CKPT_IOC_VERSION, &ver));
	EXPECT_EQ((__u32)CKPT_UAPI_VERSION, ver.uapi_version);
	EXPECT_NE(0, ver.release[0]);
	EXPECT_NE(NULL, memchr(ver.release, 0, sizeof(ver.release)));

	/* Unknown flags and unknown ioctls are refused, not ignored. */
	memset(&ver, 0, sizeof(ver));
	ver.flags = 1;
	EXPECT_EQ(-1, ioctl(fd, CKPT_IOC_VERSION, &ver));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(fd, _IO(CKPT_IOC_MAGIC, 0x7f)));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(-1, ioctl(fd, CKPT_IOC_VERSION, (void *)8));
	EXPECT_EQ(EFAULT, errno);

	close(fd);
}

TEST_F(module, unload_refused_while_open)
{
	int fd;

	CKPT_SETUP_SKIPPED();

	ASSERT_EQ(0, ckpt_load_module(self->path));
	fd = open("/dev/ckpt", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	EXPECT_EQ(-EWOULDBLOCK, ckpt_unload_module());
	EXPECT_TRUE(ckpt_module_loaded());
	close(fd);
	EXPECT_EQ(0, ckpt_unload_module());
}

/* Set before a target starts: memory it touches, in MiB. */
static size_t touch_mb;

/* 's' steps a counter, 'p' prints it, 'q' quits. */
static void touching_target(void)
{
	unsigned long n = 0;
	char c, *mem;

	if (touch_mb) {
		mem = mmap(NULL, touch_mb << 20, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (mem == MAP_FAILED)
			_exit(9);
		for (size_t i = 0; i < touch_mb << 20; i += 4096)
			mem[i] = (char)(i >> 12) | 1;
	}
	for (;;) {
		if (read(0, &c, 1) != 1)
			_exit(3);
		if (c == 's')
			n++;
		if (c == 'p')
			target_say("%lu", n);
		if (c == 'q')
			_exit(0);
	}
}

static bool target_counts(struct target *t, const char *want)
{
	char buf[32];

	return !target_ask(t, "p", buf, sizeof(buf)) && !strcmp(buf, want);
}

/* Whether @t answers within @ms. */
static bool target_answers(struct target *t, int ms)
{
	struct pollfd p = { .fd = t->out, .events = POLLIN };

	return poll(&p, 1, ms) == 1;
}

/*
 * A checkpointer in a child process: its ioctl runs in a second thread
 * (whose tid it first sends), writing into a pipe nobody reads yet; on 'c'
 * from the test its main thread closes its /dev/ckpt descriptor and
 * answers 'c', so that only the ioctl in flight holds the device. It exits
 * 0 once the checkpoint succeeded.
 */
struct checkpointer {
	pid_t pid, tid;
	int image;	/* the read end of the image pipe */
	int ctl, ack;	/* to it, from it */
};

static int ckpt_dev = -1, ckpt_ack = -1;
static struct ckpt_checkpoint ckpt_args;
static long ckpt_ret;

static void *checkpoint_thread(void *arg)
{
	pid_t tid = gettid();

	if (write(ckpt_ack, &tid, sizeof(tid)) != sizeof(tid))
		_exit(2);
	ckpt_ret = ioctl(ckpt_dev, CKPT_IOC_CHECKPOINT, &ckpt_args) ? -errno : 0;
	return arg;
}

static int checkpointer_start(struct checkpointer *c, pid_t pid,
			      int pipe_size)
{
	int img[2], ctl[2], ack[2];

	if (pipe2(img, O_CLOEXEC) || pipe2(ctl, O_CLOEXEC) ||
	    pipe2(ack, O_CLOEXEC))
		return -errno;
	if (fcntl(img[1], F_SETPIPE_SZ, pipe_size) < 0)
		return -errno;
	c->pid = fork();
	if (c->pid < 0)
		return -errno;
	if (!c->pid) {
		pthread_t th;
		char x;

		ckpt_dev = open("/dev/ckpt", O_RDWR | O_CLOEXEC);
		ckpt_ack = ack[1];
		ckpt_args.pid = pid;
		ckpt_args.fd = img[1];
		if (ckpt_dev < 0 ||
		    pthread_create(&th, NULL, checkpoint_thread, NULL))
			_exit(2);
		if (read(ctl[0], &x, 1) == 1 && x == 'c') {
			close(ckpt_dev);
			if (write(ack[1], "c", 1) != 1)
				_exit(2);
		}
		pthread_join(th, NULL);
		_exit(ckpt_ret ? 1 : 0);
	}
	close(img[1]);
	close(ctl[0]);
	close(ack[1]);
	c->image = img[0];
	c->ctl = ctl[1];
	c->ack = ack[0];
	if (read(c->ack, &c->tid, sizeof(c->tid)) != sizeof(c->tid))
		return -EIO;
	return 0;
}

/* The state of thread @tid of @pid, as /proc shows it ('R', 'S', 'D'...). */
static char thread_state(pid_t pid, pid_t tid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return '?';
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : '?';
}

/*
 * Waits (at most 60 s) until the checkpointer is blocked writing: it has
 * written something, no more comes, and its ioctl sleeps (a full pipe's
 * writer sleeps interruptibly).
 */
static int checkpointer_stuck(struct checkpointer *c)
{
	int i, n = 0, last = -1, same = 0;

	for (i = 0; i < 6000; i++) {
		if (ioctl(c->image, FIONREAD, &n))
			return -errno;
		same = n > 0 && n == last &&
		       thread_state(c->pid, c->tid) == 'S' ? same + 1 : 0;
		if (same == 5)
			return 0;
		last = n;
		usleep(10000);
	}
	return -ETIMEDOUT;
}

/* Has the checkpointer close its own descriptor of the device. */
static int checkpointer_close_dev(struct checkpointer *c)
{
	char x;

	if (write(c->ctl, "c", 1) != 1 || read(c->ack, &x, 1) != 1)
		return -EIO;
	return 0;
}

/* Reads the image to its end into @path; the checkpointer's exit status. */
static int checkpointer_finish(struct checkpointer *c, const char *path)
{
	char buf[65536];
	int fd, status = -1;
	ssize_t n;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	while ((n = read(c->image, buf, sizeof(buf))) > 0)
		if (fd < 0 || write(fd, buf, n) != n)
			break;
	if (fd >= 0)
		close(fd);
	close(c->image);
	close(c->ctl);
	close(c->ack);
	waitpid(c->pid, &status, 0);
	return status;
}

/*
 * A checkpoint blocked writing its image (into a pipe nobody reads yet),
 * whose only hold on the device is the ioctl in flight: the module stays.
 * With a one-page pipe the process is still frozen; with 1 MiB the image's
 * first part fits and the process runs on while the checkpointer writes
 * its pages (copied while frozen). Read to the end, the image is complete;
 * then the module unloads, and the process runs on without it.
 */
static void unload_during_checkpoint(struct __test_metadata *_metadata,
				     const char *path, int pipe_size,
				     bool frozen)
{
	char image[64], cmd[128];
	struct checkpointer c;
	struct target t;
	int status;

	snprintf(image, sizeof(image), "/tmp/module.%d.img", getpid());
	ASSERT_EQ(0, ckpt_load_module(path));
	ASSERT_EQ(0, target_start(&t, touching_target));
	ASSERT_EQ(0, target_send(&t, "s"));
	ASSERT_TRUE(target_counts(&t, "1"));

	ASSERT_EQ(0, checkpointer_start(&c, t.pid, pipe_size));
	ASSERT_EQ(0, checkpointer_stuck(&c));
	ASSERT_EQ(0, checkpointer_close_dev(&c));
	EXPECT_EQ(-EWOULDBLOCK, ckpt_unload_module());
	EXPECT_TRUE(ckpt_module_loaded());
	ASSERT_EQ(0, target_send(&t, "sp"));
	EXPECT_EQ(!frozen, target_answers(&t, frozen ? 1000 : 60000));
	EXPECT_EQ(0, waitpid(c.pid, &status, WNOHANG));
	EXPECT_EQ(-EWOULDBLOCK, ckpt_unload_module());

	status = checkpointer_finish(&c, image);
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	snprintf(cmd, sizeof(cmd), "ckpt inspect %s > /dev/null", image);
	EXPECT_EQ(0, system(cmd));
	unlink(image);
	if (frozen)	/* thawed: the answer to "sp" comes now */
		EXPECT_TRUE(target_answers(&t, 60000));
	{
		char buf[32];

		ASSERT_EQ(0, target_line(&t, buf, sizeof(buf)));
		EXPECT_STREQ("2", buf);
	}
	EXPECT_EQ(0, ckpt_unload_module());
	EXPECT_FALSE(ckpt_module_loaded());
	ASSERT_EQ(0, target_send(&t, "s"));
	EXPECT_TRUE(target_counts(&t, "3"));
	ASSERT_EQ(0, target_send(&t, "q"));
	status = target_end(&t);
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

TEST_F(module, unload_refused_while_a_frozen_process_is_written)
{
	CKPT_SETUP_SKIPPED();

	touch_mb = 0;
	unload_during_checkpoint(_metadata, self->path, 4096, true);
}

TEST_F(module, unload_refused_while_pages_are_written_after_the_thaw)
{
	CKPT_SETUP_SKIPPED();

	touch_mb = 8;
	unload_during_checkpoint(_metadata, self->path, 1 << 20, false);
}

/*
 * The checkpointer is killed while blocked writing (cr_errors checks that
 * the process is thawed): nothing of the checkpoint keeps the module, which
 * unloads, and the process runs on without it.
 */
TEST_F(module, unload_after_a_checkpointer_was_killed_mid_write)
{
	struct checkpointer c;
	struct target t;
	int status;

	CKPT_SETUP_SKIPPED();

	touch_mb = 0;
	ASSERT_EQ(0, ckpt_load_module(self->path));
	ASSERT_EQ(0, target_start(&t, touching_target));
	ASSERT_EQ(0, checkpointer_start(&c, t.pid, 4096));
	ASSERT_EQ(0, checkpointer_stuck(&c));
	EXPECT_EQ(-EWOULDBLOCK, ckpt_unload_module());
	ASSERT_EQ(0, kill(c.pid, SIGKILL));
	status = checkpointer_finish(&c, "/dev/null");
	EXPECT_TRUE(WIFSIGNALED(status));
	/* Its threads have left the engine once it answers. */
	ASSERT_EQ(0, target_send(&t, "s"));
	EXPECT_TRUE(target_counts(&t, "1"));

	EXPECT_EQ(0, ckpt_unload_module());
	EXPECT_FALSE(ckpt_module_loaded());
	ASSERT_EQ(0, target_send(&t, "s"));
	EXPECT_TRUE(target_counts(&t, "2"));
	ASSERT_EQ(0, target_send(&t, "q"));
	status = target_end(&t);
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

TEST_F(module, genl_version)
{
	struct genl_reply reply = {};

	CKPT_SETUP_SKIPPED();

	ASSERT_EQ(0, ckpt_load_module(self->path));
	ASSERT_EQ(0, genl_get_version(&reply, false));
	EXPECT_TRUE(reply.seen);
	EXPECT_EQ((__u32)CKPT_UAPI_VERSION, reply.uapi_version);
	EXPECT_NE(0, reply.release[0]);
}

TEST_F(module, genl_strict_attributes)
{
	struct genl_reply reply = {};

	CKPT_SETUP_SKIPPED();

	ASSERT_EQ(0, ckpt_load_module(self->path));
	EXPECT_EQ(-EINVAL, genl_get_version(&reply, true));
	EXPECT_FALSE(reply.seen);
}

TEST_F(module, genl_family_gone_after_unload)
{
	struct genl_reply reply = {};

	CKPT_SETUP_SKIPPED();

	ASSERT_EQ(0, ckpt_load_module(self->path));
	ASSERT_EQ(0, ckpt_unload_module());
	EXPECT_EQ(-ENOENT, genl_get_version(&reply, false));
}

TEST_F(module, reload_cycles)
{
	struct ckpt_version ver;
	int i, fd;

	CKPT_SETUP_SKIPPED();

	for (i = 0; i < 20; i++) {
		ASSERT_EQ(0, ckpt_load_module(self->path));
		fd = open("/dev/ckpt", O_RDWR | O_CLOEXEC);
		ASSERT_LE(0, fd);
		memset(&ver, 0, sizeof(ver));
		EXPECT_EQ(0, ioctl(fd, CKPT_IOC_VERSION, &ver));
		close(fd);
		ASSERT_EQ(0, ckpt_unload_module());
	}
}

TEST_HARNESS_MAIN
