// SPDX-License-Identifier: GPL-2.0
/*
 * The CLI's only door into the engine: /dev/ckpt.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "engine.h"

const char *engine_device(void)
{
	const char *dev = getenv("CKPT_DEVICE");

	return dev && *dev ? dev : "/dev/" CKPT_DEVICE_NAME;
}

int engine_version(struct ckpt_version *ver)
{
	int fd, ret = 0;

	fd = open(engine_device(), O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	memset(ver, 0, sizeof(*ver));
	if (ioctl(fd, CKPT_IOC_VERSION, ver) < 0)
		ret = -errno;
	close(fd);
	if (!ret)
		ver->release[sizeof(ver->release) - 1] = '\0';
	return ret;
}

int engine_set_key(const void *key, unsigned int len)
{
	struct ckpt_key k = {
		.key = (unsigned long)key,
		.len = len,
	};
	int fd, ret = 0;

	fd = open(engine_device(), O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (ioctl(fd, CKPT_IOC_SET_KEY, &k) < 0)
		ret = -errno;
	close(fd);
	return ret;
}
