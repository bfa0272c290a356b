/*
 * calibrate/threshold.c: the saturation threshold of a latency method from its
 * latency-versus-bandwidth curve (rule and its justification: docs/saturation.md).
 *
 *   peak_bw   = the highest bandwidth of the grid;
 *   idle_ns   = the median reading at the lowest-bandwidth point;
 *   sep_ns    = the latency that best separates the readings far from the peak
 *               (bandwidth < low_frac x peak) from those near it (>= high_frac
 *               x peak): the t minimising (share of far readings above t) +
 *               (share of near readings not above t), in the middle of the
 *               range of equally good t (so a clean gap gets its midpoint);
 *   threshold = max(sep_ns, idle_ns x (1 + min_rise)): the guard keeps a flat
 *               curve (memory never saturated by this machine's cores) from
 *               putting the threshold inside the idle noise;
 *   saturated = the median at the peak point is at least idle x (1 + min_rise).
 *   knee_ns   = the latency at knee_frac (0.8) of the peak, interpolated between
 *               the grid points on either side (point medians), is reported
 *               alongside to describe the curve.
 *
 * May call: libc. Threading: pure, thread-safe.
 */
#include <memwatch/validate.h>

#include "validate_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct th_obs {
    double x;
    int near; /* 1: near the peak, 0: far from it */
} th_obs;

static int th_obs_cmp(const void *a, const void *b)
{
    double x = ((const th_obs *)a)->x, y = ((const th_obs *)b)->x;
    return x < y ? -1 : x > y;
}

/* The best separating latency (see the header); NAN when a class is empty. */
static double th_separator(const mw_lat_point *pts, size_t n, double lo_bw, double hi_bw)
{
    size_t m = 0, nf = 0, nn = 0;
    for (size_t i = 0; i < n; i++)
        if (pts[i].bw < lo_bw || pts[i].bw >= hi_bw)
            m += pts[i].n;
    th_obs *o = m ? malloc(m * sizeof *o) : NULL;
    if (!o)
        return NAN;
    m = 0;
    for (size_t i = 0; i < n; i++) {
        int near = pts[i].bw >= hi_bw, far = pts[i].bw < lo_bw;
        if (!near && !far)
            continue;
        for (unsigned k = 0; k < pts[i].n; k++) {
            o[m].x = pts[i].ns[k];
            o[m++].near = near;
            nn += near;
            nf += !near;
        }
    }
    if (!nf || !nn) {
        free(o);
        return NAN;
    }
    qsort(o, m, sizeof *o, th_obs_cmp);
    /* threshold below everything: all far readings above (FP 1), no FN */
    double best = INFINITY, best_lo = 0, best_hi = 0;
    int in_best = 0;                /* the previous candidate was in the best range */
    size_t far_le = 0, near_le = 0; /* readings <= candidate */
    for (size_t i = 0; i <= m; i++) {
        /* candidate between o[i-1] and o[i]: everything up to i-1 is <= t */
        if (i == 0 || i == m || o[i].x > o[i - 1].x) {
            double cost = (double)(nf - far_le) / (double)nf + (double)near_le / (double)nn;
            double lo = i ? o[i - 1].x : o[0].x, hi = i < m ? o[i].x : o[m - 1].x;
            if (cost < best - 1e-12) {
                best = cost;
                best_lo = lo;
                best_hi = hi;
                in_best = 1;
            } else if (cost <= best + 1e-12 && in_best) {
                best_hi = hi; /* extend a contiguous range of equally good thresholds */
            } else {
                in_best = 0;
            }
        }
        if (i < m) {
            far_le += !o[i].near;
            near_le += o[i].near;
        }
    }
    free(o);
    return (best_lo + best_hi) / 2;
}

MW_API int mw_threshold_compute(const mw_lat_point *pts, size_t n, const mw_verdict_rules *rules,
                                mw_threshold *out)
{
    mw_verdict_rules def;
    if (mw_val_verdict_begin(pts, n, out, sizeof *out, &rules, &def))
        return -EINVAL;
    size_t lo = n, hi = n;
    double peak = -1;
    for (size_t i = 0; i < n; i++) {
        if (!pts[i].n)
            continue;
        if (!pts[i].ns || !isfinite(pts[i].bw) || pts[i].bw < 0)
            return -EINVAL;
        if (lo == n || pts[i].bw < pts[lo].bw)
            lo = i;
        if (hi == n || pts[i].bw > pts[hi].bw)
            hi = i;
        if (pts[i].bw > peak)
            peak = pts[i].bw;
    }
    if (lo == n)
        return MW_ERR_NODATA;
    out->peak_bw = peak;
    out->idle_ns = mw_val_median(pts[lo].ns, pts[lo].n);
    out->peak_ns = mw_val_median(pts[hi].ns, pts[hi].n);
    /* the knee: medians ordered by bandwidth, interpolated at knee_frac x peak */
    size_t k = 0;
    double *bw = malloc(n * sizeof *bw), *med = malloc(n * sizeof *med);
    if (!bw || !med) {
        free(bw);
        free(med);
        return -ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        if (!pts[i].n)
            continue;
        double m = mw_val_median(pts[i].ns, pts[i].n);
        size_t j = k++;
        while (j > 0 && bw[j - 1] > pts[i].bw) { /* insertion by bandwidth */
            bw[j] = bw[j - 1];
            med[j] = med[j - 1];
            j--;
        }
        bw[j] = pts[i].bw;
        med[j] = m;
    }
    double target = rules->knee_frac * peak;
    size_t hi_i = 0;
    while (hi_i < k && bw[hi_i] < target)
        hi_i++;
    if (hi_i == 0 || bw[hi_i] <= bw[hi_i - 1])
        out->knee_ns = med[hi_i < k ? hi_i : k - 1];
    else
        out->knee_ns = med[hi_i - 1] + (med[hi_i] - med[hi_i - 1]) * (target - bw[hi_i - 1]) /
                                           (bw[hi_i] - bw[hi_i - 1]);
    free(bw);
    free(med);
    if (!isfinite(out->idle_ns) || !isfinite(out->knee_ns) || !isfinite(out->peak_ns))
        return -ENOMEM; /* mw_val_median only fails for lack of memory here */
    out->rise = out->idle_ns > 0 ? out->peak_ns / out->idle_ns : 0;
    out->saturated = out->rise >= 1 + rules->min_rise;
    double guard = out->idle_ns * (1 + rules->min_rise);
    out->sep_ns = th_separator(pts, n, rules->low_frac * peak, rules->high_frac * peak);
    if (isfinite(out->sep_ns) && out->sep_ns >= guard) {
        out->threshold_ns = out->sep_ns;
        snprintf(out->rule, sizeof out->rule,
                 "best separation of readings below %.0f %% and at >= %.0f %% of peak bandwidth",
                 100 * rules->low_frac, 100 * rules->high_frac);
    } else {
        out->threshold_ns = guard;
        snprintf(out->rule, sizeof out->rule,
                 "idle latency x %.2f (the readings near the peak are not above the idle noise)",
                 1 + rules->min_rise);
    }
    return 0;
}
