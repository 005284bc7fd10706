// SPDX-License-Identifier: GPL-2.0
/*
 * producer LINES [READYFILE]: writes LINES lines of pseudo-random numbers
 * to standard output, paced (2 ms after every ten), for the pipeline tests
 * (producer | sort | uniq -c | sha256sum). The output depends on LINES
 * alone. Creates READYFILE, if given, after the first hundred lines.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct timespec ts = { 0, 2 * 1000 * 1000 };
	unsigned long n, i;
	uint64_t x = 88172645463325252ULL;
	int fd;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: producer LINES [READYFILE]\n");
		return 2;
	}
	n = strtoul(argv[1], NULL, 10);
	for (i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		if (printf("%llu\n", (unsigned long long)(x % 997)) < 0)
			return 1;
		if (i % 10 == 9) {
			fflush(stdout);
			while (nanosleep(&ts, &ts) && errno == EINTR)
				;
			ts.tv_nsec = 2 * 1000 * 1000;
		}
		if (i == 99 && argc == 3) {
			fd = open(argv[2], O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
			if (fd < 0 || close(fd))
				return 3;
		}
	}
	return fflush(stdout) ? 1 : 0;
}
