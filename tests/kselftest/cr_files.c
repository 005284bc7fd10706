// SPDX-License-Identifier: GPL-2.0
/*
 * Open regular files survive a checkpoint and restart: at the same
 * descriptors, with the same access mode, O_APPEND, position and
 * close-on-exec flag. Their content is what the files hold (as with shared
 * file mappings). Descriptors of other kinds are still refused (cr_errors).
 */
#define _GNU_SOURCE

#include <dirent.h>
#include <poll.h>
#include <pthread.h>
#include <sys/inotify.h>
#include <sys/sysmacros.h>

#include "kselftest_harness.h"
#include "ckpt_test.h"

static char log_path[64], data_path[64];

/*
 * fd 3: a log opened O_WRONLY | O_APPEND; fd 7: a data file opened O_RDWR,
 * close-on-exec, at a position that moves as the target writes.
 */
static void files_target(void)
{
	char c, line[64];
	int log, data, fd;

	log = open(log_path, O_WRONLY | O_APPEND | O_CREAT, 0600);
	fd = open(data_path, O_RDWR | O_CLOEXEC);
	if (log != 3 || fd < 0 || dup3(fd, 7, O_CLOEXEC) != 7)
		_exit(9);
	close(fd);
	data = 7;
	lseek(data, 100, SEEK_SET);

	for (;;) {
		if (read(0, &c, 1) != 1)
			_exit(3);
		switch (c) {
		case 's':
			if (write(log, "step\n", 5) != 5 || write(data, "D", 1) != 1)
				_exit(8);
			break;
		case 'p':
			snprintf(line, sizeof(line), "%ld %d %d %d\n",
				 (long)lseek(data, 0, SEEK_CUR),
				 fcntl(log, F_GETFL) & (O_ACCMODE | O_APPEND),
				 fcntl(data, F_GETFL) & O_ACCMODE,
				 fcntl(data, F_GETFD) & FD_CLOEXEC);
			if (write(1, line, strlen(line)) < 0)
				_exit(8);
			break;
		case 'q':
			_exit(0);
		}
	}
}

/* fd 3: a file of the root file system (overlayfs over 9p in the VM). */
static void root_file_target(void)
{
	char c, line[32];
	int fd = open("/etc/os-release", O_RDONLY);

	if (fd != 3 || read(fd, line, 10) != 10)
		_exit(9);
	for (;;) {
		if (read(0, &c, 1) != 1)
			_exit(3);
		if (c == 'q')
			_exit(0);
		snprintf(line, sizeof(line), "%ld\n", (long)lseek(fd, 0, SEEK_CUR));
		if (write(1, line, strlen(line)) < 0)
			_exit(8);
	}
}

static char dir_path[64];

/*
 * Working directory dir_path; fd 3 that directory, one entry read; fd 4
 * /dev/null for writing; fd 5 /dev/urandom, non-blocking, close-on-exec.
 */
static void dir_dev_target(void)
{
	char c, line[256], cwd[128], ent[512];
	struct stat st4, st5;
	int n;

	if (chdir(dir_path) || open(".", O_RDONLY | O_DIRECTORY) != 3 ||
	    open("/dev/null", O_WRONLY) != 4 ||
	    open("/dev/urandom", O_RDONLY | O_NONBLOCK | O_CLOEXEC) != 5 ||
	    syscall(SYS_getdents64, 3, ent, 40) <= 0)
		_exit(9);
	for (;;) {
		if (read(0, &c, 1) != 1)
			_exit(3);
		if (c == 'q')
			_exit(0);
		if (!getcwd(cwd, sizeof(cwd)) || fstat(4, &st4) || fstat(5, &st5) ||
		    write(4, "x", 1) != 1 || read(5, ent, 16) != 16)
			_exit(8);
		/* The rest of the directory, from where it was. */
		n = 0;
		while (syscall(SYS_getdents64, 3, ent, 40) > 0)
			n++;
		lseek(3, 0, SEEK_SET);
		syscall(SYS_getdents64, 3, ent, 40);
		snprintf(line, sizeof(line), "%s %d %d:%d %d:%d %o %o %d\n", cwd, n,
			 major(st4.st_rdev), minor(st4.st_rdev),
			 major(st5.st_rdev), minor(st5.st_rdev),
			 fcntl(4, F_GETFL) & O_ACCMODE,
			 fcntl(5, F_GETFL) & (O_ACCMODE | O_NONBLOCK),
			 fcntl(5, F_GETFD) & FD_CLOEXEC);
		if (write(1, line, strlen(line)) < 0)
			_exit(8);
	}
}

/* Only a working directory, no descriptor on it. */
static void cwd_target(void)
{
	char c;

	if (chdir(dir_path))
		_exit(9);
	for (;;) {
		if (read(0, &c, 1) != 1)
			_exit(3);
		if (c == 'q')
			_exit(0);
		if (write(1, "here\n", 5) != 5)
			_exit(8);
	}
}

/*
 * Views of the kernel: fd 3 /proc/vmstat, 64 bytes read, as vmstat keeps
 * it; fd 4 /proc/self/stat (its own /proc/PID file); fd 5 a sysfs file;
 * fd 6 the directory /proc/self/fd. Each 'p' reads them again from the
 * start: "POS OWN SYS DIR", 1 for each that shows what it should.
 */
static void views_target(void)
{
	char c, line[64], buf[512], fresh[512];
	int fd, n, m, sys, dir;

	if (open("/proc/vmstat", O_RDONLY) != 3 || read(3, buf, 64) != 64 ||
	    open("/proc/self/stat", O_RDONLY) != 4 ||
	    open("/sys/devices/system/cpu/online", O_RDONLY) != 5 ||
	    open("/proc/self/fd", O_RDONLY | O_DIRECTORY) != 6)
		_exit(9);
	for (;;) {
		if (read(0, &c, 1) != 1)
			_exit(3);
		if (c == 'q')
			_exit(0);
		n = pread(4, buf, sizeof(buf) - 1, 0);
		buf[n > 0 ? n : 0] = 0;
		snprintf(line, sizeof(line), "%ld %d", (long)lseek(3, 0, SEEK_CUR),
			 atoi(buf) == getpid());
		n = pread(3, buf, sizeof(buf), 0);
		if (n < 13 || memcmp(buf, "nr_free_pages", 13))
			_exit(8);
		n = pread(5, buf, sizeof(buf), 0);
		fd = open("/sys/devices/system/cpu/online", O_RDONLY);
		m = fd < 0 ? -1 : read(fd, fresh, sizeof(fresh));
		close(fd);
		sys = n > 0 && n == m && !memcmp(buf, fresh, n);
		dir = lseek(6, 0, SEEK_SET) == 0 &&
		      syscall(SYS_getdents64, 6, buf, sizeof(buf)) > 0;
		snprintf(line + strlen(line), sizeof(line) - strlen(line),
			 " %d %d\n", sys, dir);
		if (write(1, line, strlen(line)) < 0)
			_exit(8);
	}
}

/* fd 3: the parent's /proc/PID/stat. */
static void parent_view_target(void)
{
	char c, path[64];

	snprintf(path, sizeof(path), "/proc/%d/stat", getppid());
	if (open(path, O_RDONLY) != 3)
		_exit(9);
	for (;;) {
		if (read(0, &c, 1) != 1)
			_exit(3);
		if (c == 'q')
			_exit(0);
		if (write(1, "here\n", 5) != 5)
			_exit(8);
	}
}

/* fd 3: /proc/self/task/TID/stat of a second thread. */
static void thread_view_target(void)
{
	char c, path[64];
	pthread_t th;
	int tid = 0, i;

	if (pthread_create(&th, NULL, ckpt_idle_thread, NULL))
		_exit(9);
	for (i = 0; i < 100 && !tid; i++) {
		DIR *d = opendir("/proc/self/task");
		struct dirent *e;

		while (d && (e = readdir(d)))
			if (atoi(e->d_name) > 0 && atoi(e->d_name) != getpid())
				tid = atoi(e->d_name);
		if (d)
			closedir(d);
		usleep(10000);
	}
	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	if (!tid || open(path, O_RDONLY) != 3)
		_exit(9);
	for (;;) {
		if (read(0, &c, 1) != 1)
			_exit(3);
		if (c == 'q')
			_exit(0);
		if (write(1, "here\n", 5) != 5)
			_exit(8);
	}
}

static char ino_dir[64];

/* Every event queued on @fd within 1 s of the first: " WD:MASK" each. */
static void read_events(int fd, char *out, size_t len)
{
	char buf[4096] __attribute__((aligned(8)));
	struct pollfd p = { .fd = fd, .events = POLLIN };
	ssize_t n, k;

	*out = 0;
	while (poll(&p, 1, *out ? 200 : 1000) == 1) {
		n = read(fd, buf, sizeof(buf));
		for (k = 0; k < n;) {
			struct inotify_event *e = (void *)(buf + k);

			snprintf(out + strlen(out), len - strlen(out), " %d:%x",
				 e->wd, e->mask);
			k += sizeof(*e) + e->len;
		}
		if (n <= 0)
			break;
	}
}

/*
 * fd 3 an inotify instance: wd 1 on ino_dir/f (IN_MODIFY), wd 2 on the
 * directory (IN_CREATE | IN_DELETE), wd 3 removed, wd 4 on ino_dir/g
 * (IN_CLOSE_WRITE | IN_ONESHOT). Each 'p' writes f, makes and removes x,
 * writes g twice, and prints the events, then the number a new watch gets
 * (removed again, its events read away).
 */
static void inotify_target(void)
{
	char c, path[128], line[256], ev[200];
	int fd, wd;

	snprintf(path, sizeof(path), "%s/f", ino_dir);
	if (inotify_init1(0) != 3 || inotify_add_watch(3, path, IN_MODIFY) != 1 ||
	    inotify_add_watch(3, ino_dir, IN_CREATE | IN_DELETE) != 2)
		_exit(9);
	snprintf(path, sizeof(path), "%s/h", ino_dir);
	if (inotify_add_watch(3, path, IN_ATTRIB) != 3 || inotify_rm_watch(3, 3))
		_exit(9);
	read_events(3, ev, sizeof(ev));
	snprintf(path, sizeof(path), "%s/g", ino_dir);
	if (inotify_add_watch(3, path, IN_CLOSE_WRITE | IN_ONESHOT) != 4)
		_exit(9);
	for (;;) {
		if (read(0, &c, 1) != 1)
			_exit(3);
		if (c == 'q')
			_exit(0);
		if (c == 'r') {
			if (write(1, "ready\n", 6) != 6)
				_exit(8);
			continue;
		}
		snprintf(path, sizeof(path), "%s/f", ino_dir);
		fd = open(path, O_WRONLY | O_APPEND);
		if (fd < 0 || write(fd, "f", 1) != 1)
			_exit(8);
		close(fd);
		snprintf(path, sizeof(path), "%s/x", ino_dir);
		close(open(path, O_CREAT | O_WRONLY, 0600));
		unlink(path);
		read_events(3, ev, sizeof(ev));
		snprintf(line, sizeof(line), "%s |", ev);
		/* The one-shot watch: fires once per process lifetime. */
		snprintf(path, sizeof(path), "%s/g", ino_dir);
		close(open(path, O_WRONLY));
		close(open(path, O_WRONLY));
		read_events(3, ev, sizeof(ev));
		snprintf(path, sizeof(path), "%s/h", ino_dir);
		wd = inotify_add_watch(3, path, IN_ATTRIB);
		snprintf(line + strlen(line), sizeof(line) - strlen(line),
			 "%s | %d\n", ev, wd);
		inotify_rm_watch(3, wd);
		read_events(3, ev, sizeof(ev));
		if (write(1, line, strlen(line)) < 0)
			_exit(8);
	}
}

/* fd 3 inotify, wd 1 on ino_dir/f; IN_MODIFY events left unread on 'e'. */
static void inotify_unread_target(void)
{
	char c, path[128], ev[200];
	int fd;

	snprintf(path, sizeof(path), "%s/f", ino_dir);
	if (inotify_init1(0) != 3 || inotify_add_watch(3, path, IN_MODIFY) != 1)
		_exit(9);
	for (;;) {
		if (read(0, &c, 1) != 1)
			_exit(3);
		if (c == 'q')
			_exit(0);
		if (c == 'e') {
			fd = open(path, O_WRONLY | O_APPEND);
			if (fd < 0 || write(fd, "e", 1) != 1)
				_exit(8);
			close(fd);
		} else {
			read_events(3, ev, sizeof(ev));
		}
		if (write(1, "here\n", 5) != 5)
			_exit(8);
	}
}

/* fd 3 inotify watching fd 4's file, which is then unlinked. */
static void inotify_deleted_target(void)
{
	char c, path[128];

	snprintf(path, sizeof(path), "%s/d", ino_dir);
	if (inotify_init1(0) != 3 ||
	    open(path, O_RDWR | O_CREAT, 0600) != 4 ||
	    inotify_add_watch(3, path, IN_MODIFY) != 1 || unlink(path))
		_exit(9);
	for (;;) {
		if (read(0, &c, 1) != 1)
			_exit(3);
		if (c == 'q')
			_exit(0);
		if (write(1, "here\n", 5) != 5)
			_exit(8);
	}
}

/* Blocked in poll() on its standard input, no timeout, no handler. */
static void poll_target(void)
{
	struct pollfd p = { .fd = 0, .events = POLLIN };
	char c;

	for (;;) {
		if (poll(&p, 1, -1) < 0) {
			if (write(1, "poll failed\n", 12) != 12)
				_exit(8);
			_exit(7);
		}
		if (read(0, &c, 1) != 1)
			_exit(3);
		if (c == 'q')
			_exit(0);
		if (write(1, "here\n", 5) != 5)
			_exit(8);
	}
}

/* Whether @pid is blocked in poll() (its /proc/PID/syscall), within 5 s. */
static bool in_poll(pid_t pid)
{
	char path[64], buf[64] = "";
	int i, fd;

	snprintf(path, sizeof(path), "/proc/%d/syscall", pid);
	for (i = 0; i < 500; i++) {
		fd = open(path, O_RDONLY);
		if (fd >= 0 && read(fd, buf, sizeof(buf) - 1) > 0 &&
		    (atoi(buf) == SYS_poll || atoi(buf) == SYS_restart_syscall)) {
			close(fd);
			return true;
		}
		if (fd >= 0)
			close(fd);
		usleep(10000);
	}
	return false;
}

static long file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) ? -1 : st.st_size;
}

FIXTURE(files) {
	char image[64];
};

FIXTURE_SETUP(files)
{
	const char *path = ckpt_module_path();
	char zeros[4096] = {};
	int fd;

	if (!path)
		SKIP(return, "CKPT_MODULE does not name a readable ckpt.ko");
	if (!ckpt_module_loaded())
		ASSERT_EQ(0, ckpt_load_module(path));
	snprintf(self->image, sizeof(self->image), "/tmp/cr_files.%d.img", getpid());
	snprintf(log_path, sizeof(log_path), "/tmp/cr_files.%d.log", getpid());
	snprintf(data_path, sizeof(data_path), "/tmp/cr_files.%d.dat", getpid());
	unlink(log_path);
	fd = open(data_path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	ASSERT_LE(0, fd);
	ASSERT_EQ((ssize_t)sizeof(zeros), write(fd, zeros, sizeof(zeros)));
	close(fd);
}

FIXTURE_TEARDOWN(files)
{
	unlink(self->image);
	unlink(log_path);
	unlink(data_path);
}

TEST_F(files, reopened_where_they_were)
{
	struct target t = {};
	char before[64], after[64], msg[256];
	int status;

	CKPT_SETUP_SKIPPED();

	ASSERT_EQ(0, target_start(&t, files_target));
	ASSERT_EQ(0, target_send(&t, "ss"));
	ASSERT_EQ(0, target_ask(&t, "p", before, sizeof(before)));
	/* position 102, log O_WRONLY|O_APPEND, data O_RDWR, cloexec */
	EXPECT_STREQ("102 1025 2 1", before);

	ASSERT_EQ(0, ckpt_checkpoint_to(t.pid, self->image, CKPT_CHECKPOINT_KILL,
					msg, sizeof(msg), NULL)) TH_LOG("%s", msg);
	status = target_end(&t);
	ASSERT_TRUE(WIFSIGNALED(status));
	EXPECT_EQ(10L, file_size(log_path));

	ASSERT_EQ(0, target_restart(&t, self->image));
	ASSERT_EQ(0, target_ask(&t, "p", after, sizeof(after)));
	EXPECT_STREQ(before, after);
	/* It writes on where it was: one more byte of data, one more line. */
	ASSERT_EQ(0, target_send(&t, "s"));
	ASSERT_EQ(0, target_ask(&t, "p", after, sizeof(after)));
	EXPECT_STREQ("103 1025 2 1", after);
	EXPECT_EQ(15L, file_size(log_path));
	ASSERT_EQ(0, target_send(&t, "q"));
	status = target_end(&t);
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

TEST_F(files, a_replaced_file_is_refused_before_anything_runs)
{
	struct target t = {};
	char buf[64], msg[256];
	int status;

	CKPT_SETUP_SKIPPED();

	ASSERT_EQ(0, target_start(&t, files_target));
	ASSERT_EQ(0, target_ask(&t, "p", buf, sizeof(buf)));
	ASSERT_EQ(0, ckpt_checkpoint_to(t.pid, self->image, CKPT_CHECKPOINT_KILL,
					msg, sizeof(msg), NULL)) TH_LOG("%s", msg);
	target_end(&t);

	/* Another file under the same name. */
	ASSERT_EQ(0, unlink(data_path));
	ASSERT_LE(0, open(data_path, O_RDWR | O_CREAT, 0600));
	ASSERT_EQ(0, target_restart(&t, self->image));
	status = target_end(&t);
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(1, WEXITSTATUS(status));
}

/* Identity is what stat() shows, also where the inode is another's (overlay). */
TEST_F(files, a_file_of_a_stacked_file_system)
{
	struct target t = {};
	char buf[64], msg[256];
	pid_t pid;

	CKPT_SETUP_SKIPPED();

	ASSERT_EQ(0, target_start(&t, root_file_target));
	pid = t.pid;
	ASSERT_EQ(0, target_ask(&t, "p", buf, sizeof(buf)));
	EXPECT_STREQ("10", buf);
	ASSERT_EQ(0, ckpt_checkpoint_to(pid, self->image, CKPT_CHECKPOINT_KILL,
					msg, sizeof(msg), NULL)) TH_LOG("%s", msg);
	target_end(&t);
	ASSERT_EQ(0, target_restart(&t, self->image));
	ASSERT_EQ(0, target_ask(&t, "p", buf, sizeof(buf)));
	EXPECT_STREQ("10", buf);
	ASSERT_EQ(0, target_send(&t, "q"));
	EXPECT_EQ(0, target_end(&t));
}

/* Directories (with their read position), devices and the working directory. */
TEST_F(files, directories_devices_and_the_working_directory)
{
	struct target t = {};
	char before[256], after[256], msg[256], name[128];
	pid_t pid;
	int i;

	CKPT_SETUP_SKIPPED();

	snprintf(dir_path, sizeof(dir_path), "/tmp/cr_files.%d.d", getpid());
	ASSERT_EQ(0, mkdir(dir_path, 0700));
	for (i = 0; i < 8; i++) {
		snprintf(name, sizeof(name), "%s/e%d", dir_path, i);
		ASSERT_LE(0, open(name, O_CREAT | O_WRONLY, 0600));
	}
	ASSERT_EQ(0, target_start(&t, dir_dev_target));
	pid = t.pid;
	ASSERT_EQ(0, target_ask(&t, "p", before, sizeof(before)));
	ASSERT_EQ(0, ckpt_checkpoint_to(pid, self->image, CKPT_CHECKPOINT_KILL,
					msg, sizeof(msg), NULL)) TH_LOG("%s", msg);
	target_end(&t);
	ASSERT_EQ(0, target_restart(&t, self->image));
	ASSERT_EQ(0, target_ask(&t, "p", after, sizeof(after)));
	EXPECT_STREQ(before, after);
	snprintf(name, sizeof(name), "%s 9 1:3 1:9 1 4000 1", dir_path);
	EXPECT_STREQ(name, after);
	ASSERT_EQ(0, target_send(&t, "q"));
	EXPECT_EQ(0, target_end(&t));
	system("rm -rf /tmp/cr_files.*.d");
}

/* A working directory that is gone cannot be restored: refused, named. */
TEST_F(files, a_removed_working_directory_is_refused)
{
	struct target t = {};
	char buf[256], msg[256];

	CKPT_SETUP_SKIPPED();

	snprintf(dir_path, sizeof(dir_path), "/tmp/cr_files.%d.d", getpid());
	ASSERT_EQ(0, mkdir(dir_path, 0700));
	ASSERT_EQ(0, target_start(&t, cwd_target));
	ASSERT_EQ(0, target_ask(&t, "p", buf, sizeof(buf)));
	ASSERT_EQ(0, rmdir(dir_path));
	EXPECT_EQ(-EOPNOTSUPP, ckpt_checkpoint_to(t.pid, self->image, 0, msg,
						  sizeof(msg), NULL));
	EXPECT_NE(NULL, strstr(msg, "working directory")) TH_LOG("%s", msg);
	/* It went on. */
	ASSERT_EQ(0, target_ask(&t, "p", buf, sizeof(buf)));
	EXPECT_STREQ("here", buf);
	ASSERT_EQ(0, target_send(&t, "q"));
	EXPECT_EQ(0, target_end(&t));
}

/*
 * Files of /proc and /sys come back by path: their inode numbers are the
 * mount's (a restarted tree's /proc is another) and the boot's.
 */
TEST_F(files, views_of_the_kernel_by_path)
{
	struct ckpt_img_file *f;
	struct target t = {};
	char before[64], after[64], msg[256];
	unsigned int flags[4] = {};
	size_t len = 0, i;
	off_t pos = 0;
	pid_t pid;

	CKPT_SETUP_SKIPPED();

	ASSERT_EQ(0, target_start(&t, views_target));
	pid = t.pid;
	ASSERT_EQ(0, target_ask(&t, "p", before, sizeof(before)));
	EXPECT_STREQ("64 1 1 1", before);
	ASSERT_EQ(0, ckpt_checkpoint_to(pid, self->image, CKPT_CHECKPOINT_KILL,
					msg, sizeof(msg), NULL)) TH_LOG("%s", msg);
	target_end(&t);
	f = ckpt_section_payload(self->image, CKPT_SECT_FILES, &pos, &len);
	ASSERT_NE(NULL, f);
	for (i = 0; i < len / sizeof(*f); i++)
		if (f[i].fd >= 3 && f[i].fd <= 6)
			flags[f[i].fd - 3] = f[i].flags &
				(CKPT_FILE_PROCFS | CKPT_FILE_SYSFS);
	free(f);
	EXPECT_EQ((unsigned int)CKPT_FILE_PROCFS, flags[0]);
	EXPECT_EQ((unsigned int)CKPT_FILE_PROCFS, flags[1]);
	EXPECT_EQ((unsigned int)CKPT_FILE_SYSFS, flags[2]);
	EXPECT_EQ((unsigned int)CKPT_FILE_PROCFS, flags[3]);

	ASSERT_EQ(0, target_restart(&t, self->image));
	ASSERT_EQ(0, target_ask(&t, "p", after, sizeof(after)));
	EXPECT_STREQ(before, after);
	ASSERT_EQ(0, target_send(&t, "q"));
	EXPECT_EQ(0, target_end(&t));
}

/* Another process's /proc files, or another thread's: refused, named. */
TEST_F(files, another_process_or_threads_proc_file_is_refused)
{
	struct target t = {};
	char buf[64], msg[256];

	CKPT_SETUP_SKIPPED();

	ASSERT_EQ(0, target_start(&t, parent_view_target));
	ASSERT_EQ(0, target_ask(&t, "p", buf, sizeof(buf)));
	EXPECT_EQ(-EOPNOTSUPP, ckpt_checkpoint_to(t.pid, self->image, 0, msg,
						  sizeof(msg), NULL));
	EXPECT_NE(NULL, strstr(msg, "is a /proc file of another process"))
		TH_LOG("%s", msg);
	snprintf(buf, sizeof(buf), "/proc/%d/stat", getpid());
	EXPECT_NE(NULL, strstr(msg, buf)) TH_LOG("%s", msg);
	ASSERT_EQ(0, target_ask(&t, "p", buf, sizeof(buf)));
	EXPECT_STREQ("here", buf);
	ASSERT_EQ(0, target_send(&t, "q"));
	EXPECT_EQ(0, target_end(&t));

	ASSERT_EQ(0, target_start(&t, thread_view_target));
	ASSERT_EQ(0, target_ask(&t, "p", buf, sizeof(buf)));
	EXPECT_EQ(-EOPNOTSUPP, ckpt_checkpoint_to(t.pid, self->image, 0, msg,
						  sizeof(msg), NULL));
	EXPECT_NE(NULL, strstr(msg, "is a /proc file of thread"))
		TH_LOG("%s", msg);
	ASSERT_EQ(0, target_ask(&t, "p", buf, sizeof(buf)));
	EXPECT_STREQ("here", buf);
	ASSERT_EQ(0, target_send(&t, "q"));
	EXPECT_EQ(0, target_end(&t));
}

/*
 * A process blocked in poll() with no timeout polls on after the restart
 * (until stop 70 it saw EINTR: poll restarts through a restart_block),
 * also once an earlier checkpoint let it go on (through restart_syscall).
 */
TEST_F(files, poll_without_a_timeout_goes_on)
{
	struct target t = {};
	char buf[64], msg[256];

	CKPT_SETUP_SKIPPED();

	ASSERT_EQ(0, target_start(&t, poll_target));
	ASSERT_EQ(0, target_ask(&t, "p", buf, sizeof(buf)));
	EXPECT_STREQ("here", buf);
	ASSERT_TRUE(in_poll(t.pid));
	ASSERT_EQ(0, ckpt_checkpoint_to(t.pid, self->image, 0, msg, sizeof(msg),
					NULL)) TH_LOG("%s", msg);
	ASSERT_TRUE(in_poll(t.pid));
	ASSERT_EQ(0, ckpt_checkpoint_to(t.pid, self->image, CKPT_CHECKPOINT_KILL,
					msg, sizeof(msg), NULL)) TH_LOG("%s", msg);
	target_end(&t);
	ASSERT_EQ(0, target_restart(&t, self->image));
	ASSERT_EQ(0, target_ask(&t, "p", buf, sizeof(buf)));
	EXPECT_STREQ("here", buf);
	ASSERT_EQ(0, target_send(&t, "q"));
	EXPECT_EQ(0, target_end(&t));
}

static void make_ino_dir(void)
{
	char path[128];

	snprintf(ino_dir, sizeof(ino_dir), "/tmp/cr_files.%d.i", getpid());
	mkdir(ino_dir, 0700);
	snprintf(path, sizeof(path), "%s/f", ino_dir);
	close(open(path, O_CREAT | O_WRONLY, 0600));
	snprintf(path, sizeof(path), "%s/g", ino_dir);
	close(open(path, O_CREAT | O_WRONLY, 0600));
	snprintf(path, sizeof(path), "%s/h", ino_dir);
	close(open(path, O_CREAT | O_WRONLY, 0600));
}

/*
 * An inotify instance comes back with its watches at their numbers (one
 * number skipped), their masks (a one-shot one that has not fired) and
 * the number the next watch gets: the events after the restart are the
 * ones an uninterrupted run reads.
 */
TEST_F(files, inotify_watches_come_back_with_their_numbers)
{
	struct ckpt_img_inotify *w;
	struct ckpt_img_file *f;
	struct target t = {};
	char before[256], after[256], msg[256], want[128];
	size_t len = 0, i, nr;
	off_t pos = 0;
	__u64 next = 0;
	pid_t pid;

	CKPT_SETUP_SKIPPED();

	make_ino_dir();
	ASSERT_EQ(0, target_start(&t, inotify_target));
	pid = t.pid;
	ASSERT_EQ(0, target_ask(&t, "r", before, sizeof(before)));
	EXPECT_STREQ("ready", before);
	ASSERT_EQ(0, ckpt_checkpoint_to(pid, self->image, CKPT_CHECKPOINT_KILL,
					msg, sizeof(msg), NULL)) TH_LOG("%s", msg);
	target_end(&t);
	f = ckpt_section_payload(self->image, CKPT_SECT_FILES, &pos, &len);
	ASSERT_NE(NULL, f);
	for (i = 0; i < len / sizeof(*f); i++)
		if (f[i].fd == 3 && f[i].kind == CKPT_FILE_INOTIFY)
			next = f[i].pos;
	free(f);
	EXPECT_EQ(5ULL, (unsigned long long)next);
	w = ckpt_section_payload(self->image, CKPT_SECT_INOTIFY, &pos, &len);
	ASSERT_NE(NULL, w);
	nr = len / sizeof(*w);
	ASSERT_EQ(3U, (unsigned int)nr);
	EXPECT_EQ(1, w[0].wd);
	EXPECT_EQ(2, w[1].wd);
	EXPECT_EQ(4, w[2].wd);
	EXPECT_EQ((__u32)(IN_CLOSE_WRITE | IN_ONESHOT), w[2].mask);
	snprintf(want, sizeof(want), "%s/g", ino_dir);
	EXPECT_STREQ(want, w[2].path);
	free(w);

	ASSERT_EQ(0, target_restart(&t, self->image));
	ASSERT_EQ(0, target_ask(&t, "p", after, sizeof(after)));
	/* f modified; x made and removed; g closed once (one-shot); 5 next. */
	snprintf(before, sizeof(before), " 1:%x 2:%x 2:%x | 4:%x 4:%x | 5",
		 IN_MODIFY, IN_CREATE, IN_DELETE, IN_CLOSE_WRITE, IN_IGNORED);
	EXPECT_STREQ(before, after);
	ASSERT_EQ(0, target_send(&t, "q"));
	EXPECT_EQ(0, target_end(&t));
	system("rm -rf /tmp/cr_files.*.i");
}

/*
 * Events unread cannot be queued again: EAGAIN, named, the process runs
 * on; once read, the checkpoint goes through. A watch on a deleted file
 * is refused by name.
 */
TEST_F(files, inotify_events_unread_or_a_deleted_file_are_refused)
{
	struct target t = {};
	char buf[64], msg[256];

	CKPT_SETUP_SKIPPED();

	make_ino_dir();
	ASSERT_EQ(0, target_start(&t, inotify_unread_target));
	ASSERT_EQ(0, target_ask(&t, "e", buf, sizeof(buf)));
	EXPECT_EQ(-EAGAIN, ckpt_checkpoint_to(t.pid, self->image, 0, msg,
					      sizeof(msg), NULL));
	EXPECT_NE(NULL, strstr(msg, "fd 3 (inotify) has 1 events unread; try again"))
		TH_LOG("%s", msg);
	ASSERT_EQ(0, target_ask(&t, "r", buf, sizeof(buf)));
	EXPECT_STREQ("here", buf);
	EXPECT_EQ(0, ckpt_checkpoint_to(t.pid, self->image, 0, msg,
					sizeof(msg), NULL)) TH_LOG("%s", msg);
	ASSERT_EQ(0, target_send(&t, "q"));
	EXPECT_EQ(0, target_end(&t));

	ASSERT_EQ(0, target_start(&t, inotify_deleted_target));
	ASSERT_EQ(0, target_ask(&t, "p", buf, sizeof(buf)));
	EXPECT_EQ(-EOPNOTSUPP, ckpt_checkpoint_to(t.pid, self->image, 0, msg,
						  sizeof(msg), NULL));
	EXPECT_NE(NULL, strstr(msg, "fd 3 (inotify) watch 1: inode "))
		TH_LOG("%s", msg);
	EXPECT_NE(NULL, strstr(msg, "is deleted, or under no mount the checkpointer sees"))
		TH_LOG("%s", msg);
	ASSERT_EQ(0, target_ask(&t, "p", buf, sizeof(buf)));
	EXPECT_STREQ("here", buf);
	ASSERT_EQ(0, target_send(&t, "q"));
	EXPECT_EQ(0, target_end(&t));
	system("rm -rf /tmp/cr_files.*.i");
}

TEST_HARNESS_MAIN
