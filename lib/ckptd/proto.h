/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The protocol between ckptd and its local clients (ckpt, ckpt-run), the
 * one file that speaks it on either side. Documentation/ckptd.md draws the
 * messages.
 *
 * A message is a frame: a 4-byte little-endian length, 1 to
 * CKPTD_MSG_MAX, then that many bytes of one JSON object. A request names
 * its "op"; a reply has "ok": true and the op's results, or "ok": false
 * and "error", a message for the user. A frame may carry up to
 * CKPTD_MAX_FDS descriptors (SCM_RIGHTS) with its first byte; a restart
 * passes the client's standard descriptors that way.
 *
 * Functions return 0 or -errno and, given a struct ckpt_err, leave a
 * message in it (lib/restore's convention).
 */
#ifndef _CKPT_CKPTD_PROTO_H
#define _CKPT_CKPTD_PROTO_H

#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "restore.h"

#define CKPTD_SOCKET	"/run/ckpt/ckptd.sock"
#define CKPTD_MSG_MAX	(64 * 1024)
#define CKPTD_MAX_FDS	3
/* How long a send waits for a full socket to drain. */
#define CKPTD_SEND_WAIT_MS	2000

/* A frame being read: bytes and descriptors as they arrive. */
struct ckptd_frame {
	uint8_t buf[4 + CKPTD_MSG_MAX];
	size_t have;
	int fds[CKPTD_MAX_FDS];
	int nfds;
};

void ckptd_frame_init(struct ckptd_frame *fr);

/* Closes descriptors received and not taken, and makes @fr empty again. */
void ckptd_frame_reset(struct ckptd_frame *fr);

/*
 * Reads what @fd has of a frame into @fr: 1 once the frame is whole, 0 when
 * more is to come (a non-blocking @fd with nothing more now), -EPIPE at end
 * of stream, or -errno (-EMSGSIZE for a length out of bounds, -EPROTO for
 * descriptors beyond CKPTD_MAX_FDS or not with the first byte).
 */
int ckptd_frame_read(int fd, struct ckptd_frame *fr, struct ckpt_err *err);

/*
 * The frame's message: a JSON object, no duplicate keys, no NUL in strings.
 * @buf/@len is the JSON text alone (without the length). 0 with *@msg (the
 * caller's reference), or -EBADMSG with @err saying what is wrong.
 */
int ckptd_msg_decode(const void *buf, size_t len, json_t **msg,
		     struct ckpt_err *err);

/* A refusal: {"ok": false, "error": the message @fmt makes}. */
json_t *ckptd_msg_error(const char *fmt, va_list ap);

/* The string member @key of @msg, or NULL (absent or not a string). */
const char *ckptd_msg_str(const json_t *msg, const char *key);

/*
 * The signals a job's foreground (ckpt-run --ns, ckpt restart) passes on
 * to it through ckptd ("signal"): the others it gets are its own.
 */
#define CKPTD_FORWARDED_SIGNALS \
	SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGCONT

/* The signals passed on, in @set (emptied first). */
void ckptd_forwarded_set(sigset_t *set);

/* A "signal" request's signal if it is one passed on, or 0. */
int ckptd_signal_of(const json_t *req);

/* A checkpoint's mode, "continue", "stop" or "kill": its literal, or NULL. */
const char *ckptd_mode(const char *mode);

/*
 * The daemons' protocol between nodes, which every peer request carries as
 * "proto" (daemon/peer.c, peer_send()). 2: a node's TCP ends carry
 * peer_shut; 3: shares travel between nodes whose snapshot roots are
 * their own (daemon/ship.c), and a continue's shares go on once all are
 * captured ({action: continue, more}); 4: a continue's shares read their
 * images back for their SHA-256 after they go on, and send the sums with
 * their answer to it (ckptd_sums_merge()); 5: peer-copy, a committed
 * snapshot kept whole on another node too (daemon/copy.c); 6: a
 * continue's shares say when they are staged ({"staged"}) and go on when
 * every one is ({"release"}), before their images are written; 7:
 * peer-copy's "dir" and "uid", a copy into a --dir; 8: a restart's
 * shares say "held" once whole and run on "release"; 9: a node that has
 * its share of a restart says "have" at once and checks it beside the
 * other nodes; 10: a share's TCP list names its listeners too, as
 * "ADDR:PORT" strings; 11: and its connections waiting to be accepted
 * from another node, with their bytes (a ninth entry). The nodes of a
 * cluster run one ckpt version: a request of
 * another protocol is refused, naming both, before its shape is read.
 */
#define CKPTD_PEER_PROTO	11

/* A peer request's "proto": 0, or -EPROTO with @err naming both. */
int ckptd_peer_proto_check(const json_t *req, struct ckpt_err *err);

/*
 * A peer-ask's {job, uid, node, mode, timeout} (daemon/ask.c: a detached
 * checkpoint request passed to the job's coordinator), checked: 0 with
 * the mode's literal in *@mode, or -EINVAL with @err naming what is wrong.
 */
int ckptd_ask_check(const json_t *req, const char **mode, json_int_t *uid,
		    json_int_t *timeout, struct ckpt_err *err);

/*
 * A node question's {node} (op node, daemon/peer.c): a host name or an
 * address, at most HOST_NAME_MAX bytes of [A-Za-z0-9.:_-], not starting
 * with '-': 0 with it in *@node, or -EINVAL with @err.
 */
int ckptd_node_check(const json_t *req, const char **node,
		     struct ckpt_err *err);

/*
 * A restart's "tty" (op restart, daemon/restart.c), if there, true or
 * false; true: the descriptor 0 sent with it is a terminal of the
 * client's, to be the job's controlling terminal (cli/tty.c). 0 with it in
 * *@tty, or -EINVAL with @err. "dir" and "hosts" are the daemon's to check
 * against the snapshot.
 */
int ckptd_restart_check(const json_t *req, bool *tty, struct ckpt_err *err);

#define CKPTD_ENV_MAX	4096	/* variables of a run with "ns" */
/*
 * A "run" or a "join" with "ns" (ckpt-run --ns, ckpt-join --ns;
 * daemon/start.c), named by its "op" in @err: no "pid"; "cmd"
 * strings, at least one; "env" at most CKPTD_ENV_MAX NAME=VALUE strings;
 * "cwd" an absolute path; "tty" a boolean if there. 0 with "tty" in
 * *@tty, or -EINVAL with @err. The options every run has are the
 * daemon's.
 */
int ckptd_run_ns_check(const json_t *req, bool *tty, struct ckpt_err *err);

/*
 * A peer-copy's {job, seq, keep, names, dir?, uid?} (daemon/copy.c: a
 * committed snapshot, copied whole to another node): "seq" 1 .. 2^32-1,
 * "keep" 0 .. 2^32-1, "names" the snapshot directory's entries, 1 to
 * CKPTD_COPY_NAMES_MAX names of at most HOST_NAME_MAX bytes of
 * [A-Za-z0-9._-], none "." or ".."; "dir", a snapshot in a --dir, an
 * absolute path shorter than CKPT_META_DIR_MAX, and with it "uid", the
 * job's owner, 0 .. 2^32-2. 0 with them in @c (names NULL-terminated and
 * dir pointing into @req, dir NULL without), or -EINVAL with @err. The
 * job id is the daemon's to check (job_id_valid()), and the directory its
 * to open as the owner's.
 */
#define CKPTD_COPY_NAMES_MAX	67	/* meta.json, meta.mac, 65 nodes */
struct ckptd_copy {
	json_int_t seq, keep;
	const char *dir;	/* a --dir, or NULL: the snapshot root */
	json_int_t uid;		/* with dir: the job's owner */
	const char *names[CKPTD_COPY_NAMES_MAX + 1];
};
int ckptd_copy_check(const json_t *req, struct ckptd_copy *c, struct ckpt_err *err);

/*
 * A header of files travelling between daemons (daemon/ship.c): {"ship":
 * "dir"|"file"|"end"|"error", "path", "bytes", "error"}. The path is
 * relative: at most CKPTD_SHIP_PATH_MAX bytes of [A-Za-z0-9._-] in at
 * most CKPTD_SHIP_DEPTH components separated by single '/', none "." or
 * "..", the first one of @allowed (NULL-terminated); a file's bytes at
 * most CKPTD_SHIP_BYTES_MAX. Its kind, with *@path and *@bytes, or
 * -EINVAL with @err naming what is wrong (an "error" header: -EREMOTEIO,
 * its message in @err).
 */
enum { CKPTD_SHIP_DIR, CKPTD_SHIP_FILE, CKPTD_SHIP_END };
#define CKPTD_SHIP_PATH_MAX	512
#define CKPTD_SHIP_DEPTH	8
#define CKPTD_SHIP_BYTES_MAX	(1ULL << 46)
int ckptd_ship_check(const json_t *msg, const char *const *allowed,
		     const char **path, uint64_t *bytes, struct ckpt_err *err);

/*
 * A share that lets its job go on before it reads its images back (a
 * coordinated continue) sends its entry of the metadata without their
 * SHA-256, then the sums, an array of 64 lowercase hex digits a member in
 * the order of its entry's one tree: each goes into its member's
 * "sha256". 0, or -EPROTO with @err naming node @name and what is wrong
 * (@entry is then left as it was).
 */
int ckptd_sums_merge(json_t *entry, const json_t *sums, const char *name,
		     struct ckpt_err *err);

/*
 * Sends @msg, with @nfds descriptors, as one frame, whole: on a
 * non-blocking socket it waits up to CKPTD_SEND_WAIT_MS for room.
 */
int ckptd_msg_send(int fd, const json_t *msg, const int *fds, int nfds,
		   struct ckpt_err *err);

/* Reads one whole frame from blocking @fd and decodes it. */
int ckptd_msg_recv(int fd, json_t **msg, struct ckpt_err *err);

/*
 * The client's side. A connection to ckptd (CKPTD_SOCKET, or the
 * environment's CKPTD_SOCKET): the descriptor, or -errno with @err saying
 * ckptd is not running.
 */
int ckptd_connect(struct ckpt_err *err);

/*
 * The reply to the request sent on @fd, events before it skipped: 0 with
 * *@reply when ckptd says ok, -EPERM with @err its error when it refuses,
 * or -errno.
 */
int ckptd_reply(int fd, json_t **reply, struct ckpt_err *err);

/* The same, each event before the reply handed to @on_event (if any). */
typedef void (*ckptd_event_fn)(void *arg, const json_t *event);
int ckptd_reply_events(int fd, json_t **reply, ckptd_event_fn on_event,
		       void *arg, struct ckpt_err *err);

/* One request on a connection of its own, and its reply (as ckptd_reply). */
int ckptd_call(const json_t *req, json_t **reply, struct ckpt_err *err);
int ckptd_call_events(const json_t *req, json_t **reply,
		      ckptd_event_fn on_event, void *arg, struct ckpt_err *err);

#endif /* _CKPT_CKPTD_PROTO_H */
