/*
 * gpu/gpu_struct.c: the arithmetic of the GPU structure probes (gpu/probes_struct.cu
 * measures, this reads the curves): ways and sets from conflict scans, the
 * first step of a latency curve, eviction bounds. Pure C, no CUDA; unit
 * tested on synthetic chase results (tests/gpu/test_gpu_struct.c).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "memwatch/gpu.h"

int mw_gpu_conflict_analyse(const mw_gpu_curve *c, size_t line, int scan_max, size_t capacity,
                            int *ways, int *sets, char *why, size_t whyn)
{
    *ways = *sets = 0;
    if (!c->n || !line) {
        snprintf(why, whyn, "no conflict scan");
        return 1;
    }
    double lo = c->p[0].x, hi = c->p[c->n - 1].x;
    unsigned first = c->n;
    for (unsigned i = 0; i < c->n; i++)
        if (c->p[i].y > 0) {
            first = i;
            break;
        }
    if (first == c->n) {
        snprintf(why, whyn,
                 "no conflict misses: up to %d lines %g..%g KiB apart all hit, so no power-of-two "
                 "stride maps them to one set: the set index is hashed (or the cache has more "
                 "than %d ways)",
                 scan_max, lo, hi, scan_max);
        return 1;
    }
    /* the run of equal counts (within one line) at the largest strides */
    unsigned last = c->n - 1, k = last;
    double yl = c->p[last].y;
    if (yl <= 0) {
        snprintf(why, whyn,
                 "misses from %g lines at %g KiB apart but none at %g KiB: not a modulo-indexed "
                 "set-associative cache",
                 c->p[first].y, c->p[first].x, hi);
        return 1;
    }
    double ymin = yl;
    while (k > 0 && c->p[k - 1].y > 0 && fabs(c->p[k - 1].y - yl) <= 1) {
        k--;
        ymin = fmin(ymin, c->p[k].y);
    }
    if (k == last) {
        snprintf(why, whyn,
                 "misses begin at %g lines %g KiB apart but the count does not level off at the "
                 "largest strides: not a modulo-indexed set-associative cache",
                 yl, hi);
        return 1;
    }
    int a = (int)ymin - 1;
    double way_bytes = c->p[k].x * 1024;
    long s = (long)(way_bytes / (double)line);
    if (a < 1 || s < 1 || (s & (s - 1)) != 0) {
        snprintf(why, whyn, "misses level off at %g lines from %g KiB apart, which no power-of-two "
                 "set count explains", ymin, c->p[k].x);
        return 1;
    }
    double implied = (double)a * (double)s * (double)line;
    if (capacity && implied > 2.0 * (double)capacity) {
        snprintf(why, whyn,
                 "misses from %g lines at strides of %g KiB and more would make %d ways x %ld sets, "
                 "a %.0f MiB cache, not the %.0f MiB measured: not a modulo-indexed set conflict "
                 "(under a large virtual stride the physical lines are not that far apart)",
                 ymin, c->p[k].x, a, s, implied / 1048576.0, (double)capacity / 1048576.0);
        return 1;
    }
    *ways = a;
    *sets = (int)s;
    snprintf(why, whyn,
             "%d lines hit and %d miss at every stride from %g KiB (one way) to %g KiB: %d ways "
             "x %ld sets of %zu B",
             a, a + 1, c->p[k].x, hi, a, s, line);
    return 0;
}

double mw_gpu_curve_step(const mw_gpu_curve *c, double rise, double *height)
{
    if (height)
        *height = 0;
    if (c->n < 2)
        return 0;
    double runmin = c->p[0].y;
    for (unsigned i = 1; i < c->n; i++) {
        double lim = runmin * (1 + rise);
        if (c->p[i].y > lim && (i + 1 == c->n || c->p[i + 1].y > lim)) {
            if (height) {
                double top = c->p[i].y;
                if (i + 1 < c->n)
                    top = fmax(top, c->p[i + 1].y);
                *height = top - runmin;
            }
            return c->p[i - 1].x;
        }
        runmin = fmin(runmin, c->p[i].y);
    }
    return 0;
}

void mw_gpu_evict_bounds(const mw_gpu_curve *c, double rise, double *lo, double *hi)
{
    *lo = *hi = 0;
    if (c->n < 2)
        return;
    double ref = c->p[0].y;
    for (unsigned i = 1; i < c->n; i++) {
        if (c->p[i].y > ref * (1 + rise)) {
            *hi = c->p[i].x;
            *lo = c->p[i - 1].x;
            return;
        }
    }
}
