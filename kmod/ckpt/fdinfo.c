// SPDX-License-Identifier: GPL-2.0
/*
 * eventfd, signalfd and epoll files, read the way /proc/PID/fdinfo shows
 * them: through the file's own ->show_fdinfo() into a private seq_file,
 * then parsed. This uses nothing but the file operations every such file
 * has, and reads without consuming (an eventfd's count stays).
 */

#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>

#include <uapi/linux/ckpt_image.h>

#include "fdinfo.h"
#include "layout.h"

int ckpt_anon_kind(const struct file *file)
{
	const char *name = file->f_path.dentry->d_name.name;

	if (!file->f_op->show_fdinfo)
		return -1;
	if (!strcmp(name, "[eventfd]"))
		return CKPT_FILE_EVENTFD;
	if (!strcmp(name, "[signalfd]"))
		return CKPT_FILE_SIGNALFD;
	if (!strcmp(name, "[eventpoll]"))
		return CKPT_FILE_EPOLL;
	if (!strcmp(name, "[timerfd]"))
		return CKPT_FILE_TIMERFD;
	if (!strcmp(name, "inotify"))
		return CKPT_FILE_INOTIFY;
	return -1;
}

/* The fdinfo text of @file, NUL-terminated, kvfree()d by the caller. */
static char *fdinfo(struct file *file, size_t size)
{
	struct seq_file m = {};

	m.buf = kvmalloc(size, GFP_KERNEL);
	if (!m.buf)
		return ERR_PTR(-ENOMEM);
	m.size = size - 1;
	file->f_op->show_fdinfo(&m, file);
	if (seq_has_overflowed(&m)) {
		kvfree(m.buf);
		return ERR_PTR(-E2BIG);
	}
	m.buf[m.count] = '\0';
	return m.buf;
}

int ckpt_fdinfo_eventfd(struct file *file, u64 *count, u64 *flags)
{
	char *buf = fdinfo(file, 256), *p;
	int sem = -1, id = -1, ret = -EPROTO;

	if (IS_ERR(buf))
		return PTR_ERR(buf);
	p = strstr(buf, "eventfd-count:");
	if (!p || sscanf(p, "eventfd-count: %llx", count) != 1)
		goto out;
	p = strstr(buf, "eventfd-id:");
	if (p && sscanf(p, "eventfd-id: %d", &id) != 1)
		goto out;
	p = strstr(buf, "eventfd-semaphore:");
	if (p && sscanf(p, "eventfd-semaphore: %d", &sem) != 1)
		goto out;
	/* Kernels that do not show the mode: read it, checked (compat.h). */
	if (sem < 0 && !ckpt_layout_ok(CKPT_LAYOUT_EVENTFD)) {
		ret = -ENOPKG;
		goto out;
	}
	if (sem < 0)
		sem = ckpt_eventfd_semaphore(file, *count, id);
	if (sem >= 0) {
		*flags = sem ? CKPT_EVENTFD_SEMAPHORE : 0;
		ret = 0;
	}
out:
	kvfree(buf);
	return ret;
}

int ckpt_fdinfo_signalfd(struct file *file, u64 *mask)
{
	char *buf = fdinfo(file, 256), *p;
	int ret = -EPROTO;

	if (IS_ERR(buf))
		return PTR_ERR(buf);
	p = strstr(buf, "sigmask:");
	if (p && sscanf(p, "sigmask: %llx", mask) == 1)
		ret = 0;
	kvfree(buf);
	return ret;
}

int ckpt_fdinfo_timerfd(struct file *file, struct ckpt_img_timerfd *t)
{
	char *buf = fdinfo(file, 512), *p;
	unsigned long long vs, vns, is, ins;
	int ret = -EPROTO;

	if (IS_ERR(buf))
		return PTR_ERR(buf);
	p = strstr(buf, "clockid:");
	if (p && sscanf(p, "clockid: %d ticks: %llu settime flags: 0%o it_value: (%llu, %llu) it_interval: (%llu, %llu)",
			&t->clockid, &t->ticks, &t->settime_flags, &vs, &vns,
			&is, &ins) == 7) {
		t->value_ns = vs * NSEC_PER_SEC + vns;
		t->interval_ns = is * NSEC_PER_SEC + ins;
		ret = 0;
	}
	kvfree(buf);
	return ret;
}

int ckpt_fdinfo_epoll(struct file *file, u32 epfd,
		      struct ckpt_img_epitem *items, u32 max, u32 *nr,
		      unsigned long *ino, u32 *sdev)
{
	char *buf = fdinfo(file, 96 * (size_t)(max + 1)), *line, *next;
	int ret = 0;

	if (IS_ERR(buf))
		return PTR_ERR(buf);
	for (line = buf; line && *line; line = next) {
		struct ckpt_img_epitem *e;
		long long pos;
		int tfd;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (strncmp(line, "tfd:", 4))
			continue;
		if (*nr == max) {
			ret = -E2BIG;
			break;
		}
		e = &items[*nr];
		if (sscanf(line, "tfd: %d events: %x data: %llx pos:%lli ino:%lx sdev:%x",
			   &tfd, &e->events, &e->data, &pos, &ino[*nr],
			   &sdev[*nr]) != 6 || tfd < 0) {
			ret = -EPROTO;
			break;
		}
		e->epfd = epfd;
		e->tfd = tfd;
		(*nr)++;
	}
	kvfree(buf);
	return ret;
}

int ckpt_fdinfo_inotify(struct file *file, struct ckpt_fdinfo_watch *w,
			u32 max, u32 *nr)
{
	/* A line each, up to ~380 bytes with an NFS file handle. */
	char *buf = fdinfo(file, 400 * (size_t)(max + 1)), *line, *next;
	int ret = 0;

	*nr = 0;
	if (IS_ERR(buf))
		return PTR_ERR(buf) == -E2BIG ? -EOVERFLOW : PTR_ERR(buf);
	for (line = buf; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (strncmp(line, "inotify wd:", 11))
			continue;
		if (*nr == max) {
			ret = -E2BIG;
			break;
		}
		if (sscanf(line, "inotify wd:%x ino:%lx sdev:%x mask:%x",
			   &w[*nr].wd, &w[*nr].ino, &w[*nr].sdev,
			   &w[*nr].mask) != 4) {
			ret = -EPROTO;
			break;
		}
		(*nr)++;
	}
	kvfree(buf);
	return ret;
}
