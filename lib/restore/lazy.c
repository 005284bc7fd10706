// SPDX-License-Identifier: GPL-2.0
/*
 * The restarter's side of a lazy restart (lazy.h): one loop, one thread.
 *
 * Each address space (the restored process, and any child it forks before
 * its memory is all in) has a userfaultfd and a sorted list of the extents
 * of image pages it still lacks. The loop reads every userfaultfd; events
 * are applied to the lists at once (an unmapped or discarded range is no
 * longer wanted, a moved one moves, a fork copies the list) and faults are
 * queued. Queued faults are served first, 16 pages from the touched one,
 * or the zero page where the image has none; then one chunk of 256 pages
 * that nobody asked for yet is brought in, and the loop goes round.
 *
 * The kernel refuses UFFDIO_COPY and UFFDIO_ZEROPAGE with EAGAIN while an
 * event is waiting to be read (the address space is changing): the loop
 * then reads it and tries again, so an event is never applied after a copy
 * it should have prevented. Data goes through a page-aligned buffer: 6.1
 * wants UFFDIO_COPY's source page-aligned, and the image's page data is
 * not. The image was verified before the restart (lazy restart refuses
 * --no-verify).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/ckpt.h>
#include <linux/userfaultfd.h>

#include "err.h"
#include "lazy.h"

#define PG		((uint64_t)CKPT_IMG_PAGE_SIZE)
#define FAULT_PAGES	16	/* brought in from a touched page on */
#define CHUNK_PAGES	32	/* brought in behind at once */

_Static_assert(FAULT_PAGES <= CHUNK_PAGES, "the buffer holds CHUNK_PAGES");

#define FEATURES	(UFFD_FEATURE_EVENT_FORK | UFFD_FEATURE_EVENT_REMAP | \
			 UFFD_FEATURE_EVENT_REMOVE | UFFD_FEATURE_EVENT_UNMAP)

void lazy_init(struct lazy *lz, const struct ckpt_image *img, int image_fd,
	       const struct ckpt_restore_opts *opts)
{
	const char *bg = getenv("CKPT_LAZY_BACKGROUND");

	memset(lz, 0, sizeof(*lz));
	lz->opts = opts;
	lz->img = img;
	lz->image_fd = image_fd;
	/* Tests only: "0" serves touched pages alone, until the process exits. */
	lz->background = !bg || strcmp(bg, "0");
}

static bool grow(void **arr, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 64;
	void *p;

	if (need <= *cap)
		return true;
	while (n < need)
		n *= 2;
	p = realloc(*arr, n * size);
	if (!p)
		return false;
	*arr = p;
	*cap = n;
	return true;
}

void lazy_collect(void *arg, __u64 index, const struct ckpt_sect *s,
		  __u64 offset, const void *payload)
{
	const struct ckpt_img_pages *p = payload;
	struct lazy *lz = arg;

	(void)index;
	if (s->type != CKPT_SECT_PAGES ||
	    !ckpt_img_vma_lazy(&lz->img->vmas[p->vma]))
		return;
	if (!grow((void **)&lz->pages, &lz->cap_pages, lz->nr_pages + 1,
		  sizeof(*lz->pages))) {
		lz->collect_failed = true;
		return;
	}
	lz->pages[lz->nr_pages++] = (struct lazy_extent) {
		.addr = p->addr,
		.nr = p->nr_pages,
		.off = offset + sizeof(*s) + sizeof(*p),
	};
}

int lazy_open(void)
{
	struct uffdio_api api = { .api = UFFD_API, .features = FEATURES };
	int fd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	int err;

	if (fd < 0)
		return -errno;
	if (ioctl(fd, UFFDIO_API, &api)) {
		err = errno;
		close(fd);
		return -err;
	}
	return fd;
}

/* The list's first extent that ends after @addr (n if none). */
static size_t find(const struct lazy_space *sp, uint64_t addr)
{
	size_t lo = 0, hi = sp->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (sp->e[mid].addr + sp->e[mid].nr * PG <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static bool insert(struct lazy_space *sp, size_t at, struct lazy_extent x)
{
	if (!grow((void **)&sp->e, &sp->cap, sp->n + 1, sizeof(*sp->e)))
		return false;
	memmove(&sp->e[at + 1], &sp->e[at], (sp->n - at) * sizeof(*sp->e));
	sp->e[at] = x;
	sp->n++;
	return true;
}

/*
 * No longer wants [start, end): the pages were brought in, or the process
 * unmapped, discarded or moved them. With @out, what was cut is appended
 * there, in order. false when out of memory.
 */
static bool cut(struct lazy_space *sp, uint64_t start, uint64_t end,
		struct lazy_space *out)
{
	size_t i = find(sp, start);

	while (i < sp->n && sp->e[i].addr < end) {
		struct lazy_extent *x = &sp->e[i];
		uint64_t xend = x->addr + x->nr * PG;
		uint64_t s = x->addr > start ? x->addr : start;
		uint64_t t = xend < end ? xend : end;
		struct lazy_extent tail = {
			.addr = t, .nr = (xend - t) / PG,
			.off = x->off + (t - x->addr),
		};

		if (out && !insert(out, out->n, (struct lazy_extent) {
				.addr = s, .nr = (t - s) / PG,
				.off = x->off + (s - x->addr) }))
			return false;
		if (s > x->addr) {
			x->nr = (s - x->addr) / PG;
			i++;
			if (t < xend)
				return insert(sp, i, tail);
		} else if (t < xend) {
			*x = tail;
			i++;
		} else {
			memmove(x, x + 1, (sp->n - i - 1) * sizeof(*x));
			sp->n--;
		}
	}
	return true;
}

/*
 * mremap() moved [from, from + len) to @to: so do its wanted pages. What
 * was wanted at the destination is kept aside: an mremap() that moves and
 * shrinks reports the old length, then unmaps the old range's tail that did
 * not move (untail()).
 */
static bool move(struct lazy_space *sp, uint64_t from, uint64_t to,
		 uint64_t len)
{
	struct lazy_space moved = {}, displaced = {};
	bool ok;
	size_t i;

	free(sp->remap.displaced.e);
	memset(&sp->remap, 0, sizeof(sp->remap));
	ok = cut(sp, from, from + len, &moved) &&
	     cut(sp, to, to + len, &displaced);
	sp->remap.displaced.e = displaced.e;
	sp->remap.displaced.n = displaced.n;
	for (i = 0; ok && i < moved.n; i++) {
		moved.e[i].addr = moved.e[i].addr - from + to;
		ok = insert(sp, find(sp, moved.e[i].addr), moved.e[i]);
	}
	free(moved.e);
	sp->remap.from = from;
	sp->remap.to = to;
	sp->remap.len = len;
	return ok;
}

/*
 * An unmap of [s, e) inside the last move's source, past its start: the
 * tail of a move that shrank. Its pages did not move: what move() put at
 * the matching destination goes, and what was wanted there comes back.
 */
static bool untail(struct lazy_space *sp, uint64_t s, uint64_t e)
{
	struct lazy_remap *r = &sp->remap;
	uint64_t ts, te;
	bool ok = true;
	size_t i;

	if (!r->len || s <= r->from || e > r->from + r->len)
		return true;
	ts = r->to + (s - r->from);
	te = r->to + (e - r->from);
	ok = cut(sp, ts, te, NULL);
	for (i = 0; ok && i < r->displaced.n; i++) {
		struct lazy_extent x = r->displaced.e[i];
		uint64_t xs = x.addr > ts ? x.addr : ts;
		uint64_t xe = x.addr + x.nr * PG < te ? x.addr + x.nr * PG : te;

		if (xs < xe)
			ok = insert(sp, find(sp, xs), (struct lazy_extent) {
					.addr = xs, .nr = (xe - xs) / PG,
					.off = x.off + (xs - x.addr) });
	}
	free(r->displaced.e);
	memset(r, 0, sizeof(*r));
	return ok;
}

static uint64_t page_down(uint64_t a)
{
	return a & ~(PG - 1);
}

static uint64_t page_up(uint64_t a)
{
	return (a + PG - 1) & ~(PG - 1);
}

static int add_space(struct lazy *lz, int uffd, const struct lazy_extent *e,
		     size_t n)
{
	struct lazy_space *sp;

	if (!grow((void **)&lz->sp, &lz->cap_sp, lz->nr_sp + 1,
		  sizeof(*lz->sp)))
		return -ENOMEM;
	sp = &lz->sp[lz->nr_sp];
	memset(sp, 0, sizeof(*sp));
	sp->uffd = uffd;
	if (n) {
		sp->e = malloc(n * sizeof(*e));
		if (!sp->e)
			return -ENOMEM;
		memcpy(sp->e, e, n * sizeof(*e));
		sp->n = sp->cap = n;
	}
	lz->nr_sp++;
	return 0;
}

/* Applies one message of space @si's userfaultfd, or queues its fault. */
static int apply(struct lazy *lz, size_t si, const struct uffd_msg *m)
{
	struct lazy_space *sp = &lz->sp[si];
	bool ok = true;
	int fd;

	switch (m->event) {
	case UFFD_EVENT_PAGEFAULT:
		if (!grow((void **)&lz->faults, &lz->cap_faults,
			  lz->nr_faults + 1, sizeof(*lz->faults)))
			return -ENOMEM;
		lz->faults[lz->nr_faults++] = (struct lazy_fault) {
			.space = si, .addr = page_down(m->arg.pagefault.address),
		};
		return 0;
	case UFFD_EVENT_FORK:
		fd = m->arg.fork.ufd;
		fcntl(fd, F_SETFD, FD_CLOEXEC);
		fcntl(fd, F_SETFL, O_NONBLOCK);
		return add_space(lz, fd, sp->e, sp->n);
	case UFFD_EVENT_REMAP:
		ok = move(sp, m->arg.remap.from, m->arg.remap.to,
			  page_up(m->arg.remap.len));
		break;
	case UFFD_EVENT_REMOVE:
		ok = cut(sp, page_down(m->arg.remove.start),
			 page_up(m->arg.remove.end), NULL);
		break;
	case UFFD_EVENT_UNMAP:
		ok = cut(sp, page_down(m->arg.remove.start),
			 page_up(m->arg.remove.end), NULL) &&
		     untail(sp, page_down(m->arg.remove.start),
			    page_up(m->arg.remove.end));
		break;
	}
	return ok ? 0 : -ENOMEM;
}

static int read_events(struct lazy *lz, size_t si)
{
	struct uffd_msg m[16];
	ssize_t len;
	size_t i;
	int ret;

	for (;;) {
		len = read(lz->sp[si].uffd, m, sizeof(m));
		if (len < 0 && errno == EINTR)
			continue;
		if (len < 0)
			return errno == EAGAIN ? 0 : -errno;
		for (i = 0; i < len / sizeof(m[0]); i++) {
			ret = apply(lz, si, &m[i]);
			if (ret)
				return ret;
		}
	}
}

/*
 * Brings in up to @max wanted pages from @addr on (within one extent),
 * counting them in @count. 0 (also when @addr is no longer wanted),
 * -EAGAIN (read the events first), -ESRCH (the address space is gone), or
 * another -errno that ends the restart.
 */
static int bring(struct lazy *lz, size_t si, uint64_t addr, uint64_t max,
		 uint64_t *count)
{
	struct lazy_space *sp = &lz->sp[si];
	size_t i = find(sp, addr);
	uint64_t n, off, base, end, want;
	ssize_t len;

	if (i == sp->n || sp->e[i].addr > addr)
		return 0;
	n = sp->e[i].nr - (addr - sp->e[i].addr) / PG;
	n = n < max ? n : max;
	off = sp->e[i].off + (addr - sp->e[i].addr);
	len = pread(lz->image_fd, lz->buf, n * PG, off);
	if (len != (ssize_t)(n * PG)) {
		ckpt_notef(lz->opts, "cannot read the image's pages at offset %llu: %s",
			   (unsigned long long)off,
			len < 0 ? strerror(errno) : "the image is shorter than it was");
		return len < 0 ? -errno : -EIO;
	}

	/* The buffer holds [base, end); ENOENT halves the copies' length. */
	base = addr;
	end = addr + n * PG;
	want = n;
	while (addr < end) {
		uint64_t left = (end - addr) / PG, done;
		struct uffdio_copy c = {
			.dst = addr,
			.src = (uintptr_t)lz->buf + (addr - base),
			.len = (want < left ? want : left) * PG,
		};
		int err = ioctl(sp->uffd, UFFDIO_COPY, &c) ? errno : 0;

		done = err ? (c.copy > 0 ? c.copy / PG : 0) : c.len / PG;
		*count += done;
		if (!cut(sp, addr, addr + done * PG, NULL))
			return -ENOMEM;
		addr += done * PG;
		if (!err) {
			want = n;
		} else if (err == EEXIST ||
			   (err == ENOENT && c.len / PG - done == 1)) {
			/*
			 * Already there (so never missing: leave it), or not
			 * mapped (not registered, or unmapped): skip the page.
			 */
			if (!cut(sp, addr, addr + PG, NULL))
				return -ENOMEM;
			addr += PG;
		} else if (err == ENOENT) {
			/* Maybe across two mappings, one of them gone. */
			want = (c.len / PG - done) / 2;
		} else if (err == EAGAIN || err == ESRCH) {
			return -err;
		} else {
			ckpt_notef(lz->opts, "cannot bring %llu pages in at %llx: %s",
				   (unsigned long long)(c.len / PG - done),
				   (unsigned long long)addr, strerror(err));
			return -err;
		}
	}
	return 0;
}

/* Serves one fault; the faulting thread is woken whatever happened. */
static int serve(struct lazy *lz, const struct lazy_fault *f)
{
	struct lazy_space *sp = &lz->sp[f->space];
	struct uffdio_zeropage z = { .range = { .start = f->addr, .len = PG } };
	struct uffdio_range wake = { .start = f->addr, .len = PG };
	size_t i;
	int ret = 0;

	if (sp->uffd < 0 || sp->dead)
		return 0;
	i = find(sp, f->addr);
	if (i < sp->n && sp->e[i].addr <= f->addr) {
		ret = bring(lz, f->space, f->addr, FAULT_PAGES, &lz->on_demand);
	} else if (ioctl(sp->uffd, UFFDIO_ZEROPAGE, &z)) {
		/* EEXIST: brought in meanwhile; ENOENT: unmapped meanwhile. */
		if (errno != EEXIST && errno != ENOENT)
			ret = -errno;
	} else {
		lz->zero++;
	}
	if (ret == -ESRCH) {
		sp->dead = true;
		return 0;
	}
	if (!ret)
		ioctl(sp->uffd, UFFDIO_WAKE, &wake);
	return ret;
}

/* Serves the queued faults in order; stops at the first -EAGAIN. */
static int serve_faults(struct lazy *lz)
{
	size_t i;
	int ret = 0;

	for (i = 0; i < lz->nr_faults && !ret; i++) {
		ret = serve(lz, &lz->faults[i]);
		if (ret == -EAGAIN)
			break;
	}
	memmove(lz->faults, lz->faults + i,
		(lz->nr_faults - i) * sizeof(*lz->faults));
	lz->nr_faults -= i;
	return ret;
}

/* Closes the spaces that need nothing more; how many are left open. */
static size_t retire(struct lazy *lz)
{
	size_t i, open = 0;

	for (i = 0; i < lz->nr_sp; i++) {
		struct lazy_space *sp = &lz->sp[i];

		if (sp->uffd >= 0 && (sp->dead || !sp->n)) {
			/* Closing it wakes its waiting faults: zero pages. */
			close(sp->uffd);
			sp->uffd = -1;
		}
		open += sp->uffd >= 0;
	}
	return open;
}

/* One chunk nobody asked for, from the end of an open space's list. */
static int behind(struct lazy *lz, size_t *rr)
{
	size_t k;

	for (k = 0; k < lz->nr_sp; k++) {
		size_t si = (*rr + k) % lz->nr_sp;
		struct lazy_space *sp = &lz->sp[si];
		struct lazy_extent *x;
		uint64_t n;
		int ret;

		if (sp->uffd < 0 || sp->dead || !sp->n)
			continue;
		*rr = si + 1;
		x = &sp->e[sp->n - 1];
		n = x->nr < CHUNK_PAGES ? x->nr : CHUNK_PAGES;
		ret = bring(lz, si, x->addr + (x->nr - n) * PG, n, &lz->behind);
		if (ret == -ESRCH) {
			sp->dead = true;
			ret = 0;
		}
		return ret;
	}
	return 0;
}

/*
 * The process and the children it forked meanwhile (their memory is not
 * all in either), children first; best effort: /proc/PID/task/TID/children.
 */
static void kill_tree(pid_t pid)
{
	struct dirent *t;
	char path[96];
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	while (d && (t = readdir(d))) {
		FILE *f;
		int child;

		if (t->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.16s/children",
			 pid, t->d_name);
		f = fopen(path, "re");
		while (f && fscanf(f, "%d", &child) == 1)
			kill_tree(child);
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
	kill(pid, SIGKILL);
}

static int wait_any(struct lazy *lz, int pidfd, int idle_ms)
{
	struct pollfd *p = calloc(lz->nr_sp + 1, sizeof(*p));
	size_t i, n = 0;
	int ret;

	if (!p)
		return -ENOMEM;
	for (i = 0; i < lz->nr_sp; i++) {
		if (lz->sp[i].uffd >= 0) {
			p[n].fd = lz->sp[i].uffd;
			p[n++].events = POLLIN;
		}
	}
	p[n].fd = pidfd;
	p[n].events = POLLIN;
	ret = poll(p, n + 1, pidfd >= 0 ? -1 : idle_ms);
	ret = ret < 0 && errno != EINTR ? -errno :
	      pidfd >= 0 && p[n].revents ? 1 : 0;
	free(p);
	return ret;
}

int lazy_serve(struct lazy *lz, int uffd, pid_t pid, struct ckpt_err *err)
{
	struct rlimit rl;
	int pidfd = -1, ret;
	size_t i, rr = 0;

	if (lz->collect_failed)
		ret = -ENOMEM;
	else if (!(lz->buf = aligned_alloc(PG, CHUNK_PAGES * PG)))
		ret = -ENOMEM;
	else
		ret = add_space(lz, uffd, lz->pages, lz->nr_pages);
	if (ret) {
		close(uffd);
		goto out;
	}
	/* A descriptor per child the process forks: as many as may be. */
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (!lz->background) {
		pidfd = syscall(SYS_pidfd_open, pid, 0);
		if (pidfd < 0)
			ret = -errno;
	}

	while (!ret) {
		for (i = 0; i < lz->nr_sp && !ret; i++)
			if (lz->sp[i].uffd >= 0 && !lz->sp[i].dead)
				ret = read_events(lz, i);
		if (!ret)
			ret = serve_faults(lz);
		if (ret == -EAGAIN) {
			ret = 0;
			continue;
		}
		if (ret || !retire(lz))
			break;
		if (lz->background && lz->bg_gate && sem_trywait(lz->bg_gate)) {
			/* Another server's turn behind: faults only, meanwhile. */
			ret = wait_any(lz, -1, 20);
		} else if (lz->background) {
			ret = behind(lz, &rr);
			if (lz->bg_gate)
				sem_post(lz->bg_gate);
			if (ret == -EAGAIN)
				ret = 0;
			if (ret)
				break;
		} else {
			ret = wait_any(lz, pidfd, 100);
			if (ret) {
				/* The process exited (1), or poll() failed. */
				ret = ret > 0 ? 0 : ret;
				break;
			}
		}
	}
out:
	if (ret) {
		ckpt_err_set(err, -ret, "the lazy restart failed (%s): pid %d, whose memory is not all in, is killed, with its children",
			     strerror(-ret), pid);
		kill_tree(pid);
	}
	for (i = 0; i < lz->nr_sp; i++)
		if (lz->sp[i].uffd >= 0)
			close(lz->sp[i].uffd);
	if (pidfd >= 0)
		close(pidfd);
	return ret;
}

void lazy_free(struct lazy *lz)
{
	size_t i;

	for (i = 0; i < lz->nr_sp; i++) {
		free(lz->sp[i].e);
		free(lz->sp[i].remap.displaced.e);
	}
	free(lz->sp);
	free(lz->pages);
	free(lz->faults);
	free(lz->buf);
	memset(lz, 0, sizeof(*lz));
}
