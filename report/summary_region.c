/*
 * report/summary_region.c: the per-region part of the summary
 * (report/region.h, docs/regions.md): for each region its time, share
 * bandwidth-bound, top lines, top data objects and GPU kernels, and the
 * notes about region input that the recording and the report made; and the
 * summary's shared helpers (a query's rows as JSON, an object's members).
 * May call: SQLite, cJSON, libc. Threading: reentrant.
 */
#include "region.h"
#include "text.h"
#include "view_int.h"

#include <memwatch/memwatch.h>

#include <stdlib.h>
#include <string.h>

cJSON *mw_summary_rows(sqlite3_stmt *s)
{
    cJSON *arr = cJSON_CreateArray();
    while (sqlite3_step(s) == SQLITE_ROW) {
        cJSON *o = cJSON_CreateObject();
        for (int i = 0; i < sqlite3_column_count(s); i++) {
            const char *name = sqlite3_column_name(s, i);
            switch (sqlite3_column_type(s, i)) {
            case SQLITE_INTEGER:
                cJSON_AddNumberToObject(o, name, (double)sqlite3_column_int64(s, i));
                break;
            case SQLITE_FLOAT:
                cJSON_AddNumberToObject(o, name, sqlite3_column_double(s, i));
                break;
            case SQLITE_TEXT: {
                /* valid UTF-8 whatever the program's arguments or paths held:
                 * the JSON stays valid */
                const char *t = (const char *)sqlite3_column_text(s, i);
                char *u = mw_text_is_utf8(t) ? NULL : mw_text_utf8(t);
                cJSON_AddStringToObject(o, name, u ? u : t);
                free(u);
                break;
            }
            default:
                break;
            }
        }
        cJSON_AddItemToArray(arr, o);
    }
    sqlite3_finalize(s);
    return arr;
}

/* Rows of a query with ?1 = id, ?2 = text, ?3 = limit (those it uses). */
static cJSON *qrows(sqlite3 *db, const char *sql, int64_t id, const char *txt, int top)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK) {
        mw_log(MW_LOG_WARN, "region summary query failed: %s", sqlite3_errmsg(db));
        return cJSON_CreateArray();
    }
    int np = sqlite3_bind_parameter_count(s);
    if (np >= 1)
        sqlite3_bind_int64(s, 1, id);
    if (np >= 2)
        sqlite3_bind_text(s, 2, txt ? txt : "", -1, SQLITE_STATIC);
    if (np >= 3)
        sqlite3_bind_int(s, 3, top);
    return mw_summary_rows(s);
}

double mw_rgn_num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : 0;
}
const char *mw_rgn_str(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

cJSON *mw_summary_group_add(cJSON *arr, const char *key, const char *value, const char *const *sums,
                            const cJSON *row)
{
    cJSON *g = NULL, *x;
    cJSON_ArrayForEach(x, arr) if (!strcmp(cJSON_GetObjectItem(x, key)->valuestring, value))
    {
        g = x;
        break;
    }
    if (!g) {
        g = cJSON_CreateObject();
        cJSON_AddStringToObject(g, key, value);
        cJSON_AddNumberToObject(g, "processes", 0);
        for (size_t k = 0; sums[k]; k++)
            cJSON_AddNumberToObject(g, sums[k], 0);
        cJSON_AddItemToArray(arr, g);
    }
    cJSON_SetNumberValue(cJSON_GetObjectItem(g, "processes"), mw_rgn_num(g, "processes") + 1);
    for (size_t k = 0; sums[k]; k++)
        cJSON_SetNumberValue(cJSON_GetObjectItem(g, sums[k]),
                             mw_rgn_num(g, sums[k]) + mw_rgn_num(row, sums[k]));
    return g;
}

void mw_summary_loc(const char *file, double line, char *buf, size_t n)
{
    if (file)
        snprintf(buf, n, "%s:%.0f", mwv_base(file), line);
    else
        snprintf(buf, n, "(no line info)");
}

static const char q_regions[] =
    "SELECT r.id AS id, r.name AS region, COUNT(DISTINCT sp.process_id) AS processes,"
    " COUNT(DISTINCT sp.process_id * 4294967296 + sp.tid) AS threads, COUNT(*) AS spans,"
    " SUM(sp.calls) AS calls, SUM(sp.t_end - sp.t_start) AS time_ns,"
    " SUM(sp.measured_ns) AS measured_ns, SUM(sp.bound_ns) AS bound_ns,"
    " MIN(sp.t_start) AS first_ns, MIN(sp.depth) AS depth"
    " FROM region_spans sp JOIN regions r ON r.id = sp.region_id"
    " GROUP BY r.id ORDER BY time_ns DESC LIMIT ?3";
static const char q_lines[] =
    "SELECT p.file AS file, p.line AS line, p.function AS function, COUNT(*) AS samples"
    " FROM sample_regions sr JOIN samples s ON s.id = sr.sample_id JOIN pcs p ON p.id = s.pc_id"
    " WHERE sr.region_id = ?1 AND s.source = ?2"
    " GROUP BY p.file, p.line, p.function ORDER BY samples DESC LIMIT ?3";
static const char q_objects[] =
    "SELECT o.kind AS kind, o.name AS name, o.size AS size, COUNT(*) AS samples"
    " FROM sample_regions sr JOIN samples s ON s.id = sr.sample_id"
    " JOIN objects o ON o.id = s.object_id WHERE sr.region_id = ?1 AND ?2 = ?2"
    " GROUP BY o.id ORDER BY samples DESC LIMIT ?3";
static const char q_kernels[] =
    "SELECT k.name AS name, COUNT(*) AS launches, SUM(k.end_ns - k.start_ns) AS time_ns,"
    " SUM(k.bw_bound) AS bw_bound FROM gpu_kernel_regions g JOIN gpu_kernels k"
    " ON k.id = g.kernel_id WHERE g.region_id = ?1 AND ?2 = ?2"
    " GROUP BY k.name ORDER BY time_ns DESC LIMIT ?3";

void mw_rgn_collect(sqlite3 *db, cJSON *root, int top)
{
    if (!mwv_scalar(db, "SELECT COUNT(*) FROM sqlite_master WHERE name='region_spans'"))
        return; /* a database from before regions */
    const char *src = mwv_scalar(db, "SELECT EXISTS(SELECT 1 FROM samples WHERE source='precise')")
                          ? "precise"
                          : "timer";
    int ntop = top > 20 ? top : 20;
    cJSON *regs = qrows(db, q_regions, 0, NULL, ntop);
    cJSON *r;
    cJSON_ArrayForEach(r, regs)
    {
        int64_t id = (int64_t)mw_rgn_num(r, "id");
        double meas = mw_rgn_num(r, "measured_ns");
        if (meas > 0)
            cJSON_AddNumberToObject(r, "bound_share", mw_rgn_num(r, "bound_ns") / meas);
        char sql[200];
        snprintf(sql, sizeof sql,
                 "SELECT COUNT(*) FROM sample_regions sr JOIN samples s ON s.id = sr.sample_id"
                 " WHERE sr.region_id = %lld AND s.source = '%s'",
                 (long long)id, src);
        cJSON_AddStringToObject(r, "source", src);
        cJSON_AddNumberToObject(r, "samples", (double)mwv_scalar(db, sql));
        cJSON_AddItemToObject(r, "lines", qrows(db, q_lines, id, src, top));
        cJSON_AddItemToObject(r, "objects", qrows(db, q_objects, id, src, top));
        cJSON_AddItemToObject(r, "gpu_kernels", qrows(db, q_kernels, id, src, top));
    }
    cJSON_AddItemToObject(root, "regions", regs);
    cJSON_AddNumberToObject(root, "region_count",
                            (double)mwv_scalar(db, "SELECT COUNT(*) FROM regions"));
    cJSON_AddItemToObject(
        root, "region_notes",
        qrows(db,
              "SELECT p.pid AS pid, 'report' AS source, n.note AS note FROM region_notes n"
              " LEFT JOIN processes p ON p.id = n.process_id"
              " UNION ALL SELECT p.pid AS pid, 'recording' AS source, m.value AS note FROM meta m"
              " LEFT JOIN processes p ON p.id = m.process_id WHERE m.key = 'region_notes'"
              " LIMIT ?3",
              0, NULL, 100));
}

void mw_rgn_human_time(double ns, char *buf, size_t n)
{
    if (ns >= 1e9)
        snprintf(buf, n, "%.3f s", ns / 1e9);
    else if (ns >= 1e6)
        snprintf(buf, n, "%.3f ms", ns / 1e6);
    else
        snprintf(buf, n, "%.1f us", ns / 1e3);
}

void mw_rgn_text(FILE *f, const cJSON *root)
{
    const cJSON *regs = cJSON_GetObjectItem(root, "regions"), *r, *x;
    const cJSON *notes = cJSON_GetObjectItem(root, "region_notes");
    if (cJSON_GetArraySize(regs) == 0 && cJSON_GetArraySize(notes) == 0)
        return;
    fprintf(f, "\nRegions (%.0f; time summed over the threads in them; bound: share of that time,"
               " where measured, in bandwidth-bound intervals)\n",
            mw_rgn_num(root, "region_count"));
    fprintf(f, "  %-28s %12s %7s %7s %9s %7s %8s\n", "region", "time", "threads", "spans",
            "calls", "bound", "samples");
    cJSON_ArrayForEach(r, regs)
    {
        char t[32], b[16];
        mw_rgn_human_time(mw_rgn_num(r, "time_ns"), t, sizeof t);
        if (cJSON_GetObjectItem(r, "bound_share"))
            snprintf(b, sizeof b, "%.1f%%", 100 * mw_rgn_num(r, "bound_share"));
        else
            snprintf(b, sizeof b, "-");
        const char *nm = mw_rgn_str(r, "region") ? mw_rgn_str(r, "region") : "?";
        if (strlen(nm) > 28)
            fprintf(f, "  %s\n  %-28s", nm, "");
        else
            fprintf(f, "  %-28s", nm);
        fprintf(f, " %12s %7.0f %7.0f %9.0f %7s %8.0f\n", t, mw_rgn_num(r, "threads"), mw_rgn_num(r, "spans"),
                mw_rgn_num(r, "calls"), b, mw_rgn_num(r, "samples"));
    }
    cJSON_ArrayForEach(r, regs)
    {
        double tot = mw_rgn_num(r, "samples");
        const cJSON *ln = cJSON_GetObjectItem(r, "lines"), *ob = cJSON_GetObjectItem(r, "objects"),
                    *gk = cJSON_GetObjectItem(r, "gpu_kernels");
        if (!cJSON_GetArraySize(ln) && !cJSON_GetArraySize(ob) && !cJSON_GetArraySize(gk))
            continue;
        const char *nm = mw_rgn_str(r, "region") ? mw_rgn_str(r, "region") : "?";
        fprintf(f, "  region %.120s%s\n", nm, strlen(nm) > 120 ? "..." : "");
        int k = 0;
        cJSON_ArrayForEach(x, ln)
        {
            if (k++ == 5)
                break;
            char loc[300];
            mw_summary_loc(mw_rgn_str(x, "file"), mw_rgn_num(x, "line"), loc, sizeof loc);
            fprintf(f, "    %5.1f%%  %-36s %s\n", tot > 0 ? 100 * mw_rgn_num(x, "samples") / tot : 0,
                    loc, mw_rgn_str(x, "function") ? mw_rgn_str(x, "function") : "?");
        }
        double osum = 0;
        cJSON_ArrayForEach(x, ob)
            osum += mw_rgn_num(x, "samples");
        k = 0;
        cJSON_ArrayForEach(x, ob)
        {
            if (k++ == 3)
                break;
            fprintf(f, "    object %-6s %-24s %.0f samples with its address\n",
                    mw_rgn_str(x, "kind") ? mw_rgn_str(x, "kind") : "?", mw_rgn_str(x, "name") ? mw_rgn_str(x, "name") : "?",
                    mw_rgn_num(x, "samples"));
        }
        k = 0;
        cJSON_ArrayForEach(x, gk)
        {
            if (k++ == 5)
                break;
            char t[32], kn[64];
            mw_rgn_human_time(mw_rgn_num(x, "time_ns"), t, sizeof t);
            mw_kernel_short(mw_rgn_str(x, "name"), kn, 40);
            fprintf(f, "    GPU %-44s %5.0f launches %10s, %.0f bandwidth-bound\n", kn,
                    mw_rgn_num(x, "launches"), t, mw_rgn_num(x, "bw_bound"));
        }
    }
    if (cJSON_GetArraySize(notes) > 0) {
        fprintf(f, "  notes\n");
        cJSON_ArrayForEach(x, notes)
            fprintf(f, "    pid %.0f (%s): %s\n", mw_rgn_num(x, "pid"),
                    mw_rgn_str(x, "source") ? mw_rgn_str(x, "source") : "?", mw_rgn_str(x, "note") ? mw_rgn_str(x, "note") : "");
    }
}
