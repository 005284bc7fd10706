/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _CKPT_IMAGE_H
#define _CKPT_IMAGE_H

#include <linux/fs.h>
#include <linux/types.h>
#include <uapi/linux/ckpt.h>

#include "image_check.h"
#include "why.h"

/* Writes sections to the file descriptor the caller passed. */
/* This boot's /proc/sys/kernel/random/boot_id, read at load ("" if not). */
#define CKPT_BOOT_ID_LEN	40
extern char ckpt_boot_id[CKPT_BOOT_ID_LEN];
/* Whether an image's boot id is this boot's: its device numbers hold. */
bool ckpt_same_boot(const char *boot_id);

struct ckpt_auth;
struct shash_desc;

struct ckpt_writer {
	struct ckpt_auth *auth;	/* the MAC, until it is written before VMAS */
	struct shash_desc *digest;	/* SHA-256 of what is written, if asked */
	struct file *file;
	loff_t pos;
	u64 bytes;
	u64 nr_sections;
	u8 sum[CKPT_DIGEST_LEN];	/* the digest, once ckpt_writer_done() */
};

int ckpt_writer_init(struct ckpt_writer *w, int fd);
/* Hashes every byte written from now on (CKPT_CHECKPOINT_DIGESTS). */
int ckpt_writer_digest(struct ckpt_writer *w);
void ckpt_writer_done(struct ckpt_writer *w);
/* One section whose payload is @a followed by @b (@b may be NULL). */
int ckpt_write_sect(struct ckpt_writer *w, u32 type, const void *a,
		    size_t alen, const void *b, size_t blen);

/* What the reader found of the image's MAC once it has read VMAS. */
enum ckpt_auth_verdict {
	CKPT_AUTH_UNREAD,	/* VMAS not read yet */
	CKPT_AUTH_NONE,		/* the image has no MAC */
	CKPT_AUTH_OK,		/* its MAC is this engine's, over what was read */
	CKPT_AUTH_BAD,		/* another MAC: auth_why says how */
};

/* Reads and validates sections; every payload passed ckpt_img_payload(). */
struct ckpt_reader {
	struct ckpt_auth *auth;	/* the MAC being computed, until VMAS */
	struct ckpt_img_mac mac;	/* the image's, once read */
	bool mac_seen;
	enum ckpt_auth_verdict verdict;
	struct ckpt_why auth_why;
	struct file *file;
	loff_t pos;
	u64 offset;		/* of the current section, for messages */
	u64 next;		/* of the next section */
	struct ckpt_img_state st;
	void *pages_buf;	/* reused for PAGES payloads */
	struct page **pages;	/* CKPT_IMG_MAX_RUN_PAGES, for checksums */
};

int ckpt_reader_init(struct ckpt_reader *r, int fd);
void ckpt_reader_done(struct ckpt_reader *r);
/*
 * Reads the next section. PAGES payloads land in r->pages_buf, which the
 * next call reuses; any other payload is returned in a new buffer the
 * caller frees with kvfree().
 */
int ckpt_read_sect(struct ckpt_reader *r, struct ckpt_sect *s, void **payload);
/* The same in two steps: the header, then (for any type) its payload. */
int ckpt_read_hdr(struct ckpt_reader *r, struct ckpt_sect *s);
int ckpt_read_payload(struct ckpt_reader *r, const struct ckpt_sect *s,
		      void **payload);
/*
 * Restart, after ckpt_read_hdr() gave a PAGES section: its header into @p,
 * checked. Then its data: for a writable mapping, straight into current's
 * memory at p->addr, unless @defer is given and the image a regular file:
 * then *@defer is where the data starts, skipped, for ckpt_fill_direct()
 * later (*@defer is -1 otherwise). For other mappings into r->pages_buf
 * (*@data) for the caller to place. Checksums are verified where the data
 * landed.
 */
int ckpt_read_pages(struct ckpt_reader *r, const struct ckpt_sect *s,
		    struct ckpt_img_pages *p, void **data, loff_t *defer);
/* @len bytes of @file from *@pos into current's memory at @addr. */
int ckpt_read_user(struct file *file, loff_t *pos, u64 addr, size_t len);
/*
 * A PAGES section's data from @pos of @file into place at p->addr (the
 * current mm), verified against @csum; @pages has room for p->nr_pages.
 */
int ckpt_fill_direct(struct file *file, loff_t pos,
		     const struct ckpt_img_pages *p, u32 csum,
		     struct page **pages, const char **why);

/* The image, mapped read-only into the current mm for the fill. */
struct ckpt_image_map {
	struct file *file;
	unsigned long base;	/* where file offset 0 is, or 0: not mapped */
	loff_t size;		/* the file's size when mapped */
};

/*
 * The same from the image mapped at @m, copying page by page; @pos must be
 * a multiple of 8. Also -ENODATA when the image ends (or shrinks) before
 * the data does.
 */
int ckpt_fill_mapped(const struct ckpt_image_map *m, loff_t pos,
		     const struct ckpt_img_pages *p, u32 csum, const char **why);

#endif /* _CKPT_IMAGE_H */
