// SPDX-License-Identifier: GPL-2.0
/*
 * memtree NPROC MB: a process tree for make bench. The root forks NPROC - 1
 * children; each of the NPROC processes touches MB MiB of anonymous memory
 * of its own (a distinct pattern per page) and then keeps one word of it
 * moving. Once all have touched their memory the root prints "ready", then
 * "beat N" every 20 ms, so a restart shows when the tree runs again.
 * The children hold only the root's standard descriptors.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static void nap(long ms)
{
	struct timespec ts = { 0, ms * 1000 * 1000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static volatile uint64_t *touch(size_t mb, unsigned int role)
{
	size_t len = mb << 20, i;
	uint64_t *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	for (i = 0; i < len / sizeof(*m); i += 512)
		m[i] = i * 0x9e3779b97f4a7c15ULL + role;
	return m;
}

int main(int argc, char **argv)
{
	volatile uint64_t *m;
	unsigned long nproc, mb, i, beat = 0;
	int p[2];
	char c;

	if (argc != 3 || !(nproc = strtoul(argv[1], NULL, 10)) ||
	    !(mb = strtoul(argv[2], NULL, 10))) {
		fprintf(stderr, "usage: memtree NPROC MB\n");
		return 2;
	}
	if (pipe(p))
		return 1;
	for (i = 1; i < nproc; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return 1;
		if (!pid) {
			close(p[0]);
			m = touch(mb, i);
			if (write(p[1], "r", 1) != 1)
				_exit(1);
			close(p[1]);
			for (;;) {
				m[0]++;
				nap(20);
			}
		}
	}
	close(p[1]);
	m = touch(mb, 0);
	for (i = 1; i < nproc; i++)
		if (read(p[0], &c, 1) != 1)
			return 1;
	close(p[0]);
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		m[0]++;
		printf("beat %lu\n", beat++);
		fflush(stdout);
		nap(20);
	}
}
