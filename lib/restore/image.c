// SPDX-License-Identifier: GPL-2.0
/*
 * The userspace image reader. It does no validation of its own beyond the
 * framing (reading, padding, what follows END) and one cross-check: every
 * decision about what a section may say is image_check.c's, the code the
 * engine runs on the same image at restart.
 *
 * A regular file is mapped rather than read, so that checking a large
 * image costs its checksums and no copy; a pipe or socket is read. The
 * checksums of a mapped image's PAGES sections, nearly all of its bytes, are
 * checked by one thread per CPU (up to LATER_THREADS), a batch at a time
 * (LATER_BATCH bytes), before anything found wrong further on is reported
 * and before ckpt_image_read() returns: the first damaged section is still
 * the one named, and nothing is accepted unchecked by the time the caller
 * sees it. A restart leaves them to the engine, which checks them as it
 * copies the pages in (CKPT_IMAGE_PAGES_TO_ENGINE), unless it asks for them
 * with ckpt_image_check_pages().
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image.h"

const char *const ckpt_greg_names[CKPT_GREG_NR] = {
	"r15", "r14", "r13", "r12", "rbp", "rbx", "r11", "r10", "r9", "r8",
	"rax", "rcx", "rdx", "rsi", "rdi", "orig_rax", "rip", "cs", "eflags",
	"rsp", "ss", "fs_base", "gs_base", "ds", "es", "fs", "gs",
};

/*
 * Payloads are read in pieces of at most this size into a buffer that grows
 * as the data arrives: a length is bounded by ckpt_img_max_len() before it
 * is used, but a short input should not cost the whole bound up front.
 */
#define READ_CHUNK	(1UL << 20)

#define LATER_THREADS	8
#define LATER_BATCH	(64UL << 20)
#define LATER_MIN_THREADED	(4UL << 20)

void ckpt_image_init(struct ckpt_image *img)
{
	memset(img, 0, sizeof(*img));
	ckpt_img_init(&img->st);
}

void ckpt_image_free(struct ckpt_image *img)
{
	free(img->threads);
	free(img->files);
	free(img->sigqueue);
	free(img->epitems);
	free(img->locks);
	free(img->inotify);
	free(img->timerfds);
	free(img->ptys);
	free(img->scheds);
	free(img->timer_list);
	img->timer_list = NULL;
	free(img->groups);
	img->groups = NULL;
	free(img->fileobjs);
	free(img->chunks);
	img->fileobjs = NULL;
	img->chunks = NULL;
	img->nr_fileobjs = img->nr_chunks = 0;
	while (img->nr_pipes)
		free(img->pipes[--img->nr_pipes]);
	free(img->pipes);
	while (img->nr_usocks)
		free(img->usocks[--img->nr_usocks]);
	free(img->usocks);
	free(img->ulistens);
	img->ulistens = NULL;
	img->nr_ulistens = 0;
	while (img->nr_upends)
		free(img->upends[--img->nr_upends]);
	free(img->upends);
	img->upends = NULL;
	while (img->nr_unames)
		free(img->unames[--img->nr_unames]);
	free(img->unames);
	img->unames = NULL;
	while (img->nr_tcps)
		free(img->tcps[--img->nr_tcps]);
	free(img->tcps);
	img->tcps = NULL;
	while (img->nr_shms)
		free(img->shms[--img->nr_shms]);
	free(img->shms);
	img->shms = NULL;
	while (img->nr_sems)
		free(img->sems[--img->nr_sems]);
	free(img->sems);
	img->sems = NULL;
	while (img->nr_msgs)
		free(img->msgs[--img->nr_msgs]);
	free(img->msgs);
	img->msgs = NULL;
	while (img->nr_semundos)
		free(img->semundos[--img->nr_semundos]);
	free(img->semundos);
	img->semundos = NULL;
	free(img->zombies);
	img->zombies = NULL;
	img->nr_zombies = 0;
	free(img->shm_chunks);
	img->shm_chunks = NULL;
	img->nr_shm_chunks = 0;
	free(img->vmas);
	free(img->vma_pages);
	free(img->buf);
	free(img->later);
	img->later = NULL;
	img->nr_later = img->later_cap = img->later_bytes = 0;
	if (img->map)
		munmap((void *)img->map, img->map_len);
	img->map = NULL;
	img->map_tried = false;
	img->threads = NULL;
	img->vmas = NULL;
	img->vma_pages = NULL;
	img->buf = NULL;
	img->buf_size = 0;
	img->st.vmas = NULL;
}

static int fail(struct ckpt_image *img, int err, const char *why)
{
	img->error.err = err;
	img->error.why = why;
	errno = -err;
	return err;
}

static int fail_io(struct ckpt_image *img, int err)
{
	img->error.io = true;
	return fail(img, err, "cannot read the image");
}

/* Reads len bytes; returns how many (fewer only at end of file) or -errno. */
static ssize_t read_full(int fd, void *buf, size_t len)
{
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = read(fd, (char *)buf + done, len - done);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (!n)
			break;
		done += n;
	}
	return done;
}

/* Like read_full(), from the mapping when there is one. */
static ssize_t src_read(struct ckpt_image *img, int fd, void *buf, size_t len)
{
	size_t n;

	if (!img->map)
		return read_full(fd, buf, len);
	n = img->map_len - img->map_pos < len ? img->map_len - img->map_pos : len;
	memcpy(buf, img->map + img->map_pos, n);
	img->map_pos += n;
	return n;
}

/* Makes *bufp hold at least need bytes, growing by doubling up to len. */
static int reserve(struct ckpt_image *img, void **bufp, size_t *sizep,
		   size_t need, size_t len)
{
	size_t size = *sizep ? *sizep : 4096;
	void *p;

	if (*bufp && need <= *sizep)
		return 0;
	while (size < need)
		size *= 2;
	if (size > len && len >= need && len >= 4096)
		size = len;
	p = realloc(*bufp, size);
	if (!p)
		return fail(img, -ENOMEM, "out of memory");
	*bufp = p;
	*sizep = size;
	return 0;
}

static int read_payload(struct ckpt_image *img, int fd, void **bufp,
			size_t *sizep, size_t len)
{
	size_t done, chunk;
	ssize_t n;
	int ret;

	ret = reserve(img, bufp, sizep, len < READ_CHUNK ? len : READ_CHUNK,
		      len);
	if (ret)
		return ret;
	for (done = 0; done < len; done += chunk) {
		chunk = len - done < READ_CHUNK ? len - done : READ_CHUNK;
		ret = reserve(img, bufp, sizep, done + chunk, len);
		if (ret)
			return ret;
		n = read_full(fd, (char *)*bufp + done, chunk);
		if (n < 0)
			return fail_io(img, n);
		if ((size_t)n < chunk)
			return fail(img, -EBADMSG, "truncated image");
	}
	return 0;
}

/* Room for what the header announces. */
static int accept_header(struct ckpt_image *img, const void *payload)
{
	memcpy(&img->hdr, payload, sizeof(img->hdr));
	img->threads = calloc(img->hdr.nr_threads, sizeof(*img->threads));
	img->vma_pages = calloc(img->hdr.nr_vmas, sizeof(*img->vma_pages));
	if (!img->threads || !img->vma_pages)
		return fail(img, -ENOMEM, "out of memory");
	return 0;
}

/* Once END is accepted, nothing may follow it. */
static int accept_end(struct ckpt_image *img, int fd)
{
	struct ckpt_image_error *e = &img->error;
	ssize_t n;
	char c;

	/* Where the failure is, if something follows END. */
	e->section = img->st.nr_sections;
	e->type = 0;
	e->offset = img->size + sizeof(struct ckpt_sect) +
		    sizeof(struct ckpt_img_end);
	n = src_read(img, fd, &c, 1);
	if (n < 0)
		return fail_io(img, n);
	if (n)
		return fail(img, -EBADMSG, "data after the END section");
	return 0;
}

/*
 * A payload that is a fixed part and an array: the fixed part into @head,
 * the array into a new buffer (never of size 0), or NULL.
 */
static void *split(const void *payload, size_t len, void *head,
		   size_t head_len)
{
	void *tail = malloc(len - head_len + 1);

	if (tail) {
		memcpy(head, payload, head_len);
		memcpy(tail, (const char *)payload + head_len, len - head_len);
	}
	return tail;
}


/* A copy of a section's @len bytes at @payload, appended to *@arr. */
static int keep_copy(struct ckpt_image *img, void ***arr, __u32 *nr,
		     const void *payload, size_t len)
{
	void **more, *copy;

	more = realloc(*arr, (*nr + 1) * sizeof(*more));
	if (!more)
		return fail(img, -ENOMEM, "out of memory");
	*arr = more;
	copy = malloc(len);
	if (!copy)
		return fail(img, -ENOMEM, "out of memory");
	memcpy(copy, payload, len);
	(*arr)[(*nr)++] = copy;
	return 0;
}

/* An array section's entries, @size bytes each, copied into *@arr. */
static int copy_array(struct ckpt_image *img, void **arr, __u32 *nr,
		      const void *payload, size_t len, size_t size)
{
	*arr = malloc(len);
	if (!*arr)
		return fail(img, -ENOMEM, "out of memory");
	memcpy(*arr, payload, len);
	*nr = len / size;
	return 0;
}

/* Appends @c to *@arr, which is doubled at every power of two. */
static int add_chunk(struct ckpt_image *img, struct ckpt_image_chunk **arr,
		     __u32 *nr, const struct ckpt_image_chunk *c)
{
	struct ckpt_image_chunk *more;

	if (!(*nr & (*nr - 1))) {
		more = realloc(*arr, (*nr ? 2 * *nr : 1) * sizeof(*more));
		if (!more)
			return fail(img, -ENOMEM, "out of memory");
		*arr = more;
	}
	(*arr)[(*nr)++] = *c;
	return 0;
}

static int accept(struct ckpt_image *img, int fd, const struct ckpt_sect *s,
		  const void *payload)
{
	const struct ckpt_img_pages *p = payload;

	switch (s->type) {
	case CKPT_SECT_HEADER:
		return accept_header(img, payload);
	case CKPT_SECT_PROCESS:
		memcpy(&img->proc, payload, sizeof(img->proc));
		break;
	case CKPT_SECT_TREE:
		memcpy(&img->tree, payload, sizeof(img->tree));
		img->has_tree = true;
		break;
	case CKPT_SECT_THREAD:
		memcpy(&img->threads[img->nr_threads++], payload,
		       sizeof(*img->threads));
		break;
	case CKPT_SECT_FILES:
		img->nr_files = s->len / sizeof(*img->files);
		img->files = malloc(s->len);
		if (!img->files)
			return fail(img, -ENOMEM, "out of memory");
		memcpy(img->files, payload, s->len);
		/* The checker reads it for EPOLL: point it at the copy. */
		img->st.files = img->files;
		break;
	case CKPT_SECT_SIGNALS:
		img->sigqueue = split(payload, s->len, &img->signals,
				      sizeof(img->signals));
		if (!img->sigqueue)
			return fail(img, -ENOMEM, "out of memory");
		break;
	case CKPT_SECT_TIMERS:
		img->timer_list = split(payload, s->len, &img->timers,
					sizeof(img->timers));
		if (!img->timer_list)
			return fail(img, -ENOMEM, "out of memory");
		break;
	case CKPT_SECT_CREDS:
		img->groups = split(payload, s->len, &img->creds,
				    sizeof(img->creds));
		if (!img->groups)
			return fail(img, -ENOMEM, "out of memory");
		img->has_creds = true;
		break;
	case CKPT_SECT_MAC:
		memcpy(&img->mac, payload, sizeof(img->mac));
		img->has_mac = true;
		break;
	case CKPT_SECT_PIPE:
		return keep_copy(img, (void ***)&img->pipes, &img->nr_pipes,
				 payload, s->len);
	case CKPT_SECT_USOCK:
		return keep_copy(img, (void ***)&img->usocks, &img->nr_usocks,
				 payload, s->len);
	case CKPT_SECT_UPEND:
		return keep_copy(img, (void ***)&img->upends, &img->nr_upends,
				 payload, s->len);
	case CKPT_SECT_UNAME:
		return keep_copy(img, (void ***)&img->unames, &img->nr_unames,
				 payload, s->len);
	case CKPT_SECT_TCP:
		return keep_copy(img, (void ***)&img->tcps, &img->nr_tcps,
				 payload, s->len);
	case CKPT_SECT_ULISTEN: {
		struct ckpt_img_ulisten *l;

		l = realloc(img->ulistens, (img->nr_ulistens + 1) * sizeof(*l));
		if (!l)
			return fail(img, -ENOMEM, "out of memory");
		img->ulistens = l;
		memcpy(&l[img->nr_ulistens++], payload, sizeof(*l));
		break;
	}
	case CKPT_SECT_FILEOBJ:
		img->nr_fileobjs = s->len / sizeof(*img->fileobjs);
		img->fileobjs = malloc(s->len);
		if (!img->fileobjs)
			return fail(img, -ENOMEM, "out of memory");
		memcpy(img->fileobjs, payload, s->len);
		/* The checker goes on reading the table: point it at the copy. */
		img->st.fileobjs = img->fileobjs;
		break;
	case CKPT_SECT_FILEDATA: {
		const struct ckpt_img_filedata *d = payload;
		struct ckpt_image_chunk c = {
			.obj = d->obj, .len = s->len - sizeof(*d),
			.offset = d->offset,
			.image_offset = img->size + sizeof(*s) + sizeof(*d),
		};

		return add_chunk(img, &img->chunks, &img->nr_chunks, &c);
	}
	case CKPT_SECT_ZOMBIE: {
		struct ckpt_img_zombie *z;

		z = realloc(img->zombies, (img->nr_zombies + 1) * sizeof(*z));
		if (!z)
			return fail(img, -ENOMEM, "out of memory");
		img->zombies = z;
		memcpy(&z[img->nr_zombies++], payload, sizeof(*z));
		break;
	}
	case CKPT_SECT_SYSVSHM:
		return keep_copy(img, (void ***)&img->shms, &img->nr_shms,
				 payload, s->len);
	case CKPT_SECT_SYSVSEM:
		return keep_copy(img, (void ***)&img->sems, &img->nr_sems,
				 payload, s->len);
	case CKPT_SECT_SYSVMSG:
		return keep_copy(img, (void ***)&img->msgs, &img->nr_msgs,
				 payload, s->len);
	case CKPT_SECT_SEMUNDO:
		return keep_copy(img, (void ***)&img->semundos,
				 &img->nr_semundos, payload, s->len);
	case CKPT_SECT_SYSVDATA: {
		const struct ckpt_img_sysvdata *d = payload;
		struct ckpt_image_chunk c = {
			.obj = img->nr_shms - 1, .len = s->len - sizeof(*d),
			.offset = d->offset,
			.image_offset = img->size + sizeof(*s) + sizeof(*d),
		};

		return add_chunk(img, &img->shm_chunks, &img->nr_shm_chunks, &c);
	}
	case CKPT_SECT_TIMERFD:
		return copy_array(img, (void **)&img->timerfds, &img->nr_timerfds,
				  payload, s->len, sizeof(*img->timerfds));
	case CKPT_SECT_EPOLL:
		return copy_array(img, (void **)&img->epitems, &img->nr_epitems,
				  payload, s->len, sizeof(*img->epitems));
	case CKPT_SECT_LOCKS:
		return copy_array(img, (void **)&img->locks, &img->nr_locks,
				  payload, s->len, sizeof(*img->locks));
	case CKPT_SECT_INOTIFY:
		return copy_array(img, (void **)&img->inotify, &img->nr_inotify,
				  payload, s->len, sizeof(*img->inotify));
	case CKPT_SECT_PTY:
		return copy_array(img, (void **)&img->ptys, &img->nr_ptys,
				  payload, s->len, sizeof(*img->ptys));
	case CKPT_SECT_SCHED:
		return copy_array(img, (void **)&img->scheds, &img->nr_scheds,
				  payload, s->len, sizeof(*img->scheds));
	case CKPT_SECT_VDSO:
		memcpy(&img->vdso, payload, sizeof(img->vdso));
		img->has_vdso = true;
		break;
	case CKPT_SECT_FS:
		memcpy(&img->fs, payload, sizeof(img->fs));
		img->has_fs = true;
		break;
	case CKPT_SECT_VMAS:
		img->nr_vmas = img->hdr.nr_vmas;
		break;
	case CKPT_SECT_PAGES:
		img->vma_pages[p->vma] += p->nr_pages;
		img->nr_pages_sects++;
		img->nr_pages += p->nr_pages;
		break;
	case CKPT_SECT_END:
		return accept_end(img, fd);
	}
	return 0;
}

struct later_job {
	const struct ckpt_image_later *l;
	size_t nr;
	size_t next;		/* the next to take, atomically */
	size_t bad;		/* the first found damaged, or nr */
	pthread_mutex_t lock;
};

static void *later_work(void *arg)
{
	struct later_job *j = arg;
	size_t i;

	while ((i = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED)) < j->nr) {
		if (ckpt_csum(j->l[i].payload, j->l[i].len) == j->l[i].csum)
			continue;
		pthread_mutex_lock(&j->lock);
		if (i < j->bad)
			j->bad = i;
		pthread_mutex_unlock(&j->lock);
	}
	return NULL;
}

/* Checks the PAGES checksums put off so far; names the first bad one. */
static int check_later(struct ckpt_image *img)
{
	struct later_job j = { .l = img->later, .nr = img->nr_later };
	pthread_t tid[LATER_THREADS - 1];
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	size_t n = 0, i;

	if (!j.nr)
		return 0;
	j.bad = j.nr;
	pthread_mutex_init(&j.lock, NULL);
	if (cpus > LATER_THREADS)
		cpus = LATER_THREADS;
	/* Small images (and the fuzzer's) are not worth a thread. */
	if (img->later_bytes < LATER_MIN_THREADED)
		cpus = 1;
	/* Too few threads is slower, not wrong: a failed create is fine. */
	while ((long)n + 1 < cpus && n + 1 < j.nr &&
	       !pthread_create(&tid[n], NULL, later_work, &j))
		n++;
	later_work(&j);
	for (i = 0; i < n; i++)
		pthread_join(tid[i], NULL);
	pthread_mutex_destroy(&j.lock);
	img->nr_later = img->later_bytes = 0;
	if (j.bad == j.nr)
		return 0;
	/* Not a valid image after all, END or not. */
	img->done = false;
	img->error.section = j.l[j.bad].section;
	img->error.offset = j.l[j.bad].offset;
	img->error.type = CKPT_SECT_PAGES;
	img->error.io = false;
	return fail(img, -EBADMSG, "section checksum mismatch");
}

static int put_off(struct ckpt_image *img, const struct ckpt_sect *s,
		   const void *payload)
{
	struct ckpt_image_later *l;

	if (img->nr_later == img->later_cap) {
		size_t cap = img->later_cap ? 2 * img->later_cap : 256;

		l = realloc(img->later, cap * sizeof(*l));
		if (!l)
			return fail(img, -ENOMEM, "out of memory");
		img->later = l;
		img->later_cap = cap;
	}
	/* read_sect() set error.section and .offset to where this one is. */
	img->later[img->nr_later++] = (struct ckpt_image_later) {
		.payload = payload, .len = s->len, .csum = s->csum,
		.section = img->error.section, .offset = img->error.offset,
	};
	img->later_bytes += s->len;
	if (img->pages_to_engine)
		return 0;	/* until ckpt_image_check_pages(), if ever */
	return img->later_bytes >= LATER_BATCH ? check_later(img) : 0;
}

static int read_sect(struct ckpt_image *img, int fd)
{
	struct ckpt_image_error *e = &img->error;
	size_t len, vmas_size = 0, *sizep = &img->buf_size;
	void *vmas = NULL, **bufp = &img->buf;
	struct ckpt_sect s, copy;
	const char *payload;
	__u64 max;
	ssize_t n;
	int ret;

	e->section = img->st.nr_sections;
	e->type = 0;
	e->offset = img->size;

	n = src_read(img, fd, &s, sizeof(s));
	if (n < 0)
		return fail_io(img, n);
	if ((size_t)n < sizeof(s))
		return fail(img, -EBADMSG, n || img->size ? "truncated image" :
			    "empty input, not a ckpt image");

	/* Name the section in messages only if its header is intact. */
	copy = s;
	copy.hcsum = 0;
	if (ckpt_csum(&copy, sizeof(copy)) == s.hcsum)
		e->type = s.type;

	ret = ckpt_img_next(&img->st, &s);
	if (ret)
		return fail(img, ret, img->st.why);
	max = ckpt_img_max_len(&img->st, s.type);
	if (s.len > max || max > CKPT_IMG_MAX_PAYLOAD)
		return fail(img, -EMSGSIZE, "section longer than its kind allows");

	/* The VMA table stays for PAGES to be checked against, until END. */
	if (s.type == CKPT_SECT_VMAS) {
		bufp = &vmas;
		sizep = &vmas_size;
	}
	len = s.len + (-s.len & 7);
	if (img->map) {
		if (img->map_len - img->map_pos < len) {
			img->map_pos = img->map_len;
			return fail(img, -EBADMSG, "truncated image");
		}
		payload = (const char *)img->map + img->map_pos;
		img->map_pos += len;
		/* VMAS outlives this call (see above): a copy of its own. */
		if (s.type == CKPT_SECT_VMAS) {
			ret = reserve(img, bufp, sizep, len, len);
			if (ret)
				goto out_free;
			payload = memcpy(*bufp, payload, len);
		}
	} else {
		ret = read_payload(img, fd, bufp, sizep, len);
		if (ret)
			goto out_free;
		payload = *bufp;
	}
	for (; len > s.len; len--) {
		if (payload[len - 1]) {
			ret = fail(img, -EBADMSG, "non-zero section padding");
			goto out_free;
		}
	}

	ret = ckpt_img_payload(&img->st, &s, payload);
	if (ret) {
		/* Damage is named as such, checksum first, as without delay. */
		if (s.type == CKPT_SECT_PAGES && img->st.pages_csum_later &&
		    ckpt_csum(payload, s.len) != s.csum) {
			ret = -EBADMSG;
			img->st.why = "section checksum mismatch";
		}
		fail(img, ret, img->st.why);
		goto out_free;
	}
	if (s.type == CKPT_SECT_PAGES && img->st.pages_csum_later) {
		ret = put_off(img, &s, payload);
		if (ret)
			return ret;
	}
	if (s.type == CKPT_SECT_VMAS) {
		img->vmas = vmas;
		vmas = NULL;
	}
	ret = accept(img, fd, &s, payload);
	if (ret)
		return ret;

	if (img->sect_fn)
		img->sect_fn(img->sect_arg, img->nr_sections, &s, img->size,
			     payload);
	img->have = s.type;
	img->nr_sections++;
	len = sizeof(s) + s.len + (-s.len & 7);
	img->size += len;
	img->type_bytes[s.type] += len;
	if (s.type == CKPT_SECT_END)
		img->done = true;
	return 0;

out_free:
	free(vmas);
	return ret;
}

int ckpt_image_check_pages(struct ckpt_image *img)
{
	if (img->error.err)
		return img->error.err;
	return check_later(img) ? img->error.err : 0;
}

int ckpt_image_read(struct ckpt_image *img, int fd, unsigned int flags)
{
	int ret;

	if (img->error.err) {
		errno = -img->error.err;
		return img->error.err;
	}
	if (!img->map_tried) {
		struct stat st;
		off_t pos = lseek(fd, 0, SEEK_CUR);
		void *map;

		img->map_tried = true;
		if (pos >= 0 && !fstat(fd, &st) && S_ISREG(st.st_mode) &&
		    st.st_size > pos) {
			map = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
			if (map != MAP_FAILED) {
				madvise(map, st.st_size, MADV_SEQUENTIAL);
				img->map = map;
				img->map_len = st.st_size;
				img->map_pos = pos;
				img->st.pages_csum_later = 1;
			}
		}
	}
	img->pages_to_engine = flags & CKPT_IMAGE_PAGES_TO_ENGINE;
	ret = 0;
	while (!img->done && !ret) {
		if ((flags & CKPT_IMAGE_TO_VMAS) && img->vmas)
			break;
		ret = read_sect(img, fd);
	}
	/* An earlier damaged section is the one to name: its error wins. */
	if (!img->pages_to_engine && check_later(img))
		ret = img->error.err;
	/* fd is left where reading stopped, as if it had been read. */
	if (img->map)
		lseek(fd, img->map_pos, SEEK_SET);
	return ret;
}
