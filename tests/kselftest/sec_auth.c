// SPDX-License-Identifier: GPL-2.0
/*
 * Image authentication (security.md): a user's image edited to claim
 * root is refused when root restarts it; so is an image made under another
 * key, and one without MAC unless the restart asks for an unauthenticated
 * one, which then runs only as the restarter itself. The key is set by
 * root only, shared keys make images restart again, and `ckpt inspect`
 * names the key.
 */
#define _GNU_SOURCE
#include <stdint.h>

#include <linux/ckpt_image.h>

#include <grp.h>
#include <sys/prctl.h>

#include "kselftest_harness.h"
#include "ckpt_test.h"

#define USER	1000
#define NOBODY	65534

/* 'i' prints the real and effective uid, 'q' quits. */
static void user_target(void)
{
	char c;

	if (setgroups(0, NULL) || setresgid(USER, USER, USER) ||
	    setresuid(USER, USER, USER) || prctl(PR_SET_DUMPABLE, 1, 0, 0, 0))
		_exit(9);
	for (;;) {
		if (read(0, &c, 1) != 1)
			_exit(3);
		if (c == 'i') {
			printf("uid %u euid %u\n", getuid(), geteuid());
			fflush(stdout);
		}
		if (c == 'q')
			_exit(0);
	}
}

FIXTURE(auth) {
	char image[64];
	struct target t;
	pid_t pid;
	char msg[256];
};

static int set_key(const void *key, __u32 len)
{
	struct ckpt_key k = { .key = (unsigned long)key, .len = len };
	int dev = open("/dev/ckpt", O_RDWR), ret;

	if (dev < 0)
		return -errno;
	ret = ioctl(dev, CKPT_IOC_SET_KEY, &k) ? -errno : 0;
	close(dev);
	return ret;
}

static const unsigned char key1[32] = "a cluster's key, thirty-two b.";
static const unsigned char key2[32] = "another cluster's key, 32 byte";

FIXTURE_SETUP(auth)
{
	const char *path = ckpt_module_path();
	char ids[64];

	if (!path)
		SKIP(return, "CKPT_MODULE does not name a readable ckpt.ko");
	if (!ckpt_module_loaded())
		ASSERT_EQ(0, ckpt_load_module(path));
	ASSERT_EQ(0, set_key(key1, sizeof(key1)));
	snprintf(self->image, sizeof(self->image), "/tmp/sec_auth.%d.img",
		 getpid());
	ASSERT_EQ(0, target_start(&self->t, user_target));
	self->pid = self->t.pid;
	/*
	 * "ready" comes before user_target() drops to the user: checkpointed
	 * before it did, the image would be root's (CI saw that once).
	 */
	ASSERT_EQ(0, target_ask(&self->t, "i", ids, sizeof(ids)));
	ASSERT_STREQ("uid 1000 euid 1000", ids);
	ASSERT_EQ(0, ckpt_checkpoint_to(self->pid, self->image,
					CKPT_CHECKPOINT_KILL, self->msg,
					sizeof(self->msg), NULL)) TH_LOG("%s", self->msg);
	target_end(&self->t);
	self->t.pid = 0;
}

FIXTURE_TEARDOWN(auth)
{
	if (self->t.pid > 0) {
		kill(self->t.pid, SIGKILL);
		target_end(&self->t);
	}
	unlink(self->image);
}

/* "uid U euid E" from the restarted process, or "" if it does not run. */
static void restarted_ids(struct target *t, char *buf, size_t size)
{
	buf[0] = '\0';
	if (target_ask(t, "i", buf, size))
		buf[0] = '\0';
}

/*
 * mkimage's forger's edits (tests/host/mkimage.c): -R makes the image's
 * CREDS root's with every capability, -S takes its MAC out; both leave
 * the checksums right.
 */
static int mkimage_edit(const char *opt, const char *image)
{
	const char *top = getenv("CKPT_TOP");
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "%s/build/tests/host/mkimage %s %s",
		 top ? top : ".", opt, image);
	return system(cmd) ? -1 : 0;
}

static int claim_root(const char *image)
{
	return mkimage_edit("-R", image);
}

static int ckpt_image_strip_mac(const char *image)
{
	return mkimage_edit("-S", image);
}

TEST_F(auth, an_image_edited_to_claim_root_is_refused)
{
	char err[512];
	int status;

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, claim_root(self->image));
	/* The checksums are right: only the MAC tells. */
	status = ckpt_run_restart(self->image, NULL, err, sizeof(err));
	EXPECT_EQ(1, WEXITSTATUS(status));
	EXPECT_NE(NULL, strstr(err, "the image's MAC does not match: it was changed after the checkpoint"))
		TH_LOG("%s", err);
	/* Asking for an unauthenticated restart does not pass a wrong MAC. */
	status = ckpt_run_restart(self->image, "--unauthenticated", err,
				  sizeof(err));
	EXPECT_EQ(1, WEXITSTATUS(status));
	EXPECT_NE(NULL, strstr(err, "MAC does not match")) TH_LOG("%s", err);
	EXPECT_EQ(-1, kill(self->pid, 0));
}

TEST_F(auth, an_image_without_mac_restarts_only_as_the_restarter)
{
	char *argv[] = { "ckpt", "restart", "--unauthenticated", self->image,
			 NULL };
	char err[512], ids[64];
	int status;

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, ckpt_image_strip_mac(self->image));
	/* Not without being asked to. */
	status = ckpt_run_restart(self->image, NULL, err, sizeof(err));
	EXPECT_EQ(1, WEXITSTATUS(status));
	EXPECT_NE(NULL, strstr(err, "the image carries no MAC")) TH_LOG("%s", err);
	/* Asked to, root may not make it the user's process it claims. */
	status = ckpt_run_restart(self->image, "--unauthenticated", err,
				  sizeof(err));
	EXPECT_EQ(1, WEXITSTATUS(status));
	EXPECT_NE(NULL, strstr(err, "unauthenticated, it restarts only as the restarter itself"))
		TH_LOG("%s", err);
	EXPECT_EQ(-1, kill(self->pid, 0));

	/*
	 * Edited to claim root, restarted by root who asks for it: it runs,
	 * as the restarter itself, which is what the flag says.
	 */
	ASSERT_EQ(0, claim_root(self->image));
	ASSERT_EQ(0, target_spawn(&self->t, NULL, argv));
	restarted_ids(&self->t, ids, sizeof(ids));
	EXPECT_STREQ("uid 0 euid 0", ids);
	EXPECT_EQ(0, target_send(&self->t, "q"));
	target_end(&self->t);
	self->t.pid = 0;
}

TEST_F(auth, an_image_made_under_another_key_is_refused)
{
	char err[512], ids[64];
	int status;

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, set_key(key2, sizeof(key2)));
	status = ckpt_run_restart(self->image, NULL, err, sizeof(err));
	EXPECT_EQ(1, WEXITSTATUS(status));
	EXPECT_NE(NULL, strstr(err, "the image's MAC was made under another key"))
		TH_LOG("%s", err);
	EXPECT_EQ(-1, kill(self->pid, 0));

	/* The key it was made under (a cluster's, on another node): it runs. */
	ASSERT_EQ(0, set_key(key1, sizeof(key1)));
	ASSERT_EQ(0, target_restart(&self->t, self->image));
	restarted_ids(&self->t, ids, sizeof(ids));
	EXPECT_STREQ("uid 1000 euid 1000", ids);
	EXPECT_EQ(0, target_send(&self->t, "q"));
	target_end(&self->t);
	self->t.pid = 0;
}

/* In a child as nobody: setting the key is refused. */
static int key_as_nobody(void)
{
	int status;
	pid_t pid = fork();

	if (!pid) {
		if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
		    setresuid(NOBODY, NOBODY, NOBODY))
			_exit(10);
		_exit(set_key(key2, sizeof(key2)) == -EPERM ? 0 : 11);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST_F(auth, only_root_sets_the_key_and_inspect_names_it)
{
	char cmd[256], path[64];
	FILE *f;
	char line[256] = "";
	int fd;

	CKPT_SETUP_SKIPPED();
	EXPECT_EQ(0, key_as_nobody());
	EXPECT_EQ(-EINVAL, set_key(key1, CKPT_KEY_MIN_LEN - 1));
	EXPECT_EQ(-EINVAL, set_key(key1, CKPT_KEY_MAX_LEN + 1));

	/* ckpt key: a key file others can read is no secret. */
	snprintf(path, sizeof(path), "/tmp/sec_auth.%d.key", getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ASSERT_LE(0, fd);
	ASSERT_EQ((ssize_t)sizeof(key1), write(fd, key1, sizeof(key1)));
	close(fd);
	ASSERT_EQ(0, chmod(path, 0644));
	snprintf(cmd, sizeof(cmd), "ckpt key %s 2>/dev/null", path);
	EXPECT_NE(0, system(cmd));
	ASSERT_EQ(0, chmod(path, 0600));
	EXPECT_EQ(0, system(cmd));
	unlink(path);

	snprintf(cmd, sizeof(cmd), "ckpt inspect %s", self->image);
	f = popen(cmd, "r");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "authentication:", 15))
			break;
	pclose(f);
	EXPECT_EQ(0, strncmp(line, "authentication: HMAC-SHA256, key id ", 36))
		TH_LOG("%s", line);
}

TEST_HARNESS_MAIN
