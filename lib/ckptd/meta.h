/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A job snapshot's metadata (Documentation/ckptd.md, "Snapshots"): the
 * file meta.json of a snapshot directory, under the MAC in meta.mac. One
 * checker of its shape, for ckptd before a restart, ckpt inspect and the
 * fuzzer; what the MAC and the image checksums prove is ckptd's to check.
 */
#ifndef _CKPT_CKPTD_META_H
#define _CKPT_CKPTD_META_H

#include <limits.h>

#include <jansson.h>

#include "restore.h"

#define CKPT_META_FILE		"meta.json"
#define CKPT_META_MAC_FILE	"meta.mac"
#define CKPT_META_FORMAT	"ckpt-snapshot"
#define CKPT_META_VERSION	1
#define CKPT_META_MAX		(1024 * 1024)
#define CKPT_META_DIR_MAX	(PATH_MAX - 128)	/* "dir": a job's --dir */

/*
 * @meta has every member a snapshot needs, each of its type and in bounds,
 * and every path in it is one plain name (or node/tree) under the
 * snapshot directory. 0, or -EINVAL with @err naming the member.
 */
int ckpt_meta_check(const json_t *meta, struct ckpt_err *err);

/*
 * What checked metadata holds: the processes and image bytes of one of
 * its nodes (@node, an entry of "nodes"), or of all (@node NULL), added
 * to *@procs and *@bytes.
 */
void ckpt_meta_count(const json_t *meta, const json_t *node,
		     json_int_t *procs, json_int_t *bytes);

#endif /* _CKPT_CKPTD_META_H */
