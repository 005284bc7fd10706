// SPDX-License-Identifier: GPL-2.0
/*
 * mkimage [-t THREADS] [-P] > IMAGE
 *
 * Writes a small, fully valid process image for the host tests and the
 * fuzzer's seed corpus: a made-up process running /bin/sh with THREADS
 * threads (default 1), the leader first, and six mappings:
 *
 *   0  /bin/sh text       r-x private file, no pages (they stay in the file)
 *   1  heap               rw- anonymous, 2 pages in one PAGES section
 *   2  anonymous          rw- 3 pages in two PAGES sections (2 + 1)
 *   3  vvar               r-- 4 pages, never stored
 *   4  vdso               r-x 2 pages, never stored
 *   5  stack              rw- grows down, 1 page
 *
 * -P stores no pages at all (a smaller seed). -O adds file objects:
 * FILEOBJ (0: memfd "buf", 10000 bytes, 4196 stored in two FILEDATA runs;
 * 1: FIFO /tmp/fifo holding "hello"), FILES (fd 3 the memfd, fd 4 the FIFO)
 * and the three FILEDATA sections, right after the THREAD sections. -E
 * (with -O) makes object 0 the executable (PROCESS's exe_dev
 * CKPT_IMG_EXE_OBJ, exe_ino 0), as of one run from a memfd. -V adds
 * a VDSO section right after the THREAD sections: 8 KiB of text and the
 * entry points clock_gettime and __vdso_clock_gettime at 0x700, getcpu at
 * 0x900. -F adds an FS section after them (working directory /srv/job/run
 * under the root directory /srv/job, a chroot). -T adds timers after
 * those: SIGNALS (all three interval timers armed, one pending signal of
 * timer 5) and TIMERS
 * (next id 9; 2: CLOCK_REALTIME deadline, signal 34; 5: the main thread's
 * CPU-time clock, SIGEV_THREAD_ID to it, its signal pending; 7: the
 * process's CPU-time clock, SIGEV_NONE). CREDS always comes last before
 * VMAS: uid and gid 1000 (all four), groups 4, 27 and 1000, no capability
 * but a full bounding set (capabilities 0 to 40), dumpable, no_new_privs;
 * its 100 bytes are followed by 4 bytes of padding. The output is the same on every
 * run, so tests can name offsets in it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "image.h"

#define PAGE		CKPT_IMG_PAGE_SIZE
#define PID		4242
#define XSTATE_SIZE	832		/* x87, SSE and AVX */
#define XFEATURES	0x7ULL

#define TEXT		0x555555554000ULL
#define HEAP		0x555555559000ULL
#define ANON		0x7ffff7f00000ULL
#define VVAR		0x7ffff7fc1000ULL
#define VDSO		(VVAR + 4 * PAGE)
#define STACK		0x7ffffffde000ULL
#define STACK_END	0x7ffffffff000ULL

/* auxv types (<elf.h> has them, with more than we need) */
#define AT_PAGESZ	6
#define AT_ENTRY	9
#define AT_SYSINFO_EHDR	33

static __u64 nr_sections;
static __u64 nr_pages;

static void out(const void *buf, size_t len)
{
	const char *p = buf;
	ssize_t n;

	while (len) {
		n = write(STDOUT_FILENO, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			perror("mkimage: write");
			exit(1);
		}
		p += n;
		len -= n;
	}
}

static void section(__u32 type, const void *payload, __u64 len)
{
	static const char zero[8];
	struct ckpt_sect s;

	ckpt_img_sect(&s, type, payload, len);
	out(&s, sizeof(s));
	out(payload, len);
	out(zero, -len & 7);
	nr_sections++;
}

static void pages(__u64 addr, __u32 n, __u32 vma)
{
	size_t len = sizeof(struct ckpt_img_pages) + (size_t)n * PAGE;
	struct ckpt_img_pages *p = calloc(1, len);
	unsigned char *data = (unsigned char *)(p + 1);
	size_t i;

	if (!p) {
		perror("mkimage");
		exit(1);
	}
	p->addr = addr;
	p->nr_pages = n;
	p->vma = vma;
	/* Something in every byte, different on every page. */
	for (i = 0; i < (size_t)n * PAGE; i++)
		data[i] = (unsigned char)(i * 7 + (addr >> 12) + 1);
	section(CKPT_SECT_PAGES, p, len);
	nr_pages += n;
	free(p);
}

static struct ckpt_img_vdso *vdso_section(size_t *len)
{
	static const struct {
		const char *name;
		__u64 offset;
	} syms[] = {
		{ "clock_gettime", 0x700 },
		{ "__vdso_clock_gettime", 0x700 },
		{ "getcpu", 0x900 },
	};
	struct ckpt_img_vdso *v;
	unsigned char *text;
	size_t i;

	*len = sizeof(*v) + 2 * PAGE;
	v = calloc(1, *len);
	if (!v) {
		perror("mkimage");
		exit(1);
	}
	text = (unsigned char *)(v + 1);
	for (i = 0; i < 2 * PAGE; i++)
		text[i] = (unsigned char)(i * 13 + 5);
	v->nr_syms = sizeof(syms) / sizeof(syms[0]);
	for (i = 0; i < v->nr_syms; i++) {
		strcpy(v->syms[i].name, syms[i].name);
		v->syms[i].offset = syms[i].offset;
	}
	return v;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: mkimage [-t THREADS] [-P] [-O [-E] [-K] | -U | -C | -Y | -L | -l | -N] [-V] [-F] [-T] [-I] [-B] > IMAGE\n"
		   "       mkimage -c < DATA   (prints XXH64: whole, in pieces)\n"
		   "       mkimage -R IMAGE    (edits IMAGE to claim root, see below)\n"
		   "       mkimage -S IMAGE    (takes IMAGE's MAC out, see below)\n");
}

/*
 * -R IMAGE: a forger's edit, for the hostile-user tests. IMAGE's CREDS is
 * made root's (every id 0) with every capability, and so are PROCESS's
 * ids, which the validator holds CREDS to; their checksums are made right
 * again, so that only the engine's MAC can tell.
 */
static int claim_root(const char *path)
{
	struct ckpt_img_process *p;
	struct ckpt_img_creds *c;
	struct ckpt_sect s;
	off_t at = 0;
	int fd = open(path, O_RDWR), edited = 0;
	void *buf;

	if (fd < 0) {
		perror(path);
		return 1;
	}
	while (edited < 2 && pread(fd, &s, sizeof(s), at) == sizeof(s)) {
		off_t here = at;

		at += sizeof(s) + s.len + ((8 - (s.len & 7)) & 7);
		if ((s.type != CKPT_SECT_CREDS || s.len < sizeof(*c)) &&
		    (s.type != CKPT_SECT_PROCESS || s.len != sizeof(*p)))
			continue;
		if (s.len > (1 << 20))
			break;
		buf = malloc(s.len);
		if (!buf || pread(fd, buf, s.len, here + sizeof(s)) != (ssize_t)s.len)
			break;
		if (s.type == CKPT_SECT_PROCESS) {
			p = buf;
			p->uid = p->euid = p->gid = p->egid = 0;
		} else {
			c = buf;
			c->uid = c->euid = c->suid = c->fsuid = 0;
			c->gid = c->egid = c->sgid = c->fsgid = 0;
			c->cap_permitted = c->cap_effective = c->cap_inheritable =
				c->cap_bset = (1ULL << 41) - 1;
		}
		ckpt_img_sect(&s, s.type, buf, s.len);
		if (pwrite(fd, buf, s.len, here + sizeof(s)) == (ssize_t)s.len &&
		    pwrite(fd, &s, sizeof(s), here) == sizeof(s))
			edited++;
		free(buf);
	}
	if (close(fd) || edited != 2) {
		fprintf(stderr, "mkimage: %s: PROCESS and CREDS not both edited\n",
			path);
		return 1;
	}
	return 0;
}

/*
 * -S IMAGE: IMAGE without its MAC section, its END made to match, as an
 * image made by hand (or by an engine before MACs) would be: it restarts
 * only unauthenticated (Documentation/security.md).
 */
static int strip_mac(const char *path)
{
	unsigned char *buf = NULL, *out = NULL;
	size_t len, at = 0, o = 0, n;
	struct ckpt_sect *s;
	int ret = 1;
	FILE *f = fopen(path, "r+");

	if (!f || fseek(f, 0, SEEK_END) || (long)(len = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET))
		goto out;
	buf = malloc(len + 1);
	out = malloc(len + 1);
	if (!buf || !out || fread(buf, 1, len, f) != len)
		goto out;
	while (at + sizeof(*s) <= len) {
		s = (struct ckpt_sect *)(buf + at);
		n = sizeof(*s) + s->len + ((8 - (s->len & 7)) & 7);
		if (n > len - at)
			goto out;
		if (s->type == CKPT_SECT_END &&
		    s->len == sizeof(struct ckpt_img_end)) {
			struct ckpt_img_end *e = (void *)(s + 1);

			e->nr_sections--;
			ckpt_img_sect(s, CKPT_SECT_END, e, sizeof(*e));
			ret = 0;
		}
		if (s->type != CKPT_SECT_MAC) {
			memcpy(out + o, buf + at, n);
			o += n;
		}
		at += n;
	}
	if (ret || o == len || fseek(f, 0, SEEK_SET) ||
	    fwrite(out, 1, o, f) != o || fflush(f) || ftruncate(fileno(f), o))
		ret = 1;
out:
	if (ret)
		fprintf(stderr, "mkimage: %s: no MAC taken out\n", path);
	if (f)
		fclose(f);
	free(buf);
	free(out);
	return ret;
}

/*
 * -c: XXH64 of standard input, fed whole and fed in pieces of every size
 * from 1 to 67 bytes (the streaming path), for the tests.
 */
static int csum_stdin(void)
{
	static unsigned char buf[4 << 20];
	struct ckpt_csum whole, pieces;
	size_t len, off, n;

	len = fread(buf, 1, sizeof(buf), stdin);
	if (ferror(stdin) || !feof(stdin))
		return 1;
	ckpt_csum_init(&whole);
	ckpt_csum_update(&whole, buf, len);
	ckpt_csum_init(&pieces);
	for (off = 0, n = 1; off < len; off += n, n = n % 67 + 1) {
		if (n > len - off)
			n = len - off;
		ckpt_csum_update(&pieces, buf + off, n);
	}
	printf("%016llx %016llx\n",
	       (unsigned long long)ckpt_csum_xxh64(&whole),
	       (unsigned long long)ckpt_csum_xxh64(&pieces));
	return 0;
}

static void filedata(__u32 obj, __u64 offset, const void *data, size_t len)
{
	struct ckpt_img_filedata *d = calloc(1, sizeof(*d) + len);

	if (!d) {
		perror("mkimage");
		exit(1);
	}
	d->obj = obj;
	d->offset = offset;
	memcpy(d->data, data, len);
	section(CKPT_SECT_FILEDATA, d, sizeof(*d) + len);
	free(d);
}

static void timers(void)
{
	static struct {
		struct ckpt_img_signals h;
		struct ckpt_img_siginfo q[1];
	} sigs = {
		.h = {
			.real_value_ns = 8000000000ULL,
			.virt_value_ns = 4296000000ULL,
			.virt_interval_ns = 300000000ULL,
			.prof_value_ns = 5000000000ULL,
			.prof_interval_ns = 400000000ULL,
			.nr = 1,
		},
		.q = { { .tid = PID, .signo = 35 } },
	};
	static struct {
		struct ckpt_img_timers h;
		struct ckpt_img_timer t[3];
	} tm = {
		.h = { .nr = 3, .next_id = 9 },
		.t = {
			{ .id = 2, .clockid = 0, .notify = 0, .signo = 34,
			  .flags = CKPT_TIMER_ABSTIME, .sival = 0x1111,
			  .value_ns = 1795000060000000000ULL,
			  .interval_ns = 2000000000ULL, .overrun = 3,
			  .overrun_last = 1 },
			{ .id = 5, .clockid = (__s32)((~(__u32)PID << 3) | 6),
			  .notify = 4, .signo = 35, .tid = PID,
			  .flags = CKPT_TIMER_PENDING, .sival = 0x5555,
			  .value_ns = 70000000000ULL,
			  .interval_ns = 3000000000ULL, .overrun_last = 12 },
			{ .id = 7, .clockid = -6, .notify = 1, .signo = 0,
			  .sival = 0x7777, .value_ns = 60000000000ULL },
		},
	};
	/* si_signo, si_errno, si_code SI_TIMER; si_tid, si_overrun, si_value */
	__s32 info[6] = { 35, 0, -2, 0, 5, 12 };
	__u64 value = 0x5555;

	memcpy(sigs.q[0].info, info, sizeof(info));
	memcpy(sigs.q[0].info + sizeof(info), &value, sizeof(value));
	section(CKPT_SECT_SIGNALS, &sigs, sizeof(sigs));
	section(CKPT_SECT_TIMERS, &tm, sizeof(tm));
}

static void creds(void)
{
	static struct {
		struct ckpt_img_creds c;
		__u32 groups[3];
	} __attribute__((packed)) cr = {
		.c = {
			.uid = 1000, .euid = 1000, .suid = 1000, .fsuid = 1000,
			.gid = 1000, .egid = 1000, .sgid = 1000, .fsgid = 1000,
			.cap_bset = (1ULL << 41) - 1, .dumpable = 1,
			.nr_groups = 3, .flags = CKPT_CREDS_NO_NEW_PRIVS,
		},
		.groups = { 4, 27, 1000 },
	};

	section(CKPT_SECT_CREDS, &cr, sizeof(cr));
}

/*
 * -B: SCHED after the threads: the first may run anywhere, the others are
 * SCHED_BATCH on CPUs 0, 2 and 3, I/O class idle, and SCHED_FIFO 10 on CPU
 * 1023 with SCHED_RESET_ON_FORK, best effort 2, in turn.
 */
static void sched_section(unsigned int nr)
{
	struct ckpt_img_sched *s = calloc(nr, sizeof(*s));
	unsigned int i;

	if (!s) {
		perror("mkimage");
		exit(1);
	}
	s[0].flags = CKPT_SCHED_ALL_CPUS;
	for (i = 1; i < nr; i++) {
		if (i % 2) {
			s[i].policy = 3;	/* SCHED_BATCH */
			s[i].ioprio = 3 << 13;	/* IOPRIO_CLASS_IDLE */
			s[i].cpus[0] = 0xd;
		} else {
			s[i].policy = 1;	/* SCHED_FIFO */
			s[i].rt_priority = 10;
			s[i].flags = CKPT_SCHED_RESET_ON_FORK;
			s[i].ioprio = 2 << 13 | 2;	/* best effort, 2 */
			s[i].cpus[1023 / 64] = 1ULL << (1023 % 64);
		}
	}
	section(CKPT_SECT_SCHED, s, nr * sizeof(*s));
	free(s);
}

static void file_objects(void)
{
	static struct ckpt_img_fileobj objs[2] = {
		{ .kind = CKPT_FILE_MEMFD, .mode = 0777, .seals = 0x5,
		  .dev = 1, .ino = 77, .size = 10000, .stored = 4196,
		  .name = "buf" },
		{ .kind = CKPT_FILE_FIFO, .mode = 0600, .capacity = 65536,
		  .dev = 0x801, .ino = 4321, .size = 5, .stored = 5,
		  .name = "/tmp/fifo" },
	};
	static struct ckpt_img_file files[3] = {
		{ .fd = 3, .open_flags = 2, .kind = CKPT_FILE_MEMFD, .pos = 10,
		  .ino = 0, .path = "/memfd:buf (deleted)" },
		{ .fd = 4, .open_flags = 0, .kind = CKPT_FILE_FIFO, .ino = 1,
		  .path = "/tmp/fifo" },
		{ .fd = 6, .open_flags = 2, .flags = CKPT_FILE_CLOEXEC,
		  .kind = CKPT_FILE_SHARED, .ino = 3,
		  .path = "/memfd:buf (deleted)" },
	};
	static unsigned char page[4096];
	unsigned int i;

	for (i = 0; i < sizeof(page); i++)
		page[i] = (unsigned char)(i * 3);
	section(CKPT_SECT_FILEOBJ, objs, sizeof(objs));
	section(CKPT_SECT_FILES, files, sizeof(files));
	filedata(0, 0, page, 4096);
	filedata(0, 8192, page, 100);
	filedata(1, 0, "hello", 5);
}

/*
 * -K (with -O): LOCKS after the file objects: fd 3 (the memfd, read-write)
 * holds a record write lock on bytes 0-9, a flock() read lock and an open
 * file description read lock from byte 100 on; and the mapping of /bin/sh
 * carries a flock() write lock (CKPT_VMA_FLOCK_WRITE: main() sets it).
 */
static void lock_section(void)
{
	static const struct ckpt_img_lock locks[3] = {
		{ .fd = 3, .kind = CKPT_LOCK_POSIX, .type = CKPT_LOCK_WRITE,
		  .start = 0, .end = 9 },
		{ .fd = 3, .kind = CKPT_LOCK_FLOCK, .type = CKPT_LOCK_READ,
		  .start = 0, .end = CKPT_LOCK_TO_EOF },
		{ .fd = 3, .kind = CKPT_LOCK_OFD, .type = CKPT_LOCK_READ,
		  .start = 100, .end = CKPT_LOCK_TO_EOF },
	};

	section(CKPT_SECT_LOCKS, locks, sizeof(locks));
}

/*
 * -N: an inotify instance at fd 3 (next watch 5, non-blocking) with two
 * watches: 1 on /tmp/job/log (IN_MODIFY), 4 on /tmp/job (IN_CREATE |
 * IN_DELETE | IN_ONESHOT); FILES then INOTIFY (section 4).
 */
static void inotify_instance(void)
{
	static const struct ckpt_img_file file = {
		.fd = 3, .open_flags = 04000, .kind = CKPT_FILE_INOTIFY, .pos = 5,
		.path = "anon_inode:inotify",
	};
	static const struct ckpt_img_inotify watches[2] = {
		{ .fd = 3, .wd = 1, .mask = 0x2, .dev = 0x2a, .ino = 99,
		  .path = "/tmp/job/log" },
		{ .fd = 3, .wd = 4, .mask = 0x80000300, .dev = 0x2a, .ino = 98,
		  .path = "/tmp/job" },
	};

	section(CKPT_SECT_FILES, &file, sizeof(file));
	section(CKPT_SECT_INOTIFY, watches, sizeof(watches));
}

/*
 * -L: the root of a tree (TREE, as -I) holding a tmpfs file taken with
 * CKPT_CHECKPOINT_LOCAL_FILES: FILEOBJ (0: tmpfs /tmp/job/seg, 12288
 * bytes, mode 0640, 8192 stored in two FILEDATA runs, the middle page a
 * hole), FILES (fd 3 that file by path, read-write). -l: the same without
 * TREE, which the validator refuses.
 */
static void local_file(void)
{
	static const struct ckpt_img_fileobj obj = {
		.kind = CKPT_FILE_LOCAL, .mode = 0640, .dev = 0x2a, .ino = 99,
		.size = 12288, .stored = 8192, .name = "/tmp/job/seg",
	};
	static const struct ckpt_img_file file = {
		.fd = 3, .open_flags = 2, .kind = CKPT_FILE_REGULAR, .pos = 4,
		.dev = 0x2a, .ino = 99, .path = "/tmp/job/seg",
	};
	static unsigned char page[4096];

	memcpy(page, "seg!", 4);
	section(CKPT_SECT_FILEOBJ, &obj, sizeof(obj));
	section(CKPT_SECT_FILES, &file, sizeof(file));
	filedata(0, 0, page, 4096);
	filedata(0, 8192, page, 4096);
}

/*
 * -U: a UNIX stream socket pair at fds 3 and 4 ("ping" queued for 3, 4
 * shut for writing), fd 5 a dup of 3, fd 6 a seqpacket end whose peer is
 * closed, messages "a" and "bcd" queued for it; fd 7 a stream socket
 * listening on /tmp/ckpt.sock (backlog 16, mode 0755, owner 1000:1000),
 * fd 8 a connection waiting on it that sent "hi"; fd 9 a datagram
 * socket bound to /tmp/ckpt-dg.sock (mode 0600, owner 1000:1000),
 * messages "x" and "yz" queued for it; fd 10 a datagram socket connected
 * to /dev/log, with no name; fd 11 a stream socket connected to nothing,
 * bound to the abstract name "ckpt".
 */
static void unix_sockets(void)
{
	static struct ckpt_img_file files[9] = {
		{ .fd = 3, .open_flags = 2 | 04000, .kind = CKPT_FILE_UNIX,
		  .ino = 501, .dev = 502, .path = "socket:[501]" },
		{ .fd = 4, .open_flags = 2, .kind = CKPT_FILE_UNIX,
		  .ino = 502, .dev = 501, .path = "socket:[502]" },
		{ .fd = 5, .open_flags = 2 | 04000, .kind = CKPT_FILE_SHARED,
		  .ino = 3, .path = "socket:[501]" },
		{ .fd = 6, .open_flags = 2, .kind = CKPT_FILE_UNIX,
		  .ino = 503, .path = "socket:[503]" },
		{ .fd = 7, .open_flags = 2, .kind = CKPT_FILE_UNIX,
		  .ino = 504, .path = "socket:[504]" },
		{ .fd = 8, .open_flags = 2, .kind = CKPT_FILE_UNIX,
		  .ino = 505, .dev = CKPT_UPEND_ID | 7, .path = "socket:[505]" },
		{ .fd = 9, .open_flags = 2, .kind = CKPT_FILE_UNIX,
		  .ino = 506, .path = "socket:[506]" },
		{ .fd = 10, .open_flags = 2, .kind = CKPT_FILE_UNIX,
		  .ino = 507, .path = "socket:[507]" },
		{ .fd = 11, .open_flags = 2, .kind = CKPT_FILE_UNIX,
		  .ino = 508, .path = "socket:[508]" },
	};
	struct {
		struct ckpt_img_uname u;
		char data[16];
	} dg = { { .ino = 506, .type = 2, .sndbuf = 212992, .len = 16,
		   .name = { .mode = 0600, .uid = 1000, .gid = 1000, .len = 18,
			     .addr = "/tmp/ckpt-dg.sock" } },
		 "\1\0\0\0x\0\0\0\2\0\0\0yz" },
	  lg = { { .ino = 507, .type = 2, .sndbuf = 212992,
		   .peer = { .len = 9, .addr = "/dev/log" } }, "" },
	  ab = { { .ino = 508, .type = 1, .sndbuf = 212992,
		   .name = { .len = 5, .addr = "\0ckpt" } }, "" };
	static struct ckpt_img_usock d = {
		.ino = 505, .peer = CKPT_UPEND_ID | 7, .type = 1,
		.sndbuf = 212992,
	};
	struct {
		struct ckpt_img_upend p;
		char data[8];
	} w = { { .listener = 504, .id = CKPT_UPEND_ID | 7, .client = 505,
		  .type = 1, .len = 2 }, "hi" };
	static struct ckpt_img_ulisten l = {
		.ino = 504, .type = 1, .backlog = 16,
		.name = { .mode = 0755, .uid = 1000, .gid = 1000, .len = 15,
			  .addr = "/tmp/ckpt.sock" },
	};
	struct {
		struct ckpt_img_usock u;
		char data[16];
	} a = { { .ino = 501, .peer = 502, .type = 1, .sndbuf = 212992,
		  .len = 4 }, "ping" },
	  b = { { .ino = 502, .peer = 501, .type = 1,
		  .shutdown = CKPT_USOCK_SHUT_WR, .sndbuf = 212992 }, "" },
	  c = { { .ino = 503, .type = 5, .shutdown = 3, .sndbuf = 212992,
		  .len = 16 },
		/* 1, "a" padded; 3, "bcd" padded (little-endian lengths) */
		"\1\0\0\0a\0\0\0\3\0\0\0bcd" };

	section(CKPT_SECT_FILES, files, sizeof(files));
	section(CKPT_SECT_USOCK, &a, sizeof(a.u) + a.u.len);
	section(CKPT_SECT_USOCK, &b, sizeof(b.u) + b.u.len);
	section(CKPT_SECT_USOCK, &c, sizeof(c.u) + c.u.len);
	section(CKPT_SECT_ULISTEN, &l, sizeof(l));
	section(CKPT_SECT_USOCK, &d, sizeof(d));
	section(CKPT_SECT_UPEND, &w, sizeof(w.p) + w.p.len);
	section(CKPT_SECT_UNAME, &dg, sizeof(dg.u) + dg.u.len);
	section(CKPT_SECT_UNAME, &lg, sizeof(lg.u));
	section(CKPT_SECT_UNAME, &ab, sizeof(ab.u));
}

/*
 * -C: TCP sockets: fd 3 listening on 127.0.0.1:5000 (backlog 128); fd 4
 * a connection accepted on it, from 127.0.0.1:40000, "hello" in its send
 * queue (its first 2 bytes sent, not acknowledged) and "world!" in its
 * receive queue, TCP_NODELAY; fd 5 an IPv6 connection [::1]:40001 ->
 * [::1]:5001 with empty queues, SO_KEEPALIVE; fd 6 a socket neither
 * bound nor connected.
 */
static void tcp_sockets(void)
{
	static struct ckpt_img_file files[4] = {
		{ .fd = 3, .open_flags = 2, .kind = CKPT_FILE_TCP, .ino = 601,
		  .path = "socket:[601]" },
		{ .fd = 4, .open_flags = 2 | 04000, .kind = CKPT_FILE_TCP,
		  .ino = 602, .path = "socket:[602]" },
		{ .fd = 5, .open_flags = 2, .kind = CKPT_FILE_TCP, .ino = 603,
		  .path = "socket:[603]" },
		{ .fd = 6, .open_flags = 2, .kind = CKPT_FILE_TCP, .ino = 604,
		  .path = "socket:[604]" },
	};
	static const struct ckpt_img_tcp listening = {
		.ino = 601, .family = 2, .state = CKPT_TCP_LISTEN,
		.flags = CKPT_TCP_REUSEADDR, .backlog = 128,
		.src = { 127, 0, 0, 1 }, .sport = 5000,
		.sndbuf = 16384, .rcvbuf = 131072,
	}, v6 = {
		.ino = 603, .family = 10, .state = CKPT_TCP_ESTABLISHED,
		.flags = CKPT_TCP_KEEPALIVE | CKPT_TCP_OPT_SACK,
		.src = { [15] = 1 }, .dst = { [15] = 1 },
		.sport = 40001, .dport = 5001, .sndbuf = 16384, .rcvbuf = 131072,
		.mss = 65483, .snd_una = 7, .snd_nxt = 7, .write_seq = 7,
		.copied_seq = 9, .rcv_nxt = 9, .snd_wl1 = 9, .snd_wnd = 65483,
		.max_window = 65483, .rcv_wnd = 65483, .rcv_wup = 9,
	}, closed = {
		.ino = 604, .family = 2, .state = CKPT_TCP_CLOSED,
		.sndbuf = 16384, .rcvbuf = 131072,
	};
	struct {
		struct ckpt_img_tcp t;
		char data[16];
	} conn = { {
		.ino = 602, .family = 2, .state = CKPT_TCP_ESTABLISHED,
		.flags = CKPT_TCP_NODELAY | CKPT_TCP_OPT_SACK |
			 CKPT_TCP_OPT_TSTAMP | CKPT_TCP_OPT_WSCALE,
		.src = { 127, 0, 0, 1 }, .dst = { 127, 0, 0, 1 },
		.sport = 5000, .dport = 40000, .sndbuf = 2626560,
		.rcvbuf = 131072, .mss = 65483, .snd_wscale = 7,
		.rcv_wscale = 7, .timestamp = 123456,
		.snd_una = 1000, .snd_nxt = 1002, .write_seq = 1005,
		.copied_seq = 2000, .rcv_nxt = 2006, .snd_wl1 = 2000,
		.snd_wnd = 65536, .max_window = 65536, .rcv_wnd = 65536,
		.rcv_wup = 2000, .len = 11,
	}, "helloworld!" };

	section(CKPT_SECT_FILES, files, sizeof(files));
	section(CKPT_SECT_TCP, &listening, sizeof(listening));
	section(CKPT_SECT_TCP, &conn, sizeof(conn.t) + conn.t.len);
	section(CKPT_SECT_TCP, &v6, sizeof(v6));
	section(CKPT_SECT_TCP, &closed, sizeof(closed));
}

/*
 * -Y: the root of a tree (TREE, as -I) holding a pseudo-terminal's master
 * at fd 3 and its slave at fd 4 (O_NONBLOCK): pts 7, 24 rows of 80
 * columns, canonical with ECHO off, in packet mode; at fd 5 a signalfd
 * of SIGUSR1 other members hold too, the tree's shared signalfd 1; and at
 * fd 6 an epoll of its own watching the slave (EPOLLIN, data 0x1234) and
 * fd 1 (EPOLLOUT, the restarter's descriptor: the image has none).
 */
static void pty_pair(void)
{
	static const struct ckpt_img_file files[4] = {
		{ .fd = 3, .open_flags = 2, .kind = CKPT_FILE_PTY, .ino = 7,
		  .dev = CKPT_PTY_MASTER, .path = "/dev/ptmx" },
		{ .fd = 4, .open_flags = 2 | 04000, .kind = CKPT_FILE_PTY,
		  .ino = 7, .dev = CKPT_PTY_SLAVE, .path = "/dev/pts/7" },
		{ .fd = 5, .open_flags = 2, .flags = CKPT_FILE_TREE_SHARED,
		  .kind = CKPT_FILE_SIGNALFD, .dev = 1 << 9, .ino = 1,
		  .path = "anon_inode:[signalfd]" },
		{ .fd = 6, .open_flags = 2, .kind = CKPT_FILE_EPOLL,
		  .path = "anon_inode:[eventpoll]" },
	};
	static const struct ckpt_img_epitem items[2] = {
		{ .epfd = 6, .tfd = 4, .events = 1, .data = 0x1234 },
		{ .epfd = 6, .tfd = 1, .events = 4 },
	};
	static const struct ckpt_img_pty pty = {
		.index = 7, .flags = CKPT_PTY_PACKET,
		.iflag = 0x500, .oflag = 0x5, .cflag = 0xbf, .lflag = 0x8a33,
		.ispeed = 38400, .ospeed = 38400,
		.cc = { 3, 28, 127, 21, 4, 0, 1 },
		.rows = 24, .cols = 80,
	};

	section(CKPT_SECT_FILES, files, sizeof(files));
	section(CKPT_SECT_PTY, &pty, sizeof(pty));
	section(CKPT_SECT_EPOLL, items, sizeof(items));
}

/*
 * -I: the root of a tree (TREE: one member, a child subreaper) with System
 * V objects: segment
 * 3 (key 0x5ee1c0de, 8192 bytes, its second page stored) mapped at SYSV,
 * segment 32769 (removed while attached, nothing stored), semaphore set 0
 * (values 1 and 32767), message queue 1 (types 1 "hi" and 7 "hello
 * world"); and two zombie children, one exited with 3, one killed by
 * SIGTERM in a process group of its own.
 */
#define SYSV	(ANON + 32 * PAGE)

static void sysv_objects(void)
{
	/* Two zombie children: one exited with 3, one killed by SIGTERM. */
	static const struct ckpt_img_zombie zombies[2] = {
		{ PID + 7, 3 << 8, 17, PID, PID, 0 },
		{ PID + 8, 15, 17, PID + 8, PID, 0 },
	};
	static const struct ckpt_img_sysvshm shm[2] = {
		{ { .id = 3, .key = 0x5ee1c0de, .uid = 1000, .gid = 1000,
		    .cuid = 1000, .cgid = 1000, .mode = 0600 }, 8192, 4096 },
		{ { .id = 32769, .uid = 1000, .gid = 1000, .cuid = 1000,
		    .cgid = 1000, .mode = 0640, .flags = CKPT_IPC_DEST }, 4096, 0 },
	};
	struct {
		struct ckpt_img_sysvdata d;
		char data[4096];
	} data = { { .id = 3, .offset = 4096 }, "segment 3" };
	/* Adjustments to the set above, and to another set (a member's). */
	static const struct {
		struct ckpt_img_semundo u;
		__s16 adj[2];
	} undo[2] = { { { 0, 2 }, { 1, 0 } }, { { 65536, 2 }, { 0, -3 } } };
	struct {
		struct ckpt_img_sysvsem s;
		__u32 vals[2];
	} sem = { { { .id = 0, .uid = 1000, .gid = 1000, .cuid = 1000,
		      .cgid = 1000, .mode = 0666 }, 2, 0 }, { 1, 32767 } };
	struct {
		struct ckpt_img_sysvmsg q;
		struct ckpt_img_sysvmsg_one m1;
		char d1[8];
		struct ckpt_img_sysvmsg_one m2;
		char d2[16];
	} msg = { { { .id = 1, .uid = 1000, .gid = 1000, .cuid = 1000,
		      .cgid = 1000, .mode = 0620 }, 16384, 2, 0 },
		  { 1, 2 }, "hi", { 7, 11 }, "hello world" };

	section(CKPT_SECT_SYSVSHM, &shm[0], sizeof(shm[0]));
	section(CKPT_SECT_SYSVDATA, &data, sizeof(data));
	section(CKPT_SECT_SYSVSHM, &shm[1], sizeof(shm[1]));
	section(CKPT_SECT_SYSVSEM, &sem, sizeof(sem));
	section(CKPT_SECT_SYSVMSG, &msg, sizeof(msg));
	section(CKPT_SECT_ZOMBIE, &zombies[0], sizeof(zombies[0]));
	section(CKPT_SECT_ZOMBIE, &zombies[1], sizeof(zombies[1]));
	section(CKPT_SECT_SEMUNDO, &undo[0], sizeof(undo[0]));
	section(CKPT_SECT_SEMUNDO, &undo[1], sizeof(undo[1]));
}

static void tree_root(void)
{
	static struct ckpt_img_tree t = {
		.nr_members = 1, .parent = CKPT_TREE_NO_PARENT, .pgid = PID,
		.sid = PID, .flags = CKPT_TREE_SUBREAPER, .id = "mkimage-tree",
	};

	section(CKPT_SECT_TREE, &t, sizeof(t));
}

int main(int argc, char **argv)
{
	struct ckpt_img_vma vmas[7] = {
		{ TEXT, TEXT + 2 * PAGE, 0, PROT_READ | PROT_EXEC,
		  CKPT_VMA_FILE, 0x801, 1234, 125688, 0, "/bin/sh" },
		{ HEAP, HEAP + 33 * PAGE, 0, PROT_READ | PROT_WRITE,
		  CKPT_VMA_HEAP, 0, 0, 0, 2, "" },
		{ ANON, ANON + 16 * PAGE, 0, PROT_READ | PROT_WRITE,
		  0, 0, 0, 0, 3, "" },
		{ VVAR, VDSO, 0, PROT_READ, CKPT_VMA_VVAR, 0, 0, 0, 0, "" },
		{ VDSO, VDSO + 2 * PAGE, 0, PROT_READ | PROT_EXEC,
		  CKPT_VMA_VDSO, 0, 0, 0, 0, "" },
		{ STACK, STACK_END, 0, PROT_READ | PROT_WRITE,
		  CKPT_VMA_STACK | CKPT_VMA_GROWSDOWN, 0, 0, 0, 1, "" },
		{ 0 },	/* -I: SYSV, placed before VVAR below */
	};
	struct ckpt_img_header hdr = {
		.magic = CKPT_IMG_MAGIC,
		.version = CKPT_IMG_VERSION,
		.arch = CKPT_IMG_ARCH_X86_64,
		.page_size = PAGE,
		.nr_vmas = 6,	/* 7 with -I */
		.xstate_size = XSTATE_SIZE,
		.xfeatures = XFEATURES,
		.created_ns = 1795000000ULL * 1000000000ULL,
		.kernel = "6.1.0-test-amd64",
	};
	static struct ckpt_img_process proc;
	struct ckpt_img_end end;
	unsigned char *thread;
	unsigned int i, nr_threads = 1;
	static struct ckpt_img_fs fs = {
		.cwd_dev = 0x801, .cwd_ino = 5678, .root_dev = 0x801,
		.root_ino = 5600, .cwd = "/srv/job/run", .root = "/srv/job",
	};
	bool no_pages = false, objects = false, dirs = false;
	bool with_timers = false, sockets = false, sysv = false, tcp = false;
	bool pty = false, local = false, local_alone = false, sched = false;
	bool exe_obj = false, locks = false, inotify = false;
	unsigned int nr_vmas = 6;
	struct ckpt_img_vdso *vdso = NULL;
	size_t vdso_len = 0;
	int c;

	while ((c = getopt(argc, argv, "t:POEKVFTUCYILlNBcR:S:h")) != -1) {
		switch (c) {
		case 'B':
			sched = true;
			break;
		case 'c':
			return csum_stdin();
		case 'R':
			return claim_root(optarg);
		case 'S':
			return strip_mac(optarg);
		case 't':
			nr_threads = atoi(optarg);
			break;
		case 'P':
			no_pages = true;
			break;
		case 'O':
			objects = true;
			break;
		case 'E':
			exe_obj = true;
			break;
		case 'K':
			locks = true;
			break;
		case 'T':
			with_timers = true;
			break;
		case 'V':
			vdso = vdso_section(&vdso_len);
			break;
		case 'F':
			dirs = true;
			break;
		case 'U':
			sockets = true;
			break;
		case 'C':
			tcp = true;
			break;
		case 'Y':
			pty = true;
			break;
		case 'I':
			sysv = true;
			break;
		case 'L':
			local = true;
			break;
		case 'l':
			local = local_alone = true;
			break;
		case 'N':
			inotify = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 1;
		}
	}
	if (optind != argc || nr_threads < 1 || nr_threads > 64 ||
	    ((exe_obj || locks) && !objects)) {
		usage(stderr);
		return 1;
	}
	if (sysv) {
		/* Sorted: the segment's mapping goes between ANON and VVAR. */
		memmove(&vmas[4], &vmas[3], 3 * sizeof(vmas[0]));
		vmas[3] = (struct ckpt_img_vma) {
			SYSV, SYSV + 2 * PAGE, 0, PROT_READ | PROT_WRITE,
			CKPT_VMA_SHARED | CKPT_VMA_SYSV | CKPT_VMA_MAYWRITE,
			0, 3, 8192, 0, "/SYSV5ee1c0de",
		};
		nr_vmas = 7;
	}
	if (no_pages)
		for (i = 0; i < nr_vmas; i++)
			vmas[i].nr_pages = 0;
	if (locks)
		vmas[0].flags |= CKPT_VMA_FLOCK_WRITE;

	hdr.nr_threads = nr_threads;
	hdr.nr_vmas = nr_vmas;
	section(CKPT_SECT_HEADER, &hdr, sizeof(hdr));

	proc.pid = PID;
	proc.ppid = 1;
	proc.uid = proc.euid = proc.gid = proc.egid = 1000;
	proc.umask = 022;
	proc.exit_signal = 17;		/* SIGCHLD */
	strcpy(proc.comm, "sh");
	proc.start_code = TEXT;
	proc.end_code = TEXT + 2 * PAGE - 123;
	proc.start_data = proc.end_data = TEXT + 2 * PAGE;
	proc.start_brk = HEAP;
	proc.brk = HEAP + 33 * PAGE;
	proc.start_stack = STACK_END - 0x320;
	proc.arg_start = STACK_END - 0x200;
	proc.arg_end = proc.arg_start + 8;
	proc.env_start = proc.arg_end;
	proc.env_end = STACK_END - 0x10;
	proc.vdso = VDSO;
	proc.vdso_size = 2 * PAGE;
	proc.vvar = VVAR;
	proc.vvar_size = 4 * PAGE;
	proc.vdso_csum = vdso ? ckpt_csum(vdso + 1, 2 * PAGE) :
				ckpt_csum("vdso", 4);
	proc.auxv[0] = AT_SYSINFO_EHDR;
	proc.auxv[1] = VDSO;
	proc.auxv[2] = AT_PAGESZ;
	proc.auxv[3] = PAGE;
	proc.auxv[4] = AT_ENTRY;
	proc.auxv[5] = TEXT + 0x100;
	for (i = 0; i < CKPT_IMG_NRLIMITS; i++)
		proc.rlimit[i].cur = proc.rlimit[i].max = ~0ULL;
	strcpy(proc.exe, "/bin/sh");
	proc.exe_dev = exe_obj ? CKPT_IMG_EXE_OBJ : 0x801;
	proc.exe_ino = exe_obj ? 0 : 1234;
	section(CKPT_SECT_PROCESS, &proc, sizeof(proc));
	if (sysv || pty || (local && !local_alone))
		tree_root();

	thread = calloc(1, sizeof(struct ckpt_img_thread) + XSTATE_SIZE);
	if (!thread) {
		perror("mkimage");
		return 1;
	}
	for (i = 0; i < nr_threads; i++) {
		struct ckpt_img_thread *t = (struct ckpt_img_thread *)thread;
		unsigned char *xs = thread + sizeof(*t);
		unsigned int j;

		memset(thread, 0, sizeof(*t) + XSTATE_SIZE);
		t->tid = PID + i;
		t->flags = (i ? CKPT_THREAD_IN_SYSCALL : 0) | CKPT_THREAD_NICE;
		t->nice = 7 + i;
		t->clear_child_tid = i ? ANON + 0x100 * i : 0;
		t->robust_list = ANON + 0x1000 + 0x40 * i;
		t->robust_list_len = 24;
		t->rseq = ANON + 0x2000 + 0x40 * i;
		t->rseq_len = 32;
		t->rseq_sig = 0x53053053;
		t->xstate_size = XSTATE_SIZE;
		snprintf(t->comm, sizeof(t->comm), i ? "worker-%u" : "sh", i);
		t->gregs[CKPT_GREG_RIP] = TEXT + 0x123 + i;
		t->gregs[CKPT_GREG_RSP] = STACK_END - 0x400 - 0x100 * i;
		t->gregs[CKPT_GREG_ORIG_RAX] = i ? 202 : ~0ULL;
		t->gregs[CKPT_GREG_CS] = 0x33;
		t->gregs[CKPT_GREG_EFLAGS] = 0x246;
		t->gregs[CKPT_GREG_SS] = 0x2b;
		t->gregs[CKPT_GREG_FS_BASE] = ANON + 0x3000 + 0x100 * i;
		/* FXSAVE: FCW, MXCSR; XSAVE header: XSTATE_BV; YMM_Hi128 */
		xs[0] = 0x7f;
		xs[1] = 0x03;
		xs[24] = 0x80;
		xs[25] = 0x1f;
		xs[512] = XFEATURES;
		for (j = 576; j < XSTATE_SIZE; j++)
			xs[j] = j + i;
		section(CKPT_SECT_THREAD, thread,
			sizeof(*t) + XSTATE_SIZE);
	}
	free(thread);
	if (sched)
		sched_section(nr_threads);
	if (vdso)
		section(CKPT_SECT_VDSO, vdso, vdso_len);
	free(vdso);
	if (objects) {
		file_objects();
		if (locks)
			lock_section();
	} else if (sockets)
		unix_sockets();
	else if (tcp)
		tcp_sockets();
	else if (pty)
		pty_pair();
	else if (local)
		local_file();
	else if (inotify)
		inotify_instance();
	if (sysv)
		sysv_objects();
	if (dirs)
		section(CKPT_SECT_FS, &fs, sizeof(fs));
	if (with_timers)
		timers();
	creds();

	section(CKPT_SECT_VMAS, vmas, nr_vmas * sizeof(vmas[0]));
	if (!no_pages) {
		pages(HEAP, 2, 1);
		pages(ANON, 2, 2);
		pages(ANON + 8 * PAGE, 1, 2);
		pages(STACK_END - PAGE, 1, nr_vmas - 1);
	}

	end.nr_sections = nr_sections;
	end.nr_pages = nr_pages;
	section(CKPT_SECT_END, &end, sizeof(end));
	return 0;
}
