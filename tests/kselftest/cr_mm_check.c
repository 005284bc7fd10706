// SPDX-License-Identifier: GPL-2.0
/*
 * What a restart takes from the image for the mm itself (issue 12, finding
 * 3, 8, the fill workers' waits and the reader's part of 7): the auxv that /proc/PID/auxv and core dumps read up to its AT_NULL
 * entry, and the code, data, heap, argument and environment ranges that
 * prctl(PR_SET_MM_MAP) would check. A real image of a simple process is
 * edited, its checksums made right again, so that only those checks can
 * refuse it; `ckpt restart` (as root) must then fail with a message before
 * the point of no return, the restarter exiting normally, and the engine's
 * own reader must refuse the same image when the CLI does not look.
 *
 * Without the checks the edited auxv is installed as is: reading
 * /proc/PID/auxv of the restarted process then runs past mm->saved_auxv
 * (hardened usercopy: "kernel BUG at mm/usercopy.c"), which the VM harness
 * reports as a failed run. The tests read it whenever a restart succeeds.
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>

#include <linux/ckpt_image.h>

#include <sys/mman.h>

#include "kselftest_harness.h"
#include "ckpt_test.h"
#include "ckpt_fuse.h"

#define AT_IGNORE	1	/* <elf.h>: an entry readers skip */

FIXTURE(mm) {
	struct target t;
	pid_t pid;		/* the image's */
	char image[64];
	char errpath[64];
	char msg[512];
};

FIXTURE_SETUP(mm)
{
	const char *path = ckpt_module_path();

	if (!path)
		SKIP(return, "CKPT_MODULE does not name a readable ckpt.ko");
	if (!ckpt_module_loaded())
		ASSERT_EQ(0, ckpt_load_module(path));
	snprintf(self->image, sizeof(self->image), "/tmp/cr_mm_check.%d.img",
		 getpid());
	snprintf(self->errpath, sizeof(self->errpath), "/tmp/cr_mm_check.%d.err",
		 getpid());
	ASSERT_EQ(0, target_start(&self->t, counter_target));
	/* Counted before the checkpoint: the pipe's content is not kept. */
	ASSERT_EQ(0, target_ask(&self->t, "sp", self->msg, sizeof(self->msg)));
	ASSERT_STREQ("1", self->msg);
	self->pid = self->t.pid;
	ASSERT_EQ(0, ckpt_checkpoint_to(self->t.pid, self->image,
					CKPT_CHECKPOINT_KILL, self->msg,
					sizeof(self->msg), NULL)) TH_LOG("%s", self->msg);
	target_end(&self->t);
	self->t.pid = 0;
}

FIXTURE_TEARDOWN(mm)
{
	if (self->t.pid > 0) {
		kill(self->t.pid, SIGKILL);
		target_end(&self->t);
	}
	unlink(self->image);
	unlink(self->errpath);
}

/* Edits the image's PROCESS section with @edit, checksums made right. */
static int edit_process(const char *image,
			void (*edit)(struct ckpt_img_process *p))
{
	struct ckpt_img_process *p;
	size_t len = 0;
	off_t pos = 0;
	int ret = -1;

	p = ckpt_section_payload(image, CKPT_SECT_PROCESS, &pos, &len);
	if (p && len == sizeof(*p)) {
		edit(p);
		ret = ckpt_section_rewrite(image, pos, p, len);
	}
	free(p);
	return ret;
}

/* Index of the auxv's AT_NULL entry. */
static unsigned int auxv_end(const struct ckpt_img_process *p)
{
	unsigned int i;

	for (i = 0; i + 1 < CKPT_IMG_AUXV_WORDS && p->auxv[i]; i += 2)
		;
	return i;
}

/* AT_NULL replaced, and every pair after it made an entry: no end at all. */
static void auxv_unterminated(struct ckpt_img_process *p)
{
	unsigned int i;

	for (i = auxv_end(p); i + 1 < CKPT_IMG_AUXV_WORDS; i += 2) {
		p->auxv[i] = AT_IGNORE;
		p->auxv[i + 1] = 0;
	}
}

/*
 * Ended in the image's last pair (64 words, which image_check.c accepts),
 * past the end of any supported kernel's mm->saved_auxv (46 words on 6.1,
 * 50 on 6.12): only the engine can tell.
 */
static void auxv_too_long(struct ckpt_img_process *p)
{
	auxv_unterminated(p);
	p->auxv[CKPT_IMG_AUXV_WORDS - 2] = 0;
}

static void arg_inverted(struct ckpt_img_process *p)
{
	p->arg_end = p->arg_start - 8;
}

/* Below mmap_min_addr (64 KiB on Debian): only the engine knows it. */
static void env_in_page_zero(struct ckpt_img_process *p)
{
	p->env_start = 0x100;
	p->env_end = 0x200;
}

/* The restarter's stderr, to a file (target_restart_after()'s setup). */
static const char *errpath;

static void to_errpath(void)
{
	int fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	if (fd >= 0)
		dup2(fd, 2);
}

/*
 * "ckpt restart IMAGE" as the target: refused with @want on its stderr,
 * exiting 1. Should it restart instead, the process's auxv is read (what
 * trips hardened usercopy on an unterminated one) and the test fails.
 */
static void restart_refused(struct __test_metadata *_metadata,
			    FIXTURE_DATA(mm) *self, const char *want)
{
	char buf[64], path[64], auxv[4096];
	int status, fd;
	ssize_t n;

	errpath = self->errpath;
	ASSERT_EQ(0, target_restart_after(&self->t, self->image, to_errpath));
	if (!target_ask(&self->t, "p", buf, sizeof(buf))) {
		snprintf(path, sizeof(path), "/proc/%d/auxv", self->pid);
		fd = open(path, O_RDONLY);
		n = fd < 0 ? -1 : read(fd, auxv, sizeof(auxv));
		if (fd >= 0)
			close(fd);
		EXPECT_TRUE(false)
			TH_LOG("restarted (answers %s, %zd bytes of auxv) instead of refused",
			       buf, n);
	}
	status = target_end(&self->t);
	self->t.pid = 0;
	EXPECT_TRUE(WIFEXITED(status)) TH_LOG("restarter status %#x", status);
	EXPECT_EQ(1, WEXITSTATUS(status));
	fd = open(self->errpath, O_RDONLY);
	ASSERT_LE(0, fd);
	n = read(fd, self->msg, sizeof(self->msg) - 1);
	close(fd);
	self->msg[n > 0 ? n : 0] = '\0';
	EXPECT_NE(NULL, strstr(self->msg, want)) TH_LOG("stderr: %s", self->msg);
}

/*
 * CKPT_IOC_RESTART on the image in a child, the way engine_checks_the_
 * image_itself (cr_errors) does it, without the CLI's checks first:
 * refused with @err and @want, the child carrying on.
 */
static void engine_refuses(struct __test_metadata *_metadata,
			   FIXTURE_DATA(mm) *self, int err, const char *want)
{
	struct { int err; char msg[256]; } res = { 0, "" };
	int p[2], status;
	pid_t pid;

	ASSERT_EQ(0, pipe(p));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct ckpt_restart r = { .nr_threads = 1, .err_fd = -1 };
		int null = open("/dev/null", O_RDWR);
		int dev = open("/dev/ckpt", O_RDWR);

		/* Should it restart, the counter sees its stdin end. */
		dup2(null, 0);
		close(p[0]);
		r.fd = open(self->image, O_RDONLY);
		r.errmsg = (unsigned long)res.msg;
		r.errmsg_len = sizeof(res.msg);
		res.err = ioctl(dev, CKPT_IOC_RESTART, &r) ? errno : 0;
		if (write(p[1], &res, sizeof(res)) != sizeof(res))
			_exit(2);
		_exit(0);
	}
	close(p[1]);
	EXPECT_EQ((ssize_t)sizeof(res), read(p[0], &res, sizeof(res)));
	close(p[0]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("child status %#x", status);
	EXPECT_EQ(err, res.err);
	EXPECT_NE(NULL, strstr(res.msg, want)) TH_LOG("message: %s", res.msg);
}

TEST_F(mm, auxv_without_at_null_refused)
{
	CKPT_SETUP_SKIPPED();

	ASSERT_EQ(0, edit_process(self->image, auxv_unterminated));
	restart_refused(_metadata, self, "auxv not terminated (no AT_NULL entry)");
	engine_refuses(_metadata, self, EBADMSG,
		       "auxv not terminated (no AT_NULL entry)");
}

TEST_F(mm, auxv_longer_than_the_kernel_keeps_refused)
{
	CKPT_SETUP_SKIPPED();

	ASSERT_EQ(0, edit_process(self->image, auxv_too_long));
	restart_refused(_metadata, self,
			"auxv longer than this kernel keeps");
	engine_refuses(_metadata, self, E2BIG,
		       "auxv longer than this kernel keeps");
}

TEST_F(mm, arg_range_inverted_refused)
{
	CKPT_SETUP_SKIPPED();

	ASSERT_EQ(0, edit_process(self->image, arg_inverted));
	restart_refused(_metadata, self,
			"process arguments inverted (arg_end below arg_start)");
	engine_refuses(_metadata, self, EBADMSG,
		       "process arguments inverted (arg_end below arg_start)");
}

TEST_F(mm, address_below_mmap_min_addr_refused)
{
	CKPT_SETUP_SKIPPED();

	ASSERT_EQ(0, edit_process(self->image, env_in_page_zero));
	restart_refused(_metadata, self, "process address below mmap_min_addr");
	engine_refuses(_metadata, self, EINVAL,
		       "process address below mmap_min_addr");
}

/* VmallocUsed of /proc/meminfo, in kB. */
static long vmalloc_kb(void)
{
	char line[128];
	long kb = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmallocUsed: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/*
 * Finding 7, as far as the image reader goes: an image on a pipe whose
 * HEADER claims 65536 mappings and whose VMAS section says it has them
 * (37 MB), and which then stalls 4 KiB into it. The engine used to
 * allocate the whole 37 MB before reading any of it, and keep it while
 * the pipe stalled; now its buffer grows with what arrives.
 */
TEST_F(mm, stalled_image_pins_what_it_sent)
{
	const size_t vlen = 65536 * sizeof(struct ckpt_img_vma);
	struct ckpt_img_header *h;
	struct ckpt_sect vs;
	size_t len = 0, n;
	long before, during;
	off_t pos = 0, vpos;
	int p[2], fd, status;
	char *buf;
	pid_t pid;
	void *v;

	CKPT_SETUP_SKIPPED();

	h = ckpt_section_payload(self->image, CKPT_SECT_HEADER, &pos, &len);
	ASSERT_NE(NULL, h);
	h->nr_vmas = 65536;
	ASSERT_EQ(0, ckpt_section_rewrite(self->image, pos, h, len));
	free(h);
	v = ckpt_section_payload(self->image, CKPT_SECT_VMAS, &vpos, &len);
	ASSERT_NE(NULL, v);
	free(v);
	fd = open(self->image, O_RDWR);
	ASSERT_LE(0, fd);
	ASSERT_EQ((ssize_t)sizeof(vs), pread(fd, &vs, sizeof(vs), vpos));
	vs.len = vlen;
	vs.hcsum = 0;
	vs.hcsum = ckpt_csum(&vs, sizeof(vs));
	ASSERT_EQ((ssize_t)sizeof(vs), pwrite(fd, &vs, sizeof(vs), vpos));
	n = vpos + sizeof(vs) + 4096;
	buf = malloc(n);
	ASSERT_NE(NULL, buf);
	ASSERT_EQ((ssize_t)n, pread(fd, buf, n, 0));
	close(fd);

	ASSERT_EQ(0, pipe(p));
	ASSERT_LE((long)n, fcntl(p[1], F_SETPIPE_SZ, 1 << 20));
	before = vmalloc_kb();
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct ckpt_restart r = { .nr_threads = 1, .err_fd = -1 };
		int dev = open("/dev/ckpt", O_RDWR);

		close(p[1]);
		r.fd = p[0];
		_exit(ioctl(dev, CKPT_IOC_RESTART, &r) ? 1 : 0);
	}
	close(p[0]);
	ASSERT_EQ((ssize_t)n, write(p[1], buf, n));
	free(buf);
	/* The engine reads the front sections, and waits in VMAS. */
	usleep(1500000);
	during = vmalloc_kb();
	kill(pid, SIGKILL);
	close(p[1]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_LT(during - before, 8 * 1024)
		TH_LOG("%ld kB of vmalloc while a 37 MB VMAS section stalled 4 KiB in",
		       during - before);
	EXPECT_TRUE(WIFSIGNALED(status)) TH_LOG("status %#x", status);
}

/* The unedited image still restarts: the checks refuse only what they should. */
TEST_F(mm, unedited_image_restarts)
{
	char buf[64];

	CKPT_SETUP_SKIPPED();

	ASSERT_EQ(0, target_restart(&self->t, self->image));
	ASSERT_EQ(0, target_ask(&self->t, "p", buf, sizeof(buf)));
	EXPECT_STREQ("1", buf);
}

/*
 * Images on a FUSE file system (ckpt_fuse.h) whose server misbehaves, of a
 * process with 24 runs of pages (24 PAGES sections): enough for the
 * restart to fill memory with a kernel worker besides the restarter.
 */
#define RUNS	24

static void runs_target(void)
{
	char *m = mmap(NULL, 2 * RUNS * 4096, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int i;

	if (m == MAP_FAILED)
		_exit(4);
	for (i = 0; i < RUNS; i++)
		memset(m + 2 * i * 4096, 'a' + i, 4096);
	counter_target();
}

FIXTURE(fuse) {
	struct target t;
	pid_t pid;		/* the image's */
	char image[64];
	char msg[512];
	struct fuse_srv srv;
	unsigned long long pages;	/* the first PAGES payload */
};

FIXTURE_SETUP(fuse)
{
	const char *path = ckpt_module_path();
	size_t len = 0;
	off_t pos = 0;
	void *p;

	if (!path)
		SKIP(return, "CKPT_MODULE does not name a readable ckpt.ko");
	if (!ckpt_module_loaded())
		ASSERT_EQ(0, ckpt_load_module(path));
	snprintf(self->image, sizeof(self->image), "/tmp/cr_mm_check.%d.img",
		 getpid());
	ASSERT_EQ(0, target_start(&self->t, runs_target));
	/* Counted before the checkpoint: the pipe's content is not kept. */
	ASSERT_EQ(0, target_ask(&self->t, "sp", self->msg, sizeof(self->msg)));
	ASSERT_STREQ("1", self->msg);
	self->pid = self->t.pid;
	ASSERT_EQ(0, ckpt_checkpoint_to(self->t.pid, self->image,
					CKPT_CHECKPOINT_KILL, self->msg,
					sizeof(self->msg), NULL)) TH_LOG("%s", self->msg);
	target_end(&self->t);
	self->t.pid = 0;
	p = ckpt_section_payload(self->image, CKPT_SECT_PAGES, &pos, &len);
	ASSERT_NE(NULL, p);
	free(p);
	self->pages = pos + sizeof(struct ckpt_sect);
}

FIXTURE_TEARDOWN(fuse)
{
	if (self->t.pid > 0) {
		kill(self->t.pid, SIGKILL);
		target_end(&self->t);
	}
	fuse_stop(&self->srv);
	unlink(self->image);
}

/*
 * Finding 8: the first PAGES header is read short (15 bytes, its mapping
 * index 0xffffff) and then fails with EFAULT, which a FUSE server may
 * send. The engine used to take that for "cannot write" and name the
 * pages by vmas[0xffffff].path, 9 GB past its table, for the message;
 * now the header is not used, and the read error is named.
 */
TEST_F(fuse, pages_header_read_error_names_no_mapping)
{
	char err[512];
	int ret, status;

	CKPT_SETUP_SKIPPED();

	ret = fuse_start(&self->srv, self->image, FUSE_SHORT_EFAULT,
			 self->pages, 0);
	if (ret == 1)
		SKIP(return, "no FUSE in this kernel");
	ASSERT_EQ(0, ret);
	status = ckpt_run_restart(self->srv.path, "--no-verify", err, sizeof(err));
	EXPECT_TRUE(WIFEXITED(status)) TH_LOG("status %#x", status);
	EXPECT_EQ(1, WEXITSTATUS(status));
	EXPECT_NE(NULL, strstr(err, "cannot read the image")) TH_LOG("%s", err);
	EXPECT_EQ(NULL, strstr(err, "cannot write")) TH_LOG("%s", err);
}

/* Whether @pid is gone or a zombie. */
static bool dead(pid_t pid)
{
	char path[64], buf[256], *state;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return true;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	state = strrchr(buf, ')');
	return !state || state[1] != ' ' || state[2] == 'Z' || state[2] == 'X';
}

/* Waits up to @ms for @pid (a child) to exit: its status, or -1. */
static int reap_within(pid_t pid, int ms)
{
	int i, status = 0;

	for (i = 0; i < ms / 50; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return status;
		usleep(50000);
	}
	return -1;
}

/*
 * Starts `ckpt restart` of the image on the stalling server, and waits for
 * a fill worker's read to stall: 0, or -ETIMEDOUT. Which spans of the
 * batch the worker gets is the scheduler's choice: on a loaded machine the
 * restarter may have taken them all before the worker ran, and the
 * restart then ends with no read stalled. The "p" sent ahead is answered
 * only then: the process is ended ("q") and the restart tried again, up
 * to five times.
 */
static int restart_until_stalled(struct __test_metadata *_metadata,
				 FIXTURE_DATA(fuse) *self)
{
	char *argv[] = { "ckpt", "restart", "--no-verify", self->srv.path, NULL };
	int try, i;

	for (try = 0; try < 5; try++) {
		if (target_spawn(&self->t, NULL, argv) ||
		    target_send(&self->t, "p"))
			return -EIO;
		for (i = 0; i < 600; i++) {
			struct pollfd p[2] = {
				{ .fd = self->srv.stalled, .events = POLLIN },
				{ .fd = self->t.out, .events = POLLIN },
			};
			char c;

			if (poll(p, 2, 200) < 0)
				return -errno;
			if (p[0].revents)
				return read(self->srv.stalled, &c, 1) == 1 ?
					0 : -EIO;
			if (p[1].revents)
				break;
		}
		if (i == 600)
			return -ETIMEDOUT;
		TH_LOG("try %d: the restarter filled every span itself; again",
		       try + 1);
		target_send(&self->t, "q");
		close(self->t.in);
		close(self->t.out);
		self->t.in = self->t.out = -1;
		if (reap_within(self->t.pid, 30000) < 0)
			return -ETIMEDOUT;
		self->t.pid = 0;
	}
	return -ETIMEDOUT;
}

/*
 * The lower finding: a fill worker's read of the image stalls (a FUSE
 * server that does not answer the kernel worker's READs; the restarter's
 * own are answered). The restarter, waiting for the worker, must still
 * die of SIGKILL, and the worker, answered afterwards, finish without
 * touching what the restarter freed (KASAN in the debug kernel).
 */
TEST_F(fuse, restart_killable_while_a_fill_worker_stalls)
{
	int ret, i, status;

	CKPT_SETUP_SKIPPED();

	ret = fuse_start(&self->srv, self->image, FUSE_STALL, self->pages,
			 self->pid);
	if (ret == 1)
		SKIP(return, "no FUSE in this kernel");
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, restart_until_stalled(_metadata, self))
		TH_LOG("no fill worker read the image in five restarts");
	/* The restarter finishes its own share, then waits for the worker. */
	usleep(500000);
	ASSERT_EQ(0, kill(self->pid, SIGKILL));
	for (i = 0; i < 600 && !dead(self->pid); i++)
		usleep(50000);
	EXPECT_TRUE(dead(self->pid))
		TH_LOG("pid %d still alive 30 s after SIGKILL, its fill worker stalled",
		       self->pid);
	fuse_release(&self->srv);
	status = reap_within(self->t.pid, 30000);
	EXPECT_NE(-1, status) TH_LOG("ckpt restart still running 30 s after");
	EXPECT_TRUE(status != -1 && WIFEXITED(status) && WEXITSTATUS(status))
		TH_LOG("ckpt restart status %#x", status);
	close(self->t.in);
	close(self->t.out);
	self->t.in = self->t.out = -1;
	if (status != -1)
		self->t.pid = 0;
	/* The worker, answered EIO, has let go of everything. */
	usleep(500000);
}

TEST_HARNESS_MAIN
