// SPDX-License-Identifier: GPL-2.0
/*
 * ckpt run (also installed as ckpt-run): start a program as a new job of
 * ckptd's, with libckpt preloaded into it and into every program it
 * executes, so unmodified programs register for callbacks.
 *
 * The program is this command's child: it waits until ckptd has put it
 * into the job's cgroup (ckptd checks it is the caller's child), then
 * executes with CKPT_JOBID set. This command stays in the foreground as
 * the job's root: standard descriptors are the program's, signals sent to
 * this command go on to it, and its exit status is this command's.
 * --no-job preloads libckpt and nothing else, without ckptd.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "commands.h"
#include "engine.h"
#include "proto.h"

#ifndef CKPT_LIBDIR
#define CKPT_LIBDIR "/usr/local/lib"
#endif

static void run_usage(FILE *f)
{
	fprintf(f,
		"usage: %s run [--name NAME] [--dir DIR] [--interval T] [--keep K]\n"
		"                [--outside close] [--ns] [--no-job] [--lib PATH] [--] PROGRAM [ARGS...]\n"
		"       ckpt-run [the same]\n"
		"Starts PROGRAM as a new job of ckptd's (its id on standard error and\n"
		"in CKPT_JOBID), with libckpt preloaded into it and the programs it\n"
		"executes (LD_PRELOAD, CKPT_PRELOAD=1), so their callbacks and\n"
		"critical sections take part in checkpoints ('ckpt job ID'). Stays\n"
		"in the foreground: signals go on to PROGRAM, whose exit status is\n"
		"this command's.\n"
		"  --name NAME  a name for the job, shown by ckpt ls and status\n"
		"  --dir DIR    the job's snapshots in DIR/JOBID (a directory of yours)\n"
		"               instead of under ckptd's snapshot root\n"
		"  --interval T a checkpoint of the job every T (seconds, or with m or h)\n"
		"  --keep K     keep the newest K snapshots of the job, remove the others\n"
		"  --outside close  a TCP connection to a process outside the job does\n"
		"               not refuse a checkpoint: it comes back closed (default:\n"
		"               refuse)\n"
		"  --ns         ckptd starts PROGRAM in a pid and an IPC namespace of\n"
		"               the job's own (System V objects then checkpoint too;\n"
		"               PROGRAM sees itself as pid 2, and the namespace's other\n"
		"               processes end with it)\n"
		"  --no-job     preload libckpt only: no job, ckptd not needed\n"
		"  --lib PATH   the libckpt.so to preload (default: next to this\n"
		"               program in ../lib, then " CKPT_LIBDIR ")\n",
		prog);
}

/* libckpt.so.1 in ../lib relative to this executable, then CKPT_LIBDIR. */
static int find_lib(char *buf, size_t len)
{
	const char *env = getenv("CKPT_LIBCKPT");
	char exe[PATH_MAX - 32], *slash;
	ssize_t n;

	if (env && *env) {
		snprintf(buf, len, "%s", env);
		return access(buf, R_OK);
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			if (snprintf(buf, len, "%s/../lib/libckpt.so.1", exe) <
			    (int)len && !access(buf, R_OK))
				return 0;
		}
	}
	snprintf(buf, len, "%s/libckpt.so.1", CKPT_LIBDIR);
	return access(buf, R_OK);
}

static int preload(char *lib);
static int launch_shim(void);
static int exec_program(char **argv);

static volatile sig_atomic_t child;

/* Signals sent to this command by a process go on to the job's root. */
static void forward(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (child > 0 && si->si_code != SI_KERNEL)
		kill(child, sig);
}

static void forward_signals(void)
{
	static const int sigs[] = {
		SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGCONT,
	};
	struct sigaction sa = { .sa_flags = SA_SIGINFO | SA_RESTART };
	size_t i;

	sa.sa_sigaction = forward;
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}

/* What ckpt-run asks of the job: --name, --dir, --interval, --keep. */
struct job_opts {
	const char *name;
	char dir[PATH_MAX];	/* absolute, or "" */
	long interval;		/* seconds, 0: none */
	long keep;		/* 0: all */
	bool outside_close;	/* --outside close */
};

/* SECONDS, or a number with s, m or h: seconds, or -1. */
static long parse_interval(const char *arg)
{
	char *end;
	long v = strtol(arg, &end, 10);

	if (end == arg || v <= 0 || v > 7 * 24 * 3600)
		return -1;
	if (!strcmp(end, "m"))
		v *= 60;
	else if (!strcmp(end, "h"))
		v *= 3600;
	else if (*end && strcmp(end, "s"))
		return -1;
	return v > 7 * 24 * 3600 ? -1 : v;
}

/*
 * @req with the job's options ckpt-run was given, or NULL (@req freed)
 * with the reason said: a --name or --dir that is not UTF-8 text would be
 * lost, not sent; no @req, out of memory.
 */
static json_t *with_opts(json_t *req, const struct job_opts *jo)
{
	if (!req) {
		fprintf(stderr, "%s: out of memory\n", prog);
		return NULL;
	}
	if (jo->name && json_object_set_new(req, "name", json_string(jo->name))) {
		fprintf(stderr, "%s: --name: not UTF-8 text\n", prog);
		goto bad;
	}
	if (jo->dir[0] && json_object_set_new(req, "dir", json_string(jo->dir))) {
		fprintf(stderr, "%s: --dir: not UTF-8 text\n", prog);
		goto bad;
	}
	if (jo->interval)
		json_object_set_new(req, "interval", json_integer(jo->interval));
	if (jo->keep)
		json_object_set_new(req, "keep", json_integer(jo->keep));
	if (jo->outside_close)
		json_object_set_new(req, "outside", json_string("close"));
	return req;
bad:
	json_decref(req);
	return NULL;
}

/* The new job's id from ckptd, for the child waiting on @go. */
static int start_job(pid_t pid, char **argv, const struct job_opts *jo,
		     char id[16])
{
	char cwd[PATH_MAX];
	struct ckpt_err err;
	json_t *cmd, *req, *res;
	int i, ret;

	cmd = json_array();
	for (i = 0; argv[i]; i++)
		json_array_append_new(cmd, json_string(argv[i]));
	if (!getcwd(cwd, sizeof(cwd)))
		snprintf(cwd, sizeof(cwd), "/");
	req = json_pack("{s:s, s:i, s:o, s:s}", "op", "run", "pid", (int)pid,
			"cmd", cmd, "cwd", cwd);
	req = with_opts(req, jo);
	if (!req)
		return -1;
	ret = ckptd_call(req, &res, &err);
	json_decref(req);
	if (ret) {
		/* Refused by ckptd, or ckptd is not there to ask. */
		fprintf(stderr, "%s: %s%s\n", prog, err.msg,
			ret != -EPERM && ret != -ENOMEM ? "; or run with --no-job" : "");
		return -1;
	}
	snprintf(id, 16, "%s", ckptd_msg_str(res, "job") ? ckptd_msg_str(res, "job") : "");
	json_decref(res);
	return 0;
}

/*
 * --ns: ckptd starts PROGRAM in a pid and an IPC namespace of the job's
 * own, with this command's descriptors, environment and working
 * directory; this command stays its foreground (foreground.c).
 */
static int run_job_ns(char **argv, const struct job_opts *jo)
{
	extern char **environ;
	char cwd[PATH_MAX];
	json_t *req, *cmd = json_array(), *env = json_array(), *jcwd;
	int i, ret;

	/* JSON carries UTF-8 only: another argument would be lost, not sent. */
	for (i = 0; cmd && argv[i]; i++)
		if (json_array_append_new(cmd, json_string(argv[i]))) {
			fprintf(stderr, "%s: --ns: argument %d is not UTF-8 text\n", prog, i + 1);
			goto bad;
		}
	for (i = 0; env && environ[i]; i++)
		if (strncmp(environ[i], "CKPT_JOBID=", 11) &&
		    strncmp(environ[i], "CKPT_NS=", 8) &&
		    json_array_append_new(env, json_string(environ[i]))) {
			fprintf(stderr, "%s: --ns: the environment's %.*s is not UTF-8 text\n", prog,
				(int)strcspn(environ[i], "="), environ[i]);
			goto bad;
		}
	/* ckpt-ssh's word (join.c): the job's other nodes' shares in theirs. */
	if (env && json_array_append_new(env, json_string("CKPT_NS=1")))
		goto bad;
	errno = 0;
	jcwd = getcwd(cwd, sizeof(cwd)) ? json_string(cwd) : NULL;
	if (!jcwd) {
		fprintf(stderr, "%s: --ns: the working directory: %s\n", prog,
			errno ? strerror(errno) : "not UTF-8 text");
		goto bad;
	}
	req = json_pack("{s:s, s:b, s:o, s:o, s:o}", "op", "run", "ns", 1,
			"cmd", cmd, "env", env, "cwd", jcwd);
	req = with_opts(req, jo);
	if (!req)
		return 1;
	ret = ckptd_foreground(prog, req, "");
	json_decref(req);
	return ret;
bad:
	json_decref(cmd);
	json_decref(env);
	return 1;
}

/* The job's root: forked, joined to a new job, then PROGRAM; its status. */
static int run_job(char **argv, const struct job_opts *jo)
{
	char id[16] = "";
	int go[2], st;
	ssize_t n;
	pid_t pid;

	if (pipe2(go, O_CLOEXEC)) {
		fprintf(stderr, "%s: %s\n", prog, strerror(errno));
		return 1;
	}
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "%s: %s\n", prog, strerror(errno));
		return 1;
	}
	if (!pid) {
		close(go[1]);
		do
			n = read(go[0], id, sizeof(id) - 1);
		while (n < 0 && errno == EINTR);
		if (n <= 0)
			_exit(126);
		id[n] = '\0';
		setenv("CKPT_JOBID", id, 1);
		execvp(argv[0], argv);
		fprintf(stderr, "%s: cannot run %s: %s\n", prog, argv[0],
			strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	close(go[0]);
	child = pid;
	forward_signals();
	if (start_job(pid, argv, jo, id)) {
		close(go[1]);
		waitpid(pid, NULL, 0);
		return 1;
	}
	fprintf(stderr, "%s: job %s\n", prog, id);
	if (write(go[1], id, strlen(id)) < 0)
		fprintf(stderr, "%s: %s\n", prog, strerror(errno));
	close(go[1]);
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return 1;
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	return 128 + WTERMSIG(st);
}

int cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "lib", required_argument, NULL, 'l' },
		{ "name", required_argument, NULL, 'n' },
		{ "dir", required_argument, NULL, 'd' },
		{ "interval", required_argument, NULL, 'i' },
		{ "keep", required_argument, NULL, 'k' },
		{ "outside", required_argument, NULL, 'o' },
		{ "no-job", no_argument, NULL, 'J' },
		{ "ns", no_argument, NULL, 'N' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	char lib[PATH_MAX], *end;
	struct job_opts jo = {};
	bool job = true, ns = false;
	int c;

	lib[0] = '\0';
	/* '+': options end at the program, whose own options are its. */
	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (c) {
		case 'l':
			snprintf(lib, sizeof(lib), "%s", optarg);
			break;
		case 'n':
			jo.name = optarg;
			break;
		case 'd':
			/* ckptd takes it whole: absolute, no link at its end. */
			if (!realpath(optarg, jo.dir)) {
				fprintf(stderr, "%s: --dir %s: %s\n", prog, optarg,
					strerror(errno));
				return 1;
			}
			break;
		case 'i':
			jo.interval = parse_interval(optarg);
			if (jo.interval < 0) {
				fprintf(stderr, "%s: bad --interval '%s' (seconds, or a number with m or h; at most a week)\n",
					prog, optarg);
				return 1;
			}
			break;
		case 'k':
			jo.keep = strtol(optarg, &end, 10);
			if (*end || !*optarg || jo.keep < 1 || jo.keep > 1000) {
				fprintf(stderr, "%s: bad --keep '%s' (1 to 1000)\n",
					prog, optarg);
				return 1;
			}
			break;
		case 'o':
			if (strcmp(optarg, "close") && strcmp(optarg, "refuse")) {
				fprintf(stderr, "%s: bad --outside '%s' (refuse or close)\n",
					prog, optarg);
				return 1;
			}
			jo.outside_close = !strcmp(optarg, "close");
			break;
		case 'J':
			job = false;
			break;
		case 'N':
			ns = true;
			break;
		case 'h':
			run_usage(stdout);
			return 0;
		default:
			run_usage(stderr);
			return 1;
		}
	}
	if (optind == argc) {
		run_usage(stderr);
		return 1;
	}
	if (ns && !job) {
		fprintf(stderr, "%s: --ns starts a job: not with --no-job\n", prog);
		return 1;
	}
	if (preload(lib))
		return 1;
	if (job && ns)
		return launch_shim() ? 1 : run_job_ns(argv + optind, &jo);
	if (job)
		return launch_shim() ? 1 : run_job(argv + optind, &jo);
	return exec_program(argv + optind);
}

/*
 * libckpt (@lib, or found) into LD_PRELOAD, after a check that the engine
 * is there: 0, or 1 with the message printed.
 */
static int preload(char *lib)
{
	char abs[PATH_MAX], *value;
	const char *old;
	int fd;

	if (lib[0] ? access(lib, R_OK) : find_lib(lib, PATH_MAX)) {
		fprintf(stderr, "%s run: cannot find libckpt at %s: %s\n", prog,
			lib, strerror(errno));
		return 1;
	}
	if (!realpath(lib, abs)) {
		fprintf(stderr, "%s run: %s: %s\n", prog, lib, strerror(errno));
		return 1;
	}
	fd = ckpt_dev_open(O_RDWR);
	if (fd < 0) {
		fprintf(stderr, "%s run: engine not loaded: %s: %s\n", prog,
			ckpt_dev_path(), strerror(-fd));
		return 1;
	}
	close(fd);

	old = getenv("LD_PRELOAD");
	if (asprintf(&value, "%s%s%s", abs, old && *old ? ":" : "",
		     old ? old : "") < 0) {
		fprintf(stderr, "%s run: out of memory\n", prog);
		return 1;
	}
	if (setenv("LD_PRELOAD", value, 1) || setenv("CKPT_PRELOAD", "1", 1)) {
		fprintf(stderr, "%s run: %s\n", prog, strerror(errno));
		return 1;
	}
	return 0;
}

/*
 * The job's launchers start remote processes through ckpt-ssh (join.c),
 * which makes them join the job: Open MPI's rsh agent and Hydra's
 * launcher, unless the user chose others; and the job's plain ssh, the
 * shim lib/ckpt/ssh/ssh beside this program (sshshim.c) first on its PATH.
 */
static int launch_shim(void)
{
	char self[PATH_MAX], dir[PATH_MAX + 16], shim[PATH_MAX], *slash;
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 16);
	char dflt[256];
	const char *old = getenv("PATH");
	char *path = NULL;
	int ret;

	if (len <= 0)
		return 0;
	self[len] = '\0';
	slash = strrchr(self, '/');
	strcpy(slash ? slash + 1 : self, "ckpt-ssh");
	/* The shim's directory, lib/ckpt/ssh beside bin/, if installed. */
	if (slash)
		snprintf(dir, sizeof(dir), "%.*s/../lib/ckpt/ssh",
			 (int)(slash - self), self);
	/* No PATH: execvp()'s default after the shim, as before it. */
	if (!old || !*old)
		old = confstr(_CS_PATH, dflt, sizeof(dflt)) ? dflt : "/usr/bin:/bin";
	if (slash && realpath(dir, shim) &&
	    asprintf(&path, "%s:%s", shim, old) < 0)
		path = NULL;
	ret = setenv("OMPI_MCA_plm_rsh_agent", self, 0) ||
	      setenv("HYDRA_LAUNCHER", "ssh", 0) ||
	      setenv("HYDRA_LAUNCHER_EXEC", self, 0) ||
	      (path && setenv("PATH", path, 1));
	free(path);
	if (ret) {
		fprintf(stderr, "%s run: %s\n", prog, strerror(errno));
		return 1;
	}
	return 0;
}

static int exec_program(char **argv)
{
	execvp(argv[0], argv);
	fprintf(stderr, "%s: cannot run %s: %s\n", prog, argv[0], strerror(errno));
	return errno == ENOENT ? 127 : 126;
}

int run_preloaded(char **argv)
{
	char lib[PATH_MAX] = "";

	return preload(lib) ? 1 : exec_program(argv);
}

