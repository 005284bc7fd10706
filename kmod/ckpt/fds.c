// SPDX-License-Identifier: GPL-2.0
/*
 * The descriptor scan of a checkpoint: every descriptor of the frozen
 * process above 2 is recorded, or the checkpoint fails naming the first
 * one the engine cannot restore.
 *
 * Order: under the file table's lock, record what can be read there
 * (kind, path, flags, position) and take a reference to each file that
 * needs more; then, unlocked, read the rest (pipes, identities, the state
 * of eventfds, signalfds, timerfds and epoll descriptors) and drop those
 * references; last check that every epoll item watches a restored file.
 */

#include <linux/cred.h>
#include <linux/fdtable.h>
#include <linux/file.h>
#include <linux/kdev_t.h>
#include <linux/sched/task.h>
#include <linux/slab.h>

#include <uapi/linux/ckpt_image.h>

#include "callback.h"
#include "compat.h"
#include "fdinfo.h"
#include "fds.h"
#include "fileobj.h"
#include "inotify.h"
#include "kernfs.h"
#include "layout.h"
#include "pipes.h"
#include "pty.h"
#include "tcp.h"
#include "usock.h"
#include "why.h"

/*
 * The entry of a lower descriptor whose open file is @file, if that one
 * can be restored by a dup() of it: not a pipe end (a pipe's ends are
 * shared by its PIPE section). A copy of /dev/ckpt is one: the open file
 * carries libckpt's registration, which the restarter makes once.
 */
static const struct ckpt_img_file *shares(const struct ckpt_fds *scan,
					  const struct file *file)
{
	const struct ckpt_img_file *o;
	u32 j;

	/* Only the descriptor table holds a file no lower descriptor has. */
	if (file_count(file) < 2)
		return NULL;
	for (j = 0; j < scan->nr; j++) {
		if (scan->seen[j] != file)
			continue;
		o = &scan->files[j];
		return o->kind == CKPT_FILE_PIPE ? NULL : o;
	}
	return NULL;
}

/* Another descriptor of a lower one's open file: its state is that one's. */
static int record_shared(struct ckpt_img_file *f,
			 const struct ckpt_img_file *o)
{
	f->kind = CKPT_FILE_SHARED;
	f->ino = o->fd;
	f->open_flags = o->open_flags;
	memcpy(f->path, o->path, sizeof(f->path));
	return 1;	/* a FIFO's, a memfd's use */
}

/*
 * A tree's member: a descriptor of one of the root's standard files, which
 * the restart re-attaches to the restarter's (the root's own fd @j first).
 */
static int record_stdio(const struct ckpt_fds *scan, struct ckpt_img_file *f,
			const struct file *file, unsigned int fd)
{
	int j = fd <= 2 && scan->root_stdio[fd] == file ? fd : -1;

	if (!scan->in_tree)
		return -1;
	for (j = j < 0 ? 0 : j; j < 3; j++)
		if (scan->root_stdio[j] == file)
			break;
	if (j == 3)
		return -1;
	f->kind = CKPT_FILE_STDIO;
	f->ino = j;
	f->open_flags = file->f_flags & O_ACCMODE;
	snprintf(f->path, sizeof(f->path), "stdio:%d", j);
	return 0;
}

/* /dev/ckpt: the registration it may carry is the restarter's to make. */
static int record_ckpt_dev(const struct ckpt_fds *scan,
			   struct ckpt_img_file *f, struct file *file)
{
	strscpy(f->path, "/dev/" CKPT_DEVICE_NAME, sizeof(f->path));
	f->kind = CKPT_FILE_CKPT_DEV;
	f->open_flags = file->f_flags & O_ACCMODE;
	if (file == scan->registered)
		f->flags |= CKPT_FILE_REGISTERED;
	return 0;
}

/* Devices whose state is nothing but being open. */
static int record_chr(struct ckpt_img_file *f, struct file *file)
{
	struct inode *inode = file_inode(file);
	char *p;

	switch (inode->i_rdev) {
	case MKDEV(1, 3):	/* null */
	case MKDEV(1, 5):	/* zero */
	case MKDEV(1, 7):	/* full */
	case MKDEV(1, 8):	/* random */
	case MKDEV(1, 9):	/* urandom */
		break;
	default:
		return -1;
	}
	p = d_path(&file->f_path, f->path, sizeof(f->path));
	if (IS_ERR(p) || *p != '/')
		return -1;
	memmove(f->path, p, strlen(p) + 1);
	f->kind = CKPT_FILE_CHR;
	f->open_flags = file->f_flags & (O_ACCMODE | O_NONBLOCK);
	f->dev = new_encode_dev(inode->i_rdev);
	return 0;
}

/* A named pipe: reopened by path, its bytes in the image. */
static int record_fifo(struct ckpt_img_file *f, struct file *file)
{
	char *p;

	p = d_path(&file->f_path, f->path, sizeof(f->path));
	if (IS_ERR(p) || ckpt_fileobj_kind(file, p) != CKPT_FILE_FIFO)
		return -1;
	memmove(f->path, p, strlen(p) + 1);
	f->kind = CKPT_FILE_FIFO;
	f->open_flags = file->f_flags & (O_ACCMODE | O_NONBLOCK);
	return 1;
}

/* Regular files and directories, by path, flags and position. */
static int record_path(struct ckpt_img_file *f, struct file *file)
{
	struct inode *inode = file_inode(file);
	char *p;

	if (!S_ISREG(inode->i_mode) && !S_ISDIR(inode->i_mode))
		return -1;
	if (S_ISDIR(inode->i_mode))
		f->kind = CKPT_FILE_DIR;
	p = d_path(&file->f_path, f->path, sizeof(f->path));
	if (IS_ERR(p) || *p != '/')
		return -1;
	if (strstr(p, " (deleted)")) {
		/* A memfd or an unlinked file: the image carries its content. */
		int kind = ckpt_fileobj_kind(file, p);

		/* Not a /proc file of a process gone, nor a device's. */
		if (ckpt_kernfs_sb(inode->i_sb))
			return -1;
		if (kind != CKPT_FILE_MEMFD && kind != CKPT_FILE_DELETED)
			return -1;
		f->kind = kind;
	}
	memmove(f->path, p, strlen(p) + 1);
	f->open_flags = file->f_flags & (O_ACCMODE | O_APPEND | O_NONBLOCK |
					 O_SYNC);
	f->pos = file->f_pos;
	return 1;	/* identity: after the scan */
}

/*
 * Fills @f for @file by its kind: 1 when the file's state is read after
 * the scan (a reference is taken), 0 when @f is all of it, -1 for a kind
 * the engine cannot restore.
 */
static int record(const struct ckpt_fds *scan, struct ckpt_img_file *f,
		  struct file *file)
{
	struct inode *inode = file_inode(file);
	const struct ckpt_img_file *o = shares(scan, file);
	int kind;

	if (o)
		return record_shared(f, o);
	if (ckpt_is_dev_file(file))
		return record_ckpt_dev(scan, f, file);
	if (ckpt_is_pty(file) && scan->in_tree) {
		/* Read after the scan (ckpt_pty_capture()). */
		char *p = d_path(&file->f_path, f->path, sizeof(f->path));

		if (IS_ERR(p))
			strscpy(f->path, "/dev/pts/?", sizeof(f->path));
		else
			memmove(f->path, p, strlen(p) + 1);
		f->kind = CKPT_FILE_PTY;
		f->open_flags = file->f_flags & (O_ACCMODE | O_NONBLOCK);
		return 1;
	}
	if (S_ISCHR(inode->i_mode))
		return record_chr(f, file);
	if (ckpt_is_pipe(file)) {
		f->kind = CKPT_FILE_PIPE;
		f->ino = inode->i_ino;
		f->open_flags = file->f_flags & (O_ACCMODE | O_NONBLOCK);
		snprintf(f->path, sizeof(f->path), "pipe:[%lu]", inode->i_ino);
		return 1;
	}
	if (S_ISFIFO(inode->i_mode))
		return record_fifo(f, file);
	if (ckpt_is_tcp(file)) {
		/* Read after the scan (capture_tcp()). */
		f->kind = CKPT_FILE_TCP;
		f->ino = inode->i_ino;
		f->open_flags = file->f_flags & (O_ACCMODE | O_NONBLOCK);
		snprintf(f->path, sizeof(f->path), "socket:[%lu]", inode->i_ino);
		return 1;
	}
	if (ckpt_is_usock(file)) {
		/* Checked and read after the scan (capture_usock()). */
		f->kind = CKPT_FILE_UNIX;
		f->open_flags = file->f_flags & (O_ACCMODE | O_NONBLOCK);
		snprintf(f->path, sizeof(f->path), "socket:[%lu]", inode->i_ino);
		return 1;
	}
	kind = ckpt_anon_kind(file);
	if (kind >= 0) {
		/*
		 * eventfd, signalfd, epoll, timerfd, inotify: their state is
		 * read after the scan.
		 */
		f->kind = kind;
		f->open_flags = file->f_flags & (O_ACCMODE | O_NONBLOCK);
		snprintf(f->path, sizeof(f->path), "anon_inode:%s",
			 file->f_path.dentry->d_name.name);
		return 1;
	}
	return record_path(f, file);
}

/*
 * Under the file table's lock: each descriptor is recorded, as another
 * descriptor of a lower one's open file, or by its kind (regular files by
 * path, flags, position and identity); a kind the engine does not know
 * stops the scan. Inherited stdio is re-attached to the restarter's, as
 * BLCR did.
 */
static int scan_fd(const void *arg, struct file *file, unsigned int fd)
{
	struct ckpt_fds *scan = (struct ckpt_fds *)arg;
	struct inode *inode = file_inode(file);
	struct ckpt_img_file *f;
	int ret;

	if (fd <= 2 && !scan->all_fds)
		return 0;
	if (scan->nr == CKPT_IMG_MAX_FILES)
		goto bad;
	f = &scan->files[scan->nr];
	scan->raw_ino[scan->nr] = inode->i_ino;
	scan->raw_dev[scan->nr] = inode->i_sb->s_dev;
	scan->seen[scan->nr] = file;
	f->fd = fd;
	f->flags = ckpt_fd_cloexec(scan->files_table, fd) ? CKPT_FILE_CLOEXEC : 0;
	ret = record_stdio(scan, f, file, fd);
	if (ret)
		ret = record(scan, f, file);
	if (ret < 0)
		goto bad;
	if (ret)
		scan->refs[scan->nr] = get_file(file);
	scan->nr++;
	return 0;
bad:
	scan->bad_fd = fd;
	scan->bad = get_file(file);
	return 1;
}

/* Every epoll item must watch a descriptor the image restores as it was. */
static int check_epitems(struct ckpt_fds *scan, struct ckpt_why *why)
{
	u32 i, j;

	for (i = 0; i < scan->nr_epitems; i++) {
		const struct ckpt_img_epitem *e = &scan->epitems[i];

		if (e->tfd <= 2)
			continue;	/* re-attached with the stdio */
		for (j = 0; j < scan->nr; j++)
			if (scan->files[j].fd == e->tfd)
				break;
		if (j == scan->nr || scan->raw_ino[j] != scan->ep_ino[i] ||
		    scan->raw_dev[j] != scan->ep_dev[i]) {
			ckpt_whyf(why,
				  "epoll fd %u watches fd %u, which is closed or now another file",
				  e->epfd, e->tfd);
			return -EOPNOTSUPP;
		}
	}
	return 0;
}

/*
 * A pipe whose every end is open here only: once per pipe, at its first
 * entry @i. Each end's open files must all be this process's descriptors
 * (the scan holds one more reference per descriptor), else an end is in
 * another process (shared by fork, say) and the pipe cannot be restored.
 */
static int capture_pipe(struct ckpt_fds *scan, u32 i, struct ckpt_why *why)
{
	struct file *distinct[2] = {};
	unsigned int ends[2] = {}, fds[2] = {};
	u32 j;
	int ret;

	for (j = 0; j < i; j++)
		if (scan->files[j].kind == CKPT_FILE_PIPE &&
		    scan->files[j].ino == scan->files[i].ino)
			return 0;	/* done at its first entry */
	for (j = i; j < scan->nr; j++) {
		const struct ckpt_img_file *f = &scan->files[j];
		int end = (f->open_flags & O_ACCMODE) == O_WRONLY;

		if (f->kind != CKPT_FILE_PIPE || f->ino != scan->files[i].ino)
			continue;
		if ((f->open_flags & O_ACCMODE) == O_RDWR ||
		    (distinct[end] && distinct[end] != scan->refs[j]))
			goto elsewhere;	/* reopened through /proc: not yet */
		distinct[end] = scan->refs[j];
		ends[end] = 1;
		fds[end]++;
	}
	/* A tree's pipes were counted across its members (tree_files.c). */
	for (j = 0; j < 2 && !scan->in_tree; j++)
		if (distinct[j] && !ckpt_file_refs_are(distinct[j], 2 * fds[j]))
			goto elsewhere;
	ret = ckpt_pipe_capture(scan->refs[i],
				scan->in_tree ? CKPT_PIPE_ANY : ends[0],
				scan->in_tree ? CKPT_PIPE_ANY : ends[1],
				&scan->pipes[scan->nr_pipes],
				&scan->pipe_len[scan->nr_pipes]);
	if (ret == -EXDEV)
		goto elsewhere;
	if (ret == -ENOPKG) {
		ckpt_whyf(why, "fd %u is a pipe, which this engine cannot read on this kernel (%s)",
			  scan->files[i].fd, ckpt_layout_why(CKPT_LAYOUT_PIPES));
		return -EOPNOTSUPP;
	}
	if (ret == -EMSGSIZE) {
		ckpt_whyf(why, "fd %u (pipe:[%llu]) holds more bytes than its capacity (pages spliced into it): not supported",
			  scan->files[i].fd, scan->files[i].ino);
		return -EOPNOTSUPP;
	}
	if (ret) {
		ckpt_whyf(why, "cannot read pipe fd %u%s",
			  scan->files[i].fd,
			  ret == -EOPNOTSUPP ? " (packet mode)" : "");
		return ret == -EOPNOTSUPP ? ret : -EIO;
	}
	scan->nr_pipes++;
	return 0;
elsewhere:
	ckpt_whyf(why,
		  "fd %u (pipe:[%llu]) has an end open in another process: not supported yet",
		  scan->files[i].fd, scan->files[i].ino);
	return -EOPNOTSUPP;
}

/* How many of the scan's descriptors hold @file. */
static u32 descriptors_of(const struct ckpt_fds *scan, const struct file *file)
{
	u32 j, n = 0;

	for (j = 0; j < scan->nr; j++)
		n += scan->seen[j] == file;
	return n;
}

/*
 * A listening UNIX socket at its first entry @i: its ULISTEN section and
 * an UPEND section per connection waiting on it.
 */
static int capture_listener(struct ckpt_fds *scan, u32 i, struct ckpt_why *why)
{
	struct ckpt_img_file *f = &scan->files[i];
	const char *msg = NULL;
	u32 n;
	int ret;

	if (!scan->ulistens) {
		scan->ulistens = kvcalloc(CKPT_IMG_MAX_FILES,
					  sizeof(*scan->ulistens), GFP_KERNEL);
		scan->upends = kvcalloc(CKPT_IMG_MAX_FILES,
					sizeof(*scan->upends), GFP_KERNEL);
		scan->upend_len = kvcalloc(CKPT_IMG_MAX_FILES,
					   sizeof(*scan->upend_len), GFP_KERNEL);
		if (!scan->ulistens || !scan->upends || !scan->upend_len)
			return -ENOMEM;
	}
	ret = ckpt_usock_listener(scan->refs[i],
				  &scan->ulistens[scan->nr_ulistens], &msg);
	if (!ret) {
		scan->nr_ulistens++;
		ret = ckpt_usock_pending(scan->refs[i],
					 &scan->upends[scan->nr_upends],
					 &scan->upend_len[scan->nr_upends],
					 CKPT_IMG_MAX_FILES - scan->nr_upends,
					 &n, &msg);
		scan->nr_upends += n;
	}
	if (ret)
		ckpt_whyf(why, "fd %u (%s) is %s", f->fd, f->path,
			  msg ?: "a listening socket this engine cannot restore");
	return ret;
}

/*
 * A UNIX socket with names, or connected to nothing, at its first entry
 * @i: its UNAME section.
 */
static int capture_named(struct ckpt_fds *scan, u32 i, struct ckpt_why *why)
{
	struct ckpt_img_file *f = &scan->files[i];
	const char *msg = NULL;
	int ret;

	if (!scan->unames) {
		scan->unames = kvcalloc(CKPT_IMG_MAX_FILES,
					sizeof(*scan->unames), GFP_KERNEL);
		scan->uname_len = kvcalloc(CKPT_IMG_MAX_FILES,
					   sizeof(*scan->uname_len), GFP_KERNEL);
		if (!scan->unames || !scan->uname_len)
			return -ENOMEM;
	}
	ret = ckpt_usock_capture_named(scan->refs[i],
				       &scan->unames[scan->nr_unames],
				       &scan->uname_len[scan->nr_unames], &msg);
	if (ret) {
		ckpt_whyf(why, "fd %u (%s): %s", f->fd, f->path,
			  msg ?: "cannot read its queue");
		return ret;
	}
	scan->nr_unames++;
	return 0;
}

/*
 * An end of a UNIX socket pair, at its first entry @i (a dup()ed
 * descriptor is a SHARED entry): its peer must be this process's too, or
 * closed (a tree's were counted across its members, tree_files.c).
 */
static int capture_usock(struct ckpt_fds *scan, u32 i, struct ckpt_why *why)
{
	struct ckpt_img_file *f = &scan->files[i];
	struct file *file = scan->refs[i], *peer;
	const char *msg = NULL;
	u64 ino, peer_ino;
	int ret;

	ret = ckpt_usock_record(file, &ino, &peer_ino, &peer, &msg);
	if (ret < 0) {
		ckpt_whyf(why, "fd %u (%s) is %s", f->fd, f->path,
			  msg ?: "a socket this engine cannot restore");
		return ret;
	}
	f->ino = ino;
	f->dev = peer_ino;
	/* Its descriptors here, and the scan's reference for each. */
	if (!scan->in_tree &&
	    (!ckpt_file_refs_are(file, 2 * descriptors_of(scan, file)) ||
	     (peer && !descriptors_of(scan, peer)))) {
		ckpt_whyf(why,
			  "fd %u (%s) is connected to, or open in, another process: not supported yet",
			  f->fd, f->path);
		return -EOPNOTSUPP;
	}
	if (ret == CKPT_USOCK_NAMED)
		return capture_named(scan, i, why);
	if (ckpt_usock_listening(file))
		return capture_listener(scan, i, why);
	ret = ckpt_usock_capture(file, peer_ino, &scan->usocks[scan->nr_usocks],
				 &scan->usock_len[scan->nr_usocks], &msg);
	if (ret) {
		ckpt_whyf(why, "fd %u (%s): %s", f->fd, f->path,
			  msg ?: "cannot read its queue");
		return ret;
	}
	scan->nr_usocks++;
	return 0;
}

/*
 * A TCP socket, at its first entry @i: its TCP section. Its peer is found
 * once every member is captured (ckpt_tcp_check_pairs()); a single
 * process's socket must be open here only.
 */
static int capture_tcp(struct ckpt_fds *scan, u32 i, struct ckpt_why *why)
{
	struct ckpt_img_file *f = &scan->files[i];
	struct file *file = scan->refs[i];
	const char *msg = NULL;
	int ret;

	if (!scan->in_tree &&
	    !ckpt_file_refs_are(file, 2 * descriptors_of(scan, file))) {
		ckpt_whyf(why, "fd %u (%s) is a TCP socket open in another process too: not supported yet",
			  f->fd, f->path);
		return -EOPNOTSUPP;
	}
	if (scan->nr_tcps == CKPT_IMG_MAX_FILES) {
		ckpt_whyf(why, "fd %u (%s) is a TCP socket past the most an image holds (%u, with the connections waiting on listening ones)",
			  f->fd, f->path, CKPT_IMG_MAX_FILES);
		return -EFBIG;
	}
	if (!scan->tcps) {
		scan->tcps = kvcalloc(CKPT_IMG_MAX_FILES, sizeof(*scan->tcps),
				      GFP_KERNEL);
		scan->tcp_len = kvcalloc(CKPT_IMG_MAX_FILES,
					 sizeof(*scan->tcp_len), GFP_KERNEL);
		scan->tcp_net = kvcalloc(CKPT_IMG_MAX_FILES,
					 sizeof(*scan->tcp_net), GFP_KERNEL);
		if (!scan->tcps || !scan->tcp_len || !scan->tcp_net)
			return -ENOMEM;
	}
	ret = ckpt_tcp_capture(file, &scan->tcps[scan->nr_tcps],
			       &scan->tcp_len[scan->nr_tcps],
			       &scan->tcp_net[scan->nr_tcps], &msg);
	if (ret) {
		ckpt_whyf(why, "fd %u (%s) is %s", f->fd, f->path,
			  msg ?: "a TCP socket whose state cannot be read");
		return ret;
	}
	scan->nr_tcps++;
	/* A listening socket's waiting connections follow it. */
	ret = ckpt_tcp_capture_waiting(file, &scan->tcps[scan->nr_tcps],
				       &scan->tcp_len[scan->nr_tcps],
				       &scan->tcp_net[scan->nr_tcps],
				       CKPT_IMG_MAX_FILES - scan->nr_tcps, &msg);
	if (ret < 0) {
		ckpt_whyf(why, "fd %u (%s) is %s", f->fd, f->path,
			  msg ?: "a listening TCP socket whose queue cannot be read");
		return ret;
	}
	scan->nr_tcps += ret;
	return 0;
}

/*
 * Whether the process may read @file's content, which its image would
 * carry (and its checkpointer read): it holds the file readable, or it
 * could open the file for reading itself (a log it opened write-only; not
 * a file of root's handed to it write-only). The checks open() makes,
 * under its credentials: the permission, then the open itself, whose
 * LSM hooks (Landlock, AppArmor, SELinux's open) judge by them.
 */
static bool may_read(const struct ckpt_fds *scan, struct file *file)
{
	const struct cred *old;
	struct file *rf;
	int ret;

	if (file->f_mode & FMODE_READ)
		return true;
	old = override_creds(scan->cred);
	ret = ckpt_inode_permission(&file->f_path, MAY_READ | MAY_OPEN);
	rf = ret ? ERR_PTR(ret) :
	     dentry_open(&file->f_path, O_RDONLY | O_LARGEFILE, scan->cred);
	revert_creds(old);
	if (IS_ERR(rf))
		return false;
	fput(rf);
	return true;
}

/* The kind of the lower descriptor shared entry @i names. */
static int lower_kind(const struct ckpt_fds *scan, u32 i)
{
	u32 j;

	for (j = 0; j < i; j++)
		if (scan->files[j].fd == scan->files[i].ino)
			return scan->files[j].kind;
	return -1;
}

/*
 * A deleted file's entry that another name on the same mount still links
 * becomes a regular file of that name (ckpt_file_path(), which may sleep:
 * not under the scan's locks), as its mappings are (mm.c); an entry
 * sharing its open file (dup()) takes the name too.
 */
static int relink(struct ckpt_fds *scan, u32 i)
{
	struct ckpt_img_file *f = &scan->files[i];
	char *buf, *p;
	u32 j;

	if (f->kind == CKPT_FILE_SHARED) {
		for (j = 0; j < i && scan->files[j].fd != f->ino; j++)
			;
		if (j < i)
			memcpy(f->path, scan->files[j].path, sizeof(f->path));
		return 0;
	}
	if (f->kind != CKPT_FILE_DELETED)
		return 0;
	buf = kmalloc(sizeof(f->path), GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	p = ckpt_file_path(scan->refs[i], buf, sizeof(f->path));
	if (!IS_ERR(p) && *p == '/' && !strstr(p, " (deleted)")) {
		memmove(f->path, p, strlen(p) + 1);
		f->kind = CKPT_FILE_REGULAR;
	}
	kfree(buf);
	return 0;
}

/* What entry @i's file holds beyond what the scan read under the lock. */
static int read_state(struct ckpt_fds *scan, u32 i)
{
	struct ckpt_img_file *f = &scan->files[i];
	struct file *file = scan->refs[i];
	struct kstat st;
	int ret = relink(scan, i), kind;

	if (ret)
		return ret;
	switch (f->kind) {
	case CKPT_FILE_EVENTFD:
		return ckpt_fdinfo_eventfd(file, &f->pos, &f->ino);
	case CKPT_FILE_SIGNALFD:
		return ckpt_fdinfo_signalfd(file, &f->dev);
	case CKPT_FILE_TIMERFD:
		scan->timerfds[scan->nr_timerfds].fd = f->fd;
		ret = ckpt_fdinfo_timerfd(file,
					  &scan->timerfds[scan->nr_timerfds]);
		if (!ret)
			scan->nr_timerfds++;
		return ret;
	case CKPT_FILE_EPOLL:
		return ckpt_fdinfo_epoll(file, f->fd, scan->epitems,
					 CKPT_IMG_MAX_EPITEMS, &scan->nr_epitems,
					 scan->ep_ino, scan->ep_dev);
	case CKPT_FILE_FIFO:
	case CKPT_FILE_MEMFD:
	case CKPT_FILE_DELETED:
		/* Named by its object; checked once mappings are known. */
		ret = ckpt_fileobj_add(&scan->objs, file, f->kind, f->path,
				       f->fd);
		if (ret < 0)
			return ret;
		f->ino = ret;
		return 0;
	case CKPT_FILE_SHARED:
		/* One more descriptor of an object's open file. */
		kind = lower_kind(scan, i);
		if (kind >= CKPT_FILE_FIFO && kind <= CKPT_FILE_DELETED)
			ret = ckpt_fileobj_add(&scan->objs, file, kind,
					       f->path, f->fd);
		return min(ret, 0);
	default:
		ret = vfs_getattr(&file->f_path, &st, STATX_INO,
				  AT_STATX_SYNC_AS_STAT);
		if (ret)
			return ret;
		f->dev = new_encode_dev(st.dev);
		f->ino = st.ino;
		/* Still by path; its content too where the node may lose it. */
		if (scan->objs.local && f->kind == CKPT_FILE_REGULAR &&
		    ckpt_fileobj_local(&scan->objs, file, f->path) &&
		    may_read(scan, file))
			ret = ckpt_fileobj_add(&scan->objs, file, CKPT_FILE_LOCAL,
					       f->path, f->fd);
		/*
		 * No room left for its content: by path, as without the flag
		 * (a mapping of it, which must be an object, fails later).
		 */
		if (ret == -E2BIG)
			ret = 0;
		return min(ret, 0);
	}
}

/* Entry @i's state, or a message naming its descriptor. */
static int file_state(struct ckpt_fds *scan, u32 i, struct ckpt_why *why)
{
	const struct ckpt_img_file *f = &scan->files[i];
	int ret = read_state(scan, i);

	if (ret == -ENOPKG && f->kind == CKPT_FILE_EVENTFD) {
		ckpt_whyf(why, "fd %u is an eventfd, whose mode this engine cannot read on this kernel (%s)",
			  f->fd, ckpt_layout_why(CKPT_LAYOUT_EVENTFD));
		return -EOPNOTSUPP;
	}
	if (ret)
		ckpt_whyf(why, "cannot read the state of fd %u (%.64s)%s",
			  f->fd, f->path,
			  ret != -E2BIG ? "" : f->kind == CKPT_FILE_EPOLL ?
			  ": too many epoll items" :
			  ": too many FIFOs, memfds, deleted and node-local files");
	else if (f->kind == CKPT_FILE_REGULAR || f->kind == CKPT_FILE_DIR) {
		ret = ckpt_kernfs_note(&scan->files[i], scan->refs[i], scan,
				       why);
		if (ret && ret != -EOPNOTSUPP)
			ckpt_whyf(why, "cannot read the state of fd %u (%.64s)",
				  f->fd, f->path);
	}
	return ret;
}

/*
 * What the scan could not read under the file table's lock: the device
 * and inode numbers stat() shows (on overlayfs they are not those of the
 * inode behind the file), and the state of eventfd, signalfd and epoll
 * files. Drops every reference the scan took.
 */
static int file_details(struct ckpt_fds *scan, struct ckpt_why *why)
{
	bool whole = !scan->bad;
	int ret = 0;
	u32 i;

	/*
	 * The scan stopped at a file it cannot take (scan->bad): the table
	 * is partial, and only that file is worth naming. An epoll looked
	 * at now would watch "closed" descriptors that are merely unscanned.
	 */
	for (i = 0; whole && !ret && i < scan->nr; i++)
		if (scan->files[i].kind == CKPT_FILE_PIPE)
			ret = capture_pipe(scan, i, why);
		else if (scan->files[i].kind == CKPT_FILE_UNIX)
			ret = capture_usock(scan, i, why);
		else if (scan->files[i].kind == CKPT_FILE_TCP)
			ret = capture_tcp(scan, i, why);
		else if (scan->files[i].kind == CKPT_FILE_PTY)
			ret = ckpt_pty_capture(scan, i, why);
		else if (scan->files[i].kind == CKPT_FILE_INOTIFY)
			ret = ckpt_inotify_capture(scan, i, why);

	for (i = 0; i < scan->nr; i++) {
		if (!scan->refs[i])
			continue;
		if (whole && !ret && scan->files[i].kind != CKPT_FILE_PIPE &&
		    scan->files[i].kind != CKPT_FILE_UNIX &&
		    scan->files[i].kind != CKPT_FILE_TCP &&
		    scan->files[i].kind != CKPT_FILE_PTY &&
		    scan->files[i].kind != CKPT_FILE_INOTIFY)
			ret = file_state(scan, i, why);
		fput(scan->refs[i]);
		scan->refs[i] = NULL;
	}
	if (whole && !ret)
		ret = check_epitems(scan, why);
	return ret;
}

int ckpt_fds_capture(struct task_struct *task, struct ckpt_fds *scan,
		     const struct ckpt_reg *reg, struct ckpt_why *why)
{
	char *path, *p;
	int ret;

	scan->files = kvcalloc(CKPT_IMG_MAX_FILES, sizeof(*scan->files),
			       GFP_KERNEL);
	scan->refs = kvcalloc(CKPT_IMG_MAX_FILES, sizeof(*scan->refs),
			      GFP_KERNEL);
	scan->raw_ino = kvcalloc(CKPT_IMG_MAX_FILES, sizeof(*scan->raw_ino),
				 GFP_KERNEL);
	scan->raw_dev = kvcalloc(CKPT_IMG_MAX_FILES, sizeof(*scan->raw_dev),
				 GFP_KERNEL);
	scan->seen = kvcalloc(CKPT_IMG_MAX_FILES, sizeof(*scan->seen),
			      GFP_KERNEL);
	scan->epitems = kvcalloc(CKPT_IMG_MAX_EPITEMS, sizeof(*scan->epitems),
				 GFP_KERNEL);
	scan->ep_ino = kvcalloc(CKPT_IMG_MAX_EPITEMS, sizeof(*scan->ep_ino),
				GFP_KERNEL);
	scan->ep_dev = kvcalloc(CKPT_IMG_MAX_EPITEMS, sizeof(*scan->ep_dev),
				GFP_KERNEL);
	scan->pipes = kvcalloc(CKPT_IMG_MAX_FILES, sizeof(*scan->pipes),
			       GFP_KERNEL);
	scan->timerfds = kvcalloc(CKPT_IMG_MAX_FILES, sizeof(*scan->timerfds),
				  GFP_KERNEL);
	scan->pipe_len = kvcalloc(CKPT_IMG_MAX_FILES, sizeof(*scan->pipe_len),
				  GFP_KERNEL);
	scan->usocks = kvcalloc(CKPT_IMG_MAX_FILES, sizeof(*scan->usocks),
				GFP_KERNEL);
	scan->usock_len = kvcalloc(CKPT_IMG_MAX_FILES, sizeof(*scan->usock_len),
				   GFP_KERNEL);
	if (!scan->files || !scan->refs || !scan->raw_ino || !scan->raw_dev ||
	    !scan->seen || !scan->epitems || !scan->ep_ino || !scan->ep_dev ||
	    !scan->pipes || !scan->pipe_len || !scan->timerfds ||
	    !scan->usocks || !scan->usock_len)
		return -ENOMEM;
	ret = ckpt_fileobjs_init(&scan->objs);
	if (ret)
		return ret;
	scan->objs.tree = scan->in_tree;
	scan->objs.local = scan->local_files;
	ckpt_fileobjs_find_scratch(&scan->objs, task);
	scan->objs.ipc = scan->ipc;
	scan->registered = ckpt_cb_file(reg);
	scan->tgid = task_tgid(task);
	scan->task = task;
	scan->cred = get_task_cred(task);
	task_lock(task);
	scan->files_table = task->files;
	if (task->files)
		iterate_fd(task->files, 0, scan_fd, scan);
	task_unlock(task);
	ret = file_details(scan, why);
	if (ret) {
		if (scan->bad)
			fput(scan->bad);
		scan->bad = NULL;
		return ret;
	}
	if (!scan->bad)
		return 0;

	path = kmalloc(PATH_MAX, GFP_KERNEL);
	p = path ? d_path(&scan->bad->f_path, path, PATH_MAX) : NULL;
	ckpt_whyf(why, "pid %d fd %u (%s) cannot be checkpointed yet",
		  task_tgid_vnr(task), scan->bad_fd,
		  IS_ERR_OR_NULL(p) ? "?" : p);
	kfree(path);
	fput(scan->bad);
	scan->bad = NULL;
	return -EOPNOTSUPP;
}

void ckpt_fds_free(struct ckpt_fds *scan)
{
	u32 i;

	if (scan->cred)
		put_cred(scan->cred);
	scan->cred = NULL;
	kvfree(scan->files);
	kvfree(scan->refs);
	kvfree(scan->raw_ino);
	kvfree(scan->raw_dev);
	kvfree(scan->seen);
	kvfree(scan->epitems);
	kvfree(scan->ep_ino);
	kvfree(scan->ep_dev);
	for (i = 0; scan->pipes && i < scan->nr_pipes; i++)
		kvfree(scan->pipes[i]);
	kvfree(scan->pipes);
	kvfree(scan->pipe_len);
	for (i = 0; scan->usocks && i < scan->nr_usocks; i++)
		kvfree(scan->usocks[i]);
	kvfree(scan->usocks);
	kvfree(scan->usock_len);
	kvfree(scan->ulistens);
	for (i = 0; scan->upends && i < scan->nr_upends; i++)
		kvfree(scan->upends[i]);
	kvfree(scan->upends);
	kvfree(scan->upend_len);
	for (i = 0; scan->unames && i < scan->nr_unames; i++)
		kvfree(scan->unames[i]);
	kvfree(scan->unames);
	kvfree(scan->uname_len);
	for (i = 0; scan->tcps && i < scan->nr_tcps; i++)
		kvfree(scan->tcps[i]);
	kvfree(scan->tcps);
	kvfree(scan->tcp_len);
	kvfree(scan->tcp_net);
	kvfree(scan->ptys);
	kvfree(scan->pty_master);
	kvfree(scan->pty_ends);
	kvfree(scan->timerfds);
	kvfree(scan->locks);
	kvfree(scan->inotify);
	ckpt_fileobjs_free(&scan->objs);
}
