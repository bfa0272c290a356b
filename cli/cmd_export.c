/*
 * cli/cmd_export.c: `memwatch export RUN --format FMT -o FILE`.
 * RUN is a report database (memwatch.db), a directory of raw files (its
 * memwatch.db is used when it is newer than every raw file, else `memwatch
 * report -q` makes it first), or raw files. The formats are in
 * docs/export.md; the writers in report/export*.c.
 */
#include "cli.h"

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

static void usage(FILE *f)
{
    fprintf(f,
            "usage: memwatch export RUN --format FMT -o FILE [options]\n"
            "  RUN: a report database, a directory of raw .mwr files (its memwatch.db,\n"
            "  made by 'memwatch report' when missing or older than the raw files), or\n"
            "  raw files. Formats (docs/export.md):\n");
    for (const mw_export_format *x = mw_export_format_list; x->name; x++)
        usage_format(f, x);
    fprintf(f,
            "options:\n"
            "  -f, --format FMT    one of the formats above\n"
            "  -o, --output FILE   where to write (replaced only when complete)\n"
            "  --flagged           folded, pprof: only samples inside bandwidth-bound intervals\n"
            "  --source S          folded, pprof, csv lines: only timer, fault or precise samples\n"
            "  --table T           csv: intervals (default), lines or regions\n"
            "  --region-root       folded: each stack under its regions ('region:NAME' frames)\n"
            "  --top N             csv lines: rows (default: all); html: rows per table\n"
            "  --rank N, --host H, --pid P   only these processes\n"
            "  --group-readable    the file (and a database made for it) readable by its\n"
            "                      group (default: owner only, mode 0600)\n");
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
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        long v;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if ((!strcmp(a, "-f") || !strcmp(a, "--format")) && val) {
            format = argv[++i];
        } else if ((!strcmp(a, "-o") || !strcmp(a, "--output")) && val) {
            out = argv[++i];
        } else if (!strcmp(a, "--group-readable")) {
            group = 1;
        } else if (!strcmp(a, "--flagged")) {
            o.flagged_only = 1;
        } else if (!strcmp(a, "--region-root")) {
            o.region_root = 1;
        } else if (!strcmp(a, "--source") && val) {
            o.source = argv[++i];
        } else if (!strcmp(a, "--table") && val) {
            o.table = argv[++i];
        } else if (!strcmp(a, "--host") && val) {
            o.filter.host = argv[++i];
        } else if ((!strcmp(a, "--top") || !strcmp(a, "--rank") || !strcmp(a, "--pid")) && val) {
            if (mw_parse_long(val, &v) < 0 || v < 0) {
                fprintf(stderr, "memwatch export: %s wants a number, not '%s'\n", a, val);
                return 2;
            }
            if (!strcmp(a, "--top"))
                o.top = (int)v;
            else if (!strcmp(a, "--rank"))
                o.filter.has_rank = 1, o.filter.rank = v;
            else
                o.filter.has_pid = 1, o.filter.pid = v;
            i++;
        } else if (a[0] == '-') {
            fprintf(stderr, "memwatch export: unknown or incomplete option '%s'\n", a);
            usage(stderr);
            return 2;
        } else if (ninputs < (int)(sizeof inputs / sizeof inputs[0])) {
            inputs[ninputs++] = a;
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
