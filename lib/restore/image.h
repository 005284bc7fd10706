/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reading a process image in userspace: the stream of sections from a file
 * descriptor (file, pipe or stdin), every one validated by the engine's own
 * image_check.c, gathered into a summary. ckpt inspect reads whole images;
 * ckpt restart reads up to the VMAS section, which is all it needs before
 * the engine takes over.
 */
#ifndef _CKPT_RESTORE_IMAGE_H
#define _CKPT_RESTORE_IMAGE_H

#include <stdbool.h>
#include <stddef.h>

#include "image_check.h"

/* Indices into ckpt_img_thread.gregs (struct user_regs_struct order). */
enum ckpt_greg {
	CKPT_GREG_R15, CKPT_GREG_R14, CKPT_GREG_R13, CKPT_GREG_R12,
	CKPT_GREG_RBP, CKPT_GREG_RBX, CKPT_GREG_R11, CKPT_GREG_R10,
	CKPT_GREG_R9, CKPT_GREG_R8, CKPT_GREG_RAX, CKPT_GREG_RCX,
	CKPT_GREG_RDX, CKPT_GREG_RSI, CKPT_GREG_RDI, CKPT_GREG_ORIG_RAX,
	CKPT_GREG_RIP, CKPT_GREG_CS, CKPT_GREG_EFLAGS, CKPT_GREG_RSP,
	CKPT_GREG_SS, CKPT_GREG_FS_BASE, CKPT_GREG_GS_BASE, CKPT_GREG_DS,
	CKPT_GREG_ES, CKPT_GREG_FS, CKPT_GREG_GS,
	CKPT_GREG_NR,
};

/* Register names in gregs order, for messages. */
extern const char *const ckpt_greg_names[CKPT_GREG_NR];

/* Why reading stopped short. All zero while the image is good so far. */
struct ckpt_image_error {
	int err;		/* -errno */
	const char *why;	/* what is wrong, a static string */
	bool io;		/* read() failed, not the format */
	__u64 section;		/* index of the failing section, from 0 */
	__u32 type;		/* its type; 0: its header is damaged */
	__u64 offset;		/* where its header starts */
};

/* A PAGES section of a mapped image whose checksum is still to be checked. */
struct ckpt_image_later {
	const void *payload;
	__u64 len;
	__u32 csum;
	__u64 section;
	__u64 offset;
};

/*
 * A FILEDATA section: where its bytes are in the image (which must be a
 * file, for pread()), not the bytes themselves: a memfd may hold 1 GiB.
 */
struct ckpt_image_chunk {
	__u32 obj;			/* FILEOBJ index (SYSVDATA: shms index) */
	__u32 len;			/* bytes */
	__u64 offset;			/* in the file */
	__u64 image_offset;		/* of the bytes in the image */
};

/*
 * What has been read. A field is only set once the section holding it has
 * been accepted: hdr when have >= CKPT_SECT_HEADER, proc when have >=
 * CKPT_SECT_PROCESS, and so on; everything once done is set.
 */
struct ckpt_image {
	__u32 have;			/* the last section type accepted */
	bool done;			/* END accepted, nothing after it */
	struct ckpt_img_header hdr;
	struct ckpt_img_process proc;
	struct ckpt_img_tree tree;	/* its place in a tree, if has_tree */
	bool has_tree;
	struct ckpt_img_thread *threads;	/* [nr_threads], no XSAVE */
	__u32 nr_threads;		/* accepted so far, leader first */
	struct ckpt_img_file *files;	/* [nr_files], open files */
	__u32 nr_files;
	struct ckpt_img_fs fs;		/* working directory, if has_fs */
	bool has_fs;
	struct ckpt_img_signals signals;	/* zero if the image has none */
	struct ckpt_img_siginfo *sigqueue;	/* [signals.nr] */
	struct ckpt_img_creds creds;	/* ids, capabilities (CREDS) */
	__u32 *groups;			/* [creds.nr_groups] */
	bool has_creds;
	struct ckpt_img_mac mac;	/* the engine's MAC (MAC) */
	bool has_mac;
	struct ckpt_img_timers timers;	/* POSIX timers; zero if none */
	struct ckpt_img_timer *timer_list;	/* [timers.nr], by ascending id */
	struct ckpt_img_timerfd *timerfds;	/* [nr_timerfds] */
	__u32 nr_timerfds;
	struct ckpt_img_pty *ptys;		/* [nr_ptys] */
	__u32 nr_ptys;
	struct ckpt_img_sched *scheds;	/* [nr_scheds]: none, or a thread's each */
	__u32 nr_scheds;
	struct ckpt_img_epitem *epitems;	/* [nr_epitems] */
	__u32 nr_epitems;
	struct ckpt_img_lock *locks;	/* [nr_locks] */
	__u32 nr_locks;
	struct ckpt_img_inotify *inotify;	/* [nr_inotify] */
	__u32 nr_inotify;
	struct ckpt_img_pipe **pipes;		/* [nr_pipes], each malloc'ed */
	__u32 nr_pipes;
	struct ckpt_img_usock **usocks;		/* [nr_usocks], each malloc'ed */
	__u32 nr_usocks;
	struct ckpt_img_ulisten *ulistens;	/* [nr_ulistens] */
	__u32 nr_ulistens;
	struct ckpt_img_upend **upends;		/* [nr_upends], each malloc'ed */
	__u32 nr_upends;
	struct ckpt_img_uname **unames;		/* [nr_unames], each malloc'ed */
	__u32 nr_unames;
	struct ckpt_img_tcp **tcps;		/* [nr_tcps], each malloc'ed */
	__u32 nr_tcps;
	struct ckpt_img_fileobj *fileobjs;	/* [nr_fileobjs] */
	__u32 nr_fileobjs;
	struct ckpt_image_chunk *chunks;	/* [nr_chunks]: FILEDATA sections */
	__u32 nr_chunks;
	/* A tree root's System V objects, each malloc'ed, by ascending id. */
	struct ckpt_img_sysvshm **shms;
	__u32 nr_shms;
	struct ckpt_img_sysvsem **sems;
	__u32 nr_sems;
	struct ckpt_img_sysvmsg **msgs;
	__u32 nr_msgs;
	/* A member's semaphore adjustments (SEM_UNDO), by ascending set id. */
	struct ckpt_img_semundo **semundos;
	__u32 nr_semundos;
	struct ckpt_img_zombie *zombies;	/* [nr_zombies]: its zombie children */
	__u32 nr_zombies;
	/* SYSVDATA sections: @obj indexes @shms. */
	struct ckpt_image_chunk *shm_chunks;
	__u32 nr_shm_chunks;
	struct ckpt_img_vdso vdso;	/* entry points (no text), if has_vdso */
	bool has_vdso;
	struct ckpt_img_vma *vmas;	/* [nr_vmas], the VMAS payload */
	__u32 nr_vmas;
	__u64 *vma_pages;		/* [nr_vmas], counted in PAGES */
	__u64 nr_pages_sects;		/* PAGES sections */
	__u64 nr_pages;			/* pages in them */
	__u64 nr_sections;		/* sections accepted, END included */
	__u64 size;			/* bytes of the sections accepted */
	__u64 type_bytes[CKPT_SECT_MAX + 1];	/* size by section type */
	struct ckpt_image_error error;

	/*
	 * Optional, set after ckpt_image_init(): called for every section once
	 * it has been accepted, with its index, header, offset in the image
	 * and payload (valid during the call only).
	 */
	void (*sect_fn)(void *arg, __u64 index, const struct ckpt_sect *s,
			__u64 offset, const void *payload);
	void *sect_arg;

	/* private to image.c */
	struct ckpt_img_state st;
	void *buf;
	size_t buf_size;
	const unsigned char *map;	/* a regular file's content, mapped */
	size_t map_len, map_pos;
	bool map_tried;
	bool pages_to_engine;		/* CKPT_IMAGE_PAGES_TO_ENGINE */
	struct ckpt_image_later *later;	/* PAGES checksums to check */
	size_t nr_later, later_cap, later_bytes;
};

/* Read the whole image (default), or stop once VMAS has been accepted. */
#define CKPT_IMAGE_TO_VMAS	(1U << 0)
/*
 * Check everything but the page data of a mapped image's PAGES sections
 * (their headers are checked): for a restart, whose engine checks each
 * PAGES section's checksum as it copies the pages into place, before the
 * process runs. Checking them here too would read the whole image twice.
 * ckpt_image_check_pages() checks them after all.
 */
#define CKPT_IMAGE_PAGES_TO_ENGINE	(1U << 1)

void ckpt_image_init(struct ckpt_image *img);

/*
 * Reads sections from fd until END (then checks that nothing follows it),
 * or with CKPT_IMAGE_TO_VMAS until VMAS, leaving fd just past the VMAS
 * section; calling again without the flag reads the rest. Returns 0, or
 * -errno with img->error saying what and where; once failed, it stays so.
 */
int ckpt_image_read(struct ckpt_image *img, int fd, unsigned int flags);

/*
 * Checks the page data that CKPT_IMAGE_PAGES_TO_ENGINE left unchecked, as
 * ckpt_image_read() would have: 0, or -errno with img->error naming the
 * first damaged section.
 */
int ckpt_image_check_pages(struct ckpt_image *img);

/* Whether SCHED entry @s names CPU @cpu (below CKPT_IMG_CPU_WORDS * 64). */
static inline bool ckpt_sched_cpu(const struct ckpt_img_sched *s,
				  unsigned int cpu)
{
	return s->cpus[cpu / 64] >> (cpu % 64) & 1;
}

/*
 * Frees what ckpt_image_read() allocated; after ckpt_image_init() img can be
 * read into again.
 */
void ckpt_image_free(struct ckpt_image *img);

/*
 * "ADDR:PORT" ("[ADDR]:PORT" for IPv6) of TCP socket @t's own end, or its
 * peer's, into @buf.
 */
void ckpt_image_tcp_end(char *buf, size_t size, const struct ckpt_img_tcp *t,
			bool peer);

/*
 * UNIX socket name @a for people into @buf: its path, or @ and an
 * abstract name's bytes (? for any not printable), or "" for none.
 */
void ckpt_image_uaddr(char *buf, size_t size, const struct ckpt_img_uaddr *a);

#endif /* _CKPT_RESTORE_IMAGE_H */
