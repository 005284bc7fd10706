// SPDX-License-Identifier: GPL-2.0
/*
 * membw: the machine's memcpy bandwidth, in MB/s, over 256 MiB buffers:
 * the yardstick benchmark numbers are reported against.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int main(void)
{
	size_t size = 256UL << 20;
	char *a = malloc(size), *b = malloc(size);
	struct timespec t0, t1;
	double best = 0;
	int i;

	if (!a || !b)
		return 1;
	memset(a, 1, size);
	memset(b, 2, size);
	for (i = 0; i < 3; i++) {
		double s;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		memcpy(i & 1 ? a : b, i & 1 ? b : a, size);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		s = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
		if (size / s / 1e6 > best)
			best = size / s / 1e6;
	}
	printf("%.0f\n", best);
	return a[size / 2] == b[size / 3] ? 0 : 0;
}
