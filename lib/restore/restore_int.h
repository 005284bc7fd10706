/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Inside the restorer: one process's restart (restore.c), as the tree
 * restart (tree.c) drives it for each member.
 */
#ifndef _CKPT_RESTORE_INT_H
#define _CKPT_RESTORE_INT_H

#include <stdbool.h>
#include <sys/types.h>

#include "image.h"
#include "lazy.h"
#include "restore.h"

struct stat;

/*
 * What the members of a tree share, made once by the restarter before any
 * member exists and inherited by all (tree.c): every pipe of the tree
 * (kind CKPT_FILE_PIPE, @ino its pipe), the restarter's standard
 * descriptors (CKPT_FILE_STDIO, @ino the descriptor), every file
 * object more than one member holds (its FILEOBJ kind, @dev and @ino its
 * identity at the checkpoint) and every open regular file or directory
 * several members hold (CKPT_FILE_TREE_SHARED: its kind, @dev and @ino),
 * each out of the way of the image's descriptors.
 */
/*
 * The kind under which the table keeps a memfd's or deleted file's open
 * file several members hold (CKPT_FILE_TREE_SHARED): @dev its number in
 * the tree, @ino its object's inode number at the checkpoint (an entry
 * naming another object under the same number finds nothing); its object
 * is there under its own kind.
 */
#define RESTORE_SHARED_OBJFILE	(1U << 16)

struct restore_shared {
	__u32 kind;
	__u64 dev, ino;
	int fd[2];		/* a pipe's read and write ends, a pty's master
				 * and slave; else fd[0], -1 */
	__u32 holder;		/* the member whose image made it (tree.c) */
	bool connected;		/* a UNAME socket: connected by name again */
};

/* @kind's @dev:@ino in @sh[0..@nr), or NULL. */
const struct restore_shared *
restore_find_shared(const struct restore_shared *sh, uint32_t nr, __u32 kind,
		    __u64 dev, __u64 ino);

/*
 * The @dev under which the table keeps a tree's shared open file of entry
 * @f (CKPT_FILE_TREE_SHARED): its own, but a regular file's or directory's
 * with the open file's number (CKPT_FILE_OPEN_NR()) above the 32 bits a
 * device number has, so that each open file of one file is one entry.
 */
static inline __u64 restore_shared_dev(const struct ckpt_img_file *f)
{
	if (f->kind != CKPT_FILE_REGULAR && f->kind != CKPT_FILE_DIR)
		return f->dev;
	return f->dev | (__u64)CKPT_FILE_OPEN_NR(f->flags) << 32;
}

/*
 * One restart: what the parent learns and the child inherits. No state
 * lives outside it, so a program may restart more than one image.
 */
struct restore {
	const struct ckpt_restore_opts *opts;
	struct ckpt_image img;
	struct lazy lz;			/* --lazy: the pages to serve */
	char *source;			/* told to libckpt: restarted from */
	/*
	 * Whether the image was made on this boot (its header's boot id):
	 * device numbers mean something only within one boot, so elsewhere
	 * (another node, another kernel, a reboot) files are known by inode
	 * number alone.
	 */
	bool same_boot;
	unsigned int read_flags;	/* CKPT_IMAGE_* for ckpt_image_read() */
	unsigned int flags;		/* CKPT_RESTART_* */
	int fd, dev;			/* the image, /dev/ckpt */
	int errpipe;			/* child: where its failure goes */
	int lazy_sock;			/* child, --lazy: where its uffd goes; else -1 */
	int *obj_fds;			/* child: the file objects' descriptors */
	char *chunk_buf;		/* child: file data on its way */
	pid_t restarter;
	/*
	 * A member of a tree (tree.c): its pid named in failures, and the
	 * barrier every member reaches before any is handed over: one byte
	 * written to @ready_fd, then one read from @go_fd (EOF: give up).
	 * -1 and 0 for a single process. With @hold_fd (not -1), the engine
	 * holds the member once it is whole (CKPT_RESTART_HOLD).
	 */
	pid_t member;
	int ready_fd, go_fd;
	int hold_fd;
	bool sysv_root;			/* made the tree's System V objects */
	struct restore_shared *shared;	/* [nr_shared], the member's copy */
	uint32_t nr_shared;
};

/*
 * A pipe of @pd made anew, its capacity and content restored, both ends
 * (close-on-exec) at @above or higher in @p: 0 or -errno.
 */
int restore_make_pipe(const struct ckpt_img_pipe *pd, int above, int p[2]);

/*
 * File object @obj of @r's image made anew (a memfd, an unnamed file, a
 * tree's shared memory) or reopened (a FIFO), sized and filled from the
 * image: its descriptor, close-on-exec, or -errno with @err.
 */
int restore_make_object(struct restore *r, uint32_t obj, struct ckpt_err *err);

/*
 * Whether @o is the executable of @img's process, deleted while it ran or
 * a memfd, carried by the image (CKPT_IMG_EXE_OBJ). An exe file denies
 * writes, which it cannot while an open file of it takes write access: a
 * deleted file made anew goes to the engine read-only, once filled
 * (restore_object_readonly()). A memfd's own file (memfd_create()) takes
 * none, as fexecve() of a memfd open read-write shows: it stays as it is,
 * and the process's writable descriptor of it is that file (there was
 * one at most: another open for writing fails while it runs).
 */
bool restore_is_exe(const struct ckpt_image *img,
		    const struct ckpt_img_fileobj *o);
/* A deleted file's read-only descriptor in place of @fd, or -errno. */
int restore_object_readonly(const struct ckpt_img_fileobj *o, int fd,
			    struct ckpt_err *err);

/*
 * What @make makes of @arg (an open file: its descriptor, or -errno with
 * @err), made in a helper process that has taken @r's image's groups and
 * file-system ids, so files are opened and names bound as the process
 * would; @what names it in a message when the helper dies silent.
 */
typedef int (*restore_make_fn)(struct restore *r, const void *arg,
			       struct ckpt_err *err);
int restore_as_member(struct restore *r, restore_make_fn make, const void *arg,
		      const char *what, struct ckpt_err *err);

/*
 * @l's listening UNIX socket again, as @r's process (restore_as_member()):
 * bound to its name and listening. Its descriptor, or -errno with @err.
 */
int restore_make_listener(struct restore *r, const struct ckpt_img_ulisten *l,
			  struct ckpt_err *err);

/*
 * The connections that waited on @l (UPEND sections of @holder, the image
 * @l comes from), in their order, once @l listens again: each client
 * connects to @l's name and sends its bytes again; an entry in @sh for
 * each client among @imgs[0..@n), after its *@nr entries. 0 or -errno
 * with @err.
 */
int restore_make_pending(const struct ckpt_image *holder,
			 const struct ckpt_img_ulisten *l,
			 struct ckpt_image *const *imgs, uint32_t n,
			 struct restore_shared *sh, uint32_t *nr,
			 struct ckpt_err *err);

/*
 * @img's UNIX sockets with names, or connected to nothing (UNAME
 * sections; usock.c), each once, as @r's process (restore_as_member()):
 * bound to their names again, their messages queued again; an entry in
 * @sh for each after its *@nr entries. restore_connect_unames(), once
 * every socket of the image (a tree's: of its images) is made: each
 * connected to its peer's name again, as @r's process. 0 or -errno with
 * @err.
 */
int restore_make_unames(struct restore *r, const struct ckpt_image *img,
			struct restore_shared *sh, uint32_t *nr,
			struct ckpt_err *err);
int restore_connect_unames(struct restore *r, const struct ckpt_image *img,
			   struct restore_shared *sh, uint32_t nr,
			   struct ckpt_err *err);

/*
 * The channels of @imgs[0..@n) (channel.c): each kind's sockets made
 * again, each once, an entry in @sh for each after its *@nr entries; a
 * connection's peer is among them or on another node of the job. With @o
 * (NULL: a single process's), TCP's addresses go through @o->addrmap
 * first, and @o->made is called once all are made, before any talks. A
 * TCP connection whose socket inode is one of @closed (@nr_closed) is made
 * a socket that is not connected.
 */
struct restore_chans {
	struct ckpt_image *const *imgs;
	uint32_t n;
	struct restore_shared *sh;
	uint32_t *nr;
	uint32_t from;		/* sh[from..*nr): the channels' own */
	const struct ckpt_restore_opts *o;
	const uint64_t *closed;
	uint32_t nr_closed;
	struct restore_remote_waits *waits;	/* restore_remote_waits() */
	struct ckpt_err *err;
};

/* A kind of channel: its two steps, each 0 or -errno with @c->err. */
struct restore_channel {
	const char *name;
	int (*make)(struct restore_chans *c);	/* made, sending nothing */
	int (*talk)(struct restore_chans *c);	/* every kind's made: talk */
};

extern const struct restore_channel restore_channel_tcp;	/* tcp.c */

/* Every kind's make, @c->o->made, every kind's talk: 0 or -errno. */
int restore_make_channels(struct restore_chans *c);

/*
 * FIFO @o of @img, whose path is gone, made again as the process's user
 * (localfile.c): 0 or -errno with @err. restore_file_made(): whether this
 * restart made the FIFO or tmpfs file of that identity.
 */
int restore_fifo_make(const struct ckpt_image *img,
		      const struct ckpt_img_fileobj *o, struct ckpt_err *err);
bool restore_file_made(dev_t dev, ino_t ino);
bool restore_file_made_fd(int fd);

/*
 * Whether FIFO @o was unlinked while open (its name ends in " (deleted)",
 * as the kernel writes it). restore_fifo_unlinked(): such a FIFO made
 * anew, unlinked at once, owned by @img's process's user, mode 0600 until
 * restore_finish_object() gives it @o's: its read-write descriptor
 * (close-on-exec, non-blocking) or -errno with @err. The process's other
 * descriptors of it are opened through this one.
 */
bool restore_fifo_deleted(const struct ckpt_img_fileobj *o);
int restore_fifo_unlinked(const struct ckpt_image *img,
			  const struct ckpt_img_fileobj *o, struct ckpt_err *err);

/*
 * Tmpfs file @o of @img (CKPT_FILE_LOCAL) as the process's user: the file
 * at its path, read-write if the user may (the caller checks it is the
 * file it was), or, where the path is gone, made again, empty and
 * read-write (*@made), for the caller to fill. Its descriptor, or -errno
 * with @err.
 */
int restore_local_open(const struct ckpt_image *img,
		       const struct ckpt_img_fileobj *o, bool *made,
		       struct ckpt_err *err);

/*
 * The tree's address map where its processes find it (restore.h): in
 * CKPT_ADDRMAP_DIR, named for the pid namespace of @holder, @path set to
 * it; with no map, a file of that name left by an earlier tree is
 * removed. 0 or -errno with @err.
 */
int restore_addrmap_publish(const struct ckpt_restore_opts *o, pid_t holder,
			    char *path, size_t size, struct ckpt_err *err);

/*
 * The pseudo-terminals of @imgs[0..@n) (pty.c), each pair once, as it was
 * set: an entry in @sh for each after its *@nr entries, its master in
 * fd[0] and its slave in fd[1]. 0 or -errno with @err.
 */
int restore_make_ptys(struct ckpt_image *const *imgs, uint32_t n,
		      struct restore_shared *sh, uint32_t *nr,
		      struct ckpt_err *err);

/*
 * Ends the original's closed connections (TIME_WAIT and the states before
 * it, no process holding them) in the way of @t, a TCP socket to be made
 * again (timewait.c): to bind (@bind), those on its address and port; to
 * connect, those on its four addresses. How many it ended, or -errno.
 */
int restore_end_time_wait(const struct ckpt_img_tcp *t, bool bind);

/*
 * The closed connections on the four addresses of every connection of @n
 * images but @closed's (their inodes), ended before any socket is made
 * (timewait.c says why): how many.
 */
int restore_end_closed(struct ckpt_image *const *imgs, uint32_t n,
		       const uint64_t *closed, uint32_t nr_closed);

/*
 * The socket inodes of @o->closed (member pid and descriptor) in tree @t,
 * whose members' images are @imgs, into @inos: each must be a TCP
 * connection of a member, or the restart is refused by name. Their
 * number, or -errno with @err.
 */
struct ckpt_tree;
int restore_closed_inos(const struct ckpt_tree *t, struct ckpt_image *const *imgs,
			const struct ckpt_restore_opts *o, uint64_t *inos,
			struct ckpt_err *err);
/*
 * A tree's connections whose other end waited to be accepted on another
 * node, and its listeners such connections waited on (@o->reconnect,
 * @o->awaited): their sockets' inodes and, for each connection, its other
 * end as a WAITING section would have it.
 */
struct restore_remote_waits {
	uint32_t nr, nr_awaited;
	uint64_t *ino, *awaited;
	struct ckpt_img_tcp **w;
};

/* @o's into *@out (tree @t, images @imgs): 0 or -errno with @err. */
int restore_remote_waits(const struct ckpt_tree *t, struct ckpt_image *const *imgs,
			 const struct ckpt_restore_opts *o,
			 struct restore_remote_waits *out, struct ckpt_err *err);
void restore_remote_waits_free(struct restore_remote_waits *w);

/* Whether socket @ino is one of @closed[@n]. */
bool restore_is_closed(uint64_t ino, const uint64_t *closed, uint32_t n);

/*
 * What else holds @t's address and port (to bind, @bind) or its four
 * addresses, into @buf ("pid N (COMM) holds socket:[I] there, STATE on
 * A:P"), for an error that says so; empty if sock_diag shows none.
 */
void restore_port_holder(const struct ckpt_img_tcp *t, bool bind, char *buf,
			 size_t len);

/*
 * The regular file or directory @f of @r's image, opened as the image's
 * user opens it (its groups and file-system ids, in a helper process) at
 * its position: its descriptor, close-on-exec, or -errno with @err.
 */
int restore_open_shared(struct restore *r, const struct ckpt_img_file *f,
			struct ckpt_err *err);

/*
 * The memfd's or deleted file's descriptor @f of @r's image, a new open
 * file of its object (@objfd, the tree's), opened as the image's user
 * opens it, with @f's flags at its position: its descriptor,
 * close-on-exec, or -errno with @err.
 */
int restore_open_shared_object(struct restore *r, const struct ckpt_img_file *f,
			       int objfd, struct ckpt_err *err);

/*
 * The eventfd @f with its count and flags, the signalfd with its mask, the
 * timerfd of @img armed as it was, an epoll without its items (the holder
 * adds them, restore_epoll()): its descriptor or -errno with @err.
 */
int restore_make_eventfd(const struct ckpt_img_file *f, struct ckpt_err *err);
int restore_make_signalfd(const struct ckpt_img_file *f, struct ckpt_err *err);
int restore_make_timerfd(const struct ckpt_image *img,
			 const struct ckpt_img_file *f, struct ckpt_err *err);
int restore_make_epoll(const struct ckpt_img_file *f, struct ckpt_err *err);

/*
 * The inotify instance @f of @r's image with its watches, each at its path
 * with its number (inotify.c): its descriptor or -errno with @err.
 */
int restore_make_inotify(const struct restore *r, const struct ckpt_img_file *f,
			 struct ckpt_err *err);

/*
 * Reads away what opening the image's other files queued on its inotify
 * instances (IN_OPEN on a watched directory...): at the checkpoint their
 * queues were empty.
 */
void restore_inotify_drain(const struct ckpt_image *img);

/* Whether @st is the file of identity @dev, @ino, or one the restart made. */
bool restore_same_or_made(const struct restore *r, const struct stat *st,
			  __u64 dev, __u64 ino);

/* Once every descriptor of it is open: @o's mode and seals on @fd. */
int restore_finish_object(const struct ckpt_img_fileobj *o, int fd,
			  struct ckpt_err *err);

/* Whether [lo, hi) overlaps any mapping of ours but the vdso and vvar. */
bool restore_range_busy(unsigned long lo, unsigned long hi);

/* Whether [lo, hi) is in the way of @r's image's memory or its old vdso. */
bool restore_image_busy(struct restore *r, unsigned long lo, unsigned long hi);

/* System V IPC (sysv.c): whether the image (a tree's root) carries some. */
bool restore_has_sysv(const struct ckpt_image *img);

/*
 * In the tree's new IPC namespace, before any member is forked: every
 * object of the root @r's image made again, with its id. 0 or -errno.
 */
int restore_make_sysv(struct restore *r, struct ckpt_err *err);

/*
 * Member @i's image @img (at @path) against the root's @root: System V
 * objects in the root's only, and every segment it maps among them.
 */
int restore_check_sysv(const struct ckpt_image *root, uint32_t i,
		       const struct ckpt_image *img, const char *path,
		       struct ckpt_err *err);

/* In a member: the segments its image maps, attached out of its way. */
int restore_attach_sysv(struct restore *r, struct ckpt_err *err);

/* In a member: its semaphore adjustments (SEM_UNDO) made again. */
int restore_undo_sysv(struct restore *r, struct ckpt_err *err);

/* The image's file locks, taken by the restarted process (locks.c). */
int restore_take_locks(const struct ckpt_image *img, struct ckpt_err *err);

/* Once every member is attached: the segments removed while attached, again. */
int restore_remove_sysv(const struct ckpt_image *root, struct ckpt_err *err);

/*
 * Every UNIX socket pair the images @imgs[0..@n) hold (USOCK sections),
 * made once, with what was queued on each end: an entry per end in @sh,
 * after its *@nr entries. 0 or -errno with @err.
 */
int restore_make_usocks(struct ckpt_image *const *imgs, uint32_t n,
			struct restore_shared *sh, uint32_t *nr,
			struct ckpt_err *err);

/* @r ready for @opts, holding nothing yet. */
void restore_init(struct restore *r, const struct ckpt_restore_opts *opts);

/*
 * Opens and verifies the image, then opens /dev/ckpt: everything up to
 * the process's start. 0 or -errno with @err.
 */
int restore_prepare(struct restore *r, struct ckpt_err *err);

/*
 * --lazy, before restore_prepare(): the image open, its lazy pages to be
 * collected as it is read, and a socket pair for the child's userfaultfd
 * (@sv[1] the child's, r->lazy_sock). 0 or -errno with @err.
 */
int restore_prepare_lazy(struct restore *r, int sv[2], struct ckpt_err *err);

/*
 * --lazy, once the engine took the child over: takes its userfaultfd from
 * @sock (restore_prepare_lazy()'s @sv[0]) and brings its memory in. 0 or
 * -errno with @err (-EPROTO: nothing arrived, the child is not served).
 * A tree's member (r->member) has no death signal to clear at the end.
 */
int restore_serve_lazy(struct restore *r, int sock, struct ckpt_err *err);

/* In a process with the image's pid: becomes the image's process. */
void restore_child(struct restore *r) __attribute__((noreturn));

/* Drops what the restart holds: the image, /dev/ckpt, the lazy pages. */
void restore_free(struct restore *r);

/* Restarts the tree in the directory @opts->image (tree.c). */
int ckpt_restore_tree(const struct ckpt_restore_opts *opts, int *status,
		      struct ckpt_err *err);

#endif /* _CKPT_RESTORE_INT_H */
