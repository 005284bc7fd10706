// SPDX-License-Identifier: GPL-2.0
/*
 * mpix STEPS [SLEEP_MS [HOLD]]: an MPI job that asks for its own checkpoint.
 * STEPS steps, each an MPI_Allreduce of the step's number (SLEEP_MS apart,
 * default 0); after half of them, MPIX_Checkpoint(), whose outcome rank 0
 * prints as
 *
 *   mpix: step K: checkpoint|restart|ignore|error
 *
 * With HOLD, a path, rank 0 then waits after a checkpoint outcome until
 * HOLD exists, 300 s at most, and the other ranks with it in the next
 * step: the job is still running when a test kills it, however long the
 * snapshot takes to be committed after the ranks went on.
 *
 * and at the end the sum of every reduction, which is the same whatever
 * happened in between:
 *
 *   mpix: N ranks, STEPS steps, sum S        (S = N * STEPS * (STEPS + 1) / 2)
 */
#include <errno.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "mpix_ckpt.h"

static const char *names[] = {
	[MPIX_CR_IGNORE] = "ignore",
	[MPIX_CR_CHECKPOINT] = "checkpoint",
	[MPIX_CR_RESTART] = "restart",
	[MPIX_CR_ERROR] = "error",
};

static void nap(unsigned long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (ms && nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static void hold(const char *path)
{
	int n;

	for (n = 0; n < 3000 && access(path, F_OK); n++)
		nap(100);
}

int main(int argc, char **argv)
{
	unsigned long steps, ms = 0, k, sum = 0, one;
	MPIX_CR_state_t st;
	int rank, size;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc < 2 || argc > 4 || !(steps = strtoul(argv[1], NULL, 10))) {
		if (!rank)
			fprintf(stderr, "usage: mpix STEPS [SLEEP_MS [HOLD]]\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	if (argc > 2)
		ms = strtoul(argv[2], NULL, 10);
	for (k = 1; k <= steps; k++) {
		MPI_Allreduce(&k, &one, 1, MPI_UNSIGNED_LONG, MPI_SUM, MPI_COMM_WORLD);
		sum += one;
		if (k == steps / 2) {
			if (MPIX_Checkpoint(&st) != MPI_SUCCESS)
				MPI_Abort(MPI_COMM_WORLD, 2);
			if (!rank) {
				printf("mpix: step %lu: %s\n", k,
				       st <= MPIX_CR_ERROR ? names[st] : "?");
				fflush(stdout);
			}
			if (!rank && argc > 3 && st == MPIX_CR_CHECKPOINT)
				hold(argv[3]);
		}
		nap(ms);
	}
	if (!rank) {
		printf("mpix: %d ranks, %lu steps, sum %lu\n", size, steps, sum);
		fflush(stdout);
	}
	MPI_Finalize();
	return 0;
}
