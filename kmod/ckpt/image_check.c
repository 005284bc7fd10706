// SPDX-License-Identifier: GPL-2.0
/*
 * ckpt image validation, built into the engine and into userspace tools
 * (see image_check.h). Everything an image says is bounded here before any
 * reader acts on it: section order and counts, lengths, checksums, address
 * ranges, flags and strings.
 */
#ifdef __KERNEL__
#include <linux/errno.h>
#include <linux/string.h>
#else
#include <errno.h>
#include <string.h>
#endif

#include "image_check.h"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

#define FAIL(st, err, msg) ((st)->why = (msg), -(err))

static const char *const sect_names[] = {
	[CKPT_SECT_HEADER]	= "HEADER",
	[CKPT_SECT_PROCESS]	= "PROCESS",
	[CKPT_SECT_THREAD]	= "THREAD",
	[CKPT_SECT_VMAS]	= "VMAS",
	[CKPT_SECT_PAGES]	= "PAGES",
	[CKPT_SECT_END]		= "END",
	[CKPT_SECT_FILES]	= "FILES",
	[CKPT_SECT_FS]		= "FS",
	[CKPT_SECT_SIGNALS]	= "SIGNALS",
	[CKPT_SECT_EPOLL]	= "EPOLL",
	[CKPT_SECT_PIPE]	= "PIPE",
	[CKPT_SECT_USOCK]	= "USOCK",
	[CKPT_SECT_ULISTEN]	= "ULISTEN",
	[CKPT_SECT_UNAME]	= "UNAME",
	[CKPT_SECT_UPEND]	= "UPEND",
	[CKPT_SECT_TIMERFD]	= "TIMERFD",
	[CKPT_SECT_FILEOBJ]	= "FILEOBJ",
	[CKPT_SECT_FILEDATA]	= "FILEDATA",
	[CKPT_SECT_VDSO]	= "VDSO",
	[CKPT_SECT_TIMERS]	= "TIMERS",
	[CKPT_SECT_SCHED]	= "SCHED",
	[CKPT_SECT_LOCKS]	= "LOCKS",
	[CKPT_SECT_INOTIFY]	= "INOTIFY",
	[CKPT_SECT_CREDS]	= "CREDS",
	[CKPT_SECT_MAC]		= "MAC",
	[CKPT_SECT_TREE]	= "TREE",
	[CKPT_SECT_SYSVSHM]	= "SYSVSHM",
	[CKPT_SECT_SYSVDATA]	= "SYSVDATA",
	[CKPT_SECT_SYSVSEM]	= "SYSVSEM",
	[CKPT_SECT_SYSVMSG]	= "SYSVMSG",
	[CKPT_SECT_ZOMBIE]	= "ZOMBIE",
	[CKPT_SECT_SEMUNDO]	= "SEMUNDO",
	[CKPT_SECT_TCP]		= "TCP",
	[CKPT_SECT_PTY]		= "PTY",
};

const char *ckpt_img_sect_name(__u32 type)
{
	if (type < ARRAY_SIZE(sect_names) &&
	    sect_names[type])
		return sect_names[type];
	return "unknown";
}

void ckpt_img_init(struct ckpt_img_state *st)
{
	memset(st, 0, sizeof(*st));
	st->expect = CKPT_SECT_HEADER;
}

void ckpt_img_sect(struct ckpt_sect *s, __u32 type, const void *payload,
		   __u64 len)
{
	memset(s, 0, sizeof(*s));
	s->type = type;
	s->len = len;
	s->csum = ckpt_csum(payload, len);
	s->hcsum = ckpt_csum(s, sizeof(*s));
}

/* Whether any of @len bytes at @p is not zero. */
static int memchr_inv8(const void *p, unsigned long len)
{
	const unsigned char *c = p;

	while (len--)
		if (*c++)
			return 1;
	return 0;
}

static int str_ok(const char *s, unsigned long size)
{
	return memchr(s, '\0', size) != NULL;
}

__u64 ckpt_img_max_len(const struct ckpt_img_state *st, __u32 type)
{
	switch (type) {
	case CKPT_SECT_HEADER:
		return sizeof(struct ckpt_img_header);
	case CKPT_SECT_PROCESS:
		return sizeof(struct ckpt_img_process);
	case CKPT_SECT_THREAD:
		return sizeof(struct ckpt_img_thread) + st->hdr.xstate_size;
	case CKPT_SECT_VMAS:
		return (__u64)st->hdr.nr_vmas * sizeof(struct ckpt_img_vma);
	case CKPT_SECT_PAGES:
		return sizeof(struct ckpt_img_pages) +
		       (__u64)CKPT_IMG_MAX_RUN_PAGES * CKPT_IMG_PAGE_SIZE;
	case CKPT_SECT_END:
		return sizeof(struct ckpt_img_end);
	case CKPT_SECT_FILES:
		return (__u64)CKPT_IMG_MAX_FILES * sizeof(struct ckpt_img_file);
	case CKPT_SECT_FS:
		return sizeof(struct ckpt_img_fs);
	case CKPT_SECT_EPOLL:
		return (__u64)CKPT_IMG_MAX_EPITEMS * sizeof(struct ckpt_img_epitem);
	case CKPT_SECT_PIPE:
		return sizeof(struct ckpt_img_pipe) + CKPT_IMG_MAX_PIPE;
	case CKPT_SECT_USOCK:
		return sizeof(struct ckpt_img_usock) + CKPT_IMG_MAX_USOCK;
	case CKPT_SECT_TCP:
		return sizeof(struct ckpt_img_tcp) + CKPT_IMG_MAX_TCPQ;
	case CKPT_SECT_PTY:
		return (__u64)CKPT_IMG_MAX_FILES * sizeof(struct ckpt_img_pty);
	case CKPT_SECT_ULISTEN:
		return sizeof(struct ckpt_img_ulisten);
	case CKPT_SECT_UPEND:
		return sizeof(struct ckpt_img_upend) + CKPT_IMG_MAX_USOCK;
	case CKPT_SECT_UNAME:
		return sizeof(struct ckpt_img_uname) + CKPT_IMG_MAX_USOCK;
	case CKPT_SECT_TIMERFD:
		return (__u64)CKPT_IMG_MAX_FILES * sizeof(struct ckpt_img_timerfd);
	case CKPT_SECT_FILEOBJ:
		return (__u64)CKPT_IMG_MAX_FILEOBJS * sizeof(struct ckpt_img_fileobj);
	case CKPT_SECT_FILEDATA:
		return sizeof(struct ckpt_img_filedata) + CKPT_IMG_MAX_FILECHUNK;
	case CKPT_SECT_VDSO:
		return sizeof(struct ckpt_img_vdso) + st->vdso_size;
	case CKPT_SECT_SIGNALS:
		return sizeof(struct ckpt_img_signals) +
		       (__u64)CKPT_IMG_MAX_SIGQUEUE * sizeof(struct ckpt_img_siginfo);
	case CKPT_SECT_SCHED:
		return (__u64)st->hdr.nr_threads * sizeof(struct ckpt_img_sched);
	case CKPT_SECT_LOCKS:
		return (__u64)CKPT_IMG_MAX_LOCKS * sizeof(struct ckpt_img_lock);
	case CKPT_SECT_INOTIFY:
		return (__u64)CKPT_IMG_MAX_INOTIFY * sizeof(struct ckpt_img_inotify);
	case CKPT_SECT_TIMERS:
		return sizeof(struct ckpt_img_timers) +
		       (__u64)CKPT_IMG_MAX_TIMERS * sizeof(struct ckpt_img_timer);
	case CKPT_SECT_CREDS:
		return sizeof(struct ckpt_img_creds) +
		       (__u64)CKPT_IMG_MAX_GROUPS * sizeof(__u32);
	case CKPT_SECT_MAC:
		return sizeof(struct ckpt_img_mac);
	case CKPT_SECT_TREE:
		return sizeof(struct ckpt_img_tree);
	case CKPT_SECT_SYSVSHM:
		return sizeof(struct ckpt_img_sysvshm);
	case CKPT_SECT_SYSVDATA:
		return sizeof(struct ckpt_img_sysvdata) + CKPT_IMG_MAX_FILECHUNK;
	case CKPT_SECT_SYSVSEM:
		return sizeof(struct ckpt_img_sysvsem) +
		       (__u64)CKPT_IMG_MAX_SEMS * sizeof(__u32);
	case CKPT_SECT_ZOMBIE:
		return sizeof(struct ckpt_img_zombie);
	case CKPT_SECT_SEMUNDO:
		return sizeof(struct ckpt_img_semundo) +
		       (__u64)CKPT_IMG_MAX_SEMS * sizeof(__s16);
	case CKPT_SECT_SYSVMSG:
		return sizeof(struct ckpt_img_sysvmsg) + CKPT_IMG_MAX_MSGBYTES +
		       (__u64)CKPT_IMG_MAX_MSGS *
		       (sizeof(struct ckpt_img_sysvmsg_one) + 7);
	}
	return 0;
}

int ckpt_img_next(struct ckpt_img_state *st, const struct ckpt_sect *s)
{
	struct ckpt_sect copy = *s;
	__u64 max;

	if (st->done)
		return FAIL(st, EBADMSG, "data after the END section");
	copy.hcsum = 0;
	if (ckpt_csum(&copy, sizeof(copy)) != s->hcsum)
		return FAIL(st, EBADMSG, "section header checksum mismatch");
	if (s->flags)
		return FAIL(st, EINVAL, "section flags set");

	switch (st->expect) {
	case CKPT_SECT_VMAS:
		/* The MAC covers the VMAS section after it: nothing between. */
		if (st->mac_seen) {
			if (s->type != CKPT_SECT_VMAS)
				return FAIL(st, EBADMSG, "a section other than VMAS after MAC");
			break;
		}
		if (s->type == CKPT_SECT_MAC && st->creds_seen)
			break;
		/* One FILES and one FS section may come before the VMAS. */
		if (s->type == CKPT_SECT_FILES && !st->files_seen)
			break;
		if (s->type == CKPT_SECT_FS && !st->fs_seen)
			break;
		if (s->type == CKPT_SECT_SIGNALS && !st->signals_seen)
			break;
		/* EPOLL's items name FILES entries: FILES first. */
		if (s->type == CKPT_SECT_EPOLL && !st->epoll_seen &&
		    st->files_seen)
			break;
		/* So do LOCKS's. */
		if (s->type == CKPT_SECT_LOCKS && !st->locks_seen &&
		    st->files_seen)
			break;
		if (s->type == CKPT_SECT_INOTIFY && !st->inotify_seen &&
		    st->files_seen)
			break;
		if (s->type == CKPT_SECT_PIPE && st->nr_pipes < CKPT_IMG_MAX_FILES)
			break;
		if (s->type == CKPT_SECT_USOCK && st->nr_usocks < CKPT_IMG_MAX_FILES)
			break;
		if (s->type == CKPT_SECT_TCP && st->nr_tcps < CKPT_IMG_MAX_FILES)
			break;
		if (s->type == CKPT_SECT_ULISTEN &&
		    st->nr_ulistens < CKPT_IMG_MAX_FILES)
			break;
		if (s->type == CKPT_SECT_UPEND &&
		    st->nr_upends < CKPT_IMG_MAX_FILES)
			break;
		if (s->type == CKPT_SECT_UNAME &&
		    st->nr_unames < CKPT_IMG_MAX_FILES)
			break;
		if (s->type == CKPT_SECT_TIMERFD && !st->timerfd_seen)
			break;
		if (s->type == CKPT_SECT_PTY && !st->pty_seen && st->has_tree)
			break;
		if (s->type == CKPT_SECT_VDSO && !st->vdso_seen)
			break;
		if (s->type == CKPT_SECT_TIMERS && !st->timers_seen)
			break;
		if (s->type == CKPT_SECT_SCHED && !st->sched_seen)
			break;
		if (s->type == CKPT_SECT_CREDS && !st->creds_seen)
			break;
		/* FILEOBJ first: FILES entries and FILEDATA name its entries. */
		if (s->type == CKPT_SECT_FILEOBJ && !st->nr_fileobjs &&
		    !st->files_seen)
			break;
		if (s->type == CKPT_SECT_FILEDATA && st->nr_fileobjs)
			break;
		/* A tree's root: its System V objects, a segment's bytes after it. */
		if (s->type == CKPT_SECT_SYSVDATA && st->shm_open)
			break;
		if ((s->type == CKPT_SECT_SYSVSHM || s->type == CKPT_SECT_SYSVSEM ||
		     s->type == CKPT_SECT_SYSVMSG) && st->has_tree)
			break;
		if (s->type == CKPT_SECT_ZOMBIE && st->has_tree &&
		    st->nr_zombies < CKPT_IMG_MAX_ZOMBIES)
			break;
		if (s->type == CKPT_SECT_SEMUNDO && st->has_tree &&
		    st->nr_semundos < CKPT_IMG_MAX_SYSV)
			break;
		if (s->type != st->expect)
			return FAIL(st, EBADMSG, "sections out of order");
		/* Without its credentials a process cannot be restarted safely. */
		if (!st->creds_seen)
			return FAIL(st, EBADMSG, "no CREDS section before VMAS");
		break;
	case CKPT_SECT_HEADER:
	case CKPT_SECT_PROCESS:
		if (s->type != st->expect)
			return FAIL(st, EBADMSG, "sections out of order");
		break;
	case CKPT_SECT_THREAD:
		/* A tree's member: TREE right after PROCESS, once. */
		if (s->type == CKPT_SECT_TREE && !st->nr_threads &&
		    !st->has_tree && st->nr_sections == 2)
			break;
		if (s->type != CKPT_SECT_THREAD)
			return FAIL(st, EBADMSG, "fewer THREAD sections than threads");
		break;
	case CKPT_SECT_PAGES:
		if (s->type != CKPT_SECT_PAGES && s->type != CKPT_SECT_END)
			return FAIL(st, EBADMSG, "unexpected section after VMAS");
		break;
	}

	/* A segment's bytes end where another section starts. */
	if (st->shm_open && s->type != CKPT_SECT_SYSVDATA) {
		if (st->shm_bytes != st->shm_stored)
			return FAIL(st, EBADMSG, "SYSVDATA does not hold what SYSVSHM says it stores");
		st->shm_open = 0;
	}
	max = ckpt_img_max_len(st, s->type);
	if (s->len > max)
		return FAIL(st, EMSGSIZE, "section longer than its kind allows");
	if (s->type == CKPT_SECT_FILES &&
	    (!s->len || s->len % sizeof(struct ckpt_img_file)))
		return FAIL(st, EBADMSG, "FILES length is not a whole number of files");
	if (s->type == CKPT_SECT_SIGNALS &&
	    (s->len < sizeof(struct ckpt_img_signals) ||
	     (s->len - sizeof(struct ckpt_img_signals)) %
	     sizeof(struct ckpt_img_siginfo)))
		return FAIL(st, EBADMSG, "SIGNALS length is not a whole number of signals");
	if (s->type == CKPT_SECT_TIMERS &&
	    (s->len < sizeof(struct ckpt_img_timers) ||
	     (s->len - sizeof(struct ckpt_img_timers)) %
	     sizeof(struct ckpt_img_timer)))
		return FAIL(st, EBADMSG, "TIMERS length is not a whole number of timers");
	if (s->type == CKPT_SECT_CREDS &&
	    (s->len < sizeof(struct ckpt_img_creds) ||
	     (s->len - sizeof(struct ckpt_img_creds)) % sizeof(__u32)))
		return FAIL(st, EBADMSG, "CREDS length is not a whole number of groups");
	if (s->type == CKPT_SECT_TIMERFD &&
	    (!s->len || s->len % sizeof(struct ckpt_img_timerfd)))
		return FAIL(st, EBADMSG, "TIMERFD length is not a whole number of timers");
	if (s->type == CKPT_SECT_PTY &&
	    (!s->len || s->len % sizeof(struct ckpt_img_pty)))
		return FAIL(st, EBADMSG, "PTY length is not a whole number of pseudo-terminals");
	if (s->type == CKPT_SECT_PIPE && s->len < sizeof(struct ckpt_img_pipe))
		return FAIL(st, EBADMSG, "PIPE section too short");
	if (s->type == CKPT_SECT_USOCK && s->len < sizeof(struct ckpt_img_usock))
		return FAIL(st, EBADMSG, "USOCK section too short");
	if (s->type == CKPT_SECT_TCP && s->len < sizeof(struct ckpt_img_tcp))
		return FAIL(st, EBADMSG, "TCP section too short");
	if (s->type == CKPT_SECT_UPEND && s->len < sizeof(struct ckpt_img_upend))
		return FAIL(st, EBADMSG, "UPEND section too short");
	if (s->type == CKPT_SECT_UNAME && s->len < sizeof(struct ckpt_img_uname))
		return FAIL(st, EBADMSG, "UNAME section too short");
	if (s->type == CKPT_SECT_EPOLL &&
	    (!s->len || s->len % sizeof(struct ckpt_img_epitem)))
		return FAIL(st, EBADMSG, "EPOLL length is not a whole number of items");
	if (s->type == CKPT_SECT_LOCKS &&
	    (!s->len || s->len % sizeof(struct ckpt_img_lock)))
		return FAIL(st, EBADMSG, "LOCKS length is not a whole number of locks");
	if (s->type == CKPT_SECT_INOTIFY &&
	    (!s->len || s->len % sizeof(struct ckpt_img_inotify)))
		return FAIL(st, EBADMSG, "INOTIFY length is not a whole number of watches");
	if (s->type == CKPT_SECT_FILEOBJ &&
	    (!s->len || s->len % sizeof(struct ckpt_img_fileobj)))
		return FAIL(st, EBADMSG, "FILEOBJ length is not a whole number of objects");
	if (s->type == CKPT_SECT_FILEDATA &&
	    s->len <= sizeof(struct ckpt_img_filedata))
		return FAIL(st, EBADMSG, "FILEDATA section too short");
	if (s->type == CKPT_SECT_SYSVDATA &&
	    s->len <= sizeof(struct ckpt_img_sysvdata))
		return FAIL(st, EBADMSG, "SYSVDATA section too short");
	if ((s->type == CKPT_SECT_SYSVSEM &&
	     s->len < sizeof(struct ckpt_img_sysvsem)) ||
	    (s->type == CKPT_SECT_SYSVMSG &&
	     s->len < sizeof(struct ckpt_img_sysvmsg)) ||
	    (s->type == CKPT_SECT_SEMUNDO &&
	     s->len < sizeof(struct ckpt_img_semundo)))
		return FAIL(st, EBADMSG, "System V section too short");
	if (s->type != CKPT_SECT_PAGES && s->type != CKPT_SECT_THREAD &&
	    s->type != CKPT_SECT_FILES && s->type != CKPT_SECT_SIGNALS &&
	    s->type != CKPT_SECT_EPOLL && s->type != CKPT_SECT_LOCKS &&
	    s->type != CKPT_SECT_INOTIFY && s->type != CKPT_SECT_PIPE &&
	    s->type != CKPT_SECT_USOCK && s->type != CKPT_SECT_UPEND &&
	    s->type != CKPT_SECT_UNAME &&
	    s->type != CKPT_SECT_TCP && s->type != CKPT_SECT_PTY &&
	    s->type != CKPT_SECT_TIMERFD && s->type != CKPT_SECT_FILEOBJ &&
	    s->type != CKPT_SECT_FILEDATA && s->type != CKPT_SECT_TIMERS &&
	    s->type != CKPT_SECT_CREDS && s->type != CKPT_SECT_SYSVDATA &&
	    s->type != CKPT_SECT_SYSVSEM && s->type != CKPT_SECT_SYSVMSG &&
	    s->type != CKPT_SECT_SEMUNDO && s->len != max)
		return FAIL(st, EBADMSG, "section length does not match its kind");
	return 0;
}

static int check_header(struct ckpt_img_state *st,
			const struct ckpt_img_header *h)
{
	if (h->magic != CKPT_IMG_MAGIC)
		return FAIL(st, EBADMSG, "not a ckpt image (bad magic)");
	if (h->version != CKPT_IMG_VERSION)
		return FAIL(st, EPROTO, "unsupported image version");
	if (h->arch != CKPT_IMG_ARCH_X86_64)
		return FAIL(st, ENOEXEC, "image is for another architecture");
	if (h->page_size != CKPT_IMG_PAGE_SIZE)
		return FAIL(st, ENOEXEC, "image has another page size");
	if (!h->nr_threads || h->nr_threads > CKPT_IMG_MAX_THREADS)
		return FAIL(st, EBADMSG, "thread count out of bounds");
	if (!h->nr_vmas || h->nr_vmas > CKPT_IMG_MAX_VMAS)
		return FAIL(st, EBADMSG, "mapping count out of bounds");
	if (h->xstate_size < 576 || h->xstate_size > CKPT_IMG_MAX_XSTATE ||
	    h->xstate_size % 8)
		return FAIL(st, EBADMSG, "XSAVE state size out of bounds");
	if (h->reserved || memchr_inv8(h->pad, sizeof(h->pad)))
		return FAIL(st, EINVAL, "reserved header field set");
	if (!str_ok(h->kernel, sizeof(h->kernel)) ||
	    !str_ok(h->boot_id, sizeof(h->boot_id)))
		return FAIL(st, EBADMSG, "kernel release or boot id not terminated");
	return 0;
}

/*
 * The saved auxiliary vector (/proc/PID/auxv, core dumps): (type, value)
 * pairs ended by an AT_NULL type, which readers of the kernel's copy look
 * for and do not otherwise bound. Whether the pairs up to it fit the
 * running kernel's mm->saved_auxv is the engine's to check (mm.c).
 */
static int check_auxv(struct ckpt_img_state *st, const __u64 *auxv)
{
	unsigned int i;

	for (i = 0; i + 1 < CKPT_IMG_AUXV_WORDS; i += 2)
		if (!auxv[i])
			return 0;
	return FAIL(st, EBADMSG, "auxv not terminated (no AT_NULL entry)");
}

/*
 * The mm fields as prctl(PR_SET_MM_MAP) takes them (kernel/sys.c,
 * validate_prctl_map_addr()): every address in user space, and the
 * ranges in order. What depends on the running kernel and the restarter
 * (TASK_SIZE, mmap_min_addr, RLIMIT_DATA) is the engine's (mm.c).
 */
static int check_process(struct ckpt_img_state *st,
			 const struct ckpt_img_process *p)
{
	const __u64 *range[] = {
		&p->start_code, &p->end_code, &p->start_data, &p->end_data,
		&p->start_brk, &p->brk, &p->start_stack, &p->arg_start,
		&p->arg_end, &p->env_start, &p->env_end,
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(range); i++)
		if (*range[i] >= CKPT_IMG_ADDR_MAX)
			return FAIL(st, EBADMSG, "process address out of user space");
	if (p->start_code > p->end_code)
		return FAIL(st, EBADMSG, "process code inverted (end_code below start_code)");
	if (p->start_data > p->end_data)
		return FAIL(st, EBADMSG, "process data inverted (end_data below start_data)");
	if (p->start_brk > p->brk)
		return FAIL(st, EBADMSG, "process heap inverted (brk below start_brk)");
	if (p->arg_start > p->arg_end)
		return FAIL(st, EBADMSG, "process arguments inverted (arg_end below arg_start)");
	if (p->env_start > p->env_end)
		return FAIL(st, EBADMSG, "process environment inverted (env_end below env_start)");
	if (check_auxv(st, p->auxv))
		return -EBADMSG;
	if (p->vdso % CKPT_IMG_PAGE_SIZE || p->vdso_size % CKPT_IMG_PAGE_SIZE ||
	    p->vvar % CKPT_IMG_PAGE_SIZE || p->vvar_size % CKPT_IMG_PAGE_SIZE ||
	    !p->vdso || !p->vdso_size || p->vdso_size > (1 << 20) ||
	    p->vvar_size > (1 << 20) || p->vdso > CKPT_IMG_ADDR_MAX ||
	    p->vvar > CKPT_IMG_ADDR_MAX || p->vvar_size > p->vdso ||
	    p->vvar + p->vvar_size != p->vdso ||
	    p->vdso + p->vdso_size > CKPT_IMG_ADDR_MAX)
		return FAIL(st, EBADMSG, "vdso/vvar placement out of bounds");
	if (!str_ok(p->comm, sizeof(p->comm)) || !str_ok(p->exe, sizeof(p->exe)))
		return FAIL(st, EBADMSG, "process strings not terminated");
	if (p->exe[0] != '/')
		return FAIL(st, EBADMSG, "executable path not absolute");
	if (p->exe_dev == CKPT_IMG_EXE_OBJ && p->exe_ino >= CKPT_IMG_MAX_FILEOBJS)
		return FAIL(st, EBADMSG, "executable object out of bounds");
	if (p->umask & ~0777)
		return FAIL(st, EBADMSG, "umask out of bounds");
	return 0;
}

/*
 * SCHED: a policy the engine restores (not SCHED_DEADLINE), a real-time
 * priority for a real-time one only, and some CPU unless any will do.
 */
static int check_sched(struct ckpt_img_state *st,
		       const struct ckpt_img_sched *s, __u32 n)
{
	__u64 any;
	__u32 i, k;

	for (i = 0; i < n; i++, s++) {
		int rt = s->policy == 1 || s->policy == 2;	/* FIFO, RR */

		if (s->policy > 5 || s->policy == 4 ||
		    (rt ? s->rt_priority < 1 || s->rt_priority > 99 :
			  s->rt_priority))
			return FAIL(st, EBADMSG, "thread scheduling policy out of range");
		if (s->flags & ~__CKPT_SCHED_ALL)
			return FAIL(st, EBADMSG, "unknown thread scheduling flags");
		/* No class but RT (1), BE (2), IDLE (3); a level below 8. */
		if (s->ioprio & ~CKPT_IMG_IOPRIO_MASK ||
		    (!(s->ioprio >> 13) && s->ioprio))
			return FAIL(st, EBADMSG, "thread I/O priority out of range");
		for (k = 0, any = 0; k < CKPT_IMG_CPU_WORDS; k++)
			any |= s->cpus[k];
		if (!any != !!(s->flags & CKPT_SCHED_ALL_CPUS))
			return FAIL(st, EBADMSG, "thread CPU set empty, or given with any CPU");
	}
	return 0;
}

/*
 * CREDS: ids that are ids ((uid_t)-1 is none), the four PROCESS names too;
 * groups ascending (the kernel keeps them sorted; repeats are allowed);
 * capability sets as the kernel keeps them consistent.
 */
static int check_creds(struct ckpt_img_state *st,
		       const struct ckpt_img_creds *c, __u64 len)
{
	const __u32 ids[] = {
		c->uid, c->euid, c->suid, c->fsuid,
		c->gid, c->egid, c->sgid, c->fsgid,
	};
	const __u32 *g = (const void *)(c + 1);
	__u64 i;

	if (c->nr_groups != (len - sizeof(*c)) / sizeof(*g))
		return FAIL(st, EBADMSG, "CREDS group count does not match its length");
	for (i = 0; i < ARRAY_SIZE(ids); i++)
		if (ids[i] == CKPT_IMG_NO_ID)
			return FAIL(st, EBADMSG, "user or group id out of bounds");
	if (c->uid != st->uid || c->euid != st->euid || c->gid != st->gid ||
	    c->egid != st->egid)
		return FAIL(st, EBADMSG, "CREDS and PROCESS disagree on the ids");
	for (i = 0; i < c->nr_groups; i++)
		if (g[i] == CKPT_IMG_NO_ID || (i && g[i] < g[i - 1]))
			return FAIL(st, EBADMSG, "supplementary groups out of bounds or not ascending");
	if (c->cap_effective & ~c->cap_permitted ||
	    c->cap_ambient & ~(c->cap_permitted & c->cap_inheritable))
		return FAIL(st, EBADMSG, "capability sets inconsistent");
	if (c->dumpable > 2)
		return FAIL(st, EBADMSG, "dumpable out of bounds");
	if (c->flags & ~__CKPT_CREDS_ALL || c->pad)
		return FAIL(st, EINVAL, "unknown credential flags");
	return 0;
}

/*
 * TREE: a member's place in its tree; the members themselves are the
 * restarter's to match up (index and parent are only bounded here).
 */
static int check_tree(struct ckpt_img_state *st, const struct ckpt_img_tree *t)
{
	if (t->flags & ~__CKPT_TREE_F_ALL || t->reserved1 || t->reserved2)
		return FAIL(st, EINVAL, "reserved TREE field set");
	if (t->ctty >= (1U << 20) || (t->ctty && !(t->flags & CKPT_TREE_CTTY)))
		return FAIL(st, EBADMSG, "TREE: a controlling terminal's number out of bounds or without its flag");
	if (!t->nr_members || t->nr_members > CKPT_IMG_MAX_TREE ||
	    t->index >= t->nr_members)
		return FAIL(st, EBADMSG, "TREE index or member count out of bounds");
	if ((t->flags & CKPT_TREE_ROOT) && !t->index)
		return FAIL(st, EBADMSG, "TREE: member 0 marked as another root");
	if ((t->parent == CKPT_TREE_NO_PARENT) !=
	    (!t->index || (t->flags & CKPT_TREE_ROOT)))
		return FAIL(st, EBADMSG, "TREE: the roots and only the roots have no parent");
	if (t->parent != CKPT_TREE_NO_PARENT &&
	    (t->parent >= t->nr_members || t->parent == t->index))
		return FAIL(st, EBADMSG, "TREE parent out of bounds");
	return 0;
}

/* The VDSO section: its text is PROCESS's vdso, its entry points inside. */
static int check_vdso(struct ckpt_img_state *st, const struct ckpt_img_vdso *v)
{
	unsigned int i;

	if (v->nr_syms > CKPT_IMG_VDSO_SYMS || v->pad)
		return FAIL(st, EBADMSG, "VDSO symbol count out of bounds");
	for (i = 0; i < CKPT_IMG_VDSO_SYMS; i++) {
		const struct ckpt_img_vdso_sym *y = &v->syms[i];

		if (!str_ok(y->name, sizeof(y->name)))
			return FAIL(st, EBADMSG, "VDSO symbol name not terminated");
		if (i >= v->nr_syms ? y->name[0] || y->offset :
		    !y->name[0] || y->offset >= st->vdso_size)
			return FAIL(st, EBADMSG, "VDSO symbol out of bounds");
	}
	if (ckpt_csum((const __u8 *)(v + 1), st->vdso_size) != st->vdso_csum)
		return FAIL(st, EBADMSG, "VDSO text is not the process's vdso");
	return 0;
}

static int check_thread(struct ckpt_img_state *st,
			const struct ckpt_img_thread *t, __u64 len)
{
	if (len != sizeof(*t) + st->hdr.xstate_size ||
	    t->xstate_size != st->hdr.xstate_size)
		return FAIL(st, EBADMSG, "thread XSAVE state size mismatch");
	if (!t->tid || t->tid > (1 << 22))
		return FAIL(st, EBADMSG, "thread id out of bounds");
	if (t->flags & ~__CKPT_THREAD_ALL)
		return FAIL(st, EINVAL, "unknown thread flags");
	if (t->flags & CKPT_THREAD_NICE ? t->nice < -20 || t->nice > 19 : t->nice)
		return FAIL(st, EBADMSG, "thread nice value out of range");
	if (st->nr_threads == 0 && t->tid != st->pid)
		return FAIL(st, EBADMSG, "the first thread is not the process's main thread");
	if (!str_ok(t->comm, sizeof(t->comm)))
		return FAIL(st, EBADMSG, "thread name not terminated");
	if (t->clear_child_tid > CKPT_IMG_ADDR_MAX ||
	    t->robust_list > CKPT_IMG_ADDR_MAX || t->rseq > CKPT_IMG_ADDR_MAX ||
	    t->sas_ss_sp > CKPT_IMG_ADDR_MAX ||
	    t->sas_ss_size > CKPT_IMG_ADDR_MAX ||
	    t->robust_list_len > 4096 || t->rseq_len > 4096)
		return FAIL(st, EBADMSG, "thread pointers out of user space");
	return 0;
}

static int check_signals(struct ckpt_img_state *st,
			 const struct ckpt_img_signals *h, __u64 len)
{
	const struct ckpt_img_siginfo *q = (const void *)(h + 1);
	__u64 i;

	if (h->nr != (len - sizeof(*h)) / sizeof(*q))
		return FAIL(st, EBADMSG, "SIGNALS count does not match its length");
	if (h->pad)
		return FAIL(st, EINVAL, "reserved SIGNALS field set");
	if (h->real_value_ns > CKPT_IMG_MAX_TIME_NS ||
	    h->real_interval_ns > CKPT_IMG_MAX_TIME_NS ||
	    h->virt_value_ns > CKPT_IMG_MAX_TIME_NS ||
	    h->virt_interval_ns > CKPT_IMG_MAX_TIME_NS ||
	    h->prof_value_ns > CKPT_IMG_MAX_TIME_NS ||
	    h->prof_interval_ns > CKPT_IMG_MAX_TIME_NS)
		return FAIL(st, EBADMSG, "interval timer out of bounds");
	for (i = 0; i < h->nr; i++, q++) {
		__s32 signo;

		memcpy(&signo, q->info, sizeof(signo));
		if (!q->signo || q->signo > 64 || (__u32)signo != q->signo)
			return FAIL(st, EBADMSG, "pending signal number out of bounds");
	}
	return 0;
}

/*
 * The clocks a restart can create timers on: CLOCK_REALTIME, _MONOTONIC,
 * _BOOTTIME and _TAI, and the CPU-time clocks of the process (its pid or 0)
 * and of one of its threads (any tid: the restarter checks it is one).
 */
static int timer_clock_ok(const struct ckpt_img_state *st, __s32 clock)
{
	__u32 pid;

	if (clock >= 0)
		return clock == 0 || clock == 1 || clock == 7 || clock == 11;
	if ((clock & 3) == 3)		/* CLOCKFD: a dynamic (PTP) clock */
		return 0;
	pid = ~(__u32)(clock >> 3);	/* CPUCLOCK_PID() */
	if (clock & 4)			/* CPUCLOCK_PERTHREAD_MASK */
		return pid && pid <= (1 << 22);
	return !pid || pid == st->pid;
}

static int check_timers(struct ckpt_img_state *st,
			const struct ckpt_img_timers *h, __u64 len)
{
	const struct ckpt_img_timer *t = (const void *)(h + 1);
	__u64 i;

	if (h->nr != (len - sizeof(*h)) / sizeof(*t))
		return FAIL(st, EBADMSG, "TIMERS count does not match its length");
	if (h->next_id > 0x7fffffff)
		return FAIL(st, EBADMSG, "next timer id out of bounds");
	for (i = 0; i < h->nr; i++, t++) {
		if (t->id >= CKPT_IMG_MAX_TIMER_ID || (i && t->id <= t[-1].id))
			return FAIL(st, EBADMSG, "timer ids out of bounds or not ascending");
		if (!timer_clock_ok(st, t->clockid))
			return FAIL(st, EBADMSG, "timer clock out of bounds");
		if (t->flags & ~__CKPT_TIMER_ALL ||
		    (t->flags & CKPT_TIMER_ABSTIME && t->clockid != 0))
			return FAIL(st, EINVAL, "unknown timer flags");
		/* SIGEV_SIGNAL 0, SIGEV_NONE 1, SIGEV_THREAD 2, SIGEV_THREAD_ID 4 */
		if (t->notify != 0 && t->notify != 1 && t->notify != 2 &&
		    t->notify != 4)
			return FAIL(st, EBADMSG, "unknown timer notification");
		if (t->notify != 1 && (t->signo < 1 || t->signo > 64))
			return FAIL(st, EBADMSG, "timer signal number out of bounds");
		if (t->notify == 4 ? !t->tid || t->tid > (1 << 22) : t->tid != 0)
			return FAIL(st, EBADMSG, "timer thread out of bounds");
		if (t->value_ns > CKPT_IMG_MAX_TIME_NS ||
		    t->interval_ns > CKPT_IMG_MAX_TIME_NS ||
		    t->overrun_last > 0x7fffffff || t->overrun > 0x7fffffff)
			return FAIL(st, EBADMSG, "timer time or overrun out of bounds");
	}
	return 0;
}

/* The entry of descriptor @fd among the first @n of @files (ascending). */
const struct ckpt_img_file *ckpt_img_file_at(const struct ckpt_img_file *files,
					     __u64 n, __u64 fd)
{
	__u64 lo = 0, hi = n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (files[mid].fd == fd)
			return &files[mid];
		if (files[mid].fd < fd)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static int check_files(struct ckpt_img_state *st,
		       const struct ckpt_img_file *files, __u64 n)
{
	const __u32 known = 00000003 | 00002000 | 00004000 | 04010000;
	const struct ckpt_img_file *f = files, *lower;
	__u32 registered = 0;
	/* A tree's member records its descriptors 0-2 as well. */
	__s64 prev = st->has_tree ? -1 : 2;
	__u64 i;

	for (i = 0; i < n; i++, f++) {
		if ((__s64)f->fd <= prev || f->fd >= (1U << 20))
			return FAIL(st, EBADMSG, st->has_tree ?
				    "file descriptors not ascending" :
				    "file descriptors not ascending above 2");
		prev = f->fd;
		if (f->open_flags & ~known || (f->open_flags & 3) == 3 ||
		    f->flags & ~__CKPT_FILE_ALL &
		    ~(CKPT_FILE_OPEN_NR_MAX << CKPT_FILE_OPEN_NR_SHIFT) ||
		    f->kind >= __CKPT_FILE_KIND_MAX ||
		    f->kind == CKPT_FILE_SHMEM || f->kind == CKPT_FILE_LOCAL)
			return FAIL(st, EINVAL, "unknown file flags or kind");
		if (f->flags & CKPT_FILE_TREE_SHARED &&
		    (!st->has_tree || (f->kind != CKPT_FILE_REGULAR &&
				       f->kind != CKPT_FILE_DIR &&
				       f->kind != CKPT_FILE_EVENTFD &&
				       f->kind != CKPT_FILE_SIGNALFD &&
				       f->kind != CKPT_FILE_TIMERFD &&
				       f->kind != CKPT_FILE_EPOLL &&
				       f->kind != CKPT_FILE_MEMFD &&
				       f->kind != CKPT_FILE_DELETED)))
			return FAIL(st, EINVAL, "only a tree's regular files, directories, eventfds, signalfds, timerfds, epolls, memfds and deleted files are shared between processes");
		if (f->flags & (CKPT_FILE_PROCFS | CKPT_FILE_SYSFS) &&
		    ((f->flags & CKPT_FILE_PROCFS && f->flags & CKPT_FILE_SYSFS) ||
		     (f->kind != CKPT_FILE_REGULAR && f->kind != CKPT_FILE_DIR)))
			return FAIL(st, EINVAL, "only a regular file or directory is on a procfs or a sysfs, and on one of them");
		if (CKPT_FILE_OPEN_NR(f->flags) &&
		    (!(f->flags & CKPT_FILE_TREE_SHARED) ||
		     (f->kind != CKPT_FILE_REGULAR && f->kind != CKPT_FILE_DIR)))
			return FAIL(st, EINVAL, "an open file's number on an entry other than a tree's shared regular file or directory");
		/* Device numbers are 32 bits: the restarter keys the number above. */
		if (f->flags & CKPT_FILE_TREE_SHARED && f->dev >> 32 &&
		    (f->kind == CKPT_FILE_REGULAR || f->kind == CKPT_FILE_DIR))
			return FAIL(st, EBADMSG, "a tree's shared file with a device number over 32 bits");
		/* Their numbers in a tree, when shared; else 0. */
		if ((f->kind == CKPT_FILE_SIGNALFD &&
		     f->ino && !(f->flags & CKPT_FILE_TREE_SHARED)) ||
		    ((f->kind == CKPT_FILE_TIMERFD || f->kind == CKPT_FILE_EPOLL) &&
		     (f->ino || (f->dev && !(f->flags & CKPT_FILE_TREE_SHARED)))))
			return FAIL(st, EBADMSG, "signalfd, timerfd or epoll entry with a number outside a tree's shared file");
		if (f->flags & CKPT_FILE_REGISTERED &&
		    (f->kind != CKPT_FILE_CKPT_DEV || registered++))
			return FAIL(st, EINVAL, "only one /dev/ckpt carries a registration");
		if (f->kind == CKPT_FILE_CHR && f->ino)
			return FAIL(st, EBADMSG, "device file with an inode number");
		if (f->kind == CKPT_FILE_UNIX && (!f->ino || f->pos))
			return FAIL(st, EBADMSG, "UNIX socket entry without its socket");
		if (f->kind == CKPT_FILE_TCP && (!f->ino || f->pos || f->dev))
			return FAIL(st, EBADMSG, "TCP socket entry without its socket");
		if (f->kind == CKPT_FILE_PTY &&
		    (!st->has_tree || f->pos || f->ino >= (1U << 20) ||
		     (f->dev != CKPT_PTY_MASTER && f->dev != CKPT_PTY_SLAVE)))
			return FAIL(st, EBADMSG, "pseudo-terminal entry without its end, or outside a tree");
		if (f->kind == CKPT_FILE_STDIO &&
		    (!st->has_tree || f->ino > 2 || f->pos || f->dev))
			return FAIL(st, EBADMSG, "a root's standard descriptor outside a tree's member");
		if (f->kind == CKPT_FILE_EVENTFD &&
		    (f->ino & ~(__u64)CKPT_EVENTFD_SEMAPHORE || f->pos == ~0ULL))
			return FAIL(st, EBADMSG, "eventfd state out of bounds");
		if (f->kind == CKPT_FILE_INOTIFY &&
		    (f->dev || f->ino || f->pos < 1 || f->pos > CKPT_INOTIFY_MAX_WD))
			return FAIL(st, EBADMSG, "inotify state out of bounds");
		if (f->kind == CKPT_FILE_SHARED) {
			lower = ckpt_img_file_at(files, i, f->ino);
			if (!lower || lower->kind == CKPT_FILE_SHARED ||
			    lower->kind == CKPT_FILE_PIPE ||
			    lower->open_flags != f->open_flags || f->pos || f->dev)
				return FAIL(st, EBADMSG, "shared descriptor names no open file before it");
		}
		/* @dev: the tree's number of a shared one (memfd, deleted). */
		if (f->kind >= CKPT_FILE_FIFO && f->kind <= CKPT_FILE_DELETED &&
		    (f->ino >= st->nr_fileobjs ||
		     !f->dev != !(f->flags & CKPT_FILE_TREE_SHARED) ||
		     st->fileobjs[f->ino].kind != f->kind))
			return FAIL(st, EBADMSG, "file names an object the image does not carry");
		if (f->pos > (1ULL << 62))
			return FAIL(st, EBADMSG, "file position out of bounds");
		if (!str_ok(f->path, sizeof(f->path)) ||
		    (f->kind < CKPT_FILE_EVENTFD && f->path[0] != '/'))
			return FAIL(st, EBADMSG, "file path not absolute or not terminated");
	}
	return 0;
}

/*
 * An epoll's items: each on an epoll of the process's FILES, watching one
 * of its descriptors, or 0-2 (a tree member's restarter's, when the
 * member had none of its own).
 */
static int check_epoll(struct ckpt_img_state *st,
		       const struct ckpt_img_epitem *e, __u64 n)
{
	const struct ckpt_img_file *ep;
	__u64 i;

	for (i = 0; i < n; i++, e++) {
		if (e->epfd >= (1U << 20) || e->tfd >= (1U << 20) || e->pad)
			return FAIL(st, EBADMSG, "epoll item out of bounds");
		ep = ckpt_img_file_at(st->files, st->nr_files, e->epfd);
		if (!ep || ep->kind != CKPT_FILE_EPOLL)
			return FAIL(st, EBADMSG, "epoll item on a descriptor that is no epoll of the image");
		if (e->tfd > 2 && !ckpt_img_file_at(st->files, st->nr_files, e->tfd))
			return FAIL(st, EBADMSG, "epoll item watching a descriptor the image does not have");
	}
	return 0;
}

/*
 * Each lock names a descriptor of a file the restarter opens or makes (a
 * regular file, a directory, a memfd, a deleted file; not a dup(), whose
 * lower descriptor the lock names), open for what a record lock of its
 * type needs, over a range of bytes in file offsets.
 */
static int check_locks(struct ckpt_img_state *st,
		       const struct ckpt_img_lock *l, __u64 n)
{
	const struct ckpt_img_file *f;
	__u32 acc;
	__u64 i;

	for (i = 0; i < n; i++, l++) {
		if (l->kind < CKPT_LOCK_FLOCK || l->kind > CKPT_LOCK_OFD ||
		    (l->type != CKPT_LOCK_READ && l->type != CKPT_LOCK_WRITE))
			return FAIL(st, EINVAL, "unknown lock kind or type");
		if (l->start > l->end || l->end > CKPT_LOCK_TO_EOF ||
		    (l->kind == CKPT_LOCK_FLOCK &&
		     (l->start || l->end != CKPT_LOCK_TO_EOF)))
			return FAIL(st, EBADMSG, "lock range out of bounds");
		f = l->fd < (1U << 20) ?
		    ckpt_img_file_at(st->files, st->nr_files, l->fd) : NULL;
		if (!f || (f->kind != CKPT_FILE_REGULAR &&
			   f->kind != CKPT_FILE_DIR &&
			   f->kind != CKPT_FILE_MEMFD &&
			   f->kind != CKPT_FILE_DELETED))
			return FAIL(st, EBADMSG, "lock on a descriptor that is no file of the image");
		acc = f->open_flags & 3;
		if (l->kind != CKPT_LOCK_FLOCK &&
		    (l->type == CKPT_LOCK_READ ? acc == 1 : acc == 0))
			return FAIL(st, EBADMSG, "record lock on a descriptor not open for it");
	}
	return 0;
}

/*
 * inotify watches: each of an INOTIFY entry of FILES, numbered below the
 * entry's next number, sorted by descriptor and number, on a path.
 */
static int check_inotify(struct ckpt_img_state *st,
			 const struct ckpt_img_inotify *w, __u64 n)
{
	const struct ckpt_img_file *f;
	__u64 i;

	for (i = 0; i < n; i++, w++) {
		f = w->fd < (1U << 20) ?
		    ckpt_img_file_at(st->files, st->nr_files, w->fd) : NULL;
		if (!f || f->kind != CKPT_FILE_INOTIFY)
			return FAIL(st, EBADMSG, "inotify watch on a descriptor that is no inotify of the image");
		if (w->wd < 1 || (__u64)w->wd >= f->pos ||
		    (i && (w->fd < w[-1].fd ||
			   (w->fd == w[-1].fd && w->wd <= w[-1].wd))))
			return FAIL(st, EBADMSG, "inotify watch numbers out of order or out of bounds");
		if (!w->mask || w->mask & ~CKPT_INOTIFY_MASK || w->reserved)
			return FAIL(st, EINVAL, "unknown inotify mask or reserved field set");
		if (!str_ok(w->path, sizeof(w->path)) || w->path[0] != '/')
			return FAIL(st, EBADMSG, "inotify watch path not absolute or not terminated");
	}
	return 0;
}

static int check_vmas(struct ckpt_img_state *st,
		      const struct ckpt_img_vma *v, __u32 n)
{
	__u32 i, flocked = 0;
	__u64 prev_end = 0;

	for (i = 0; i < n; i++, v++) {
		if (v->start % CKPT_IMG_PAGE_SIZE || v->end % CKPT_IMG_PAGE_SIZE)
			return FAIL(st, EBADMSG, "mapping not page-aligned");
		if (v->start >= v->end || v->end > CKPT_IMG_ADDR_MAX + CKPT_IMG_PAGE_SIZE)
			return FAIL(st, EBADMSG, "mapping range out of user space");
		if (v->start < prev_end)
			return FAIL(st, EBADMSG, "mappings overlap or are not sorted");
		prev_end = v->end;
		if (v->flags & ~__CKPT_VMA_ALL)
			return FAIL(st, EINVAL, "unknown mapping flags");
		if (v->prot & ~7U)
			return FAIL(st, EINVAL, "unknown mapping protection");
		if (v->nr_pages > (v->end - v->start) / CKPT_IMG_PAGE_SIZE)
			return FAIL(st, EBADMSG, "more pages than the mapping holds");
		/* pgoff << PAGE_SHIFT must not wrap anywhere in the mapping. */
		if (v->pgoff >= (1ULL << 52) ||
		    v->pgoff + (v->end - v->start) / CKPT_IMG_PAGE_SIZE > (1ULL << 52))
			return FAIL(st, EBADMSG, "file offset out of bounds");
		if (!str_ok(v->path, sizeof(v->path)))
			return FAIL(st, EBADMSG, "mapping path not terminated");
		if ((v->flags & CKPT_VMA_FILE) && v->path[0] != '/')
			return FAIL(st, EBADMSG, "file mapping without an absolute path");
		if ((v->flags & (CKPT_VMA_VDSO | CKPT_VMA_VVAR)) && v->nr_pages)
			return FAIL(st, EBADMSG, "vdso/vvar pages are never stored");
		if ((v->flags & CKPT_VMA_SHARED) && (v->flags & CKPT_VMA_FILE) &&
		    v->nr_pages)
			return FAIL(st, EBADMSG, "shared file mappings keep their data in the file");
		if ((v->flags & CKPT_VMA_SYSV) &&
		    (!(v->flags & CKPT_VMA_SHARED) || !st->has_tree ||
		     v->flags & (CKPT_VMA_FILE | CKPT_VMA_FILEOBJ) || v->dev ||
		     v->ino > CKPT_IMG_SYSV_ID_MAX || v->nr_pages))
			return FAIL(st, EBADMSG, "System V segment mapping out of bounds");
		if ((v->flags & (CKPT_VMA_FLOCK_READ | CKPT_VMA_FLOCK_WRITE)) &&
		    (!(v->flags & CKPT_VMA_FILE) ||
		     v->flags & (CKPT_VMA_VDSO | CKPT_VMA_VVAR) ||
		     (v->flags & CKPT_VMA_FLOCK_READ &&
		      v->flags & CKPT_VMA_FLOCK_WRITE)))
			return FAIL(st, EBADMSG, "flock() lock on a mapping of no file, or both shared and exclusive");
		if ((v->flags & (CKPT_VMA_FLOCK_READ | CKPT_VMA_FLOCK_WRITE)) &&
		    ++flocked > CKPT_IMG_MAX_FLOCK_MAPS)
			return FAIL(st, E2BIG, "more flock()ed mappings than an image holds");
		if ((v->flags & CKPT_VMA_FILEOBJ) &&
		    (!(v->flags & CKPT_VMA_FILE) || v->dev ||
		     v->ino >= st->nr_fileobjs ||
		     st->fileobjs[v->ino].kind == CKPT_FILE_FIFO))
			return FAIL(st, EBADMSG, "mapping names a file object the image does not carry");
	}
	return 0;
}

static int check_fileobjs(struct ckpt_img_state *st,
			  const struct ckpt_img_fileobj *o, __u64 n)
{
	__u64 i;

	for (i = 0; i < n; i++, o++) {
		if ((o->kind < CKPT_FILE_FIFO || o->kind > CKPT_FILE_DELETED) &&
		    o->kind != CKPT_FILE_SHMEM && o->kind != CKPT_FILE_LOCAL)
			return FAIL(st, EINVAL, "unknown file object kind, mode or seals");
		if (o->mode & ~07777U || o->seals & ~CKPT_IMG_SEALS_ALL)
			return FAIL(st, EINVAL, "unknown file object kind, mode or seals");
		if (o->kind == CKPT_FILE_SHMEM && !st->has_tree)
			return FAIL(st, EBADMSG, "shared anonymous memory object outside a tree's member");
		if (o->kind == CKPT_FILE_LOCAL && !st->has_tree)
			return FAIL(st, EBADMSG, "node-local file object outside a tree's member");
		if (!str_ok(o->name, sizeof(o->name)) ||
		    (o->kind != CKPT_FILE_MEMFD && o->name[0] != '/') ||
		    (o->kind == CKPT_FILE_MEMFD &&
		     !memchr(o->name, '\0', CKPT_IMG_MEMFD_NAME_MAX + 1)))
			return FAIL(st, EBADMSG, "file object name not terminated, too long or not absolute");
		if (o->stored > o->size ||
		    (o->kind == CKPT_FILE_FIFO ?
		     o->size > o->capacity || o->capacity > CKPT_IMG_MAX_PIPE :
		     o->size > CKPT_IMG_MAX_FILESIZE || o->capacity) ||
		    (o->kind != CKPT_FILE_MEMFD && o->seals))
			return FAIL(st, EBADMSG, "file object size out of bounds");
	}
	return 0;
}

/* AF_INET, AF_INET6 (the same everywhere). */
/*
 * PTY: each pseudo-terminal once, its flags known, its termios what a
 * TCSETS takes (any bits: the tty layer masks what it does not keep).
 */
static int check_ptys(struct ckpt_img_state *st, const struct ckpt_img_pty *p,
		      __u64 n)
{
	__u64 i, j;

	for (i = 0; i < n; i++) {
		if (p[i].index >= (1U << 20) || p[i].flags & ~__CKPT_PTY_ALL ||
		    p[i].reserved[0] || p[i].reserved[1] || p[i].reserved[2])
			return FAIL(st, EBADMSG, "pseudo-terminal out of bounds");
		for (j = 0; j < i; j++)
			if (p[j].index == p[i].index)
				return FAIL(st, EBADMSG, "pseudo-terminal recorded twice");
	}
	return 0;
}

#define TCP_FAMILY_OK(f)	((f) == 2 || (f) == 10)

/*
 * A TCP socket: its queues fill its data exactly, as its sequence numbers
 * say (a connection's: the send queue's unsent part within it; one
 * waiting to be accepted has sent nothing); a socket not connected has
 * none, nor sequence numbers, negotiated options or a FIN sent or
 * received, nor a peer but one it is connecting to.
 */
static int check_tcp(struct ckpt_img_state *st, const struct ckpt_img_tcp *t,
		     __u64 len)
{
	__u32 sendq = t->write_seq - t->snd_una;
	__u32 recvq = t->rcv_nxt - t->copied_seq;
	const __u32 opts = CKPT_TCP_OPT_SACK | CKPT_TCP_OPT_TSTAMP |
			   CKPT_TCP_OPT_WSCALE | CKPT_TCP_FIN_OUT |
			   CKPT_TCP_FIN_IN;

	if (t->len != len - sizeof(*t) || t->len > CKPT_IMG_MAX_TCPQ ||
	    !t->ino || t->ino & CKPT_UPEND_ID || !TCP_FAMILY_OK(t->family) ||
	    t->state >= __CKPT_TCP_STATE_MAX || t->flags & ~__CKPT_TCP_ALL ||
	    t->pad || t->sndbuf > (1U << 30) || t->rcvbuf > (1U << 30) ||
	    t->backlog > 65535 || t->keepcnt > 127 ||
	    t->keepidle > 32767 || t->keepintvl > 32767 ||
	    t->snd_wscale > 14 || t->rcv_wscale > 14 || t->mss > 65535)
		return FAIL(st, EBADMSG, "TCP socket out of bounds");
	if (t->family == 2 && (memchr_inv8(t->src + 4, 12) ||
			       memchr_inv8(t->dst + 4, 12)))
		return FAIL(st, EBADMSG, "TCP socket out of bounds");
	if (t->state == CKPT_TCP_ESTABLISHED || t->state == CKPT_TCP_WAITING) {
		if (sendq > CKPT_IMG_MAX_TCPQ || recvq > CKPT_IMG_MAX_TCPQ ||
		    (__u64)sendq + recvq != t->len ||
		    t->snd_nxt - t->snd_una > sendq || !t->sport || !t->dport ||
		    t->flags & CKPT_TCP_BOUND)
			return FAIL(st, EBADMSG, "TCP connection queues do not match its sequence numbers");
		/* Not accepted yet: nothing sent, shut down by nobody here. */
		if (t->state == CKPT_TCP_WAITING &&
		    (sendq || t->snd_nxt != t->snd_una ||
		     t->flags & (CKPT_TCP_FIN_OUT | CKPT_TCP_SHUT_RD)))
			return FAIL(st, EBADMSG, "TCP connection waiting to be accepted that sent or shut down");
		return 0;
	}
	/* A connect under way: its two ends' addresses, nothing else. */
	if (t->state == CKPT_TCP_CONNECTING && (!t->sport || !t->dport))
		return FAIL(st, EBADMSG, "TCP socket that is connecting has no ends");
	if (t->len || (t->dport && t->state != CKPT_TCP_CONNECTING) ||
	    t->flags & opts || t->snd_una || t->snd_nxt ||
	    t->write_seq || t->copied_seq || t->rcv_nxt || t->snd_wl1 ||
	    t->snd_wnd || t->max_window || t->rcv_wnd || t->rcv_wup ||
	    t->mss || t->snd_wscale || t->rcv_wscale || t->timestamp ||
	    (t->state == CKPT_TCP_LISTEN && !t->sport) ||
	    (t->state == CKPT_TCP_CLOSED && !(t->flags & CKPT_TCP_BOUND) &&
	     (t->sport || memchr_inv8(t->src, 16))) ||
	    (t->state != CKPT_TCP_CLOSED && t->flags & CKPT_TCP_BOUND))
		return FAIL(st, EBADMSG, "TCP socket that is not connected has a connection's state");
	return 0;
}

/* SOCK_STREAM, SOCK_DGRAM, SOCK_SEQPACKET (the same on every arch here). */
#define USOCK_TYPE_OK(t)	((t) == 1 || (t) == 2 || (t) == 5)

/* A message socket's @len bytes of @data: its messages, filling it exactly. */
static int check_messages(struct ckpt_img_state *st, const __u8 *data,
			  __u32 len)
{
	__u64 off = 0, n;

	while (off < len) {
		__u32 msg;

		if (len - off < sizeof(msg))
			return FAIL(st, EBADMSG, "UNIX socket messages do not fill its data");
		memcpy(&msg, data + off, sizeof(msg));
		n = sizeof(msg) + (((__u64)msg + 3) & ~3ULL);
		if (n > len - off)
			return FAIL(st, EBADMSG, "UNIX socket messages do not fill its data");
		off += n;
	}
	return 0;
}

/* A socket end, and its messages filling its data exactly (not a stream). */
static int check_usock(struct ckpt_img_state *st,
		       const struct ckpt_img_usock *u, __u64 len)
{
	if (u->len != len - sizeof(*u) || u->len > CKPT_IMG_MAX_USOCK ||
	    !u->ino || u->ino & CKPT_UPEND_ID || u->ino == u->peer ||
	    !USOCK_TYPE_OK(u->type) ||
	    u->shutdown & ~__CKPT_USOCK_F_ALL || u->sndbuf > (1U << 30))
		return FAIL(st, EBADMSG, "UNIX socket out of bounds");
	return u->type == 1 ? 0 : check_messages(st, u->data, u->len);
}

/*
 * A connection waiting on a listening socket: named by an id no inode
 * number has, its client's not one; what its client sent.
 */
static int check_upend(struct ckpt_img_state *st,
		       const struct ckpt_img_upend *p, __u64 len)
{
	if (p->len != len - sizeof(*p) || p->len > CKPT_IMG_MAX_USOCK ||
	    !p->listener || p->listener & CKPT_UPEND_ID ||
	    !(p->id & CKPT_UPEND_ID) || p->client & CKPT_UPEND_ID ||
	    (p->type != 1 && p->type != 5))
		return FAIL(st, EBADMSG, "waiting UNIX connection out of bounds");
	return p->type == 1 ? 0 : check_messages(st, p->data, p->len);
}

/*
 * A UNIX socket's name: a NUL-terminated absolute path filling @len
 * exactly, or an abstract one (no owner); nothing after it. Empty (all
 * zero) only where @may_be_empty; only an @owned path has an owner. NULL,
 * or what is wrong.
 */
static const char *uaddr_bad(const struct ckpt_img_uaddr *a,
			     int may_be_empty, int owned)
{
	__u32 i, n = a->len;
	int path = n && a->addr[0];

	if (n > CKPT_USOCK_ADDR_MAX || a->mode & ~07777U ||
	    (n < 2 && !(may_be_empty && !n)))
		return "a UNIX socket's name out of bounds";
	for (i = n; i < CKPT_USOCK_ADDR_MAX; i++)
		if (a->addr[i])
			return "bytes after a UNIX socket's name";
	if (path && (a->addr[0] != '/' || a->addr[n - 1] ||
		     strnlen((const char *)a->addr, n) != n - 1))
		return "a UNIX socket's path is not an absolute, NUL-terminated path";
	if ((!path || !owned) && (a->mode || a->uid || a->gid))
		return "an owner for a UNIX socket name that has none";
	return NULL;
}

/* A listening socket: a type that listens, a name, a bounded backlog. */
static int check_ulisten(struct ckpt_img_state *st,
			 const struct ckpt_img_ulisten *l)
{
	const char *bad = uaddr_bad(&l->name, 0, 1);

	if (!l->ino || (l->type != 1 && l->type != 5) ||
	    l->backlog > (1U << 20) || l->flags & ~CKPT_USOCK_PASSCRED)
		return FAIL(st, EBADMSG, "listening UNIX socket out of bounds");
	return bad ? FAIL(st, EBADMSG, bad) : 0;
}

/*
 * A socket with names, or connected to nothing: its names (a peer's only
 * a datagram socket's, without owner), messages only with a name of its
 * own, filling its data exactly.
 */
static int check_uname(struct ckpt_img_state *st,
		       const struct ckpt_img_uname *u, __u64 len)
{
	const char *bad;

	if (u->len != len - sizeof(*u) || u->len > CKPT_IMG_MAX_USOCK ||
	    !u->ino || u->ino & CKPT_UPEND_ID || !USOCK_TYPE_OK(u->type) ||
	    u->shutdown & ~__CKPT_USOCK_F_ALL || u->sndbuf > (1U << 30))
		return FAIL(st, EBADMSG, "UNIX socket out of bounds");
	bad = uaddr_bad(&u->name, 1, 1) ?: uaddr_bad(&u->peer, 1, 0);
	if (bad)
		return FAIL(st, EBADMSG, bad);
	if ((u->peer.len || u->len) && u->type != 2)
		return FAIL(st, EBADMSG, "a UNIX socket connected by name, or with messages queued, that is no datagram socket");
	if (u->len && !u->name.len)
		return FAIL(st, EBADMSG, "messages queued on a UNIX socket with no name");
	return u->type == 1 ? 0 : check_messages(st, u->data, u->len);
}

/*
 * An object's attributes, and its id above the last of its kind's (@kind:
 * 0 segments, 1 semaphore sets, 2 message queues), within the limit.
 */
static int check_ipcperm(struct ckpt_img_state *st,
			 const struct ckpt_img_ipcperm *p, unsigned int kind,
			 __u32 flags)
{
	if (p->id > CKPT_IMG_SYSV_ID_MAX || p->mode & ~0777U ||
	    p->flags & ~flags)
		return FAIL(st, EBADMSG, "System V object's id, mode or flags out of bounds");
	if (st->nr_sysv[kind] == CKPT_IMG_MAX_SYSV ||
	    (st->nr_sysv[kind] && p->id <= st->sysv_last[kind]))
		return FAIL(st, EBADMSG, "System V objects too many, or their ids not ascending");
	st->nr_sysv[kind]++;
	st->sysv_last[kind] = p->id;
	return 0;
}

static int check_sysvshm(struct ckpt_img_state *st,
			 const struct ckpt_img_sysvshm *m)
{
	int ret = check_ipcperm(st, &m->perm, 0, __CKPT_IPC_ALL);

	if (ret)
		return ret;
	if (!m->size || m->size > CKPT_IMG_MAX_SHMSZ || m->stored > m->size)
		return FAIL(st, EBADMSG, "System V segment size out of bounds");
	st->shm_open = 1;
	st->shm_size = m->size;
	st->shm_stored = m->stored;
	st->shm_next = 0;
	st->shm_bytes = 0;
	return 0;
}

static int check_sysvdata(struct ckpt_img_state *st,
			  const struct ckpt_img_sysvdata *d, __u64 len)
{
	len -= sizeof(*d);
	if (d->pad)
		return FAIL(st, EINVAL, "reserved SYSVDATA field set");
	if (d->id != st->sysv_last[0] || d->offset < st->shm_next ||
	    d->offset > st->shm_size || len > st->shm_size - d->offset)
		return FAIL(st, EBADMSG, "SYSVDATA outside its segment or out of order");
	st->shm_bytes += len;
	st->shm_next = d->offset + len;
	if (st->shm_bytes > st->shm_stored)
		return FAIL(st, EBADMSG, "SYSVDATA holds more than SYSVSHM says it stores");
	return 0;
}

static int check_sysvsem(struct ckpt_img_state *st,
			 const struct ckpt_img_sysvsem *m, __u64 len)
{
	int ret = check_ipcperm(st, &m->perm, 1, 0);
	__u32 i;

	if (ret)
		return ret;
	if (m->pad || !m->nsems || m->nsems > CKPT_IMG_MAX_SEMS ||
	    len != sizeof(*m) + (__u64)m->nsems * sizeof(__u32))
		return FAIL(st, EBADMSG, "System V semaphore set out of bounds");
	for (i = 0; i < m->nsems; i++)
		if (m->vals[i] > CKPT_IMG_SEMVMX)
			return FAIL(st, EBADMSG, "System V semaphore value above SEMVMX");
	return 0;
}

/*
 * A member's adjustments to one set: the restarter checks the set is its
 * root's, with as many semaphores.
 */
static int check_semundo(struct ckpt_img_state *st,
			 const struct ckpt_img_semundo *u, __u64 len)
{
	if (u->id > CKPT_IMG_SYSV_ID_MAX || !u->nsems ||
	    u->nsems > CKPT_IMG_MAX_SEMS ||
	    len != sizeof(*u) + (__u64)u->nsems * sizeof(u->adj[0]))
		return FAIL(st, EBADMSG, "semaphore adjustments out of bounds");
	if (st->nr_semundos && u->id <= st->semundo_last)
		return FAIL(st, EBADMSG, "semaphore adjustments' set ids not ascending");
	st->semundo_last = u->id;
	return 0;
}

/* A queue's messages: each a positive type and its bytes, filling it exactly. */
static int check_sysvmsg(struct ckpt_img_state *st,
			 const struct ckpt_img_sysvmsg *m, __u64 len)
{
	const __u8 *p = (const __u8 *)(m + 1);
	__u64 off = 0, bytes = 0;
	__u32 n;
	int ret = check_ipcperm(st, &m->perm, 2, 0);

	if (ret)
		return ret;
	len -= sizeof(*m);
	if (m->pad || m->nr > CKPT_IMG_MAX_MSGS || m->qbytes > 0x7fffffff)
		return FAIL(st, EBADMSG, "System V message queue out of bounds");
	for (n = 0; n < m->nr; n++) {
		struct ckpt_img_sysvmsg_one one;

		if (len - off < sizeof(one))
			return FAIL(st, EBADMSG, "System V message cut short");
		memcpy(&one, p + off, sizeof(one));
		off += sizeof(one);
		if (one.type <= 0 || one.len > CKPT_IMG_MAX_MSGSZ ||
		    ((one.len + 7) & ~7ULL) > len - off)
			return FAIL(st, EBADMSG, "System V message type or length out of bounds");
		off += (one.len + 7) & ~7ULL;
		bytes += one.len;
	}
	if (off != len || bytes > CKPT_IMG_MAX_MSGBYTES)
		return FAIL(st, EBADMSG, "System V message queue's messages do not fill it");
	return 0;
}

/*
 * A zombie child: its pid, group and session in the tree's pid namespace
 * (0: a group or session of outside it), and a wait status a process can end with: exited with a code, or
 * killed by a signal (the core-dump bit included).
 */
static int check_zombie(struct ckpt_img_state *st,
			const struct ckpt_img_zombie *z)
{
	__u32 sig = z->status & 0x7f;
	int exited = !sig && !(z->status & ~0xff00U);
	int killed = sig && sig != 0x7f && sig <= CKPT_IMG_NSIG &&
		     !(z->status & ~0xffU);

	if (z->pad || !z->pid || z->pid > CKPT_IMG_PID_MAX ||
	    z->pgid > CKPT_IMG_PID_MAX || z->sid > CKPT_IMG_PID_MAX ||
	    z->exit_signal > CKPT_IMG_NSIG)
		return FAIL(st, EBADMSG, "zombie's pid, group, session or exit signal out of bounds");
	if (!exited && !killed)
		return FAIL(st, EBADMSG, "zombie's status is no exit status");
	if (z->pid == st->pid)
		return FAIL(st, EBADMSG, "a process its own zombie child");
	return 0;
}

/* FILEDATA is complete for every object before @upto. */
static int filedata_upto(struct ckpt_img_state *st, __u32 upto)
{
	for (; st->fd_obj < upto; st->fd_obj++) {
		if (st->fd_bytes != st->fileobjs[st->fd_obj].stored)
			return FAIL(st, EBADMSG, "FILEDATA does not hold what FILEOBJ says it stores");
		st->fd_bytes = 0;
		st->fd_next = 0;
	}
	return 0;
}

static int check_filedata(struct ckpt_img_state *st,
			  const struct ckpt_img_filedata *d, __u64 len)
{
	const struct ckpt_img_fileobj *o;
	int ret;

	len -= sizeof(*d);
	if (d->pad)
		return FAIL(st, EINVAL, "reserved FILEDATA field set");
	if (d->obj >= st->nr_fileobjs || d->obj < st->fd_obj)
		return FAIL(st, EBADMSG, "FILEDATA names no object, or out of order");
	ret = filedata_upto(st, d->obj);
	if (ret)
		return ret;
	o = &st->fileobjs[d->obj];
	if (d->offset < st->fd_next || d->offset > o->size ||
	    len > o->size - d->offset)
		return FAIL(st, EBADMSG, "FILEDATA outside its file or out of order");
	st->fd_bytes += len;
	st->fd_next = d->offset + len;
	if (st->fd_bytes > o->stored)
		return FAIL(st, EBADMSG, "FILEDATA holds more than FILEOBJ says it stores");
	return 0;
}

static int check_pages(struct ckpt_img_state *st,
		       const struct ckpt_img_pages *p, __u64 len)
{
	const struct ckpt_img_vma *v;
	__u64 end;

	if (len < sizeof(*p) ||
	    len != sizeof(*p) + (__u64)p->nr_pages * CKPT_IMG_PAGE_SIZE)
		return FAIL(st, EBADMSG, "PAGES length does not match its page count");
	if (!p->nr_pages || p->nr_pages > CKPT_IMG_MAX_RUN_PAGES)
		return FAIL(st, EBADMSG, "PAGES page count out of bounds");
	if (!st->vmas || p->vma >= st->nr_vmas)
		return FAIL(st, EBADMSG, "PAGES names a mapping that does not exist");
	v = &st->vmas[p->vma];
	if (p->addr % CKPT_IMG_PAGE_SIZE || p->addr < v->start ||
	    p->addr >= v->end ||
	    p->nr_pages > (v->end - p->addr) / CKPT_IMG_PAGE_SIZE)
		return FAIL(st, EBADMSG, "PAGES outside its mapping");
	end = p->addr + (__u64)p->nr_pages * CKPT_IMG_PAGE_SIZE;
	if (p->addr < st->next_addr || p->vma < st->cur_vma)
		return FAIL(st, EBADMSG, "PAGES not in ascending order");
	if (v->flags & (CKPT_VMA_VDSO | CKPT_VMA_VVAR) ||
	    ((v->flags & CKPT_VMA_SHARED) && (v->flags & CKPT_VMA_FILE)))
		return FAIL(st, EBADMSG, "PAGES for a mapping that stores none");
	/* All-zero pages of anonymous memory may be left out: at most. */
	if (p->vma != st->cur_vma) {
		st->cur_vma = p->vma;
		st->cur_pages = 0;
	}
	st->cur_pages += p->nr_pages;
	if (st->cur_pages > v->nr_pages)
		return FAIL(st, EBADMSG, "more pages stored for a mapping than it holds");
	st->next_addr = end;
	st->nr_pages += p->nr_pages;
	return 0;
}

int ckpt_img_pages_hdr(struct ckpt_img_state *st, const struct ckpt_sect *s,
		       const struct ckpt_img_pages *p)
{
	int ret;

	if (s->type != CKPT_SECT_PAGES)
		return FAIL(st, EBADMSG, "not a PAGES section");
	ret = check_pages(st, p, s->len);
	if (!ret)
		st->nr_sections++;
	return ret;
}

int ckpt_img_payload(struct ckpt_img_state *st, const struct ckpt_sect *s,
		     const void *payload)
{
	int ret = 0;

	if (!(s->type == CKPT_SECT_PAGES && st->pages_csum_later) &&
	    ckpt_csum(payload, s->len) != s->csum)
		return FAIL(st, EBADMSG, "section checksum mismatch");

	switch (s->type) {
	case CKPT_SECT_HEADER:
		ret = check_header(st, payload);
		if (!ret) {
			memcpy(&st->hdr, payload, sizeof(st->hdr));
			st->expect = CKPT_SECT_PROCESS;
		}
		break;
	case CKPT_SECT_PROCESS:
		ret = check_process(st, payload);
		if (!ret) {
			const struct ckpt_img_process *p = payload;

			st->pid = p->pid;
			st->uid = p->uid;
			st->euid = p->euid;
			st->gid = p->gid;
			st->egid = p->egid;
			st->vdso_size = p->vdso_size;
			st->vdso_csum = p->vdso_csum;
			st->exe_obj = p->exe_dev == CKPT_IMG_EXE_OBJ ?
				      p->exe_ino + 1 : 0;
			st->expect = CKPT_SECT_THREAD;
		}
		break;
	case CKPT_SECT_TREE:
		ret = check_tree(st, payload);
		if (!ret) {
			memcpy(&st->tree, payload, sizeof(st->tree));
			st->has_tree = 1;
		}
		break;
	case CKPT_SECT_THREAD:
		ret = check_thread(st, payload, s->len);
		if (!ret && ++st->nr_threads == st->hdr.nr_threads)
			st->expect = CKPT_SECT_VMAS;
		break;
	case CKPT_SECT_VMAS:
		ret = filedata_upto(st, st->nr_fileobjs);
		/* A deleted executable: a deleted file or memfd the image holds. */
		if (!ret && st->exe_obj &&
		    (st->exe_obj > st->nr_fileobjs ||
		     (st->fileobjs[st->exe_obj - 1].kind != CKPT_FILE_DELETED &&
		      st->fileobjs[st->exe_obj - 1].kind != CKPT_FILE_MEMFD)))
			ret = FAIL(st, EBADMSG, "executable object is no deleted file or memfd of FILEOBJ");
		if (!ret)
			ret = check_vmas(st, payload, st->hdr.nr_vmas);
		/* Not needed (nor kept) any longer. */
		st->fileobjs = NULL;
		st->files = NULL;
		if (!ret) {
			/* The caller keeps this payload alive until END. */
			st->vmas = payload;
			st->nr_vmas = st->hdr.nr_vmas;
			st->expect = CKPT_SECT_PAGES;
		}
		break;
	case CKPT_SECT_PAGES:
		ret = check_pages(st, payload, s->len);
		break;
	case CKPT_SECT_FILES:
		ret = check_files(st, payload, s->len / sizeof(struct ckpt_img_file));
		if (!ret) {
			st->files_seen = 1;
			st->files = payload;
			st->nr_files = s->len / sizeof(struct ckpt_img_file);
		}
		break;
	case CKPT_SECT_FILEOBJ:
		ret = check_fileobjs(st, payload,
				     s->len / sizeof(struct ckpt_img_fileobj));
		if (!ret) {
			st->fileobjs = payload;
			st->nr_fileobjs = s->len / sizeof(struct ckpt_img_fileobj);
		}
		break;
	case CKPT_SECT_FILEDATA:
		ret = check_filedata(st, payload, s->len);
		break;
	case CKPT_SECT_TIMERFD: {
		const struct ckpt_img_timerfd *t = payload;
		__u64 i;

		for (i = 0; i < s->len / sizeof(*t); i++, t++)
			if (t->fd >= (1U << 20) || t->pad || t->settime_flags & ~3U ||
			    t->clockid < 0 || t->clockid > 11 ||
			    t->value_ns > (1ULL << 62) || t->interval_ns > (1ULL << 62))
				return FAIL(st, EBADMSG, "timerfd out of bounds");
		st->timerfd_seen = 1;
		break;
	}
	case CKPT_SECT_VDSO:
		ret = check_vdso(st, payload);
		if (!ret)
			st->vdso_seen = 1;
		break;
	case CKPT_SECT_PIPE: {
		const struct ckpt_img_pipe *pd = payload;

		if (pd->len != s->len - sizeof(*pd) || pd->len > pd->capacity ||
		    pd->capacity > CKPT_IMG_MAX_PIPE)
			return FAIL(st, EBADMSG, "pipe content out of bounds");
		st->nr_pipes++;
		break;
	}
	case CKPT_SECT_USOCK:
		ret = check_usock(st, payload, s->len);
		if (!ret)
			st->nr_usocks++;
		break;
	case CKPT_SECT_TCP:
		ret = check_tcp(st, payload, s->len);
		if (!ret)
			st->nr_tcps++;
		break;
	case CKPT_SECT_PTY:
		ret = check_ptys(st, payload, s->len / sizeof(struct ckpt_img_pty));
		if (!ret)
			st->pty_seen = 1;
		break;
	case CKPT_SECT_ULISTEN:
		ret = check_ulisten(st, payload);
		if (!ret)
			st->nr_ulistens++;
		break;
	case CKPT_SECT_UPEND:
		ret = check_upend(st, payload, s->len);
		if (!ret)
			st->nr_upends++;
		break;
	case CKPT_SECT_UNAME:
		ret = check_uname(st, payload, s->len);
		if (!ret)
			st->nr_unames++;
		break;
	case CKPT_SECT_ZOMBIE:
		ret = check_zombie(st, payload);
		if (!ret)
			st->nr_zombies++;
		break;
	case CKPT_SECT_SYSVSHM:
		ret = check_sysvshm(st, payload);
		break;
	case CKPT_SECT_SYSVDATA:
		ret = check_sysvdata(st, payload, s->len);
		break;
	case CKPT_SECT_SYSVSEM:
		ret = check_sysvsem(st, payload, s->len);
		break;
	case CKPT_SECT_SEMUNDO:
		ret = check_semundo(st, payload, s->len);
		if (!ret)
			st->nr_semundos++;
		break;
	case CKPT_SECT_SYSVMSG:
		ret = check_sysvmsg(st, payload, s->len);
		break;
	case CKPT_SECT_EPOLL:
		ret = check_epoll(st, payload, s->len / sizeof(struct ckpt_img_epitem));
		if (!ret)
			st->epoll_seen = 1;
		break;
	case CKPT_SECT_LOCKS:
		ret = check_locks(st, payload, s->len / sizeof(struct ckpt_img_lock));
		if (!ret)
			st->locks_seen = 1;
		break;
	case CKPT_SECT_INOTIFY:
		ret = check_inotify(st, payload,
				    s->len / sizeof(struct ckpt_img_inotify));
		if (!ret)
			st->inotify_seen = 1;
		break;
	case CKPT_SECT_SIGNALS:
		ret = check_signals(st, payload, s->len);
		if (!ret)
			st->signals_seen = 1;
		break;
	case CKPT_SECT_TIMERS:
		ret = check_timers(st, payload, s->len);
		if (!ret)
			st->timers_seen = 1;
		break;
	case CKPT_SECT_SCHED:
		ret = check_sched(st, payload, st->hdr.nr_threads);
		if (!ret)
			st->sched_seen = 1;
		break;
	case CKPT_SECT_CREDS:
		ret = check_creds(st, payload, s->len);
		if (!ret)
			st->creds_seen = 1;
		break;
	case CKPT_SECT_MAC: {
		const struct ckpt_img_mac *m = payload;

		if (m->alg != CKPT_MAC_HMAC_SHA256)
			return FAIL(st, EPROTO, "unknown MAC algorithm");
		if (m->reserved)
			return FAIL(st, EINVAL, "reserved MAC field set");
		st->mac_seen = 1;
		break;
	}
	case CKPT_SECT_FS: {
		const struct ckpt_img_fs *fs = payload;

		if (fs->reserved[0] || fs->reserved[1])
			return FAIL(st, EINVAL, "reserved FS field set");
		if (!str_ok(fs->cwd, sizeof(fs->cwd)) || fs->cwd[0] != '/')
			return FAIL(st, EBADMSG, "working directory not absolute or not terminated");
		if (!str_ok(fs->root, sizeof(fs->root)) || fs->root[0] != '/')
			return FAIL(st, EBADMSG, "root directory not absolute or not terminated");
		st->fs_seen = 1;
		break;
	}
	case CKPT_SECT_END: {
		const struct ckpt_img_end *e = payload;

		if (e->nr_sections != st->nr_sections ||
		    e->nr_pages != st->nr_pages)
			return FAIL(st, EBADMSG, "END does not match the image (truncated or spliced)");
		st->done = 1;
		break;
	}
	default:
		return FAIL(st, EBADMSG, "unknown section type");
	}
	if (!ret)
		st->nr_sections++;
	return ret;
}
