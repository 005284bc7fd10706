// SPDX-License-Identifier: GPL-2.0
/*
 * A job's address map at restart (Documentation/decisions.md, "TCP on
 * other nodes"): the coordinator's map from each share's old and new
 * addresses (lib/ckptd/addrmap.c), a map of the wrong shape refused, and,
 * run with libckpt preloaded (addrmap.sh), libckpt's connect(), bind(),
 * getsockname(), getpeername() and accept() through the map of the
 * process's pid namespace, and the next namespace's after a second
 * restart; the coordinator's whole map over restarts. TAP on stdout.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "addrmap.h"

static int nr, failed;

static void check(int ok, const char *what)
{
	printf("%sok %d %s\n", ok ? "" : "not ", ++nr, what);
	if (!ok)
		failed++;
}

/* ckpt_addrmap_build() of @old and @now: its return; the map as text. */
static int build(const char *old, const char *now, char *text, size_t size,
		 struct ckpt_err *err)
{
	json_t *o = json_loads(old, 0, NULL), *n = json_loads(now, 0, NULL);
	json_t *map = NULL;
	char *s;
	int ret;

	err->msg[0] = *text = 0;
	ret = o && n ? ckpt_addrmap_build(o, n, &map, err) : -999;
	if (!ret) {
		s = json_dumps(map, JSON_COMPACT);
		snprintf(text, size, "%s", s);
		free(s);
	}
	json_decref(map);
	json_decref(o);
	json_decref(n);
	return ret;
}

/* ckpt_addrmap_compose() of @total and @step is @want. */
static int compose(const char *total, const char *step, const char *want)
{
	json_t *t = json_loads(total, JSON_DECODE_ANY, NULL), *s = json_loads(step, 0, NULL);
	json_t *out = ckpt_addrmap_compose(t, s);
	char *got = out ? json_dumps(out, JSON_COMPACT) : NULL;
	int ok = got && !strcmp(got, want);

	if (!ok)
		printf("# got %s\n", got ? got : "NULL");
	free(got);
	json_decref(out);
	json_decref(t);
	json_decref(s);
	return ok;
}

static int read_map(const char *text, unsigned int *n, struct ckpt_err *err)
{
	static struct ckpt_addr_map out[CKPT_ADDRMAP_MAX];
	json_t *map = json_loads(text, 0, NULL);
	int ret;

	ret = map ? ckpt_addrmap_read(map, out, n, err) : -999;
	json_decref(map);
	return ret;
}

#define A0 "[\"192.0.2.10/24\", \"2001:db8::10/64\", \"198.51.100.7/24\"]"
#define A1 "[\"192.0.2.11/24\", \"2001:db8::11/64\"]"

static void coordinator(void)
{
	struct ckpt_err err;
	unsigned int n;
	char map[1024];

	check(!build("[" A0 ", " A1 "]", "[" A1 ", " A0 "]", map, sizeof(map), &err) &&
	      !strcmp(map, "[[\"192.0.2.10\",\"192.0.2.11\"],[\"2001:db8::10\",\"2001:db8::11\"],"
			   "[\"192.0.2.11\",\"192.0.2.10\"],[\"2001:db8::11\",\"2001:db8::10\"]]"),
	      "two nodes swapped: each address to the other node's on its subnet, one not on the new node left out");
	check(!build("[" A0 ", " A1 "]", "[" A0 ", " A1 "]", map, sizeof(map), &err) &&
	      !strcmp(map, "[]"), "the same nodes: an empty map");
	check(!build("[null, " A1 "]", "[" A1 ", null]", map, sizeof(map), &err) &&
	      !strcmp(map, "[]"), "a snapshot without addresses: nothing mapped");
	check(build("[[\"192.0.2.10\"]]", "[" A1 "]", map, sizeof(map), &err) == -EINVAL,
	      "an address without its prefix: refused");
	check(build("[" A0 ", " A0 "]", "[" A1 ", " A1 "]", map, sizeof(map), &err) == -EEXIST,
	      "one address on two old nodes: refused");
	check(build("[[\"192.0.2.5/24\"], [\"192.0.2.5/24\"]]", "[[\"192.0.2.11/24\"], [\"192.0.2.5/24\"]]",
		    map, sizeof(map), &err) == -EEXIST && strstr(err.msg, "192.0.2.5"),
	      "one address on two old nodes, one of them staying: refused, by address");
	check(!build("[[\"192.0.2.12/24\"]]", "[[\"192.0.2.11/24\", \"192.0.2.12/24\"]]",
		     map, sizeof(map), &err) && !strcmp(map, "[]"),
	      "an address the new node has too stays, not the subnet's first");
	check(!build("[[\"192.0.2.10/32\"]]", "[[\"192.0.2.11/24\"]]", map, sizeof(map), &err) &&
	      !strcmp(map, "[[\"192.0.2.10\",\"192.0.2.11\"]]"),
	      "an old /32 maps to the new address whose subnet holds it");
	check(compose("[[\"192.0.2.10\", \"192.0.2.11\"], [\"192.0.2.11\", \"192.0.2.10\"]]",
		      "[[\"192.0.2.11\", \"192.0.2.10\"], [\"192.0.2.10\", \"192.0.2.11\"]]", "[]") &&
	      compose("[[\"192.0.2.10\", \"192.0.2.11\"]]",
		      "[[\"192.0.2.11\", \"192.0.2.12\"], [\"198.51.100.1\", \"198.51.100.2\"]]",
		      "[[\"192.0.2.10\",\"192.0.2.12\"],[\"192.0.2.11\",\"192.0.2.12\"],[\"198.51.100.1\",\"198.51.100.2\"]]") &&
	      compose("null", "[[\"192.0.2.10\", \"192.0.2.11\"]]", "[[\"192.0.2.10\",\"192.0.2.11\"]]"),
	      "the whole map: swapped and swapped back is none; a third node; none before");
	check(!read_map("[[\"192.0.2.10\", \"192.0.2.11\"], [\"2001:db8::1\", \"2001:db8::2\"]]", &n, &err) &&
	      n == 2, "a map read");
	check(read_map("[[\"192.0.2.10\", \"2001:db8::2\"]]", &n, &err) == -EINVAL &&
	      strstr(err.msg, "entry 0"), "an entry of two families: refused, by entry");
	check(read_map("[[\"192.0.2.10\", \"192.0.2.11\"], [\"192.0.2.10\", \"192.0.2.12\"]]", &n, &err) == -EINVAL &&
	      strstr(err.msg, "mapped twice"), "an address mapped twice: refused");
	check(read_map("[[\"192.0.2.300\", \"192.0.2.11\"]]", &n, &err) == -EINVAL &&
	      read_map("{\"a\": 1}", &n, &err) == -EINVAL &&
	      read_map("[[\"192.0.2.1\", \"192.0.2.2\", \"192.0.2.3\"]]", &n, &err) == -EINVAL,
	      "not an address, not a list, three addresses: refused");
}

static struct sockaddr_in in4(const char *a, int port)
{
	struct sockaddr_in s = { .sin_family = AF_INET, .sin_port = htons(port) };

	inet_pton(AF_INET, a, &s.sin_addr);
	return s;
}

/* A listener on @a, its port in *@port. */
static int listener(const char *a, int *port)
{
	struct sockaddr_in s = in4(a, 0);
	socklen_t len = sizeof(s);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	/* Not through the map: the test's own. */
	if (syscall(__NR_bind, fd, &s, sizeof(s)) || listen(fd, 4) ||
	    syscall(__NR_getsockname, fd, &s, &len))
		return -1;
	*port = ntohs(s.sin_port);
	return fd;
}

static int connect_to(const char *a, int port)
{
	struct sockaddr_in s = in4(a, port);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (connect(fd, (struct sockaddr *)&s, sizeof(s))) {
		close(fd);
		return -1;
	}
	return fd;
}

static const char *addr_of(const struct sockaddr_in *s, char *buf)
{
	return inet_ntop(AF_INET, &s->sin_addr, buf, INET_ADDRSTRLEN);
}

/* The map file of the namespace this process is in. */
static void write_map(const char *dir, const char *text)
{
	char ns[64], path[512];
	ssize_t n = readlink("/proc/self/ns/pid", ns, sizeof(ns) - 1);
	unsigned long long ino = 0;
	FILE *f;

	ns[n > 0 ? n : 0] = 0;
	sscanf(ns, "pid:[%llu]", &ino);
	snprintf(path, sizeof(path), "%s/%llu", dir, ino);
	f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
}

static void wrappers(const char *dir)
{
	struct sockaddr_in s;
	socklen_t len = sizeof(s);
	char a[INET_ADDRSTRLEN];
	int l, c, x, port, port2, st;
	pid_t pid;

	check(dlsym(RTLD_DEFAULT, "ckpt_init") != NULL, "libckpt is preloaded");
	l = listener("127.0.0.1", &port);
	check(connect_to("127.0.0.9", port) < 0 && errno == ECONNREFUSED,
	      "no map yet: a connection to the old address is refused");
	/* The map is read once the process is in another namespace than its map's. */
	write_map(dir, "127.0.0.9 127.0.0.1\n");
	check(connect_to("127.0.0.9", port) < 0,
	      "a map written later is not read in the same namespace");

	if (unshare(CLONE_NEWPID)) {
		printf("ok %d # SKIP a pid namespace needs CAP_SYS_ADMIN\n", ++nr);
		printf("ok %d # SKIP\nok %d # SKIP\nok %d # SKIP\n", nr + 1, nr + 2, nr + 3);
		nr += 3;
		return;
	}
	/* The children are in the namespace a restarted tree would be in. */
	fflush(stdout);
	pid = fork();
	if (!pid) {
		write_map(dir, "127.0.0.9 127.0.0.1\n");
		c = connect_to("127.0.0.9", port);
		x = accept(l, (struct sockaddr *)&s, &len);
		printf("# accepted from %s\n", addr_of(&s, a));
		check(c >= 0 && x >= 0 && !strcmp(a, "127.0.0.9"),
		      "restarted: connect() to the old address reaches the new; accept() says the old");
		len = sizeof(s);
		check(!getpeername(c, (struct sockaddr *)&s, &len) &&
		      !strcmp(addr_of(&s, a), "127.0.0.9") &&
		      !getsockname(x, (struct sockaddr *)&s, &len) &&
		      !strcmp(addr_of(&s, a), "127.0.0.9"),
		      "getpeername() and getsockname(): the old address");
		/*
		 * A second restart, on a third node: 127.0.0.1 is now 127.0.0.2,
		 * and the file has the job's whole map, as ckptd composes it.
		 */
		fflush(stdout);
		if (unshare(CLONE_NEWPID) || (pid = fork()) < 0)
			exit(2);
		if (!pid) {
			close(l);
			l = listener("127.0.0.2", &port2);
			write_map(dir, "127.0.0.9 127.0.0.2\n127.0.0.1 127.0.0.2\n");
			c = connect_to("127.0.0.9", port2);
			check(c >= 0, "restarted twice: the first run's address reaches the third node");
			s = in4("127.0.0.9", 0);
			x = socket(AF_INET, SOCK_STREAM, 0);
			len = sizeof(s);
			check(!bind(x, (struct sockaddr *)&s, sizeof(s)) &&
			      !syscall(__NR_getsockname, x, &s, &len) &&
			      !strcmp(addr_of(&s, a), "127.0.0.2"),
			      "bind() to the first run's address binds the third node's");
			fflush(stdout);
			exit(failed != 0);
		}
		waitpid(pid, &st, 0);
		fflush(stdout);
		exit(failed || !WIFEXITED(st) || WEXITSTATUS(st));
	}
	waitpid(pid, &st, 0);
	nr += 4;
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		failed++;
}

int main(int argc, char **argv)
{
	printf("TAP version 13\n1..20\n");
	coordinator();
	if (argc > 1) {
		fflush(stdout);
		wrappers(argv[1]);
	}
	return failed ? 1 : 0;
}
