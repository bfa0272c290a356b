/*
 * report/export.c: `memwatch export`: a report database in formats other
 * tools read (docs/export.md): folded stacks, CSV, Chrome trace-event JSON
 * (Perfetto, speedscope, chrome://tracing); pprof is in export_pprof.c.
 *
 * Owns: the format table and the text writers.
 * May call: SQLite, libc, report/view.c, report/buf.c. Threading: reentrant.
 */
#include "buf.h"
#include "export_int.h"
#include "levels_int.h"
#include "text.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>


/* The WHERE clause (on samples s) of the samples an export covers. */
void mwx_sample_where(const mw_export_opts *o, char *buf, size_t n)
{
    size_t k = (size_t)snprintf(buf, n, "1");
    if (o->flagged_only)
        k += (size_t)snprintf(buf + k, n - k, " AND s.in_flagged = 1");
    if (o->source && k < n) {
        char *q = sqlite3_mprintf(" AND s.source = %Q", o->source);
        snprintf(buf + k, n - k, "%s", q ? q : "");
        sqlite3_free(q);
    }
}

/* The frames of a sample's stack, outermost first, into v (indexes into
 * c->names); returns how many. A sample with neither stack nor pc has none. */
size_t mwx_stack_frames(const mwv_code *c, int64_t stack, int64_t pc, uint32_t *v, size_t max)
{
    size_t n = 0;
    /* innermost first, then reversed */
    if (stack >= 0 && stack < c->nstack) {
        for (int64_t s = stack; s >= 0 && n < max; s = c->parent[s]) {
            int64_t p = c->stack_pc[s];
            if (p < 0 || p >= c->npc)
                continue;
            for (uint16_t i = 0; i < c->pc_nframes[p] && n < max; i++)
                v[n++] = c->pc_first[p] + i;
        }
    } else if (pc >= 0 && pc < c->npc) {
        for (uint16_t i = 0; i < c->pc_nframes[pc] && n < max; i++)
            v[n++] = c->pc_first[pc] + i;
    }
    for (size_t i = 0; i < n / 2; i++) {
        uint32_t t = v[i];
        v[i] = v[n - 1 - i];
        v[n - 1 - i] = t;
    }
    return n;
}

/* ---- folded: "outer;...;inner COUNT" per distinct stack ---- */

/* A frame's name as folded stacks allow it: ';' separates frames (':'
 * instead), a line break ends the line (a space instead), and valid UTF-8
 * (a byte that is not part of it becomes U+FFFD, as in every export). */
static void fb_name(mw_buf *f, const char *s)
{
    for (const char *p = s ? s : ""; *p;) {
        size_t l = mw_text_utf8_seq(p);
        if (!l) {
            mw_buf_put(f, MW_TEXT_REPLACEMENT, 3);
            p++;
        } else if (*p == ';') {
            mw_buf_put(f, ":", 1);
            p++;
        } else if (*p == '\n' || *p == '\r') {
            mw_buf_put(f, " ", 1);
            p++;
        } else {
            mw_buf_put(f, p, l);
            p += l;
        }
    }
}

/* Folded stacks summed by their text: samples of different call chains
 * (pcs) can fold to the same frames (two addresses of one line, a chain
 * through different call sites of one function), and each distinct text
 * must be one line. The distinct texts in a string table (report/buf.h),
 * a count for each; the lines come out sorted by text. */
typedef struct fstack {
    const char *text; /* the table's copy */
    long long count;
} fstack;

typedef struct ftab {
    mw_strtab texts; /* report/buf.h */
    fstack *e;       /* by the texts' index */
    uint32_t cap;
} ftab;

static int ftab_add(ftab *t, const char *text, long long count)
{
    uint32_t n = t->texts.n;
    int64_t i = mw_strtab_id(&t->texts, text);
    if (i < 0)
        return -ENOMEM;
    if (t->texts.n > n) { /* a new text: its row, room kept as for the texts */
        if (t->cap < t->texts.cap) {
            fstack *ne = realloc(t->e, t->texts.cap * sizeof *ne);
            if (!ne)
                return -ENOMEM;
            t->e = ne;
            t->cap = t->texts.cap;
        }
        t->e[i] = (fstack){t->texts.s[i], 0};
    }
    t->e[i].count += count;
    return 0;
}

static int fstack_cmp(const void *a, const void *b)
{
    return strcmp(((const fstack *)a)->text, ((const fstack *)b)->text);
}

static void ftab_free(ftab *t)
{
    mw_strtab_free(&t->texts);
    free(t->e);
}

/* temp.sample_rset(sample_id, rset): the regions each sample was taken in
 * (sample_regions) as one text, for a GROUP BY: names ("region:outer;
 * region:inner", outermost first by the least depth the region was seen at)
 * or ids ("3,7"). 1 made, 0 when the database has no regions. */
int mwx_region_sets(sqlite3 *db, int names)
{
    if (!mwv_scalar(db, "SELECT COUNT(*) FROM sqlite_master WHERE name='sample_regions'"))
        return 0;
    const char *sql =
        names ? "CREATE TEMP TABLE sample_rset(sample_id INTEGER PRIMARY KEY, rset TEXT);"
                "INSERT INTO sample_rset SELECT sample_id, group_concat('region:' ||"
                " replace(replace(name, ';', ':'), char(10), ' '), ';') FROM (SELECT"
                " sr.sample_id AS sample_id, r.name AS name FROM sample_regions sr JOIN regions r"
                " ON r.id = sr.region_id JOIN (SELECT region_id, MIN(depth) AS depth FROM"
                " region_spans GROUP BY region_id) d ON d.region_id = r.id ORDER BY"
                " sr.sample_id, d.depth, r.name) GROUP BY sample_id"
              : "CREATE TEMP TABLE sample_rset(sample_id INTEGER PRIMARY KEY, rset TEXT);"
                "INSERT INTO sample_rset SELECT sample_id, group_concat(region_id, ',') FROM"
                " (SELECT sample_id, region_id FROM sample_regions ORDER BY sample_id,"
                " region_id) GROUP BY sample_id";
    if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK) {
        mw_log(MW_LOG_WARN, "export: the samples' regions: %s", sqlite3_errmsg(db));
        return 0;
    }
    return 1;
}

static int export_folded(sqlite3 *db, FILE *f, const mw_export_opts *o)
{
    mwv_code c;
    int rc = mwv_code_load(db, &c);
    if (rc)
        return rc;
    char where[256], sql[1400];
    /* CPU samples unless --source asks for another kind: page faults are
     * not CPU time (docs/export.md) */
    mw_export_opts cpu = *o;
    if (!cpu.source)
        cpu.source = "timer";
    mwx_sample_where(&cpu, where, sizeof where);
    int rg = o->region_root && mwx_region_sets(db, 1);
    snprintf(sql, sizeof sql,
             "SELECT COALESCE(s.stack_id, -1), COALESCE(s.pc_id, -1), COUNT(*), %s FROM samples s"
             " %s WHERE %s GROUP BY 1, 2, 4",
             rg ? "g.rset" : "NULL",
             rg ? "LEFT JOIN temp.sample_rset g ON g.sample_id = s.id" : "", where);
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK) {
        mwv_code_free(&c);
        return -EIO;
    }
    static uint32_t v[4096];
    mw_buf line = {0}; /* one folded stack while it is assembled */
    ftab tab = {0};
    while (rc == 0 && sqlite3_step(s) == SQLITE_ROW) {
        size_t n = mwx_stack_frames(&c, sqlite3_column_int64(s, 0), sqlite3_column_int64(s, 1), v,
                                    sizeof v / sizeof v[0]);
        line.n = 0;
        mw_buf_put(&line, "", 0);
        if (sqlite3_column_type(s, 3) == SQLITE_TEXT) {
            /* "region:outer;region:inner": ';' and line breaks replaced in SQL */
            const char *rs = (const char *)sqlite3_column_text(s, 3);
            for (const char *p = rs; *p;) {
                size_t l = mw_text_utf8_seq(p);
                mw_buf_put(&line, l ? p : MW_TEXT_REPLACEMENT, l ? l : 3);
                p += l ? l : 1;
            }
            mw_buf_put(&line, ";", 1);
        }
        if (n == 0)
            mw_buf_put(&line, "[unknown]", 9);
        for (size_t i = 0; i < n; i++) {
            if (i)
                mw_buf_put(&line, ";", 1);
            fb_name(&line, c.names[v[i]]);
        }
        rc = line.oom ? -ENOMEM : ftab_add(&tab, line.b, sqlite3_column_int64(s, 2));
    }
    sqlite3_finalize(s);
    if (rc == 0) {
        if (tab.texts.n) /* the rows by text (the table is not asked again) */
            qsort(tab.e, tab.texts.n, sizeof *tab.e, fstack_cmp);
        for (uint32_t i = 0; i < tab.texts.n; i++) {
            fputs(tab.e[i].text, f);
            fprintf(f, " %lld\n", tab.e[i].count);
        }
    }
    free(line.b);
    ftab_free(&tab);
    mwv_code_free(&c);
    return rc;
}

/* ---- csv ---- */

/* Integers written without printf: the interval table of a long run has
 * millions of rows of a dozen integer cells each, and fprintf's format
 * parsing was most of the export's time. */
static void csv_i64(FILE *f, long long v)
{
    char b[24];
    int n = 0;
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    do
        b[sizeof b - ++n] = (char)('0' + u % 10);
    while ((u /= 10) != 0);
    if (v < 0)
        b[sizeof b - ++n] = '-';
    fwrite(b + sizeof b - n, 1, (size_t)n, f);
}

/* Nanoseconds as seconds with 6 decimals ("12.345678"), rounded to the
 * microsecond. */
static void csv_ns_as_s(FILE *f, long long ns)
{
    if (ns < 0) {
        fputc('-', f);
        ns = -ns;
    }
    long long us = (ns + 500) / 1000;
    char frac[8];
    long long r = us % 1000000;
    for (int k = 5; k >= 0; k--, r /= 10)
        frac[k] = (char)('0' + r % 10);
    frac[6] = 0;
    csv_i64(f, us / 1000000);
    fputc('.', f);
    fwrite(frac, 1, 6, f);
}

static void csv_cell(FILE *f, sqlite3_stmt *s, int i)
{
    switch (sqlite3_column_type(s, i)) {
    case SQLITE_INTEGER:
        csv_i64(f, sqlite3_column_int64(s, i));
        break;
    case SQLITE_FLOAT:
        fprintf(f, "%.6g", sqlite3_column_double(s, i));
        break;
    case SQLITE_TEXT:
        mwv_csv_str(f, (const char *)sqlite3_column_text(s, i));
        break;
    default:
        break;
    }
}

/* ns_col: the index of a column of integer nanoseconds to write as seconds
 * (-1: none). */
static int csv_query(sqlite3 *db, FILE *f, const char *sql, int top, int ns_col)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK) {
        mw_log(MW_LOG_ERROR, "csv export: %s", sqlite3_errmsg(db));
        return -EIO;
    }
    if (sqlite3_bind_parameter_count(s) >= 1)
        sqlite3_bind_int(s, 1, top > 0 ? top : -1);
    int nc = sqlite3_column_count(s);
    for (int i = 0; i < nc; i++)
        fprintf(f, "%s%s", i ? "," : "", sqlite3_column_name(s, i));
    fputc('\n', f);
    while (sqlite3_step(s) == SQLITE_ROW) {
        for (int i = 0; i < nc; i++) {
            if (i)
                fputc(',', f);
            if (i == ns_col && sqlite3_column_type(s, i) == SQLITE_INTEGER)
                csv_ns_as_s(f, sqlite3_column_int64(s, i));
            else
                csv_cell(f, s, i);
        }
        fputc('\n', f);
    }
    sqlite3_finalize(s);
    return 0;
}

static int export_csv(sqlite3 *db, FILE *f, const mw_export_opts *o)
{
    const char *t = o->table ? o->table : "intervals";
    if (!strcmp(t, "intervals")) {
        /* the memory-load columns where the database has them (schema 2 on) */
        char sql[1200];
        snprintf(sql, sizeof sql,
                 "SELECT i.t_start + c.off AS time_s,"
                 " (i.t_end - i.t_start) / 1e9 AS duration_s, p.pid AS pid,"
                 " p.rank AS rank, p.hostname AS host, i.t_start AS t_start_ns,"
                 " i.t_end AS t_end_ns, i.latency_ns AS latency_ns,"
                 " NULLIF(i.threshold_ns, 0) AS threshold_ns, i.bytes AS bytes,"
                 " i.bw_bound AS flagged, i.samples AS samples, i.lat_method AS lat_method,"
                 " i.bw_method AS bw_method%s"
                 " FROM intervals i JOIN processes p ON p.id = i.process_id"
                 " JOIN pclock c ON c.process_id = i.process_id"
                 " ORDER BY i.id",
                 mwv_has_levels(db) ? ", i.bw_share AS bw_share, i.level AS level,"
                                      " i.in_band AS in_band"
                                    : "");
        return csv_query(db, f, sql, 0, 0);
    }
    if (!strcmp(t, "lines")) {
        /* the code-naming samples, as the summary counts them */
        char where[256], sql[1400];
        mw_export_opts o2 = *o;
        if (!o2.source)
            o2.source = mwv_scalar(db, "SELECT COUNT(*) FROM samples WHERE source='precise'")
                            ? "precise"
                            : "timer";
        mwx_sample_where(&o2, where, sizeof where);
        snprintf(sql, sizeof sql,
                 "SELECT p.file AS file, p.line AS line, p.function AS function,"
                 " SUM(x.n) AS samples, SUM(x.fl) AS in_flagged, SUM(x.sel) AS selected,"
                 " printf('%%.4f', CAST(SUM(x.sel) AS REAL) / MAX(1, (SELECT COUNT(*) FROM"
                 " samples s WHERE %s AND s.selected = 1))) AS flagged_share,"
                 " printf('%%.4f', CAST(SUM(x.n) AS REAL) / MAX(1, (SELECT COUNT(*) FROM"
                 " samples s WHERE %s))) AS share"
                 " FROM (SELECT s.pc_id, COUNT(*) AS n, SUM(s.in_flagged) AS fl,"
                 " SUM(s.selected) AS sel FROM samples s WHERE %s GROUP BY s.pc_id) x"
                 " JOIN pcs p ON p.id = x.pc_id GROUP BY p.file, p.line, p.function"
                 " ORDER BY selected DESC, samples DESC LIMIT ?",
                 where, where, where);
        return csv_query(db, f, sql, o->top, -1);
    }
    if (!strcmp(t, "regions")) {
        if (!mwv_scalar(db, "SELECT COUNT(*) FROM sqlite_master WHERE name='region_spans'")) {
            mw_log(MW_LOG_ERROR, "csv export: the database is from before regions");
            return -EIO;
        }
        /* the summary's region table (docs/regions.md): samples of the
         * source the summary counts (precise where there are any, else timer) */
        const char *src = o->source ? o->source
                          : mwv_scalar(db, "SELECT EXISTS(SELECT 1 FROM samples WHERE"
                                           " source='precise')")
                              ? "precise"
                              : "timer";
        char *sql = sqlite3_mprintf(
            "SELECT r.name AS region, COUNT(DISTINCT sp.process_id) AS processes,"
            " COUNT(DISTINCT sp.process_id * 4294967296 + sp.tid) AS threads, COUNT(*) AS spans,"
            " SUM(sp.calls) AS calls, SUM(sp.t_end - sp.t_start) AS time_ns,"
            " SUM(sp.measured_ns) AS measured_ns, SUM(sp.bound_ns) AS bound_ns,"
            " CASE WHEN SUM(sp.measured_ns) > 0 THEN printf('%%.4f', CAST(SUM(sp.bound_ns) AS"
            " REAL) / SUM(sp.measured_ns)) END AS bound_share,"
            " (SELECT COUNT(*) FROM sample_regions sr JOIN samples s ON s.id = sr.sample_id"
            " WHERE sr.region_id = r.id AND s.source = %Q) AS samples, %Q AS source,"
            " MIN(sp.t_start + c.off) AS first_ns"
            " FROM region_spans sp JOIN regions r ON r.id = sp.region_id JOIN pclock c ON"
            " c.process_id = sp.process_id GROUP BY r.id ORDER BY time_ns DESC, r.name LIMIT ?",
            src, src);
        int rc = sql ? csv_query(db, f, sql, o->top, -1) : -ENOMEM;
        sqlite3_free(sql);
        return rc;
    }
    mw_log(MW_LOG_ERROR, "csv export: unknown table '%s' (intervals, lines, regions)", t);
    return MW_ERR_PARSE;
}

/* ---- Chrome trace-event JSON ---- */

static void ts_us(FILE *f, int64_t ns) { fprintf(f, "%.3f", (double)ns / 1000.0); }

/* Before every trace event but the first, a comma (*first: none written yet). */
#define SEP()                                                                                  \
    do {                                                                                       \
        if (!*first)                                                                           \
            fputs(",\n", f);                                                                   \
        *first = 0;                                                                            \
    } while (0)

/* Regions: a slice per span on its thread's track (nested spans nest). */
static void trace_regions(sqlite3 *db, FILE *f, int *first)
{
    sqlite3_stmt *s;
    /* regions: a slice per span on its thread's track (nested spans nest) */
    if (mwv_scalar(db, "SELECT COUNT(*) FROM sqlite_master WHERE name='region_spans'") &&
        sqlite3_prepare_v2(db,
                           "SELECT sp.process_id, sp.tid, r.name, sp.t_start + c.off,"
                           " sp.t_end - sp.t_start, sp.calls, sp.depth, sp.measured_ns,"
                           " sp.bound_ns, sp.flags FROM region_spans sp JOIN regions r ON"
                           " r.id = sp.region_id JOIN pclock c ON c.process_id = sp.process_id"
                           " ORDER BY sp.process_id, sp.tid, sp.t_start, sp.depth",
                           -1, &s, NULL) == SQLITE_OK) {
        while (sqlite3_step(s) == SQLITE_ROW) {
            SEP();
            fputs("{\"ph\":\"X\",\"cat\":\"region\",\"name\":", f);
            mwv_json_str(f, (const char *)sqlite3_column_text(s, 2));
            fprintf(f, ",\"pid\":%lld,\"tid\":%lld,\"ts\":", sqlite3_column_int64(s, 0),
                    sqlite3_column_int64(s, 1));
            ts_us(f, sqlite3_column_int64(s, 3));
            fputs(",\"dur\":", f);
            ts_us(f, sqlite3_column_int64(s, 4));
            fprintf(f, ",\"args\":{\"calls\":%lld,\"depth\":%lld,\"measured_ns\":%lld,"
                       "\"bound_ns\":%lld,\"flags\":%lld}}",
                    sqlite3_column_int64(s, 5), sqlite3_column_int64(s, 6),
                    sqlite3_column_int64(s, 7), sqlite3_column_int64(s, 8),
                    sqlite3_column_int64(s, 9));
        }
        sqlite3_finalize(s);
    }
}

/* GPU kernels: one track per device and stream, a slice per launch. */
static void trace_gpu(sqlite3 *db, FILE *f, int *first)
{
    sqlite3_stmt *s;
    /* GPU kernels: one track per device and stream */
    if (sqlite3_prepare_v2(db,
                           "SELECT k.process_id, k.device, k.stream, k.start_ns + c.goff,"
                           " k.end_ns + c.goff, k.name, k.bw_bound, k.dram_bw, k.threshold_bw"
                           " FROM gpu_kernels k JOIN pclock c ON c.process_id = k.process_id"
                           " ORDER BY k.process_id, k.device, k.stream, k.start_ns",
                           -1, &s, NULL) == SQLITE_OK) {
        int64_t lp = -1, ld = -1, ls = -1;
        long track = 0;
        while (sqlite3_step(s) == SQLITE_ROW) {
            int64_t p = sqlite3_column_int64(s, 0), d = sqlite3_column_int64(s, 1),
                    st = sqlite3_column_int64(s, 2);
            if (p != lp || d != ld || st != ls) {
                track++;
                lp = p;
                ld = d;
                ls = st;
                SEP();
                fprintf(f, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%lld,\"tid\":%ld,"
                           "\"args\":{\"name\":\"GPU %lld stream %lld\"}}",
                        (long long)p, 1000000000L + track, (long long)d, (long long)st);
            }
            SEP();
            fprintf(f, "{\"ph\":\"X\",\"cat\":\"%s\",\"name\":",
                    sqlite3_column_int(s, 6) ? "gpu,bandwidth-bound" : "gpu");
            mwv_json_str(f, (const char *)sqlite3_column_text(s, 5));
            fprintf(f, ",\"pid\":%lld,\"tid\":%ld,\"ts\":", (long long)p, 1000000000L + track);
            ts_us(f, sqlite3_column_int64(s, 3));
            fputs(",\"dur\":", f);
            int64_t dd = sqlite3_column_int64(s, 4) - sqlite3_column_int64(s, 3);
            ts_us(f, dd > 0 ? dd : 0);
            fprintf(f, ",\"args\":{\"bandwidth_bound\":%d,\"dram_GBps\":%.3f,"
                       "\"threshold_GBps\":%.3f}}",
                    sqlite3_column_int(s, 6), sqlite3_column_double(s, 7) / 1e9,
                    sqlite3_column_double(s, 8) / 1e9);
        }
        sqlite3_finalize(s);
    }
}

/* The intervals: latency and bandwidth counters, and flagged intervals merged into
 * "bandwidth-bound" slices; 0 or -EIO. */
static int trace_intervals(sqlite3 *db, FILE *f, int *first)
{
    sqlite3_stmt *s;
    /* counters per interval, and flagged intervals merged into slices */
    if (sqlite3_prepare_v2(db,
                           "SELECT i.process_id, p.pid, i.t_start + c.off, i.t_end + c.off,"
                           " i.latency_ns, i.threshold_ns, i.bytes, i.bw_bound, i.t_end - i.t_start"
                           " FROM intervals i JOIN processes p ON p.id = i.process_id"
                           " JOIN pclock c ON c.process_id = i.process_id"
                           " ORDER BY i.id", /* by process, in time: as ingested */
                           -1, &s, NULL) != SQLITE_OK)
        return -EIO;
    int64_t cur = -1, cur_pid = 0, fl_start = -1, fl_end = -1, fl_n = 0;
    double last_lat = -1, last_thr = -1;
#define FLUSH_SLICE()                                                                          \
    do {                                                                                       \
        if (fl_start >= 0) {                                                                   \
            SEP();                                                                             \
            fprintf(f, "{\"ph\":\"X\",\"cat\":\"memwatch\",\"name\":\"bandwidth-bound\","      \
                       "\"pid\":%lld,\"tid\":%ld,\"ts\":",                                     \
                    (long long)cur, MWX_BW_TID);                                               \
            ts_us(f, fl_start);                                                                \
            fputs(",\"dur\":", f);                                                             \
            ts_us(f, fl_end - fl_start);                                                       \
            fprintf(f, ",\"args\":{\"intervals\":%lld}}", (long long)fl_n);                    \
            fl_start = -1;                                                                     \
            fl_n = 0;                                                                          \
        }                                                                                      \
    } while (0)
    /* An interval without a latency reading adds no point: the counters
     * hold the last reading (the trace-event format has no "no value"),
     * and never fall to 0 where the process ends. */
    while (sqlite3_step(s) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(s, 0);
        int64_t a = sqlite3_column_int64(s, 2), b = sqlite3_column_int64(s, 3);
        if (id != cur) {
            FLUSH_SLICE();
            cur = id;
            cur_pid = sqlite3_column_int64(s, 1);
            last_lat = last_thr = -1;
        }
        if (sqlite3_column_type(s, 4) != SQLITE_NULL) {
            double lat = sqlite3_column_double(s, 4), thr = sqlite3_column_double(s, 5);
            if (lat != last_lat || thr != last_thr) {
                SEP();
                fprintf(f, "{\"ph\":\"C\",\"name\":\"latency ns\",\"pid\":%lld,\"tid\":%lld,\"ts\":",
                        (long long)id, (long long)cur_pid);
                ts_us(f, a);
                /* a threshold not known yet (0) is left out: no value, not 0 */
                if (thr > 0)
                    fprintf(f, ",\"args\":{\"latency\":%.1f,\"threshold\":%.1f}}", lat, thr);
                else
                    fprintf(f, ",\"args\":{\"latency\":%.1f}}", lat);
                last_lat = lat;
                last_thr = thr;
            }
        }
        int64_t dur = sqlite3_column_int64(s, 8);
        if (sqlite3_column_type(s, 6) != SQLITE_NULL && dur > 0) {
            SEP();
            fprintf(f, "{\"ph\":\"C\",\"name\":\"DRAM GB/s\",\"pid\":%lld,\"tid\":%lld,\"ts\":",
                    (long long)id, (long long)cur_pid);
            ts_us(f, a);
            fprintf(f, ",\"args\":{\"bandwidth\":%.3f}}", sqlite3_column_double(s, 6) / (double)dur);
        }
        if (sqlite3_column_int(s, 7)) {
            if (fl_start >= 0 && a > fl_end)
                FLUSH_SLICE();
            if (fl_start < 0)
                fl_start = a;
            fl_end = b;
            fl_n++;
        } else {
            FLUSH_SLICE();
        }
    }
    FLUSH_SLICE();
    sqlite3_finalize(s);
#undef FLUSH_SLICE
    return 0;
}

/* The program's threads named. */
static void trace_threads(sqlite3 *db, FILE *f, int *first)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db,
                           "SELECT t.process_id, t.tid, t.name FROM threads t JOIN processes p"
                           " ON p.id = t.process_id WHERE t.name IS NOT NULL"
                           " GROUP BY t.process_id, t.tid",
                           -1, &s, NULL) == SQLITE_OK) {
        while (sqlite3_step(s) == SQLITE_ROW) {
            SEP();
            fprintf(f, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%lld,\"tid\":%lld,"
                       "\"args\":{\"name\":",
                    sqlite3_column_int64(s, 0), sqlite3_column_int64(s, 1));
            mwv_json_str(f, (const char *)sqlite3_column_text(s, 2));
            fputs("}}", f);
        }
        sqlite3_finalize(s);
    }
}

/* Processes named and labelled (host, rank, pid), sorted by rank, each with its bandwidth
 * track; 0 or -EIO. */
static int trace_processes(sqlite3 *db, FILE *f, int *first)
{
    sqlite3_stmt *s;
    /* processes and threads named; sort by rank */
    if (sqlite3_prepare_v2(db, "SELECT id, pid, rank, hostname FROM processes ORDER BY rank, pid",
                           -1, &s, NULL) != SQLITE_OK)
        return -EIO;
    int order = 0;
    while (sqlite3_step(s) == SQLITE_ROW) {
        char label[512];
        int64_t id = sqlite3_column_int64(s, 0);
        mwv_proc_label(db, id, label, sizeof label);
        SEP();
        fprintf(f, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%lld,\"tid\":0,\"args\":{\"name\":",
                (long long)id);
        mwv_json_str(f, label);
        fputs("}},\n", f);
        fprintf(f, "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":%lld,\"tid\":0,"
                   "\"args\":{\"sort_index\":%d}},\n",
                (long long)id, order++);
        fprintf(f, "{\"ph\":\"M\",\"name\":\"process_labels\",\"pid\":%lld,\"tid\":0,"
                   "\"args\":{\"labels\":",
                (long long)id);
        char lab[256];
        if (sqlite3_column_type(s, 2) == SQLITE_INTEGER)
            snprintf(lab, sizeof lab, "host %s, rank %lld, pid %lld",
                     sqlite3_column_text(s, 3) ? (const char *)sqlite3_column_text(s, 3) : "?",
                     sqlite3_column_int64(s, 2), sqlite3_column_int64(s, 1));
        else
            snprintf(lab, sizeof lab, "host %s, pid %lld",
                     sqlite3_column_text(s, 3) ? (const char *)sqlite3_column_text(s, 3) : "?",
                     sqlite3_column_int64(s, 1));
        mwv_json_str(f, lab);
        fputs("}}", f);
        fprintf(f, ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%lld,\"tid\":%ld,"
                   "\"args\":{\"name\":\"memory bandwidth (memwatch intervals)\"}}",
                (long long)id, MWX_BW_TID);
    }
    sqlite3_finalize(s);
    return 0;
}

static int export_trace(sqlite3 *db, FILE *f, const mw_export_opts *o)
{
    (void)o;
    fputs("{\"displayTimeUnit\":\"ms\",\"otherData\":{\"producer\":\"memwatch ", f);
    fputs(mw_version(), f);
    fputs("\",\"clock\":\"ns since the job's start, hosts aligned by wall clock\"},\n"
          "\"traceEvents\":[\n",
          f);
    int first = 1;
    if (trace_processes(db, f, &first))
        return -EIO;
    trace_threads(db, f, &first);
    if (trace_intervals(db, f, &first))
        return -EIO;
    /* the memory-load levels: a track and a counter per process */
    if (mwx_trace_levels(db, f, &first))
        return -EIO;
    trace_gpu(db, f, &first);
    trace_regions(db, f, &first);
    fputs("\n]}\n", f);
#undef SEP
    return 0;
}

/* The formats (include/memwatch/views.h): one row each. */
const mw_export_format mw_export_format_list[] = {
    {"pprof", "", "gzipped profile.proto: samples, flagged samples, latency;\n"
                  "labels source, pid, rank, host, region\n", mwx_pprof},
    {"perfetto", "trace chrome",
     "Chrome trace-event JSON (Perfetto UI, speedscope): latency,\n"
     "threshold and bandwidth counters, load levels, bandwidth-bound slices,\n"
     "GPU kernels, per process (rank, host) and thread; region\n"
     "slices on their threads' tracks\n",
     export_trace},
    {"folded", "", "folded stacks 'outer;...;inner COUNT' for flame-graph tools\n",
     export_folded},
    {"csv", "", "intervals (--table intervals), source lines (--table lines)\n"
                "or regions (--table regions)\n", export_csv},
    {"html", "", "the HTML report (docs/html.md), as memwatch report --html\n", NULL},
    {NULL, NULL, NULL, NULL},
};

const mw_export_format *mw_export_format_find(const char *name)
{
    for (const mw_export_format *x = mw_export_format_list; name && x->name; x++) {
        if (!strcmp(name, x->name))
            return x;
        size_t l = strlen(name);
        for (const char *a = x->aliases; l && (a = strstr(a, name)); a += l)
            if ((a == x->aliases || a[-1] == ' ') && (a[l] == ' ' || !a[l]))
                return x;
    }
    return NULL;
}

const char *mw_export_format_names(char *buf, size_t n)
{
    size_t k = 0;
    if (n)
        buf[0] = 0;
    for (const mw_export_format *x = mw_export_format_list; x->name && k < n; x++) {
        int w = snprintf(buf + k, n - k, "%s%s", k ? ", " : "", x->name);
        k += w > 0 ? (size_t)w : 0;
    }
    return buf;
}

/* A format's writer and its options, for mwv_write. */
struct export_job {
    const mw_export_format *x;
    const mw_export_opts *o;
};

static int write_format(sqlite3 *db, FILE *f, const void *arg)
{
    const struct export_job *j = arg;
    return j->x->write(db, f, j->o);
}

int mw_export(const char *db_path, const char *format, const char *out_path,
              const mw_export_opts *opts)
{
    static const mw_export_opts none;
    const mw_export_opts *o = opts ? opts : &none;
    const mw_export_format *x = mw_export_format_find(format);
    if (!x) {
        char names[128];
        mw_log(MW_LOG_ERROR, "unknown export format '%s' (%s)", format ? format : "",
               mw_export_format_names(names, sizeof names));
        return MW_ERR_PARSE;
    }
    if (!x->write) {
        mw_html_opts ho = {o->filter, o->top, NULL};
        return mw_report_html(db_path, out_path, &ho);
    }
    if (o->table && strcmp(o->table, "intervals") && strcmp(o->table, "lines") &&
        strcmp(o->table, "regions")) {
        mw_log(MW_LOG_ERROR, "unknown csv table '%s' (intervals, lines, regions)", o->table);
        return MW_ERR_PARSE;
    }
    if (o->source && strcmp(o->source, "timer") && strcmp(o->source, "fault") &&
        strcmp(o->source, "precise")) {
        mw_log(MW_LOG_ERROR, "unknown sample source '%s' (timer, fault, precise)", o->source);
        return MW_ERR_PARSE;
    }
    struct export_job job = {x, o};
    return mwv_write(db_path, &o->filter, out_path, write_format, &job);
}
