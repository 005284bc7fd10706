// SPDX-License-Identifier: GPL-2.0
/*
 * The coordinator's join of TCP ends between nodes (lib/ckptd/tcpjoin.c):
 * two ends that fit, bytes in flight either side of the captures, an end
 * with no other end, one claimed twice, lists of the wrong shape. TAP on
 * stdout.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	ret = shares ? tcp_join(shares, NULL, err) : -999;
	json_decref(shares);
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

	ok = shares && !tcp_join(shares, out, NULL);
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
 * A connection from node a (192.0.2.10:4000) to node b (192.0.2.11:5000).
 * a sent up to 300 and holds from 100 (una) on; b received 200 from a.
 * b sent up to 880, all acknowledged; a received 880.
 */
#define A(una, wseq, rnxt) "{\"node\": \"a\", \"tcp\": [[7, 5, \"192.0.2.10:4000\", \"192.0.2.11:5000\", " #una ", " #wseq ", " #rnxt ", false]]}"
#define B(una, wseq, rnxt) "{\"node\": \"b\", \"tcp\": [[8, 6, \"192.0.2.11:5000\", \"192.0.2.10:4000\", " #una ", " #wseq ", " #rnxt ", false]]}"

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

int main(void)
{
	struct ckpt_err err;

	printf("TAP version 13\n1..21\n");
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
	check(outside("[" A(100, 300, 880) ", " B(880, 880, 200) ", "
		      "{\"node\": \"c\", \"tcp\": [[9, 4, \"192.0.2.12:1\", \"198.51.100.1:2\", 1, 1, 1, false]]}]",
		      "{\"c\":[[9,4,\"192.0.2.12:1\",\"198.51.100.1:2\"]]}"),
	      "--outside close: an end with no other end listed by node, the others joined");
	check(outside("[{\"node\": \"a\", \"tcp\": [[7, 5, \"192.0.2.10:4000\", \"198.51.100.1:2\", 1, 1, 1, true]]}]",
		      "{\"a\":[[7,5,\"192.0.2.10:4000\",\"198.51.100.1:2\"]]}"),
	      "--outside close: one whose other end shut down writing too, as on one node");
	/* Every peer request's protocol version, checked before its shape. */
	check(proto("{\"op\": \"peer-checkpoint\", \"proto\": 3}", &err) == 0,
	      "a peer request of this protocol (3): taken");
	check(proto("{\"op\": \"peer-checkpoint\", \"proto\": 2}", &err) == -EPROTO &&
	      strstr(err.msg, "protocol 2, this node 3: every node must run the same ckpt version") &&
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
	return failed ? 1 : 0;
}
