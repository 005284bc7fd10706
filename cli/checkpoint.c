// SPDX-License-Identifier: GPL-2.0
/*
 * ckpt checkpoint PID: capture one process into an image file.
 *
 * The image is written to a temporary file next to its final name (mode
 * 0600) and renamed into place only once complete and synced, so a failed
 * checkpoint never damages an earlier image of the same name.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/ckpt.h>

#include "commands.h"
#include "engine.h"
#include "json.h"
#include "treedir.h"

/* The message of a failed checkpoint, as each step has its own. */
static void checkpoint_failed(long pid, const char *out, const char *tmp,
			      enum ckpt_dev_step step, int err, const char *msg)
{
	switch (step) {
	case CKPT_DEV_CREATE:
		fprintf(stderr, "%s checkpoint: cannot create %s: %s\n",
			prog, tmp, strerror(err));
		break;
	case CKPT_DEV_CHECKPOINT:
		fprintf(stderr, "%s checkpoint: pid %ld: %s (%s)\n", prog, pid,
			*msg ? msg : strerror(err), strerror(err));
		break;
	case CKPT_DEV_WRITE:
		fprintf(stderr, "%s checkpoint: writing %s: %s\n", prog,
			tmp, strerror(err));
		break;
	case CKPT_DEV_RENAME:
		fprintf(stderr, "%s checkpoint: cannot rename %s to %s: %s\n",
			prog, tmp, out, strerror(err));
		break;
	}
}

static void checkpoint_usage(FILE *f)
{
	fprintf(f,
		"usage: %s checkpoint PID [-o IMAGE] [--stop|--kill] [--timeout SECONDS] [--json]\n"
		"       %s checkpoint --tree PID [-o DIR] [--stop|--kill] [--tmpfs] [--timeout SECONDS] [--json]\n"
		"Captures process PID (all its threads) into IMAGE (default ckpt-PID.img;\n"
		"'-' writes to standard output). The process continues, unless --stop\n"
		"leaves it stopped (SIGSTOP) or --kill ends it once captured.\n"
		"With --tree, PID and all its descendants, frozen together, into the new\n"
		"directory DIR (default ckpt-tree-PID): one image per process and a manifest;\n"
		"with --tmpfs, the content of the tmpfs files they map shared or hold open\n"
		"for reading too, made again at restart where they are gone.\n",
		prog, prog);
}

/* Options and PID into @a, @out, @json: -1 to go on, else the exit status. */
static int checkpoint_parse(int argc, char **argv, struct ckpt_checkpoint *a,
			    const char **out, bool *json, bool *tree)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "stop", no_argument, NULL, 's' },
		{ "kill", no_argument, NULL, 'k' },
		{ "timeout", required_argument, NULL, 't' },
		{ "json", no_argument, NULL, 'j' },
		{ "tree", no_argument, NULL, 'T' },
		{ "tmpfs", no_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	unsigned long s;
	char *end;
	long pid;
	int c;

	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			*out = optarg;
			break;
		case 's':
			a->flags |= CKPT_CHECKPOINT_STOP;
			break;
		case 'k':
			a->flags |= CKPT_CHECKPOINT_KILL;
			break;
		case 't':
			s = strtoul(optarg, &end, 10);
			if (*end || !*optarg || s > CKPT_TIMEOUT_MAX_MS / 1000) {
				fprintf(stderr, "%s checkpoint: bad --timeout '%s' (seconds, at most %u)\n",
					prog, optarg, CKPT_TIMEOUT_MAX_MS / 1000);
				return 1;
			}
			a->timeout_ms = s * 1000;
			break;
		case 'j':
			*json = true;
			break;
		case 'T':
			*tree = true;
			break;
		case 'L':
			a->flags |= CKPT_CHECKPOINT_LOCAL_FILES;
			break;
		case 'h':
			checkpoint_usage(stdout);
			return 0;
		default:
			checkpoint_usage(stderr);
			return 1;
		}
	}
	if (optind != argc - 1) {
		checkpoint_usage(stderr);
		return 1;
	}
	errno = 0;
	pid = strtol(argv[optind], &end, 10);
	if (*end || pid <= 0 || pid > INT_MAX || errno) {
		fprintf(stderr, "%s checkpoint: '%s' is not a process id\n",
			prog, argv[optind]);
		return 1;
	}
	if ((a->flags & CKPT_CHECKPOINT_STOP) && (a->flags & CKPT_CHECKPOINT_KILL)) {
		fprintf(stderr, "%s checkpoint: --stop and --kill exclude each other\n",
			prog);
		return 1;
	}
	if ((a->flags & CKPT_CHECKPOINT_LOCAL_FILES) && !*tree) {
		fprintf(stderr, "%s checkpoint: --tmpfs goes with --tree\n", prog);
		return 1;
	}
	a->pid = pid;
	return -1;
}

/* One figure of the tree's report, as text or as a JSON member. */
static void print_num(FILE *f, bool json, const char *key, const char *text,
		      unsigned long long v)
{
	if (json)
		fprintf(f, "\"%s\":%llu,", key, v);
	else
		fprintf(f, text, v);
}

static void tree_report(FILE *f, bool json, const char *dir,
			const struct ckpt_tree *t,
			const struct ckpt_tree_member *m,
			const struct ckpt_checkpoint_tree *a)
{
	unsigned long long thr = 0, pages = 0, bytes = 0;
	uint32_t i;

	for (i = 0; i < t->nr; i++) {
		thr += m[i].nr_threads;
		pages += m[i].nr_pages;
		bytes += m[i].image_bytes;
	}
	if (json) {
		fprintf(f, "{\"root\":%d,\"dir\":", (int)m[0].pid);
		json_print_str(f, dir);
		fputc(',', f);
	} else {
		fprintf(f, "tree of pid %d: ", (int)m[0].pid);
	}
	print_num(f, json, "processes", "%llu processes, ", t->nr);
	print_num(f, json, "threads", "%llu threads, ", thr);
	print_num(f, json, "pages", "%llu pages, ", pages);
	print_num(f, json, "bytes", "%llu bytes, ", bytes);
	print_num(f, json, "frozen_ns", "frozen %llu ns", a->frozen_ns);
	print_num(f, json, "total_ns", ", %llu ns in all", a->total_ns);
	fprintf(f, json ? "\"members\":[" : " -> %s\n", dir);
	for (i = 0; i < t->nr; i++) {
		int parent = i ? (int)m[t->m[i].parent].pid : 0;

		if (json)
			fprintf(f, "%s{\"pid\":%d,\"parent\":%d,\"ns_pid\":%d,",
				i ? "," : "", (int)m[i].pid, parent,
				(int)m[i].ns_pid);
		else if (i)
			fprintf(f, "  pid %d (child of %d): ", (int)m[i].pid, parent);
		else
			fprintf(f, "  pid %d (root): ", (int)m[i].pid);
		print_num(f, json, "threads", "%llu thread(s), ", m[i].nr_threads);
		print_num(f, json, "pages", "%llu pages, ", m[i].nr_pages);
		if (json)
			fprintf(f, "\"bytes\":%llu}", (unsigned long long)m[i].image_bytes);
		else
			fprintf(f, "%llu bytes\n", (unsigned long long)m[i].image_bytes);
	}
	if (json)
		fputs("]}\n", f);
}

/* ckpt checkpoint --tree: the tree of @a->pid into the directory @out. */
static int checkpoint_tree(int dev, const struct ckpt_checkpoint *a,
			   const char *out, bool json)
{
	struct ckpt_checkpoint_tree ta = {
		.flags = a->flags,
		.timeout_ms = a->timeout_ms,
	};
	struct ckpt_tree_member *m = NULL;
	struct ckpt_tree t;
	struct ckpt_err err;
	char def[64];
	int ret;

	if (!out) {
		snprintf(def, sizeof(def), "ckpt-tree-%u", a->pid);
		out = def;
	}
	if (!strcmp(out, "-")) {
		fprintf(stderr, "%s checkpoint: a tree goes to a directory, not to standard output\n",
			prog);
		return 1;
	}
	ret = ckpt_tree_checkpoint(dev, &ta, a->pid, out, &t, &m, &err);
	if (ret)
		fprintf(stderr, "%s checkpoint: tree of pid %u: %s\n", prog,
			a->pid, err.msg);
	else
		tree_report(stdout, json, out, &t, m, &ta);
	free(m);
	ckpt_tree_free(&t);
	return !!ret;
}

int cmd_checkpoint(int argc, char **argv)
{
	struct ckpt_checkpoint a = {};
	char tmp[PATH_MAX], def[64], msg[256] = "";
	const char *out = NULL;
	bool json = false, tree = false, to_stdout;
	enum ckpt_dev_step step;
	long pid;
	int dev, ret;

	ret = checkpoint_parse(argc, argv, &a, &out, &json, &tree);
	if (ret >= 0)
		return ret;
	pid = a.pid;

	dev = ckpt_dev_open(O_RDWR);
	if (dev < 0) {
		fprintf(stderr, "%s checkpoint: engine not loaded: %s: %s\n",
			prog, ckpt_dev_path(), strerror(-dev));
		return 1;
	}
	if (tree) {
		ret = checkpoint_tree(dev, &a, out, json);
		close(dev);
		return ret;
	}

	if (!out) {
		snprintf(def, sizeof(def), "ckpt-%ld.img", pid);
		out = def;
	}
	to_stdout = !strcmp(out, "-");
	a.errmsg = (unsigned long)msg;
	a.errmsg_len = sizeof(msg);
	if (to_stdout) {
		a.fd = STDOUT_FILENO;
		ret = ckpt_dev_checkpoint(dev, &a);
		step = CKPT_DEV_CHECKPOINT;
	} else if (snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", out) >=
		   (int)sizeof(tmp)) {
		fprintf(stderr, "%s checkpoint: image path too long: %s\n",
			prog, out);
		close(dev);
		return 1;
	} else {
		/* The temporary file is 0600, as images must be. */
		ret = ckpt_dev_checkpoint_to(dev, &a, out, tmp, &step);
	}
	close(dev);
	if (ret) {
		checkpoint_failed(pid, out, tmp, step, -ret, msg);
		return 1;
	}

	if (json)
		fprintf(to_stdout ? stderr : stdout,
			"{\"pid\":%ld,\"image\":\"%s\",\"threads\":%u,\"pages\":%llu,"
			"\"bytes\":%llu,\"frozen_ns\":%llu,\"total_ns\":%llu}\n",
			pid, to_stdout ? "-" : out, a.nr_threads,
			(unsigned long long)a.nr_pages,
			(unsigned long long)a.image_bytes,
			(unsigned long long)a.frozen_ns,
			(unsigned long long)a.total_ns);
	else
		fprintf(to_stdout ? stderr : stdout,
			"pid %ld: %u thread(s), %llu pages, %llu bytes, frozen %.3f ms -> %s\n",
			pid, a.nr_threads, (unsigned long long)a.nr_pages,
			(unsigned long long)a.image_bytes, a.frozen_ns / 1e6,
			to_stdout ? "stdout" : out);
	return 0;
}
