/*
 * report/html_int.h: what the parts of the HTML report (docs/html.md) share:
 * html.c (the page, its tables, the icicle), html_timeline.c (the timeline
 * of each process), html_profile.c (the machine profile's curve, the
 * calibration page) and html_region.c (regions, through region.h).
 * Internal to report/.
 */
#ifndef MW_REPORT_HTML_INT_H
#define MW_REPORT_HTML_INT_H

#include "view_int.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

/* The page's style sheet and its script (hover readout, icicle zoom). */
extern const char mwh_css[];
extern const char mwh_js[];

/* html_timeline.c: a lane per process (loaded latency against the
 * threshold, DRAM bandwidth, flagged intervals, GPU kernels, regions), job
 * the job view for rank labels (or NULL). */
void mwh_timeline(FILE *f, sqlite3 *db, cJSON *job);

/* html_levels.c: the page's verdict (bandwidth-bound share, or the memory
 * load where memory could not saturate; the band; the levels) of nproc
 * processes and nsamp samples, and the threshold notes (META
 * threshold_note), one paragraph each. */
void mwh_verdict(FILE *f, sqlite3 *db, int nproc, int64_t nsamp);
void mwh_threshold_notes(FILE *f, sqlite3 *db);

/* html_profile.c: the machine profile the recording used (want: its path,
 * or NULL for the one the database names): the latency-versus-bandwidth
 * curve with the threshold and the methods' verdicts. */
void mwh_profile_section(FILE *f, sqlite3 *db, const char *want);

/* s escaped for HTML text and attributes */
static inline void h(FILE *f, const char *s)
{
    mwv_html_str(f, s);
}

static inline void fmt_dur(char *b, size_t n, double s)
{
    if (s >= 3600)
        snprintf(b, n, "%.0f h %02.0f min", floor(s / 3600), fmod(s, 3600) / 60);
    else if (s >= 100)
        snprintf(b, n, "%.0f min %02.0f s", floor(s / 60), fmod(s, 60));
    else if (s >= 1)
        snprintf(b, n, "%.2f s", s);
    else
        snprintf(b, n, "%.1f ms", s * 1e3);
}

static inline const char *col_text(sqlite3_stmt *s, int i)
{
    return sqlite3_column_type(s, i) == SQLITE_TEXT ? (const char *)sqlite3_column_text(s, i)
                                                    : NULL;
}

/* "nice" axis step for a maximum */
static inline double nice_max(double v)
{
    if (v <= 0)
        return 1;
    double m = pow(10, floor(log10(v)));
    for (int k = 1; k <= 10; k++) {
        static const double steps[] = {1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10};
        if (steps[k] * m >= v)
            return steps[k] * m;
    }
    return 10 * m;
}

#endif
