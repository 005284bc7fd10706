/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the engine's kselftest programs. Include after
 * kselftest_harness.h.
 */
#ifndef _CKPT_TEST_H
#define _CKPT_TEST_H

/*
 * The bound of every test that names none (kselftest_harness.h, included
 * before this file, has 30 s): a guard against a hang, not a speed. make
 * check runs the debug kernel's suite beside the distro kernels', and
 * there slow tests under TCG ran past 30 s.
 */
#ifdef TEST_TIMEOUT_DEFAULT
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 120
#endif

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/ckpt.h>
#include <linux/ckpt_image.h>

/*
 * The 6.1 harness runs a test's body even when its fixture setup called
 * SKIP(); every TEST_F body that relies on setup starts with this.
 */
#define CKPT_SETUP_SKIPPED() \
	do { \
		if (_metadata->skip) \
			return; \
	} while (0)

/* The ckpt.ko for the running kernel, named by the VM harness. */
/*
 * /proc/PID/stat (PID 0: self) into @buf: a pointer to its third field,
 * the state, past the command name (which may hold spaces and ')'), or
 * NULL when the process is gone.
 */
static inline char *ckpt_proc_stat(pid_t pid, char *buf, size_t len)
{
	char path[64], *p;
	ssize_t n;
	int fd;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	else
		snprintf(path, sizeof(path), "/proc/self/stat");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] ? p + 2 : NULL;
}

static inline const char *ckpt_module_path(void)
{
	const char *path = getenv("CKPT_MODULE");

	return path && !access(path, R_OK) ? path : NULL;
}

static inline int ckpt_load_module(const char *path)
{
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = syscall(SYS_finit_module, fd, "", 0) ? -errno : 0;
	close(fd);
	return ret;
}

static inline int ckpt_unload_module(void)
{
	return syscall(SYS_delete_module, "ckpt", O_NONBLOCK) ? -errno : 0;
}

static inline bool ckpt_module_loaded(void)
{
	return access("/sys/module/ckpt", F_OK) == 0;
}

/*
 * A target: a process the test drives through a pipe on its stdin and
 * reads through a pipe on its stdout. Targets hold no other descriptors,
 * so the engine can checkpoint them. After a restart, the same pipes are
 * the restarter's (ckpt restart), whose stdio the process re-attaches to.
 */
struct target {
	pid_t pid;
	int in;		/* write commands here */
	int out;	/* read lines here */
};

/*
 * Runs @fn, or execs @restart_argv after @setup (if any) in the child, as
 * a target.
 */
static inline int target_spawn_after(struct target *t, void (*fn)(void),
				     char *const restart_argv[],
				     void (*setup)(void))
{
	int in[2], out[2];

	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC))
		return -errno;
	t->pid = fork();
	if (t->pid < 0)
		return -errno;
	if (!t->pid) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		if (restart_argv) {
			if (setup)
				setup();
			execvp(restart_argv[0], restart_argv);
			_exit(127);
		}
		syscall(SYS_close_range, 3, ~0U, 0);
		/* Only now is the target fit to be checkpointed. */
		if (write(1, "ready\n", 6) != 6)
			_exit(126);
		fn();
		_exit(0);
	}
	close(in[0]);
	close(out[1]);
	t->in = in[1];
	t->out = out[0];
	return 0;
}

static inline int target_spawn(struct target *t, void (*fn)(void),
			       char *const restart_argv[])
{
	return target_spawn_after(t, fn, restart_argv, NULL);
}

static inline int target_line(struct target *t, char *buf, size_t size);

/* Starts @fn in a new target, once it holds nothing but its stdio. */
static inline int target_start(struct target *t, void (*fn)(void))
{
	char buf[16];
	int ret = target_spawn(t, fn, NULL);

	if (!ret)
		ret = target_line(t, buf, sizeof(buf));
	if (!ret && strcmp(buf, "ready"))
		ret = -EPROTO;
	return ret;
}

/* Runs "ckpt restart IMAGE" as a target, after @setup (if any). */
static inline int target_restart_after(struct target *t, const char *image,
				       void (*setup)(void))
{
	char *argv[] = { "ckpt", "restart", (char *)image, NULL };

	return target_spawn_after(t, NULL, argv, setup);
}

static inline int target_restart(struct target *t, const char *image)
{
	return target_restart_after(t, image, NULL);
}

static inline int target_send(struct target *t, const char *cmd)
{
	size_t len = strlen(cmd);

	return write(t->in, cmd, len) == (ssize_t)len ? 0 : -EIO;
}

/* Reads one line (without its newline), waiting at most 120 s. */
static inline int target_line(struct target *t, char *buf, size_t size)
{
	struct pollfd p = { .fd = t->out, .events = POLLIN };
	size_t n = 0;

	while (n + 1 < size) {
		if (poll(&p, 1, 120000) != 1)
			return -ETIMEDOUT;
		if (read(t->out, buf + n, 1) != 1)
			return -EPIPE;
		if (buf[n] == '\n')
			break;
		n++;
	}
	buf[n] = '\0';
	return 0;
}

/* Sends a command and reads the line it answers with. */
static inline int target_ask(struct target *t, const char *cmd, char *buf,
			     size_t size)
{
	int ret = target_send(t, cmd);

	return ret ? ret : target_line(t, buf, size);
}

/* Closes the target's stdin and returns its wait status. */
static inline int target_end(struct target *t)
{
	int status = -1;

	close(t->in);
	close(t->out);
	waitpid(t->pid, &status, 0);
	return status;
}

/*
 * Checkpoints @pid into a new file @image through the engine's ioctl.
 * Returns 0 or -errno; @msg gets the engine's message.
 */
static inline int ckpt_checkpoint_to(pid_t pid, const char *image,
				     unsigned int flags, char *msg, size_t len,
				     struct ckpt_checkpoint *out)
{
	struct ckpt_checkpoint a = {
		.pid = pid,
		.flags = flags,
		.errmsg = (unsigned long)msg,
		.errmsg_len = len,
	};
	int dev, fd, ret = 0;

	if (msg && len)
		msg[0] = '\0';
	dev = open("/dev/ckpt", O_RDWR | O_CLOEXEC);
	if (dev < 0)
		return -errno;
	fd = open(image, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		ret = -errno;
		close(dev);
		return ret;
	}
	a.fd = fd;
	if (ioctl(dev, CKPT_IOC_CHECKPOINT, &a))
		ret = -errno;
	close(fd);
	close(dev);
	if (out)
		*out = a;
	return ret;
}

/*
 * Checkpoints @pid into @image and kills it, reaps @t (the target or the
 * restarter it runs under) and restarts the image as @t. 0 or -errno, with
 * the engine's message in @msg.
 */
static inline int target_cycle(struct target *t, pid_t pid, const char *image,
			       char *msg, size_t len)
{
	int ret = ckpt_checkpoint_to(pid, image, CKPT_CHECKPOINT_KILL, msg, len,
				     NULL);

	if (ret)
		return ret;
	target_end(t);
	return target_restart(t, image);
}

/*
 * Runs "ckpt restart [ARG] IMAGE", after @setup (if any) in the child;
 * returns its status, stderr in @err.
 */
static inline int ckpt_run_restart_after(void (*setup)(void),
					 const char *image, const char *arg,
					 char *err, size_t len)
{
	int pipefd[2], status = -1;
	ssize_t n;
	pid_t pid;

	if (pipe(pipefd))
		return -1;
	pid = fork();
	if (!pid) {
		int null = open("/dev/null", O_RDWR);

		dup2(null, 0);
		dup2(null, 1);
		dup2(pipefd[1], 2);
		if (setup)
			setup();
		if (arg)
			execlp("ckpt", "ckpt", "restart", arg, image, NULL);
		else
			execlp("ckpt", "ckpt", "restart", image, NULL);
		_exit(127);
	}
	close(pipefd[1]);
	n = read(pipefd[0], err, len - 1);
	err[n > 0 ? n : 0] = '\0';
	close(pipefd[0]);
	waitpid(pid, &status, 0);
	return status;
}

static inline int ckpt_run_restart(const char *image, const char *arg,
				   char *err, size_t len)
{
	return ckpt_run_restart_after(NULL, image, arg, err, len);
}

/* Flips one byte of a file at @off (from the end when negative). */
static inline int flip_byte(const char *path, off_t off)
{
	int fd = open(path, O_RDWR), ret = -1;
	unsigned char c;
	struct stat st;

	if (fd < 0)
		return -1;
	if (!fstat(fd, &st)) {
		if (off < 0)
			off += st.st_size;
		c = 0;
		if (pread(fd, &c, 1, off) == 1) {
			c ^= 0x5a;
			if (pwrite(fd, &c, 1, off) == 1)
				ret = 0;
		}
	}
	return close(fd) ? -1 : ret;
}

/*
 * Where the last section of @type (its header) is in @image, and its
 * payload length, as "ckpt inspect -v" lists them: 0, or -1 if none.
 */
static inline int ckpt_last_section(const char *image, const char *type,
				    unsigned long long *off,
				    unsigned long long *len)
{
	char cmd[256], line[256], t[16];
	unsigned long long o, l;
	int found = -1;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "ckpt inspect -v '%s'", image);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, " %*u %15s at %llu, %llu bytes", t, &o, &l) == 3 &&
		    !strcmp(t, type)) {
			*off = o;
			*len = l;
			found = 0;
		}
	return pclose(f) ? -1 : found;
}

/*
 * The plainest target: 's' steps a counter, 'p' prints it, 'q' quits; it
 * exits 3 when its input ends.
 */
static inline void counter_target(void)
{
	unsigned long n = 0;
	char c;

	for (;;) {
		if (read(0, &c, 1) != 1)
			_exit(3);
		if (c == 's')
			n++;
		if (c == 'p') {
			printf("%lu\n", n);
			fflush(stdout);
		}
		if (c == 'q')
			_exit(0);
	}
}

static inline void *ckpt_idle_thread(void *arg)
{
	for (;;)
		pause();
	return arg;
}

/* How ckpt_engine_restart() calls the engine. */
struct ckpt_engine_restart {
	unsigned int nr_threads;	/* the image's; the others never arrive */
	unsigned int flags;		/* CKPT_RESTART_* */
	int (*obj)(void);		/* made as root: obj_fds[0], if set */
	void (*setup)(void);		/* then run, if set */
	void (*helper)(void);		/* a helper runs it, hands its creds over */
};

/*
 * CKPT_IOC_RESTART of @image in a child that opened it (and /dev/ckpt)
 * as root, made its other threads and ran @o's steps: the errno (0 if it
 * succeeded, which it cannot: the child has another pid than the image)
 * and the engine's message in @msg.
 */
static inline int ckpt_engine_restart(const char *image,
				      const struct ckpt_engine_restart *o,
				      char *msg, size_t size)
{
	int p[2], status = -1;
	pid_t pid;
	ssize_t n;

	if (pipe(p))
		return -1;
	pid = fork();
	if (!pid) {
		struct ckpt_restart r = {
			.nr_threads = o->nr_threads, .err_fd = -1,
			.flags = o->flags,
		};
		char m[512] = "";
		int dev, ret, ofd = -1;
		unsigned int i;
		pthread_t th;

		dev = open("/dev/ckpt", O_RDWR);
		r.fd = open(image, O_RDONLY);
		if (o->obj) {
			ofd = o->obj();
			r.obj_fds = (unsigned long)&ofd;
			r.nr_obj_fds = 1;
		}
		r.errmsg = (unsigned long)m;
		r.errmsg_len = sizeof(m);
		if (dev < 0 || r.fd < 0 || (o->obj && ofd < 0))
			_exit(100);
		for (i = 1; i < o->nr_threads; i++)
			if (pthread_create(&th, NULL, ckpt_idle_thread, NULL))
				_exit(100);
		if (o->setup)
			o->setup();
		if (o->helper) {
			pid_t h = fork();

			if (!h) {
				o->helper();
				_exit(ioctl(dev, CKPT_IOC_RESTART_CREDS, 0) ? 101 : 0);
			}
			if (waitpid(h, &status, 0) != h || status)
				_exit(102);
		}
		ret = ioctl(dev, CKPT_IOC_RESTART, &r) ? errno : 0;
		if (write(p[1], m, strlen(m)) < 0)
			_exit(103);
		_exit(ret);
	}
	close(p[1]);
	n = read(p[0], msg, size - 1);
	msg[n > 0 ? n : 0] = '\0';
	close(p[0]);
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* kmod/ckpt/csum.c, linked into every test program: a section's checksum. */
__u32 ckpt_csum(const void *buf, unsigned long len);

/*
 * The payload of section @nth (from 0) of @type in @image (malloc()ed, its
 * length in *@len) and where its header is in *@pos, or NULL.
 */
static inline void *ckpt_section_payload_nth(const char *image, __u32 type,
					     unsigned int nth, off_t *pos,
					     size_t *len)
{
	int fd = open(image, O_RDONLY | O_CLOEXEC);
	struct ckpt_sect s;
	void *buf = NULL;
	off_t at = 0;

	if (fd < 0)
		return NULL;
	while (pread(fd, &s, sizeof(s), at) == sizeof(s)) {
		if (s.type != type || nth--) {
			at += sizeof(s) + s.len + (-s.len & 7);
			continue;
		}
		buf = s.len < (1 << 26) ? malloc(s.len) : NULL;
		if (buf && pread(fd, buf, s.len, at + sizeof(s)) != (ssize_t)s.len) {
			free(buf);
			buf = NULL;
		}
		*pos = at;
		*len = s.len;
		break;
	}
	close(fd);
	return buf;
}

/* The first section of @type in @image: as above. */
static inline void *ckpt_section_payload(const char *image, __u32 type,
					 off_t *pos, size_t *len)
{
	return ckpt_section_payload_nth(image, type, 0, pos, len);
}

/*
 * Writes @payload (edited from ckpt_section_payload()) back as the section
 * at @pos of @image, with its checksums made right again: what the edit
 * did is then found, if at all, only by the checks behind the checksums.
 */
static inline int ckpt_section_rewrite(const char *image, off_t pos,
				       const void *payload, size_t len)
{
	int fd = open(image, O_RDWR | O_CLOEXEC), ret = -1;
	struct ckpt_sect s;

	if (fd < 0)
		return -1;
	if (pread(fd, &s, sizeof(s), pos) == sizeof(s) && s.len == len) {
		s.csum = ckpt_csum(payload, len);
		s.hcsum = 0;
		s.hcsum = ckpt_csum(&s, sizeof(s));
		if (pwrite(fd, payload, len, pos + sizeof(s)) == (ssize_t)len &&
		    pwrite(fd, &s, sizeof(s), pos) == sizeof(s))
			ret = 0;
	}
	return close(fd) ? -1 : ret;
}

#define FNV_OFFSET	0xcbf29ce484222325ULL

/* FNV-1a of @len bytes at @p, continuing from @h (FNV_OFFSET to start). */
static inline uint64_t fnv(uint64_t h, const void *p, size_t len)
{
	const unsigned char *c = p;

	while (len--)
		h = (h ^ *c++) * 0x100000001b3ULL;
	return h;
}

/* In a target: one line on standard output (to the test), or exit 8. */
static inline void __attribute__((format(printf, 1, 2)))
target_say(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0 || n > (int)sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	if (write(1, line, n) != n)
		_exit(8);
}

/*
 * In a target: serves the test's one-letter commands on standard input.
 * 'p' runs @probe, which reports with target_say(); 's' answers "set";
 * 'q' exits 0, a closed standard input 3. Anything else is ignored.
 */
static inline void __attribute__((noreturn)) target_serve(void (*probe)(void))
{
	char c;

	for (;;) {
		if (read(0, &c, 1) != 1)
			_exit(3);
		if (c == 'q')
			_exit(0);
		if (c == 's')
			target_say("set");
		else if (c == 'p')
			probe();
	}
}

#endif /* _CKPT_TEST_H */
