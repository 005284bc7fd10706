// SPDX-License-Identifier: GPL-2.0
/*
 * Harness self-test only, never installed: a module whose loading triggers a
 * kernel WARNING, to prove the VM harness fails a run on one.
 */
#include <linux/bug.h>
#include <linux/module.h>

static int __init ckpt_warn_init(void)
{
	WARN(1, "ckpt harness self-test: deliberate warning\n");
	return 0;
}

static void __exit ckpt_warn_exit(void)
{
}

module_init(ckpt_warn_init);
module_exit(ckpt_warn_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("ckpt VM harness self-test: WARNs on load");
