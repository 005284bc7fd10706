/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _CKPT_CHARDEV_H
#define _CKPT_CHARDEV_H

int ckpt_chardev_init(void);
void ckpt_chardev_uninit(void);

#endif /* _CKPT_CHARDEV_H */
