/*
 * report/text.h: text from programs and files made safe to show (text.c).
 */
#ifndef MW_REPORT_TEXT_H
#define MW_REPORT_TEXT_H

#include <stddef.h>
#include <stdio.h>

struct cJSON;

/* U+FFFD REPLACEMENT CHARACTER, UTF-8: what a byte that is not part of
 * valid UTF-8 becomes in every file memwatch writes (docs/export.md). */
#define MW_TEXT_REPLACEMENT "\xef\xbf\xbd"

/* For a terminal: control characters (C0, DEL, C1) and bytes that are not
 * UTF-8 as \xNN (\u00NN for C1), a backslash as two; valid UTF-8 kept.
 * Writes at most n bytes with the terminator; returns the length. */
size_t mw_text_escape(const char *s, char *out, size_t n);
/* 1 when s is valid UTF-8. */
int mw_text_is_utf8(const char *s);
/* A copy of s in which every byte that is not part of valid UTF-8 is
 * U+FFFD; malloc()ed, NULL without memory. */
char *mw_text_utf8(const char *s);
/* Length (1..4) of the valid UTF-8 sequence p begins with; 0 at the end of
 * the string and where p's first byte is not part of valid UTF-8. */
size_t mw_text_utf8_seq(const char *p);
/* fputs of s with each byte that is not part of valid UTF-8 as U+FFFD. */
void mw_text_put_utf8(FILE *f, const char *s);
/* Every string value (and member name) of a cJSON tree, item and the items
 * after it, made valid UTF-8 as mw_text_utf8 does, before it is printed. */
void mw_text_json_utf8(struct cJSON *item);

#endif
