// SPDX-License-Identifier: GPL-2.0
/*
 * LD_PRELOAD'ed into "ckpt restart" by tests: takes the address range
 * CKPT_TEST_BLOCK ("LO-HI", hex) before main() runs, as the restarter's
 * own memory would when the kernel happens to place it there. It does so
 * while CKPT_RESTART_TRIES (how often ckpt restart ran itself again) is
 * below CKPT_TEST_BLOCK_TRIES, so a test can show that the restart moves
 * out of its own way, or that the error stands when it cannot.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

__attribute__((constructor)) static void block(void)
{
	const char *range = getenv("CKPT_TEST_BLOCK");
	const char *tries = getenv("CKPT_RESTART_TRIES");
	const char *max = getenv("CKPT_TEST_BLOCK_TRIES");
	unsigned long lo, hi;

	if (!range || sscanf(range, "%lx-%lx", &lo, &hi) != 2 || hi <= lo)
		return;
	if (atoi(tries ?: "0") >= atoi(max ?: "1"))
		return;
	if (mmap((void *)lo, hi - lo, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0) ==
	    MAP_FAILED)
		perror("inthevdsosway: mmap");
}
