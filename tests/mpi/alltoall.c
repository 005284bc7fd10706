// SPDX-License-Identifier: GPL-2.0
/*
 * alltoall ROUNDS [SLEEP_MS [WHILE]]: an MPI job to checkpoint that keeps every
 * pair of ranks talking. In each of ROUNDS rounds every rank sends every
 * other rank one message (MPI_Isend, tag round % 32768) and receives one
 * from each (MPI_Irecv into a buffer one byte larger than the largest
 * message), then waits for all of them (MPI_Waitall) and sleeps SLEEP_MS
 * (default 0), so that a run lasts long enough to be checkpointed in its
 * middle; with WHILE, a path, only while that file exists, holding after
 * the last round while it does (as heat's).
 *
 * The message from SRC to DST in round R has a size of 0 to 64 KiB and a
 * content that both derive from (R, SRC, DST) alone: the receiver makes
 * the same message and checks the received size (MPI_Get_count) and every
 * byte against it; nothing about sizes is exchanged. A mismatch is said
 * on standard error (round, source, destination, byte offset or sizes)
 * and ends the job (MPI_Abort, 1). At the end rank 0 prints the only line
 * on standard output,
 *
 *   alltoall: N ranks, ROUNDS rounds, BYTES bytes verified
 *
 * BYTES being the sum over all ranks of the bytes checked (MPI_Reduce),
 * and every rank exits 0. Bad arguments: a message on standard error,
 * exit 2.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pace.h"

#define MAX_MSG		65536	/* bytes in the largest message */

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

static uint64_t msg_seed(unsigned long round, int src, int dst)
{
	return mix64(mix64(mix64(round + 0x9e3779b97f4a7c15ULL) ^
			   (uint64_t)src) ^ ((uint64_t)dst << 32));
}

/* The size of the message, 0 to MAX_MSG bytes. */
static size_t msg_size(uint64_t seed)
{
	return mix64(seed ^ 0x5a5a5a5a5a5a5a5aULL) % (MAX_MSG + 1);
}

/* Its content: a xorshift64* stream from the seed, 8 bytes a step. */
static void msg_fill(unsigned char *buf, size_t len, uint64_t seed)
{
	uint64_t x = seed | 1, v;
	size_t i, n;

	for (i = 0; i < len; i += n) {
		x ^= x >> 12;
		x ^= x << 25;
		x ^= x >> 27;
		v = x * 0x2545f4914f6cdd1dULL;
		n = len - i < sizeof(v) ? len - i : sizeof(v);
		memcpy(buf + i, &v, n);
	}
}

static void *xmalloc(size_t len)
{
	void *p = malloc(len ? len : 1);

	if (!p) {
		fprintf(stderr, "alltoall: out of memory\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	return p;
}

/* Checks what rank me received from src in round r; returns its size. */
static size_t check(unsigned long r, int src, int me, const unsigned char *got,
		    MPI_Status *st, unsigned char *want)
{
	uint64_t seed = msg_seed(r, src, me);
	size_t len = msg_size(seed), i;
	int count;

	MPI_Get_count(st, MPI_BYTE, &count);
	if (count == MPI_UNDEFINED || (size_t)count != len) {
		fprintf(stderr, "alltoall: round %lu, %d -> %d: %d bytes received, %zu expected\n",
			r, src, me, count, len);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	msg_fill(want, len, seed);
	if (memcmp(got, want, len)) {
		for (i = 0; got[i] == want[i]; i++)
			;
		fprintf(stderr, "alltoall: round %lu, %d -> %d: byte %zu of %zu is 0x%02x, 0x%02x expected\n",
			r, src, me, i, len, got[i], want[i]);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	return len;
}

int main(int argc, char **argv)
{
	unsigned long rounds, nap_ms = 0, r;
	unsigned char **sbuf, **rbuf, *want;
	uint64_t bytes = 0, total = 0;
	MPI_Request *req;
	MPI_Status *st;
	int rank, size, peer, n;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc < 2 || argc > 4 || parse_ulong(argv[1], &rounds) ||
	    (argc > 2 && parse_ulong(argv[2], &nap_ms))) {
		if (rank == 0)
			fprintf(stderr, "usage: alltoall ROUNDS [SLEEP_MS [WHILE]]\n");
		MPI_Finalize();
		return 2;
	}

	sbuf = xmalloc(size * sizeof(*sbuf));
	rbuf = xmalloc(size * sizeof(*rbuf));
	req = xmalloc(2 * size * sizeof(*req));
	st = xmalloc(2 * size * sizeof(*st));
	want = xmalloc(MAX_MSG);
	for (peer = 0; peer < size; peer++) {
		sbuf[peer] = xmalloc(MAX_MSG);
		rbuf[peer] = xmalloc(MAX_MSG + 1);
	}

	for (r = 0; r < rounds; r++) {
		int tag = r % 32768;

		n = 0;
		for (peer = 0; peer < size; peer++) {
			if (peer == rank)
				continue;
			MPI_Irecv(rbuf[peer], MAX_MSG + 1, MPI_BYTE, peer, tag,
				  MPI_COMM_WORLD, &req[n++]);
		}
		for (peer = 0; peer < size; peer++) {
			uint64_t seed = msg_seed(r, rank, peer);
			size_t len = msg_size(seed);

			if (peer == rank)
				continue;
			msg_fill(sbuf[peer], len, seed);
			MPI_Isend(sbuf[peer], len, MPI_BYTE, peer, tag,
				  MPI_COMM_WORLD, &req[n++]);
		}
		MPI_Waitall(n, req, st);
		/* The receives are the first size - 1 requests, by peer. */
		for (peer = 0, n = 0; peer < size; peer++) {
			if (peer == rank)
				continue;
			bytes += check(r, peer, rank, rbuf[peer], &st[n++], want);
		}
		sleep_ms(nap_ms, argc > 3 ? argv[3] : NULL, r + 1 == rounds);
	}

	MPI_Reduce(&bytes, &total, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0) {
		printf("alltoall: %d ranks, %lu rounds, %llu bytes verified\n",
		       size, rounds, (unsigned long long)total);
		fflush(stdout);
	}
	for (peer = 0; peer < size; peer++) {
		free(sbuf[peer]);
		free(rbuf[peer]);
	}
	free(sbuf);
	free(rbuf);
	free(req);
	free(st);
	free(want);
	MPI_Finalize();
	return 0;
}
