/*
 * report/summary.c: the summary of a report database (mw_report_summary).
 *
 * Owns: the summary queries (run and processes, share of time
 * bandwidth-bound and its timeline, top lines and functions inside flagged
 * intervals and overall, top data objects with allocation sites, losses, GPU
 * kernels) gathered into one cJSON document, rendered as JSON or as text.
 * May call: SQLite, cJSON, libc. Writes only to the stream it is given.
 * Threading: reentrant; opens its own read-only connection.
 */
#include <memwatch/insn.h>
#include <memwatch/report.h>

#include "jobview_int.h"
#include "load.h"
#include "levels_int.h"
#include "region.h"
#include "text.h"
#include "view_int.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#define TIMELINE_COLS 60

/* Run a query (?1: top, where it has one) and return its rows
 * (mw_summary_rows). */
static cJSON *rows(sqlite3 *db, const char *sql, int top)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK) {
        mw_log(MW_LOG_WARN, "summary query failed: %s", sqlite3_errmsg(db));
        return cJSON_CreateArray();
    }
    if (sqlite3_bind_parameter_count(s) >= 1)
        sqlite3_bind_int(s, 1, top);
    return mw_summary_rows(s);
}

static double num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : 0;
}
/* A string of the summary as the text output shows it: control characters
 * escaped (a program's arguments may hold terminal escape sequences). The
 * result lives until 16 more calls. */
static const char *str(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!cJSON_IsString(v))
        return NULL;
    static _Thread_local char buf[16][2048];
    static _Thread_local unsigned next;
    char *b = buf[next++ % 16];
    mw_text_escape(v->valuestring, b, sizeof buf[0]);
    return b;
}

int mw_report_saturation_seen(const char *profile_path, const char *lat_method)
{
    if (!profile_path || !*profile_path || !lat_method || !*lat_method)
        return -1;
    FILE *f = fopen(profile_path, "rb");
    if (!f)
        return -1;
    char *buf = NULL;
    size_t len = 0, cap = 0, n;
    char chunk[8192];
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0 && len < (16u << 20)) {
        if (len + n + 1 > cap) {
            size_t nc = (len + n + 1) * 2;
            char *nb = realloc(buf, nc);
            if (!nb)
                break;
            buf = nb;
            cap = nc;
        }
        memcpy(buf + len, chunk, n);
        len += n;
    }
    fclose(f);
    if (!buf)
        return -1;
    buf[len] = 0;
    cJSON *root = cJSON_Parse(buf);
    free(buf);
    int seen = -1;
    const cJSON *m, *top = cJSON_GetObjectItemCaseSensitive(root, "saturable");
    if (cJSON_IsBool(top)) { /* the profile's own claim (load shapes) comes first */
        seen = cJSON_IsTrue(top);
        cJSON_Delete(root);
        return seen;
    }
    cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(root, "methods"))
    {
        const cJSON *nm = cJSON_GetObjectItemCaseSensitive(m, "name");
        const cJSON *sat = cJSON_GetObjectItemCaseSensitive(m, "saturated");
        if (cJSON_IsString(nm) && !strcmp(nm->valuestring, lat_method) && cJSON_IsBool(sat))
            seen = cJSON_IsTrue(sat);
    }
    cJSON_Delete(root);
    return seen;
}

/* Whether the calibration of the run's machine profile saw memory saturate:
 * the processes' META saturable where they carry it (1 when any process's
 * says 1), else (raw files of before that key) the profile the recording
 * named (META profile "PATH (created T)"), its validation of the latency
 * method in use. When it did not, nothing is called bandwidth-bound (the
 * false negatives cannot be judged). 1, 0, or -1 when unknown (no profile,
 * uncalibrated). */
int mwv_saturation_seen(sqlite3 *db)
{
    sqlite3_stmt *s;
    int seen = -1, yes, no;
    mwv_saturable_counts(db, &yes, &no);
    if (yes + no)
        return yes > 0;
    if (sqlite3_prepare_v2(db,
                           "SELECT (SELECT value FROM meta WHERE key='profile' LIMIT 1),"
                           " (SELECT lat_method FROM intervals WHERE lat_method != '' LIMIT 1)",
                           -1, &s, NULL) != SQLITE_OK)
        return -1;
    if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0) && sqlite3_column_text(s, 1)) {
        char path[4096];
        snprintf(path, sizeof path, "%s", (const char *)sqlite3_column_text(s, 0));
        char *c = strstr(path, " (created ");
        if (c && path[0] == '/') {
            *c = 0;
            seen = mw_report_saturation_seen(path, (const char *)sqlite3_column_text(s, 1));
        }
    }
    sqlite3_finalize(s);
    return seen;
}

/* "SIGSEGV" for 11: the signal's name as the user knows it. */
static const char *signame(int sig)
{
    const char *a = sigabbrev_np(sig);
    static _Thread_local char buf[24];
    snprintf(buf, sizeof buf, "SIG%s", a ? a : "?");
    return buf;
}

/* The timeline: share of each column's time covered by flagged intervals. */
static cJSON *timeline(sqlite3 *db, int64_t t0, int64_t t1)
{
    double flagged[TIMELINE_COLS] = {0}, covered[TIMELINE_COLS] = {0};
    double w = (double)(t1 - t0) / TIMELINE_COLS;
    sqlite3_stmt *s;
    if (w > 0 && sqlite3_prepare_v2(db, "SELECT t_start, t_end, bw_bound FROM intervals", -1, &s,
                                    NULL) == SQLITE_OK) {
        while (sqlite3_step(s) == SQLITE_ROW) {
            double a = (double)(sqlite3_column_int64(s, 0) - t0),
                   b = (double)(sqlite3_column_int64(s, 1) - t0);
            int bw = sqlite3_column_int(s, 2);
            for (int k = (int)(a / w); k < TIMELINE_COLS && k * w < b; k++) {
                if (k < 0)
                    continue;
                double lo = a > k * w ? a : k * w, hi = b < (k + 1) * w ? b : (k + 1) * w;
                if (hi > lo) {
                    covered[k] += hi - lo;
                    if (bw)
                        flagged[k] += hi - lo;
                }
            }
        }
        sqlite3_finalize(s);
    }
    char line[TIMELINE_COLS + 1];
    for (int k = 0; k < TIMELINE_COLS; k++) {
        double f = covered[k] > 0 ? flagged[k] / covered[k] : -1;
        line[k] = f < 0 ? ' ' : f == 0 ? '.' : f < 0.5 ? '+' : '#';
    }
    line[TIMELINE_COLS] = 0;
    return cJSON_CreateString(line);
}

/* memwatch's own interval thread names itself "memwatch" (PR_SET_NAME):
 * a thread of that name other than the main thread is not the program's.
 * SQL over threads t (U: threads u) of processes p. */
#define MW_OWN_THREAD "t.name = 'memwatch' AND t.tid != p.pid"
#define MW_OWN_THREAD_U "u.name = 'memwatch' AND u.tid != p.pid"

/* A main thread whose CPU time was not recorded (no CPU record of its own:
 * another thread ended the process) gets the process's CPU time less the
 * other threads' (memwatch's own included where recorded), marked
 * "cpu_derived". */
static void derive_main_cpu(sqlite3 *db, cJSON *thr)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db,
                           "SELECT p.user_ns - COALESCE(SUM(t.user_ns), 0),"
                           " p.system_ns - COALESCE(SUM(t.system_ns), 0) FROM processes p"
                           " LEFT JOIN threads t ON t.process_id = p.id AND t.tid != p.pid"
                           " WHERE p.id = ?1 AND p.user_ns IS NOT NULL GROUP BY p.id",
                           -1, &s, NULL) != SQLITE_OK)
        return;
    cJSON *t;
    cJSON_ArrayForEach(t, thr)
    {
        if (!num(t, "main") || cJSON_GetObjectItem(t, "user_ns"))
            continue;
        sqlite3_reset(s);
        sqlite3_bind_int64(s, 1, (sqlite3_int64)num(t, "process_id"));
        if (sqlite3_step(s) != SQLITE_ROW)
            continue;
        int64_t u = sqlite3_column_int64(s, 0), y = sqlite3_column_int64(s, 1);
        cJSON_AddNumberToObject(t, "user_ns", (double)(u > 0 ? u : 0));
        cJSON_AddNumberToObject(t, "system_ns", (double)(y > 0 ? y : 0));
        cJSON_AddTrueToObject(t, "cpu_derived");
    }
    sqlite3_finalize(s);
}

/* Counted per code address first (integer grouping), then per line or
 * function: about three times faster than grouping the joined rows. */
static const char q_lines[] =
    "SELECT p.file AS file, p.line AS line, p.function AS function, SUM(x.n) AS samples,"
    " SUM(x.m) AS at_memory, SUM(x.d) AS decoded"
    " FROM (SELECT s.pc_id, COUNT(*) AS n, SUM(s.at_memory = 1) AS m,"
    " SUM(s.at_memory IS NOT NULL) AS d FROM samples s WHERE %s GROUP BY s.pc_id) x"
    " JOIN pcs p ON p.id = x.pc_id"
    " GROUP BY p.file, p.line, p.function ORDER BY samples DESC LIMIT ?";
static const char q_funcs[] =
    "SELECT p.function AS function, m.path AS module, SUM(x.n) AS samples,"
    " MAX(p.nearest_symbol) AS nearest_symbol" /* a hint for module@0x... names (JSON) */
    " FROM (SELECT s.pc_id, COUNT(*) AS n FROM samples s WHERE %s GROUP BY s.pc_id) x"
    " JOIN pcs p ON p.id = x.pc_id LEFT JOIN modules m ON m.id = p.module_id"
    " GROUP BY p.function, m.path ORDER BY samples DESC LIMIT ?";

/* Which samples name the code: precise ones when present, else timer ones. */
static const char *code_source(sqlite3 *db, int flagged)
{
    int64_t nprec = mwv_scalar(db, flagged ? "SELECT COUNT(*) FROM samples WHERE selected=1 AND "
                                             "source='precise'"
                                           : "SELECT COUNT(*) FROM samples WHERE source='precise'");
    return nprec ? "precise" : "timer";
}

/* flagged: 1 the samples inside flagged intervals (hybrid selection), 2
 * those inside high-load intervals (where nothing is flagged: a machine
 * whose calibration could not saturate memory), 0 all. */
static void add_code(sqlite3 *db, cJSON *root, const char *key, int flagged, int top, int perfmap)
{
    const char *src = code_source(db, flagged == 1);
    char where[200], sql[640];
    snprintf(where, sizeof where, "s.source = '%s'%s", src,
             flagged == 1   ? " AND s.selected = 1"
             : flagged == 2 ? " AND s.interval_id IN (SELECT id FROM intervals WHERE level = 'high')"
                            : "");
    cJSON *o = cJSON_AddObjectToObject(root, key);
    cJSON_AddStringToObject(o, "source", src);
    snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM samples s WHERE %s", where);
    cJSON_AddNumberToObject(o, "samples", (double)mwv_scalar(db, sql));
    snprintf(sql, sizeof sql, q_lines, where);
    cJSON_AddItemToObject(o, "lines", rows(db, sql, top));
    snprintf(sql, sizeof sql, q_funcs, where);
    cJSON_AddItemToObject(o, "functions", rows(db, sql, top));
    /* where a perf map named code: each sample also at the innermost
     * interpreted or JIT-compiled frame of its stack (py::hot_loop:x.py),
     * which heads the section, beside the interpreter's C leaf */
    if (perfmap) {
        double with = 0;
        cJSON *in = mw_names_interp(db, where, top, 3, &with);
        if (with > 0) {
            cJSON_AddItemToObject(o, "interpreted", in);
            cJSON_AddNumberToObject(o, "interpreted_samples", with);
        } else {
            cJSON_Delete(in);
        }
    }
    /* timer samples decoded at code without memory accesses: compute that
     * ran beside the load, shown apart (docs/data-addresses.md) */
    if (!strcmp(src, "timer")) {
        char w2[260];
        snprintf(w2, sizeof w2, "%s AND s.at_memory = 0", where);
        snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM samples s WHERE %s", w2);
        cJSON_AddNumberToObject(o, "no_memory", (double)mwv_scalar(db, sql));
        snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM samples s WHERE %s AND s.at_memory IS NOT"
                                  " NULL", where);
        cJSON_AddNumberToObject(o, "decoded", (double)mwv_scalar(db, sql));
        snprintf(sql, sizeof sql, q_lines, w2);
        cJSON_AddItemToObject(o, "no_memory_lines", rows(db, sql, 3));
    }
}

static int cmp_command(const void *a, const void *b)
{
    const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;
    double d = num(y, "flagged_ns") - num(x, "flagged_ns");
    if (d == 0)
        d = num(y, "user_ns") + num(y, "system_ns") - num(x, "user_ns") - num(x, "system_ns");
    if (d == 0)
        d = num(y, "processes") - num(x, "processes");
    return d > 0 ? 1 : d < 0 ? -1 : 0;
}

/* The processes by command (the executable's base name): how many, their
 * CPU time, measured and flagged time summed; most flagged time first, then
 * most CPU time. */
static cJSON *commands(const cJSON *procs)
{
    cJSON *arr = cJSON_CreateArray();
    const cJSON *r;
    cJSON_ArrayForEach(r, procs)
    {
        const cJSON *e = cJSON_GetObjectItem(r, "exe");
        const char *name =
            cJSON_IsString(e) && *e->valuestring ? mwv_base(e->valuestring) : "(command unknown)";
        static const char *const keys[] = {"user_ns",    "system_ns", "measured_ns",
                                           "flagged_ns", "samples",   NULL};
        mw_summary_group_add(arr, "command", name, keys, r);
    }
    int n = cJSON_GetArraySize(arr);
    if (n < 1)
        return arr;
    cJSON **v = malloc((size_t)n * sizeof *v);
    if (!v)
        return arr;
    for (int k = 0; k < n; k++)
        v[k] = cJSON_DetachItemFromArray(arr, 0);
    qsort(v, (size_t)n, sizeof *v, cmp_command);
    for (int k = 0; k < n; k++) {
        double m = num(v[k], "measured_ns");
        cJSON_AddNumberToObject(v[k], "share", m > 0 ? num(v[k], "flagged_ns") / m : 0);
        cJSON_AddItemToArray(arr, v[k]);
    }
    free(v);
    return arr;
}

/* The GPU part: kernels, devices, ranks and source lines. */
static void collect_gpu(sqlite3 *db, cJSON *root, int top)
{
    /* One row per kernel and device; bytes and throughput over the launches
     * PM windows covered (flag 2, BW_VALID; 16 is PARTIAL), docs/gpu.md. */
    cJSON_AddItemToObject(
        root, "gpu_kernels",
        rows(db,
             "SELECT device, name, COUNT(*) AS launches, SUM(end_ns - start_ns) AS time_ns,"
             " SUM(bw_bound) AS bw_bound, SUM((flags & 2) != 0) AS measured,"
             " SUM((flags & 16) != 0) AS partial,"
             " AVG(end_ns - start_ns) AS time_per_launch_ns,"
             " AVG(CASE WHEN flags & 2 THEN dram_bytes END) AS bytes_per_launch,"
             " AVG(CASE WHEN flags & 2 THEN dram_bw END) AS mean_dram_bw,"
             " MAX(threshold_bw) AS threshold_bw FROM gpu_kernels"
             " GROUP BY device, name ORDER BY time_ns DESC LIMIT ?",
             top));
    cJSON_AddItemToObject(
        root, "gpu_devices",
        rows(db,
             MWV_GPU_DEVNAME_CTE
             " SELECT p.hostname AS host, k.device, MAX(dn.name) AS name, COUNT(*) AS launches, SUM(k.bw_bound) AS bw_bound,"
             " SUM(k.end_ns - k.start_ns) AS time_ns, SUM(CASE WHEN k.flags & 2 THEN k.dram_bytes"
             " ELSE 0 END) AS dram_bytes, MAX(k.threshold_bw) AS threshold_bw,"
             " MAX(k.peak_bw) AS peak_bw, MAX((k.flags & 4) != 0) AS uncalibrated,"
             " COUNT(DISTINCT k.process_id) AS processes, GROUP_CONCAT(DISTINCT p.rank) AS ranks"
             " FROM gpu_kernels k JOIN processes p ON p.id = k.process_id LEFT JOIN devname dn"
             " ON dn.process_id = k.process_id AND dn.device = k.device"
             " GROUP BY p.hostname, k.device ORDER BY p.hostname, k.device LIMIT ?",
             top));
    /* One row per process (MPI rank) and device it launched kernels on. */
    cJSON_AddItemToObject(
        root, "gpu_ranks",
        rows(db,
             "SELECT p.rank, p.pid, p.hostname AS host, k.device, COUNT(*) AS launches,"
             " SUM(k.bw_bound) AS bw_bound, SUM(k.end_ns - k.start_ns) AS time_ns,"
             " SUM(CASE WHEN k.flags & 2 THEN k.dram_bytes ELSE 0 END) AS dram_bytes,"
             " SUM((k.flags & 2) != 0) AS measured"
             " FROM gpu_kernels k JOIN processes p ON p.id = k.process_id"
             " GROUP BY k.process_id, k.device ORDER BY p.rank, p.hostname, p.pid, k.device"
             " LIMIT ?",
             top));
    cJSON_AddItemToObject(
        root, "gpu_lines",
        rows(db,
             "SELECT file, line, function, SUM(samples) AS samples,"
             " SUM(stall_memory) AS stall_memory, MAX(stalls) AS stalls FROM gpu_pcs"
             " GROUP BY file, line, function ORDER BY samples DESC LIMIT ?",
             top));
}

/* The data side: objects, allocation sites, data addresses and why none, memory levels of
 * precise samples, losses. */
static void collect_data(sqlite3 *db, cJSON *root, int top)
{
    cJSON_AddItemToObject(root, "objects", rows(db, mwv_q_objects, top));
    /* Sites whose allocations were sampled (MWR_ALLOC_SITE, format 1.2): all
     * their allocations, of which `recorded` are in allocations; databases
     * of older reports have no such table */
    if (mwv_scalar(db, "SELECT COUNT(*) FROM sqlite_master WHERE name = 'alloc_sites'") > 0)
        cJSON_AddItemToObject(
            root, "allocation_sites",
            rows(db,
                 "SELECT ps.function AS site_function, ps.file AS site_file,"
                 " ps.line AS site_line, SUM(a.count) AS allocations, SUM(a.bytes) AS bytes,"
                 " SUM(a.recorded) AS recorded, MAX(a.period) AS period,"
                 " COUNT(DISTINCT a.process_id) AS processes FROM alloc_sites a"
                 " LEFT JOIN pcs ps ON ps.id = a.site_pc_id GROUP BY a.site_pc_id"
                 " ORDER BY allocations DESC LIMIT ?",
                 top));
    /* samples with a data address: decoded timer samples and precise ones
     * (the data their code accessed); fault samples apart */
    cJSON_AddNumberToObject(
        root, "addressed_samples",
        (double)mwv_scalar(db, "SELECT COUNT(*) FROM samples WHERE addr_source IN ('decoded',"
                               " 'precise')"));
    /* (shares summed in floating point: a total that is all of them may
     * come out a hair below 0) */
    cJSON_AddNumberToObject(
        root, "unattributed_addresses",
        fmax(0, round(mwv_scalar_real(db, "SELECT (SELECT COUNT(*) FROM samples WHERE"
                                          " addr_source IN ('decoded', 'precise')) -"
                                          " COALESCE((SELECT SUM(share) FROM sample_objects"
                                          " WHERE addr_source != 'fault'), 0)") *
                      10) /
                    10));
    cJSON_AddNumberToObject(
        root, "decoded_samples",
        (double)mwv_scalar(db, "SELECT COUNT(*) FROM samples WHERE addr_source = 'decoded'"));
    cJSON_AddNumberToObject(
        root, "timer_at_memory",
        (double)mwv_scalar(db, "SELECT COUNT(*) FROM samples WHERE at_memory = 1"));
    cJSON_AddNumberToObject(
        root, "timer_decoded",
        (double)mwv_scalar(db, "SELECT COUNT(*) FROM samples WHERE at_memory IS NOT NULL"));
    /* why timer samples name no data, where none was decoded */
    if (mwv_scalar(db, "SELECT COUNT(*) FROM samples WHERE source = 'timer'") > 0 &&
        mwv_scalar(db, "SELECT COUNT(*) FROM samples WHERE at_memory IS NOT NULL") == 0) {
        const char *why = NULL;
        cJSON_AddStringToObject(
            root, "decode_note",
            !mw_insn_available(&why)
                ? why
                : "the timer samples carry no user registers (recorded by a memwatch before "
                  "format 1.3, or their code is in no module file the report can read)");
    }
    cJSON_AddNumberToObject(
        root, "fault_samples",
        (double)mwv_scalar(db, "SELECT COUNT(*) FROM samples WHERE addr_source = 'fault'"));
    cJSON_AddItemToObject(
        root, "memory_levels",
        rows(db,
             "SELECT l.name AS level, COUNT(*) AS samples, SUM(s.selected) AS selected,"
             " AVG(s.weight) AS mean_weight FROM samples_mem s JOIN mem_levels l"
             " ON l.id = s.mem_level WHERE s.source = 'precise' GROUP BY l.name"
             " ORDER BY samples DESC LIMIT ?",
             top));
    cJSON_AddItemToObject(root, "losses",
                          rows(db,
                               "SELECT kind, SUM(count) AS count, COUNT(*) AS records FROM"
                               " losses GROUP BY kind ORDER BY kind",
                               top));
}

/* The "bandwidth" object: flagged share of the measured time, its timeline and levels,
 * latency, curves, load and DRAM bandwidth. */
static void collect_bandwidth(sqlite3 *db, cJSON *root, int top)
{
    /* bandwidth-bound share */
    cJSON *bw = cJSON_AddObjectToObject(root, "bandwidth");
    /* the measured time: intervals with a latency reading (only those can be
     * flagged), summed over processes, as `memwatch record` counts it */
    int64_t tot = mwv_scalar(db, "SELECT COALESCE(SUM(t_end - t_start), 0) FROM intervals"
                                 " WHERE flags & 2");
    int64_t fl = mwv_scalar(db, "SELECT COALESCE(SUM(t_end - t_start), 0) FROM intervals WHERE"
                                " bw_bound = 1");
    cJSON_AddNumberToObject(bw, "intervals",
                            (double)mwv_scalar(db, "SELECT COUNT(*) FROM intervals"));
    cJSON_AddNumberToObject(
        bw, "measured_intervals",
        (double)mwv_scalar(db, "SELECT COUNT(*) FROM intervals WHERE flags & 2"));
    cJSON_AddNumberToObject(
        bw, "flagged_intervals",
        (double)mwv_scalar(db, "SELECT COUNT(*) FROM intervals WHERE bw_bound=1"));
    cJSON_AddNumberToObject(
        bw, "uncalibrated_intervals",
        (double)mwv_scalar(db, "SELECT COUNT(*) FROM intervals WHERE flags & 8"));
    cJSON_AddNumberToObject(bw, "time_ns", (double)tot);
    cJSON_AddNumberToObject(bw, "flagged_ns", (double)fl);
    cJSON_AddNumberToObject(bw, "share", tot > 0 ? (double)fl / (double)tot : 0);
    /* false: the profile's calibration never saw memory saturate, so a low
     * share cannot be told from "not bound": nothing is called
     * bandwidth-bound, the load is given relative to the calibrated peak */
    int seen = mwv_saturation_seen(db);
    if (seen >= 0)
        cJSON_AddBoolToObject(bw, "detectable", seen);
    if (seen == 0)
        cJSON_AddStringToObject(bw, "note",
                                "the machine profile's calibration could not saturate memory "
                                "here, so nothing is called bandwidth-bound (false negatives "
                                "cannot be judged); the levels give the load relative to the "
                                "calibrated peak");
    int64_t t0 = mwv_scalar(db, "SELECT MIN(t_start) FROM intervals"),
            t1 = mwv_scalar(db, "SELECT MAX(t_end) FROM intervals");
    cJSON_AddNumberToObject(bw, "t_start", (double)t0);
    cJSON_AddNumberToObject(bw, "t_end", (double)t1);
    cJSON_AddItemToObject(bw, "timeline", timeline(db, t0, t1));
    mw_levels_collect(db, bw, t0, t1, TIMELINE_COLS);
    cJSON *lm = rows(db, "SELECT lat_method, AVG(latency_ns) AS mean_latency_ns,"
                         " MAX(threshold_ns) AS threshold_ns, COUNT(*) AS intervals FROM intervals"
                         " WHERE lat_method != '' AND latency_ns IS NOT NULL GROUP BY lat_method",
                     top);
    cJSON_AddItemToObject(bw, "latency", lm);
    /* the machine profile's read/write curve that set the threshold, and why
     * (META mix_curve: docs/saturation.md, "Read/write mixes"; each
     * process's newest, which memwatch report sets for loads that write) */
    cJSON_AddItemToObject(bw, "mix_curves",
                          rows(db,
                               "SELECT DISTINCT value AS mix_curve FROM meta m WHERE key = "
                               "'mix_curve' AND rowid = (SELECT MAX(rowid) FROM meta WHERE "
                               "process_id = m.process_id AND key = 'mix_curve') ORDER BY value",
                               top));
    /* whose load the flagged intervals were (report/load.c) */
    cJSON *load = mw_load_collect(db, top);
    if (load)
        cJSON_AddItemToObject(bw, "load", load);
    /* DRAM bandwidth where a bandwidth method was read (bytes NULL otherwise);
     * bytes per ns = GB/s; the mean is time-weighted over the intervals */
    cJSON_AddItemToObject(bw, "dram",
                          rows(db,
                               "SELECT bw_method, SUM(bytes) / SUM(t_end - t_start) AS mean_gbs,"
                               " MAX(bytes / (t_end - t_start)) AS max_gbs, COUNT(*) AS intervals"
                               " FROM intervals WHERE bytes IS NOT NULL AND bw_method != ''"
                               " AND t_end > t_start GROUP BY bw_method",
                               top));
}

/* The "stacks" object: how stacks were taken and how many were cut short. */
static void collect_stacks(sqlite3 *db, cJSON *root, int top)
{
    /* how stacks were taken (META unwind) and how many were cut short */
    cJSON *stk = cJSON_AddObjectToObject(root, "stacks");
    cJSON_AddItemToObject(stk, "unwind",
                          rows(db,
                               "SELECT CASE WHEN value LIKE 'dwarf%' THEN 'dwarf' WHEN value LIKE"
                               " 'fp%' THEN 'fp' ELSE value END AS method, COUNT(*) AS processes"
                               " FROM meta WHERE key = 'unwind' GROUP BY method ORDER BY method",
                               top));
    /* page-fault samples of recordings before their call chains were taken
     * (the event samples no PERF_SAMPLE_CALLCHAIN, 1 << 5) carry their leaf
     * frame only: not counted as stacks */
    cJSON_AddNumberToObject(
        stk, "samples",
        (double)mwv_scalar(db, "SELECT COUNT(*) FROM samples s JOIN events e ON e.id ="
                               " s.event_id WHERE s.source != 'fault' OR e.sample_type & 32"));
    cJSON_AddNumberToObject(stk, "samples_truncated",
                            (double)mwv_scalar(db, "SELECT COUNT(*) FROM samples s JOIN events e"
                                                   " ON e.id = s.event_id WHERE s.truncated = 1"
                                                   " AND (s.source != 'fault' OR e.sample_type"
                                                   " & 32)"));
    cJSON_AddNumberToObject(
        stk, "leaf_only",
        (double)mwv_scalar(db, "SELECT COUNT(*) FROM samples s JOIN events e ON e.id ="
                               " s.event_id WHERE s.source = 'fault' AND NOT e.sample_type & 32"));
    cJSON_AddNumberToObject(stk, "allocations",
                            (double)mwv_scalar(db, "SELECT COUNT(*) FROM allocations"));
    cJSON_AddNumberToObject(
        stk, "allocations_truncated",
        (double)mwv_scalar(db, "SELECT COUNT(*) FROM allocations WHERE truncated = 1"));
}

/* The "cpu" object: CPU time from the kernel's accounting (MWR_CPU), and the wall span. */
static void collect_cpu(sqlite3 *db, cJSON *root)
{
    /* CPU time from the kernel's accounting (MWR_CPU), and the wall span */
    cJSON *cpu = cJSON_AddObjectToObject(root, "cpu");
    cJSON_AddNumberToObject(cpu, "processes",
                            (double)mwv_scalar(db, "SELECT COUNT(*) FROM processes"));
    cJSON_AddNumberToObject(cpu, "accounted_processes",
                            (double)mwv_scalar(db, "SELECT COUNT(*) FROM processes WHERE user_ns IS"
                                                   " NOT NULL"));
    cJSON_AddNumberToObject(
        cpu, "user_ns", (double)mwv_scalar(db, "SELECT COALESCE(SUM(user_ns), 0) FROM processes"));
    cJSON_AddNumberToObject(
        cpu, "system_ns",
        (double)mwv_scalar(db, "SELECT COALESCE(SUM(system_ns), 0) FROM processes"));
    cJSON_AddNumberToObject(
        cpu, "minflt", (double)mwv_scalar(db, "SELECT COALESCE(SUM(minflt), 0) FROM processes"));
    cJSON_AddNumberToObject(
        cpu, "majflt", (double)mwv_scalar(db, "SELECT COALESCE(SUM(majflt), 0) FROM processes"));
    cJSON_AddNumberToObject(cpu, "wall_ns",
                            (double)mwv_scalar(db,
                                               "SELECT COALESCE(MAX(t_end) - MIN(t_start), 0) FROM"
                                               " processes WHERE t_end > 0"));
    cJSON_AddNumberToObject(cpu, "kernel_samples", 0); /* memwatch samples user space only */
}

/* One process row's notes from its META: the fault that ended it, the signal it kept
 * blocked, who reported it, and how it ended. */
static void process_notes(cJSON *p, sqlite3_stmt *fq, sqlite3_stmt *rq, sqlite3_stmt *bq,
                          sqlite3_stmt *mq)
{
    /* where a fault ended it (the library's META "fault") */
    const char *fault = NULL;
    if (fq) {
        sqlite3_reset(fq);
        sqlite3_bind_int64(fq, 1, (sqlite3_int64)num(p, "id"));
        if (sqlite3_step(fq) == SQLITE_ROW)
            fault = (const char *)sqlite3_column_text(fq, 0);
        if (fault)
            cJSON_AddStringToObject(p, "fault", fault);
    }
    /* why recording never began, or stopped: a program that kept memwatch's
     * timer signal blocked (META signals_blocked, preload/process.c): which,
     * and what it cost; one that ran without beginning (META never_began,
     * preload/lazy.c): what the lazy start saw; why it has no samples
     * (META sampling_error, preload/threads.c: the kernel refused the
     * sampler, and why). The last of each. */
    if (bq) {
        sqlite3_reset(bq);
        sqlite3_bind_int64(bq, 1, (sqlite3_int64)num(p, "id"));
        while (sqlite3_step(bq) == SQLITE_ROW) {
            const char *k = (const char *)sqlite3_column_text(bq, 0);
            const char *v = (const char *)sqlite3_column_text(bq, 1);
            if (k && v) {
                cJSON_DeleteItemFromObject(p, k);
                cJSON_AddStringToObject(p, k, v);
            }
        }
    }
    int by_parent = 0;
    if (rq) {
        sqlite3_reset(rq);
        sqlite3_bind_int64(rq, 1, (sqlite3_int64)num(p, "id"));
        if (sqlite3_step(rq) == SQLITE_ROW && sqlite3_column_text(rq, 0)) {
            cJSON_AddStringToObject(p, "reported_by", (const char *)sqlite3_column_text(rq, 0));
            by_parent = !strcmp((const char *)sqlite3_column_text(rq, 0), "parent");
        }
    }
    /* a process memwatch record -p let go of, or one it watched end that
     * was not its child (META end and exit_status, cli/attach.c) */
    if (mq) {
        const char *end = NULL, *st = NULL;
        sqlite3_reset(mq);
        sqlite3_bind_int64(mq, 1, (sqlite3_int64)num(p, "id"));
        while (sqlite3_step(mq) == SQLITE_ROW) {
            const char *k = (const char *)sqlite3_column_text(mq, 0);
            const char *v = (const char *)sqlite3_column_text(mq, 1);
            if (k && v && !strcmp(k, "end"))
                end = cJSON_AddStringToObject(p, "end", v)->valuestring;
            else if (k && v && !strcmp(k, "exit_status"))
                st = cJSON_AddStringToObject(p, "exit_status_note", v)->valuestring;
        }
        if (end && !strcmp(end, "detach")) {
            cJSON_AddStringToObject(p, "ended", "detached: memwatch let go and the process ran "
                                                "on (memwatch record -p)");
            return;
        }
        if (end && !strcmp(end, "exit") && st && !strncmp(st, "unknown", 7)) {
            cJSON_AddStringToObject(p, "ended", "ended while attached; its exit status went to "
                                                "its parent (not memwatch's child)");
            return;
        }
    }
    if (!num(p, "clean_exit") && by_parent && num(p, "exit_status") < 0) {
        int sig = (int)-num(p, "exit_status");
        char e[200];
        snprintf(e, sizeof e,
                 "killed by %s (its parent, pid %.0f, reported it when it reaped it; its file "
                 "has no trailer)",
                 signame(sig), num(p, "ppid"));
        cJSON_AddStringToObject(p, "ended", e);
        cJSON_AddNumberToObject(p, "signal", sig);
        cJSON_AddStringToObject(p, "signal_name", signame(sig));
    } else if (by_parent && num(p, "exit_status") >= 0) {
        /* a raw exit_group (Go programs): no trailer of its own */
        char e[400];
        snprintf(e, sizeof e,
                 "exited with status %.0f without memwatch's exit path (a raw exit_group, "
                 "as Go programs end, or a last image without libmemwatch.so), %s; its "
                 "parent, pid %.0f, reported its status and CPU time when it reaped it",
                 num(p, "exit_status"),
                 num(p, "clean_exit") ? "before memwatch recorded it"
                                      : "after it began recording (its file has no trailer)",
                 num(p, "ppid"));
        cJSON_AddStringToObject(p, "ended", e);
    } else if (!num(p, "clean_exit")) {
        cJSON_AddStringToObject(p, "ended", "no trailer: killed (SIGKILL), cut short or "
                                            "still running");
    } else if (num(p, "exit_status") < 0) {
        int sig = (int)-num(p, "exit_status");
        char e[400];
        if (by_parent)
            snprintf(e, sizeof e,
                     "killed by %s before memwatch recorded it (its parent, pid %.0f, reported "
                     "it when it reaped it)",
                     signame(sig), num(p, "ppid"));
        else
            snprintf(e, sizeof e, "killed by %s%s%s%s", signame(sig), fault ? " (" : "",
                     fault ? fault : "", fault ? ")" : "");
        cJSON_AddStringToObject(p, "ended", e);
        cJSON_AddNumberToObject(p, "signal", sig);
        cJSON_AddStringToObject(p, "signal_name", signame(sig));
    } else {
        char e[48];
        snprintf(e, sizeof e, "exited with status %.0f", num(p, "exit_status"));
        cJSON_AddStringToObject(p, "ended", e);
    }
}

/* The "processes" rows, each with how it ended (process_notes). */
static void collect_processes(sqlite3 *db, cJSON *root, int top)
{
    cJSON_AddItemToObject(
        root, "processes",
        rows(db,
             "SELECT p.id, pid, ppid, rank, hostname, exe, cmdline, file, t_start, t_end,"
             " exit_status, clean_exit, status, threshold, threshold_source, user_ns, system_ns,"
             " minflt, majflt,"
             " (SELECT COUNT(*) FROM threads t WHERE t.process_id = p.id AND NOT (" MW_OWN_THREAD
             ")) AS threads,"
             " (SELECT COUNT(*) FROM samples s WHERE s.process_id = p.id) AS samples,"
             " (SELECT COUNT(*) FROM samples s WHERE s.process_id = p.id AND s.at_memory IS NOT"
             " NULL) AS decoded,"
             " (SELECT COUNT(*) FROM samples s WHERE s.process_id = p.id AND s.at_memory = 1)"
             " AS at_memory,"
             " COALESCE(iv.tot, 0) AS measured_ns, COALESCE(iv.fl, 0) AS flagged_ns"
             " FROM processes p LEFT JOIN (SELECT process_id,"
             "  SUM(CASE WHEN flags & 2 THEN t_end - t_start ELSE 0 END) AS tot,"
             "  SUM(CASE WHEN bw_bound = 1 THEN t_end - t_start ELSE 0 END) AS fl"
             "  FROM intervals GROUP BY process_id) iv ON iv.process_id = p.id"
             " ORDER BY COALESCE(iv.fl, 0) DESC, COALESCE(user_ns + system_ns, 0) DESC,"
             " t_end - t_start DESC, rank, pid, p.id",
             top));
    const cJSON *pr;
    sqlite3_stmt *fq = NULL;
    sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE process_id = ? AND key = 'fault'", -1,
                       &fq, NULL);
    /* a child its parent wrote on reaping it (a signal memwatch does not
     * catch ended it before it began recording: META reported_by) */
    sqlite3_stmt *rq = NULL;
    sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE process_id = ? AND key = 'reported_by'",
                       -1, &rq, NULL);
    sqlite3_stmt *bq = NULL;
    sqlite3_prepare_v2(db,
                       "SELECT key, value FROM meta WHERE process_id = ? AND key IN"
                       " ('signals_blocked', 'never_began', 'sampling_error') ORDER BY rowid",
                       -1, &bq, NULL);
    sqlite3_stmt *mq = NULL;
    sqlite3_prepare_v2(db,
                       "SELECT key, value FROM meta WHERE process_id = ? AND key IN ('end',"
                       " 'exit_status') ORDER BY rowid",
                       -1, &mq, NULL);
    cJSON_ArrayForEach(pr, cJSON_GetObjectItem(root, "processes"))
        process_notes((cJSON *)pr, fq, rq, bq, mq);
    sqlite3_finalize(mq);
    sqlite3_finalize(fq);
    sqlite3_finalize(rq);
    sqlite3_finalize(bq);
}

static cJSON *collect(sqlite3 *db, int top)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *run = rows(db, "SELECT created, memwatch_version, inputs, nfiles, threshold,"
                          " threshold_source FROM runs LIMIT 1", top);
    cJSON_AddItemToObject(root, "run", cJSON_DetachItemFromArray(run, 0));
    cJSON_Delete(run);
    collect_processes(db, root, top);
    cJSON_AddItemToObject(root, "commands", commands(cJSON_GetObjectItem(root, "processes")));
    cJSON_AddNumberToObject(root, "precise_samples",
                            (double)mwv_scalar(db, "SELECT COUNT(*) FROM samples WHERE"
                                                   " source='precise'"));
    /* the program's threads of processes that have more than one (the main
     * thread included, memwatch's own interval thread left out), with their
     * samples and CPU time; a main thread without its own CPU record gets the
     * process's CPU time less its other threads' (derived) */
    cJSON *thr = rows(db,
                      "SELECT t.process_id, t.tid, t.name, t.user_ns, t.system_ns,"
                      " t.tid = p.pid AS main,"
                      " (SELECT COUNT(*) FROM samples s WHERE s.process_id = t.process_id AND"
                      " s.tid = t.tid) AS samples,"
                      " (SELECT COUNT(*) FROM samples s WHERE s.process_id = t.process_id AND"
                      " s.tid = t.tid AND s.in_flagged = 1) AS in_flagged"
                      " FROM threads t JOIN processes p"
                      " ON p.id = t.process_id WHERE NOT (" MW_OWN_THREAD ") AND"
                      " (SELECT COUNT(*) FROM threads u WHERE u.process_id = t.process_id AND"
                      " NOT (" MW_OWN_THREAD_U ")) > 1"
                      " ORDER BY t.process_id, in_flagged DESC, samples DESC,"
                      " COALESCE(t.user_ns + t.system_ns, 0) DESC, t.tid",
                      top);
    cJSON_AddItemToObject(root, "threads", thr);
    derive_main_cpu(db, thr);
    cJSON_AddItemToObject(root, "samples",
                          rows(db,
                               "SELECT source, COUNT(*) AS samples, SUM(in_flagged) AS"
                               " in_flagged, SUM(selected) AS selected FROM samples GROUP BY"
                               " source ORDER BY source",
                               top));
    collect_cpu(db, root);
    collect_stacks(db, root, top);
    collect_bandwidth(db, root, top);

    int perfmap = mw_names_have_perfmap(db);
    add_code(db, root, "flagged", 1, top, perfmap);
    if (mwv_saturation_seen(db) == 0)
        add_code(db, root, "high_load", 2, top, perfmap);
    add_code(db, root, "overall", 0, top, perfmap);

    collect_data(db, root, top);
    collect_gpu(db, root, top);
    mw_rgn_collect(db, root, top);
    mw_names_collect(db, root, top);
    return root;
}

/* Shares from few samples (docs/report.md, "Shares from few samples"):
 * below MW_FEW_SAMPLES samples a share is marked too few; below
 * MW_CI_SAMPLES it carries its count and its 95 % Wilson score interval. */
#define MW_FEW_SAMPLES 20
#define MW_CI_SAMPLES 1000

static void mw_wilson95(double k, double n, double *lo, double *hi)
{
    const double z = 1.959963984540054;
    if (n <= 0) {
        *lo = 0, *hi = 1;
        return;
    }
    double p = k / n, z2n = z * z / n;
    double c = (p + z2n / 2) / (1 + z2n);
    double h = z * sqrt(p * (1 - p) / n + z2n / (4 * n)) / (1 + z2n);
    *lo = c - h < 0 ? 0 : c - h;
    *hi = c + h > 1 ? 1 : c + h;
}

/* "  [8 of 9, 95% CI 56.5-98.0%, too few samples]" or "" */
static const char *share_ci(double k, double n, char *buf, size_t len)
{
    buf[0] = 0;
    if (n <= 0 || n >= MW_CI_SAMPLES)
        return buf;
    double lo, hi;
    mw_wilson95(k, n, &lo, &hi);
    snprintf(buf, len, "  [%.0f of %.0f, 95%% CI %.1f-%.1f%%%s]", k, n, 100 * lo, 100 * hi,
             n < MW_FEW_SAMPLES ? ", too few samples" : "");
    return buf;
}

/* The line under a title of shares from n samples. */
static void few_note(FILE *f, double n)
{
    if (n > 0 && n < MW_FEW_SAMPLES)
        fprintf(f, "  too few samples (%.0f, fewer than %d): these shares are noise; the 95%% "
                   "interval of each is in brackets\n",
                n, MW_FEW_SAMPLES);
}

/* The sampled allocation sites (docs/raw-format.md, ALLOC_SITE): how many
 * allocations each made and how many of them the report holds; samples in
 * the others are unattributed. */
static void text_alloc_sites(FILE *f, const cJSON *sites)
{
    if (cJSON_GetArraySize(sites) <= 0)
        return;
    fprintf(f, "\nSampled allocation sites (a site's first 32 allocations are recorded, later "
               "ones sampled; data samples in unrecorded ones are unattributed)\n");
    const cJSON *r;
    cJSON_ArrayForEach(r, sites)
    {
        char sz[32], site[300];
        mwv_human_bytes(num(r, "bytes"), sz, sizeof sz);
        if (str(r, "site_file"))
            snprintf(site, sizeof site, "%s:%.0f (%s)", mwv_base(str(r, "site_file")),
                     num(r, "site_line"), str(r, "site_function") ? str(r, "site_function") : "?");
        else
            snprintf(site, sizeof site, "%s",
                     str(r, "site_function") ? str(r, "site_function") : "?");
        fprintf(f, "  %s: %.0f allocations of this site (%s), %.0f recorded (sampled 1 in %.0f)\n",
                site, num(r, "allocations"), sz, num(r, "recorded"), num(r, "period"));
    }
}

/* Interpreted and JIT-compiled code first: each sample at the innermost
 * frame a perf map names (a Python or JavaScript function), with the leaf
 * functions it ran (the interpreter's C code). */
static void text_interpreted(FILE *f, const cJSON *o, double total, int top)
{
    const cJSON *in = cJSON_GetObjectItem(o, "interpreted"), *r, *l;
    if (cJSON_GetArraySize(in) <= 0)
        return;
    char ci[96];
    int k = 0;
    fprintf(f,
            "  interpreted and JIT-compiled code (perf map): each sample at the innermost such "
            "frame of its stack; %.0f of %.0f samples have one\n",
            num(o, "interpreted_samples"), total);
    fprintf(f, "  %6s  %-40s %s\n", "share", "function", "running (leaf functions)");
    cJSON_ArrayForEach(r, in)
    {
        if (k++ >= top)
            break;
        char run[400];
        size_t n = 0;
        run[0] = 0;
        cJSON_ArrayForEach(l, cJSON_GetObjectItem(r, "leaves"))
        {
            if (n >= sizeof run - 1)
                break;
            n += (size_t)snprintf(run + n, sizeof run - n, "%s%s %.0f%%", n ? ", " : "",
                                  str(l, "function") ? str(l, "function") : "?",
                                  100 * num(l, "samples") / num(r, "samples"));
        }
        fprintf(f, "  %5.1f%%  %-40s %s%s\n", 100 * num(r, "samples") / total,
                str(r, "function") ? str(r, "function") : "?", run,
                share_ci(num(r, "samples"), total, ci, sizeof ci));
    }
}

/* The processes whose samplers the kernel refused (META sampling_error). */
static int text_unsampled(const cJSON *root, int *nproc)
{
    const cJSON *p;
    int n = 0;
    *nproc = 0;
    cJSON_ArrayForEach(p, cJSON_GetObjectItem(root, "processes"))
    {
        ++*nproc;
        n += str(p, "sampling_error") != NULL;
    }
    return n;
}

static void text_code(FILE *f, const cJSON *root, const cJSON *o, const char *title, int top)
{
    double total = num(o, "samples");
    const char *src = str(o, "source");
    fprintf(f, "\n%s (%s samples: %.0f)\n", title, src ? src : "?", total);
    if (total == 0) {
        int np, nu = text_unsampled(root, &np);
        /* only where no process had samples: else this table is empty for
         * its own reason */
        if (nu && num(cJSON_GetObjectItem(root, "overall"), "samples") == 0)
            fprintf(f,
                    "  none: the kernel refused memwatch's sampling in %d of %d processes "
                    "(their lines under Processes say why)\n",
                    nu, np);
        else
            fprintf(f, "  none\n");
        return;
    }
    few_note(f, total);
    const cJSON *r;
    char ci[96];
    int k = 0;
    text_interpreted(f, o, total, top);
    fprintf(f, "  %6s  %-40s %s\n", "share", "source line", "function");
    cJSON_ArrayForEach(r, cJSON_GetObjectItem(o, "lines"))
    {
        if (k++ >= top)
            break;
        char loc[256];
        mw_summary_loc(str(r, "file"), num(r, "line"), loc, sizeof loc);
        char mem[48] = "";
        if (num(r, "decoded") > 0)
            snprintf(mem, sizeof mem, " (at memory accesses: %.0f%%)",
                     100 * num(r, "at_memory") / num(r, "decoded"));
        fprintf(f, "  %5.1f%%  %-40s %s%s%s\n", 100 * num(r, "samples") / total, loc,
                str(r, "function") ? str(r, "function") : "?",
                share_ci(num(r, "samples"), total, ci, sizeof ci), mem);
    }
    if (num(o, "no_memory") > 0) {
        fprintf(f, "  %.0f of %.0f decoded samples here were at code without memory accesses "
                   "(compute beside the load), kept apart; most at:",
                num(o, "no_memory"), num(o, "decoded"));
        const cJSON *nl;
        int first = 1;
        cJSON_ArrayForEach(nl, cJSON_GetObjectItem(o, "no_memory_lines"))
        {
            if (str(nl, "file"))
                fprintf(f, "%s %s:%.0f (%.0f)", first ? "" : ",", mwv_base(str(nl, "file")),
                        num(nl, "line"), num(nl, "samples"));
            else /* no line: the function (module@0xSTART where it has no symbol) */
                fprintf(f, "%s %s (%.0f)", first ? "" : ",",
                        str(nl, "function") ? str(nl, "function") : "?", num(nl, "samples"));
            first = 0;
        }
        fprintf(f, "\n");
    }
    k = 0;
    fprintf(f, "  %6s  %s\n", "share", "function (module)");
    cJSON_ArrayForEach(r, cJSON_GetObjectItem(o, "functions"))
    {
        if (k++ >= top)
            break;
        fprintf(f, "  %5.1f%%  %s (%s)%s\n", 100 * num(r, "samples") / total,
                str(r, "function") ? str(r, "function") : "?", mwv_base(str(r, "module")),
                share_ci(num(r, "samples"), total, ci, sizeof ci));
    }
    const cJSON *f0 = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "functions"), 0);
    if (f0 && str(f0, "function"))
        fprintf(f, "  (who calls it: memwatch report --callers '%s'; inclusive shares: --sort "
                   "function)\n",
                str(f0, "function"));
}

/* "N more processes: 1,702 of cc1, 20 of as, ..." by command (the exe's
 * base name), most processes first. */
static void text_more_processes(FILE *f, const cJSON *procs, int top)
{
    struct cnt {
        char name[64]; /* a copy: str() lends rotating buffers */
        int n;
        double cpu;
    } c[16];
    int nc = 0, rest = 0, other = 0, i = 0;
    const cJSON *r;
    cJSON_ArrayForEach(r, procs)
    {
        if (i++ < top)
            continue;
        rest++;
        char b[sizeof c[0].name];
        snprintf(b, sizeof b, "%s", mwv_base(str(r, "exe")));
        int k = 0;
        while (k < nc && strcmp(c[k].name, b))
            k++;
        if (k == nc) {
            if (nc == 16) {
                other++;
                continue;
            }
            c[nc] = (struct cnt){.n = 0};
            memcpy(c[nc++].name, b, sizeof b);
        }
        c[k].n++;
        c[k].cpu += num(r, "user_ns") + num(r, "system_ns");
    }
    for (int a = 0; a < nc; a++) /* most processes first (a few dozen entries) */
        for (int b = a + 1; b < nc; b++)
            if (c[b].n > c[a].n) {
                struct cnt t = c[a];
                c[a] = c[b];
                c[b] = t;
            }
    fprintf(f, "  ... %d more process%s:", rest, rest == 1 ? "" : "es");
    for (int a = 0; a < nc && a < 8; a++)
        fprintf(f, "%s %d of %s (%.2f s CPU)", a ? "," : "", c[a].n, c[a].name, c[a].cpu / 1e9);
    if (nc > 8 || other)
        fprintf(f, ", and others");
    fprintf(f, " (--top N shows more)\n");
}

/* 1234567 as "1,234,567" */
static const char *thousands(double v, char *buf, size_t n)
{
    char d[32];
    snprintf(d, sizeof d, "%.0f", v);
    size_t l = strlen(d), o = 0;
    for (size_t k = 0; k < l && o + 2 < n; k++) {
        if (k && (l - k) % 3 == 0 && d[k - 1] != '-')
            buf[o++] = ',';
        buf[o++] = d[k];
    }
    buf[o] = 0;
    return buf;
}

/* The processes by command, at most top rows, the rest in one line. */
static void text_commands(FILE *f, const cJSON *cmds, int nproc, int top)
{
    int nc = cJSON_GetArraySize(cmds), k = 0;
    fprintf(f, "\nProcesses (%d, %d command%s; by command, most flagged time, then most CPU time "
               "first)\n",
            nproc, nc, nc == 1 ? "" : "s");
    fprintf(f, "  %-24s %10s %10s %10s %7s %9s\n", "command", "processes", "CPU user", "system",
            "bound", "samples");
    const cJSON *c;
    double rest_p = 0;
    cJSON_ArrayForEach(c, cmds)
    {
        if (k++ >= top) {
            rest_p += num(c, "processes");
            continue;
        }
        char cnt[40], b[16];
        snprintf(cnt, sizeof cnt, "\u00d7");
        thousands(num(c, "processes"), cnt + strlen(cnt), sizeof cnt - strlen(cnt));
        if (num(c, "measured_ns") > 0)
            snprintf(b, sizeof b, "%.1f%%", 100 * num(c, "share"));
        else
            snprintf(b, sizeof b, "-");
        /* the multiplication sign is two bytes: one column more */
        fprintf(f, "  %-24.24s %11s %8.2f s %8.2f s %7s %9.0f\n", str(c, "command"), cnt,
                num(c, "user_ns") / 1e9, num(c, "system_ns") / 1e9, b, num(c, "samples"));
    }
    if (nc > top)
        fprintf(f, "  ... and %d more command%s (%.0f processes)\n", nc - top,
                nc - top == 1 ? "" : "s", rest_p);
}

/* The "GPU source lines" section (PC sampling). */
static void text_gpu_lines(FILE *f, const cJSON *root)
{
    const cJSON *r;
    const cJSON *gl = cJSON_GetObjectItem(root, "gpu_lines");
    if (cJSON_GetArraySize(gl) > 0) {
        fprintf(f, "\nGPU source lines (PC sampling; memory: samples stalled on memory)\n");
        cJSON_ArrayForEach(r, gl)
        {
            const char *st = str(r, "stalls");
            char nm[80];
            mw_kernel_short(str(r, "function"), nm, 30);
            fprintf(f, "  %s:%.0f  %-30s %8.0f samples, %5.1f%% memory%s%s\n",
                    mwv_base(str(r, "file")), num(r, "line"), nm, num(r, "samples"),
                    num(r, "samples") > 0 ? 100 * num(r, "stall_memory") / num(r, "samples") : 0,
                    st && *st ? "  " : "", st ? st : "");
        }
    }
}

/* The "GPU kernels" table, short kernel names told apart where they collide. */
static void text_gpu_kernels(FILE *f, const cJSON *root)
{
    const cJSON *r;
    const cJSON *gk = cJSON_GetObjectItem(root, "gpu_kernels");
    if (cJSON_GetArraySize(gk) > 0) {
        fprintf(f, "\nGPU kernels (per launch: DRAM bytes from PM-sampling windows, each "
                   "window's bytes shared by the launches in it by byte rate x time; "
                   "docs/gpu.md)\n");
        fprintf(f, "  %-3s %-44s %8s %8s %8s %11s %12s %11s\n", "dev", "kernel", "launches",
                "flagged", "measured", "time/launch", "bytes/launch", "mean");
        /* short names (kernel_name.c); two kernels never share one: a number
         * tells apart the kernels whose short names collide (the same kernel
         * on two devices keeps its name) */
        char shorts[64][80];
        const char *fulls[64];
        int k = 0;
        cJSON_ArrayForEach(r, gk)
        {
            char bwb[32], byb[32], nm[80];
            const char *full = str(r, "name") ? str(r, "name") : "?";
            mwv_human_bytes(num(r, "mean_dram_bw"), bwb, sizeof bwb);
            mwv_human_bytes(num(r, "bytes_per_launch"), byb, sizeof byb);
            mw_kernel_short(full, nm, 40);
            int same = 0;
            for (int j = 0; j < k && j < 64; j++)
                same += !strcmp(shorts[j], nm) && strcmp(fulls[j], full);
            if (k < 64) {
                snprintf(shorts[k], sizeof shorts[k], "%s", nm);
                fulls[k] = full;
            }
            k++;
            if (same) {
                size_t l = strlen(nm);
                snprintf(nm + l, sizeof nm - l, " #%d", same + 1);
            }
            fprintf(f, "  %-3.0f %-44s %8.0f %8.0f %8.0f %8.3f ms %12s %9s/s\n",
                    num(r, "device"), nm, num(r, "launches"), num(r, "bw_bound"),
                    num(r, "measured"), num(r, "time_per_launch_ns") / 1e6, byb, bwb);
        }
    }
}

/* The "GPU devices" lines, and the launches per rank and device where there are several. */
static void text_gpu_devices(FILE *f, const cJSON *root)
{
    const cJSON *r;
    const cJSON *gd = cJSON_GetObjectItem(root, "gpu_devices");
    if (cJSON_GetArraySize(gd) > 0) {
        fprintf(f, "\nGPU devices\n");
        cJSON_ArrayForEach(r, gd)
        {
            char by[32], th[32], who[160] = "";
            mwv_human_bytes(num(r, "dram_bytes"), by, sizeof by);
            mwv_human_bytes(num(r, "threshold_bw"), th, sizeof th);
            if (str(r, "ranks") && strchr(str(r, "ranks"), ','))
                snprintf(who, sizeof who, "; ranks %s", str(r, "ranks"));
            else if (num(r, "processes") > 1)
                snprintf(who, sizeof who, "; %.0f processes", num(r, "processes"));
            char nm[96] = "";
            if (str(r, "name"))
                snprintf(nm, sizeof nm, " (%s)", str(r, "name"));
            fprintf(f, "  %s device %.0f%s: %.0f launches, %.0f bandwidth-bound, %.3f ms, "
                       "%s from DRAM; threshold %s/s%s%s\n",
                    str(r, "host") ? str(r, "host") : "?", num(r, "device"), nm,
                    num(r, "launches"), num(r, "bw_bound"),
                    num(r, "time_ns") / 1e6, by, th,
                    num(r, "uncalibrated") > 0 ? " (uncalibrated)" : "", who);
        }
    }
    const cJSON *gr = cJSON_GetObjectItem(root, "gpu_ranks");
    if (cJSON_GetArraySize(gr) > 1) {
        fprintf(f, "\nGPU launches per rank (process) and device\n");
        fprintf(f, "  %-5s %-8s %-16s %-4s %8s %8s %11s %12s\n", "rank", "pid", "host", "dev",
                "launches", "flagged", "time", "DRAM bytes");
        cJSON_ArrayForEach(r, gr)
        {
            char by[32], rk[16] = "-";
            mwv_human_bytes(num(r, "dram_bytes"), by, sizeof by);
            if (cJSON_IsNumber(cJSON_GetObjectItem(r, "rank")))
                snprintf(rk, sizeof rk, "%.0f", num(r, "rank"));
            fprintf(f, "  %-5s %-8.0f %-16.16s %-4.0f %8.0f %8.0f %8.3f ms %12s\n", rk,
                    num(r, "pid"), str(r, "host") ? str(r, "host") : "?", num(r, "device"),
                    num(r, "launches"), num(r, "bw_bound"), num(r, "time_ns") / 1e6, by);
        }
    }
}

/* Precise loads by memory level, then the "Losses" section. */
static void text_levels_losses(FILE *f, const cJSON *root)
{
    const cJSON *r;
    const cJSON *ml = cJSON_GetObjectItem(root, "memory_levels");
    if (cJSON_GetArraySize(ml) > 0) {
        fprintf(f, "\nPrecise loads by memory level (data_src)\n");
        cJSON_ArrayForEach(r, ml)
            fprintf(f, "  %-14s %8.0f samples, %6.0f selected, mean latency %.0f cycles\n",
                    str(r, "level") ? str(r, "level") : "?", num(r, "samples"),
                    num(r, "selected"), num(r, "mean_weight"));
    }
    fprintf(f, "\nLosses\n");
    int any = 0;
    cJSON_ArrayForEach(r, cJSON_GetObjectItem(root, "losses"))
    {
        const char *kind = str(r, "kind") ? str(r, "kind") : "?";
        fprintf(f, "  %-16s %.0f (%.0f records)%s\n", kind, num(r, "count"), num(r, "records"),
                !strcmp(kind, "short_threads")
                    ? ": samples never taken, threads shorter than one sampling period of CPU "
                      "time (META samples_short_threads)"
                    : "");
        any = 1;
    }
    if (!any)
        fprintf(f, "  none reported\n");
}

/* The "Top data objects" section: the data samples touched, with their allocation sites. */
static void text_objects(FILE *f, const cJSON *root, int top)
{
    const cJSON *r;
    fprintf(f, "\nTop data objects (%.0f samples with a data address, %.0f of them decoded from "
               "timer samples; %.0f unattributed; most samples inside flagged intervals first)\n",
            num(root, "addressed_samples"), num(root, "decoded_samples"),
            num(root, "unattributed_addresses"));
    double addressed = num(root, "addressed_samples");
    if (num(root, "timer_decoded") > 0)
        fprintf(f, "  (%.0f of %.0f decoded timer samples in code that accesses memory; a sample is "
                   "shared among the accesses around it: docs/data-addresses.md)\n",
                num(root, "timer_at_memory"), num(root, "timer_decoded"));
    if (str(root, "decode_note"))
        fprintf(f, "  (timer samples' data addresses not decoded: %s)\n", str(root, "decode_note"));
    if (num(root, "fault_samples") > 0)
        fprintf(f, "  (%.0f page-fault samples name data where it was first touched; counted "
                   "apart, as \"first touched\")\n",
                num(root, "fault_samples"));
    double faults = num(root, "fault_samples");
    few_note(f, addressed > 0 ? addressed : faults);
    int ko = 0;
    cJSON_ArrayForEach(r, cJSON_GetObjectItem(root, "objects"))
    {
        if (ko++ >= top)
            break;
        char ci[96];
        char sz[32], site[300] = "";
        mwv_human_bytes(num(r, "size"), sz, sizeof sz);
        if (str(r, "site_file"))
            snprintf(site, sizeof site, " allocated at %s:%.0f (%s)", mwv_base(str(r, "site_file")),
                     num(r, "site_line"), str(r, "site_function") ? str(r, "site_function") : "?");
        else if (str(r, "site_function"))
            snprintf(site, sizeof site, " allocated in %s", str(r, "site_function"));
        if (num(r, "samples") > 0)
            fprintf(f, "  %5.1f%%  ", addressed > 0 ? 100 * num(r, "samples") / addressed : 0);
        else
            fprintf(f, "  %6s  ", "-");
        fprintf(f, "%-6s %-22s %10s%s", str(r, "kind"), str(r, "name") ? str(r, "name") : "?", sz,
                site);
        if (num(r, "objects") > 1 && num(r, "processes") <= 1)
            fprintf(f, ", %.0f allocations", num(r, "objects"));
        if (num(r, "processes") > 1) /* one row for the same object in many processes */
            fprintf(f, ", in %.0f processes (%s .. %s)", num(r, "processes"),
                    str(r, "first_process") ? str(r, "first_process") : "?",
                    str(r, "last_process") ? str(r, "last_process") : "?");
        if (num(r, "in_flagged") > 0)
            fprintf(f, ", %.1f in flagged intervals", num(r, "in_flagged"));
        if (num(r, "faults") > 0) {
            fprintf(f, "%sfirst touched: %.0f fault samples", num(r, "samples") > 0 ? "; " : ", ",
                    num(r, "faults"));
            if (num(r, "faults_in_flagged") > 0)
                fprintf(f, ", %.0f in flagged intervals", num(r, "faults_in_flagged"));
        }
        fprintf(f, "%s\n",
                num(r, "samples") > 0 ? share_ci(num(r, "samples"), addressed, ci, sizeof ci)
                                      : share_ci(num(r, "faults"), faults, ci, sizeof ci));
    }
}

/* The "CPU time" lines: the kernel's accounting, and what the code shares are shares of. */
static void text_cpu(FILE *f, const cJSON *root)
{
    const cJSON *cpu = cJSON_GetObjectItem(root, "cpu");
    double cu = num(cpu, "user_ns") / 1e9, cs = num(cpu, "system_ns") / 1e9;
    fprintf(f, "\nCPU time (the kernel's accounting of %.0f of %.0f processes): user %.2f s, "
               "system %.2f s",
            num(cpu, "accounted_processes"), num(cpu, "processes"), cu, cs);
    if (cu + cs > 0)
        fprintf(f, " (%.1f%% of the CPU time in the kernel)", 100 * cs / (cu + cs));
    fprintf(f, "; %.0f minor and %.0f major page faults; wall time %.2f s\n",
            num(cpu, "minflt"), num(cpu, "majflt"), num(cpu, "wall_ns") / 1e9);
    if (cu + cs > 0)
        fprintf(f, "  memwatch samples user space only (its cpu-clock events exclude the kernel):"
                   " the code shares below are shares of the %.2f s of user time%s\n",
                cu,
                cs > cu ? "; most of the CPU time went to the kernel on the program's behalf "
                          "(system calls, page faults), which no sample covers"
                        : "");
}

/* The "samples:" and "stacks:" lines under the processes. */
static void text_samples_stacks(FILE *f, const cJSON *root)
{
    const cJSON *r;
    fprintf(f, "  samples:");
    cJSON_ArrayForEach(r, cJSON_GetObjectItem(root, "samples"))
        fprintf(f, " %s %.0f (%.0f in flagged intervals, %.0f of them naming code and data)",
                str(r, "source") ? str(r, "source") : "?", num(r, "samples"), num(r, "in_flagged"), num(r, "selected"));
    fprintf(f, "\n");

    const cJSON *stk = cJSON_GetObjectItem(root, "stacks");
    fprintf(f, "  stacks:");
    cJSON_ArrayForEach(r, cJSON_GetObjectItem(stk, "unwind"))
        fprintf(f, " %s in %.0f process%s,", str(r, "method") ? str(r, "method") : "?",
                num(r, "processes"), num(r, "processes") == 1 ? "" : "es");
    fprintf(f, " %.0f of %.0f sample stacks and %.0f of %.0f allocation stacks truncated",
            num(stk, "samples_truncated"), num(stk, "samples"),
            num(stk, "allocations_truncated"), num(stk, "allocations"));
    if (num(stk, "leaf_only") > 0)
        fprintf(f, "; %.0f page-fault samples carry their leaf frame only",
                num(stk, "leaf_only"));
    fprintf(f, "\n");
    if (num(stk, "samples_truncated") + num(stk, "allocations_truncated") > 0)
        fprintf(f, "    (cut short before the program's or thread's entry: deeper than the "
                   "stack copy or the frame limit, a frame without unwind information, or a "
                   "return address where no code lies (counted under Names); their callers "
                   "are missing from the caller view)\n");
}

/* Under a process row: every thread of the program, busiest first (memwatch's own left
 * out). */
static void text_threads(FILE *f, const cJSON *root, const cJSON *r, int top)
{
    /* every thread of the program, busiest first (memwatch's own left out) */
    const cJSON *t;
    int nt = 0, more = 0;
    cJSON_ArrayForEach(t, cJSON_GetObjectItem(root, "threads"))
    {
        if (num(t, "process_id") != num(r, "id"))
            continue;
        if (nt++ >= top) {
            more++;
            continue;
        }
        fprintf(f, "    thread %-16s tid %-7.0f %5.0f samples",
                str(t, "name") ? str(t, "name") : "?", num(t, "tid"), num(t, "samples"));
        if (cJSON_GetObjectItem(t, "user_ns"))
            fprintf(f, ", CPU user %.2f s, system %.2f s", num(t, "user_ns") / 1e9,
                    num(t, "system_ns") / 1e9);
        else
            fprintf(f, ", CPU time not recorded");
        if (num(t, "in_flagged") > 0)
            fprintf(f, ", %.0f samples in flagged intervals", num(t, "in_flagged"));
        if (num(t, "main"))
            fprintf(f, ", main thread");
        if (cJSON_IsTrue(cJSON_GetObjectItem(t, "cpu_derived")))
            fprintf(f, " (CPU time derived: the process's less its other threads')");
        fprintf(f, "\n");
    }
    if (more)
        fprintf(f, "    ... %d more thread%s (--top N shows more)\n", more,
                more == 1 ? "" : "s");
}

/* The processes: by command and the busiest where there are more than top, else all; each
 * with its threads. */
static void text_processes(FILE *f, const cJSON *root, int top)
{
    const cJSON *r;
    const cJSON *procs = cJSON_GetObjectItem(root, "processes");
    int nproc = cJSON_GetArraySize(procs), shown = 0;
    if (nproc > top) {
        text_commands(f, cJSON_GetObjectItem(root, "commands"), nproc, top);
        fprintf(f, "Busiest processes (%d of %d; most flagged time, then most CPU time first)\n",
                top, nproc);
    } else {
        fprintf(f, "\nProcesses (%d; most flagged time, then most CPU time first)\n", nproc);
    }
    cJSON_ArrayForEach(r, procs)
    {
        if (shown++ >= top)
            break;
        double dur = num(r, "t_end") - num(r, "t_start");
        fprintf(f, "  pid %-7.0f", num(r, "pid"));
        if (cJSON_GetObjectItem(r, "rank"))
            fprintf(f, " rank %-4.0f", num(r, "rank"));
        if (str(r, "hostname"))
            fprintf(f, " %s", str(r, "hostname"));
        const char *cmd = str(r, "cmdline") ? str(r, "cmdline") : str(r, "exe");
        char cut[168];
        if (nproc > top && cmd && strlen(cmd) > 160) { /* many processes: one line each */
            snprintf(cut, sizeof cut, "%.157s...", cmd);
            cmd = cut;
        }
        const cJSON *ts = cJSON_GetObjectItem(r, "t_start");
        if (!ts || cJSON_IsNull(ts)) /* its parent reported it: when it started is not known */
            fprintf(f, " %s  start unknown,", cmd ? cmd : "(command unknown)");
        else
            fprintf(f, " %s  %.2f s,", cmd ? cmd : "", dur > 0 ? dur / 1e9 : 0);
        if (num(r, "threads") > 0)
            fprintf(f, " %.0f thread%s,", num(r, "threads"), num(r, "threads") == 1 ? "" : "s");
        fprintf(f, " %.0f samples, %s", num(r, "samples"), str(r, "ended") ? str(r, "ended") : "?");
        if (cJSON_GetObjectItem(r, "user_ns"))
            fprintf(f, ", CPU user %.2f s, system %.2f s", num(r, "user_ns") / 1e9,
                    num(r, "system_ns") / 1e9);
        if (num(r, "decoded") > 0) /* docs/data-addresses.md */
            fprintf(f, ", at memory accesses %.0f%%", 100 * num(r, "at_memory") / num(r, "decoded"));
        /* nothing is called bound where memory could not saturate */
        if (num(r, "flagged_ns") > 0 &&
            !cJSON_IsFalse(cJSON_GetObjectItem(cJSON_GetObjectItem(root, "bandwidth"), "saturable")))
            fprintf(f, ", bound %.1f%%",
                    num(r, "measured_ns") > 0 ? 100 * num(r, "flagged_ns") / num(r, "measured_ns")
                                              : 0);
        fprintf(f, "\n");
        const char *st = str(r, "status");
        if (st && strcmp(st, "ok"))
            fprintf(f, "    %s: %s\n", mwv_base(str(r, "file")), st);
        if (str(r, "signals_blocked"))
            fprintf(f, "    signals blocked: %s\n", str(r, "signals_blocked"));
        if (str(r, "never_began"))
            fprintf(f, "    never began: %s\n", str(r, "never_began"));
        if (str(r, "sampling_error"))
            fprintf(f, "    %s\n", str(r, "sampling_error"));
        text_threads(f, root, r, top);
    }
    if (nproc > top)
        text_more_processes(f, procs, top);
}

static void render_text(FILE *f, const cJSON *root, int top)
{
    const cJSON *run = cJSON_GetObjectItem(root, "run");
    fprintf(f, "memwatch report: %.0f file(s) from %s\n", num(run, "nfiles"),
            str(run, "inputs") ? str(run, "inputs") : "?");
    const cJSON *p0 = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "processes"), 0);
    const cJSON *tsrc = p0 && str(p0, "threshold_source") ? p0 : run;
    if (num(root, "precise_samples") > 0) /* only where the machine had precise sampling */
        fprintf(f, "precise-sample latency threshold: %.0f cycles (%s)\n", num(tsrc, "threshold"),
                str(tsrc, "threshold_source") ? str(tsrc, "threshold_source") : "?");
    text_processes(f, root, top);
    text_samples_stacks(f, root);

    text_cpu(f, root);

    mw_levels_text(f, cJSON_GetObjectItem(root, "bandwidth"), TIMELINE_COLS);
    /* "Likely source: other processes ...", where the rule holds (report/load.c) */
    mw_load_text(f, cJSON_GetObjectItem(root, "bandwidth"));

    if (cJSON_GetObjectItem(root, "high_load"))
        text_code(f, root, cJSON_GetObjectItem(root, "high_load"),
                  "Top code in high-load intervals (at least 80 % of the bandwidth the "
                  "calibration reached; nothing is called bandwidth-bound here)",
                  top);
    else
        text_code(f, root, cJSON_GetObjectItem(root, "flagged"),
                  "Top code inside flagged intervals", top);
    text_code(f, root, cJSON_GetObjectItem(root, "overall"), "Top code overall", top);

    text_objects(f, root, top);
    text_alloc_sites(f, cJSON_GetObjectItem(root, "allocation_sites"));
    text_levels_losses(f, root);
    text_gpu_devices(f, root);
    text_gpu_kernels(f, root);
    text_gpu_lines(f, root);
    mw_names_text(f, root);
}

/* Leave the first n items of an array; how many were removed. */
static int trim(cJSON *arr, int n)
{
    int k = 0;
    while (cJSON_GetArraySize(arr) > n) {
        cJSON_DeleteItemFromArray(arr, n);
        k++;
    }
    return k;
}

static int cmp_rank_share(const void *a, const void *b)
{
    const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;
    int rx = cJSON_GetObjectItem(x, "rank") != NULL, ry = cJSON_GetObjectItem(y, "rank") != NULL;
    if (rx != ry)
        return ry - rx; /* the ranks first, then the launcher and helpers */
    double d = num(y, "share") - num(x, "share");
    if (d == 0)
        d = num(x, "rank") - num(y, "rank");
    return d > 0 ? 1 : d < 0 ? -1 : 0;
}

/* The job view (per rank, per host, imbalance) for MPI jobs only (two or
 * more processes with a launcher's rank: META rank_from), and only when some
 * rank was bound: the processes of a build or a pipeline are no ranks, and an
 * imbalance of shares that are all 0 says nothing. At most top rows: the
 * ranks, most bound first, then the processes that are no rank (mpirun). */
static void text_job(FILE *f, const cJSON *jv, int top)
{
    const cJSON *r;
    int nranks = 0;
    double bound = 0;
    cJSON_ArrayForEach(r, cJSON_GetObjectItem(jv, "processes"))
    {
        if (!cJSON_GetObjectItem(r, "rank"))
            continue;
        nranks++;
        bound += num(r, "flagged_ns");
    }
    if (nranks < 2 || bound <= 0)
        return;
    cJSON *copy = cJSON_Duplicate(jv, 1);
    cJSON *procs = cJSON_GetObjectItem(copy, "processes");
    int np = cJSON_GetArraySize(procs);
    cJSON **v = malloc((size_t)(np > 0 ? np : 1) * sizeof *v);
    if (!copy || !v) {
        free(v);
        cJSON_Delete(copy);
        return;
    }
    int k = 0;
    while (cJSON_GetArraySize(procs) > 0 && k < np)
        v[k++] = cJSON_DetachItemFromArray(procs, 0);
    qsort(v, (size_t)k, sizeof *v, cmp_rank_share);
    if (top < 2) /* a comparison needs two rows */
        top = 2;
    for (int i = 0; i < k; i++) {
        if (i < top)
            cJSON_AddItemToArray(procs, v[i]);
        else
            cJSON_Delete(v[i]);
    }
    free(v);
    mwv_jobview_text(f, copy);
    if (k > top)
        fprintf(f, "  ... %d more process%s (--top N shows more)\n", k - top,
                k - top == 1 ? "" : "es");
    cJSON_Delete(copy);
}

int mw_report_summary(const char *db_path, FILE *out, int json, int top)
{
    return mw_report_summary_view(db_path, out, json, top, NULL);
}

int mw_report_summary_view(const char *db_path, FILE *out, int json, int top,
                           const mw_view_filter *filter)
{
    sqlite3 *db = NULL;
    int rc = mwv_open(db_path, filter, &db); /* narrowed to the filter's processes */
    if (rc)
        return rc;
    cJSON *root = collect(db, top > 0 ? top : 10);
    cJSON_AddItemToObject(root, "job", mwv_jobview(db)); /* per rank and per host */
    sqlite3_close(db);
    mw_text_json_utf8(root); /* valid UTF-8 whatever the run's names hold (U+FFFD) */
    if (json) {
        char *s = cJSON_Print(root);
        if (s) {
            fputs(s, out);
            fputc('\n', out);
            free(s);
        }
    } else {
        int t = top > 0 ? top : 10;
        /* the text shows at most --top regions and notes (the JSON has them all) */
        int more_names = trim(cJSON_GetObjectItem(root, "name_notes"), t);
        int more_rnotes = trim(cJSON_GetObjectItem(root, "region_notes"), t);
        trim(cJSON_GetObjectItem(root, "regions"), t);
        render_text(out, root, t);
        if (more_names)
            fprintf(out, "  ... %d more name notes (--json lists them)\n", more_names);
        mw_rgn_text(out, root);
        if (more_rnotes)
            fprintf(out, "    ... %d more region notes (--json lists them)\n", more_rnotes);
        text_job(out, cJSON_GetObjectItem(root, "job"), t);
    }
    cJSON_Delete(root);
    return 0;
}
