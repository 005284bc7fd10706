// SPDX-License-Identifier: GPL-2.0
/*
 * A restarted process gets no file its user could not open, and an image
 * gets no file content its process could not read (issue 12, finding 5).
 * Root keeps a secret in a 0600 file of its own; user 1000 is the attacker.
 *
 * - The user's process maps a file of its own read-only and shared; its
 *   image, edited to name the secret instead (inode number and checksums
 *   made to match), is restarted by root as that user, through the
 *   engine with the user's credentials handed over and through ckpt
 *   restart: both refused before anything runs, naming the file and the
 *   access. Once the user may read the file, the same image restarts and
 *   reads it: only the permission was in the way.
 * - The user's process maps a memfd read-only and shared; its restarter
 *   hands the engine another file for the memfd: the user (with
 *   CAP_CHECKPOINT_RESTORE) a write-only descriptor of the secret, root
 *   (restarting as the user) a read-write one. Both refused, named; a
 *   memfd the user may read passes the check.
 * - A process that opened the secret write-only as root, dropped to the
 *   user and unlinked it cannot be checkpointed (its content would land
 *   in the image), named; nor one holding a memfd only write-only, nor
 *   the write end of a FIFO holding the secret whose reader left. All
 *   keep running, and the image holds no byte of the secret.
 */
#define _GNU_SOURCE
#include <grp.h>
#include <sys/mman.h>
#include <sys/prctl.h>

#include <linux/capability.h>

#include "kselftest_harness.h"
#include "ckpt_test.h"

#define USER	1000
#define SIZE	4096
#define SECRET	"the secret of root"

static char secret_path[64], mine_path[64], fifo_path[64];

static void drop_to_user(void)
{
	const gid_t g = USER;

	if (setgroups(1, &g) || setresgid(USER, USER, USER) ||
	    setresuid(USER, USER, USER) || prctl(PR_SET_DUMPABLE, 1, 0, 0, 0))
		_exit(9);
}

/* The user, keeping CAP_CHECKPOINT_RESTORE (restarts need it). */
static void user_with_restore(void)
{
	const __u64 cr = 1ULL << CAP_CHECKPOINT_RESTORE;
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2] = {
		{ 0, 0, 0 }, { cr >> 32, cr >> 32, cr >> 32 },
	};
	const gid_t g = USER;

	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) || setgroups(1, &g) ||
	    setresgid(USER, USER, USER) || setresuid(USER, USER, USER) ||
	    syscall(SYS_capset, &h, d) ||
	    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_CHECKPOINT_RESTORE,
		  0, 0))
		_exit(120);
}

/* Answers "r" with the first bytes of @map, until "q" or end of input. */
static void serve(const char *map)
{
	char c;

	for (;;) {
		if (read(0, &c, 1) != 1)
			_exit(3);
		if (c == 'q')
			_exit(0);
		if (c == 'r')
			target_say("%.18s", map);
	}
}

/* The user's process: mine_path mapped read-only, shared; no descriptor. */
static void mapping_target(void)
{
	const char *map;
	int fd;

	drop_to_user();
	fd = open(mine_path, O_RDONLY);
	if (fd < 0)
		_exit(9);
	map = mmap(NULL, SIZE, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED || close(fd))
		_exit(9);
	serve(map);
}

/*
 * The user's process: a memfd mapped read-only and shared through a
 * read-only descriptor (so that it can never be made writable); no
 * descriptor left.
 */
static void memfd_target(void)
{
	char path[64];
	const char *map;
	int fd, ro;

	drop_to_user();
	fd = memfd_create("mine", 0);
	if (fd < 0 || pwrite(fd, "memfd of the user", 17, 0) != 17 ||
	    ftruncate(fd, SIZE))
		_exit(9);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ro = open(path, O_RDONLY);
	if (ro < 0)
		_exit(9);
	map = mmap(NULL, SIZE, PROT_READ, MAP_SHARED, ro, 0);
	if (map == MAP_FAILED || close(ro) || close(fd))
		_exit(9);
	serve(map);
}

/* fd 3: the secret, opened write-only as root, then unlinked; the user. */
static void deleted_target(void)
{
	if (open(secret_path, O_WRONLY) != 3 || unlink(secret_path))
		_exit(9);
	drop_to_user();
	serve("running");
}

/* fd 3: a memfd holding the secret, open write-only only. */
static void memfd_wronly_target(void)
{
	char path[64];
	int fd = memfd_create("wronly", 0);

	if (fd != 3 || pwrite(fd, SECRET, strlen(SECRET), 0) < 0)
		_exit(9);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (open(path, O_WRONLY) != 4 || dup2(4, 3) != 3 || close(4))
		_exit(9);
	drop_to_user();
	serve("running");
}

/* fd 4: the write end of a FIFO holding the secret, whose reader left. */
static void fifo_target(void)
{
	if (open(fifo_path, O_RDONLY | O_NONBLOCK) != 3 ||
	    open(fifo_path, O_WRONLY) != 4 ||
	    write(4, SECRET, strlen(SECRET)) < 0 || close(3))
		_exit(9);
	serve("running");
}

/* A file of @size bytes starting with @text, owned by @uid, mode @mode. */
static int make_file(const char *path, const char *text, uid_t uid,
		     mode_t mode)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600), ret = 0;

	if (fd < 0)
		return -errno;
	if (pwrite(fd, text, strlen(text), 0) != (ssize_t)strlen(text) ||
	    ftruncate(fd, SIZE) || fchown(fd, uid, uid) || fchmod(fd, mode))
		ret = -errno;
	close(fd);
	return ret;
}

/*
 * In @image's VMAS section, the mapping of @from made a mapping of @to
 * (path and inode number: both are on one file system), with the
 * section's checksums made anew, as a user editing its image would.
 */
static int retarget_mapping(const char *image, const char *from,
			    const char *to)
{
	struct ckpt_img_vma *v;
	struct stat st;
	int found = 0;
	size_t i, len;
	off_t pos;

	v = ckpt_section_payload(image, CKPT_SECT_VMAS, &pos, &len);
	if (!v || stat(to, &st)) {
		free(v);
		return -1;
	}
	for (i = 0; i < len / sizeof(*v); i++) {
		if (strcmp(v[i].path, from))
			continue;
		memset(v[i].path, 0, sizeof(v[i].path));
		strcpy(v[i].path, to);
		v[i].ino = st.st_ino;
		found++;
	}
	if (found != 1 || ckpt_section_rewrite(image, pos, v, len))
		found = 0;
	free(v);
	return found == 1 ? 0 : -1;
}

/* mkimage -S (tests/host/mkimage.c): @image without its MAC. */
static int strip_mac(const char *image)
{
	const char *top = getenv("CKPT_TOP");
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "%s/build/tests/host/mkimage -S %s",
		 top ? top : ".", image);
	return system(cmd) ? -1 : 0;
}

/*
 * CKPT_IOC_RESTART of the 1-thread @image in a child: @obj (if any) made
 * there as root gives obj_fds[0]; then @setup (if any) runs, and a helper
 * running @helper (if any) hands its credentials over.
 */
static int engine_restart(const char *image, unsigned int flags,
			  int (*obj)(void), void (*setup)(void),
			  void (*helper)(void), char *msg, size_t size)
{
	const struct ckpt_engine_restart o = {
		.nr_threads = 1, .flags = flags, .obj = obj, .setup = setup,
		.helper = helper,
	};

	return ckpt_engine_restart(image, &o, msg, size);
}

static int secret_wronly(void)
{
	return open(secret_path, O_WRONLY);
}

static int secret_rdwr(void)
{
	return open(secret_path, O_RDWR);
}

static int fresh_memfd(void)
{
	int fd = memfd_create("fresh", 0);

	return fd < 0 || ftruncate(fd, SIZE) ? -1 : fd;
}

static bool answers(struct target *t, const char *want)
{
	char buf[256];

	if (target_ask(t, "r", buf, sizeof(buf)))
		return false;
	if (strcmp(buf, want))
		fprintf(stderr, "# answered \"%s\", wanted \"%s\"\n", buf, want);
	return !strcmp(buf, want);
}

/* Whether @path holds @text anywhere. */
static bool file_holds(const char *path, const char *text)
{
	static char buf[1 << 20];
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 && memmem(buf, n, text, strlen(text));
}

FIXTURE(access) {
	char image[64];
	char msg[512];
	struct target t;
	pid_t pid;		/* the process in the image */
};

FIXTURE_SETUP(access)
{
	const char *path = ckpt_module_path();

	if (!path)
		SKIP(return, "CKPT_MODULE does not name a readable ckpt.ko");
	if (geteuid() != 0)
		SKIP(return, "switching users needs root");
	if (!ckpt_module_loaded())
		ASSERT_EQ(0, ckpt_load_module(path));
	snprintf(self->image, sizeof(self->image), "/tmp/cr_file_access.%d.img",
		 getpid());
	snprintf(secret_path, sizeof(secret_path),
		 "/tmp/cr_file_access.%d.secret", getpid());
	snprintf(mine_path, sizeof(mine_path), "/tmp/cr_file_access.%d.mine",
		 getpid());
	snprintf(fifo_path, sizeof(fifo_path), "/tmp/cr_file_access.%d.fifo",
		 getpid());
	ASSERT_EQ(0, make_file(secret_path, SECRET, 0, 0600));
	ASSERT_EQ(0, make_file(mine_path, "mine, of the user", USER, 0600));
}

FIXTURE_TEARDOWN(access)
{
	if (self->pid > 0)
		kill(self->pid, SIGKILL);
	if (self->t.pid > 0) {
		kill(self->t.pid, SIGKILL);
		target_end(&self->t);
	}
	unlink(self->image);
	unlink(secret_path);
	unlink(mine_path);
	unlink(fifo_path);
}

/* Starts @fn and checkpoints it, killing it, once it answered @want. */
static int image_of(struct __test_metadata *_metadata,
		    FIXTURE_DATA(access) *self, void (*fn)(void),
		    const char *want)
{
	ASSERT_EQ(0, target_start(&self->t, fn));
	self->pid = self->t.pid;
	ASSERT_TRUE(answers(&self->t, want));
	ASSERT_EQ(0, ckpt_checkpoint_to(self->pid, self->image,
					CKPT_CHECKPOINT_KILL, self->msg,
					sizeof(self->msg), NULL))
		TH_LOG("%s", self->msg);
	target_end(&self->t);
	self->t.pid = 0;
	return 0;
}

/*
 * The user's edited image. Restarted by root as the user, the engine's
 * MAC finds the edit; without the MAC, the user restarts it as itself
 * (with CAP_CHECKPOINT_RESTORE, asking for an unauthenticated restart)
 * and the file is opened with its rights.
 */
TEST_F(access, a_mapping_edited_to_name_root_s_file_is_refused)
{
	char *argv[] = { "ckpt", "restart", "--unauthenticated", self->image,
			 NULL };
	char want[256], err[512];
	int status;

	CKPT_SETUP_SKIPPED();

	image_of(_metadata, self, mapping_target, "mine, of the user");
	ASSERT_EQ(0, retarget_mapping(self->image, mine_path, secret_path));

	/* Through the engine: root hands over the user's credentials. */
	EXPECT_EQ(EKEYREJECTED, engine_restart(self->image, 0, NULL, NULL,
					       drop_to_user, self->msg,
					       sizeof(self->msg)));
	EXPECT_NE(NULL, strstr(self->msg, "MAC does not match")) TH_LOG("%s", self->msg);
	/* Through ckpt restart, run by root. */
	status = ckpt_run_restart(self->image, NULL, err, sizeof(err));
	EXPECT_EQ(1, WEXITSTATUS(status));
	EXPECT_NE(NULL, strstr(err, "MAC does not match")) TH_LOG("%s", err);

	ASSERT_EQ(0, strip_mac(self->image));
	ASSERT_EQ(0, chown(self->image, USER, USER));	/* the user's own */
	snprintf(want, sizeof(want),
		 "the restarted process (uid %d) may not open %s for reading (mapped at ",
		 USER, secret_path);
	EXPECT_EQ(EACCES, engine_restart(self->image,
					 CKPT_RESTART_UNAUTHENTICATED, NULL,
					 user_with_restore, NULL, self->msg,
					 sizeof(self->msg)));
	EXPECT_NE(NULL, strstr(self->msg, want)) TH_LOG("%s", self->msg);
	status = ckpt_run_restart_after(user_with_restore, self->image,
					"--unauthenticated", err, sizeof(err));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(1, WEXITSTATUS(status));
	EXPECT_NE(NULL, strstr(err, want)) TH_LOG("%s", err);
	EXPECT_EQ(-1, kill(self->pid, 0));
	EXPECT_EQ(ESRCH, errno);

	/* A file the user may read: the same image comes back, mapping it. */
	ASSERT_EQ(0, chmod(secret_path, 0644));
	ASSERT_EQ(0, target_spawn_after(&self->t, NULL, argv,
					user_with_restore));
	EXPECT_TRUE(answers(&self->t, SECRET));
	ASSERT_EQ(0, target_send(&self->t, "q"));
	EXPECT_EQ(0, target_end(&self->t));
	self->t.pid = 0;
}

/* Another file handed to the engine for the memfd of the image. */
TEST_F(access, a_file_handed_over_for_a_memfd_is_checked)
{
	char want[256];

	CKPT_SETUP_SKIPPED();

	image_of(_metadata, self, memfd_target, "memfd of the user");

	/* The user itself, with a write-only descriptor of the secret. */
	EXPECT_EQ(EBADF, engine_restart(self->image, 0, secret_wronly,
					user_with_restore, NULL, self->msg,
					sizeof(self->msg)));
	snprintf(want, sizeof(want), " (%s), given for /memfd:mine (deleted) mapped at ",
		 secret_path);
	EXPECT_NE(NULL, strstr(self->msg, want)) TH_LOG("%s", self->msg);
	EXPECT_NE(NULL, strstr(self->msg, ", is not open for reading"))
		TH_LOG("%s", self->msg);

	/* Root, restarting as the user, with a read-write one. */
	EXPECT_EQ(EACCES, engine_restart(self->image, 0, secret_rdwr, NULL,
					 drop_to_user, self->msg,
					 sizeof(self->msg)));
	snprintf(want, sizeof(want),
		 "the restarted process (uid %d) may not open %s for reading (given for /memfd:mine (deleted) mapped at ",
		 USER, secret_path);
	EXPECT_NE(NULL, strstr(self->msg, want)) TH_LOG("%s", self->msg);

	/* A memfd the user may read passes; only the pid is wrong then. */
	EXPECT_EQ(EINVAL, engine_restart(self->image, 0, fresh_memfd, NULL,
					 drop_to_user, self->msg,
					 sizeof(self->msg)));
	EXPECT_NE(NULL, strstr(self->msg, "the restarting process has pid"))
		TH_LOG("%s", self->msg);
	EXPECT_EQ(-1, kill(self->pid, 0));
}

/* Refused at checkpoint, named; the process carries on; no secret saved. */
static void refused_at_checkpoint(struct __test_metadata *_metadata,
				  FIXTURE_DATA(access) *self, void (*fn)(void),
				  const char *what)
{
	char want[256];

	ASSERT_EQ(0, target_start(&self->t, fn));
	self->pid = self->t.pid;
	ASSERT_TRUE(answers(&self->t, "running"));
	EXPECT_EQ(-EACCES, ckpt_checkpoint_to(self->pid, self->image, 0,
					      self->msg, sizeof(self->msg),
					      NULL));
	snprintf(want, sizeof(want),
		 "pid %d fd 3: a %s open write-only cannot be saved (",
		 self->pid, what);
	EXPECT_NE(NULL, strstr(self->msg, want)) TH_LOG("%s", self->msg);
	EXPECT_FALSE(file_holds(self->image, SECRET));
	EXPECT_TRUE(answers(&self->t, "running"));
	ASSERT_EQ(0, target_send(&self->t, "q"));
	EXPECT_EQ(0, target_end(&self->t));
	self->t.pid = 0;
	self->pid = 0;
}

TEST_F(access, a_deleted_file_held_write_only_is_not_saved)
{
	CKPT_SETUP_SKIPPED();
	refused_at_checkpoint(_metadata, self, deleted_target, "deleted file");
}

TEST_F(access, a_memfd_held_write_only_is_not_saved)
{
	CKPT_SETUP_SKIPPED();
	refused_at_checkpoint(_metadata, self, memfd_wronly_target, "memfd");
}

TEST_F(access, a_fifo_s_bytes_held_write_only_are_not_saved)
{
	char want[256];

	CKPT_SETUP_SKIPPED();

	ASSERT_EQ(0, mkfifo(fifo_path, 0600));
	ASSERT_EQ(0, target_start(&self->t, fifo_target));
	self->pid = self->t.pid;
	ASSERT_TRUE(answers(&self->t, "running"));
	EXPECT_EQ(-EACCES, ckpt_checkpoint_to(self->pid, self->image, 0,
					      self->msg, sizeof(self->msg),
					      NULL));
	snprintf(want, sizeof(want),
		 "pid %d fd 4: FIFO %s holds %zu bytes and is open write-only: they cannot be saved",
		 self->pid, fifo_path, strlen(SECRET));
	EXPECT_STREQ(want, self->msg);
	EXPECT_FALSE(file_holds(self->image, SECRET));
	EXPECT_TRUE(answers(&self->t, "running"));
	ASSERT_EQ(0, target_send(&self->t, "q"));
	EXPECT_EQ(0, target_end(&self->t));
	self->t.pid = 0;
	self->pid = 0;
}

TEST_HARNESS_MAIN
