/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the engine's kselftest programs. Include after
 * kselftest_harness.h.
 */
#ifndef _CKPT_TEST_H
#define _CKPT_TEST_H

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

/*
 * The 6.1 harness runs a test's body even when its fixture setup called
 * SKIP(); every TEST_F body that relies on setup starts with this.
 */
#define CKPT_SETUP_SKIPPED() \
	do { \
		if (_metadata->skip) \
			return; \
	} while (0)

/* The ckpt.ko for the running kernel, named by the VM harness. */
static inline const char *ckpt_module_path(void)
{
	const char *path = getenv("CKPT_MODULE");

	return path && !access(path, R_OK) ? path : NULL;
}

static inline int ckpt_load_module(const char *path)
{
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = syscall(SYS_finit_module, fd, "", 0) ? -errno : 0;
	close(fd);
	return ret;
}

static inline int ckpt_unload_module(void)
{
	return syscall(SYS_delete_module, "ckpt", O_NONBLOCK) ? -errno : 0;
}

static inline bool ckpt_module_loaded(void)
{
	return access("/sys/module/ckpt", F_OK) == 0;
}

#endif /* _CKPT_TEST_H */
