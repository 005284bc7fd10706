// SPDX-License-Identifier: GPL-2.0
/*
 * The image fuzzer, against the engine itself (security.md): valid images
 * of three kinds of process (a plain one, a multithreaded one, one with
 * open files, a pipe, a POSIX timer and a half-closed TCP connection on
 * the loopback, both ends its own) are mutated a few bytes at a time,
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
#include <sys/socket.h>
#include <sys/prctl.h>
#include <sys/timerfd.h>

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
	socklen_t len = sizeof(a);
	timer_t t;
	int p[2], fd, l, c;

	fd = open("/etc/hostname", O_RDONLY);
	if (fd < 0 || pipe(p) || write(p[1], "fuzz", 4) != 4 ||
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

/* One random or boundary value of @n, most often a boundary. */
static uint64_t pick(const uint64_t *n, unsigned int nr)
{
	return next_rand() % 4 ? n[next_rand() % nr] : next_rand();
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
	ASSERT_EQ(0, target_start(&self->t, counter_target));
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
			ASSERT_EQ(0, target_start(&self->t, counter_target));
		}
		tries++;
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (now.tv_sec - t0.tv_sec < self->seconds / 2 + 1);
	TH_LOG("%u tries, %u checkpointed", tries, ok);
	close(ev);
	close(fd);
	close(dev);
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
