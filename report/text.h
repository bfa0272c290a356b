/*
 * report/text.h: text from programs and files made safe to show (text.c).
 */
#ifndef MW_REPORT_TEXT_H
#define MW_REPORT_TEXT_H

#include <stddef.h>

/* For a terminal: control characters (C0, DEL, C1) and bytes that are not
 * UTF-8 as \xNN (\u00NN for C1), a backslash as two; valid UTF-8 kept.
 * Writes at most n bytes with the terminator; returns the length. */
size_t mw_text_escape(const char *s, char *out, size_t n);
/* 1 when s is valid UTF-8. */
int mw_text_is_utf8(const char *s);
/* A copy of s in which every byte that is not part of valid UTF-8 is
 * U+FFFD; malloc()ed, NULL without memory. */
char *mw_text_utf8(const char *s);

#endif
