/*
 * calibrate/verdict.c: the verdicts of validation, as pure functions on
 * recorded readings (include/memwatch/validate.h). docs/profile-format.md
 * states the rules in words; the unit tests (tests/validate/) replay the
 * published cases of Helm & Taura on readings built from known volumes.
 *
 * May call: libc, mw_threshold_compute. Threading: no state, thread-safe.
 * Allocates small scratch arrays (never on a hook or signal path).
 *
 * Bandwidth (ratio = counted / true bytes):
 *   prefetchers switched both ways, off within tolerance of 1 and on at least
 *   pf_miss_min lower  -> misses_prefetch (share missed = 1 - on/off);
 *   CV of all ratios > bw_noisy_cv                 -> noisy;
 *   |median - 1| <= max(bw_tol, 2 sd)               -> accurate (within its spread);
 *   CV <= bw_stable_cv                              -> biased, factor = median;
 *   otherwise                                       -> noisy.
 * Latency (threshold from threshold.c; the rates are measured out of sample:
 * readings of even index against the threshold placed by the odd ones and the
 * other way round):
 *   median per-point CV > lat_noisy_cv, false-positive rate > lat_max_rate, or
 *   (memory saturated and) false-negative rate > lat_max_rate -> noisy; else
 *   accurate. Where the sweep never saturated memory the false negatives are
 *   reported but cannot be judged, and the reason says so.
 */
#include <memwatch/validate.h>

#include "validate_int.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int val_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

MW_API double mw_val_median_inplace(double *v, size_t n)
{
    if (!n)
        return NAN;
    qsort(v, n, sizeof *v, val_cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

double mw_val_median(const double *v, size_t n)
{
    if (!n)
        return NAN;
    double *c = malloc(n * sizeof *c);
    if (!c)
        return NAN;
    memcpy(c, v, n * sizeof *c);
    double m = mw_val_median_inplace(c, n);
    free(c);
    return m;
}

void mw_val_mean_sd(const double *v, size_t n, double *mean, double *sd)
{
    double s = 0, q = 0;
    for (size_t i = 0; i < n; i++)
        s += v[i];
    double m = n ? s / (double)n : 0;
    for (size_t i = 0; i < n; i++)
        q += (v[i] - m) * (v[i] - m);
    *mean = m;
    *sd = n > 1 ? sqrt(q / (double)(n - 1)) : 0;
}

double mw_val_rel_spread(const double *v, size_t n)
{
    if (!n)
        return NAN;
    double lo = v[0], hi = v[0];
    for (size_t i = 1; i < n; i++) {
        lo = fmin(lo, v[i]);
        hi = fmax(hi, v[i]);
    }
    double med = mw_val_median(v, n);
    return med > 0 ? (hi - lo) / med : NAN;
}

int mw_val_point_disturbed(const double *ns, size_t n, double ref_spread)
{
    double r = mw_val_rel_spread(ns, n);
    double ref = isfinite(ref_spread) && ref_spread > MW_VAL_SPREAD_FLOOR ? ref_spread
                                                                          : MW_VAL_SPREAD_FLOOR;
    return isfinite(r) && r > MW_VAL_DISTURBED_FACTOR * ref;
}

MW_API const char *mw_verdict_name(mw_verdict v)
{
    switch (v) {
    case MW_VERDICT_ACCURATE: return "accurate";
    case MW_VERDICT_BIASED: return "biased";
    case MW_VERDICT_MISSES_PREFETCH: return "misses_prefetch";
    case MW_VERDICT_NOISY: return "noisy";
    case MW_VERDICT_UNAVAILABLE: break;
    }
    return "unavailable";
}

MW_API void mw_verdict_rules_default(mw_verdict_rules *r)
{
    if (!r)
        return;
    r->bw_tol = 0.05;
    r->bw_stable_cv = 0.05;
    r->bw_noisy_cv = 0.15;
    r->pf_miss_min = 0.10;
    r->lat_noisy_cv = 0.10;
    r->lat_max_rate = 0.05;
    r->low_frac = 0.5;
    r->high_frac = 0.9;
    r->idle_frac = 0.25;
    r->knee_frac = 0.8;
    r->min_rise = 0.25;
}

int mw_val_verdict_begin(const void *items, size_t n, void *out, size_t out_size,
                         const mw_verdict_rules **rules, mw_verdict_rules *def)
{
    if (!out || (n && !items))
        return -EINVAL;
    if (!*rules) {
        mw_verdict_rules_default(def);
        *rules = def;
    }
    memset(out, 0, out_size);
    return 0;
}

/* Median, mean, sd of the ratios of readings whose prefetch state is `pf`
 * (any state when pf == 2). Returns the count. */
static size_t bw_group(const mw_bw_reading *r, size_t n, int pf, double *scratch, double *med,
                       double *sd, double *lo, double *hi)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (pf == 2 || r[i].prefetch == pf)
            scratch[k++] = r[i].counted_bytes / r[i].true_bytes;
    double mean;
    mw_val_mean_sd(scratch, k, &mean, sd);
    *med = mw_val_median_inplace(scratch, k);
    if (lo)
        *lo = k ? scratch[0] : NAN;
    if (hi)
        *hi = k ? scratch[k - 1] : NAN;
    return k;
}

MW_API int mw_verdict_bw(const mw_bw_reading *r, size_t n, const mw_verdict_rules *rules,
                         mw_bw_verdict *out)
{
    mw_verdict_rules def;
    if (mw_val_verdict_begin(r, n, out, sizeof *out, &rules, &def))
        return -EINVAL;
    out->factor = 1.0;
    out->ratio_on = out->ratio_off = NAN;
    out->n = (unsigned)n;
    if (n == 0) {
        out->verdict = MW_VERDICT_UNAVAILABLE;
        snprintf(out->reason, sizeof out->reason, "no readings");
        return 0;
    }
    for (size_t i = 0; i < n; i++)
        if (!(r[i].true_bytes > 0) || !isfinite(r[i].counted_bytes) || r[i].counted_bytes < 0)
            return -EINVAL;
    double *s = malloc(n * sizeof *s);
    if (!s)
        return -ENOMEM;
    double med, sd, lo, hi, med_on, sd_on, med_off, sd_off;
    bw_group(r, n, 2, s, &med, &sd, &lo, &hi);
    double mean_all, sd_all;
    for (size_t i = 0; i < n; i++)
        s[i] = r[i].counted_bytes / r[i].true_bytes;
    mw_val_mean_sd(s, n, &mean_all, &sd_all);
    size_t n_on = bw_group(r, n, 1, s, &med_on, &sd_on, NULL, NULL);
    size_t n_off = bw_group(r, n, 0, s, &med_off, &sd_off, NULL, NULL);
    free(s);
    out->ratio = med;
    out->lo = lo;
    out->hi = hi;
    out->cv = mean_all > 0 ? sd_all / mean_all : INFINITY;
    if (n_on)
        out->ratio_on = med_on;
    if (n_off)
        out->ratio_off = med_off;

    if (n_on && n_off) {
        double tol_off = fmax(rules->bw_tol, 2 * sd_off);
        if (fabs(med_off - 1) <= tol_off && med_on < med_off * (1 - rules->pf_miss_min)) {
            out->verdict = MW_VERDICT_MISSES_PREFETCH;
            out->missed = 1 - med_on / med_off;
            snprintf(out->reason, sizeof out->reason,
                     "counts %.2fx the true bytes with prefetchers off but %.2fx with them on: "
                     "misses %.0f %% of the traffic (prefetches)",
                     med_off, med_on, 100 * out->missed);
            return 0;
        }
    }
    const char *pfnote = n_on && n_off ? "" : " (prefetchers not switched)";
    if (out->cv > rules->bw_noisy_cv) {
        out->verdict = MW_VERDICT_NOISY;
        snprintf(out->reason, sizeof out->reason,
                 "ratio to the true bytes varies too much: CV %.1f %%, %.2f..%.2f over %zu runs%s",
                 100 * out->cv, lo, hi, n, pfnote);
    } else if (fabs(med - 1) <= fmax(rules->bw_tol, 2 * sd_all)) {
        out->verdict = MW_VERDICT_ACCURATE;
        snprintf(out->reason, sizeof out->reason,
                 "counts %.3fx the true bytes (%.2f..%.2f, CV %.1f %%, %zu runs)%s", med, lo, hi,
                 100 * out->cv, n, pfnote);
    } else if (out->cv <= rules->bw_stable_cv) {
        out->verdict = MW_VERDICT_BIASED;
        out->factor = med;
        snprintf(out->reason, sizeof out->reason,
                 "counts a stable %.3fx the true bytes (CV %.1f %%, %zu runs): divided by %.3f%s",
                 med, 100 * out->cv, n, med, pfnote);
    } else {
        out->verdict = MW_VERDICT_NOISY;
        snprintf(out->reason, sizeof out->reason,
                 "counts %.2fx the true bytes, not steady enough to correct (CV %.1f %%)%s", med,
                 100 * out->cv, pfnote);
    }
    return 0;
}

/* Thresholds of the even-index (fold 0) and odd-index (fold 1) readings; a
 * fold without enough readings keeps the value already in th[]. */
static int val_fold_thresholds(const mw_lat_point *pts, size_t n, const mw_verdict_rules *rules,
                               double th[2])
{
    mw_lat_point *fp = calloc(n ? n : 1, sizeof *fp);
    double *buf = NULL;
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += pts[i].n;
    buf = malloc((total ? total : 1) * sizeof *buf);
    if (!fp || !buf) {
        free(fp);
        free(buf);
        return -ENOMEM;
    }
    for (int fold = 0; fold < 2; fold++) {
        size_t used = 0, have = 0;
        for (size_t i = 0; i < n; i++) {
            fp[i] = pts[i];
            fp[i].ns = buf + used;
            fp[i].n = 0;
            for (unsigned k = (unsigned)fold; k < pts[i].n; k += 2)
                buf[used + fp[i].n++] = pts[i].ns[k];
            used += fp[i].n;
            have += fp[i].n > 0;
        }
        mw_threshold t;
        if (have >= 2 && mw_threshold_compute(fp, n, rules, &t) == 0)
            th[fold] = t.threshold_ns;
    }
    free(fp);
    free(buf);
    return 0;
}

MW_API int mw_verdict_lat(const mw_lat_point *pts, size_t n, const mw_verdict_rules *rules,
                          mw_lat_verdict *out)
{
    mw_verdict_rules def;
    if (mw_val_verdict_begin(pts, n, out, sizeof *out, &rules, &def))
        return -EINVAL;
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        if (pts[i].n && !pts[i].ns)
            return -EINVAL;
        total += pts[i].n;
    }
    if (total == 0) {
        out->verdict = MW_VERDICT_UNAVAILABLE;
        snprintf(out->reason, sizeof out->reason, "no readings");
        return 0;
    }
    int rc = mw_threshold_compute(pts, n, rules, &out->th);
    if (rc < 0)
        return rc;
    const mw_threshold *th = &out->th;
    /* Two folds (readings of even / odd index): each fold's readings are judged
     * against the threshold derived from the other fold, so the rates are not
     * measured on the data that placed the threshold. */
    double fold_th[2] = {th->threshold_ns, th->threshold_ns};
    if ((rc = val_fold_thresholds(pts, n, rules, fold_th)) < 0)
        return rc;
    double *cvs = malloc(n * sizeof *cvs), *ratios = malloc(n * sizeof *ratios);
    if (!cvs || !ratios) {
        free(cvs);
        free(ratios);
        return -ENOMEM;
    }
    size_t ncv = 0, nratio = 0;
    out->idle_min = out->sat_min = INFINITY;
    out->idle_max = out->sat_max = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        const mw_lat_point *p = &pts[i];
        if (p->n >= 2) {
            double m, sd;
            mw_val_mean_sd(p->ns, p->n, &m, &sd);
            double cv = m > 0 ? sd / m : 0;
            cvs[ncv++] = cv;
            if (cv > out->cv_max)
                out->cv_max = cv;
        }
        if (p->n && p->direct_ns > 0)
            ratios[nratio++] = mw_val_median(p->ns, p->n) / p->direct_ns;
        int low = p->bw < rules->low_frac * th->peak_bw;
        int high = p->bw >= rules->high_frac * th->peak_bw;
        int idle = p->bw <= rules->idle_frac * th->peak_bw;
        for (unsigned k = 0; k < p->n; k++) {
            double x = p->ns[k], t = fold_th[(k + 1) % 2]; /* the other fold's */
            if (low) {
                out->n_low++;
                out->fp += x > t;
            }
            if (high) {
                out->n_high++;
                out->fn += !(x > t);
            }
            if (idle) {
                out->n_idle++;
                out->idle_min = fmin(out->idle_min, x);
                out->idle_max = fmax(out->idle_max, x);
            }
            if (high) {
                out->n_sat++;
                out->sat_min = fmin(out->sat_min, x);
                out->sat_max = fmax(out->sat_max, x);
            }
        }
    }
    out->cv = ncv ? mw_val_median_inplace(cvs, ncv) : 0;
    out->direct_ratio = nratio ? mw_val_median_inplace(ratios, nratio) : 0;
    free(cvs);
    free(ratios);
    out->false_pos = out->n_low ? (double)out->fp / out->n_low : 0;
    out->false_neg = out->n_high ? (double)out->fn / out->n_high : 0;
    out->overlap = out->n_idle && out->n_sat ? out->idle_max >= out->sat_min : 0;
    if (!out->n_idle) {
        out->idle_min = out->idle_max = 0;
    }
    if (!out->n_sat) {
        out->sat_min = out->sat_max = 0;
    }

    if (out->cv > rules->lat_noisy_cv) {
        out->verdict = MW_VERDICT_NOISY;
        snprintf(out->reason, sizeof out->reason,
                 "readings scatter: median CV %.1f %% per grid point (max %.1f %%)", 100 * out->cv,
                 100 * out->cv_max);
    } else if (out->false_pos > rules->lat_max_rate) {
        out->verdict = MW_VERDICT_NOISY;
        snprintf(out->reason, sizeof out->reason,
                 "false positives: %.1f %% of readings below %.0f %% of peak bandwidth exceed "
                 "the %.1f ns threshold",
                 100 * out->false_pos, 100 * rules->low_frac, th->threshold_ns);
    } else if (th->saturated && out->false_neg > rules->lat_max_rate) {
        out->verdict = MW_VERDICT_NOISY;
        snprintf(out->reason, sizeof out->reason,
                 "false negatives: %.1f %% of readings at >= %.0f %% of peak bandwidth stay "
                 "below the %.1f ns threshold",
                 100 * out->false_neg, 100 * rules->high_frac, th->threshold_ns);
    } else if (th->saturated) {
        out->verdict = MW_VERDICT_ACCURATE;
        snprintf(out->reason, sizeof out->reason,
                 "steady (CV %.1f %%), rises x%.2f from idle to peak bandwidth; false positives "
                 "%.1f %%, false negatives %.1f %%",
                 100 * out->cv, th->rise, 100 * out->false_pos, 100 * out->false_neg);
    } else {
        out->verdict = MW_VERDICT_ACCURATE;
        snprintf(out->reason, sizeof out->reason,
                 "steady (CV %.1f %%), no false positives (%.1f %%); the sweep did not saturate "
                 "memory (x%.2f at its peak), so false negatives (%.0f %%) cannot be judged here",
                 100 * out->cv, 100 * out->false_pos, th->rise, 100 * out->false_neg);
    }
    return 0;
}
