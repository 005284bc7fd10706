// SPDX-License-Identifier: GPL-2.0
/*
 * A detached checkpoint request (MPIX_Checkpoint's, mpi-hooks/mpix.c) made
 * on a node that does not coordinate the job: the job's rank 0 runs on
 * another node than its root (mpirun started where no rank runs, or ranks
 * placed from another host first). That node's ckptd passes the request to
 * the coordinator over the daemons' authenticated link ("peer-ask"), and
 * the coordinator starts the job's checkpoint as if asked there; the ranks
 * wait for it in libckpt as they do on one node. Documentation/ckptd.md,
 * "MPIX_Checkpoint".
 *
 * The coordinator takes it from a node of the job's (one that joined it),
 * for the job's own user, with a mode and timeout it checks again.
 */
#include <stdlib.h>
#include <string.h>

#include "ckptd.h"
#include "err.h"

#define ASK_REPLY_S	30

struct ask {
	char job[CKPTD_JOB_ID_LEN + 1];
	char coordinator[HOST_NAME_MAX + 1];
	uid_t uid;
	const char *mode;	/* a literal: continue, stop or kill */
	unsigned int timeout_s;
};

/* In a worker of the asking node: one peer-ask, its outcome logged. */
static void ask_worker(struct ckptd *d, struct job *unused, int out, void *arg)
{
	const struct ask *a = arg;
	struct ckpt_err err;
	json_t *reply = NULL;
	struct peer *p;

	(void)unused;
	(void)out;
	p = peer_connect(d, a->coordinator, &err);
	if (p && !peer_call(p, json_pack("{s:s, s:s, s:I, s:s, s:s, s:I}", "op", "peer-ask",
					 "job", a->job, "uid", (json_int_t)a->uid,
					 "node", d->node, "mode", a->mode,
					 "timeout", (json_int_t)a->timeout_s),
			    &reply, ASK_REPLY_S, &err))
		ckptd_log(d, 1, "job %s: the detached checkpoint passed to its coordinator, node %s",
			  a->job, a->coordinator);
	else
		ckptd_log(d, 0, "job %s: the detached checkpoint: its coordinator, node %s: %s",
			  a->job, a->coordinator, err.msg);
	json_decref(reply);
	peer_close(p);
}

static void ask_done(struct worker *w, json_t *msg)
{
	if (msg)
		return;
	free(worker_arg(w));
	worker_set_arg(w, NULL);
}

/* @mode is ckptd_mode()'s literal, which the worker keeps. */
void ask_coordinator(struct ckptd *d, const struct job *j, const char *mode,
		     unsigned int timeout_s)
{
	struct ask *a = calloc(1, sizeof(*a));

	if (!a) {
		ckptd_log(d, 0, "job %s: the detached checkpoint: out of memory", j->id);
		return;
	}
	a->mode = mode;
	snprintf(a->job, sizeof(a->job), "%s", j->id);
	snprintf(a->coordinator, sizeof(a->coordinator), "%s", j->coordinator);
	a->uid = j->uid;
	a->timeout_s = timeout_s;
	if (!worker_start(d, NULL, NULL, ask_worker, ask_done, a)) {
		free(a);
		ckptd_log(d, 0, "job %s: the detached checkpoint: cannot start a worker", j->id);
	}
}

/* peer-ask {job, uid, node, mode, timeout}, in the coordinator's peer worker. */
void peer_ask(struct ckptd *d, struct peer *p, const json_t *req, int out)
{
	const char *id = ckptd_msg_str(req, "job"), *node = ckptd_msg_str(req, "node");
	json_int_t uid, timeout;
	struct ckpt_err err;
	const char *mode;
	struct job *j;

	if (ckptd_ask_check(req, &mode, &uid, &timeout, &err)) {
		peer_fail(p, "%s", err.msg);
		return;
	}
	j = job_find(d, id);
	if (!j || j->coordinator[0] || uid != j->uid ||
	    !peer_list_has(j->nodes, node)) {
		peer_fail(p, "no job %.16s of uid %lld with node %.64s, coordinated by %s",
			  id, (long long)uid, node, d->node);
		return;
	}
	worker_send(out, json_pack("{s:s, s:s, s:s, s:I}", "event", "ask", "job", j->id,
				   "mode", mode, "timeout", timeout));
	peer_send(p, json_pack("{s:b, s:s}", "ok", 1, "job", j->id), NULL);
}

/*
 * In the coordinator's ckptd: a peer's ask, from its own peer worker, which
 * checked it in peer_ask(); the mode made a literal again.
 */
void ask_report(struct ckptd *d, const json_t *msg)
{
	const char *mode = ckptd_mode(ckptd_msg_str(msg, "mode"));

	if (mode)
		checkpoint_detached(d, ckptd_msg_str(msg, "job"), mode,
				    json_integer_value(json_object_get(msg, "timeout")));
}
