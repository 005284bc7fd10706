// SPDX-License-Identifier: GPL-2.0
/*
 * Harness self-test only, never installed: a module that, loaded into the
 * debug kernel, commits the bug its parameter names, to prove that a KASAN
 * or lockdep report fails a VM run.
 *   bug=oob      reads one byte past a 13-byte allocation (KASAN)
 *   bug=abba     takes two mutexes in both orders (lockdep)
 * Loading fails with -EAGAIN either way, so nothing stays behind.
 */
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/string.h>

static char *bug = "oob";
module_param(bug, charp, 0444);
MODULE_PARM_DESC(bug, "oob or abba");

static DEFINE_MUTEX(debugbug_a);
static DEFINE_MUTEX(debugbug_b);

static void debugbug_oob(void)
{
	volatile size_t i = 13;
	char *p = kmalloc(13, GFP_KERNEL);

	if (!p)
		return;
	pr_info("ckpt_debugbug: read %d\n", p[i]);
	kfree(p);
}

static void debugbug_abba(void)
{
	mutex_lock(&debugbug_a);
	mutex_lock(&debugbug_b);
	mutex_unlock(&debugbug_b);
	mutex_unlock(&debugbug_a);

	mutex_lock(&debugbug_b);
	mutex_lock(&debugbug_a);
	mutex_unlock(&debugbug_a);
	mutex_unlock(&debugbug_b);
}

static int __init debugbug_init(void)
{
	if (!strcmp(bug, "oob"))
		debugbug_oob();
	else if (!strcmp(bug, "abba"))
		debugbug_abba();
	else
		return -EINVAL;
	return -EAGAIN;
}

module_init(debugbug_init);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("ckpt VM harness self-test: a KASAN or lockdep report on load");
