// SPDX-License-Identifier: GPL-2.0
/*
 * The restorer's one error convention (restore.h), and its notes.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "err.h"

int ckpt_err_set(struct ckpt_err *err, int errnum, const char *fmt, ...)
{
	va_list ap;

	if (err) {
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
	}
	errno = errnum;
	return -errnum;
}

void ckpt_notef(const struct ckpt_restore_opts *opts, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (!opts || !opts->note)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	opts->note(opts->note_arg, msg);
}
