/*
 * report/html_timeline.c: the timeline of the HTML report (docs/html.md): a
 * lane per process with its loaded latency against the threshold, its DRAM
 * bandwidth, its flagged intervals shaded, its GPU kernels and its threads'
 * regions (report/html_region.c). Aggregated before it is drawn: a fixed
 * number of columns per lane whatever the run's length.
 *
 * May call: SQLite, cJSON, libc, report/view.c, report/html_region.c.
 * Threading: reentrant.
 */
#include "html_int.h"
#include "region.h"

#include <stdlib.h>

#define TL_W 1100      /* plot width of the timeline, px */
#define TL_BINS 550    /* columns per lane */
#define TL_LANE_H 84   /* latency plot height */
#define TL_GPU_H 18    /* GPU kernel strip, one per device */
#define TL_GPU_DEVS 8  /* devices drawn per process (the rest: a note) */
#define TL_LABEL_H 18
#define TL_MAX_LANES 32
#define TL_RG_ROW 13     /* a thread's region band */
#define TL_RG_THREADS 16 /* threads drawn per process */
#define TL_RG_LEVELS 3   /* nesting levels drawn per thread */

typedef struct lane {
    int64_t id;
    char name[256];
    double share;
    double cov[TL_BINS], fl[TL_BINS], latw[TL_BINS], latt[TL_BINS], thr[TL_BINS];
    double bytes[TL_BINS], bwt[TL_BINS];
    double gbusy[TL_GPU_DEVS][TL_BINS], gflag[TL_GPU_DEVS][TL_BINS];
    int gdev[TL_GPU_DEVS];    /* the device of each strip, in ascending order */
    int64_t glaunch[TL_GPU_DEVS], gflagged[TL_GPU_DEVS];
    double maxlat;
    int has_bw, has_gpu;      /* has_gpu: the number of strips */
    int gpu_more, gpu_last;   /* devices beyond TL_GPU_DEVS, not drawn; the last one seen */
    mwh_rbands *rb; /* its threads' regions */
} lane;

/* spread [a,b) over the bins, calling back with each overlap */
#define SPREAD(a, b, T, K, body)                                                                  \
    do {                                                                                       \
        double w_ = (T) / TL_BINS;                                                             \
        int k0_ = (int)((a) / w_);                                                             \
        if (k0_ < 0)                                                                           \
            k0_ = 0;                                                                           \
        for (int K = k0_; K < TL_BINS && K * w_ < (b); K++) {                                  \
            double lo_ = (a) > K * w_ ? (a) : K * w_, hi_ = (b) < (K + 1) * w_ ? (b) : (K + 1) * w_; \
            double ov = hi_ - lo_;                                                             \
            if (ov > 0) {                                                                      \
                body;                                                                          \
            }                                                                                  \
        }                                                                                      \
    } while (0)

static void path_series(FILE *f, const double *v, const double *valid, double x0, double y0,
                        double hgt, double vmin, double vmax, const char *style)
{
    double bw = (double)TL_W / TL_BINS;
    int open = 0;
    fprintf(f, "<path %s d=\"", style);
    for (int k = 0; k < TL_BINS; k++) {
        if (valid[k] <= 0 || v[k] < 0) {
            open = 0;
            continue;
        }
        double c = v[k] > vmax ? vmax : v[k] < vmin ? vmin : v[k];
        double y = y0 + hgt - (c - vmin) / (vmax - vmin) * hgt;
        fprintf(f, "%c%.1f %.1f", open ? 'L' : 'M', x0 + (k + 0.5) * bw, y);
        open = 1;
    }
    fputs("\"/>\n", f);
}

void mwh_timeline(FILE *f, sqlite3 *db, cJSON *job)
{
    int64_t T = mwv_scalar(db, "SELECT MAX(e) FROM (SELECT MAX(i.t_end + c.off) AS e FROM intervals"
                               " i JOIN pclock c ON c.process_id = i.process_id UNION ALL SELECT"
                               " MAX(k.end_ns + c.goff) FROM gpu_kernels k JOIN pclock c ON"
                               " c.process_id = k.process_id)");
    int nproc = cJSON_GetArraySize(cJSON_GetObjectItem(job, "processes"));
    if (T <= 0) {
        fputs("<p class=note>No interval was recorded: the run ended before its first interval, "
              "or it was recorded with MEMWATCH_METHOD=none.</p>\n",
              f);
        return;
    }
    /* lanes: processes in the job view's order (rank, host, pid), leaving
     * out brief processes that are no MPI rank (a launcher's fork before its
     * exec, a helper: under 2 % of the job's time); with more than
     * TL_MAX_LANES the most bound ones */
    cJSON *arr = cJSON_GetObjectItem(job, "processes"), *pr;
    char *use = calloc((size_t)(nproc ? nproc : 1), 1);
    if (!use)
        return;
    int ncand = 0, i = 0, brief = 0;
    cJSON_ArrayForEach(pr, arr)
    {
        int keep = nproc == 1 || cJSON_GetObjectItem(pr, "rank") ||
                   cJSON_GetObjectItem(pr, "time_ns")->valuedouble >= 0.02 * (double)T;
        use[i++] = (char)keep;
        ncand += keep;
        brief += !keep;
    }
    int nl = ncand < TL_MAX_LANES ? ncand : TL_MAX_LANES;
    lane *L = calloc((size_t)(nl ? nl : 1), sizeof *L);
    if (!L) {
        free(use);
        return;
    }
    int k = 0;
    if (ncand > TL_MAX_LANES) { /* pick by share, keep the job's order */
        for (k = 0; k < nl; k++) {
            int best = -1;
            double bs = -1;
            i = 0;
            cJSON_ArrayForEach(pr, arr)
            {
                double sh = cJSON_GetObjectItem(pr, "share")->valuedouble;
                if (use[i] == 1 && sh > bs) {
                    bs = sh;
                    best = i;
                }
                i++;
            }
            if (best < 0)
                break;
            use[best] = 2;
        }
        for (i = 0; i < nproc; i++)
            use[i] = use[i] == 2;
    }
    k = 0;
    i = 0;
    cJSON_ArrayForEach(pr, arr)
    {
        if (use[i++] && k < nl) {
            L[k].id = (int64_t)cJSON_GetObjectItem(pr, "id")->valuedouble;
            L[k].share = cJSON_GetObjectItem(pr, "share")->valuedouble;
            k++;
        }
    }
    free(use);
    for (k = 0; k < nl; k++) {
        mwv_proc_label(db, L[k].id, L[k].name, sizeof L[k].name);
        for (int b = 0; b < TL_BINS; b++)
            L[k].thr[b] = -1;
    }
    double Td = (double)T;
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db,
                           "SELECT i.process_id, i.t_start + c.off, i.t_end + c.off, i.latency_ns,"
                           " i.threshold_ns, i.bytes, i.bw_bound FROM intervals i JOIN pclock c"
                           " ON c.process_id = i.process_id",
                           -1, &s, NULL) == SQLITE_OK) {
        int cur = -1;
        int64_t cur_id = -1;
        while (sqlite3_step(s) == SQLITE_ROW) {
            int64_t id = sqlite3_column_int64(s, 0);
            if (id != cur_id) {
                cur_id = id;
                cur = -1;
                for (int j = 0; j < nl; j++)
                    if (L[j].id == id)
                        cur = j;
            }
            if (cur < 0)
                continue;
            lane *l = &L[cur];
            double a = (double)sqlite3_column_int64(s, 1), b = (double)sqlite3_column_int64(s, 2);
            int haslat = sqlite3_column_type(s, 3) != SQLITE_NULL;
            double lat = sqlite3_column_double(s, 3), thr = sqlite3_column_double(s, 4);
            int hasb = sqlite3_column_type(s, 5) != SQLITE_NULL;
            double bytes = sqlite3_column_double(s, 5);
            int fl = sqlite3_column_int(s, 6);
            if (haslat && lat > l->maxlat)
                l->maxlat = lat;
            if (hasb)
                l->has_bw = 1;
            double dur = b - a;
            SPREAD(a, b, Td, bk, {
                l->cov[bk] += ov;
                if (fl)
                    l->fl[bk] += ov;
                if (haslat) {
                    l->latw[bk] += lat * ov;
                    l->latt[bk] += ov;
                }
                if (thr > l->thr[bk])
                    l->thr[bk] = thr;
                if (hasb && dur > 0) {
                    l->bytes[bk] += bytes * ov / dur;
                    l->bwt[bk] += ov;
                }
            });
        }
        sqlite3_finalize(s);
    }
    if (sqlite3_prepare_v2(db,
                           "SELECT k.process_id, k.start_ns + c.goff, k.end_ns + c.goff,"
                           " k.bw_bound, k.device FROM gpu_kernels k JOIN pclock c ON"
                           " c.process_id = k.process_id ORDER BY k.process_id, k.device",
                           -1, &s, NULL) == SQLITE_OK) {
        while (sqlite3_step(s) == SQLITE_ROW) {
            int64_t id = sqlite3_column_int64(s, 0);
            for (int j = 0; j < nl; j++) {
                if (L[j].id != id)
                    continue;
                lane *l = &L[j];
                int dev = sqlite3_column_int(s, 4), g = 0;
                while (g < l->has_gpu && l->gdev[g] != dev)
                    g++;
                if (g == l->has_gpu) { /* a new device (rows come in device order) */
                    if (g == TL_GPU_DEVS) {
                        if (!l->gpu_more || l->gpu_last != dev)
                            l->gpu_more++;
                        l->gpu_last = dev;
                        continue;
                    }
                    l->gdev[l->has_gpu++] = dev;
                }
                double a = (double)sqlite3_column_int64(s, 1),
                       b = (double)sqlite3_column_int64(s, 2);
                int fl = sqlite3_column_int(s, 3);
                l->glaunch[g]++;
                l->gflagged[g] += fl != 0;
                SPREAD(a, b, Td, bk, {
                    l->gbusy[g][bk] += ov;
                    if (fl)
                        l->gflag[g][bk] += ov;
                });
            }
        }
        sqlite3_finalize(s);
    }
    int any_rg = 0;
    for (k = 0; k < nl; k++) {
        L[k].rb = mwh_rbands_load(db, L[k].id, Td, TL_BINS, TL_RG_THREADS, TL_RG_LEVELS);
        any_rg |= mwh_rbands_rows(L[k].rb) > 0;
    }
    /* geometry */
    const double x0 = 64, pw = TL_W, bwid = pw / TL_BINS;
    double y = 8, ys[TL_MAX_LANES], ye[TL_MAX_LANES];
    for (k = 0; k < nl; k++) {
        int rows = mwh_rbands_rows(L[k].rb);
        ys[k] = y;
        y += TL_LABEL_H + TL_LANE_H + L[k].has_gpu * (TL_GPU_H + 4) + (L[k].gpu_more ? 14 : 0) +
             (rows ? rows * TL_RG_ROW + 4 : 0) + 14;
        ye[k] = y;
    }
    double H = y + 28, W = x0 + pw + 64;
    if (ncand > nl)
        fprintf(f, "<p class=note>%d processes: the timeline shows the %d most bound; every "
                   "process is in the per-rank table, and <code>--rank</code>, "
                   "<code>--host</code> or <code>--pid</code> draw any of them.</p>\n",
                ncand, nl);
    if (brief)
        fprintf(f, "<p class=muted>%d brief process%s that %s no MPI rank (under 2%% of the "
                   "job's time: a launcher's fork before its exec, a helper) %s not drawn; the "
                   "process table lists %s.</p>\n",
                brief, brief == 1 ? "" : "es", brief == 1 ? "is" : "are",
                brief == 1 ? "is" : "are", brief == 1 ? "it" : "them");
    fputs("<div class=legend><span><i class=sw style=\"background:rgba(214,39,40,.35)\"></i>"
          "flagged bandwidth-bound (shade: share of the column)</span><span><i class=sw "
          "style=\"height:2px;background:#1f4e9c\"></i>loaded latency (ns, left axis)</span>"
          "<span><i class=sw style=\"height:0;border-top:2px dashed #d62728\"></i>saturation "
          "threshold</span><span><i class=sw style=\"height:2px;background:#2ca02c\"></i>DRAM "
          "bandwidth (GB/s, right axis)</span><span><i class=sw style=\"background:#7f7f7f\">"
          "</i>GPU kernels (<b style=\"color:#d62728\">red</b>: flagged)</span>",
          f);
    if (any_rg)
        fputs("<span><i class=sw style=\"background:#4e79a7\"></i>regions per thread (a row per "
              "nesting level; colours as in the region table)</span>",
              f);
    fputs("</div>\n", f);
    fprintf(f,
            "<div class=card><svg id=tl xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %.0f %.0f\" "
            "width=\"%.0f\" height=\"%.0f\" style=\"width:100%%;height:auto\" role=img "
            "aria-label=\"timeline\">\n",
            W, H, W, H);
    for (k = 0; k < nl; k++) {
        lane *l = &L[k];
        double ly = ys[k] + TL_LABEL_H;
        double thrmax = 0;
        for (int b = 0; b < TL_BINS; b++)
            if (l->thr[b] > thrmax)
                thrmax = l->thr[b];
        double vmax = nice_max(fmax(l->maxlat, thrmax * 1.25));
        double mean[TL_BINS], thr[TL_BINS], bw[TL_BINS], bwmax = 0;
        for (int b = 0; b < TL_BINS; b++) {
            mean[b] = l->latt[b] > 0 ? l->latw[b] / l->latt[b] : -1;
            thr[b] = l->thr[b];
            bw[b] = l->bwt[b] > 0 ? l->bytes[b] / l->bwt[b] : -1; /* bytes/ns = GB/s */
            if (bw[b] > bwmax)
                bwmax = bw[b];
        }
        bwmax = nice_max(bwmax);
        /* the latency axis starts below the lowest value (idle latency is far
         * from 0; from 0 the rise to the threshold would be squeezed) */
        double lo = thrmax > 0 ? thrmax : vmax;
        for (int b = 0; b < TL_BINS; b++)
            if (mean[b] >= 0 && mean[b] < lo)
                lo = mean[b];
        double vmin = 0;
        if (lo * 0.8 > 1) {
            double m = pow(10, floor(log10(lo * 0.8)));
            vmin = floor(lo * 0.8 / m) * m;
        }
        if (vmin >= vmax)
            vmin = 0;
        fprintf(f, "<text x=\"%.0f\" y=\"%.1f\" font-weight=\"600\">", x0, ys[k] + 12);
        h(f, l->name);
        fprintf(f, "</text><text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\" class=\"%s\">"
                   "bandwidth-bound %.1f%% of its time</text>\n",
                x0 + pw, ys[k] + 12, "", 100 * l->share);
        fprintf(f, "<rect x=\"%.0f\" y=\"%.1f\" width=\"%.0f\" height=\"%d\" fill=\"#fff\" "
                   "stroke=\"#c9ced6\"/>\n",
                x0, ly, pw, TL_LANE_H);
        /* unmeasured stretches hatched lightly, flagged ones shaded by share */
        for (int b = 0; b < TL_BINS;) {
            double fr = l->cov[b] > 0 ? l->fl[b] / l->cov[b] : 0;
            int q = (int)lround(fr * 10);
            int e = b + 1;
            while (e < TL_BINS && (int)lround((l->cov[e] > 0 ? l->fl[e] / l->cov[e] : 0) * 10) == q &&
                   (l->cov[e] > 0) == (l->cov[b] > 0))
                e++;
            if (l->cov[b] <= 0)
                fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" "
                           "fill=\"#eef0f3\"/>",
                        x0 + b * bwid, ly, (e - b) * bwid, TL_LANE_H);
            else if (q > 0)
                fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" "
                           "fill=\"#d62728\" fill-opacity=\"%.2f\"/>",
                        x0 + b * bwid, ly, (e - b) * bwid, TL_LANE_H, 0.08 + 0.32 * q / 10.0);
            b = e;
        }
        fputc('\n', f);
        /* axes */
        fprintf(f, "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">%g ns</text>"
                   "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">%g ns</text>\n",
                x0 - 4, ly + 9, vmax, x0 - 4, ly + TL_LANE_H, vmin);
        if (l->has_bw)
            fprintf(f, "<text x=\"%.0f\" y=\"%.1f\" fill=\"#2ca02c\">%g GB/s</text>\n", x0 + pw + 4,
                    ly + 9, bwmax);
        path_series(f, thr, l->cov, x0, ly, TL_LANE_H, vmin, vmax,
                    "fill=\"none\" stroke=\"#d62728\" stroke-width=\"1.5\" "
                    "stroke-dasharray=\"5 3\"");
        if (l->has_bw)
            path_series(f, bw, l->bwt, x0, ly, TL_LANE_H, 0, bwmax,
                        "fill=\"none\" stroke=\"#2ca02c\" stroke-width=\"1.2\"");
        path_series(f, mean, l->latt, x0, ly, TL_LANE_H, vmin, vmax,
                    "fill=\"none\" stroke=\"#1f4e9c\" stroke-width=\"1.4\"");
        /* a strip per device: kernels busy (height: share of the column),
         * red where a launch in the column was flagged */
        for (int g = 0; g < l->has_gpu; g++) {
            double gy = ly + TL_LANE_H + 4 + g * (TL_GPU_H + 4);
            fprintf(f, "<g class=gpustrip data-device=\"%d\" data-launches=\"%lld\" "
                       "data-flagged=\"%lld\"><title>GPU %d: %lld launches, %lld "
                       "bandwidth-bound</title><rect x=\"%.0f\" y=\"%.1f\" width=\"%.0f\" "
                       "height=\"%d\" fill=\"#fafafa\" stroke=\"#e0e0e0\"/><text x=\"%.0f\" "
                       "y=\"%.1f\" text-anchor=\"end\">GPU %d</text>",
                    l->gdev[g], (long long)l->glaunch[g], (long long)l->gflagged[g], l->gdev[g],
                    (long long)l->glaunch[g], (long long)l->gflagged[g], x0, gy, pw, TL_GPU_H,
                    x0 - 4, gy + 13, l->gdev[g]);
            for (int b = 0; b < TL_BINS; b++) {
                double w_ = Td / TL_BINS;
                double busy = fmin(1, l->gbusy[g][b] / w_), fl = fmin(1, l->gflag[g][b] / w_);
                if (busy > 0)
                    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                               "fill=\"%s\"/>",
                            x0 + b * bwid, gy + TL_GPU_H * (1 - fmax(busy, 0.15)), bwid,
                            TL_GPU_H * fmax(busy, 0.15), fl > 0 ? "#d62728" : "#7f7f7f");
            }
            fputs("</g>\n", f);
        }
        if (l->gpu_more)
            fprintf(f, "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\" fill=\"#666\">%d "
                       "more device%s: see the GPU device table</text>\n",
                    x0 + pw, ly + TL_LANE_H + 4 + l->has_gpu * (TL_GPU_H + 4) + 10, l->gpu_more,
                    l->gpu_more == 1 ? "" : "s");
        mwh_rbands_draw(f, l->rb, x0,
                        ly + TL_LANE_H + l->has_gpu * (TL_GPU_H + 4) + (l->gpu_more ? 14 : 0) + 4, pw,
                        TL_RG_ROW);
    }
    /* time axis */
    double Ts = Td / 1e9, step = nice_max(Ts / 8);
    if (step > Ts / 4)
        step /= 2;
    fprintf(f, "<line x1=\"%.0f\" x2=\"%.0f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#888\"/>\n", x0,
            x0 + pw, H - 24, H - 24);
    for (double t = 0; t <= Ts * 1.0001; t += step) {
        double x = x0 + t / Ts * pw;
        fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#888\"/>"
                   "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g s</text>\n",
                x, x, H - 24, H - 20, x, H - 8, round(t * 1e6) / 1e6);
    }
    fprintf(f, "<line id=cursor y1=\"0\" y2=\"%.0f\" stroke=\"#333\" stroke-width=\"0.8\" "
               "visibility=\"hidden\"/>\n</svg></div>\n",
            H - 24);
    /* the readout's data: rounded per-column values, -1 unmeasured */
    fprintf(f, "<script>window.MW_TL={w:%.0f,x0:%.0f,pw:%.0f,bins:%d,T:%.6f,lanes:[", W, x0, pw,
            TL_BINS, Ts);
    for (k = 0; k < nl; k++) {
        lane *l = &L[k];
        fprintf(f, "%s{y0:%.1f,y1:%.1f,name:", k ? "," : "", ys[k], ye[k]);
        mwv_json_str(f, l->name);
        fputs(",lat:[", f);
        for (int b = 0; b < TL_BINS; b++)
            fprintf(f, "%s%.1f", b ? "," : "", l->latt[b] > 0 ? l->latw[b] / l->latt[b] : -1);
        fputs("],thr:[", f);
        for (int b = 0; b < TL_BINS; b++)
            fprintf(f, "%s%.1f", b ? "," : "", l->cov[b] > 0 ? l->thr[b] : -1);
        fputs("],fl:[", f);
        for (int b = 0; b < TL_BINS; b++)
            fprintf(f, "%s%.2f", b ? "," : "", l->cov[b] > 0 ? l->fl[b] / l->cov[b] : -1);
        fputs("]", f);
        if (l->has_bw) {
            fputs(",bw:[", f);
            for (int b = 0; b < TL_BINS; b++)
                fprintf(f, "%s%.2f", b ? "," : "", l->bwt[b] > 0 ? l->bytes[b] / l->bwt[b] : -1);
            fputs("]", f);
        }
        fputs("}", f);
    }
    fputs("]};</script>\n", f);
    for (k = 0; k < nl; k++) {
        mwh_rbands_note(f, L[k].rb, L[k].name);
        mwh_rbands_free(L[k].rb);
    }
    free(L);
}
