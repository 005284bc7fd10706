// SPDX-License-Identifier: GPL-2.0
/*
 * ckpt: transparent checkpoint/restart of multithreaded Linux processes.
 *
 * Module entry: brings up the two doors into the engine (the character
 * device and the generic-netlink family) and takes them down in reverse.
 */

#include <linux/fs.h>
#include <linux/module.h>
#include <linux/string.h>
#include <net/genetlink.h>

#include <uapi/linux/ckpt.h>

#include "auth.h"
#include "chardev.h"
#include "checkpoint.h"
#include "image.h"
#include "layout.h"
#include "lazy.h"
#include "mm.h"
#include "netlink.h"

char ckpt_boot_id[CKPT_BOOT_ID_LEN];

/* This boot's id, for images to carry: "" if it cannot be read. */
static void read_boot_id(void)
{
	struct file *f = filp_open("/proc/sys/kernel/random/boot_id", O_RDONLY, 0);
	char buf[CKPT_BOOT_ID_LEN] = "";
	loff_t pos = 0;
	ssize_t n;

	if (IS_ERR(f))
		return;
	n = kernel_read(f, buf, sizeof(buf) - 1, &pos);
	fput(f);
	if (n <= 0)
		return;
	buf[n] = '\0';
	strreplace(buf, '\n', '\0');
	strscpy(ckpt_boot_id, buf, sizeof(ckpt_boot_id));
}

bool ckpt_same_boot(const char *boot_id)
{
	return ckpt_boot_id[0] && !strncmp(boot_id, ckpt_boot_id,
					   sizeof(ckpt_boot_id));
}

static int __init ckpt_init(void)
{
	int ret;

	read_boot_id();
	ckpt_layout_init();

	ret = ckpt_auth_init();
	if (ret)
		return ret;

	ret = ckpt_mm_init();
	if (ret)
		goto err_uninit_auth;

	ret = ckpt_checkpoint_init();
	if (ret)
		goto err_uninit_mm;

	ret = ckpt_netlink_init();
	if (ret)
		goto err_uninit_checkpoint;

	ret = ckpt_chardev_init();
	if (ret)
		goto err_uninit_netlink;

	pr_info("engine %s loaded (uAPI %u)\n", CKPT_RELEASE,
		CKPT_UAPI_VERSION);
	return 0;

err_uninit_netlink:
	ckpt_netlink_uninit();
err_uninit_checkpoint:
	ckpt_checkpoint_uninit();
err_uninit_mm:
	ckpt_mm_uninit();
err_uninit_auth:
	ckpt_auth_uninit();
	return ret;
}

static void __exit ckpt_exit(void)
{
	ckpt_chardev_uninit();
	ckpt_netlink_uninit();
	ckpt_checkpoint_uninit();
	ckpt_mm_uninit();
	ckpt_lazy_uninit();
	ckpt_auth_uninit();
	pr_info("engine unloaded\n");
}

module_init(ckpt_init);
module_exit(ckpt_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Transparent checkpoint/restart of Linux processes");
MODULE_VERSION(CKPT_RELEASE);
MODULE_ALIAS_GENL_FAMILY(CKPT_GENL_NAME);
