/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * ckpt: the contract between the checkpoint/restart engine (kmod/ckpt) and
 * userspace (libckpt, ckptd, the ckpt CLI). Kernel and userspace include this
 * file verbatim; it uses only __u32-style types.
 *
 * Two ways in:
 *
 * 1. The character device /dev/ckpt (mode 0666; every operation does its own
 *    permission check). Used by processes about themselves (libckpt).
 *
 *    CKPT_IOC_VERSION  _IOWR(CKPT_IOC_MAGIC, 0x00, struct ckpt_version)
 *
 *        struct ckpt_version {
 *            __u32 uapi_version;   out: CKPT_UAPI_VERSION of the module
 *            __u32 flags;          in:  must be 0 (-EINVAL otherwise)
 *            char  release[32];    out: module release, NUL-terminated
 *        };
 *
 *    CKPT_IOC_CHECKPOINT  _IOWR(CKPT_IOC_MAGIC, 0x01, struct ckpt_checkpoint)
 *
 *        Captures process @pid (all its threads, at safe points) into an
 *        image (linux/ckpt_image.h) written to @fd. The caller needs the
 *        rights of ptrace-attaching (PTRACE_MODE_ATTACH_REALCREDS, security
 *        modules such as Yama included), asked of the kernel before anything
 *        is frozen: -EPERM otherwise.
 *
 *        struct ckpt_checkpoint {
 *            __u32 pid;            in:  process (tgid) in the caller's pid ns
 *            __s32 fd;             in:  image goes here (file, pipe, socket)
 *            __u32 flags;          in:  CKPT_CHECKPOINT_* (-EINVAL otherwise)
 *            __u32 timeout_ms;     in:  for callbacks and safe points together
 *                                       (0: 10 s; at most CKPT_TIMEOUT_MAX_MS)
 *            __u64 errmsg;         in:  user buffer for a message, or 0
 *            __u32 errmsg_len;     in:  its size
 *            __u32 nr_threads;     out: threads captured
 *            __u64 frozen_ns;      out: time the process was frozen
 *            __u64 total_ns;       out: time the whole call took
 *            __u64 image_bytes;    out: bytes written
 *            __u64 nr_pages;       out: memory pages stored
 *            __u64 reserved[4];    in:  must be 0 (-EINVAL otherwise)
 *        };
 *
 *    CKPT_IOC_RESTART  _IOW(CKPT_IOC_MAGIC, 0x02, struct ckpt_restart)
 *    CKPT_IOC_RESTART_THREAD  _IOW(CKPT_IOC_MAGIC, 0x03, __u32)
 *
 *        The calling process becomes the process in the image read from
 *        @fd. Both calls need CAP_CHECKPOINT_RESTORE (or CAP_SYS_ADMIN) in
 *        the initial user namespace (-EPERM otherwise); one open /dev/ckpt
 *        takes one restart (-EBUSY after). Every thread of the caller must
 *        take part. Its other threads (created by the caller with the image's
 *        tids) first call CKPT_IOC_RESTART_THREAD with their index in the
 *        image (1 .. nr_threads - 1) on the same open /dev/ckpt; the main
 *        thread then calls CKPT_IOC_RESTART. Before anything is changed the
 *        whole image up to its memory is validated and the caller's vdso
 *        must already sit where the image had it; errors then return
 *        normally, with a message in @errmsg. A failure after the caller's
 *        memory is replaced kills the process and writes the message to
 *        @err_fd. On success no call returns to the caller's code: every
 *        thread resumes where the image left it. The engine closes the
 *        image's descriptor, @err_fd (a pipe's reader sees its end: the
 *        restart took), the /dev/ckpt descriptor and those @flags name;
 *        any other descriptor of the caller's the image does not name
 *        stays open in the restarted process, so the caller closes what
 *        it must not keep before the call.
 *
 *        struct ckpt_restart {
 *            __s32 fd;             in:  the image
 *            __s32 err_fd;         in:  late errors are written here, or -1;
 *                                       open for writing (-EBADF otherwise;
 *                                       /dev/null takes none)
 *            __u32 flags;          in:  CKPT_RESTART_* (-EINVAL otherwise)
 *            __u32 nr_threads;     in:  threads taking part, caller included
 *            __u64 errmsg;         in:  user buffer for a message, or 0
 *            __u32 errmsg_len;     in:  its size
 *            __u32 timeout_ms;     in:  wait for the other threads (0: 10 s,
 *                                       at most CKPT_TIMEOUT_MAX_MS)
 *            __u64 obj_fds;        in:  __s32[nr_obj_fds], or 0: per FILEOBJ
 *                                       entry of the image, the caller's
 *                                       descriptor of the file it made for it
 *                                       (memfd, unlinked file), -1 for none;
 *                                       mappings of the entry map that file,
 *                                       and the descriptors are closed once
 *                                       the restart succeeds
 *            __u32 nr_obj_fds;     in:  at most CKPT_RESTART_MAX_OBJ_FDS
 *            __s32 root_fd;        in:  with CKPT_RESTART_ROOT_FD in @flags,
 *                                       a directory (O_PATH will do) from
 *                                       which the image's absolute paths
 *                                       (mapped files, the executable) are
 *                                       opened: the restarter's root before
 *                                       it entered the image's root
 *                                       directory; closed once the restart
 *                                       succeeds. Without the flag, 0, and
 *                                       the caller's root is used
 *            __s32 uffd;           in:  with CKPT_RESTART_LAZY in @flags,
 *                                       a userfaultfd the caller made (API
 *                                       done): the engine leaves the pages
 *                                       of private writable anonymous
 *                                       mappings out and registers those
 *                                       mappings with it (missing mode) for
 *                                       the restarter to fill; the image
 *                                       must be a regular file; closed once
 *                                       the restart succeeds. Without the
 *                                       flag, 0
 *            __s32 hold_fd;        in:  with CKPT_RESTART_HOLD in @flags,
 *                                       a connected UNIX stream socket:
 *                                       once the process is whole (memory
 *                                       in, or registered for a lazy
 *                                       restart; exe and XSAVE states
 *                                       set), before any thread runs the
 *                                       image's code, the engine sends
 *                                       one byte on it and waits, killable
 *                                       only, for one byte back; end of
 *                                       file or an error kills the process
 *                                       ("the holder called the restart
 *                                       off" on @err_fd). Closed once the
 *                                       restart succeeds. Without the
 *                                       flag, 0
 *            __u64 reserved[1];    in:  must be 0
 *        };
 *
 *        The process of a lazy restart cannot run on if its restarter dies
 *        before its pages are all in: the restarter's child sets
 *        PR_SET_PDEATHSIG to SIGKILL first, which the restart keeps
 *        (with CKPT_RESTART_LAZY_UNTIED it does not: a tree's member, tied
 *        to its pid namespace's init instead, whose page server ending
 *        badly ends the namespace; no CKPT_IOC_LAZY_DONE then). Once
 *        the restarter has filled every page it calls
 *
 *    CKPT_IOC_LAZY_DONE  _IOW(CKPT_IOC_MAGIC, 0x07, __u32)
 *
 *        with the pid of that child: the engine clears the SIGKILL death
 *        signal it set again. Only the process's parent may (-EPERM; -ESRCH
 *        for no such process), and only once, for a process a lazy restart
 *        armed (-ENOENT otherwise: a death signal the process set itself
 *        stays).
 *
 *    Callbacks (libckpt; see Documentation/libckpt.md for the protocol):
 *
 *    CKPT_IOC_REGISTER  _IOW(CKPT_IOC_MAGIC, 0x04, struct ckpt_register)
 *
 *        Registers the calling process for callbacks through this open
 *        file; the registration ends when the file is released. A process
 *        has at most one (-EBUSY). CKPT_REGISTER_RESTARTED is for restarters:
 *        the next CKPT_IOC_CB_READY returns 1 and reports @source.
 *
 *        struct ckpt_register {
 *            __u32 flags;          in:  CKPT_REGISTER_*
 *            __u32 source_len;     in:  length of @source, at most 4095
 *            __u64 source;         in:  image the process restarted from
 *            __u64 reserved[2];    in:  must be 0
 *        };
 *
 *    CKPT_IOC_CB_WAIT  _IOWR(CKPT_IOC_MAGIC, 0x05, struct ckpt_cb_request)
 *
 *        The callback thread of a registered process sleeps here until a
 *        checkpoint of its process is requested; -EINTR/-ERESTARTSYS on
 *        signals. Out: the request's @id and its CKPT_CHECKPOINT_* @flags.
 *
 *    CKPT_IOC_CB_READY  _IOWR(CKPT_IOC_MAGIC, 0x06, struct ckpt_cb_ready)
 *
 *        The callbacks of request @id are done: @verdict CKPT_CB_GO lets the
 *        checkpoint proceed and waits for it to end; CKPT_CB_ABORT_TEMP and
 *        CKPT_CB_ABORT_PERM fail the request (-EAGAIN and -ECANCELED for the
 *        requester, with @msg) and return the same error at once;
 *        CKPT_CB_PROBE changes nothing and returns 0 while request @id is
 *        still waiting for its verdict, else how it ended. Returns 0
 *        when the process continues after the checkpoint, 1 when it runs
 *        again from the image (then @source is filled), or the negative
 *        error that ended the checkpoint.
 *
 *        struct ckpt_cb_request {
 *            __u64 id;             out
 *            __u32 flags;          out: the requester's CKPT_CHECKPOINT_*
 *            __u32 timeout_ms;     out: how long the requester waits
 *            __u32 reserved[4];    in:  must be 0
 *        };
 *        struct ckpt_cb_ready {
 *            __u64 id;             in
 *            __s32 verdict;        in:  CKPT_CB_*
 *            __u32 msg_len;        in:  length of @msg (abort reason)
 *            __u64 msg;            in:  user pointer, or 0
 *            __u64 source;         in:  buffer for the restart source
 *            __u32 source_len;     in:  its size
 *            __u32 reserved[3];    in:  must be 0
 *        };
 *
 *    A checkpoint of a registered process first wakes its callback thread
 *    and waits (up to the request's timeout) for its verdict; only then
 *    are the threads frozen. Processes without a registration are frozen
 *    at once.
 *
 *    Restart with other credentials (Documentation/engine.md, "Credentials"):
 *
 *    CKPT_IOC_RESTART_CREDS  _IO(CKPT_IOC_MAGIC, 0x08)   (argument 0)
 *
 *        For a restart whose image ran with other credentials than the
 *        restarter: a helper process of the restarter, on the same open
 *        /dev/ckpt, having switched to the image's supplementary groups,
 *        group and user ids with the system calls (setgroups, setresgid,
 *        setresuid, setfsgid, setfsuid; their checks decide whether it
 *        may), hands its credentials over, once (-EBUSY after). At
 *        CKPT_IOC_RESTART the engine refuses (-EPERM, with a message) ids
 *        other than the image's, given or the caller's own, or that the
 *        caller could not have switched to itself; the restarted process
 *        gets them with each capability set lowered to what both the image
 *        and the caller have.
 *
 *    Image authentication (Documentation/security.md):
 *
 *    CKPT_IOC_SET_KEY  _IOW(CKPT_IOC_MAGIC, 0x09, struct ckpt_key)
 *
 *        Sets the key of the MAC the engine puts in every image it writes
 *        and checks in every image it restarts (the MAC section of
 *        linux/ckpt_image.h). Needs CAP_SYS_ADMIN in the initial user
 *        namespace (-EPERM). Until it is set the engine uses a random key
 *        of its own, so images restart authenticated only while the module
 *        stays loaded; a cluster shares one key so that they restart on
 *        any of its nodes. The key cannot be read back.
 *
 *        struct ckpt_key {
 *            __u64 key;            in:  the key's bytes
 *            __u32 len;            in:  CKPT_KEY_MIN_LEN .. CKPT_KEY_MAX_LEN
 *            __u32 flags;          in:  0
 *            __u64 reserved[2];    in:  must be 0
 *        };
 *
 *        CKPT_IOC_RESTART refuses an image whose MAC does not match
 *        (-EKEYREJECTED) and one without MAC (-ENOKEY) unless @flags has
 *        CKPT_RESTART_UNAUTHENTICATED: then the image's ids must be the
 *        caller's own, and no credentials may be handed over (-EPERM).
 *
 *    Process trees (Documentation/engine.md, "Process trees"):
 *
 *    CKPT_IOC_CHECKPOINT_TREE  _IOWR(CKPT_IOC_MAGIC, 0x0A, struct ckpt_checkpoint_tree)
 *
 *        Captures a process and every descendant as one consistent set:
 *        @members[0] is the root, the others exactly its descendants (each
 *        one's parent is a member listed before it; every child of a member,
 *        live or zombie, is a member; -EBUSY naming the first that is not).
 *        With CKPT_CHECKPOINT_ROOTS, several such trees: a member whose
 *        parent is no member is the root of one.
 *        Each member gets the rights check of CKPT_IOC_CHECKPOINT, all
 *        before anything is frozen; every member's libckpt callbacks run
 *        before any member is frozen; all are frozen before any is
 *        captured; all continue, stop or die together once every image is
 *        written (or, continuing or with CKPT_CHECKPOINT_STAGED, staged). A failure anywhere thaws every
 *        member untouched. Each image carries a TREE section
 *        (linux/ckpt_image.h) and numbers its pids and tids in the root's
 *        pid namespace; a member in another pid namespace is refused. The
 *        standard descriptors (0-2) of a member other than the root must be
 *        the root's own open files of the same number (they are re-attached
 *        to the restarter's); -EOPNOTSUPP naming the member and descriptor
 *        otherwise.
 *
 *        struct ckpt_tree_member {
 *            __u32 pid;            in:  process (tgid) in the caller's pid ns
 *            __s32 fd;             in:  its image goes here
 *            __u32 nr_threads;     out: threads captured
 *            __u32 ns_pid;         in:  must be 0; out: its pid in the
 *                                       root's pid namespace (the image's)
 *            __u64 image_bytes;    out: bytes written
 *            __u64 nr_pages;       out: memory pages stored
 *        };
 *        struct ckpt_checkpoint_tree {
 *            __u64 members;        in:  struct ckpt_tree_member[nr_members]
 *            __u32 nr_members;     in:  1 .. CKPT_TREE_MAX_MEMBERS
 *            __u32 flags;          in:  CKPT_CHECKPOINT_*
 *            __u32 timeout_ms;     in:  as CKPT_IOC_CHECKPOINT's, for all
 *            __u32 errmsg_len;     in:  size of @errmsg
 *            __u64 errmsg;         in:  user buffer for a message, or 0
 *            __u64 frozen_ns;      out: from the first freeze to the last thaw
 *            __u64 total_ns;       out: time the whole call took
 *            __u8  id[16];         out: the TREE sections' id
 *            __u64 digests;        in:  with CKPT_CHECKPOINT_DIGESTS, a
 *                                       user buffer of nr_members x
 *                                       CKPT_DIGEST_LEN bytes; else 0
 *            __s32 staged_fd;      in:  with CKPT_CHECKPOINT_STAGED, an
 *                                       eventfd; else 0
 *            __u32 reserved32;     in:  must be 0
 *            __u64 reserved[2];    in:  must be 0
 *        };
 *
 * 2. The generic-netlink family CKPT_GENL_NAME, version CKPT_GENL_VERSION.
 *    Used by ckptd and administrative tools.
 *
 *    CKPT_CMD_GET_VERSION  (doit, any user)
 *        request:  (no attributes)
 *        reply:    CKPT_A_UAPI_VERSION  u32
 *                  CKPT_A_RELEASE       string, at most 31 bytes
 *
 * Errors: unknown flag bits and non-zero reserved fields are rejected with
 * -EINVAL; every netlink validation failure carries an extack message.
 */
#ifndef _UAPI_LINUX_CKPT_H
#define _UAPI_LINUX_CKPT_H

#include <linux/types.h>
#include <linux/ioctl.h>

/* Bumped on every incompatible change of anything in this file. */
#define CKPT_UAPI_VERSION	1

#define CKPT_DEVICE_NAME	"ckpt"
#define CKPT_RELEASE_LEN	32

/* character device */

#define CKPT_IOC_MAGIC		0xC7

struct ckpt_version {
	__u32 uapi_version;
	__u32 flags;
	char release[CKPT_RELEASE_LEN];
};

#define CKPT_IOC_VERSION	_IOWR(CKPT_IOC_MAGIC, 0x00, struct ckpt_version)

enum ckpt_checkpoint_flags {
	CKPT_CHECKPOINT_STOP	= 1 << 0,	/* leave the process stopped */
	CKPT_CHECKPOINT_KILL	= 1 << 1,	/* kill it once captured */
	/*
	 * A tree's only (CKPT_IOC_CHECKPOINT_TREE), and CAP_NET_ADMIN's: a
	 * TCP connection whose other end is in no member is captured all
	 * the same, its end alone; the caller (ckptd) finds the other end in
	 * another node's share of the job and checks the two fit
	 * (Documentation/ckptd.md, "TCP between nodes").
	 */
	CKPT_CHECKPOINT_PEERS_AWAY	= 1 << 2,
	/*
	 * A tree's only: a regular file of the node's own (on a tmpfs, as
	 * /dev/shm; under /tmp or /var/tmp on a local disk file system, not
	 * a network one's) that a member maps shared or holds open
	 * for reading is carried by content too (CKPT_FILE_LOCAL), so the
	 * restart can make it again where its path is gone: on another node,
	 * or once the files were cleaned (ckptd sets it for a job's share).
	 */
	CKPT_CHECKPOINT_LOCAL_FILES	= 1 << 3,
	/*
	 * A tree's only: the members are several trees taken as one set
	 * (a job's processes on a node: ckptd). A member listed after
	 * member 0 whose parent is no member is a root too (its image's
	 * TREE section says CKPT_TREE_ROOT); every other rule holds.
	 */
	CKPT_CHECKPOINT_ROOTS	= 1 << 4,
	/*
	 * A tree's only: the SHA-256 of every byte written to each member's
	 * image descriptor, computed as it is written, goes to @digests
	 * (member order) once all are complete, so that a caller recording
	 * them (ckptd's snapshot metadata) need not read the images back.
	 */
	CKPT_CHECKPOINT_DIGESTS	= 1 << 5,
	/*
	 * A tree's only, with CKPT_CHECKPOINT_STOP: the members' pages are
	 * staged as for a checkpoint that lets them go on, and they are left
	 * stopped (SIGSTOP) as soon as every member is captured and staged,
	 * before the images are written; @staged_fd, an eventfd, is signalled
	 * then. The caller may let them go on (SIGCONT) while the call writes
	 * the images: ckptd releases a job's shares on several nodes once
	 * every node has said so, rather than once every image is written.
	 * A failure after the signal (a write) leaves the members stopped,
	 * the caller's to continue, and is never -EAGAIN, -EBUSY or -ESRCH,
	 * the errors a caller may try again for.
	 */
	CKPT_CHECKPOINT_STAGED	= 1 << 6,
	/*
	 * A tree's only, with CKPT_CHECKPOINT_PEERS_AWAY: a TCP connection
	 * waiting in a member's listening socket's queue whose other end is
	 * in no member is captured too (its WAITING section, with the bytes
	 * it received), for the caller (ckptd) to join with its other end on
	 * another node, which connects again at the restart. Without it
	 * such a connection is refused, -EAGAIN (it is mostly accepted in
	 * moments); ckptd sets it only for a job's shares over several nodes,
	 * where the join of every node's ends comes before any member is
	 * stopped or killed for good (a continue's try is undone).
	 */
	CKPT_CHECKPOINT_WAITING_AWAY	= 1 << 7,
	__CKPT_CHECKPOINT_F_ALL	= (1 << 8) - 1,
};

#define CKPT_DIGEST_LEN		32	/* SHA-256 */

struct ckpt_checkpoint {
	__u32 pid;
	__s32 fd;
	__u32 flags;
	__u32 timeout_ms;
	__u64 errmsg;
	__u32 errmsg_len;
	__u32 nr_threads;
	__u64 frozen_ns;
	__u64 total_ns;
	__u64 image_bytes;
	__u64 nr_pages;
	__u64 reserved[4];
};

#define CKPT_IOC_CHECKPOINT	_IOWR(CKPT_IOC_MAGIC, 0x01, struct ckpt_checkpoint)
/* The longest checkpoint timeout_ms (10 minutes); more is -EINVAL. */
#define CKPT_TIMEOUT_MAX_MS	600000

enum ckpt_restart_flags {
	CKPT_RESTART_ROOT_FD	= 1 << 0,	/* root_fd is set */
	CKPT_RESTART_LAZY	= 1 << 1,	/* uffd is set */
	/* An image without MAC, as the caller itself (security.md) */
	CKPT_RESTART_UNAUTHENTICATED	= 1 << 2,
	/*
	 * With CKPT_RESTART_LAZY: no death signal tied to the parent (a
	 * tree's member, whose parent is another member; its page server
	 * keeps it instead: lib/restore/tree.c)
	 */
	CKPT_RESTART_LAZY_UNTIED	= 1 << 3,
	CKPT_RESTART_HOLD	= 1 << 4,	/* hold_fd is set */
	__CKPT_RESTART_F_ALL	= (1 << 5) - 1,
};

struct ckpt_restart {
	__s32 fd;
	__s32 err_fd;
	__u32 flags;
	__u32 nr_threads;
	__u64 errmsg;
	__u32 errmsg_len;
	__u32 timeout_ms;
	__u64 obj_fds;
	__u32 nr_obj_fds;
	__s32 root_fd;
	__s32 uffd;
	__s32 hold_fd;
	__u64 reserved[1];
};

#define CKPT_RESTART_MAX_OBJ_FDS	1024

#define CKPT_IOC_RESTART	_IOW(CKPT_IOC_MAGIC, 0x02, struct ckpt_restart)
#define CKPT_IOC_RESTART_THREAD	_IOW(CKPT_IOC_MAGIC, 0x03, __u32)
#define CKPT_IOC_LAZY_DONE	_IOW(CKPT_IOC_MAGIC, 0x07, __u32)

enum ckpt_register_flags {
	CKPT_REGISTER_RESTARTED	= 1 << 0,
	__CKPT_REGISTER_F_ALL	= (1 << 1) - 1,
};

#define CKPT_SOURCE_MAX		4096

struct ckpt_register {
	__u32 flags;
	__u32 source_len;
	__u64 source;
	__u64 reserved[2];
};

struct ckpt_cb_request {
	__u64 id;
	__u32 flags;
	__u32 timeout_ms;
	__u32 reserved[4];
};

enum ckpt_cb_verdict {
	CKPT_CB_GO,
	CKPT_CB_ABORT_TEMP,
	CKPT_CB_ABORT_PERM,
	CKPT_CB_PROBE,		/* only ask: 0 while @id is still wanted */
};

struct ckpt_cb_ready {
	__u64 id;
	__s32 verdict;
	__u32 msg_len;
	__u64 msg;
	__u64 source;
	__u32 source_len;
	__u32 reserved[3];
};

#define CKPT_IOC_REGISTER	_IOW(CKPT_IOC_MAGIC, 0x04, struct ckpt_register)
#define CKPT_IOC_CB_WAIT	_IOWR(CKPT_IOC_MAGIC, 0x05, struct ckpt_cb_request)
#define CKPT_IOC_CB_READY	_IOWR(CKPT_IOC_MAGIC, 0x06, struct ckpt_cb_ready)
#define CKPT_IOC_RESTART_CREDS	_IO(CKPT_IOC_MAGIC, 0x08)

#define CKPT_KEY_MIN_LEN	16
#define CKPT_KEY_MAX_LEN	64

struct ckpt_key {
	__u64 key;
	__u32 len;
	__u32 flags;
	__u64 reserved[2];
};

#define CKPT_IOC_SET_KEY	_IOW(CKPT_IOC_MAGIC, 0x09, struct ckpt_key)

/* Process trees */

#define CKPT_TREE_MAX_MEMBERS	1024
#define CKPT_TREE_ID_LEN	16

struct ckpt_tree_member {
	__u32 pid;
	__s32 fd;
	__u32 nr_threads;
	__u32 ns_pid;
	__u64 image_bytes;
	__u64 nr_pages;
};

struct ckpt_checkpoint_tree {
	__u64 members;
	__u32 nr_members;
	__u32 flags;
	__u32 timeout_ms;
	__u32 errmsg_len;
	__u64 errmsg;
	__u64 frozen_ns;
	__u64 total_ns;
	__u8 id[CKPT_TREE_ID_LEN];
	__u64 digests;
	__s32 staged_fd;
	__u32 reserved32;
	__u64 reserved[2];
};

#define CKPT_IOC_CHECKPOINT_TREE	_IOWR(CKPT_IOC_MAGIC, 0x0A, struct ckpt_checkpoint_tree)

/* generic netlink */

#define CKPT_GENL_NAME		"ckpt"
#define CKPT_GENL_VERSION	1

enum ckpt_cmd {
	CKPT_CMD_UNSPEC,
	CKPT_CMD_GET_VERSION,

	__CKPT_CMD_MAX,
	CKPT_CMD_MAX = __CKPT_CMD_MAX - 1
};

enum ckpt_attr {
	CKPT_A_UNSPEC,
	CKPT_A_UAPI_VERSION,	/* u32 */
	CKPT_A_RELEASE,		/* string */

	__CKPT_A_MAX,
	CKPT_A_MAX = __CKPT_A_MAX - 1
};

#endif /* _UAPI_LINUX_CKPT_H */
