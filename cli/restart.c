// SPDX-License-Identifier: GPL-2.0
/*
 * ckpt restart IMAGE|DIR|SNAPSHOT: continue the process saved in IMAGE,
 * the process tree saved in DIR, or the job in a snapshot of ckptd's.
 *
 * Parses the options, hands them to the restorer (lib/restore, restore.h)
 * and prints what it says. Like BLCR's cr_restart, the command stays the
 * restarted process's parent and exits with its status.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "commands.h"
#include "err.h"
#include "meta.h"
#include "proto.h"
#include "restore.h"

static void restart_usage(FILE *f)
{
	fprintf(f,
		"usage: %s restart IMAGE [--timeout SECONDS] [--no-verify] [--lazy [--verbose]]\n"
		"                  [--unauthenticated]\n"
		"       %s restart SNAPSHOT [--hosts OLD=NEW,...]\n"
		"Continues the process saved in IMAGE, with its pid and thread ids,\n"
		"as a child of this command, which exits with its status. IMAGE '-'\n"
		"is standard input; an image on a pipe is read into memory first.\n"
		"The whole image is verified before the process runs: all but the\n"
		"page data first, the page data as the engine copies it in.\n"
		"--no-verify leaves all but the first sections to the engine (a\n"
		"damaged image then kills the half-restored process, as damaged page\n"
		"data always does).\n"
		"--lazy lets the process run before its anonymous memory is in:\n"
		"this command brings each page in when first touched and the rest\n"
		"behind (needs CAP_SYS_PTRACE and IMAGE a regular file; the process\n"
		"dies with this command until then). --verbose says how it went.\n"
		"An image must carry the engine's MAC (the engine's key, see ckpt key);\n"
		"--unauthenticated restarts one without, and then only as yourself.\n"
		"IMAGE a directory of ckpt checkpoint --tree restarts the whole tree,\n"
		"with its pids, in a pid namespace of its own; this command exits with\n"
		"the root's status and passes the signals it is sent on to the root.\n"
		"A job's snapshot (ckpt job) restarts through ckptd, as a job again,\n"
		"with this command's standard descriptors; the command stays in the\n"
		"foreground as with a tree. A job over several nodes restarts on\n"
		"them, or on others: --hosts OLD=NEW,... (its root's share here).\n",
		prog, prog);
}

/*
 * A job's snapshot restarts through ckptd, which runs the job with this
 * command's standard descriptors; this command stays its foreground:
 * signals it gets (Ctrl-C too: the job is not on this terminal's process
 * group) go to the job's root, and the root's status is its exit status.
 */
/* --hosts OLD=NEW,...: the node each snapshot node's share restarts on. */
static json_t *parse_hosts(const char *arg)
{
	json_t *hosts = json_object();
	char *copy = strdup(arg), *item, *save = NULL, *eq;

	for (item = copy ? strtok_r(copy, ",", &save) : NULL; item;
	     item = strtok_r(NULL, ",", &save)) {
		eq = strchr(item, '=');
		if (!eq || eq == item || !eq[1]) {
			fprintf(stderr, "%s restart: --hosts '%s': OLD=NEW pairs, comma-separated\n",
				prog, arg);
			json_decref(hosts);
			free(copy);
			return NULL;
		}
		*eq = '\0';
		json_object_set_new(hosts, item, json_string(eq + 1));
	}
	free(copy);
	return hosts;
}

/* A line of the command's own, also while its terminal is raw. */
static void __attribute__((format(printf, 2, 3)))
restart_say(const struct tty_relay *tty, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s restart: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs(tty->raw ? "\r\n" : "\n", stderr);
}

/* What ckptd says; 1 once it gave the job's end (in *@status) or refused. */
static int restart_heard(int fd, const struct tty_relay *tty, int *status,
			 struct ckpt_err *err)
{
	json_t *msg;
	int ret;

	ret = ckptd_msg_recv(fd, &msg, err);
	if (ret)
		return ret;
	ret = 1;
	if (!json_object_get(msg, "ok")) {
		if (!strcmp(ckptd_msg_str(msg, "event") ?: "", "started"))
			restart_say(tty, "job %s restarted", ckptd_msg_str(msg, "job") ?: "?");
		ret = 0;
	} else if (json_is_true(json_object_get(msg, "ok"))) {
		*status = json_integer_value(json_object_get(msg, "status"));
	} else {
		ret = ckpt_err_set(err, EPERM, "%s", ckptd_msg_str(msg, "error") ?: "refused");
	}
	json_decref(msg);
	return ret;
}

static int restart_job(const char *dir, json_t *hosts)
{
	static const int sigs[] = {
		SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGCONT,
		SIGWINCH,
	};
	int stdfds[3] = { 0, 1, 2 };
	struct tty_relay tty = { .master = -1, .slave = -1 };
	char abs[PATH_MAX];
	struct signalfd_siginfo si;
	struct ckpt_err err;
	struct pollfd pfd[4];
	json_t *req;
	sigset_t set;
	int fd = -1, sfd, ret, status = -1;
	size_t i;

	if (snapshot_path("restart", dir, abs))
		return 1;
	sigemptyset(&set);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaddset(&set, sigs[i]);
	sigprocmask(SIG_BLOCK, &set, NULL);
	sfd = signalfd(-1, &set, SFD_CLOEXEC);
	ret = tty_relay_open(&tty, stdfds);
	if (ret < 0)
		ckpt_err_set(&err, -ret, "cannot open a terminal for the job: %s",
			     strerror(-ret));
	else
		fd = ckptd_connect(&err);
	req = json_pack("{s:s, s:s, s:O?, s:b}", "op", "restart", "dir", abs,
			"hosts", hosts, "tty", ret > 0);
	ret = ret < 0 ? ret : fd < 0 ? fd : ckptd_msg_send(fd, req, stdfds, 3, &err);
	json_decref(req);
	while (!ret) {
		pfd[0] = (struct pollfd){ .fd = fd, .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = sfd, .events = POLLIN };
		if (poll(pfd, 2 + tty_relay_pollfds(&tty, pfd + 2), -1) < 0)
			continue;
		tty_relay_copy(&tty, pfd + 2);
		if (pfd[1].revents && read(sfd, &si, sizeof(si)) == sizeof(si)) {
			if (si.ssi_signo == SIGWINCH) {
				tty_relay_resize(&tty);
			} else {
				if (si.ssi_signo == SIGCONT)
					tty_relay_resume(&tty);
				req = json_pack("{s:s, s:i}", "op", "signal", "sig",
						(int)si.ssi_signo);
				ckptd_msg_send(fd, req, NULL, 0, NULL);
				json_decref(req);
			}
		}
		if (pfd[0].revents)
			ret = restart_heard(fd, &tty, &status, &err);
	}
	if (fd >= 0)
		close(fd);
	tty_relay_close(&tty);
	if (ret < 0) {
		fprintf(stderr, "%s restart: %s\n", prog,
			ret == -EPIPE ? "ckptd closed the connection before the job ended" :
			err.msg);
		return 1;
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

/* The restorer's notes, as the command's own messages. */
static void restart_note(void *arg, const char *msg)
{
	(void)arg;
	fprintf(stderr, "%s restart: %s\n", prog, msg);
}

/*
 * The image's vdso address is taken by this process's own memory, which
 * the kernel placed at random: the same command, run again, is placed
 * elsewhere. A few times, then the error stands.
 */
static void again(int argc, char **argv)
{
	const char *tries = getenv("CKPT_RESTART_TRIES");
	int n = tries ? atoi(tries) : 0;
	char **args, num[16];

	if (n >= 4 || !(args = calloc(argc + 2, sizeof(*args))))
		return;
	snprintf(num, sizeof(num), "%d", n + 1);
	if (setenv("CKPT_RESTART_TRIES", num, 1))
		return;
	args[0] = (char *)prog;
	memcpy(args + 1, argv, argc * sizeof(*args));
	execv("/proc/self/exe", args);
	free(args);
}

/* Options into @o and @hosts: -1 to go on, else the exit status. */
static int restart_parse(int argc, char **argv, struct ckpt_restore_opts *o,
			 json_t **hosts)
{
	static const struct option opts[] = {
		{ "timeout", required_argument, NULL, 't' },
		{ "no-verify", no_argument, NULL, 'n' },
		{ "lazy", no_argument, NULL, 'l' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "unauthenticated", no_argument, NULL, 'u' },
		{ "hosts", required_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	char *end;
	int c;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			o->timeout_ms = strtoul(optarg, &end, 10) * 1000;
			if (*end || !*optarg) {
				fprintf(stderr, "%s restart: bad --timeout '%s'\n",
					prog, optarg);
				return 1;
			}
			break;
		case 'n':
			o->no_verify = true;
			break;
		case 'l':
			o->lazy = true;
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'u':
			o->unauthenticated = true;
			break;
		case 'H':
			json_decref(*hosts);
			*hosts = parse_hosts(optarg);
			if (!*hosts)
				return 1;
			break;
		case 'h':
			restart_usage(stdout);
			return 0;
		default:
			restart_usage(stderr);
			return 1;
		}
	}
	if (optind != argc - 1) {
		restart_usage(stderr);
		return 1;
	}
	return -1;
}

int cmd_restart(int argc, char **argv)
{
	struct ckpt_restore_opts o = {
		.note = restart_note,
		.forward_signals = true,
	};
	struct ckpt_err err;
	json_t *hosts = NULL;
	int ret, status;

	ret = restart_parse(argc, argv, &o, &hosts);
	if (ret >= 0) {
		json_decref(hosts);
		return ret;
	}
	o.image = argv[optind];
	if (snapshot_dir(o.image)) {
		status = restart_job(o.image, hosts);
		json_decref(hosts);
		return status;
	}
	if (hosts && access(o.image, F_OK)) {
		fprintf(stderr, "%s restart: %s: %s\n", prog, o.image, strerror(errno));
		json_decref(hosts);
		return 1;
	}
	if (hosts) {
		fprintf(stderr, "%s restart: --hosts is for a job's snapshot, and %s is none\n",
			prog, o.image);
		json_decref(hosts);
		return 1;
	}

	ret = ckpt_restore(&o, &status, &err);
	if (ret == -EADDRINUSE && strcmp(o.image, "-"))
		again(argc, argv);
	if (ret) {
		fprintf(stderr, "%s restart: %s\n", prog, err.msg);
		return 1;
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}
