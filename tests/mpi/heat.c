// SPDX-License-Identifier: GPL-2.0
/*
 * heat ITERS [SLEEP_MS [WHILE]]: an MPI job to checkpoint, a 2-D heat stencil.
 * ITERS Jacobi steps (each point becomes the mean of its four neighbours)
 * on a GRID x GRID grid of doubles whose edges are held fixed, its rows
 * split over the ranks in contiguous blocks. Before each step every rank
 * exchanges its first and last row with its neighbours' (MPI_Sendrecv,
 * one halo row each way); after it, every rank sleeps SLEEP_MS (default
 * 0), so that a run lasts long enough to be checkpointed in its middle;
 * with WHILE, a path, only while that file exists, and the run holds after
 * its last step while it does (a test removes it once its checkpoints are
 * made, and the rest of the run, restarts included, goes at full speed; a
 * slow machine cannot see the run end before its last checkpoint).
 *
 * The start is deterministic: the edges and the interior come from a hash
 * of the point's coordinates. Each point's new value is computed from the
 * same four values in the same order whatever the number of ranks, so the
 * final grid is bit for bit the same with 1, 2 or N ranks (N <= GRID).
 * Its checksum is the sum, modulo 2^64, of a hash of every point's raw
 * 64-bit pattern and its index (MPI_Reduce, MPI_UINT64_T, MPI_SUM): rank 0
 * prints it as the only line on standard output,
 *
 *   heat: N ranks, GRIDxGRID, ITERS iterations, checksum 0xHEX
 *
 * and every rank exits 0. Bad arguments: a message on standard error,
 * exit 2.
 *
 * Before the checksum, the first and the last rank (no neighbours with 3
 * ranks or more) say their rank to each other: their first message, so
 * that with a checkpoint mid-run two ranks first talk after the restart
 * (Open MPI's TCP BTL connects then, to the address the other published
 * at MPI_Init). A rank that hears another rank than the one it asked
 * says so and aborts.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pace.h"

#define GRID		512	/* points per side, edges included */
#define TAG_UP		1	/* a row sent to the rank above */
#define TAG_DOWN	2	/* a row sent to the rank below */
#define TAG_ENDS	3	/* the first and the last rank's first words */

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

/* The starting value of point (i, j): in [0, 100), 1/1024 steps. */
static double init_value(unsigned int i, unsigned int j)
{
	uint64_t h = mix64(((uint64_t)i << 32 | j) + 0x9e3779b97f4a7c15ULL);

	return (double)(h % 102400) / 1024.0;
}

int main(int argc, char **argv)
{
	unsigned long iters, nap_ms = 0, it;
	unsigned int first, rows, i, j;
	uint64_t sum = 0, total = 0;
	double *cur, *next, *tmp;
	int rank, size, up, down;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc < 2 || argc > 4 || parse_ulong(argv[1], &iters) ||
	    (argc > 2 && parse_ulong(argv[2], &nap_ms)) || size > GRID) {
		if (rank == 0)
			fprintf(stderr, "usage: heat ITERS [SLEEP_MS [WHILE]] (at most %d ranks)\n",
				GRID);
		MPI_Finalize();
		return 2;
	}

	/* Rows [first, first + rows) are this rank's, rows >= 1. */
	first = (unsigned long)rank * GRID / size;
	rows = (unsigned long)(rank + 1) * GRID / size - first;
	up = rank > 0 ? rank - 1 : MPI_PROC_NULL;
	down = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;

	/* Local row r (0 and rows + 1 are the halos) is global row first + r - 1. */
	cur = calloc((size_t)(rows + 2) * GRID, sizeof(*cur));
	next = calloc((size_t)(rows + 2) * GRID, sizeof(*next));
	if (!cur || !next) {
		fprintf(stderr, "heat: rank %d: out of memory\n", rank);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	for (i = 1; i <= rows; i++)
		for (j = 0; j < GRID; j++)
			cur[i * GRID + j] = init_value(first + i - 1, j);
	memcpy(next, cur, (size_t)(rows + 2) * GRID * sizeof(*cur));

	for (it = 0; it < iters; it++) {
		/* My first row up, the row below mine from below; then the reverse. */
		MPI_Sendrecv(&cur[1 * GRID], GRID, MPI_DOUBLE, up, TAG_UP,
			     &cur[(rows + 1) * GRID], GRID, MPI_DOUBLE, down, TAG_UP,
			     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		MPI_Sendrecv(&cur[rows * GRID], GRID, MPI_DOUBLE, down, TAG_DOWN,
			     &cur[0], GRID, MPI_DOUBLE, up, TAG_DOWN,
			     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		for (i = 1; i <= rows; i++) {
			unsigned int g = first + i - 1;
			double *n = &next[i * GRID];
			const double *c = &cur[i * GRID];
			const double *above = c - GRID, *below = c + GRID;

			if (g == 0 || g == GRID - 1)
				continue;	/* fixed edge rows, copied once */
			for (j = 1; j < GRID - 1; j++)
				n[j] = 0.25 * (above[j] + below[j] +
					       c[j - 1] + c[j + 1]);
		}
		tmp = cur;
		cur = next;
		next = tmp;
		sleep_ms(nap_ms, argc > 3 ? argv[3] : NULL, it + 1 == iters);
	}

	for (i = 1; i <= rows; i++)
		for (j = 0; j < GRID; j++) {
			uint64_t bits, idx = (uint64_t)(first + i - 1) * GRID + j;

			memcpy(&bits, &cur[i * GRID + j], sizeof(bits));
			sum += mix64(bits ^ mix64(idx));
		}
	if (size > 2 && (rank == 0 || rank == size - 1)) {
		int peer = rank ? 0 : size - 1, heard = -1;

		MPI_Sendrecv(&rank, 1, MPI_INT, peer, TAG_ENDS, &heard, 1, MPI_INT,
			     peer, TAG_ENDS, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		if (heard != peer) {
			fprintf(stderr, "heat: rank %d asked rank %d and heard rank %d\n",
				rank, peer, heard);
			MPI_Abort(MPI_COMM_WORLD, 3);
		}
	}
	MPI_Reduce(&sum, &total, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0) {
		printf("heat: %d ranks, %dx%d, %lu iterations, checksum 0x%016llx\n",
		       size, GRID, GRID, iters, (unsigned long long)total);
		fflush(stdout);
	}
	free(cur);
	free(next);
	MPI_Finalize();
	return 0;
}
