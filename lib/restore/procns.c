// SPDX-License-Identifier: GPL-2.0
/*
 * A /proc of a tree's own pid namespace, in a mount namespace of the
 * tree's: what the init of a restarted tree and of a job started under
 * `ckpt-run --ns` set up before anything else runs there.
 *
 * Without it the tree sees the node's /proc, whose numbers are the outer
 * ones: /proc/self is right, but /proc/<getpid()> is another process's or
 * none, and a member that looks a process of the tree up by its pid finds
 * the wrong one. The mount namespace is a copy of the caller's, made a
 * slave of it, so the mounts the node makes later reach the tree as
 * before; only /proc differs. The engine takes the tree's files by the
 * same names (engine.md, "The root directory").
 */

#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <sys/mount.h>

#include "restore.h"

int ckpt_restore_own_proc(const char **what)
{
	if (unshare(CLONE_NEWNS)) {
		*what = "cannot make the tree's mount namespace";
		return -1;
	}
	if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL)) {
		*what = "cannot make the tree's mounts slaves of the node's";
		return -1;
	}
	if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  NULL)) {
		*what = "cannot mount the tree's /proc";
		return -1;
	}
	return 0;
}
