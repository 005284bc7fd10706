// SPDX-License-Identifier: GPL-2.0
/*
 * Who may checkpoint a process: whoever may ptrace-attach to it, by the
 * kernel's rule with its security modules (Yama's ptrace_scope among
 * them), asked before anything is frozen. A refused checkpoint leaves the
 * process as if nothing had happened: not even woken (its context-switch
 * counts do not move), and it answers at once.
 *
 * boot: last
 * (ptrace_scope 3 cannot be set back: the last test sets it, and the suite
 * runs this program after every other test of its boot, which
 * CKPT_BOOT_OWN says.)
 */
#define _GNU_SOURCE
#include <sched.h>

#include <grp.h>
#include <linux/capability.h>
#include <sys/mount.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>

#include "kselftest_harness.h"
#include "ckpt_test.h"

#define NOBODY		65534
#define SCOPE_PATH	"/proc/sys/kernel/yama/ptrace_scope"

/*
 * Targets of user nobody: kind 0 plain, 1 with a saved uid of root (as a
 * setuid program that dropped to nobody), 2 with a saved gid of root, 3
 * holding permitted capabilities, 4 not dumpable.
 */
static int nobody_kind;

static void nobody_target(void)
{
	int k = nobody_kind;

	if (setgroups(0, NULL) ||
	    setresgid(NOBODY, NOBODY, k == 2 ? 0 : NOBODY) ||
	    (k == 3 && prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0)) ||
	    setresuid(NOBODY, NOBODY, k == 1 ? 0 : NOBODY) ||
	    prctl(PR_SET_DUMPABLE, k != 4, 0, 0, 0))
		_exit(9);
	counter_target();
}

/* Both context-switch counts of @pid, from /proc/PID/status; -1 if gone. */
static long switches(pid_t pid)
{
	char path[64], line[128];
	long n = 0, v;
	int found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "voluntary_ctxt_switches: %ld", &v) == 1 ||
		    sscanf(line, "nonvoluntary_ctxt_switches: %ld", &v) == 1) {
			n += v;
			found++;
		}
	fclose(f);
	return found == 2 ? n : -1;
}

/*
 * The counts once @pid sleeps and they stay put for 50 ms (at most 5 s):
 * the process is blocked in its read and nothing wakes it.
 */
static long idle_switches(pid_t pid)
{
	long a = switches(pid), b;
	int i;

	for (i = 0; i < 100; i++) {
		usleep(50000);
		b = switches(pid);
		if (a >= 0 && a == b)
			return a;
		a = b;
	}
	return -1;
}

/* Who checkpoints: root or nobody, with or without CAP_SYS_PTRACE. */
enum who { ROOT, ROOT_NO_PTRACE_CAP, USER_NOBODY };

static int drop_cap(int cap)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return -1;
	d[cap / 32].effective &= ~(1U << (cap % 32));
	d[cap / 32].permitted &= ~(1U << (cap % 32));
	d[cap / 32].inheritable &= ~(1U << (cap % 32));
	return syscall(SYS_capset, &h, d) ? -1 : prctl(PR_CAPBSET_DROP, cap);
}

/*
 * As @who, one tree request with CKPT_CHECKPOINT_ROOTS for @pid and
 * @other, each the root of a tree of its own (in a file of its own), and
 * @flags; with CKPT_CHECKPOINT_STAGED an eventfd of its own, which a
 * refused request must leave untold: -EPIPE if it was told.
 */
static int checkpoint_roots(pid_t pid, pid_t other, __u32 flags, char *msg,
			    size_t len)
{
	struct ckpt_tree_member m[2] = {
		{ .pid = pid }, { .pid = other },
	};
	struct ckpt_checkpoint_tree a = {
		.members = (uintptr_t)m,
		.nr_members = 2,
		.flags = CKPT_CHECKPOINT_ROOTS | flags,
		.errmsg = (uintptr_t)msg,
		.errmsg_len = len,
	};
	int dev, i, ret;
	__u64 n;

	msg[0] = '\0';
	dev = open("/dev/ckpt", O_RDWR | O_CLOEXEC);
	if (dev < 0)
		return -errno;
	if (flags & CKPT_CHECKPOINT_STAGED)
		a.staged_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	for (i = 0; i < 2; i++)
		m[i].fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	ret = ioctl(dev, CKPT_IOC_CHECKPOINT_TREE, &a) ? -errno : 0;
	if (ret && a.staged_fd > 0 && read(a.staged_fd, &n, sizeof(n)) == sizeof(n))
		ret = -EPIPE;
	if (a.staged_fd > 0)
		close(a.staged_fd);
	for (i = 0; i < 2; i++)
		close(m[i].fd);
	close(dev);
	return ret;
}

/*
 * In a child, as @who: checkpoints @pid (with @other, another root, if
 * not 0); 0 or -errno and the message.
 */
static int request_as(enum who who, pid_t pid, pid_t other, __u32 flags,
		      char *msg, size_t len)
{
	int p[2], status, ret = -EIO;
	pid_t child;

	if (pipe(p))
		return -errno;
	child = fork();
	if (!child) {
		char image[64], buf[256];

		snprintf(image, sizeof(image), "/tmp/cr_access.%d.img",
			 getpid());
		if (who == USER_NOBODY &&
		    (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
		     setresuid(NOBODY, NOBODY, NOBODY)))
			_exit(2);
		if (who == ROOT_NO_PTRACE_CAP && drop_cap(CAP_SYS_PTRACE))
			_exit(2);
		if (other)
			ret = checkpoint_roots(pid, other, flags, buf, sizeof(buf));
		else
			ret = ckpt_checkpoint_to(pid, image, 0, buf,
						 sizeof(buf), NULL);
		unlink(image);
		if (write(p[1], &ret, sizeof(ret)) != sizeof(ret) ||
		    write(p[1], buf, strlen(buf) + 1) < 0)
			_exit(3);
		_exit(0);
	}
	close(p[1]);
	msg[0] = '\0';
	if (read(p[0], &ret, sizeof(ret)) != sizeof(ret) ||
	    read(p[0], msg, len - 1) < 0)
		ret = -EIO;
	msg[len - 1] = '\0';
	close(p[0]);
	waitpid(child, &status, 0);
	return ret;
}

static int checkpoint_as(enum who who, pid_t pid, char *msg, size_t len)
{
	return request_as(who, pid, 0, 0, msg, len);
}

static int read_scope(void)
{
	int fd = open(SCOPE_PATH, O_RDONLY), scope = -1;
	char buf[16] = "";

	if (fd < 0)
		return -1;
	if (read(fd, buf, sizeof(buf) - 1) > 0)
		scope = atoi(buf);
	close(fd);
	return scope;
}

static int write_scope(int scope)
{
	char buf[16];
	int fd = open(SCOPE_PATH, O_WRONLY), n, ret = 0;

	if (fd < 0)
		return -errno;
	n = snprintf(buf, sizeof(buf), "%d\n", scope);
	if (write(fd, buf, n) != n)
		ret = -errno;
	close(fd);
	return ret;
}

static bool answers(struct target *t, const char *want);

FIXTURE(access) {
	struct target t;	/* nobody's, a child of the test, not of the checkpointer */
	int old_scope;		/* -1: no Yama */
	char msg[256];
};

FIXTURE_SETUP(access)
{
	const char *path = ckpt_module_path();

	self->old_scope = -1;
	if (!path)
		SKIP(return, "CKPT_MODULE does not name a readable ckpt.ko");
	if (!ckpt_module_loaded())
		ASSERT_EQ(0, ckpt_load_module(path));
	self->old_scope = read_scope();
	nobody_kind = 0;
	ASSERT_EQ(0, target_start(&self->t, nobody_target));
	ASSERT_EQ(0, target_send(&self->t, "s"));
	/* It says "ready" before it changes ids: wait until it has. */
	ASSERT_TRUE(answers(&self->t, "1"));
}

FIXTURE_TEARDOWN(access)
{
	if (self->old_scope >= 0 && read_scope() != self->old_scope)
		write_scope(self->old_scope);
	if (self->t.pid > 0) {
		kill(self->t.pid, SIGKILL);
		target_end(&self->t);
	}
}

/* The target answers at once, its count intact. */
static bool answers(struct target *t, const char *want)
{
	struct pollfd p = { .fd = t->out, .events = POLLIN };
	char buf[32];

	if (target_send(t, "p") || poll(&p, 1, 1000) != 1 ||
	    target_line(t, buf, sizeof(buf)))
		return false;
	return !strcmp(buf, want);
}

/*
 * As @who, a checkpoint of @t is refused with EPERM, a message naming its
 * pid and containing @why, and @t was never woken.
 */
static void refused(struct __test_metadata *_metadata, struct target *t,
		    enum who who, const char *why, const char *what)
{
	char msg[256], want[64];
	long before, after;

	before = idle_switches(t->pid);
	ASSERT_LE(0, before) TH_LOG("%s: pid %d does not settle", what, t->pid);
	EXPECT_EQ(-EPERM, checkpoint_as(who, t->pid, msg, sizeof(msg)))
		TH_LOG("%s: %s", what, msg);
	snprintf(want, sizeof(want), "no right to checkpoint pid %d: ", t->pid);
	EXPECT_NE(NULL, strstr(msg, want)) TH_LOG("%s: %s", what, msg);
	EXPECT_NE(NULL, strstr(msg, why)) TH_LOG("%s: %s", what, msg);
	after = switches(t->pid);
	EXPECT_EQ(before, after) TH_LOG("%s: pid %d was woken (frozen?)", what,
					t->pid);
	EXPECT_TRUE(answers(t, "1")) TH_LOG("%s", what);
}

#define YAMA_WHY	"ptrace access is refused (Yama's ptrace_scope"

/*
 * Scopes 1 (only descendants) and 2 (only CAP_SYS_PTRACE): a user's own
 * plain process that is not its descendant is refused to it, as
 * PTRACE_ATTACH and /proc/PID/mem are; root still may. Scope 0: the user
 * may.
 */
TEST_F(access, yama_scopes_1_and_2)
{
	int scope;

	CKPT_SETUP_SKIPPED();
	if (self->old_scope < 0)
		SKIP(return, "Yama is not in this kernel (no %s)", SCOPE_PATH);
	if (self->old_scope == 3)
		SKIP(return, "ptrace_scope is 3 already and cannot be lowered");

	for (scope = 1; scope <= 2; scope++) {
		char what[32];

		snprintf(what, sizeof(what), "ptrace_scope %d", scope);
		ASSERT_EQ(0, write_scope(scope));
		refused(_metadata, &self->t, USER_NOBODY, YAMA_WHY, what);
		EXPECT_EQ(0, checkpoint_as(ROOT, self->t.pid, self->msg,
					   sizeof(self->msg)))
			TH_LOG("%s, root: %s", what, self->msg);
		EXPECT_TRUE(answers(&self->t, "1"));
	}
	ASSERT_EQ(0, write_scope(0));
	EXPECT_EQ(0, checkpoint_as(USER_NOBODY, self->t.pid, self->msg,
				   sizeof(self->msg))) TH_LOG("%s", self->msg);
	EXPECT_TRUE(answers(&self->t, "1"));
}

/* Another user's process, and root's to a user. */
TEST_F(access, another_users_process)
{
	struct target t = {};

	CKPT_SETUP_SKIPPED();
	if (self->old_scope > 0)
		ASSERT_EQ(0, write_scope(0));

	ASSERT_EQ(0, target_start(&t, counter_target));	/* root's */
	ASSERT_EQ(0, target_send(&t, "s"));
	refused(_metadata, &t, USER_NOBODY, "another user or is privileged",
		"root's process, nobody");
	kill(t.pid, SIGKILL);
	target_end(&t);
}

/*
 * A tree request is each member's rights check: a user's own process with
 * another user's as the root of a second tree is refused by the other's
 * pid, before anything is frozen: its own is not even woken; asked with
 * CKPT_CHECKPOINT_STAGED too, its eventfd never told.
 */
TEST_F(access, another_users_process_as_another_root)
{
	struct target t = {};
	char want[64];
	long before;

	CKPT_SETUP_SKIPPED();
	if (self->old_scope > 0)
		ASSERT_EQ(0, write_scope(0));

	ASSERT_EQ(0, target_start(&t, counter_target));	/* root's */
	ASSERT_EQ(0, target_send(&t, "s"));
	before = idle_switches(self->t.pid);
	ASSERT_LE(0, before);
	EXPECT_EQ(-EPERM, request_as(USER_NOBODY, self->t.pid, t.pid, 0,
				     self->msg, sizeof(self->msg)))
		TH_LOG("%s", self->msg);
	snprintf(want, sizeof(want), "no right to checkpoint pid %d: ", t.pid);
	EXPECT_NE(NULL, strstr(self->msg, want)) TH_LOG("%s", self->msg);
	EXPECT_EQ(before, switches(self->t.pid));
	EXPECT_TRUE(answers(&self->t, "1"));
	EXPECT_TRUE(answers(&t, "1"));
	/*
	 * The same asked to stop them staged (CKPT_CHECKPOINT_STAGED): refused
	 * as well, its eventfd never told, neither process stopped.
	 */
	before = idle_switches(self->t.pid);
	ASSERT_LE(0, before);
	EXPECT_EQ(-EPERM, request_as(USER_NOBODY, self->t.pid, t.pid,
				     CKPT_CHECKPOINT_STOP | CKPT_CHECKPOINT_STAGED,
				     self->msg, sizeof(self->msg)))
		TH_LOG("%s", self->msg);
	EXPECT_NE(NULL, strstr(self->msg, want)) TH_LOG("%s", self->msg);
	EXPECT_EQ(before, switches(self->t.pid));
	EXPECT_TRUE(answers(&self->t, "1"));
	EXPECT_TRUE(answers(&t, "1"));
	/* Its own alone, as a tree of one: allowed. */
	EXPECT_EQ(0, checkpoint_as(USER_NOBODY, self->t.pid, self->msg,
				   sizeof(self->msg))) TH_LOG("%s", self->msg);
	kill(t.pid, SIGKILL);
	target_end(&t);
}

/*
 * A process of the same user that is privileged (saved uid or gid root,
 * permitted capabilities) or not dumpable.
 */
TEST_F(access, privileged_or_undumpable_process_of_the_same_user)
{
	static const char *const why[] = {
		NULL,
		"another user or is privileged",
		"another user or is privileged",
		"another user or is privileged",
		"not dumpable",
	};
	static const char *const what[] = {
		NULL, "saved uid 0", "saved gid 0", "capabilities", "undumpable",
	};
	int k;

	CKPT_SETUP_SKIPPED();
	if (self->old_scope > 0)
		ASSERT_EQ(0, write_scope(0));

	for (k = 1; k < 5; k++) {
		struct target t = {};

		nobody_kind = k;
		ASSERT_EQ(0, target_start(&t, nobody_target)) TH_LOG("%s", what[k]);
		ASSERT_EQ(0, target_send(&t, "s"));
		ASSERT_TRUE(answers(&t, "1")) TH_LOG("%s", what[k]);
		refused(_metadata, &t, USER_NOBODY, why[k], what[k]);
		kill(t.pid, SIGKILL);
		target_end(&t);
	}
}

/*
 * Root without CAP_SYS_PTRACE is a user like any other: CAP_SYS_ADMIN or
 * CAP_CHECKPOINT_RESTORE do not let it checkpoint another user's process.
 */
TEST_F(access, root_without_cap_sys_ptrace)
{
	CKPT_SETUP_SKIPPED();
	if (self->old_scope > 0)
		ASSERT_EQ(0, write_scope(0));

	refused(_metadata, &self->t, ROOT_NO_PTRACE_CAP,
		"another user or is privileged", "root without CAP_SYS_PTRACE");
	EXPECT_EQ(0, checkpoint_as(ROOT, self->t.pid, self->msg,
				   sizeof(self->msg))) TH_LOG("%s", self->msg);
}

/*
 * A checkpointer whose /proc is another pid namespace's procfs (here: a
 * child namespace's, mounted in its own mount namespace) cannot have the
 * rights on a process that procfs does not show checked: refused, rather
 * than asking about whichever process has the same number there.
 */
TEST_F(access, proc_of_another_pid_namespace)
{
	int ready[2], status;
	pid_t child;
	long before;

	CKPT_SETUP_SKIPPED();

	before = idle_switches(self->t.pid);
	ASSERT_LE(0, before);
	ASSERT_EQ(0, pipe(ready));
	child = fork();
	ASSERT_LE(0, child);
	if (!child) {
		char msg[256], image[64], c;
		pid_t init;
		int ret;

		if (unshare(CLONE_NEWPID | CLONE_NEWNS) ||
		    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
			_exit(2);
		init = fork();
		if (!init) {
			/* Pid 1 of the new namespace: its /proc for both. */
			if (mount("proc", "/proc", "proc", 0, NULL))
				_exit(2);
			close(ready[0]);
			if (write(ready[1], "r", 1) != 1)
				_exit(3);
			pause();
			_exit(0);
		}
		close(ready[1]);
		if (init < 0 || read(ready[0], &c, 1) != 1)
			_exit(4);
		snprintf(image, sizeof(image), "/tmp/cr_access.%d.img",
			 getpid());
		ret = ckpt_checkpoint_to(self->t.pid, image, 0, msg,
					 sizeof(msg), NULL);
		unlink(image);
		kill(init, SIGKILL);
		waitpid(init, NULL, 0);
		if (ret != -EPERM || !strstr(msg, "is not visible in /proc")) {
			fprintf(stderr, "# error %d: %s\n", ret, msg);
			_exit(1);
		}
		_exit(0);
	}
	close(ready[1]);
	close(ready[0]);
	ASSERT_EQ(child, waitpid(child, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(before, switches(self->t.pid));
	EXPECT_TRUE(answers(&self->t, "1"));
}

/*
 * Scope 3: no one may attach, root included, and no one may checkpoint.
 * It cannot be set back, so only on a boot of this program's own.
 */
TEST_F(access, yama_scope_3_refuses_root_too)
{
	CKPT_SETUP_SKIPPED();
	if (self->old_scope < 0)
		SKIP(return, "Yama is not in this kernel (no %s)", SCOPE_PATH);
	if (self->old_scope != 3 &&
	    strcmp(getenv("CKPT_BOOT_OWN") ?: "", "1"))
		SKIP(return, "ptrace_scope 3 cannot be undone: only as its boot's last test (CKPT_BOOT_OWN=1)");

	ASSERT_EQ(0, write_scope(3));
	self->old_scope = 3;	/* for good */
	refused(_metadata, &self->t, USER_NOBODY, YAMA_WHY, "scope 3, nobody");
	refused(_metadata, &self->t, ROOT, YAMA_WHY, "scope 3, root");
}

TEST_HARNESS_MAIN
