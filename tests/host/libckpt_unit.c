// SPDX-License-Identifier: GPL-2.0
/*
 * libckpt's calls without an engine: argument checks, critical-section
 * nesting and the errors a program sees when the engine is missing. TAP on
 * stdout. (With the engine: tests/kselftest/libckpt.c, in the VM.)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libckpt.h"

static int nr, failed;

static void check(int ok, const char *what)
{
	printf("%sok %d %s\n", ok ? "" : "not ", ++nr, what);
	if (!ok)
		failed++;
}

static int cb(void *arg)
{
	(void)arg;
	return 0;
}

int main(void)
{
	struct ckpt_request_args args = { 0 };
	struct ckpt_status st;
	int i, ret;

	printf("TAP version 13\n1..16\n");

	setenv("CKPT_DEVICE", "/nonexistent/ckpt", 1);
	setenv("CKPT_SIGNAL", "5", 1);
	check(ckpt_init() == -EINVAL && errno == EINVAL &&
	      strstr(ckpt_last_error(), "real-time signal"),
	      "CKPT_SIGNAL that is not a real-time signal is refused");
	unsetenv("CKPT_SIGNAL");
	ret = ckpt_init();
	check(ret == -ENOENT && errno == ENOENT &&
	      strstr(ckpt_last_error(), "/nonexistent/ckpt") &&
	      strstr(ckpt_last_error(), "module loaded"),
	      "engine missing: ckpt_init names the device");
	check(!ckpt_status(&st) && !st.registered && !st.in_progress &&
	      !st.restarts && !st.restarted_from[0],
	      "status of an unregistered process");
	check(ckpt_status(NULL) == -EINVAL, "status without a buffer");

	check(!ckpt_enter_cs() && !ckpt_enter_cs() && !ckpt_tryenter_cs() &&
	      !ckpt_leave_cs() && !ckpt_leave_cs() && !ckpt_leave_cs(),
	      "critical sections nest");
	check(ckpt_leave_cs() == -EINVAL && strstr(ckpt_last_error(), "not inside"),
	      "leaving without entering");

	check(ckpt_checkpoint(0) == -EINVAL && errno == EINVAL &&
	      strstr(ckpt_last_error(), "outside a callback"),
	      "ckpt_checkpoint outside a callback");
	check(ckpt_abort(0, "x") == -EINVAL, "ckpt_abort needs TEMP or PERM");
	check(ckpt_register_callback(NULL, NULL, CKPT_CB_THREAD) == -EINVAL,
	      "a callback needs a function");
	check(ckpt_register_callback(cb, NULL, CKPT_CB_THREAD | CKPT_CB_SIGNAL) == -EINVAL &&
	      ckpt_register_callback(cb, NULL, 0) == -EINVAL,
	      "a callback needs exactly one context");
	for (i = 0; i < 128; i++)
		if (ckpt_register_callback(cb, NULL, CKPT_CB_THREAD) != i)
			break;
	check(i == 128, "callbacks get their index");
	check(ckpt_register_callback(cb, NULL, CKPT_CB_THREAD) == -ENOSPC,
	      "the 129th callback is refused");

	args.reserved[1] = 1;
	check(ckpt_request_checkpoint(&args, NULL) == -EINVAL, "request: reserved fields");
	args.reserved[1] = 0;
	args.flags = CKPT_REQUEST_STOP | CKPT_REQUEST_KILL;
	check(ckpt_request_checkpoint(&args, NULL) == -EINVAL, "request: conflicting flags");
	args.flags = 0;
	ckpt_enter_cs();
	ret = ckpt_request_checkpoint(&args, NULL);
	ckpt_leave_cs();
	check(ret == -EDEADLK && strstr(ckpt_last_error(), "critical section"),
	      "a synchronous request inside a critical section");
	check(ckpt_request_checkpoint(&args, NULL) == -ENOENT &&
	      ckpt_poll_checkpoint(NULL, 0) == -EINVAL,
	      "request without an engine; poll without a request");
	return failed ? 1 : 0;
}
