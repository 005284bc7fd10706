/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The restorer's error and note helpers (restore.h describes the
 * convention).
 */
#ifndef _CKPT_RESTORE_ERR_H
#define _CKPT_RESTORE_ERR_H

#include "restore.h"

/* Fills @err (may be NULL) from @fmt; returns -@errnum and sets errno. */
int ckpt_err_set(struct ckpt_err *err, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Hands a message from @fmt to @opts->note, if there is one. */
void ckpt_notef(const struct ckpt_restore_opts *opts, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif /* _CKPT_RESTORE_ERR_H */
