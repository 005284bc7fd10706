// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for what ckptd reads from anyone: its socket's frames
 * (lib/ckptd/proto.c), a snapshot's metadata (lib/ckptd/meta.c), the
 * TCP ends other nodes send (lib/ckptd/tcpjoin.c), a peer-ask's and a
 * node question's arguments, the headers of a share's files shipped
 * between nodes and a share's image sums sent after its release
 * (lib/ckptd/proto.c) and the address lists
 * and map of a restart (lib/ckptd/addrmap.c). Each input goes through
 * ckptd's code twice: as a byte stream on a socket, cut into frames, each
 * decoded and, as an object, checked as metadata, as a restart and as a
 * run in namespaces of its own and a signal passed on, its "shares" joined as
 * TCP ends, its "addrmap" read and a map built from its "old" and "now";
 * and whole, as the text of one message or one meta.json.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "addrmap.h"
#include "meta.h"
#include "proto.h"
#include "tcpjoin.h"

static void check(const void *buf, size_t len)
{
	static const char *const ship_names[] = { "meta.json", "node1", NULL };
	static struct ckpt_addr_map map[CKPT_ADDRMAP_MAX];
	struct ckptd_copy copy;
	uint64_t bytes;
	json_t *msg, *built = NULL, *outside, *later;
	json_int_t uid, timeout;
	const char *mode;
	unsigned int n;
	bool tty;

	if (ckptd_msg_decode(buf, len, &msg, NULL))
		return;
	ckptd_msg_str(msg, "op");
	ckptd_ask_check(msg, &mode, &uid, &timeout, NULL);
	ckptd_node_check(msg, &mode, NULL);
	ckptd_ship_check(msg, ship_names, &mode, &bytes, NULL);
	ckptd_copy_check(msg, &copy, NULL);
	ckptd_restart_check(msg, &tty, NULL);
	ckptd_run_ns_check(msg, &tty, NULL);
	/* A signal passed on is one of the forwarded, or none. */
	n = ckptd_signal_of(msg);
	if (n && n != SIGHUP && n != SIGINT && n != SIGQUIT && n != SIGTERM &&
	    n != SIGUSR1 && n != SIGUSR2 && n != SIGCONT)
		abort();
	ckptd_peer_proto_check(msg, NULL);
	/* A share's sums into its entry (both from the same message here). */
	ckptd_sums_merge(json_object_get(msg, "node"), json_object_get(msg, "sums"), "n", NULL);
	ckpt_meta_check(msg, NULL);
	tcp_join(json_object_get(msg, "shares"), NULL, NULL, NULL);
	outside = json_object();
	later = json_object();
	tcp_join(json_object_get(msg, "shares"), outside, later, NULL);
	json_decref(outside);
	json_decref(later);
	/* The whole map is composed from checked maps only. */
	if (!ckpt_addrmap_read(json_object_get(msg, "addrmap"), map, &n, NULL)) {
		built = ckpt_addrmap_compose(json_object_get(msg, "addrmap"),
					     json_object_get(msg, "addrmap"));
		json_decref(built);
		built = NULL;
	}
	ckpt_addrmap_build(json_object_get(msg, "old"), json_object_get(msg, "now"),
			   &built, NULL);
	json_decref(built);
	json_decref(msg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct ckptd_frame fr;
	int sv[2], ret;

	check(data, size);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv))
		abort();
	if (size && write(sv[1], data, size) != (ssize_t)size)
		abort();
	close(sv[1]);
	ckptd_frame_init(&fr);
	while ((ret = ckptd_frame_read(sv[0], &fr, NULL)) > 0) {
		check(fr.buf + 4, fr.have - 4);
		ckptd_frame_reset(&fr);
	}
	ckptd_frame_reset(&fr);
	close(sv[0]);
	return 0;
}
