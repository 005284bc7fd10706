/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * MPIX_Checkpoint: a checkpoint of the whole job, asked for by the
 * application (MPIX_Checkpoint(3), Documentation/libckpt.md). Link with
 * -lckpt-mpi of the MPI library the program is built with.
 */
#ifndef MPIX_CKPT_H
#define MPIX_CKPT_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
	MPIX_CR_IGNORE = 0,	/* no checkpoint: the job is not under ckpt */
	MPIX_CR_CHECKPOINT = 1,	/* the job was checkpointed and goes on */
	MPIX_CR_RESTART = 2,	/* the job was restarted from that checkpoint */
	MPIX_CR_ERROR = 3,	/* the checkpoint failed; the job goes on */
} MPIX_CR_state_t;

/* Collective over MPI_COMM_WORLD. Returns MPI_SUCCESS, *state the outcome. */
int MPIX_Checkpoint(MPIX_CR_state_t *state);

#ifdef __cplusplus
}
#endif

#endif /* MPIX_CKPT_H */
