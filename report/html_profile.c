/*
 * report/html_profile.c: the machine profile in HTML (docs/html.md,
 * docs/profile-format.md): the report's section on the profile a recording
 * used (its latency-versus-bandwidth curve with the threshold, the methods'
 * verdicts) and `memwatch calibrate --html`, a page of its own for a
 * calibration with its benchmark plots.
 *
 * May call: cJSON, libc, the catalogue (which methods are the probe),
 * report/view.c.
 * Threading: reentrant.
 */
#include "html_int.h"

#include <memwatch/catalogue.h>
#include <memwatch/memwatch.h>
#include <memwatch/views.h>

#include <stdlib.h>
#include <unistd.h>

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = n > 0 && n < (64 << 20) ? malloc((size_t)n + 1) : NULL;
    if (b) {
        size_t k = fread(b, 1, (size_t)n, f);
        b[k] = 0;
    }
    fclose(f);
    return b;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void profile_body(FILE *f, const char *path, const char *how);

void mwh_profile_section(FILE *f, sqlite3 *db, const char *want)
{
    fputs("<h2 id=profile>Machine profile: loaded latency against bandwidth</h2>\n", f);
    char path[4096] = "";
    const char *how = "";
    if (want && *want) {
        snprintf(path, sizeof path, "%s", want);
        how = "given with --profile";
    } else {
        sqlite3_stmt *s;
        if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'profile' AND value NOT"
                                   " LIKE 'none%' AND value NOT LIKE 'pending%' LIMIT 1",
                               -1, &s, NULL) == SQLITE_OK) {
            if (sqlite3_step(s) == SQLITE_ROW && col_text(s, 0)) {
                snprintf(path, sizeof path, "%s", col_text(s, 0));
                char *p = strstr(path, " (created");
                if (p)
                    *p = 0;
                how = "the one the recording used";
            }
            sqlite3_finalize(s);
        }
        if (!path[0]) {
            const char *x = getenv("XDG_DATA_HOME"), *home = getenv("HOME");
            if (x && x[0] == '/')
                snprintf(path, sizeof path, "%s/memwatch/profile.json", x);
            else if (home)
                snprintf(path, sizeof path, "%s/.local/share/memwatch/profile.json", home);
            how = "the default path (the recording used none)";
        }
    }
    profile_body(f, path, how);
}

/* The profile's latency-against-bandwidth curve as SVG, with the threshold
 * where the latency method is the probe (a note where it has no points). */
static void profile_curve(FILE *f, const cJSON *p, double thr, double peak, int probe)
{
    /* the curve: probe_lat readings per grid point (median) against bandwidth */
    const cJSON *pts =
        cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(p, "evidence"), "probe_lat"),
                            "points");
    int np = cJSON_GetArraySize(pts);
    if (np > 0) {
        double *bx = calloc((size_t)np, sizeof *bx), *ly = calloc((size_t)np, sizeof *ly);
        int n = 0;
        double xmax = 0, ymax = 0;
        const cJSON *q;
        cJSON_ArrayForEach(q, pts)
        {
            const cJSON *ns = cJSON_GetObjectItem(q, "ns");
            int k = cJSON_GetArraySize(ns);
            if (k <= 0 || !bx || !ly)
                continue;
            double *vals = malloc((size_t)k * sizeof *vals);
            if (!vals)
                continue;
            for (int i = 0; i < k; i++)
                vals[i] = cJSON_GetNumberValue(cJSON_GetArrayItem(ns, i));
            qsort(vals, (size_t)k, sizeof *vals, cmp_d);
            bx[n] = cJSON_GetNumberValue(cJSON_GetObjectItem(q, "bw")) / 1e9;
            ly[n] = vals[k / 2];
            free(vals);
            if (bx[n] > xmax)
                xmax = bx[n];
            if (ly[n] > ymax)
                ymax = ly[n];
            n++;
        }
        if (probe && thr > ymax)
            ymax = thr;
        xmax = nice_max(fmax(xmax, peak / 1e9));
        ymax = nice_max(ymax * 1.1);
        const double W = 620, H = 300, X0 = 60, Y0 = 14, PW = W - X0 - 20, PH = H - Y0 - 44;
        fprintf(f, "<div class=card><svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %.0f "
                   "%.0f\" width=\"%.0f\" height=\"%.0f\">\n",
                W, H, W, H);
        fprintf(f, "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"#fff\" "
                   "stroke=\"#c9ced6\"/>\n",
                X0, Y0, PW, PH);
        for (int i = 0; i <= 5; i++) {
            double xv = xmax * i / 5, yv = ymax * i / 5;
            fprintf(f, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%g</text>"
                       "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
                    X0 + PW * i / 5, Y0 + PH + 14, xv, X0 - 4, Y0 + PH - PH * i / 5 + 4, yv);
        }
        fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">bandwidth of the load "
                   "(GB/s)</text><text transform=\"translate(14 %.0f) rotate(-90)\" "
                   "text-anchor=\"middle\">probe latency (ns, median)</text>\n",
                X0 + PW / 2, H - 8, Y0 + PH / 2);
        if (probe && thr > 0)
            fprintf(f, "<line x1=\"%.0f\" x2=\"%.0f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#d62728\" "
                       "stroke-dasharray=\"5 3\"/><text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\" "
                       "fill=\"#d62728\">threshold %.0f ns</text>\n",
                    X0, X0 + PW, Y0 + PH - thr / ymax * PH, Y0 + PH - thr / ymax * PH, X0 + PW - 4,
                    Y0 + PH - thr / ymax * PH - 4, thr);
        /* the curve: points in order of bandwidth, joined */
        for (int i = 1; i < n; i++)
            for (int j = i; j > 0 && bx[j] < bx[j - 1]; j--) {
                double t = bx[j];
                bx[j] = bx[j - 1];
                bx[j - 1] = t;
                t = ly[j];
                ly[j] = ly[j - 1];
                ly[j - 1] = t;
            }
        fputs("<path fill=\"none\" stroke=\"#1f4e9c\" stroke-width=\"1\" stroke-opacity=\"0.5\" d=\"", f);
        for (int i = 0; i < n; i++)
            fprintf(f, "%c%.1f %.1f", i ? 'L' : 'M', X0 + bx[i] / xmax * PW, Y0 + PH - ly[i] / ymax * PH);
        fputs("\"/>\n", f);
        for (int i = 0; i < n; i++)
            fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"><title>%.2f GB/s, "
                       "%.1f ns</title></circle>",
                    X0 + bx[i] / xmax * PW, Y0 + PH - ly[i] / ymax * PH,
                    probe && thr > 0 && ly[i] >= thr ? "#d62728" : "#1f4e9c", bx[i], ly[i]);
        fputs("\n</svg></div>\n", f);
        free(bx);
        free(ly);
    } else {
        fputs("<p class=muted>The profile has no probe readings over the bandwidth grid "
              "(evidence.probe_lat.points) to draw.</p>\n",
              f);
    }
}

/* The profile's methods and their verdicts, as a table. */
static void profile_methods(FILE *f, const cJSON *p)
{
    const cJSON *ms = cJSON_GetObjectItem(p, "methods"), *m;
    if (cJSON_GetArraySize(ms) > 0) {
        fputs("<table class=methods><tr><th>method</th><th>measures</th><th>verdict</th><th>why</th>"
              "</tr>\n",
              f);
        cJSON_ArrayForEach(m, ms)
        {
            const cJSON *v = cJSON_GetObjectItem(m, "verdict");
            /* green only where the verdict could be judged whole: a method
             * whose sweep never saturated memory (or a latency method of a
             * profile that could not saturate it) has false negatives that
             * cannot be judged, so its "accurate" is shown neutral, with why */
            const char *q = cJSON_GetStringValue(cJSON_GetObjectItem(m, "quantity"));
            int acc = cJSON_IsString(v) && !strcmp(v->valuestring, "accurate");
            int unjudged = cJSON_IsFalse(cJSON_GetObjectItem(m, "saturated")) ||
                           (cJSON_IsFalse(cJSON_GetObjectItem(p, "saturable")) && q &&
                            !strcmp(q, "latency"));
            fputs("<tr><td>", f);
            h(f, cJSON_GetStringValue(cJSON_GetObjectItem(m, "name")));
            fputs("</td><td>", f);
            h(f, cJSON_GetStringValue(cJSON_GetObjectItem(m, "quantity")));
            fprintf(f, "</td><td class=\"%s\">", acc && unjudged ? "neutral" : acc ? "ok" : "");
            h(f, cJSON_IsString(v) ? v->valuestring : "");
            if (unjudged)
                fputs(" (false negatives not judged: the calibration could not saturate "
                      "memory)",
                      f);
            fputs("</td><td>", f);
            h(f, cJSON_GetStringValue(cJSON_GetObjectItem(m, "reason")));
            fputs("</td></tr>\n", f);
        }
        fputs("</table>\n", f);
    }
}

static void profile_body(FILE *f, const char *path, const char *how)
{
    char *txt = path[0] ? slurp(path) : NULL;
    cJSON *p = txt ? cJSON_Parse(txt) : NULL;
    free(txt);
    if (!p) {
        fputs("<p class=note>No machine profile could be read", f);
        if (path[0]) {
            fputs(" (", f);
            h(f, path);
            fprintf(f, ", %s)", how);
        }
        fputs(strcmp(how, "written by this calibration")
                  ? ": the intervals were flagged against memwatch's default threshold (a "
                    "multiple of the idle latency measured at the start). Run <code>memwatch "
                    "calibrate</code> on this machine for a calibrated threshold and the method "
                    "verdicts.</p>\n"
                  : ": the calibration did not write one (validation skipped or failed).</p>\n",
              f);
        return;
    }
    fputs("<p class=muted>", f);
    h(f, path);
    fprintf(f, " (%s)", how);
    const cJSON *cr = cJSON_GetObjectItem(p, "created");
    if (cJSON_IsString(cr)) {
        fputs(", calibrated ", f);
        h(f, cr->valuestring);
    }
    fputs("</p>\n", f);
    double thr = cJSON_GetNumberValue(cJSON_GetObjectItem(p, "lat_threshold_ns"));
    double idle = cJSON_GetNumberValue(cJSON_GetObjectItem(p, "idle_latency_ns"));
    double peak = cJSON_GetNumberValue(cJSON_GetObjectItem(p, "peak_bw"));
    const cJSON *lm = cJSON_GetObjectItem(p, "lat_method");
    int probe = cJSON_IsString(lm) && mw_method_is(lm->valuestring, MW_Q_LATENCY, MW_HOW_PROBE);
    profile_curve(f, p, thr, peak, probe);
    fprintf(f, "<dl><dt>idle latency</dt><dd>%.1f ns</dd><dt>peak bandwidth</dt><dd>%.2f GB/s"
               "</dd><dt>latency method</dt><dd>",
            idle, peak / 1e9);
    h(f, cJSON_IsString(lm) ? lm->valuestring : "");
    fprintf(f, " (threshold %g)</dd></dl>\n", thr);
    profile_methods(f, p);
    cJSON_Delete(p);
}

/* ---- a calibration on its own ---- */

static void inline_svg(FILE *f, const char *path, const char *caption)
{
    char *svg = slurp(path);
    if (!svg)
        return;
    const char *start = strstr(svg, "<svg");
    if (start) {
        fputs("<div class=card>", f);
        /* scale to the page, keep the drawn size as the maximum */
        fputs("<svg style=\"max-width:100%;height:auto\"", f);
        fputs(start + 4, f);
        fputs("<p class=muted>", f);
        h(f, caption);
        fputs("</p></div>\n", f);
    }
    free(svg);
}

int mw_calib_html(const char *out_path, const char *profile_path, const char *plot_dir)
{
    mwv_out out;
    int rc = mwv_out_open(&out, out_path);
    if (rc)
        return rc;
    FILE *f = out.f;
    fprintf(f, "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8><title>memwatch "
               "calibration</title><style>%s</style></head><body><div id=tip></div><main>\n"
               "<h1>memwatch calibration</h1>\n",
            mwh_css);
    fputs("<p class=muted>Ground-truth microbenchmarks of this machine, every measurement "
          "method judged against them, and the saturation threshold the profiler flags "
          "intervals with (docs/calibrate.md, docs/saturation.md).</p>\n",
          f);
    fputs("<h2 id=profile>Machine profile: loaded latency against bandwidth</h2>\n", f);
    profile_body(f, profile_path ? profile_path : "", "written by this calibration");
    static const char *const plots[][2] = {
        {"loaded.svg", "Loaded latency: latency of dependent loads while other threads stream "
                       "at growing bandwidth."},
        {"sweep.svg", "Read sweep: bandwidth against the delay between loads, per thread count."},
        {"mlp.svg", "Memory-level parallelism: speed-up against independent chains."},
        {"ladder.svg", "Latency ladder: ns per load against footprint, with the caches sysfs "
                       "names."}};
    int any = 0;
    for (size_t i = 0; plot_dir && i < sizeof plots / sizeof plots[0]; i++) {
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", plot_dir, plots[i][0]);
        if (access(p, R_OK) == 0) {
            if (!any)
                fputs("<h2 id=benchmarks>Benchmarks</h2>\n", f);
            any = 1;
            inline_svg(f, p, plots[i][1]);
        }
    }
    if (!any)
        fputs("<p class=muted>No benchmark plot was drawn (the benchmarks that draw them did "
              "not run).</p>\n",
              f);
    fprintf(f, "<p class=muted style=\"margin-top:30px\">Made by memwatch %s.</p>\n</main>"
               "<script>%s</script></body></html>\n",
            mw_version(), mwh_js);
    return mwv_out_close(&out, !ferror(f));
}
