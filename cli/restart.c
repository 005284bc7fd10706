// SPDX-License-Identifier: GPL-2.0
/*
 * ckpt restart IMAGE|DIR: continue the process saved in IMAGE, or the
 * process tree saved in DIR.
 *
 * Parses the options, hands them to the restorer (lib/restore, restore.h)
 * and prints what it says. Like BLCR's cr_restart, the command stays the
 * restarted process's parent and exits with its status.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "commands.h"
#include "restore.h"

static void restart_usage(FILE *f)
{
	fprintf(f,
		"usage: %s restart IMAGE [--timeout SECONDS] [--no-verify] [--lazy [--verbose]]\n"
		"                  [--unauthenticated]\n"
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
		"the root's status and passes the signals it is sent on to the root.\n",
		prog);
}

/* The restorer's notes, as the command's own messages. */
static void restart_note(void *arg, const char *msg)
{
	(void)arg;
	fprintf(stderr, "%s restart: %s\n", prog, msg);
}

int cmd_restart(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "timeout", required_argument, NULL, 't' },
		{ "no-verify", no_argument, NULL, 'n' },
		{ "lazy", no_argument, NULL, 'l' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "unauthenticated", no_argument, NULL, 'u' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct ckpt_restore_opts o = {
		.note = restart_note,
		.forward_signals = true,
	};
	struct ckpt_err err;
	int c, status;
	char *end;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			o.timeout_ms = strtoul(optarg, &end, 10) * 1000;
			if (*end || !*optarg) {
				fprintf(stderr, "%s restart: bad --timeout '%s'\n",
					prog, optarg);
				return 1;
			}
			break;
		case 'n':
			o.no_verify = true;
			break;
		case 'l':
			o.lazy = true;
			break;
		case 'v':
			o.verbose = true;
			break;
		case 'u':
			o.unauthenticated = true;
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
	o.image = argv[optind];

	if (ckpt_restore(&o, &status, &err)) {
		fprintf(stderr, "%s restart: %s\n", prog, err.msg);
		return 1;
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}
