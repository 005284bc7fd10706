// SPDX-License-Identifier: GPL-2.0
/*
 * ckpt: transparent checkpoint/restart of multithreaded Linux processes.
 *
 * Module entry: brings up the two doors into the engine (the character
 * device and the generic-netlink family) and takes them down in reverse.
 */

#include <linux/module.h>
#include <net/genetlink.h>

#include <uapi/linux/ckpt.h>

#include "chardev.h"
#include "netlink.h"

static int __init ckpt_init(void)
{
	int ret;

	ret = ckpt_netlink_init();
	if (ret)
		return ret;

	ret = ckpt_chardev_init();
	if (ret)
		goto err_uninit_netlink;

	pr_info("engine %s loaded (uAPI %u)\n", CKPT_RELEASE,
		CKPT_UAPI_VERSION);
	return 0;

err_uninit_netlink:
	ckpt_netlink_uninit();
	return ret;
}

static void __exit ckpt_exit(void)
{
	ckpt_chardev_uninit();
	ckpt_netlink_uninit();
	pr_info("engine unloaded\n");
}

module_init(ckpt_init);
module_exit(ckpt_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Transparent checkpoint/restart of Linux processes");
MODULE_VERSION(CKPT_RELEASE);
MODULE_ALIAS_GENL_FAMILY(CKPT_GENL_NAME);
