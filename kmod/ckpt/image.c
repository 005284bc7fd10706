// SPDX-License-Identifier: GPL-2.0
/*
 * Image I/O: sections out to, and in from, whatever file the caller passed
 * (regular file, pipe or socket), with their checksums. Validation itself is
 * image_check.c, the same code userspace runs.
 */

#include <crypto/hash.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/sched/signal.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/uio.h>

#include "auth.h"
#include "image.h"
#include "mm.h"

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
	struct ckpt_auth *auth;

	memset(w, 0, sizeof(*w));
	auth = ckpt_auth_begin();
	if (IS_ERR(auth))
		return PTR_ERR(auth);
	w->file = get_image_file(fd, FMODE_WRITE, &w->pos);
	if (!w->file) {
		ckpt_auth_free(auth);
		return -EBADF;
	}
	w->auth = auth;
	return 0;
}

int ckpt_writer_digest(struct ckpt_writer *w)
{
	struct crypto_shash *tfm = crypto_alloc_shash("sha256", 0, 0);
	int ret;

	if (IS_ERR(tfm))
		return PTR_ERR(tfm);
	w->digest = kzalloc(sizeof(*w->digest) + crypto_shash_descsize(tfm),
			    GFP_KERNEL);
	if (!w->digest) {
		crypto_free_shash(tfm);
		return -ENOMEM;
	}
	w->digest->tfm = tfm;
	ret = crypto_shash_init(w->digest);
	if (ret) {
		kfree(w->digest);
		w->digest = NULL;
		crypto_free_shash(tfm);
	}
	return ret;
}

void ckpt_writer_done(struct ckpt_writer *w)
{
	if (w->file)
		put_image_file(w->file, w->pos);
	w->file = NULL;
	if (w->digest) {
		if (crypto_shash_final(w->digest, w->sum))
			memset(w->sum, 0, sizeof(w->sum));
		crypto_free_shash(w->digest->tfm);
		kfree(w->digest);
		w->digest = NULL;
	}
	ckpt_auth_free(w->auth);
	w->auth = NULL;
}

/*
 * Hashed a piece at a time: an arch's SHA-256 runs with preemption off
 * for the length it is given, and a write may be a megabyte.
 */
static int digest_update(struct shash_desc *d, const void *buf, size_t len)
{
	size_t n;
	int ret;

	while (len) {
		n = min_t(size_t, len, SZ_64K);
		ret = crypto_shash_update(d, buf, n);
		if (ret)
			return ret;
		buf += n;
		len -= n;
		cond_resched();
	}
	return 0;
}

static int write_all(struct ckpt_writer *w, const void *buf, size_t len)
{
	ssize_t ret;

	while (len) {
		/*
		 * A pipe or socket write already gives up on any signal; a
		 * file that keeps taking a little at a time does not.
		 */
		if (fatal_signal_pending(current))
			return -EINTR;
		ret = kernel_write(w->file, buf, len, &w->pos);
		if (ret < 0)
			return ret;
		if (!ret)
			return -EIO;
		if (w->digest && digest_update(w->digest, buf, ret))
			return -EIO;
		buf += ret;
		len -= ret;
		w->bytes += ret;
	}
	return 0;
}

/* The bytes of one section, as written and read, into the image's MAC. */
static int auth_sect(struct ckpt_auth *auth, const struct ckpt_sect *s,
		     const void *a, size_t alen, const void *b, size_t blen)
{
	size_t pad = (8 - (s->len & 7)) & 7;
	int ret;

	ret = ckpt_auth_update(auth, s, sizeof(*s));
	if (!ret)
		ret = ckpt_auth_update(auth, a, alen);
	if (!ret && blen)
		ret = ckpt_auth_update(auth, b, blen);
	if (!ret && pad)
		ret = ckpt_auth_update(auth, zero_pad, pad);
	return ret;
}

static int write_raw_sect(struct ckpt_writer *w, const struct ckpt_sect *s,
			  const void *a, size_t alen, const void *b,
			  size_t blen)
{
	size_t pad = (8 - (s->len & 7)) & 7;
	int ret;

	ret = write_all(w, s, sizeof(*s));
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

static void fill_sect(struct ckpt_sect *s, u32 type, const void *a,
		      size_t alen, const void *b, size_t blen)
{
	memset(s, 0, sizeof(*s));
	s->type = type;
	s->len = alen + blen;
	s->csum = ckpt_csum2(a, alen, b, blen);
	s->hcsum = ckpt_csum(s, sizeof(*s));
}

/*
 * Every section up to VMAS goes into the MAC; VMAS too, after which the
 * MAC is final and written before it.
 */
static int write_mac_then(struct ckpt_writer *w, const struct ckpt_sect *vs,
			  const void *a, size_t alen, const void *b,
			  size_t blen)
{
	struct ckpt_img_mac m;
	struct ckpt_sect ms;
	int ret;

	ret = auth_sect(w->auth, vs, a, alen, b, blen);
	if (!ret)
		ret = ckpt_auth_final(w->auth, &m);
	ckpt_auth_free(w->auth);
	w->auth = NULL;
	if (ret)
		return ret;
	fill_sect(&ms, CKPT_SECT_MAC, &m, sizeof(m), NULL, 0);
	ret = write_raw_sect(w, &ms, &m, sizeof(m), NULL, 0);
	memzero_explicit(&m, sizeof(m));
	return ret;
}

int ckpt_write_sect(struct ckpt_writer *w, u32 type, const void *a,
		    size_t alen, const void *b, size_t blen)
{
	struct ckpt_sect s;
	int ret = 0;

	fill_sect(&s, type, a, alen, b, blen);
	if (w->auth && type == CKPT_SECT_VMAS)
		ret = write_mac_then(w, &s, a, alen, b, blen);
	else if (w->auth)
		ret = auth_sect(w->auth, &s, a, alen, b, blen);
	if (!ret)
		ret = write_raw_sect(w, &s, a, alen, b, blen);
	return ret;
}

int ckpt_reader_init(struct ckpt_reader *r, int fd)
{
	struct ckpt_auth *auth;

	memset(r, 0, sizeof(*r));
	ckpt_img_init(&r->st);
	auth = ckpt_auth_begin();
	if (IS_ERR(auth))
		return PTR_ERR(auth);
	r->file = get_image_file(fd, FMODE_READ, &r->pos);
	if (!r->file) {
		ckpt_auth_free(auth);
		return -EBADF;
	}
	r->auth = auth;
	/* Charged to the caller's memory cgroup, as everything a read makes. */
	r->pages_buf = kvmalloc(ckpt_img_max_len(&r->st, CKPT_SECT_PAGES),
				GFP_KERNEL_ACCOUNT);
	r->pages = kvmalloc_array(CKPT_IMG_MAX_RUN_PAGES, sizeof(*r->pages),
				  GFP_KERNEL_ACCOUNT);
	if (!r->pages_buf || !r->pages) {
		kvfree(r->pages_buf);
		kvfree(r->pages);
		put_image_file(r->file, r->pos);
		r->file = NULL;
		return -ENOMEM;
	}
	return 0;
}

void ckpt_reader_done(struct ckpt_reader *r)
{
	ckpt_auth_free(r->auth);
	r->auth = NULL;
	if (r->file)
		put_image_file(r->file, r->pos);
	kvfree(r->pages_buf);
	kvfree(r->pages);
	r->file = NULL;
	r->pages_buf = NULL;
	r->pages = NULL;
}

static int read_all(struct ckpt_reader *r, void *buf, size_t len)
{
	ssize_t ret;

	while (len) {
		ret = kernel_read(r->file, buf, len, &r->pos);
		if (ret < 0) {
			r->st.why = "cannot read the image";
			return ret;
		}
		if (!ret) {
			r->st.why = "image is truncated";
			return -ENODATA;
		}
		buf += ret;
		len -= ret;
	}
	return 0;
}

int ckpt_read_hdr(struct ckpt_reader *r, struct ckpt_sect *s)
{
	int ret;

	r->offset = r->next;
	ret = read_all(r, s, sizeof(*s));
	if (!ret)
		ret = ckpt_img_next(&r->st, s);
	if (!ret && r->auth && s->type != CKPT_SECT_MAC)
		ret = ckpt_auth_update(r->auth, s, sizeof(*s));
	return ret;
}

/*
 * The payload of an accepted section of the front into the MAC, or, for
 * MAC, kept; at VMAS, the verdict.
 */
static int auth_payload(struct ckpt_reader *r, const struct ckpt_sect *s,
			const void *buf)
{
	size_t npad = (8 - (s->len & 7)) & 7;
	int ret;

	if (s->type == CKPT_SECT_MAC) {
		memcpy(&r->mac, buf, sizeof(r->mac));
		r->mac_seen = true;
		return 0;
	}
	ret = ckpt_auth_update(r->auth, buf, s->len);
	if (!ret && npad)
		ret = ckpt_auth_update(r->auth, zero_pad, npad);
	if (ret || s->type != CKPT_SECT_VMAS)
		return ret;
	if (!r->mac_seen) {
		r->verdict = CKPT_AUTH_NONE;
	} else {
		ret = ckpt_auth_verify(r->auth, &r->mac, &r->auth_why);
		if (ret == -EKEYREJECTED)
			r->verdict = CKPT_AUTH_BAD;
		else if (!ret)
			r->verdict = CKPT_AUTH_OK;
	}
	ckpt_auth_free(r->auth);
	r->auth = NULL;
	return ret == -EKEYREJECTED ? 0 : ret;
}

/* The zero padding after a payload of @len bytes. */
static int read_pad(struct ckpt_reader *r, u64 len)
{
	size_t npad = (8 - (len & 7)) & 7;
	u8 pad[8];
	int ret;

	if (!npad)
		return 0;
	ret = read_all(r, pad, npad);
	if (!ret && memchr_inv(pad, 0, npad)) {
		r->st.why = "non-zero section padding";
		ret = -EBADMSG;
	}
	return ret;
}

#define READ_STEP	(64 * 1024)

/*
 * A payload of @len bytes (ckpt_img_next() bounded it by its kind and the
 * header's counts) into a new buffer, which grows as the data comes,
 * doubling from 64 KiB: an image that stalls (on a pipe, say) pins no
 * more than it sent, whatever its headers claim.
 */
static int read_new(struct ckpt_reader *r, u64 len, void **out)
{
	size_t have = 0, size = min_t(u64, max_t(u64, len, 1), READ_STEP);
	void *buf = kvmalloc(size, GFP_KERNEL_ACCOUNT), *bigger;
	int ret;

	while (buf) {
		ret = read_all(r, buf + have, min_t(u64, size, len) - have);
		if (ret) {
			kvfree(buf);
			return ret;
		}
		have = min_t(u64, size, len);
		if (have == len) {
			*out = buf;
			return 0;
		}
		size = min_t(u64, (u64)size * 2, len);
		bigger = kvmalloc(size, GFP_KERNEL_ACCOUNT);
		if (bigger)
			memcpy(bigger, buf, have);
		kvfree(buf);
		buf = bigger;
	}
	return -ENOMEM;
}

int ckpt_read_payload(struct ckpt_reader *r, const struct ckpt_sect *s,
		      void **payload)
{
	void *buf = NULL;
	int ret;

	*payload = NULL;
	if (s->type == CKPT_SECT_PAGES) {
		buf = r->pages_buf;
		ret = read_all(r, buf, s->len);
	} else {
		ret = read_new(r, s->len, &buf);
	}
	if (!ret)
		ret = read_pad(r, s->len);
	if (!ret)
		ret = ckpt_img_payload(&r->st, s, buf);
	/* What only the running kernel can say, before anything changes. */
	if (!ret && s->type == CKPT_SECT_PROCESS)
		ret = ckpt_mm_check_process(buf, &r->st.why);
	if (!ret && r->auth)
		ret = auth_payload(r, s, buf);
	if (ret) {
		if (buf != r->pages_buf)
			kvfree(buf);
		return ret;
	}
	*payload = buf;
	r->next += sizeof(*s) + s->len + ((8 - (s->len & 7)) & 7);
	return 0;
}

int ckpt_read_sect(struct ckpt_reader *r, struct ckpt_sect *s, void **payload)
{
	int ret;

	*payload = NULL;
	ret = ckpt_read_hdr(r, s);
	return ret ? ret : ckpt_read_payload(r, s, payload);
}

int ckpt_read_user(struct file *file, loff_t *pos, u64 addr, size_t len)
{
	struct iovec iov = {
		.iov_base = (void __user *)(unsigned long)addr,
		.iov_len = len,
	};
	struct iov_iter iter;
	ssize_t ret;

	iov_iter_init(&iter, ITER_DEST, &iov, 1, len);
	while (iov_iter_count(&iter)) {
		ret = vfs_iter_read(file, &iter, pos, 0);
		if (ret < 0)
			return ret;
		if (!ret)
			return -ENODATA;
	}
	return 0;
}

/* Adds @n pages of current's memory at @addr to @c, read where they are. */
static int csum_user(struct ckpt_csum *c, struct page **pages, u64 addr,
		     unsigned int n)
{
	int got, i, ret = 0;

	got = get_user_pages_fast(addr, n, 0, pages);
	if (got < 0)
		return got;
	for (i = 0; i < got; i++) {
		void *va = kmap_local_page(pages[i]);

		ckpt_csum_update(c, va, PAGE_SIZE);
		kunmap_local(va);
		put_page(pages[i]);
	}
	if (got != n)
		ret = -EFAULT;
	return ret;
}

int ckpt_fill_direct(struct file *file, loff_t pos,
		     const struct ckpt_img_pages *p, u32 csum,
		     struct page **pages, const char **why)
{
	struct ckpt_csum c;
	int ret;

	ret = ckpt_read_user(file, &pos, p->addr,
			     (size_t)p->nr_pages << PAGE_SHIFT);
	if (ret) {
		*why = ret == -ENODATA ? "image is truncated" :
					 "cannot read the image";
		return ret;
	}
	ckpt_csum_init(&c);
	ckpt_csum_update(&c, p, sizeof(*p));
	ret = csum_user(&c, pages, p->addr, p->nr_pages);
	if (!ret && (u32)ckpt_csum_xxh64(&c) != csum) {
		*why = "section checksum mismatch";
		ret = -EBADMSG;
	}
	return ret;
}

/*
 * Copies a page from the image mapping: from @off into @src[0], and on into
 * @src[1] when @off is not zero (sections are 8-byte aligned, so @off is a
 * multiple of 8). A plain loop of 64-bit moves: the kernel's own copy
 * routines use "rep movsb" on CPUs that advertise fast strings, which
 * emulators run a byte at a time (performance.md).
 */
static void copy_words(u64 *d, const u64 *s, unsigned int words)
{
	unsigned int i;

	for (i = 0; i + 4 <= words; i += 4) {
		u64 a = s[i], b = s[i + 1], c = s[i + 2], e = s[i + 3];

		d[i] = a;
		d[i + 1] = b;
		d[i + 2] = c;
		d[i + 3] = e;
	}
	for (; i < words; i++)
		d[i] = s[i];
}

static void copy_in(void *dst, struct page **src, unsigned int off)
{
	void *va = kmap_local_page(src[0]);

	copy_words(dst, va + off, (PAGE_SIZE - off) / 8);
	kunmap_local(va);
	if (off) {
		va = kmap_local_page(src[1]);
		copy_words(dst + PAGE_SIZE - off, va, off / 8);
		kunmap_local(va);
	}
}

#define FILL_CHUNK	32

/*
 * Why the image's pages up to @end could not be had (@got: what
 * get_user_pages_fast() said): it shrank under us (the mapping ends at the
 * new size), a fatal signal or no memory, or a read error.
 */
static int source_error(const struct ckpt_image_map *m, loff_t end, int got,
			const char **why)
{
	if (i_size_read(file_inode(m->file)) < end) {
		*why = "image is truncated";
		return -ENODATA;
	}
	*why = "cannot read the image";
	return got < 0 && got != -EFAULT ? got : -EIO;
}

int ckpt_fill_mapped(const struct ckpt_image_map *m, loff_t pos,
		     const struct ckpt_img_pages *p, u32 csum, const char **why)
{
	struct page *src[FILL_CHUNK + 1], *dst[FILL_CHUNK];
	unsigned int off = offset_in_page(pos), done, n, ns, i;
	size_t len = (size_t)p->nr_pages << PAGE_SHIFT;
	struct ckpt_csum c;
	int gs, gd, ret = 0;

	if (pos < 0 || pos > m->size || len > m->size - pos) {
		*why = "image is truncated";
		return -ENODATA;
	}
	ckpt_csum_init(&c);
	ckpt_csum_update(&c, p, sizeof(*p));
	for (done = 0; done < p->nr_pages && !ret; done += n) {
		unsigned long from = m->base + pos + ((size_t)done << PAGE_SHIFT);

		n = min_t(unsigned int, p->nr_pages - done, FILL_CHUNK);
		ns = n + !!off;
		gs = get_user_pages_fast(from & PAGE_MASK, ns, 0, src);
		gd = 0;
		if (gs != ns) {
			ret = source_error(m, pos + len, gs, why);
		} else {
			gd = get_user_pages_fast(p->addr +
						 ((u64)done << PAGE_SHIFT),
						 n, FOLL_WRITE, dst);
			if (gd != n)
				ret = gd < 0 && gd != -EFAULT ? gd : -EFAULT;
		}
		for (i = 0; i < max(gd, 0); i++) {
			if (!ret) {
				void *va = kmap_local_page(dst[i]);

				copy_in(va, src + i, off);
				ckpt_csum_update(&c, va, PAGE_SIZE);
				kunmap_local(va);
				set_page_dirty_lock(dst[i]);
			}
			put_page(dst[i]);
		}
		for (i = 0; i < max(gs, 0); i++)
			put_page(src[i]);
		cond_resched();
	}
	if (!ret && (u32)ckpt_csum_xxh64(&c) != csum) {
		*why = "section checksum mismatch";
		ret = -EBADMSG;
	}
	return ret;
}

int ckpt_read_pages(struct ckpt_reader *r, const struct ckpt_sect *s,
		    struct ckpt_img_pages *p, void **data, loff_t *defer)
{
	const char *why = NULL;
	struct ckpt_csum c;
	size_t len;
	bool direct, deferred;
	int ret;

	*data = NULL;
	if (s->len < sizeof(*p)) {
		r->st.why = "PAGES length does not match its page count";
		return -EBADMSG;
	}
	ret = read_all(r, p, sizeof(*p));
	if (!ret)
		ret = ckpt_img_pages_hdr(&r->st, s, p);
	if (ret) {
		/*
		 * Not accepted, maybe half read (a short read, then an error:
		 * any errno a FUSE server likes, -EFAULT too): nothing in it
		 * may be used, not even to name the section in a message.
		 */
		memset(p, 0, sizeof(*p));
		return ret;
	}
	len = s->len - sizeof(*p);
	direct = (r->st.vmas[p->vma].prot & PROT_WRITE) &&
		 r->file->f_op->read_iter;
	deferred = direct && defer && S_ISREG(file_inode(r->file)->i_mode);
	if (defer)
		*defer = deferred ? r->pos : -1;

	if (deferred) {
		/* The caller reads it later, maybe in another thread. */
		r->pos += len;
	} else if (direct) {
		ret = ckpt_fill_direct(r->file, r->pos, p, s->csum, r->pages,
				       &why);
		r->pos += len;
		if (why)
			r->st.why = why;
	} else {
		ret = read_all(r, r->pages_buf, len);
		if (!ret) {
			ckpt_csum_init(&c);
			ckpt_csum_update(&c, p, sizeof(*p));
			ckpt_csum_update(&c, r->pages_buf, len);
			*data = r->pages_buf;
			if ((u32)ckpt_csum_xxh64(&c) != s->csum) {
				r->st.why = "section checksum mismatch";
				ret = -EBADMSG;
			}
		}
	}
	if (!ret)
		ret = read_pad(r, s->len);
	if (ret) {
		*data = NULL;
		return ret;
	}
	r->next += sizeof(*s) + s->len + ((8 - (s->len & 7)) & 7);
	return 0;
}
