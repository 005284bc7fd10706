// SPDX-License-Identifier: GPL-2.0
/*
 * ckpt inspect's command line: IMAGE and DIR are read here, through
 * inspect.c and inspect_tree.c (which the image fuzzer drives too);
 * SNAPSHOT, root's files, through ckptd (job.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "inspect.h"
#include "json.h"
#include "restore.h"

static void inspect_usage(FILE *f)
{
	fprintf(f,
		"usage: %s inspect [--json] [-v|--verbose] IMAGE|DIR|SNAPSHOT\n"
		"Checks a process image the way restart would, section by\n"
		"section, and describes it: the process, its threads and\n"
		"mappings, sizes. IMAGE '-' reads standard input. Exits 1 when\n"
		"the image is not valid, naming the problem, the section and\n"
		"its offset. DIR, a tree's directory (ckpt checkpoint --tree):\n"
		"every member's image and its place in the tree are checked, and\n"
		"one line per process shown (-v: each image's report too, in text).\n"
		"SNAPSHOT, a job's (ckpt job): ckptd checks its metadata's MAC and\n"
		"every image's checksum, as a restart would, and shows the job,\n"
		"its nodes and processes; yours only, unless you are root.\n",
		prog);
}

int cmd_inspect(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	unsigned int flags = 0;
	struct ckpt_image img;
	struct inspect in;
	const char *path, *name;
	int c, fd, ret;

	while ((c = getopt_long(argc, argv, "vh", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			flags |= INSPECT_JSON;
			break;
		case 'v':
			flags |= INSPECT_VERBOSE;
			break;
		case 'h':
			inspect_usage(stdout);
			return 0;
		default:
			inspect_usage(stderr);
			return 1;
		}
	}
	if (optind != argc - 1) {
		inspect_usage(stderr);
		return 1;
	}

	path = argv[optind];
	if (snapshot_dir(path))
		return inspect_snapshot(path, flags & INSPECT_JSON);
	if (inspect_is_tree(path))
		return inspect_tree(path, flags);
	if (!strcmp(path, "-")) {
		fd = STDIN_FILENO;
		name = "stdin";
	} else {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			fprintf(stderr, "%s inspect: cannot open ", prog);
			text_string(stderr, path);
			fprintf(stderr, ": %s\n", strerror(errno));
			return 1;
		}
		name = path;
	}

	ckpt_image_init(&img);
	inspect_init(&in, &img, flags);
	ckpt_image_read(&img, fd, 0);
	ret = inspect_report(stdout, stderr, name, &img, &in);
	inspect_free(&in);
	ckpt_image_free(&img);
	if (fd != STDIN_FILENO)
		close(fd);
	if (fflush(stdout) && !ret) {
		fprintf(stderr, "%s inspect: cannot write: %s\n", prog,
			strerror(errno));
		ret = 1;
	}
	return ret;
}
