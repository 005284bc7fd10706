// SPDX-License-Identifier: GPL-2.0
/*
 * Socket names as text, for ckpt inspect and the restarter's errors: a TCP
 * section's ends, a UNIX socket's name.
 */

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

void ckpt_image_uaddr(char *buf, size_t size, const struct ckpt_img_uaddr *a)
{
	size_t i, o = 0;

	if (!size)
		return;
	if (a->len && a->addr[0]) {
		snprintf(buf, size, "%.*s", CKPT_USOCK_ADDR_MAX, (const char *)a->addr);
		return;
	}
	if (a->len && size > 1)
		buf[o++] = '@';
	for (i = 1; i < a->len && i < CKPT_USOCK_ADDR_MAX && o + 1 < size; i++)
		buf[o++] = a->addr[i] >= 0x20 && a->addr[i] < 0x7f ? a->addr[i] : '?';
	buf[o] = 0;
}
