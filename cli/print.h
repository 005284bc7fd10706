/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One emitter for the CLI's text and JSON reports, in iproute2's print_*
 * style: each call prints one value, as a JSON member named KEY and, on a
 * terminal, through a printf format of its own; WHICH says where it shows
 * (a value only in JSON, a word only in text). Objects and arrays nest;
 * commas are the printer's business. Strings are escaped for either
 * output (json.h).
 *
 * Text formats take the value as their one argument: %llu, %llx or %llo
 * for print_uint and print_xuint, %lld for print_int, %s for print_string
 * (escaped), none for print_bool (printed when the value is true). A
 * value shown only in JSON takes "" as its format.
 */
#ifndef _CKPT_CLI_PRINT_H
#define _CKPT_CLI_PRINT_H

#include <stdbool.h>
#include <stdio.h>

enum print_which {
	PRINT_TEXT = 1,
	PRINT_JSON = 2,
	PRINT_ANY = PRINT_TEXT | PRINT_JSON,
};

#define PRINT_DEPTH_MAX	8

struct printer {
	FILE *f;
	bool json;
	unsigned int depth;
	bool first[PRINT_DEPTH_MAX + 1];	/* nothing at this depth yet */
};

void print_init(struct printer *p, FILE *f, bool json);

/* JSON "KEY":{ (KEY NULL: an array's element) and }; nothing in text. */
void print_open_object(struct printer *p, const char *key);
void print_close_object(struct printer *p);
void print_open_array(struct printer *p, const char *key);
void print_close_array(struct printer *p);

/* A number. */
void print_uint(struct printer *p, enum print_which w, const char *key,
		const char *fmt, unsigned long long v);
/* A number shown as a string in JSON, through JFMT ("0x%llx", "%04llo"). */
void print_xuint(struct printer *p, enum print_which w, const char *key,
		 const char *jfmt, const char *fmt, unsigned long long v);
void print_int(struct printer *p, enum print_which w, const char *key,
	       const char *fmt, long long v);
/* A string; FMT holds one %s (and no other conversion). */
void print_string(struct printer *p, enum print_which w, const char *key,
		  const char *fmt, const char *s);
/* true or false in JSON; FMT, when @v, in text. */
void print_bool(struct printer *p, enum print_which w, const char *key,
		const char *fmt, bool v);
/* JSON null. */
void print_null(struct printer *p, const char *key);
/* Text only. */
void print_text(struct printer *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif /* _CKPT_CLI_PRINT_H */
