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
#include "print.h"
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
		"       %s checkpoint --tree PID [-o DIR] [--stop|--kill] [--local-files]\n"
		"                         [--timeout SECONDS] [--json]\n"
		"Captures process PID (all its threads) into IMAGE (default ckpt-PID.img;\n"
		"'-' writes to standard output). The process continues, unless --stop\n"
		"leaves it stopped (SIGSTOP) or --kill ends it once captured.\n"
		"With --tree, PID and all its descendants, frozen together, into the new\n"
		"directory DIR (default ckpt-tree-PID): one image per process and a manifest;\n"
		"with --local-files (formerly --tmpfs), the content of the node's own files\n"
		"they map shared or hold open for reading too (on a tmpfs, as /dev/shm;\n"
		"under /tmp or /var/tmp on a local disk), made again at restart where\n"
		"they are gone.\n",
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
		{ "local-files", no_argument, NULL, 'L' },
		{ "tmpfs", no_argument, NULL, 'L' },	/* its first name */
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
		fprintf(stderr, "%s checkpoint: --local-files goes with --tree\n", prog);
		return 1;
	}
	a->pid = pid;
	return -1;
}

/* One process's image (@out NULL: written to stdout). */
static void image_report(FILE *f, bool json, long pid, const char *out,
			 const struct ckpt_checkpoint *a)
{
	struct printer pr, *p = &pr;

	print_init(p, f, json);
	print_open_object(p, NULL);
	print_int(p, PRINT_ANY, "pid", "pid %lld", pid);
	print_string(p, PRINT_JSON, "image", "", out ?: "-");
	print_uint(p, PRINT_ANY, "threads", ": %llu thread(s)", a->nr_threads);
	print_uint(p, PRINT_ANY, "pages", ", %llu pages", a->nr_pages);
	print_uint(p, PRINT_ANY, "bytes", ", %llu bytes", a->image_bytes);
	print_uint(p, PRINT_JSON, "frozen_ns", "", a->frozen_ns);
	print_uint(p, PRINT_JSON, "total_ns", "", a->total_ns);
	print_text(p, ", frozen %.3f ms -> %s\n", a->frozen_ns / 1e6,
		   out ?: "stdout");
	print_close_object(p);
	if (json)
		fputc('\n', f);
}

static void tree_report(FILE *f, bool json, const char *dir,
			const struct ckpt_tree *t,
			const struct ckpt_tree_member *m,
			const struct ckpt_checkpoint_tree *a)
{
	unsigned long long thr = 0, pages = 0, bytes = 0;
	struct printer pr, *p = &pr;
	uint32_t i;

	for (i = 0; i < t->nr; i++) {
		thr += m[i].nr_threads;
		pages += m[i].nr_pages;
		bytes += m[i].image_bytes;
	}
	print_init(p, f, json);
	print_open_object(p, NULL);
	print_int(p, PRINT_ANY, "root", "tree of pid %lld: ", m[0].pid);
	print_string(p, PRINT_JSON, "dir", "", dir);
	print_uint(p, PRINT_ANY, "processes", "%llu processes, ", t->nr);
	print_uint(p, PRINT_ANY, "threads", "%llu threads, ", thr);
	print_uint(p, PRINT_ANY, "pages", "%llu pages, ", pages);
	print_uint(p, PRINT_ANY, "bytes", "%llu bytes, ", bytes);
	print_uint(p, PRINT_ANY, "frozen_ns", "frozen %llu ns", a->frozen_ns);
	print_uint(p, PRINT_ANY, "total_ns", ", %llu ns in all", a->total_ns);
	print_string(p, PRINT_TEXT, NULL, " -> %s\n", dir);
	print_open_array(p, "members");
	for (i = 0; i < t->nr; i++) {
		print_open_object(p, NULL);
		print_int(p, PRINT_ANY, "pid", "  pid %lld", m[i].pid);
		print_int(p, i ? PRINT_ANY : PRINT_JSON, "parent", " (child of %lld)",
			  i ? m[t->m[i].parent].pid : 0);
		print_text(p, "%s: ", i ? "" : " (root)");
		print_int(p, PRINT_JSON, "ns_pid", "", m[i].ns_pid);
		print_uint(p, PRINT_ANY, "threads", "%llu thread(s), ", m[i].nr_threads);
		print_uint(p, PRINT_ANY, "pages", "%llu pages, ", m[i].nr_pages);
		print_uint(p, PRINT_ANY, "bytes", "%llu bytes\n", m[i].image_bytes);
		print_close_object(p);
	}
	print_close_array(p);
	print_close_object(p);
	if (json)
		fputc('\n', f);
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

	image_report(to_stdout ? stderr : stdout, json, pid,
		     to_stdout ? NULL : out, &a);
	return 0;
}
