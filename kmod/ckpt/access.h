/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _CKPT_ACCESS_H
#define _CKPT_ACCESS_H

#include <linux/types.h>

struct file;
struct task_struct;
struct ckpt_why;

/*
 * Whether the caller may checkpoint @task: whether it may ptrace-attach to
 * it (PTRACE_MODE_ATTACH_REALCREDS, security modules included), asked of
 * the kernel by opening the process's /proc/PID/mem. On success,
 * *@pagemap is the process's /proc/PID/pagemap, open for reading (the
 * caller puts it). On failure, a message naming the pid and why (-EPERM
 * for a refusal), never anything of the process's files.
 */
int ckpt_access_check(struct task_struct *task, struct file **pagemap,
		      struct ckpt_why *why);

#endif /* _CKPT_ACCESS_H */
