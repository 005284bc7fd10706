// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * An MPI rank is checkpointed only between the end of MPI_Init and the
 * start of MPI_Finalize (Documentation/decisions.md, "Checkpoints between
 * MPI_Init and MPI_Finalize"). A checkpoint that finds the process outside
 * waits, up to its timeout, and is then refused with the reason.
 *
 * A process is a rank when an MPI library is loaded in it: PMPI_Initialized
 * resolves. Whether it is inside, the library itself says
 * (PMPI_Initialized, PMPI_Finalized: both may be called at any time, from
 * any thread), so a program that initializes through another binding
 * (Fortran's) is seen as well. The one race left, a thread entering
 * MPI_Finalize just as the checkpoint looked, is closed by wrapping
 * MPI_Finalize: from its call on, the process holds a critical section of
 * its own (cs.c's protocol: a checkpoint already under way is finished
 * first). The three calls take and return no MPI handle, so one build
 * serves Open MPI and MPICH alike; MPI_Finalize is exported unversioned,
 * like addrmap.c's calls, and nothing here is on the data path.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>

#include "internal.h"

static _Atomic int finalizing;	/* MPI_Finalize was called here */

/* The library's answer to @name, or -1 without an MPI library. */
static int ask(const char *name)
{
	int (*fn)(int *) = (int (*)(int *))dlsym(RTLD_DEFAULT, name);
	int flag = 0;

	if (!fn || fn(&flag))
		return -1;
	return flag;
}

/*
 * Why the process may not be checkpointed now (NULL: it may), as the
 * start of "... longer than the timeout".
 */
static const char *outside(void)
{
	int init;

	if (atomic_load(&finalizing))
		return "it was an MPI rank in or past MPI_Finalize";
	init = ask("PMPI_Initialized");
	if (init < 0)
		return NULL;
	if (!init)
		return "it was an MPI rank before the end of MPI_Init";
	if (ask("PMPI_Finalized") > 0)
		return "it was an MPI rank past MPI_Finalize";
	return NULL;
}

const char *ckpt_mpi_wait(const struct timespec *end, unsigned int ms)
{
	const struct timespec step = { 0, 20 * 1000000L };
	struct timespec left;
	const char *why;

	while ((why = outside())) {
		if (ckpt_time_left(end, ms, &left))
			return why;
		nanosleep(&step, NULL);
	}
	return NULL;
}

const char *ckpt_mpi_held(void)
{
	return atomic_load(&finalizing) ? outside() : NULL;
}

/* The child of a fork is no rank of ours until it calls MPI itself. */
void ckpt_mpi_after_fork(void)
{
	atomic_store(&finalizing, 0);
}

int MPI_Finalize(void);

CKPT_EXPORT int MPI_Finalize(void)
{
	static int (*real)(void);

	if (!real)
		real = (int (*)(void))dlsym(RTLD_NEXT, "MPI_Finalize");
	if (!real) {
		fprintf(stderr, "libckpt: MPI_Finalize: no MPI library to call\n");
		return 1;
	}
	if (!atomic_exchange(&finalizing, 1))
		ckpt_cs_hold();
	return real();
}
