/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Validation of ckpt images, shared word for word by the engine (restart)
 * and by userspace (ckpt inspect, ckpt restart, the fuzzer). No kernel or
 * libc dependencies beyond <linux/types.h>, errno values and memcmp/memchr.
 *
 * A reader feeds every section through ckpt_img_next() when its header has
 * been read, and through ckpt_img_payload() when its payload has; both
 * return 0 or a negative errno with st->why naming the problem. Nothing in
 * a section may be used before ckpt_img_payload() accepted it.
 */
#ifndef _CKPT_IMAGE_CHECK_H
#define _CKPT_IMAGE_CHECK_H

#include <linux/types.h>
#include <linux/ckpt_image.h>

/*
 * The section checksum (csum.c): the low 32 bits of XXH64, seed 0, of the
 * payload; ckpt_csum2() of two pieces is that of them concatenated. The
 * streaming calls give the whole 64-bit digest (for tests).
 */
struct ckpt_csum {
	__u64 v[4];
	__u64 total;
	__u8 mem[32];
	__u32 fill;
};

void ckpt_csum_init(struct ckpt_csum *c);
void ckpt_csum_update(struct ckpt_csum *c, const void *buf, unsigned long len);
__u64 ckpt_csum_xxh64(const struct ckpt_csum *c);
__u32 ckpt_csum(const void *buf, unsigned long len);
__u32 ckpt_csum2(const void *a, unsigned long alen, const void *b,
		 unsigned long blen);

/* The most members a TREE section may count (CKPT_TREE_MAX_MEMBERS). */
#define CKPT_IMG_MAX_TREE	1024

/* Largest payload any section may have: the bound for reader buffers. */
#define CKPT_IMG_MAX_PAYLOAD \
	((__u64)CKPT_IMG_MAX_VMAS * sizeof(struct ckpt_img_vma))

struct ckpt_img_state {
	__u32 expect;		/* the section type that may come next */
	__u32 nr_threads;	/* THREAD sections seen */
	__u64 nr_sections;
	__u64 nr_pages;
	__u64 next_addr;	/* PAGES must ascend: lowest next address */
	struct ckpt_img_header hdr;	/* valid once HEADER is accepted */
	const struct ckpt_img_vma *vmas;	/* the VMAS payload: keep it */
	__u32 nr_vmas;
	__u32 cur_vma;		/* mapping the last PAGES belonged to */
	__u64 cur_pages;	/* pages seen for it */
	__u32 pid;		/* from PROCESS */
	__u32 done;		/* END accepted */
	__u32 files_seen;	/* FILES accepted */
	__u32 fs_seen;		/* FS accepted */
	__u32 signals_seen;	/* SIGNALS accepted */
	__u32 epoll_seen;	/* EPOLL accepted */
	__u32 locks_seen;	/* LOCKS accepted */
	__u32 inotify_seen;	/* INOTIFY accepted */
	__u32 nr_pipes;		/* PIPE sections accepted */
	__u32 nr_usocks;	/* USOCK sections accepted */
	__u32 nr_ulistens;	/* ULISTEN sections accepted */
	__u32 nr_upends;	/* UPEND sections accepted */
	__u32 nr_unames;	/* UNAME sections accepted */
	__u32 nr_tcps;		/* TCP sections accepted */
	__u32 pty_seen;		/* PTY accepted */
	__u32 timerfd_seen;	/* TIMERFD accepted */
	__u32 vdso_seen;	/* VDSO accepted */
	__u32 vdso_csum;	/* from PROCESS */
	__u64 vdso_size;	/* from PROCESS */
	__u32 timers_seen;	/* TIMERS accepted */
	__u32 sched_seen;	/* SCHED accepted */
	__u32 creds_seen;	/* CREDS accepted */
	__u32 mac_seen;		/* MAC accepted: VMAS must follow */
	__u32 has_tree;		/* TREE accepted: tree is valid */
	struct ckpt_img_tree tree;	/* a tree member's place */
	__u32 uid, euid, gid, egid;	/* from PROCESS, for CREDS */
	__u32 exe_obj;		/* from PROCESS: FILEOBJ entry + 1 of its exe, or 0 */
	/*
	 * The FILES payload, for EPOLL's items to name its descriptors: the
	 * caller keeps it alive until VMAS.
	 */
	const struct ckpt_img_file *files;
	__u32 nr_files;		/* its entries */
	/* The FILEOBJ payload: the caller keeps it alive until VMAS. */
	const struct ckpt_img_fileobj *fileobjs;
	__u32 nr_fileobjs;	/* FILEOBJ accepted with this many entries */
	__u32 fd_obj;		/* FILEDATA: the object being filled */
	__u64 fd_next;		/* its lowest offset for the next run */
	__u64 fd_bytes;		/* its bytes so far */
	/* System V objects: ids ascend within each kind (SHM, SEM, MSG). */
	__u32 nr_sysv[3];
	__u32 sysv_last[3];	/* the last id of each kind */
	__u32 shm_open;		/* SYSVDATA may follow the last SYSVSHM */
	__u32 nr_zombies;	/* ZOMBIE sections accepted */
	__u32 nr_semundos;	/* SEMUNDO sections accepted */
	__u32 semundo_last;	/* the last one's set id */
	__u64 shm_size, shm_stored;	/* that segment's */
	__u64 shm_next, shm_bytes;	/* its next offset, its bytes so far */
	/*
	 * Set by a reader that checks PAGES checksums itself, later and with
	 * several threads, or leaves them to the engine (cli/image.c):
	 * ckpt_img_payload() then skips them.
	 */
	__u32 pages_csum_later;
	const char *why;
};

void ckpt_img_init(struct ckpt_img_state *st);

/* The largest payload the next section may carry, given what came before. */
__u64 ckpt_img_max_len(const struct ckpt_img_state *st, __u32 type);

int ckpt_img_next(struct ckpt_img_state *st, const struct ckpt_sect *s);
int ckpt_img_payload(struct ckpt_img_state *st, const struct ckpt_sect *s,
		     const void *payload);
/*
 * For a reader that places a PAGES section's data before it has all of it
 * (the engine at restart): checks the section's struct ckpt_img_pages
 * against its length and the VMA table, and accounts for it, as
 * ckpt_img_payload() would; the caller then verifies the checksum over it
 * and the data, and fails the image if it does not match.
 */
int ckpt_img_pages_hdr(struct ckpt_img_state *st, const struct ckpt_sect *s,
		       const struct ckpt_img_pages *p);

/*
 * Whether a lazy restart leaves a mapping's pages to the restarter, which
 * fills them on first touch through a userfaultfd: private, anonymous and
 * writable (heap, stacks, anonymous mmaps), the mappings userfaultfd's
 * missing mode and UFFDIO_COPY serve on every supported kernel.
 */
static inline int ckpt_img_vma_lazy(const struct ckpt_img_vma *v)
{
	return !(v->flags & (CKPT_VMA_SHARED | CKPT_VMA_FILE | CKPT_VMA_VDSO |
			     CKPT_VMA_VVAR)) && (v->prot & 2 /* PROT_WRITE */);
}

/*
 * FILES entry of descriptor @fd among @n accepted ones (ascending by
 * descriptor), or NULL.
 */
const struct ckpt_img_file *ckpt_img_file_at(const struct ckpt_img_file *files,
					     __u64 n, __u64 fd);

/* Fills in a section header for a payload (for writers). */
void ckpt_img_sect(struct ckpt_sect *s, __u32 type, const void *payload,
		   __u64 len);

/* Name of a section type, for messages. */
const char *ckpt_img_sect_name(__u32 type);

#endif /* _CKPT_IMAGE_CHECK_H */
