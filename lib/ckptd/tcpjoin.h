/* SPDX-License-Identifier: GPL-2.0 */
/* TCP connections between a job's nodes, joined (tcpjoin.c). */
#ifndef _CKPTD_TCPJOIN_H
#define _CKPTD_TCPJOIN_H

#include <jansson.h>

#include "restore.h"

/*
 * The ends a node's share may list (its answer is one message of at most
 * CKPTD_MSG_MAX bytes, some 900 ends: the lower bound in practice), the
 * nodes a join takes, an address's length as text ("[v6]:port").
 */
#define TCP_JOIN_ENDS_MAX	4096
#define TCP_JOIN_NODES_MAX	64
#define TCP_JOIN_ADDR_MAX	64
/*
 * The bytes a connection waiting to be accepted from another node may
 * hold and be carried (as hex in its share's answer and in the snapshot's
 * metadata, for its other end to send again at the restart): a runtime's
 * greeting is some tens of bytes; more fails the try, -EAGAIN.
 */
#define TCP_JOIN_WAIT_MAX	4096
#define TCP_JOIN_WAIT_TOTAL	16384	/* a share's, all its answer carries */
#define TCP_JOIN_WAIT_JOB	131072	/* a job's, all its metadata carries */

/*
 * @shares, [{node, tcp: [[pid, fd, from, to, una, wseq, rnxt,
 * peer_shut] or "ADDR:PORT" of a listening socket...]}...] of every node
 * of a checkpoint (peer_shut: a boolean, its other end's FIN received; a
 * connection waiting to be accepted in listening socket fd has a ninth
 * entry, the bytes it received as hex, or their count where they were
 * too many to carry, which fails the join with -EAGAIN): each end joined
 * with its other
 * end in another node's list, and the two checked. For each connection
 * waiting to be accepted, what the restart needs goes to @later (if any),
 * {NODE: {"reconnect": [[pid, fd, seq, hex]...], "awaited": [[pid,
 * fd]...]}}: on the connecting end's node, that end connects again and
 * first sends those bytes, which end at its sequence number seq (in the
 * order the listeners' queues had them, within a node's list); on the
 * listener's, that its queue's connection comes from another node (more
 * than TCP_JOIN_WAIT_JOB bytes in all: -EAGAIN).
 * 0; -EAGAIN for an end with none whose other end shut down
 * writing (a socket closed: its holder closes its own in moments), or
 * that goes to another node's listener (it came in after that node's
 * share was taken), or that waits to be accepted (its other end in no
 * share: a process outside the job); -EOPNOTSUPP for another end
 * with none (with @outside, an object, that end is added to its node's
 * list there, {NODE: [[pid, fd, from, to]...]}, instead: a connection to
 * a process outside the job, ckpt-run --outside close), -EAGAIN for bytes
 * acknowledged between the two captures, -EPROTO or -E2BIG for lists of
 * the wrong shape or size, with @err (which may be NULL).
 */
int tcp_join(const json_t *shares, json_t *outside, json_t *later,
	     struct ckpt_err *err);

/*
 * Whether @s is the lower-case hex of at most TCP_JOIN_WAIT_MAX bytes: a
 * waiting connection's bytes, in a share's list and in the metadata.
 */
bool tcp_join_bytes_ok(const char *s);

#endif /* _CKPTD_TCPJOIN_H */
