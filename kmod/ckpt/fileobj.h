/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _CKPT_FILEOBJ_H
#define _CKPT_FILEOBJ_H

#include <linux/types.h>
#include <uapi/linux/ckpt_image.h>

struct ckpt_ipc;

struct cred;
struct file;
struct path;
struct inode;
struct dentry;
struct vm_area_struct;
struct ckpt_writer;
struct ckpt_img_pipe;
struct ckpt_why;

/* One open file of an object, and the references the process holds on it. */
struct fileobj_use {
	struct file *file;	/* referenced */
	u32 obj;
	u32 known;		/* descriptors and mappings naming it */
	int fd;			/* its first descriptor, or -1 */
};

/*
 * Files whose content goes into the image (FILEOBJ, FILEDATA): FIFOs, memfds
 * and regular files unlinked while open, gathered from the descriptors and
 * the mappings of a frozen process, one entry per inode.
 */
struct ckpt_fileobjs {
	struct ckpt_img_fileobj *img;	/* [CKPT_IMG_MAX_FILEOBJS] */
	struct inode **key;
	struct file **file;		/* referenced: the first file seen */
	struct file **rfile;		/* opened for reading the content */
	struct ckpt_img_pipe **fifo;	/* a FIFO's bytes (kvmalloc'ed) */
	struct fileobj_use *uses;	/* every distinct open file of them */
	u32 nr, nr_uses;
	/*
	 * A tree's member: MAP_SHARED anonymous memory is an object too
	 * (CKPT_FILE_SHMEM), and whether another process holds an object is
	 * decided for the whole tree (tree_files.c), not here.
	 */
	bool tree;
	/*
	 * CKPT_CHECKPOINT_LOCAL_FILES: a tmpfs file the member maps shared or
	 * holds open (write-only only if it may read it: fds.c) is an object
	 * too (CKPT_FILE_LOCAL), which
	 * other processes may hold: its content is a copy, taken frozen.
	 */
	bool local;
	/*
	 * With @local: the node's scratch directories on a local disk, /tmp
	 * and /var/tmp, as the task running the scan finds them (links
	 * followed), resolved once, before any mm is locked.
	 */
	struct path scratch[4];
	unsigned int nr_scratch;
	/* A tree's System V IPC (ipc.h): its segments' mappings name them. */
	const struct ckpt_ipc *ipc;
};

/*
 * Whether @file is referenced @refs times, or its dentry @refs times: true
 * at once, or once a count above @refs came down to it. The processes are
 * frozen, but a reader of their /proc entries (readlink() of
 * /proc/PID/fd/N or /proc/PID/exe: lsof, a monitor) holds the file, or its
 * dentry, for the moment of its system call; one that holds on is another
 * holder. Up to 100 ms; sleeps.
 */
bool ckpt_file_refs_are(struct file *file, unsigned long refs);
bool ckpt_dentry_refs_are(struct dentry *dentry, unsigned int refs);

int ckpt_fileobjs_init(struct ckpt_fileobjs *o);

/*
 * @o->local set: its scratch directories looked up (ckpt_fileobj_local()),
 * from the checkpointer's root and, for a @task in a copy of the
 * checkpointer's mount namespace (ckpt_mount_view()), from its top too.
 */
void ckpt_fileobjs_find_scratch(struct ckpt_fileobjs *o,
				struct task_struct *task);

/*
 * Whether the paths d_path() gives for @task's files (named from the top
 * of their mount namespace's tree) are the checkpointer's names, @task
 * being in another mount namespace than the checkpointer (current): 0,
 * with @top (a reference) the root directory of the namespace @root
 * (@task's root directory) is in, when that namespace is a copy of the
 * checkpointer's as the restarter and ckptd make one (a restarted tree's,
 * a job's under ckpt-run --ns, for a /proc of its own; or the
 * checkpointer's own, seen from inside one): that root is the
 * checkpointer's root directory, and /tmp, /var/tmp and /dev/shm are the
 * checkpointer's (not a sandbox's private ones, whose files would be made
 * again in the node's).
 * -EXDEV: @task is in the checkpointer's namespace. -EOPNOTSUPP: another
 * namespace, whose names are not the checkpointer's.
 */
int ckpt_mount_view(struct task_struct *task, const struct path *root,
		    struct path *top);

/*
 * @name, looked up from the checkpointer's root, is @dir's directory; with
 * @dir NULL, names no directory there.
 */
bool ckpt_names_dir(const char *name, const struct path *dir);

struct ckpt_writer;

/*
 * The data of @rf below @size, as sections of @type (FILEDATA, SYSVDATA)
 * naming @obj, holes left out: exactly @stored bytes, or -EAGAIN.
 */
int ckpt_write_runs(struct ckpt_writer *w, u32 type, u32 obj,
		    struct file *rf, u64 size, u64 stored);

/* The bytes of @rf below @size that are data (holes left out), in *@stored. */
int ckpt_count_data(struct file *rf, u64 size, u64 *stored);

/* Calls @fn on every run of data of @rf below @size, in chunks. */
int ckpt_walk_data(struct file *rf, u64 size,
		   int (*fn)(void *arg, loff_t off, size_t len), void *arg);
void ckpt_fileobjs_free(struct ckpt_fileobjs *o);

/*
 * d_path() of @file into @buf (@len bytes), but for a regular file unlinked
 * from the name it was opened by while another name on the same mount
 * still links it, that name: the file is then one by path, as it would be
 * had it been opened by it. glibc's sem_open() makes a semaphore's file
 * under a temporary name, maps it, links it to the semaphore's name and
 * unlinks the first (Python's multiprocessing with its "spawn" and
 * "forkserver" start methods keeps its semaphores so). The other name is
 * found among the names the kernel has in memory (d_find_alias()): on
 * tmpfs always, on a disk file system only while it is cached. May sleep.
 */
char *ckpt_file_path(const struct file *file, char *buf, int len);

/*
 * CKPT_FILE_FIFO, _MEMFD or _DELETED if @file (whose d_path(), or
 * ckpt_file_path(), is @path) is
 * one the image carries by content, else -1. Anonymous pipes are not FIFOs.
 */
int ckpt_fileobj_kind(struct file *file, const char *path);

/*
 * Whether @file (whose d_path(), or ckpt_file_path(), is @path) is a
 * regular file of the node's
 * own (on a tmpfs mount, or under /tmp or /var/tmp on a local disk file
 * system; not a memfd, not deleted, not System V memory) small enough for
 * an image: a CKPT_FILE_LOCAL object.
 */
bool ckpt_fileobj_local(const struct ckpt_fileobjs *o, struct file *file,
			const char *path);

/*
 * The index of @file's object, added if new. @fd is the descriptor @file is
 * at, or -1 for a mapping. -E2BIG past the limits.
 */
int ckpt_fileobj_add(struct ckpt_fileobjs *o, struct file *file, int kind,
		     const char *path, int fd);

/*
 * Describes a mapping of a memfd, a deleted file or (@o->local, shared) a
 * node-local file (@path its d_path()) in
 * @v, or fails naming why it cannot be restored.
 */
int ckpt_fileobj_vma(struct ckpt_fileobjs *o, struct vm_area_struct *vma,
		     const char *path, struct ckpt_img_vma *v,
		     struct ckpt_why *why);

/*
 * Once descriptors and mappings are known: identity, mode, seals, sizes,
 * the bytes each will store, and that no other process holds any of them
 * (a FIFO end, a memfd or deleted file), else -EOPNOTSUPP naming it; for
 * a tree's member, no other process but the tree's members, which
 * ckpt_tree_check_objects() checks once all are captured.
 */
int ckpt_fileobjs_capture(struct ckpt_fileobjs *o, pid_t pid, struct ckpt_why *why);

/*
 * The FILEDATA sections, object by object; -EAGAIN naming it in @why for a
 * node-local file that changed since its capture.
 */
int ckpt_fileobjs_write(struct ckpt_fileobjs *o, struct ckpt_writer *w,
			struct ckpt_why *why);

/* Restart: the files the restarter made for the image's FILEOBJ entries. */
struct ckpt_objfiles {
	struct file **files;	/* [nr], referenced, NULL where none */
	s32 *fds;		/* [nr]: the restarter's descriptors of them */
	u32 nr;
	bool same_boot;		/* the image's device numbers hold here */
	/*
	 * The files of the mappings that carry a flock() lock, locked by
	 * ckpt_mm_check_files() before the point of no return and mapped
	 * by ckpt_mm_restore(): referenced, by their mappings' start.
	 */
	struct file *flocked[CKPT_IMG_MAX_FLOCK_MAPS];
	u64 flocked_at[CKPT_IMG_MAX_FLOCK_MAPS];
	u32 nr_flocked;
	/* What the restarted process will run with; NULL: the caller's. */
	const struct cred *cred;
};

/* From the restarter's descriptors @ufds (user array of __s32, -1: none). */
int ckpt_fileobj_get_files(u64 ufds, u32 nr, struct ckpt_objfiles *of,
			   struct ckpt_why *why);
void ckpt_fileobj_put_files(struct ckpt_objfiles *of);

/*
 * The file to map for @v (CKPT_VMA_FILEOBJ), referenced, or an ERR_PTR
 * named in @why: the restarter's, if its descriptor and @of->cred allow
 * what the mapping needs (read; read and write with CKPT_VMA_MAYWRITE),
 * reopened read-only if the mapping needs no more.
 */
struct file *ckpt_fileobj_open(const struct ckpt_objfiles *of,
			       const struct ckpt_img_vma *v, struct ckpt_why *why);

/*
 * The file @v names by path (from @root), opened with @of->cred for what
 * the mapping needs, or an ERR_PTR named in @why (a refusal names the
 * access the restarted process may not have).
 */
struct file *ckpt_fileobj_open_path(const struct ckpt_objfiles *of,
				    const struct path *root,
				    const struct ckpt_img_vma *v, struct ckpt_why *why);

#endif /* _CKPT_FILEOBJ_H */
