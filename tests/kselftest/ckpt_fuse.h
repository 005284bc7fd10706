/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A FUSE file system of one read-only file, "img", served from a file of
 * the test's (an image), by a child process speaking the protocol on
 * /dev/fuse directly (no libfuse). The file is opened with FOPEN_DIRECT_IO:
 * every read the engine makes is one READ request of exactly its size, and
 * the file cannot be mapped shared (the engine then reads it instead).
 *
 * It can misbehave the way a hostile or stalled server does:
 *  - FUSE_SHORT_EFAULT: the READ starting at @trap gets 15 bytes of 0xff,
 *    the READ after it (at @trap + 15) the error EFAULT;
 *  - FUSE_STALL: READs at or after @trap by any process but @pid are not
 *    answered until fuse_release() (then they and any later get EIO);
 *    each stalled request is a byte on @stalled.
 * Include after ckpt_test.h.
 */
#ifndef _CKPT_FUSE_H
#define _CKPT_FUSE_H

#include <sys/mount.h>
#include <sys/uio.h>
#include <linux/fuse.h>

enum fuse_mode { FUSE_PLAIN, FUSE_SHORT_EFAULT, FUSE_STALL };

struct fuse_srv {
	char dir[64];
	char path[80];		/* dir/img */
	pid_t server;
	int stalled;		/* read: a byte per stalled request */
	int release;		/* write: answer the stalled requests */
};

static inline void fuse_reply(int dev, uint64_t unique, int error,
			      const void *data, size_t len)
{
	struct fuse_out_header h = {
		.len = sizeof(h) + (error ? 0 : len),
		.error = error,
		.unique = unique,
	};
	struct iovec iov[2] = {
		{ &h, sizeof(h) }, { (void *)data, error ? 0 : len },
	};

	if (writev(dev, iov, 2) < 0 && errno != ENOENT)
		_exit(20);
}

static inline void fuse_attr_of(struct fuse_attr *a, uint64_t ino,
				uint64_t size)
{
	memset(a, 0, sizeof(*a));
	a->ino = ino;
	a->size = size;
	a->blocks = (size + 511) / 512;
	a->mode = ino == FUSE_ROOT_ID ? S_IFDIR | 0755 : S_IFREG | 0444;
	a->nlink = ino == FUSE_ROOT_ID ? 2 : 1;
	a->blksize = 4096;
}

static inline void fuse_serve(int dev, int data, enum fuse_mode mode,
			      uint64_t trap, pid_t pid, int stalled,
			      int release)
{
	static char buf[FUSE_MIN_READ_BUFFER + (1 << 20)], out[(1 << 20)];
	uint64_t parked[64];
	unsigned int nr_parked = 0, i;
	bool released = false;
	struct stat st;

	if (fstat(data, &st))
		_exit(21);
	for (;;) {
		struct pollfd p[2] = {
			{ .fd = dev, .events = POLLIN },
			{ .fd = release, .events = POLLIN },
		};
		struct fuse_in_header *in = (void *)buf;
		void *arg = in + 1;
		ssize_t n;

		if (poll(p, released ? 1 : 2, -1) < 0)
			continue;
		if (!released && p[1].revents) {
			released = true;
			for (i = 0; i < nr_parked; i++)
				fuse_reply(dev, parked[i], -EIO, NULL, 0);
			nr_parked = 0;
		}
		if (!(p[0].revents & POLLIN)) {
			if (p[0].revents & (POLLERR | POLLHUP))
				_exit(0);
			continue;
		}
		n = read(dev, buf, sizeof(buf));
		if (n < 0 && errno == ENODEV)
			_exit(0);		/* unmounted */
		if (n < (ssize_t)sizeof(*in))
			continue;
		switch (in->opcode) {
		case FUSE_INIT: {
			const struct fuse_init_in *ii = arg;
			struct fuse_init_out io = {
				.major = FUSE_KERNEL_VERSION,
				.minor = ii->minor < 31 ? ii->minor : 31,
				.max_readahead = ii->max_readahead,
				.max_write = 1 << 20,
				.max_pages = 256,
				.flags = FUSE_MAX_PAGES,
			};

			fuse_reply(dev, in->unique, 0, &io, sizeof(io));
			break;
		}
		case FUSE_LOOKUP: {
			struct fuse_entry_out e = { .nodeid = 2 };

			if (in->nodeid != FUSE_ROOT_ID || strcmp(arg, "img")) {
				fuse_reply(dev, in->unique, -ENOENT, NULL, 0);
				break;
			}
			fuse_attr_of(&e.attr, 2, st.st_size);
			fuse_reply(dev, in->unique, 0, &e, sizeof(e));
			break;
		}
		case FUSE_GETATTR: {
			struct fuse_attr_out a = { 0 };

			fuse_attr_of(&a.attr, in->nodeid, st.st_size);
			fuse_reply(dev, in->unique, 0, &a, sizeof(a));
			break;
		}
		case FUSE_OPEN: {
			struct fuse_open_out o = {
				.fh = 1, .open_flags = FOPEN_DIRECT_IO,
			};

			fuse_reply(dev, in->unique, 0, &o, sizeof(o));
			break;
		}
		case FUSE_READ: {
			const struct fuse_read_in *r = arg;
			size_t size = r->size < sizeof(out) ? r->size : sizeof(out);
			ssize_t got;

			if (mode == FUSE_SHORT_EFAULT && r->offset == trap) {
				memset(out, 0xff, 15);
				fuse_reply(dev, in->unique, 0, out,
					   size < 15 ? size : 15);
				break;
			}
			if (mode == FUSE_SHORT_EFAULT && r->offset == trap + 15) {
				fuse_reply(dev, in->unique, -EFAULT, NULL, 0);
				break;
			}
			if (mode == FUSE_STALL && r->offset >= trap &&
			    (pid_t)in->pid != pid) {
				if (released || nr_parked == 64) {
					fuse_reply(dev, in->unique, -EIO, NULL, 0);
				} else {
					parked[nr_parked++] = in->unique;
					if (write(stalled, "s", 1) != 1)
						_exit(22);
				}
				break;
			}
			got = pread(data, out, size, r->offset);
			if (got < 0)
				fuse_reply(dev, in->unique, -EIO, NULL, 0);
			else
				fuse_reply(dev, in->unique, 0, out, got);
			break;
		}
		case FUSE_FLUSH:
		case FUSE_RELEASE:
		case FUSE_ACCESS:
			fuse_reply(dev, in->unique, 0, NULL, 0);
			break;
		case FUSE_FORGET:
		case FUSE_BATCH_FORGET:
		case FUSE_INTERRUPT:
			break;			/* no answer wanted */
		default:
			fuse_reply(dev, in->unique, -ENOSYS, NULL, 0);
		}
	}
}

/*
 * Mounts the file system on a new directory and serves @image as its
 * "img". 0, -errno, or 1 when this kernel has no FUSE.
 */
static inline int fuse_start(struct fuse_srv *s, const char *image,
			     enum fuse_mode mode, uint64_t trap, pid_t pid)
{
	int dev, data, st[2], rel[2];
	char opts[128];

	if (system("modprobe fuse 2>/dev/null")) {
		/* built in, or no FUSE at all: /dev/fuse says */
	}
	dev = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (dev < 0)
		return errno == ENOENT || errno == ENODEV ? 1 : -errno;
	data = open(image, O_RDONLY | O_CLOEXEC);
	if (data < 0 || pipe2(st, O_CLOEXEC) || pipe2(rel, O_CLOEXEC))
		return -errno;
	snprintf(s->dir, sizeof(s->dir), "/tmp/ckpt-fuse.%d", getpid());
	snprintf(s->path, sizeof(s->path), "%s/img", s->dir);
	if (mkdir(s->dir, 0755) && errno != EEXIST)
		return -errno;
	snprintf(opts, sizeof(opts),
		 "fd=%d,rootmode=40000,user_id=0,group_id=0,allow_other", dev);
	if (mount("ckpt-test", s->dir, "fuse", MS_NOSUID | MS_NODEV, opts))
		return -errno;
	s->server = fork();
	if (s->server < 0)
		return -errno;
	if (!s->server) {
		close(st[0]);
		close(rel[1]);
		fuse_serve(dev, data, mode, trap, pid, st[1], rel[0]);
		_exit(0);
	}
	close(dev);
	close(data);
	close(st[1]);
	close(rel[0]);
	s->stalled = st[0];
	s->release = rel[1];
	return 0;
}

/* Answers the stalled requests (EIO), and any later ones. */
static inline void fuse_release(struct fuse_srv *s)
{
	if (s->release >= 0 && write(s->release, "r", 1) != 1)
		s->release = -1;
}

static inline void fuse_stop(struct fuse_srv *s)
{
	if (!s->server)
		return;
	fuse_release(s);
	umount2(s->dir, MNT_DETACH);
	kill(s->server, SIGKILL);
	waitpid(s->server, NULL, 0);
	close(s->stalled);
	close(s->release);
	rmdir(s->dir);
	s->server = 0;
}

#endif /* _CKPT_FUSE_H */
