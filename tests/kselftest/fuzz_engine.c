// SPDX-License-Identifier: GPL-2.0
/*
 * The image fuzzer, against the engine itself (security.md): valid images
 * of four kinds of process (a plain one, a multithreaded one, one with
 * open files, file locks, a pipe, a POSIX timer and a half-closed TCP connection on
 * the loopback, both ends its own, one run from a memfd, whose image
 * carries its executable) are mutated a few bytes at a time,
 * their checksums made right again so that the engine's own checks meet
 * the damage, their MAC taken out, and restarted through `ckpt restart
 * --unauthenticated --no-verify` (the engine validates everything itself)
 * as root, for a bounded time (CKPT_FUZZ_SECONDS, default 20 per kind).
 * Each attempt is refused with a message (exit 1) or restarts (the process
 * then runs, or dies of its damaged state, and is killed); nothing hangs
 * past its bound and the kernel logs nothing (the VM harness fails the
 * run on any report). The same images are offered to the engine by an
 * unprivileged user, who is refused at the door. CKPT_IOC_CHECKPOINT_TREE
 * gets random and boundary arguments (counts, pointers, pids, descriptors,
 * flags, timeouts, reserved fields) around a live target, which answers
 * after each (it is restarted if a try happened to kill it).
 * CKPT_IOC_RESTART gets the same around a valid image, called by a child
 * that has the image's pid (clone3 set_tid), so that a try the engine
 * takes restarts for real: every refusal names its cause, a restart
 * answers with the image's count, and a held one (CKPT_RESTART_HOLD)
 * never runs before its byte and dies if its holder goes away.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <time.h>

#include <linux/ckpt_image.h>

#include <arpa/inet.h>
#include <grp.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/prctl.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <linux/userfaultfd.h>

#include "kselftest_harness.h"
#include "ckpt_test.h"

static void *spin(void *arg)
{
	volatile unsigned long *n = arg;

	for (;;) {
		(*n)++;
		usleep(1000);
	}
	return NULL;
}

static void threads_target(void)
{
	static unsigned long counts[3];
	pthread_t th;
	int i;

	for (i = 0; i < 3; i++)
		if (pthread_create(&th, NULL, spin, &counts[i]))
			_exit(4);
	counter_target();
}

static void files_target(void)
{
	struct itimerspec its = { { 1, 0 }, { 1, 0 } };
	struct sigevent ev = { .sigev_notify = SIGEV_NONE };
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct flock rd = { .l_type = F_RDLCK, .l_whence = SEEK_SET,
			    .l_start = 1, .l_len = 4 };
	socklen_t len = sizeof(a);
	timer_t t;
	int p[2], fd, l, c;

	/* Read locks (a LOCKS section): none keeps another try out. */
	fd = open("/etc/hostname", O_RDONLY);
	if (fd < 0 || flock(fd, LOCK_SH) || fcntl(fd, F_SETLK, &rd) ||
	    pipe(p) || write(p[1], "fuzz", 4) != 4 ||
	    timer_create(CLOCK_MONOTONIC, &ev, &t) || timer_settime(t, 0, &its, NULL))
		_exit(5);
	fd = timerfd_create(CLOCK_MONOTONIC, 0);
	if (fd < 0 || timerfd_settime(fd, 0, &its, NULL))
		_exit(5);
	/* A connection to itself, one end shut down for writing, bytes unread. */
	l = socket(AF_INET, SOCK_STREAM, 0);
	c = socket(AF_INET, SOCK_STREAM, 0);
	if (l < 0 || c < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(l, 1) || getsockname(l, (struct sockaddr *)&a, &len) ||
	    connect(c, (struct sockaddr *)&a, sizeof(a)) ||
	    accept(l, NULL, NULL) < 0 || write(c, "fuzz", 4) != 4 ||
	    shutdown(c, SHUT_WR))
		_exit(5);
	usleep(100000);		/* its FIN in */
	counter_target();
}

/*
 * A target run from a memfd copy of this program (fexecve()), so that its
 * image carries its executable as a file object (exe_dev
 * CKPT_IMG_EXE_OBJ): the engine's checks of that index, and of the file
 * the restarter makes for it, meet the damage too. The copy, started with
 * FUZZ_ENGINE_MEMFD set, is the counter from its constructor on.
 */
static void __attribute__((constructor)) memfd_exe_main(void)
{
	if (getenv("FUZZ_ENGINE_MEMFD"))
		counter_target();
}

static void memfd_target(void)
{
	char *argv[] = { "fuzz_engine", NULL };
	int fd = memfd_create("fuzz_engine", MFD_CLOEXEC);
	int self = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	char b[65536];
	ssize_t n;

	while (fd >= 0 && self >= 0 && (n = read(self, b, sizeof(b))) > 0)
		if (write(fd, b, n) != n)
			_exit(6);
	if (fd < 0 || self < 0 || setenv("FUZZ_ENGINE_MEMFD", "1", 1))
		_exit(6);
	fexecve(fd, argv, environ);
	_exit(6);
}

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

struct img {
	unsigned char *buf;
	size_t len;
	size_t sect[1024];	/* offsets of the sections */
	unsigned int nr;
};

static int load(struct img *im, const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY);
	size_t at = 0;

	if (fd < 0 || fstat(fd, &st))
		return -1;
	im->len = st.st_size;
	im->buf = malloc(im->len);
	if (!im->buf || read(fd, im->buf, im->len) != (ssize_t)im->len)
		return -1;
	close(fd);
	im->nr = 0;
	while (at + sizeof(struct ckpt_sect) <= im->len && im->nr < 1024) {
		struct ckpt_sect *s = (void *)(im->buf + at);

		im->sect[im->nr++] = at;
		at += sizeof(*s) + s->len + (-s->len & 7);
	}
	return at == im->len ? 0 : -1;
}

/*
 * A copy of @im with 1 to 4 bytes of one section's header or payload
 * changed (bit flips, boundary values, random bytes), that section's
 * checksums made right, written to @path.
 */
static int mutate(const struct img *im, const char *path)
{
	unsigned char *b = malloc(im->len);
	struct ckpt_sect *s;
	unsigned int k, n = 1 + next_rand() % 4;
	size_t at, span;
	int fd, ret = -1;

	if (!b)
		return -1;
	memcpy(b, im->buf, im->len);
	/* Mostly the front, where the engine parses most. */
	k = next_rand() % (next_rand() % 4 ? (im->nr < 12 ? im->nr : 12) : im->nr);
	at = im->sect[k];
	s = (void *)(b + at);
	span = s->len;
	while (n--) {
		bool header = span == 0 || next_rand() % 8 == 0;
		size_t off = header ? next_rand() % 16 : sizeof(*s) + next_rand() % span;
		unsigned char *p = b + at + off;

		switch (next_rand() % 4) {
		case 0:
			*p ^= 1 << (next_rand() % 8);
			break;
		case 1:
			*p = (const unsigned char[]){ 0, 0xff, 0x7f, 0x80, 1 }[next_rand() % 5];
			break;
		case 2:
			*p = next_rand();
			break;
		default:
			if (off + 4 <= sizeof(*s) + span)
				memset(p, next_rand() % 2 ? 0xff : 0, 4);
			break;
		}
	}
	if (s->len <= span)
		s->csum = ckpt_csum(s + 1, s->len);
	s->hcsum = 0;
	s->hcsum = ckpt_csum(s, sizeof(*s));
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd >= 0 && write(fd, b, im->len) == (ssize_t)im->len)
		ret = 0;
	if (fd >= 0)
		close(fd);
	free(b);
	return ret;
}

/*
 * ckpt restart --unauthenticated --no-verify @path as root, bounded: 1
 * refused with a message, 0 restarted (or died of its state; killed after
 * a short run), -1 refused without a message or hung.
 */
static int try_restart(const char *path, char *err, size_t size)
{
	int p[2], status, i;
	ssize_t n = 0;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		return -1;
	pid = fork();
	if (!pid) {
		int null = open("/dev/null", O_RDWR);

		setpgid(0, 0);
		dup2(null, 0);
		dup2(null, 1);
		dup2(p[1], 2);
		execlp("ckpt", "ckpt", "restart", "--unauthenticated",
		       "--no-verify", "--timeout", "2", path, NULL);
		_exit(127);
	}
	close(p[1]);
	for (i = 0; i < 100; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			break;
		usleep(10000);
	}
	if (i == 100) {
		/* Restarted and running (or stuck): the whole group goes. */
		kill(-pid, SIGKILL);
		kill(pid, SIGKILL);
		for (i = 0; i < 500 && waitpid(pid, &status, WNOHANG) != pid; i++)
			usleep(10000);
		close(p[0]);
		return i == 500 ? -1 : 0;
	}
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	n = read(p[0], err, size - 1);
	err[n > 0 ? n : 0] = '\0';
	close(p[0]);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 1)
		return n > (ssize_t)strlen("ckpt restart: ") ? 1 : -1;
	return 0;
}

/*
 * A mutant that restarts may die of a fault in user mode, which the
 * kernel logs ("traps: ... general protection fault") when
 * debug.exception-trace is on: an expected death, not a kernel report.
 * Off while fuzzing, as it was after.
 */
#define EXCEPTION_TRACE	"/proc/sys/debug/exception-trace"

static char trace_was[8];

static void exception_trace(const char *value)
{
	int fd = open(EXCEPTION_TRACE, O_WRONLY);

	if (fd >= 0) {
		if (write(fd, value, strlen(value)) < 0)
			perror(EXCEPTION_TRACE);
		close(fd);
	}
}

FIXTURE(fuzz) {
	char image[64];
	char mutant[64];
	struct target t;
	char msg[256];
	int seconds;
};

FIXTURE_SETUP(fuzz)
{
	const char *path = ckpt_module_path();
	const char *secs = getenv("CKPT_FUZZ_SECONDS");

	if (!path)
		SKIP(return, "CKPT_MODULE does not name a readable ckpt.ko");
	if (!ckpt_module_loaded())
		ASSERT_EQ(0, ckpt_load_module(path));
	self->seconds = secs ? atoi(secs) : 20;
	snprintf(self->image, sizeof(self->image), "/tmp/fuzz_engine.%d.img",
		 getpid());
	snprintf(self->mutant, sizeof(self->mutant), "/tmp/fuzz_engine.%d.mut",
		 getpid());
	rng ^= (uint64_t)time(NULL) * 2654435761ULL;
	if (!trace_was[0]) {
		int fd = open(EXCEPTION_TRACE, O_RDONLY);

		if (fd >= 0) {
			if (read(fd, trace_was, sizeof(trace_was) - 1) <= 0)
				trace_was[0] = '\0';
			close(fd);
		}
	}
	exception_trace("0");
}

FIXTURE_TEARDOWN(fuzz)
{
	if (self->t.pid > 0) {
		kill(self->t.pid, SIGKILL);
		target_end(&self->t);
	}
	unlink(self->image);
	unlink(self->mutant);
	if (trace_was[0])
		exception_trace(trace_was);
}

/* Fuzzes restarts of an image of @fn's process for the time given. */
static void run(struct __test_metadata *_metadata, FIXTURE_DATA(fuzz) *self,
		void (*fn)(void))
{
	unsigned int refused = 0, restarted = 0, tries = 0;
	struct timespec t0, now;
	char cmd[256], err[512];
	struct img im;
	int r;

	ASSERT_EQ(0, target_start(&self->t, fn));
	if (fn == memfd_target) {
		char proc[64], link[128] = "";

		/* It answers from the copy: its executable is the memfd. */
		ASSERT_EQ(0, target_ask(&self->t, "p", cmd, sizeof(cmd)));
		snprintf(proc, sizeof(proc), "/proc/%d/exe", self->t.pid);
		ASSERT_LT(0, readlink(proc, link, sizeof(link) - 1));
		ASSERT_EQ(0, strncmp(link, "/memfd:fuzz_engine ", 19)) TH_LOG("%s", link);
	}
	ASSERT_EQ(0, ckpt_checkpoint_to(self->t.pid, self->image,
					CKPT_CHECKPOINT_KILL, self->msg,
					sizeof(self->msg), NULL)) TH_LOG("%s", self->msg);
	target_end(&self->t);
	self->t.pid = 0;
	snprintf(cmd, sizeof(cmd), "%s/build/tests/host/mkimage -S %s",
		 getenv("CKPT_TOP") ?: ".", self->image);
	ASSERT_EQ(0, system(cmd));
	ASSERT_EQ(0, load(&im, self->image));

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		ASSERT_EQ(0, mutate(&im, self->mutant));
		r = try_restart(self->mutant, err, sizeof(err));
		if (r < 0)
			TH_LOG("try %u: refused without a message, or hung: '%s'",
			       tries, err);
		ASSERT_LE(0, r);
		refused += r == 1;
		restarted += r == 0;
		tries++;
		clock_gettime(CLOCK_MONOTONIC, &now);
		/*
		 * Past the time given, on until one refusal (a mutant that
		 * restarts takes a second here: in 8 s, 9 of them once
		 * restarted, none refused), bounded: six times the time, and
		 * within the case's 300 s.
		 */
	} while (now.tv_sec - t0.tv_sec < self->seconds ||
		 (!refused && now.tv_sec - t0.tv_sec < 6 * self->seconds &&
		  now.tv_sec - t0.tv_sec < 240));
	TH_LOG("%u mutants: %u refused by name, %u restarted", tries, refused,
	       restarted);
	EXPECT_LT(0U, refused);
	free(im.buf);
}

TEST_F_TIMEOUT(fuzz, a_plain_process, 300)
{
	CKPT_SETUP_SKIPPED();
	run(_metadata, self, counter_target);
}

TEST_F_TIMEOUT(fuzz, a_multithreaded_process, 300)
{
	CKPT_SETUP_SKIPPED();
	run(_metadata, self, threads_target);
}

TEST_F_TIMEOUT(fuzz, a_process_with_files_a_pipe_timers_and_tcp, 300)
{
	CKPT_SETUP_SKIPPED();
	run(_metadata, self, files_target);
}

TEST_F_TIMEOUT(fuzz, a_process_run_from_a_memfd, 300)
{
	CKPT_SETUP_SKIPPED();
	run(_metadata, self, memfd_target);
}

/* One random or boundary value of @n, most often a boundary. */
static uint64_t pick(const uint64_t *n, unsigned int nr)
{
	return next_rand() % 4 ? n[next_rand() % nr] : next_rand();
}

/*
 * A target a tree checkpoint can take: without the shared anonymous
 * memory it inherited from the harness, which a process outside the tree
 * holds too (refused, rightly: then no try would ever succeed).
 */
static void lone_target(void)
{
	unsigned long lo[16], hi[16];
	unsigned int n = 0;
	char line[512], perms[8];
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && n < 16 && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx %7s", &lo[n], &hi[n], perms) == 3 &&
		    perms[3] == 's' && strstr(line, "/dev/zero"))
			n++;
	if (f)
		fclose(f);
	while (n--)
		munmap((void *)lo[n], hi[n] - lo[n]);
	counter_target();
}

/* A random CKPT_IOC_CHECKPOINT_TREE around @target; -errno or 0. */
static int tree_try(int dev, pid_t target, int fd, int ev,
		    struct ckpt_tree_member *m, char *msg)
{
	static const uint64_t counts[] = { 0, 1, 2, 3, CKPT_TREE_MAX_MEMBERS,
					   CKPT_TREE_MAX_MEMBERS + 1, ~0U };
	static const uint64_t ptrs[] = { 0, 8, ~0ULL, 0xffff888000000000ULL,
					 0x7ffffffff000ULL };
	static const uint64_t times[] = { 0, 1, CKPT_TIMEOUT_MAX_MS,
					  CKPT_TIMEOUT_MAX_MS + 1 };
	static uint8_t sums[CKPT_TREE_MAX_MEMBERS][CKPT_DIGEST_LEN];
	struct ckpt_checkpoint_tree a = {};
	unsigned int i, nr;

	a.nr_members = pick(counts, 7);
	nr = a.nr_members < CKPT_TREE_MAX_MEMBERS + 1 ? a.nr_members : 0;
	for (i = 0; i < nr; i++) {
		const uint64_t pids[] = { target, getpid(), 0, 0x7fffffff,
					  4194304 + (next_rand() & 0xffff) };
		/* Never another open descriptor: an image into a pipe
		 * the frozen target reads would wait for it forever.
		 */
		const uint64_t fds[] = { fd, (uint64_t)-1, 999, (uint64_t)dev,
					 100000 + i };

		m[i].pid = pick(pids, 5);
		m[i].fd = pick(fds, 5);
		m[i].ns_pid = next_rand() % 16 ? 0 : next_rand();
	}
	a.members = next_rand() % 8 ? (uintptr_t)m : pick(ptrs, 5);
	a.flags = next_rand() % 4 ? next_rand() % 128 : next_rand();
	/* CKPT_CHECKPOINT_STAGED's eventfd mostly; else 0, or no eventfd. */
	if (next_rand() % 8) {
		a.staged_fd = a.flags & CKPT_CHECKPOINT_STAGED ? ev : 0;
	} else {
		const uint64_t evs[] = { 0, (uint64_t)ev, (uint64_t)fd, (uint64_t)-1, 999 };

		a.staged_fd = pick(evs, 5);
	}
	/* Mostly where the flag says, room for every member; else anything. */
	if (next_rand() % 8)
		a.digests = a.flags & CKPT_CHECKPOINT_DIGESTS ? (uintptr_t)sums : 0;
	else
		a.digests = pick(ptrs, 5);
	a.timeout_ms = pick(times, 4);
	a.errmsg = next_rand() % 8 ? (uintptr_t)msg : pick(ptrs, 5);
	a.errmsg_len = next_rand() % 8 ? 256 : next_rand();
	if (!(next_rand() % 16))
		a.reserved[next_rand() % ARRAY_SIZE(a.reserved)] = next_rand();
	if (!(next_rand() % 16))
		a.reserved32 = next_rand();
	return ioctl(dev, CKPT_IOC_CHECKPOINT_TREE, &a) ? -errno : 0;
}

TEST_F_TIMEOUT(fuzz, tree_arguments, 300)
{
	static struct ckpt_tree_member m[CKPT_TREE_MAX_MEMBERS + 1];
	unsigned int tries = 0, ok = 0;
	struct timespec t0, now;
	char line[64];
	int dev, fd, ev, r;
	uint64_t n;

	CKPT_SETUP_SKIPPED();
	signal(SIGPIPE, SIG_IGN);
	ev = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	ASSERT_LE(0, ev);
	ASSERT_EQ(0, target_start(&self->t, lone_target));
	dev = open("/dev/ckpt", O_RDWR | O_CLOEXEC);
	fd = open(self->image, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ASSERT_LE(0, dev);
	ASSERT_LE(0, fd);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		r = tree_try(dev, self->t.pid, fd, ev, m, self->msg);
		/* Told it is staged: no error after that is one to try again for. */
		if (read(ev, &n, sizeof(n)) == sizeof(n))
			EXPECT_TRUE(r != -EAGAIN && r != -EBUSY && r != -ESRCH)
				TH_LOG("try %u: the eventfd told, then %d", tries, r);
		ok += !r;
		EXPECT_TRUE(r == 0 || r == -EINVAL || r == -EFAULT ||
			    r == -ESRCH || r == -EBADF || r == -EDEADLK ||
			    r == -EBUSY || r == -EPERM || r == -EOPNOTSUPP ||
			    r == -ENOMEM || r == -ETIMEDOUT)
			TH_LOG("try %u: %d", tries, r);
		/* A try that stopped or killed the target: a fresh one. */
		kill(self->t.pid, SIGCONT);
		if (target_ask(&self->t, "p", line, sizeof(line)) < 0) {
			kill(self->t.pid, SIGKILL);
			target_end(&self->t);
			ASSERT_EQ(0, target_start(&self->t, lone_target));
		}
		tries++;
		clock_gettime(CLOCK_MONOTONIC, &now);
		/* Past the time given, on until one checkpointed, bounded. */
	} while (now.tv_sec - t0.tv_sec < self->seconds / 2 + 1 ||
		 (!ok && now.tv_sec - t0.tv_sec < 120));
	TH_LOG("%u tries, %u checkpointed", tries, ok);
	EXPECT_LT(0U, ok);
	close(ev);
	close(fd);
	close(dev);
}

/* clone3()'s arguments, as far as set_tid (linux/sched.h clashes with sched.h). */
struct clone3_args {
	uint64_t flags, pidfd, child_tid, parent_tid, exit_signal;
	uint64_t stack, stack_size, tls, set_tid, set_tid_size;
};

/* A fork whose child has pid @pid: 0 in the child, the pid, or -1. */
static pid_t fork_as(pid_t pid)
{
	pid_t tid = pid;
	struct clone3_args ca = {
		.exit_signal = SIGCHLD,
		.set_tid = (uintptr_t)&tid,
		.set_tid_size = 1,
	};

	return syscall(SYS_clone3, &ca, sizeof(ca));
}

/*
 * The descriptors a restart try picks from, open in the test; the image
 * opened again for each try (a restart reads it from where it is).
 */
struct restart_fds {
	const char *path;
	int image, dir, file, pipe[2], lone, listener, dgram[2];
};

#define UFFD_CHILD	(-2)

/* A userfaultfd past its API handshake, or -1. */
static int make_uffd(void)
{
	struct uffdio_api api = { .api = UFFD_API };
	int fd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);

	if (fd >= 0 && ioctl(fd, UFFDIO_API, &api)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* True one time in @n, on average. */
static bool one_in(uint64_t n)
{
	return next_rand() % n == 0;
}

/*
 * Random and boundary CKPT_IOC_RESTART arguments in @a. Half the tries
 * are sound (the image, one thread, a message buffer, a known set of
 * flags with their descriptors); the others have each field off now and
 * then, the flags random too. *@hold gets a connected stream pair for
 * CKPT_RESTART_HOLD (its [1] the holder's end); *@uffd is UFFD_CHILD if
 * the child is to make a userfaultfd for CKPT_RESTART_LAZY (it takes the
 * memory of the process that made it); both -1 otherwise.
 */
static void restart_args(struct ckpt_restart *a, const struct restart_fds *f,
			 char *msg, int32_t *objs, int hold[2], int *uffd)
{
	static const uint64_t ptrs[] = { 0, 8, ~0ULL, 0xffff888000000000ULL,
					 0x7ffffffff000ULL };
	static const uint64_t counts[] = { 0, 1, 2, CKPT_RESTART_MAX_OBJ_FDS,
					   CKPT_RESTART_MAX_OBJ_FDS + 1, ~0U };
	static const uint64_t times[] = { 0, 1, CKPT_TIMEOUT_MAX_MS,
					  CKPT_TIMEOUT_MAX_MS + 1 };
	static const uint64_t flags[] = {
		0, CKPT_RESTART_HOLD, CKPT_RESTART_LAZY, CKPT_RESTART_ROOT_FD,
		CKPT_RESTART_LAZY | CKPT_RESTART_LAZY_UNTIED,
		CKPT_RESTART_UNAUTHENTICATED, CKPT_RESTART_HOLD | CKPT_RESTART_LAZY,
		CKPT_RESTART_HOLD | CKPT_RESTART_ROOT_FD,
	};
	/*
	 * Not 0 or 1, the restarted process's stdio, which the engine would
	 * close with the restart's descriptors once it succeeds.
	 */
	const uint64_t fds[] = { f->image, (uint64_t)-1, 999, f->dir, f->file,
				 f->pipe[0], f->pipe[1], f->lone, f->listener,
				 f->dgram[0], 100000 };
	/* Never one to read that waits: no bytes would ever come. */
	const uint64_t images[] = { f->image, (uint64_t)-1, 999, f->dir, f->file,
				    f->pipe[1], f->lone, f->listener, 100000 };
	uint64_t odd = next_rand() % 2 ? 8 : ~0ULL;	/* never, when sound */
	unsigned int i, nr;

	memset(a, 0, sizeof(*a));
	hold[0] = hold[1] = *uffd = -1;
	a->fd = one_in(odd) ? (int)pick(images, 9) : f->image;
	a->err_fd = one_in(odd / 2) ? (int)pick(fds, 11) : -1;
	a->flags = pick(flags, 8);
	if (odd != ~0ULL)
		a->flags = one_in(4) ? next_rand() : next_rand() % 32;
	a->nr_threads = one_in(odd) ? pick(counts, 6) : 1;
	a->errmsg = one_in(odd) ? pick(ptrs, 5) : (uintptr_t)msg;
	a->errmsg_len = one_in(odd) ? next_rand() : 256;
	a->timeout_ms = one_in(odd / 2) ? pick(times, 4) : next_rand() % 2 * 1000;
	if (one_in(odd / 2)) {
		a->nr_obj_fds = pick(counts, 6);
		nr = a->nr_obj_fds < 4 ? a->nr_obj_fds : 4;
		for (i = 0; i < nr; i++)
			objs[i] = pick(fds, 11);
		a->obj_fds = one_in(4) ? pick(ptrs, 5) : (uintptr_t)objs;
	}
	if (a->flags & CKPT_RESTART_ROOT_FD || one_in(odd * 2))
		a->root_fd = one_in(odd / 4) ? (int)pick(fds, 11) : f->dir;
	if (a->flags & CKPT_RESTART_LAZY && !one_in(odd / 2)) {
		*uffd = UFFD_CHILD;
	} else if (a->flags & CKPT_RESTART_LAZY || one_in(odd * 2)) {
		a->uffd = pick(fds, 11);
	}
	if (a->flags & CKPT_RESTART_HOLD && !one_in(odd / 2) &&
	    !socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, hold)) {
		a->hold_fd = hold[0];
	} else if (a->flags & CKPT_RESTART_HOLD || one_in(odd * 2)) {
		a->hold_fd = pick(fds, 11);
	}
	if (one_in(odd * 2))
		a->reserved[0] = next_rand();
}

/* Whether @fd has something to read within @ms. */
static bool readable(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, ms) == 1;
}

/*
 * @pid's end: killed if it still runs, reaped. Its wait status, or -1 if
 * it would not go within 20 s.
 */
static int put_down(pid_t pid)
{
	int status, i;

	kill(pid, SIGKILL);
	for (i = 0; i < 2000; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return status;
		usleep(10000);
	}
	return -1;
}

/* What one restart try came to. */
enum restart_outcome { REFUSED, RESTARTED, HELD_RELEASED, HELD_DROPPED, LAZY };

/* One restart try: its arguments, pipes and what came back. */
struct restart_try {
	struct ckpt_restart a;
	char msg[256];
	int32_t objs[4];
	int hold[2], uffd;
	int pass[2];		/* the child's userfaultfd on its way */
	int in[2], out[2];	/* the restarted process's stdio */
	int res[2];		/* the child's errno and message, if refused */
	char answer[320];
	pid_t child;
	unsigned int n;
};

/* In the child with the image's pid: the restart, or why not on res. */
static void __attribute__((noreturn)) restart_child(struct restart_try *t)
{
	int dev = open("/dev/ckpt", O_RDWR | O_CLOEXEC), e;
	ssize_t len;

	dup2(t->in[0], 0);
	dup2(t->out[1], 1);
	/* The test's ends are not the restarted process's to keep. */
	close(t->res[0]);
	if (t->hold[1] >= 0)
		close(t->hold[1]);
	t->msg[0] = '\0';
	if (t->uffd == UFFD_CHILD) {
		char c = 'u';
		struct iovec iov = { .iov_base = &c, .iov_len = 1 };
		union {
			struct cmsghdr h;
			char buf[CMSG_SPACE(sizeof(int))];
		} u = {};
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
				     .msg_control = u.buf,
				     .msg_controllen = sizeof(u.buf) };

		t->a.uffd = make_uffd();
		u.h.cmsg_level = SOL_SOCKET;
		u.h.cmsg_type = SCM_RIGHTS;
		u.h.cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(&u.h), &t->a.uffd, sizeof(int));
		if (t->a.uffd < 0 || sendmsg(t->pass[1], &mh, 0) != 1)
			_exit(102);
		close(t->pass[0]);
		close(t->pass[1]);
	}
	/* Now and then the arguments themselves out of reach. */
	e = ioctl(dev, CKPT_IOC_RESTART, next_rand() % 64 ? &t->a : (void *)8) ?
	    errno : 0;
	len = snprintf(t->answer, sizeof(t->answer), "%d %s", e, t->msg);
	_exit(write(t->res[1], t->answer, len) == len ? 100 : 101);
}

/* A refusal names its cause, wherever the message could go; -1 if not. */
static int refusal(struct __test_metadata *_metadata, struct restart_try *t)
{
	const char *why = strchr(t->answer, ' ');
	int e = atoi(t->answer);

	if (e && (t->a.errmsg != (uintptr_t)t->msg || t->a.errmsg_len < 2 ||
		  e == EFAULT || (why && why[1])))
		return REFUSED;
	TH_LOG("try %u: refused without a message: '%s'", t->n, t->answer);
	return -1;
}

enum { W_RES, W_OUT, W_HOLD, W_UFFD, W_PID, W_NR };

/*
 * The child's outcome, told by the first of: its answer (refused), a
 * count from the restarted process (asked for before the child ran: "p"
 * is waiting on its stdin), its hold's byte, a lazy restart's first fault
 * on the userfaultfd, or its death. A held process must not answer before
 * it gets its byte; it gets it, or its holder goes away.
 */
static int watch(struct __test_metadata *_metadata, struct restart_try *t,
		 int pidfd)
{
	struct pollfd p[W_NR] = {
		[W_RES] = { .fd = t->res[0], .events = POLLIN },
		[W_OUT] = { .fd = t->out[0], .events = POLLIN },
		[W_HOLD] = { .fd = t->hold[1], .events = POLLIN },
		[W_UFFD] = { .fd = t->uffd, .events = POLLIN },
		[W_PID] = { .fd = pidfd, .events = POLLIN },
	};
	bool held = false;
	int status = -1;
	ssize_t len;
	char c[2];

	for (;;) {
		if (poll(p, W_NR, 60000) <= 0) {
			TH_LOG("try %u: nothing came of it in 60 s (flags %#x)",
			       t->n, t->a.flags);
			return -1;
		}
		if (p[W_RES].revents) {
			len = read(t->res[0], t->answer, sizeof(t->answer) - 1);
			t->answer[len > 0 ? len : 0] = '\0';
			if (len > 0)
				return held ? -1 : refusal(_metadata, t);
			p[W_RES].fd = -1;	/* the engine closed it: err_fd */
			continue;
		}
		if (p[W_HOLD].revents) {
			p[W_HOLD].fd = -1;
			if (read(t->hold[1], c, 1) != 1)
				continue;	/* gone before its hold */
			if (readable(t->out[0], 200)) {
				TH_LOG("try %u: held, yet it answered", t->n);
				return -1;
			}
			if (next_rand() % 2)
				return HELD_DROPPED;
			if (write(t->hold[1], "g", 1) != 1)
				return -1;
			held = true;
			continue;
		}
		if (p[W_OUT].revents) {
			len = read(t->out[0], c, 2);
			if (len == 2 && !memcmp(c, "3\n", 2) &&
			    (held || p[W_HOLD].fd < 0))
				return held ? HELD_RELEASED : RESTARTED;
			TH_LOG("try %u: restarted (flags %#x), but %s ('%.*s')",
			       t->n, t->a.flags, len != 2 || memcmp(c, "3\n", 2) ?
			       "no count of 3" : "not held", len > 0 ? (int)len : 0, c);
			return -1;
		}
		if (p[W_UFFD].revents)
			return LAZY;
		waitpid(t->child, &status, WNOHANG);
		TH_LOG("try %u: died without a word (flags %#x, wait status %#x)",
		       t->n, t->a.flags, status);
		return -1;
	}
}

/*
 * The child's end: one whose holder went away died of SIGKILL unheard;
 * whatever still runs is killed; reaped. @outcome, or -1 with why logged.
 */
static int restart_end(struct __test_metadata *_metadata, struct restart_try *t,
		       int outcome)
{
	char buf[64];
	int status = -1, i;

	if (t->hold[1] >= 0)
		close(t->hold[1]);
	if (outcome == HELD_DROPPED) {
		for (i = 0; i < 6000 && waitpid(t->child, &status, WNOHANG) != t->child; i++)
			usleep(10000);
		if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL ||
		    readable(t->out[0], 0)) {
			TH_LOG("try %u: its holder went away, yet it did not die of SIGKILL unheard (%#x)",
			       t->n, status);
			outcome = -1;
		}
	} else if (put_down(t->child) == -1) {
		TH_LOG("try %u: pid %d would not die", t->n, t->child);
		outcome = -1;
	}
	/* Nothing left for the next try, either way. */
	while (readable(t->out[0], 0) && read(t->out[0], buf, sizeof(buf)) > 0)
		;
	while (readable(t->in[0], 0) && read(t->in[0], buf, sizeof(buf)) > 0)
		;
	return outcome;
}

/*
 * The userfaultfd the child made for its lazy restart, passed here so
 * that its faults wait for this end (none is served: one is the sign of
 * a lazy restart); -1 if none came within 60 s.
 */
static int take_uffd(struct restart_try *t)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} u = {};
	char c;
	struct iovec iov = { .iov_base = &c, .iov_len = 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = u.buf, .msg_controllen = sizeof(u.buf) };
	int fd = -1;

	close(t->pass[1]);
	if (readable(t->pass[0], 60000) && recvmsg(t->pass[0], &mh, MSG_CMSG_CLOEXEC) == 1 &&
	    u.h.cmsg_type == SCM_RIGHTS)
		memcpy(&fd, CMSG_DATA(&u.h), sizeof(int));
	close(t->pass[0]);
	return fd;
}

/*
 * One CKPT_IOC_RESTART try of @f->image (the image of a process with pid
 * t->child whose count is 3) by a child with that pid. Returns the
 * outcome, a sound one, or -1 after logging why not.
 */
static int restart_try(struct __test_metadata *_metadata,
		       struct restart_fds *f, struct restart_try *t)
{
	pid_t pid = t->child;
	int outcome, pidfd;

	f->image = open(f->path, O_RDONLY | O_CLOEXEC);
	restart_args(&t->a, f, t->msg, t->objs, t->hold, &t->uffd);
	if (t->uffd == UFFD_CHILD &&
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, t->pass))
		return -1;
	/* Mostly where the restorer puts it: its pipe, closed by the engine. */
	if (f->image < 0 || pipe2(t->res, O_CLOEXEC) || write(t->in[1], "p", 1) != 1)
		return -1;
	if (t->a.err_fd == -1 && next_rand() % 4)
		t->a.err_fd = t->res[1];
	t->child = fork_as(pid);
	if (t->child < 0) {
		TH_LOG("try %u: no child with pid %d: %s", t->n, pid, strerror(errno));
		return -1;
	}
	if (!t->child)
		restart_child(t);
	close(t->res[1]);
	if (t->uffd == UFFD_CHILD)
		t->uffd = take_uffd(t);
	if (t->hold[0] >= 0)
		close(t->hold[0]);
	pidfd = syscall(SYS_pidfd_open, t->child, 0);
	outcome = pidfd < 0 ? -1 : watch(_metadata, t, pidfd);
	close(t->res[0]);
	if (pidfd >= 0)
		close(pidfd);
	outcome = restart_end(_metadata, t, outcome);
	if (t->uffd >= 0)
		close(t->uffd);
	close(f->image);
	t->child = pid;
	return outcome;
}

TEST_F_TIMEOUT(fuzz, restart_arguments, 300)
{
	unsigned int tries = 0, seen[LAZY + 1] = {};
	static struct restart_try t;
	struct restart_fds f;
	char line[16];
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct timespec t0, now;
	int i, r;
	pid_t pid;

	CKPT_SETUP_SKIPPED();
	signal(SIGPIPE, SIG_IGN);
	ASSERT_EQ(0, target_start(&self->t, lone_target));
	/* Its count is 3 in the image: asked, not only sent. */
	ASSERT_EQ(0, target_ask(&self->t, "sssp", line, sizeof(line)));
	ASSERT_STREQ("3", line);
	pid = self->t.pid;
	ASSERT_EQ(0, ckpt_checkpoint_to(pid, self->image, CKPT_CHECKPOINT_KILL,
					self->msg, sizeof(self->msg), NULL)) TH_LOG("%s", self->msg);
	target_end(&self->t);
	self->t.pid = 0;

	f.path = self->image;
	f.dir = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	f.file = open("/etc/hostname", O_RDONLY | O_CLOEXEC);
	f.lone = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	f.listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ASSERT_LE(0, f.dir);
	ASSERT_LE(0, f.file);
	ASSERT_LE(0, f.lone);
	ASSERT_LE(0, f.listener);
	ASSERT_EQ(0, pipe2(f.pipe, O_CLOEXEC));
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, f.dgram));
	snprintf(sun.sun_path + 1, sizeof(sun.sun_path) - 1, "fuzz_engine.%d", getpid());
	ASSERT_EQ(0, bind(f.listener, (struct sockaddr *)&sun, sizeof(sun)));
	ASSERT_EQ(0, listen(f.listener, 1));
	ASSERT_EQ(0, pipe2(t.in, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(t.out, O_CLOEXEC));

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		t.child = pid;
		t.n = tries;
		r = restart_try(_metadata, &f, &t);
		ASSERT_LE(0, r);
		seen[r]++;
		tries++;
		clock_gettime(CLOCK_MONOTONIC, &now);
		/* Past the time given, on until each kind came, bounded. */
	} while (now.tv_sec - t0.tv_sec < self->seconds / 2 + 1 ||
		 ((!seen[REFUSED] || !seen[RESTARTED] ||
		   !(seen[HELD_RELEASED] + seen[HELD_DROPPED])) &&
		  now.tv_sec - t0.tv_sec < 120));
	TH_LOG("%u tries: %u refused, %u restarted, %u held and released, %u held and dropped, %u lazy",
	       tries, seen[REFUSED], seen[RESTARTED], seen[HELD_RELEASED],
	       seen[HELD_DROPPED], seen[LAZY]);
	/* Half the tries sound: some restart, held ones too; some refused. */
	EXPECT_LT(0U, seen[REFUSED]);
	EXPECT_LT(0U, seen[RESTARTED]);
	EXPECT_LT(0U, seen[HELD_RELEASED] + seen[HELD_DROPPED]);
	for (i = 0; i < 2; i++) {
		close(t.in[i]);
		close(t.out[i]);
		close(f.pipe[i]);
		close(f.dgram[i]);
	}
	close(f.dir);
	close(f.file);
	close(f.lone);
	close(f.listener);
}

/* The unprivileged user meets the door, whatever the image. */
TEST_F(fuzz, an_unprivileged_user_is_refused_at_the_door)
{
	struct ckpt_restart r = { .nr_threads = 1, .err_fd = -1 };
	int status, i;
	pid_t pid;

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, target_start(&self->t, counter_target));
	ASSERT_EQ(0, ckpt_checkpoint_to(self->t.pid, self->image, 0,
					self->msg, sizeof(self->msg), NULL));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct img im;
		int dev;

		if (load(&im, self->image) || setgroups(0, NULL) ||
		    setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(10);
		for (i = 0; i < 200; i++) {
			if (mutate(&im, self->mutant))
				_exit(11);
			r.fd = open(self->mutant, O_RDONLY);
			dev = open("/dev/ckpt", O_RDWR);
			if (r.fd < 0 || dev < 0)
				_exit(12);
			if (!ioctl(dev, CKPT_IOC_RESTART, &r) || errno != EPERM)
				_exit(13);
			close(r.fd);
			close(dev);
		}
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

TEST_HARNESS_MAIN
