// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the image reader: every input goes through exactly
 * what ckpt inspect runs (ckpt_image_read() on a file descriptor, then the
 * text and JSON reports, written to /dev/null), once as it is and once with
 * its checksums made right. Without the second pass nearly every mutation
 * would stop at a checksum and the checks behind them would go untested.
 * The reader is also driven the way ckpt restart will: up to VMAS first,
 * then the rest.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "commands.h"
#include "inspect.h"

const char *prog = "image_fuzz";

static int memfd = -1;
static FILE *devnull;

/* Recomputes every section's checksums in place, as far as the data goes. */
static void fix_checksums(uint8_t *data, size_t size)
{
	struct ckpt_sect s;
	size_t off = 0, avail;
	__u64 len;

	while (size - off >= sizeof(s)) {
		memcpy(&s, data + off, sizeof(s));
		avail = size - off - sizeof(s);
		len = s.len < avail ? s.len : avail;
		s.csum = ckpt_csum(data + off + sizeof(s), len);
		s.hcsum = 0;
		s.hcsum = ckpt_csum(&s, sizeof(s));
		memcpy(data + off, &s, sizeof(s));
		if (s.len > avail || avail - s.len < (-s.len & 7))
			break;
		off += sizeof(s) + s.len + (-s.len & 7);
	}
}

static void feed(const uint8_t *data, size_t size, unsigned int opts,
		 bool to_vmas)
{
	struct ckpt_image img;
	struct inspect in;

	if (ftruncate(memfd, 0) ||
	    pwrite(memfd, data, size, 0) != (ssize_t)size ||
	    lseek(memfd, 0, SEEK_SET))
		abort();
	ckpt_image_init(&img);
	inspect_init(&in, &img, opts);
	if (!to_vmas || !ckpt_image_read(&img, memfd, CKPT_IMAGE_TO_VMAS))
		ckpt_image_read(&img, memfd, 0);
	/* The reader's promises, whatever the input. */
	if (img.done != !img.error.err || img.nr_threads > img.hdr.nr_threads ||
	    (img.error.err && !img.error.why))
		abort();
	inspect_report(devnull, devnull, "fuzz", &img, &in);
	inspect_free(&in);
	ckpt_image_free(&img);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *fixed;

	if (memfd < 0) {
		memfd = memfd_create("image_fuzz", MFD_CLOEXEC);
		devnull = fopen("/dev/null", "w");
		if (memfd < 0 || !devnull)
			abort();
	}
	feed(data, size, INSPECT_VERBOSE, false);

	fixed = malloc(size ? size : 1);
	if (!fixed)
		abort();
	memcpy(fixed, data, size);
	fix_checksums(fixed, size);
	feed(fixed, size, INSPECT_JSON | INSPECT_VERBOSE, size & 1);
	feed(fixed, size, 0, !(size & 1));
	free(fixed);
	return 0;
}
