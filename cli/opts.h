/*
 * cli/opts.h: command-line options as tables. A memwatch command lists its
 * options as rows of mw_opt; mw_opt_next parses argv against the rows (the
 * value as the next argument or after '=', "needs a value" and "unknown
 * option" said the same way by every command) and mw_opt_usage prints the
 * rows as --help's option lines. Adding an option is one row plus the code
 * that acts on its id (docs/architecture.md, "Adding a command-line
 * option").
 */
#ifndef MW_CLI_OPTS_H
#define MW_CLI_OPTS_H

#include <stddef.h>
#include <stdio.h>

typedef struct mw_opt {
    const char *s;    /* "-o", or NULL */
    const char *l;    /* "--output" */
    const char *arg;  /* the value's name in --help ("FILE"); NULL: a flag */
    int id;           /* the command's code for it */
    const char *help; /* --help's text; '\n' starts a continuation line */
} mw_opt;

#define MW_OPT_N(tab) (sizeof(tab) / sizeof((tab)[0]))

/* argv[*i] against the n rows of tab, for command cmd ("export").
 * - An option of the table: returns its row; *val is its value (the next
 *   argument, or what follows '=' in --long=VALUE; NULL for a flag) and *i
 *   has moved past what it took.
 * - Not an option (an operand, "-" or anything not starting with '-'):
 *   returns NULL with *rc = -1; *i is unchanged.
 * - "--": returns NULL with *rc = -2; the operands follow it.
 * - An unknown option, a missing value, or a value given to a flag: says so
 *   on stderr ("memwatch export: --format needs a value") and returns NULL
 *   with *rc = 2. */
const mw_opt *mw_opt_next(const char *cmd, const mw_opt *tab, size_t n, int argc, char **argv,
                          int *i, const char **val, int *rc);

/* The rows as --help lines: "  -o, --output FILE   help", the help aligned
 * at column 22 (under a long option, on the next line). */
void mw_opt_usage(FILE *f, const mw_opt *tab, size_t n);

#endif
