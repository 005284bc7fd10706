// SPDX-License-Identifier: GPL-2.0
/*
 * The CLI's one emitter for text and JSON (see print.h).
 */
#include <stdarg.h>
#include <string.h>

#include "json.h"
#include "print.h"

void print_init(struct printer *p, FILE *f, bool json)
{
	memset(p, 0, sizeof(*p));
	p->f = f;
	p->json = json;
	p->first[0] = true;
}

/*
 * The comma and the key of the next JSON member or element. A key may
 * come from an image (a vDSO symbol's name): escaped as any string.
 */
static void member(struct printer *p, const char *key)
{
	if (!p->first[p->depth])
		fputc(',', p->f);
	p->first[p->depth] = false;
	if (key) {
		json_print_str(p->f, key);
		fputc(':', p->f);
	}
}

static void open_nest(struct printer *p, const char *key, char c)
{
	if (!p->json)
		return;
	member(p, key);
	fputc(c, p->f);
	if (p->depth < PRINT_DEPTH_MAX)
		p->depth++;
	p->first[p->depth] = true;
}

static void close_nest(struct printer *p, char c)
{
	if (!p->json)
		return;
	if (p->depth)
		p->depth--;
	fputc(c, p->f);
}

void print_open_object(struct printer *p, const char *key)
{
	open_nest(p, key, '{');
}

void print_close_object(struct printer *p)
{
	close_nest(p, '}');
}

void print_open_array(struct printer *p, const char *key)
{
	open_nest(p, key, '[');
}

void print_close_array(struct printer *p)
{
	close_nest(p, ']');
}

/*
 * Where a value goes: nowhere (0), to the text (PRINT_TEXT) or to the JSON
 * (PRINT_JSON), its comma and key already printed.
 */
static enum print_which value(struct printer *p, enum print_which w,
			      const char *key)
{
	if (!(w & (p->json ? PRINT_JSON : PRINT_TEXT)))
		return 0;
	if (!p->json)
		return PRINT_TEXT;
	member(p, key);
	return PRINT_JSON;
}

void print_uint(struct printer *p, enum print_which w, const char *key,
		const char *fmt, unsigned long long v)
{
	switch (value(p, w, key)) {
	case PRINT_TEXT:
		fprintf(p->f, fmt, v);
		break;
	case PRINT_JSON:
		fprintf(p->f, "%llu", v);
		break;
	default:
		break;
	}
}

void print_xuint(struct printer *p, enum print_which w, const char *key,
		 const char *jfmt, const char *fmt, unsigned long long v)
{
	switch (value(p, w, key)) {
	case PRINT_TEXT:
		fprintf(p->f, fmt, v);
		break;
	case PRINT_JSON:
		fputc('"', p->f);
		fprintf(p->f, jfmt, v);
		fputc('"', p->f);
		break;
	default:
		break;
	}
}

void print_int(struct printer *p, enum print_which w, const char *key,
	       const char *fmt, long long v)
{
	switch (value(p, w, key)) {
	case PRINT_TEXT:
		fprintf(p->f, fmt, v);
		break;
	case PRINT_JSON:
		fprintf(p->f, "%lld", v);
		break;
	default:
		break;
	}
}

void print_string(struct printer *p, enum print_which w, const char *key,
		  const char *fmt, const char *s)
{
	enum print_which to = value(p, w, key);
	const char *at = strstr(fmt, "%s");

	if (to == PRINT_JSON) {
		json_print_str(p->f, s);
	} else if (to == PRINT_TEXT && !at) {
		fputs(fmt, p->f);
	} else if (to == PRINT_TEXT) {
		fwrite(fmt, 1, at - fmt, p->f);
		text_string(p->f, s);
		fputs(at + 2, p->f);
	}
}

void print_bool(struct printer *p, enum print_which w, const char *key,
		const char *fmt, bool v)
{
	enum print_which to = value(p, w, key);

	if (to == PRINT_JSON)
		fputs(v ? "true" : "false", p->f);
	else if (to == PRINT_TEXT && v)
		fputs(fmt, p->f);
}

void print_null(struct printer *p, const char *key)
{
	if (!p->json)
		return;
	member(p, key);
	fputs("null", p->f);
}

void print_text(struct printer *p, const char *fmt, ...)
{
	va_list ap;

	if (p->json)
		return;
	va_start(ap, fmt);
	vfprintf(p->f, fmt, ap);
	va_end(ap);
}
