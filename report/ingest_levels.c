/*
 * report/ingest_levels.c: the intervals' memory-load columns (bw_share,
 * level, in_band: docs/report-schema.md) from their process's META keys
 * saturable, threshold_band_ns, lat_curve and peak_bw, once the process's
 * records were read (its META may come after its first intervals). The
 * computation is report/levels.c's; this file only feeds it through SQL
 * functions that take the parsed META as a bound pointer. Files without
 * META saturable (older recorders) take it from the machine profile their
 * recording names, where that can be read here.
 *
 * May call: report/levels.c, report/summary.c (the profile's saturation),
 * the ingest's database, SQLite.
 * Threading: one ingest per database at a time; no global state.
 */
#include <memwatch/levels.h>
#include <memwatch/meta_keys.h>

#include "ingest.h"

#include <stdio.h>

#define LVL_PTR "mw_lvl_meta" /* sqlite3_bind_pointer's type name */

/* mw_iv_share(P, latency_ns), mw_iv_level(P, latency_ns, bw_bound),
 * mw_iv_band(P, latency_ns): one column of mw_lvl_interval each (which one:
 * the function's user data 0, 1, 2); NULL where it is unknown. */
static void lvl_fn(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    const mw_lvl_meta *m = sqlite3_value_pointer(argv[0], LVL_PTR);
    int which = (int)(intptr_t)sqlite3_user_data(cx);
    if (!m) {
        sqlite3_result_null(cx);
        return;
    }
    int has_lat = sqlite3_value_type(argv[1]) != SQLITE_NULL;
    int flagged = argc > 2 && sqlite3_value_int(argv[2]) == 1;
    mw_iv_level r = mw_lvl_interval(m, has_lat, sqlite3_value_double(argv[1]), flagged);
    if (which == 0 && r.share >= 0)
        sqlite3_result_double(cx, r.share);
    else if (which == 1 && r.level != MW_LEVEL_NONE)
        sqlite3_result_text(cx, mw_level_name(r.level), -1, SQLITE_STATIC);
    else if (which == 2 && r.in_band >= 0)
        sqlite3_result_int(cx, r.in_band);
    else
        sqlite3_result_null(cx);
}

int ing_levels_register(ing_db *d)
{
    static const struct {
        const char *name;
        int nargs;
    } fn[] = {{"mw_iv_share", 2}, {"mw_iv_level", 3}, {"mw_iv_band", 2}};
    for (int i = 0; i < 3; i++)
        if (sqlite3_create_function(d->db, fn[i].name, fn[i].nargs,
                                    SQLITE_UTF8 | SQLITE_DETERMINISTIC, (void *)(intptr_t)i, lvl_fn,
                                    NULL, NULL) != SQLITE_OK)
            return ing_db_err(d, "interval level functions");
    return 0;
}

/* A process whose META has no saturable (raw files of before that key):
 * the machine profile its recording used (META profile_path, else profile
 * "PATH (created T)"), its validation of the latency method in use, as the
 * summary falls back to it (mwv_saturation_seen). Sets m->saturable to 0
 * only: where memory did saturate, an unknown flags as 1 does. */
static void saturable_from_profile(ing_db *d, int64_t proc, mw_lvl_meta *m)
{
    char prof[4096], lm[64] = "";
    ing_db_meta_value(d, proc, mw_meta_key(MW_META_PROFILE_PATH), prof, sizeof prof);
    if (!prof[0]) {
        ing_db_meta_value(d, proc, mw_meta_key(MW_META_PROFILE), prof, sizeof prof);
        char *cut = strstr(prof, " (created");
        if (prof[0] != '/' || !cut)
            return;
        *cut = 0;
    }
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(d->db,
                           "SELECT lat_method FROM intervals WHERE id > ? AND process_id = ? AND"
                           " lat_method != '' LIMIT 1",
                           -1, &s, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(s, 1, d->iv0);
        sqlite3_bind_int64(s, 2, proc);
        if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0))
            snprintf(lm, sizeof lm, "%s", (const char *)sqlite3_column_text(s, 0));
    }
    sqlite3_finalize(s);
    if (lm[0] && mw_report_saturation_seen(prof, lm) == 0)
        m->saturable = 0;
}

/* The levels' META keys of the process being ingested (the newest value of
 * each; a malformed one is left out, as if absent). */
static void process_lvl_meta(ing_db *d, int64_t proc, mw_lvl_meta *m)
{
    static const enum mw_meta_id keys[] = {MW_META_SATURABLE, MW_META_THRESHOLD_BAND_NS,
                                           MW_META_LAT_CURVE, MW_META_PEAK_BW};
    mw_lvl_meta_init(m);
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        char v[2048];
        ing_db_meta_value(d, proc, mw_meta_key(keys[i]), v, sizeof v);
        if (v[0])
            (void)mw_lvl_meta_set(m, mw_meta_key(keys[i]), v);
    }
    if (m->saturable < 0)
        saturable_from_profile(d, proc, m);
}

int ing_levels(ing_db *d, int64_t proc)
{
    static const char upd[] =
        "UPDATE intervals SET bw_share = mw_iv_share(?1, latency_ns),"
        " level = mw_iv_level(?1, latency_ns, bw_bound), in_band = mw_iv_band(?1, latency_ns)"
        " WHERE id > ?2 AND process_id = ?3";
    mw_lvl_meta m;
    process_lvl_meta(d, proc, &m);
    sqlite3_stmt *s = ing_db_prep(d, upd);
    if (!s)
        return ing_db_err(d, "interval levels");
    sqlite3_bind_pointer(s, 1, &m, LVL_PTR, NULL);
    sqlite3_bind_int64(s, 2, d->iv0);
    sqlite3_bind_int64(s, 3, proc);
    int rc = sqlite3_step(s) == SQLITE_DONE ? 0 : ing_db_err(d, "interval levels");
    sqlite3_reset(s);
    sqlite3_clear_bindings(s); /* the pointer to m does not outlive this call */
    return rc;
}
