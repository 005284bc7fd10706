// SPDX-License-Identifier: GPL-2.0
/* A TCP section's ends as text, for ckpt inspect and the restarter's errors. */

#include <arpa/inet.h>
#include <stdio.h>
#include <sys/socket.h>

#include "image.h"

void ckpt_image_tcp_end(char *buf, size_t size, const struct ckpt_img_tcp *t,
			bool peer)
{
	char a[INET6_ADDRSTRLEN] = "?";

	inet_ntop(t->family == AF_INET ? AF_INET : AF_INET6,
		  peer ? t->dst : t->src, a, sizeof(a));
	snprintf(buf, size, t->family == AF_INET ? "%s:%u" : "[%s]:%u", a,
		 peer ? t->dport : t->sport);
}
