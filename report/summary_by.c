/*
 * report/summary_by.c: mw_report_by, the per-process, per-thread and
 * per-region views of `memwatch report --by` (docs/report.md): one row per
 * process, thread or region with its time, share bandwidth-bound, samples,
 * top function and top data object.
 * May call: SQLite, libc. Writes only to the stream it is given.
 * Threading: reentrant; opens its own read-only connection.
 */
#include <memwatch/report.h>

#include "jobview_int.h"
#include "view_int.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

/* per view: the rows (key columns, then time_ns, measured_ns, bound_ns,
 * samples, and for processes their samples at memory accesses in flagged
 * intervals), and the samples of one row (?1.. the row's keys) */
static const char q_process[] =
    "SELECT p.id, p.pid, COALESCE(p.cmdline, p.exe, CASE WHEN EXISTS (SELECT 1 FROM meta m"
    "   WHERE m.process_id = p.id AND m.key = 'reported_by') THEN '(reported by its parent)'"
    "   ELSE '' END),"
    " COALESCE(p.t_end - p.t_start, 0),"
    " (SELECT COALESCE(SUM(i.t_end - i.t_start), 0) FROM intervals i WHERE i.process_id = p.id"
    "   AND i.flags & 2),"
    " (SELECT COALESCE(SUM(i.t_end - i.t_start), 0) FROM intervals i WHERE i.process_id = p.id"
    "   AND i.bw_bound = 1),"
    " (SELECT COUNT(*) FROM samples s WHERE s.process_id = p.id),"
    /* its decoded samples at memory accesses in flagged intervals: which
     * process's code was accessing memory while memory was saturated */
    " (SELECT COUNT(*) FROM samples s WHERE s.process_id = p.id AND s.at_memory = 1"
    "   AND s.in_flagged = 1)"
    " FROM processes p ORDER BY 6 DESC, 8 DESC, p.rank, p.pid, p.id LIMIT ?1";
static const char w_process[] = "s.process_id = ?1";

/* threads: their CPU time from the kernel (a main thread without a CPU
 * record of its own: the process's less its other threads'), memwatch's own
 * interval thread (named "memwatch") left out; most samples inside flagged
 * intervals first, then most samples */
static const char q_thread[] =
    "SELECT t.process_id, t.tid, p.pid || ' ' || COALESCE(t.name, ''),"
    " CASE WHEN t.user_ns IS NOT NULL THEN t.user_ns + COALESCE(t.system_ns, 0)"
    "  WHEN t.tid = p.pid AND p.user_ns IS NOT NULL THEN MAX(0, p.user_ns"
    "   + COALESCE(p.system_ns, 0) - (SELECT COALESCE(SUM(u.user_ns + COALESCE(u.system_ns, 0)),"
    "   0) FROM threads u WHERE u.process_id = p.id AND u.tid != p.pid))"
    "  ELSE COALESCE(t.t_end - t.t_start, 0) END, 0, 0,"
    " (SELECT COUNT(*) FROM samples s WHERE s.process_id = t.process_id AND s.tid = t.tid)"
    " AS n,"
    " (SELECT COUNT(*) FROM samples s WHERE s.process_id = t.process_id AND s.tid = t.tid"
    "  AND s.in_flagged = 1) AS nf"
    " FROM threads t JOIN processes p ON p.id = t.process_id"
    " WHERE NOT (t.name = 'memwatch' AND t.tid != p.pid)"
    " ORDER BY nf DESC, n DESC, 4 DESC, t.process_id, t.tid LIMIT ?1";
static const char w_thread[] = "s.process_id = ?1 AND s.tid = ?2";

static const char q_region[] =
    "SELECT r.id, 0, r.name, SUM(sp.t_end - sp.t_start), SUM(sp.measured_ns),"
    " SUM(sp.bound_ns),"
    " (SELECT COUNT(*) FROM sample_regions sr WHERE sr.region_id = r.id)"
    " FROM region_spans sp JOIN regions r ON r.id = sp.region_id"
    " GROUP BY r.id ORDER BY 4 DESC LIMIT ?1";
static const char w_region[] = "s.id IN (SELECT sample_id FROM sample_regions WHERE region_id = ?1)";

/* users and cgroups (containers, Slurm jobs): the processes grouped by their
 * META user and cgroup (written by memwatch record's external sampler,
 * docs/attach.md); a row is keyed by the lowest process id of its group.
 * GROUP_OF(X): the group of the process whose id is X */
#define USER_OF(x)                                                                             \
    "COALESCE((SELECT m.value FROM meta m WHERE m.process_id = " x " AND m.key = 'user'),"     \
    " '(not recorded)')"
#define CGROUP_OF(x)                                                                           \
    "COALESCE((SELECT m.value FROM meta m WHERE m.process_id = " x " AND m.key = 'cgroup'),"   \
    " '(not recorded)')"
#define Q_GROUP(of)                                                                            \
    "SELECT MIN(p.id), COUNT(*), g, SUM(COALESCE(p.t_end - p.t_start, 0)),"                    \
    " SUM((SELECT COALESCE(SUM(i.t_end - i.t_start), 0) FROM intervals i"                     \
    "   WHERE i.process_id = p.id AND i.flags & 2)),"                                          \
    " SUM((SELECT COALESCE(SUM(i.t_end - i.t_start), 0) FROM intervals i"                     \
    "   WHERE i.process_id = p.id AND i.bw_bound = 1)),"                                       \
    " SUM((SELECT COUNT(*) FROM samples s WHERE s.process_id = p.id)),"                        \
    " SUM((SELECT COUNT(*) FROM samples s WHERE s.process_id = p.id AND s.at_memory = 1"       \
    "   AND s.in_flagged = 1)) AS nf"                                                          \
    " FROM (SELECT q.*, " of("q.id") " AS g FROM processes q) p"                               \
    " GROUP BY g ORDER BY nf DESC, 6 DESC, 7 DESC, g LIMIT ?1"
#define W_GROUP(of) "s.process_id IN (SELECT q.id FROM processes q WHERE " of("q.id") " = " of("?1") ")"
static const char q_user[] = Q_GROUP(USER_OF), w_user[] = W_GROUP(USER_OF);
static const char q_cgroup[] = Q_GROUP(CGROUP_OF), w_cgroup[] = W_GROUP(CGROUP_OF);

/* How a row's name prints */
enum by_label { BY_COMMAND, BY_THREAD, BY_TEXT, BY_GROUP };

/* One view of --by: a row of by_views */
struct by_view {
    const char *name, *plural; /* --by NAME; "N more PLURAL" */
    const char *rows, *where;  /* the rows; one row's samples (?1, ?2: its keys) */
    const char *count;         /* all rows */
    const char *order;         /* the header's words on the time and the order */
    enum by_label label;
};
static const struct by_view by_views[] = {
    {"process", "processes", q_process, w_process, "SELECT COUNT(*) FROM processes",
     "most bound time first", BY_COMMAND},
    {"thread", "threads", q_thread, w_thread,
     "SELECT COUNT(*) FROM threads t JOIN processes p ON p.id = t.process_id"
     " WHERE NOT (t.name = 'memwatch' AND t.tid != p.pid)",
     "time: CPU time, a main thread's without its own record derived as the process's less its "
     "other threads'; most samples in flagged intervals first",
     BY_THREAD},
    {"region", "regions", q_region, w_region, "SELECT COUNT(*) FROM regions", "longest first",
     BY_TEXT},
    {"user", "users", q_user, w_user, "SELECT COUNT(DISTINCT " USER_OF("q.id") ") FROM processes q",
     "time: the sum of its processes' recorded time; most samples at memory accesses in flagged "
     "intervals first",
     BY_GROUP},
    {"cgroup", "cgroups", q_cgroup, w_cgroup,
     "SELECT COUNT(DISTINCT " CGROUP_OF("q.id") ") FROM processes q",
     "time: the sum of its processes' recorded time; most samples at memory accesses in flagged "
     "intervals first",
     BY_GROUP},
};

const char *mw_report_by_names(void)
{
    return "process, thread, region, user or cgroup";
}

static const struct by_view *by_find(const char *by)
{
    for (size_t i = 0; by && i < sizeof by_views / sizeof by_views[0]; i++)
        if (!strcmp(by, by_views[i].name))
            return &by_views[i];
    return NULL;
}

int mw_report_by_known(const char *by)
{
    return by_find(by) != NULL;
}

/* The one row of HEAD WHERE TAIL (WHERE: the view's condition on the samples
 * of a row, ?1 and ?2 its keys k1 and k2) stepped to, or NULL where the query
 * fails or yields no row. The caller finalizes it (NULL too). */
static sqlite3_stmt *row_query(sqlite3 *db, const char *head, const char *where, const char *tail,
                               int64_t k1, int64_t k2)
{
    char sql[2048];
    sqlite3_stmt *s;
    snprintf(sql, sizeof sql, "%s%s%s", head, where, tail);
    if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK) {
        sqlite3_finalize(s);
        return NULL;
    }
    sqlite3_bind_int64(s, 1, k1);
    if (sqlite3_bind_parameter_count(s) >= 2)
        sqlite3_bind_int64(s, 2, k2);
    if (sqlite3_step(s) != SQLITE_ROW) {
        sqlite3_finalize(s);
        return NULL;
    }
    return s;
}

/* The text of column 0 of a row_query row into buf (unchanged without one),
 * and the statement finalized */
static void row_text(sqlite3_stmt *s, char *buf, size_t n)
{
    if (s && sqlite3_column_text(s, 0))
        snprintf(buf, n, "%s", (const char *)sqlite3_column_text(s, 0));
    sqlite3_finalize(s);
}

/* A row's decoded timer samples (docs/data-addresses.md): *dec of them,
 * *mem at memory accesses, *memfl of those in flagged intervals */
static void mem_of(sqlite3 *db, const char *where, int64_t k1, int64_t k2, double *dec,
                   double *mem, double *memfl)
{
    *dec = *mem = *memfl = 0;
    sqlite3_stmt *s = row_query(db,
                                "SELECT COUNT(*), COALESCE(SUM(s.at_memory = 1), 0),"
                                " COALESCE(SUM(s.at_memory = 1 AND s.in_flagged = 1), 0)"
                                " FROM samples s WHERE ",
                                where, " AND s.at_memory IS NOT NULL", k1, k2);
    if (s) {
        *dec = (double)sqlite3_column_int64(s, 0);
        *mem = (double)sqlite3_column_int64(s, 1);
        *memfl = (double)sqlite3_column_int64(s, 2);
    }
    sqlite3_finalize(s);
}

static void top_of(sqlite3 *db, const char *where, int64_t k1, int64_t k2, char *fn, size_t fnn,
                   char *obj, size_t objn, double *flagged_share)
{
    fn[0] = obj[0] = 0;
    *flagged_share = -1;
    row_text(row_query(db,
                       "SELECT p.function, COUNT(*) AS n FROM samples s JOIN pcs p ON p.id ="
                       " s.pc_id WHERE ",
                       where,
                       " AND s.source = (CASE WHEN EXISTS(SELECT 1 FROM samples WHERE"
                       " source='precise') THEN 'precise' ELSE 'timer' END)"
                       " GROUP BY p.function ORDER BY n DESC LIMIT 1",
                       k1, k2),
             fn, fnn);
    row_text(row_query(db,
                       "SELECT o.name, COUNT(*) AS n FROM samples s JOIN objects o ON o.id ="
                       " s.object_id WHERE ",
                       where, " GROUP BY o.id ORDER BY n DESC LIMIT 1", k1, k2),
             obj, objn);
    /* threads: the share of their timer samples that fell in flagged intervals */
    sqlite3_stmt *s = row_query(db, "SELECT SUM(s.in_flagged), COUNT(*) FROM samples s WHERE ",
                                where, " AND s.source='timer'", k1, k2);
    if (s && sqlite3_column_int64(s, 1) > 0)
        *flagged_share = (double)sqlite3_column_int64(s, 0) / (double)sqlite3_column_int64(s, 1);
    sqlite3_finalize(s);
}

/* A row's name in the view's first column */
static void by_name(const struct by_view *v, const unsigned char *label, int64_t k2, char *name,
                    size_t n)
{
    const char *t = label ? (const char *)label : "";
    if (v->label == BY_COMMAND) {
        /* the command without its directory */
        const char *sp = strchr(t, ' '), *sl = t;
        for (const char *c = t; *c && (!sp || c < sp); c++)
            if (*c == '/')
                sl = c + 1;
        snprintf(name, n, "%lld %.60s", (long long)k2, sl);
    } else if (v->label == BY_THREAD) {
        snprintf(name, n, "%.50s (tid %lld)", t, (long long)k2);
    } else if (v->label == BY_GROUP) {
        /* a long cgroup path: its end says the most (job, step, task) */
        size_t l = strlen(t);
        char cnt[24];
        int w = snprintf(cnt, sizeof cnt, " (%lld)", (long long)k2);
        size_t room = 30 > (size_t)w ? 30 - (size_t)w : 0;
        if (l > room && room > 3)
            snprintf(name, n, "...%s%s", t + l - (room - 3), cnt);
        else
            snprintf(name, n, "%s%s", t, cnt);
    } else {
        snprintf(name, n, "%.70s", t);
    }
}

int mw_report_by(const char *db_path, FILE *out, const char *by, int top)
{
    const struct by_view *v = by_find(by);
    if (!v)
        return -EINVAL;
    const char *q = v->rows, *w = v->where, *title = v->name;
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        sqlite3_close(db);
        return -EIO;
    }
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db, q, -1, &s, NULL) != SQLITE_OK) {
        fprintf(out, "\nBy %s: not in this database (%s)\n", title, sqlite3_errmsg(db));
        sqlite3_close(db);
        return 0;
    }
    sqlite3_bind_int(s, 1, top > 0 ? top : 10);
    /* where the calibration never saw memory saturate nothing is called
     * bound: the column would only print 0 (docs/saturation.md) */
    int sat = mwv_saturation_seen(db) != 0;
    if (!sat)
        fprintf(out, "\nBy %s (no bound column: the machine profile's calibration never saw "
                     "memory saturate, so nothing is called bandwidth-bound)\n",
                title);
    else
        fprintf(out, "\nBy %s (bound: share of the measured time in bandwidth-bound intervals;"
                     " for threads, share of their timer samples in them; %s)\n",
                title, v->order);
    if (v->label == BY_GROUP)
        fprintf(out, "  (%s: from each process's META %s, written by memwatch record -p and "
                     "--all; in parentheses its processes)\n",
                title, title);
    /* (a database of a report before decoding has no at_memory: 0) */
    int decoded = mwv_scalar(db, "SELECT COUNT(*) FROM (SELECT 1 FROM samples WHERE at_memory IS"
                                 " NOT NULL LIMIT 1)") > 0;
    if (decoded)
        fprintf(out, "  (at memory: the share of its decoded timer samples at memory accesses, and "
                     "how many of those fell in flagged intervals; docs/data-addresses.md)\n");
    fprintf(out, "  %-30s %11s %7s %8s  %-28s %s\n", title, "time", sat ? "bound" : "", "samples",
            "top function", decoded ? "top object  [at memory]" : "top object");
    int rows = 0;
    while (sqlite3_step(s) == SQLITE_ROW) {
        int64_t k1 = sqlite3_column_int64(s, 0), k2 = sqlite3_column_int64(s, 1);
        char name[80];
        by_name(v, sqlite3_column_text(s, 2), k2, name, sizeof name);
        double t = (double)sqlite3_column_int64(s, 3), meas = (double)sqlite3_column_int64(s, 4),
               bound = (double)sqlite3_column_int64(s, 5);
        double n = (double)sqlite3_column_int64(s, 6);
        char fn[256], obj[256], bs[16], ts[32];
        double fl;
        top_of(db, w, k1, k2, fn, sizeof fn, obj, sizeof obj, &fl);
        if (meas > 0)
            snprintf(bs, sizeof bs, "%.1f%%", 100 * bound / meas);
        else if (v->label == BY_THREAD && fl >= 0)
            snprintf(bs, sizeof bs, "%.1f%%", 100 * fl);
        else
            snprintf(bs, sizeof bs, "-");
        if (!sat)
            bs[0] = 0;
        snprintf(ts, sizeof ts, "%.3f s", t / 1e9);
        char mem[80] = "";
        if (decoded) {
            double dec, m, mf;
            mem_of(db, w, k1, k2, &dec, &m, &mf);
            if (dec > 0)
                snprintf(mem, sizeof mem, "  [%.0f%%, %.0f in flagged intervals]", 100 * m / dec,
                         mf);
        }
        fprintf(out, "  %-30.30s %11s %7s %8.0f  %-28.28s %s%s\n", name, ts, bs, n,
                fn[0] ? fn : "-", obj[0] ? obj : "-", mem);
        rows++;
    }
    if (!rows)
        fprintf(out, "  none\n");
    sqlite3_finalize(s);
    /* the rest in one line */
    if (sqlite3_prepare_v2(db, v->count, -1, &s, NULL) == SQLITE_OK) {
        long long more = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) - rows : 0;
        if (more > 0)
            fprintf(out, "  ... %lld more %s (--top N shows more)\n", more,
                    more == 1 ? title : v->plural);
        sqlite3_finalize(s);
    }
    sqlite3_close(db);
    return 0;
}
