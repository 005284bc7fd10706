// SPDX-License-Identifier: GPL-2.0
/*
 * The restorer (restore.h): continues the process saved in an image.
 *
 * Like BLCR's cr_restart, the command stays the restarted process's parent
 * and exits with its status. The whole image is verified (every checksum)
 * before anything happens. Then a child is forked with the image's pid
 * (clone3 set_tid), restores what system calls restore (signal handlers,
 * rlimits, umask, personality), moves its vdso and vvar to where the image
 * had them, enters the image's root directory (chroot) if it had its own,
 * creates one thread per image thread with the image's tid, and
 * hands over to the engine, which replaces the child's memory and threads'
 * state with the image's. Timers are made and armed last, just before the
 * hand-over, with every signal blocked: one that fires meanwhile only
 * leaves its signal pending. Everything up to that hand-over fails
 * cleanly, naming the problem (a pid in use, a limit that cannot be
 * raised...).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/fsuid.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/resource.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/ckpt.h>
#include <linux/keyctl.h>
#include <linux/magic.h>

#include "engine.h"
#include "err.h"
#include "image.h"
#include "lazy.h"
#include "restore.h"
#include "restore_int.h"

#define THREAD_STACK	(64 * 1024)

/* struct clone_args of linux/sched.h, which clashes with glibc's sched.h */
struct clone3_args {
	uint64_t flags, pidfd, child_tid, parent_tid, exit_signal;
	uint64_t stack, stack_size, tls, set_tid, set_tid_size, cgroup;
};

static bool this_boot(const char *boot_id)
{
	char buf[64] = "";
	int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return false;
	buf[strcspn(buf, "\n")] = '\0';
	return buf[0] && !strcmp(buf, boot_id);
}

static bool same_file(const struct restore *r, const struct stat *st,
		      __u64 dev, __u64 ino)
{
	return st->st_ino == ino && (!r->same_boot || st->st_dev == dev);
}

/* The file it was, or one this restart made where its path was gone. */
bool restore_same_or_made(const struct restore *r, const struct stat *st,
			  __u64 dev, __u64 ino)
{
	return same_file(r, st, dev, ino) ||
	       restore_file_made(st->st_dev, st->st_ino);
}

/*
 * The same for a node's own FIFO or file, which a restart makes again
 * where it is gone: on another boot or node the device says nothing and
 * an inode number may be anyone's (another user could make files in
 * /tmp until one has it), so one found there must be the process's
 * user's too.
 */
static bool own_same_or_made(const struct restore *r, const struct stat *st,
			     __u64 dev, __u64 ino)
{
	const struct ckpt_image *img = &r->img;
	uid_t uid = img->has_creds ? img->creds.fsuid : img->proc.uid;

	return restore_file_made(st->st_dev, st->st_ino) ||
	       (same_file(r, st, dev, ino) &&
		(r->same_boot || st->st_uid == uid));
}

/* In the child: report why the restart failed, then leave. */
static void __attribute__((noreturn, format(printf, 2, 3)))
child_fail(const struct restore *r, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int len;

	len = r->member ? snprintf(buf, sizeof(buf), "pid %d: ", r->member) : 0;
	va_start(ap, fmt);
	len += vsnprintf(buf + len, sizeof(buf) - len, fmt, ap);
	va_end(ap);
	if (len > (int)sizeof(buf) - 2)
		len = sizeof(buf) - 2;
	buf[len++] = '\n';
	if (write(r->errpipe, buf, len) < 0)
		_exit(2);
	_exit(1);
}

/*
 * The image's other threads are created with raw clone3: there is no glibc
 * thread behind them (they share the main thread's TLS), so they make raw
 * system calls only, until the engine gives them their own state back.
 */
struct thread_arg {
	int dev, errpipe;
	uint32_t index;
	pid_t pid, tid;
	const struct ckpt_img_siginfo *sigs;	/* the image's queue */
	uint32_t nr_sigs;
	bool has_cpus;
	cpu_set_t cpus;		/* with has_cpus: the image's, to take first */
	int ioprio;		/* the image's I/O priority, to take first; 0 */
};

static long raw_syscall4(long nr, long a, long b, long c, long d)
{
	register long r10 asm("r10") = d;
	long ret;

	asm volatile("syscall"
		     : "=a"(ret)
		     : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10)
		     : "rcx", "r11", "memory");
	return ret;
}

static long raw_syscall3(long nr, long a, long b, long c)
{
	long ret;

	asm volatile("syscall"
		     : "=a"(ret)
		     : "a"(nr), "D"(a), "S"(b), "d"(c)
		     : "rcx", "r11", "memory");
	return ret;
}

/*
 * Queues pending signal @q for thread @tid (0: the process) of @pid, the
 * caller's process, again, siginfo and all; raw system calls only.
 */
static long requeue(pid_t pid, pid_t tid, const struct ckpt_img_siginfo *q)
{
	if (tid)
		return raw_syscall4(SYS_rt_tgsigqueueinfo, pid, tid, q->signo,
				    (long)q->info);
	return raw_syscall3(SYS_rt_sigqueueinfo, pid, q->signo, (long)q->info);
}

static void __attribute__((noreturn, used)) thread_main(struct thread_arg *t)
{
	static const char msg[] = "cannot queue a thread's pending signal again\n";
	uint32_t i;

	/*
	 * Signals pending for this thread: only the thread itself may queue
	 * kernel-made siginfo to itself. All signals are blocked here.
	 */
	for (i = 0; i < t->nr_sigs; i++) {
		if (t->sigs[i].tid != (uint32_t)t->tid)
			continue;
		if (requeue(t->pid, t->tid, &t->sigs[i])) {
			raw_syscall3(SYS_write, t->errpipe, (long)msg, sizeof(msg) - 1);
			raw_syscall3(SYS_exit_group, 1, 0, 0);
		}
	}
	if (t->has_cpus)
		raw_syscall3(SYS_sched_setaffinity, 0, sizeof(t->cpus),
			     (long)&t->cpus);
	if (t->ioprio)	/* IOPRIO_WHO_PROCESS 0: this thread */
		raw_syscall3(SYS_ioprio_set, 1, 0, t->ioprio);
	raw_syscall3(SYS_ioctl, t->dev, CKPT_IOC_RESTART_THREAD,
		     (long)&t->index);
	/* Only a failed restart gets here; the main thread reports it. */
	for (;;)
		raw_syscall3(SYS_exit, 1, 0, 0);
}

static long clone3_thread(struct clone3_args *args, struct thread_arg *arg)
{
	register void *fn asm("r12") = (void *)thread_main;
	register void *a asm("r13") = arg;
	long ret;

	asm volatile("syscall\n\t"
		     "test %%rax, %%rax\n\t"
		     "jnz 1f\n\t"
		     "xor %%ebp, %%ebp\n\t"
		     "mov %%r13, %%rdi\n\t"
		     "call *%%r12\n\t"
		     "ud2\n"
		     "1:"
		     : "=a"(ret)
		     : "a"(SYS_clone3), "D"(args), "S"(sizeof(*args)),
		       "r"(fn), "r"(a)
		     : "rcx", "r11", "memory");
	return ret;
}

/* The [vvar...] and [vdso] mappings of this process, lowest first. */
struct special {
	unsigned long start, end;
};

static int find_specials(struct special *sp, int max, unsigned long *lo,
			 unsigned long *hi)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "re");
	int n = 0;

	if (!f)
		return -errno;
	*lo = ~0UL;
	*hi = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long s, e;

		if (!strstr(line, "[vdso]") && !strstr(line, "[vvar"))
			continue;
		if (sscanf(line, "%lx-%lx", &s, &e) != 2 || n == max)
			continue;
		sp[n].start = s;
		sp[n].end = e;
		n++;
		if (s < *lo)
			*lo = s;
		if (e > *hi)
			*hi = e;
	}
	fclose(f);
	return n;
}

/* Whether [lo, hi) overlaps any mapping but the vdso/vvar. */
bool restore_range_busy(unsigned long lo, unsigned long hi)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "re");
	bool busy = false;

	if (!f)
		return true;
	while (fgets(line, sizeof(line), f)) {
		unsigned long s, e;

		if (strstr(line, "[vdso]") || strstr(line, "[vvar"))
			continue;
		if (sscanf(line, "%lx-%lx", &s, &e) == 2 && s < hi && e > lo)
			busy = true;
	}
	fclose(f);
	return busy;
}

/* Whether [lo, hi) is in the way of the image's memory or its old vdso. */
bool restore_image_busy(struct restore *r, unsigned long lo,
		       unsigned long hi)
{
	const struct ckpt_image *img = &r->img;
	const struct ckpt_img_process *proc = &img->proc;
	__u32 i;

	for (i = 0; i < img->nr_vmas; i++) {
		const struct ckpt_img_vma *v = &img->vmas[i];

		if (!(v->flags & (CKPT_VMA_VDSO | CKPT_VMA_VVAR)) &&
		    v->start < hi && v->end > lo)
			return true;
	}
	return proc->vdso < hi && proc->vdso + proc->vdso_size > lo;
}

/*
 * Moves vvar and vdso, keeping their layout, to @dst. Goes through a
 * scratch area so old and new places may overlap.
 */
static void remap_specials(struct restore *r, const struct special *sp, int n,
			   unsigned long lo, unsigned long size, unsigned long dst)
{
	unsigned long scratch;
	int i;

	scratch = (unsigned long)mmap(NULL, size, PROT_NONE,
				      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (scratch == (unsigned long)MAP_FAILED)
		child_fail(r, "cannot reserve room to move the vdso: %s", strerror(errno));
	for (i = 0; i < n; i++)
		if (mremap((void *)sp[i].start, sp[i].end - sp[i].start,
			   sp[i].end - sp[i].start, MREMAP_MAYMOVE | MREMAP_FIXED,
			   (void *)(scratch + sp[i].start - lo)) == MAP_FAILED)
			child_fail(r, "cannot move the vdso: %s", strerror(errno));
	for (i = 0; i < n; i++)
		if (mremap((void *)(scratch + sp[i].start - lo),
			   sp[i].end - sp[i].start, sp[i].end - sp[i].start,
			   MREMAP_MAYMOVE | MREMAP_FIXED,
			   (void *)(dst + sp[i].start - lo)) == MAP_FAILED)
			child_fail(r, "cannot move the vdso: %s", strerror(errno));
}

/*
 * Where this process's vdso goes when it is the image's (same layout and
 * text): [*dst, *dst + size) from the specials @sp; 0 when it is not the
 * image's, 1 when it is, -errno when there is no vdso to be found.
 */
static int vdso_same(const struct restore *r, struct special *sp, int *n,
		     unsigned long *lo, unsigned long *size, unsigned long *dst)
{
	const struct ckpt_img_process *proc = &r->img.proc;
	unsigned long hi = 0, vdso = 0;
	int i;

	*n = find_specials(sp, 8, lo, &hi);
	if (*n <= 0)
		return -ENOENT;
	for (i = 0; i < *n; i++)
		if (sp[i].end == hi)
			vdso = sp[i].start;
	*size = hi - *lo;
	*dst = proc->vvar;
	return vdso - *lo == proc->vdso - proc->vvar &&
	       hi - vdso == proc->vdso_size &&
	       ckpt_csum((const void *)vdso, hi - vdso) == proc->vdso_csum;
}

/*
 * Before the child: whether the image's vdso address is free here, which
 * the child (a copy of this process) needs when it takes this kernel's
 * vdso there. Taken, it is by the restarter's own memory, placed at
 * random: another run of the restarter is placed elsewhere (-EADDRINUSE).
 */
static int check_vdso_room(const struct restore *r, struct ckpt_err *err)
{
	unsigned long lo, size, dst;
	struct special sp[8];
	int n;

	if (vdso_same(r, sp, &n, &lo, &size, &dst) != 1 || dst == lo ||
	    !restore_range_busy(dst, dst + size))
		return 0;
	return ckpt_err_set(err, EADDRINUSE, "%s: the image's vdso address %#lx is taken in the restarter; try again",
			    r->opts->image, (unsigned long)r->img.proc.vdso);
}

/*
 * The image's glibc holds pointers into its vdso. If this kernel's vdso is
 * the image's (same layout and text), it moves to where the image had it.
 * Otherwise the engine keeps the image's text at the old place, its entry
 * points turned into jumps to this vdso (kmod/ckpt/vdso.c), and this vdso
 * only has to be out of the image's way: it moves if it is not.
 */
static void move_vdso(struct restore *r)
{
	const struct ckpt_image *img = &r->img;
	const struct ckpt_img_process *proc = &img->proc;
	unsigned long lo, size, dst;
	struct special sp[8];
	int n, tries, same;

	same = vdso_same(r, sp, &n, &lo, &size, &dst);
	if (same < 0)
		child_fail(r, "cannot find this process's vdso");
	if (same) {
		if (dst == lo)
			return;
		if (restore_range_busy(dst, dst + size))
			child_fail(r, "the image's vdso address %#lx is taken in the restarter; try again",
				   (unsigned long)proc->vdso);
		remap_specials(r, sp, n, lo, size, dst);
		return;
	}
	if (!img->has_vdso)
		child_fail(r, "this kernel's vdso differs from the image's, which carries no copy of its own (restart on the kernel that made it)");
	if (!restore_image_busy(r, lo, lo + size))
		return;
	/* Below the old vvar, where a process's vdso usually has room. */
	dst = (proc->vvar - size) & ~(unsigned long)(CKPT_IMG_PAGE_SIZE - 1);
	for (tries = 0; tries < 4096; tries++, dst -= size + CKPT_IMG_PAGE_SIZE)
		if (dst > size && !restore_image_busy(r, dst, dst + size) &&
		    !restore_range_busy(dst, dst + size))
			break;
	if (tries == 4096)
		child_fail(r, "no room for this kernel's vdso outside the image's memory");
	remap_specials(r, sp, n, lo, size, dst);
}

/* What rt_sigaction() takes from the kernel's point of view. */
struct ksigaction {
	uint64_t handler, flags, restorer, mask;
};

static void restore_process(struct restore *r)
{
	const struct ckpt_img_process *proc = &r->img.proc;
	int i;

	for (i = 0; i < CKPT_IMG_NSIG; i++) {
		const struct ckpt_img_sigaction *s = &proc->sigaction[i];
		struct ksigaction ksa = {
			s->handler, s->flags, s->restorer, s->mask,
		};

		if (i + 1 == SIGKILL || i + 1 == SIGSTOP)
			continue;
		if (syscall(SYS_rt_sigaction, i + 1, &ksa, NULL, 8))
			child_fail(r, "cannot restore the handler of signal %d: %s",
				   i + 1, strerror(errno));
	}
	for (i = 0; i < RLIM_NLIMITS && i < CKPT_IMG_NRLIMITS; i++) {
		struct rlimit rl = {
			proc->rlimit[i].cur, proc->rlimit[i].max,
		};

		if (setrlimit(i, &rl))
			child_fail(r, "cannot restore resource limit %d (%llu/%llu): %s",
				   i, (unsigned long long)rl.rlim_cur,
				   (unsigned long long)rl.rlim_max, strerror(errno));
	}
	umask(proc->umask);
	if (personality(proc->personality) < 0)
		child_fail(r, "cannot restore personality %#x: %s",
			   proc->personality, strerror(errno));
}

/*
 * Once the image's dispositions are in place: the signals it ignores
 * (SIG_IGN, or a default action of ignoring) and has none pending of are
 * unblocked again, here and in the threads made after. A blocked signal is
 * queued even when ignored, and its delivery then dropped: for a periodic
 * timer whose signal is ignored, that delivery would take the expirations
 * it counted along, which its next signal reports instead.
 */
static void unblock_ignored(struct restore *r)
{
	const struct ckpt_image *img = &r->img;
	uint64_t mask = 0;
	uint32_t sig, i;

	for (sig = 1; sig <= CKPT_IMG_NSIG; sig++) {
		uint64_t handler = img->proc.sigaction[sig - 1].handler;

		if (handler != (uintptr_t)SIG_IGN &&
		    (handler != (uintptr_t)SIG_DFL ||
		     (sig != SIGCHLD && sig != SIGCONT && sig != SIGURG &&
		      sig != SIGWINCH)))
			continue;
		for (i = 0; i < img->signals.nr; i++)
			if (img->sigqueue[i].signo == sig)
				break;
		if (i == img->signals.nr)
			mask |= 1ULL << (sig - 1);
	}
	if (mask && syscall(SYS_rt_sigprocmask, SIG_UNBLOCK, &mask, NULL,
			    sizeof(mask)))
		child_fail(r, "cannot unblock ignored signals: %s", strerror(errno));
}

/* Moves one of the restarter's own descriptors out of the image's way. */
static int move_fd(struct restore *r, int fd, int above)
{
	int nfd = fcntl(fd, F_DUPFD_CLOEXEC, above);

	if (nfd < 0)
		child_fail(r, "cannot move descriptor %d: %s", fd, strerror(errno));
	close(fd);
	return nfd;
}

/* Places @fd at @f's descriptor with its close-on-exec flag. */
static void place_fd(struct restore *r, int fd, const struct ckpt_img_file *f)
{
	if (fd != (int)f->fd) {
		if (dup2(fd, f->fd) < 0)
			child_fail(r, "cannot place %s at fd %u: %s", f->path,
				   f->fd, strerror(errno));
		close(fd);
	}
	if (fcntl(f->fd, F_SETFD, f->flags & CKPT_FILE_CLOEXEC ? FD_CLOEXEC : 0))
		child_fail(r, "fd %u: %s", f->fd, strerror(errno));
}

/*
 * A fresh /dev/ckpt takes the place of the old one; the one that carried
 * libckpt's registration is registered as restarted from this image, which
 * is how the callback thread learns that it runs again.
 */
static void restore_ckpt_dev(struct restore *r, const struct ckpt_img_file *f)
{
	struct ckpt_register reg = {
		.flags = CKPT_REGISTER_RESTARTED,
	};
	int fd;

	fd = ckpt_dev_open(f->open_flags);
	if (fd < 0)
		child_fail(r, "cannot reopen %s (fd %u): %s", ckpt_dev_path(),
			   f->fd, strerror(-fd));
	place_fd(r, fd, f);
	if (!(f->flags & CKPT_FILE_REGISTERED))
		return;
	reg.source = (uintptr_t)r->source;
	reg.source_len = strlen(r->source);
	if (ckpt_dev_register(f->fd, &reg))
		child_fail(r, "cannot restore the callback registration (fd %u): %s",
			   f->fd, strerror(errno));
}

/* From linux/timerfd.h, which clashes with glibc's fcntl.h. */
#ifndef TFD_IOC_SET_TICKS
#define TFD_IOC_SET_TICKS	_IOW('T', 0, __u64)
#endif

/*
 * A timerfd of @img, re-armed relative to now with the time it had left,
 * its unread expirations put back.
 */
int restore_make_timerfd(const struct ckpt_image *img,
			 const struct ckpt_img_file *f, struct ckpt_err *err)
{
	const struct ckpt_img_timerfd *t = NULL;
	struct itimerspec its = {};
	uint32_t i;
	int fd, ret;

	for (i = 0; i < img->nr_timerfds; i++)
		if (img->timerfds[i].fd == f->fd)
			t = &img->timerfds[i];
	if (!t)
		return ckpt_err_set(err, EBADMSG, "timerfd %u has no TIMERFD entry", f->fd);
	fd = timerfd_create(t->clockid, TFD_CLOEXEC |
			    (f->open_flags & O_NONBLOCK ? TFD_NONBLOCK : 0));
	if (fd < 0)
		return ckpt_err_set(err, errno, "cannot re-create timerfd %u: %s",
				    f->fd, strerror(errno));
	its.it_value.tv_sec = t->value_ns / 1000000000ULL;
	its.it_value.tv_nsec = t->value_ns % 1000000000ULL;
	its.it_interval.tv_sec = t->interval_ns / 1000000000ULL;
	its.it_interval.tv_nsec = t->interval_ns % 1000000000ULL;
	if (timerfd_settime(fd, 0, &its, NULL)) {
		ret = ckpt_err_set(err, errno, "cannot arm timerfd %u: %s",
				   f->fd, strerror(errno));
		close(fd);
		return ret;
	}
	if (t->ticks && ioctl(fd, TFD_IOC_SET_TICKS, &t->ticks)) {
		ret = ckpt_err_set(err, errno, "cannot restore the %llu unread expirations of timerfd %u: %s",
				   (unsigned long long)t->ticks, f->fd, strerror(errno));
		close(fd);
		return ret;
	}
	return fd;
}

/* A signalfd of the image's mask (@f->dev: bit N - 1 for signal N). */
int restore_make_signalfd(const struct ckpt_img_file *f, struct ckpt_err *err)
{
	sigset_t mask;
	int fd, sig;

	sigemptyset(&mask);
	for (sig = 1; sig <= 64; sig++)
		if (f->dev & (1ULL << (sig - 1)))
			sigaddset(&mask, sig);
	fd = signalfd(-1, &mask, SFD_CLOEXEC |
		      (f->open_flags & O_NONBLOCK ? SFD_NONBLOCK : 0));
	if (fd < 0)
		return ckpt_err_set(err, errno, "cannot re-create signalfd %u: %s",
				    f->fd, strerror(errno));
	return fd;
}

int restore_make_epoll(const struct ckpt_img_file *f, struct ckpt_err *err)
{
	int fd = epoll_create1(EPOLL_CLOEXEC);

	if (fd >= 0 && f->open_flags & O_NONBLOCK &&
	    fcntl(fd, F_SETFL, O_NONBLOCK)) {
		close(fd);
		fd = -1;
	}
	if (fd < 0)
		return ckpt_err_set(err, errno, "cannot re-create %s (fd %u): %s",
				    f->path, f->fd, strerror(errno));
	return fd;
}

/* An eventfd: its count and mode. */
int restore_make_eventfd(const struct ckpt_img_file *f, struct ckpt_err *err)
{
	uint64_t count = f->pos;
	int fd, ret;

	fd = eventfd(0, EFD_CLOEXEC | (f->open_flags & O_NONBLOCK ? EFD_NONBLOCK : 0) |
		     (f->ino & CKPT_EVENTFD_SEMAPHORE ? EFD_SEMAPHORE : 0));
	if (fd < 0)
		return ckpt_err_set(err, errno, "cannot re-create %s (fd %u): %s",
				    f->path, f->fd, strerror(errno));
	if (count && write(fd, &count, sizeof(count)) != sizeof(count)) {
		ret = ckpt_err_set(err, errno, "cannot restore the count of eventfd %u: %s",
				   f->fd, strerror(errno));
		close(fd);
		return ret;
	}
	return fd;
}

static void restore_anon(struct restore *r,
			 const struct ckpt_img_file *f)
{
	struct ckpt_err err;
	int fd;

	switch (f->kind) {
	case CKPT_FILE_EVENTFD:
		fd = restore_make_eventfd(f, &err);
		break;
	case CKPT_FILE_SIGNALFD:
		fd = restore_make_signalfd(f, &err);
		break;
	case CKPT_FILE_TIMERFD:
		fd = restore_make_timerfd(&r->img, f, &err);
		break;
	case CKPT_FILE_EPOLL:	/* its items come later */
		fd = restore_make_epoll(f, &err);
		break;
	case CKPT_FILE_INOTIFY:
		fd = restore_make_inotify(r, f, &err);
		break;
	default:
		child_fail(r, "fd %u: kind %u is no anonymous file", f->fd, f->kind);
	}
	if (fd < 0)
		child_fail(r, "%s", err.msg);
	place_fd(r, fd, f);
}

int restore_make_pipe(const struct ckpt_img_pipe *pd, int above, int p[2])
{
	int i, fd, err;

	if (pipe2(p, O_CLOEXEC))
		return -errno;
	for (i = 0; i < 2; i++) {
		fd = fcntl(p[i], F_DUPFD_CLOEXEC, above);
		if (fd < 0)
			goto fail;
		close(p[i]);
		p[i] = fd;
	}
	if (pd->capacity && fcntl(p[1], F_SETPIPE_SZ, pd->capacity) < 0)
		goto fail;
	if (pd->len && write(p[1], pd->data, pd->len) != (ssize_t)pd->len)
		goto fail;
	return 0;
fail:
	err = errno ? errno : EIO;
	close(p[0]);
	close(p[1]);
	return -err;
}

/*
 * A pipe: both ends made anew, its size and content restored, then each
 * descriptor placed on its end. The entries of one pipe share its ino.
 */
static void restore_pipe(struct restore *r,
			 const struct ckpt_img_file *first)
{
	const struct ckpt_image *img = &r->img;
	const struct ckpt_img_pipe *pd = NULL;
	int p[2], have_rd = 0, have_wr = 0, ret;
	uint32_t i;

	for (i = 0; i < img->nr_pipes; i++)
		if (img->pipes[i]->ino == first->ino)
			pd = img->pipes[i];
	if (!pd)
		child_fail(r, "%s (fd %u) has no PIPE section", first->path, first->fd);
	/* Out of the way of every descriptor the image places. */
	ret = restore_make_pipe(pd, img->files[img->nr_files - 1].fd + 1, p);
	if (ret)
		child_fail(r, "cannot re-create %s: %s", first->path,
			   strerror(-ret));
	for (i = 0; i < img->nr_files; i++) {
		const struct ckpt_img_file *f = &img->files[i];
		int end;

		if (f->kind != CKPT_FILE_PIPE || f->ino != first->ino)
			continue;
		end = (f->open_flags & O_ACCMODE) == O_WRONLY;
		if (end ? have_wr : have_rd) {
			if (dup2(p[end], f->fd) < 0)
				child_fail(r, "cannot place %s at fd %u: %s",
					   f->path, f->fd, strerror(errno));
		} else {
			if (fcntl(p[end], F_SETFL, f->open_flags & O_NONBLOCK))
				child_fail(r, "fd %u: %s", f->fd, strerror(errno));
			if (dup2(p[end], f->fd) < 0)
				child_fail(r, "cannot place %s at fd %u: %s",
					   f->path, f->fd, strerror(errno));
			*(end ? &have_wr : &have_rd) = 1;
		}
		if (fcntl(f->fd, F_SETFD, f->flags & CKPT_FILE_CLOEXEC ? FD_CLOEXEC : 0))
			child_fail(r, "fd %u: %s", f->fd, strerror(errno));
	}
	/* An end the process had closed stays closed. */
	close(p[0]);
	close(p[1]);
}

/*
 * The image's file objects (FILEOBJ), made before the descriptors: a FIFO
 * is opened read-write (which neither blocks nor makes its readers see
 * end-of-file) and refilled, a memfd, an unlinked file or a tree member's
 * shared anonymous memory is made anew and filled from the image's
 * FILEDATA, read with pread() from the image file. r->obj_fds[i] is the
 * restarter's descriptor of entry i, above the image's. An object a tree's
 * members share the restarter made once for all (tree.c): its copy.
 */
static int fill_object(struct restore *r, uint32_t obj, int fd,
		       struct ckpt_err *err)
{
	const struct ckpt_image *img = &r->img;
	const struct ckpt_img_fileobj *o = &img->fileobjs[obj];
	char *buf = r->chunk_buf;
	uint32_t i;

	if (!buf && !(buf = r->chunk_buf = malloc(CKPT_IMG_MAX_FILECHUNK)))
		return ckpt_err_set(err, ENOMEM, "out of memory");
	for (i = 0; i < img->nr_chunks; i++) {
		const struct ckpt_image_chunk *c = &img->chunks[i];
		ssize_t n;

		if (c->obj != obj)
			continue;
		if (pread(r->fd, buf, c->len, c->image_offset) != (ssize_t)c->len)
			return ckpt_err_set(err, EIO, "cannot read the content of %s from the image: %s",
					    o->name, strerror(errno));
		if (o->kind == CKPT_FILE_FIFO)
			n = write(fd, buf, c->len);
		else
			n = pwrite(fd, buf, c->len, c->offset);
		if (n != (ssize_t)c->len)
			return ckpt_err_set(err, n < 0 ? errno : EIO,
					    "cannot restore the content of %s: %s", o->name,
					    n < 0 ? strerror(errno) : "short write");
	}
	return 0;
}

/*
 * The FIFO at @o's path, if it is still the one it was, or made again by
 * this restart where it is gone (localfile.c); one unlinked while open,
 * made anew unlinked (read-write only: its other descriptors are opened
 * through this one, restore_fileobj()).
 */
static int open_fifo(struct restore *r, const struct ckpt_img_fileobj *o,
		     int flags, struct ckpt_err *err)
{
	struct stat st;
	int fd, ret;

	if (restore_fifo_deleted(o))
		return restore_fifo_unlinked(&r->img, o, err);
	fd = open(o->name, flags | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0 && errno == ENOENT) {
		ret = restore_fifo_make(&r->img, o, err);
		if (ret)
			return ret;
		fd = open(o->name, flags | O_NONBLOCK | O_CLOEXEC);
	}
	if (fd < 0)
		return ckpt_err_set(err, errno, "cannot reopen FIFO %s: %s",
				    o->name, strerror(errno));
	if (fstat(fd, &st) || !S_ISFIFO(st.st_mode) ||
	    !own_same_or_made(r, &st, o->dev, o->ino)) {
		close(fd);
		return ckpt_err_set(err, ESTALE, "%s is not the FIFO it was at the checkpoint",
				    o->name);
	}
	return fd;
}

/*
 * A job's node-local file: the file at its path if it is the one it was (or one
 * this restart made), else made again, empty, where the path is gone
 * (localfile.c; *@made).
 */
static int open_local(struct restore *r, const struct ckpt_img_fileobj *o,
		      bool *made, struct ckpt_err *err)
{
	struct stat st;
	int fd = restore_local_open(&r->img, o, made, err);

	if (fd < 0 || *made)
		return fd;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    !own_same_or_made(r, &st, o->dev, o->ino)) {
		close(fd);
		return ckpt_err_set(err, ESTALE, "%s is not the file it was at the checkpoint (a node-local file: it is made again only where its path is gone)",
				    o->name);
	}
	return fd;
}

/* memfd_create()'s MFD_EXEC (Linux 6.3), which glibc 2.36 lacks. */
#define CKPT_MFD_EXEC	0x0010U

/* A new, empty file for a memfd, a deleted file or shared memory. */
static int new_object(const struct ckpt_img_fileobj *o, struct ckpt_err *err)
{
	char dir[CKPT_IMG_PATH_MAX];
	int fd;

	if (o->kind == CKPT_FILE_MEMFD || o->kind == CKPT_FILE_SHMEM) {
		const char *name = o->kind == CKPT_FILE_SHMEM ? "dev/zero" : o->name;

		/*
		 * Shared anonymous memory is a memfd's from now on. One that
		 * may be executed says so: with vm.memfd_noexec set (6.3 on),
		 * a memfd is otherwise made sealed against it. 6.1 knows no
		 * MFD_EXEC (EINVAL) and makes every memfd executable.
		 */
		fd = -1;
		if (o->mode & 0111)
			fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING |
					  CKPT_MFD_EXEC);
		if (fd < 0 && (!(o->mode & 0111) || errno == EINVAL))
			fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
		if (fd < 0)
			return ckpt_err_set(err, errno, "cannot create memfd %s: %s",
					    o->name, strerror(errno));
		return fd;
	}
	strcpy(dir, o->name);
	fd = open(dirname(dir), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0 && errno == ENOENT)
		return ckpt_err_set(err, ENOENT, "cannot recreate deleted file %s: its directory no longer exists",
				    o->name);
	if (fd < 0)
		return ckpt_err_set(err, errno, "cannot recreate deleted file %s as an unnamed file (O_TMPFILE) in %s: %s",
				    o->name, dir, strerror(errno));
	return fd;
}

int restore_make_object(struct restore *r, uint32_t obj, struct ckpt_err *err)
{
	const struct ckpt_img_fileobj *o = &r->img.fileobjs[obj];
	int fd, ret;

	if (o->kind == CKPT_FILE_FIFO) {
		fd = open_fifo(r, o, O_RDWR, err);
		if (fd >= 0 && o->capacity &&
		    fcntl(fd, F_SETPIPE_SZ, o->capacity) < 0) {
			ret = ckpt_err_set(err, errno, "cannot size FIFO %s to %u bytes: %s",
					   o->name, o->capacity, strerror(errno));
			close(fd);
			return ret;
		}
	} else {
		bool made = true;

		fd = o->kind == CKPT_FILE_LOCAL ? open_local(r, o, &made, err) :
						  new_object(o, err);
		if (!made)
			return fd;	/* a node-local file that was there: as it is */
		if (fd >= 0 && ftruncate(fd, o->size)) {
			ret = ckpt_err_set(err, errno, "cannot size %s to %llu bytes: %s",
					   o->name, (unsigned long long)o->size,
					   strerror(errno));
			close(fd);
			return ret;
		}
	}
	if (fd < 0)
		return fd;
	ret = fill_object(r, obj, fd, err);
	if (ret) {
		close(fd);
		return ret;
	}
	return fd;
}

bool restore_is_exe(const struct ckpt_image *img,
		    const struct ckpt_img_fileobj *o)
{
	const struct ckpt_img_process *p = &img->proc;
	const struct ckpt_img_fileobj *e;

	if (p->exe_dev != CKPT_IMG_EXE_OBJ || p->exe_ino >= img->nr_fileobjs)
		return false;
	e = &img->fileobjs[p->exe_ino];
	return e == o || (e->kind == o->kind && e->dev == o->dev &&
			  e->ino == o->ino);
}

int restore_object_readonly(const struct ckpt_img_fileobj *o, int fd,
			    struct ckpt_err *err)
{
	char path[64];
	int ro, ret;

	if (o->kind != CKPT_FILE_DELETED)
		return fd;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ro = open(path, O_RDONLY | O_CLOEXEC);
	if (ro < 0) {
		ret = ckpt_err_set(err, errno, "cannot reopen the deleted executable %s read-only: %s",
				   o->name, strerror(errno));
		close(fd);
		return ret;
	}
	close(fd);
	return ro;
}

int restore_finish_object(const struct ckpt_img_fileobj *o, int fd,
			  struct ckpt_err *err)
{
	/* A node-local file that was there stays as it is. */
	if (o->kind == CKPT_FILE_LOCAL && !restore_file_made_fd(fd))
		return 0;
	if (fchmod(fd, o->mode))
		return ckpt_err_set(err, errno, "cannot restore the mode of %s: %s",
				    o->name, strerror(errno));
	if (o->seals && fcntl(fd, F_ADD_SEALS, o->seals))
		return ckpt_err_set(err, errno, "cannot seal memfd %s (seals %#x): %s",
				    o->name, o->seals, strerror(errno));
	return 0;
}

const struct restore_shared *
restore_find_shared(const struct restore_shared *sh, uint32_t nr, __u32 kind,
		    __u64 dev, __u64 ino)
{
	uint32_t i;

	for (i = 0; i < nr; i++)
		if (sh[i].kind == kind && sh[i].dev == dev && sh[i].ino == ino)
			return &sh[i];
	return NULL;
}

/* A single process's socket pairs and listening sockets, in its own table. */
static void make_own_usocks(struct restore *r, int above)
{
	struct ckpt_image *img = &r->img;
	struct ckpt_err err;
	uint32_t i;

	int fd;

	if (img->has_tree ||
	    (!img->nr_usocks && !img->nr_ulistens && !img->nr_tcps &&
	     !img->nr_unames))
		return;
	r->shared = calloc(2 * img->nr_usocks + img->nr_ulistens +
			   img->nr_upends + img->nr_tcps + img->nr_unames,
			   sizeof(*r->shared));
	if (!r->shared)
		child_fail(r, "out of memory");
	if (restore_make_usocks(&img, 1, r->shared, &r->nr_shared, &err) ||
	    restore_make_channels(&(struct restore_chans){
			.imgs = &img, .n = 1, .sh = r->shared,
			.nr = &r->nr_shared, .err = &err }))
		child_fail(r, "%s", err.msg);
	for (i = 0; i < img->nr_ulistens; i++) {
		fd = restore_make_listener(r, &img->ulistens[i], &err);
		if (fd < 0)
			child_fail(r, "%s", err.msg);
		r->shared[r->nr_shared++] = (struct restore_shared){
			.kind = CKPT_FILE_UNIX, .ino = img->ulistens[i].ino,
			.fd = { fd, -1 },
		};
		if (restore_make_pending(img, &img->ulistens[i], &img, 1,
					 r->shared, &r->nr_shared, &err))
			child_fail(r, "%s", err.msg);
	}
	if (restore_make_unames(r, img, r->shared, &r->nr_shared, &err) ||
	    restore_connect_unames(r, img, r->shared, r->nr_shared, &err))
		child_fail(r, "%s", err.msg);
	for (i = 0; i < r->nr_shared; i++)
		r->shared[i].fd[0] = move_fd(r, r->shared[i].fd[0], above);
}

/*
 * The tree's copy of object @o, if the restarter made it for all (a FIFO
 * each member opens by its path, but one unlinked).
 */
static const struct restore_shared *shared_object(const struct restore *r,
						  const struct ckpt_img_fileobj *o)
{
	if (o->kind == CKPT_FILE_FIFO && !restore_fifo_deleted(o))
		return NULL;
	return restore_find_shared(r->shared, r->nr_shared, o->kind, o->dev,
				   o->ino);
}

static void make_objects(struct restore *r, int above)
{
	const struct ckpt_image *img = &r->img;
	const struct restore_shared *sh;
	struct ckpt_err err;
	uint32_t i;
	int fd;

	r->obj_fds = calloc(img->nr_fileobjs + 1, sizeof(*r->obj_fds));
	if (!r->obj_fds)
		child_fail(r, "out of memory");
	for (i = 0; i < img->nr_fileobjs; i++) {
		sh = shared_object(r, &img->fileobjs[i]);
		if (sh)
			fd = fcntl(sh->fd[0], F_DUPFD_CLOEXEC, above);
		else
			fd = restore_make_object(r, i, &err);
		if (!sh && fd >= 0 && restore_is_exe(img, &img->fileobjs[i]))
			fd = restore_object_readonly(&img->fileobjs[i], fd, &err);
		if (fd < 0)
			child_fail(r, "%s", sh ? strerror(errno) : err.msg);
		r->obj_fds[i] = move_fd(r, fd, above);
	}
}

/*
 * A new open file of the inode of @r's file object that @f names, held at
 * @objfd, with @f's flags at its position (an unlinked FIFO's too: its
 * read-write descriptor there is both a reader and a writer, so no open
 * of it waits): its descriptor, close-on-exec, or -errno with @err.
 */
static int reopen_object(const struct restore *r, const struct ckpt_img_file *f,
			 int objfd, struct ckpt_err *err)
{
	const struct ckpt_img_fileobj *o = &r->img.fileobjs[f->ino];
	char path[64];
	int fd, e;

	if (o->kind == CKPT_FILE_MEMFD && restore_is_exe(&r->img, o) &&
	    (f->open_flags & O_ACCMODE) != O_RDONLY) {
		/* memfd_create()'s own file (restore_is_exe()). */
		fd = fcntl(objfd, F_DUPFD_CLOEXEC, 0);
		if (fd >= 0 && fcntl(fd, F_SETFL, f->open_flags & ~O_ACCMODE)) {
			e = errno;
			close(fd);
			return ckpt_err_set(err, e, "fd %u: %s", f->fd, strerror(e));
		}
	} else {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", objfd);
		fd = open(path, f->open_flags | O_CLOEXEC);
	}
	if (fd < 0)
		return ckpt_err_set(err, errno, "cannot reopen %s (fd %u): %s",
				    f->path, f->fd, strerror(errno));
	if (o->kind != CKPT_FILE_FIFO && lseek(fd, f->pos, SEEK_SET) < 0) {
		e = errno;
		close(fd);
		return ckpt_err_set(err, e, "cannot seek %s (fd %u) to %llu: %s",
				    f->path, f->fd, (unsigned long long)f->pos,
				    strerror(e));
	}
	return fd;
}

struct shared_object {
	const struct ckpt_img_file *f;
	int objfd;
};

/* reopen_object(), through restore_as_member(). */
static int open_shared_object(struct restore *r, const void *arg,
			      struct ckpt_err *err)
{
	const struct shared_object *so = arg;

	return reopen_object(r, so->f, so->objfd, err);
}

int restore_open_shared_object(struct restore *r, const struct ckpt_img_file *f,
			       int objfd, struct ckpt_err *err)
{
	const struct shared_object so = { f, objfd };

	return restore_as_member(r, open_shared_object, &so, f->path, err);
}

/* A descriptor of a file object: its own open file, as it was. */
static void restore_fileobj(struct restore *r,
			    const struct ckpt_img_file *f)
{
	const struct ckpt_image *img = &r->img;
	const struct ckpt_img_fileobj *o = &img->fileobjs[f->ino];
	struct ckpt_err err;
	int fd, fl;

	if (o->kind == CKPT_FILE_FIFO && !restore_fifo_deleted(o)) {
		fd = open_fifo(r, o, f->open_flags & O_ACCMODE, &err);
		if (fd < 0)
			child_fail(r, "%s", err.msg);
		fl = fcntl(fd, F_GETFL);
		if (fl < 0 || fcntl(fd, F_SETFL, (fl & ~O_NONBLOCK) |
				    (f->open_flags & O_NONBLOCK)))
			child_fail(r, "fd %u: %s", f->fd, strerror(errno));
	} else {
		fd = reopen_object(r, f, r->obj_fds[f->ino], &err);
		if (fd < 0)
			child_fail(r, "%s", err.msg);
	}
	place_fd(r, fd, f);
}

/*
 * Once every descriptor is open: modes and seals (which could forbid the
 * opens above; of FIFOs, one made anew), and the FIFOs' own descriptors
 * go. The engine maps memfds and unlinked files through r->obj_fds and
 * closes them.
 */
static void finish_objects(struct restore *r)
{
	const struct ckpt_image *img = &r->img;
	struct ckpt_err err;
	uint32_t i;

	for (i = 0; i < img->nr_fileobjs; i++) {
		const struct ckpt_img_fileobj *o = &img->fileobjs[i];

		/* A shared one's the restarter finishes (tree.c). */
		if ((o->kind != CKPT_FILE_FIFO || restore_fifo_deleted(o)) &&
		    !shared_object(r, o) &&
		    restore_finish_object(o, r->obj_fds[i], &err))
			child_fail(r, "%s", err.msg);
		if (o->kind == CKPT_FILE_FIFO) {
			close(r->obj_fds[i]);
			r->obj_fds[i] = -1;
		}
	}
}

/* @img's entry of descriptor @fd, or NULL. */
static const struct ckpt_img_file *file_at(const struct ckpt_image *img,
					   __u32 fd)
{
	return ckpt_img_file_at(img->files, img->nr_files, fd);
}

/*
 * Whether this process adds the items of its epoll @ep: its own, or a
 * tree's shared one whose image made it (every holder's image lists the
 * same items; the one that made it adds them once).
 */
static bool epoll_holder(const struct restore *r, const struct ckpt_img_file *ep)
{
	const struct restore_shared *sh;

	if (!(ep->flags & CKPT_FILE_TREE_SHARED))
		return true;
	sh = restore_find_shared(r->shared, r->nr_shared, ep->kind, ep->dev,
				 ep->ino);
	return sh && sh->holder == r->img.tree.index;
}

/*
 * Once every descriptor is back: the epoll interest lists. The validator
 * (image_check.c) has seen each item on an epoll of the image, watching
 * one of its descriptors (or 0-2, the restarter's, closed in a member
 * that had none): the tree's table is still open here, and an edited
 * image must not watch its descriptors.
 */
static void restore_epoll(struct restore *r)
{
	const struct ckpt_image *img = &r->img;
	uint32_t i;

	for (i = 0; i < img->nr_epitems; i++) {
		const struct ckpt_img_epitem *e = &img->epitems[i];
		const struct ckpt_img_file *ep = file_at(img, e->epfd);
		struct epoll_event ev = { .events = e->events, .data.u64 = e->data };

		if (!epoll_holder(r, ep))
			continue;
		if (epoll_ctl(e->epfd, EPOLL_CTL_ADD, e->tfd, &ev))
			child_fail(r, "cannot watch fd %u with epoll fd %u again: %s",
				   e->tfd, e->epfd, strerror(errno));
	}
}

/*
 * A file of a procfs or a sysfs (CKPT_FILE_PROCFS, _SYSFS) is the file at
 * its path if it is on a file system of that type and of its kind: their
 * inode numbers are the mount's and the boot's (engine.md, "Files of /proc
 * and /sys"). 0, or -errno with @err.
 */
static int kernel_view(const struct ckpt_img_file *f, int fd,
		       struct ckpt_err *err)
{
	bool proc = f->flags & CKPT_FILE_PROCFS;
	struct statfs sfs;
	struct stat st;

	if (fstatfs(fd, &sfs) || fstat(fd, &st) ||
	    sfs.f_type != (proc ? PROC_SUPER_MAGIC : SYSFS_MAGIC) ||
	    !S_ISDIR(st.st_mode) != (f->kind != CKPT_FILE_DIR))
		return ckpt_err_set(err, ESTALE, "%s (fd %u) is not a %s %s as at the checkpoint",
				    f->path, f->fd, f->kind == CKPT_FILE_DIR ?
				    "directory" : "file", proc ? "in a procfs" :
				    "in a sysfs");
	return 0;
}

/*
 * A file or device by path, as @f had it: the same file (or device) at
 * @f's position. Its descriptor (close-on-exec), or -errno with @err.
 */
static int open_path(struct restore *r, const struct ckpt_img_file *f,
		     struct ckpt_err *err)
{
	struct stat st;
	int fd, ret;

	fd = open(f->path, f->open_flags | O_CLOEXEC |
		  (f->kind == CKPT_FILE_DIR ? O_DIRECTORY : 0));
	if (fd < 0)
		return ckpt_err_set(err, errno, "cannot reopen %s (fd %u): %s",
				    f->path, f->fd, strerror(errno));
	if (f->kind == CKPT_FILE_CHR) {
		if (fstat(fd, &st) || !S_ISCHR(st.st_mode) || st.st_rdev != f->dev) {
			ret = ckpt_err_set(err, ESTALE, "%s (fd %u) is not the device it was at the checkpoint",
					   f->path, f->fd);
			goto fail;
		}
	} else if (f->flags & (CKPT_FILE_PROCFS | CKPT_FILE_SYSFS)) {
		ret = kernel_view(f, fd, err);
		if (ret)
			goto fail;
	} else if (fstat(fd, &st) || !restore_same_or_made(r, &st, f->dev, f->ino)) {
		ret = ckpt_err_set(err, ESTALE, "%s (fd %u) is not the file it was at the checkpoint",
				   f->path, f->fd);
		goto fail;
	}
	if (f->kind != CKPT_FILE_CHR && lseek(fd, f->pos, SEEK_SET) < 0) {
		ret = ckpt_err_set(err, errno, "cannot seek %s (fd %u) to %llu: %s",
				   f->path, f->fd, (unsigned long long)f->pos,
				   strerror(errno));
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return ret;
}

static int set_fs_ids(struct restore *r);

/*
 * In the helper, with the image's groups and file-system ids: what @make
 * made of @arg, an open file, or why not ("ERRNO MESSAGE"), to the
 * restarter.
 */
static void __attribute__((noreturn))
send_made(struct restore *r, restore_make_fn make, const void *arg, int sock)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	char why[sizeof(((struct ckpt_err *)0)->msg) + 16];
	struct ckpt_err err;
	struct iovec iov;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;
	int fd, ret;

	ret = set_fs_ids(r);
	if (ret)
		fd = ckpt_err_set(&err, -ret, "cannot take the image's groups and file-system ids: %s",
				  strerror(-ret));
	else
		fd = make(r, arg, &err);
	if (fd < 0) {
		snprintf(why, sizeof(why), "%d %s", -fd, err.msg);
		iov = (struct iovec){ why, strlen(why) + 1 };
	} else {
		iov = (struct iovec){ "", 1 };
		mh.msg_control = cbuf;
		mh.msg_controllen = sizeof(cbuf);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	}
	/* Why it could not say so, in its status (restore_as_member()). */
	_exit(sendmsg(sock, &mh, 0) < 0 ? (errno > 0 && errno < 126 ? errno : 126) : 0);
}

/*
 * What is known of a helper that sent neither a descriptor nor a reason:
 * the restarter's receive failed (@rerr), or how the helper ended (@st):
 * killed, or with the errno its sendmsg() failed with as its status
 * (send_made(), which exits with nothing else but 0).
 */
static int helper_silent(const char *what, int rerr, int st,
			 struct ckpt_err *err)
{
	if (rerr)
		return ckpt_err_set(err, rerr, "cannot make %s: no answer from the helper: %s",
				    what, strerror(rerr));
	if (WIFSIGNALED(st))
		return ckpt_err_set(err, EIO, "cannot make %s: the helper was killed by signal %d (%s) before it answered",
				    what, WTERMSIG(st), strsignal(WTERMSIG(st)));
	if (WIFEXITED(st) && WEXITSTATUS(st))
		return ckpt_err_set(err, WEXITSTATUS(st), "cannot make %s: the helper could not send its answer: %s",
				    what, strerror(WEXITSTATUS(st)));
	return ckpt_err_set(err, EIO, "cannot make %s: the helper ended without an answer",
			    what);
}

int restore_as_member(struct restore *r, restore_make_fn make, const void *arg,
		      const char *what, struct ckpt_err *err)
{
	char cbuf[CMSG_SPACE(sizeof(int))], msg[sizeof(err->msg) + 16] = "";
	struct iovec iov = { msg, sizeof(msg) - 1 };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm;
	int sv[2], fd = -1, st = 0, rerr = 0;
	ssize_t n;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return ckpt_err_set(err, errno, "socketpair: %s", strerror(errno));
	pid = fork();
	if (!pid) {
		close(sv[0]);
		send_made(r, make, arg, sv[1]);
	}
	close(sv[1]);
	if (pid < 0) {
		close(sv[0]);
		return ckpt_err_set(err, errno, "cannot fork: %s", strerror(errno));
	}
	do
		n = recvmsg(sv[0], &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		rerr = errno;
	close(sv[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	cm = n > 0 ? CMSG_FIRSTHDR(&mh) : NULL;
	if (cm && cm->cmsg_type == SCM_RIGHTS &&
	    cm->cmsg_len == CMSG_LEN(sizeof(int)))
		memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	if (fd >= 0)
		return fd;
	if (n > 0 && strchr(msg, ' '))
		return ckpt_err_set(err, atoi(msg) > 0 ? atoi(msg) : EIO, "%s",
				    strchr(msg, ' ') + 1);
	/* Made and sent, but not received here (no descriptor left). */
	if (n > 0 && mh.msg_flags & MSG_CTRUNC)
		return ckpt_err_set(err, EMFILE, "cannot make %s: the restarter could not take the descriptor the helper sent (too many open files?)",
				    what);
	return helper_silent(what, rerr, st, err);
}

static int open_file(struct restore *r, const void *f, struct ckpt_err *err)
{
	return open_path(r, f, err);
}

int restore_open_shared(struct restore *r, const struct ckpt_img_file *f,
			struct ckpt_err *err)
{
	return restore_as_member(r, open_file, f, f->path, err);
}

/* A tree's descriptor the restarter made for all members (tree.c). */
static void place_shared(struct restore *r, const struct ckpt_img_file *f)
{
	const struct restore_shared *sh;
	int end = (f->kind == CKPT_FILE_PIPE &&
		   (f->open_flags & O_ACCMODE) == O_WRONLY) ||
		  (f->kind == CKPT_FILE_PTY && f->dev == CKPT_PTY_SLAVE);

	if (f->kind == CKPT_FILE_MEMFD || f->kind == CKPT_FILE_DELETED)
		sh = restore_find_shared(r->shared, r->nr_shared,
					 RESTORE_SHARED_OBJFILE, f->dev,
					 r->img.fileobjs[f->ino].ino);
	else
		sh = restore_find_shared(r->shared, r->nr_shared, f->kind,
					 f->flags & CKPT_FILE_TREE_SHARED ?
					 restore_shared_dev(f) : 0, f->ino);
	if (!sh)
		child_fail(r, "%s (fd %u) is not among what the tree shares",
			   f->path, f->fd);
	if ((f->kind == CKPT_FILE_PIPE || f->kind == CKPT_FILE_UNIX ||
	     f->kind == CKPT_FILE_TCP || f->kind == CKPT_FILE_PTY) &&
	    fcntl(sh->fd[end], F_SETFL, f->open_flags & O_NONBLOCK))
		child_fail(r, "fd %u: %s", f->fd, strerror(errno));
	if (dup2(sh->fd[end], f->fd) < 0 ||
	    fcntl(f->fd, F_SETFD, f->flags & CKPT_FILE_CLOEXEC ? FD_CLOEXEC : 0))
		child_fail(r, "cannot place %s at fd %u: %s", f->path, f->fd,
			   strerror(errno));
}

/*
 * A tree's member: a standard descriptor the image does not have was
 * closed (the root keeps the restarter's, as a single process does).
 */
static void close_stdio(struct restore *r)
{
	const struct ckpt_image *img = &r->img;
	int fd;

	if (!img->has_tree || !img->tree.index)
		return;
	for (fd = 0; fd <= 2; fd++)
		if (!file_at(img, fd))
			close(fd);
}

/* The shared descriptors it placed are copies. */
static void close_shared(struct restore *r)
{
	uint32_t i;

	for (i = 0; i < r->nr_shared; i++) {
		close(r->shared[i].fd[0]);
		if (r->shared[i].fd[1] >= 0)
			close(r->shared[i].fd[1]);
	}
	r->nr_shared = 0;
}

static void restore_files(struct restore *r)
{
	const struct ckpt_image *img = &r->img;
	struct ckpt_err err;
	uint32_t i;

	for (i = 0; i < img->nr_files; i++) {
		const struct ckpt_img_file *f = &img->files[i];
		int fd;

		if (f->kind == CKPT_FILE_CKPT_DEV) {
			restore_ckpt_dev(r, f);
			continue;
		}
		if (f->kind == CKPT_FILE_STDIO || f->flags & CKPT_FILE_TREE_SHARED ||
		    f->kind == CKPT_FILE_UNIX || f->kind == CKPT_FILE_TCP ||
		    f->kind == CKPT_FILE_PTY ||
		    (f->kind == CKPT_FILE_PIPE && img->has_tree)) {
			place_shared(r, f);
			continue;
		}
		if (f->kind == CKPT_FILE_SHARED) {
			/* Its lower descriptor is in place: one open file. */
			if (dup2(f->ino, f->fd) < 0 ||
			    fcntl(f->fd, F_SETFD, f->flags & CKPT_FILE_CLOEXEC ?
				  FD_CLOEXEC : 0))
				child_fail(r, "cannot make fd %u a descriptor of fd %llu again: %s",
					   f->fd, (unsigned long long)f->ino,
					   strerror(errno));
			continue;
		}
		if (f->kind == CKPT_FILE_INOTIFY) {
			restore_anon(r, f);
			continue;
		}
		if (f->kind >= CKPT_FILE_FIFO) {
			restore_fileobj(r, f);
			continue;
		}
		if (f->kind == CKPT_FILE_PIPE) {
			uint32_t j;

			/* Once per pipe, at its first descriptor. */
			for (j = 0; j < i; j++)
				if (img->files[j].kind == CKPT_FILE_PIPE &&
				    img->files[j].ino == f->ino)
					break;
			if (j == i)
				restore_pipe(r, f);
			continue;
		}
		if (f->kind >= CKPT_FILE_EVENTFD) {
			restore_anon(r, f);
			continue;
		}
		fd = open_path(r, f, &err);
		if (fd < 0)
			child_fail(r, "%s", err.msg);
		place_fd(r, fd, f);
	}
	restore_inotify_drain(img);
}

/* The working directory, if it is still the directory it was. */
static void restore_fs(struct restore *r)
{
	const struct ckpt_image *img = &r->img;
	struct stat st;

	if (!img->has_fs)
		return;
	if (chdir(img->fs.cwd))
		child_fail(r, "cannot enter the working directory %s: %s",
			   img->fs.cwd, strerror(errno));
	if (stat(".", &st) || !same_file(r, &st, img->fs.cwd_dev, img->fs.cwd_ino))
		child_fail(r, "the working directory %s is not the directory it was at the checkpoint",
			   img->fs.cwd);
}

/*
 * The root directory, if the image's is not the checkpointer's own ("/"),
 * entered once nothing more is opened by path here: every path of the
 * image is the checkpointer's view, opened from the restarter's root, and
 * the engine opens the mapped files and the executable from the descriptor
 * of that root returned here (-1: the root stays). chroot() itself decides
 * whether this restarter may: it needs CAP_SYS_CHROOT. The working
 * directory stays the directory restore_fs() entered.
 */
static int restore_root(struct restore *r)
{
	const struct ckpt_image *img = &r->img;
	const char *root = img->fs.root;
	int dir, cwd, old;
	struct stat st;

	if (!img->has_fs || !strcmp(root, "/"))
		return -1;
	dir = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		child_fail(r, "cannot open the root directory %s: %s", root,
			   strerror(errno));
	if (fstat(dir, &st) ||
	    !same_file(r, &st, img->fs.root_dev, img->fs.root_ino))
		child_fail(r, "the root directory %s is not the directory it was at the checkpoint",
			   root);
	old = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	cwd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (old < 0 || cwd < 0)
		child_fail(r, "cannot hold the current directories: %s",
			   strerror(errno));
	if (fchdir(dir))
		child_fail(r, "cannot enter the root directory %s: %s", root,
			   strerror(errno));
	if (chroot(".")) {
		if (errno == EPERM)
			child_fail(r, "entering the root directory %s needs CAP_SYS_CHROOT",
				   root);
		child_fail(r, "cannot enter the root directory %s: %s", root,
			   strerror(errno));
	}
	if (fchdir(cwd))
		child_fail(r, "cannot enter the working directory %s again: %s",
			   img->fs.cwd, strerror(errno));
	close(cwd);
	close(dir);
	return old;
}

/*
 * Queues the image's pending signals of the process and of the main thread
 * again, in order (the other threads queue their own: only a thread may
 * queue kernel-made siginfo to itself). Every thread blocks all signals
 * until the engine restores the image's masks, so nothing is delivered
 * before the process runs.
 */
static void restore_signals(struct restore *r)
{
	const struct ckpt_image *img = &r->img;
	const struct ckpt_img_signals *h = &img->signals;
	pid_t pid = getpid();
	uint32_t i, t;

	for (i = 0; i < h->nr; i++) {
		const struct ckpt_img_siginfo *q = &img->sigqueue[i];
		long ret;

		for (t = 0; q->tid && t < img->nr_threads; t++)
			if (img->threads[t].tid == q->tid)
				break;
		if (q->tid && t == img->nr_threads)
			child_fail(r, "a pending signal names thread %u, not in the image",
				   q->tid);
		if (q->tid && q->tid != (uint32_t)pid)
			continue;	/* its thread queues it */
		ret = requeue(pid, q->tid, q);
		if (ret)
			child_fail(r, "cannot queue pending signal %u again: %s",
				   q->signo, strerror(-ret));
	}
}

/* struct sigevent as the kernel reads it, with the thread id named. */
struct ksigevent {
	uint64_t value;
	int32_t signo;
	int32_t notify;
	int32_t tid;
	int32_t pad[11];
};

/*
 * The image's POSIX timers, each with its id: the kernel hands ids out in
 * order from 0 in a new process (skipping those in use), so a timer is
 * made, and deleted again, until it gets the id it had. Then the next id
 * to hand out is brought where it was, if the image's bound allows. The
 * timers are armed later (arm_timers()).
 */
static void make_timers(struct restore *r)
{
	const struct ckpt_image *img = &r->img;
	const struct ckpt_img_timers *h = &img->timers;
	struct ksigevent none = { .notify = SIGEV_NONE };
	uint32_t i, t, next = 0;
	int id;

	for (i = 0; i < h->nr; i++) {
		const struct ckpt_img_timer *tm = &img->timer_list[i];
		struct ksigevent sev = {
			.value = tm->sival, .signo = tm->signo,
			.notify = tm->notify, .tid = tm->tid,
		};

		for (t = 0; tm->tid && t < img->nr_threads; t++)
			if (img->threads[t].tid == tm->tid)
				break;
		if (tm->tid && t == img->nr_threads)
			child_fail(r, "timer %u signals thread %u, not in the image",
				   tm->id, tm->tid);
		for (;;) {
			if (syscall(SYS_timer_create, tm->clockid, &sev, &id))
				child_fail(r, "cannot make timer %u (clock %d) again: %s",
					   tm->id, tm->clockid, strerror(errno));
			if ((uint32_t)id >= tm->id)
				break;
			if (syscall(SYS_timer_delete, id))
				child_fail(r, "cannot delete timer %d: %s", id,
					   strerror(errno));
		}
		if ((uint32_t)id != tm->id)
			child_fail(r, "timer %u cannot be made again: the kernel handed out id %d",
				   tm->id, id);
		next = tm->id + 1;
	}
	while (h->next_id <= CKPT_IMG_MAX_TIMER_ID && next < h->next_id) {
		if (syscall(SYS_timer_create, CLOCK_MONOTONIC, &none, &id) ||
		    syscall(SYS_timer_delete, id))
			child_fail(r, "cannot advance the timer ids to %u: %s",
				   h->next_id, strerror(errno));
		next = id + 1;
	}
}

static struct timespec ns_timespec(uint64_t ns)
{
	struct timespec ts = {
		.tv_sec = ns / 1000000000ULL, .tv_nsec = ns % 1000000000ULL,
	};

	return ts;
}

/* An interval timer's value, in microseconds: never 0 for an armed one. */
static struct itimerval ns_itimerval(uint64_t value, uint64_t interval)
{
	struct itimerval it = {
		.it_value.tv_sec = value / 1000000000ULL,
		.it_value.tv_usec = value % 1000000000ULL / 1000,
		.it_interval.tv_sec = interval / 1000000000ULL,
		.it_interval.tv_usec = interval % 1000000000ULL / 1000,
	};

	if (value && !it.it_value.tv_sec && !it.it_value.tv_usec)
		it.it_value.tv_usec = 1;
	return it;
}

/*
 * Arms the interval timers and the POSIX timers with the time they had
 * left, as late as the restarter can: right before the engine takes over.
 * CPU-time timers count the restarting process's CPU time from here on,
 * the engine's restoring of its memory included.
 */
static void arm_timers(struct restore *r)
{
	const struct ckpt_image *img = &r->img;
	static const struct {
		int which;
		const char *name;
	} itimers[] = {
		{ ITIMER_REAL, "real-time" },
		{ ITIMER_VIRTUAL, "virtual" },
		{ ITIMER_PROF, "profiling" },
	};
	const struct ckpt_img_signals *h = &img->signals;
	const uint64_t values[][2] = {
		{ h->real_value_ns, h->real_interval_ns },
		{ h->virt_value_ns, h->virt_interval_ns },
		{ h->prof_value_ns, h->prof_interval_ns },
	};
	uint32_t i;

	for (i = 0; i < 3; i++) {
		struct itimerval it = ns_itimerval(values[i][0], values[i][1]);

		if (values[i][0] &&
		    setitimer(itimers[i].which, &it, NULL))
			child_fail(r, "cannot arm the %s interval timer: %s",
				   itimers[i].name, strerror(errno));
	}
	for (i = 0; i < img->timers.nr; i++) {
		const struct ckpt_img_timer *tm = &img->timer_list[i];
		struct itimerspec its = {
			.it_value = ns_timespec(tm->value_ns),
			.it_interval = ns_timespec(tm->interval_ns),
		};

		if (!tm->value_ns && !tm->interval_ns)
			continue;
		if (syscall(SYS_timer_settime, tm->id,
			    tm->flags & CKPT_TIMER_ABSTIME ? TIMER_ABSTIME : 0,
			    &its, NULL))
			child_fail(r, "cannot arm timer %u: %s", tm->id,
				   strerror(errno));
	}
}

/*
 * --lazy: the userfaultfd the engine registers the process's anonymous
 * memory with, made here (it serves the address space it is made in) and
 * handed to the restarter, which fills that memory. Without the restarter
 * the process could not go on: it dies with it, until the restarter has
 * brought every page in (CKPT_IOC_LAZY_DONE).
 */
static int lazy_child(struct restore *r)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = {};
	struct iovec iov = { .iov_base = "u", .iov_len = 1 };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
	int uffd;

	uffd = lazy_open();
	if (uffd < 0)
		child_fail(r, "cannot make a userfaultfd: %s", strerror(-uffd));
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &uffd, sizeof(int));
	if (sendmsg(r->lazy_sock, &mh, 0) != 1)
		child_fail(r, "cannot hand the userfaultfd over: %s", strerror(errno));
	close(r->lazy_sock);
	return uffd;
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/*
 * Closes what this command inherited beyond its standard input, output and
 * error, keeping @keep: the process gets the image's descriptors, not
 * those of whoever ran ckpt restart.
 */
static void close_inherited(int *keep, int n)
{
	unsigned int from = 3;
	int i;

	qsort(keep, n, sizeof(*keep), cmp_int);
	for (i = 0; i < n; i++) {
		if (keep[i] < (int)from)
			continue;
		if (keep[i] > (int)from)
			syscall(SYS_close_range, from, keep[i] - 1, 0);
		from = keep[i] + 1;
	}
	syscall(SYS_close_range, from, ~0U, 0);
}

static int cmp_gid(const void *a, const void *b)
{
	gid_t x = *(const gid_t *)a, y = *(const gid_t *)b;

	return x < y ? -1 : x > y;
}

/* Whether this process's groups are the image's (both sorted). */
static bool same_groups(struct restore *r)
{
	const struct ckpt_image *img = &r->img;
	gid_t *mine;
	int n = getgroups(0, NULL), i;
	bool same;

	if (n < 0 || (__u32)n != img->creds.nr_groups)
		return false;
	mine = calloc(n + 1, sizeof(*mine));
	if (!mine || getgroups(n, mine) != n)
		child_fail(r, "cannot read this process's groups: %s", strerror(errno));
	qsort(mine, n, sizeof(*mine), cmp_gid);
	for (i = 0, same = true; i < n && same; i++)
		same = mine[i] == img->groups[i];
	free(mine);
	return same;
}

/* The image's groups, file-system group and user id; 0 or -errno. */
static int set_fs_ids(struct restore *r)
{
	const struct ckpt_image *img = &r->img;
	const struct ckpt_img_creds *c = &img->creds;

	if (!same_groups(r) &&
	    syscall(SYS_setgroups, c->nr_groups, img->groups))
		return -errno;
	syscall(SYS_setfsgid, c->fsgid);
	syscall(SYS_setfsuid, c->fsuid);
	/* Each returns the id before the call: unchanged means refused. */
	if ((__u32)syscall(SYS_setfsgid, -1) != c->fsgid ||
	    (__u32)syscall(SYS_setfsuid, -1) != c->fsuid)
		return -EPERM;
	return 0;
}

/*
 * restore_creds()'s helper: takes the image's ids, each while it still may,
 * and hands them to the engine. @ruid and @rgid are the restarter's, for
 * the message.
 */
static void __attribute__((noreturn))
creds_helper(struct restore *r, uid_t ruid, gid_t rgid)
{
	const struct ckpt_img_creds *c = &r->img.creds;
	const char *call;
	int ret;

	call = "setgroups";
	ret = setgroups(c->nr_groups, r->img.groups);
	if (!ret) {
		call = "setresgid";
		ret = setresgid(c->gid, c->egid, c->sgid);
	}
	if (!ret) {
		/* It returns the old id: unchanged means refused. */
		call = "setfsgid";
		setfsgid(c->fsgid);
		if ((gid_t)setfsgid(-1) != c->fsgid) {
			ret = -1;
			errno = EPERM;
		}
	}
	if (!ret) {
		call = "setresuid";
		ret = setresuid(c->uid, c->euid, c->suid);
	}
	if (!ret) {
		call = "setfsuid";
		setfsuid(c->fsuid);
		if ((uid_t)setfsuid(-1) != c->fsuid) {
			ret = -1;
			errno = EPERM;
		}
	}
	if (ret)
		child_fail(r, "the image's process ran as uid %u, gid %u; ckpt restart runs as uid %u, gid %u and cannot switch to it (%s: %s)",
			   c->uid, c->gid, ruid, rgid, call, strerror(errno));
	/*
	 * A session keyring of its own, the user's linked in, as a login's
	 * (the engine takes it with the ids): the restarter's, ckptd's or a
	 * root login's, would be shared with every process it restarts.
	 */
	if (syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL) >= 0)
		syscall(SYS_keyctl, KEYCTL_LINK, KEY_SPEC_USER_KEYRING,
			KEY_SPEC_SESSION_KEYRING);
	else if (errno != ENOSYS)
		child_fail(r, "cannot give the restarted process a session keyring of its own (uid %u: %s)",
			   c->uid, strerror(errno));
	if (ckpt_dev_restart_creds(r->dev))
		child_fail(r, "cannot hand the image's credentials to the engine: %s",
			   strerror(errno));
	_exit(0);
}

/*
 * The image's credentials (CREDS), when they are not the restarter's: a
 * helper process switches to the image's groups and ids with the system
 * calls, whose checks decide whether this restarter may, and hands its
 * credentials to the engine (CKPT_IOC_RESTART_CREDS), which gives them to
 * every restored thread at the very end, capabilities lowered to the
 * image's. This process keeps its ids and capabilities until then (pids,
 * chroot and the executable need them), but takes the image's groups and
 * file-system ids: everything the image names is opened with its user's
 * rights, and the process gets no file that user could not open.
 */
static void restore_creds(struct restore *r)
{
	const struct ckpt_image *img = &r->img;
	const struct ckpt_img_creds *c = &img->creds;
	uid_t ruid, euid, suid;
	gid_t rgid, egid, sgid;
	sigset_t chld;
	int status, ret;
	pid_t pid;

	if (getresuid(&ruid, &euid, &suid) || getresgid(&rgid, &egid, &sgid))
		child_fail(r, "cannot read this process's ids: %s", strerror(errno));
	if (ruid == c->uid && euid == c->euid && suid == c->suid &&
	    (uid_t)syscall(SYS_setfsuid, -1) == c->fsuid && rgid == c->gid &&
	    egid == c->egid && sgid == c->sgid &&
	    (gid_t)syscall(SYS_setfsgid, -1) == c->fsgid && same_groups(r))
		return;

	pid = fork();
	if (pid < 0)
		child_fail(r, "cannot fork: %s", strerror(errno));
	if (!pid)
		creds_helper(r, ruid, rgid);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			child_fail(r, "cannot wait for the credentials helper: %s",
				   strerror(errno));
	/*
	 * Its SIGCHLD waits, blocked: it must not reach the restarted
	 * process, nor stand in for one pending in the image.
	 */
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigtimedwait(&chld, NULL, &(struct timespec){ 0 });
	if (WIFSIGNALED(status))
		child_fail(r, "the credentials helper died of signal %d",
			   WTERMSIG(status));
	if (WEXITSTATUS(status))
		_exit(1);	/* it said why */
	ret = set_fs_ids(r);
	if (ret)
		child_fail(r, "cannot take the image's groups and file-system ids: %s",
			   strerror(-ret));
}

/*
 * Thread @i's CPUs (SCHED) into @set, if the image binds it to some and
 * every one of them is this restarter's to give (its own, within its
 * cpuset): a restart never widens what the restarter was given, and where
 * only a part is left (another machine, another allocation of cores)
 * threads bound to them would crowd onto fewer CPUs than they had, so the
 * thread keeps the restarter's. Set with sched_setaffinity() by the thread
 * itself before the engine takes it over: the kernel's checks, and since
 * 6.2 a binding that a later cpuset change keeps (user_cpus_ptr), as the
 * engine's set_cpus_allowed_ptr() would not.
 */
static bool image_cpus(const struct ckpt_image *img, uint32_t i,
		       cpu_set_t *set)
{
	const struct ckpt_img_sched *s;
	cpu_set_t own;
	unsigned int cpu;

	if (i >= img->nr_scheds)
		return false;
	s = &img->scheds[i];
	if ((s->flags & CKPT_SCHED_ALL_CPUS) ||
	    sched_getaffinity(0, sizeof(own), &own))
		return false;
	CPU_ZERO(set);
	for (cpu = 0; cpu < CKPT_IMG_CPU_WORDS * 64; cpu++) {
		if (!ckpt_sched_cpu(s, cpu))
			continue;
		if (cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &own))
			return false;
		CPU_SET(cpu, set);
	}
	return true;
}

/*
 * Thread @i's I/O priority (SCHED), if it set one: set with ioprio_set()
 * by the thread itself before the engine takes it over, where the kernel
 * lets the restarter (the real-time class needs privilege); else it keeps
 * the restarter's.
 */
static int image_ioprio(const struct ckpt_image *img, uint32_t i)
{
	return i < img->nr_scheds ? (int)img->scheds[i].ioprio : 0;
}

/* The image's other threads, made with their tids; all signals blocked. */
static void make_threads(struct restore *r, struct thread_arg *targs)
{
	const struct ckpt_image *img = &r->img;
	uint32_t i;

	for (i = 1; i < img->nr_threads; i++) {
		pid_t tid = img->threads[i].tid;
		struct clone3_args ca = {
			.flags = CLONE_VM | CLONE_FS | CLONE_FILES |
				 CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM,
			.set_tid = (unsigned long)&tid,
			.set_tid_size = 1,
		};
		void *stack = aligned_alloc(16, THREAD_STACK);
		long ret;

		if (!stack)
			child_fail(r, "out of memory");
		ca.stack = (unsigned long)stack;
		ca.stack_size = THREAD_STACK;
		targs[i].dev = r->dev;
		targs[i].errpipe = r->errpipe;
		targs[i].index = i;
		targs[i].pid = getpid();
		targs[i].tid = tid;
		targs[i].sigs = img->sigqueue;
		targs[i].nr_sigs = img->signals.nr;
		targs[i].has_cpus = image_cpus(img, i, &targs[i].cpus);
		targs[i].ioprio = image_ioprio(img, i);
		ret = clone3_thread(&ca, &targs[i]);
		if (ret == -EEXIST)
			child_fail(r, "thread id %d of the image is in use on this node", tid);
		if (ret < 0)
			child_fail(r, "cannot create thread %d: %s", tid, strerror(-ret));
	}
}

/* The image's descriptors and file objects, the restarter's out of the way. */
static void restore_all_files(struct restore *r, int *uffd)
{
	const struct ckpt_image *img = &r->img;
	struct ckpt_err err = {};
	uint32_t i;

	if (img->nr_files) {
		int above = img->files[img->nr_files - 1].fd + 1;

		r->fd = move_fd(r, r->fd, above);
		r->dev = move_fd(r, r->dev, above);
		r->errpipe = move_fd(r, r->errpipe, above);
		if (r->go_fd >= 0) {
			r->go_fd = move_fd(r, r->go_fd, above);
			r->ready_fd = move_fd(r, r->ready_fd, above);
		}
		if (r->hold_fd >= 0)
			r->hold_fd = move_fd(r, r->hold_fd, above);
		for (i = 0; i < r->nr_shared; i++) {
			struct restore_shared *sh = &r->shared[i];

			sh->fd[0] = move_fd(r, sh->fd[0], above);
			if (sh->fd[1] >= 0)
				sh->fd[1] = move_fd(r, sh->fd[1], above);
		}
		if (*uffd >= 0)
			*uffd = move_fd(r, *uffd, above);
		make_own_usocks(r, above);
		make_objects(r, above);
		restore_files(r);
	} else {
		make_objects(r, 3);
	}
	finish_objects(r);
	close_stdio(r);
	/* While the tree's table says which member adds a shared epoll's items. */
	restore_epoll(r);
	close_shared(r);
	/* Last: closing a descriptor of a file drops the record locks on it. */
	if (restore_take_locks(&r->img, &err))
		child_fail(r, "%s", err.msg);
}

/* The hand-over: the engine makes this process the image's, or says why not. */
static void __attribute__((noreturn))
hand_over(struct restore *r, int root, int uffd)
{
	struct ckpt_restart args = { .flags = r->flags };
	char msg[256] = "";

	args.fd = r->fd;
	args.err_fd = r->errpipe;
	args.nr_threads = r->img.nr_threads;
	args.errmsg = (unsigned long)msg;
	args.errmsg_len = sizeof(msg);
	args.timeout_ms = r->opts->timeout_ms;
	args.obj_fds = (uintptr_t)r->obj_fds;
	args.nr_obj_fds = r->img.nr_fileobjs;
	if (root >= 0) {
		args.flags |= CKPT_RESTART_ROOT_FD;
		args.root_fd = root;
	}
	if (r->hold_fd >= 0) {
		args.flags |= CKPT_RESTART_HOLD;
		args.hold_fd = r->hold_fd;
	}
	if (uffd >= 0) {
		/*
		 * Tied to the restarter, set last: taking the image's
		 * file-system ids clears it. Then the restarter is still
		 * there, or this fails. A tree's member is tied to its page
		 * server through the tree's init instead (tree.c).
		 */
		if (r->member)
			args.flags |= CKPT_RESTART_LAZY_UNTIED;
		else if (prctl(PR_SET_PDEATHSIG, SIGKILL) ||
			 getppid() != r->restarter)
			child_fail(r, "the restarter is gone");
		args.flags |= CKPT_RESTART_LAZY;
		args.uffd = uffd;
	}
	ckpt_dev_restart(r->dev, &args);
	child_fail(r, "%s (%s)", *msg ? msg : "the engine refused", strerror(errno));
}

/*
 * A tree's member waits here until every member is as far: then none has
 * made its threads (which wait for the hand-over only so long), and
 * whatever failed so far failed before any member runs its own code.
 */
static void tree_barrier(struct restore *r)
{
	char c = 0;

	if (r->go_fd < 0)
		return;
	if (write(r->ready_fd, &c, 1) != 1)
		child_fail(r, "cannot tell the restarter it is ready: %s",
			   strerror(errno));
	if (read(r->go_fd, &c, 1) != 1)
		_exit(1);	/* another member failed: the restarter says why */
	close(r->go_fd);
	close(r->ready_fd);
	r->go_fd = r->ready_fd = -1;
}

/*
 * The System V segments the image maps, attached for the engine to place,
 * and the process's semaphore adjustments.
 */
static void restore_sysv(struct restore *r)
{
	struct ckpt_err err = {};

	if (restore_attach_sysv(r, &err) || restore_undo_sysv(r, &err))
		child_fail(r, "%s", err.msg);
}

/* Closes all the restarter left open but what the child needs. */
static void keep_needed(struct restore *r, int uffd)
{
	int *keep = calloc(7 + 2 * r->nr_shared, sizeof(*keep));
	uint32_t i, n = 0;

	if (!keep)
		child_fail(r, "out of memory");
	keep[n++] = r->fd;
	keep[n++] = r->dev;
	keep[n++] = r->errpipe;
	keep[n++] = uffd;
	keep[n++] = r->ready_fd;
	keep[n++] = r->go_fd;
	keep[n++] = r->hold_fd;
	for (i = 0; i < r->nr_shared; i++) {
		keep[n++] = r->shared[i].fd[0];
		keep[n++] = r->shared[i].fd[1];
	}
	close_inherited(keep, n);
	free(keep);
}

/* The child, with the image's pid: becomes the image's process. */
void restore_child(struct restore *r)
{
	const struct ckpt_image *img = &r->img;
	struct thread_arg *targs;
	struct ckpt_err err = {};
	uint64_t all = ~0ULL;
	int root, uffd = -1;

	if (r->lazy_sock >= 0)
		uffd = lazy_child(r);
	keep_needed(r, uffd);

	/*
	 * Every signal blocked, glibc's own included: sigfillset() and
	 * sigprocmask() leave out SIGCANCEL and SIGSETXID (32, 33), which
	 * the image's process may have pending, or receive meanwhile from a
	 * timer of glibc's SIGEV_THREAD, and would then take with the
	 * restarter's dispositions. Threads created below inherit the mask;
	 * the engine restores each thread's.
	 */
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, NULL, sizeof(all));
	restore_sysv(r);
	restore_creds(r);
	targs = calloc(img->nr_threads, sizeof(*targs));
	if (!targs)
		child_fail(r, "out of memory");
	restore_all_files(r, &uffd);
	restore_fs(r);
	restore_process(r);
	unblock_ignored(r);
	move_vdso(r);
	/* Last of what uses paths (move_vdso() reads /proc/self/maps). */
	root = restore_root(r);
	tree_barrier(r);
	if (r->sysv_root && restore_remove_sysv(&r->img, &err))
		child_fail(r, "%s", err.msg);
	make_threads(r, targs);
	/* The main thread's own, now that the others were cloned. */
	if (image_cpus(img, 0, &targs[0].cpus))
		sched_setaffinity(0, sizeof(targs[0].cpus), &targs[0].cpus);
	targs[0].ioprio = image_ioprio(img, 0);
	if (targs[0].ioprio)
		syscall(SYS_ioprio_set, 1, 0, targs[0].ioprio);
	restore_signals(r);
	make_timers(r);
	arm_timers(r);
	hand_over(r, root, uffd);
}

/*
 * After a lazy restart: takes the child's userfaultfd from @sock, with the
 * child's pid as this process sees it (its credentials: SO_PASSCRED), and
 * brings the process's memory in; then the process may outlive us.
 */
int restore_serve_lazy(struct restore *r, int sock, struct ckpt_err *err)
{
	char cbuf[CMSG_SPACE(sizeof(int)) + CMSG_SPACE(sizeof(struct ucred))] = {};
	char byte;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct lazy *lz = &r->lz;
	struct cmsghdr *cm;
	struct timespec t0, t1;
	int uffd = -1, ret;
	pid_t pid = 0;

	if (recvmsg(sock, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC) == 1) {
		for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
			if (cm->cmsg_level != SOL_SOCKET)
				continue;
			if (cm->cmsg_type == SCM_RIGHTS)
				memcpy(&uffd, CMSG_DATA(cm), sizeof(int));
			else if (cm->cmsg_type == SCM_CREDENTIALS)
				pid = ((struct ucred *)CMSG_DATA(cm))->pid;
		}
	}
	if (uffd < 0 || pid <= 0) {
		if (uffd >= 0)
			close(uffd);
		return ckpt_err_set(err, EPROTO, "--lazy: pid %u's userfaultfd did not arrive: it is killed",
				    r->img.proc.pid);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ret = lazy_serve(lz, uffd, pid, err);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (ret)
		return ret;
	if (!r->member && ckpt_dev_lazy_done(r->dev, pid) && errno != ESRCH)
		ckpt_notef(r->opts, "pid %d keeps dying with this command: %s",
			   pid, strerror(errno));
	if (r->opts->verbose)
		ckpt_notef(r->opts, "lazy: %llu pages brought in when touched, %llu behind, %llu zero pages, in %lld ms (pid %u)",
			   (unsigned long long)lz->on_demand,
			   (unsigned long long)lz->behind,
			   (unsigned long long)lz->zero,
			   (long long)((t1.tv_sec - t0.tv_sec) * 1000 +
				       (t1.tv_nsec - t0.tv_nsec) / 1000000),
			   r->img.proc.pid);
	return 0;
}

/*
 * Whether the restart writes into FIFOs others can open, before the engine
 * has checked the page data: a damaged image found there would leave that
 * data behind. Such an image has its pages checked first, like any before.
 */
static bool refills_fifos(const struct restore *r)
{
	const struct ckpt_image *img = &r->img;
	uint32_t i;

	for (i = 0; i < img->nr_fileobjs; i++)
		if (img->fileobjs[i].kind == CKPT_FILE_FIFO)
			return true;
	return false;
}

/*
 * An image is read twice (checked, then restored) and mapped by the
 * engine: one on a pipe or socket is copied into a memfd first. Returns
 * the memfd (@fd closed) or -errno.
 */
static int spool(int fd)
{
	size_t size = 1 << 20;
	char *buf = malloc(size);
	int m = memfd_create("ckpt-image", MFD_CLOEXEC), ret = 0;
	ssize_t n, w, done;

	if (m < 0 || !buf) {
		ret = m < 0 ? -errno : -ENOMEM;
		goto out;
	}
	for (;;) {
		n = read(fd, buf, size);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ret = n ? -errno : 0;
			break;
		}
		for (done = 0; done < n; done += w) {
			w = write(m, buf + done, n - done);
			if (w < 0 && errno == EINTR)
				w = 0;
			else if (w < 0)
				break;
		}
		if (done < n) {
			ret = -errno;
			break;
		}
	}
	if (!ret && lseek(m, 0, SEEK_SET))
		ret = -errno;
out:
	free(buf);
	close(fd);
	if (ret && m >= 0)
		close(m);
	return ret ? ret : m;
}

/* Opens @r->opts->image into r->fd, seekable, and names its source. */
static int open_image(struct restore *r, struct ckpt_err *err)
{
	const char *image = r->opts->image;
	struct stat st;
	int fd;

	if (!strcmp(image, "-"))
		r->fd = fcntl(0, F_DUPFD_CLOEXEC, 3);
	else
		r->fd = open(image, O_RDONLY | O_CLOEXEC);
	if (r->fd < 0 || fstat(r->fd, &st))
		return ckpt_err_set(err, errno, "cannot open %s: %s", image,
				    strerror(errno));
	/* What the process is told it was restarted from (libckpt). */
	r->source = S_ISREG(st.st_mode) && strcmp(image, "-") ?
		    realpath(image, NULL) : strdup(image);
	if (!r->source || strlen(r->source) >= CKPT_SOURCE_MAX)
		return ckpt_err_set(err, r->source ? ENAMETOOLONG : errno,
				    "%s: cannot resolve its path", image);
	if (r->opts->lazy && !S_ISREG(st.st_mode))
		return ckpt_err_set(err, EINVAL, "--lazy: %s is not a regular file",
				    image);
	/* From its start (standard input need not be there), if it can seek. */
	if (lseek(r->fd, 0, SEEK_SET)) {
		fd = spool(r->fd);
		r->fd = fd < 0 ? -1 : fd;
		if (fd < 0)
			return ckpt_err_set(err, -fd, "cannot read the image from %s into memory: %s",
					    image, strerror(-fd));
	}
	return 0;
}

/* --lazy: fails here, before anything, if no userfaultfd can be made. */
int restore_prepare_lazy(struct restore *r, int sv[2], struct ckpt_err *err)
{
	int probe, on = 1, ret;

	if (r->fd < 0 && (ret = open_image(r, err)))
		return ret;
	/* The child makes its own. */
	probe = lazy_open();
	if (probe < 0)
		return ckpt_err_set(err, -probe, "--lazy: cannot make a userfaultfd with fork events: %s%s",
				    strerror(-probe),
				    probe == -EPERM ? " (it needs CAP_SYS_PTRACE)" : "");
	close(probe);
	lazy_init(&r->lz, &r->img, r->fd, r->opts);
	r->img.sect_fn = lazy_collect;
	r->img.sect_arg = &r->lz;
	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv))
		return ckpt_err_set(err, errno, "socketpair: %s", strerror(errno));
	/* The child's pid comes with its userfaultfd, in our namespace. */
	if (setsockopt(sv[0], SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)))
		return ckpt_err_set(err, errno, "SO_PASSCRED: %s", strerror(errno));
	return 0;
}

/* Reads and verifies the image, then rewinds it for the engine. */
static int read_image(struct restore *r, struct ckpt_err *err)
{
	struct ckpt_image *img = &r->img;

	/* A lazy restart serves pages itself: it checks them all first. */
	if (!r->read_flags && !r->opts->lazy)
		r->read_flags = CKPT_IMAGE_PAGES_TO_ENGINE;
	if (ckpt_image_read(img, r->fd, r->read_flags) ||
	    (r->read_flags == CKPT_IMAGE_PAGES_TO_ENGINE && refills_fifos(r) &&
	     ckpt_image_check_pages(img)))
		return ckpt_err_set(err, img->error.err ? -img->error.err : EINVAL,
				    "%s: %s (section %llu at offset %llu)",
				    r->opts->image,
				    img->error.why ? img->error.why :
				    strerror(-img->error.err),
				    (unsigned long long)img->error.section,
				    (unsigned long long)img->error.offset);
	r->same_boot = this_boot(img->hdr.boot_id);
	if (lseek(r->fd, 0, SEEK_SET))
		return ckpt_err_set(err, ESPIPE, "%s: the image must be a seekable file",
				    r->opts->image);
	return 0;
}

void restore_free(struct restore *r)
{
	if (r->fd >= 0)
		close(r->fd);
	if (r->dev >= 0)
		close(r->dev);
	r->fd = r->dev = -1;
	if (r->opts->lazy)
		lazy_free(&r->lz);
	ckpt_image_free(&r->img);
	ckpt_image_init(&r->img);
	free(r->source);
	r->source = NULL;
	free(r->chunk_buf);
	r->chunk_buf = NULL;
}

/*
 * The parent's side once the child runs: its report (nothing when the
 * engine took over), then the lazy pages; then, holding nothing of the
 * restart, it waits for the process.
 */
static int finish(struct restore *r, pid_t pid, int errfd, int sock,
		  int *status, struct ckpt_err *err)
{
	char buf[512];
	ssize_t len;
	int ret = 0;

	len = read(errfd, buf, sizeof(buf) - 1);
	if (len < 0)
		ret = ckpt_err_set(err, errno, "%s: cannot read the restart's outcome: %s",
				   r->opts->image, strerror(errno));
	if (r->opts->lazy && !len) {
		ret = restore_serve_lazy(r, sock, err);
		if (ret == -EPROTO)
			kill(pid, SIGKILL);
	}
	restore_free(r);
	while (waitpid(pid, status, 0) < 0 && errno == EINTR)
		;
	if (len > 0) {
		/* The caller ends the line; lines within are the child's. */
		while (len > 0 && buf[len - 1] == '\n')
			len--;
		buf[len] = '\0';
		ret = ckpt_err_set(err, EIO, "%s: %s", r->opts->image, buf);
	}
	return ret;
}

/* Forks the child with the image's pid, which never returns: its pid or -errno. */
static pid_t spawn(struct restore *r, int pipefd[2], int sv[2],
		   struct ckpt_err *err)
{
	pid_t want = r->img.proc.pid, pid;
	struct clone3_args ca = {
		.exit_signal = SIGCHLD,
		.set_tid = (unsigned long)&want,
		.set_tid_size = 1,
	};

	fflush(NULL);
	pid = syscall(SYS_clone3, &ca, sizeof(ca));
	if (pid < 0 && errno == EEXIST)
		return ckpt_err_set(err, errno, "pid %u of the image is in use on this node",
				    want);
	if (pid < 0 && errno == EPERM)
		return ckpt_err_set(err, errno, "restoring pid %u needs CAP_CHECKPOINT_RESTORE",
				    want);
	if (pid < 0)
		return ckpt_err_set(err, errno, "cannot create pid %u: %s", want,
				    strerror(errno));
	if (!pid) {
		close(pipefd[0]);
		r->errpipe = pipefd[1];
		if (r->opts->lazy) {
			close(sv[0]);
			r->lazy_sock = sv[1];
		}
		restore_child(r);
	}
	return pid;
}

/*
 * The image's FIFOs, empty before anything of the restart opens them:
 * bytes in one are another opener's (the checkpointed processes, still
 * running), which the image's would join, and the readers get both.
 */
static int check_fifos(struct restore *r, struct ckpt_err *err)
{
	const struct ckpt_image *img = &r->img;
	uint32_t i;
	int fd, queued;

	for (i = 0; i < img->nr_fileobjs; i++) {
		const struct ckpt_img_fileobj *o = &img->fileobjs[i];

		if (o->kind != CKPT_FILE_FIFO || restore_fifo_deleted(o))
			continue;	/* one unlinked is made anew */
		fd = open_fifo(r, o, O_RDWR, err);
		if (fd < 0)
			return fd;
		if (ioctl(fd, FIONREAD, &queued))
			queued = 0;
		close(fd);
		if (queued)
			return ckpt_err_set(err, EBUSY, "%s: FIFO %s holds %d bytes already: a process outside this restart has it open (the checkpointed processes, still running?)",
					    r->opts->image, o->name, queued);
	}
	return 0;
}

/* The image read and checked against this machine. */
static int prepare_image(struct restore *r, struct ckpt_err *err)
{
	int ret = 0;

	if (r->fd < 0)
		ret = open_image(r, err);
	if (!ret)
		ret = read_image(r, err);
	if (!ret)
		ret = check_fifos(r, err);
	if (!ret)
		ret = check_vdso_room(r, err);
	return ret;
}

static int open_engine(struct restore *r, struct ckpt_err *err)
{
	r->dev = ckpt_dev_open(O_RDWR);
	if (r->dev < 0)
		return ckpt_err_set(err, -r->dev, "engine not loaded: %s: %s",
				    ckpt_dev_path(), strerror(-r->dev));
	return 0;
}

int restore_prepare(struct restore *r, struct ckpt_err *err)
{
	return prepare_image(r, err) ?: open_engine(r, err);
}

/*
 * A tree's member restarted alone: what it shared with the others (pipes,
 * sockets, memory, System V objects, its parent) would come back half,
 * or not at all. Its tree comes back from the directory.
 */
static int refuse_member(const struct restore *r, struct ckpt_err *err)
{
	const struct ckpt_image *img = &r->img;

	if (!img->has_tree)
		return 0;
	return ckpt_err_set(err, EINVAL,
			    "%s: pid %u's image is member %u of a process tree of %u: restart the tree's directory, which holds them all",
			    r->opts->image, img->proc.pid, img->tree.index + 1,
			    img->tree.nr_members);
}

/* Everything up to the child's start; then the child and the parent. */
static int run(struct restore *r, int *status, struct ckpt_err *err)
{
	int pipefd[2] = { -1, -1 }, sv[2] = { -1, -1 }, ret;
	pid_t pid;

	ret = open_image(r, err);
	if (!ret && r->opts->lazy)
		ret = restore_prepare_lazy(r, sv, err);
	if (!ret)
		ret = prepare_image(r, err);
	if (!ret)
		ret = refuse_member(r, err);
	if (!ret)
		ret = open_engine(r, err);
	if (!ret && pipe2(pipefd, O_CLOEXEC))
		ret = ckpt_err_set(err, errno, "pipe: %s", strerror(errno));
	if (!ret) {
		pid = spawn(r, pipefd, sv, err);
		close(pipefd[1]);
		/* The child has the image; a lazy restart still reads pages. */
		if (r->opts->lazy) {
			close(sv[1]);
			sv[1] = -1;
		} else {
			close(r->fd);
			r->fd = -1;
		}
		ret = pid < 0 ? pid : finish(r, pid, pipefd[0], sv[0], status, err);
		close(pipefd[0]);
	}
	if (sv[0] >= 0)
		close(sv[0]);
	if (sv[1] >= 0)		/* a failure before the child started */
		close(sv[1]);
	return ret;
}

void restore_init(struct restore *r, const struct ckpt_restore_opts *opts)
{
	memset(r, 0, sizeof(*r));
	r->opts = opts;
	r->fd = r->dev = r->errpipe = r->lazy_sock = -1;
	r->ready_fd = r->go_fd = r->hold_fd = -1;
	r->restarter = getpid();
	if (opts->no_verify)
		r->read_flags = CKPT_IMAGE_TO_VMAS;
	if (opts->unauthenticated)
		r->flags |= CKPT_RESTART_UNAUTHENTICATED;
	ckpt_image_init(&r->img);
}

int ckpt_restore(const struct ckpt_restore_opts *opts, int *status,
		 struct ckpt_err *err)
{
	struct restore r;
	struct stat st;
	int ret;

	if (opts->lazy && opts->no_verify)
		return ckpt_err_set(err, EINVAL, "--lazy brings pages in from the image as verified before the restart: it cannot go with --no-verify");
	/* A lazy process is not whole when held: its memory comes later. */
	if (opts->held && opts->lazy)
		return ckpt_err_set(err, EINVAL, "a held restart cannot be lazy");
	if (strcmp(opts->image, "-") && !stat(opts->image, &st) &&
	    S_ISDIR(st.st_mode))
		return ckpt_restore_tree(opts, status, err);
	if (opts->held)
		return ckpt_err_set(err, EINVAL, "%s: only a process tree's restart is held",
				    opts->image);
	restore_init(&r, opts);
	ret = run(&r, status, err);
	restore_free(&r);
	return ret;
}
