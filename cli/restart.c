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
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/*
 * A job's snapshot restarts through ckptd, which runs the job with this
 * command's standard descriptors; this command stays its foreground
 * (foreground.c).
 */
static int restart_job(const char *dir, json_t *hosts)
{
	char abs[PATH_MAX], who[64];
	json_t *req;
	int ret;

	if (snapshot_path("restart", dir, abs))
		return 1;
	req = json_pack("{s:s, s:s, s:O?}", "op", "restart", "dir", abs,
			"hosts", hosts);
	if (!req) {
		fprintf(stderr, "%s restart: out of memory\n", prog);
		return 1;
	}
	snprintf(who, sizeof(who), "%s restart", prog);
	ret = ckptd_foreground(who, req, " restarted");
	json_decref(req);
	return ret;
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
