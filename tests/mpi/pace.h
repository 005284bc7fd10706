/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What heat and alltoall share: their arguments' numbers, and the pace of
 * a run that a test checkpoints (SLEEP_MS after each step, WHILE a file
 * exists).
 */
#ifndef CKPT_TESTS_MPI_PACE_H
#define CKPT_TESTS_MPI_PACE_H

#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static void nap(unsigned long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (ms && nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/*
 * After a step, SLEEP_MS; with WHILE, only while that file exists, and after
 * the last step for as long as it does: a run cannot end, however slow the
 * machine, before its test has made its checkpoints and removed the file.
 */
static void sleep_ms(unsigned long ms, const char *only_while, int last)
{
	if (only_while && access(only_while, F_OK))
		return;
	nap(ms);
	while (last && only_while && !access(only_while, F_OK))
		nap(ms > 100 ? ms : 100);
}

static int parse_ulong(const char *s, unsigned long *v)
{
	char *end;

	errno = 0;
	*v = strtoul(s, &end, 0);
	return errno || end == s || *end || *s == '-' ? -1 : 0;
}

#endif
