/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * ckpt process image format, version 4. Written by the engine, read by the
 * engine at restart and by userspace tools (ckpt inspect, ckpt restart).
 * Documentation/image-format.md describes it in prose.
 *
 * An image is a sequence of sections. Each starts with a struct ckpt_sect,
 * 8-byte aligned, followed by @len payload bytes and zero padding to the
 * next multiple of 8. The payload's checksum (the low 32 bits of XXH64,
 * seed 0) is in @csum; the header's own, computed with @hcsum zero, is in
 * @hcsum.
 * All integers are little-endian.
 *
 *   HEADER     struct ckpt_img_header          first, exactly once
 *   PROCESS    struct ckpt_img_process         exactly once
 *   TREE       struct ckpt_img_tree            at most once, right after PROCESS
 *   THREAD     struct ckpt_img_thread + xstate  nr_threads times, leader first
 *   CREDS      struct ckpt_img_creds + groups   exactly once, before VMAS
 *   FILES      struct ckpt_img_file[]           at most once
 *   FS         struct ckpt_img_fs               at most once (FILES, FS in any order)
 *   SIGNALS    struct ckpt_img_signals + [nr]   at most once, also before VMAS
 *   EPOLL      struct ckpt_img_epitem[]         at most once, also before VMAS
 *   LOCKS      struct ckpt_img_lock[]           at most once, after FILES, before VMAS
 *   PIPE       struct ckpt_img_pipe + data      once per pipe, also before VMAS
 *   TIMERFD    struct ckpt_img_timerfd[]        at most once, also before VMAS
 *   FILEOBJ    struct ckpt_img_fileobj[]        at most once, before FILES and VMAS
 *   FILEDATA   struct ckpt_img_filedata + data  after FILEOBJ, by object and offset
 *   VDSO       struct ckpt_img_vdso + text      at most once, also before VMAS
 *   TIMERS     struct ckpt_img_timers + [nr]    at most once, also before VMAS
 *   SCHED      struct ckpt_img_sched[nr_threads] at most once, also before VMAS
 *   SYSVSHM    struct ckpt_img_sysvshm          per System V segment, also before VMAS
 *   SYSVDATA   struct ckpt_img_sysvdata + data  after its SYSVSHM, by offset
 *   SYSVSEM    struct ckpt_img_sysvsem + [nsems] per semaphore set, also before VMAS
 *   SYSVMSG    struct ckpt_img_sysvmsg + msgs   per message queue, also before VMAS
 *   ZOMBIE     struct ckpt_img_zombie           per zombie child, also before VMAS
 *   SEMUNDO    struct ckpt_img_semundo + [nsems] per semaphore set with adjustments,
 *                                               ascending id, also before VMAS
 *   TCP        struct ckpt_img_tcp + data       per TCP socket, also before VMAS
 *   MAC        struct ckpt_img_mac              at most once, after CREDS,
 *                                               right before VMAS
 *   VMAS       struct ckpt_img_vma[nr_vmas]     exactly once
 *   PAGES      struct ckpt_img_pages + data     any number, ascending address
 *   END        struct ckpt_img_end              last, exactly once
 *
 * Every count, length and address is bounded by the limits below; a reader
 * rejects an image that breaks any of them before acting on it.
 */
#ifndef _UAPI_LINUX_CKPT_IMAGE_H
#define _UAPI_LINUX_CKPT_IMAGE_H

#include <linux/types.h>

#define CKPT_IMG_MAGIC		0x54504b43	/* "CKPT" */
#define CKPT_IMG_VERSION	4
#define CKPT_IMG_ARCH_X86_64	1

#define CKPT_IMG_MAX_THREADS	4096
#define CKPT_IMG_MAX_VMAS	65536
#define CKPT_IMG_MAX_FILES	1024
#define CKPT_IMG_MAX_XSTATE	(64 * 1024)
#define CKPT_IMG_MAX_RUN_PAGES	256		/* pages in one PAGES section */
#define CKPT_IMG_PATH_MAX	512
#define CKPT_IMG_EXE_MAX	4096
#define CKPT_IMG_AUXV_WORDS	64
#define CKPT_IMG_NSIG		64
#define CKPT_IMG_NRLIMITS	16
#define CKPT_IMG_GREGS		27		/* struct user_regs_struct */
#define CKPT_IMG_ADDR_MAX	((1ULL << 47) - 4096)	/* x86-64 user space */
#define CKPT_IMG_PAGE_SIZE	4096

enum ckpt_sect_type {
	CKPT_SECT_HEADER = 1,
	CKPT_SECT_PROCESS,
	CKPT_SECT_THREAD,
	CKPT_SECT_VMAS,
	CKPT_SECT_PAGES,
	CKPT_SECT_END,
	CKPT_SECT_FILES,
	CKPT_SECT_FS,
	CKPT_SECT_SIGNALS,
	CKPT_SECT_EPOLL,
	CKPT_SECT_PIPE,
	CKPT_SECT_TIMERFD,
	CKPT_SECT_FILEOBJ,
	CKPT_SECT_FILEDATA,
	CKPT_SECT_VDSO,
	CKPT_SECT_TIMERS,
	CKPT_SECT_CREDS,
	CKPT_SECT_MAC,
	CKPT_SECT_TREE,
	CKPT_SECT_USOCK,
	CKPT_SECT_ULISTEN,
	CKPT_SECT_UPEND,
	CKPT_SECT_SYSVSHM,
	CKPT_SECT_SYSVDATA,
	CKPT_SECT_SYSVSEM,
	CKPT_SECT_SYSVMSG,
	CKPT_SECT_ZOMBIE,
	CKPT_SECT_TCP,
	CKPT_SECT_PTY,
	CKPT_SECT_UNAME,
	CKPT_SECT_SEMUNDO,
	CKPT_SECT_SCHED,
	CKPT_SECT_LOCKS,
	CKPT_SECT_INOTIFY,
	__CKPT_SECT_MAX,
	CKPT_SECT_MAX = __CKPT_SECT_MAX - 1
};

struct ckpt_sect {
	__u32 type;
	__u32 flags;		/* 0 */
	__u64 len;		/* payload bytes after this header */
	__u32 csum;		/* XXH64 of the payload, low 32 bits */
	__u32 hcsum;		/* XXH64 of this header, hcsum = 0, low 32 bits */
};

struct ckpt_img_header {
	__u32 magic;
	__u16 version;
	__u16 arch;
	__u32 page_size;
	__u32 nr_threads;
	__u32 nr_vmas;
	__u32 xstate_size;	/* bytes of XSAVE state per thread */
	__u64 xfeatures;	/* XCR0 user features the state uses */
	__u64 created_ns;	/* CLOCK_REALTIME at capture */
	__u64 reserved;		/* 0 */
	char kernel[65];	/* utsname release of the capturing kernel */
	__u8 pad[7];
	/*
	 * /proc/sys/kernel/random/boot_id of the capturing kernel ("" if
	 * unknown). Device numbers mean something only within one boot: a
	 * restart on another (another node, kernel or reboot) identifies
	 * files by inode number and size alone.
	 */
	char boot_id[40];
};

/*
 * A member of a process tree (CKPT_IOC_CHECKPOINT_TREE): the images of one
 * request share @id, a random number the engine drew for it, and number
 * their members 0 (the root) .. @nr_members - 1, parents before children.
 * Every pid of such an image (PROCESS's pid and ppid, the THREAD tids,
 * @pgid, @sid) is a number in the root's pid namespace, 0 for a process
 * that namespace does not see. @parent is the index of the member that
 * is the process's parent, CKPT_TREE_NO_PARENT for the root.
 * CKPT_TREE_ROOT: a root besides member 0 (CKPT_CHECKPOINT_ROOTS): its
 * parent was no member either, and @parent is CKPT_TREE_NO_PARENT; a
 * restart makes it a child of the tree's init, as member 0 is.
 * CKPT_TREE_SUBREAPER in @flags: the process was a child subreaper
 * (PR_SET_CHILD_SUBREAPER): orphans below it came to it, and will again.
 * CKPT_TREE_FOREGROUND: its process group was the foreground group of its
 * controlling terminal; a restart in a terminal's foreground hands that
 * terminal to it.
 * CKPT_TREE_CTTY: its controlling terminal was the slave of the tree's
 * pseudo-terminal numbered @ctty (a PTY section's @index), and its
 * session's leader is a member with the same; the leader takes the new
 * pair's slave as its controlling terminal again, and a member marked
 * CKPT_TREE_FOREGROUND gives it its process group as the foreground.
 * @ctty is 0 without it.
 */
#define CKPT_TREE_NO_PARENT	0xffffffffU

enum ckpt_img_tree_flags {
	CKPT_TREE_SUBREAPER	= 1 << 0,
	CKPT_TREE_FOREGROUND	= 1 << 1,
	CKPT_TREE_CTTY		= 1 << 2,
	CKPT_TREE_ROOT		= 1 << 3,
	__CKPT_TREE_F_ALL	= (1 << 4) - 1,
};

struct ckpt_img_tree {
	__u8 id[16];
	__u32 index;
	__u32 nr_members;	/* 1 .. 1024 */
	__u32 parent;
	__u32 pgid;
	__u32 sid;
	__u32 flags;		/* CKPT_TREE_* */
	__u32 ctty;		/* CKPT_TREE_CTTY: its terminal's pty number */
	__u32 reserved1;	/* 0 */
	__u64 reserved2;	/* 0 */
};

/* signal disposition, as rt_sigaction() takes it */
struct ckpt_img_sigaction {
	__u64 handler;
	__u64 flags;
	__u64 restorer;
	__u64 mask;
};

struct ckpt_img_rlimit {
	__u64 cur;
	__u64 max;
};

struct ckpt_img_process {
	__u32 pid;		/* in the capturing pid namespace */
	__u32 ppid;
	__u32 uid, euid, gid, egid;	/* as in CREDS, which must agree */
	__u32 personality;
	__u32 umask;
	__u32 vdso_csum;	/* checksum of the vdso text, as @csum */
	__u32 exit_signal;
	char comm[16];
	__u64 start_code, end_code, start_data, end_data;
	__u64 start_brk, brk, start_stack;
	__u64 arg_start, arg_end, env_start, env_end;
	__u64 vdso, vdso_size;	/* vdso text */
	__u64 vvar, vvar_size;	/* vvar pages just below it */
	__u64 auxv[CKPT_IMG_AUXV_WORDS];
	struct ckpt_img_sigaction sigaction[CKPT_IMG_NSIG];
	struct ckpt_img_rlimit rlimit[CKPT_IMG_NRLIMITS];
	char exe[CKPT_IMG_EXE_MAX];	/* the executable (/proc/PID/exe), absolute */
	__u64 exe_dev, exe_ino;	/* its identity (stat's st_dev, st_ino) */
};

/*
 * @exe_dev of a process whose executable was deleted while it ran, or is
 * a memfd: the image carries it by content, and @exe_ino is its FILEOBJ
 * entry (CKPT_FILE_DELETED or CKPT_FILE_MEMFD), @exe its name without
 * " (deleted)". No encoded device number is this large.
 */
#define CKPT_IMG_EXE_OBJ	(~0ULL)

/*
 * The process's credentials, which all its threads shared: user and group
 * ids as the checkpointer's user namespace names them (the process was in
 * that namespace), the supplementary groups (@nr_groups __u32 ids follow,
 * ascending), the capability sets (bit n for capability n), whether it
 * was dumpable and whether it had no_new_privs. The restarted process gets
 * these ids and groups if the restarter could switch to them itself, and
 * no capability that the image or the restarter lacks
 * (Documentation/engine.md, "Credentials").
 */
#define CKPT_IMG_MAX_GROUPS	65536		/* NGROUPS_MAX */
#define CKPT_IMG_NO_ID		0xffffffffU	/* (uid_t)-1: never an id */

enum ckpt_img_creds_flags {
	CKPT_CREDS_NO_NEW_PRIVS	= 1 << 0,	/* prctl(PR_SET_NO_NEW_PRIVS) */
	__CKPT_CREDS_ALL	= (1 << 1) - 1,
};

struct ckpt_img_creds {
	__u32 uid, euid, suid, fsuid;
	__u32 gid, egid, sgid, fsgid;
	__u64 cap_inheritable;
	__u64 cap_permitted;
	__u64 cap_effective;	/* within cap_permitted */
	__u64 cap_bset;		/* the bounding set */
	__u64 cap_ambient;	/* within cap_permitted and cap_inheritable */
	__u32 dumpable;		/* 0, 1 (SUID_DUMP_USER) or 2 (SUID_DUMP_ROOT) */
	__u32 nr_groups;	/* at most CKPT_IMG_MAX_GROUPS */
	__u32 flags;		/* CKPT_CREDS_* */
	__u32 pad;		/* 0 */
	/* followed by nr_groups __u32 group ids */
};

/*
 * The engine's authentication of an image (Documentation/security.md): a
 * keyed MAC, with a key only the engine holds (set by the administrator,
 * shared by a cluster; random per module load otherwise), over every byte
 * of every section before this one and of the VMAS section after it
 * (headers, payloads and padding, in file order, after the ASCII string
 * "ckpt image MAC" and its NUL). What a process runs as, where it resumes
 * and what it maps are covered; page data (PAGES) is covered by its
 * checksums only (security.md says why). An image without MAC restarts
 * only as the restarter itself, and only when asked to.
 */
#define CKPT_MAC_HMAC_SHA256	1
#define CKPT_MAC_LEN		32
#define CKPT_MAC_KEY_ID_LEN	8

struct ckpt_img_mac {
	__u32 alg;		/* CKPT_MAC_HMAC_SHA256 */
	__u32 reserved;		/* 0 */
	__u8 key_id[CKPT_MAC_KEY_ID_LEN];	/* names the key, not secret */
	__u8 mac[CKPT_MAC_LEN];
};

enum ckpt_img_thread_flags {
	CKPT_THREAD_IN_SYSCALL = 1 << 0,	/* regs describe a syscall exit */
	CKPT_THREAD_NICE = 1 << 1,	/* @nice recorded (not by older engines) */
	__CKPT_THREAD_ALL = (1 << 2) - 1,
};

struct ckpt_img_thread {
	__u32 tid;
	__u32 flags;
	__u64 blocked;		/* signal mask */
	__u64 clear_child_tid;
	__u64 robust_list, robust_list_len;
	__u64 rseq, rseq_len;
	__u32 rseq_sig;
	__u32 xstate_size;	/* bytes of XSAVE state after this struct */
	__u64 sas_ss_sp, sas_ss_size;
	__u32 sas_ss_flags;
	__s32 nice;		/* CKPT_THREAD_NICE: -20 to 19; else 0 */
	char comm[16];
	__u64 gregs[CKPT_IMG_GREGS];	/* struct user_regs_struct */
};

/*
 * SCHED (optional, once, before VMAS): how each thread is scheduled, one
 * entry per THREAD section, in their order. Its policy and real-time
 * priority as sched_getattr() shows them, the I/O priority it set
 * (ioprio_set(); 0: none, it follows its nice value) and the CPUs it may
 * run on (sched_getaffinity()), unless any will do. A restart binds each
 * thread to those CPUs if the restarter may use them all, and sets the
 * policy and I/O priority where the restarter may (a real-time one needs
 * privilege): Documentation/engine.md, "Scheduling".
 */
#define CKPT_IMG_CPU_WORDS	16	/* CPUs 0 to 1023 */
/* An I/O priority's class (RT 1, BE 2, IDLE 3) and level (0 to 7). */
#define CKPT_IMG_IOPRIO_MASK	0x6007U

enum ckpt_img_sched_flags {
	CKPT_SCHED_ALL_CPUS	= 1 << 0,	/* any CPU: @cpus all 0 */
	CKPT_SCHED_RESET_ON_FORK = 1 << 1,	/* SCHED_RESET_ON_FORK */
	__CKPT_SCHED_ALL	= (1 << 2) - 1,
};

struct ckpt_img_sched {
	__u32 policy;		/* SCHED_NORMAL (0), _FIFO, _RR, _BATCH or _IDLE */
	__u32 rt_priority;	/* 1 to 99 for _FIFO and _RR; else 0 */
	__u32 flags;		/* CKPT_SCHED_* */
	__u32 ioprio;		/* CKPT_IMG_IOPRIO_MASK: class << 13 | level; 0 */
	__u64 cpus[CKPT_IMG_CPU_WORDS];	/* bit n of word n / 64: CPU n */
};

enum ckpt_img_vma_flags {
	CKPT_VMA_SHARED		= 1 << 0,	/* MAP_SHARED */
	CKPT_VMA_FILE		= 1 << 1,	/* backed by @path */
	CKPT_VMA_GROWSDOWN	= 1 << 2,
	CKPT_VMA_HEAP		= 1 << 3,	/* the brk area */
	CKPT_VMA_STACK		= 1 << 4,	/* the main thread's stack */
	CKPT_VMA_VDSO		= 1 << 5,	/* not stored; kept from restart */
	CKPT_VMA_VVAR		= 1 << 6,	/* not stored; kept from restart */
	CKPT_VMA_DONTFORK	= 1 << 7,
	CKPT_VMA_DONTDUMP	= 1 << 8,
	CKPT_VMA_MAYWRITE	= 1 << 9,	/* file opened for writing */
	CKPT_VMA_NORESERVE	= 1 << 10,	/* MAP_NORESERVE: no commit charge */
	CKPT_VMA_FILEOBJ	= 1 << 11,	/* file: FILEOBJ entry @ino */
	CKPT_VMA_SYSV		= 1 << 12,	/* System V segment @ino (its id) */
	/*
	 * The open file the mapping holds carries the process's flock()
	 * lock, shared or exclusive, which no descriptor of it holds (a JVM's
	 * hsperfdata file): taken again on the file mapped there. On the
	 * first of the file's mappings only.
	 */
	CKPT_VMA_FLOCK_READ	= 1 << 13,
	CKPT_VMA_FLOCK_WRITE	= 1 << 14,
	__CKPT_VMA_ALL		= (1 << 15) - 1,
};

/* Mappings with CKPT_VMA_FLOCK_READ or _WRITE in one image, at most. */
#define CKPT_IMG_MAX_FLOCK_MAPS	64

struct ckpt_img_vma {
	__u64 start, end;
	__u64 pgoff;		/* file offset, in pages */
	__u32 prot;		/* PROT_READ | PROT_WRITE | PROT_EXEC */
	__u32 flags;		/* CKPT_VMA_* */
	__u64 dev, ino;		/* the file's identity at capture */
	__u64 size;		/* the file's size at capture */
	__u64 nr_pages;		/* populated; at most this many stored */
	char path[CKPT_IMG_PATH_MAX];
};

/*
 * An open file (descriptors above 2; 0-2 are the restarter's). A regular
 * file's content stays in the file; the restarter reopens it by path. A
 * descriptor of /dev/ckpt is reopened fresh; if it carried the process's
 * callback registration (CKPT_FILE_REGISTERED), the restarter registers
 * the new one as restarted, so libckpt's callbacks learn of the restart.
 * A descriptor that shares its open file (dup(), fcntl(F_DUPFD)) with a
 * lower one is CKPT_FILE_SHARED: @ino is that lower descriptor (an entry
 * of its own, neither shared nor a pipe end, which share by their PIPE),
 * @open_flags and @path are that entry's, @pos and @dev 0;
 * the restarter dup()s it, so both keep one position and one set of flags.
 */
enum ckpt_img_file_flags {
	CKPT_FILE_CLOEXEC	= 1 << 0,
	CKPT_FILE_REGISTERED	= 1 << 1,
	/*
	 * A tree's member, a regular file, directory, eventfd, signalfd,
	 * timerfd, epoll, memfd or deleted file: its open file is one other
	 * members hold too (shared by fork), named across the tree's images
	 * by @dev and @ino (an eventfd, timerfd, epoll, memfd or deleted
	 * file: by @dev, a number of the tree's, not 0, a memfd's or deleted
	 * file's @ino still its FILEOBJ entry; a signalfd: by @ino, one of
	 * the tree's, with its mask in @dev); the restart makes it, or opens
	 * it from the tree's object, once for all of them (an epoll's items
	 * from the image of the member that comes first in the tree).
	 */
	CKPT_FILE_TREE_SHARED	= 1 << 2,
	/*
	 * A regular file or directory of the kernel's own file systems, a
	 * procfs (CKPT_FILE_PROCFS) or a sysfs (CKPT_FILE_SYSFS): a view of
	 * the kernel, whose inode numbers are made afresh by every mount and
	 * boot. The restarter reopens it by path and checks that it is on a
	 * file system of that type instead of @dev and @ino. A file of a
	 * process's /proc/PID directory is its own process's only (the
	 * engine refuses another process's), reopened once that process has
	 * its pid again.
	 */
	CKPT_FILE_PROCFS	= 1 << 3,
	CKPT_FILE_SYSFS		= 1 << 4,
	__CKPT_FILE_ALL		= (1 << 5) - 1,
};

/*
 * A tree's regular file or directory open more than once, several of its
 * open files each held by several members (CKPT_FILE_TREE_SHARED): which
 * of them an entry's is, numbered from 0 per file across the tree's
 * images, in bits 16-31 of @flags; the restart opens each once. 0 in
 * every other entry.
 */
#define CKPT_FILE_OPEN_NR_SHIFT	16
#define CKPT_FILE_OPEN_NR_MAX	0xffffU
#define CKPT_FILE_OPEN_NR(flags)	((flags) >> CKPT_FILE_OPEN_NR_SHIFT)

enum ckpt_img_file_kind {
	CKPT_FILE_REGULAR,
	CKPT_FILE_CKPT_DEV,	/* /dev/ckpt; pos, dev and ino are 0 */
	CKPT_FILE_DIR,		/* a directory: like a regular file */
	CKPT_FILE_CHR,		/* /dev/null, zero, full, random, urandom: dev is st_rdev, ino 0 */
	CKPT_FILE_EVENTFD,	/* pos: the count; ino: CKPT_EVENTFD_SEMAPHORE */
	CKPT_FILE_SIGNALFD,	/* dev: the signal mask (bit n-1 for signal n); ino: 0 but tree-shared */
	CKPT_FILE_EPOLL,	/* its interest list is in the EPOLL section; dev, ino: 0 but tree-shared */
	CKPT_FILE_PIPE,		/* ino: the pipe (its PIPE section); open_flags: the end */
	CKPT_FILE_TIMERFD,	/* its timer is in the TIMERFD section; dev, ino: 0 but tree-shared */
	CKPT_FILE_FIFO,		/* a named pipe; ino: its FILEOBJ entry */
	CKPT_FILE_MEMFD,	/* ino: its FILEOBJ entry (content, seals, name) */
	CKPT_FILE_DELETED,	/* a regular file unlinked while open; ino: FILEOBJ */
	CKPT_FILE_SHARED,	/* ino: the fd whose open file this one shares */
	/*
	 * A tree's member other than the root: the root's descriptor @ino
	 * (0-2), which the restart re-attaches to the restarter's.
	 */
	CKPT_FILE_STDIO,
	/*
	 * A tree's member: anonymous memory mapped MAP_SHARED, as a FILEOBJ
	 * entry its mappings name (never a descriptor), so that members that
	 * share it by fork share it again after the restart.
	 */
	CKPT_FILE_SHMEM,
	/*
	 * An end of a connected UNIX socket pair (socketpair()): @ino
	 * is its socket's inode number, which its USOCK section names, @dev
	 * its peer's (0: the peer is closed); pos 0.
	 */
	CKPT_FILE_UNIX,
	/*
	 * A TCP socket (IPv4 or IPv6): @ino is its socket's inode number,
	 * which its TCP section names; dev and pos 0.
	 */
	CKPT_FILE_TCP,
	/*
	 * A tree's member: an end of a pseudo-terminal whose master a member
	 * holds: @ino is the pty's number (its PTY entry), @dev the end
	 * (CKPT_PTY_MASTER, CKPT_PTY_SLAVE); pos 0.
	 */
	CKPT_FILE_PTY,
	/*
	 * A FILEOBJ entry only (never a descriptor's kind): a regular file
	 * on a node's own memory file system (tmpfs) that the process maps
	 * shared or holds open (for writing only if it may open it for
	 * reading), taken with
	 * CKPT_CHECKPOINT_LOCAL_FILES. Its mappings name the entry; its
	 * descriptors stay CKPT_FILE_REGULAR entries, by path. At restart the
	 * file at its path is used if it is the file it was, or it is made
	 * again with the stored content where the path is gone.
	 */
	CKPT_FILE_LOCAL,
	/*
	 * An inotify instance: its watches in the INOTIFY section; @pos the
	 * watch descriptor the next inotify_add_watch() would get, @dev and
	 * @ino 0; its path "anon_inode:inotify".
	 */
	CKPT_FILE_INOTIFY,
	__CKPT_FILE_KIND_MAX,
};

#define CKPT_EVENTFD_SEMAPHORE	1

struct ckpt_img_file {
	__u32 fd;
	__u32 open_flags;	/* O_ACCMODE | O_APPEND | O_NONBLOCK | O_SYNC */
	__u32 flags;		/* CKPT_FILE_* */
	__u32 kind;		/* CKPT_FILE_REGULAR, ... */
	__u64 pos;
	__u64 dev, ino;		/* identity (stat's st_dev, st_ino) */
	char path[CKPT_IMG_PATH_MAX];
};

/*
 * The process's working and root directories, as absolute paths from the
 * checkpointer's root directory, with their identities as stat() shows
 * them. A root of "/" is the checkpointer's own: the process restarts in
 * the restarter's root. Any other root is entered (chroot) at restart,
 * after every path of the image (these, open files, mappings, the
 * executable) has been opened from the restarter's root.
 */
#define CKPT_IMG_FS_PATH_MAX	4096

struct ckpt_img_fs {
	__u64 cwd_dev, cwd_ino;
	__u64 root_dev, root_ino;
	__u64 reserved[2];	/* 0 */
	char cwd[CKPT_IMG_FS_PATH_MAX];
	char root[CKPT_IMG_FS_PATH_MAX];
};

/*
 * Pending signals, queued again by the restarter in the same order, and the
 * three interval timers as setitimer() re-arms them: value and interval, in
 * nanoseconds. ITIMER_REAL's value is its time left. ITIMER_VIRTUAL counts
 * the process's user CPU time, ITIMER_PROF its user and system CPU time;
 * setitimer() adds one tick to the value of these two, so their value is
 * the CPU time left less that tick of the capturing kernel (the one a
 * restart runs on), at least 1 when armed. No time in the image exceeds
 * CKPT_IMG_MAX_TIME_NS (KTIME_MAX).
 */
#define CKPT_IMG_MAX_SIGQUEUE	1024
#define CKPT_IMG_MAX_TIME_NS	0x7fffffffffffffffULL

struct ckpt_img_siginfo {
	__u32 tid;		/* pending for this thread; 0: for the process */
	__u32 signo;
	__u8 info[128];		/* siginfo_t, as rt_sigqueueinfo() takes it */
};

struct ckpt_img_signals {
	__u64 real_value_ns;	/* ITIMER_REAL: time left; 0: disarmed */
	__u64 real_interval_ns;
	__u32 nr;		/* struct ckpt_img_siginfo entries that follow */
	__u32 pad;
	__u64 virt_value_ns;	/* ITIMER_VIRTUAL: user CPU time left - 1 tick; 0: disarmed */
	__u64 virt_interval_ns;
	__u64 prof_value_ns;	/* ITIMER_PROF: CPU time left - 1 tick; 0: disarmed */
	__u64 prof_interval_ns;
};

/*
 * The process's POSIX timers (timer_create()), by ascending id. The
 * restarter creates each again with the same id (the kernel hands ids out
 * in order, so it creates and deletes timers until the wanted one comes),
 * clock and notification, arms it with the time it had left, then creates
 * and deletes timers until the next id is @next_id (if that is at most
 * CKPT_IMG_MAX_TIMER_ID); the engine then checks them and sets their
 * overrun counts. A signal a timer had queued and not delivered is a
 * SIGNALS entry like any other (si_code SI_TIMER).
 */
#define CKPT_IMG_MAX_TIMERS	4096
#define CKPT_IMG_MAX_TIMER_ID	(1U << 20)	/* ids below this */

enum ckpt_img_timer_flags {
	CKPT_TIMER_ABSTIME	= 1 << 0,	/* CLOCK_REALTIME: value_ns is the deadline */
	CKPT_TIMER_PENDING	= 1 << 1,	/* its signal was pending (in SIGNALS) */
	__CKPT_TIMER_ALL	= (1 << 2) - 1,
};

struct ckpt_img_timers {
	__u32 nr;		/* struct ckpt_img_timer entries that follow */
	__u32 next_id;		/* the id the next timer_create() hands out */
};

struct ckpt_img_timer {
	__u32 id;		/* timer_t, below CKPT_IMG_MAX_TIMER_ID */
	__s32 clockid;		/* as timer_create() takes it at restart */
	__u32 notify;		/* SIGEV_SIGNAL, _NONE, _THREAD, _SIGNAL|_THREAD_ID */
	__s32 signo;		/* sigev_signo (not checked for SIGEV_NONE) */
	__u32 tid;		/* SIGEV_THREAD_ID: the thread signalled; else 0 */
	__u32 flags;		/* CKPT_TIMER_* */
	__u64 sival;		/* sigev_value */
	__u64 value_ns;		/* time left (CPU time for CPU clocks); 0: disarmed */
	__u64 interval_ns;
	__u32 overrun_last;	/* what timer_getoverrun() returns */
	__u32 overrun;		/* expirations counted for the next signal */
};

/*
 * An anonymous pipe both of whose ends are the process's: the bytes it
 * holds and its size. Its descriptors are FILES entries of kind
 * CKPT_FILE_PIPE with the same ino.
 */
#define CKPT_IMG_MAX_PIPE	(1U << 20)	/* /proc/sys/fs/pipe-max-size */

struct ckpt_img_pipe {
	__u64 ino;
	__u32 len;		/* bytes of data that follow */
	__u32 capacity;		/* F_GETPIPE_SZ */
	__u8 data[];
};

/*
 * An end of a connected UNIX socket pair whose other end is the process's
 * too (a tree's: a member's), or closed: what is queued for it to read,
 * which the restart sends again from its peer. Its descriptors are FILES
 * entries of kind CKPT_FILE_UNIX with the same ino. A stream socket's
 * @data is its bytes; a datagram or seqpacket socket's is its messages,
 * each a __u32 length and its bytes, padded to 4 bytes.
 */
#define CKPT_IMG_MAX_USOCK	(4U << 20)	/* bytes queued on one socket */

enum {
	CKPT_USOCK_SHUT_RD	= 1 << 0,	/* shutdown(SHUT_RD) */
	CKPT_USOCK_SHUT_WR	= 1 << 1,	/* shutdown(SHUT_WR) */
	CKPT_USOCK_PASSCRED	= 1 << 2,	/* SO_PASSCRED set */
	__CKPT_USOCK_F_ALL	= (1 << 3) - 1,
};

struct ckpt_img_usock {
	__u64 ino;		/* its socket's inode number */
	__u64 peer;		/* its peer's; 0: the peer is closed */
	__u32 type;		/* SOCK_STREAM, SOCK_DGRAM, SOCK_SEQPACKET */
	__u32 shutdown;		/* CKPT_USOCK_SHUT_*, CKPT_USOCK_PASSCRED */
	__u32 sndbuf;		/* SO_SNDBUF as getsockopt() reads it */
	__u32 len;		/* bytes of data that follow */
	__u8 data[];
};

/*
 * A UNIX socket's name: a path, absolute (as the checkpointer's root sees
 * it) and NUL-terminated, @len counting the NUL, whose socket file has
 * @mode, @uid and @gid (in the checkpointer's user namespace); or an
 * abstract name, @addr[0] 0 and @len its bytes with that 0, no owner.
 * Nothing after it. @len 0: no name (where a section allows it).
 */
#define CKPT_USOCK_ADDR_MAX	108	/* sizeof(sun_path) */

struct ckpt_img_uaddr {
	__u32 mode;		/* a path's permission bits (07777) */
	__u32 uid;
	__u32 gid;
	__u32 len;
	__u8 addr[CKPT_USOCK_ADDR_MAX];
};

/*
 * A listening UNIX stream or seqpacket socket (the process's; a tree's:
 * only its members hold it) with no connection waiting to be accepted.
 * Its descriptors are FILES entries of kind CKPT_FILE_UNIX with the same
 * ino (and dev 0). @name is its name, never empty. The restart binds a
 * socket to the name (a socket file left at the path is unlinked first)
 * and listens.
 */
struct ckpt_img_ulisten {
	__u64 ino;		/* its socket's inode number */
	__u32 type;		/* SOCK_STREAM, SOCK_SEQPACKET */
	__u32 backlog;		/* listen()'s, as the kernel keeps it */
	struct ckpt_img_uaddr name;
	__u32 flags;		/* CKPT_USOCK_PASSCRED (inherited when accepting) */
};

/*
 * A UNIX socket that is no pair's end and does not listen (engine.md,
 * "UNIX sockets with names"): a datagram socket with a name of its own
 * (@name), or connected to a socket with one (@peer: a member's, or one
 * outside, as a syslog client's /dev/log), or a socket of any type not
 * connected at all (made, perhaps bound). @data is what is queued for it
 * to read, messages as a USOCK section's; only a socket with a name has
 * any. Its descriptors are FILES entries of kind CKPT_FILE_UNIX with the
 * same ino (and dev 0). The restart makes the socket, binds it to @name
 * (a socket file left at the path is unlinked first), sends it its
 * messages again from a socket with no name, and once every socket of the
 * image (a tree's: of its images) has its name, connects it to @peer's.
 * @peer has no owner.
 */
struct ckpt_img_uname {
	__u64 ino;		/* its socket's inode number */
	__u32 type;		/* SOCK_STREAM, SOCK_DGRAM, SOCK_SEQPACKET */
	__u32 shutdown;		/* CKPT_USOCK_SHUT_*, CKPT_USOCK_PASSCRED */
	__u32 sndbuf;		/* SO_SNDBUF as getsockopt() reads it */
	__u32 len;		/* bytes of data that follow */
	struct ckpt_img_uaddr name;
	struct ckpt_img_uaddr peer;
	__u8 data[];
};

/*
 * A connection waiting to be accepted on a listening socket (ULISTEN
 * @listener), in the order accept() would take it: what its client sent
 * (@data, as a USOCK section's). @id names it: the client's USOCK section
 * has it as its peer. Bit 63 is set in every @id and in no inode number.
 * @client is the client's socket inode number, 0 when the client closed
 * it. The restart connects to the listening socket again from the client
 * and sends those bytes, so the connection waits there again.
 */
#define CKPT_UPEND_ID		(1ULL << 63)
#define CKPT_IMG_MAX_UPENDS	64	/* waiting on one listening socket */

struct ckpt_img_upend {
	__u64 listener;
	__u64 id;
	__u64 client;
	__u32 type;		/* the listening socket's */
	__u32 len;		/* bytes of data that follow */
	__u8 data[];
};

/*
 * A TCP socket, IPv4 or IPv6 (Documentation/engine.md, "TCP"): a
 * connection both of whose ends are the process's (a tree's: members'),
 * a listening socket (and the connections waiting in its queue), or a
 * socket neither connected nor listening. Its descriptors are FILES
 * entries of kind CKPT_FILE_TCP with the same ino. A connection's @data
 * is its send queue, the bytes from @snd_una to @write_seq (those from
 * @snd_nxt on not sent yet), then its receive queue, the bytes from
 * @copied_seq to @rcv_nxt; the restart makes it again with TCP_REPAIR,
 * its sequence numbers, windows and options as they were, and the stack
 * sends again whatever its peer had not acknowledged. Addresses are in
 * network order (IPv4: the first 4 bytes), ports in host order.
 *
 * A socket whose connect() is under way (SYN_SENT: no answer yet) has its
 * addresses and options, no sequence numbers and no data: the restart
 * binds it to its address and port and connects it again, to the same
 * address (through a job's address map), as the process had asked.
 *
 * A half-closed connection is an established one with CKPT_TCP_FIN_OUT
 * (it shut down writing: FIN_WAIT1, FIN_WAIT2) or CKPT_TCP_FIN_IN (its
 * peer did: CLOSE_WAIT). Its sequence numbers leave the FIN out, which
 * takes one: the restart makes the connection established, sends what
 * it had not sent, then shuts it down for writing again, and that FIN
 * brings the peer's end back to where it was.
 *
 * A connection waiting in a listening socket's accept queue (made by the
 * stack, not accepted by the process yet) is a CKPT_TCP_WAITING section
 * after its listener's, with the listener's @ino (it has no descriptor),
 * its sequence numbers and its receive queue only (it has sent nothing):
 * at most CKPT_TCP_MAX_WAITING per listener. Its other end is a member's
 * established socket: the restart connects that end again, anew, to the
 * listener made again, and sends this section's bytes and its own unsent
 * and unacknowledged ones through it, in order, then its FIN if it had
 * shut down writing; the connection waits to be accepted again.
 */
#define CKPT_IMG_MAX_TCPQ	(16U << 20)	/* bytes in one socket's queues */
#define CKPT_TCP_MAX_WAITING	64		/* waiting sections of a listener */

enum {
	CKPT_TCP_CLOSED = 0,	/* neither connected nor listening */
	CKPT_TCP_ESTABLISHED,
	CKPT_TCP_LISTEN,
	CKPT_TCP_CONNECTING,	/* a connect() under way (SYN_SENT): made again */
	CKPT_TCP_WAITING,	/* in its listener's accept queue: connected again */
	__CKPT_TCP_STATE_MAX,
};

enum {
	CKPT_TCP_NODELAY	= 1 << 0,	/* TCP_NODELAY */
	CKPT_TCP_CORK		= 1 << 1,	/* TCP_CORK */
	CKPT_TCP_KEEPALIVE	= 1 << 2,	/* SO_KEEPALIVE */
	CKPT_TCP_REUSEADDR	= 1 << 3,	/* SO_REUSEADDR */
	CKPT_TCP_REUSEPORT	= 1 << 4,	/* SO_REUSEPORT */
	CKPT_TCP_V6ONLY		= 1 << 5,	/* IPV6_V6ONLY */
	CKPT_TCP_SNDBUF		= 1 << 6,	/* SO_SNDBUF set: @sndbuf fixed */
	CKPT_TCP_RCVBUF		= 1 << 7,	/* SO_RCVBUF set: @rcvbuf fixed */
	CKPT_TCP_BOUND		= 1 << 8,	/* a closed socket's bind() */
	CKPT_TCP_OPT_SACK	= 1 << 9,	/* negotiated: SACK permitted */
	CKPT_TCP_OPT_TSTAMP	= 1 << 10,	/* timestamps */
	CKPT_TCP_OPT_WSCALE	= 1 << 11,	/* window scaling */
	CKPT_TCP_SHUT_RD	= 1 << 12,	/* shutdown(SHUT_RD) */
	CKPT_TCP_FIN_OUT	= 1 << 13,	/* it shut down writing: its FIN follows write_seq */
	CKPT_TCP_FIN_IN		= 1 << 14,	/* its peer's FIN came after rcv_nxt */
	__CKPT_TCP_ALL		= (1 << 15) - 1,
};

struct ckpt_img_tcp {
	__u64 ino;		/* its socket's inode number */
	__u32 family;		/* AF_INET, AF_INET6 */
	__u32 state;		/* CKPT_TCP_* */
	__u32 flags;		/* CKPT_TCP_* flags */
	__u32 backlog;		/* listen()'s, as the kernel keeps it */
	__u8 src[16], dst[16];	/* local and peer address */
	__u16 sport, dport;
	__u32 sndbuf, rcvbuf;	/* as getsockopt() reads them */
	__u32 keepidle, keepintvl, keepcnt;	/* seconds, seconds, probes; 0: default */
	__u32 mss;		/* the peer's MSS (TCPOPT_MSS) */
	__u32 snd_wscale, rcv_wscale;
	__u32 timestamp;	/* TCP_TIMESTAMP */
	__u32 snd_una, snd_nxt, write_seq;
	__u32 copied_seq, rcv_nxt;
	__u32 snd_wl1, snd_wnd, max_window, rcv_wnd, rcv_wup;
	__u32 len;		/* bytes of data that follow */
	__u32 pad;
	__u8 data[];
};

/*
 * PTY: one entry for each pseudo-terminal the process holds an end of, in
 * a tree whose members hold its master (every member holding an end has
 * the same entry). The restart opens a new pair and sets the slave's
 * termios and window size, the master's packet mode and lock, as they
 * were; its number in /dev/pts may differ. No byte waited unread in it
 * at the checkpoint (the engine refuses one that has some, EAGAIN).
 */
enum {
	CKPT_PTY_MASTER = 1,
	CKPT_PTY_SLAVE = 2,
};

enum {
	CKPT_PTY_PACKET	= 1 << 0,	/* TIOCPKT on */
	CKPT_PTY_LOCKED	= 1 << 1,	/* TIOCSPTLCK: the slave cannot be opened */
	__CKPT_PTY_ALL	= (1 << 2) - 1,
};

#define CKPT_PTY_NCCS	19		/* the kernel's struct termios */

struct ckpt_img_pty {
	__u32 index;		/* its number in /dev/pts when captured */
	__u32 flags;		/* CKPT_PTY_* */
	__u32 iflag, oflag, cflag, lflag;	/* the slave's termios */
	__u32 ispeed, ospeed;
	__u8 line;
	__u8 cc[CKPT_PTY_NCCS];
	__u16 rows, cols, xpixel, ypixel;	/* its window size */
	__u32 reserved[3];
};

/* A timerfd: re-armed relative to the restart with the time it had left. */
struct ckpt_img_timerfd {
	__u32 fd;
	__s32 clockid;
	__u32 settime_flags;	/* TFD_TIMER_ABSTIME, TFD_TIMER_CANCEL_ON_SET */
	__u32 pad;
	__u64 ticks;		/* expirations not read yet */
	__u64 value_ns;		/* time left; 0: disarmed */
	__u64 interval_ns;
};

/*
 * A file whose content the image carries: a FIFO (reopened by path, its
 * buffered bytes written back), a memfd or a regular file unlinked while
 * open (both made anew at restart: memfd_create(), O_TMPFILE), and a tree
 * member's file on a node's own memory file system (CKPT_FILE_LOCAL: used
 * at its path if still there, else made again). FILES entries
 * of kinds CKPT_FILE_FIFO, _MEMFD and _DELETED, and mappings with
 * CKPT_VMA_FILEOBJ, name an entry by its index in @ino; several may name the
 * same one, which stays one file. The content is in FILEDATA sections.
 *
 * In a tree's images, an object several members hold (the same @dev and
 * @ino, and kind) is one file for all of them: its content is in the
 * image of the first member (in tree order) that holds it, and the others
 * store none of it (@stored 0). A tree member's MAP_SHARED anonymous
 * memory is an object of kind CKPT_FILE_SHMEM, named "/dev/zero".
 */
#define CKPT_IMG_MAX_FILEOBJS	1024
#define CKPT_IMG_MAX_FILESIZE	(1ULL << 30)	/* memfd, deleted, local file */
#define CKPT_IMG_MAX_FILECHUNK	(1U << 20)	/* bytes in one FILEDATA */
#define CKPT_IMG_MEMFD_NAME_MAX	249		/* MFD_NAME_MAX_LEN */
#define CKPT_IMG_SEALS_ALL	0x3f		/* F_SEAL_SEAL ... F_SEAL_EXEC */

struct ckpt_img_fileobj {
	__u32 kind;		/* CKPT_FILE_FIFO, _MEMFD, _DELETED, _SHMEM, _LOCAL */
	__u32 mode;		/* permission bits (07777) */
	__u32 seals;		/* memfd: F_GET_SEALS; else 0 */
	__u32 capacity;		/* FIFO: F_GETPIPE_SZ; else 0 */
	__u64 dev, ino;		/* identity at capture (stat's st_dev, st_ino) */
	__u64 size;		/* file size; FIFO: bytes buffered */
	__u64 stored;		/* bytes in its FILEDATA sections (holes left out) */
	char name[CKPT_IMG_PATH_MAX];	/* memfd: its name; else its path */
};

/* A run of a FILEOBJ entry's bytes: section length - 16 of them. */
struct ckpt_img_filedata {
	__u32 obj;		/* index into FILEOBJ */
	__u32 pad;
	__u64 offset;		/* where in the file */
	__u8 data[];
};

/*
 * One watched descriptor of an epoll instance, as epoll_ctl() adds it; the
 * EPOLL section follows FILES, whose entries its items name.
 */
#define CKPT_IMG_MAX_EPITEMS	16384

struct ckpt_img_epitem {
	__u32 epfd;		/* the epoll descriptor (a FILES entry) */
	__u32 tfd;		/* the watched descriptor */
	__u32 events;		/* struct epoll_event.events */
	__u32 pad;
	__u64 data;		/* struct epoll_event.data */
};

/*
 * The file locks the process holds (flock(), fcntl()'s process-associated
 * record locks, open file description locks), taken again by the
 * restarter once every descriptor is in place; the LOCKS section follows
 * FILES, whose entries its locks name. @fd is a descriptor of the locked
 * open file (a record lock's: one of the locked file opened for reading
 * for a read lock, for writing for a write lock); @end is the last byte
 * locked, CKPT_LOCK_TO_EOF for a lock to the end of the file and beyond
 * (a flock: @start 0, @end CKPT_LOCK_TO_EOF).
 */
#define CKPT_IMG_MAX_LOCKS	4096
#define CKPT_LOCK_TO_EOF	0x7fffffffffffffffULL

enum ckpt_img_lock_kind {
	CKPT_LOCK_FLOCK = 1,	/* flock(): the open file's */
	CKPT_LOCK_POSIX,	/* F_SETLK: the process's */
	CKPT_LOCK_OFD,		/* F_OFD_SETLK: the open file's */
};

enum ckpt_img_lock_type {
	CKPT_LOCK_READ = 1,	/* LOCK_SH, F_RDLCK */
	CKPT_LOCK_WRITE,	/* LOCK_EX, F_WRLCK */
};

struct ckpt_img_lock {
	__u32 fd;
	__u16 kind;		/* CKPT_LOCK_FLOCK, ... */
	__u16 type;		/* CKPT_LOCK_READ or CKPT_LOCK_WRITE */
	__u64 start, end;	/* bytes locked, @end included */
};

/*
 * The watches of the process's inotify instances, after FILES, sorted by
 * descriptor and, per descriptor, by watch descriptor: @fd an INOTIFY
 * entry of FILES, @wd its watch descriptor (1 to CKPT_INOTIFY_MAX_WD - 1,
 * below that entry's @pos), @mask the events and the IN_ONESHOT and
 * IN_EXCL_UNLINK flags, as inotify_add_watch() takes them, @path the
 * watched file or directory, @dev and @ino its identity as stat() shows
 * it. The restarter adds each again at its path, with its number.
 */
#define CKPT_IMG_MAX_INOTIFY	1024
#define CKPT_INOTIFY_MAX_WD	0x7fffffffU
/* IN_ALL_EVENTS | IN_EXCL_UNLINK | IN_ONESHOT */
#define CKPT_INOTIFY_MASK	0x84000fffU

struct ckpt_img_inotify {
	__u32 fd;
	__s32 wd;
	__u32 mask;
	__u32 reserved;		/* 0 */
	__u64 dev, ino;
	char path[CKPT_IMG_PATH_MAX];
};

/*
 * The process's vdso as the capturing kernel made it: its entry points and
 * its text (PROCESS's vdso_size bytes follow; their checksum is PROCESS's
 * vdso_csum). A restart on a kernel whose vdso differs keeps the text where
 * it was, each entry point turned into a jump to this kernel's.
 */
#define CKPT_IMG_VDSO_SYMS	32
#define CKPT_IMG_VDSO_NAME	32

struct ckpt_img_vdso_sym {
	char name[CKPT_IMG_VDSO_NAME];	/* NUL-terminated, "" past nr_syms */
	__u64 offset;			/* from the vdso's start */
};

struct ckpt_img_vdso {
	__u32 nr_syms;
	__u32 pad;
	struct ckpt_img_vdso_sym syms[CKPT_IMG_VDSO_SYMS];
	/* followed by the vdso text, PROCESS's vdso_size bytes */
};

struct ckpt_img_pages {
	__u64 addr;		/* first page; data for nr_pages pages follows */
	__u32 nr_pages;
	__u32 vma;		/* index into the VMA table */
};

struct ckpt_img_end {
	__u64 nr_sections;	/* sections before this one */
	__u64 nr_pages;		/* pages stored in all */
};

/*
 * System V IPC: the objects of the IPC namespace a tree has to itself
 * (Documentation/engine.md, "System V IPC"), in its root's image only,
 * by kind and id. The restart makes a new IPC namespace and each object
 * again with its id and key. A mapping of a segment is a VMA with
 * CKPT_VMA_SYSV and the segment's id in @ino.
 */
#define CKPT_IMG_MAX_SYSV	4096		/* objects of each kind */
#define CKPT_IMG_MAX_SEMS	32000		/* SEMMSL */
#define CKPT_IMG_SEMVMX		32767		/* SEMVMX */
#define CKPT_IMG_MAX_MSGBYTES	(16 << 20)	/* one queue's messages */
#define CKPT_IMG_MAX_MSGSZ	(1 << 20)	/* one message */
#define CKPT_IMG_MAX_MSGS	65536		/* in one queue */
#define CKPT_IMG_MAX_SHMSZ	(1ULL << 40)	/* one segment */
#define CKPT_IMG_SYSV_ID_MAX	0x7fffffff

enum ckpt_img_ipc_flags {
	CKPT_IPC_DEST		= 1 << 0,	/* segment: removed, lives while attached */
	CKPT_IPC_LOCKED		= 1 << 1,	/* segment: SHM_LOCK */
	__CKPT_IPC_ALL		= (1 << 2) - 1,
};

struct ckpt_img_ipcperm {
	__u32 id;		/* as shmget(), semget(), msgget() returned it */
	__u32 key;
	__u32 uid, gid;		/* owner */
	__u32 cuid, cgid;	/* creator */
	__u32 mode;		/* permission bits (0777) */
	__u32 flags;		/* CKPT_IPC_* */
};

struct ckpt_img_sysvshm {
	struct ckpt_img_ipcperm perm;
	__u64 size;		/* shm_segsz */
	__u64 stored;		/* bytes in its SYSVDATA sections (holes left out) */
};

/* A run of a segment's bytes: section length - 16 of them. */
struct ckpt_img_sysvdata {
	__u32 id;		/* the segment's */
	__u32 pad;
	__u64 offset;
	__u8 data[];
};

struct ckpt_img_sysvsem {
	struct ckpt_img_ipcperm perm;
	__u32 nsems;
	__u32 pad;
	__u32 vals[];		/* [nsems], each at most CKPT_IMG_SEMVMX */
};

/*
 * A tree member's adjustments to set @id at its exit (semop() with
 * SEM_UNDO), one per semaphore of the set: in the image of each member
 * with some, for a set of its root's image with as many semaphores.
 */
struct ckpt_img_semundo {
	__u32 id;
	__u32 nsems;
	__s16 adj[];		/* [nsems] */
};

/* One queued message, its @len bytes following, padded to 8. */
struct ckpt_img_sysvmsg_one {
	__s64 type;		/* > 0 */
	__u64 len;
};

struct ckpt_img_sysvmsg {
	struct ckpt_img_ipcperm perm;
	__u64 qbytes;		/* msg_qbytes */
	__u32 nr;		/* messages, in queue order */
	__u32 pad;
	/* followed by nr struct ckpt_img_sysvmsg_one + data */
};

/*
 * A child of a tree's member that has exited and not been reaped: in its
 * parent's image. The restart makes it again, with its pid, and has it
 * exit as it did, so that the parent's wait reaps it with this status.
 */
#define CKPT_IMG_MAX_ZOMBIES	1024	/* children of one process */
#define CKPT_IMG_PID_MAX	4194304	/* PID_MAX_LIMIT on 64-bit */

struct ckpt_img_zombie {
	__u32 pid;		/* in the tree's pid namespace */
	__u32 status;		/* as wait() reports it: exited or killed */
	__u32 exit_signal;	/* sent to its parent at exit: 0 .. 64 */
	__u32 pgid, sid;	/* its process group and session; 0: outside the namespace */
	__u32 pad;
};

#endif /* _UAPI_LINUX_CKPT_IMAGE_H */
