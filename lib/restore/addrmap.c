// SPDX-License-Identifier: GPL-2.0
/*
 * A restarted tree's address map, left where its processes' libckpt reads
 * it (restore.h): a file in CKPT_ADDRMAP_DIR named for the tree's pid
 * namespace's inode, which a process of the tree reads from
 * /proc/self/ns/pid. One line for each entry, "FROM TO", as inet_ntop()
 * writes them. The file is made whole under another name and renamed, so
 * a process never reads half of it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "err.h"
#include "restore_int.h"

/* The map @map (@entries of them) as text into @buf: its length, or -ENOSPC. */
static int map_text(const struct ckpt_addr_map *map, unsigned int entries,
		    char *buf, size_t size)
{
	char from[INET6_ADDRSTRLEN], to[INET6_ADDRSTRLEN];
	size_t len = 0;
	unsigned int i;
	int n;

	for (i = 0; i < entries; i++) {
		const struct ckpt_addr_map *e = &map[i];

		inet_ntop(e->family, e->from, from, sizeof(from));
		inet_ntop(e->family, e->to, to, sizeof(to));
		n = snprintf(buf + len, size - len, "%s %s\n", from, to);
		if (n < 0 || (size_t)n >= size - len)
			return -ENOSPC;
		len += n;
	}
	return len;
}

int restore_addrmap_publish(const struct ckpt_restore_opts *o, pid_t holder,
			    char *path, size_t size, struct ckpt_err *err)
{
	char ns[64], link[64], tmp[PATH_MAX + 8];
	char text[CKPT_ADDRMAP_MAX * (2 * INET6_ADDRSTRLEN + 2)];
	const struct ckpt_addr_map *map = o->filemap ?: o->addrmap;
	unsigned int entries = o->filemap ? o->filemap_len : o->addrmap_len;
	unsigned long long ino;
	ssize_t n;
	bool ok;
	int fd, len;

	*path = '\0';
	snprintf(link, sizeof(link), "/proc/%d/ns/pid", (int)holder);
	n = readlink(link, ns, sizeof(ns) - 1);
	if (n < 0)
		return ckpt_err_set(err, errno, "%s: %s", link, strerror(errno));
	ns[n] = '\0';
	if (sscanf(ns, "pid:[%llu]", &ino) != 1)
		return ckpt_err_set(err, EIO, "%s: not a pid namespace: %s", link, ns);
	snprintf(path, size, "%s/%llu", CKPT_ADDRMAP_DIR, ino);
	if (!entries) {
		/* An earlier tree's, whose namespace had this inode. */
		if (unlink(path) && errno != ENOENT)
			return ckpt_err_set(err, errno, "%s: %s", path, strerror(errno));
		*path = '\0';
		return 0;
	}
	len = map_text(map, entries, text, sizeof(text));
	if (len < 0)
		return ckpt_err_set(err, ENOSPC, "the address map is too long");
	mkdir("/run/ckpt", 0755);
	mkdir(CKPT_ADDRMAP_DIR, 0755);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return ckpt_err_set(err, errno, "%s: %s", tmp, strerror(errno));
	errno = EIO;
	n = write(fd, text, len);
	ok = n == len && !fchmod(fd, 0644);
	if (close(fd))
		ok = false;
	if (ok && !rename(tmp, path))
		return 0;
	unlink(tmp);
	return ckpt_err_set(err, errno, "%s: cannot write the address map: %s",
			    path, strerror(errno));
}
