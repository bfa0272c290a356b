/*
 * cli/cmd_report.c: `memwatch report FILES|DIR [-o db] [--json]`.
 * Collects the .mwr files (a directory means every *.mwr in it), ingests them
 * into a SQLite database (default: memwatch.db next to the inputs), then
 * prints the summary. Progress goes to stderr when it is a terminal.
 */
#include "cli.h"

#include <memwatch/report.h>

#include <dirent.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: memwatch report FILES|DIR [options]\n"
            "  Reads raw .mwr files (a directory: every *.mwr in it), writes a SQLite\n"
            "  database (schema: docs/report-schema.md) and prints a summary.\n"
            "options:\n"
            "  -o, --output DB     database to write (default: memwatch.db next to the inputs)\n"
            "  --json              print the summary as JSON\n"
            "  --top N             rows per table in the summary (default 10)\n"
            "  --threshold W       latency threshold for precise samples, in the weight's unit\n"
            "                      (cycles); default: from the machine profile\n"
            "  --profile PATH      machine profile to take the threshold from\n"
            "  --debug-dir DIRS    ':'-separated debug-info roots (default /usr/lib/debug)\n"
            "  --no-symbols        skip symbolization (addresses only)\n"
            "  -q, --quiet         no progress, no summary (database only)\n");
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Append the *.mwr files of a directory, sorted. */
static int add_dir(const char *dir, char ***files, size_t *n)
{
    DIR *d = opendir(dir);
    if (!d)
        return -errno;
    struct dirent *e;
    size_t first = *n;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l < 5 || strcmp(e->d_name + l - 4, ".mwr"))
            continue;
        char **nf = realloc(*files, (*n + 1) * sizeof **files);
        if (!nf)
            break;
        *files = nf;
        size_t pl = strlen(dir) + l + 2;
        (*files)[*n] = malloc(pl);
        if (!(*files)[*n])
            break;
        snprintf((*files)[*n], pl, "%s/%s", dir, e->d_name);
        (*n)++;
    }
    closedir(d);
    if (*n - first > 1)
        qsort(*files + first, *n - first, sizeof **files, cmp_str);
    return 0;
}

static void progress(uint64_t done, uint64_t total, const char *file, void *user)
{
    (void)file;
    (void)user;
    if (total == 0)
        return;
    fprintf(stderr, "\rmemwatch: ingesting %3.0f%%", 100.0 * (double)done / (double)total);
    if (done >= total)
        fprintf(stderr, "\r%30s\r", "");
    fflush(stderr);
}

int mw_cmd_report(int argc, char **argv)
{
    const char *out = NULL;
    int json = 0, top = 10, quiet = 0, rc = 1;
    mw_report_opts o = {0};
    char **files = NULL;
    size_t n = 0;
    char dbbuf[PATH_MAX];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            rc = 0;
            goto done;
        } else if (!strcmp(a, "--json")) {
            json = 1;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            quiet = 1;
        } else if (!strcmp(a, "--no-symbols")) {
            o.no_symbols = 1;
        } else if ((!strcmp(a, "-o") || !strcmp(a, "--output")) && val) {
            out = val;
            i++;
        } else if (!strcmp(a, "--top") && val) {
            top = atoi(val);
            i++;
        } else if (!strcmp(a, "--threshold") && val) {
            o.threshold = atof(val);
            i++;
        } else if (!strcmp(a, "--profile") && val) {
            o.profile_path = val;
            i++;
        } else if (!strcmp(a, "--debug-dir") && val) {
            o.debug_dirs = val;
            i++;
        } else if (a[0] == '-') {
            fprintf(stderr, "memwatch report: unknown or incomplete option '%s'\n", a);
            usage(stderr);
            rc = 2;
            goto done;
        } else {
            struct stat st;
            if (stat(a, &st) < 0) {
                fprintf(stderr, "memwatch report: %s: %s\n", a, strerror(errno));
                rc = 2;
                goto done;
            }
            if (S_ISDIR(st.st_mode)) {
                size_t before = n;
                add_dir(a, &files, &n);
                if (n == before) {
                    fprintf(stderr, "memwatch report: %s holds no .mwr files\n", a);
                    rc = 2;
                    goto done;
                }
                if (!out) {
                    snprintf(dbbuf, sizeof dbbuf, "%s/memwatch.db", a);
                    out = dbbuf;
                }
                if (!o.inputs)
                    o.inputs = a;
            } else {
                char **nf = realloc(files, (n + 1) * sizeof *files);
                if (!nf)
                    goto done;
                files = nf;
                files[n++] = strdup(a);
            }
        }
    }
    if (n == 0) {
        usage(stderr);
        rc = 2;
        goto done;
    }
    if (!out) {
        char tmp[PATH_MAX];
        snprintf(tmp, sizeof tmp, "%s", files[0]);
        snprintf(dbbuf, sizeof dbbuf, "%s/memwatch.db", dirname(tmp));
        out = dbbuf;
    }
    o.db_path = out;
    if (!quiet && isatty(STDERR_FILENO))
        o.progress = progress;
    mw_report_stats st;
    int e = mw_report_ingest((const char *const *)files, n, &o, &st);
    if (e) {
        fprintf(stderr, "memwatch report: %s\n", mw_strerror(e));
        goto done;
    }
    if (!quiet)
        fprintf(stderr,
                "memwatch: %llu file(s), %llu records, %llu samples, %llu code addresses in "
                "%.2f s -> %s\n",
                (unsigned long long)st.files, (unsigned long long)st.records,
                (unsigned long long)st.samples, (unsigned long long)st.pcs, st.seconds, out);
    if (st.files_damaged)
        fprintf(stderr,
                "memwatch: %llu file(s) damaged or unreadable: read up to the damage (see the "
                "processes table, column status)\n",
                (unsigned long long)st.files_damaged);
    if (st.files_no_trailer)
        fprintf(stderr, "memwatch: %llu file(s) without trailer: those processes did not end "
                        "normally\n",
                (unsigned long long)st.files_no_trailer);
    rc = 0;
    if (!quiet && mw_report_summary(out, stdout, json, top) != 0)
        rc = 1;
done:
    for (size_t i = 0; i < n; i++)
        free(files[i]);
    free(files);
    return rc;
}
