/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The restorer: everything 'ckpt restart' does, as a library a program
 * calls in-process (the CLI today, ckptd later), the way CRIU's crtools.c
 * and cr-service.c both call cr_restore_tasks().
 *
 * One error convention throughout: a function that can fail returns 0 (or
 * a count, a descriptor) or -errno, and, given a struct ckpt_err, leaves in
 * it a message for the user, without the program's prefix ("ckpt
 * restart: ") and without a newline. The library never prints and never
 * exits on its caller's side; its forked children report their failure to
 * the parent over a pipe, and the parent puts it into the ckpt_err.
 */
#ifndef _CKPT_RESTORE_H
#define _CKPT_RESTORE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct ckpt_err {
	char msg[1024];
};

/*
 * One entry of a job's address map (Documentation/decisions.md, "TCP on
 * other nodes"): an address of a node the job ran on, and the address of
 * the node its share restarts on. @family is AF_INET or AF_INET6; an
 * AF_INET address is the first 4 bytes.
 */
struct ckpt_addr_map {
	int family;
	unsigned char from[16], to[16];
};

/* The entries a map may have: some addresses for each of 64 nodes. */
#define CKPT_ADDRMAP_MAX	256

/* Where a restarted tree's processes find its map (libckpt reads it). */
#define CKPT_ADDRMAP_DIR	"/run/ckpt/addrmap"

/* What to restart and how; ckpt restart's options, one for one. */
struct ckpt_restore_opts {
	const char *image;		/* its path; "-": standard input */
	unsigned int timeout_ms;	/* the engine's (0: its default) */
	bool no_verify;			/* leave all but the first sections to the engine */
	bool lazy;			/* run before the anonymous memory is in */
	bool verbose;			/* lazy: say how it went, through note */
	bool unauthenticated;		/* an image without the engine's MAC */
	/*
	 * A tree: signals sent to the caller (by a process, not a terminal)
	 * while the tree runs go to its root. For a command in the
	 * foreground, not for a daemon.
	 */
	bool forward_signals;
	/*
	 * Messages for the user that are not the error returned: warnings,
	 * --verbose statistics, what led to a failed lazy restart. Called
	 * as they happen, from the calling process only; NULL drops them.
	 */
	void (*note)(void *arg, const char *msg);
	void *note_arg;
	/*
	 * A tree: called once its processes run, with the pids (in the
	 * caller's namespace) of its init and of its root; NULL for none.
	 * ckptd records them so that it knows the job's processes.
	 */
	void (*started)(void *arg, pid_t init, pid_t root);
	void *started_arg;
	/*
	 * A tree: called once its channels (TCP connections) are made
	 * again, sending nothing yet (TCP's in repair mode), before any may
	 * talk to its peer; NULL for none. A job over several nodes waits
	 * there until every node's channels are made (ckptd: a connection
	 * that talked to a peer with none would be reset). Non-zero, an
	 * -errno with @err set, fails the restart.
	 */
	int (*made)(void *arg, struct ckpt_err *err);
	void *made_arg;
	/*
	 * A tree: called once every process of it is whole (its memory in)
	 * and held there by the engine (CKPT_RESTART_HOLD), before any runs
	 * its own code; NULL: not held. A job over several nodes waits there
	 * until every node's share is as far (ckptd), so that the nodes fill
	 * their memory at once and none runs before all can. Non-zero, an
	 * -errno with @err set, calls the restart off: the tree is killed,
	 * none of it having run. Not with @lazy, nor for a single image.
	 */
	int (*held)(void *arg, struct ckpt_err *err);
	void *held_arg;
	/*
	 * A tree restarted on other nodes: every TCP socket's addresses go
	 * through this map (each at most once) before the socket is made.
	 * NULL (0 entries): none.
	 */
	const struct ckpt_addr_map *addrmap;
	unsigned int addrmap_len;
	/*
	 * The job's whole map, its first run's addresses to this restart's
	 * (NULL: @addrmap), left as text in CKPT_ADDRMAP_DIR/INUM (INUM: the
	 * tree's pid namespace's inode) for the tree's processes while it
	 * runs; none with 0 entries.
	 */
	const struct ckpt_addr_map *filemap;
	unsigned int filemap_len;
	/*
	 * A tree: its connections to processes outside the job (ckpt-run
	 * --outside close), by member pid (in the tree's namespace) and
	 * descriptor: made again as TCP sockets that are not connected, so
	 * reads and writes fail and poll() says the peer hung up.
	 */
	const struct ckpt_restore_sock {
		int pid, fd;
	} *closed;
	unsigned int nr_closed;
	/*
	 * A tree of a job over several nodes: its connections whose other
	 * end waited to be accepted on another node at the checkpoint (the
	 * coordinator's join: ckptd.md, "TCP between nodes"), by member pid
	 * and descriptor. Each connects again to its listener, with a
	 * handshake, once every node's are made, and sends first the @len
	 * bytes at @data that the other end had received, which end at its
	 * sequence number @seq, then those of its own past @seq.
	 */
	const struct ckpt_restore_reconnect {
		int pid, fd;
		uint32_t seq, len;
		const uint8_t *data;
	} *reconnect;
	unsigned int nr_reconnect;
	/*
	 * Its listening sockets, by member pid and descriptor, that had
	 * connections from another node waiting to be accepted: those come
	 * again from there (that node's @reconnect), none is made here.
	 */
	const struct ckpt_restore_sock *awaited;
	unsigned int nr_awaited;
};

/*
 * Restarts the process in @opts->image as a child of the caller and waits
 * for it: 0 with *@status its wait status (as waitpid() gives it), or
 * -errno with @err saying why (nothing of the process is left then).
 * A directory is a process tree's (ckpt checkpoint --tree): the tree is
 * restarted in a pid namespace of its own, under a small init that is the
 * caller's child, and *@status is the root's; members the root leaves
 * behind run on under that init after the call returns.
 */
int ckpt_restore(const struct ckpt_restore_opts *opts, int *status,
		 struct ckpt_err *err);

/*
 * Ends the closed connections of a tree's original (TIME_WAIT and the
 * closing states, no process holding them) on the four addresses of the
 * connections its images in @dir hold, at their own addresses, but those
 * @o->closed names: what ckpt_restore() does first, for a job's nodes to
 * do before any of them makes its share (ending one in FIN_WAIT resets its
 * other end). How many were ended, or -errno with @err (an image that
 * cannot be read).
 */
int ckpt_restore_end_closed(const char *dir, const struct ckpt_restore_opts *o,
			    struct ckpt_err *err);

/*
 * In pid 1 of a tree's new pid namespace, before it forks: a mount
 * namespace of the tree's, a slave copy of the caller's, with a /proc of
 * that pid namespace (procns.c). 0; 1 when the caller's root is no
 * mount's (a chroot), which leaves it all as it was; or -1 with errno and
 * *@what, the step that failed.
 */
int ckpt_restore_own_proc(const char **what);

#endif /* _CKPT_RESTORE_H */
