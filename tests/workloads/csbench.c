// SPDX-License-Identifier: GPL-2.0
/*
 * csbench [ITERATIONS] (default 50 million): what a libckpt critical section
 * costs while no checkpoint is in progress. Registers with the engine (so
 * the callback thread exists, asleep), then times the same loop three ways
 * and prints nanoseconds per iteration:
 *   base   one volatile increment;
 *   atomic the increment between two atomic read-modify-writes (the floor
 *          of any counting lock);
 *   cs     the increment inside ckpt_enter_cs()/ckpt_leave_cs().
 */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "libckpt.h"

static volatile unsigned long counter;
static _Atomic long shared;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 50000000UL;
	double t0, base, atom, cs;
	int registered;
	unsigned long i;

	/* The fast path is the same either way; say which one was measured. */
	registered = !ckpt_init();
	if (!registered)
		fprintf(stderr, "csbench: not registered: %s\n", ckpt_last_error());
	t0 = now();
	for (i = 0; i < n; i++)
		counter++;
	base = (now() - t0) / n;

	t0 = now();
	for (i = 0; i < n; i++) {
		atomic_fetch_add(&shared, 1);
		counter++;
		atomic_fetch_sub(&shared, 1);
	}
	atom = (now() - t0) / n;

	t0 = now();
	for (i = 0; i < n; i++) {
		ckpt_enter_cs();
		counter++;
		ckpt_leave_cs();
	}
	cs = (now() - t0) / n;
	printf("base_ns %.2f atomic_ns %.2f cs_ns %.2f registered %d\n", base,
	       atom, cs, registered);
	return 0;
}
