// SPDX-License-Identifier: GPL-2.0
/*
 * Files the image carries by content survive a checkpoint and restart:
 * a memfd (name, size, data with its holes, seals, position), open and
 * mapped shared and private, one that is only mapped, a sealed one; a
 * regular file unlinked while open and mapped (content, mode, flags,
 * position, still unlinked); a FIFO (reopened by path, its bytes, each
 * end's flags), and one unlinked while open (made anew, unlinked); a file
 * unlinked from its name but linked at another (a semaphore of glibc's
 * sem_open()) comes back by that name. After the restart a write through a shared mapping shows
 * through the descriptor and the other way round. A FIFO or memfd held by
 * another process too is refused, named, but not one another process
 * only reads the /proc links of; a deleted file whose directory is
 * gone cannot be restarted, named. Damaged page data in an image with a
 * FIFO is found before anything is written into the FIFO.
 */
#define _GNU_SOURCE

#include <grp.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>

#include "kselftest_harness.h"
#include "ckpt_test.h"

#define SZ	(2UL << 20)

static char dir_path[64], file_path[96], fifo_path[96], linked_path[96];

static uint64_t fd_hash(int fd, size_t size)
{
	static unsigned char buf[SZ];

	if (size > SZ || pread(fd, buf, size, 0) != (ssize_t)size)
		return 0;
	return fnv(FNV_OFFSET, buf, size);
}

static void pattern(int fd, off_t off, size_t len)
{
	unsigned char buf[4096];
	size_t i, n;

	for (; len; len -= n, off += n) {
		n = len < sizeof(buf) ? len : sizeof(buf);
		for (i = 0; i < n; i++)
			buf[i] = (unsigned char)((off + i) * 13 + 7);
		if (pwrite(fd, buf, n, off) != (ssize_t)n)
			_exit(9);
	}
}

/*
 * The character of the test's next request "pC", answering "s" with "set"
 * meanwhile; exits 0 at "q", 3 at the end of its input.
 */
static char next_request(void)
{
	char cmd, c;

	for (;;) {
		if (read(0, &cmd, 1) != 1)
			_exit(3);
		if (cmd == 'q')
			_exit(0);
		if (cmd == 's')
			target_say("set");
		else if (cmd == 'p' && read(0, &c, 1) == 1)
			return c;
	}
}

/*
 * fd 3: memfd "ckpt-test", 2 MiB with data at 0-8K and 1M-1M+4K, position
 * 1234, sealed against shrinking and growing, mapped shared (a byte written
 * through it) and private (a byte changed: its own page). A memfd
 * "only-mapped" mapped twice, its descriptor closed. fd 4: memfd "sealed",
 * sealed against writes, mapped read-only.
 */
static void memfd_target(void)
{
	unsigned char *shared, *priv, *a, *b;
	const char *ro;
	char c, link[128];
	int fd, m, s, ok;
	uint64_t h, hm;

	fd = memfd_create("ckpt-test", MFD_ALLOW_SEALING);
	if (fd != 3 || ftruncate(fd, SZ))
		_exit(9);
	pattern(fd, 0, 8192);
	pattern(fd, 1 << 20, 4096);
	lseek(fd, 1234, SEEK_SET);
	shared = mmap(NULL, SZ, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	priv = mmap(NULL, SZ, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	if (shared == MAP_FAILED || priv == MAP_FAILED)
		_exit(9);
	shared[5000] = 'S';
	priv[100] = 'P';
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW))
		_exit(9);

	m = memfd_create("only-mapped", 0);
	if (m != 4 || ftruncate(m, 8192) || pwrite(m, "hello only", 10, 0) != 10)
		_exit(9);
	a = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, m, 0);
	b = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, m, 0);
	if (a == MAP_FAILED || b == MAP_FAILED)
		_exit(9);
	close(m);

	s = memfd_create("sealed", MFD_ALLOW_SEALING);
	if (s != 4 || write(s, "frozen", 6) != 6 ||
	    fcntl(s, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SEAL))
		_exit(9);
	ro = mmap(NULL, 4096, PROT_READ, MAP_SHARED, s, 0);
	if (ro == MAP_FAILED)
		_exit(9);

	for (;;) {
		c = next_request();
		h = fd_hash(3, SZ);
		hm = fnv(FNV_OFFSET, shared, SZ);
		ok = priv[100] == 'P' && !memcmp(priv, shared, 100) &&
		     !memcmp(priv + 101, shared + 101, SZ - 101);
		memset(link, 0, sizeof(link));
		if (readlink("/proc/self/fd/3", link, sizeof(link) - 1) < 0)
			_exit(10);
		target_say("hash %d seals %x/%x pos %ld name %s priv %d only %.10s sealed %.6s:%d",
			   h == hm && h, fcntl(3, F_GET_SEALS), fcntl(4, F_GET_SEALS),
			   (long)lseek(3, 0, SEEK_CUR), link, ok, b,
			   ro, pwrite(4, "x", 1, 0) < 0 && errno == EPERM);
		/* One file: through the mapping, seen through the descriptor... */
		shared[40960] = c;
		if (pread(3, link, 1, 40960) != 1)
			_exit(10);
		ok = link[0] == c;
		/* ... and the other way round; both mappings of the other one. */
		if (pwrite(3, &c, 1, 45056) != 1)
			_exit(10);
		ok += shared[45056] == c;
		a[200] = c;
		ok += b[200] == c;
		target_say("%c shared %d", c, ok);
		shared[40960] = shared[45056] = a[200] = 0;
	}
}

/*
 * fd 3: file_path opened read-write, 10000 bytes, mode 0640, position 777,
 * mapped shared; fd 4: the same file write-only, appending. Then unlinked.
 */
static void deleted_target(void)
{
	unsigned char *map;
	struct stat st;
	char cmd, c;
	int ok;

	if (mkdir(dir_path, 0700) && errno != EEXIST)
		_exit(9);
	if (open(file_path, O_RDWR | O_CREAT | O_EXCL, 0600) != 3 ||
	    open(file_path, O_WRONLY | O_APPEND) != 4 || ftruncate(3, 12288))
		_exit(9);
	pattern(3, 0, 10000);
	map = mmap(NULL, 12288, PROT_READ | PROT_WRITE, MAP_SHARED, 3, 0);
	if (map == MAP_FAILED || unlink(file_path) || fchmod(3, 0640))
		_exit(9);
	lseek(3, 777, SEEK_SET);
	for (;;) {
		c = next_request();
		if (fstat(3, &st))
			_exit(10);
		target_say("hash %d size %ld mode %o links %ld pos %ld flags %o/%o",
			   fd_hash(3, 12288) == fnv(FNV_OFFSET, map, 12288),
			   (long)st.st_size, st.st_mode & 07777, (long)st.st_nlink,
			   (long)lseek(3, 0, SEEK_CUR), fcntl(3, F_GETFL) & O_ACCMODE,
			   fcntl(4, F_GETFL) & (O_ACCMODE | O_APPEND));
		map[8000] = c;
		ok = pread(3, &cmd, 1, 8000) == 1 && cmd == c;
		if (pwrite(3, &c, 1, 11000) != 1)
			_exit(10);
		ok += map[11000] == c;
		target_say("%c shared %d", c, ok);
		map[8000] = map[11000] = 0;
	}
}

/*
 * fd 3: a file made as file_path, mapped shared, linked to linked_path
 * and unlinked from file_path (as glibc's sem_open() makes a semaphore),
 * at position 321.
 */
static void relinked_target(void)
{
	unsigned char *map;
	char cmd, c;
	int fd, ok;

	if (mkdir(dir_path, 0700) && errno != EEXIST)
		_exit(9);
	if (open(file_path, O_RDWR | O_CREAT | O_EXCL, 0600) != 3 ||
	    ftruncate(3, 4096))
		_exit(9);
	map = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, 3, 0);
	if (map == MAP_FAILED || link(file_path, linked_path) ||
	    unlink(file_path))
		_exit(9);
	lseek(3, 321, SEEK_SET);
	for (;;) {
		c = next_request();
		/* Written through the mapping, read through the name. */
		map[100] = c;
		fd = open(linked_path, O_RDONLY | O_CLOEXEC);
		ok = fd >= 0 && pread(fd, &cmd, 1, 100) == 1 && cmd == c;
		if (fd >= 0)
			close(fd);
		target_say("%c linked %d pos %ld", c, ok,
			   (long)lseek(3, 0, SEEK_CUR));
	}
}

/* A deleted file whose directory is removed as well. */
static void orphan_target(void)
{
	char c;

	if (mkdir(dir_path, 0700) ||
	    open(file_path, O_RDWR | O_CREAT | O_EXCL, 0600) != 3 ||
	    write(3, "orphan", 6) != 6 || unlink(file_path) || rmdir(dir_path))
		_exit(9);
	while (read(0, &c, 1) == 1 && c != 'q')
		target_say("set");
	_exit(0);
}

/*
 * fd 3: the FIFO's read end, non-blocking; fd 4 its write end (blocking);
 * "hello fifo" buffered.
 */
static void fifo_target(void)
{
	char c, buf[64], line[256];
	ssize_t n;

	if (open(fifo_path, O_RDONLY | O_NONBLOCK) != 3 ||
	    open(fifo_path, O_WRONLY) != 4 || write(4, "hello fifo", 10) != 10)
		_exit(9);
	for (;;) {
		if (read(0, &c, 1) != 1)
			_exit(3);
		if (c == 'q')
			_exit(0);
		if (c == 's') {
			target_say("set");
			continue;
		}
		if (c != 'p')
			continue;
		n = read(3, buf, sizeof(buf) - 1);
		buf[n > 0 ? n : 0] = '\0';
		snprintf(line, sizeof(line), "3:%s", buf);
		n = read(3, buf, 1);
		snprintf(line + strlen(line), sizeof(line) - strlen(line),
			 " again:%zd/%d flags %o/%o", n, n < 0 && errno == EAGAIN,
			 fcntl(3, F_GETFL) & (O_ACCMODE | O_NONBLOCK),
			 fcntl(4, F_GETFL) & (O_ACCMODE | O_NONBLOCK));
		if (write(4, "x", 1) != 1 || read(3, buf, 1) != 1)
			_exit(10);
		snprintf(line + strlen(line), sizeof(line) - strlen(line), " 4>3:%c", buf[0]);
		target_say("%s", line);
	}
}

/* fifo_target as user nobody, dumpable. */
static void nobody_fifo_target(void)
{
	if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
	    setresuid(65534, 65534, 65534) ||
	    prctl(PR_SET_DUMPABLE, 1, 0, 0, 0))
		_exit(9);
	fifo_target();
}

/* fd 3: a FIFO (or with @memfd a memfd) a forked child holds too. */
static void shared_target(bool memfd)
{
	char c;

	if (memfd ? memfd_create("shared", 0) != 3 :
	    open(fifo_path, O_RDWR) != 3)
		_exit(9);
	if (!fork()) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		pause();
		_exit(0);
	}
	while (read(0, &c, 1) == 1 && c != 'q')
		target_say("set");
	_exit(0);
}

static void shared_fifo_target(void)
{
	shared_target(false);
}

static void shared_memfd_target(void)
{
	shared_target(true);
}

FIXTURE(memfd) {
	char image[64];
	char msg[256];
};

FIXTURE_SETUP(memfd)
{
	const char *path = ckpt_module_path();

	if (!path)
		SKIP(return, "CKPT_MODULE does not name a readable ckpt.ko");
	if (!ckpt_module_loaded())
		ASSERT_EQ(0, ckpt_load_module(path));
	snprintf(self->image, sizeof(self->image), "/tmp/cr_memfd.%d.img", getpid());
	snprintf(dir_path, sizeof(dir_path), "/tmp/cr_memfd.%d.d", getpid());
	snprintf(file_path, sizeof(file_path), "%s/file", dir_path);
	snprintf(fifo_path, sizeof(fifo_path), "/tmp/cr_memfd.%d.fifo", getpid());
	snprintf(linked_path, sizeof(linked_path), "%s/linked", dir_path);
}

FIXTURE_TEARDOWN(memfd)
{
	unlink(self->image);
	unlink(file_path);
	unlink(linked_path);
	rmdir(dir_path);
	unlink(fifo_path);
}

/*
 * Starts @fn, and once it is set up checkpoints it to @image, killing it:
 * 0, or -errno with @msg saying why.
 */
static int image_of(void (*fn)(void), const char *image, char *msg,
		    size_t len)
{
	struct target t = {};
	char buf[64];
	int ret = target_start(&t, fn);

	if (ret)
		return ret;
	ret = target_ask(&t, "s", buf, sizeof(buf));
	if (!ret)
		ret = ckpt_checkpoint_to(t.pid, image, CKPT_CHECKPOINT_KILL,
					 msg, len, NULL);
	target_end(&t);
	return ret;
}

TEST_F(memfd, memfds_keep_content_seals_and_sharing)
{
	struct target t = {};
	char before[256], after[256];
	int cycle;
	pid_t pid;

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, target_start(&t, memfd_target));
	pid = t.pid;
	ASSERT_EQ(0, target_ask(&t, "pA", before, sizeof(before)));
	EXPECT_STREQ("hash 1 seals 6/9 pos 1234 name /memfd:ckpt-test (deleted) priv 1 only hello only sealed frozen:1",
		     before);
	ASSERT_EQ(0, target_line(&t, after, sizeof(after)));
	EXPECT_STREQ("A shared 3", after);
	/* After a restart t.pid is the restarter's: cycle the target's own. */
	for (cycle = 0; cycle < 3; cycle++) {
		ASSERT_EQ(0, target_cycle(&t, pid, self->image, self->msg,
					  sizeof(self->msg))) TH_LOG("%s", self->msg);
		ASSERT_EQ(0, target_ask(&t, cycle ? "pC" : "pB", after, sizeof(after)))
			TH_LOG("cycle %d: the restarted process: status %#x", cycle, target_end(&t));
		EXPECT_STREQ(before, after);
		ASSERT_EQ(0, target_line(&t, after, sizeof(after)));
		EXPECT_STREQ(cycle ? "C shared 3" : "B shared 3", after);
	}
	ASSERT_EQ(0, target_send(&t, "q"));
	EXPECT_EQ(0, target_end(&t));
}

TEST_F(memfd, a_deleted_file_comes_back_unlinked)
{
	struct target t = {};
	char before[256], after[256];

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, target_start(&t, deleted_target));
	ASSERT_EQ(0, target_ask(&t, "pA", before, sizeof(before)));
	EXPECT_STREQ("hash 1 size 12288 mode 640 links 0 pos 777 flags 2/2001", before);
	ASSERT_EQ(0, target_line(&t, after, sizeof(after)));
	EXPECT_STREQ("A shared 2", after);
	ASSERT_EQ(0, target_cycle(&t, t.pid, self->image, self->msg,
				  sizeof(self->msg))) TH_LOG("%s", self->msg);
	ASSERT_EQ(0, target_ask(&t, "pB", after, sizeof(after)));
	EXPECT_STREQ(before, after);
	ASSERT_EQ(0, target_line(&t, after, sizeof(after)));
	EXPECT_STREQ("B shared 2", after);
	ASSERT_EQ(0, target_send(&t, "q"));
	EXPECT_EQ(0, target_end(&t));
}

/*
 * Unlinked from its name but linked at another (refused until stop 67):
 * a file of that name, its mapping and descriptor that file's again.
 */
TEST_F(memfd, a_file_unlinked_but_linked_elsewhere_comes_back_by_that_name)
{
	struct target t = {};
	char line[128];

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, target_start(&t, relinked_target));
	ASSERT_EQ(0, target_ask(&t, "pA", line, sizeof(line)));
	EXPECT_STREQ("A linked 1 pos 321", line);
	ASSERT_EQ(0, target_cycle(&t, t.pid, self->image, self->msg,
				  sizeof(self->msg))) TH_LOG("%s", self->msg);
	ASSERT_EQ(0, target_ask(&t, "pB", line, sizeof(line)));
	EXPECT_STREQ("B linked 1 pos 321", line);
	ASSERT_EQ(0, target_send(&t, "q"));
	EXPECT_EQ(0, target_end(&t));
}

TEST_F(memfd, a_deleted_file_without_its_directory_cannot_restart)
{
	char buf[512];
	int status;

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, image_of(orphan_target, self->image, self->msg,
			      sizeof(self->msg))) TH_LOG("%s", self->msg);
	status = ckpt_run_restart(self->image, NULL, buf, sizeof(buf));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(1, WEXITSTATUS(status));
	EXPECT_NE(NULL, strstr(buf, "its directory no longer exists")) TH_LOG("%s", buf);
	EXPECT_NE(NULL, strstr(buf, file_path)) TH_LOG("%s", buf);
}

/* fd 3: a memfd holding "held"; fds 4 and 5: a pipe holding "piped". */
static void held_target(void)
{
	int p[2];
	char c;

	if (memfd_create("held", 0) != 3 || write(3, "held", 4) != 4 ||
	    pipe(p) || p[0] != 4 || write(5, "piped", 5) != 5)
		_exit(9);
	while (read(0, &c, 1) == 1 && c != 'q')
		target_say("%c", c);
	_exit(0);
}

struct link_reader {
	pid_t pid;
	volatile int stop;
	unsigned long reads;
};

/* readlink() of the target's /proc/PID/fd/3 to 5, as lsof does, on and on. */
static void *read_links(void *arg)
{
	struct link_reader *r = arg;
	char path[64], buf[128];

	while (!r->stop) {
		snprintf(path, sizeof(path), "/proc/%d/fd/%lu", r->pid,
			 3 + r->reads % 3);
		if (readlink(path, buf, sizeof(buf)) < 0)
			break;
		r->reads++;
	}
	return NULL;
}

/*
 * A process whose /proc/PID/fd links another process reads without pause
 * (lsof, a monitor): each readlink() holds the file for its moment, which
 * is no other holder. Ten checkpoints, each taken; before stop 64 one that
 * met such a moment was refused as if the memfd or the pipe were shared.
 * The second round shares one CPU between the reader and the checkpoints,
 * as a busy node does: stop 64's engine, which spun while it waited, once
 * failed this way on CI.
 */
TEST_F(memfd, a_reader_of_its_proc_links_holds_nothing)
{
	struct link_reader r = {};
	struct target t = {};
	cpu_set_t all, one;
	unsigned long before;
	int i, round;
	pthread_t th;
	char buf[64];

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, sched_getaffinity(0, sizeof(all), &all));
	CPU_ZERO(&one);
	for (i = 0; i < CPU_SETSIZE && !CPU_COUNT(&one); i++)
		if (CPU_ISSET(i, &all))
			CPU_SET(i, &one);
	ASSERT_EQ(0, target_start(&t, held_target));
	ASSERT_EQ(0, target_ask(&t, "a", buf, sizeof(buf)));
	r.pid = t.pid;
	for (round = 0; round < 2; round++) {
		ASSERT_EQ(0, sched_setaffinity(0, sizeof(cpu_set_t),
					       round ? &one : &all));
		r.stop = 0;
		before = r.reads;
		ASSERT_EQ(0, pthread_create(&th, NULL, read_links, &r));
		for (i = 0; i < 10; i++) {
			EXPECT_EQ(0, ckpt_checkpoint_to(t.pid, self->image, 0,
							self->msg,
							sizeof(self->msg), NULL))
				TH_LOG("round %d, checkpoint %d: %s", round, i,
				       self->msg);
		}
		r.stop = 1;
		pthread_join(th, NULL);
		TH_LOG("round %d: %lu links read meanwhile", round,
		       r.reads - before);
		/* The reader ran while the checkpoints were taken. */
		EXPECT_LT(before + 100, r.reads);
	}
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(all), &all));
	ASSERT_EQ(0, target_ask(&t, "b", buf, sizeof(buf)));
	EXPECT_STREQ("b", buf);
	ASSERT_EQ(0, target_send(&t, "q"));
	EXPECT_EQ(0, target_end(&t));
}

TEST_F(memfd, a_fifo_keeps_its_bytes_and_ends)
{
	struct target t = {};
	char buf[256];

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, mkfifo(fifo_path, 0600));
	ASSERT_EQ(0, target_start(&t, fifo_target));
	ASSERT_EQ(0, target_ask(&t, "s", buf, sizeof(buf)));
	ASSERT_EQ(0, target_cycle(&t, t.pid, self->image, self->msg,
				  sizeof(self->msg))) TH_LOG("%s", self->msg);
	ASSERT_EQ(0, target_ask(&t, "p", buf, sizeof(buf)));
	EXPECT_STREQ("3:hello fifo again:-1/1 flags 4000/1 4>3:x", buf);
	ASSERT_EQ(0, target_send(&t, "q"));
	EXPECT_EQ(0, target_end(&t));
}

/*
 * A restart leaves page data to the engine, which checks it as it copies it
 * in, after the restarter has refilled the image's FIFOs: for an image with
 * a FIFO the restarter checks the pages first, so that damage found there
 * leaves nothing behind in a FIFO others can read.
 */
TEST_F(memfd, damaged_pages_are_found_before_a_fifo_is_refilled)
{
	unsigned long long off, len;
	char buf[512];
	int status, fd;

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, mkfifo(fifo_path, 0600));
	ASSERT_EQ(0, image_of(fifo_target, self->image, self->msg,
			      sizeof(self->msg))) TH_LOG("%s", self->msg);
	/* A byte near the end of the last PAGES section: page data. */
	ASSERT_EQ(0, ckpt_last_section(self->image, "PAGES", &off, &len));
	ASSERT_LT(200ULL, len);
	/* Past the 24-byte section header (image-format.md). */
	ASSERT_EQ(0, flip_byte(self->image, off + 24 + len - 100));

	/* Held open here, the FIFO keeps whatever a restart writes into it. */
	fd = open(fifo_path, O_RDWR | O_NONBLOCK);
	ASSERT_LE(0, fd);
	status = ckpt_run_restart(self->image, NULL, buf, sizeof(buf));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(1, WEXITSTATUS(status));
	/* Named by the restarter, section and offset, not by the engine. */
	EXPECT_NE(NULL, strstr(buf, "section checksum mismatch (section "))
		TH_LOG("%s", buf);
	EXPECT_EQ(-1, read(fd, buf, sizeof(buf)));
	EXPECT_EQ(EAGAIN, errno);
	close(fd);
}

TEST_F(memfd, a_replaced_fifo_is_refused_at_restart)
{
	char buf[512];
	int status;

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, mkfifo(fifo_path, 0600));
	ASSERT_EQ(0, image_of(fifo_target, self->image, self->msg,
			      sizeof(self->msg))) TH_LOG("%s", self->msg);
	ASSERT_EQ(0, unlink(fifo_path));
	ASSERT_EQ(0, mkfifo(fifo_path, 0600));
	status = ckpt_run_restart(self->image, NULL, buf, sizeof(buf));
	EXPECT_EQ(1, WEXITSTATUS(status));
	EXPECT_NE(NULL, strstr(buf, "is not the FIFO it was")) TH_LOG("%s", buf);
}

/*
 * A FIFO whose path is gone at restart (a restart on another node, or
 * after /tmp was cleaned) is made again where it was, with its mode, its
 * missing directory 0700, and the bytes it held.
 */
TEST_F(memfd, a_gone_fifo_is_made_again)
{
	struct target t = {};
	char buf[256], sub[80];
	struct stat st;

	CKPT_SETUP_SKIPPED();
	snprintf(sub, sizeof(sub), "%s/session", dir_path);
	ASSERT_EQ(0, mkdir(dir_path, 0700));
	ASSERT_EQ(0, mkdir(sub, 0755));
	snprintf(fifo_path, sizeof(fifo_path), "%s/fifo", sub);
	ASSERT_EQ(0, mkfifo(fifo_path, 0600));
	ASSERT_EQ(0, chmod(fifo_path, 0640));
	ASSERT_EQ(0, target_start(&t, fifo_target));
	ASSERT_EQ(0, target_ask(&t, "s", buf, sizeof(buf)));
	ASSERT_EQ(0, ckpt_checkpoint_to(t.pid, self->image, CKPT_CHECKPOINT_KILL,
					self->msg, sizeof(self->msg), NULL))
		TH_LOG("%s", self->msg);
	target_end(&t);
	ASSERT_EQ(0, unlink(fifo_path));
	ASSERT_EQ(0, rmdir(sub));

	ASSERT_EQ(0, target_restart(&t, self->image));
	ASSERT_EQ(0, target_ask(&t, "p", buf, sizeof(buf)));
	EXPECT_STREQ("3:hello fifo again:-1/1 flags 4000/1 4>3:x", buf);
	ASSERT_EQ(0, stat(fifo_path, &st));
	EXPECT_TRUE(S_ISFIFO(st.st_mode));
	EXPECT_EQ(0640U, st.st_mode & 07777);
	ASSERT_EQ(0, stat(sub, &st));
	EXPECT_EQ(0700U, st.st_mode & 07777);
	ASSERT_EQ(0, target_send(&t, "q"));
	EXPECT_EQ(0, target_end(&t));
	unlink(fifo_path);
	rmdir(sub);
}

/*
 * @fn started on the FIFO, which then gets @mode and is unlinked, is
 * checkpointed (--kill) and restarted, and reads its bytes back: its pid
 * (restarted with it; t->pid is then the restarter's), or -1 (@msg says
 * why, if the cycle failed).
 */
static pid_t unlinked_fifo_cycle(struct target *t, void (*fn)(void),
				 mode_t mode, const char *image, char *msg,
				 size_t len)
{
	char buf[256];
	pid_t pid;

	if (target_start(t, fn) || target_ask(t, "s", buf, sizeof(buf)) ||
	    chmod(fifo_path, mode) || unlink(fifo_path))
		return -1;
	pid = t->pid;
	if (target_cycle(t, pid, image, msg, len) ||
	    target_ask(t, "p", buf, sizeof(buf)))
		return -1;
	if (strcmp(buf, "3:hello fifo again:-1/1 flags 4000/1 4>3:x")) {
		snprintf(msg, len, "read back: %.200s", buf);
		return -1;
	}
	return pid;
}

/*
 * A FIFO unlinked while open (a runtime's session directory removed): made
 * anew at restart, unlinked, one FIFO for both descriptors, its bytes and
 * mode back, nothing left at any path.
 */
TEST_F(memfd, an_unlinked_fifo_comes_back_unlinked)
{
	struct target t = {};
	char link[64], to[256];
	struct stat st3, st4;
	ssize_t n;
	pid_t pid;

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, mkfifo(fifo_path, 0600));
	pid = unlinked_fifo_cycle(&t, fifo_target, 0640, self->image, self->msg,
				  sizeof(self->msg));
	ASSERT_LT(0, pid) TH_LOG("%s", self->msg);
	snprintf(link, sizeof(link), "/proc/%d/fd/3", pid);
	n = readlink(link, to, sizeof(to) - 1);
	ASSERT_LT(0, n);
	to[n] = '\0';
	EXPECT_NE(NULL, strstr(to, " (deleted)")) TH_LOG("fd 3 is %s", to);
	ASSERT_EQ(0, stat(link, &st3));
	snprintf(link, sizeof(link), "/proc/%d/fd/4", pid);
	ASSERT_EQ(0, stat(link, &st4));
	EXPECT_TRUE(S_ISFIFO(st3.st_mode));
	EXPECT_EQ(0640U, st3.st_mode & 07777);
	EXPECT_EQ(0U, st3.st_nlink);
	EXPECT_EQ(st3.st_ino, st4.st_ino);
	EXPECT_NE(0, access(fifo_path, F_OK));
	ASSERT_EQ(0, target_send(&t, "q"));
	EXPECT_EQ(0, target_end(&t));
}

/*
 * An ordinary user's unlinked FIFO whose mode (0200) would not let its
 * user open its read end: the restart opens its descriptors as that user
 * first, and gives it its mode after.
 */
TEST_F(memfd, an_unlinked_fifo_gets_its_mode_after_its_descriptors)
{
	struct target t = {};
	char link[64];
	struct stat st;
	pid_t pid;

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, mkfifo(fifo_path, 0600));
	ASSERT_EQ(0, chown(fifo_path, 65534, 65534));
	pid = unlinked_fifo_cycle(&t, nobody_fifo_target, 0200, self->image,
				  self->msg, sizeof(self->msg));
	ASSERT_LT(0, pid) TH_LOG("%s", self->msg);
	snprintf(link, sizeof(link), "/proc/%d/fd/3", pid);
	ASSERT_EQ(0, stat(link, &st));
	EXPECT_EQ(0200U, st.st_mode & 07777);
	EXPECT_EQ(65534U, st.st_uid);
	EXPECT_EQ(0U, st.st_nlink);
	ASSERT_EQ(0, target_send(&t, "q"));
	EXPECT_EQ(0, target_end(&t));
}

TEST_F(memfd, a_fifo_or_memfd_held_by_another_process_is_refused)
{
	struct target t = {};
	char buf[16];

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, mkfifo(fifo_path, 0600));
	ASSERT_EQ(0, target_start(&t, shared_fifo_target));
	ASSERT_EQ(0, target_ask(&t, "s", buf, sizeof(buf)));
	EXPECT_EQ(-EOPNOTSUPP, ckpt_checkpoint_to(t.pid, self->image, 0, self->msg,
						  sizeof(self->msg), NULL));
	EXPECT_NE(NULL, strstr(self->msg, "fd 3 (FIFO /tmp/cr_memfd."))
		TH_LOG("%s", self->msg);
	EXPECT_NE(NULL, strstr(self->msg, "open in another process"))
		TH_LOG("%s", self->msg);
	ASSERT_EQ(0, target_send(&t, "q"));
	target_end(&t);

	ASSERT_EQ(0, target_start(&t, shared_memfd_target));
	ASSERT_EQ(0, target_ask(&t, "s", buf, sizeof(buf)));
	EXPECT_EQ(-EOPNOTSUPP, ckpt_checkpoint_to(t.pid, self->image, 0, self->msg,
						  sizeof(self->msg), NULL));
	EXPECT_NE(NULL, strstr(self->msg, "fd 3 (memfd shared) is open in another process"))
		TH_LOG("%s", self->msg);
	EXPECT_EQ(0, kill(t.pid, 0));
	ASSERT_EQ(0, target_send(&t, "q"));
	target_end(&t);
}

TEST_HARNESS_MAIN
