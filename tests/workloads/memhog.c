// SPDX-License-Identifier: GPL-2.0
/*
 * memhog THREADS TOUCH_MB MAP_MB: a benchmark workload. Maps MAP_MB of
 * anonymous memory (MAP_NORESERVE), has THREADS threads touch TOUCH_MB of
 * it between them with pseudo-random data, prints "ready" and then, every
 * 2 ms, a heartbeat line "beat N" on standard output, while the threads
 * keep rewriting a word now and then. Holds only standard input, output
 * and error. A restarted memhog shows it runs by beating again.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

struct part {
	pthread_t thread;
	uint64_t *mem;
	size_t words;
	volatile int ready;
};

static void *toucher(void *arg)
{
	struct part *p = arg;
	uint64_t x = (uintptr_t)p->mem;
	size_t i;

	for (i = 0; i < p->words; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		p->mem[i] = x;
	}
	p->ready = 1;
	for (;;) {
		struct timespec ts = { 0, 5 * 1000 * 1000 };

		nanosleep(&ts, NULL);
		x = x * 6364136223846793005ULL + 1;
		p->mem[x % p->words] ^= x;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned int threads, i;
	size_t touch, map, share;
	unsigned long beat = 0;
	struct part *parts;
	char *mem;

	if (argc != 4) {
		fprintf(stderr, "usage: memhog THREADS TOUCH_MB MAP_MB\n");
		return 2;
	}
	threads = strtoul(argv[1], NULL, 0);
	touch = strtoull(argv[2], NULL, 0) << 20;
	map = strtoull(argv[3], NULL, 0) << 20;
	if (!threads || touch > map)
		return 2;
	mem = mmap(NULL, map, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	parts = calloc(threads, sizeof(*parts));
	if (mem == MAP_FAILED || !parts)
		return 1;
	share = touch / threads / sizeof(uint64_t);
	for (i = 0; i < threads; i++) {
		/* Each thread's share lies in its own slice of the mapping. */
		parts[i].mem = (uint64_t *)(mem + (map / threads) * i);
		parts[i].words = share;
		if (pthread_create(&parts[i].thread, NULL, toucher, &parts[i]))
			return 1;
	}
	for (i = 0; i < threads; i++)
		while (!parts[i].ready)
			sched_yield();
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("ready\n");
	for (;;) {
		struct timespec ts = { 0, 2 * 1000 * 1000 };

		nanosleep(&ts, NULL);
		printf("beat %lu\n", ++beat);
	}
}
