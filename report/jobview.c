/*
 * report/jobview.c: the job-wide view of a report of several processes (MPI
 * ranks, hosts): one row per process and one per host with the share of time
 * bandwidth-bound, the measured time, samples and the top source line, and
 * the imbalance ("rank 7 on nodeB is bound 80.0% of its time, the median
 * rank 10.0%"). Used by the summary (text, JSON) and the HTML report.
 *
 * A process's row holds what that process's own report says (memwatch report
 * --pid P): the same share, time, samples and top line.
 *
 * May call: SQLite, cJSON, libc. Threading: reentrant.
 */
#include "jobview_int.h"
#include "region.h"
#include "view_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* r's "top_line" from the row of s, its columns from c on: file, line,
 * function, samples; scope flagged or overall. */
static void add_top_line(cJSON *r, int flagged, sqlite3_stmt *s, int c)
{
    cJSON *t = cJSON_AddObjectToObject(r, "top_line");
    cJSON_AddStringToObject(t, "scope", flagged ? "flagged" : "overall");
    if (sqlite3_column_type(s, c) == SQLITE_TEXT)
        cJSON_AddStringToObject(t, "file", (const char *)sqlite3_column_text(s, c));
    cJSON_AddNumberToObject(t, "line", (double)sqlite3_column_int64(s, c + 1));
    if (sqlite3_column_type(s, c + 2) == SQLITE_TEXT)
        cJSON_AddStringToObject(t, "function", (const char *)sqlite3_column_text(s, c + 2));
    cJSON_AddNumberToObject(t, "samples", (double)sqlite3_column_int64(s, c + 3));
}

/* Per process: the top line among the samples the summary ranks, inside
 * flagged intervals when any (precise ones where the process has them,
 * else timer ones), else overall. */
static void top_lines(sqlite3 *db, cJSON *procs)
{
    static const char *const q[2] = {
        /* flagged: the source the process's own summary would pick */
        "WITH pp AS (SELECT process_id AS id, MAX(source = 'precise' AND sel > 0) AS pr"
        " FROM pcc GROUP BY 1)"
        " SELECT x.process_id, p.file, p.line, p.function, SUM(x.sel) AS n FROM pcc x"
        " JOIN pp ON pp.id = x.process_id JOIN pcs p ON p.id = x.pc_id WHERE x.sel > 0 AND"
        " x.source = (CASE WHEN pp.pr THEN 'precise' ELSE 'timer' END)"
        " GROUP BY x.process_id, p.file, p.line, p.function"
        " ORDER BY x.process_id, n DESC, p.file, p.line",
        "WITH pp AS (SELECT process_id AS id, MAX(source = 'precise') AS pr FROM pcc GROUP BY 1)"
        " SELECT x.process_id, p.file, p.line, p.function, SUM(x.n) AS n FROM pcc x"
        " JOIN pp ON pp.id = x.process_id JOIN pcs p ON p.id = x.pc_id WHERE"
        " x.source = (CASE WHEN pp.pr THEN 'precise' ELSE 'timer' END)"
        " GROUP BY x.process_id, p.file, p.line, p.function"
        " ORDER BY x.process_id, n DESC, p.file, p.line"};
    for (int k = 0; k < 2; k++) {
        sqlite3_stmt *s;
        if (sqlite3_prepare_v2(db, q[k], -1, &s, NULL) != SQLITE_OK)
            continue;
        int64_t last = -1;
        while (sqlite3_step(s) == SQLITE_ROW) {
            int64_t id = sqlite3_column_int64(s, 0);
            if (id == last)
                continue;
            last = id;
            cJSON *r;
            cJSON_ArrayForEach(r, procs)
            {
                if ((int64_t)cJSON_GetObjectItem(r, "id")->valuedouble != id ||
                    cJSON_GetObjectItem(r, "top_line"))
                    continue;
                add_top_line(r, k == 0, s, 1);
            }
        }
        sqlite3_finalize(s);
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* One row per process: its ids, host, measured and bound time, intervals
 * and wall time; 0 when the query cannot be prepared. */
static int jv_process_rows(sqlite3 *db, cJSON *procs)
{
    sqlite3_stmt *s;
    /* one pass over the intervals (no index on process_id: a subquery per
     * process would scan them once per process); the time is the measured
     * time, the intervals with a latency reading (flags & 2), as the summary's */
    const char *q =
        "SELECT p.id, p.pid, p.rank, COALESCE(p.hostname, '?'), p.exe, COALESCE(iv.tot, 0),"
        " COALESCE(iv.fl, 0), COALESCE(iv.n, 0), COALESCE(iv.nf, 0), p.t_start, p.t_end"
        " FROM processes p LEFT JOIN (SELECT process_id,"
        "  SUM(CASE WHEN flags & 2 THEN t_end - t_start ELSE 0 END) AS tot,"
        "  SUM(CASE WHEN bw_bound = 1 THEN t_end - t_start ELSE 0 END) AS fl, COUNT(*) AS n,"
        "  SUM(bw_bound = 1) AS nf FROM intervals GROUP BY process_id) iv"
        " ON iv.process_id = p.id"
        " ORDER BY p.rank IS NULL, p.rank, p.hostname, p.pid, p.id";
    if (sqlite3_prepare_v2(db, q, -1, &s, NULL) != SQLITE_OK)
        return 0;
    while (sqlite3_step(s) == SQLITE_ROW) {
        cJSON *r = cJSON_CreateObject();
        cJSON_AddNumberToObject(r, "id", (double)sqlite3_column_int64(s, 0));
        cJSON_AddNumberToObject(r, "pid", (double)sqlite3_column_int64(s, 1));
        if (sqlite3_column_type(s, 2) == SQLITE_INTEGER)
            cJSON_AddNumberToObject(r, "rank", (double)sqlite3_column_int64(s, 2));
        cJSON_AddStringToObject(r, "host", (const char *)sqlite3_column_text(s, 3));
        if (sqlite3_column_type(s, 4) == SQLITE_TEXT)
            cJSON_AddStringToObject(r, "exe", (const char *)sqlite3_column_text(s, 4));
        double tot = (double)sqlite3_column_int64(s, 5), fl = (double)sqlite3_column_int64(s, 6);
        cJSON_AddNumberToObject(r, "time_ns", tot);
        cJSON_AddNumberToObject(r, "flagged_ns", fl);
        cJSON_AddNumberToObject(r, "share", tot > 0 ? fl / tot : 0);
        cJSON_AddNumberToObject(r, "intervals", (double)sqlite3_column_int64(s, 7));
        cJSON_AddNumberToObject(r, "flagged_intervals", (double)sqlite3_column_int64(s, 8));
        cJSON_AddNumberToObject(r, "wall_ns",
                                (double)(sqlite3_column_int64(s, 10) - sqlite3_column_int64(s, 9)));
        cJSON_AddItemToArray(procs, r);
    }
    sqlite3_finalize(s);
    return 1;
}

/* Each process's samples and samples in flagged intervals (0 where none). */
static void jv_process_samples(sqlite3 *db, cJSON *procs)
{
    sqlite3_stmt *s;
    /* samples per process (one scan) */
    if (sqlite3_prepare_v2(db,
                           "SELECT process_id, SUM(n), SUM(fl) FROM pcc GROUP BY 1",
                           -1, &s, NULL) == SQLITE_OK) {
        while (sqlite3_step(s) == SQLITE_ROW) {
            cJSON *r;
            cJSON_ArrayForEach(r, procs) if ((int64_t)cJSON_GetObjectItem(r, "id")->valuedouble ==
                                             sqlite3_column_int64(s, 0))
            {
                cJSON_AddNumberToObject(r, "samples", (double)sqlite3_column_int64(s, 1));
                cJSON_AddNumberToObject(r, "in_flagged", (double)sqlite3_column_int64(s, 2));
            }
        }
        sqlite3_finalize(s);
    }
    cJSON *r;
    cJSON_ArrayForEach(r, procs) if (!cJSON_GetObjectItem(r, "samples"))
    {
        cJSON_AddNumberToObject(r, "samples", 0);
        cJSON_AddNumberToObject(r, "in_flagged", 0);
    }
}

/* One row per host: its processes, time, bound time, samples and largest share. */
static void jv_host_rows(const cJSON *procs, cJSON *hosts)
{
    cJSON *r;
    cJSON_ArrayForEach(r, procs)
    {
        const char *h = cJSON_GetObjectItem(r, "host")->valuestring;
        static const char *const sums[] = {"time_ns", "flagged_ns", "samples", NULL};
        cJSON *hr = mw_summary_group_add(hosts, "host", h, sums, r);
        if (!cJSON_GetObjectItem(hr, "max_share")) /* a new host */
            cJSON_AddNumberToObject(hr, "max_share", 0);
        double sh = cJSON_GetObjectItem(r, "share")->valuedouble;
        if (sh > cJSON_GetObjectItem(hr, "max_share")->valuedouble)
            cJSON_SetNumberValue(cJSON_GetObjectItem(hr, "max_share"), sh);
    }
}

/* Each host's share and top line. */
static void jv_host_top_lines(sqlite3 *db, cJSON *hosts)
{
    sqlite3_stmt *s;
    /* per host share and top line (the host's most-sampled process top line
     * is not the host's: count again over the host's processes) */
    cJSON *hr;
    cJSON_ArrayForEach(hr, hosts)
    {
        double t = cJSON_GetObjectItem(hr, "time_ns")->valuedouble;
        cJSON_AddNumberToObject(hr, "share",
                                t > 0 ? cJSON_GetObjectItem(hr, "flagged_ns")->valuedouble / t : 0);
        const char *h = cJSON_GetObjectItem(hr, "host")->valuestring;
        const char *hq =
            "SELECT p.file, p.line, p.function, SUM(CASE WHEN ?2 THEN x.sel ELSE x.n END) AS n"
            " FROM pcc x JOIN processes q ON q.id = x.process_id JOIN pcs p ON p.id = x.pc_id"
            " WHERE COALESCE(q.hostname, '?') = ?1 AND x.source IN ('timer', 'precise') AND"
            " (?2 = 0 OR x.sel > 0) GROUP BY p.file, p.line, p.function"
            " ORDER BY n DESC, p.file, p.line LIMIT 1";
        for (int sel = 1; sel >= 0; sel--) {
            if (cJSON_GetObjectItem(hr, "top_line"))
                break;
            if (sqlite3_prepare_v2(db, hq, -1, &s, NULL) != SQLITE_OK)
                continue;
            sqlite3_bind_text(s, 1, h, -1, SQLITE_STATIC);
            sqlite3_bind_int(s, 2, sel);
            if (sqlite3_step(s) == SQLITE_ROW)
                add_top_line(hr, sel, s, 0);
            sqlite3_finalize(s);
        }
    }
}

/* The imbalance of an MPI job's ranks, where there are several and one was bound. */
static void jv_imbalance(cJSON *jv, const cJSON *procs)
{
    cJSON *r;
    /* imbalance: the most bound rank against the median one, among the
     * ranks of an MPI job (not the launcher, not its helpers), and only
     * where a rank was bound at all: the processes of a build or of a shell
     * script are no job whose balance means anything */
    int n = 0, bound = 0;
    cJSON_ArrayForEach(r, procs)
    {
        if (!cJSON_GetObjectItem(r, "rank"))
            continue;
        n++;
        bound |= cJSON_GetObjectItem(r, "share")->valuedouble > 0;
    }
    if (n > 1 && bound) {
        double *sh = malloc((size_t)n * sizeof *sh);
        cJSON *worst = NULL;
        int k = 0;
        cJSON_ArrayForEach(r, procs)
        {
            if (!cJSON_GetObjectItem(r, "rank"))
                continue;
            sh[k++] = cJSON_GetObjectItem(r, "share")->valuedouble;
            if (!worst || cJSON_GetObjectItem(r, "share")->valuedouble >
                              cJSON_GetObjectItem(worst, "share")->valuedouble)
                worst = r;
        }
        qsort(sh, (size_t)n, sizeof *sh, cmp_double);
        double med = n % 2 ? sh[n / 2] : (sh[n / 2 - 1] + sh[n / 2]) / 2;
        cJSON *im = cJSON_AddObjectToObject(jv, "imbalance");
        cJSON_AddNumberToObject(im, "median_share", med);
        cJSON_AddNumberToObject(im, "max_share", sh[n - 1]);
        cJSON_AddNumberToObject(im, "min_share", sh[0]);
        cJSON_AddItemToObject(im, "most_bound", cJSON_Duplicate(worst, 1));
        char text[512];
        mwv_jobview_sentence(im, text, sizeof text);
        cJSON_AddStringToObject(im, "text", text);
        free(sh);
    }
}

cJSON *mwv_jobview(sqlite3 *db)
{
    mwv_pcc(db);
    cJSON *jv = cJSON_CreateObject();
    cJSON *procs = cJSON_AddArrayToObject(jv, "processes");
    if (!jv_process_rows(db, procs))
        return jv;
    jv_process_samples(db, procs);
    top_lines(db, procs);

    /* hosts */
    cJSON *hosts = cJSON_AddArrayToObject(jv, "hosts");
    jv_host_rows(procs, hosts);
    jv_host_top_lines(db, hosts);
    jv_imbalance(jv, procs);
    return jv;
}

static double jnum(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItem(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : 0;
}
static const char *jstr(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItem(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

void mwv_jobview_who(const cJSON *p, char *buf, size_t n)
{
    if (cJSON_GetObjectItem(p, "rank"))
        snprintf(buf, n, "rank %.0f on %s", jnum(p, "rank"), jstr(p, "host") ? jstr(p, "host") : "?");
    else
        snprintf(buf, n, "pid %.0f on %s", jnum(p, "pid"), jstr(p, "host") ? jstr(p, "host") : "?");
}

void mwv_jobview_line(const cJSON *p, char *buf, size_t n)
{
    const cJSON *t = cJSON_GetObjectItem(p, "top_line");
    if (!t) {
        snprintf(buf, n, "-");
        return;
    }
    const char *f = jstr(t, "file");
    const char *b = f ? strrchr(f, '/') : NULL;
    if (f)
        snprintf(buf, n, "%s:%.0f %s%s", b ? b + 1 : f, jnum(t, "line"),
                 jstr(t, "function") ? jstr(t, "function") : "?",
                 strcmp(jstr(t, "scope") ? jstr(t, "scope") : "", "flagged") ? " (overall)" : "");
    else
        snprintf(buf, n, "%s%s", jstr(t, "function") ? jstr(t, "function") : "(no line info)",
                 strcmp(jstr(t, "scope") ? jstr(t, "scope") : "", "flagged") ? " (overall)" : "");
}

void mwv_jobview_sentence(const cJSON *im, char *buf, size_t n)
{
    const cJSON *w = cJSON_GetObjectItem(im, "most_bound");
    char who[256];
    mwv_jobview_who(w, who, sizeof who);
    snprintf(buf, n, "%s is bound %.1f%% of its time, the median %s %.1f%%", who,
             100 * jnum(w, "share"), cJSON_GetObjectItem(w, "rank") ? "rank" : "process",
             100 * jnum(im, "median_share"));
}

void mwv_jobview_text(FILE *f, const cJSON *jv)
{
    const cJSON *procs = cJSON_GetObjectItem(jv, "processes"), *r;
    const cJSON *hosts = cJSON_GetObjectItem(jv, "hosts");
    int np = cJSON_GetArraySize(procs), nh = cJSON_GetArraySize(hosts);
    if (np < 2)
        return;
    fprintf(f, "\nPer rank/process (%d processes on %d host%s)\n", np, nh, nh == 1 ? "" : "s");
    fprintf(f, "  %5s %-14s %8s %9s %6s %9s  %s\n", "rank", "host", "pid", "time s", "bound",
            "samples", "top line (inside flagged intervals)");
    cJSON_ArrayForEach(r, procs)
    {
        char rk[16] = "-", line[400];
        if (cJSON_GetObjectItem(r, "rank"))
            snprintf(rk, sizeof rk, "%.0f", jnum(r, "rank"));
        mwv_jobview_line(r, line, sizeof line);
        fprintf(f, "  %5s %-14.14s %8.0f %9.2f %5.1f%% %9.0f  %s\n", rk,
                jstr(r, "host") ? jstr(r, "host") : "?", jnum(r, "pid"), jnum(r, "time_ns") / 1e9,
                100 * jnum(r, "share"), jnum(r, "samples"), line);
    }
    const cJSON *im = cJSON_GetObjectItem(jv, "imbalance");
    if (im)
        fprintf(f, "  imbalance: %s\n", jstr(im, "text") ? jstr(im, "text") : "");
    if (nh < 2)
        return;
    fprintf(f, "\nPer host\n  %-14s %9s %9s %6s %10s %9s  %s\n", "host", "processes", "time s",
            "bound", "worst proc", "samples", "top line");
    cJSON_ArrayForEach(r, hosts)
    {
        char line[400];
        mwv_jobview_line(r, line, sizeof line);
        fprintf(f, "  %-14.14s %9.0f %9.2f %5.1f%% %9.1f%% %9.0f  %s\n",
                jstr(r, "host") ? jstr(r, "host") : "?",
                jnum(r, "processes"), jnum(r, "time_ns") / 1e9, 100 * jnum(r, "share"),
                100 * jnum(r, "max_share"), jnum(r, "samples"), line);
    }
}
