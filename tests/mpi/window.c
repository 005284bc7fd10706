// SPDX-License-Identifier: GPL-2.0
/*
 * window DIR: an MPI job whose ranks stop at each edge of the span in which
 * ckpt checkpoints them (Documentation/decisions.md, "Checkpoints between
 * MPI_Init and MPI_Finalize"), each stop until a file of the test's
 * appears in DIR:
 *
 *   before MPI_Init        until DIR/init
 *   inside                 rank 0 prints "window: inside"; until DIR/finalize,
 *                          probing for messages meanwhile
 *   in MPI_Finalize        rank 0 prints "window: finalizing" first
 *   past it               rank 0 prints "window: finalized"; until DIR/exit
 *
 * Each wait is bounded (300 s, then exit 2). MPI_Finalize itself may not
 * return under MPICH over UCX (Documentation/testing.md): a test reads
 * "finalizing", not "finalized".
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *dir;

/*
 * Until DIR/@name exists; inside the window, the library's progress runs
 * meanwhile (MPI_Iprobe), as in a rank that computes and talks, so that a
 * connection its peer closed is closed here too.
 */
static void wait_for(const char *name, int progress)
{
	const struct timespec step = { 0, 10 * 1000000L };
	char path[4096];
	MPI_Status st;
	int i, flag;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	for (i = 0; i < 30000; i++) {
		if (!access(path, F_OK))
			return;
		if (progress)
			MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
		nanosleep(&step, NULL);
	}
	fprintf(stderr, "window: no %s in 300 s\n", path);
	exit(2);
}

static void say(int rank, const char *what)
{
	if (rank)
		return;
	printf("window: %s\n", what);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	int rank;

	if (argc != 2) {
		fprintf(stderr, "usage: window DIR\n");
		return 1;
	}
	dir = argv[1];
	wait_for("init", 0);
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Barrier(MPI_COMM_WORLD);
	say(rank, "inside");
	wait_for("finalize", 1);
	MPI_Barrier(MPI_COMM_WORLD);
	say(rank, "finalizing");
	MPI_Finalize();
	say(rank, "finalized");
	wait_for("exit", 0);
	return 0;
}
