/*
 * cli/cmd_export.c: `memwatch export RUN --format FMT -o FILE`.
 * RUN is a report database (memwatch.db), a directory of raw files (its
 * memwatch.db is used when it is newer than every raw file, else `memwatch
 * report -q` makes it first), or raw files. The formats are in
 * docs/export.md; the writers in report/export*.c.
 */
#include "cli.h"
#include "opts.h"

#include <memwatch/views.h>

#include <dirent.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* A format's usage lines from its row (report/export.c): the name, its
 * aliases, then each help line indented under it. */
static void usage_format(FILE *f, const mw_export_format *x)
{
    fprintf(f, "    %-10s ", x->name);
    for (const char *h = x->help; *h;) {
        const char *nl = strchr(h, '\n');
        int len = nl ? (int)(nl - h) : (int)strlen(h);
        fprintf(f, "%s%.*s\n", h == x->help ? "" : "               ", len, h);
        h += len + (nl != NULL);
    }
    if (x->aliases[0])
        fprintf(f, "               (also: %s)\n", x->aliases);
}

enum {
    EX_HELP,
    EX_FORMAT,
    EX_OUTPUT,
    EX_FLAGGED,
    EX_SOURCE,
    EX_TABLE,
    EX_REGION_ROOT,
    EX_TOP,
    EX_RANK,
    EX_HOST,
    EX_PID,
    EX_GROUP
};
static const mw_opt export_opts[] = {
    {"-f", "--format", "FMT", EX_FORMAT, "one of the formats above"},
    {"-o", "--output", "FILE", EX_OUTPUT, "where to write (replaced only when complete)"},
    {NULL, "--flagged", NULL, EX_FLAGGED,
     "folded, pprof: only samples inside bandwidth-bound intervals"},
    {NULL, "--source", "S", EX_SOURCE,
     "folded, pprof, csv lines: only timer, fault or precise samples"},
    {NULL, "--table", "T", EX_TABLE, "csv: intervals (default), lines or regions"},
    {NULL, "--region-root", NULL, EX_REGION_ROOT,
     "folded: each stack under its regions ('region:NAME' frames)"},
    {NULL, "--top", "N", EX_TOP, "csv lines: rows (default: all); html: rows per table"},
    {NULL, "--rank", "N", EX_RANK, "only this rank's processes"},
    {NULL, "--host", "H", EX_HOST, "only this host's processes"},
    {NULL, "--pid", "P", EX_PID, "only this process"},
    {NULL, "--group-readable", NULL, EX_GROUP,
     "the file (and a database made for it) readable by its\ngroup (default: owner only, mode "
     "0600)"},
    {"-h", "--help", NULL, EX_HELP, "this text"},
};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: memwatch export RUN --format FMT -o FILE [options]\n"
            "  RUN: a report database, a directory of raw .mwr files (its memwatch.db,\n"
            "  made by 'memwatch report' when missing or older than the raw files), or\n"
            "  raw files. Formats (docs/export.md):\n");
    for (const mw_export_format *x = mw_export_format_list; x->name; x++)
        usage_format(f, x);
    fprintf(f, "options:\n");
    mw_opt_usage(f, export_opts, MW_OPT_N(export_opts));
}

static int is_sqlite(const char *path)
{
    FILE *f = fopen(path, "rb");
    char m[16] = {0};
    if (!f)
        return 0;
    size_t n = fread(m, 1, sizeof m, f);
    fclose(f);
    return n == 16 && !memcmp(m, "SQLite format 3", 16);
}

/* The newest modification time of a directory's *.mwr files; 0 when none. */
static long long newest_raw(const char *dir, int *count)
{
    DIR *d = opendir(dir);
    long long t = 0;
    *count = 0;
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l < 5 || strcmp(e->d_name + l - 4, ".mwr"))
            continue;
        char p[PATH_MAX];
        struct stat st;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (stat(p, &st) == 0) {
            long long m = (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
            if (m > t)
                t = m;
            (*count)++;
        }
    }
    closedir(d);
    return t;
}

int mw_parse_long(const char *s, long *v)
{
    char *end;
    errno = 0;
    long x = strtol(s, &end, 10);
    if (errno || end == s || *end)
        return -1;
    *v = x;
    return 0;
}

int mw_cmd_export(int argc, char **argv)
{
    const char *format = NULL, *out = NULL;
    mw_export_opts o = {0};
    const char *inputs[256];
    int ninputs = 0, group = 0;
    for (int i = 1; i < argc;) {
        const char *val;
        int rc;
        const mw_opt *op =
            mw_opt_next("export", export_opts, MW_OPT_N(export_opts), argc, argv, &i, &val, &rc);
        if (!op && rc == -1) { /* an operand */
            if (ninputs < (int)(sizeof inputs / sizeof inputs[0]))
                inputs[ninputs++] = argv[i];
            i++;
            continue;
        }
        if (!op && rc == -2) { /* "--": operands only */
            for (i++; i < argc; i++)
                if (ninputs < (int)(sizeof inputs / sizeof inputs[0]))
                    inputs[ninputs++] = argv[i];
            break;
        }
        if (!op) {
            usage(stderr);
            return 2;
        }
        long v = 0;
        if ((op->id == EX_TOP || op->id == EX_RANK || op->id == EX_PID) &&
            (mw_parse_long(val, &v) < 0 || v < 0)) {
            fprintf(stderr, "memwatch export: %s wants a number, not '%s'\n", op->l, val);
            return 2;
        }
        switch (op->id) {
        case EX_HELP:
            usage(stdout);
            return 0;
        case EX_FORMAT:
            format = val;
            break;
        case EX_OUTPUT:
            out = val;
            break;
        case EX_GROUP:
            group = 1;
            break;
        case EX_FLAGGED:
            o.flagged_only = 1;
            break;
        case EX_REGION_ROOT:
            o.region_root = 1;
            break;
        case EX_SOURCE:
            o.source = val;
            break;
        case EX_TABLE:
            o.table = val;
            break;
        case EX_HOST:
            o.filter.host = val;
            break;
        case EX_TOP:
            o.top = (int)v;
            break;
        case EX_RANK:
            o.filter.has_rank = 1, o.filter.rank = v;
            break;
        case EX_PID:
            o.filter.has_pid = 1, o.filter.pid = v;
            break;
        }
    }
    if (!format || !out || ninputs == 0) {
        fprintf(stderr, "memwatch export: %s\n",
                ninputs == 0 ? "which run? (a directory, a database or raw files)"
                : !format    ? "--format FMT is required (see the formats below)"
                             : "-o FILE is required");
        usage(stderr);
        return 2;
    }
    if (!mw_export_format_find(format)) {
        char names[128];
        fprintf(stderr, "memwatch export: unknown format '%s' (%s)\n", format,
                mw_export_format_names(names, sizeof names));
        return 2;
    }
    /* find or make the database */
    char db[PATH_MAX];
    struct stat st;
    if (stat(inputs[0], &st) < 0) {
        fprintf(stderr, "memwatch export: %s: %s\n", inputs[0], strerror(errno));
        return 2;
    }
    if (ninputs == 1 && S_ISREG(st.st_mode) && is_sqlite(inputs[0])) {
        snprintf(db, sizeof db, "%s", inputs[0]);
    } else {
        int nraw = 0;
        long long newest = 0;
        if (ninputs == 1 && S_ISDIR(st.st_mode)) {
            snprintf(db, sizeof db, "%s/memwatch.db", inputs[0]);
            newest = newest_raw(inputs[0], &nraw);
            struct stat ds;
            int have_db = stat(db, &ds) == 0;
            long long dbt =
                have_db ? (long long)ds.st_mtim.tv_sec * 1000000000LL + ds.st_mtim.tv_nsec : 0;
            if (nraw == 0 && !have_db) {
                fprintf(stderr, "memwatch export: %s holds no .mwr files and no memwatch.db\n",
                        inputs[0]);
                return 2;
            }
            if (have_db && (nraw == 0 || dbt >= newest))
                goto have;
        } else {
            char tmp[PATH_MAX];
            snprintf(tmp, sizeof tmp, "%s", inputs[0]);
            snprintf(db, sizeof db, "%s/memwatch.db", dirname(tmp));
        }
        /* make it as `memwatch report -q` does */
        char *rargv[264];
        int rn = 0;
        rargv[rn++] = "report";
        for (int i = 0; i < ninputs; i++)
            rargv[rn++] = (char *)inputs[i];
        rargv[rn++] = "--db";
        rargv[rn++] = db;
        rargv[rn++] = "-q";
        if (group)
            rargv[rn++] = "--group-readable";
        rargv[rn] = NULL;
        int rc = mw_cmd_report(rn, rargv);
        if (rc)
            return rc;
    }
have:;
    /* the file is the owner's only (0600), or its group's too (0640),
     * whatever the umask: the writer creates it with the mode the umask
     * leaves of 0666 */
    umask(group ? 027 : 077);
    int rc = mw_export(db, format, out, &o);
    if (rc) {
        fprintf(stderr, "memwatch export: %s -> %s failed: %s\n", db, out, mw_strerror(rc));
        return rc == MW_ERR_PARSE ? 2 : 1;
    }
    return 0;
}
