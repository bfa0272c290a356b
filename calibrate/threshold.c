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

/* ------------------------------------------------------------ load shapes */

static int th_dbl_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The q-quantile (0..1) of sorted x by nearest rank. */
static double th_quantile(const double *x, size_t n, double q)
{
    size_t k = (size_t)(q * (double)n);
    return x[k < n ? k : n - 1];
}

/* The wrong side's share of a shape's sorted readings at t. */
static double th_shape_err(const double *x, size_t n, int cls, double t)
{
    size_t le = 0, hi = n; /* le: readings <= t (first index above t) */
    while (le < hi) {
        size_t mid = (le + hi) / 2;
        if (x[mid] <= t)
            le = mid + 1;
        else
            hi = mid;
    }
    return cls == MW_SHAPE_SATURATING ? (double)le / (double)n : (double)(n - le) / (double)n;
}

/* The class of each shape (docs/saturation.md): saturating ones as given,
 * light ones only where their bandwidth is at most low_frac of their mode's
 * saturating load's (compute and idle always). */
static void th_shape_classes(const mw_shape_obs *s, size_t n, double low_frac,
                             mw_shapes_threshold *out)
{
    double top_any = 0;
    for (size_t i = 0; i < n; i++)
        if (s[i].role == MW_SHAPE_SATURATING && s[i].bw > top_any)
            top_any = s[i].bw;
    for (size_t i = 0; i < n; i++) {
        mw_shape_stat *st = &out->stat[i];
        st->share = NAN;
        if (!s[i].n)
            continue;
        if (s[i].role == MW_SHAPE_SATURATING) {
            st->cls = MW_SHAPE_SATURATING;
            continue;
        }
        if (!strcmp(s[i].mode, "idle") || !strcmp(s[i].mode, "compute")) {
            st->cls = MW_SHAPE_LIGHT;
            continue;
        }
        double top = 0;
        for (size_t j = 0; j < n; j++)
            if (s[j].role == MW_SHAPE_SATURATING && !strcmp(s[j].mode, s[i].mode) && s[j].bw > top)
                top = s[j].bw;
        if (!(top > 0))
            top = top_any;
        st->share = top > 0 ? s[i].bw / top : NAN;
        if (st->share <= low_frac)
            st->cls = MW_SHAPE_LIGHT;
    }
}

/* Where no t keeps every shape within the rate: the t (a reading or a
 * midpoint between two, inside [lo, hi]) with the smallest worst rate, in the
 * middle of the range of equally good ones. */
static double th_minimax(double *const *x, const size_t *nx, const mw_shapes_threshold *out,
                         size_t n, double lo, double hi, double *worst_out)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        m += out->stat[i].cls ? nx[i] : 0;
    double *c = malloc((2 * m + 2) * sizeof *c);
    if (!c) {
        *worst_out = NAN;
        return (lo + hi) / 2;
    }
    size_t k = 0;
    c[k++] = lo;
    c[k++] = hi;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; out->stat[i].cls && j < nx[i]; j++)
            if (x[i][j] >= lo && x[i][j] <= hi)
                c[k++] = x[i][j];
    qsort(c, k, sizeof *c, th_dbl_cmp);
    size_t k2 = k;
    for (size_t j = 0; j + 1 < k2; j++)
        if (c[j + 1] > c[j])
            c[k++] = (c[j] + c[j + 1]) / 2;
    qsort(c, k, sizeof *c, th_dbl_cmp);
    double best = INFINITY, b_lo = lo, b_hi = lo;
    int in_best = 0;
    for (size_t j = 0; j < k; j++) {
        double w = 0;
        for (size_t i = 0; i < n; i++)
            if (out->stat[i].cls)
                w = fmax(w, th_shape_err(x[i], nx[i], out->stat[i].cls, c[j]));
        if (w < best - 1e-12) {
            best = w;
            b_lo = b_hi = c[j];
            in_best = 1;
        } else if (w <= best + 1e-12 && in_best) {
            b_hi = c[j];
        } else {
            in_best = 0;
        }
    }
    free(c);
    *worst_out = best;
    return (b_lo + b_hi) / 2;
}

MW_API int mw_threshold_shapes(const mw_shape_obs *s, size_t n, const mw_verdict_rules *rules,
                               mw_shapes_threshold *out)
{
    mw_verdict_rules def;
    if (n > MW_SHAPES_MAX || mw_val_verdict_begin(s, n, out, sizeof *out, &rules, &def))
        return -EINVAL;
    for (size_t i = 0; i < n; i++)
        if (s[i].n && (!s[i].ns || !s[i].mode || !isfinite(s[i].bw) || s[i].bw < 0))
            return -EINVAL;
    th_shape_classes(s, n, rules->low_frac, out);
    double *x[MW_SHAPES_MAX] = {0};
    size_t nx[MW_SHAPES_MAX] = {0}, nsat = 0;
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        if (!s[i].n)
            continue;
        if (!(x[i] = malloc(s[i].n * sizeof *x[i]))) {
            rc = -ENOMEM;
            break;
        }
        memcpy(x[i], s[i].ns, s[i].n * sizeof *x[i]);
        nx[i] = s[i].n;
        qsort(x[i], nx[i], sizeof *x[i], th_dbl_cmp);
        out->stat[i].p5 = th_quantile(x[i], nx[i], 0.05);
        out->stat[i].p50 = th_quantile(x[i], nx[i], 0.5);
        out->stat[i].p95 = th_quantile(x[i], nx[i], 0.95);
        if (!strcmp(s[i].mode, "idle") && !(out->idle_ns > 0))
            out->idle_ns = mw_val_median(s[i].ns, s[i].n);
        nsat += out->stat[i].cls == MW_SHAPE_SATURATING ? nx[i] : 0;
    }
    double *pool = rc || !nsat ? NULL : malloc(nsat * sizeof *pool);
    if (!rc && nsat && !pool)
        rc = -ENOMEM;
    if (!rc && (!nsat || !(out->idle_ns > 0)))
        rc = MW_ERR_NODATA;
    if (!rc) {
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            if (out->stat[i].cls == MW_SHAPE_SATURATING)
                for (size_t j = 0; j < nx[i]; j++)
                    pool[k++] = x[i][j];
        out->sat_ns = mw_val_median_inplace(pool, k);
        out->rise = out->sat_ns / out->idle_ns;
        out->saturated = out->rise >= 1 + rules->min_rise;
        if (!out->saturated) {
            out->threshold_ns = out->band_lo = out->band_hi = out->idle_ns * (1 + rules->min_rise);
            snprintf(out->rule, sizeof out->rule,
                     "idle latency x %.2f: the saturating loads read only x %.2f idle, memory "
                     "did not saturate",
                     1 + rules->min_rise, out->rise);
        } else {
            /* l50: the highest light median; s_lo: the lowest latency at
             * which a saturating shape reads (its r-quantile); l_hi: the
             * highest light shape's (1 - r)-quantile */
            double l50 = -INFINITY, l_hi = -INFINITY, s_lo = INFINITY, r = rules->lat_max_rate;
            for (size_t i = 0; i < n; i++) {
                if (!out->stat[i].cls)
                    continue;
                if (out->stat[i].cls == MW_SHAPE_LIGHT) {
                    l50 = fmax(l50, out->stat[i].p50);
                    l_hi = fmax(l_hi, th_quantile(x[i], nx[i], 1 - r));
                } else {
                    s_lo = fmin(s_lo, th_quantile(x[i], nx[i], r));
                }
            }
            if (!isfinite(l50))
                l50 = l_hi = out->idle_ns;
            if (l_hi < s_lo) {
                /* the light loads' highest 95 % below every saturating
                 * load's lowest 5 %: the middle of that gap, where both
                 * kinds keep within the rate by the widest margin (the
                 * medians' midpoint would lie inside the light tails) */
                out->threshold_ns = (l_hi + s_lo) / 2;
                snprintf(out->rule, sizeof out->rule,
                         "half-way between the highest %.0f %% of a light load's readings and "
                         "the lowest %.0f %% of a saturating load's",
                         100 * r, 100 * r);
            } else if (l50 < s_lo) {
                out->threshold_ns = (l50 + s_lo) / 2;
                snprintf(out->rule, sizeof out->rule,
                         "half-way between the highest light load's median and the lowest "
                         "%.0f %% of a saturating load's readings",
                         100 * r);
            } else {
                double w;
                out->threshold_ns = th_minimax(x, nx, out, n, s_lo, fmax(l50, l_hi), &w);
                snprintf(out->rule, sizeof out->rule,
                         "the smallest worst error over the load shapes (%.1f %%): a light "
                         "load's median is above a saturating load's lowest readings",
                         100 * w);
            }
            if (l_hi < s_lo) {
                /* the gap: latencies at which no calibrated load read, which
                 * the host's drift between calibration and recording fills
                 * (docs/saturation.md, "More instances, and drift") */
                out->band_lo = l_hi;
                out->band_hi = s_lo;
            } else {
                out->band_lo = fmin(out->threshold_ns, s_lo);
                out->band_hi = fmax(out->threshold_ns, l_hi);
            }
        }
        double worst = 0;
        for (size_t i = 0; i < n; i++) {
            if (!nx[i])
                continue;
            out->stat[i].flagged =
                1 - th_shape_err(x[i], nx[i], MW_SHAPE_SATURATING, out->threshold_ns);
            if (out->stat[i].cls)
                worst = fmax(worst, th_shape_err(x[i], nx[i], out->stat[i].cls, out->threshold_ns));
        }
        out->worst_rate = worst;
        out->feasible = out->saturated && worst <= rules->lat_max_rate + 1e-12;
    }
    free(pool);
    for (size_t i = 0; i < n; i++)
        free(x[i]);
    return rc;
}
