// SPDX-License-Identifier: GPL-2.0
/*
 * The launch shim of a job's remote processes (Documentation/ckptd.md,
 * "Several nodes"):
 *
 *   ckpt-ssh [SSH OPTIONS] HOST COMMAND...     (ckpt ssh)
 *       what ckpt-run gives Open MPI (plm_rsh_agent) and MPICH's Hydra
 *       (launcher exec) as their ssh: runs ssh HOST ckpt-join --coordinator
 *       THIS-NODE $CKPT_JOBID -- COMMAND...
 *   ckpt-join [--coordinator NODE] JOBID -- COMMAND...   (ckpt join)
 *       asks this node's ckptd to put it into job JOBID (NODE's job, which
 *       NODE's ckptd confirms has the caller's uid), then executes COMMAND
 *       with libckpt preloaded, as ckpt-run does.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "proto.h"

/* ssh's options that take an argument (ssh(1)). */
#define SSH_ARG_OPTS	"BbcDEeFIiJLlmOopQRSWw"

int cmd_ssh(int argc, char **argv)
{
	char self[PATH_MAX], node[HOST_NAME_MAX + 1], *slash;
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
	/* The same installation on every node: ckpt-join beside this ckpt. */
	slash = strrchr(self, '/');
	strcpy(slash ? slash + 1 : self, "ckpt-join");
	av = calloc(argc + 8, sizeof(*av));
	if (!av)
		return 1;
	av[n++] = "ssh";
	for (i = 1; i <= host; i++)
		av[n++] = argv[i];
	av[n++] = self;
	av[n++] = "--coordinator";
	av[n++] = node;
	av[n++] = (char *)job;
	av[n++] = "--";
	for (i = host + 1; i < argc; i++)
		av[n++] = argv[i];
	execvp("ssh", av);
	fprintf(stderr, "%s: cannot run ssh: %s\n", prog, strerror(errno));
	return 127;
}

int cmd_join(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "coordinator", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	const char *coord = NULL;
	struct ckpt_err err;
	json_t *req, *res;
	char **cmd;
	int c, ret;

	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			coord = optarg;
			break;
		case 'h':
			printf("usage: ckpt-join [--coordinator NODE] JOBID -- COMMAND...\n"
			       "Puts this process into job JOBID (kept by NODE's ckptd), then runs\n"
			       "COMMAND with libckpt preloaded. ckpt-ssh runs it on remote nodes.\n");
			return 0;
		default:
			return 1;
		}
	}
	/* JOBID, then "--" (getopt stopped at JOBID), then the command. */
	cmd = argv + optind + 1;
	if (*cmd && !strcmp(*cmd, "--"))
		cmd++;
	if (argc - optind < 2 || !*cmd) {
		fprintf(stderr, "usage: ckpt-join [--coordinator NODE] JOBID -- COMMAND...\n");
		return 1;
	}
	req = json_pack("{s:s, s:s}", "op", "join", "job", argv[optind]);
	if (req && coord)
		json_object_set_new(req, "coordinator", json_string(coord));
	ret = req ? ckptd_call(req, &res, &err) : -ENOMEM;
	json_decref(req);
	if (ret) {
		fprintf(stderr, "%s: job %s: %s\n", prog, argv[optind],
			ret == -ENOMEM ? "out of memory" : err.msg);
		return 1;
	}
	json_decref(res);
	setenv("CKPT_JOBID", argv[optind], 1);
	return run_preloaded(cmd);
}
