// SPDX-License-Identifier: GPL-2.0
/*
 * tree STEPS READYFILE [PACE_MS [GOFILE]]: a process tree for the tree tests. The root forks
 * child A, which forks grandchild G, and child B; A's thread count is two.
 * Each of the four mixes a buffer of its own for STEPS paced steps
 * (PACE_MS each, default 20; the output does not depend on it), and
 * then, given GOFILE, waits until that file exists before it ends (so a
 * test can checkpoint a restarted tree however slow the machine). G exits with a status from its result; A reaps G and
 * exits with a status from its own result and G's status; B ends by
 * SIGUSR1. The root reaps A and B, then prints one line that depends on
 * every result and on each child's wait status as waitpid() gave it, and
 * exits 3. Once all four run, the root creates READYFILE. Only the root
 * writes to standard output, once, at the end: a run restarted from any
 * point prints the same line as one never interrupted.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WORDS	(64 * 1024)	/* 512 KiB per process */

static unsigned long steps, pace_ms = 20;
static const char *gofile;

static void pace(void)
{
	struct timespec ts = { pace_ms / 1000, (pace_ms % 1000) * 1000 * 1000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Until GOFILE exists, if there is one. */
static void hold(void)
{
	struct timespec ts = { 0, 20 * 1000 * 1000 };

	while (gofile && access(gofile, F_OK)) {
		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
		ts.tv_nsec = 20 * 1000 * 1000;
	}
}

static uint64_t mix(unsigned int role)
{
	uint64_t *buf = malloc(WORDS * sizeof(*buf));
	uint64_t x = 0x9e3779b97f4a7c15ULL * (role + 1);
	unsigned long s, i;

	if (!buf)
		exit(100);
	for (i = 0; i < WORDS; i++)
		buf[i] = x ^ i;
	for (s = 0; s < steps; s++) {
		for (i = s % 5; i < WORDS; i += 5) {
			x ^= buf[i];
			x *= 0xff51afd7ed558ccdULL;
			x ^= x >> 33;
			buf[i] = x;
		}
		pace();
	}
	free(buf);
	hold();
	return x;
}

static void *spin(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static pid_t fork_or_die(void)
{
	pid_t pid = fork();

	if (pid < 0) {
		perror("fork");
		exit(101);
	}
	return pid;
}

/* Child A: forks G, mixes, reaps G; its status carries both. */
static void __attribute__((noreturn)) child_a(int ready)
{
	pthread_t t;
	pid_t g;
	int st;

	g = fork_or_die();
	if (!g) {
		close(ready);
		_exit(mix(3) & 0x7f);
	}
	if (pthread_create(&t, NULL, spin, NULL))
		_exit(102);
	if (write(ready, "a", 1) != 1)
		_exit(103);
	close(ready);
	uint64_t r = mix(1);

	if (waitpid(g, &st, 0) != g || !WIFEXITED(st))
		_exit(104);
	_exit((r + WEXITSTATUS(st)) & 0x7f);
}

int main(int argc, char **argv)
{
	int p[2], st_a, st_b, fd;
	pid_t a, b;
	uint64_t r;
	char c[2];

	if (argc < 3 || argc > 5) {
		fprintf(stderr, "usage: tree STEPS READYFILE [PACE_MS [GOFILE]]\n");
		return 2;
	}
	steps = strtoul(argv[1], NULL, 10);
	if (argc >= 4)
		pace_ms = strtoul(argv[3], NULL, 10);
	if (argc == 5)
		gofile = argv[4];
	if (pipe(p))
		return 105;
	a = fork_or_die();
	if (!a) {
		close(p[0]);
		child_a(p[1]);
	}
	b = fork_or_die();
	if (!b) {
		close(p[0]);
		if (write(p[1], "b", 1) != 1)
			_exit(103);
		close(p[1]);
		mix(2);
		signal(SIGUSR1, SIG_DFL);
		raise(SIGUSR1);
		_exit(106);
	}
	close(p[1]);
	/* Both children (and so G) are there; the pipe is gone again. */
	if (read(p[0], c, 1) != 1 || read(p[0], c + 1, 1) != 1)
		return 107;
	close(p[0]);
	fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || close(fd))
		return 108;
	r = mix(0);
	if (waitpid(a, &st_a, 0) != a || waitpid(b, &st_b, 0) != b)
		return 109;
	printf("root %016llx a-status %#x b-status %#x\n",
	       (unsigned long long)r, st_a, st_b);
	return 3;
}
