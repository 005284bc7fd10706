// SPDX-License-Identifier: GPL-2.0
/*
 * waitfor FILE STRING [SKIP_LINES [TIMEOUT_S]]: returns once a line of
 * FILE after its first SKIP_LINES lines contains STRING (exit 0), or after
 * TIMEOUT_S seconds (default 600, exit 1).
 *
 * The benchmarks time a restart until the restored process writes its next
 * line. A shell loop of grep and sleep doing that took a fifth of the VM's
 * two CPUs from the restart it was timing (more from ckpt, which fills
 * memory on both, than from CRIU, which restores on one). This sleeps in
 * inotify until the file changes instead, and reads it then.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

/* Whether FILE now has the line: read from the start each time (small). */
static int seen(const char *path, const char *str, unsigned long skip)
{
	static char *line;
	static size_t cap;
	unsigned long n = 0;
	FILE *f = fopen(path, "r");
	int found = 0;

	if (!f)
		return 0;
	while (!found && getline(&line, &cap, f) > 0) {
		/* A line still being written has no newline yet: not counted. */
		if (!strchr(line, '\n'))
			break;
		if (n++ >= skip && strstr(line, str))
			found = 1;
	}
	fclose(f);
	return found;
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	unsigned long skip = argc > 3 ? strtoul(argv[3], NULL, 10) : 0;
	double end = now() + (argc > 4 ? atof(argv[4]) : 600);
	struct pollfd pfd = { .events = POLLIN };
	char buf[4096];
	int wd = -1;

	if (argc < 3 || argc > 5) {
		fprintf(stderr, "usage: waitfor FILE STRING [SKIP_LINES [TIMEOUT_S]]\n");
		return 2;
	}
	pfd.fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	if (pfd.fd < 0) {
		perror("inotify_init1");
		return 2;
	}
	for (;;) {
		/* Watch first, then look: a write in between still wakes us. */
		if (wd < 0)
			wd = inotify_add_watch(pfd.fd, argv[1], IN_MODIFY);
		if (seen(argv[1], argv[2], skip))
			return 0;
		if (now() >= end)
			return 1;
		/* Until the file exists, look again every 10 ms. */
		if (poll(&pfd, 1, wd < 0 ? 10 : 1000) > 0)
			while (read(pfd.fd, buf, sizeof(buf)) > 0)
				;
	}
}
