/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for --json output. Strings come from the engine or from images,
 * so they are escaped, and bytes that are not UTF-8 become U+FFFD: the
 * output is valid JSON whatever the input.
 */
#ifndef _CKPT_CLI_JSON_H
#define _CKPT_CLI_JSON_H

#include <stdio.h>

/* Length of the well-formed UTF-8 sequence at s, or 0 (RFC 3629). */
int utf8_len(const unsigned char *s);

/* Prints s as a quoted JSON string. */
void json_print_str(FILE *f, const char *s);

/* Prints s for a terminal: control bytes, quotes and bad UTF-8 escaped. */
void text_string(FILE *f, const char *s);

#endif /* _CKPT_CLI_JSON_H */
