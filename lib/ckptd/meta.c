// SPDX-License-Identifier: GPL-2.0
/*
 * The shape of a snapshot's metadata (meta.h). Everything in it may have
 * been edited by whoever could write the directory: nothing is taken for
 * granted, and no path leaves the snapshot.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <linux/ckpt.h>

#include "addrmap.h"
#include "err.h"
#include "meta.h"
#include "tcpjoin.h"

/* One path component: not empty, no '/', not starting with a dot. */
static bool plain_name(const char *s)
{
	return s && *s && *s != '.' && strlen(s) < 256 && !strchr(s, '/');
}

static bool hex_of(const char *s, size_t len)
{
	return s && strlen(s) == len && strspn(s, "0123456789abcdef") == len;
}

static int check_members(const json_t *members, const char *where,
			 struct ckpt_err *err)
{
	json_int_t pid, bytes;
	const char *image, *sum;
	json_t *m;
	size_t i;

	if (!json_is_array(members) || !json_array_size(members) ||
	    json_array_size(members) > CKPT_TREE_MAX_MEMBERS)
		return ckpt_err_set(err, EINVAL, "%s: \"members\" must list 1 to %d processes",
				    where, CKPT_TREE_MAX_MEMBERS);
	json_array_foreach(members, i, m) {
		if (json_unpack((json_t *)m, "{s:I, s:s, s:I, s:s}", "pid", &pid,
				"image", &image, "bytes", &bytes, "sha256", &sum) ||
		    pid <= 0 || pid > INT32_MAX || !plain_name(image) ||
		    bytes < 0 || !hex_of(sum, 64))
			return ckpt_err_set(err, EINVAL, "%s: member %zu: needs \"pid\", \"image\" (a plain name), \"bytes\" and \"sha256\" (64 hex digits)",
					    where, i);
	}
	return 0;
}

/* Entry @e of a node's list: [pid, fd, ...], each a number of its range. */
static bool pid_fd_ok(const json_t *e)
{
	const json_t *pid = json_array_get(e, 0), *fd = json_array_get(e, 1);

	return json_is_integer(pid) && json_is_integer(fd) &&
	       json_integer_value(pid) > 0 && json_integer_value(pid) <= INT32_MAX &&
	       json_integer_value(fd) >= 0 && json_integer_value(fd) <= INT32_MAX;
}

/*
 * A connection to a process outside the job (ckpt-run --outside close):
 * [pid, fd, from, to].
 */
static bool outside_ok(const json_t *e)
{
	json_int_t pid, fd;
	const char *from, *to;

	return !json_unpack((json_t *)e, "[IIss!]", &pid, &fd, &from, &to) &&
	       strlen(from) <= TCP_JOIN_ADDR_MAX && strlen(to) <= TCP_JOIN_ADDR_MAX;
}

/*
 * A connection to connect again at a restart, whose other end waited to be
 * accepted on another node: [pid, fd, seq, hex] (tcpjoin.h).
 */
static bool reconnect_ok(const json_t *e)
{
	json_int_t pid, fd, seq;
	const char *hex;

	return !json_unpack((json_t *)e, "[IIIs!]", &pid, &fd, &seq, &hex) &&
	       seq >= 0 && seq <= UINT32_MAX && tcp_join_bytes_ok(hex);
}

/* A listening socket such connections waited on: [pid, fd]. */
static bool awaited_ok(const json_t *e)
{
	return json_array_size(e) == 2;
}

/*
 * Node entry @n's list @key: absent, or at most TCP_JOIN_ENDS_MAX entries
 * [pid, fd, ...], each as @ok says.
 */
static bool list_ok(const json_t *n, const char *key,
		    bool (*ok)(const json_t *e))
{
	const json_t *list = json_object_get(n, key), *e;
	size_t i;

	if (!list)
		return true;
	if (!json_is_array(list) || json_array_size(list) > TCP_JOIN_ENDS_MAX)
		return false;
	json_array_foreach(list, i, e)
		if (!json_is_array(e) || !pid_fd_ok(e) || !ok(e))
			return false;
	return true;
}

static int check_nodes(const json_t *nodes, struct ckpt_err *err)
{
	const char *node, *kernel, *dir, *id;
	char where[320];
	json_t *n, *trees, *t, *members;
	size_t i, k;
	int ret;

	if (!json_is_array(nodes) || !json_array_size(nodes) ||
	    json_array_size(nodes) > 4096)
		return ckpt_err_set(err, EINVAL, "\"nodes\" must list 1 to 4096 nodes");
	json_array_foreach(nodes, i, n) {
		if (json_unpack((json_t *)n, "{s:s, s:s, s:o}", "node", &node,
				"kernel", &kernel, "trees", &trees) ||
		    !plain_name(node) || !json_is_array(trees) ||
		    json_array_size(trees) != 1)
			return ckpt_err_set(err, EINVAL, "node %zu: needs \"node\" (a plain name), \"kernel\" and \"trees\" (one tree)",
					    i);
		if (!list_ok(n, "outside", outside_ok))
			return ckpt_err_set(err, EINVAL, "node %s: \"outside\" must list at most %d [pid, fd, from, to]",
					    node, TCP_JOIN_ENDS_MAX);
		if (!list_ok(n, "reconnect", reconnect_ok) ||
		    !list_ok(n, "awaited", awaited_ok))
			return ckpt_err_set(err, EINVAL, "node %s: \"reconnect\" must list at most %d [pid, fd, seq, hex] and \"awaited\" [pid, fd]",
					    node, TCP_JOIN_ENDS_MAX);
		/* Its addresses, for a restart elsewhere: not in older snapshots. */
		if (json_object_get(n, "addrs") &&
		    ckpt_addrs_check(json_object_get(n, "addrs"), NULL))
			return ckpt_err_set(err, EINVAL, "node %s: \"addrs\" must list at most %d ADDR/PREFIX",
					    node, CKPT_ADDRS_MAX);
		json_array_foreach(trees, k, t) {
			snprintf(where, sizeof(where), "node %s, tree %zu", node, k);
			if (json_unpack((json_t *)t, "{s:s, s:s, s:o}", "dir", &dir,
					"id", &id, "members", &members) ||
			    strncmp(dir, node, strlen(node)) ||
			    dir[strlen(node)] != '/' ||
			    !plain_name(dir + strlen(node) + 1) ||
			    !hex_of(id, 2 * CKPT_TREE_ID_LEN))
				return ckpt_err_set(err, EINVAL, "%s: needs \"dir\" (NODE/NAME), \"id\" (%d hex digits) and \"members\"",
						    where, 2 * CKPT_TREE_ID_LEN);
			ret = check_members(members, where, err);
			if (ret)
				return ret;
		}
	}
	return 0;
}

int ckpt_meta_check(const json_t *meta, struct ckpt_err *err)
{
	json_int_t version, uid, gid, seq, time;
	const char *format, *job, *name, *cwd;
	json_t *cmd, *nodes, *v;
	size_t i;

	if (json_unpack((json_t *)meta, "{s:s, s:I, s:s, s:s, s:I, s:I, s:I, s:I, s:o, s:s, s:o}",
			"format", &format, "version", &version, "job", &job,
			"name", &name, "uid", &uid, "gid", &gid, "seq", &seq,
			"time", &time, "cmd", &cmd, "cwd", &cwd, "nodes", &nodes))
		return ckpt_err_set(err, EINVAL, "not a snapshot's metadata: a member is missing or of the wrong type (format, version, job, name, uid, gid, seq, time, cmd, cwd, nodes)");
	if (strcmp(format, CKPT_META_FORMAT) || version != CKPT_META_VERSION)
		return ckpt_err_set(err, EINVAL, "format '%.32s' version %lld: this ckpt reads '%s' version %d",
				    format, (long long)version, CKPT_META_FORMAT,
				    CKPT_META_VERSION);
	if (!hex_of(job, 8))
		return ckpt_err_set(err, EINVAL, "\"job\" is not a job id (8 hex digits)");
	if (uid < 0 || uid > UINT32_MAX - 1 || gid < 0 || gid > UINT32_MAX - 1 ||
	    seq <= 0 || seq > UINT32_MAX || time < 0)
		return ckpt_err_set(err, EINVAL, "\"uid\", \"gid\", \"seq\" or \"time\" out of bounds");
	if (!json_is_array(cmd) || !json_array_size(cmd))
		return ckpt_err_set(err, EINVAL, "\"cmd\" must be a list of strings");
	json_array_foreach(cmd, i, v)
		if (!json_is_string(v))
			return ckpt_err_set(err, EINVAL, "\"cmd\" must be a list of strings");
	(void)name;
	(void)cwd;
	if (json_object_get(meta, "addrmap")) {
		static struct ckpt_addr_map map[CKPT_ADDRMAP_MAX];
		unsigned int n;

		if (ckpt_addrmap_read(json_object_get(meta, "addrmap"), map, &n, err))
			return -EINVAL;
	}
	v = json_object_get(meta, "dir");
	if (v && (!json_is_string(v) || json_string_value(v)[0] != '/' ||
		  json_string_length(v) >= CKPT_META_DIR_MAX))
		return ckpt_err_set(err, EINVAL, "\"dir\" must be an absolute path of at most %d bytes",
				    CKPT_META_DIR_MAX - 1);
	v = json_object_get(meta, "outside");
	if (v && (!json_is_string(v) || (strcmp(json_string_value(v), "close") &&
					  strcmp(json_string_value(v), "refuse"))))
		return ckpt_err_set(err, EINVAL, "\"outside\" must be close or refuse");
	return check_nodes(nodes, err);
}

void ckpt_meta_count(const json_t *meta, const json_t *node,
		     json_int_t *procs, json_int_t *bytes)
{
	const json_t *n, *m, *members;
	size_t i, k;

	json_array_foreach(json_object_get(meta, "nodes"), i, n) {
		if (node && n != node)
			continue;
		members = json_object_get(json_array_get(json_object_get(n, "trees"), 0),
					  "members");
		json_array_foreach(members, k, m)
			*bytes += json_integer_value(json_object_get(m, "bytes"));
		*procs += json_array_size(members);
	}
}
