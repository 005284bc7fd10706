/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ckpt restart --lazy: the process runs before its memory is all in. The
 * engine leaves the pages of private writable anonymous mappings out and
 * registers those mappings with a userfaultfd the restarter's child made;
 * the restarter then serves every first touch from the image and brings
 * the other pages in behind, following the process's munmap(), mremap(),
 * madvise(MADV_DONTNEED) and fork() as it goes (Documentation/engine.md,
 * "Lazy restart").
 */
#ifndef _CKPT_RESTORE_LAZY_H
#define _CKPT_RESTORE_LAZY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <semaphore.h>
#include <sys/types.h>

#include "image.h"
#include "restore.h"

/* Pages at @addr whose data is at @off in the image, @nr of them. */
struct lazy_extent {
	uint64_t addr, nr, off;
};

/* The last mremap() move: what was wanted at its destination before. */
struct lazy_remap {
	uint64_t from, to, len;		/* len 0: none */
	struct {
		struct lazy_extent *e;
		size_t n;
	} displaced;
};

/* One address space being filled: the restored process, or a child of it. */
struct lazy_space {
	int uffd;
	struct lazy_extent *e;		/* not yet in, by ascending address */
	size_t n, cap;
	bool dead;			/* its mm is gone */
	struct lazy_remap remap;
};

struct lazy_fault {
	size_t space;
	uint64_t addr;
};

struct lazy {
	const struct ckpt_restore_opts *opts;	/* its note, for what went wrong */
	const struct ckpt_image *img;	/* its VMA table, while collecting */
	int image_fd;
	struct lazy_extent *pages;	/* collected from the PAGES sections */
	size_t nr_pages, cap_pages;
	bool collect_failed;
	bool background;		/* bring in what nobody touched */
	/*
	 * A tree's servers share it (tree.c): a chunk behind only with a
	 * token, so that the servers' faults keep the CPUs they need; NULL
	 * for a single process.
	 */
	sem_t *bg_gate;
	struct lazy_space *sp;
	size_t nr_sp, cap_sp;
	struct lazy_fault *faults;	/* read, not yet served */
	size_t nr_faults, cap_faults;
	void *buf;			/* page-aligned: UFFDIO_COPY's source */
	uint64_t on_demand, behind, zero;	/* pages, for --verbose */
};

void lazy_init(struct lazy *lz, const struct ckpt_image *img, int image_fd,
	       const struct ckpt_restore_opts *opts);

/* A ckpt_image sect_fn: notes where the lazy mappings' pages are. */
void lazy_collect(void *arg, __u64 index, const struct ckpt_sect *s,
		  __u64 offset, const void *payload);

/*
 * A userfaultfd with the API and the events lazy restart needs, made in
 * (and for) the calling process; -errno when this kernel or these
 * privileges do not allow one.
 */
int lazy_open(void);

/*
 * Serves @uffd (the restored process @pid's) until every page is in, or
 * with background off until @pid exits. 0, or -errno with @err saying why
 * (what led to it went to the note first), having killed @pid (it cannot
 * go on without its memory).
 */
int lazy_serve(struct lazy *lz, int uffd, pid_t pid, struct ckpt_err *err);

void lazy_free(struct lazy *lz);

#endif /* _CKPT_RESTORE_LAZY_H */
