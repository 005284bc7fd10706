// SPDX-License-Identifier: GPL-2.0
/*
 * A process's root directory (chroot) survives a checkpoint and restart:
 * the restarted process sees the same "/" (a tmpfs of its own), its working
 * directory inside it, its files opened inside and outside it, and the
 * mappings it made before it entered it. The image names every path from
 * the checkpointer's root; the restarter opens them from its own and enters
 * the root last.
 *
 * Entering a root needs CAP_SYS_CHROOT: a restarter without it is refused,
 * naming the root. A root that is gone or is another directory since the
 * checkpoint is refused, named; so is a root the checkpointer cannot name
 * (outside its own root).
 */
#define _GNU_SOURCE
#include <linux/capability.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/sysmacros.h>
#include <grp.h>
#include <limits.h>

#include "kselftest_harness.h"
#include "ckpt_test.h"

static char base[64], root[80], outside[80];

/*
 * Chrooted into root with the working directory /sub inside it; fd 3 a
 * file outside the root (opened before), fd 4 one inside (after). 'p'
 * prints what the process sees: its working directory, the identity of its
 * "/", the marker, and bytes of both files; 'w' appends to the inside file.
 */
static void chrooted_target(void)
{
	char c, cwd[128], a[16], b[16];
	struct stat st, marker;
	int in;

	if (open(outside, O_RDONLY) != 3 || chroot(root) || chdir("/sub"))
		_exit(9);
	in = open("/data", O_RDWR | O_APPEND);
	if (in != 4)
		_exit(9);
	for (;;) {
		if (read(0, &c, 1) != 1)
			_exit(3);
		if (c == 'q')
			_exit(0);
		if (c == 'w' && write(in, "+", 1) != 1)
			_exit(8);
		if (c != 'p')
			continue;
		if (!getcwd(cwd, sizeof(cwd)) || stat("/", &st))
			_exit(8);
		memset(a, 0, sizeof(a));
		memset(b, 0, sizeof(b));
		if (pread(3, a, 7, 0) != 7 || pread(4, b, sizeof(b) - 1, 0) < 5)
			_exit(8);
		target_say("%s %u:%u:%lu %s %s %s", cwd, major(st.st_dev),
			   minor(st.st_dev), (unsigned long)st.st_ino,
			   stat("/marker", &marker) ? "nomarker" : "marker", a, b);
	}
}

/* Chrooted into root, the working directory left outside it (base). */
static void plain_chrooted_target(void)
{
	char c;

	if (chdir(base) || chroot(root))
		_exit(9);
	for (;;) {
		if (read(0, &c, 1) != 1)
			_exit(3);
		if (c == 'q')
			_exit(0);
		target_say("here");
	}
}

/* Not chrooted at all. */
static void plain_target(void)
{
	char c;

	for (;;) {
		if (read(0, &c, 1) != 1)
			_exit(3);
		if (c == 'q')
			_exit(0);
		target_say("here");
	}
}

static int write_file(const char *path, const char *s, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
	ssize_t n = fd < 0 ? -1 : write(fd, s, strlen(s));

	if (fd >= 0)
		close(fd);
	if (n != (ssize_t)strlen(s) || chmod(path, mode))
		return -1;
	return 0;
}

/* What "/" is, as the test sees root: major:minor:inode. */
static void root_identity(char *buf, size_t len)
{
	struct stat st;

	if (stat(root, &st))
		snprintf(buf, len, "?");
	else
		snprintf(buf, len, "%u:%u:%lu", major(st.st_dev),
			 minor(st.st_dev), (unsigned long)st.st_ino);
}

/*
 * Before "ckpt restart" runs: drop CAP_SYS_CHROOT from the bounding set, so
 * that the restarter runs without it (root runs with its bounding set).
 * It stays root: a restarter that could not take the image's ids, root's,
 * would be refused for those first.
 */
static void drop_sys_chroot(void)
{
	if (prctl(PR_CAPBSET_DROP, CAP_SYS_CHROOT, 0, 0, 0)) {
		fprintf(stderr, "cannot drop CAP_SYS_CHROOT: %m\n");
		_exit(126);
	}
}

FIXTURE(root) {
	char image[64];
};

FIXTURE_SETUP(root)
{
	const char *path = ckpt_module_path();
	char p[128];

	if (!path)
		SKIP(return, "CKPT_MODULE does not name a readable ckpt.ko");
	if (getuid())
		SKIP(return, "making a root directory needs root");
	if (!ckpt_module_loaded())
		ASSERT_EQ(0, ckpt_load_module(path));
	snprintf(self->image, sizeof(self->image), "/tmp/cr_root.%d.img", getpid());
	snprintf(base, sizeof(base), "/tmp/cr_root.%d", getpid());
	snprintf(root, sizeof(root), "%s/root", base);
	snprintf(outside, sizeof(outside), "%s/outside", base);
	ASSERT_EQ(0, mkdir(base, 0755));
	ASSERT_EQ(0, chmod(base, 0755));
	ASSERT_EQ(0, mkdir(root, 0755));
	/* A file system of its own: "/" has an identity of its own. */
	ASSERT_EQ(0, mount("cr_root", root, "tmpfs", 0, "mode=0755"));
	ASSERT_EQ(0, write_file(outside, "outside", 0644));
	snprintf(p, sizeof(p), "%s/marker", root);
	ASSERT_EQ(0, write_file(p, "", 0644));
	snprintf(p, sizeof(p), "%s/data", root);
	ASSERT_EQ(0, write_file(p, "inside", 0666));
	snprintf(p, sizeof(p), "%s/sub", root);
	ASSERT_EQ(0, mkdir(p, 0755));
}

FIXTURE_TEARDOWN(root)
{
	char cmd[128];

	if (!*base)
		return;
	unlink(self->image);
	umount2(root, MNT_DETACH);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	system(cmd);
}

/* Three cycles: root, working directory and files each time. */
TEST_F(root, kept_across_restarts)
{
	char before[256], after[256], want[256], msg[256], id[64];
	char link[PATH_MAX], exe[PATH_MAX], proc[64];
	struct target t = {};
	ssize_t n;
	pid_t pid;
	int cycle;

	CKPT_SETUP_SKIPPED();

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	ASSERT_LT(0, n);
	exe[n] = '\0';
	root_identity(id, sizeof(id));
	ASSERT_EQ(0, target_start(&t, chrooted_target));
	pid = t.pid;
	ASSERT_EQ(0, target_ask(&t, "p", before, sizeof(before)));
	snprintf(want, sizeof(want), "/sub %s marker outside inside", id);
	EXPECT_STREQ(want, before);

	for (cycle = 0; cycle < 3; cycle++) {
		ASSERT_EQ(0, target_cycle(&t, pid, self->image, msg, sizeof(msg)))
			TH_LOG("cycle %d: %s", cycle, msg);
		ASSERT_EQ(0, target_send(&t, "w"));
		ASSERT_EQ(0, target_ask(&t, "p", after, sizeof(after)))
			TH_LOG("cycle %d: the restarted process did not answer", cycle);
		snprintf(want, sizeof(want), "/sub %s marker outside inside%.*s",
			 id, cycle + 1, "+++");
		EXPECT_STREQ(want, after);
		/* As others see it: its root, and its executable. */
		snprintf(proc, sizeof(proc), "/proc/%d/root", pid);
		n = readlink(proc, link, sizeof(link) - 1);
		ASSERT_LT(0, n);
		link[n] = '\0';
		EXPECT_STREQ(root, link);
		snprintf(proc, sizeof(proc), "/proc/%d/exe", pid);
		n = readlink(proc, link, sizeof(link) - 1);
		ASSERT_LT(0, n);
		link[n] = '\0';
		EXPECT_STREQ(exe, link);
	}
	ASSERT_EQ(0, target_send(&t, "q"));
	EXPECT_EQ(0, target_end(&t));
}

/* A user allowed to restore pids but not to chroot gets no root. */
TEST_F(root, restarter_without_cap_sys_chroot_is_refused)
{
	char buf[64], msg[256], err[512], want[256];
	struct target t = {};
	int status;

	CKPT_SETUP_SKIPPED();

	ASSERT_EQ(0, target_start(&t, chrooted_target));
	ASSERT_EQ(0, target_ask(&t, "p", buf, sizeof(buf)));
	ASSERT_EQ(0, ckpt_checkpoint_to(t.pid, self->image, CKPT_CHECKPOINT_KILL,
					msg, sizeof(msg), NULL)) TH_LOG("%s", msg);
	target_end(&t);
	ASSERT_EQ(0, chmod(self->image, 0644));

	status = ckpt_run_restart_after(drop_sys_chroot, self->image, NULL, err,
					sizeof(err));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(1, WEXITSTATUS(status)) TH_LOG("%s", err);
	snprintf(want, sizeof(want), "entering the root directory %s needs CAP_SYS_CHROOT",
		 root);
	EXPECT_NE(NULL, strstr(err, want)) TH_LOG("%s", err);

	/* The same image restarts for a restarter that may. */
	ASSERT_EQ(0, target_restart(&t, self->image));
	ASSERT_EQ(0, target_ask(&t, "p", buf, sizeof(buf)));
	EXPECT_EQ(0, strncmp(buf, "/sub ", 5)) TH_LOG("%s", buf);
	ASSERT_EQ(0, target_send(&t, "q"));
	EXPECT_EQ(0, target_end(&t));
}

/* Another directory under the root's name: refused, named. */
TEST_F(root, a_replaced_root_is_refused)
{
	char buf[64], msg[256], err[512], want[256];
	struct target t = {};
	int status;

	CKPT_SETUP_SKIPPED();

	ASSERT_EQ(0, target_start(&t, plain_chrooted_target));
	ASSERT_EQ(0, target_ask(&t, "p", buf, sizeof(buf)));
	ASSERT_EQ(0, ckpt_checkpoint_to(t.pid, self->image, CKPT_CHECKPOINT_KILL,
					msg, sizeof(msg), NULL)) TH_LOG("%s", msg);
	target_end(&t);

	/* The tmpfs goes: root is the plain directory beneath it now. */
	ASSERT_EQ(0, umount(root));
	status = ckpt_run_restart(self->image, NULL, err, sizeof(err));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(1, WEXITSTATUS(status));
	snprintf(want, sizeof(want),
		 "the root directory %s is not the directory it was at the checkpoint",
		 root);
	EXPECT_NE(NULL, strstr(err, want)) TH_LOG("%s", err);

	/* And gone altogether. */
	ASSERT_EQ(0, rmdir(root));
	status = ckpt_run_restart(self->image, NULL, err, sizeof(err));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(1, WEXITSTATUS(status));
	snprintf(want, sizeof(want), "cannot open the root directory %s: No such file or directory",
		 root);
	EXPECT_NE(NULL, strstr(err, want)) TH_LOG("%s", err);
}

/*
 * A checkpointer confined below the process's root cannot name that root:
 * refused, named, and the process carries on.
 */
TEST_F(root, a_root_outside_the_checkpointers_is_refused)
{
	char buf[64], line[320] = "", want[64];
	struct target t = {};
	int status, p[2];
	pid_t pid;

	CKPT_SETUP_SKIPPED();

	ASSERT_EQ(0, target_start(&t, plain_target));
	ASSERT_EQ(0, target_ask(&t, "p", buf, sizeof(buf)));
	ASSERT_EQ(0, pipe(p));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct ckpt_checkpoint a = { .pid = t.pid };
		char msg[256] = "", proc[96];
		int dev = open("/dev/ckpt", O_RDWR);
		int ret;

		a.fd = open(self->image, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		a.errmsg = (unsigned long)msg;
		a.errmsg_len = sizeof(msg);
		/*
		 * The engine asks /proc, in the checkpointer's root, whether it
		 * may (security.md): one is bound there, in a mount namespace
		 * of the child's own.
		 */
		snprintf(proc, sizeof(proc), "%s/proc", root);
		mkdir(proc, 0555);
		if (dev < 0 || a.fd < 0 || unshare(CLONE_NEWNS) ||
		    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
		    mount("/proc", proc, NULL, MS_BIND, NULL) ||
		    chroot(root) || chdir("/"))
			_exit(2);
		ret = ioctl(dev, CKPT_IOC_CHECKPOINT, &a) ? errno : 0;
		dprintf(p[1], "%d %s", ret, msg);
		_exit(0);
	}
	close(p[1]);
	ASSERT_LT(0, read(p[0], line, sizeof(line) - 1));
	close(p[0]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, status);
	snprintf(want, sizeof(want), "%d the root directory of pid %d ",
		 EOPNOTSUPP, t.pid);
	EXPECT_EQ(0, strncmp(line, want, strlen(want))) TH_LOG("%s", line);
	EXPECT_NE(NULL, strstr(line, "is outside the checkpointer's"))
		TH_LOG("%s", line);
	/* It went on. */
	ASSERT_EQ(0, target_ask(&t, "p", buf, sizeof(buf)));
	EXPECT_STREQ("here", buf);
	ASSERT_EQ(0, target_send(&t, "q"));
	EXPECT_EQ(0, target_end(&t));
}

TEST_HARNESS_MAIN
