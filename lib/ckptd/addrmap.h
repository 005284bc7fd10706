/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A job's address map at restart (Documentation/decisions.md, "TCP on
 * other nodes"): which addresses a node has, and how the coordinator maps
 * each old node's addresses to its new node's. Lists and maps come from
 * other nodes and from snapshots: bounded and checked before use.
 */
#ifndef _CKPT_CKPTD_ADDRMAP_H
#define _CKPT_CKPTD_ADDRMAP_H

#include <jansson.h>

#include "restore.h"

/* The addresses a node lists, as text ("2001:db8::1/64"). */
#define CKPT_ADDRS_MAX		32
#define CKPT_ADDR_TEXT_MAX	64

/*
 * This node's addresses, ["ADDR/PREFIX"...]: IPv4 and IPv6 of every
 * interface that is up, but loopback and IPv6 link-local ones (the same on
 * every node, or not routed). Never NULL; an empty list if none.
 */
json_t *ckpt_addrs_local(void);

/* A node's list: at most CKPT_ADDRS_MAX "ADDR/PREFIX". 0 or -EINVAL. */
int ckpt_addrs_check(const json_t *addrs, struct ckpt_err *err);

/*
 * The map of a restart: @old[i] and @now[i] are the address lists of
 * share i's node when it was checkpointed and of the node it restarts on
 * (NULL or empty when unknown, as in a snapshot older than the lists).
 * Each old address maps to the new node's address of the same family on
 * the same subnet (the old prefix's), if it differs. [[FROM, TO]...] in
 * *@map, or -errno with @err: -EINVAL for a list of the wrong shape,
 * -EEXIST for two new nodes' addresses an old one could go to.
 */
int ckpt_addrmap_build(const json_t *old, const json_t *now, json_t **map,
		       struct ckpt_err *err);

/*
 * @map ([[FROM, TO]...], from the coordinator) into @out, at most
 * CKPT_ADDRMAP_MAX entries: 0 with *@n, or -EINVAL with @err for a map of
 * the wrong shape (an entry not two addresses of one family, an address
 * mapped twice).
 */
int ckpt_addrmap_read(const json_t *map, struct ckpt_addr_map *out,
		      unsigned int *n, struct ckpt_err *err);

/*
 * The job's whole map after a restart: @total (checked, [[FIRST, NOW]...]:
 * the first run's addresses to those of the last checkpoint, or NULL)
 * taken on through @step (this restart's): FIRST to where NOW goes, and
 * @step's own entries for addresses @total does not start from (NOW
 * itself, which a process may have learned since); entries that map an
 * address to itself dropped. A new list, or NULL if more than
 * CKPT_ADDRMAP_MAX entries.
 */
json_t *ckpt_addrmap_compose(const json_t *total, const json_t *step);

#endif /* _CKPT_CKPTD_ADDRMAP_H */
