/*
 * gpu/attrib.c: per-launch DRAM bytes from PM-sampling windows (see
 * gpu/attrib.h). Pure arithmetic: no CUPTI, no CUDA, no locks.
 *
 * The bytes of a window W are shared among the launches j that ran in it:
 *     share_j(W) = bytes(W) * r_j * t_j(W) / sum_i r_i * t_i(W)
 * with t_j(W) the time j ran in W and r_j j's byte rate. The rates start from
 * the pro-rata estimate (sum of bytes(W) * t_j(W) / len(W), over the time
 * covered) and are refined by the multiplicative update
 *     r_j = sum_W share_j(W) / covered_j
 * (the maximum-likelihood rates when bytes arrive at a constant rate per
 * launch). A launch alone in a window with idle time takes all of its bytes; a
 * streaming launch beside a compute launch takes almost all. Launches attributed
 * in earlier batches keep their rates.
 */
#include "attrib.h"

#include <stdlib.h>
#include <string.h>

#define ITERATIONS 24
#define RATE_FLOOR 1e-6 /* bytes/ns: a launch with no bytes still splits an otherwise idle window */

int mw_ga_push(mw_ga_dev *d, uint64_t s, uint64_t e, double bytes, uint32_t flags)
{
    if (e <= s)
        return 0;
    if (d->nsmp && s < d->smp[d->nsmp - 1].s + d->smp[d->nsmp - 1].len)
        s = d->smp[d->nsmp - 1].s + d->smp[d->nsmp - 1].len; /* keep windows disjoint */
    if (e <= s)
        return 0;
    if (d->maxsmp && d->nsmp >= d->maxsmp) {
        size_t q = d->nsmp / 4;
        memmove(d->smp, d->smp + q, (d->nsmp - q) * sizeof *d->smp);
        d->nsmp -= q;
        d->lost += q;
    }
    if (d->nsmp == d->capsmp) {
        size_t nc = d->capsmp ? 2 * d->capsmp : 4096;
        mw_ga_sample *n = realloc(d->smp, nc * sizeof *n);
        if (!n)
            return -1;
        d->smp = n;
        d->capsmp = nc;
    }
    uint64_t len = e - s;
    if (len > UINT32_MAX)
        len = UINT32_MAX;
    d->smp[d->nsmp++] = (mw_ga_sample){s, (uint32_t)len, flags, bytes};
    d->last_end = s + len;
    return 0;
}

static uint64_t w_end(const mw_ga_sample *w)
{
    return w->s + w->len;
}

/* First window that ends after t. */
static size_t first_after(const mw_ga_dev *d, uint64_t t)
{
    size_t lo = 0, hi = d->nsmp;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (w_end(&d->smp[mid]) <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static double ovl(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1)
{
    uint64_t s = a0 > b0 ? a0 : b0, e = a1 < b1 ? a1 : b1;
    return e > s ? (double)(e - s) : 0.0;
}

typedef struct job {
    uint64_t s, e;
    size_t lo, hi;   /* windows [lo, hi) overlap it */
    double w, bytes, covered;
    uint32_t flags;
    int fixed;
} job;

void mw_ga_attribute(mw_ga_dev *d, mw_ga_kernel *ks, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        ks[i].bytes = ks[i].covered = ks[i].rate = 0;
        ks[i].flags = 0;
    }
    if (!n || !d->nsmp)
        return;
    size_t wlo = d->nsmp, whi = 0;
    for (size_t i = 0; i < n; i++) {
        size_t lo = first_after(d, ks[i].s);
        size_t hi = lo;
        while (hi < d->nsmp && d->smp[hi].s < ks[i].e)
            hi++;
        if (lo < hi) {
            if (lo < wlo)
                wlo = lo;
            if (hi > whi)
                whi = hi;
        }
    }
    if (wlo >= whi)
        return;
    uint64_t t0 = d->smp[wlo].s, t1 = w_end(&d->smp[whi - 1]);
    size_t nj = n;
    for (size_t i = 0; i < d->ndone; i++)
        nj += d->done[i].e > t0 && d->done[i].s < t1;
    job *J = calloc(nj, sizeof *J);
    double *den = calloc(whi - wlo, sizeof *den);
    if (!J || !den) {
        free(J);
        free(den);
        return;
    }
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        J[m++] = (job){.s = ks[i].s, .e = ks[i].e};
    for (size_t i = 0; i < d->ndone; i++)
        if (d->done[i].e > t0 && d->done[i].s < t1)
            J[m++] = (job){.s = d->done[i].s, .e = d->done[i].e, .w = d->done[i].rate, .fixed = 1};
    for (size_t j = 0; j < m; j++) {
        job *x = &J[j];
        size_t lo = first_after(d, x->s);
        if (lo < wlo)
            lo = wlo;
        size_t hi = lo;
        while (hi < whi && d->smp[hi].s < x->e)
            hi++;
        x->lo = lo;
        x->hi = hi;
        double pro = 0;
        for (size_t p = lo; p < hi; p++) {
            const mw_ga_sample *w = &d->smp[p];
            double o = ovl(x->s, x->e, w->s, w_end(w));
            x->covered += o;
            pro += w->bytes * o / (double)w->len;
            if (o > 0)
                x->flags |= w->flags;
        }
        if (!x->fixed)
            x->w = x->covered > 0 ? pro / x->covered : 0;
    }
    for (int it = 0; it < ITERATIONS; it++) {
        memset(den, 0, (whi - wlo) * sizeof *den);
        for (size_t j = 0; j < m; j++) {
            double w = J[j].w > RATE_FLOOR ? J[j].w : RATE_FLOOR;
            for (size_t p = J[j].lo; p < J[j].hi; p++)
                den[p - wlo] += w * ovl(J[j].s, J[j].e, d->smp[p].s, w_end(&d->smp[p]));
        }
        for (size_t j = 0; j < n; j++) {
            job *x = &J[j];
            double w = x->w > RATE_FLOOR ? x->w : RATE_FLOOR, b = 0;
            for (size_t p = x->lo; p < x->hi; p++) {
                double o = ovl(x->s, x->e, d->smp[p].s, w_end(&d->smp[p]));
                if (o > 0 && den[p - wlo] > 0)
                    b += d->smp[p].bytes * w * o / den[p - wlo];
            }
            x->bytes = b;
        }
        for (size_t j = 0; j < n; j++)
            J[j].w = J[j].covered > 0 ? J[j].bytes / J[j].covered : 0;
    }
    for (size_t i = 0; i < n; i++) {
        ks[i].bytes = J[i].bytes;
        ks[i].covered = J[i].covered;
        ks[i].rate = J[i].w;
        ks[i].flags = J[i].flags;
    }
    free(J);
    free(den);
}

void mw_ga_retire(mw_ga_dev *d, const mw_ga_kernel *ks, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (d->ndone == d->capdone) {
            size_t nc = d->capdone ? 2 * d->capdone : 256;
            mw_ga_kernel *nd = realloc(d->done, nc * sizeof *nd);
            if (!nd)
                return;
            d->done = nd;
            d->capdone = nc;
        }
        /* Insertion by end: launches come nearly in order. */
        size_t k = d->ndone++;
        while (k > 0 && d->done[k - 1].e > ks[i].e) {
            d->done[k] = d->done[k - 1];
            k--;
        }
        d->done[k] = ks[i];
    }
}

void mw_ga_trim(mw_ga_dev *d, uint64_t t_windows, uint64_t t_done)
{
    size_t w = first_after(d, t_windows);
    if (w) {
        memmove(d->smp, d->smp + w, (d->nsmp - w) * sizeof *d->smp);
        d->nsmp -= w;
    }
    size_t k = 0;
    while (k < d->ndone && d->done[k].e < t_done)
        k++;
    if (k) {
        memmove(d->done, d->done + k, (d->ndone - k) * sizeof *d->done);
        d->ndone -= k;
    }
}

void mw_ga_free(mw_ga_dev *d)
{
    free(d->smp);
    free(d->done);
    memset(d, 0, sizeof *d);
}
