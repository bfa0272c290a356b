/*
 * report/summary_levels.c: the summary's bandwidth section with the
 * memory-load levels (docs/report.md, "What the summary says" 3;
 * docs/saturation.md, "Levels and the band"): whether the profile could
 * saturate memory (META saturable, else the machine profile), the measured
 * time per level, the threshold's uncertainty band, a level per timeline
 * column and the threshold notes, gathered into the summary's `bandwidth`
 * object, and that section as text.
 *
 * Wording contract: where the profile could not saturate memory
 * (saturable 0) nothing is called bandwidth-bound; the load is given
 * relative to the calibrated peak.
 *
 * May call: SQLite, cJSON, libc, report/levels.c, report/view.c, report/text.c.
 * Threading: reentrant.
 */
#include <memwatch/levels.h>

#include "jobview_int.h"
#include "levels_int.h"
#include "text.h"
#include "view_int.h"

#include <stdlib.h>
#include <string.h>

/* ---- collecting ---- */

void mwv_saturable_counts(sqlite3 *db, int *yes, int *no)
{
    sqlite3_stmt *s;
    *yes = *no = 0;
    if (sqlite3_prepare_v2(db,
                           "SELECT MAX(TRIM(value) = '1'), MAX(TRIM(value) = '0') FROM meta"
                           " WHERE key = 'saturable' GROUP BY process_id",
                           -1, &s, NULL) != SQLITE_OK)
        return;
    while (sqlite3_step(s) == SQLITE_ROW) {
        /* a garbage value counts as absent */
        *yes += sqlite3_column_int(s, 0) == 1;
        *no += sqlite3_column_int(s, 0) != 1 && sqlite3_column_int(s, 1) == 1;
    }
    sqlite3_finalize(s);
}

int mwv_has_levels(sqlite3 *db)
{
    return mwv_scalar(db, "SELECT COUNT(*) FROM pragma_table_info('intervals') WHERE"
                          " name = 'level'") > 0;
}

/* The band over the processes (the lowest LO, the highest HI of their
 * META threshold_band_ns, each process's newest: memwatch report gives a
 * process whose loops write the band for such loads) and the highest META
 * peak_bw; malformed values left out. */
static void meta_band_peak(sqlite3 *db, mw_lvl_meta *env)
{
    sqlite3_stmt *s;
    mw_lvl_meta_init(env);
    if (sqlite3_prepare_v2(db,
                           "SELECT DISTINCT key, value FROM meta m WHERE key IN"
                           " ('threshold_band_ns', 'peak_bw') AND rowid = (SELECT MAX(rowid)"
                           " FROM meta WHERE process_id = m.process_id AND key = m.key)",
                           -1, &s, NULL) != SQLITE_OK)
        return;
    while (sqlite3_step(s) == SQLITE_ROW) {
        mw_lvl_meta one;
        mw_lvl_meta_init(&one);
        if (mw_lvl_meta_set(&one, (const char *)sqlite3_column_text(s, 0),
                            (const char *)sqlite3_column_text(s, 1)))
            continue;
        if (one.peak_bw > env->peak_bw)
            env->peak_bw = one.peak_bw;
        if (one.have_band) {
            env->band_lo =
                env->have_band && env->band_lo < one.band_lo ? env->band_lo : one.band_lo;
            env->band_hi =
                env->have_band && env->band_hi > one.band_hi ? env->band_hi : one.band_hi;
            env->have_band = 1;
        }
    }
    sqlite3_finalize(s);
}

/* Per column of [t0, t1): the level that holds most of the column's time
 * with a level (a tie goes to the higher level); null where none has one. */
static cJSON *level_timeline(sqlite3 *db, int64_t t0, int64_t t1, int ncols)
{
    double(*tm)[MW_LEVEL_COUNT] = calloc((size_t)ncols, sizeof *tm);
    double w = (double)(t1 - t0) / ncols;
    sqlite3_stmt *s;
    cJSON *arr = cJSON_CreateArray();
    if (!tm)
        return arr;
    if (w > 0 && sqlite3_prepare_v2(db,
                                    "SELECT t_start, t_end, level FROM intervals WHERE level IS"
                                    " NOT NULL",
                                    -1, &s, NULL) == SQLITE_OK) {
        while (sqlite3_step(s) == SQLITE_ROW) {
            const char *lv = (const char *)sqlite3_column_text(s, 2);
            int l = 0;
            while (l < MW_LEVEL_COUNT && strcmp(lv, mw_level_name((mw_level)l)))
                l++;
            double a = (double)(sqlite3_column_int64(s, 0) - t0),
                   b = (double)(sqlite3_column_int64(s, 1) - t0);
            for (int k = a > 0 ? (int)(a / w) : 0; l < MW_LEVEL_COUNT && k < ncols && k * w < b;
                 k++) {
                double lo = a > k * w ? a : k * w, hi = b < (k + 1) * w ? b : (k + 1) * w;
                if (hi > lo)
                    tm[k][l] += hi - lo;
            }
        }
        sqlite3_finalize(s);
    }
    for (int k = 0; k < ncols; k++) {
        int best = -1;
        for (int l = 0; l < MW_LEVEL_COUNT; l++)
            if (tm[k][l] > 0 && (best < 0 || tm[k][l] >= tm[k][best]))
                best = l;
        cJSON_AddItemToArray(arr, best < 0 ? cJSON_CreateNull()
                                           : cJSON_CreateString(mw_level_name((mw_level)best)));
    }
    free(tm);
    return arr;
}

/* saturable (bool, absent when unknown), where it came from, and the
 * processes on either side where they differ. */
static void add_saturable(sqlite3 *db, cJSON *bw)
{
    int yes, no;
    mwv_saturable_counts(db, &yes, &no);
    int seen = mwv_saturation_seen(db);
    if (seen < 0)
        return;
    cJSON_AddBoolToObject(bw, "saturable", seen);
    cJSON_AddStringToObject(bw, "saturable_from",
                            yes + no ? "META saturable" : "the machine profile's validation");
    if (yes && no) {
        cJSON *sp = cJSON_AddObjectToObject(bw, "saturable_processes");
        cJSON_AddNumberToObject(sp, "yes", yes);
        cJSON_AddNumberToObject(sp, "no", no);
    }
}

/* levels {low, medium, high, bound} (ns of measured time) and the rest. */
static void add_levels(sqlite3 *db, cJSON *bw)
{
    double ns[MW_LEVEL_COUNT] = {0}, unknown = 0;
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db,
                           "SELECT level, SUM(t_end - t_start) FROM intervals WHERE flags & 2"
                           " GROUP BY level",
                           -1, &s, NULL) == SQLITE_OK) {
        while (sqlite3_step(s) == SQLITE_ROW) {
            const char *lv = (const char *)sqlite3_column_text(s, 0);
            int l = 0;
            while (lv && l < MW_LEVEL_COUNT && strcmp(lv, mw_level_name((mw_level)l)))
                l++;
            if (lv && l < MW_LEVEL_COUNT)
                ns[l] += sqlite3_column_double(s, 1);
            else
                unknown += sqlite3_column_double(s, 1);
        }
        sqlite3_finalize(s);
    }
    cJSON *lv = cJSON_AddObjectToObject(bw, "levels");
    for (int l = 0; l < MW_LEVEL_COUNT; l++)
        cJSON_AddNumberToObject(lv, mw_level_name((mw_level)l), ns[l]);
    cJSON_AddNumberToObject(bw, "level_unknown_ns", unknown);
}

/* The band, the time in it (and of that, above the threshold), the time
 * above the threshold, the calibrated peak. */
static void add_band(sqlite3 *db, cJSON *bw)
{
    mw_lvl_meta env;
    meta_band_peak(db, &env);
    if (env.peak_bw > 0)
        cJSON_AddNumberToObject(bw, "peak_bw", env.peak_bw);
        /* above: flagged, or (nothing flagged on a profile that could not
         * saturate memory) a latency above the interval's threshold */
#define ABOVE "(bw_bound = 1 OR (threshold_ns > 0 AND latency_ns > threshold_ns))"
    cJSON_AddNumberToObject(
        bw, "above_threshold_ns",
        (double)mwv_scalar(db, "SELECT COALESCE(SUM(t_end - t_start), 0) FROM intervals WHERE"
                               " flags & 2 AND " ABOVE));
    cJSON_AddNumberToObject(
        bw, "above_threshold_intervals",
        (double)mwv_scalar(db, "SELECT COUNT(*) FROM intervals WHERE flags & 2 AND " ABOVE));
    if (!env.have_band)
        return;
    cJSON *band = cJSON_AddArrayToObject(bw, "band");
    cJSON_AddItemToArray(band, cJSON_CreateNumber(env.band_lo));
    cJSON_AddItemToArray(band, cJSON_CreateNumber(env.band_hi));
    cJSON_AddNumberToObject(
        bw, "possibly_bound_ns",
        (double)mwv_scalar(db, "SELECT COALESCE(SUM(t_end - t_start), 0) FROM intervals WHERE"
                               " flags & 2 AND in_band = 1"));
    cJSON_AddNumberToObject(
        bw, "possibly_bound_above_ns",
        (double)mwv_scalar(db, "SELECT COALESCE(SUM(t_end - t_start), 0) FROM intervals WHERE"
                               " flags & 2 AND in_band = 1 AND " ABOVE));
#undef ABOVE
}

void mw_levels_collect(sqlite3 *db, cJSON *bw, int64_t t0, int64_t t1, int ncols)
{
    add_saturable(db, bw);
    /* why the threshold is what it is where it is a fallback (META
     * threshold_note), one row per distinct note */
    sqlite3_stmt *s;
    cJSON *notes = cJSON_AddArrayToObject(bw, "threshold_notes");
    if (sqlite3_prepare_v2(db,
                           "SELECT DISTINCT value FROM meta WHERE key = 'threshold_note' AND"
                           " value != '' ORDER BY value",
                           -1, &s, NULL) == SQLITE_OK) {
        while (sqlite3_step(s) == SQLITE_ROW) {
            const char *t = (const char *)sqlite3_column_text(s, 0);
            char *u = mw_text_is_utf8(t) ? NULL : mw_text_utf8(t);
            cJSON_AddItemToArray(notes, cJSON_CreateString(u ? u : t));
            free(u);
        }
        sqlite3_finalize(s);
    }
    if (!mwv_has_levels(db)) /* a database of schema 1 */
        return;
    add_levels(db, bw);
    add_band(db, bw);
    if (ncols > 0)
        cJSON_AddItemToObject(bw, "timeline_levels", level_timeline(db, t0, t1, ncols));
}

/* ---- text ---- */

static double num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

/* A string escaped for a terminal into buf ("" when absent). */
static const char *esc(const cJSON *v, char *buf, size_t n)
{
    buf[0] = 0;
    if (cJSON_IsString(v))
        mw_text_escape(v->valuestring, buf, n);
    return buf;
}

/* 1, 0, or -1 when the bandwidth object does not say. */
static int saturable_of(const cJSON *bw)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(bw, "saturable");
    return cJSON_IsBool(v) ? cJSON_IsTrue(v) : -1;
}

/* Percent of the measured time. */
static double pct(const cJSON *bw, double ns)
{
    return num(bw, "time_ns") > 0 ? 100 * ns / num(bw, "time_ns") : 0;
}

/* 1 when a latency curve gave some measured time a level below bound. */
static int have_load_levels(const cJSON *bw)
{
    const cJSON *lv = cJSON_GetObjectItemCaseSensitive(bw, "levels");
    return num(lv, "low") + num(lv, "medium") + num(lv, "high") > 0;
}

/* "high 40.1 %, medium 9.0 %, low 50.9 %" (with bound first when wanted,
 * and the time without a level where there is some). */
static void text_level_list(FILE *f, const cJSON *bw, int with_bound)
{
    const cJSON *lv = cJSON_GetObjectItemCaseSensitive(bw, "levels");
    if (with_bound)
        fprintf(f, "bound %.1f %%, ", pct(bw, num(lv, "bound")));
    fprintf(f, "high %.1f %%, medium %.1f %%, low %.1f %%", pct(bw, num(lv, "high")),
            pct(bw, num(lv, "medium")), pct(bw, num(lv, "low")));
    if (num(bw, "level_unknown_ns") > 0)
        fprintf(f, ", no level %.1f %%", pct(bw, num(bw, "level_unknown_ns")));
}

/* "the 35.0 GB/s" or "the peak of the curve": what the shares are of. */
static void text_peak(FILE *f, const cJSON *bw, const char *reached)
{
    if (num(bw, "peak_bw") > 0)
        fprintf(f, "the %.1f GB/s %s", num(bw, "peak_bw") / 1e9, reached);
    else
        fprintf(f, "the highest bandwidth of the calibrated latency curve");
}

/* The headline where the profile could not saturate memory: the load
 * relative to the calibrated peak, never a bandwidth-bound share. */
static void text_headline_unsaturable(FILE *f, const cJSON *bw)
{
    if (have_load_levels(bw)) {
        fprintf(f, "\nMemory load (relative to ");
        text_peak(f, bw, "this machine's calibration reached");
        fprintf(f, "; it could not saturate memory here, so nothing is called bandwidth-bound): ");
        text_level_list(f, bw, 0);
        fprintf(f, " of %.2f s measured\n", num(bw, "time_ns") / 1e9);
    } else {
        fprintf(f,
                "\nMemory load: this machine's calibration could not saturate memory here, so "
                "nothing is called bandwidth-bound; the recording carries no latency curve "
                "to give the load against (%.2f s measured, %.0f intervals with a latency "
                "reading)\n",
                num(bw, "time_ns") / 1e9, num(bw, "measured_intervals"));
    }
}

/* The headline, the band and the levels. */
static void text_headline(FILE *f, const cJSON *bw)
{
    int sat = saturable_of(bw);
    if (sat == 0)
        text_headline_unsaturable(f, bw);
    else
        fprintf(f,
                "\nBandwidth-bound: %.1f%% of %.2f s measured (%.0f of %.0f intervals "
                "flagged)\n",
                100 * num(bw, "share"), num(bw, "time_ns") / 1e9, num(bw, "flagged_intervals"),
                num(bw, "measured_intervals"));
    const cJSON *band = cJSON_GetObjectItemCaseSensitive(bw, "band");
    if (cJSON_GetArraySize(band) == 2) {
        double in = num(bw, "possibly_bound_ns"), above = num(bw, "possibly_bound_above_ns");
        fprintf(f,
                "  %s (latency within the threshold's uncertainty band %.1f-%.1f ns): %.1f %% "
                "of the measured time (%.1f %% of them above the threshold)%s\n",
                sat == 0 ? "near the threshold" : "possibly bound",
                cJSON_GetArrayItem(band, 0)->valuedouble, cJSON_GetArrayItem(band, 1)->valuedouble,
                pct(bw, in), in > 0 ? 100 * above / in : 0.0, sat == 0 ? "; not called bound" : "");
    }
    if (sat == 0 && num(bw, "above_threshold_intervals") > 0)
        fprintf(f,
                "  latency above the threshold in %.0f of %.0f intervals (%.1f %% of the "
                "measured time): not called bandwidth-bound\n",
                num(bw, "above_threshold_intervals"), num(bw, "measured_intervals"),
                pct(bw, num(bw, "above_threshold_ns")));
    if (sat != 0 && have_load_levels(bw)) {
        fprintf(f, "  memory load (share of ");
        text_peak(f, bw, "peak the calibration reached");
        fprintf(f, ", from the interval's latency on the calibrated curve): ");
        text_level_list(f, bw, 1);
        fprintf(f, " of the measured time\n");
    }
    const cJSON *sp = cJSON_GetObjectItemCaseSensitive(bw, "saturable_processes");
    if (sp)
        fprintf(f,
                "  note: %.0f of %.0f processes were recorded with a calibration that could "
                "not saturate memory: none of their intervals is called bandwidth-bound\n",
                num(sp, "no"), num(sp, "yes") + num(sp, "no"));
}

/* The method lines: latency methods with their thresholds (and the notes
 * on them), read/write curves, DRAM bandwidth. */
static void text_methods(FILE *f, const cJSON *bw)
{
    const cJSON *r;
    char a[2048];
    cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(bw, "latency"))
        fprintf(f, "  latency method %s: mean %.1f ns, threshold %.1f ns (%.0f intervals)\n",
                esc(cJSON_GetObjectItem(r, "lat_method"), a, sizeof a), num(r, "mean_latency_ns"),
                num(r, "threshold_ns"), num(r, "intervals"));
    cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(bw, "threshold_notes"))
        fprintf(f, "  threshold note: %s\n", esc(r, a, sizeof a));
    cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(bw, "mix_curves"))
    {
        const cJSON *mc = cJSON_GetObjectItem(r, "mix_curve");
        if (!cJSON_IsString(mc))
            continue;
        const char *t = esc(mc, a, sizeof a);
        /* META mix_curve "shapes: ..." (docs/saturation.md) or a curve's name */
        if (!strncmp(t, "shapes:", 7))
            fprintf(f, "  threshold from the load shapes:%s\n", t + 7);
        else
            fprintf(f, "  threshold from the read/write curve %s\n", t);
    }
    cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(bw, "dram"))
        fprintf(f,
                "  DRAM bandwidth (%s): mean %.2f GB/s, highest interval %.2f GB/s (%.0f "
                "intervals)\n",
                cJSON_IsString(cJSON_GetObjectItem(r, "bw_method"))
                    ? esc(cJSON_GetObjectItem(r, "bw_method"), a, sizeof a)
                    : "?",
                num(r, "mean_gbs"), num(r, "max_gbs"), num(r, "intervals"));
}

/* The flagged timeline (not where nothing can be flagged and the levels
 * say more), the level timeline, the time axis. */
static void text_timelines(FILE *f, const cJSON *bw, int ncols)
{
    if (!num(bw, "intervals"))
        return;
    char line[256];
    int n = 0, any = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(bw, "timeline_levels"))
    {
        const char *v = cJSON_GetStringValue(c);
        char ch = !v                     ? ' '
                  : !strcmp(v, "bound")  ? '#'
                  : !strcmp(v, "high")   ? 'H'
                  : !strcmp(v, "medium") ? 'M'
                                         : 'L';
        any |= v && strcmp(v, "bound");
        if (n < (int)sizeof line - 1)
            line[n++] = ch;
    }
    line[n] = 0;
    const cJSON *tl = cJSON_GetObjectItemCaseSensitive(bw, "timeline");
    if (cJSON_IsString(tl) && saturable_of(bw) != 0)
        fprintf(f, "  |%s|  (# >50%% flagged, + some, . none)\n", tl->valuestring);
    else if (cJSON_IsString(tl) && !any) /* what the recorder flagged: not called bound */
        fprintf(f,
                "  |%s|  (# >50%% flagged by the recorder, + some, . none; not called "
                "bound here)\n",
                tl->valuestring);
    if (any)
        fprintf(f, "  |%s|  (level of most of the column's time: %sH high, M medium, L low)\n",
                line, saturable_of(bw) == 0 ? "" : "# bound, ");
    fprintf(f, "  0 s%*s%.2f s\n", ncols - 4, "", (num(bw, "t_end") - num(bw, "t_start")) / 1e9);
}

void mw_levels_text(FILE *f, const cJSON *bw, int ncols)
{
    text_headline(f, bw);
    fprintf(f,
            "  measured: the intervals with a latency reading, summed over the processes "
            "(%.0f of %.0f intervals; processes running at once each count their own)\n",
            num(bw, "measured_intervals"), num(bw, "intervals"));
    const cJSON *notes = cJSON_GetObjectItemCaseSensitive(bw, "threshold_notes");
    if (num(bw, "uncalibrated_intervals"))
        fprintf(f, "  note: %.0f intervals used memwatch's default threshold (%s)\n",
                num(bw, "uncalibrated_intervals"),
                cJSON_GetArraySize(notes) > 0
                    ? "the machine profile has none for this method: see the threshold note"
                    : "no machine profile: run 'memwatch calibrate'");
    text_methods(f, bw);
    text_timelines(f, bw, ncols);
}
