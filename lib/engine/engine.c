// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The one door to the engine: /dev/ckpt (engine.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "engine.h"

/* -errno of the last failed call, errno left as it was. */
static int fail(void)
{
	return -errno;
}

const char *ckpt_dev_path(void)
{
	const char *dev = getenv("CKPT_DEVICE");

	return dev && *dev ? dev : "/dev/" CKPT_DEVICE_NAME;
}

int ckpt_dev_open(int flags)
{
	int fd = open(ckpt_dev_path(), flags | O_CLOEXEC);

	return fd < 0 ? fail() : fd;
}

/* One ioctl on a descriptor of its own, opened read-only. */
static int ioctl_once(unsigned long cmd, void *arg)
{
	int fd, ret = 0;

	fd = open(ckpt_dev_path(), O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail();
	if (ioctl(fd, cmd, arg) < 0)
		ret = fail();
	close(fd);
	errno = -ret;
	return ret;
}

int ckpt_dev_version(struct ckpt_version *ver)
{
	int ret;

	memset(ver, 0, sizeof(*ver));
	ret = ioctl_once(CKPT_IOC_VERSION, ver);
	if (!ret)
		ver->release[sizeof(ver->release) - 1] = '\0';
	return ret;
}

int ckpt_dev_set_key(const void *key, unsigned int len)
{
	struct ckpt_key k = {
		.key = (unsigned long)key,
		.len = len,
	};

	return ioctl_once(CKPT_IOC_SET_KEY, &k);
}

int ckpt_dev_register(int dev, struct ckpt_register *reg)
{
	return ioctl(dev, CKPT_IOC_REGISTER, reg) < 0 ? fail() : 0;
}

int ckpt_dev_cb_wait(int dev, struct ckpt_cb_request *rq)
{
	return ioctl(dev, CKPT_IOC_CB_WAIT, rq) < 0 ? fail() : 0;
}

int ckpt_dev_cb_ready(int dev, struct ckpt_cb_ready *rd)
{
	int ret = ioctl(dev, CKPT_IOC_CB_READY, rd);

	return ret < 0 ? fail() : ret;
}

int ckpt_dev_checkpoint(int dev, struct ckpt_checkpoint *a)
{
	return ioctl(dev, CKPT_IOC_CHECKPOINT, a) < 0 ? fail() : 0;
}

static int create_tmp(char *tmp)
{
	size_t n = strlen(tmp);

	if (n >= 6 && !strcmp(tmp + n - 6, "XXXXXX"))
		return mkostemp(tmp, O_CLOEXEC);
	return open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
}

int ckpt_dev_checkpoint_to(int dev, struct ckpt_checkpoint *a,
			   const char *path, char *tmp,
			   enum ckpt_dev_step *step)
{
	int fd, err;

	*step = CKPT_DEV_CREATE;
	fd = create_tmp(tmp);
	if (fd < 0)
		return fail();
	a->fd = fd;
	*step = CKPT_DEV_CHECKPOINT;
	if (ckpt_dev_checkpoint(dev, a))
		goto close_tmp;
	*step = CKPT_DEV_WRITE;
	if (fsync(fd))
		goto close_tmp;
	if (close(fd))
		goto unlink_tmp;
	*step = CKPT_DEV_RENAME;
	if (rename(tmp, path))
		goto unlink_tmp;
	return 0;

close_tmp:
	err = errno;
	close(fd);
	errno = err;
unlink_tmp:
	err = errno;
	unlink(tmp);
	errno = err;
	return -err;
}

int ckpt_dev_checkpoint_tree(int dev, struct ckpt_checkpoint_tree *a)
{
	return ioctl(dev, CKPT_IOC_CHECKPOINT_TREE, a) < 0 ? fail() : 0;
}

int ckpt_dev_restart(int dev, struct ckpt_restart *a)
{
	return ioctl(dev, CKPT_IOC_RESTART, a) < 0 ? fail() : 0;
}

int ckpt_dev_restart_creds(int dev)
{
	return ioctl(dev, CKPT_IOC_RESTART_CREDS, 0) < 0 ? fail() : 0;
}

int ckpt_dev_lazy_done(int dev, pid_t pid)
{
	__u32 upid = pid;

	return ioctl(dev, CKPT_IOC_LAZY_DONE, &upid) < 0 ? fail() : 0;
}
