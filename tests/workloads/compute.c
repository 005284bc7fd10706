// SPDX-License-Identifier: GPL-2.0
/*
 * compute [ROUNDS [THREADS]] (default 400 rounds, 4 threads): a deterministic multithreaded computation for
 * demos and benchmarks. Each thread mixes its own 4 MiB buffer for ROUNDS
 * rounds; the main thread prints progress and, at the end, one line
 * "result: HEX" that depends on every thread's every step. It holds no
 * descriptors but standard input, output and error, so ckpt can
 * checkpoint it at any moment.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUF_WORDS	(512 * 1024)	/* 4 MiB per thread */

struct worker {
	pthread_t thread;
	unsigned int index;
	unsigned long rounds;
	volatile unsigned long done;
	uint64_t result;
	uint64_t *buf;
};

static void *work(void *arg)
{
	struct worker *w = arg;
	uint64_t x = 0x9e3779b97f4a7c15ULL * (w->index + 1);
	unsigned long r, i;

	for (i = 0; i < BUF_WORDS; i++)
		w->buf[i] = x ^ i;
	for (r = 0; r < w->rounds; r++) {
		for (i = 0; i < BUF_WORDS; i += 7) {
			x ^= w->buf[i];
			x *= 0xff51afd7ed558ccdULL;
			x ^= x >> 33;
			w->buf[(i * 31 + x) % BUF_WORDS] += x;
		}
		w->done = r + 1;
	}
	w->result = x;
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned long rounds = argc > 1 ? strtoul(argv[1], NULL, 0) : 400;
	unsigned int nr = argc > 2 ? strtoul(argv[2], NULL, 0) : 4, i;
	struct worker *w = calloc(nr, sizeof(*w));
	unsigned long last = 0, done;
	uint64_t h = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 0; i < nr; i++) {
		w[i].index = i;
		w[i].rounds = rounds;
		w[i].buf = malloc(BUF_WORDS * sizeof(uint64_t));
		if (!w[i].buf || pthread_create(&w[i].thread, NULL, work, &w[i]))
			return 1;
	}
	do {
		struct timespec ts = { 0, 100 * 1000 * 1000 };

		nanosleep(&ts, NULL);
		for (i = 0, done = 0; i < nr; i++)
			done += w[i].done;
		if (done * 10 / (rounds * nr) != last * 10 / (rounds * nr))
			printf("progress: %lu%%\n", done * 100 / (rounds * nr));
		last = done;
	} while (done < rounds * nr);
	for (i = 0; i < nr; i++) {
		pthread_join(w[i].thread, NULL);
		h = (h ^ w[i].result) * 0x100000001b3ULL;
	}
	printf("result: %016llx\n", (unsigned long long)h);
	return 0;
}
