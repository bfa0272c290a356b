/*
 * report/buf.h: growable containers (buf.c), private to report/: a byte
 * buffer, in which the exports assemble a folded stack's line (export.c) and
 * protobuf messages (export_pprof.c), and a table of distinct strings, which
 * sums folded stacks by their text (export.c) and is pprof's string table.
 */
#ifndef MW_REPORT_BUF_H
#define MW_REPORT_BUF_H

#include <stddef.h>
#include <stdint.h>

/* b[0..n) the bytes, b[n] a 0 (b is NULL until the first append); oom set
 * when memory ran out, after which appends do nothing. {0} is empty; the
 * owner frees b. */
typedef struct mw_buf {
    char *b;
    size_t n, cap;
    int oom;
} mw_buf;

/* Append n bytes of d (n == 0 still makes b a string). */
void mw_buf_put(mw_buf *m, const void *d, size_t n);

/* Distinct strings, numbered 0.. in the order they were first added: s[i]
 * the copy of string i. {0} is empty. */
typedef struct mw_strtab {
    char **s; /* by index */
    uint32_t n, cap;
    uint32_t *slot; /* hash slots: index + 1, 0 empty */
    uint32_t nslot;
} mw_strtab;

/* The index of s, added where new (t->n grows by one then); -ENOMEM. */
int64_t mw_strtab_id(mw_strtab *t, const char *s);
void mw_strtab_free(mw_strtab *t);

#endif
