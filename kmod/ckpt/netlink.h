/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _CKPT_NETLINK_H
#define _CKPT_NETLINK_H

int ckpt_netlink_init(void);
void ckpt_netlink_uninit(void);

#endif /* _CKPT_NETLINK_H */
