// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/ckpt: the per-process door into the engine, used by libckpt.
 *
 * The node is world-accessible on purpose: libckpt's registration and a
 * user's checkpoint of its own processes are for everyone, so who may do
 * what is decided per operation (as BLCR did with its control file), not
 * by the node's mode: checkpoint by ptrace's attach rule, restart only
 * with CAP_CHECKPOINT_RESTORE in the initial user namespace, the key only
 * with CAP_SYS_ADMIN there (Documentation/security.md).
 */

#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include <uapi/linux/ckpt.h>

#include "auth.h"
#include "callback.h"
#include "chardev.h"
#include "checkpoint.h"
#include "lazy.h"
#include "restart.h"
#include "tree.h"

static long ioctl_version(struct ckpt_version __user *uver)
{
	struct ckpt_version ver;

	if (copy_from_user(&ver, uver, sizeof(ver)))
		return -EFAULT;
	if (ver.flags)
		return -EINVAL;

	memset(&ver, 0, sizeof(ver));
	ver.uapi_version = CKPT_UAPI_VERSION;
	strscpy(ver.release, CKPT_RELEASE, sizeof(ver.release));

	if (copy_to_user(uver, &ver, sizeof(ver)))
		return -EFAULT;
	return 0;
}

static long ckpt_dev_ioctl(struct file *file, unsigned int cmd,
			   unsigned long arg)
{
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case CKPT_IOC_VERSION:
		return ioctl_version(uarg);
	case CKPT_IOC_CHECKPOINT:
		return ckpt_ioctl_checkpoint(uarg);
	case CKPT_IOC_CHECKPOINT_TREE:
		return ckpt_ioctl_checkpoint_tree(uarg);
	case CKPT_IOC_RESTART:
		return ckpt_ioctl_restart(file, uarg);
	case CKPT_IOC_RESTART_THREAD:
		return ckpt_ioctl_restart_thread(file, uarg);
	case CKPT_IOC_LAZY_DONE:
		return ckpt_ioctl_lazy_done(uarg);
	case CKPT_IOC_RESTART_CREDS:
		return ckpt_ioctl_restart_creds(file, arg);
	case CKPT_IOC_REGISTER:
		return ckpt_ioctl_register(file, uarg);
	case CKPT_IOC_CB_WAIT:
		return ckpt_ioctl_cb_wait(file, uarg);
	case CKPT_IOC_CB_READY:
		return ckpt_ioctl_cb_ready(file, uarg);
	case CKPT_IOC_SET_KEY:
		return ckpt_ioctl_set_key(uarg);
	default:
		return -ENOTTY;
	}
}

static int ckpt_dev_open(struct inode *inode, struct file *file)
{
	/* The misc core stores the device here; restarts use it for state. */
	file->private_data = NULL;
	return nonseekable_open(inode, file);
}

static int ckpt_dev_flush(struct file *file, fl_owner_t id)
{
	ckpt_cb_flush(file);
	return 0;
}

static int ckpt_dev_release(struct inode *inode, struct file *file)
{
	ckpt_cb_release(file);
	ckpt_restart_release(file->private_data);
	return 0;
}

static const struct file_operations ckpt_fops = {
	.owner		= THIS_MODULE,
	.open		= ckpt_dev_open,
	.flush		= ckpt_dev_flush,
	.release	= ckpt_dev_release,
	.unlocked_ioctl	= ckpt_dev_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
};

bool ckpt_is_dev_file(const struct file *file)
{
	return file->f_op == &ckpt_fops;
}

static struct miscdevice ckpt_misc = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= CKPT_DEVICE_NAME,
	.fops	= &ckpt_fops,
	.mode	= 0666,
};

int __init ckpt_chardev_init(void)
{
	return misc_register(&ckpt_misc);
}

void ckpt_chardev_uninit(void)
{
	misc_deregister(&ckpt_misc);
}
