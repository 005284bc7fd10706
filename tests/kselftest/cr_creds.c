// SPDX-License-Identifier: GPL-2.0
/*
 * Credentials survive a restart and are never raised: a process of user
 * 1000 (groups 1000, 2000, 3000, no capability, two threads) restarted by
 * root runs as that user in both threads, with those groups and no
 * capability; a restarter that could not switch to those ids itself (user
 * 1001 keeping CAP_CHECKPOINT_RESTORE, so that only the ids are in the way)
 * is refused, naming them, and the image still restarts; the engine refuses
 * on its own a restarter that did not switch or handed over other ids; a
 * restarter with the image's ids gives none of its capabilities; a root
 * process that dropped capabilities, made itself undumpable and set
 * no_new_privs stays so; the image's files are opened with its user's
 * rights. Threads with other credentials than their process, a process in
 * another user namespace and one under seccomp are refused at checkpoint.
 */
#define _GNU_SOURCE
#include <grp.h>
#include <pthread.h>
#include <sched.h>
#include <sys/fsuid.h>
#include <sys/prctl.h>

#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include "kselftest_harness.h"
#include "ckpt_test.h"

#define USER		1000
#define OTHER		1001
#define ALL_CAPS	((1ULL << (CAP_LAST_CAP + 1)) - 1)

static const gid_t user_groups[] = { 1000, 2000, 3000 };

/* Set before a target starts: a file the target opens at fd 3. */
static const char *user_file;

static volatile pid_t second_tid;
static volatile sig_atomic_t sigchld_seen;

static void on_sigchld(int sig)
{
	sigchld_seen += sig == SIGCHLD;
}

static void *idle_thread(void *arg)
{
	second_tid = gettid();
	for (;;)
		pause();
	return arg;
}

/* Starts the second thread and says "ready TID" once it runs. */
static void start_thread(void)
{
	pthread_t th;

	if (pthread_create(&th, NULL, idle_thread, NULL))
		_exit(9);
	while (!second_tid)
		usleep(1000);
	target_say("ready %d", second_tid);
}

/*
 * 'i': "uid R E S F gid R E S F groups G,G,... dumpable D nnp N"; 's'
 * steps a counter, 'p' prints it; 'c' prints how many SIGCHLD came.
 */
static void creds_loop(void)
{
	uid_t r, e, s;
	gid_t rg, eg, sg, g[16];
	unsigned long n = 0;
	char list[128];
	int i, ng, len;
	char c;

	for (;;) {
		if (read(0, &c, 1) != 1)
			_exit(3);
		if (c == 's')
			n++;
		if (c == 'p')
			target_say("%lu", n);
		if (c == 'c')
			target_say("%d", (int)sigchld_seen);
		if (c != 'i')
			continue;
		if (getresuid(&r, &e, &s) || getresgid(&rg, &eg, &sg))
			_exit(10);
		ng = getgroups(16, g);
		if (ng < 0)
			_exit(10);
		for (i = 0, len = 0, list[0] = '\0'; i < ng; i++)
			len += snprintf(list + len, sizeof(list) - len, "%s%u",
					i ? "," : "", g[i]);
		target_say("uid %u %u %u %u gid %u %u %u %u groups %s dumpable %d nnp %d",
			   r, e, s, (uid_t)setfsuid(-1), rg, eg, sg,
			   (gid_t)setfsgid(-1), list,
			   prctl(PR_GET_DUMPABLE, 0, 0, 0, 0),
			   prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0));
	}
}

/*
 * Runs as user and group 1000 with three groups, dumpable, in /tmp, with a
 * second thread (and @user_file open at fd 3, opened as that user).
 */
static void user_target(void)
{
	if (signal(SIGCHLD, on_sigchld) == SIG_ERR || chdir("/tmp") || setgroups(3, user_groups) ||
	    setresgid(USER, USER, USER) || setresuid(USER, USER, USER) ||
	    prctl(PR_SET_DUMPABLE, 1, 0, 0, 0))
		_exit(9);
	if (user_file && open(user_file, O_RDWR) != 3)
		_exit(9);
	start_thread();
	creds_loop();
}

static int set_caps(__u64 perm, __u64 eff, __u64 inh)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2] = {
		{ (__u32)eff, (__u32)perm, (__u32)inh },
		{ eff >> 32, perm >> 32, inh >> 32 },
	};

	return syscall(SYS_capset, &h, d);
}

/*
 * Root, but with only CAP_KILL and CAP_NET_BIND_SERVICE, without
 * CAP_SYS_ADMIN in its bounding set, undumpable, and with no_new_privs.
 */
#define ROOT_CAPS	((1ULL << CAP_KILL) | (1ULL << CAP_NET_BIND_SERVICE))

static void lowered_root_target(void)
{
	if (chdir("/tmp") || prctl(PR_CAPBSET_DROP, CAP_SYS_ADMIN, 0, 0, 0) ||
	    set_caps(ROOT_CAPS, ROOT_CAPS, 0) ||
	    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		_exit(9);
	start_thread();
	creds_loop();
}

/*
 * Becomes @uid with @groups, keeping only CAP_CHECKPOINT_RESTORE (as an
 * ambient capability, so that it survives exec): a restarter that may
 * restore pids but not change ids.
 */
static void become(uid_t uid, const gid_t *groups, int n)
{
	const __u64 cr = 1ULL << CAP_CHECKPOINT_RESTORE;

	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) || setgroups(n, groups) ||
	    setresgid(uid, uid, uid) || setresuid(uid, uid, uid) ||
	    set_caps(cr, cr, cr) ||
	    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_CHECKPOINT_RESTORE,
		  0, 0))
		_exit(120);
}

static void as_other_user(void)
{
	const gid_t g = OTHER;

	become(OTHER, &g, 1);
}

static void as_the_user(void)
{
	become(USER, user_groups, 3);
}

/* @field of /proc/PID/task/TID/status, its tabs made spaces, trimmed. */
static int proc_status(pid_t pid, pid_t tid, const char *field, char *out,
		       size_t size)
{
	char path[64], line[512], *p, *e;
	size_t len = strlen(field);
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", pid, tid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, field, len) || line[len] != ':')
			continue;
		for (p = line + len + 1; *p == '\t' || *p == ' '; p++)
			;
		for (e = p + strlen(p); e > p && (e[-1] == '\n' ||
		     e[-1] == ' ' || e[-1] == '\t'); e--)
			;
		*e = '\0';
		for (e = p; *e; e++)
			if (*e == '\t')
				*e = ' ';
		snprintf(out, size, "%s", p);
		fclose(f);
		return 0;
	}
	fclose(f);
	return -ENOENT;
}

/* Whether thread @tid of @pid shows @want for @field. */
static bool status_is(pid_t pid, pid_t tid, const char *field,
		      const char *want)
{
	char got[256];

	if (proc_status(pid, tid, field, got, sizeof(got)))
		return false;
	if (strcmp(got, want))
		fprintf(stderr, "# %d/%d %s: \"%s\", wanted \"%s\"\n", pid,
			tid, field, got, want);
	return !strcmp(got, want);
}

static bool caps_are(pid_t pid, pid_t tid, __u64 prm, __u64 eff, __u64 inh,
		     __u64 amb, __u64 bnd)
{
	const char *fields[] = { "CapPrm", "CapEff", "CapInh", "CapAmb", "CapBnd" };
	const __u64 want[] = { prm, eff, inh, amb, bnd };
	char buf[32];
	bool ok = true;
	int i;

	for (i = 0; i < 5; i++) {
		snprintf(buf, sizeof(buf), "%016llx", (unsigned long long)want[i]);
		ok &= status_is(pid, tid, fields[i], buf);
	}
	return ok;
}

/* Both threads of the user's process: its ids and groups, no capability. */
static bool runs_as_the_user(pid_t pid, pid_t tid)
{
	pid_t t[2] = { pid, tid };
	bool ok = true;
	int i;

	for (i = 0; i < 2; i++) {
		ok &= status_is(pid, t[i], "Uid", "1000 1000 1000 1000");
		ok &= status_is(pid, t[i], "Gid", "1000 1000 1000 1000");
		ok &= status_is(pid, t[i], "Groups", "1000 2000 3000");
		ok &= caps_are(pid, t[i], 0, 0, 0, 0, ALL_CAPS);
	}
	return ok;
}

#define USER_IDS "uid 1000 1000 1000 1000 gid 1000 1000 1000 1000 " \
		 "groups 1000,2000,3000 dumpable 1 nnp 0"

FIXTURE(creds) {
	char image[64];
	char file[64];
	struct target t;
	pid_t pid, tid;		/* the process in the image, its 2nd thread */
	char msg[256];
};

FIXTURE_SETUP(creds)
{
	const char *path = ckpt_module_path();

	if (!path)
		SKIP(return, "CKPT_MODULE does not name a readable ckpt.ko");
	if (geteuid() != 0)
		SKIP(return, "switching users needs root");
	if (!ckpt_module_loaded())
		ASSERT_EQ(0, ckpt_load_module(path));
	snprintf(self->image, sizeof(self->image), "/tmp/cr_creds.%d.img",
		 getpid());
	snprintf(self->file, sizeof(self->file), "/tmp/cr_creds.%d.file",
		 getpid());
	user_file = NULL;
}

FIXTURE_TEARDOWN(creds)
{
	if (self->pid > 0)
		kill(self->pid, SIGKILL);
	if (self->t.pid > 0) {
		kill(self->t.pid, SIGKILL);
		target_end(&self->t);
	}
	unlink(self->image);
	unlink(self->file);
}

/* Starts @fn as the target and learns its second thread. */
static int start(struct __test_metadata *_metadata, FIXTURE_DATA(creds) *self,
		 void (*fn)(void))
{
	char buf[64];

	ASSERT_EQ(0, target_start(&self->t, fn));
	ASSERT_EQ(0, target_line(&self->t, buf, sizeof(buf)));
	ASSERT_EQ(1, sscanf(buf, "ready %d", &self->tid)) TH_LOG("%s", buf);
	self->pid = self->t.pid;
	return 0;
}

/* Checkpoints the target (killing it) into an image anyone may read. */
static int checkpoint_kill(FIXTURE_DATA(creds) *self)
{
	int ret = ckpt_checkpoint_to(self->pid, self->image,
				     CKPT_CHECKPOINT_KILL, self->msg,
				     sizeof(self->msg), NULL);

	if (ret)
		return ret;
	target_end(&self->t);
	self->t.pid = 0;
	return chmod(self->image, 0644) ? -errno : 0;
}

static bool answers(struct target *t, const char *cmd, const char *want)
{
	char buf[256];

	if (target_ask(t, cmd, buf, sizeof(buf)))
		return false;
	if (strcmp(buf, want))
		fprintf(stderr, "# '%s' answered \"%s\", wanted \"%s\"\n", cmd,
			buf, want);
	return !strcmp(buf, want);
}

TEST_F(creds, root_restarts_a_users_process_as_that_user)
{
	char path[64];
	struct stat st;

	CKPT_SETUP_SKIPPED();

	start(_metadata, self, user_target);
	ASSERT_TRUE(answers(&self->t, "i", USER_IDS));
	ASSERT_TRUE(runs_as_the_user(self->pid, self->tid));
	ASSERT_EQ(0, checkpoint_kill(self)) TH_LOG("%s", self->msg);

	ASSERT_EQ(0, target_restart(&self->t, self->image));
	EXPECT_TRUE(answers(&self->t, "sp", "1"));
	EXPECT_TRUE(answers(&self->t, "i", USER_IDS));
	EXPECT_TRUE(runs_as_the_user(self->pid, self->tid));
	/* The restarter's helper that switched ids left no SIGCHLD behind. */
	EXPECT_TRUE(answers(&self->t, "c", "0"));
	/*
	 * Dumpable, as the image was, although the switch made it undumpable:
	 * /proc/PID belongs to the user, not to root.
	 */
	snprintf(path, sizeof(path), "/proc/%d", self->pid);
	ASSERT_EQ(0, stat(path, &st));
	EXPECT_EQ((uid_t)USER, st.st_uid);
}

TEST_F(creds, a_restarter_that_cannot_switch_is_refused)
{
	char err[512], cmd[128];
	int status;

	CKPT_SETUP_SKIPPED();

	start(_metadata, self, user_target);
	ASSERT_EQ(0, checkpoint_kill(self)) TH_LOG("%s", self->msg);

	status = ckpt_run_restart_after(as_other_user, self->image, NULL, err,
					sizeof(err));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(1, WEXITSTATUS(status));
	EXPECT_NE(NULL, strstr(err, "the image's process ran as uid 1000, gid 1000; ckpt restart runs as uid 1001, gid 1001 and cannot switch to it"))
		TH_LOG("%s", err);
	/* Nothing runs under the image's pid; the image is as it was. */
	EXPECT_EQ(-1, kill(self->pid, 0));
	EXPECT_EQ(ESRCH, errno);
	snprintf(cmd, sizeof(cmd), "ckpt inspect %s > /dev/null", self->image);
	EXPECT_EQ(0, system(cmd));
	ASSERT_EQ(0, target_restart(&self->t, self->image));
	EXPECT_TRUE(answers(&self->t, "i", USER_IDS));
	EXPECT_TRUE(runs_as_the_user(self->pid, self->tid));
}

/*
 * CKPT_IOC_RESTART of the 2-thread image in a child, after @setup, with a
 * helper that runs @helper and hands its credentials over first (if
 * @helper): the errno and the engine's message.
 */
static int engine_restart(const char *image, void (*setup)(void),
			  void (*helper)(void), char *msg, size_t size)
{
	const struct ckpt_engine_restart o = {
		.nr_threads = 2, .setup = setup, .helper = helper,
	};

	return ckpt_engine_restart(image, &o, msg, size);
}

static void other_ids(void)
{
	const gid_t g = OTHER;

	if (setgroups(1, &g) || setresgid(OTHER, OTHER, OTHER) ||
	    setresuid(OTHER, OTHER, OTHER))
		_exit(110);
}

TEST_F(creds, the_engine_checks_the_ids_itself)
{
	char msg[256], want[256];
	int dev, n;

	CKPT_SETUP_SKIPPED();

	start(_metadata, self, user_target);
	ASSERT_EQ(0, checkpoint_kill(self)) TH_LOG("%s", self->msg);

	/* A restarter without the right, going around ckpt restart. */
	EXPECT_EQ(EPERM, engine_restart(self->image, as_other_user, NULL, msg,
					sizeof(msg)));
	EXPECT_STREQ("the image's process ran as uid 1000, gid 1000 (3 groups); the restarter runs as uid 1001, gid 1001 (1 group) and cannot switch to it",
		     msg);
	/* Without CAP_CHECKPOINT_RESTORE, the engine reads no image at all. */
	EXPECT_EQ(EPERM, engine_restart(self->image, other_ids, NULL, msg,
					sizeof(msg)));
	EXPECT_STREQ("restart needs CAP_CHECKPOINT_RESTORE in the initial user namespace",
		     msg);
	/* Root, which could, but did not switch. */
	EXPECT_EQ(EPERM, engine_restart(self->image, NULL, NULL, msg,
					sizeof(msg)));
	n = getgroups(0, NULL);
	snprintf(want, sizeof(want),
		 "the image's process ran as uid 1000, gid 1000 (3 groups); the restarter runs as uid 0, gid 0 (%d group%s) and handed over no other credentials",
		 n, n == 1 ? "" : "s");
	EXPECT_STREQ(want, msg);
	/* Root, handing over another user's credentials. */
	EXPECT_EQ(EPERM, engine_restart(self->image, NULL, other_ids, msg,
					sizeof(msg)));
	EXPECT_STREQ("the image's process ran as uid 1000, gid 1000 (3 groups); the credentials handed over are uid 1001, gid 1001 (1 group)",
		     msg);

	/* The hand-over takes no argument, and happens once. */
	dev = open("/dev/ckpt", O_RDWR);
	ASSERT_LE(0, dev);
	EXPECT_EQ(-1, ioctl(dev, CKPT_IOC_RESTART_CREDS, 1));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, ioctl(dev, CKPT_IOC_RESTART_CREDS, 0));
	EXPECT_EQ(-1, ioctl(dev, CKPT_IOC_RESTART_CREDS, 0));
	EXPECT_EQ(EBUSY, errno);
	close(dev);
}

/*
 * The user restarts its own process, with the capability to restore pids:
 * the process gets the user's ids, not that capability.
 */
TEST_F(creds, a_restarter_with_the_same_ids_gives_no_capability)
{
	const __u64 cr = 1ULL << CAP_CHECKPOINT_RESTORE;

	CKPT_SETUP_SKIPPED();

	start(_metadata, self, user_target);
	ASSERT_EQ(0, checkpoint_kill(self)) TH_LOG("%s", self->msg);

	ASSERT_EQ(0, target_restart_after(&self->t, self->image, as_the_user));
	EXPECT_TRUE(answers(&self->t, "sp", "1"));
	EXPECT_TRUE(answers(&self->t, "i", USER_IDS));
	EXPECT_TRUE(runs_as_the_user(self->pid, self->tid));
	/* The restarter itself had it. */
	EXPECT_TRUE(caps_are(self->t.pid, self->t.pid, cr, cr, cr, cr,
			     ALL_CAPS));
}

TEST_F(creds, a_root_process_keeps_its_lowered_capabilities)
{
	const __u64 bnd = ALL_CAPS & ~(1ULL << CAP_SYS_ADMIN);
	char ids[256];
	pid_t t[2];
	int i;

	CKPT_SETUP_SKIPPED();

	start(_metadata, self, lowered_root_target);
	t[0] = self->pid;
	t[1] = self->tid;
	/* Root's ids and this test's groups, undumpable, no_new_privs. */
	ASSERT_EQ(0, target_ask(&self->t, "i", ids, sizeof(ids)));
	ASSERT_EQ(0, strncmp(ids, "uid 0 0 0 0 gid 0 0 0 0 groups ", 31)) TH_LOG("%s", ids);
	ASSERT_NE(NULL, strstr(ids, " dumpable 0 nnp 1")) TH_LOG("%s", ids);
	ASSERT_TRUE(caps_are(self->pid, self->tid, ROOT_CAPS, ROOT_CAPS, 0, 0,
			     bnd));
	ASSERT_EQ(0, checkpoint_kill(self)) TH_LOG("%s", self->msg);

	ASSERT_EQ(0, target_restart(&self->t, self->image));
	EXPECT_TRUE(answers(&self->t, "i", ids));
	for (i = 0; i < 2; i++) {
		EXPECT_TRUE(status_is(self->pid, t[i], "Uid", "0 0 0 0"));
		EXPECT_TRUE(caps_are(self->pid, t[i], ROOT_CAPS, ROOT_CAPS, 0,
				     0, bnd));
	}
}

TEST_F(creds, files_are_reopened_with_the_users_rights)
{
	char err[512];
	int fd, status;

	CKPT_SETUP_SKIPPED();

	fd = open(self->file, O_RDWR | O_CREAT | O_TRUNC, 0600);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fchown(fd, USER, USER));
	close(fd);
	user_file = self->file;
	start(_metadata, self, user_target);
	ASSERT_EQ(0, checkpoint_kill(self)) TH_LOG("%s", self->msg);

	/* The same file, which the user may no longer open. */
	ASSERT_EQ(0, chown(self->file, 0, 0));
	status = ckpt_run_restart(self->image, NULL, err, sizeof(err));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(1, WEXITSTATUS(status));
	EXPECT_NE(NULL, strstr(err, "(fd 3): Permission denied")) TH_LOG("%s", err);
	EXPECT_EQ(-1, kill(self->pid, 0));

	ASSERT_EQ(0, chown(self->file, USER, USER));
	ASSERT_EQ(0, target_restart(&self->t, self->image));
	EXPECT_TRUE(answers(&self->t, "i", USER_IDS));
}

/* Its second thread, by a raw system call, runs as another user. */
static void *switch_thread(void *arg)
{
	if (syscall(SYS_setresuid, USER, USER, USER))
		_exit(9);
	second_tid = gettid();
	for (;;)
		pause();
	return arg;
}

static void thread_target(void)
{
	pthread_t th;

	if (pthread_create(&th, NULL, switch_thread, NULL))
		_exit(9);
	while (!second_tid)
		usleep(1000);
	target_say("ready %d", second_tid);
	creds_loop();
}

/* Under a seccomp filter that allows everything. */
static void seccomp_target(void)
{
	struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	struct sock_fprog prog = { .len = 1, .filter = &allow };

	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0))
		_exit(9);
	target_say("ready 0");
	creds_loop();
}

static void userns_target(void)
{
	if (unshare(CLONE_NEWUSER))
		_exit(9);
	target_say("ready 0");
	creds_loop();
}

TEST_F(creds, other_thread_credentials_user_namespace_seccomp_are_refused)
{
	char want[160];

	CKPT_SETUP_SKIPPED();

	start(_metadata, self, thread_target);
	ASSERT_TRUE(status_is(self->pid, self->tid, "Uid", "1000 1000 1000 1000"));
	EXPECT_EQ(-EOPNOTSUPP, ckpt_checkpoint_to(self->pid, self->image, 0,
						  self->msg, sizeof(self->msg),
						  NULL));
	snprintf(want, sizeof(want),
		 "pid %d thread %d runs with other credentials than its process: not supported yet",
		 self->pid, self->tid);
	EXPECT_STREQ(want, self->msg);
	EXPECT_TRUE(answers(&self->t, "sp", "1"));
	kill(self->pid, SIGKILL);
	target_end(&self->t);

	start(_metadata, self, userns_target);
	EXPECT_EQ(-EOPNOTSUPP, ckpt_checkpoint_to(self->pid, self->image, 0,
						  self->msg, sizeof(self->msg),
						  NULL));
	snprintf(want, sizeof(want),
		 "pid %d is in another user namespace than the checkpointer: not supported yet",
		 self->pid);
	EXPECT_STREQ(want, self->msg);
	EXPECT_TRUE(answers(&self->t, "sp", "1"));
	kill(self->pid, SIGKILL);
	target_end(&self->t);

	/* It would come back without its filter. */
	start(_metadata, self, seccomp_target);
	EXPECT_EQ(-EOPNOTSUPP, ckpt_checkpoint_to(self->pid, self->image, 0,
						  self->msg, sizeof(self->msg),
						  NULL));
	snprintf(want, sizeof(want),
		 "pid %d thread %d runs under seccomp: not supported yet",
		 self->pid, self->pid);
	EXPECT_STREQ(want, self->msg);
	EXPECT_TRUE(answers(&self->t, "sp", "1"));
}

TEST_HARNESS_MAIN
