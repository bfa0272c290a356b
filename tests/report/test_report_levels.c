/*
 * tests/report/test_report_levels.c: the memory-load levels end to end, on
 * recorded fixtures (mwr_build.h) whose META carries saturable, the band,
 * the latency curve, the peak and a threshold note, with intervals at chosen
 * latencies:
 *  - ingest: intervals.bw_share from the curve's inverse lookup, level,
 *    in_band; garbage META values ignored (no crash, NULL columns);
 *  - the text and JSON summary: the bandwidth-bound share, the "possibly
 *    bound" line with its band and shares, the levels, the threshold note;
 *    where saturable=0 no bandwidth-bound claim, the load relative to the
 *    calibrated peak; META saturable preferred to the machine profile, the
 *    profile used where the files carry no saturable;
 *  - the HTML report (verdict, level strip and legend, band marks, the
 *    profile's "accurate" verdict neutral where memory never saturated) and
 *    the exports (CSV columns, the trace's level track and share counter);
 *  - mw_raw_levels (memwatch record's end-of-run summary) on the same files.
 * The files go to /tmp/mw_levels_XXXXXX, removed when every check passed
 * (MW_KEEP=1 keeps them).
 */
#include "mw_test.h"
#include "mwr_build.h"

#include <memwatch/levels.h>
#include <memwatch/report.h>
#include <memwatch/views.h>

#include <cjson/cJSON.h>
#include <sqlite3.h>
#include <unistd.h>

#define MS 1000000ull

static char dir[] = "/tmp/mw_levels_XXXXXX";

/* An interval of 10 ms at slot i with a latency (lat < 0: none). */
static void iv(mwb *w, int i, double lat, double thr, int flagged)
{
    mwr_interval v;
    memset(&v, 0, sizeof v);
    v.t_start_ns = (uint64_t)i * 10 * MS;
    v.t_end_ns = v.t_start_ns + 10 * MS;
    v.flags = (lat >= 0 ? MWR_IV_LAT_VALID : 0) | (flagged ? MWR_IV_BW_BOUND : 0);
    v.nthreads = 1;
    v.latency_ns = lat >= 0 ? lat : 0;
    v.threshold_ns = thr;
    snprintf(v.lat_method, sizeof v.lat_method, "probe_lat");
    mwb_rec(w, MWR_INTERVAL, &v, sizeof v, 0, 0);
}

/* A raw file of one process: META, then intervals (lat[i], flagged when
 * fl[i]), then more META (keys may come after the first intervals). */
static void fixture(const char *name, const char *meta1, const char *meta2, const double *lat,
                    const int *fl, int n, double thr, char *path, size_t pn)
{
    mwb w;
    mwb_init(&w);
    mwb_meta(&w, meta1);
    for (int i = 0; i < n; i++)
        iv(&w, i, lat[i], thr, fl[i]);
    if (meta2)
        mwb_meta(&w, meta2);
    mwb_trailer(&w, (uint64_t)n * 10 * MS, 0);
    snprintf(path, pn, "%s/%s", dir, name);
    MW_CHECK_INT(mwb_write(&w, path, w.n), 0);
    free(w.b);
}

static int ingest(const char *file, const char *db)
{
    mw_report_opts o = {0};
    o.db_path = db;
    o.profile_path = "";
    o.no_symbols = 1;
    mw_report_stats st;
    const char *files[] = {file};
    return mw_report_ingest(files, 1, &o, &st);
}

static double qd(sqlite3 *d, const char *sql)
{
    sqlite3_stmt *s;
    double v = -999;
    if (sqlite3_prepare_v2(d, sql, -1, &s, NULL) != SQLITE_OK) {
        fprintf(stderr, "sql: %s: %s\n", sql, sqlite3_errmsg(d));
        return -998;
    }
    if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_type(s, 0) != SQLITE_NULL)
        v = sqlite3_column_double(s, 0);
    sqlite3_finalize(s);
    return v;
}

static const char *qs(sqlite3 *d, const char *sql, char *buf, size_t n)
{
    sqlite3_stmt *s;
    snprintf(buf, n, "(none)");
    if (sqlite3_prepare_v2(d, sql, -1, &s, NULL) != SQLITE_OK)
        return buf;
    if (sqlite3_step(s) == SQLITE_ROW)
        snprintf(buf, n, "%s",
                 sqlite3_column_text(s, 0) ? (const char *)sqlite3_column_text(s, 0) : "NULL");
    sqlite3_finalize(s);
    return buf;
}

/* The whole of a file, malloc()ed (NULL when it cannot be read). */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *b = malloc(1 << 22);
    size_t n = b ? fread(b, 1, (1 << 22) - 1, f) : 0;
    fclose(f);
    if (b)
        b[n] = 0;
    return b;
}

/* The summary of db as text (json 0) or JSON, malloc()ed. */
static char *summary(const char *db, int json)
{
    char p[300];
    snprintf(p, sizeof p, "%s/summary.out", dir);
    FILE *f = fopen(p, "w");
    MW_CHECK_INT(mw_report_summary(db, f, json, 10), 0);
    fclose(f);
    return slurp(p);
}

static double jpath(const cJSON *root, const char *a, const char *b)
{
    const cJSON *o = cJSON_GetObjectItem(cJSON_GetObjectItem(root, "bandwidth"), a);
    if (b)
        o = cJSON_GetObjectItem(o, b);
    return cJSON_IsNumber(o) ? o->valuedouble : cJSON_IsBool(o) ? cJSON_IsTrue(o) : -1;
}

/* The profile the META below names: its probe_lat never saw saturation
 * (META saturable must win over it; without saturable it decides). */
static void write_profile(char *path, size_t n)
{
    snprintf(path, n, "%s/prof.json", dir);
    FILE *f = fopen(path, "w");
    fprintf(f, "{\"schema\": \"memwatch-profile\", \"version\": 1, \"identity\": \"t\","
               " \"tsc_hz\": 2e9, \"peak_bw\": 35e9, \"idle_latency_ns\": 100,"
               " \"lat_method\": \"probe_lat\", \"lat_threshold_ns\": 160, \"bw_method\": \"\","
               " \"bw_factor\": 1, \"methods\": [{\"name\": \"probe_lat\", \"quantity\":"
               " \"latency\", \"verdict\": \"accurate\", \"reason\": \"test\","
               " \"threshold_ns\": 160, \"saturated\": false}]}\n");
    fclose(f);
}

/* The profile's own "saturable" comes before its method's "saturated". */
static void profile_claim_case(const char *prof)
{
    char p2[300];
    snprintf(p2, sizeof p2, "%s/prof2.json", dir);
    FILE *f = fopen(p2, "w");
    fprintf(f, "{\"saturable\": true, \"methods\": [{\"name\": \"probe_lat\", \"saturated\":"
               " false}]}\n");
    fclose(f);
    MW_CHECK_INT(mw_report_saturation_seen(prof, "probe_lat"), 0);
    MW_CHECK_INT(mw_report_saturation_seen(p2, "probe_lat"), 1);
}

/* Saturable: bound, in-band, levels from the curve. Latencies 105 (low),
 * 145 (medium), 155 (high, in the band), 165 (flagged: bound, in the band),
 * 190 and 250 (flagged), and one interval without a reading. */
static void saturable_case(const char *prof)
{
    static const double lat[] = {105, 145, 155, 165, 190, 250, -1};
    static const int fl[] = {0, 0, 0, 1, 1, 1, 0};
    char meta1[1024], file[300], db[300], buf[200];
    snprintf(meta1, sizeof meta1,
             "pid=101\nhost=fix\nexe=/bin/sat\ncmdline=sat\nprofile=%s (created 2026-01-01)\n"
             "saturable=1\nthreshold_band_ns=150,170\n",
             prof);
    /* the curve, the peak and the note after the intervals */
    fixture("sat.mwr", meta1,
            "lat_curve=0:100,10:110,20:130,30:160,35:200\npeak_bw=35e9\n"
            "threshold_note=probe_lat judged noisy: threshold from the load shapes\n",
            lat, fl, 7, 160, file, sizeof file);
    snprintf(db, sizeof db, "%s/sat.db", dir);
    MW_CHECK_INT(ingest(file, db), 0);
    sqlite3 *d;
    MW_CHECK_INT(sqlite3_open(db, &d), SQLITE_OK);
    /* the levels' columns came with version 2 (3 added pcs.nearest_symbol) */
    MW_CHECK(qd(d, "SELECT version FROM schema") >= 2, "schema version %g",
             (double)qd(d, "SELECT version FROM schema"));
    static const struct {
        int id;
        double share;
        const char *level;
        int in_band; /* -1: NULL */
    } want[] = {{1, 5.0 / 35, "low", 0},
                {2, 25.0 / 35, "medium", 0},
                {3, (20 + 10 * 25.0 / 30) / 35, "high", 1},
                {4, 30.625 / 35, "bound", 1},
                {5, 33.75 / 35, "bound", 0},
                {6, 1.0, "bound", 0},
                {7, -999, "NULL", -1}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        char q[200];
        snprintf(q, sizeof q, "SELECT bw_share FROM intervals WHERE id = %d", want[i].id);
        MW_CHECK_AT(__FILE__, __LINE__, fabs(qd(d, q) - want[i].share) < 1e-9,
                    "interval %d: bw_share %g, want %g", want[i].id, qd(d, q), want[i].share);
        snprintf(q, sizeof q, "SELECT level FROM intervals WHERE id = %d", want[i].id);
        MW_CHECK_AT(__FILE__, __LINE__, !strcmp(qs(d, q, buf, sizeof buf), want[i].level),
                    "interval %d: level %s, want %s", want[i].id, buf, want[i].level);
        snprintf(q, sizeof q, "SELECT COALESCE(in_band, -1) FROM intervals WHERE id = %d",
                 want[i].id);
        MW_CHECK_AT(__FILE__, __LINE__, qd(d, q) == want[i].in_band,
                    "interval %d: in_band %g, want %d", want[i].id, qd(d, q), want[i].in_band);
    }
    sqlite3_close(d);

    /* text: 60 ms measured, 30 bound; in band 20 ms (10 of them above) */
    char *t = summary(db, 0);
    MW_CHECK(t && strstr(t, "\nBandwidth-bound: 50.0% of 0.06 s measured (3 of 6 intervals "
                            "flagged)\n"),
             "headline:\n%s", t);
    MW_CHECK(t && strstr(t, "\n  possibly bound (latency within the threshold's uncertainty band "
                            "150.0-170.0 ns): 33.3 % of the measured time (50.0 % of them above "
                            "the threshold)\n"),
             "band line:\n%s", t);
    MW_CHECK(t && strstr(t, "\n  memory load (share of the 35.0 GB/s peak the calibration "
                            "reached, from the interval's latency on the calibrated curve): bound "
                            "50.0 %, high 16.7 %, medium 16.7 %, low 16.7 % of the measured "
                            "time\n"),
             "levels line:\n%s", t);
    const char *thr = t ? strstr(t, "  latency method probe_lat:") : NULL;
    static const char note[] =
        "  threshold note: probe_lat judged noisy: threshold from the load shapes\n";
    MW_CHECK(thr && !strncmp(strchr(thr, '\n') + 1, note, strlen(note)),
             "note under the threshold line:\n%s", t);
    MW_CHECK(t && strstr(t, "  |") && strstr(t, "(level of most of the column's time: # bound"),
             "level timeline:\n%s", t);
    free(t);
    /* JSON */
    t = summary(db, 1);
    cJSON *j = cJSON_Parse(t);
    MW_CHECK(j != NULL, "JSON parses");
    MW_CHECK_NEAR(jpath(j, "levels", "bound"), 30e6, 1e-9);
    MW_CHECK_NEAR(jpath(j, "levels", "high"), 10e6, 1e-9);
    MW_CHECK_NEAR(jpath(j, "levels", "medium"), 10e6, 1e-9);
    MW_CHECK_NEAR(jpath(j, "levels", "low"), 10e6, 1e-9);
    MW_CHECK_NEAR(jpath(j, "possibly_bound_ns", NULL), 20e6, 1e-9);
    MW_CHECK_NEAR(jpath(j, "possibly_bound_above_ns", NULL), 10e6, 1e-9);
    MW_CHECK_INT(jpath(j, "saturable", NULL), 1); /* META wins over the profile */
    MW_CHECK_NEAR(jpath(j, "peak_bw", NULL), 35e9, 1e-12);
    const cJSON *bw = cJSON_GetObjectItem(j, "bandwidth");
    const cJSON *band = cJSON_GetObjectItem(bw, "band");
    MW_CHECK(cJSON_GetArraySize(band) == 2 && cJSON_GetArrayItem(band, 0)->valuedouble == 150 &&
                 cJSON_GetArrayItem(band, 1)->valuedouble == 170,
             "band");
    MW_CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(bw, "saturable_from")), "META saturable");
    MW_CHECK_STR(
        cJSON_GetStringValue(cJSON_GetArrayItem(cJSON_GetObjectItem(bw, "threshold_notes"), 0)),
        "probe_lat judged noisy: threshold from the load shapes");
    const cJSON *tl = cJSON_GetObjectItem(bw, "timeline_levels");
    MW_CHECK(cJSON_GetArraySize(tl) == 60, "60 timeline columns");
    MW_CHECK_STR(cJSON_GetStringValue(cJSON_GetArrayItem(tl, 0)), "low");
    MW_CHECK_STR(cJSON_GetStringValue(cJSON_GetArrayItem(tl, 45)), "bound");
    cJSON_Delete(j);
    free(t);
    /* HTML: the share, the band and the levels beside it, the note */
    char out[300];
    snprintf(out, sizeof out, "%s/sat.html", dir);
    MW_CHECK_INT(mw_report_html(db, out, NULL), 0);
    t = slurp(out);
    MW_CHECK(t && strstr(t, "id=verdict>Bandwidth-bound <span class=\"bound\">50.0%</span>") &&
                 strstr(t, "id=possibly>Possibly bound (latency within the threshold's "
                           "uncertainty band 150.0&ndash;170.0 ns): 33.3 % of the measured time "
                           "(50.0 % of them above the threshold).") &&
                 strstr(t, "id=levels>Memory load (share of the 35.0 GB/s peak") &&
                 strstr(t, "class=lvl data-level=bound ") &&
                 strstr(t, "id=threshold-note>Threshold note: probe_lat judged noisy"),
             "HTML of the saturable run");
    free(t);
}

/* saturable=0: latencies 141, 144 (low), 146 (medium), 149, 175 (in the
 * band), 185 (in the band, above the threshold) and 200 (flagged by a
 * recorder that should not have: high, not bound). */
static void unsaturable_case(char *db, size_t dbn, char *file, size_t fn)
{
    static const double lat[] = {141, 144, 146, 149, 175, 185, 200};
    static const int fl[] = {0, 0, 0, 0, 0, 0, 1};
    fixture("unsat.mwr",
            "pid=202\nhost=fix\nexe=/bin/unsat\ncmdline=unsat\nsaturable=0\n"
            "threshold_band_ns=170,190\nlat_curve=0:140,10:142,20:145,35:150\npeak_bw=35e9\n",
            NULL, lat, fl, 7, 181.1, file, fn);
    snprintf(db, dbn, "%s/unsat.db", dir);
    MW_CHECK_INT(ingest(file, db), 0);
    sqlite3 *d;
    char buf[64];
    MW_CHECK_INT(sqlite3_open(db, &d), SQLITE_OK);
    MW_CHECK_STR(qs(d, "SELECT level FROM intervals WHERE id = 7", buf, sizeof buf), "high");
    MW_CHECK_INT(qd(d, "SELECT COUNT(*) FROM intervals WHERE level = 'bound'"), 0);
    MW_CHECK_NEAR(qd(d, "SELECT bw_share FROM intervals WHERE id = 2"), (10 + 20.0 / 3) / 35, 1e-9);
    sqlite3_close(d);
    char *t = summary(db, 0);
    MW_CHECK(t && strstr(t, "\nMemory load (relative to the 35.0 GB/s this machine's calibration "
                            "reached; it could not saturate memory here, so nothing is called "
                            "bandwidth-bound): high 57.1 %, medium 14.3 %, low 28.6 % of 0.07 s "
                            "measured\n"),
             "saturable=0 headline:\n%s", t);
    MW_CHECK(t && !strstr(t, "Bandwidth-bound:") && !strstr(t, "possibly bound") &&
                 !strstr(t, ", bound ") && !strstr(t, "bandwidth-bound 0") &&
                 !strstr(t, "not detectable"),
             "a bandwidth-bound claim where memory could not saturate:\n%s", t);
    MW_CHECK(t && strstr(t, "\n  near the threshold (latency within the threshold's uncertainty "
                            "band 170.0-190.0 ns): 28.6 % of the measured time (50.0 % of them "
                            "above the threshold); not called bound\n"),
             "band line:\n%s", t);
    MW_CHECK(t && strstr(t, "\n  latency above the threshold in 2 of 7 intervals (28.6 % of the "
                            "measured time): not called bandwidth-bound\n"),
             "above line:\n%s", t);
    free(t);
    t = summary(db, 1);
    cJSON *j = cJSON_Parse(t);
    MW_CHECK_INT(jpath(j, "saturable", NULL), 0);
    MW_CHECK_INT(jpath(j, "detectable", NULL), 0);
    MW_CHECK_NEAR(jpath(j, "levels", "bound"), 0, 0);
    MW_CHECK_NEAR(jpath(j, "levels", "high"), 40e6, 1e-9);
    MW_CHECK_NEAR(jpath(j, "possibly_bound_ns", NULL), 20e6, 1e-9);
    cJSON_Delete(j);
    free(t);
    /* --by process: no bound column where nothing is called bound */
    char p[300];
    snprintf(p, sizeof p, "%s/by.out", dir);
    FILE *f = fopen(p, "w");
    MW_CHECK_INT(mw_report_by(db, f, "process", 10), 0);
    fclose(f);
    t = slurp(p);
    MW_CHECK(t && strstr(t, "no bound column: the machine profile's calibration never saw memory "
                            "saturate") && !strstr(t, "bound  samples") && !strstr(t, "%"),
             "--by process where memory could not saturate:\n%s", t);
    free(t);
}

/* Garbage META: nothing crashes, the columns stay NULL; without saturable
 * the profile the files name decides (it never saturated: the flagged
 * interval is not bound, nothing is called bandwidth-bound). */
static void garbage_case(const char *prof)
{
    static const double lat[] = {120, 300};
    static const int fl[] = {0, 1};
    char meta[1024], file[300], db[300], buf[64];
    snprintf(meta, sizeof meta,
             "pid=303\nexe=/bin/junk\nprofile=%s (created 2026-01-01)\nsaturable=maybe\n"
             "threshold_band_ns=oops\nlat_curve=1:2:3,x\npeak_bw=-1\nthreshold_note=\n",
             prof);
    fixture("junk.mwr", meta, NULL, lat, fl, 2, 200, file, sizeof file);
    snprintf(db, sizeof db, "%s/junk.db", dir);
    MW_CHECK_INT(ingest(file, db), 0);
    sqlite3 *d;
    MW_CHECK_INT(sqlite3_open(db, &d), SQLITE_OK);
    MW_CHECK_INT(qd(d, "SELECT COUNT(*) FROM intervals WHERE bw_share IS NOT NULL OR in_band IS"
                       " NOT NULL"),
                 0);
    MW_CHECK_STR(
        qs(d, "SELECT COALESCE(level, 'NULL') FROM intervals WHERE id = 1", buf, sizeof buf),
        "NULL");
    MW_CHECK_INT(qd(d, "SELECT COUNT(*) FROM intervals WHERE level IS NOT NULL"), 0);
    sqlite3_close(d);
    char *t = summary(db, 0);
    MW_CHECK(t &&
                 strstr(t, "\nMemory load: this machine's calibration could not saturate memory "
                           "here, so nothing is called bandwidth-bound; the recording carries "
                           "no latency curve") &&
                 !strstr(t, "Bandwidth-bound:") && !strstr(t, "threshold note"),
             "profile fallback:\n%s", t);
    free(t);
    t = summary(db, 1);
    cJSON *j = cJSON_Parse(t);
    MW_CHECK_INT(jpath(j, "saturable", NULL), 0);
    MW_CHECK_STR(cJSON_GetStringValue(
                     cJSON_GetObjectItem(cJSON_GetObjectItem(j, "bandwidth"), "saturable_from")),
                 "the machine profile's validation");
    MW_CHECK(!cJSON_GetObjectItem(cJSON_GetObjectItem(j, "bandwidth"), "band"), "a band of oops");
    cJSON_Delete(j);
    free(t);
}

/* The HTML report and the exports of the saturable=0 database. */
static void html_export_case(const char *db, const char *prof)
{
    char out[300];
    snprintf(out, sizeof out, "%s/r.html", dir);
    mw_html_opts ho = {0};
    ho.profile_path = prof;
    MW_CHECK_INT(mw_report_html(db, out, &ho), 0);
    char *t = slurp(out);
    MW_CHECK(t && strstr(t, "id=verdict>Memory load (relative to the 35.0 GB/s this machine's "
                            "calibration reached): "),
             "HTML verdict");
    MW_CHECK(t && !strstr(t, "id=verdict>Bandwidth-bound") &&
                 strstr(t, "id=detectable>Nothing is called bandwidth-bound here"),
             "HTML: a bandwidth-bound claim where memory could not saturate");
    MW_CHECK(t && strstr(t, "id=tl-levels") && strstr(t, "class=lvl data-level=high ") &&
                 strstr(t, "class=lvl data-level=low ") && !strstr(t, "data-level=bound") &&
                 !strstr(t, "lvl-bound"),
             "HTML level strip and legend");
    MW_CHECK(t && strstr(t, "id=tl-band") && strstr(t, "<rect class=inband"), "HTML band marks");
    MW_CHECK(t && !strstr(t, "<span data-k=fl>") && !strstr(t, "<rect class=fl "),
             "HTML: intervals shaded bound where memory could not saturate");
    MW_CHECK(t && strstr(t, "id=possibly>Near the threshold (latency within the threshold's "
                            "uncertainty band 170.0&ndash;190.0 ns): 28.6 %"),
             "HTML band line");
    MW_CHECK(t && strstr(t, "<td class=\"neutral\">accurate (false negatives not judged") &&
                 !strstr(t, "<td class=\"ok\">accurate"),
             "HTML: a green accurate for a method that never saw saturation");
    free(t);
    snprintf(out, sizeof out, "%s/r.json", dir);
    MW_CHECK_INT(mw_export(db, "perfetto", out, NULL), 0);
    t = slurp(out);
    MW_CHECK(t && strstr(t, "\"name\":\"memory load level (memwatch intervals)\"") &&
                 strstr(t, "\"name\":\"memory load share\"") &&
                 strstr(t, "\"name\":\"high (in the threshold's band)\"") &&
                 strstr(t, "\"args\":{\"level\":\"low\",\"in_band\":0,\"intervals\":2}"),
             "trace levels:\n%.2000s", t ? t : "");
    cJSON *j = t ? cJSON_Parse(t) : NULL;
    MW_CHECK(j != NULL, "the trace is JSON");
    cJSON_Delete(j);
    free(t);
    snprintf(out, sizeof out, "%s/r.csv", dir);
    MW_CHECK_INT(mw_export(db, "csv", out, NULL), 0);
    t = slurp(out);
    MW_CHECK(t && strstr(t, ",bw_method,bw_share,level,in_band\n") && strstr(t, ",high,1\n") &&
                 strstr(t, ",low,0\n"),
             "CSV columns:\n%s", t ? t : "");
    free(t);
}

/* memwatch record's summary reads the same from the raw files. */
static void raw_case(const char *unsat_file)
{
    char both[300];
    snprintf(both, sizeof both, "%s/sat.mwr", dir);
    mw_raw_levels lv;
    mw_raw_levels_init(&lv);
    MW_CHECK_INT(mw_raw_levels_add(&lv, unsat_file), 0);
    MW_CHECK_INT(mw_raw_levels_saturable(&lv), 0);
    MW_CHECK_NEAR(lv.measured_ns, 70e6, 1e-12);
    MW_CHECK_NEAR(lv.level_ns[MW_LEVEL_HIGH], 40e6, 1e-12);
    MW_CHECK_NEAR(lv.level_ns[MW_LEVEL_MEDIUM], 10e6, 1e-12);
    MW_CHECK_NEAR(lv.level_ns[MW_LEVEL_LOW], 20e6, 1e-12);
    MW_CHECK_NEAR(lv.level_ns[MW_LEVEL_BOUND], 0, 0);
    MW_CHECK_NEAR(lv.band_ns, 20e6, 1e-12);
    MW_CHECK_NEAR(lv.band_above_ns, 10e6, 1e-12);
    MW_CHECK_NEAR(lv.peak_bw, 35e9, 1e-12);
    /* the saturable file: its META's curve comes after its intervals */
    MW_CHECK_INT(mw_raw_levels_add(&lv, both), 0);
    MW_CHECK_INT(mw_raw_levels_saturable(&lv), 1);
    MW_CHECK_INT(lv.yes, 1);
    MW_CHECK_INT(lv.no, 1);
    MW_CHECK_NEAR(lv.level_ns[MW_LEVEL_BOUND], 30e6, 1e-12);
    MW_CHECK_NEAR(lv.level_ns[MW_LEVEL_HIGH], 50e6, 1e-12);
    MW_CHECK(lv.have_band && lv.band_lo == 150 && lv.band_hi == 190, "band envelope %g-%g",
             lv.band_lo, lv.band_hi);
    MW_CHECK(mw_raw_levels_add(&lv, "/nonexistent.mwr") != 0, "a missing file");
}

int main(void)
{
    MW_CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    char prof[300], udb[300], ufile[300];
    write_profile(prof, sizeof prof);
    profile_claim_case(prof);
    saturable_case(prof);
    unsaturable_case(udb, sizeof udb, ufile, sizeof ufile);
    garbage_case(prof);
    html_export_case(udb, prof);
    raw_case(ufile);
    int rc = mw_test_done();
    if (!rc && !getenv("MW_KEEP")) {
        char cmd[400];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd)) {
        }
    }
    return rc;
}
