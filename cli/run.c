// SPDX-License-Identifier: GPL-2.0
/*
 * ckpt run (also installed as ckpt-run): start a program under checkpoint
 * control. Today that means libckpt is preloaded into it and into every
 * program it executes, so unmodified programs register for callbacks;
 * joining a job kept by ckptd comes with the daemon.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "engine.h"

#ifndef CKPT_LIBDIR
#define CKPT_LIBDIR "/usr/local/lib"
#endif

static void run_usage(FILE *f)
{
	fprintf(f,
		"usage: %s run [--lib PATH] PROGRAM [ARGS...]\n"
		"       ckpt-run [--lib PATH] PROGRAM [ARGS...]\n"
		"Runs PROGRAM with libckpt preloaded into it and the programs it\n"
		"executes (LD_PRELOAD, CKPT_PRELOAD=1), so their callbacks and\n"
		"critical sections take part in checkpoints.\n"
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

int cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "lib", required_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	char lib[PATH_MAX], abs[PATH_MAX], *preload;
	const char *old;
	int c, fd;

	lib[0] = '\0';
	/* '+': options end at the program, whose own options are its. */
	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (c) {
		case 'l':
			snprintf(lib, sizeof(lib), "%s", optarg);
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
	if (lib[0] ? access(lib, R_OK) : find_lib(lib, sizeof(lib))) {
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
	if (asprintf(&preload, "%s%s%s", abs, old && *old ? ":" : "",
		     old ? old : "") < 0) {
		fprintf(stderr, "%s run: out of memory\n", prog);
		return 1;
	}
	if (setenv("LD_PRELOAD", preload, 1) || setenv("CKPT_PRELOAD", "1", 1)) {
		fprintf(stderr, "%s run: %s\n", prog, strerror(errno));
		return 1;
	}
	execvp(argv[optind], argv + optind);
	fprintf(stderr, "%s run: cannot run %s: %s\n", prog, argv[optind],
		strerror(errno));
	return errno == ENOENT ? 127 : 126;
}
