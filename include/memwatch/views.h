/*
 * memwatch views: what is built from a report database (docs/report-schema.md)
 * besides the summary: the HTML report (docs/html.md), the exports for other
 * tools (pprof, Chrome trace-event JSON for Perfetto and speedscope, folded
 * stacks, CSV; docs/export.md) and the summary narrowed to some processes with
 * its per-rank and per-host tables.
 *
 * Every view reads the database only and can be narrowed to some processes
 * (an MPI rank, a host, a pid). Every output is written to a temporary file
 * beside the destination and renamed over it when complete: a failure leaves
 * no half-written file and an existing one untouched.
 *
 * Threading: reentrant; each call opens its own read-only connection.
 */
#ifndef MEMWATCH_VIEWS_H
#define MEMWATCH_VIEWS_H

#include <memwatch/memwatch.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Which processes a view covers. The zero value covers all. */
typedef struct mw_view_filter {
    int has_rank, has_pid;
    long rank;        /* processes.rank (MPI rank) */
    long pid;         /* processes.pid */
    const char *host; /* processes.hostname; NULL: any */
} mw_view_filter;

typedef struct mw_export_opts {
    mw_view_filter filter;
    int flagged_only;   /* folded, pprof: only samples inside flagged intervals */
    const char *source; /* folded, pprof: only samples of this source (timer, fault,
                           precise); NULL: all */
    const char *table;  /* csv: "intervals" (default), "lines" or "regions" */
    int top;            /* csv lines: rows (0: all) */
    int region_root;    /* folded: each stack under its regions ("region:NAME" frames) */
} mw_export_opts;

/* One export format: a row of report/export.c's table. Adding a format is
 * one row there plus its writer (docs/architecture.md, "Adding an export format: a worked example");
 * `memwatch export --format` takes its name or an alias and its usage text
 * comes from the row. */
struct sqlite3;
typedef struct mw_export_format {
    const char *name;    /* as --format takes it */
    const char *aliases; /* other names --format takes, space-separated ("" none) */
    const char *help;    /* usage: the lines after the name, each ending in "\n" */
    /* the writer; NULL: the HTML report, written from the database's path */
    int (*write)(struct sqlite3 *db, FILE *f, const struct mw_export_opts *o);
} mw_export_format;

/* The formats, ended by a row whose name is NULL. */
MW_API extern const mw_export_format mw_export_format_list[];
/* The format called name, or whose aliases hold it; NULL when none. */
MW_API const mw_export_format *mw_export_format_find(const char *name);
/* "pprof, perfetto, folded, csv, html": the names, into buf. */
MW_API const char *mw_export_format_names(char *buf, size_t n);

/* Write the database's run in a format. Errors (unknown format, unreadable
 * database, unwritable destination, nothing to export) are logged with
 * mw_log and returned as negative codes; the destination is then untouched. */
MW_API int mw_export(const char *db_path, const char *format, const char *out_path,
                     const mw_export_opts *opts);

typedef struct mw_html_opts {
    mw_view_filter filter;
    int top;                  /* rows per table (0: 15) */
    const char *profile_path; /* machine profile for the latency curve; NULL: the one the
                                 recording names in META, else the default path */
} mw_html_opts;

/* The self-contained HTML report of a database (docs/html.md). */
MW_API int mw_report_html(const char *db_path, const char *out_path, const mw_html_opts *opts);

/* `memwatch calibrate --html`: a page of a calibration: the machine profile
 * (curve, threshold, method verdicts) and the plots mw_calib_results_write_plots
 * drew into plot_dir (NULL: none), inline. */
MW_API int mw_calib_html(const char *out_path, const char *profile_path, const char *plot_dir);

/* The summary (text or JSON, as mw_report_summary) narrowed by a filter, with
 * the per-rank and per-host tables of a job of several processes. */
MW_API int mw_report_summary_view(const char *db_path, FILE *out, int json, int top,
                                  const mw_view_filter *filter);

#ifdef __cplusplus
}
#endif
#endif
