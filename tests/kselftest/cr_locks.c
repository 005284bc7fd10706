// SPDX-License-Identifier: GPL-2.0
/*
 * File locks survive a checkpoint and restart: fcntl()'s record locks of
 * the process (read and write, over ranges and to the end of the file),
 * an open file description lock, flock() locks shared and exclusive (one
 * named through a dup()'s lower descriptor), a record lock on a memfd
 * (the engine closes the restarter's descriptor of it, which must not
 * drop the lock) and on a deleted file; seen by this test, another
 * process, before and after. A
 * lock another process holds when the restart comes fails the restart,
 * naming the process, descriptor and file, and the image restarts once
 * it is gone. A flock() lock held through mappings only (a JVM's
 * hsperfdata file) comes back on the mapped file, and goes with its
 * mappings. Refused by name, the process running on: a lease, a lock on
 * a pipe, one on a standard descriptor (the restart gives the process
 * the restarter's), an open file description lock held through a mapping
 * only, and a flock() one whose mapped open file a child shares.
 */
#define _GNU_SOURCE

#include <sys/file.h>
#include <sys/mman.h>
#include <sys/prctl.h>

#include "kselftest_harness.h"
#include "ckpt_test.h"

static char f_path[64], g_path[64], h_path[64], d_path[64];

/*
 * Who holds what of byte @at of @fd's file, as another process sees it:
 * P for a record lock of @pid's, O for an open file description lock.
 */
static void say_byte(char *out, size_t len, int fd, off_t at, pid_t pid)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
			    .l_start = at, .l_len = 1 };
	size_t n = strlen(out);

	if (fcntl(fd, F_OFD_GETLK, &fl)) {
		snprintf(out + n, len - n, " %ld:err%d", (long)at, errno);
		return;
	}
	if (fl.l_type == F_UNLCK) {
		snprintf(out + n, len - n, " %ld:-", (long)at);
		return;
	}
	snprintf(out + n, len - n, " %ld:%c%ld+%ld/%s", (long)at,
		 fl.l_type == F_WRLCK ? 'W' : 'R', (long)fl.l_start,
		 (long)fl.l_len, fl.l_pid == pid ? "P" :
		 fl.l_pid == -1 ? "O" : "?");
}

/* Whether a fresh open file of @path gets a flock of @how now. */
static const char *flock_free(const char *path, int how)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	const char *r;

	if (fd < 0)
		return "err";
	r = flock(fd, how | LOCK_NB) ? (errno == EWOULDBLOCK ? "held" : "err") :
				       "free";
	close(fd);
	return r;
}

/*
 * The locks of locks_target's process @pid, seen from here (never from
 * the process itself: closing a descriptor of a file would drop its
 * record locks on it).
 */
static void describe(pid_t pid, char *out, size_t len)
{
	char path[64];
	int f, m, d;

	f = open(f_path, O_RDWR | O_CLOEXEC);
	snprintf(path, sizeof(path), "/proc/%d/fd/7", pid);
	m = open(path, O_RDWR | O_CLOEXEC);
	snprintf(path, sizeof(path), "/proc/%d/fd/9", pid);
	d = open(path, O_RDWR | O_CLOEXEC);
	snprintf(out, len, "F");
	say_byte(out, len, f, 0, pid);
	say_byte(out, len, f, 120, pid);
	say_byte(out, len, f, 170, pid);
	say_byte(out, len, f, 5000, pid);
	strncat(out, " M", len - strlen(out) - 1);
	say_byte(out, len, m, 3, pid);
	say_byte(out, len, m, 30, pid);
	strncat(out, " D", len - strlen(out) - 1);
	say_byte(out, len, d, 64, pid);
	snprintf(out + strlen(out), len - strlen(out), " G ex:%s sh:%s H sh:%s",
		 flock_free(g_path, LOCK_EX), flock_free(g_path, LOCK_SH),
		 flock_free(h_path, LOCK_SH));
	close(f);
	close(m);
	close(d);
}

static void nothing(void)
{
	target_say("nothing");
}

static int setlk(int fd, int cmd, short type, off_t start, off_t len)
{
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET,
			    .l_start = start, .l_len = len };

	return fcntl(fd, cmd, &fl);
}

/*
 * fd 3 and 4: F, open twice. The process holds record locks on bytes
 * 0-99 (write) and from 200 on (read); fd 4's open file a description
 * lock on 100-149 (write). fd 5: G read-only, flock shared; fd 6: H,
 * flock exclusive through fd 8, a dup() of it. fd 7: a memfd, a record
 * write lock on 0-9. fd 9: a deleted file, a record read lock on 64-127.
 */
static void locks_target(void)
{
	if (open(f_path, O_RDWR | O_CLOEXEC) != 3 ||
	    open(f_path, O_RDWR | O_CLOEXEC) != 4 ||
	    open(g_path, O_RDONLY | O_CLOEXEC) != 5 ||
	    open(h_path, O_RDONLY | O_CLOEXEC) != 6 ||
	    memfd_create("locked", MFD_CLOEXEC) != 7 || ftruncate(7, 4096) ||
	    dup(6) != 8 ||
	    open(d_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600) != 9 ||
	    ftruncate(9, 8192) || unlink(d_path))
		_exit(9);
	if (setlk(3, F_SETLK, F_WRLCK, 0, 100) ||
	    setlk(3, F_SETLK, F_RDLCK, 200, 0) ||
	    setlk(4, F_OFD_SETLK, F_WRLCK, 100, 50) ||
	    flock(5, LOCK_SH) || flock(8, LOCK_EX) ||
	    setlk(7, F_SETLK, F_WRLCK, 0, 10) ||
	    setlk(9, F_SETLK, F_RDLCK, 64, 64))
		_exit(10);
	target_serve(nothing);
}

static void lease_target(void)
{
	if (open(g_path, O_RDONLY | O_CLOEXEC) != 3 ||
	    fcntl(3, F_SETLEASE, F_RDLCK))
		_exit(9);
	target_serve(nothing);
}

static void pipe_target(void)
{
	int p[2];

	if (pipe(p) || p[0] != 3 || flock(3, LOCK_EX))
		_exit(9);
	target_serve(nothing);
}

static void stdout_target(void)
{
	if (open(h_path, O_RDONLY | O_CLOEXEC) != 3 || flock(1, LOCK_EX))
		_exit(9);
	target_serve(nothing);
}

/* An open file description lock held through a mapping only. */
static void mapped_ofd_target(void)
{
	int fd = open(f_path, O_RDWR | O_CLOEXEC);

	if (fd < 0 || setlk(fd, F_OFD_SETLK, F_WRLCK, 0, 10) ||
	    mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0) == MAP_FAILED ||
	    close(fd))
		_exit(9);
	target_serve(nothing);
}

static char *mapped_at;

static void unmap(void)
{
	target_say(munmap(mapped_at, 8192) ? "err" : "unmapped");
}

/*
 * As a JVM holds its hsperfdata file: F opened read-write, flock()ed
 * exclusive, mapped shared (two mappings of one open file: its second
 * page made read-only) and closed; G read-only, flock()ed shared, mapped
 * private and closed. 'p' unmaps F, which lets its lock go.
 */
static void mapped_target(void)
{
	int f = open(f_path, O_RDWR | O_CLOEXEC);
	int g = open(g_path, O_RDONLY | O_CLOEXEC);

	if (f < 0 || g < 0 || flock(f, LOCK_EX) || flock(g, LOCK_SH))
		_exit(9);
	mapped_at = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, f, 0);
	if (mapped_at == MAP_FAILED ||
	    mprotect(mapped_at + 4096, 4096, PROT_READ) ||
	    mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, g, 0) == MAP_FAILED ||
	    close(f) || close(g))
		_exit(10);
	mapped_at[0] = 'x';
	target_serve(unmap);
}

/* The same F, and a child forked with it mapped: one open file for two. */
static void mapped_forked_target(void)
{
	int fd = open(f_path, O_RDWR | O_CLOEXEC);

	if (fd < 0 || flock(fd, LOCK_EX) ||
	    mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0) == MAP_FAILED ||
	    close(fd))
		_exit(9);
	if (!fork()) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (;;)
			pause();
	}
	target_serve(nothing);
}

static char *memfd_at;

static void memfd_probe(void)
{
	target_say("%lx", (unsigned long)memfd_at);
}

/*
 * A memfd mapped shared, flock()ed exclusive through its descriptor, which
 * is closed (the image carries the memfd; the restarter makes it again).
 * 'p' says where it is mapped.
 */
static void memfd_target(void)
{
	int m = memfd_create("hsperf", MFD_CLOEXEC);

	if (m < 0 || ftruncate(m, 4096) || flock(m, LOCK_EX))
		_exit(9);
	memfd_at = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, m, 0);
	if (memfd_at == MAP_FAILED || close(m))
		_exit(10);
	memfd_at[0] = 'a';
	target_serve(memfd_probe);
}

/*
 * Sixty-five files, each opened, flock()ed shared, mapped and closed, and
 * unlinked: one more than an image holds such locks of.
 */
static void many_mapped_target(void)
{
	char path[80];
	int i, fd;

	for (i = 0; i < CKPT_IMG_MAX_FLOCK_MAPS + 1; i++) {
		snprintf(path, sizeof(path), "%s.m%d", f_path, i);
		fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0 || ftruncate(fd, 4096) || flock(fd, LOCK_SH) ||
		    mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0) == MAP_FAILED ||
		    close(fd) || unlink(path))
			_exit(9);
	}
	target_serve(nothing);
}

FIXTURE(locks) {
	char image[64];
	char msg[256];
};

FIXTURE_SETUP(locks)
{
	const char *path = ckpt_module_path();
	int i, fd;

	if (!path)
		SKIP(return, "CKPT_MODULE does not name a readable ckpt.ko");
	if (!ckpt_module_loaded())
		ASSERT_EQ(0, ckpt_load_module(path));
	snprintf(self->image, sizeof(self->image), "/tmp/cr_locks.%d.img", getpid());
	snprintf(f_path, sizeof(f_path), "/tmp/cr_locks.%d.f", getpid());
	snprintf(g_path, sizeof(g_path), "/tmp/cr_locks.%d.g", getpid());
	snprintf(h_path, sizeof(h_path), "/tmp/cr_locks.%d.h", getpid());
	snprintf(d_path, sizeof(d_path), "/tmp/cr_locks.%d.d", getpid());
	for (i = 0; i < 3; i++) {
		fd = open(i == 0 ? f_path : i == 1 ? g_path : h_path,
			  O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		ASSERT_LE(0, fd);
		ASSERT_EQ(0, ftruncate(fd, 8192));
		close(fd);
	}
}

FIXTURE_TEARDOWN(locks)
{
	unlink(self->image);
	unlink(f_path);
	unlink(g_path);
	unlink(h_path);
	unlink(d_path);
}

#define LOCKED "F 0:W0+100/P 120:W100+50/O 170:- 5000:R200+0/P M 3:W0+10/P 30:- D 64:R64+64/P G ex:held sh:free H sh:held"

TEST_F(locks, every_kind_of_lock_comes_back)
{
	struct target t = {};
	char line[512];
	int cycle, fd;
	pid_t pid;

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, target_start(&t, locks_target));
	pid = t.pid;
	ASSERT_EQ(0, target_ask(&t, "s", line, sizeof(line)));
	describe(pid, line, sizeof(line));
	ASSERT_STREQ(LOCKED, line);
	for (cycle = 0; cycle < 2; cycle++) {
		ASSERT_EQ(0, target_cycle(&t, pid, self->image, self->msg,
					  sizeof(self->msg))) TH_LOG("%s", self->msg);
		ASSERT_EQ(0, target_ask(&t, "s", line, sizeof(line)))
			TH_LOG("cycle %d: status %#x", cycle, target_end(&t));
		describe(pid, line, sizeof(line));
		EXPECT_STREQ(LOCKED, line);
	}
	/* And as this process sees them. */
	fd = open(f_path, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	EXPECT_EQ(-1, setlk(fd, F_SETLK, F_RDLCK, 50, 1));
	EXPECT_EQ(0, setlk(fd, F_SETLK, F_RDLCK, 300, 1));
	EXPECT_EQ(-1, setlk(fd, F_SETLK, F_WRLCK, 300, 1));
	close(fd);
	EXPECT_STREQ("held", flock_free(h_path, LOCK_SH));
	ASSERT_EQ(0, target_send(&t, "q"));
	EXPECT_EQ(0, target_end(&t));
	/* Gone with their process. */
	EXPECT_STREQ("free", flock_free(h_path, LOCK_EX));
}

TEST_F(locks, a_lock_another_process_holds_now_fails_the_restart)
{
	struct target t = {};
	char err[512], line[512];
	int fd, status;
	pid_t pid;

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, target_start(&t, locks_target));
	pid = t.pid;
	ASSERT_EQ(0, target_ask(&t, "s", line, sizeof(line)));
	ASSERT_EQ(0, ckpt_checkpoint_to(t.pid, self->image, CKPT_CHECKPOINT_KILL,
					self->msg, sizeof(self->msg), NULL))
		TH_LOG("%s", self->msg);
	target_end(&t);
	fd = open(f_path, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, setlk(fd, F_SETLK, F_WRLCK, 50, 1));
	status = ckpt_run_restart(self->image, NULL, err, sizeof(err));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status)) TH_LOG("%#x", status);
	EXPECT_NE(NULL, strstr(err, "fd 3 (/tmp/cr_locks.")) TH_LOG("%s", err);
	EXPECT_NE(NULL, strstr(err, "cannot take its record write lock again: another process holds a lock on it now"))
		TH_LOG("%s", err);
	close(fd);
	/* Nothing of it was left holding anything; the image is good. */
	EXPECT_STREQ("free", flock_free(h_path, LOCK_EX));
	ASSERT_EQ(0, target_restart(&t, self->image));
	ASSERT_EQ(0, target_ask(&t, "s", line, sizeof(line)))
		TH_LOG("status %#x", target_end(&t));
	describe(pid, line, sizeof(line));
	EXPECT_STREQ(LOCKED, line);
	ASSERT_EQ(0, target_send(&t, "q"));
	EXPECT_EQ(0, target_end(&t));
}

/* Checkpointing @fn's process is refused with @why; it runs on. */
static void refused(struct __test_metadata *_metadata, const char *image,
		    void (*fn)(void), const char *why)
{
	struct target t = {};
	char msg[256], line[512];

	ASSERT_EQ(0, target_start(&t, fn));
	ASSERT_EQ(0, target_ask(&t, "s", line, sizeof(line)));
	EXPECT_EQ(-EOPNOTSUPP, ckpt_checkpoint_to(t.pid, image, 0, msg,
						  sizeof(msg), NULL));
	EXPECT_NE(NULL, strstr(msg, why)) TH_LOG("%s", msg);
	EXPECT_EQ(0, target_ask(&t, "s", line, sizeof(line)));
	ASSERT_EQ(0, target_send(&t, "q"));
	EXPECT_EQ(0, target_end(&t));
}

TEST_F(locks, what_cannot_be_taken_again_is_refused_by_name)
{
	char why[256];

	CKPT_SETUP_SKIPPED();
	snprintf(why, sizeof(why), "holds a lease on %s", g_path);
	refused(_metadata, self->image, lease_target, why);
	refused(_metadata, self->image, pipe_target,
		"fd 3 (pipe:[");
	refused(_metadata, self->image, pipe_target,
		"holds a file lock: only a file's");
	refused(_metadata, self->image, stdout_target,
		"through a standard descriptor only, which the restart replaces");
	snprintf(why, sizeof(why), "holds an open file description lock or a lease on %s through a mapping only",
		 f_path);
	refused(_metadata, self->image, mapped_ofd_target, why);
	snprintf(why, sizeof(why), "holds a flock() lock on %s through a mapping only, and something else holds that open file too",
		 f_path);
	refused(_metadata, self->image, mapped_forked_target, why);
}

TEST_F(locks, more_mapped_flocks_than_an_image_holds_are_refused)
{
	struct target t = {};
	char line[512];

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, target_start(&t, many_mapped_target));
	ASSERT_EQ(0, target_ask(&t, "s", line, sizeof(line)));
	EXPECT_EQ(-E2BIG, ckpt_checkpoint_to(t.pid, self->image, 0, self->msg,
					     sizeof(self->msg), NULL));
	EXPECT_NE(NULL, strstr(self->msg, "holds flock() locks through mappings only on more than 64 files"))
		TH_LOG("%s", self->msg);
	EXPECT_EQ(0, target_ask(&t, "s", line, sizeof(line)));
	ASSERT_EQ(0, target_send(&t, "q"));
	EXPECT_EQ(0, target_end(&t));
}

/* F and G as mapped_target() leaves them, seen from here. */
static void expect_mapped(struct __test_metadata *_metadata, bool f_held)
{
	EXPECT_STREQ(f_held ? "held" : "free", flock_free(f_path, LOCK_SH));
	EXPECT_STREQ("free", flock_free(g_path, LOCK_SH));
	EXPECT_STREQ("held", flock_free(g_path, LOCK_EX));
}

TEST_F(locks, a_flock_through_a_mapping_only_comes_back)
{
	struct target t = {};
	char line[512];
	int cycle;
	pid_t pid;

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, target_start(&t, mapped_target));
	pid = t.pid;
	ASSERT_EQ(0, target_ask(&t, "s", line, sizeof(line)));
	expect_mapped(_metadata, true);
	for (cycle = 0; cycle < 2; cycle++) {
		ASSERT_EQ(0, target_cycle(&t, pid, self->image, self->msg,
					  sizeof(self->msg))) TH_LOG("%s", self->msg);
		ASSERT_EQ(0, target_ask(&t, "s", line, sizeof(line)))
			TH_LOG("cycle %d: status %#x", cycle, target_end(&t));
		expect_mapped(_metadata, true);
	}
	/* The lock is the mappings' open file's: gone once they are. */
	ASSERT_EQ(0, target_ask(&t, "p", line, sizeof(line)));
	EXPECT_STREQ("unmapped", line);
	expect_mapped(_metadata, false);
	ASSERT_EQ(0, target_send(&t, "q"));
	EXPECT_EQ(0, target_end(&t));
	EXPECT_STREQ("free", flock_free(g_path, LOCK_EX));
}

TEST_F(locks, a_flock_through_a_mapping_another_holds_now_fails_the_restart)
{
	struct target t = {};
	char err[512], line[512];
	int fd, status;

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, target_start(&t, mapped_target));
	ASSERT_EQ(0, target_ask(&t, "s", line, sizeof(line)));
	ASSERT_EQ(0, ckpt_checkpoint_to(t.pid, self->image, CKPT_CHECKPOINT_KILL,
					self->msg, sizeof(self->msg), NULL))
		TH_LOG("%s", self->msg);
	target_end(&t);
	fd = open(f_path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, flock(fd, LOCK_SH | LOCK_NB));
	status = ckpt_run_restart(self->image, NULL, err, sizeof(err));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status)) TH_LOG("%#x", status);
	snprintf(line, sizeof(line), "cannot take its flock() write lock on %s (mapped at ",
		 f_path);
	EXPECT_NE(NULL, strstr(err, line)) TH_LOG("%s", err);
	EXPECT_NE(NULL, strstr(err, "another process holds a lock on it now"))
		TH_LOG("%s", err);
	/* Nothing of it holds anything; the image restarts once it is free. */
	EXPECT_STREQ("free", flock_free(g_path, LOCK_EX));
	close(fd);
	ASSERT_EQ(0, target_restart(&t, self->image));
	ASSERT_EQ(0, target_ask(&t, "s", line, sizeof(line)))
		TH_LOG("status %#x", target_end(&t));
	expect_mapped(_metadata, true);
	ASSERT_EQ(0, target_send(&t, "q"));
	EXPECT_EQ(0, target_end(&t));
}


/*
 * A memfd's lock through its mapping: on an open file of the mapping's
 * own at the restart (not the restarter's), held after each cycle, seen
 * through the mapping's /proc/PID/map_files link (another open file).
 */
TEST_F(locks, a_memfd_flocked_through_its_mapping_only_comes_back)
{
	struct target t = {};
	char line[512], link[96];
	unsigned long at;
	int cycle;
	pid_t pid;

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, target_start(&t, memfd_target));
	pid = t.pid;
	ASSERT_EQ(0, target_ask(&t, "p", line, sizeof(line)));
	ASSERT_EQ(1, sscanf(line, "%lx", &at)) TH_LOG("%s", line);
	snprintf(link, sizeof(link), "/proc/%d/map_files/%lx-%lx", pid, at,
		 at + 4096);
	EXPECT_STREQ("held", flock_free(link, LOCK_SH));
	for (cycle = 0; cycle < 2; cycle++) {
		ASSERT_EQ(0, target_cycle(&t, pid, self->image, self->msg,
					  sizeof(self->msg))) TH_LOG("%s", self->msg);
		ASSERT_EQ(0, target_ask(&t, "s", line, sizeof(line)))
			TH_LOG("cycle %d: status %#x", cycle, target_end(&t));
		EXPECT_STREQ("held", flock_free(link, LOCK_SH));
	}
	ASSERT_EQ(0, target_send(&t, "q"));
	EXPECT_EQ(0, target_end(&t));
}

/*
 * A child of this test holds a lock in the way for a second (@record: a
 * record write lock on byte 50 of F; else a shared flock() of F), from
 * before the restart starts.
 */
static pid_t hold_a_second(bool record)
{
	int p[2], fd;
	pid_t pid;
	char c;

	if (pipe(p))
		return -1;
	pid = fork();
	if (!pid) {
		fd = open(f_path, O_RDWR | O_CLOEXEC);
		if (fd < 0 || (record ? setlk(fd, F_SETLK, F_WRLCK, 50, 1) :
					flock(fd, LOCK_SH)) ||
		    write(p[1], "h", 1) != 1)
			_exit(1);
		usleep(1000 * 1000);
		_exit(0);
	}
	close(p[1]);
	if (pid < 0 || read(p[0], &c, 1) != 1)
		pid = -1;
	close(p[0]);
	return pid;
}

/* Such a lock is waited for (2 s at most): the restart takes its own. */
TEST_F(locks, a_lock_held_for_a_moment_at_restart_is_waited_for)
{
	void (*const targets[2])(void) = { mapped_target, locks_target };
	struct target t = {};
	char line[512];
	int i, status;
	pid_t h;

	CKPT_SETUP_SKIPPED();
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, target_start(&t, targets[i]));
		ASSERT_EQ(0, target_ask(&t, "s", line, sizeof(line)));
		ASSERT_EQ(0, ckpt_checkpoint_to(t.pid, self->image,
						CKPT_CHECKPOINT_KILL, self->msg,
						sizeof(self->msg), NULL))
			TH_LOG("%s", self->msg);
		target_end(&t);
		h = hold_a_second(i == 1);
		ASSERT_LT(0, h);
		ASSERT_EQ(0, target_restart(&t, self->image));
		ASSERT_EQ(0, target_ask(&t, "s", line, sizeof(line)))
			TH_LOG("%s: status %#x", i ? "record" : "flock()",
			       target_end(&t));
		ASSERT_EQ(h, waitpid(h, &status, 0));
		if (i) {
			EXPECT_STREQ("held", flock_free(h_path, LOCK_SH));
		} else {
			expect_mapped(_metadata, true);
		}
		ASSERT_EQ(0, target_send(&t, "q"));
		EXPECT_EQ(0, target_end(&t));
	}
}

TEST_HARNESS_MAIN
