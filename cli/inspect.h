/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ckpt inspect's report, apart from its command line so that the fuzzer
 * drives the same code: inspect_init() hooks into a reader, and once
 * ckpt_image_read() has returned, inspect_report() prints what it found.
 */
#ifndef _CKPT_CLI_INSPECT_H
#define _CKPT_CLI_INSPECT_H

#include <stdio.h>

#include "image.h"

#define INSPECT_JSON	(1U << 0)
#define INSPECT_VERBOSE	(1U << 1)	/* all fields, the section list */

struct inspect_sect {
	__u64 offset;
	__u64 len;
	__u32 type;
};

struct inspect {
	unsigned int opts;
	struct inspect_sect *sects;	/* with INSPECT_VERBOSE */
	size_t nr_sects;
	size_t sects_size;
	bool sects_lost;		/* out of memory while listing */
};

void inspect_init(struct inspect *in, struct ckpt_image *img,
		  unsigned int opts);
void inspect_free(struct inspect *in);

/*
 * Prints the report on out, or, when reading failed, the error on err
 * (prefixed "ckpt inspect: NAME: ") and with INSPECT_JSON an error object
 * on out. Returns the exit status: 0 for a valid image, 1 otherwise.
 */
int inspect_report(FILE *out, FILE *err, const char *name,
		   const struct ckpt_image *img, const struct inspect *in);

/* Whether @path is a tree's directory (inspect_tree.c). */
bool inspect_is_tree(const char *path);

/* ckpt inspect DIR: every member checked, one line each; the exit status. */
int inspect_tree(const char *dir, unsigned int opts);

#endif /* _CKPT_CLI_INSPECT_H */
