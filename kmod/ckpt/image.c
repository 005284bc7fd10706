// SPDX-License-Identifier: GPL-2.0
/*
 * Image I/O: sections out to, and in from, whatever file the caller passed
 * (regular file, pipe or socket), with their checksums. Validation itself is
 * image_check.c, the same code userspace runs.
 */

#include <linux/file.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/slab.h>

#include "image.h"

static const u8 zero_pad[8];

/* The caller's descriptor, if it is open for @mode; its position in *@pos. */
static struct file *get_image_file(int fd, fmode_t mode, loff_t *pos)
{
	struct file *file = fget(fd);

	if (file && !(file->f_mode & mode)) {
		fput(file);
		file = NULL;
	}
	if (file)
		*pos = file->f_pos;
	return file;
}

/* Leaves a seekable file positioned after what was read or written. */
static void put_image_file(struct file *file, loff_t pos)
{
	if (!(file->f_mode & FMODE_STREAM))
		file->f_pos = pos;
	fput(file);
}

int ckpt_writer_init(struct ckpt_writer *w, int fd)
{
	memset(w, 0, sizeof(*w));
	w->file = get_image_file(fd, FMODE_WRITE, &w->pos);
	return w->file ? 0 : -EBADF;
}

void ckpt_writer_done(struct ckpt_writer *w)
{
	if (w->file)
		put_image_file(w->file, w->pos);
	w->file = NULL;
}

static int write_all(struct ckpt_writer *w, const void *buf, size_t len)
{
	ssize_t ret;

	while (len) {
		ret = kernel_write(w->file, buf, len, &w->pos);
		if (ret < 0)
			return ret;
		if (!ret)
			return -EIO;
		buf += ret;
		len -= ret;
		w->bytes += ret;
	}
	return 0;
}

int ckpt_write_sect(struct ckpt_writer *w, u32 type, const void *a,
		    size_t alen, const void *b, size_t blen)
{
	struct ckpt_sect s = {
		.type = type,
		.len = alen + blen,
	};
	size_t pad = (8 - (s.len & 7)) & 7;
	int ret;

	s.csum = ckpt_csum2(a, alen, b, blen);
	s.hcsum = ckpt_csum(&s, sizeof(s));

	ret = write_all(w, &s, sizeof(s));
	if (!ret)
		ret = write_all(w, a, alen);
	if (!ret && blen)
		ret = write_all(w, b, blen);
	if (!ret && pad)
		ret = write_all(w, zero_pad, pad);
	if (!ret)
		w->nr_sections++;
	return ret;
}

int ckpt_reader_init(struct ckpt_reader *r, int fd)
{
	memset(r, 0, sizeof(*r));
	ckpt_img_init(&r->st);
	r->file = get_image_file(fd, FMODE_READ, &r->pos);
	if (!r->file)
		return -EBADF;
	r->pages_buf = kvmalloc(ckpt_img_max_len(&r->st, CKPT_SECT_PAGES),
				GFP_KERNEL);
	if (!r->pages_buf) {
		put_image_file(r->file, r->pos);
		r->file = NULL;
		return -ENOMEM;
	}
	return 0;
}

void ckpt_reader_done(struct ckpt_reader *r)
{
	if (r->file)
		put_image_file(r->file, r->pos);
	kvfree(r->pages_buf);
	r->file = NULL;
	r->pages_buf = NULL;
}

static int read_all(struct ckpt_reader *r, void *buf, size_t len)
{
	ssize_t ret;

	while (len) {
		ret = kernel_read(r->file, buf, len, &r->pos);
		if (ret < 0)
			return ret;
		if (!ret) {
			r->st.why = "image is truncated";
			return -ENODATA;
		}
		buf += ret;
		len -= ret;
	}
	return 0;
}

int ckpt_read_sect(struct ckpt_reader *r, struct ckpt_sect *s, void **payload)
{
	u8 pad[8];
	size_t npad;
	void *buf;
	int ret;

	*payload = NULL;
	r->offset = r->next;
	ret = read_all(r, s, sizeof(*s));
	if (ret)
		return ret;
	ret = ckpt_img_next(&r->st, s);
	if (ret)
		return ret;

	if (s->type == CKPT_SECT_PAGES) {
		buf = r->pages_buf;
	} else {
		buf = kvmalloc(max_t(u64, s->len, 1), GFP_KERNEL);
		if (!buf)
			return -ENOMEM;
	}
	ret = read_all(r, buf, s->len);
	npad = (8 - (s->len & 7)) & 7;
	if (!ret && npad) {
		ret = read_all(r, pad, npad);
		if (!ret && memchr_inv(pad, 0, npad)) {
			r->st.why = "non-zero section padding";
			ret = -EBADMSG;
		}
	}
	if (!ret)
		ret = ckpt_img_payload(&r->st, s, buf);
	if (ret) {
		if (buf != r->pages_buf)
			kvfree(buf);
		return ret;
	}
	*payload = buf;
	r->next += sizeof(*s) + s->len + npad;
	return 0;
}
