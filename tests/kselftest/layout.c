// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel-private structures the engine reads are checked at load
 * against the running kernel's BTF (kmod/ckpt/layout.c). On the kernels
 * the engine supports every one matches: the "layouts" module parameter
 * lists each feature as ok. To show that a mismatch turns one feature off,
 * by name, and nothing else, the module is loaded with the test-only
 * parameter layout_test_skew naming a structure, whose expected layout is
 * then one byte off: a process using that feature is refused with a
 * message naming the feature and the structure, and goes on running; a
 * process not using it is checkpointed as before.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/ckpt.h>

#include "kselftest_harness.h"
#include "ckpt_test.h"

#define LAYOUTS	"/sys/module/ckpt/parameters/layouts"

/* Loads @path with module parameters @params. 0 or -errno. */
static int load_with(const char *path, const char *params)
{
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = syscall(SYS_finit_module, fd, params, 0) ? -errno : 0;
	close(fd);
	return ret;
}

/*
 * Gives the engine a fixed image key, so that an image made before a
 * reload restarts authenticated after it. 0 or -errno.
 */
static int set_key(void)
{
	static const char key[32] = "layout test key, not a secret!!";
	struct ckpt_key k = { .key = (unsigned long)key, .len = sizeof(key) };
	int dev, ret = 0;

	dev = open("/dev/ckpt", O_RDWR | O_CLOEXEC);
	if (dev < 0)
		return -errno;
	if (ioctl(dev, CKPT_IOC_SET_KEY, &k))
		ret = -errno;
	close(dev);
	return ret;
}

/* The "layouts" parameter, newline stripped; "" when it cannot be read. */
static void read_layouts(char *buf, size_t len)
{
	FILE *f = fopen(LAYOUTS, "re");

	buf[0] = '\0';
	if (!f)
		return;
	if (!fgets(buf, len, f))
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
}

/* Whether feature @name is listed in @layouts with state @state. */
static bool has(const char *layouts, const char *name, const char *state)
{
	char want[64];
	size_t n;
	const char *p;

	n = snprintf(want, sizeof(want), "%s:%s", name, state);
	for (p = layouts; (p = strstr(p, want)); p += n)
		if ((p == layouts || p[-1] == ' ') && (!p[n] || p[n] == ' '))
			return true;
	return false;
}

/* Whether the kernel log has a line containing @s (reads what is there). */
static bool in_kmsg(const char *s)
{
	char rec[1024];
	bool found = false;
	ssize_t n;
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	int i;

	if (fd < 0)
		return false;
	/* Bounded: the ring buffer holds far fewer records than this. */
	for (i = 0; i < 100000 && !found; i++) {
		n = read(fd, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE)
			continue;	/* overwritten while read */
		if (n <= 0)
			break;
		rec[n] = '\0';
		found = strstr(rec, s) != NULL;
	}
	close(fd);
	return found;
}

/*
 * A target that, on command, takes up one feature: "t" a POSIX timer
 * (armed far ahead), "s" a queued real-time signal (blocked), "p" a pipe
 * of its own holding a byte, "e" an eventfd, "i" an inotify instance
 * watching /tmp. "?" answers "alive", "q" ends.
 */
static void feature_target(void)
{
	int fds[2];
	char c;

	while (read(0, &c, 1) == 1) {
		switch (c) {
		case 't': {
			struct itimerspec its = { .it_value.tv_sec = 3600 };
			struct sigevent sev = {
				.sigev_notify = SIGEV_SIGNAL,
				.sigev_signo = SIGRTMIN,
			};
			timer_t t;

			if (timer_create(CLOCK_MONOTONIC, &sev, &t) ||
			    timer_settime(t, 0, &its, NULL))
				target_say("error %d", errno);
			else
				target_say("ok");
			break;
		}
		case 's': {
			union sigval v = { .sival_int = 42 };
			sigset_t set;

			sigemptyset(&set);
			sigaddset(&set, SIGRTMIN + 1);
			if (sigprocmask(SIG_BLOCK, &set, NULL) ||
			    sigqueue(getpid(), SIGRTMIN + 1, v))
				target_say("error %d", errno);
			else
				target_say("ok");
			break;
		}
		case 'p':
			if (pipe(fds) || write(fds[1], "x", 1) != 1)
				target_say("error %d", errno);
			else
				target_say("ok");
			break;
		case 'e':
			if (eventfd(3, EFD_SEMAPHORE) < 0)
				target_say("error %d", errno);
			else
				target_say("ok");
			break;
		case 'i': {
			int ifd = inotify_init1(0);

			if (ifd < 0 || inotify_add_watch(ifd, "/tmp", IN_CREATE) < 0)
				target_say("error %d", errno);
			else
				target_say("ok");
			break;
		}
		case '?':
			target_say("alive");
			break;
		case 'q':
			return;
		}
	}
}

struct layout_fixture {
	const char *path;
	char image[64];
};

static void setup(struct __test_metadata *_metadata,
		  struct layout_fixture *self)
{
	self->path = ckpt_module_path();
	if (!self->path)
		SKIP(return, "CKPT_MODULE does not name a readable ckpt.ko");
	if (geteuid() != 0)
		SKIP(return, "loading modules needs root");
	/* The distro kernels have BTF; a kernel built without (the debug
	 * kernel) leaves every feature unchecked, as layout.c says. */
	if (access("/sys/kernel/btf/vmlinux", R_OK))
		SKIP(return, "this kernel has no BTF (/sys/kernel/btf/vmlinux): nothing to check layouts against");
	if (ckpt_module_loaded())
		ASSERT_EQ(0, ckpt_unload_module());
	snprintf(self->image, sizeof(self->image), "/tmp/layout.%d.img",
		 getpid());
}

static void teardown(struct layout_fixture *self)
{
	unlink(self->image);
	if (ckpt_module_loaded())
		ckpt_unload_module();
}

FIXTURE(layout) {
	struct layout_fixture f;
};

FIXTURE_SETUP(layout)
{
	setup(_metadata, &self->f);
}

FIXTURE_TEARDOWN(layout)
{
	teardown(&self->f);
}

TEST_F(layout, every_feature_matches_this_kernel)
{
	char buf[256], *tok, *save;
	int n = 0;

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, load_with(self->f.path, ""));
	read_layouts(buf, sizeof(buf));
	TH_LOG("layouts: %s", buf);
	EXPECT_TRUE(has(buf, "timers", "ok"));
	EXPECT_TRUE(has(buf, "sigqueue", "ok"));
	EXPECT_TRUE(has(buf, "pipes", "ok"));
	EXPECT_TRUE(has(buf, "vdso", "ok"));
	for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		EXPECT_NE(NULL, strstr(tok, ":ok")) TH_LOG("%s", tok);
		n++;
	}
	EXPECT_LE(4, n);
	EXPECT_TRUE(in_kmsg("kernel-private layouts match this kernel's BTF"));
}

/*
 * layout_test_skew=@skew turns @feature off: a target that took up the
 * feature with @cmd is refused with @why (and the structure's name in the
 * message); one that did not is checkpointed (unless @feature is the vdso,
 * which every process has).
 */
FIXTURE(skew) {
	struct layout_fixture f;
};

FIXTURE_SETUP(skew)
{
	setup(_metadata, &self->f);
}

FIXTURE_TEARDOWN(skew)
{
	teardown(&self->f);
}

FIXTURE_VARIANT(skew) {
	const char *skew;
	const char *feature;
	const char *cmd;
	const char *why;
	const char *restart_why;	/* NULL: a restart reads none of it */
};

FIXTURE_VARIANT_ADD(skew, k_itimer) {
	.skew = "k_itimer", .feature = "timers", .cmd = "t",
	.why = "has POSIX timers, which this engine cannot read on this kernel",
	.restart_why = "the image has POSIX timers, which this engine cannot restore on this kernel",
};

FIXTURE_VARIANT_ADD(skew, sigqueue) {
	.skew = "sigqueue", .feature = "sigqueue", .cmd = "s",
	.why = "queued signals, which this engine cannot read on this kernel",
};

FIXTURE_VARIANT_ADD(skew, pipe_inode_info) {
	.skew = "pipe_inode_info", .feature = "pipes", .cmd = "p",
	.why = "is a pipe, which this engine cannot read on this kernel",
};

FIXTURE_VARIANT_ADD(skew, eventfd_ctx) {
	.skew = "eventfd_ctx", .feature = "eventfd", .cmd = "e",
	.why = "is an eventfd, whose mode this engine cannot read on this kernel",
};

FIXTURE_VARIANT_ADD(skew, fsnotify_mark) {
	.skew = "fsnotify_mark", .feature = "inotify", .cmd = "i",
	.why = "is an inotify instance, whose watches this engine cannot read on this kernel",
};

FIXTURE_VARIANT_ADD(skew, vdso_image) {
	.skew = "vdso_image", .feature = "vdso", .cmd = "?",
	.why = "this engine cannot find the vdso on this kernel",
	.restart_why = "this engine cannot find the vdso on this kernel",
};

TEST_F(skew, turns_one_feature_off_by_name)
{
	char params[64], buf[256], msg[512], notice[128];
	struct target t = {};
	bool vdso = !strcmp(variant->feature, "vdso");

	CKPT_SETUP_SKIPPED();
	snprintf(params, sizeof(params), "layout_test_skew=%s", variant->skew);
	ASSERT_EQ(0, load_with(self->f.path, params));
	read_layouts(buf, sizeof(buf));
	TH_LOG("layouts: %s", buf);
	if (!strstr(buf, variant->feature))
		SKIP(return, "this kernel line has no %s check (%s)",
		     variant->feature, buf);
	ASSERT_TRUE(has(buf, variant->feature, "mismatch"));
	/* Only what reads the structure is off. */
	if (strcmp(variant->feature, "vdso"))
		EXPECT_TRUE(has(buf, "vdso", "ok"));
	if (strcmp(variant->feature, "pipes"))
		EXPECT_TRUE(has(buf, "pipes", "ok"));
	snprintf(notice, sizeof(notice),
		 "struct %s differs from this module's build", variant->skew);
	EXPECT_TRUE(in_kmsg(notice)) TH_LOG("no \"%s\" in the kernel log", notice);

	/* Without the feature: checkpointed as before. */
	ASSERT_EQ(0, target_start(&t, feature_target));
	if (!vdso)
		EXPECT_EQ(0, ckpt_checkpoint_to(t.pid, self->f.image, 0, msg,
						sizeof(msg), NULL))
			TH_LOG("%s", msg);

	/* With it: refused, named, and the process goes on. */
	ASSERT_EQ(0, target_ask(&t, variant->cmd, buf, sizeof(buf)));
	ASSERT_TRUE(!strcmp(buf, "ok") || !strcmp(buf, "alive")) TH_LOG("%s", buf);
	EXPECT_EQ(-EOPNOTSUPP, ckpt_checkpoint_to(t.pid, self->f.image, 0, msg,
						  sizeof(msg), NULL));
	TH_LOG("%s", msg);
	EXPECT_NE(NULL, strstr(msg, variant->why));
	snprintf(notice, sizeof(notice), "struct %s differs from this engine's build",
		 variant->skew);
	EXPECT_NE(NULL, strstr(msg, notice));
	ASSERT_EQ(0, target_ask(&t, "?", buf, sizeof(buf)));
	EXPECT_STREQ("alive", buf);
	ASSERT_EQ(0, target_send(&t, "q"));
	EXPECT_EQ(0, target_end(&t));
}

/*
 * An image of a process using the feature, made with every layout
 * matching, is refused at restart by name once the layout is off.
 */
TEST_F(skew, restart_refused_by_name)
{
	char params[64], buf[256], msg[512], err[1024];
	struct target t = {};
	int status;

	CKPT_SETUP_SKIPPED();
	if (!variant->restart_why)
		SKIP(return, "a restart reads no %s", variant->skew);
	ASSERT_EQ(0, load_with(self->f.path, ""));
	ASSERT_EQ(0, set_key());
	ASSERT_EQ(0, target_start(&t, feature_target));
	ASSERT_EQ(0, target_ask(&t, variant->cmd, buf, sizeof(buf)));
	ASSERT_EQ(0, ckpt_checkpoint_to(t.pid, self->f.image, 0, msg,
					sizeof(msg), NULL)) TH_LOG("%s", msg);
	ASSERT_EQ(0, target_send(&t, "q"));
	EXPECT_EQ(0, target_end(&t));

	ASSERT_EQ(0, ckpt_unload_module());
	snprintf(params, sizeof(params), "layout_test_skew=%s", variant->skew);
	ASSERT_EQ(0, load_with(self->f.path, params));
	ASSERT_EQ(0, set_key());
	status = ckpt_run_restart(self->f.image, NULL, err, sizeof(err));
	TH_LOG("%s", err);
	EXPECT_NE(0, status);
	EXPECT_NE(NULL, strstr(err, variant->restart_why));
	snprintf(buf, sizeof(buf), "struct %s differs from this engine's build",
		 variant->skew);
	EXPECT_NE(NULL, strstr(err, buf));
}

TEST_HARNESS_MAIN
