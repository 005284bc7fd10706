// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A job restarted on other nodes (Documentation/decisions.md, "TCP on
 * other nodes") keeps the addresses it knew: connect() and bind() go from
 * an old node's address to its new node's, getsockname(), getpeername(),
 * accept() and accept4() from new back to old. None of these is on the
 * data path.
 *
 * The map is the restorer's file for the process's pid namespace (a tree
 * restarts in one of its own), read when the process first finds itself
 * in a namespace other than the one of its map: after each restart, or
 * in a program executed since. It is the job's whole map (ckptd keeps it
 * in the snapshots), so after any number of restarts an address the job
 * knew from its first run reaches the node it is on now. A map, once
 * made, is never changed or freed: readers take it without a lock.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "internal.h"

#define ADDRMAP_DIR	"/run/ckpt/addrmap"	/* restore.h's CKPT_ADDRMAP_DIR */
#define ADDRMAP_MAX	256			/* restore.h's CKPT_ADDRMAP_MAX */

struct entry {
	int family;
	unsigned char from[16], to[16];
};

struct map {
	unsigned int n;
	struct entry e[ADDRMAP_MAX];
};

static _Atomic(struct map *) current;		/* NULL: none */
static _Atomic unsigned long long map_ns;	/* the namespace it is for */
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

static unsigned int alen(int family)
{
	return family == AF_INET ? 4 : 16;
}

/* The entry whose @from (@back: whose @to) is @a, or NULL. */
static const struct entry *find(const struct map *m, int family,
				const unsigned char *a, bool back)
{
	unsigned int i;

	for (i = 0; m && i < m->n; i++)
		if (m->e[i].family == family &&
		    !memcmp(back ? m->e[i].to : m->e[i].from, a, alen(family)))
			return &m->e[i];
	return NULL;
}

static void add(struct map *m, int family, const unsigned char *from,
		const unsigned char *to)
{
	if (m->n == ADDRMAP_MAX || !memcmp(from, to, alen(family)) ||
	    find(m, family, from, false))
		return;
	m->e[m->n].family = family;
	memcpy(m->e[m->n].from, from, 16);
	memcpy(m->e[m->n].to, to, 16);
	m->n++;
}

/* The file of namespace @ns, "FROM TO" lines, into @f (empty if none). */
static void read_file(unsigned long long ns, struct map *f)
{
	char path[256], from[64], to[64];
	const char *dir = secure_getenv("CKPT_ADDRMAP_DIR");
	struct entry e;
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%llu", dir ? dir : ADDRMAP_DIR, ns);
	fp = fopen(path, "re");
	if (!fp)
		return;
	while (f->n < ADDRMAP_MAX && fscanf(fp, "%63s %63s", from, to) == 2) {
		memset(&e, 0, sizeof(e));
		e.family = strchr(from, ':') ? AF_INET6 : AF_INET;
		if (inet_pton(e.family, from, e.from) == 1 &&
		    inet_pton(e.family, to, e.to) == 1)
			add(f, e.family, e.from, e.to);
	}
	fclose(fp);
}

/* The map of namespace @ns, in place of the one before (never freed). */
static void load(unsigned long long ns)
{
	struct map *m = calloc(1, sizeof(*m));

	if (!m)
		return;
	read_file(ns, m);
	/* The old one may be in a reader's hands: it stays. */
	atomic_store(&current, m->n ? m : NULL);
	if (!m->n)
		free(m);
	atomic_store(&map_ns, ns);
}

static unsigned long long ns_now(void)
{
	unsigned long long ino;
	char buf[64];
	ssize_t n;

	n = readlink("/proc/self/ns/pid", buf, sizeof(buf) - 1);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return sscanf(buf, "pid:[%llu]", &ino) == 1 ? ino : 0;
}

/*
 * The map of the namespace the process is in now (NULL: none). A call
 * that finds another thread loading it (@wait false) goes on with the map
 * as it is: the callback thread loads it after every restart anyway.
 * errno is left as it was.
 */
static const struct map *map_now(bool wait)
{
	int saved = errno;
	unsigned long long ns = ns_now();

	if (ns && ns != atomic_load(&map_ns) &&
	    (wait ? !pthread_mutex_lock(&load_lock) : !pthread_mutex_trylock(&load_lock))) {
		if (ns != atomic_load(&map_ns))
			load(ns);
		pthread_mutex_unlock(&load_lock);
	}
	errno = saved;
	return atomic_load(&current);
}

void ckpt_addrmap_sync(void)
{
	map_now(true);
}

/* A fork() while a thread loads leaves the child a lock it can take. */
static void fork_prepare(void)
{
	pthread_mutex_lock(&load_lock);
}

static void fork_done(void)
{
	pthread_mutex_unlock(&load_lock);
}

__attribute__((constructor)) static void addrmap_init(void)
{
	pthread_atfork(fork_prepare, fork_done, fork_done);
}

/*
 * @sa (of @len bytes) through @m into @out, old to new (@back: new to
 * old): true if an address was mapped. An IPv6 socket's IPv4-mapped
 * address maps as its IPv4 address.
 */
static bool map_sockaddr(const struct map *m, const struct sockaddr *sa,
			 socklen_t len, bool back, struct sockaddr_storage *out)
{
	const struct entry *e;
	unsigned char *a;
	int family;

	if (!m || !sa || len > sizeof(*out))
		return false;
	if (sa->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
		memcpy(out, sa, len);
		a = (unsigned char *)&((struct sockaddr_in *)out)->sin_addr;
		family = AF_INET;
	} else if (sa->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
		memcpy(out, sa, len);
		a = ((struct sockaddr_in6 *)out)->sin6_addr.s6_addr;
		family = AF_INET6;
		if (IN6_IS_ADDR_V4MAPPED((struct in6_addr *)a)) {
			a += 12;
			family = AF_INET;
		}
	} else {
		return false;
	}
	e = find(m, family, a, back);
	if (!e)
		return false;
	memcpy(a, back ? e->from : e->to, alen(family));
	return true;
}

/* What the kernel wrote to @sa (buffer @size, *@len bytes), new to old. */
static void map_back(struct sockaddr *sa, socklen_t size, const socklen_t *len)
{
	struct sockaddr_storage ss;
	socklen_t n;

	if (!sa || !len)
		return;
	n = *len < size ? *len : size;
	if (map_sockaddr(map_now(false), sa, n, true, &ss))
		memcpy(sa, &ss, n);
}

#define REAL(name) \
	static typeof(name) *real_##name; \
	if (!real_##name) \
		real_##name = (typeof(name) *)dlsym(RTLD_NEXT, #name)

/* @sa, or its copy in @ss with the address mapped old to new. */
static const struct sockaddr *mapped(const struct sockaddr *sa, socklen_t len,
				     struct sockaddr_storage *ss)
{
	return map_sockaddr(map_now(false), sa, len, false, ss) ?
		(const struct sockaddr *)ss : sa;
}

/* A call that wrote an address into @sa (buffer @size): @ret, its result. */
static int named(int ret, struct sockaddr *sa, socklen_t size, socklen_t *len)
{
	if (ret >= 0)
		map_back(sa, size, len);
	return ret;
}

CKPT_EXPORT int connect(int fd, __CONST_SOCKADDR_ARG addr, socklen_t len)
{
	struct sockaddr_storage ss;

	REAL(connect);
	return real_connect(fd, mapped(addr.__sockaddr__, len, &ss), len);
}

CKPT_EXPORT int bind(int fd, __CONST_SOCKADDR_ARG addr, socklen_t len)
{
	struct sockaddr_storage ss;

	REAL(bind);
	return real_bind(fd, mapped(addr.__sockaddr__, len, &ss), len);
}

CKPT_EXPORT int getsockname(int fd, __SOCKADDR_ARG addr, socklen_t *len)
{
	socklen_t size = len ? *len : 0;

	REAL(getsockname);
	return named(real_getsockname(fd, addr, len), addr.__sockaddr__, size, len);
}

CKPT_EXPORT int getpeername(int fd, __SOCKADDR_ARG addr, socklen_t *len)
{
	socklen_t size = len ? *len : 0;

	REAL(getpeername);
	return named(real_getpeername(fd, addr, len), addr.__sockaddr__, size, len);
}

CKPT_EXPORT int accept(int fd, __SOCKADDR_ARG addr, socklen_t *len)
{
	socklen_t size = len ? *len : 0;

	REAL(accept);
	return named(real_accept(fd, addr, len), addr.__sockaddr__, size, len);
}

CKPT_EXPORT int accept4(int fd, __SOCKADDR_ARG addr, socklen_t *len, int flags)
{
	socklen_t size = len ? *len : 0;

	REAL(accept4);
	return named(real_accept4(fd, addr, len, flags), addr.__sockaddr__, size, len);
}
