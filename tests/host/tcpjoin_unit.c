// SPDX-License-Identifier: GPL-2.0
/*
 * The coordinator's join of TCP ends between nodes (lib/ckptd/tcpjoin.c):
 * two ends that fit, bytes in flight either side of the captures, an end
 * with no other end, one claimed twice, lists of the wrong shape. TAP on
 * stdout.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "meta.h"
#include "proto.h"
#include "tcpjoin.h"

static int nr, failed;

static void check(int ok, const char *what)
{
	printf("%sok %d %s\n", ok ? "" : "not ", ++nr, what);
	if (!ok)
		failed++;
}

/* tcp_join() of @text: its return, the message in @err. */
static int join(const char *text, struct ckpt_err *err)
{
	json_t *shares = json_loads(text, 0, NULL);
	int ret;

	err->msg[0] = 0;
	ret = shares ? tcp_join(shares, NULL, NULL, err) : -999;
	json_decref(shares);
	return ret;
}

/*
 * ckpt_meta_check() of a snapshot's metadata whose one node entry has
 * @extra ("" or ", KEY: ...") besides what every entry has.
 */
static int meta(const char *extra, struct ckpt_err *err)
{
	char text[2048];
	json_t *m;
	int ret;

	snprintf(text, sizeof(text),
		 "{\"format\": \"ckpt-snapshot\", \"version\": 1, \"job\": \"0123abcd\", "
		 "\"name\": \"n\", \"uid\": 1000, \"gid\": 1000, \"seq\": 3, \"time\": 1700000000, "
		 "\"cmd\": [\"a\"], \"cwd\": \"/home/u\", \"nodes\": [{\"node\": \"n0\", "
		 "\"kernel\": \"6.1.0\", \"trees\": [{\"dir\": \"n0/0\", "
		 "\"id\": \"00112233445566778899aabbccddeeff\", \"members\": [{\"pid\": 1, "
		 "\"image\": \"1.img\", \"bytes\": 4096, \"sha256\": \"%s\"}]}]%s}]}",
		 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", extra);
	m = json_loads(text, 0, NULL);
	err->msg[0] = 0;
	ret = m ? ckpt_meta_check(m, err) : -999;
	json_decref(m);
	return ret;
}

/* ckptd_peer_proto_check() of the request @text. */
static int proto(const char *text, struct ckpt_err *err)
{
	json_t *req = json_loads(text, 0, NULL);
	int ret;

	err->msg[0] = 0;
	ret = req ? ckptd_peer_proto_check(req, err) : -999;
	json_decref(req);
	return ret;
}

/* tcp_join() of @text, keeping ends with no other end: whether @want lists them. */
static int outside(const char *text, const char *want)
{
	json_t *shares = json_loads(text, 0, NULL), *out = json_object();
	char *got;
	int ok;

	ok = shares && !tcp_join(shares, out, NULL, NULL);
	got = json_dumps(out, JSON_COMPACT | JSON_SORT_KEYS);
	ok = ok && got && !strcmp(got, want);
	if (!ok)
		printf("# got %s\n", got ? got : "nothing");
	free(got);
	json_decref(shares);
	json_decref(out);
	return ok;
}

/*
 * tcp_join() of @text: whether it joins and leaves @want for the restarts
 * (with --outside close when @out).
 */
static int later(const char *text, bool out, const char *want)
{
	json_t *shares = json_loads(text, 0, NULL), *l = json_object();
	json_t *o = out ? json_object() : NULL;
	char *got;
	int ok;

	ok = shares && !tcp_join(shares, o, l, NULL);
	got = json_dumps(l, JSON_COMPACT | JSON_SORT_KEYS);
	ok = ok && got && !strcmp(got, want) && !json_object_size(o);
	if (!ok)
		printf("# got %s\n", got ? got : "nothing");
	free(got);
	json_decref(shares);
	json_decref(l);
	json_decref(o);
	return ok;
}

/*
 * A connection from node a (192.0.2.10:4000) to node b (192.0.2.11:5000).
 * a sent up to 300 and holds from 100 (una) on; b received 200 from a.
 * b sent up to 880, all acknowledged; a received 880.
 */
#define A(una, wseq, rnxt) "{\"node\": \"a\", \"tcp\": [[7, 5, \"192.0.2.10:4000\", \"192.0.2.11:5000\", " #una ", " #wseq ", " #rnxt ", false]]}"
#define B(una, wseq, rnxt) "{\"node\": \"b\", \"tcp\": [[8, 6, \"192.0.2.11:5000\", \"192.0.2.10:4000\", " #una ", " #wseq ", " #rnxt ", false]]}"
/* The same, waiting in b's listening socket (fd 6) to be accepted: its bytes. */
#define W(una, wseq, rnxt, hex) "{\"node\": \"b\", \"tcp\": [\"0.0.0.0:5000\", [8, 6, \"192.0.2.11:5000\", \"192.0.2.10:4000\", " #una ", " #wseq ", " #rnxt ", false, \"" hex "\"]]}"

/*
 * ckptd_sums_merge() of @sums into a node entry of two images; 0 with
 * *@first the first member's sha256 then, or the error.
 */
#define SUM_A "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define SUM_B "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"
static int sums(const char *sums_text, const char *entry_text, char *first,
		struct ckpt_err *err)
{
	json_t *entry = json_loads(entry_text ?: "{\"node\": \"node1\", \"trees\": [{\"dir\": \"node1/0\", "
				   "\"members\": [{\"pid\": 1, \"image\": \"1.img\", \"bytes\": 4}, "
				   "{\"pid\": 2, \"image\": \"2.img\", \"bytes\": 8}]}]}", 0, NULL);
	json_t *list = json_loads(sums_text, JSON_DECODE_ANY, NULL);
	const char *got;
	int ret;

	ret = entry ? ckptd_sums_merge(entry, list, "node1", err) : -999;
	got = json_string_value(json_object_get(json_array_get(json_object_get(
		json_array_get(json_object_get(entry, "trees"), 0), "members"), 0), "sha256"));
	snprintf(first, 65, "%s", got ?: "");
	json_decref(entry);
	json_decref(list);
	return ret;
}

/* ckptd_ship_check() of the header @text, for node1's share. */
static int ship(const char *text, struct ckpt_err *err)
{
	static const char *const allowed[] = { "meta.json", "node1", NULL };
	json_t *msg = json_loads(text, 0, NULL);
	const char *path;
	uint64_t bytes;
	int ret;

	ret = msg ? ckptd_ship_check(msg, allowed, &path, &bytes, err) : -999;
	json_decref(msg);
	return ret;
}

/* ckptd_copy_check() of the request @text, into copied. */
static struct ckptd_copy copied;

static int copy(const char *text, struct ckpt_err *err)
{
	static json_t *msg;

	json_decref(msg);	/* the names point into the last one */
	msg = json_loads(text, JSON_ALLOW_NUL, NULL);
	return msg ? ckptd_copy_check(msg, &copied, err) : -999;
}

int main(void)
{
	struct ckpt_err err;
	char req[96], want[128];
	char first[65];

	printf("TAP version 13\n1..41\n");
	check(!join("[" A(100, 300, 880) ", " B(880, 880, 200) "]", &err),
	      "the two ends of a connection fit: joined");
	check(!join("[" A(100, 300, 880) ", " B(880, 880, 100) "]", &err),
	      "the receiver holds exactly from the sender's first unacknowledged byte");
	check(!join("[" A(4294967200, 100, 880) ", " B(880, 880, 50) "]", &err),
	      "sequence numbers that wrap around");
	check(join("[" A(100, 300, 880) ", " B(880, 880, 99) "]", &err) == -EAGAIN &&
	      strstr(err.msg, "from 192.0.2.10:4000 to 192.0.2.11:5000") &&
	      strstr(err.msg, "try again"),
	      "a byte acknowledged between the captures, held by neither: -EAGAIN, named");
	check(join("[" A(100, 300, 880) ", " B(880, 880, 301) "]", &err) == -EAGAIN,
	      "the receiver past what the sender ever wrote: -EAGAIN");
	check(join("[" A(100, 300, 880) "]", &err) == -EOPNOTSUPP &&
	      strstr(err.msg, "node a: pid 7 fd 5 is a TCP connection from 192.0.2.10:4000 to 192.0.2.11:5000, a process in no share of the job"),
	      "an end with no other end in any node: refused by node, pid and descriptor");
	check(join("[" A(100, 300, 880) ", " B(880, 880, 200) ", "
		   "{\"node\": \"c\", \"tcp\": [[9, 4, \"192.0.2.10:4000\", \"192.0.2.11:5000\", 1, 1, 1, false]]}]",
		   &err) == -EPROTO && strstr(err.msg, "both hold"),
	      "one end claimed by two nodes: refused");
	check(join("[{\"node\": \"a\", \"tcp\": [[7, 5, \"x\", \"y\", -1, 0, 0, false]]}]", &err) == -EPROTO,
	      "a sequence number out of range: refused");
	check(join("[{\"node\": \"a\", \"tcp\": [[7, 5, \"x\", \"y\", 1, 2]]}, 3]", &err) == -EPROTO &&
	      join("{\"node\": \"a\"}", &err) == -EPROTO &&
	      join("[{\"tcp\": []}]", &err) == -EPROTO,
	      "lists of the wrong shape: refused");
	check(join("[" A(100, 300, 880) ", " B(880, 880, 99) ", "
		   "{\"node\": \"c\", \"tcp\": [[9, 4, \"192.0.2.12:1\", \"192.0.2.13:2\", 1, 1, 1, false]]}]",
		   &err) == -EOPNOTSUPP && strstr(err.msg, "node c"),
	      "an end with no other end is told before a gap, which a retry would not mend");
	check(join("[{\"node\": \"a\", \"tcp\": [[7, 5, \"192.0.2.10:4000\", \"192.0.2.11:5000\", 1, 1, 1, true]]}]",
		   &err) == -EAGAIN && strstr(err.msg, "node a: pid 7 fd 5") &&
	      strstr(err.msg, "closed by its other end") && strstr(err.msg, "try again"),
	      "an end with no other end whose other end shut down writing: -EAGAIN, named");
	check(join("[{\"node\": \"a\", \"tcp\": [[7, 5, \"192.0.2.10:4000\", \"192.0.2.11:5000\", 1, 1, 1, true]]}, "
		   "{\"node\": \"c\", \"tcp\": [[9, 4, \"192.0.2.12:1\", \"192.0.2.13:2\", 1, 1, 1, false]]}]",
		   &err) == -EOPNOTSUPP && strstr(err.msg, "node c") &&
	      join("[{\"node\": \"a\", \"tcp\": [[7, 5, \"x\", \"y\", 1, 2, 3, 1]]}]", &err) == -EPROTO,
	      "... told after a refusal, which a retry would not mend; peer_shut a boolean");
	check(!join("[]", &err) && !join("[{\"node\": \"a\", \"tcp\": []}]", &err),
	      "no connection between nodes: nothing to join");
	check(join("[{\"node\": \"a\", \"tcp\": [[7, 5, \"192.0.2.10:4000\", \"192.0.2.11:5000\", 1, 1, 1, false]]}, "
		   "{\"node\": \"b\", \"tcp\": [\"0.0.0.0:5000\", \"0.0.0.0:4000\"]}]",
		   &err) == -EAGAIN && strstr(err.msg, "node a: pid 7 fd 5") &&
	      strstr(err.msg, "a listener of another node's share") &&
	      strstr(err.msg, "try again") &&
	      join("[{\"node\": \"a\", \"tcp\": [[7, 5, \"192.0.2.10:4000\", \"192.0.2.11:5000\", 1, 1, 1, false]]}, "
		   "{\"node\": \"b\", \"tcp\": [\"192.0.2.11:5000\"]}]", &err) == -EAGAIN,
	      "an end with no other end, to another node's listener (taken in after its capture): -EAGAIN, named");
	{
		json_t *s = json_loads("[{\"node\": \"a\", \"tcp\": [[7, 5, \"192.0.2.10:4000\", \"192.0.2.11:5000\", 1, 1, 1, false], \"0.0.0.0:4000\"]}, "
				       "{\"node\": \"b\", \"tcp\": [\"[::]:5000\", \"0.0.0.0:4000\"]}]", 0, NULL);
		json_t *out = json_object();

		check(s && tcp_join(s, out, NULL, &err) == -EAGAIN && !json_object_size(out) &&
		      join("[{\"node\": \"a\", \"tcp\": [[7, 5, \"192.0.2.10:4000\", \"192.0.2.11:5000\", 1, 1, 1, false]]}, "
			   "{\"node\": \"b\", \"tcp\": [\"192.0.2.12:5000\", \"0.0.0.0:5001\", \"0.0.0.0:4000\"]}]",
			   &err) == -EOPNOTSUPP &&
		      join("[{\"node\": \"a\", \"tcp\": [\"0.0.0.0:5000\", \"0.0.0.0:4000\"]}, "
			   "{\"node\": \"b\", \"tcp\": [\"0.0.0.0:5000\", \"x\"]}]", &err) == -EPROTO &&
		      !join("[{\"node\": \"a\", \"tcp\": [\"0.0.0.0:5000\"]}, "
			    "{\"node\": \"b\", \"tcp\": [\"0.0.0.0:5000\"]}]", &err),
		      "... not taken for one to outside; another address or port is outside; listeners: the same on two nodes is fine, one without a port refused");
		json_decref(out);
		json_decref(s);
	}
	check(outside("[" A(100, 300, 880) ", " B(880, 880, 200) ", "
		      "{\"node\": \"c\", \"tcp\": [[9, 4, \"192.0.2.12:1\", \"198.51.100.1:2\", 1, 1, 1, false]]}]",
		      "{\"c\":[[9,4,\"192.0.2.12:1\",\"198.51.100.1:2\"]]}"),
	      "--outside close: an end with no other end listed by node, the others joined");
	check(outside("[{\"node\": \"a\", \"tcp\": [[7, 5, \"192.0.2.10:4000\", \"198.51.100.1:2\", 1, 1, 1, true]]}]",
		      "{\"a\":[[7,5,\"192.0.2.10:4000\",\"198.51.100.1:2\"]]}"),
	      "--outside close: one whose other end shut down writing too, as on one node");
	/* Waiting to be accepted on node b: a connects again at the restart. */
	check(later("[" A(100, 300, 880) ", " W(880, 880, 200, "6869") "]", false,
		    "{\"a\":{\"reconnect\":[[7,5,200,\"6869\"]]},\"b\":{\"awaited\":[[8,6]]}}") &&
	      later("[" A(100, 300, 880) ", " W(880, 880, 200, "") "]", true,
		    "{\"a\":{\"reconnect\":[[7,5,200,\"\"]]},\"b\":{\"awaited\":[[8,6]]}}"),
	      "a connection waiting to be accepted on another node: joined, its bytes and sequence number for its other end's node, its listener for its own");
	check(join("[" A(100, 300, 880) ", " W(880, 880, 301, "68") "]", &err) == -EAGAIN &&
	      strstr(err.msg, "moved between the two nodes' captures"),
	      "... the waiting end past what the other ever wrote: -EAGAIN");
	{
		json_t *s = json_loads("[" W(880, 880, 200, "68") "]", 0, NULL);
		json_t *out = json_object();

		check(join("[" W(880, 880, 200, "68") "]", &err) == -EAGAIN &&
		      strstr(err.msg, "node b: pid 8 fd 6 listens on 192.0.2.11:5000 with a TCP connection from 192.0.2.10:4000 waiting to be accepted, whose other end is in no share of the job; try again") &&
		      s && tcp_join(s, out, NULL, &err) == -EAGAIN && !json_object_size(out),
		      "... with its other end in no share: -EAGAIN, named, never outside");
		json_decref(out);
		json_decref(s);
	}
	check(join("[{\"node\": \"a\", \"tcp\": [[7, 5, \"192.0.2.10:4000\", \"192.0.2.11:5000\", 1, 1, 1, false, \"\"]]}, "
		   W(1, 1, 1, "") "]", &err) == -EPROTO && strstr(err.msg, "both list") &&
	      join("[" A(100, 300, 880) ", " W(880, 880, 200, "686") "]", &err) == -EPROTO &&
	      join("[" A(100, 300, 880) ", " W(880, 880, 200, "6G") "]", &err) == -EPROTO &&
	      join("[" A(100, 300, 880) ", " W(880, 880, 200, "6A") "]", &err) == -EPROTO &&
	      join("[{\"node\": \"b\", \"tcp\": [[8, 6, \"x:1\", \"y:2\", 1, 1, 1, false, true]]}]", &err) == -EPROTO &&
	      join("[{\"node\": \"b\", \"tcp\": [[8, 6, \"x:1\", \"y:2\", 1, 1, 1, false, -1]]}]", &err) == -EPROTO &&
	      join("[{\"node\": \"b\", \"tcp\": [[0, 6, \"x:1\", \"y:2\", 1, 1, 1, false]]}]", &err) == -EPROTO &&
	      join("[{\"node\": \"b\", \"tcp\": [[8, -1, \"x:1\", \"y:2\", 1, 1, 1, false]]}]", &err) == -EPROTO &&
	      join("[{\"node\": \"b\", \"tcp\": [[8, 6, \"x:1\", \"y:2\", 1, 1, 1, false, 0]]}]", &err) == -EPROTO &&
	      join("[{\"node\": \"a\", \"tcp\": [[7, 5, \"\", \"192.0.2.11:5000\", 1, 1, 1, false, \"68\"]]}, "
		   "{\"node\": \"b\", \"tcp\": [\"192.0.2.11:5000\"]}]", &err) == -EPROTO,
	      "... both ends waiting, bytes not lower-case hex of whole bytes nor a count of at least 1, no pid or descriptor, an address without a port (which could meet a listener): refused");
	check(join("[" A(100, 300, 880) ", {\"node\": \"b\", \"tcp\": [[8, 6, \"192.0.2.11:5000\", \"192.0.2.10:4000\", 880, 880, 200, false, 5000]]}]",
		   &err) == -EAGAIN &&
	      strstr(err.msg, "node b: pid 8 fd 6 listens on 192.0.2.11:5000 with a TCP connection from 192.0.2.10:4000 (node a) waiting to be accepted that holds 5000 bytes") &&
	      strstr(err.msg, "try again"),
	      "... holding more bytes than an answer carries (their count listed): -EAGAIN, named");
	check(later("[{\"node\": \"a\", \"tcp\": [[7, 9, \"192.0.2.10:3000\", \"192.0.2.11:5000\", 1, 1, 880, false], "
		    "[7, 5, \"192.0.2.10:4000\", \"192.0.2.11:5000\", 1, 1, 880, false]]}, "
		    "{\"node\": \"b\", \"tcp\": [[8, 6, \"192.0.2.11:5000\", \"192.0.2.10:4000\", 880, 880, 1, false, \"\"], "
		    "[8, 6, \"192.0.2.11:5000\", \"192.0.2.10:3000\", 880, 880, 1, false, \"\"]]}]", false,
		    "{\"a\":{\"reconnect\":[[7,5,1,\"\"],[7,9,1,\"\"]]},\"b\":{\"awaited\":[[8,6],[8,6]]}}"),
	      "... two on one listener: connected again in the order of its queue, not of their addresses nor of the connecting node's list");
	{
		json_t *a = json_array(), *b = json_array(), *s, *l = json_object();
		char from[32], *hex = malloc(2 * TCP_JOIN_WAIT_MAX + 1);
		int k, n = TCP_JOIN_WAIT_JOB / TCP_JOIN_WAIT_MAX + 1;

		memset(hex, 'a', 2 * TCP_JOIN_WAIT_MAX);
		hex[2 * TCP_JOIN_WAIT_MAX] = 0;
		for (k = 0; k < n; k++) {
			snprintf(from, sizeof(from), "192.0.2.10:%d", 1000 + k);
			json_array_append_new(a, json_pack("[i, i, s, s, i, i, i, b]", 7, 10 + k, from,
							   "192.0.2.11:5000", 1, 1 + TCP_JOIN_WAIT_MAX, 880, 0));
			json_array_append_new(b, json_pack("[i, i, s, s, i, i, i, b, s]", 8, 6, "192.0.2.11:5000",
							   from, 880, 880, 1 + TCP_JOIN_WAIT_MAX, 0, hex));
		}
		s = json_pack("[{s:s, s:o}, {s:s, s:o}]", "node", "a", "tcp", a, "node", "b", "tcp", b);
		check(s && tcp_join(s, NULL, l, &err) == -EAGAIN &&
		      strstr(err.msg, "hold 135168 bytes in all, more than its snapshot's metadata carries"),
		      "... more bytes waiting than the job's metadata carries: -EAGAIN, named");
		json_decref(s);
		json_decref(l);
		free(hex);
	}
	{
		char *big = malloc(2 * TCP_JOIN_WAIT_MAX + 3), *text;

		memset(big, 'a', 2 * TCP_JOIN_WAIT_MAX + 2);
		big[2 * TCP_JOIN_WAIT_MAX + 2] = 0;
		text = malloc(strlen(big) + 256);
		snprintf(text, strlen(big) + 256,
			 "[{\"node\": \"b\", \"tcp\": [[8, 6, \"x:1\", \"y:2\", 1, 1, 1, false, \"%s\"]]}]", big);
		check(join(text, &err) == -EPROTO, "... more bytes than TCP_JOIN_WAIT_MAX: refused");
		free(text);
		free(big);
	}
	/* What the join leaves in a node's entry, checked as the metadata is. */
	check(!meta("", &err) &&
	      !meta(", \"reconnect\": [[1, 5, 200, \"6869\"]], \"awaited\": [[1, 6]], "
		    "\"outside\": [[1, 7, \"192.0.2.10:1\", \"198.51.100.1:2\"]]", &err) &&
	      !meta(", \"reconnect\": [], \"awaited\": []", &err),
	      "a node entry's reconnect, awaited and outside lists: taken");
	check(meta(", \"reconnect\": [[1, 5, 200, \"686\"]]", &err) == -EINVAL &&
	      strstr(err.msg, "node n0: \"reconnect\"") &&
	      meta(", \"reconnect\": [[1, 5, 4294967296, \"68\"]]", &err) == -EINVAL &&
	      meta(", \"reconnect\": [[0, 5, 1, \"68\"]]", &err) == -EINVAL &&
	      meta(", \"reconnect\": [[1, 5, 1]]", &err) == -EINVAL &&
	      meta(", \"reconnect\": {}", &err) == -EINVAL &&
	      meta(", \"awaited\": [[1, -1]]", &err) == -EINVAL &&
	      meta(", \"awaited\": [[1, 2, 3]]", &err) == -EINVAL &&
	      meta(", \"awaited\": null", &err) == -EINVAL &&
	      meta(", \"outside\": [[1, 7, \"x\"]]", &err) == -EINVAL &&
	      meta(", \"outside\": null", &err) == -EINVAL,
	      "... an odd hex, a sequence number out of range, no pid, a short or long entry, not a list: refused, named");
	/* Every peer request's protocol version, checked before its shape. */
	snprintf(req, sizeof(req), "{\"op\": \"peer-checkpoint\", \"proto\": %d}",
		 CKPTD_PEER_PROTO);
	check(proto(req, &err) == 0, "a peer request of this protocol: taken");
	snprintf(req, sizeof(req), "{\"op\": \"peer-checkpoint\", \"proto\": %d}",
		 CKPTD_PEER_PROTO - 1);
	snprintf(want, sizeof(want), "protocol %d, this node %d: every node must run the same ckpt version",
		 CKPTD_PEER_PROTO - 1, CKPTD_PEER_PROTO);
	check(proto(req, &err) == -EPROTO && strstr(err.msg, want) &&
	      proto("{\"op\": \"peer-join\"}", &err) == -EPROTO &&
	      strstr(err.msg, "older ckptd peer protocol (no version)") &&
	      proto("{\"op\": \"peer-join\", \"proto\": \"2\"}", &err) == -EPROTO,
	      "another protocol, none, or not a number: refused, naming both");
	/* A share's files between nodes (daemon/ship.c): what a header may name. */
	check(ship("{\"ship\": \"file\", \"path\": \"node1/0/12.img\", \"bytes\": 4096}", &err) ==
	      CKPTD_SHIP_FILE &&
	      ship("{\"ship\": \"dir\", \"path\": \"node1\"}", &err) == CKPTD_SHIP_DIR &&
	      ship("{\"ship\": \"file\", \"path\": \"meta.json\", \"bytes\": 0}", &err) == CKPTD_SHIP_FILE &&
	      ship("{\"ship\": \"end\"}", &err) == CKPTD_SHIP_END,
	      "a share's directories and files, the metadata, the end: taken");
	check(ship("{\"ship\": \"file\", \"path\": \"node1/../meta.json\", \"bytes\": 1}", &err) == -EINVAL &&
	      strstr(err.msg, "not a path this share may have") &&
	      ship("{\"ship\": \"dir\", \"path\": \"/etc\"}", &err) == -EINVAL &&
	      ship("{\"ship\": \"dir\", \"path\": \"node1//0\"}", &err) == -EINVAL &&
	      ship("{\"ship\": \"dir\", \"path\": \"node1/./0\"}", &err) == -EINVAL &&
	      ship("{\"ship\": \"dir\", \"path\": \"node1/\"}", &err) == -EINVAL &&
	      ship("{\"ship\": \"dir\", \"path\": \"node1/a b\"}", &err) == -EINVAL &&
	      ship("{\"ship\": \"dir\", \"path\": \"node1/1/2/3/4/5/6/7/8\"}", &err) == -EINVAL,
	      "a path leading out, absolute, with an empty, '.' or odd name, too deep: refused");
	check(ship("{\"ship\": \"dir\", \"path\": \"node2/0\"}", &err) == -EINVAL &&
	      ship("{\"ship\": \"file\", \"path\": \"node10\", \"bytes\": 1}", &err) == -EINVAL &&
	      ship("{\"ship\": \"file\", \"path\": \"meta.mac\", \"bytes\": 1}", &err) == -EINVAL,
	      "a path under another name than the ones expected: refused");
	check(ship("{\"ship\": \"file\", \"path\": \"node1/0/1.img\", \"bytes\": -1}", &err) == -EINVAL &&
	      ship("{\"ship\": \"file\", \"path\": \"node1/0/1.img\"}", &err) == -EINVAL &&
	      ship("{\"ship\": \"file\", \"path\": \"node1/0/1.img\", \"bytes\": 70368744177665}", &err) == -EINVAL &&
	      ship("{\"ship\": \"link\", \"path\": \"node1\"}", &err) == -EINVAL &&
	      ship("{\"path\": \"node1\"}", &err) == -EINVAL &&
	      ship("{\"ship\": \"error\", \"error\": \"disk full\"}", &err) == -EREMOTEIO &&
	      !strcmp(err.msg, "disk full"),
	      "a size missing, negative or over 2^46, another kind: refused; an error: its message");
	/* A continue's shares send their images' sums after they go on. */
	check(!sums("[\"" SUM_A "\", \"" SUM_B "\"]", NULL, first, &err) &&
	      !strcmp(first, SUM_A),
	      "a share's sums after its release: each into its member, in order");
	check(sums("[\"" SUM_A "\"]", NULL, first, &err) == -EPROTO &&
	      strstr(err.msg, "node node1: 1 image checksums for 2 images") && !*first &&
	      sums("[\"" SUM_A "\", \"" SUM_B "\", \"" SUM_B "\"]", NULL, first, &err) == -EPROTO &&
	      sums("{}", NULL, first, &err) == -EPROTO && sums("null", NULL, first, &err) == -EPROTO,
	      "too few, too many, or no list of sums: refused, named, nothing merged");
	check(sums("[\"" SUM_A "\", \"" SUM_A "0\"]", NULL, first, &err) == -EPROTO &&
	      strstr(err.msg, "image 1's checksum is not 64 hex digits") && !*first &&
	      sums("[\"" SUM_A "\", \"FEDCBA9876543210fedcba9876543210fedcba9876543210fedcba9876543210\"]",
		   NULL, first, &err) == -EPROTO &&
	      sums("[\"" SUM_A "\", 7]", NULL, first, &err) == -EPROTO &&
	      sums("[\"" SUM_A "\"]", "{\"node\": \"node1\", \"trees\": [{\"members\": [7]}]}",
		   first, &err) == -EPROTO && strstr(err.msg, "image 0 is not described") &&
	      sums("[]", "{\"trees\": [{\"members\": []}, {\"members\": []}]}", first, &err) == -EPROTO,
	      "a sum too long, in capitals, not a string; a member not an object, two trees: refused");
	check(!copy("{\"job\": \"j\", \"seq\": 3, \"keep\": 0, \"names\": [\"meta.json\", \"meta.mac\", \"node0\", \"node-1.example\"]}", &err) &&
	      !strcmp(copied.names[0], "meta.json") && !strcmp(copied.names[3], "node-1.example") && !copied.names[4],
	      "peer-copy: a snapshot's names, in order, NULL-terminated");
	check(copy("{\"job\": \"j\", \"seq\": 0, \"keep\": 0, \"names\": [\"a\"]}", &err) == -EINVAL &&
	      copy("{\"job\": \"j\", \"seq\": 4294967296, \"keep\": 0, \"names\": [\"a\"]}", &err) == -EINVAL &&
	      copy("{\"job\": \"j\", \"seq\": 1, \"keep\": -1, \"names\": [\"a\"]}", &err) == -EINVAL &&
	      copy("{\"seq\": 1, \"keep\": 0, \"names\": [\"a\"]}", &err) == -EINVAL &&
	      copy("{\"job\": \"j\", \"seq\": 1, \"keep\": 0, \"names\": []}", &err) == -EINVAL &&
	      copy("{\"job\": \"j\", \"seq\": 1, \"keep\": 0, \"names\": \"a\"}", &err) == -EINVAL &&
	      strstr(err.msg, "peer-copy: needs") && !copied.names[0],
	      "peer-copy: a sequence 0 or past 32 bits, a negative keep, no job, no or empty names: refused");
	check(copy("{\"job\": \"j\", \"seq\": 1, \"keep\": 0, \"names\": [\"a\", \"..\"]}", &err) == -EINVAL &&
	      strstr(err.msg, "\"names\" 1 is not a name") && !copied.names[0] &&
	      copy("{\"job\": \"j\", \"seq\": 1, \"keep\": 0, \"names\": [\"a/b\"]}", &err) == -EINVAL &&
	      copy("{\"job\": \"j\", \"seq\": 1, \"keep\": 0, \"names\": [\".\"]}", &err) == -EINVAL &&
	      copy("{\"job\": \"j\", \"seq\": 1, \"keep\": 0, \"names\": [\"\"]}", &err) == -EINVAL &&
	      copy("{\"job\": \"j\", \"seq\": 1, \"keep\": 0, \"names\": [7]}", &err) == -EINVAL,
	      "peer-copy: a name with '/', '.', '..', empty or not a string: refused, by its index");
	check(!copy("{\"job\": \"j\", \"seq\": 1, \"keep\": 0, \"names\": [\"a\"]}", &err) &&
	      !copied.dir &&
	      !copy("{\"job\": \"j\", \"seq\": 1, \"keep\": 0, \"names\": [\"a\"], \"dir\": \"/home/u/ck\", \"uid\": 1000}", &err) &&
	      copied.dir && !strcmp(copied.dir, "/home/u/ck") && copied.uid == 1000,
	      "peer-copy: no dir (the snapshot root), or a --dir's absolute path: taken");
	{
		char big[CKPT_META_DIR_MAX + 96];

		snprintf(big, sizeof(big), "{\"job\": \"j\", \"seq\": 1, \"keep\": 0, \"names\": [\"a\"], \"dir\": \"/%0*d\"}",
			 CKPT_META_DIR_MAX, 0);
		check(copy("{\"job\": \"j\", \"seq\": 1, \"keep\": 0, \"names\": [\"a\"], \"dir\": \"u/ck\"}", &err) == -EINVAL && strstr(err.msg, "\"dir\" must be an absolute path") &&
		      copy("{\"job\": \"j\", \"seq\": 1, \"keep\": 0, \"names\": [\"a\"], \"dir\": 7}", &err) == -EINVAL &&
		      copy("{\"job\": \"j\", \"seq\": 1, \"keep\": 0, \"names\": [\"a\"], \"dir\": \"/a\\u0000b\"}", &err) == -EINVAL &&
		      copy(big, &err) == -EINVAL && !copied.dir &&
		      copy("{\"job\": \"j\", \"seq\": 1, \"keep\": 0, \"names\": [\"a\"], \"dir\": \"/d\"}", &err) == -EINVAL &&
		      strstr(err.msg, "needs its owner's \"uid\"") &&
		      copy("{\"job\": \"j\", \"seq\": 1, \"keep\": 0, \"names\": [\"a\"], \"dir\": \"/d\", \"uid\": -1}", &err) == -EINVAL &&
		      copy("{\"job\": \"j\", \"seq\": 1, \"keep\": 0, \"names\": [\"a\"], \"dir\": \"/d\", \"uid\": 4294967295}", &err) == -EINVAL &&
		      copy("{\"job\": \"j\", \"seq\": 1, \"keep\": 0, \"names\": [\"a\"], \"dir\": \"/d\", \"uid\": \"0\"}", &err) == -EINVAL,
		      "peer-copy: a dir relative, not a string, with a NUL or too long, or without a uid in bounds: refused");
	}
	copy("null", &err);
	return failed ? 1 : 0;
}
