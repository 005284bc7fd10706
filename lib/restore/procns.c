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
 *
 * A caller confined below a directory that is no mount's root (a chroot)
 * cannot make its mounts slaves (the call needs a mount's root): there
 * the tree keeps the caller's namespace and /proc, as before.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "restore.h"

int ckpt_restore_own_proc(const char **what)
{
	struct statx stx;

	if (statx(AT_FDCWD, "/", AT_STATX_DONT_SYNC, STATX_TYPE, &stx)) {
		*what = "cannot read the root directory";
		return -1;
	}
	if (stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT &&
	    !(stx.stx_attributes & STATX_ATTR_MOUNT_ROOT))
		return 1;
	if (unshare(CLONE_NEWNS)) {
		*what = "cannot make a mount namespace of its own";
		return -1;
	}
	if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL)) {
		*what = "cannot make its mounts slaves of the node's";
		return -1;
	}
	if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  NULL)) {
		*what = "cannot mount a /proc of its pid namespace";
		return -1;
	}
	return 0;
}
