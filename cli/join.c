// SPDX-License-Identifier: GPL-2.0
/*
 * The launch shim of a job's remote processes (Documentation/ckptd.md,
 * "Several nodes"):
 *
 *   ckpt-ssh [SSH OPTIONS] HOST COMMAND...     (ckpt ssh)
 *       what ckpt-run gives Open MPI (plm_rsh_agent) and MPICH's Hydra
 *       (launcher exec) as their ssh: runs ssh HOST ckpt-join --coordinator
 *       THIS-NODE --link THIS-NODE:PORT $CKPT_JOBID -- COMMAND..., then
 *       serves COMMAND's standard streams and exit status over the link
 *       (link.c) once ssh has ended. A job's plain ssh is this too, to a
 *       cluster's node (sshshim.c).
 *   ckpt-join [--coordinator NODE] [--link NODE:PORT [--ns]] JOBID -- COMMAND...
 *       (ckpt join) asks this node's ckptd to put it into job JOBID (NODE's
 *       job, which NODE's ckptd confirms has the caller's uid), then
 *       executes COMMAND with libckpt preloaded, as ckpt-run does; with
 *       --link, it reads the link's token from its standard input, connects
 *       the link and leaves a relay in the job that runs COMMAND over it.
 *       With --ns (ckpt-ssh's in a ckpt-run --ns job), ckptd starts that
 *       relay in namespaces of the job's own on this node, as ckpt-run
 *       --ns's program, unless the job has them here already.
 *   ckpt-join --relay -- COMMAND...
 *       that relay, its link as its standard input.
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
#include "err.h"
#include "link.h"
#include "proto.h"

static int ssh_linked(const char *ssh, char **av, char *where,
		      const char *node);
static char *quoted(char **words, int nr);

int cmd_ssh(int argc, char **argv)
{
	char self[PATH_MAX], node[HOST_NAME_MAX + 1], where[HOST_NAME_MAX + 8];
	char ssh[PATH_MAX], *slash;
	const char *job = getenv("CKPT_JOBID");
	char **av;
	int i, n = 0, host;
	ssize_t len;

	/* Options up to the host are ssh's; what follows is the command. */
	for (host = 1; host < argc && argv[host][0] == '-'; host++)
		if (argv[host][2] == '\0' && strchr(SSH_ARG_OPTS, argv[host][1]))
			host++;
	if (host >= argc - 1 || !job || !*job) {
		fprintf(stderr, "usage: ckpt-ssh [SSH OPTIONS] HOST COMMAND...\n"
			"Runs COMMAND on HOST through ssh, in job $CKPT_JOBID (set by ckpt-run)%s.\n",
			job && *job ? "" : ", which is not set here");
		return 1;
	}
	len = readlink("/proc/self/exe", self, sizeof(self) - 16);
	if (len <= 0 || gethostname(node, sizeof(node) - 1)) {
		fprintf(stderr, "%s: %s\n", prog, strerror(errno));
		return 1;
	}
	self[len] = '\0';
	node[sizeof(node) - 1] = '\0';
	/* The system's: never a job's plain ssh, which is this program. */
	i = ssh_system(ssh, sizeof(ssh));
	if (i) {
		fprintf(stderr, "%s: cannot find the system's ssh: %s\n", prog,
			strerror(-i));
		return 255;
	}
	/* The same installation on every node: ckpt-join beside this ckpt. */
	slash = strrchr(self, '/');
	strcpy(slash ? slash + 1 : self, "ckpt-join");
	av = calloc(argc + 15, sizeof(*av));
	if (!av)
		return 1;
	av[n++] = "ssh";
	/*
	 * A connection an ssh config shares (ControlMaster auto) may be used,
	 * but never made here: its master would stay in the job, holding a
	 * connection to a node's sshd, which no checkpoint could take. Before
	 * the caller's options, since ssh keeps an option's first value.
	 */
	av[n++] = "-o";
	av[n++] = "ControlMaster=no";
	for (i = 1; i <= host; i++)
		av[n++] = argv[i];
	av[n++] = self;
	av[n++] = "--coordinator";
	av[n++] = node;
	av[n++] = "--link";
	av[n++] = where;
	/* A ckpt-run --ns job's (run.c): its share there in namespaces too. */
	if (getenv("CKPT_NS") && !strcmp(getenv("CKPT_NS"), "1"))
		av[n++] = "--ns";
	av[n++] = (char *)job;
	av[n++] = "--";
	/*
	 * ssh hands its words, joined by spaces, to the remote user's shell,
	 * whose redirections would then be ckpt-join's: the command goes to
	 * a shell ckpt-join runs instead, as one quoted word.
	 */
	av[n++] = "sh";
	av[n++] = "-c";
	av[n++] = quoted(argv + host + 1, argc - host - 1);
	if (!av[n - 1])
		return 1;
	return ssh_linked(ssh, av, where, node);
}

/* @words joined by spaces, in single quotes for a shell; NULL, no memory. */
static char *quoted(char **words, int nr)
{
	size_t len = 3;
	char *q, *p;
	int i;

	for (i = 0; i < nr; i++)
		len += 4 * strlen(words[i]) + 1;
	q = p = malloc(len);
	if (!q)
		return NULL;
	*p++ = '\'';
	for (i = 0; i < nr; i++) {
		const char *c;

		if (i)
			*p++ = ' ';
		for (c = words[i]; *c; c++) {
			if (*c == '\'') {
				memcpy(p, "'\\''", 4);	/* ' ends, \' is one, ' again */
				p += 4;
			} else {
				*p++ = *c;
			}
		}
	}
	*p++ = '\'';
	*p = '\0';
	return q;
}

/*
 * Runs ssh (@path, @av) with the link's token on its standard input,
 * accepts the link from the remote side, lets ssh end, and serves the
 * link: the remote command's exit status. ssh's own failure is its status.
 */
static int ssh_linked(const char *path, char **av, char *where,
		      const char *node)
{
	char token[LINK_TOKEN_LEN + 2];
	unsigned int port;
	int l, link, in[2], st = 0;
	ssize_t wrote;
	pid_t ssh;

	l = link_listen(&port);
	if (l < 0 || link_token(token) || pipe2(in, O_CLOEXEC)) {
		fprintf(stderr, "%s: cannot make the job's link: %s\n", prog,
			strerror(errno));
		return 255;
	}
	snprintf(where, HOST_NAME_MAX + 8, "%s:%u", node, port);
	ssh = fork();
	if (ssh < 0)
		return 255;
	if (!ssh) {
		dup2(in[0], 0);
		execv(path, av);
		fprintf(stderr, "%s: cannot run ssh: %s\n", prog, strerror(errno));
		_exit(127);
	}
	close(in[0]);
	signal(SIGPIPE, SIG_IGN);
	/* Should ssh have ended already, link_accept() says so. */
	token[LINK_TOKEN_LEN] = '\n';
	wrote = write(in[1], token, LINK_TOKEN_LEN + 1);
	token[LINK_TOKEN_LEN] = '\0';
	close(in[1]);
	(void)wrote;
	link = link_accept(l, token, ssh, &st);
	close(l);
	if (link == -ECHILD)
		return WIFEXITED(st) ? WEXITSTATUS(st) : 255;
	if (link < 0) {
		fprintf(stderr, "%s: %s did not connect the job's link within %d s\n",
			prog, av[1], LINK_WAIT_S);
		kill(ssh, SIGTERM);
		waitpid(ssh, NULL, 0);
		return 255;
	}
	/* ssh's connection ends in sshd, no process of the job: it goes. */
	waitpid(ssh, &st, 0);	/* (ECHILD if link_accept() reaped it) */
	return link_local(link);
}

/*
 * --link NODE:PORT: the token from standard input, the link connected:
 * its descriptor, or -1 with the error said.
 */
static int link_open(const char *where)
{
	char token[LINK_TOKEN_LEN + 2] = "", node[HOST_NAME_MAX + 1];
	const char *colon = strrchr(where, ':');
	int link;

	if (!colon || colon == where || (size_t)(colon - where) > HOST_NAME_MAX) {
		fprintf(stderr, "%s: --link %s: not NODE:PORT\n", prog, where);
		return -1;
	}
	snprintf(node, sizeof(node), "%.*s", (int)(colon - where), where);
	if (!fgets(token, sizeof(token), stdin) || strlen(token) != LINK_TOKEN_LEN + 1) {
		fprintf(stderr, "%s: --link: no token on standard input\n", prog);
		return -1;
	}
	token[LINK_TOKEN_LEN] = '\0';
	link = link_connect(node, colon + 1, token);
	if (link < 0)
		fprintf(stderr, "%s: cannot connect the job's link to %s: %s\n",
			prog, where, strerror(errno));
	return link;
}

/*
 * The relay: @cmd, in a process group of its own, with its standard
 * streams over @link (link_remote()), whose end is the relay's: its
 * status, once @cmd has ended and the link said so.
 */
static int relay(int link, char **cmd)
{
	int in[2], out[2], err[2], null;
	pid_t child;

	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC))
		return 1;
	child = fork();
	if (!child) {
		setpgid(0, 0);	/* hung up as a group, as sshd would */
		dup2(in[0], 0);
		dup2(out[1], 1);
		dup2(err[1], 2);
		_exit(run_preloaded(cmd));
	}
	if (child > 0)
		setpgid(child, child);	/* whichever of the two runs first */
	close(in[0]);
	close(out[1]);
	close(err[1]);
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	dup2(null, 0);
	dup2(null, 1);
	dup2(null, 2);
	if (child < 0)
		kill(getpid(), SIGKILL);
	return link_remote(link, child, in[1], out[0], err[0]);
}

/*
 * A relay, which ssh's session does not wait for, runs @cmd over @link,
 * in a session of its own. Returns only on failure.
 */
static int relay_alone(int link, char **cmd)
{
	fflush(NULL);
	/* ssh's session ends with this process: the relay goes on alone. */
	if (fork())
		_exit(0);
	setsid();
	_exit(relay(link, cmd));
}

/* The words of ckpt join --relay -- @cmd, this program's path first. */
static json_t *relay_cmd(char **cmd)
{
	json_t *a = json_array();
	char self[PATH_MAX];
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int i;

	if (!a || len <= 0) {
		json_decref(a);
		return NULL;
	}
	self[len] = '\0';
	/* The one program that is ckpt and ckpt-join: its join command. */
	json_array_append_new(a, json_string(self));
	json_array_append_new(a, json_string("join"));
	json_array_append_new(a, json_string("--relay"));
	json_array_append_new(a, json_string("--"));
	for (i = 0; cmd[i]; i++)
		if (json_array_append_new(a, json_string(cmd[i]))) {
			fprintf(stderr, "%s: --ns: argument %d is not UTF-8 text\n", prog, i + 1);
			json_decref(a);
			return NULL;
		}
	return a;
}

/*
 * One "join" with "ns" (@req, @fds) to ckptd: 1 once the relay started,
 * 0 for a plain join's answer, -EAGAIN when ckptd asks to try again, or
 * -errno with @err.
 */
static int ns_ask(const json_t *req, const int fds[3], struct ckpt_err *err)
{
	const char *ev = NULL;
	json_t *msg = NULL;
	int fd, ret;

	fd = ckptd_connect(err);
	if (fd < 0)
		return fd;
	ret = ckptd_msg_send(fd, req, fds, 3, err);
	while (!ret && !(ret = ckptd_msg_recv(fd, &msg, err))) {
		ev = ckptd_msg_str(msg, "event");
		if ((ev && !strcmp(ev, "started")) || json_object_get(msg, "ok"))
			break;
		json_decref(msg);
		msg = NULL;
	}
	if (ret == -EPIPE)
		ckpt_err_set(err, EPIPE, "ckptd closed the connection");
	else if (!ret && ev && !strcmp(ev, "started"))
		ret = 1;
	else if (!ret && json_is_true(json_object_get(msg, "again")))
		ret = -EAGAIN;
	else if (!ret && !json_is_true(json_object_get(msg, "ok")))
		ret = ckpt_err_set(err, EPERM, "%s", ckptd_msg_str(msg, "error") ?: "refused");
	json_decref(msg);
	close(fd);
	return ret;
}

/* How long a join waits for ckptd's other work on its job: a restart's. */
#define NS_AGAIN_S	3600

/*
 * --ns: "join" asks ckptd to start the relay (ckpt join --relay, the link
 * its standard input) in namespaces of the job's own here, with this
 * process's environment (CKPT_NS=1 in it, for what it launches in turn)
 * and working directory. "started": done, ssh's session ends. A plain
 * answer (the job's processes here are in this node's namespaces): this
 * process is in the job, and its relay goes on as without --ns.
 */
static int join_ns(json_t *req, int link, char **cmd)
{
	extern char **environ;
	json_t *env = json_array(), *words;
	int fds[3] = { link, -1, -1 }, i, ret = -ENOMEM;
	char cwd[PATH_MAX];
	struct ckpt_err err;

	words = relay_cmd(cmd);
	for (i = 0; env && words && environ[i]; i++)
		if (strncmp(environ[i], "CKPT_JOBID=", 11) &&
		    strncmp(environ[i], "CKPT_NS=", 8) &&
		    json_array_append_new(env, json_string(environ[i]))) {
			fprintf(stderr, "%s: --ns: the environment's %.*s is not UTF-8 text\n",
				prog, (int)strcspn(environ[i], "="), environ[i]);
			goto out;
		}
	if (!words)
		goto out;	/* said */
	if (!getcwd(cwd, sizeof(cwd))) {
		fprintf(stderr, "%s: --ns: the working directory: %s\n", prog, strerror(errno));
		goto out;
	}
	fds[1] = fds[2] = open("/dev/null", O_RDWR | O_CLOEXEC);
	i = errno;
	if (!env || json_array_append_new(env, json_string("CKPT_NS=1")) ||
	    json_object_set_new(req, "cwd", json_string(cwd)) ||
	    json_object_set_new(req, "ns", json_true()) ||
	    json_object_set(req, "env", env) || json_object_set(req, "cmd", words) ||
	    fds[1] < 0) {
		fprintf(stderr, "%s: --ns: %s\n", prog,
			fds[1] < 0 ? strerror(i) : "out of memory");
		goto out;
	}
	for (i = 0; (ret = ns_ask(req, fds, &err)) == -EAGAIN && i < NS_AGAIN_S * 5; i++)
		usleep(200000);
	if (ret == -EAGAIN)
		ckpt_err_set(&err, EAGAIN, "ckptd was at work on the job here for %d s", NS_AGAIN_S);
	if (ret < 0)
		fprintf(stderr, "%s: job %s: %s\n", prog, ckptd_msg_str(req, "job"), err.msg);
out:
	json_decref(env);
	json_decref(words);
	if (fds[1] >= 0)
		close(fds[1]);
	if (ret < 0)
		return 1;
	if (ret)
		return 0;	/* ckptd's relay runs: this one's work is done */
	setenv("CKPT_JOBID", ckptd_msg_str(req, "job"), 1);
	return relay_alone(link, cmd);
}

int cmd_join(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "coordinator", required_argument, NULL, 'c' },
		{ "link", required_argument, NULL, 'l' },
		{ "ns", no_argument, NULL, 'n' },
		{ "relay", no_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	const char *coord = NULL, *link = NULL;
	bool ns = false, relaying = false;
	struct ckpt_err err;
	json_t *req, *res;
	char **cmd;
	int c, ret, l;

	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			coord = optarg;
			break;
		case 'l':
			link = optarg;
			break;
		case 'n':
			ns = true;
			break;
		case 'r':
			relaying = true;
			break;
		case 'h':
			printf("usage: ckpt-join [--coordinator NODE] [--link NODE:PORT [--ns]] JOBID -- COMMAND...\n"
			       "Puts this process into job JOBID (kept by NODE's ckptd), then runs\n"
			       "COMMAND with libckpt preloaded. ckpt-ssh runs it on remote nodes,\n"
			       "with --link: COMMAND's standard streams go over the job's link;\n"
			       "with --ns, from namespaces of the job's own on this node.\n");
			return 0;
		default:
			return 1;
		}
	}
	/* --relay -- COMMAND: the link is standard input (join_ns()). */
	if (relaying) {
		cmd = argv + optind;
		if (*cmd && !strcmp(*cmd, "--"))
			cmd++;
		l = *cmd ? fcntl(0, F_DUPFD_CLOEXEC, 3) : -1;
		if (l < 0) {
			fprintf(stderr, "usage: ckpt-join --relay -- COMMAND... (the link on standard input)\n");
			return 1;
		}
		return relay(l, cmd);
	}
	/* JOBID, then "--" (getopt stopped at JOBID), then the command. */
	cmd = argv + optind + 1;
	if (*cmd && !strcmp(*cmd, "--"))
		cmd++;
	if (argc - optind < 2 || !*cmd || (ns && !link)) {
		fprintf(stderr, "usage: ckpt-join [--coordinator NODE] [--link NODE:PORT [--ns]] JOBID -- COMMAND...\n");
		return 1;
	}
	req = json_pack("{s:s, s:s}", "op", "join", "job", argv[optind]);
	if (req && coord)
		json_object_set_new(req, "coordinator", json_string(coord));
	if (req && ns) {
		l = link_open(link);
		ret = l < 0 ? 1 : join_ns(req, l, cmd);
		json_decref(req);
		return ret;
	}
	ret = req ? ckptd_call(req, &res, &err) : -ENOMEM;
	json_decref(req);
	if (ret) {
		fprintf(stderr, "%s: job %s: %s\n", prog, argv[optind],
			ret == -ENOMEM ? "out of memory" : err.msg);
		return 1;
	}
	json_decref(res);
	setenv("CKPT_JOBID", argv[optind], 1);
	if (!link)
		return run_preloaded(cmd);
	l = link_open(link);
	return l < 0 ? 1 : relay_alone(l, cmd);
}
