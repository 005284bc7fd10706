// SPDX-License-Identifier: GPL-2.0
/*
 * ckpt inspect SNAPSHOT, through ckptd: snapshots are root's, so a user
 * sees into one here only, and only into their own job's. ckptd checks the
 * metadata as a restart does (its MAC, its shape, the caller's uid); a
 * worker then checks every image against the metadata's checksum, which
 * may take long, and replies with what the snapshot holds, or with the
 * first thing wrong with it. Nothing is read that a restart would not.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ckptd.h"
#include "err.h"
#include "meta.h"

/* Inspections under way at once: each reads whole snapshots. */
#define MAX_INSPECTS	8

struct inspect {
	char dir[PATH_MAX];
	json_t *meta;
};

/* A node's share: its name, kernel, processes, bytes and pids. */
static json_t *node_summary(const json_t *meta, const json_t *n)
{
	const json_t *tree = json_array_get(json_object_get(n, "trees"), 0);
	json_int_t procs = 0, bytes = 0;
	json_t *pids = json_array();
	const json_t *m;
	size_t i;

	json_array_foreach(json_object_get(tree, "members"), i, m)
		json_array_append(pids, json_object_get(m, "pid"));
	ckpt_meta_count(meta, n, &procs, &bytes);
	return json_pack("{s:O, s:O, s:I, s:I, s:o}",
			 "node", json_object_get(n, "node"),
			 "kernel", json_object_get(n, "kernel"),
			 "processes", procs, "bytes", bytes, "pids", pids);
}

static void inspect_worker(struct ckptd *d, struct job *j, int out, void *arg)
{
	const struct inspect *in = arg;
	const json_t *meta = in->meta, *n;
	json_int_t procs = 0, bytes = 0;
	json_t *nodes = json_array();
	struct ckpt_err err;
	char date[32];
	time_t t;
	size_t k;

	(void)d;
	(void)j;
	if (snapshot_check_images(in->dir, meta, &err)) {
		json_decref(nodes);
		worker_send(out, json_pack("{s:b, s:s}", "ok", 0, "error", err.msg));
		return;
	}
	json_array_foreach(json_object_get(meta, "nodes"), k, n)
		json_array_append_new(nodes, node_summary(meta, n));
	ckpt_meta_count(meta, NULL, &procs, &bytes);
	t = (time_t)json_integer_value(json_object_get(meta, "time"));
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
	worker_send(out, json_pack("{s:b, s:s, s:O, s:O, s:O, s:O, s:s, s:O, s:O, s:I, s:I, s:o, s:s}",
		"ok", 1, "snapshot", in->dir, "job", json_object_get(meta, "job"),
		"name", json_object_get(meta, "name"),
		"uid", json_object_get(meta, "uid"),
		"seq", json_object_get(meta, "seq"), "date", date,
		"cmd", json_object_get(meta, "cmd"),
		"cwd", json_object_get(meta, "cwd"),
		"processes", procs, "bytes", bytes, "nodes", nodes,
		"checked", "metadata MAC and every image's SHA-256"));
}

static void inspect_report(struct worker *w, json_t *msg)
{
	if (!msg)
		worker_daemon(w)->inspects--;
}

/* inspect {dir}: the snapshot's contents, once all of it checks out. */
void op_inspect(struct conn *c, const json_t *req)
{
	struct ckptd *d = conn_daemon(c);
	struct inspect in;

	if (snapshot_open(c, ckptd_msg_str(req, "dir"), in.dir, &in.meta, NULL))
		return;
	if (d->inspects >= MAX_INSPECTS)
		conn_fail(c, "ckptd has %d inspections under way; try again later",
			  MAX_INSPECTS);
	else if (!worker_start(d, c, NULL, inspect_worker, inspect_report, &in))
		conn_fail(c, "cannot start a worker: %s", strerror(errno));
	else
		d->inspects++;
	json_decref(in.meta);
}
