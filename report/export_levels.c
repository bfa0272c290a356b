/*
 * report/export_levels.c: the memory-load levels in the Chrome trace-event
 * export (docs/export.md): per process a track "memory load level" whose
 * slices are runs of intervals of one level (and one side of the
 * threshold's uncertainty band), and a counter "memory load share" (the
 * interval's estimated share of the calibrated peak bandwidth).
 *
 * May call: SQLite, libc, report/view.c, report/summary_levels.c.
 * Threading: reentrant.
 */
#include "export_int.h"
#include "levels_int.h"

#include <errno.h>
#include <string.h>

/* A run of intervals of one process, level and band side. */
typedef struct lvl_run {
    int64_t proc, start, end, n;
    char level[16];
    int in_band;
} lvl_run;

static void sep(FILE *f, int *first)
{
    if (!*first)
        fputs(",\n", f);
    *first = 0;
}

static void us(FILE *f, int64_t ns)
{
    fprintf(f, "%.3f", (double)ns / 1000.0);
}

/* The run as one slice on its process's level track; the run emptied. */
static void flush_run(FILE *f, int *first, lvl_run *r)
{
    if (r->n == 0)
        return;
    sep(f, first);
    fprintf(f,
            "{\"ph\":\"X\",\"cat\":\"memwatch,level%s\",\"name\":\"%s%s\",\"pid\":%lld,"
            "\"tid\":%ld,\"ts\":",
            r->in_band ? ",in-band" : "", r->level, r->in_band ? " (in the threshold's band)" : "",
            (long long)r->proc, MWX_LEVEL_TID);
    us(f, r->start);
    fputs(",\"dur\":", f);
    us(f, r->end - r->start);
    fprintf(f, ",\"args\":{\"level\":\"%s\",\"in_band\":%d,\"intervals\":%lld}}", r->level,
            r->in_band, (long long)r->n);
    r->n = 0;
}

/* Names the level track of every process that has a level or a band mark. */
static void name_tracks(sqlite3 *db, FILE *f, int *first)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db,
                           "SELECT DISTINCT process_id FROM intervals WHERE level IS NOT NULL"
                           " OR in_band = 1 ORDER BY process_id",
                           -1, &s, NULL) != SQLITE_OK)
        return;
    while (sqlite3_step(s) == SQLITE_ROW) {
        sep(f, first);
        fprintf(f,
                "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%lld,\"tid\":%ld,"
                "\"args\":{\"name\":\"memory load level (memwatch intervals)\"}}",
                sqlite3_column_int64(s, 0), MWX_LEVEL_TID);
    }
    sqlite3_finalize(s);
}

int mwx_trace_levels(sqlite3 *db, FILE *f, int *first)
{
    if (!mwv_has_levels(db)) /* a database of schema 1 */
        return 0;
    name_tracks(db, f, first);
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db,
                           "SELECT i.process_id, p.pid, i.t_start + c.off, i.t_end + c.off,"
                           " i.bw_share, i.level, COALESCE(i.in_band, 0) FROM intervals i"
                           " JOIN processes p ON p.id = i.process_id JOIN pclock c ON"
                           " c.process_id = i.process_id ORDER BY i.id",
                           -1, &s, NULL) != SQLITE_OK)
        return -EIO;
    lvl_run run = {0};
    int64_t cur = -1;
    double last = -1;
    while (sqlite3_step(s) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(s, 0), a = sqlite3_column_int64(s, 2),
                b = sqlite3_column_int64(s, 3);
        const char *lv = (const char *)sqlite3_column_text(s, 5);
        int inb = sqlite3_column_int(s, 6) == 1;
        if (id != cur) {
            flush_run(f, first, &run);
            cur = id;
            last = -1;
        }
        if (sqlite3_column_type(s, 4) != SQLITE_NULL && sqlite3_column_double(s, 4) != last) {
            last = sqlite3_column_double(s, 4);
            sep(f, first);
            fprintf(f,
                    "{\"ph\":\"C\",\"name\":\"memory load share\",\"pid\":%lld,\"tid\":%lld,"
                    "\"ts\":",
                    (long long)id, sqlite3_column_int64(s, 1));
            us(f, a);
            fprintf(f, ",\"args\":{\"share\":%.3f}}", last);
        }
        if (!lv && !inb) { /* nothing to mark: the run ends */
            flush_run(f, first, &run);
            continue;
        }
        if (!lv)
            lv = "no level";
        if (run.n &&
            (a > run.end || run.in_band != inb || strncmp(run.level, lv, sizeof run.level)))
            flush_run(f, first, &run);
        if (!run.n) {
            run.proc = id;
            run.start = a;
            run.in_band = inb;
            snprintf(run.level, sizeof run.level, "%s", lv);
        }
        run.end = b;
        run.n++;
    }
    flush_run(f, first, &run);
    sqlite3_finalize(s);
    return 0;
}
