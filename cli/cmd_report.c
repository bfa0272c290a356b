/*
 * cli/cmd_report.c: `memwatch report FILES|DIR [--db FILE] [--json]`.
 * Collects the .mwr files (a directory means every *.mwr in it, and the load
 * files *.mwl memwatch record writes: report/load.c), ingests them
 * into a SQLite database (default: memwatch.db next to the inputs), then
 * prints the summary. Progress goes to stderr when it is a terminal.
 */
#include "cli.h"

#include <memwatch/profile.h>
#include <memwatch/report.h>
#include "db_safe.h" /* report/ */
#include <memwatch/views.h>

#include <dirent.h>
#include <fcntl.h>
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
            "  Reads raw .mwr files (a directory: every *.mwr in it, and memwatch record's\n"
            "  load files *.mwl), writes a SQLite database (schema: docs/report-schema.md)\n"
            "  and prints a summary. The new database is written beside the old one and\n"
            "  replaces it only when complete.\n"
            "options:\n"
            "  --db FILE           database to write (default: memwatch.db next to the inputs)\n"
            "  --json              print the summary as JSON\n"
            "  --top N             rows per table of the summary and views (default 10; the\n"
            "                      text sums up the rest in one line)\n"
            "  --by VIEW           after the summary, a table by process, thread or region\n"
            "                      (at most --top rows)\n"
            "  --sort KEY          instead of the summary, the timer samples' shares by KEY:\n"
            "                      comm (command, across processes), dso (module), function\n"
            "                      (with the inclusive share), line, or object (data objects)\n"
            "  --callers FUNCTION  instead of the summary, FUNCTION's inclusive and exclusive\n"
            "                      shares, its callers and its callees (--callees: the same)\n"
            "  --precise-threshold W\n"
            "                      latency above which a precise sample is selected, in the\n"
            "                      weight's unit (cycles); default: from the machine profile\n"
            "                      (--threshold W: its older spelling, still accepted; not\n"
            "                      record's --threshold-ns, the interval latency in ns)\n"
            "  --profile PATH      machine profile to take the thresholds from\n"
            "  --debug-dir DIRS    ':'-separated debug-info roots (default /usr/lib/debug)\n"
            "  --no-symbols        skip symbolization (addresses only)\n"
            "  --run ID            report the run named ID (raw files carry their run's name;\n"
            "                      default: the newest run among the inputs)\n"
            "  --all-runs          report every run among the inputs together\n"
            "  --no-wait           fail (exit 1) instead of waiting for another report\n"
            "                      writing in the same directory\n"
            "  --group-readable    database readable by the file's group (default: owner only)\n"
            "  -q, --quiet         no progress, no summary (database only)\n"
            "  --html FILE         also write the HTML report (docs/html.md)\n"
            "  --rank N, --host H, --pid P   summarize only these processes (the database\n"
            "                      holds all); a job of several gets per-rank and per-host\n"
            "                      tables\n");
}

/* A name as the terminal may see it (control characters escaped: a file
 * name in a directory can hold any byte); lives until 4 more calls. */
static const char *esc(const char *s)
{
    static char buf[4][2 * PATH_MAX];
    static unsigned k;
    char *b = buf[k++ % 4];
    mw_cli_escape(s, b, sizeof buf[0]);
    return b;
}

/* A number option: the whole value, in [lo, hi]; else one line and -1. */
static int num_opt(const char *opt, const char *v, double lo, double hi, int integer, double *out)
{
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    if (end == v || *end || errno || !(d >= lo && d <= hi) || (integer && d != (double)(long)d)) {
        fprintf(stderr, "memwatch report: %s '%s' is invalid: expected %s from %g to %g\n", opt,
                esc(v), integer ? "a whole number" : "a number", lo, hi);
        return -1;
    }
    *out = d;
    return 0;
}

/* The runs among the files (raw files carry their run's name, META run_id):
 * several runs in one directory are listed, and only one is reported (the
 * newest, or the one --run names) unless --all-runs merges them. Keeps the
 * chosen run's files in files[0..*n). Returns 0, or 2 for an unknown --run. */
struct run_info {
    char id[64];
    uint64_t newest;
    unsigned nfiles;
};

static int pick_run(char **files, size_t *n, const char *want, int all, char *chosen, size_t cn)
{
    struct run_info *runs = calloc(*n, sizeof *runs);
    char (*ids)[64] = calloc(*n, sizeof *ids);
    size_t nr = 0;
    int rc = 0;
    chosen[0] = 0;
    if (!runs || !ids)
        goto out;
    for (size_t i = 0; i < *n; i++) {
        uint64_t t = 0;
        (void)mw_raw_run(files[i], ids[i], sizeof ids[i], &t);
        size_t k = 0;
        while (k < nr && strcmp(runs[k].id, ids[i]))
            k++;
        if (k == nr)
            snprintf(runs[nr++].id, sizeof runs[k].id, "%s", ids[i]);
        runs[k].nfiles++;
        if (t > runs[k].newest)
            runs[k].newest = t;
    }
    if (all || (nr <= 1 && !want))
        goto out;
    size_t pick = 0;
    if (want) {
        while (pick < nr && strcmp(runs[pick].id, want))
            pick++;
        if (pick == nr) {
            fprintf(stderr, "memwatch report: no run named '%s' among the inputs; they hold:", want);
            for (size_t k = 0; k < nr; k++)
                fprintf(stderr, " %s (%u file%s)", runs[k].id[0] ? runs[k].id : "(unnamed)",
                        runs[k].nfiles, runs[k].nfiles == 1 ? "" : "s");
            fprintf(stderr, "\n");
            rc = 2;
            goto out;
        }
    } else {
        for (size_t k = 1; k < nr; k++)
            if (runs[k].newest > runs[pick].newest)
                pick = k;
        fprintf(stderr, "memwatch report: the inputs hold %zu runs:", nr);
        for (size_t k = 0; k < nr; k++)
            fprintf(stderr, "%s %s (%u file%s)", k ? "," : "",
                    runs[k].id[0] ? runs[k].id : "(unnamed)", runs[k].nfiles,
                    runs[k].nfiles == 1 ? "" : "s");
        fprintf(stderr, "; reporting the newest, %s (--run ID picks another, --all-runs merges "
                        "them)\n",
                runs[pick].id[0] ? runs[pick].id : "(unnamed)");
    }
    snprintf(chosen, cn, "%s", runs[pick].id);
    size_t m = 0;
    for (size_t i = 0; i < *n; i++) {
        if (!strcmp(ids[i], runs[pick].id))
            files[m++] = files[i];
        else
            free(files[i]);
    }
    *n = m;
out:
    free(runs);
    free(ids);
    return rc;
}

static void waiting(const char *db)
{
    fprintf(stderr, "memwatch report: waiting for another report writing beside %s\n", db);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Append the raw files among the *.mwr of a directory tree (an MPI job's
 * hosts or runs in subdirectories; hidden ones and symbolic links are not
 * followed), sorted per directory; a .mwr that is not one (a FIFO, a
 * database, an empty file) is named and left out. */
static int add_dir(const char *dir, char ***files, size_t *n, unsigned *refused, int depth)
{
    DIR *d = opendir(dir);
    if (!d)
        return -errno;
    struct dirent *e;
    size_t first = *n;
    char **subdirs = NULL;
    size_t nsub = 0;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (e->d_name[0] != '.' && depth < 8 &&
            (e->d_type == DT_DIR || e->d_type == DT_UNKNOWN)) {
            size_t pl = strlen(dir) + l + 2;
            char *sub = malloc(pl);
            struct stat st;
            if (sub) {
                snprintf(sub, pl, "%s/%s", dir, e->d_name);
                char **ns = lstat(sub, &st) == 0 && S_ISDIR(st.st_mode)
                                ? realloc(subdirs, (nsub + 1) * sizeof *subdirs)
                                : NULL;
                if (ns) {
                    subdirs = ns;
                    subdirs[nsub++] = sub;
                } else {
                    free(sub);
                }
            }
            continue;
        }
        /* raw files, and memwatch record's load files (.mwl: report/load.c) */
        if (l < 5 || (strcmp(e->d_name + l - 4, ".mwr") && strcmp(e->d_name + l - 4, ".mwl")))
            continue;
        size_t pl = strlen(dir) + l + 2;
        char *path = malloc(pl);
        if (!path)
            break;
        snprintf(path, pl, "%s/%s", dir, e->d_name);
        char why[160];
        if (mw_raw_check(path, why, sizeof why)) {
            fprintf(stderr, "memwatch report: %s: %s; left out\n", esc(path), why);
            (*refused)++;
            free(path);
            continue;
        }
        char **nf = realloc(*files, (*n + 1) * sizeof **files);
        if (!nf) {
            free(path);
            break;
        }
        *files = nf;
        (*files)[(*n)++] = path;
    }
    closedir(d);
    if (*n - first > 1)
        qsort(*files + first, *n - first, sizeof **files, cmp_str);
    if (nsub > 1)
        qsort(subdirs, nsub, sizeof *subdirs, cmp_str);
    for (size_t i = 0; i < nsub; i++) {
        add_dir(subdirs[i], files, n, refused, depth + 1);
        free(subdirs[i]);
    }
    free(subdirs);
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
    const char *out = NULL, *html = NULL;
    int json = 0, top = 10, quiet = 0, rc = 1, wait = 1, group = 0, all_runs = 0;
    const char *run_sel = NULL;
    char run[64] = "", inputs[PATH_MAX + 96];
    const char *by = NULL;
    mw_report_opts o = {0};
    mw_view_filter filter = {0};
    mw_report_view view = {0};
    char **files = NULL;
    size_t n = 0;
    unsigned refused = 0;
    char dbbuf[PATH_MAX];
    mw_db_swap sw = {.lock_fd = -1};
    const char *dirarg = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        int takes = !strcmp(a, "-o") || !strcmp(a, "--output") || !strcmp(a, "--db") ||
                    !strcmp(a, "--run") ||
                    !strcmp(a, "--top") || !strcmp(a, "--precise-threshold") ||
                    !strcmp(a, "--threshold") ||
                    !strcmp(a, "--profile") || !strcmp(a, "--debug-dir") || !strcmp(a, "--by") ||
                    !strcmp(a, "--rank") || !strcmp(a, "--pid") || !strcmp(a, "--host") ||
                    !strcmp(a, "--html") || !strcmp(a, "--sort") || !strcmp(a, "--callers") ||
                    !strcmp(a, "--callees");
        if (takes && !val) {
            fprintf(stderr, "memwatch report: %s needs a value\n", a);
            rc = 2;
            goto done;
        }
        double d;
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
        } else if (!strcmp(a, "--no-wait")) {
            wait = 0;
        } else if (!strcmp(a, "--group-readable")) {
            group = 1;
        } else if (!strcmp(a, "--all-runs")) {
            all_runs = 1;
        } else if (!strcmp(a, "--run")) {
            run_sel = argv[++i];
        } else if (!strcmp(a, "--db")) {
            out = argv[++i];
            if (!*out) {
                fprintf(stderr, "memwatch report: --db: an empty file name\n");
                rc = 2;
                goto done;
            }
        } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            /* the old spelling: -o is a directory for record, so report's
             * database is --db now */
            fprintf(stderr,
                    "memwatch report: %s is spelled --db now (the database to write; the "
                    "summary goes to standard output); writing the database to %s\n",
                    a, val);
            out = argv[++i];
        } else if (!strcmp(a, "--by")) {
            by = argv[++i];
            if (strcmp(by, "process") && strcmp(by, "thread") && strcmp(by, "region")) {
                fprintf(stderr, "memwatch report: --by %s: expected process, thread or region\n",
                        by);
                rc = 2;
                goto done;
            }
        } else if (!strcmp(a, "--top")) {
            if (num_opt(a, argv[++i], 1, 1000000, 1, &d)) {
                rc = 2;
                goto done;
            }
            top = (int)d;
        } else if (!strcmp(a, "--precise-threshold") || !strcmp(a, "--threshold")) {
            if (num_opt(a, argv[++i], 1e-3, 1e9, 0, &d)) {
                rc = 2;
                goto done;
            }
            o.threshold = d;
        } else if (!strcmp(a, "--profile")) {
            o.profile_path = argv[++i];
            if (*o.profile_path && access(o.profile_path, R_OK)) {
                fprintf(stderr, "memwatch report: --profile %s: %s\n", o.profile_path,
                        strerror(errno));
                rc = 2;
                goto done;
            }
        } else if (!strcmp(a, "--rank") || !strcmp(a, "--pid")) {
            long v;
            if (mw_parse_long(argv[++i], &v) < 0 || v < 0) {
                fprintf(stderr, "memwatch report: %s '%s' is invalid: expected a whole number\n",
                        a, argv[i]);
                rc = 2;
                goto done;
            }
            if (!strcmp(a, "--rank"))
                filter.has_rank = 1, filter.rank = v;
            else
                filter.has_pid = 1, filter.pid = v;
        } else if (!strcmp(a, "--host")) {
            filter.host = argv[++i];
        } else if (!strcmp(a, "--html")) {
            html = argv[++i];
        } else if (!strcmp(a, "--debug-dir")) {
            o.debug_dirs = argv[++i];
        } else if (!strcmp(a, "--sort")) {
            view.sort = argv[++i];
            if (!mw_report_sort_known(view.sort)) {
                char keys[128];
                fprintf(stderr, "memwatch report: --sort '%s' is invalid: expected one of %s\n",
                        view.sort, mw_report_sort_names(keys, sizeof keys));
                rc = 2;
                goto done;
            }
        } else if (!strcmp(a, "--callers") || !strcmp(a, "--callees")) {
            view.callers = argv[++i];
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "memwatch report: unknown option '%s' ('memwatch report --help' lists "
                            "them)\n", esc(a));
            rc = 2;
            goto done;
        } else {
            struct stat st;
            if (stat(a, &st) < 0) {
                fprintf(stderr, "memwatch report: %s: %s\n", esc(a), strerror(errno));
                rc = 2;
                goto done;
            }
            if (S_ISDIR(st.st_mode)) {
                size_t before = n;
                unsigned ref0 = refused;
                add_dir(a, &files, &n, &refused, 0);
                if (n == before) {
                    fprintf(stderr, "memwatch report: %s holds no %s.mwr files\n", esc(a),
                            refused > ref0 ? "usable " : "");
                    rc = 2;
                    goto done;
                }
                if (!dirarg)
                    dirarg = a;
                if (!o.inputs)
                    o.inputs = a;
            } else {
                char why[160];
                if (mw_raw_check(a, why, sizeof why)) {
                    fprintf(stderr, "memwatch report: %s: %s\n", esc(a), why);
                    rc = 2;
                    goto done;
                }
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
    if (run_sel && all_runs) {
        fprintf(stderr, "memwatch report: --run and --all-runs contradict each other\n");
        rc = 2;
        goto done;
    }
    if ((rc = pick_run(files, &n, run_sel, all_runs, run, sizeof run))) 
        goto done;
    rc = 1;
    if (run[0]) {
        snprintf(inputs, sizeof inputs, "%s (run %s)", o.inputs ? o.inputs : files[0], run);
        o.inputs = inputs;
    }
    if (!out) {
        char tmp[PATH_MAX];
        if (dirarg) {
            snprintf(dbbuf, sizeof dbbuf, "%s/memwatch.db", dirarg);
        } else {
            snprintf(tmp, sizeof tmp, "%s", files[0]);
            snprintf(dbbuf, sizeof dbbuf, "%s/memwatch.db", dirname(tmp));
        }
        out = dbbuf;
    }
    {
        char why[256];
        int e = mw_db_swap_begin(&sw, out, wait, quiet ? NULL : waiting, why, sizeof why);
        if (e) {
            fprintf(stderr, "memwatch report: %s: %s\n", out, why);
            rc = e == -EWOULDBLOCK ? 1 : 2; /* busy; else the database named is unusable */
            goto done;
        }
    }
    /* files this command creates: the owner's only, or the group's too */
    umask(group ? 027 : 077);
    char okey[3 * PATH_MAX], fkey[3 * PATH_MAX], defprof[PATH_MAX];
    const char *kprof = o.profile_path;
    if (!kprof && mw_profile_default_path(defprof, sizeof defprof) == 0)
        kprof = defprof;
    /* --sort comm alone needs no stacks: the ingest skips the offline
     * unwinding, and a database with whole stacks serves it as well */
    o.leaf_only = view.sort && !strcmp(view.sort, "comm") && !view.callers && !html;
    if (mw_report_sources_key(okey, sizeof okey, &o, kprof && *kprof ? kprof : NULL))
        okey[0] = 0; /* no key: never read as it is */
    mw_report_opts full = o;
    full.leaf_only = 0;
    fkey[0] = 0;
    if (o.leaf_only &&
        mw_report_sources_key(fkey, sizeof fkey, &full, kprof && *kprof ? kprof : NULL))
        fkey[0] = 0;
    if (((okey[0] && mw_report_sources_match(out, (const char *const *)files, n, okey)) ||
         (fkey[0] && mw_report_sources_match(out, (const char *const *)files, n, fkey))) &&
        mw_db_swap_keep(&sw, group ? 0640 : 0600) == 0) {
        /* the same raw files, unchanged, the same options: nothing to ingest */
        if (!quiet)
            fprintf(stderr, "memwatch: %s already holds these %zu file(s), unchanged: not "
                            "ingested again\n",
                    out, n);
        rc = 0;
        goto show;
    }
    o.db_path = sw.tmp;
    if (!quiet && isatty(STDERR_FILENO))
        o.progress = progress;
    mw_report_stats st;
    int e = mw_report_ingest((const char *const *)files, n, &o, &st);
    if (!e && mw_report_sources_write(sw.tmp, (const char *const *)files, n, okey))
        fprintf(stderr, "memwatch report: could not note the inputs in the database: the next "
                        "report ingests them again\n");
    if (e) {
        fprintf(stderr, "memwatch report: %s; %s left as it was\n", mw_strerror(e), out);
        mw_db_swap_abort(&sw);
        goto done;
    }
    {
        char why[256];
        if (mw_db_swap_commit(&sw, group ? 0640 : 0600, why, sizeof why)) {
            fprintf(stderr, "memwatch report: cannot put the new database in place as %s: %s\n",
                    out, why);
            goto done;
        }
    }
    if (!quiet)
        fprintf(stderr,
                "memwatch: %llu file(s), %llu records, %llu samples, %llu code addresses in "
                "%.2f s -> %s\n",
                (unsigned long long)st.files, (unsigned long long)st.records,
                (unsigned long long)st.samples, (unsigned long long)st.pcs, st.seconds, out);
    if (!quiet && st.unwound)
        fprintf(stderr, "memwatch: %llu stacks unwound from DWARF (%.1f us of CPU each), %llu "
                        "stacks truncated\n",
                (unsigned long long)st.unwound, 1e6 * st.unwind_seconds / (double)st.unwound,
                (unsigned long long)st.truncated);
    if (st.files_damaged)
        fprintf(stderr,
                "memwatch: %llu file(s) damaged or unreadable: read up to the damage (see the "
                "processes table, column status)\n",
                (unsigned long long)st.files_damaged);
    if (st.files_no_trailer)
        fprintf(stderr, "memwatch: %llu file(s) without trailer: those processes did not end "
                        "normally\n",
                (unsigned long long)st.files_no_trailer);
    if (refused)
        fprintf(stderr, "memwatch: %u file(s) named .mwr left out: not raw files (see above)\n",
                refused);
    rc = 0;
show:
    if (!quiet && (view.sort || view.callers)) {
        view.top = top;
        view.json = json;
        view.filter = &filter;
        if (mw_report_view_print(out, stdout, &view) != 0)
            rc = 1;
    } else if (!quiet && mw_report_summary_view(out, stdout, json, top, &filter) != 0) {
        rc = 1;
    }
    if (!quiet && !json && by && mw_report_by(out, stdout, by, top) != 0)
        rc = 1;
    if (html) {
        mw_html_opts ho = {filter, top > 10 ? top : 0, o.profile_path};
        int he = mw_report_html(out, html, &ho);
        if (he) {
            fprintf(stderr, "memwatch report: cannot write the HTML report %s: %s\n", html,
                    mw_strerror(he));
            rc = 1;
        } else if (!quiet) {
            fprintf(stderr, "memwatch: HTML report -> %s\n", html);
        }
    }
done:
    mw_db_swap_end(&sw);
    for (size_t i = 0; i < n; i++)
        free(files[i]);
    free(files);
    return rc;
}
