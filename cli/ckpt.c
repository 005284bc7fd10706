// SPDX-License-Identifier: GPL-2.0
/*
 * ckpt: the command-line front end of the checkpoint/restart system. This
 * file only dispatches; each command lives in its own file (commands.h).
 */
#include <stdio.h>
#include <string.h>

#include "commands.h"

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *description;
};

const char *prog = "ckpt";

/* One line per command, in the order --help lists them. */
static const struct command commands[] = {
	{ "version", cmd_version, "show the versions of this tool and of the engine" },
	{ "checkpoint", cmd_checkpoint, "capture a process into an image" },
	{ "restart", cmd_restart, "continue the process saved in an image" },
	{ "inspect", cmd_inspect, "check a process image and describe it" },
	{ "run", cmd_run, "start a program as a job of ckptd's (ckpt-run)" },
	{ "job", cmd_job, "checkpoint a job: all its processes, one snapshot" },
	{ "ls", cmd_ls, "list your jobs" },
	{ "status", cmd_status, "show a job" },
	{ "cancel", cmd_cancel, "cancel a job's checkpoint under way" },
	{ "join", cmd_join, "join a job on this node, run a command (ckpt-join)" },
	{ "ssh", cmd_ssh, "ssh for a job's launcher: the command joins the job (ckpt-ssh)" },
	{ "key", cmd_key, "set the key the engine authenticates images with" },
};

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: %s [--version] [--help] COMMAND [ARGS]\n\ncommands:\n",
		prog);
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name,
			commands[i].description);
	fprintf(f, "\n'%s COMMAND --help' describes a command.\n", prog);
}

int main(int argc, char **argv)
{
	const char *base = strrchr(argv[0], '/');
	size_t i;

	/* Installed as ckpt-run, ckpt-join, ckpt-ssh and a job's ssh too. */
	base = base ? base + 1 : argv[0];
	if (!strcmp(base, "ckpt-run")) {
		prog = "ckpt-run";
		return cmd_run(argc, argv);
	}
	if (!strcmp(base, "ckpt-join")) {
		prog = "ckpt-join";
		return cmd_join(argc, argv);
	}
	if (!strcmp(base, "ckpt-ssh")) {
		prog = "ckpt-ssh";
		return cmd_ssh(argc, argv);
	}
	/* A job's plain ssh (lib/ckpt/ssh/ssh, first on its PATH). */
	if (!strcmp(base, "ssh")) {
		prog = "ckpt-ssh";
		return cmd_plain_ssh(argc, argv);
	}

	if (argc < 2) {
		usage(stderr);
		return 1;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("ckpt %s\n", CKPT_VERSION);
		return 0;
	}
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	}
	fprintf(stderr, "%s: unknown command '%s'\n", prog, argv[1]);
	usage(stderr);
	return 1;
}
