// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * MPIX_Checkpoint (after the MPC paper's): a checkpoint of the whole job,
 * collective over MPI_COMM_WORLD. Every rank notes libckpt's counters and
 * enters a barrier; rank 0 then asks ckptd for a checkpoint of its job
 * (CKPT_JOBID, which ckpt-run sets) in detached form: ckptd checks and
 * answers at once, and starts the checkpoint when rank 0 has closed the
 * connection, which a checkpoint of rank 0 could not hold. Every rank then
 * waits outside MPI until libckpt has been through that checkpoint's round:
 * continued (CHECKPOINT), run again from its image (RESTART) or failed
 * (ERROR); the ranks agree on the outcome with one reduction. A job not
 * under ckpt-run gets IGNORE. Documentation/libckpt.md, "MPIX_Checkpoint".
 *
 * Built once per MPI library (its handles differ), as libckpt-mpi.so.
 */
#include <errno.h>
#include <jansson.h>
#include <mpi.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "libckpt.h"
#include "mpix_ckpt.h"

#define SOCKET_DEFAULT	"/run/ckpt/ckptd.sock"	/* proto.h's CKPTD_SOCKET */
#define REPLY_MAX	(64 * 1024)		/* proto.h's CKPTD_MSG_MAX */
#define REPLY_WAIT_MS	30000
#define BEGIN_WAIT_S	60	/* for the round to begin, once ckptd said yes */

struct ask {
	struct ckpt_status before;
	char why[512];
};

static int io_all(int fd, void *buf, size_t len, bool out)
{
	struct pollfd p = { .fd = fd, .events = out ? POLLOUT : POLLIN };
	size_t off = 0;
	ssize_t n;

	while (off < len) {
		if (poll(&p, 1, REPLY_WAIT_MS) != 1)
			return -ETIMEDOUT;
		n = out ? send(fd, (char *)buf + off, len - off, MSG_NOSIGNAL) :
			  recv(fd, (char *)buf + off, len - off, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n ? -errno : -EPIPE;
		off += n;
	}
	return 0;
}

/* One frame (a 4-byte little-endian length, then JSON) each way. */
static json_t *call(int fd, json_t *req, struct ask *a)
{
	uint8_t hdr[4];
	char *text = json_dumps(req, JSON_COMPACT), *in = NULL;
	json_t *reply = NULL;
	size_t len;
	int ret;

	if (!text) {
		snprintf(a->why, sizeof(a->why), "out of memory");
		return NULL;
	}
	len = strlen(text);
	hdr[0] = len;
	hdr[1] = len >> 8;
	hdr[2] = len >> 16;
	hdr[3] = len >> 24;
	ret = io_all(fd, hdr, 4, true);
	if (!ret)
		ret = io_all(fd, text, len, true);
	if (!ret)
		ret = io_all(fd, hdr, 4, false);
	len = hdr[0] | hdr[1] << 8 | hdr[2] << 16 | (size_t)hdr[3] << 24;
	if (!ret && (!len || len > REPLY_MAX))
		ret = -EPROTO;
	if (!ret && !(in = malloc(len)))
		ret = -ENOMEM;
	if (!ret)
		ret = io_all(fd, in, len, false);
	if (!ret)
		reply = json_loadb(in, len, 0, NULL);
	if (!ret && !reply)
		ret = -EPROTO;
	if (ret)
		snprintf(a->why, sizeof(a->why), "talking to ckptd: %s",
			 strerror(-ret));
	free(in);
	free(text);
	return reply;
}

/* Rank 0: ckptd's yes (CHECKPOINT), IGNORE, or ERROR with the reason. */
static int ask_ckptd(struct ask *a)
{
	const char *job = getenv("CKPT_JOBID"), *path = getenv("CKPTD_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	json_t *req, *reply;
	int fd, res = MPIX_CR_ERROR;

	if (!a->before.registered || !job || !*job)
		return MPIX_CR_IGNORE;
	if (!path || !*path)
		path = SOCKET_DEFAULT;
	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(a->why, sizeof(a->why), "CKPTD_SOCKET is too long");
		return res;
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		snprintf(a->why, sizeof(a->why), "ckptd is not running (%s: %s)",
			 path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return res;
	}
	req = json_pack("{s:s, s:s, s:b}", "op", "checkpoint", "job", job,
			"detach", 1);
	reply = req ? call(fd, req, a) : NULL;
	/* Closed before anything else: ckptd starts on the close. */
	close(fd);
	if (reply && json_is_true(json_object_get(reply, "ok")))
		res = MPIX_CR_CHECKPOINT;
	else if (reply)
		snprintf(a->why, sizeof(a->why), "%s",
			 json_string_value(json_object_get(reply, "error")) ?:
			 "ckptd refused, saying nothing");
	json_decref(reply);
	json_decref(req);
	return res;
}

/* Every rank: until libckpt has been through the checkpoint's round. */
static int await_round(struct ask *a)
{
	const struct timespec step = { 0, 10 * 1000000L };
	struct timespec start, now;
	struct ckpt_status st;
	bool seen = false;

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		if (ckpt_status(&st))
			break;
		if (st.restarts != a->before.restarts)
			return MPIX_CR_RESTART;
		if (st.checkpoints != a->before.checkpoints)
			return MPIX_CR_CHECKPOINT;
		if (st.in_progress) {
			seen = true;
		} else if (seen) {
			snprintf(a->why, sizeof(a->why), "the checkpoint failed here: %s",
				 strerror(st.last_result < 0 ? -st.last_result : EIO));
			return MPIX_CR_ERROR;
		} else {
			clock_gettime(CLOCK_MONOTONIC, &now);
			if (now.tv_sec - start.tv_sec >= BEGIN_WAIT_S)
				break;
		}
		nanosleep(&step, NULL);
	}
	snprintf(a->why, sizeof(a->why),
		 "no checkpoint reached this process in %d s (ckptd's log says why)",
		 BEGIN_WAIT_S);
	return MPIX_CR_ERROR;
}

int MPIX_Checkpoint(MPIX_CR_state_t *state)
{
	struct ask a = { .why = "" };
	int rank, res, all, ret;

	if (!state)
		return MPI_ERR_ARG;
	/* Before the barrier: no rank can miss the round. */
	ckpt_status(&a.before);
	ret = PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (!ret)
		ret = PMPI_Barrier(MPI_COMM_WORLD);
	if (ret)
		return ret;
	res = rank ? MPIX_CR_CHECKPOINT : ask_ckptd(&a);
	ret = PMPI_Bcast(&res, 1, MPI_INT, 0, MPI_COMM_WORLD);
	if (ret)
		return ret;
	if (res == MPIX_CR_CHECKPOINT)
		res = await_round(&a);
	if (a.why[0])
		fprintf(stderr, "MPIX_Checkpoint: rank %d: %s\n", rank, a.why);
	ret = PMPI_Allreduce(&res, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	if (ret)
		return ret;
	*state = (MPIX_CR_state_t)all;
	return MPI_SUCCESS;
}
