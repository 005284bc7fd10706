// SPDX-License-Identifier: GPL-2.0
/*
 * The executable link (/proc/PID/exe) survives a checkpoint and restart:
 * the restarted process names the same file, with the same identity, not
 * the restarter's binary, over repeated cycles; and the file is denied
 * writes while the process runs and writable again once it is gone, as an
 * exec'd one is (the engine keeps the kernel's count balanced).
 *
 * An executable replaced or removed between checkpoint and restart fails
 * the restart before anything runs, named. One deleted while it runs (a
 * program rebuilt under a running job: the linker unlinks the old file)
 * or a memfd run by fexecve() comes back from the image's copy, with the
 * same bytes, denying writes, over repeated cycles; one the process may
 * not read (mode 0711) is refused at checkpoint, named, and runs on; one
 * whose directory is a noexec mount at the restart is refused, named.
 */
#define _GNU_SOURCE
#include <grp.h>
#include <limits.h>
#include <sys/mman.h>
#include <sys/mount.h>

#include "kselftest_harness.h"
#include "ckpt_test.h"

/*
 * 'p' prints /proc/self/exe and the identity of the file it names; 'f'
 * the access mode of descriptor 200 (2: read-write), or -1.
 */
static void exe_target(void)
{
	char c, exe[PATH_MAX];
	struct stat st;
	ssize_t n;

	for (;;) {
		if (read(0, &c, 1) != 1)
			_exit(3);
		if (c == 'q')
			_exit(0);
		if (c == 'f') {
			int fl = fcntl(200, F_GETFL);

			target_say("%d", fl < 0 ? -1 : fl & O_ACCMODE);
			continue;
		}
		n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (n <= 0 || stat("/proc/self/exe", &st))
			_exit(8);
		exe[n] = '\0';
		target_say("%s %lu:%lu", exe, (unsigned long)st.st_dev,
			   (unsigned long)st.st_ino);
	}
}

/*
 * The same target in a copy of this program, exec'd (see exec_target()):
 * its executable is a file the test may replace. With CR_EXE_KEEP it
 * keeps descriptor 200.
 */
static void __attribute__((constructor)) copy_main(void)
{
	if (!getenv("CR_EXE_TARGET"))
		return;
	if (getenv("CR_EXE_KEEP")) {
		syscall(SYS_close_range, 3, 199, 0);
		syscall(SYS_close_range, 201, ~0U, 0);
	} else {
		syscall(SYS_close_range, 3, ~0U, 0);
	}
	if (write(1, "ready\n", 6) != 6)
		_exit(126);
	exe_target();
	_exit(0);
}

static char dir[64], copy[96];

static int copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY), out;
	ssize_t n = 0;

	out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n) {
			n = -1;
			break;
		}
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return in < 0 || out < 0 || n < 0 ? -1 : 0;
}

/* Starts exe_target() in @path, a copy of this program. */
static int exec_target(struct target *t, const char *path)
{
	char *argv[] = { (char *)path, NULL };
	char buf[16];
	int ret;

	setenv("CR_EXE_TARGET", "1", 1);
	ret = target_spawn(t, NULL, argv);
	unsetenv("CR_EXE_TARGET");
	if (!ret)
		ret = target_line(t, buf, sizeof(buf));
	if (!ret && strcmp(buf, "ready"))
		ret = -EPROTO;
	return ret;
}

/* Whether @path can be opened for writing now: 0, or -errno. */
static int writable(const char *path)
{
	int fd = open(path, O_WRONLY);

	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

static int memfd_noexec(const char *v)
{
	int fd = open("/proc/sys/vm/memfd_noexec", O_WRONLY), ret;

	if (fd < 0)
		return -errno;	/* before 6.3: every memfd may be executed */
	ret = write(fd, v, 1) == 1 ? 0 : -errno;
	close(fd);
	return ret;
}

FIXTURE(exe) {
	char image[64];
};

FIXTURE_SETUP(exe)
{
	const char *path = ckpt_module_path();

	if (!path)
		SKIP(return, "CKPT_MODULE does not name a readable ckpt.ko");
	if (!ckpt_module_loaded())
		ASSERT_EQ(0, ckpt_load_module(path));
	snprintf(self->image, sizeof(self->image), "/tmp/cr_exe.%d.img", getpid());
	snprintf(dir, sizeof(dir), "/tmp/cr_exe.%d", getpid());
	snprintf(copy, sizeof(copy), "%s/copy", dir);
	ASSERT_EQ(0, mkdir(dir, 0755));
	ASSERT_EQ(0, copy_file("/proc/self/exe", copy));
}

FIXTURE_TEARDOWN(exe)
{
	char cmd[96];

	unlink(self->image);
	memfd_noexec("0");	/* the default, which a failed test may have left */
	if (!*dir)
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	system(cmd);
}

/* The test program's own binary, as the forked target runs it. */
TEST_F(exe, restored_across_restarts)
{
	char before[PATH_MAX + 64], after[PATH_MAX + 64], msg[256];
	char mine[PATH_MAX], link[PATH_MAX], proc[64];
	struct target t = {};
	struct stat st;
	ssize_t n;
	pid_t pid;
	int cycle;

	CKPT_SETUP_SKIPPED();

	n = readlink("/proc/self/exe", mine, sizeof(mine) - 1);
	ASSERT_LT(0, n);
	mine[n] = '\0';
	ASSERT_EQ(0, stat(mine, &st));
	ASSERT_EQ(0, target_start(&t, exe_target));
	pid = t.pid;
	ASSERT_EQ(0, target_ask(&t, "p", before, sizeof(before)));
	snprintf(after, sizeof(after), "%s %lu:%lu", mine,
		 (unsigned long)st.st_dev, (unsigned long)st.st_ino);
	EXPECT_STREQ(after, before);

	for (cycle = 0; cycle < 3; cycle++) {
		ASSERT_EQ(0, target_cycle(&t, pid, self->image, msg, sizeof(msg)))
			TH_LOG("cycle %d: %s", cycle, msg);
		ASSERT_EQ(0, target_ask(&t, "p", after, sizeof(after)))
			TH_LOG("cycle %d: the restarted process did not answer", cycle);
		EXPECT_STREQ(before, after);
		snprintf(proc, sizeof(proc), "/proc/%d/exe", pid);
		n = readlink(proc, link, sizeof(link) - 1);
		ASSERT_LT(0, n);
		link[n] = '\0';
		EXPECT_STREQ(mine, link);
	}
	ASSERT_EQ(0, target_send(&t, "q"));
	EXPECT_EQ(0, target_end(&t));
}

/*
 * The restored link denies writes to its file like an exec'd one, and
 * gives the denial back when the process ends: the file's count of
 * write-deniers stays balanced.
 */
TEST_F(exe, denies_writes_while_it_runs)
{
	char buf[PATH_MAX + 64], msg[256];
	struct target t = {};
	pid_t pid;

	CKPT_SETUP_SKIPPED();

	ASSERT_EQ(0, writable(copy));
	ASSERT_EQ(0, exec_target(&t, copy));
	pid = t.pid;
	ASSERT_EQ(0, target_ask(&t, "p", buf, sizeof(buf)));
	EXPECT_EQ(0, strncmp(buf, copy, strlen(copy))) TH_LOG("%s", buf);
	if (writable(copy) != -ETXTBSY) {
		target_send(&t, "q");
		target_end(&t);
		SKIP(return, "this kernel lets a running executable be written");
	}

	ASSERT_EQ(0, target_cycle(&t, pid, self->image, msg, sizeof(msg)))
		TH_LOG("%s", msg);
	ASSERT_EQ(0, target_ask(&t, "p", buf, sizeof(buf)));
	EXPECT_EQ(0, strncmp(buf, copy, strlen(copy))) TH_LOG("%s", buf);
	EXPECT_EQ(-ETXTBSY, writable(copy));
	ASSERT_EQ(0, target_send(&t, "q"));
	EXPECT_EQ(0, target_end(&t));
	EXPECT_EQ(0, writable(copy));
}

/* Another file under the executable's name, then none: refused, named. */
TEST_F(exe, a_replaced_or_removed_executable_is_refused)
{
	char buf[PATH_MAX + 64], msg[256], err[512], want[256], other[128];
	struct target t = {};
	int status;

	CKPT_SETUP_SKIPPED();

	ASSERT_EQ(0, exec_target(&t, copy));
	ASSERT_EQ(0, target_ask(&t, "p", buf, sizeof(buf)));
	ASSERT_EQ(0, ckpt_checkpoint_to(t.pid, self->image, CKPT_CHECKPOINT_KILL,
					msg, sizeof(msg), NULL)) TH_LOG("%s", msg);
	target_end(&t);

	/* The same bytes, another file. */
	snprintf(other, sizeof(other), "%s/other", dir);
	ASSERT_EQ(0, copy_file(copy, other));
	ASSERT_EQ(0, rename(other, copy));
	status = ckpt_run_restart(self->image, NULL, err, sizeof(err));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(1, WEXITSTATUS(status));
	snprintf(want, sizeof(want),
		 "the executable %s is not the file it was at the checkpoint", copy);
	EXPECT_NE(NULL, strstr(err, want)) TH_LOG("%s", err);

	ASSERT_EQ(0, unlink(copy));
	status = ckpt_run_restart(self->image, NULL, err, sizeof(err));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(1, WEXITSTATUS(status));
	snprintf(want, sizeof(want), "cannot open the executable %s: error -2",
		 copy);
	EXPECT_NE(NULL, strstr(err, want)) TH_LOG("%s", err);
}

/* Whether the files at @a and @b hold the same bytes: 0, or -1. */
static int same_bytes(const char *a, const char *b)
{
	char ba[65536], bb[65536];
	int fa = open(a, O_RDONLY), fb = open(b, O_RDONLY), ret = -1;
	ssize_t na, nb;

	while (fa >= 0 && fb >= 0) {
		na = read(fa, ba, sizeof(ba));
		nb = read(fb, bb, sizeof(bb));
		if (na != nb || na < 0 || memcmp(ba, bb, na))
			break;
		if (!na) {
			ret = 0;
			break;
		}
	}
	if (fa >= 0)
		close(fa);
	if (fb >= 0)
		close(fb);
	return ret;
}

/*
 * The target's executable after each of three checkpoint-kill-restart
 * cycles: deleted (@prefix names it up to the name the restart gives the
 * file it made), the bytes of this program, denying writes; it answers,
 * and says @fd200 of its descriptor 200.
 */
static void deleted_cycles(struct __test_metadata *_metadata,
			   struct target *t, const char *image,
			   const char *prefix, const char *fd200)
{
	char buf[PATH_MAX + 64], msg[256], proc[64], link[PATH_MAX];
	pid_t pid = t->pid;
	size_t n;
	ssize_t len;
	int cycle, fd;

	snprintf(proc, sizeof(proc), "/proc/%d/exe", pid);
	for (cycle = 0; cycle < 3; cycle++) {
		ASSERT_EQ(0, target_cycle(t, pid, image, msg, sizeof(msg)))
			TH_LOG("cycle %d: %s", cycle, msg);
		ASSERT_EQ(0, target_ask(t, "p", buf, sizeof(buf)))
			TH_LOG("cycle %d: the restarted process did not answer", cycle);
		len = readlink(proc, link, sizeof(link) - 1);
		ASSERT_LT(0, len);
		link[len] = '\0';
		n = strlen(link);
		EXPECT_EQ(0, strncmp(link, prefix, strlen(prefix))) TH_LOG("%s", link);
		EXPECT_TRUE(n > 10 && !strcmp(link + n - 10, " (deleted)"))
			TH_LOG("%s", link);
		EXPECT_EQ(0, strncmp(buf, link, n)) TH_LOG("%s against %s", buf, link);
		EXPECT_EQ(0, same_bytes(proc, "/proc/self/exe"));
		ASSERT_EQ(0, target_ask(t, "f", buf, sizeof(buf)));
		EXPECT_STREQ(fd200, buf);
		fd = open(proc, O_WRONLY);
		EXPECT_EQ(-1, fd);
		EXPECT_EQ(ETXTBSY, errno);
		if (fd >= 0)
			close(fd);
	}
	ASSERT_EQ(0, target_send(t, "q"));
	EXPECT_EQ(0, target_end(t));
}

/*
 * Rebuilt while it runs: a new file renamed over the old one, which lives
 * on unlinked. The restart makes it anew in its directory, unnamed.
 */
TEST_F(exe, a_deleted_executable_comes_back)
{
	char buf[PATH_MAX + 64], msg[256], other[128], prefix[160];
	struct target t = {};

	CKPT_SETUP_SKIPPED();

	ASSERT_EQ(0, exec_target(&t, copy));
	ASSERT_EQ(0, target_ask(&t, "p", buf, sizeof(buf)));
	snprintf(other, sizeof(other), "%s/rebuilt", dir);
	ASSERT_EQ(0, copy_file("/bin/true", other));
	ASSERT_EQ(0, rename(other, copy));
	/* Continue first: it runs on, and its image names the old file. */
	ASSERT_EQ(0, ckpt_checkpoint_to(t.pid, self->image, 0, msg, sizeof(msg),
					NULL)) TH_LOG("%s", msg);
	ASSERT_EQ(0, target_ask(&t, "p", buf, sizeof(buf)));
	snprintf(prefix, sizeof(prefix), "%s (deleted) ", copy);
	EXPECT_EQ(0, strncmp(buf, prefix, strlen(prefix))) TH_LOG("%s", buf);
	snprintf(prefix, sizeof(prefix), "%s/", dir);
	deleted_cycles(_metadata, &t, self->image, prefix, "-1");
}

/*
 * The file the restart makes for a deleted executable is made in its
 * directory: on a mount there that forbids exec, the engine refuses it,
 * naming it, and nothing runs; the mount gone, the same image restarts.
 */
TEST_F(exe, a_deleted_executable_made_on_a_noexec_mount_is_refused)
{
	char buf[PATH_MAX + 64], msg[256], other[128], err[1024];
	struct target t = {};
	int status;

	CKPT_SETUP_SKIPPED();

	ASSERT_EQ(0, exec_target(&t, copy));
	snprintf(other, sizeof(other), "%s/rebuilt", dir);
	ASSERT_EQ(0, copy_file("/bin/true", other));
	ASSERT_EQ(0, rename(other, copy));
	ASSERT_EQ(0, ckpt_checkpoint_to(t.pid, self->image, CKPT_CHECKPOINT_KILL,
					msg, sizeof(msg), NULL)) TH_LOG("%s", msg);
	target_end(&t);
	ASSERT_EQ(0, mount("none", dir, "tmpfs", MS_NOEXEC, "mode=0755"));
	status = ckpt_run_restart(self->image, NULL, err, sizeof(err));
	EXPECT_EQ(0, umount(dir));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) != 0)
		TH_LOG("status %#x: %s", status, err);
	snprintf(buf, sizeof(buf),
		 "the executable %s is not a regular file on an exec mount here",
		 copy);
	EXPECT_NE(NULL, strstr(err, buf)) TH_LOG("%s", err);
	ASSERT_EQ(0, target_restart(&t, self->image));
	ASSERT_EQ(0, target_ask(&t, "p", buf, sizeof(buf)));
	EXPECT_EQ(0, strncmp(buf, dir, strlen(dir))) TH_LOG("%s", buf);
	ASSERT_EQ(0, target_send(&t, "q"));
	EXPECT_EQ(0, target_end(&t));
}

static void exec_memfd(void)
{
	int fd = memfd_create("cr_exe", 0), self = open("/proc/self/exe", O_RDONLY);
	char b[65536];
	ssize_t n;

	while (fd >= 0 && self >= 0 && (n = read(self, b, sizeof(b))) > 0)
		if (write(fd, b, n) != n)
			_exit(125);
	if (fd < 0 || self < 0 || dup2(fd, 200) != 200)
		_exit(125);
}


/*
 * fexecve() of a memfd it keeps open read-write (descriptor 200), which a
 * memfd allows: the image carries it, the restart makes a memfd, and the
 * descriptor is read-write again. With vm.memfd_noexec 1 (6.3 on) for the
 * restarts, which makes a memfd unexecutable unless asked otherwise.
 */
TEST_F(exe, a_memfd_executable_comes_back)
{
	char *argv[] = { "/proc/self/fd/200", NULL };
	char buf[PATH_MAX + 64];
	struct target t = {};
	int noexec;

	CKPT_SETUP_SKIPPED();

	setenv("CR_EXE_TARGET", "1", 1);
	setenv("CR_EXE_KEEP", "1", 1);
	ASSERT_EQ(0, target_spawn_after(&t, NULL, argv, exec_memfd));
	unsetenv("CR_EXE_TARGET");
	unsetenv("CR_EXE_KEEP");
	ASSERT_EQ(0, target_line(&t, buf, sizeof(buf)));
	ASSERT_STREQ("ready", buf);
	ASSERT_EQ(0, target_ask(&t, "p", buf, sizeof(buf)));
	EXPECT_EQ(0, strncmp(buf, "/memfd:cr_exe (deleted) ", 24)) TH_LOG("%s", buf);
	ASSERT_EQ(0, target_ask(&t, "f", buf, sizeof(buf)));
	EXPECT_STREQ("2", buf);
	noexec = memfd_noexec("1");
	TH_LOG("vm.memfd_noexec 1 for the restarts: %s",
	       noexec ? strerror(-noexec) : "set");
	deleted_cycles(_metadata, &t, self->image, "/memfd:cr_exe ", "2");
	if (!noexec)
		EXPECT_EQ(0, memfd_noexec("0"));
}

static void become_user(void)
{
	const gid_t g = 1000;

	if (setgroups(1, &g) || setresgid(1000, 1000, 1000) ||
	    setresuid(1000, 1000, 1000))
		_exit(124);
}

/*
 * exec() needs no read permission: a deleted executable the process may
 * not read (mode 0711, root's) must not reach an image, even root's.
 */
TEST_F(exe, a_deleted_executable_its_process_may_not_read_is_refused)
{
	char *argv[] = { copy, NULL };
	char buf[PATH_MAX + 64], msg[256], want[256];
	struct target t = {};

	CKPT_SETUP_SKIPPED();

	ASSERT_EQ(0, chmod(copy, 0711));
	setenv("CR_EXE_TARGET", "1", 1);
	ASSERT_EQ(0, target_spawn_after(&t, NULL, argv, become_user));
	unsetenv("CR_EXE_TARGET");
	ASSERT_EQ(0, target_line(&t, buf, sizeof(buf)));
	ASSERT_STREQ("ready", buf);
	ASSERT_EQ(0, unlink(copy));
	EXPECT_EQ(-EACCES, ckpt_checkpoint_to(t.pid, self->image, 0, msg,
					      sizeof(msg), NULL));
	snprintf(want, sizeof(want),
		 "the executable of pid %d (%s) was deleted, and the process may not read it",
		 t.pid, copy);
	EXPECT_NE(NULL, strstr(msg, want)) TH_LOG("%s", msg);
	/* It went on. */
	ASSERT_EQ(0, target_ask(&t, "p", buf, sizeof(buf)));
	ASSERT_EQ(0, target_send(&t, "q"));
	EXPECT_EQ(0, target_end(&t));
}

TEST_HARNESS_MAIN
