/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _CKPT_AUTH_H
#define _CKPT_AUTH_H

#include <linux/types.h>
#include <uapi/linux/ckpt.h>
#include <uapi/linux/ckpt_image.h>

/*
 * Image authentication: the engine's key, and the MAC over an image's
 * front sections (the MAC section of linux/ckpt_image.h).
 */
struct ckpt_auth;
struct ckpt_why;

int ckpt_auth_init(void);
void ckpt_auth_uninit(void);

/* CKPT_IOC_SET_KEY. */
long ckpt_ioctl_set_key(struct ckpt_key __user *ukey);

/* A MAC under the engine's current key; ERR_PTR when none can be made. */
struct ckpt_auth *ckpt_auth_begin(void);
int ckpt_auth_update(struct ckpt_auth *a, const void *buf, size_t len);
/* Fills @m (algorithm, key id, MAC); the MAC cannot be updated after. */
int ckpt_auth_final(struct ckpt_auth *a, struct ckpt_img_mac *m);
void ckpt_auth_free(struct ckpt_auth *a);

/*
 * Whether @m is the MAC @a computed: 0, -EKEYREJECTED (another MAC; the
 * message in @why tells a key other than this engine's from a change).
 */
int ckpt_auth_verify(struct ckpt_auth *a, const struct ckpt_img_mac *m,
		     struct ckpt_why *why);

#endif /* _CKPT_AUTH_H */
