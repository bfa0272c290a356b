/*
 * cli/cmd_report.c: `memwatch report FILES|DIR [--db FILE] [--json]`.
 * Collects the .mwr files (a directory means every *.mwr in it, and the load
 * files *.mwl memwatch record writes: report/load.c), ingests them
 * into a SQLite database (default: memwatch.db next to the inputs), then
 * prints the summary. Progress goes to stderr when it is a terminal.
 */
#include "cli.h"
#include "opts.h"

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

enum {
    RO_HELP, RO_JSON, RO_QUIET, RO_NO_SYMBOLS, RO_NO_WAIT, RO_GROUP, RO_ALL_RUNS, RO_RUN, RO_DB,
    RO_OUTPUT, RO_BY, RO_TOP, RO_PRECISE, RO_PROFILE, RO_RANK, RO_PID, RO_HOST, RO_HTML,
    RO_DEBUG_DIR, RO_SORT, RO_CALLERS
};
/* report's options; a row without help is an older spelling, still taken */
static const mw_opt report_opts[] = {
    {NULL, "--db", "FILE", RO_DB, "database to write (default: memwatch.db next to the inputs)"},
    {NULL, "--json", NULL, RO_JSON, "print the summary as JSON"},
    {NULL, "--top", "N", RO_TOP,
     "rows per table of the summary and views (default 10; the\ntext sums up the rest in one "
     "line)"},
    {NULL, "--by", "VIEW", RO_BY,
     "after the summary, a table by process, thread, region,\nuser or cgroup (at most --top "
     "rows)"},
    {NULL, "--sort", "KEY", RO_SORT,
     "instead of the summary, the timer samples' shares by KEY:\ncomm (command, across "
     "processes), dso (module), function\n(with the inclusive share), line, or object (data "
     "objects)"},
    {NULL, "--callers", "FUNCTION", RO_CALLERS,
     "instead of the summary, FUNCTION's inclusive and exclusive\nshares, its callers and its "
     "callees (--callees: the same)"},
    {NULL, "--callees", "FUNCTION", RO_CALLERS, NULL},
    {NULL, "--precise-threshold", "W", RO_PRECISE,
     "latency above which a precise sample is selected, in the\nweight's unit (cycles); "
     "default: from the machine profile\n(--threshold W: its older spelling, still accepted; "
     "not\nrecord's --threshold-ns, the interval latency in ns)"},
    {NULL, "--threshold", "W", RO_PRECISE, NULL},
    {NULL, "--profile", "PATH", RO_PROFILE, "machine profile to take the thresholds from"},
    {NULL, "--debug-dir", "DIRS", RO_DEBUG_DIR,
     "':'-separated debug-info roots (default /usr/lib/debug)"},
    {NULL, "--no-symbols", NULL, RO_NO_SYMBOLS, "skip symbolization (addresses only)"},
    {NULL, "--run", "ID", RO_RUN,
     "report the run named ID (raw files carry their run's name;\ndefault: the newest run "
     "among the inputs)"},
    {NULL, "--all-runs", NULL, RO_ALL_RUNS, "report every run among the inputs together"},
    {NULL, "--no-wait", NULL, RO_NO_WAIT,
     "fail (exit 1) instead of waiting for another report\nwriting in the same directory"},
    {NULL, "--group-readable", NULL, RO_GROUP,
     "database readable by the file's group (default: owner only)"},
    {"-q", "--quiet", NULL, RO_QUIET, "no progress, no summary (database only)"},
    {NULL, "--html", "FILE", RO_HTML, "also write the HTML report (docs/html.md)"},
    {NULL, "--rank", "N", RO_RANK,
     "summarize only this rank's processes (the database holds\nall; a job of several gets "
     "per-rank and per-host tables)"},
    {NULL, "--host", "H", RO_HOST, "summarize only this host's processes"},
    {NULL, "--pid", "P", RO_PID, "summarize only this process"},
    {"-o", "--output", "FILE", RO_OUTPUT, NULL},
    {"-h", "--help", NULL, RO_HELP, "this text"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: memwatch report FILES|DIR [options]\n"
               "  Reads raw .mwr files (a directory: every *.mwr in it, and memwatch record's\n"
               "  load files *.mwl), writes a SQLite database (schema: docs/report-schema.md)\n"
               "  and prints a summary. The new database is written beside the old one and\n"
               "  replaces it only when complete.\n"
               "options:\n");
    mw_opt_usage(f, report_opts, MW_OPT_N(report_opts));
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

/* What report's command line asked for (rep_parse fills it). */
struct rep_args {
    const char *out, *html; /* --db, --html */
    int json, top, quiet, wait, group, all_runs;
    const char *run_sel; /* --run */
    const char *by;      /* --by */
    mw_report_opts o;
    mw_view_filter filter;
    mw_report_view view;
    char **files; /* the raw files to report */
    size_t n;
    unsigned refused; /* files named .mwr in a directory that are not raw files */
    const char *dirarg; /* the first directory given */
};

/* An input on the command line: a directory's raw files, or a raw file. -1
 * to go on, else the exit status. */
static int rep_input(const char *a, struct rep_args *ra)
{
    struct stat st;
    if (stat(a, &st) < 0) {
        fprintf(stderr, "memwatch report: %s: %s\n", esc(a), strerror(errno));
        return 2;
    }
    if (S_ISDIR(st.st_mode)) {
        size_t before = ra->n;
        unsigned ref0 = ra->refused;
        add_dir(a, &ra->files, &ra->n, &ra->refused, 0);
        if (ra->n == before) {
            fprintf(stderr, "memwatch report: %s holds no %s.mwr files\n", esc(a),
                    ra->refused > ref0 ? "usable " : "");
            return 2;
        }
        if (!ra->dirarg)
            ra->dirarg = a;
        if (!ra->o.inputs)
            ra->o.inputs = a;
    } else {
        char why[160];
        if (mw_raw_check(a, why, sizeof why)) {
            fprintf(stderr, "memwatch report: %s: %s\n", esc(a), why);
            return 2;
        }
        char **nf = realloc(ra->files, (ra->n + 1) * sizeof *ra->files);
        if (!nf)
            return 1;
        ra->files = nf;
        ra->files[ra->n++] = strdup(a);
    }
    return -1;
}

/* One option op (its row in report_opts) with its value val. -1 to go on,
 * else the exit status (0 after --help). */
static int rep_opt(const mw_opt *op, const char *val, struct rep_args *ra)
{
    const char *a = op->l;
    double d;
    switch (op->id) {
    case RO_HELP:
        usage(stdout);
        return 0;
    case RO_JSON:
        ra->json = 1;
        break;
    case RO_QUIET:
        ra->quiet = 1;
        break;
    case RO_NO_SYMBOLS:
        ra->o.no_symbols = 1;
        break;
    case RO_NO_WAIT:
        ra->wait = 0;
        break;
    case RO_GROUP:
        ra->group = 1;
        break;
    case RO_ALL_RUNS:
        ra->all_runs = 1;
        break;
    case RO_RUN:
        ra->run_sel = val;
        break;
    case RO_DB:
        ra->out = val;
        if (!*ra->out) {
            fprintf(stderr, "memwatch report: --db: an empty file name\n");
            return 2;
        }
        break;
    case RO_OUTPUT:
        /* the old spelling: -o is a directory for record, so report's
         * database is --db now */
        fprintf(stderr,
                "memwatch report: -o and --output are spelled --db now (the database to "
                "write; the summary goes to standard output); writing the database to %s\n",
                esc(val));
        ra->out = val;
        break;
    case RO_BY:
        ra->by = val;
        if (!mw_report_by_known(ra->by)) {
            fprintf(stderr, "memwatch report: --by %s: expected %s\n", ra->by,
                    mw_report_by_names());
            return 2;
        }
        break;
    case RO_TOP:
        if (num_opt(a, val, 1, 1000000, 1, &d))
            return 2;
        ra->top = (int)d;
        break;
    case RO_PRECISE:
        if (num_opt(a, val, 1e-3, 1e9, 0, &d))
            return 2;
        ra->o.threshold = d;
        break;
    case RO_PROFILE:
        ra->o.profile_path = val;
        if (*ra->o.profile_path && access(ra->o.profile_path, R_OK)) {
            fprintf(stderr, "memwatch report: --profile %s: %s\n", ra->o.profile_path,
                    strerror(errno));
            return 2;
        }
        break;
    case RO_RANK:
    case RO_PID: {
        long v;
        if (mw_parse_long(val, &v) < 0 || v < 0) {
            fprintf(stderr, "memwatch report: %s '%s' is invalid: expected a whole number\n", a,
                    val);
            return 2;
        }
        if (op->id == RO_RANK)
            ra->filter.has_rank = 1, ra->filter.rank = v;
        else
            ra->filter.has_pid = 1, ra->filter.pid = v;
        break;
    }
    case RO_HOST:
        ra->filter.host = val;
        break;
    case RO_HTML:
        ra->html = val;
        break;
    case RO_DEBUG_DIR:
        ra->o.debug_dirs = val;
        break;
    case RO_SORT:
        ra->view.sort = val;
        if (!mw_report_sort_known(ra->view.sort)) {
            char keys[128];
            fprintf(stderr, "memwatch report: --sort '%s' is invalid: expected one of %s\n",
                    ra->view.sort, mw_report_sort_names(keys, sizeof keys));
            return 2;
        }
        break;
    case RO_CALLERS:
        ra->view.callers = val;
        break;
    }
    return -1;
}

/* The command line into ra, and the rules between its options: -1 to go on,
 * else the exit status. */
static int rep_parse(int argc, char **argv, struct rep_args *ra)
{
    for (int i = 1; i < argc;) {
        const char *val;
        int rc;
        const mw_opt *op = mw_opt_next("report", report_opts, MW_OPT_N(report_opts), argc, argv,
                                       &i, &val, &rc);
        int r;
        if (op)
            r = rep_opt(op, val, ra);
        else if (rc == 2)
            return 2;
        else if (rc == -2) /* "--": inputs only */
            for (r = -1, i++; i < argc && r < 0; i++)
                r = rep_input(argv[i], ra);
        else
            r = rep_input(argv[i++], ra);
        if (r >= 0)
            return r;
    }
    if (ra->n == 0) {
        usage(stderr);
        return 2;
    }
    if (ra->run_sel && ra->all_runs) {
        fprintf(stderr, "memwatch report: --run and --all-runs contradict each other\n");
        return 2;
    }
    return -1;
}

/* What the ingest did, on stderr (the counts, damaged files, files left out). */
static void rep_stats_print(const mw_report_stats *st, const struct rep_args *ra)
{
    if (!ra->quiet)
        fprintf(stderr,
                "memwatch: %llu file(s), %llu records, %llu samples, %llu code addresses in "
                "%.2f s -> %s\n",
                (unsigned long long)st->files, (unsigned long long)st->records,
                (unsigned long long)st->samples, (unsigned long long)st->pcs, st->seconds,
                ra->out);
    if (!ra->quiet && st->unwound)
        fprintf(stderr, "memwatch: %llu stacks unwound from DWARF (%.1f us of CPU each), %llu "
                        "stacks truncated\n",
                (unsigned long long)st->unwound, 1e6 * st->unwind_seconds / (double)st->unwound,
                (unsigned long long)st->truncated);
    if (st->files_damaged)
        fprintf(stderr,
                "memwatch: %llu file(s) damaged or unreadable: read up to the damage (see the "
                "processes table, column status)\n",
                (unsigned long long)st->files_damaged);
    if (st->files_no_trailer)
        fprintf(stderr, "memwatch: %llu file(s) without trailer: those processes did not end "
                        "normally\n",
                (unsigned long long)st->files_no_trailer);
    if (ra->refused)
        fprintf(stderr, "memwatch: %u file(s) named .mwr left out: not raw files (see above)\n",
                ra->refused);
}

/* The database ra->out made from the raw files, through sw, unless it holds
 * them already with the same options: 0, or 1 with the reason said. */
static int rep_ingest(struct rep_args *ra, mw_db_swap *sw)
{
    mw_report_opts *o = &ra->o;
    const char *out = ra->out;
    /* files this command creates: the owner's only, or the group's too */
    umask(ra->group ? 027 : 077);
    char okey[3 * PATH_MAX], fkey[3 * PATH_MAX], defprof[PATH_MAX];
    const char *kprof = o->profile_path;
    if (!kprof && mw_profile_default_path(defprof, sizeof defprof) == 0)
        kprof = defprof;
    /* --sort comm alone needs no stacks: the ingest skips the offline
     * unwinding, and a database with whole stacks serves it as well */
    o->leaf_only =
        ra->view.sort && !strcmp(ra->view.sort, "comm") && !ra->view.callers && !ra->html;
    if (mw_report_sources_key(okey, sizeof okey, o, kprof && *kprof ? kprof : NULL))
        okey[0] = 0; /* no key: never read as it is */
    mw_report_opts full = *o;
    full.leaf_only = 0;
    fkey[0] = 0;
    if (o->leaf_only &&
        mw_report_sources_key(fkey, sizeof fkey, &full, kprof && *kprof ? kprof : NULL))
        fkey[0] = 0;
    const char *const *files = (const char *const *)ra->files;
    if (((okey[0] && mw_report_sources_match(out, files, ra->n, okey)) ||
         (fkey[0] && mw_report_sources_match(out, files, ra->n, fkey))) &&
        mw_db_swap_keep(sw, ra->group ? 0640 : 0600) == 0) {
        /* the same raw files, unchanged, the same options: nothing to ingest */
        if (!ra->quiet)
            fprintf(stderr, "memwatch: %s already holds these %zu file(s), unchanged: not "
                            "ingested again\n",
                    out, ra->n);
        return 0;
    }
    o->db_path = sw->tmp;
    if (!ra->quiet && isatty(STDERR_FILENO))
        o->progress = progress;
    mw_report_stats st;
    int e = mw_report_ingest(files, ra->n, o, &st);
    if (!e && mw_report_sources_write(sw->tmp, files, ra->n, okey))
        fprintf(stderr, "memwatch report: could not note the inputs in the database: the next "
                        "report ingests them again\n");
    if (e) {
        fprintf(stderr, "memwatch report: %s; %s left as it was\n", mw_strerror(e), out);
        mw_db_swap_abort(sw);
        return 1;
    }
    char why[256];
    if (mw_db_swap_commit(sw, ra->group ? 0640 : 0600, why, sizeof why)) {
        fprintf(stderr, "memwatch report: cannot put the new database in place as %s: %s\n",
                out, why);
        return 1;
    }
    rep_stats_print(&st, ra);
    return 0;
}

/* What the database shows: the summary or a view, the --by table and the
 * HTML report; 0, or 1 when one of them failed. */
static int rep_show(struct rep_args *ra)
{
    int rc = 0;
    const char *out = ra->out;
    if (!ra->quiet && (ra->view.sort || ra->view.callers)) {
        ra->view.top = ra->top;
        ra->view.json = ra->json;
        ra->view.filter = &ra->filter;
        if (mw_report_view_print(out, stdout, &ra->view) != 0)
            rc = 1;
    } else if (!ra->quiet &&
               mw_report_summary_view(out, stdout, ra->json, ra->top, &ra->filter) != 0) {
        rc = 1;
    }
    if (!ra->quiet && !ra->json && ra->by && mw_report_by(out, stdout, ra->by, ra->top) != 0)
        rc = 1;
    if (ra->html) {
        mw_html_opts ho = {ra->filter, ra->top > 10 ? ra->top : 0, ra->o.profile_path};
        int he = mw_report_html(out, ra->html, &ho);
        if (he) {
            fprintf(stderr, "memwatch report: cannot write the HTML report %s: %s\n", ra->html,
                    mw_strerror(he));
            rc = 1;
        } else if (!ra->quiet) {
            fprintf(stderr, "memwatch: HTML report -> %s\n", ra->html);
        }
    }
    return rc;
}

int mw_cmd_report(int argc, char **argv)
{
    struct rep_args ra = {.top = 10, .wait = 1};
    int rc;
    char run[64] = "", inputs[PATH_MAX + 96];
    char dbbuf[PATH_MAX];
    mw_db_swap sw = {.lock_fd = -1};
    if ((rc = rep_parse(argc, argv, &ra)) >= 0)
        goto done;
    if ((rc = pick_run(ra.files, &ra.n, ra.run_sel, ra.all_runs, run, sizeof run)))
        goto done;
    rc = 1;
    if (run[0]) {
        snprintf(inputs, sizeof inputs, "%s (run %s)", ra.o.inputs ? ra.o.inputs : ra.files[0],
                 run);
        ra.o.inputs = inputs;
    }
    if (!ra.out) {
        char tmp[PATH_MAX];
        if (ra.dirarg) {
            snprintf(dbbuf, sizeof dbbuf, "%s/memwatch.db", ra.dirarg);
        } else {
            snprintf(tmp, sizeof tmp, "%s", ra.files[0]);
            snprintf(dbbuf, sizeof dbbuf, "%s/memwatch.db", dirname(tmp));
        }
        ra.out = dbbuf;
    }
    {
        char why[256];
        int e = mw_db_swap_begin(&sw, ra.out, ra.wait, ra.quiet ? NULL : waiting, why,
                                 sizeof why);
        if (e) {
            fprintf(stderr, "memwatch report: %s: %s\n", ra.out, why);
            rc = e == -EWOULDBLOCK ? 1 : 2; /* busy; else the database named is unusable */
            goto done;
        }
    }
    if (rep_ingest(&ra, &sw) == 0)
        rc = rep_show(&ra);
done:
    mw_db_swap_end(&sw);
    for (size_t i = 0; i < ra.n; i++)
        free(ra.files[i]);
    free(ra.files);
    return rc;
}
