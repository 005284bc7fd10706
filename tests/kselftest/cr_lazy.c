// SPDX-License-Identifier: GPL-2.0
/*
 * ckpt restart --lazy: the process runs before its anonymous memory is in,
 * and that memory comes back exactly, whatever the process does to it
 * meanwhile: touching it from several threads, discarding a range
 * (MADV_DONTNEED: zeros, not the image's data), unmapping and mapping
 * anew (zeros), moving a range (mremap: its data moves with it), forking
 * (the child sees the image's data in pages nobody touched yet). Most tests
 * run with background filling off (CKPT_LAZY_BACKGROUND=0), so pages are
 * still missing when the process acts; one runs with it on, as users do.
 * A checkpoint while pages are missing is refused, named; the process dies
 * with its restarter while pages are missing and not after; a restarter
 * that cannot serve (no CAP_SYS_PTRACE, an image on a pipe, --no-verify)
 * refuses before anything runs.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>
#include <grp.h>
#include <sys/prctl.h>

#include <linux/capability.h>

#include "kselftest_harness.h"
#include "ckpt_test.h"

#define MB		(1UL << 20)
#define REGION		(16 * MB)	/* four parts of 4 MiB */
#define PART		(REGION / 4)
#define HEAP		(4 * MB)
#define NR_THREADS	3

static uint64_t *region, *heap, *part[4];
static bool as_user;	/* the target runs as uid and gid 1000 */
static volatile uint64_t thread_sums[NR_THREADS];

static uint64_t hash(const uint64_t *p, size_t bytes)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t i;

	for (i = 0; i < bytes / 8; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return h;
}

static bool all_zero(const uint64_t *p, size_t bytes)
{
	size_t i;

	for (i = 0; i < bytes / 8; i++)
		if (p[i])
			return false;
	return true;
}

static void fill(uint64_t *p, size_t bytes, uint64_t seed)
{
	size_t i;

	for (i = 0; i < bytes / 8; i++) {
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		p[i] = seed | 1;
	}
}

/* Each thread keeps a buffer on its stack and sums it on request. */
static void *worker(void *arg)
{
	uintptr_t idx = (uintptr_t)arg;
	uint64_t buf[8192];

	fill(buf, sizeof(buf), idx + 100);
	for (;;) {
		if (thread_sums[idx] == 1)
			thread_sums[idx] = hash(buf, sizeof(buf)) | 2;
		usleep(1000);
	}
	return NULL;
}

/* Asks every thread for its stack buffer's hash. */
static uint64_t threads_hash(void)
{
	uint64_t h = 0;
	int i;

	for (i = 0; i < NR_THREADS; i++) {
		thread_sums[i] = 1;
		while (thread_sums[i] == 1)
			usleep(1000);
		h = h * 31 + thread_sums[i];
	}
	return h;
}

/*
 * Commands, one letter each, every one answered by one line:
 * 'h' the hashes of the four parts (wherever they are now), the heap and
 *     the threads' stacks;
 * 'd' discards part 1 (MADV_DONTNEED) and says whether it reads as zeros;
 * 'u' unmaps part 2, maps it anew and says whether it reads as zeros;
 * 'm' moves part 3 elsewhere (mremap) and says its hash there;
 * 's' moves the first half of part 1 right before part 3 (mremap() that
 *     shrinks and moves over the second half of part 2) and says its hash
 *     and part 3's; 'H' says that half's hash;
 * 'f' forks: the child's hashes, then the parent's, two lines;
 * 'q' quits.
 */
static void lazy_target(void)
{
	pthread_t th[NR_THREADS];
	uintptr_t i;
	char c;

	if (as_user && (setgroups(0, NULL) || setresgid(1000, 1000, 1000) ||
			setresuid(1000, 1000, 1000)))
		_exit(7);
	region = mmap(NULL, REGION, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	heap = malloc(HEAP);
	if (region == MAP_FAILED || !heap)
		_exit(2);
	for (i = 0; i < 4; i++)
		part[i] = region + i * PART / 8;
	fill(region, REGION, 1);
	fill(heap, HEAP, 2);
	for (i = 0; i < NR_THREADS; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)i))
			_exit(3);
	for (;;) {
		if (read(0, &c, 1) != 1)
			_exit(4);
		switch (c) {
		case 'h':
			target_say("%016llx %016llx %016llx %016llx %016llx %016llx",
				   (unsigned long long)hash(part[0], PART),
				   (unsigned long long)hash(part[1], PART),
				   (unsigned long long)hash(part[2], PART),
				   (unsigned long long)hash(part[3], PART),
				   (unsigned long long)hash(heap, HEAP),
				   (unsigned long long)threads_hash());
			break;
		case 'd':
			madvise(part[1], PART, MADV_DONTNEED);
			target_say("dontneed zero %d", all_zero(part[1], PART));
			break;
		case 'u': {
			munmap(part[2], PART);
			if (mmap(part[2], PART, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
				 -1, 0) != part[2])
				_exit(5);
			target_say("remapped zero %d", all_zero(part[2], PART));
			break;
		}
		case 'm': {
			void *to = mmap(NULL, PART, PROT_NONE,
					MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			void *p = mremap(part[3], PART, PART,
					 MREMAP_MAYMOVE | MREMAP_FIXED, to);

			if (p == MAP_FAILED)
				_exit(6);
			part[3] = p;
			target_say("moved %016llx",
				   (unsigned long long)hash(part[3], PART));
			break;
		}
		case 'f': {
			pid_t pid = fork();

			if (!pid) {
				target_say("child %016llx %016llx %016llx",
					   (unsigned long long)hash(part[0], PART),
					   (unsigned long long)hash(part[3], PART),
					   (unsigned long long)hash(heap, HEAP));
				_exit(0);
			}
			waitpid(pid, NULL, 0);
			target_say("parent %016llx %016llx %016llx",
				   (unsigned long long)hash(part[0], PART),
				   (unsigned long long)hash(part[3], PART),
				   (unsigned long long)hash(heap, HEAP));
			break;
		}
		case 's': {
			uint64_t *to = part[3] - PART / 16;

			if (mremap(part[1], PART, PART / 2,
				   MREMAP_MAYMOVE | MREMAP_FIXED, to) != to)
				_exit(6);
			target_say("shrunk %016llx %016llx",
				   (unsigned long long)hash(to, PART / 2),
				   (unsigned long long)hash(part[3], PART));
			break;
		}
		case 'H':
			target_say("%016llx",
				   (unsigned long long)hash(part[1], PART / 2));
			break;
		case 'q':
			_exit(0);
		}
	}
}

FIXTURE(lazy) {
	char image[64];
	char errfile[64];
	char msg[256];
	char before[256];
	struct target t;
	pid_t pid;
};

FIXTURE_SETUP(lazy)
{
	const char *path = ckpt_module_path();

	if (!path)
		SKIP(return, "CKPT_MODULE does not name a readable ckpt.ko");
	if (!ckpt_module_loaded())
		ASSERT_EQ(0, ckpt_load_module(path));
	snprintf(self->image, sizeof(self->image), "/tmp/cr_lazy.%d.img", getpid());
	snprintf(self->errfile, sizeof(self->errfile), "/tmp/cr_lazy.%d.err", getpid());
	/* Restored processes whose restarter is killed stay ours to reap. */
	ASSERT_EQ(0, prctl(PR_SET_CHILD_SUBREAPER, 1));
}

FIXTURE_TEARDOWN(lazy)
{
	unlink(self->image);
	unlink(self->errfile);
	unsetenv("CKPT_LAZY_BACKGROUND");
}

/*
 * Starts the target, notes its hashes, checkpoints and kills it, and runs
 * "ckpt restart --lazy --verbose" as the target, stderr into errfile;
 * @background "0" turns background filling off.
 */
static int start_lazy(struct __test_metadata *_metadata,
		      FIXTURE_DATA(lazy) *self, const char *background)
{
	char *argv[] = { "ckpt", "restart", "--lazy", "--verbose",
			 self->image, NULL };
	int err, saved, ret;

	ret = target_start(&self->t, lazy_target);
	if (!ret)
		ret = target_ask(&self->t, "h", self->before, sizeof(self->before));
	self->pid = self->t.pid;
	if (!ret)
		ret = ckpt_checkpoint_to(self->pid, self->image,
					 CKPT_CHECKPOINT_KILL, self->msg,
					 sizeof(self->msg), NULL);
	if (ret) {
		TH_LOG("%s", self->msg);
		return ret;
	}
	target_end(&self->t);
	err = open(self->errfile, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	saved = dup(2);
	if (err < 0 || saved < 0)
		return -errno;
	if (background)
		setenv("CKPT_LAZY_BACKGROUND", background, 1);
	else
		unsetenv("CKPT_LAZY_BACKGROUND");
	dup2(err, 2);
	ret = target_spawn(&self->t, NULL, argv);
	dup2(saved, 2);
	close(saved);
	close(err);
	return ret;
}

/* What the restarter wrote on stderr. */
static void read_err(FIXTURE_DATA(lazy) *self, char *buf, size_t len)
{
	int fd = open(self->errfile, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, len - 1) : -1;

	buf[n > 0 ? n : 0] = '\0';
	if (fd >= 0)
		close(fd);
}

/* Waits (at most 120 s) until the restarter wrote @what on stderr. */
static bool wait_err(FIXTURE_DATA(lazy) *self, const char *what)
{
	char buf[1024];
	int i;

	for (i = 0; i < 1200; i++) {
		read_err(self, buf, sizeof(buf));
		if (strstr(buf, what))
			return true;
		usleep(100 * 1000);
	}
	return false;
}

/* Waits (at most 30 s) until @pid is gone, reaping it. */
static bool gone(pid_t pid)
{
	int i;

	for (i = 0; i < 300; i++) {
		if (waitpid(pid, NULL, WNOHANG) == pid || kill(pid, 0))
			return true;
		usleep(100 * 1000);
	}
	return false;
}

TEST_F_TIMEOUT(lazy, memory_comes_back_while_the_process_runs, 180)
{
	char after[256], err[1024];
	unsigned long long touched, behind, zero;

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, start_lazy(_metadata, self, NULL));
	ASSERT_EQ(0, target_ask(&self->t, "h", after, sizeof(after)));
	EXPECT_STREQ(self->before, after);
	ASSERT_TRUE(wait_err(self, "lazy:"));
	read_err(self, err, sizeof(err));
	ASSERT_EQ(3, sscanf(strstr(err, "lazy:"),
			    "lazy: %llu pages brought in when touched, %llu behind, %llu zero",
			    &touched, &behind, &zero)) TH_LOG("%s", err);
	/* 16 MiB, 4 MiB and three stacks: every page, one way or the other. */
	EXPECT_GE(touched + behind, (REGION + HEAP) / 4096);
	ASSERT_EQ(0, target_ask(&self->t, "h", after, sizeof(after)));
	EXPECT_STREQ(self->before, after);

	/* All in: a checkpoint works again, and so does its restart. */
	ASSERT_EQ(0, target_cycle(&self->t, self->pid, self->image, self->msg,
				  sizeof(self->msg))) TH_LOG("%s", self->msg);
	ASSERT_EQ(0, target_ask(&self->t, "h", after, sizeof(after)));
	EXPECT_STREQ(self->before, after);
	ASSERT_EQ(0, target_send(&self->t, "q"));
	EXPECT_EQ(0, target_end(&self->t));
}

TEST_F(lazy, touched_pages_come_in_on_demand_only)
{
	char after[256], err[1024];
	unsigned long long touched = 0, behind = 1, zero;

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, start_lazy(_metadata, self, "0"));
	ASSERT_EQ(0, target_ask(&self->t, "h", after, sizeof(after)));
	EXPECT_STREQ(self->before, after);
	ASSERT_EQ(0, target_send(&self->t, "q"));
	EXPECT_EQ(0, target_end(&self->t));
	read_err(self, err, sizeof(err));
	ASSERT_NE(NULL, strstr(err, "lazy:")) TH_LOG("%s", err);
	sscanf(strstr(err, "lazy:"),
	       "lazy: %llu pages brought in when touched, %llu behind, %llu zero",
	       &touched, &behind, &zero);
	EXPECT_EQ(0ULL, behind);
	EXPECT_GE(touched, (REGION + HEAP) / 4096);
}

TEST_F(lazy, discarded_unmapped_and_moved_ranges_follow_the_process)
{
	char after[256], line[256], want[64];

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, start_lazy(_metadata, self, "0"));
	/* Nothing of parts 1-3 was touched since the restart. */
	ASSERT_EQ(0, target_ask(&self->t, "d", line, sizeof(line)));
	EXPECT_STREQ("dontneed zero 1", line);
	ASSERT_EQ(0, target_ask(&self->t, "u", line, sizeof(line)));
	EXPECT_STREQ("remapped zero 1", line);
	ASSERT_EQ(0, target_ask(&self->t, "m", line, sizeof(line)));
	snprintf(want, sizeof(want), "moved %.16s", self->before + 3 * 17);
	EXPECT_STREQ(want, line);
	/* Parts 0 and 3 (moved), the heap and the stacks are the image's. */
	ASSERT_EQ(0, target_ask(&self->t, "h", after, sizeof(after)));
	EXPECT_EQ(0, strncmp(self->before, after, 16));
	EXPECT_EQ(0, strncmp(self->before + 3 * 17, after + 3 * 17, 16));
	EXPECT_STREQ(self->before + 4 * 17, after + 4 * 17);
	ASSERT_EQ(0, target_send(&self->t, "q"));
	EXPECT_EQ(0, target_end(&self->t));
}

TEST_F(lazy, a_move_that_shrinks_leaves_the_neighbour_alone)
{
	char line[256], want[64];

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, target_start(&self->t, lazy_target));
	ASSERT_EQ(0, target_ask(&self->t, "H", want, sizeof(want)));
	target_end(&self->t);
	ASSERT_EQ(0, start_lazy(_metadata, self, "0"));
	/*
	 * The kernel reports the move with the old length, then unmaps the
	 * half that did not move: part 3 must keep its own pages.
	 */
	ASSERT_EQ(0, target_ask(&self->t, "s", line, sizeof(line)));
	EXPECT_EQ(0, strncmp(line, "shrunk ", 7));
	EXPECT_EQ(0, strncmp(line + 7, want, 16)) TH_LOG("%s, want %s", line, want);
	EXPECT_EQ(0, strncmp(self->before + 3 * 17, line + 7 + 17, 16));
	ASSERT_EQ(0, target_send(&self->t, "q"));
	EXPECT_EQ(0, target_end(&self->t));
}

TEST_F(lazy, a_child_forked_meanwhile_sees_the_image)
{
	char line[256], want[256];

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, start_lazy(_metadata, self, "0"));
	/* Part 0, part 3 and the heap, none touched before the fork. */
	snprintf(want, sizeof(want), "child %.16s %.16s %.16s", self->before,
		 self->before + 3 * 17, self->before + 4 * 17);
	ASSERT_EQ(0, target_ask(&self->t, "f", line, sizeof(line)));
	EXPECT_STREQ(want, line);
	ASSERT_EQ(0, target_line(&self->t, line, sizeof(line)));
	EXPECT_STREQ(want + strlen("child"), line + strlen("parent"));
	ASSERT_EQ(0, target_send(&self->t, "q"));
	EXPECT_EQ(0, target_end(&self->t));
}

TEST_F(lazy, a_checkpoint_while_pages_are_missing_is_refused)
{
	char after[256], other[80];

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, start_lazy(_metadata, self, "0"));
	/* Running (and serving itself): part 1 is still missing. */
	ASSERT_EQ(0, target_ask(&self->t, "d", after, sizeof(after)));
	snprintf(other, sizeof(other), "%s.2", self->image);
	EXPECT_EQ(-EBUSY, ckpt_checkpoint_to(self->pid, other, 0, self->msg,
					     sizeof(self->msg), NULL));
	unlink(other);
	EXPECT_NE(NULL, strstr(self->msg, "userfaultfd")) TH_LOG("%s", self->msg);
	ASSERT_EQ(0, target_ask(&self->t, "h", after, sizeof(after)));
	EXPECT_EQ(0, strncmp(self->before, after, 16));
	ASSERT_EQ(0, target_send(&self->t, "q"));
	EXPECT_EQ(0, target_end(&self->t));
}

TEST_F_TIMEOUT(lazy, the_process_dies_with_its_restarter_until_all_is_in, 180)
{
	char after[256];

	CKPT_SETUP_SKIPPED();
	/* Pages missing: without its restarter it would read zeros. */
	ASSERT_EQ(0, start_lazy(_metadata, self, "0"));
	ASSERT_EQ(0, target_ask(&self->t, "d", after, sizeof(after)));
	ASSERT_EQ(0, kill(self->t.pid, SIGKILL));
	EXPECT_TRUE(gone(self->pid));
	target_end(&self->t);

	/* All in: it outlives its restarter. */
	ASSERT_EQ(0, start_lazy(_metadata, self, NULL));
	ASSERT_TRUE(wait_err(self, "lazy:"));
	ASSERT_EQ(0, kill(self->t.pid, SIGKILL));
	waitpid(self->t.pid, NULL, 0);
	ASSERT_EQ(0, target_ask(&self->t, "h", after, sizeof(after)));
	EXPECT_STREQ(self->before, after);
	ASSERT_EQ(0, target_send(&self->t, "q"));
	EXPECT_TRUE(gone(self->pid));
	close(self->t.in);
	close(self->t.out);
}

TEST_F_TIMEOUT(lazy, another_users_process_still_dies_with_its_restarter, 120)
{
	char line[256];

	CKPT_SETUP_SKIPPED();
	/* Its credentials change at restart, which clears a death signal. */
	as_user = true;
	ASSERT_EQ(0, start_lazy(_metadata, self, "0"));
	as_user = false;
	ASSERT_EQ(0, target_ask(&self->t, "d", line, sizeof(line)));
	EXPECT_STREQ("dontneed zero 1", line);
	ASSERT_EQ(0, kill(self->t.pid, SIGKILL));
	EXPECT_TRUE(gone(self->pid));
	target_end(&self->t);
}

/* Runs in the restarter's child before exec: root without CAP_SYS_PTRACE. */
static void drop_ptrace(void)
{
	prctl(PR_CAPBSET_DROP, CAP_SYS_PTRACE);
}

TEST_F_TIMEOUT(lazy, a_restarter_that_cannot_serve_refuses_first, 120)
{
	char err[512];
	int status, p[2];
	pid_t pid;

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, target_start(&self->t, lazy_target));
	ASSERT_EQ(0, ckpt_checkpoint_to(self->t.pid, self->image,
					CKPT_CHECKPOINT_KILL, self->msg,
					sizeof(self->msg), NULL)) TH_LOG("%s", self->msg);
	target_end(&self->t);

	status = ckpt_run_restart_after(drop_ptrace, self->image, "--lazy",
					err, sizeof(err));
	EXPECT_EQ(1, WEXITSTATUS(status));
	EXPECT_NE(NULL, strstr(err, "needs CAP_SYS_PTRACE")) TH_LOG("%s", err);

	/* --lazy --no-verify: the pages would come unverified. */
	pid = fork();
	if (!pid) {
		int null = open("/dev/null", O_RDWR);

		dup2(null, 0);
		dup2(null, 1);
		execlp("ckpt", "ckpt", "restart", "--lazy", "--no-verify",
		       self->image, NULL);
		_exit(127);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(1, WEXITSTATUS(status));

	/* An image on a pipe. */
	ASSERT_EQ(0, pipe(p));
	pid = fork();
	if (!pid) {
		int null = open("/dev/null", O_RDWR);

		dup2(p[0], 0);
		dup2(null, 1);
		dup2(null, 2);
		close(p[1]);
		execlp("ckpt", "ckpt", "restart", "--lazy", "/dev/stdin", NULL);
		_exit(127);
	}
	close(p[0]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	close(p[1]);
	EXPECT_EQ(1, WEXITSTATUS(status));

	/* None of it started the process; the image still restarts. */
	EXPECT_NE(0, kill(self->t.pid, 0));
	status = ckpt_run_restart_after(NULL, self->image, "--lazy", err,
					sizeof(err));
	EXPECT_EQ(4, WEXITSTATUS(status)) TH_LOG("%s", err);
}

TEST_HARNESS_MAIN
