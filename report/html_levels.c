/*
 * report/html_levels.c: the HTML report's verdict (docs/html.md): the share
 * bandwidth-bound, or, where the machine profile's calibration could not
 * saturate memory, the memory load relative to the calibrated peak and no
 * bandwidth-bound claim; the intervals within the threshold's uncertainty
 * band (possibly bound); the memory-load levels; the threshold notes
 * (META threshold_note).
 * The figures are the text summary's (report/summary_levels.c).
 *
 * May call: SQLite, cJSON, libc, report/summary_levels.c, report/view.c.
 * Threading: reentrant.
 */
#include "html_int.h"
#include "levels_int.h"

static double jnum_(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

/* Percent of the measured time. */
static double pc(const cJSON *bw, double ns)
{
    return jnum_(bw, "time_ns") > 0 ? 100 * ns / jnum_(bw, "time_ns") : 0;
}

/* "high 40.1 %, medium 9.0 %, low 50.9 %" (bound first when wanted). */
static void level_list(FILE *f, const cJSON *bw, int with_bound)
{
    const cJSON *lv = cJSON_GetObjectItemCaseSensitive(bw, "levels");
    if (with_bound)
        fprintf(f, "<span class=lvl-bound>bound %.1f %%</span>, ", pc(bw, jnum_(lv, "bound")));
    fprintf(f,
            "<span class=lvl-high>high %.1f %%</span>, <span class=lvl-medium>medium %.1f "
            "%%</span>, <span class=lvl-low>low %.1f %%</span>",
            pc(bw, jnum_(lv, "high")), pc(bw, jnum_(lv, "medium")), pc(bw, jnum_(lv, "low")));
    if (jnum_(bw, "level_unknown_ns") > 0)
        fprintf(f, ", no level %.1f %%", pc(bw, jnum_(bw, "level_unknown_ns")));
}

static int load_levels(const cJSON *bw)
{
    const cJSON *lv = cJSON_GetObjectItemCaseSensitive(bw, "levels");
    return jnum_(lv, "low") + jnum_(lv, "medium") + jnum_(lv, "high") > 0;
}

static void peak(FILE *f, const cJSON *bw, const char *reached)
{
    if (jnum_(bw, "peak_bw") > 0)
        fprintf(f, "the %.1f GB/s %s", jnum_(bw, "peak_bw") / 1e9, reached);
    else
        fputs("the highest bandwidth of the calibrated latency curve", f);
}

/* Where memory could not saturate: the load, and why nothing is bound. */
static void verdict_unsaturable(FILE *f, const cJSON *bw, const char *dur, const char *who)
{
    fputs("<p class=verdict id=verdict>Memory load", f);
    if (load_levels(bw)) {
        fputs(" (relative to ", f);
        peak(f, bw, "this machine's calibration reached");
        fputs("): ", f);
        level_list(f, bw, 0);
        fprintf(f, " of %s measured", dur);
    } else {
        fprintf(f, ": not known (the recording carries no latency curve); %s measured", dur);
    }
    fprintf(f, " %s.</p>\n", who);
    fputs("<p class=verdict id=detectable>Nothing is called bandwidth-bound here: the machine "
          "profile's calibration could not saturate memory on this machine, so bound intervals "
          "cannot be told from others (false negatives cannot be judged).</p>\n",
          f);
}

void mwh_verdict(FILE *f, sqlite3 *db, int nproc, int64_t nsamp)
{
    cJSON *bw = cJSON_CreateObject();
    int64_t tot = mwv_scalar(db, "SELECT COALESCE(SUM(t_end - t_start), 0) FROM intervals WHERE"
                                 " flags & 2"),
            fl = mwv_scalar(db, "SELECT COALESCE(SUM(t_end - t_start), 0) FROM intervals WHERE"
                                " bw_bound = 1 AND flags & 2"),
            niv = mwv_scalar(db, "SELECT COUNT(*) FROM intervals WHERE flags & 2"),
            nfl = mwv_scalar(db, "SELECT COUNT(*) FROM intervals WHERE bw_bound = 1");
    cJSON_AddNumberToObject(bw, "time_ns", (double)tot);
    mw_levels_collect(db, bw, 0, 0, 0); /* no timeline: the page draws its own */
    const cJSON *sv = cJSON_GetObjectItemCaseSensitive(bw, "saturable");
    char dur[64], who[96];
    fmt_dur(dur, sizeof dur, (double)tot / 1e9);
    snprintf(who, sizeof who, "in %d process%s, %lld samples", nproc, nproc == 1 ? "" : "es",
             (long long)nsamp);
    if (cJSON_IsFalse(sv)) {
        verdict_unsaturable(f, bw, dur, who);
    } else {
        double share = tot > 0 ? (double)fl / (double)tot : 0;
        fprintf(f,
                "<p class=verdict id=verdict>Bandwidth-bound <span class=\"%s\">%.1f%%</span> "
                "of %s measured (%lld of %lld intervals flagged) %s.</p>\n",
                share > 0 ? "bound" : "ok", 100 * share, dur, (long long)nfl, (long long)niv, who);
    }
    const cJSON *band = cJSON_GetObjectItemCaseSensitive(bw, "band");
    if (cJSON_GetArraySize(band) == 2) {
        double in = jnum_(bw, "possibly_bound_ns"), above = jnum_(bw, "possibly_bound_above_ns");
        fprintf(f,
                "<p class=verdict id=possibly>%s (latency within the threshold's uncertainty "
                "band %.1f&ndash;%.1f ns): %.1f %% of the measured time (%.1f %% of them above "
                "the threshold)%s.</p>\n",
                cJSON_IsFalse(sv) ? "Near the threshold" : "Possibly bound",
                cJSON_GetArrayItem(band, 0)->valuedouble, cJSON_GetArrayItem(band, 1)->valuedouble,
                pc(bw, in), in > 0 ? 100 * above / in : 0.0,
                cJSON_IsFalse(sv) ? "; not called bound" : "");
    }
    if (!cJSON_IsFalse(sv) && load_levels(bw)) {
        fputs("<p class=muted id=levels>Memory load (share of ", f);
        peak(f, bw, "peak the calibration reached");
        fputs(", from the interval's latency on the calibrated curve): ", f);
        level_list(f, bw, 1);
        fputs(" of the measured time.</p>\n", f);
    }
    cJSON_Delete(bw);
}

void mwh_threshold_notes(FILE *f, sqlite3 *db)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db,
                           "SELECT DISTINCT value FROM meta WHERE key = 'threshold_note' AND"
                           " value != '' ORDER BY value",
                           -1, &s, NULL) != SQLITE_OK)
        return;
    while (sqlite3_step(s) == SQLITE_ROW) {
        fputs("<p class=muted id=threshold-note>Threshold note: ", f);
        h(f, col_text(s, 0));
        fputs("</p>\n", f);
    }
    sqlite3_finalize(s);
}
