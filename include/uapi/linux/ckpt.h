/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * ckpt: the contract between the checkpoint/restart engine (kmod/ckpt) and
 * userspace (libckpt, ckptd, the ckpt CLI). Kernel and userspace include this
 * file verbatim; it uses only __u32-style types.
 *
 * Two ways in:
 *
 * 1. The character device /dev/ckpt (mode 0666; every operation does its own
 *    permission check). Used by processes about themselves (libckpt).
 *
 *    CKPT_IOC_VERSION  _IOWR(CKPT_IOC_MAGIC, 0x00, struct ckpt_version)
 *
 *        struct ckpt_version {
 *            __u32 uapi_version;   out: CKPT_UAPI_VERSION of the module
 *            __u32 flags;          in:  must be 0 (-EINVAL otherwise)
 *            char  release[32];    out: module release, NUL-terminated
 *        };
 *
 * 2. The generic-netlink family CKPT_GENL_NAME, version CKPT_GENL_VERSION.
 *    Used by ckptd and administrative tools.
 *
 *    CKPT_CMD_GET_VERSION  (doit, any user)
 *        request:  (no attributes)
 *        reply:    CKPT_A_UAPI_VERSION  u32
 *                  CKPT_A_RELEASE       string, at most 31 bytes
 *
 * Errors: unknown flag bits and non-zero reserved fields are rejected with
 * -EINVAL; every netlink validation failure carries an extack message.
 */
#ifndef _UAPI_LINUX_CKPT_H
#define _UAPI_LINUX_CKPT_H

#include <linux/types.h>
#include <linux/ioctl.h>

/* Bumped on every incompatible change of anything in this file. */
#define CKPT_UAPI_VERSION	1

#define CKPT_DEVICE_NAME	"ckpt"
#define CKPT_RELEASE_LEN	32

/* character device */

#define CKPT_IOC_MAGIC		0xC7

struct ckpt_version {
	__u32 uapi_version;
	__u32 flags;
	char release[CKPT_RELEASE_LEN];
};

#define CKPT_IOC_VERSION	_IOWR(CKPT_IOC_MAGIC, 0x00, struct ckpt_version)

/* generic netlink */

#define CKPT_GENL_NAME		"ckpt"
#define CKPT_GENL_VERSION	1

enum ckpt_cmd {
	CKPT_CMD_UNSPEC,
	CKPT_CMD_GET_VERSION,

	__CKPT_CMD_MAX,
	CKPT_CMD_MAX = __CKPT_CMD_MAX - 1
};

enum ckpt_attr {
	CKPT_A_UNSPEC,
	CKPT_A_UAPI_VERSION,	/* u32 */
	CKPT_A_RELEASE,		/* string */

	__CKPT_A_MAX,
	CKPT_A_MAX = __CKPT_A_MAX - 1
};

#endif /* _UAPI_LINUX_CKPT_H */
