// SPDX-License-Identifier: GPL-2.0
/*
 * tmpfstree DIR TURNS READY: a root and its child take turns through a
 * counter in DIR/sub/seg, a tmpfs file both map MAP_SHARED (three pages,
 * the middle one a hole, "hello" at the start of the last), and append each
 * turn's number to DIR/log, one open file (O_APPEND) both hold, and to
 * DIR/out, another both hold open write-only (as a shell's "> out" would).
 * READY is made after turn 20. At the end the root reads both back (out
 * opened again by its path) and prints "tmpfstree: TURNS turns, 'hello',
 * log complete, out complete" (or what was wrong) and exits 3. A restart
 * whose files came back without their content, or as two copies, ends
 * otherwise or never (vm-tests/tests/tree_tmpfs.sh).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PAGE	4096

static void die(const char *what)
{
	perror(what);
	exit(1);
}

/* The log holds "1\n2\n...TURNS\n", nothing else. */
static int log_complete(int fd, unsigned int turns)
{
	static char buf[1 << 16];	/* "1\n" ... "9999\n": 48894 bytes */
	char want[16];
	unsigned int i;
	size_t off = 0;
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n < 0)
		return 0;
	buf[n] = '\0';
	for (i = 1; i <= turns; i++) {
		snprintf(want, sizeof(want), "%u\n", i);
		if (strncmp(buf + off, want, strlen(want)))
			return 0;
		off += strlen(want);
	}
	return off == (size_t)n;
}

int main(int argc, char **argv)
{
	struct timespec nap = { 0, 2000000 };
	volatile unsigned int *count;
	unsigned int turns, me, v;
	char path[4096], line[16];
	int fd, log, out, status;
	pid_t child;
	char *m;

	if (argc != 4)
		return fprintf(stderr, "usage: tmpfstree DIR TURNS READY\n"), 1;
	turns = strtoul(argv[2], NULL, 10);
	snprintf(path, sizeof(path), "%s/sub", argv[1]);
	if (mkdir(argv[1], 0755) && errno != EEXIST)
		die(argv[1]);
	if (mkdir(path, 0755) && errno != EEXIST)
		die(path);
	snprintf(path, sizeof(path), "%s/sub/seg", argv[1]);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0640);
	if (fd < 0 || ftruncate(fd, 3 * PAGE))
		die(path);
	m = mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		die("mmap");
	close(fd);
	memcpy(m + 2 * PAGE, "hello", 5);
	count = (volatile unsigned int *)m;
	snprintf(path, sizeof(path), "%s/log", argv[1]);
	log = open(path, O_RDWR | O_CREAT | O_TRUNC | O_APPEND, 0600);
	if (log < 0)
		die(path);
	snprintf(path, sizeof(path), "%s/out", argv[1]);
	out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
	if (out < 0)
		die(path);

	child = fork();
	if (child < 0)
		die("fork");
	me = child == 0;
	while ((v = *count) < turns) {
		if (v % 2 != me) {
			nanosleep(&nap, NULL);
			continue;
		}
		snprintf(line, sizeof(line), "%u\n", v + 1);
		if (write(log, line, strlen(line)) != (ssize_t)strlen(line) ||
		    write(out, line, strlen(line)) != (ssize_t)strlen(line))
			die("write");
		*count = v + 1;
		if (v + 1 == 20)
			close(open(argv[3], O_WRONLY | O_CREAT, 0600));
	}
	if (!child)
		return 0;
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		return fprintf(stderr, "tmpfstree: the child ended badly\n"), 1;
	fd = open(path, O_RDONLY);
	printf("tmpfstree: %u turns, '%.5s', log %s, out %s\n", *count,
	       m + 2 * PAGE, log_complete(log, turns) ? "complete" : "wrong",
	       fd >= 0 && log_complete(fd, turns) ? "complete" : "wrong");
	return 3;
}
