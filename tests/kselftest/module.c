// SPDX-License-Identifier: GPL-2.0
/*
 * The engine module loads, offers both doors (/dev/ckpt and the "ckpt"
 * generic-netlink family), refuses to unload while it is in use, and leaves
 * nothing behind when it goes.
 *
 * CKPT_MODULE names the ckpt.ko built for the running kernel; the tests skip
 * when it is not there or when they cannot load modules.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
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
