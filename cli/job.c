// SPDX-License-Identifier: GPL-2.0
/*
 * The job commands, which ask ckptd and print what it says:
 *
 *   ckpt job JOBID [--stop|--kill] [--timeout S] [--json]   a checkpoint
 *   ckpt ls [--json]                                          your jobs
 *   ckpt status JOBID [--json]                                one job
 *   ckpt cancel JOBID [--json]                                its checkpoint
 *   ckpt inspect SNAPSHOT [--json]                            a snapshot
 *
 * One emitter: ckptd's reply is the result; --json prints it as it is
 * (less "ok"), text prints the fields a table names, in its order.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "json.h"
#include "meta.h"
#include "proto.h"

struct field {
	const char *key;
	const char *label;	/* NULL: the value alone on the line */
};

static const struct field checkpoint_fields[] = {
	{ "snapshot", "snapshot" },
	{ "seq", "sequence" },
	{ "processes", "processes" },
	{ "bytes", "bytes" },
	{ "frozen_us", "frozen (us)" },
	{ "total_us", "total (us)" },
	{ "verify_us", "verify (us)" },
	{ "stopped_us", "stopped (us)" },	/* several nodes */
	{ "commit_us", "commit (us)" },
	{ "ended", "ended on" },	/* nodes whose share ended, now left */
	{ "copies", "copies on" },	/* nodes that keep it too (copy.c) */
	{ "copy_us", "copies (us)" },
	{ "copy_error", "no copy" },	/* why a node does not */
	{}
};

static const struct field status_fields[] = {
	{ "job", "job" },
	{ "name", "name" },
	{ "uid", "uid" },
	{ "state", "state" },
	{ "processes", "processes" },
	{ "cmd", "command" },
	{ "cwd", "directory" },
	{ "seq", "snapshots" },
	{ "dir", "snapshots in" },
	{ "latest", "latest" },
	{}
};

static const struct field inspect_fields[] = {
	{ "snapshot", "snapshot" },
	{ "job", "job" },
	{ "name", "name" },
	{ "uid", "uid" },
	{ "seq", "sequence" },
	{ "date", "taken" },
	{ "cmd", "command" },
	{ "cwd", "directory" },
	{ "processes", "processes" },
	{ "bytes", "bytes" },
	{ "nodes", "node" },
	{ "checked", "checked" },
	{}
};

static void print_value(const json_t *v)
{
	const char *key;
	size_t i;
	json_t *e;

	if (json_is_string(v))
		text_string(stdout, json_string_value(v));
	else if (json_is_integer(v))
		printf("%lld", (long long)json_integer_value(v));
	else if (json_is_array(v))
		json_array_foreach(v, i, e) {
			if (i)
				putchar(' ');
			print_value(e);
		}
	else if (json_is_object(v)) {
		/* The first value alone, the others after their keys. */
		i = 0;
		json_object_foreach((json_t *)v, key, e) {
			if (i++)
				printf(" %s ", key);
			print_value(e);
		}
	}
}

static void emit(const json_t *res, const struct field *f, bool json)
{
	if (json) {
		json_t *copy = json_deep_copy(res);

		json_object_del(copy, "ok");
		json_dumpf(copy, stdout, JSON_COMPACT);
		putchar('\n');
		json_decref(copy);
		return;
	}
	for (; f->key; f++) {
		const json_t *v = json_object_get(res, f->key), *e;
		size_t i;

		if (!v)
			continue;
		/* A list of objects: one line each, under the same label. */
		if (json_is_object(json_array_get(v, 0))) {
			json_array_foreach(v, i, e) {
				printf("%-12s ", f->label);
				print_value(e);
				putchar('\n');
			}
			continue;
		}
		printf("%-12s ", f->label);
		print_value(v);
		putchar('\n');
	}
}

/*
 * Options common to the commands: --json, --help, and those whose
 * destination is not NULL (--stop, --kill, --timeout, --dir: made
 * absolute, PATH_MAX bytes).
 */
static int parse(int argc, char **argv, const char *usage, bool *json,
		 const char **mode, long *timeout, char *dir, int nargs)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "stop", no_argument, NULL, 's' },
		{ "kill", no_argument, NULL, 'k' },
		{ "timeout", required_argument, NULL, 't' },
		{ "dir", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	char *end;
	int c;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			*json = true;
			break;
		case 's':
		case 'k':
			if (!mode || strcmp(*mode, "continue"))
				goto bad;
			*mode = c == 's' ? "stop" : "kill";
			break;
		case 't':
			if (!timeout)
				goto bad;
			*timeout = strtol(optarg, &end, 10);
			if (*end || !*optarg || *timeout < 0) {
				fprintf(stderr, "%s %s: bad --timeout '%s'\n",
					prog, argv[0], optarg);
				return 1;
			}
			break;
		case 'd':
			if (!dir)
				goto bad;
			if (!realpath(optarg, dir)) {
				fprintf(stderr, "%s %s: --dir %s: %s\n", prog, argv[0],
					optarg, strerror(errno));
				return 1;
			}
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			goto bad;
		}
	}
	if (argc - optind == nargs)
		return -1;
bad:
	fputs(usage, stderr);
	return 1;
}

/*
 * A checkpoint's progress events, on one line of the terminal (stderr):
 * the phase, the images written so far, their size and rate.
 */
static bool progress_shown;

static void show_progress(void *arg, const json_t *ev)
{
	json_int_t ms = json_integer_value(json_object_get(ev, "elapsed_ms"));
	json_int_t bytes = json_integer_value(json_object_get(ev, "bytes"));
	const char *phase = ckptd_msg_str(ev, "phase");

	(void)arg;
	if (!phase || strcmp(ckptd_msg_str(ev, "event") ?: "", "progress"))
		return;
	fprintf(stderr, "\r\033[K%s job: %-10.16s %lld processes, %.1f MB, %.1f MB/s, %.1f s",
		prog, phase,
		(long long)json_integer_value(json_object_get(ev, "processes")),
		bytes / 1e6, ms > 0 ? bytes / 1e3 / ms : 0.0, ms / 1e3);
	fflush(stderr);
	progress_shown = true;
}

/* @req to ckptd (taken); its reply in *@res, or 1 said why. */
static int call_with(const char *cmd, json_t *req, json_t **res,
		     ckptd_event_fn on_event)
{
	struct ckpt_err err;
	int ret;

	if (!req) {
		fprintf(stderr, "%s %s: out of memory\n", prog, cmd);
		return 1;
	}
	ret = ckptd_call_events(req, res, on_event, NULL, &err);
	json_decref(req);
	/* The progress line, if one was shown, is cleared. */
	if (progress_shown)
		fputs("\r\033[K", stderr);
	if (ret)
		fprintf(stderr, "%s %s: %s\n", prog, cmd, err.msg);
	return !!ret;
}

static int call(const char *cmd, json_t *req, json_t **res)
{
	return call_with(cmd, req, res, NULL);
}

/* @req to ckptd, its reply through emit(): the exit status. */
static int call_emit(const char *cmd, json_t *req, const struct field *f,
		     bool json, ckptd_event_fn on_event)
{
	json_t *res;

	if (call_with(cmd, req, &res, on_event))
		return 1;
	emit(res, f, json);
	json_decref(res);
	return 0;
}

int cmd_job(int argc, char **argv)
{
	const char *usage =
		"usage: ckpt job JOBID [--stop|--kill] [--timeout SECONDS] [--dir DIR] [--json]\n"
		"Checkpoints every process of job JOBID into a new snapshot (ckptd\n"
		"writes it under its snapshot root, or the job's ckpt-run --dir, or\n"
		"DIR/JOBID with --dir, a directory of yours, and prints where). The job\n"
		"continues, unless --stop leaves it stopped or --kill ends it.\n"
		"On a terminal, one line on stderr shows its progress: the phase, the\n"
		"images written, their size and rate.\n"
		"The exit status is 0 once the snapshot is whole, 1 if none was made.\n";
	const char *mode = "continue";
	char dir[PATH_MAX] = "";
	long timeout = 0;
	bool json = false;
	int ret;

	ret = parse(argc, argv, usage, &json, &mode, &timeout, dir, 1);
	if (ret >= 0)
		return ret;
	/* Progress on a terminal; never in --json's output. */
	return call_emit("job", json_pack("{s:s, s:s, s:s, s:I, s:s*}", "op", "checkpoint",
					  "job", argv[optind], "mode", mode,
					  "timeout", (json_int_t)timeout,
					  "dir", *dir ? dir : NULL),
			 checkpoint_fields, json,
			 !json && isatty(STDERR_FILENO) ? show_progress : NULL);
}

int cmd_ls(int argc, char **argv)
{
	const char *usage =
		"usage: ckpt ls [--json]\n"
		"Lists your jobs on this node (root: everybody's), as ckptd keeps them.\n";
	bool json = false;
	json_t *res, *jobs, *j;
	size_t i;
	int ret;

	ret = parse(argc, argv, usage, &json, NULL, NULL, NULL, 0);
	if (ret >= 0)
		return ret;
	if (call("ls", json_pack("{s:s}", "op", "ls"), &res))
		return 1;
	jobs = json_object_get(res, "jobs");
	if (json)
		emit(res, NULL, true);
	else {
		printf("%-8s %-6s %-8s %5s %4s  %s\n", "JOB", "UID", "STATE",
		       "PROCS", "SNAP", "COMMAND");
		json_array_foreach(jobs, i, j) {
			printf("%-8s %-6lld %-8s %5lld %4lld  ",
			       json_string_value(json_object_get(j, "job")),
			       (long long)json_integer_value(json_object_get(j, "uid")),
			       json_string_value(json_object_get(j, "state")),
			       (long long)json_integer_value(json_object_get(j, "processes")),
			       (long long)json_integer_value(json_object_get(j, "seq")));
			print_value(json_object_get(j, "cmd"));
			putchar('\n');
		}
	}
	json_decref(res);
	return 0;
}

/* A command of one JOBID and --json: @op's reply through emit(). */
static int job_command(int argc, char **argv, const char *op,
		       const char *usage, const struct field *f)
{
	bool json = false;
	int ret;

	ret = parse(argc, argv, usage, &json, NULL, NULL, NULL, 1);
	if (ret >= 0)
		return ret;
	return call_emit(op, json_pack("{s:s, s:s}", "op", op, "job", argv[optind]),
			 f, json, NULL);
}

int cmd_status(int argc, char **argv)
{
	return job_command(argc, argv, "status",
		"usage: ckpt status JOBID [--json]\n"
		"Shows job JOBID: its command, processes on this node, snapshots.\n",
		status_fields);
}

int cmd_cancel(int argc, char **argv)
{
	static const struct field fields[] = {
		{ "job", "cancelled" },
		{}
	};

	return job_command(argc, argv, "cancel",
		"usage: ckpt cancel JOBID [--json]\n"
		"Cancels the checkpoint of job JOBID under way: it ends as a failed one\n"
		"does, nothing of its snapshot is left, and the job continues.\n",
		fields);
}

bool snapshot_dir(const char *dir)
{
	char path[PATH_MAX];

	if (snprintf(path, sizeof(path), "%s/" CKPT_META_FILE, dir) >=
	    (int)sizeof(path))
		return false;
	/* Snapshots are root's: a user sees into them through ckptd only. */
	return !access(path, F_OK) || errno == EACCES;
}

int snapshot_path(const char *cmd, const char *dir, char abs[PATH_MAX])
{
	char cwd[PATH_MAX - 64];
	int ret;

	/* ckptd resolves the path, as root: the caller may not see into it. */
	if (*dir == '/')
		ret = snprintf(abs, PATH_MAX, "%s", dir);
	else
		ret = snprintf(abs, PATH_MAX, "%s/%s",
			       getcwd(cwd, sizeof(cwd)) ? cwd : ".", dir);
	if (ret >= PATH_MAX || *abs != '/') {
		fprintf(stderr, "%s %s: %s: path too long, or no working directory\n",
			prog, cmd, dir);
		return 1;
	}
	return 0;
}

int inspect_snapshot(const char *dir, bool json)
{
	char abs[PATH_MAX];

	if (snapshot_path("inspect", dir, abs))
		return 1;
	return call_emit("inspect", json_pack("{s:s, s:s}", "op", "inspect",
					      "dir", abs),
			 inspect_fields, json, NULL);
}
