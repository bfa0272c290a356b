/*
 * gpu/gpu_struct.c: the arithmetic of the GPU structure probes (gpu/probes_struct.cu
 * measures, this reads the curves): ways and sets from conflict scans and
 * from minimal eviction sets (the group-testing reduction itself runs here,
 * calling the probe's test), the first step of a latency curve, eviction
 * bounds. Pure C, no CUDA; unit tested on synthetic chase results and
 * simulated caches (tests/gpu/test_gpu_struct.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
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

static int ev_evicts(int misses, int reps)
{
    return 2 * misses > reps;
}

int mw_gpu_evset_reduce(uint32_t *set, size_t *n, uint32_t *scratch, int reps,
                        mw_gpu_evtest_fn test, void *user, int *tests)
{
    size_t cur = *n, g = 32;
    int m = test(user, set, cur);
    (*tests)++;
    if (m < 0)
        return -1;
    if (!ev_evicts(m, reps))
        return 1;
    for (;;) {
        if (g > cur)
            g = cur;
        size_t n0 = cur;
        int dropped = 0;
        /* chunks from the last to the first: dropping one leaves the
         * positions of those before it as they were */
        for (size_t c = g; c-- > 0;) {
            size_t lo = c * n0 / g, hi = (c + 1) * n0 / g;
            if (hi > cur)
                hi = cur;
            if (lo >= hi || cur - (hi - lo) == 0)
                continue;
            memcpy(scratch, set, lo * sizeof *set);
            memcpy(scratch + lo, set + hi, (cur - hi) * sizeof *set);
            m = test(user, scratch, cur - (hi - lo));
            (*tests)++;
            if (m < 0)
                return -1;
            if (ev_evicts(m, reps)) {
                memmove(set + lo, set + hi, (cur - hi) * sizeof *set);
                cur -= hi - lo;
                dropped = 1;
            }
            if (*tests > 5000)
                return 2; /* no convergence: the tests disagree with themselves */
        }
        *n = cur;
        if (getenv("MEMWATCH_GPU_EV_TRACE"))
            fprintf(stderr, "memwatch-gpu: eviction set: %zu -> %zu lines in %zu chunks, %d tests\n",
                    n0, cur, g, *tests);
        if (dropped) {
            /* what is left must still evict: a false "evicts" would have
             * dropped a line the set needs */
            m = test(user, set, cur);
            (*tests)++;
            if (m < 0)
                return -1;
            if (!ev_evicts(m, reps))
                return 2;
            continue;
        }
        if (g == cur)
            return 0;
        g = 2 * g < cur ? 2 * g : cur;
    }
}

/* Does base (m - 1 lines) plus cand[lo..hi) evict? -1 on a failed test. */
static int ev_with(const uint32_t *base, size_t m1, const uint32_t *cand, size_t lo, size_t hi,
                   uint32_t *scratch, int reps, mw_gpu_evtest_fn test, void *user, int *tests)
{
    memcpy(scratch, base, m1 * sizeof *base);
    memcpy(scratch + m1, cand + lo, (hi - lo) * sizeof *cand);
    int r = test(user, scratch, m1 + hi - lo);
    (*tests)++;
    return r < 0 ? -1 : ev_evicts(r, reps);
}

int mw_gpu_evset_mates(const uint32_t *ev, size_t m, const uint32_t *pool, size_t pn,
                       uint32_t *mates, int want, uint32_t *scratch, int reps,
                       mw_gpu_evtest_fn test, void *user, int *tests)
{
    if (m < 1 || want < 1)
        return 0;
    /* the candidates: the pool without the eviction set */
    size_t cn = 0;
    for (size_t i = 0; i < pn; i++) {
        int in = 0;
        for (size_t j = 0; j < m && !in; j++)
            in = pool[i] == ev[j];
        if (!in)
            scratch[cn++] = pool[i];
    }
    /* a chunk of the pool holds about chunk x m / pn mates: about half of one */
    size_t chunk = cn / (2 * m) ? cn / (2 * m) : 1;
    uint32_t *set = malloc((m + chunk) * sizeof *set);
    if (!set)
        return -1;
    int found = 0, e = 0;
    for (size_t lo = 0; lo < cn && found < want; lo += chunk) {
        size_t hi = lo + chunk < cn ? lo + chunk : cn;
        if ((e = ev_with(ev + 1, m - 1, scratch, lo, hi, set, reps, test, user, tests)) <= 0) {
            if (e < 0)
                break;
            continue;
        }
        size_t a = lo, b = hi;
        while (b - a > 1) {
            size_t mid = a + (b - a) / 2;
            if ((e = ev_with(ev + 1, m - 1, scratch, a, mid, set, reps, test, user, tests)) < 0)
                break;
            if (e)
                b = mid;
            else
                a = mid;
        }
        /* the one left must evict with the base by itself */
        if (e < 0 || (e = ev_with(ev + 1, m - 1, scratch, a, a + 1, set, reps, test, user,
                                  tests)) < 0)
            break;
        if (e)
            mates[found++] = scratch[a];
    }
    free(set);
    return e < 0 ? -1 : found;
}

/* The curve's y at x (the nearest point within half a line), -1 if none. */
static double curve_at(const mw_gpu_curve *c, double x)
{
    for (unsigned i = 0; c && i < c->n; i++)
        if (fabs(c->p[i].x - x) < 0.5)
            return c->p[i].y;
    return -1;
}

int mw_gpu_evset_geometry(const int *sizes, int k, size_t capacity, size_t line,
                          const mw_gpu_curve *mates, int *ways, int *sets, char *why,
                          size_t whyn)
{
    int found = 0, lo = 0, hi = 0;
    char list[96] = "";
    *ways = *sets = 0;
    for (int i = 0; i < k; i++) {
        size_t l = strlen(list);
        snprintf(list + l, sizeof list - l, "%s%d", i ? ", " : "", sizes[i]);
        if (sizes[i] <= 0)
            continue;
        lo = found ? (sizes[i] < lo ? sizes[i] : lo) : sizes[i];
        hi = found ? (sizes[i] > hi ? sizes[i] : hi) : sizes[i];
        found++;
    }
    if (found < 2) {
        snprintf(why, whyn,
                 "minimal eviction sets found for %d of %d target lines (%s; 0: the pool did not "
                 "evict the target, or the tests disagreed with themselves)",
                 found, k, list);
        return 1;
    }
    if (lo != hi) {
        snprintf(why, whyn,
                 "minimal eviction sets of %s lines for %d targets: no single size, so no way "
                 "count (a replacement policy that is not least-recently-used, or noise)",
                 list, k);
        return 1;
    }
    *ways = lo;
    char pol[160] = "";
    double before = curve_at(mates, lo - 1), at = curve_at(mates, lo);
    if (before >= 0 && at >= 0) {
        if (before <= 0.1 && at >= 0.9)
            snprintf(pol, sizeof pol,
                     "; the target stays with %d set-mates traversed (miss share %.2f) and goes "
                     "with %d (%.2f): least-recently-used",
                     lo - 1, before, lo, at);
        else
            snprintf(pol, sizeof pol,
                     "; miss share %.2f with %d set-mates, %.2f with %d: not a sharp "
                     "least-recently-used step",
                     before, lo - 1, at, lo);
    }
    if (!capacity || !line) {
        snprintf(why, whyn, "minimal eviction sets of %s lines: %d ways; sets unknown (no size "
                 "measured)%s", list, lo, pol);
        return 0;
    }
    double s = (double)capacity / ((double)lo * (double)line);
    *sets = (int)(s + 0.5);
    snprintf(why, whyn,
             "minimal eviction sets of %s lines for %d targets: %d ways; %.0f KiB / (%d x %zu B) "
             "= %d sets%s%s",
             list, k, lo, (double)capacity / 1024.0, lo, line, *sets,
             (*sets & (*sets - 1)) ? " (not a power of two)" : "", pol);
    return 0;
}
