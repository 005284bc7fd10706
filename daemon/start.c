// SPDX-License-Identifier: GPL-2.0
/*
 * A job started in a pid and an IPC namespace of its own (ckpt-run --ns;
 * Documentation/decisions.md, "Jobs start in a pid and an IPC namespace
 * of their own").
 *
 * ckpt-run is unprivileged and cannot make namespaces, so ckptd starts
 * the program for it, the way it restarts a job: a worker takes the
 * client's standard descriptors as its own, joins the job's cgroup and
 * forks an init, pid 1 of a new pid namespace. The init forks the
 * program, which takes an IPC namespace of its own and the client's
 * credentials, limits, umask, CPU affinity, nice value, ignored signals,
 * working directory and environment, then executes. The worker and the
 * init are the job's helpers, as a restarted job's are, so its first run
 * and its restarts look the same to a checkpoint. The client stays
 * connected as the job's foreground: "started", then the program's
 * status; "signal" meanwhile goes to the worker, the init and the
 * program. The init reports the program's status once it ends; the
 * namespace's other processes end with the init.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/ioprio.h>
#include <linux/keyctl.h>
#include <sys/personality.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ckptd.h"
#include "err.h"

#define START_GROUPS_MAX 1024	/* supplementary groups taken */

/* What the program is given: read from the client's process by ckptd. */
struct start {
	int fds[3];
	bool tty;		/* fds[0] is to be the job's controlling terminal */
	char **argv, **envp;	/* NULL-ended; envp's last is CKPT_JOBID= */
	char cwd[PATH_MAX];
	uid_t uid;
	gid_t gid, groups[START_GROUPS_MAX];
	int ngroups;
	struct rlimit lim[RLIM_NLIMITS];
	mode_t umask;
	cpu_set_t cpus;
	bool have_cpus;
	int nice;
	unsigned long long ignored;	/* SigIgn: bit N-1 for signal N */
	unsigned int loginuid;	/* the audit login uid, or -1 unset */
	bool has_loginuid;	/* the kernel has audit's */
	int oom_adj;		/* oom_score_adj */
	int ioprio;		/* ioprio_get()'s: class and level */
	unsigned int persona;	/* personality(2)'s */
	struct start_at at;	/* a join's namespaces here already, or -1s */
	bool join;		/* ckpt-join --ns's, not ckpt-run --ns's */
};

static const int forwarded[] = { CKPTD_FORWARDED_SIGNALS };

static char **strings_of(const json_t *a, const char *last)
{
	size_t i, n = json_array_size(a);
	char **v = calloc(n + 2, sizeof(*v));
	json_t *s;

	if (!v)
		return NULL;
	json_array_foreach(a, i, s)
		v[i] = (char *)json_string_value(s);
	v[n] = (char *)last;
	return v;
}

#define STATUS_MAX	(64 * 1024)	/* /proc/PID/status: a few KiB */

/* /proc/@pid/@name (@pid 0: self) whole (NUL-ended), in @buf: its length, or -1. */
static ssize_t proc_read(pid_t pid, const char *name, char *buf, size_t len)
{
	char path[64];
	size_t got = 0;
	ssize_t n;
	int fd;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	else
		snprintf(path, sizeof(path), "/proc/self/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while (got < len - 1) {
		n = read(fd, buf + got, len - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += n;
	}
	close(fd);
	buf[got] = '\0';
	/* Cut short (too long for @len): as good as unread. */
	return got == len - 1 ? -1 : (ssize_t)got;
}

/* The value of status line @key ("Uid:") in @status, up to its newline. */
static const char *field(const char *status, const char *key)
{
	size_t klen = strlen(key);
	const char *p;

	for (p = status; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, key, klen))
			return p + klen;
	return NULL;
}

/* Every one of the four ids on the line is @want. */
static bool ids_are(const char *line, unsigned long want)
{
	unsigned long v[4];

	return line &&
	       sscanf(line, "%lu %lu %lu %lu", &v[0], &v[1], &v[2], &v[3]) == 4 &&
	       v[0] == want && v[1] == want && v[2] == want && v[3] == want;
}

/* The number in @line, which must be @want. */
static bool num_is(const char *line, long want)
{
	char *end;
	long v;

	if (!line)
		return false;
	v = strtol(line, &end, 10);
	return end != line && v == want;
}

/* Whether the client's namespace @ns (and root) is ckptd's own. */
static bool same_ns(pid_t pid, const char *ns)
{
	char path[64], mine[64];
	struct stat a, b;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, ns);
	snprintf(mine, sizeof(mine), "/proc/self/%s", ns);
	return !stat(path, &a) && !stat(mine, &b) && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

/* The groups on @line, at most START_GROUPS_MAX: 0 or -E2BIG. */
static int take_groups(struct start *s, const char *line)
{
	const char *p;
	char *end;
	unsigned long v;

	for (p = line, s->ngroups = 0; p; p = end) {
		v = strtoul(p, &end, 10);
		if (end == p || (*end && *end != ' ' && *end != '\t' && *end != '\n'))
			break;
		if (s->ngroups == START_GROUPS_MAX)
			return -E2BIG;
		s->groups[s->ngroups++] = v;
	}
	return 0;
}

/*
 * Whether capability set @key of @st (the client's) holds every one of
 * @mine's (ckptd's): one ckptd has and the client dropped would be the
 * program's again. Fewer in ckptd's (its unit's bounding set) is fine.
 */
static bool caps_kept(const char *st, const char *mine, const char *key)
{
	const char *x = field(st, key), *y = field(mine, key);
	unsigned long long c, m;

	if (!x || !y)
		return !y;
	return sscanf(x, "%llx", &c) == 1 && sscanf(y, "%llx", &m) == 1 && !(m & ~c);
}

/* /proc/@pid/attr/current, the security module's label, is ckptd's own. */
static bool same_label(pid_t pid)
{
	char a[256], b[256];
	ssize_t n = proc_read(pid, "attr/current", a, sizeof(a));

	ssize_t m = proc_read(0, "attr/current", b, sizeof(b));

	/* None to read (no module, or none that labels): nothing to escape. */
	if (n < 0 && m < 0)
		return true;
	return n >= 0 && m == n && !memcmp(a, b, n);
}

/*
 * Whether the client's process @pid, whose status is @st, is one whose
 * attributes its program may take (take_client()): 0 with its gid in
 * *@gid, or -EPERM with @err. Asked before and after the reads, so that
 * an exec of a set-id program meanwhile is seen.
 */
static int client_ok(pid_t pid, uid_t uid, const char *st, const char *mine,
		     unsigned long *gid, struct ckpt_err *err)
{
	static const char *const nss[] = {
		"ns/mnt", "ns/net", "ns/user", "ns/uts", "ns/cgroup", "root",
	};
	const char *gid_line = field(st, "Gid:"), *v;
	struct stat pst;
	char path[64];
	size_t i;

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	if (!ids_are(field(st, "Uid:"), uid) || !gid_line ||
	    sscanf(gid_line, "%lu", gid) != 1 || !ids_are(gid_line, *gid) ||
	    stat(path, &pst) || pst.st_uid != uid)
		return ckpt_err_set(err, EPERM,
				    "the calling process %d is not all of uid %u and one group (a set-id program?)",
				    (int)pid, (unsigned int)uid);
	/* No such line (a kernel without seccomp): none. */
	v = field(st, "Seccomp:");
	if (!num_is(field(st, "NoNewPrivs:"), 0) || (v && !num_is(v, 0)))
		return ckpt_err_set(err, EPERM,
				    "the calling process %d runs with no_new_privs or a seccomp filter, which its program would not have: run it without --ns",
				    (int)pid);
	/* Capabilities it dropped would be ckptd's full sets again. */
	if (!caps_kept(st, mine, "CapBnd:") ||
	    (!uid && (!caps_kept(st, mine, "CapPrm:") || !caps_kept(st, mine, "CapEff:"))))
		return ckpt_err_set(err, EPERM,
				    "the calling process %d has fewer capabilities than ckptd, which its program would not: run it without --ns",
				    (int)pid);
	if (!same_label(pid))
		return ckpt_err_set(err, EPERM,
				    "the calling process %d has a security label other than ckptd's, which its program would not: run it without --ns",
				    (int)pid);
	for (i = 0; i < sizeof(nss) / sizeof(nss[0]); i++)
		if (!same_ns(pid, nss[i]))
			return ckpt_err_set(err, EPERM,
					    "the calling process %d is in a %s other than ckptd's, where its program would not be: run it without --ns",
					    (int)pid, i + 1 < sizeof(nss) / sizeof(nss[0]) ?
					    "namespace" : "root directory");
	return 0;
}

/*
 * What the client's process @pid has that its program would have
 * inherited from it. Only from a process all of whose ids are the
 * caller's (@uid) and one group's, that set-id never made (its /proc
 * directory is the caller's), without no_new_privs, a seccomp filter,
 * fewer capabilities or another security label than ckptd's, and in
 * ckptd's namespaces and root: what the user may give their programs
 * anyway, not a set-id program's or a sandbox's, which the program would
 * escape. Checked before and after the reads, one process held by a
 * pidfd throughout. 0, or -errno with @err.
 */
static int take_client(struct start *s, pid_t pid, uid_t uid,
		       struct ckpt_err *err)
{
	char *st = malloc(STATUS_MAX), *mine = malloc(STATUS_MAX), num[32];
	int r, pidfd = syscall(SYS_pidfd_open, pid, 0), ret = 0;
	unsigned long gid, again;

	if (!st || !mine || pidfd < 0 || proc_read(pid, "status", st, STATUS_MAX) < 0 ||
	    proc_read(0, "status", mine, STATUS_MAX) < 0) {
		ret = ckpt_err_set(err, ESRCH, "the calling process %d: cannot read its status",
				   (int)pid);
		goto out;
	}
	ret = client_ok(pid, uid, st, mine, &gid, err);
	if (ret)
		goto out;
	s->uid = uid;
	s->gid = gid;
	if (take_groups(s, field(st, "Groups:"))) {
		ret = ckpt_err_set(err, E2BIG, "process %d is in more than %d groups",
				   (int)pid, START_GROUPS_MAX);
		goto out;
	}
	if (!field(st, "Umask:") || sscanf(field(st, "Umask:"), "%o", &s->umask) != 1 ||
	    !field(st, "SigIgn:") || sscanf(field(st, "SigIgn:"), "%llx", &s->ignored) != 1 ||
	    proc_read(pid, "oom_score_adj", num, sizeof(num)) < 0 ||
	    sscanf(num, "%d", &s->oom_adj) != 1) {
		ret = ckpt_err_set(err, ESRCH, "process %d: cannot read its umask, signals and OOM score",
				   (int)pid);
		goto out;
	}
	s->ioprio = syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, pid);
	if (s->ioprio < 0) {
		ret = ckpt_err_set(err, errno, "process %d: cannot read its I/O priority: %s",
				   (int)pid, strerror(errno));
		goto out;
	}
	/*
	 * Its personality needs ptrace's attach access (denied under Yama's
	 * scope 3, or by an LSM): without it, plain PER_LINUX.
	 */
	if (proc_read(pid, "personality", num, sizeof(num)) < 0 ||
	    sscanf(num, "%x", &s->persona) != 1)
		s->persona = PER_LINUX;
	/* No audit in the kernel: no login uid to carry. */
	s->has_loginuid = proc_read(pid, "loginuid", num, sizeof(num)) >= 0;
	if (s->has_loginuid && sscanf(num, "%u", &s->loginuid) != 1) {
		ret = ckpt_err_set(err, ESRCH, "process %d: cannot read its login uid", (int)pid);
		goto out;
	}
	for (r = 0; r < RLIM_NLIMITS; r++)
		if (prlimit(pid, r, NULL, &s->lim[r])) {
			ret = ckpt_err_set(err, errno, "process %d: cannot read its limits: %s",
					   (int)pid, strerror(errno));
			goto out;
		}
	s->have_cpus = !sched_getaffinity(pid, sizeof(s->cpus), &s->cpus);
	errno = 0;
	s->nice = getpriority(PRIO_PROCESS, pid);
	if (errno)
		s->nice = 0;
	/*
	 * The same as before the reads (no exec of a set-id program since),
	 * and alive still, the one the pidfd named before the first read: no
	 * other process had its pid meanwhile.
	 */
	if (proc_read(pid, "status", st, STATUS_MAX) < 0 ||
	    syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0)) {
		ret = ckpt_err_set(err, ESRCH, "the calling process %d is gone", (int)pid);
		goto out;
	}
	ret = client_ok(pid, uid, st, mine, &again, err);
	if (!ret && again != gid)
		ret = ckpt_err_set(err, EPERM, "the calling process %d changed its group", (int)pid);
out:
	if (pidfd >= 0)
		close(pidfd);
	free(st);
	free(mine);
	return ret;
}

/* Says @fmt on @fd (the worker reads it as the start's error), and exits. */
static void __attribute__((noreturn, format(printf, 3, 4)))
start_fail(int fd, int code, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (write(fd, msg, n < (int)sizeof(msg) ? n : (int)sizeof(msg) - 1) < 0)
		_exit(code);
	_exit(code);
}

/* @value into /proc/self/@name, as root: 0 or -1. */
static int proc_write(const char *name, const char *value)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/%s", name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = write(fd, value, strlen(value));
	close(fd);
	return n == (ssize_t)strlen(value) ? 0 : -1;
}

/*
 * What the program takes while still root: the client's audit login uid
 * (ckptd's is unset, which anyone may set: left so, the user could claim
 * another's) and OOM score adjustment, limits, affinity, nice value, I/O
 * priority (a real-time class the client had needs root to set again),
 * personality and umask.
 */
static void program_as_root(const struct start *s, int ep)
{
	char v[32];
	int r;

	/* Its own (pid 0 is self: getpid() is 2 here, in the new namespace). */
	if (s->has_loginuid && (proc_read(0, "loginuid", v, sizeof(v)) < 0 ||
				strtoul(v, NULL, 10) != s->loginuid)) {
		snprintf(v, sizeof(v), "%u", s->loginuid);
		if (proc_write("loginuid", v))
			start_fail(ep, 126, "cannot set the audit login uid %u: %s",
				   s->loginuid, strerror(errno));
	}
	snprintf(v, sizeof(v), "%d", s->oom_adj);
	if (proc_write("oom_score_adj", v))
		start_fail(ep, 126, "cannot set oom_score_adj %d: %s", s->oom_adj,
			   strerror(errno));
	for (r = 0; r < RLIM_NLIMITS; r++)
		if (setrlimit(r, &s->lim[r]))
			start_fail(ep, 126, "cannot set limit %d: %s", r, strerror(errno));
	if (s->have_cpus)
		sched_setaffinity(0, sizeof(s->cpus), &s->cpus);
	setpriority(PRIO_PROCESS, 0, s->nice);
	if (syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, s->ioprio))
		start_fail(ep, 126, "cannot set the I/O priority %#x: %s", s->ioprio,
			   strerror(errno));
	if (personality(s->persona) < 0)
		start_fail(ep, 126, "cannot set the personality %#x: %s", s->persona,
			   strerror(errno));
	umask(s->umask);
}

/* The program: pid 2 of the namespace; nothing of ckptd's goes with it. */
static void __attribute__((noreturn)) start_program(const struct start *s, int ep)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	sigset_t none;
	int sig;

	if (s->at.fds[0] < 0 && unshare(CLONE_NEWIPC))
		start_fail(ep, 126, "cannot make the job's IPC namespace: %s", strerror(errno));
	/*
	 * On a terminal: a group of its own in the worker's session, in the
	 * foreground (the worker ignores SIGTTOU, so this may be asked), so
	 * that the terminal's signals are the program's alone. Otherwise a
	 * session of its own, not ckptd's.
	 */
	if (s->tty ? setpgid(0, 0) || tcsetpgrp(0, getpid()) : setsid() < 0)
		start_fail(ep, 126, "cannot start a %s: %s",
			   s->tty ? "process group" : "session", strerror(errno));
	for (sig = 1; sig < NSIG; sig++) {
		if (sig == SIGKILL || sig == SIGSTOP)
			continue;
		dfl.sa_handler = sig <= 64 && s->ignored & 1ULL << (sig - 1) ?
				 SIG_IGN : SIG_DFL;
		sigaction(sig, &dfl, NULL);
	}
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	program_as_root(s, ep);
	if (setgroups(s->ngroups, s->groups) || setresgid(s->gid, s->gid, s->gid) ||
	    setresuid(s->uid, s->uid, s->uid))
		start_fail(ep, 126, "cannot take uid %u and its groups: %s",
			   (unsigned int)s->uid, strerror(errno));
	/*
	 * A session keyring of its own, as a login's, the user's linked in:
	 * ckptd's would be every job's.
	 */
	if (syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL) >= 0)
		syscall(SYS_keyctl, KEYCTL_LINK, KEY_SPEC_USER_KEYRING,
			KEY_SPEC_SESSION_KEYRING);
	else if (errno != ENOSYS)
		start_fail(ep, 126, "cannot join a session keyring of its own: %s",
			   strerror(errno));
	/* As the user: a directory they may not enter is not entered. */
	if (chdir(s->cwd))
		start_fail(ep, 126, "cannot enter %s: %s", s->cwd, strerror(errno));
	if (close_range(3, ~0U, CLOSE_RANGE_CLOEXEC))
		start_fail(ep, 126, "cannot close ckptd's descriptors: %s", strerror(errno));
	environ = s->envp;
	execvp(s->argv[0], s->argv);
	start_fail(ep, errno == ENOENT ? 127 : 126, "cannot run %s: %s", s->argv[0],
		   strerror(errno));
}

static volatile sig_atomic_t forward_to;

/* A signal from a process (the client's, through ckptd), not the kernel's. */
static void forward(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (forward_to > 0 && si->si_code != SI_KERNEL)
		kill(forward_to, sig);
}

/* The forwarded signals go to forward_to once it is set; blocked till then. */
static void forward_signals(void)
{
	struct sigaction sa = { .sa_sigaction = forward,
				.sa_flags = SA_SIGINFO | SA_RESTART };
	sigset_t set;
	size_t i;

	ckptd_forwarded_set(&set);
	sigprocmask(SIG_BLOCK, &set, NULL);
	for (i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
		sigaction(forwarded[i], &sa, NULL);
}

/* Forwarding to @pid from now on, and what came meanwhile. */
static void forward_now(pid_t pid)
{
	sigset_t set;

	forward_to = pid;
	ckptd_forwarded_set(&set);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
}

/*
 * A join's command's streams are its own (ckpt-join's link, which its
 * engine takes with it): the worker and the init, once it is forked,
 * keep /dev/null instead.
 */
static void drop_streams(void)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC), i;

	for (i = 0; null >= 0 && i < 3; i++)
		dup2(null, i);
	if (null > 2)
		close(null);
}

/* Every descriptor from 3 up closed but @a and @b (a < b). */
static void close_but(int a, int b)
{
	if (a > 3)
		close_range(3, a - 1, 0);
	if (b > a + 1)
		close_range(a + 1, b - 1, 0);
	close_range(b + 1, ~0U, 0);
}

/* The init's step @what failed (errno): the program's status 126, and why. */
static void __attribute__((noreturn)) init_fail(int ep, int sp, const char *what)
{
	int st = 126 << 8, e = errno;

	if (write(sp, &st, sizeof(st)) < 0)
		_exit(1);
	start_fail(ep, 126, "%s: %s", what, strerror(e));
}

/*
 * A join's init, once its program has ended: the namespace ends with the
 * init, so it stays while the namespace has other processes, those later
 * joins entered (enter_worker()) and what they, or the program, left;
 * each second it reaps what came to it and looks again (kill(-1, 0):
 * its /proc may be the node's, under a chroot).
 */
static void init_linger(void)
{
	for (;;) {
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		/* Pid 1 reaches every other process of its namespace. */
		if (kill(-1, 0) && errno == ESRCH)
			return;
		sleep(1);
	}
}

/*
 * The init: forks the program, passes on the signals it is sent, reaps
 * what the namespace leaves to it, and writes the program's wait status
 * on @sp once it has ended. Its own end ends the namespace. It keeps
 * nothing of the worker's but @ep and @sp; the forwarded signals are
 * blocked when it starts (forward_signals()).
 */
static void __attribute__((noreturn)) start_init(const struct start *s, int ep, int sp)
{
	siginfo_t si;
	sigset_t set;
	const char *what;
	pid_t prog;
	int st;

	forward_to = 0;
	close_but(ep < sp ? ep : sp, ep < sp ? sp : ep);
	/* /proc/<getpid()> the program's own, as in its restarts. */
	if (ckpt_restore_own_proc(&what) < 0)
		init_fail(ep, sp, what);
	prog = fork();
	if (prog < 0)
		init_fail(ep, sp, "cannot fork the program");
	if (!prog)
		start_program(s, ep);
	close(ep);
	if (s->join)
		drop_streams();
	forward_now(prog);
	/*
	 * Each child seen ended before it is reaped: the program's pid is
	 * forwarded to no more once free for another process.
	 */
	for (;;) {
		si.si_pid = 0;
		if (waitid(P_ALL, 0, &si, WEXITED | WNOWAIT) < 0) {
			if (errno == EINTR)
				continue;
			_exit(1);
		}
		if (si.si_pid == prog)
			break;
		waitpid(si.si_pid, NULL, 0);
	}
	ckptd_forwarded_set(&set);
	sigprocmask(SIG_BLOCK, &set, NULL);
	forward_to = 0;
	if (waitpid(prog, &st, 0) != prog ||
	    write(sp, &st, sizeof(st)) != sizeof(st))
		_exit(1);
	if (s->join)
		init_linger();
	_exit(0);
}

/* What @fd says until its end, in @buf: its length. */
static ssize_t read_all(int fd, char *buf, size_t len)
{
	size_t got = 0;
	ssize_t n;

	while (got < len) {
		n = read(fd, buf + got, len - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += n;
	}
	return got;
}

/*
 * The worker's end of a start, @pid forked: the program's exec closes
 * @ep, so nothing said there is a start (and @joins, the lock, is let go
 * then); "started"; at the program's end, its status. @pid is the init,
 * which writes the program's status on @sp, or, entered into the job's
 * namespaces, the program itself (@sp -1).
 */
static void start_await(struct ckptd *d, struct job *j, int out, int ep, int sp,
			pid_t pid, int joins)
{
	json_t *started = json_pack("{s:s, s:s}", "event", "started", "job", j->id);
	int st = 0, ist = 0, r;
	char msg[512];
	ssize_t n;

	n = read_all(ep, msg, sizeof(msg) - 1);
	close(ep);
	if (joins >= 0)
		close(joins);
	if (n > 0) {
		/* The init ends as the program did: 126, 127 as a shell's. */
		msg[n] = '\0';
		if (sp >= 0)
			read_all(sp, (char *)&st, sizeof(st));
		waitpid(pid, sp >= 0 ? NULL : &st, 0);
		json_decref(started);
		worker_send(out, json_pack("{s:b, s:o, s:i}", "ok", 0, "error",
					   json_sprintf("job %s: %s", j->id, msg),
					   "status", st));
		return;
	}
	if (sp >= 0 && started)
		json_object_set_new(started, "init", json_integer(pid));
	worker_send(out, started);
	worker_watch_client(d, out);
	n = sp >= 0 ? read_all(sp, (char *)&st, sizeof(st)) : 0;
	if (sp >= 0)
		close(sp);
	while ((r = waitpid(pid, &ist, 0)) < 0 && errno == EINTR)
		;
	forward_to = 0;
	/* No status: the init was killed, which ended the program too. */
	if (r == pid && n != sizeof(st))
		st = ist;
	worker_send(out, json_pack("{s:b, s:s, s:i}", "ok", 1, "job", j->id,
				   "status", st));
}

void start_at_close(struct start_at *at)
{
	ckptd_close_fds(at->fds, 3);
}

/*
 * A join's program into the namespaces the job has here already
 * (@s->at: its pid, IPC and mount namespaces, opened and checked by
 * ckptd: job_enter_at()). The worker forks it into that pid namespace and
 * stays outside the job, waits and reports. The program joins the job's
 * cgroup while still in ckptd's mount namespace, under the @joins lock
 * the worker holds until it has executed, then enters the job's IPC and
 * mount namespaces. Its orphans go to the job's init there.
 */
static void enter_worker(struct ckptd *d, struct job *j, struct start *s,
			 int out, int joins)
{
	int ep[2] = { -1, -1 }, ret = 0;
	struct ckpt_err err;
	pid_t prog = -1;

	if (pipe2(ep, O_CLOEXEC))
		ret = ckpt_err_set(&err, errno, "%s", strerror(errno));
	else if (setns(s->at.fds[0], CLONE_NEWPID))
		ret = ckpt_err_set(&err, errno, "cannot enter the job's pid namespace here: %s",
				   strerror(errno));
	if (!ret) {
		prog = fork();
		if (prog < 0)
			ret = ckpt_err_set(&err, errno, "cannot fork the program: %s",
					   strerror(errno));
	}
	if (!prog) {
		close(ep[0]);
		ret = job_add_pid(d, j, 0);	/* 0: this process */
		if (ret)
			start_fail(ep[1], 126, "cannot join the job's cgroup: %s", strerror(-ret));
		/* ckptd's own under a chroot: entered, it would leave the chroot. */
		if (setns(s->at.fds[1], CLONE_NEWIPC) ||
		    (!ckptd_fd_is(s->at.fds[2], "/proc/self/ns/mnt") && setns(s->at.fds[2], CLONE_NEWNS)))
			start_fail(ep[1], 126, "cannot enter the job's IPC and mount namespaces here: %s",
				   strerror(errno));
		start_program(s, ep[1]);
	}
	/* The program has its copies: the namespaces live as long as the job's. */
	start_at_close(&s->at);
	close(joins);	/* the program's copy holds it until its exec */
	drop_streams();
	if (ret) {
		worker_send(out, json_pack("{s:b, s:o}", "ok", 0, "error",
					   json_sprintf("job %s: %s", j->id, err.msg)));
		return;
	}
	close(ep[1]);
	forward_now(prog);
	start_await(d, j, out, ep[0], -1, prog, -1);
}

static void start_worker(struct ckptd *d, struct job *j, int out, void *arg)
{
	struct start *s = arg;
	int ep[2] = { -1, -1 }, sp[2] = { -1, -1 }, i, ret, joins;
	struct ckpt_err err;
	pid_t init;

	/* Nothing of ckptd's keys in a process that becomes the user's. */
	explicit_bzero(d->mac_key, sizeof(d->mac_key));
	explicit_bzero(d->psk, sizeof(d->psk));
	ret = s->tty ? restart_take_tty(s->fds[0], &err) : 0;
	/* The client's signals, from now on: to the init once it is there. */
	forward_signals();
	/*
	 * A job with processes here already (a join from another node) may
	 * be under a checkpoint: none enters it until that has let go, and
	 * none while the program is being made (ckptd.md, "Joins during a
	 * checkpoint"), so that no checkpoint sees the init as a member.
	 */
	joins = ret ? -1 : job_joins_shared(j, CKPTD_JOIN_HOLD_MAX_S);
	if (!ret && joins == -EAGAIN)
		ret = ckpt_err_set(&err, EAGAIN, "a checkpoint held joins back for more than %d s",
				   CKPTD_JOIN_HOLD_MAX_S);
	else if (!ret && joins < 0)
		ret = ckpt_err_set(&err, -joins, "cannot take the job's joins lock: %s",
				   strerror(-joins));
	for (i = 0; !ret && i < 3; i++)
		if (dup2(s->fds[i], i) < 0)
			ret = ckpt_err_set(&err, errno, "%s", strerror(errno));
	/* The copies ckptd received (each its own, above 2): 0 to 2 stay. */
	for (i = 0; !ret && i < 3; i++)
		if (s->fds[i] > 2)
			close(s->fds[i]);
	if (!ret && s->at.fds[0] >= 0) {
		enter_worker(d, j, s, out, joins);
		return;
	}
	if (!ret) {
		ret = job_add_pid(d, j, getpid());
		if (ret)
			ckpt_err_set(&err, -ret, "cannot join the job's cgroup: %s",
				     strerror(-ret));
	}
	if (!ret && (pipe2(ep, O_CLOEXEC) || pipe2(sp, O_CLOEXEC)))
		ret = ckpt_err_set(&err, errno, "%s", strerror(errno));
	if (!ret && unshare(CLONE_NEWPID))
		ret = ckpt_err_set(&err, errno, "cannot make the job's pid namespace: %s",
				   strerror(errno));
	init = ret ? -1 : fork();
	if (!ret && init < 0)
		ret = ckpt_err_set(&err, errno, "cannot fork the job's init: %s",
				   strerror(errno));
	if (!init) {
		close(ep[0]);
		close(sp[0]);
		start_init(s, ep[1], sp[1]);
	}
	if (!ret && s->join)
		drop_streams();
	if (ret) {
		worker_send(out, json_pack("{s:b, s:o}", "ok", 0, "error",
					   json_sprintf("job %s: %s", j->id, err.msg)));
		return;
	}
	forward_now(init);
	/* A helper of the job from now on, not one of its processes. */
	worker_send(out, json_pack("{s:s, s:s, s:i}", "event", "init",
				   "job", j->id, "init", (int)init));
	close(ep[1]);
	close(sp[1]);
	/* The init has no copy of the lock: held until the program's exec. */
	start_await(d, j, out, ep[0], sp[0], init, joins);
}

/* In ckptd: the worker and the init are the job's helpers, not its processes. */
static void start_report(struct worker *w, json_t *msg)
{
	struct ckptd *d = worker_daemon(w);
	struct job *j = worker_job(w);
	json_int_t init;

	if (!msg) {
		restart_ended(d, worker_pid(w));
		return;
	}
	if (!j || !ckptd_msg_str(msg, "event"))
		return;
	/* A join into namespaces the job has here already: no init of its own. */
	if (json_unpack(msg, "{s:I}", "init", &init)) {
		if (!strcmp(ckptd_msg_str(msg, "event"), "started")) {
			if (j->busy == w)
				j->busy = NULL;
			ckptd_log(d, 1, "job %s: a join here entered its namespaces",
				  j->id);
		}
		return;
	}
	j->helpers[0] = worker_pid(w);
	j->helpers[1] = init;
	if (!strcmp(ckptd_msg_str(msg, "event"), "started")) {
		if (j->busy == w)
			j->busy = NULL;
		ckptd_log(d, 1, "job %s started in namespaces of its own: init %d",
			  j->id, (int)init);
	}
	job_save(d, j);
}

int start_job(struct conn *c, struct job *j, const json_t *req, const char *cwd,
	      bool tty, int fds[3], const struct start_at *at)
{
	const char *op = strcmp(ckptd_msg_str(req, "op") ?: "", "join") ? "run" : "join";
	struct ckptd *d = conn_daemon(c);
	char jobid[64];
	struct ckpt_err err;
	struct start *s;
	struct worker *w;
	int i, ret = -1;

	s = calloc(1, sizeof(*s));
	if (!s) {
		ckptd_close_fds(fds, 3);
		conn_fail(c, "%s: out of memory", op);
		return -1;
	}
	for (i = 0; i < 3; i++) {
		s->fds[i] = fds[i];
		fds[i] = -1;
	}
	snprintf(jobid, sizeof(jobid), "CKPT_JOBID=%s", j->id);
	/* ckptd's, held open by the caller: the worker has its copies. */
	if (at)
		s->at = *at;
	else
		s->at = (struct start_at){ .fds = { -1, -1, -1 } };
	s->join = !strcmp(op, "join");
	s->tty = tty;
	snprintf(s->cwd, sizeof(s->cwd), "%s", cwd);
	s->argv = strings_of(json_object_get(req, "cmd"), NULL);
	s->envp = strings_of(json_object_get(req, "env"), jobid);
	if (!s->argv || !s->envp) {
		conn_fail(c, "%s: out of memory", op);
	} else if (take_client(s, conn_pid(c), conn_uid(c), &err)) {
		conn_fail(c, "%s: %s", op, err.msg);
	} else {
		/* The program has its copies (fork): these are freed below. */
		w = worker_start(d, c, j, start_worker, start_report, s);
		if (!w)
			conn_fail(c, "%s: cannot start a worker: %s", op, strerror(errno));
		else if (s->at.fds[0] < 0)
			j->helpers[0] = worker_pid(w);	/* saved by the caller */
		ret = w ? 0 : -1;
	}
	for (i = 0; i < 3; i++)
		if (s->fds[i] >= 0)
			close(s->fds[i]);
	free(s->argv);
	free(s->envp);
	free(s);
	return ret;
}
