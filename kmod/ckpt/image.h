/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _CKPT_IMAGE_H
#define _CKPT_IMAGE_H

#include <linux/fs.h>
#include <linux/types.h>

#include "image_check.h"

/* Writes sections to the file descriptor the caller passed. */
struct ckpt_writer {
	struct file *file;
	loff_t pos;
	u64 bytes;
	u64 nr_sections;
};

int ckpt_writer_init(struct ckpt_writer *w, int fd);
void ckpt_writer_done(struct ckpt_writer *w);
/* One section whose payload is @a followed by @b (@b may be NULL). */
int ckpt_write_sect(struct ckpt_writer *w, u32 type, const void *a,
		    size_t alen, const void *b, size_t blen);

/* Reads and validates sections; every payload passed ckpt_img_payload(). */
struct ckpt_reader {
	struct file *file;
	loff_t pos;
	u64 offset;		/* of the current section, for messages */
	u64 next;		/* of the next section */
	struct ckpt_img_state st;
	void *pages_buf;	/* reused for PAGES payloads */
};

int ckpt_reader_init(struct ckpt_reader *r, int fd);
void ckpt_reader_done(struct ckpt_reader *r);
/*
 * Reads the next section. PAGES payloads land in r->pages_buf, which the
 * next call reuses; any other payload is returned in a new buffer the
 * caller frees with kvfree().
 */
int ckpt_read_sect(struct ckpt_reader *r, struct ckpt_sect *s, void **payload);

#endif /* _CKPT_IMAGE_H */
