// SPDX-License-Identifier: GPL-2.0
/*
 * The executable link (/proc/PID/exe) survives a checkpoint and restart:
 * the restarted process names the same file, with the same identity, not
 * the restarter's binary, over repeated cycles; and the file is denied
 * writes while the process runs and writable again once it is gone, as an
 * exec'd one is (the engine keeps the kernel's count balanced).
 *
 * An executable replaced or removed between checkpoint and restart fails
 * the restart before anything runs, named; one deleted while it runs is
 * refused at checkpoint, named.
 */
#define _GNU_SOURCE
#include <limits.h>

#include "kselftest_harness.h"
#include "ckpt_test.h"

/* 'p' prints /proc/self/exe and the identity of the file it names. */
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
 * its executable is a file the test may replace.
 */
static void __attribute__((constructor)) copy_main(void)
{
	if (!getenv("CR_EXE_TARGET"))
		return;
	syscall(SYS_close_range, 3, ~0U, 0);
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

/* An executable deleted while it runs cannot be named: refused, named. */
TEST_F(exe, a_deleted_executable_is_refused_at_checkpoint)
{
	char buf[PATH_MAX + 64], msg[256], want[256];
	struct target t = {};

	CKPT_SETUP_SKIPPED();

	ASSERT_EQ(0, exec_target(&t, copy));
	ASSERT_EQ(0, target_ask(&t, "p", buf, sizeof(buf)));
	ASSERT_EQ(0, unlink(copy));
	EXPECT_EQ(-EOPNOTSUPP, ckpt_checkpoint_to(t.pid, self->image, 0, msg,
						  sizeof(msg), NULL));
	snprintf(want, sizeof(want), "the executable of pid %d (%s) was deleted",
		 t.pid, copy);
	EXPECT_NE(NULL, strstr(msg, want)) TH_LOG("%s", msg);
	/* It went on. */
	ASSERT_EQ(0, target_ask(&t, "p", buf, sizeof(buf)));
	ASSERT_EQ(0, target_send(&t, "q"));
	EXPECT_EQ(0, target_end(&t));
}

TEST_HARNESS_MAIN
