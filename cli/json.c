// SPDX-License-Identifier: GPL-2.0
/*
 * JSON string output (see json.h).
 */
#include "json.h"

int utf8_len(const unsigned char *s)
{
	unsigned char lo = 0x80, hi = 0xbf;
	int n, i;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	/* No overlong forms, no surrogates, nothing past U+10FFFF. */
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

void json_print_str(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	int n;

	fputc('"', f);
	while (*s) {
		n = *s < 0x80 ? 1 : utf8_len(s);
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if (*s < 0x20 || *s == 0x7f)
			fprintf(f, "\\u%04x", *s);
		else if (n)
			fwrite(s, 1, n, f);
		else
			fputs("\\ufffd", f);
		s += n ? n : 1;
	}
	fputc('"', f);
}

void text_string(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	int n;

	while (*s) {
		n = *s < 0x80 ? 1 : utf8_len(s);
		if (*s == '\\' || *s == '"')
			fprintf(f, "\\%c", *s);
		else if (*s < 0x20 || *s == 0x7f || !n)
			fprintf(f, "\\x%02x", *s);
		else
			fwrite(s, 1, n, f);
		s += n ? n : 1;
	}
}
