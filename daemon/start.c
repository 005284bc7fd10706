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
#include <sys/resource.h>
#include <sys/stat.h>
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
};

static const int forwarded[] = {
	SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGCONT,
};

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

/*
 * /proc/@pid/status's "@key" line, after the key: 0, or -1 when the
 * process or the line is not there.
 */
static int status_line(pid_t pid, const char *key, char *buf, size_t len)
{
	char path[64], line[4096];
	size_t klen = strlen(key);
	int ret = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, klen)) {
			snprintf(buf, len, "%s", line + klen);
			ret = 0;
			break;
		}
	fclose(f);
	return ret;
}

/* Every one of the four ids on the line is @want. */
static bool ids_are(const char *line, unsigned long want)
{
	unsigned long v[4];

	return sscanf(line, "%lu %lu %lu %lu", &v[0], &v[1], &v[2], &v[3]) == 4 &&
	       v[0] == want && v[1] == want && v[2] == want && v[3] == want;
}

/*
 * What the client's process @pid has that its program would have
 * inherited from it. Only from a process all of whose ids are the
 * caller's (@uid) and one group's: what the user may give their programs
 * anyway, not a set-id program's. 0, or -errno with @err.
 */
static int take_client(struct start *s, pid_t pid, uid_t uid,
		       struct ckpt_err *err)
{
	char line[4096], *p, *end;
	unsigned long v;
	int r;

	if (status_line(pid, "Uid:", line, sizeof(line)) || !ids_are(line, uid) ||
	    status_line(pid, "Gid:", line, sizeof(line)) ||
	    sscanf(line, "%lu", &v) != 1 || !ids_are(line, v))
		return ckpt_err_set(err, EPERM,
				    "the calling process %d is not all of uid %u and one group (a set-id program?)",
				    (int)pid, (unsigned int)uid);
	s->uid = uid;
	s->gid = v;
	if (status_line(pid, "Groups:", line, sizeof(line)))
		return ckpt_err_set(err, ESRCH, "process %d: no groups to read", (int)pid);
	for (p = line, s->ngroups = 0;; p = end) {
		v = strtoul(p, &end, 10);
		if (end == p)
			break;
		if (s->ngroups == START_GROUPS_MAX)
			return ckpt_err_set(err, E2BIG, "process %d is in more than %d groups",
					    (int)pid, START_GROUPS_MAX);
		s->groups[s->ngroups++] = v;
	}
	if (status_line(pid, "Umask:", line, sizeof(line)) ||
	    sscanf(line, "%o", &s->umask) != 1 ||
	    status_line(pid, "SigIgn:", line, sizeof(line)) ||
	    sscanf(line, "%llx", &s->ignored) != 1)
		return ckpt_err_set(err, ESRCH, "process %d: cannot read its umask and signals",
				    (int)pid);
	for (r = 0; r < RLIM_NLIMITS; r++)
		if (prlimit(pid, r, NULL, &s->lim[r]))
			return ckpt_err_set(err, errno, "process %d: cannot read its limits: %s",
					    (int)pid, strerror(errno));
	s->have_cpus = !sched_getaffinity(pid, sizeof(s->cpus), &s->cpus);
	errno = 0;
	s->nice = getpriority(PRIO_PROCESS, pid);
	if (errno)
		s->nice = 0;
	/* Still the caller's: not a process that got its pid since. */
	if (status_line(pid, "Uid:", line, sizeof(line)) || !ids_are(line, uid))
		return ckpt_err_set(err, ESRCH, "the calling process %d is gone", (int)pid);
	return 0;
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

/* The program: pid 2 of the namespace; nothing of ckptd's goes with it. */
static void __attribute__((noreturn)) start_program(const struct start *s, int ep)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	sigset_t none;
	int sig, r;

	if (unshare(CLONE_NEWIPC))
		start_fail(ep, 126, "cannot make the job's IPC namespace: %s", strerror(errno));
	/*
	 * On a terminal, in the worker's session, whose group has it in the
	 * foreground; otherwise in a session of its own, not ckptd's.
	 */
	if (!s->tty && setsid() < 0)
		start_fail(ep, 126, "cannot start a session: %s", strerror(errno));
	for (sig = 1; sig < NSIG; sig++) {
		if (sig == SIGKILL || sig == SIGSTOP)
			continue;
		dfl.sa_handler = sig <= 64 && s->ignored & 1ULL << (sig - 1) ?
				 SIG_IGN : SIG_DFL;
		sigaction(sig, &dfl, NULL);
	}
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	for (r = 0; r < RLIM_NLIMITS; r++)
		if (setrlimit(r, &s->lim[r]))
			start_fail(ep, 126, "cannot set limit %d: %s", r, strerror(errno));
	if (s->have_cpus)
		sched_setaffinity(0, sizeof(s->cpus), &s->cpus);
	setpriority(PRIO_PROCESS, 0, s->nice);
	umask(s->umask);
	if (setgroups(s->ngroups, s->groups) || setresgid(s->gid, s->gid, s->gid) ||
	    setresuid(s->uid, s->uid, s->uid))
		start_fail(ep, 126, "cannot take uid %u and its groups: %s",
			   (unsigned int)s->uid, strerror(errno));
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

static void forward(int sig)
{
	if (forward_to > 0)
		kill(forward_to, sig);
}

/* @pid gets the signals forwarded here (from the client, through ckptd). */
static void forward_signals(pid_t pid)
{
	struct sigaction sa = { .sa_handler = forward, .sa_flags = SA_RESTART };
	sigset_t set;
	size_t i;

	forward_to = pid;
	sigemptyset(&set);
	for (i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++) {
		sigaction(forwarded[i], &sa, NULL);
		sigaddset(&set, forwarded[i]);
	}
	sigprocmask(SIG_UNBLOCK, &set, NULL);
}

/*
 * The init: forks the program, passes on the signals it is sent, reaps
 * what the namespace leaves to it, and writes the program's wait status
 * on @sp once it has ended. Its own end ends the namespace.
 */
static void __attribute__((noreturn)) start_init(const struct start *s, int ep, int sp)
{
	pid_t prog, pid;
	int st;

	prog = fork();
	if (prog < 0) {
		st = 126 << 8;
		if (write(sp, &st, sizeof(st)) < 0)
			_exit(1);
		start_fail(ep, 126, "cannot fork the program: %s", strerror(errno));
	}
	if (!prog)
		start_program(s, ep);
	close(ep);
	forward_signals(prog);
	for (;;) {
		pid = waitpid(-1, &st, 0);
		if (pid == prog)
			break;
		if (pid < 0 && errno != EINTR)
			_exit(1);
	}
	if (write(sp, &st, sizeof(st)) != sizeof(st))
		_exit(1);
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

static void start_worker(struct ckptd *d, struct job *j, int out, void *arg)
{
	struct start *s = arg;
	int ep[2] = { -1, -1 }, sp[2] = { -1, -1 }, i, ret, st = 0, ist;
	char msg[512];
	struct ckpt_err err;
	ssize_t n;
	pid_t init;

	ret = s->tty ? restart_take_tty(s->fds[0], &err) : 0;
	/* The client's signals, from now on: to the init once it is there. */
	forward_signals(0);
	if (!ret) {
		ret = job_add_pid(d, j, getpid());
		if (ret)
			ckpt_err_set(&err, -ret, "cannot join the job's cgroup: %s",
				     strerror(-ret));
	}
	for (i = 0; !ret && i < 3; i++)
		if (dup2(s->fds[i], i) < 0)
			ret = ckpt_err_set(&err, errno, "%s", strerror(errno));
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
		forward_to = 0;
		start_init(s, ep[1], sp[1]);
	}
	if (ret) {
		worker_send(out, json_pack("{s:b, s:o}", "ok", 0, "error",
					   json_sprintf("job %s: %s", j->id, err.msg)));
		return;
	}
	close(ep[1]);
	close(sp[1]);
	/* The program's exec closes its end: nothing said is a start. */
	n = read_all(ep[0], msg, sizeof(msg) - 1);
	close(ep[0]);
	if (n > 0) {
		/* The init ends as the program did: 126, 127 as a shell's. */
		msg[n] = '\0';
		read_all(sp[0], (char *)&st, sizeof(st));
		waitpid(init, NULL, 0);
		worker_send(out, json_pack("{s:b, s:o, s:i}", "ok", 0, "error",
					   json_sprintf("job %s: %s", j->id, msg),
					   "status", st));
		return;
	}
	forward_to = init;
	worker_send(out, json_pack("{s:s, s:s, s:i}", "event", "started",
				   "job", j->id, "init", (int)init));
	n = read_all(sp[0], (char *)&st, sizeof(st));
	close(sp[0]);
	forward_to = 0;
	/* No status: the init was killed, which ended the program too. */
	if (waitpid(init, &ist, 0) == init && n != sizeof(st))
		st = ist;
	worker_send(out, json_pack("{s:b, s:s, s:i}", "ok", 1, "job", j->id,
				   "status", st));
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
	if (!j || !ckptd_msg_str(msg, "event") ||
	    json_unpack(msg, "{s:I}", "init", &init))
		return;
	j->helpers[0] = worker_pid(w);
	j->helpers[1] = init;
	if (j->busy == w)
		j->busy = NULL;
	job_save(d, j);
	ckptd_log(d, 1, "job %s started in namespaces of its own: init %d",
		  j->id, (int)init);
}

int start_job(struct conn *c, struct job *j, const json_t *req, const char *cwd)
{
	struct ckptd *d = conn_daemon(c);
	char jobid[64];
	struct ckpt_err err;
	struct start *s;
	struct worker *w;
	int i, ret = -1;

	s = calloc(1, sizeof(*s));
	if (!s) {
		conn_fail(c, "run: out of memory");
		return -1;
	}
	for (i = 0; i < 3; i++)
		s->fds[i] = -1;
	snprintf(jobid, sizeof(jobid), "CKPT_JOBID=%s", j->id);
	s->argv = strings_of(json_object_get(req, "cmd"), NULL);
	s->envp = strings_of(json_object_get(req, "env"), jobid);
	if (conn_take_fds(c, s->fds, 3) != 3) {
		conn_fail(c, "run: \"ns\": send the standard descriptors (0, 1, 2) with the request");
	} else if (!s->argv || !s->envp) {
		conn_fail(c, "run: out of memory");
	} else if (ckptd_run_ns_check(req, &s->tty, &err)) {
		conn_fail(c, "%s", err.msg);
	} else if (take_client(s, conn_pid(c), conn_uid(c), &err)) {
		conn_fail(c, "run: %s", err.msg);
	} else {
		snprintf(s->cwd, sizeof(s->cwd), "%s", cwd);
		/* The program has its copies (fork): these are freed below. */
		w = worker_start(d, c, j, start_worker, start_report, s);
		if (!w)
			conn_fail(c, "run: cannot start a worker: %s", strerror(errno));
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
