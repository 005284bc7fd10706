/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kinds of channel between a job's processes on several nodes
 * (Documentation/decisions.md, "Channel kinds"), as ckptd's phases run
 * them: a kind at a time, each in files of its own.
 */
#ifndef _CKPTD_CHANNEL_H
#define _CKPTD_CHANNEL_H

#include <jansson.h>

#include "err.h"

struct ckpt_tree;

struct channel_kind {
	/* Its key in a share's answer and the join's lists: "tcp". */
	const char *name;
	/*
	 * Find, on a node once its share is captured: the ends of the
	 * channels of the tree in @dir (@t, its manifest) whose other end
	 * is in none of its members, a JSON array, or NULL with @err.
	 */
	json_t *(*ends)(const char *dir, const struct ckpt_tree *t,
			struct ckpt_err *err);
	/*
	 * Join, on the coordinator once every share is captured: @shares,
	 * [{node, NAME: ends}...], each end met by its other end, or
	 * -EAGAIN (a retry may mend it), another -errno, with @err; with
	 * @outside, an end met by none is listed there, {NODE: [[pid, fd,
	 * ...]...]}, instead (ckpt-run --outside close). What a node's
	 * restart needs of the join goes to @later, {NODE: {KEY: [...]}},
	 * each KEY the kind's own, into that node's entry of the metadata.
	 */
	int (*join)(const json_t *shares, json_t *outside, json_t *later,
		    struct ckpt_err *err);
	/*
	 * An entry of ends' as the metadata lists one to outside the job, or
	 * NULL for an entry that is no connection (a listener).
	 */
	json_t *(*outside)(const json_t *end);
};

extern const struct channel_kind channel_tcp;	/* tcpjoin.c */

/* Every kind's ends of the tree in @dir: {NAME: ends...}, or NULL with @err. */
json_t *channel_ends(const char *dir, const struct ckpt_tree *t,
		     struct ckpt_err *err);
/*
 * Node @node's ends, every kind's list in @from (channel_ends()'s, or a
 * share's answer), added to @all, {NAME: [{node, NAME: ends}...]...}:
 * 0, or -EPROTO with @err for a kind's list missing.
 */
int channel_add(json_t *all, const char *node, const json_t *from,
		struct ckpt_err *err);
/*
 * Every kind's join of @all: 0 or the first kind's -errno, with @err;
 * what each node's restart needs in @later (join's).
 */
int channel_join(const json_t *all, json_t *outside, json_t *later,
		 struct ckpt_err *err);
/* Every end in @from (channel_ends()'s) as one to outside the job. */
json_t *channel_outside(const json_t *from);

#endif /* _CKPTD_CHANNEL_H */
