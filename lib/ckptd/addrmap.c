// SPDX-License-Identifier: GPL-2.0
/*
 * A job's address map at restart (addrmap.h).
 */
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "addrmap.h"
#include "err.h"

/* An address and its prefix, parsed. */
struct addr {
	int family;
	unsigned char a[16];
	unsigned int prefix;
};

static unsigned int addr_len(int family)
{
	return family == AF_INET ? 4 : 16;
}

/* "ADDR" (@with_prefix false) or "ADDR/PREFIX" into @out: true if it is one. */
static bool addr_parse(const char *s, bool with_prefix, struct addr *out)
{
	char buf[CKPT_ADDR_TEXT_MAX], *slash, *end;
	unsigned long p;

	if (!s || strlen(s) >= sizeof(buf))
		return false;
	strcpy(buf, s);
	slash = strchr(buf, '/');
	if (!slash != !with_prefix)
		return false;
	if (slash)
		*slash = '\0';
	memset(out, 0, sizeof(*out));
	out->family = strchr(buf, ':') ? AF_INET6 : AF_INET;
	if (inet_pton(out->family, buf, out->a) != 1)
		return false;
	out->prefix = addr_len(out->family) * 8;
	if (!slash)
		return true;
	errno = 0;
	p = strtoul(slash + 1, &end, 10);
	if (errno || end == slash + 1 || *end || p > out->prefix)
		return false;
	out->prefix = p;
	return true;
}

/* The first @bits bits of @x and @y are the same. */
static bool same_prefix(const unsigned char *x, const unsigned char *y,
			unsigned int bits)
{
	unsigned int whole = bits / 8, rest = bits % 8;
	unsigned char mask = (unsigned char)(0xff << (8 - rest));

	if (memcmp(x, y, whole))
		return false;
	return !rest || !((x[whole] ^ y[whole]) & mask);
}

static unsigned int mask_bits(int family, const struct sockaddr *mask)
{
	const unsigned char *m = family == AF_INET ?
		(const unsigned char *)&((const struct sockaddr_in *)mask)->sin_addr :
		((const struct sockaddr_in6 *)mask)->sin6_addr.s6_addr;
	unsigned int i, bits = 0;

	for (i = 0; i < addr_len(family); i++)
		bits += __builtin_popcount(m[i]);
	return bits;
}

json_t *ckpt_addrs_local(void)
{
	json_t *list = json_array();
	struct ifaddrs *ifs, *ifa;
	char text[INET6_ADDRSTRLEN], entry[CKPT_ADDR_TEXT_MAX];
	const void *a;
	int family;

	if (getifaddrs(&ifs))
		return list;
	for (ifa = ifs; ifa && json_array_size(list) < CKPT_ADDRS_MAX; ifa = ifa->ifa_next) {
		if (!ifa->ifa_addr || !ifa->ifa_netmask ||
		    !(ifa->ifa_flags & IFF_UP) || (ifa->ifa_flags & IFF_LOOPBACK))
			continue;
		family = ifa->ifa_addr->sa_family;
		if (family == AF_INET) {
			a = &((struct sockaddr_in *)ifa->ifa_addr)->sin_addr;
		} else if (family == AF_INET6) {
			const struct in6_addr *a6 =
				&((struct sockaddr_in6 *)ifa->ifa_addr)->sin6_addr;

			if (IN6_IS_ADDR_LINKLOCAL(a6) || IN6_IS_ADDR_LOOPBACK(a6))
				continue;
			a = a6;
		} else {
			continue;
		}
		inet_ntop(family, a, text, sizeof(text));
		snprintf(entry, sizeof(entry), "%s/%u", text,
			 mask_bits(family, ifa->ifa_netmask));
		json_array_append_new(list, json_string(entry));
	}
	freeifaddrs(ifs);
	return list;
}

int ckpt_addrs_check(const json_t *addrs, struct ckpt_err *err)
{
	struct addr a;
	json_t *v;
	size_t i;

	if (!json_is_array(addrs) || json_array_size(addrs) > CKPT_ADDRS_MAX)
		return ckpt_err_set(err, EINVAL, "a node's \"addrs\" must list at most %d addresses",
				    CKPT_ADDRS_MAX);
	json_array_foreach(addrs, i, v)
		if (!addr_parse(json_string_value(v), true, &a))
			return ckpt_err_set(err, EINVAL, "a node's \"addrs\": entry %zu is not ADDR/PREFIX",
					    i);
	return 0;
}

/*
 * The new node's address for old address @o: @o itself if the new node
 * has it, else the first of its family on @o's subnet (an old /32 or
 * /128 on the new address's subnet). false if none.
 */
static bool new_address(const struct addr *o, const json_t *now, struct addr *w)
{
	unsigned int full = addr_len(o->family) * 8;
	bool found = false;
	struct addr a;
	json_t *v;
	size_t k;

	json_array_foreach(now, k, v) {
		addr_parse(json_string_value(v), true, &a);
		if (a.family != o->family)
			continue;
		if (!memcmp(a.a, o->a, addr_len(o->family))) {
			*w = a;
			return true;
		}
		if (!found && same_prefix(o->a, a.a, o->prefix < full ? o->prefix : a.prefix)) {
			*w = a;
			found = true;
		}
	}
	return found;
}

/*
 * Share @node's entries, its old addresses to its new node's, into @all
 * (unchanged ones too, for the check that no address goes two ways).
 */
static int build_share(const json_t *old, const json_t *now, const char *node,
		       json_t *all, struct ckpt_err *err)
{
	char from[INET6_ADDRSTRLEN], to[INET6_ADDRSTRLEN];
	struct addr o, w;
	json_t *ov;
	size_t i;

	json_array_foreach(old, i, ov) {
		addr_parse(json_string_value(ov), true, &o);
		/* None on the subnet: a socket there fails, by its address. */
		if (!new_address(&o, now, &w))
			continue;
		if (json_array_size(all) >= CKPT_ADDRMAP_MAX)
			return ckpt_err_set(err, E2BIG, "more than %d addresses to map",
					    CKPT_ADDRMAP_MAX);
		inet_ntop(o.family, o.a, from, sizeof(from));
		inet_ntop(w.family, w.a, to, sizeof(to));
		json_array_append_new(all, json_pack("[sss]", from, to, node));
	}
	return 0;
}

int ckpt_addrmap_build(const json_t *old, const json_t *now, json_t **map,
		       struct ckpt_err *err)
{
	json_t *all = json_array(), *o, *w, *e, *f;
	const char *node;
	char where[64];
	size_t i, k;
	int ret = 0;

	*map = json_array();
	if (!json_is_array(old) || !json_is_array(now) ||
	    json_array_size(old) != json_array_size(now))
		ret = ckpt_err_set(err, EINVAL, "the address lists do not match the shares");
	json_array_foreach(old, i, o) {
		w = json_array_get(now, i);
		if (ret || !o || json_is_null(o) || !w || json_is_null(w))
			continue;
		snprintf(where, sizeof(where), "share %zu", i);
		ret = ckpt_addrs_check(o, err);
		if (!ret)
			ret = ckpt_addrs_check(w, err);
		if (!ret)
			ret = build_share(o, w, where, all, err);
	}
	/* One address of two old nodes would go two ways, or one way too many. */
	json_array_foreach(all, i, e) {
		for (k = 0; !ret && k < i; k++) {
			f = json_array_get(all, k);
			if (!strcmp(json_string_value(json_array_get(e, 0)),
				    json_string_value(json_array_get(f, 0)))) {
				node = json_string_value(json_array_get(f, 2));
				ret = ckpt_err_set(err, EEXIST, "address %s was on two of the job's nodes (%s and %s): it cannot be mapped",
						   json_string_value(json_array_get(e, 0)), node,
						   json_string_value(json_array_get(e, 2)));
			}
		}
		if (!ret && strcmp(json_string_value(json_array_get(e, 0)),
				   json_string_value(json_array_get(e, 1))))
			json_array_append_new(*map, json_pack("[OO]", json_array_get(e, 0),
							      json_array_get(e, 1)));
	}
	json_decref(all);
	if (ret) {
		json_decref(*map);
		*map = NULL;
	}
	return ret;
}

int ckpt_addrmap_read(const json_t *map, struct ckpt_addr_map *out,
		      unsigned int *n, struct ckpt_err *err)
{
	struct addr f, t;
	const char *from, *to;
	json_t *e;
	size_t i;
	unsigned int k;

	*n = 0;
	if (json_is_null(map))
		return 0;
	if (!json_is_array(map) || json_array_size(map) > CKPT_ADDRMAP_MAX)
		return ckpt_err_set(err, EINVAL, "\"addrmap\" must list at most %d entries",
				    CKPT_ADDRMAP_MAX);
	json_array_foreach(map, i, e) {
		if (json_unpack(e, "[ss!]", &from, &to) ||
		    !addr_parse(from, false, &f) || !addr_parse(to, false, &t) ||
		    f.family != t.family)
			return ckpt_err_set(err, EINVAL, "\"addrmap\": entry %zu is not [FROM, TO], two addresses of one family",
					    i);
		for (k = 0; k < *n; k++)
			if (out[k].family == f.family &&
			    !memcmp(out[k].from, f.a, 16))
				return ckpt_err_set(err, EINVAL, "\"addrmap\": %.64s is mapped twice",
						    from);
		out[*n].family = f.family;
		memcpy(out[*n].from, f.a, 16);
		memcpy(out[*n].to, t.a, 16);
		(*n)++;
	}
	return 0;
}

/* The TO of @map's entry from @from (same text as inet_ntop writes), or NULL. */
static const char *lookup(const json_t *map, const char *from)
{
	const json_t *e;
	size_t i;

	json_array_foreach(map, i, e)
		if (!strcmp(json_string_value(json_array_get(e, 0)), from))
			return json_string_value(json_array_get(e, 1));
	return NULL;
}

json_t *ckpt_addrmap_compose(const json_t *total, const json_t *step)
{
	json_t *out = json_array(), *e;
	const char *from, *to, *next;
	size_t i;

	json_array_foreach(total, i, e) {
		from = json_string_value(json_array_get(e, 0));
		to = json_string_value(json_array_get(e, 1));
		next = lookup(step, to);
		if (next)
			to = next;
		if (strcmp(from, to))
			json_array_append_new(out, json_pack("[ss]", from, to));
	}
	json_array_foreach(step, i, e) {
		from = json_string_value(json_array_get(e, 0));
		if (!lookup(total, from))
			json_array_append(out, e);
	}
	if (json_array_size(out) > CKPT_ADDRMAP_MAX) {
		json_decref(out);
		return NULL;
	}
	return out;
}
