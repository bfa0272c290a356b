/*
 * calibrate/threshold.c: the saturation threshold of a latency method from its
 * latency-versus-bandwidth curve (rule and its justification: docs/saturation.md).
 *
 *   peak_bw   = the highest bandwidth of the grid;
 *   idle_ns   = the median reading at the lowest-bandwidth point;
 *   knee_ns   = the latency at knee_frac (0.8) of the peak, interpolated
 *               linearly between the two grid points (ordered by bandwidth,
 *               point medians) on either side of it: the latency the method
 *               reads once the memory system delivers most of what it can, and
 *               below what it reads at the saturated end (>= 0.9 of the peak);
 *   threshold = max(knee_ns, idle_ns x (1 + min_rise)): the guard keeps a flat
 *               curve (memory never saturated by this machine's cores) from
 *               putting the threshold inside the idle noise.
 *   saturated = the median at the peak point is at least idle x (1 + min_rise).
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

MW_API int mw_threshold_compute(const mw_lat_point *pts, size_t n, const mw_verdict_rules *rules,
                                mw_threshold *out)
{
    if (!out || (n && !pts))
        return -EINVAL;
    mw_verdict_rules def;
    if (!rules) {
        mw_verdict_rules_default(&def);
        rules = &def;
    }
    memset(out, 0, sizeof *out);
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
    if (out->knee_ns >= guard) {
        out->threshold_ns = out->knee_ns;
        snprintf(out->rule, sizeof out->rule,
                 "latency at %.0f %% of peak bandwidth (%.1f ns, interpolated)", 100 * rules->knee_frac,
                 out->knee_ns);
    } else {
        out->threshold_ns = guard;
        snprintf(out->rule, sizeof out->rule,
                 "idle latency x %.2f (the latency at %.0f %% of peak, %.1f ns, is within "
                 "the idle noise)",
                 1 + rules->min_rise, 100 * rules->knee_frac, out->knee_ns);
    }
    return 0;
}
