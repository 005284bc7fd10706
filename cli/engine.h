/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _CKPT_CLI_ENGINE_H
#define _CKPT_CLI_ENGINE_H

#include <linux/ckpt.h>

/* Path of the engine's character device, overridable for tests. */
const char *engine_device(void);

/* Asks the engine for its version. Returns 0 or -errno. */
int engine_version(struct ckpt_version *ver);

/* Sets the key of the engine's image MACs (CKPT_IOC_SET_KEY). 0 or -errno. */
int engine_set_key(const void *key, unsigned int len);

#endif /* _CKPT_CLI_ENGINE_H */
