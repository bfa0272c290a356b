/*
 * calibrate/bench_struct.c: the CPU's structure from latency curves, in the
 * manner of Fang et al., without MSR access (include/memwatch/bench.h,
 * mw_bench_struct):
 *   - prefetchers: the adjacent-line prefetcher (a line's 128-byte buddy
 *     served with it), stride prefetching (a chain walking flushed memory at a
 *     stride, against random lines) and the prefetch distance (how many lines
 *     ahead of a trained stream a single load is served);
 *   - TLBs: one line per page over N pages against the same lines packed into
 *     few pages, 4 KiB and 2 MiB pages; each step of the difference, with a
 *     plateau after it, is a TLB level (entries, reach; mw_tlb_steps);
 *   - associativity: k lines at a stride that maps them to one set (2 MiB:
 *     one L1 and one L2 set where huge pages keep physical addresses in step),
 *     chased in a random cycle; the k where the latency steps is the ways.
 * Memory is flushed with clflush before the prefetch chains so that every
 * line comes from memory. May call: bench_common.c, counters/tsc.h.
 * Threading: pins the calling thread to one CPU for its duration and
 * restores the previous affinity.
 */
#include "bench_int.h"
#include "tsc.h"

#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

MW_API unsigned mw_struct_stride_grid(size_t min, size_t max, unsigned per_octave, size_t *out,
                                      unsigned cap)
{
    unsigned n = 0;
    if (!min || !per_octave || max < min)
        return 0;
    for (unsigned k = 0; n < cap; k++) {
        double v = (double)min * pow(2.0, (double)k / per_octave);
        size_t b = ((size_t)(v + 0.5) + MW_LINE / 2) / MW_LINE * MW_LINE;
        if (b < MW_LINE)
            b = MW_LINE;
        if (b > max)
            break;
        if (n && b == out[n - 1])
            continue;
        out[n++] = b;
    }
    return n;
}

MW_API unsigned mw_curve_steps(const double *y, unsigned n, double rise, unsigned *at,
                               unsigned cap)
{
    unsigned ns = 0;
    if (!n)
        return 0;
    double lo = y[0];
    for (unsigned i = 1; i < n && ns < cap; i++) {
        /* the step holds for the next two points (those that exist) */
        int up = y[i] > lo * (1 + rise) && (i + 1 >= n || y[i + 1] > lo * (1 + rise)) &&
                 (i + 2 >= n || y[i + 2] > lo * (1 + rise));
        if (up) {
            at[ns++] = i;
            lo = y[i];
            continue;
        }
        if (y[i] < lo)
            lo = y[i];
    }
    return ns;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_d(double *v, unsigned n)
{
    qsort(v, n, sizeof *v, cmp_d);
    return n ? (n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2])) : 0;
}

/* TLB levels from the curve of one line per page against the same lines
 * packed (bench.h, mw_tlb_steps). The excess e = pages - control is what the
 * TLB adds (a data-cache step, such as L1 past 1024 lines, is in both curves
 * and cancels; a ratio would dip there). It is smoothed by a running median
 * of three, which removes one-point spikes and keeps sharp steps, then cut into
 * rises: runs of points each more than RISE_POINT of the total latency (and
 * RISE_MIN_NS) above the one before. A run that a pause of at most two points
 * separates from a larger run that follows (one with a plateau after it) is
 * the onset of that one and is merged with it (a gradual rise that stalls for
 * a point or two is one level). The end points are medians of the first and
 * last three. A rise
 * is a level only when the two points past its top exist and stay above half
 * its height (a plateau: no bump that falls back, no rise at the curve's end),
 * and when its height, from the point before it to the plateau's median, is at
 * least RISE_LEVEL of the total latency below it, RISE_MIN_NS, and more than
 * the plateau's own spread. */
#define RISE_POINT 0.10
#define RISE_LEVEL 0.25
#define RISE_MIN_NS 0.3
#define RISE_PLATEAU 2

static double med3(double a, double b, double c)
{
    return a > b ? (b > c ? b : (a > c ? c : a)) : (a > c ? a : (b > c ? c : b));
}

/* The two points past the rise a..b exist and stay above half its height. */
static int rise_plateau(const double *s, unsigned n, unsigned a, unsigned b)
{
    if (b + RISE_PLATEAU >= n)
        return 0;
    double p[RISE_PLATEAU + 1];
    for (unsigned j = 0; j <= RISE_PLATEAU; j++)
        p[j] = s[b + j];
    double half = 0.5 * (s[a] + median_d(p, RISE_PLATEAU + 1));
    for (unsigned j = 1; j <= RISE_PLATEAU; j++)
        if (s[b + j] < half)
            return 0;
    return 1;
}

MW_API unsigned mw_tlb_steps(const double *pages_ns, const double *control_ns, unsigned n,
                             mw_curve_rise *out, unsigned cap)
{
    double e[MW_CURVE_MAX], s[MW_CURVE_MAX], tot[MW_CURVE_MAX];
    if (n > MW_CURVE_MAX)
        n = MW_CURVE_MAX;
    if (n < 2 || !cap)
        return 0;
    for (unsigned i = 0; i < n; i++)
        e[i] = pages_ns[i] - control_ns[i];
    for (unsigned i = 0; i < n; i++) {
        if (n < 3)
            s[i] = e[i];
        else if (i == 0)
            s[i] = med3(e[0], e[1], e[2]);
        else if (i + 1 == n)
            s[i] = med3(e[n - 3], e[n - 2], e[n - 1]);
        else
            s[i] = med3(e[i - 1], e[i], e[i + 1]);
        tot[i] = control_ns[i] + s[i];
    }
    /* rising runs: [from[k], to[k]], from = the point before the first rise */
    unsigned from[MW_CURVE_MAX], to[MW_CURVE_MAX], nr = 0;
    for (unsigned i = 1; i < n; i++) {
        double eps = RISE_POINT * tot[i - 1];
        int up = s[i] - s[i - 1] > (eps > RISE_MIN_NS ? eps : RISE_MIN_NS);
        if (!up)
            continue;
        if (nr && to[nr - 1] == i - 1)
            to[nr - 1] = i;
        else {
            from[nr] = i - 1;
            to[nr++] = i;
        }
    }
    /* merge an onset into the larger rise that follows after a short pause */
    unsigned m = 0;
    for (unsigned k = 0; k < nr; k++) {
        if (m && from[k] - to[m - 1] <= 2 &&
            s[to[m - 1]] - s[from[m - 1]] < s[to[k]] - s[from[k]] &&
            rise_plateau(s, n, from[k], to[k])) {
            to[m - 1] = to[k];
            continue;
        }
        from[m] = from[k];
        to[m++] = to[k];
    }
    unsigned nl = 0;
    for (unsigned k = 0; k < m && nl < cap; k++) {
        unsigned a = from[k], b = to[k];
        if (b + RISE_PLATEAU >= n)
            continue; /* no plateau after it */
        double p[RISE_PLATEAU + 1], lo = s[b], hi = s[b];
        for (unsigned j = 0; j <= RISE_PLATEAU; j++) {
            p[j] = s[b + j];
            lo = p[j] < lo ? p[j] : lo;
            hi = p[j] > hi ? p[j] : hi;
        }
        double high = median_d(p, RISE_PLATEAU + 1), low = s[a], h = high - low;
        double need = RISE_LEVEL * (control_ns[a] + low);
        if (need < RISE_MIN_NS)
            need = RISE_MIN_NS;
        if (h < need || h <= hi - lo || lo < low + h / 2)
            continue;
        unsigned mid = a;
        for (unsigned j = a; j < b; j++)
            if (s[j] < low + h / 2)
                mid = j;
        out[nl++] = (mw_curve_rise){.from = a, .mid = mid, .to = b, .low_ns = low,
                                    .high_ns = high};
    }
    return nl;
}

#if defined(__x86_64__)
#include <emmintrin.h>

/* Links the lines at off[0..n-1] (byte offsets in base) into one cycle in
 * that order; returns the first. */
static void *link_chain(char *base, const size_t *off, size_t n)
{
    for (size_t i = 0; i < n; i++)
        *(void **)(base + off[i]) = base + off[i + 1 < n ? i + 1 : 0];
    return base + off[0];
}

/* Flushes the chain's lines, then waits FLUSH_SETTLE_NS: on the development
 * VM (Zen 5) lines read back within a few ms of their flush come at about
 * 60 cycles instead of memory's 150-300 (measured with a flush then a 20 ms
 * pause against an eviction by streaming 256 MiB: the two agree). */
#define FLUSH_SETTLE_NS 20000000L
static void flush_lines(char *base, const size_t *off, size_t n)
{
    for (size_t i = 0; i < n; i++)
        _mm_clflush(base + off[i]);
    _mm_mfence();
    struct timespec ts = {0, FLUSH_SETTLE_NS};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

static void shuffle(size_t *v, size_t n, uint64_t *s)
{
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)(mw_rng_next(s) % i);
        size_t t = v[i - 1];
        v[i - 1] = v[j];
        v[j] = t;
    }
}

static volatile void *struct_sink;

/* ns per load of `loads` dependent loads from p (timer overhead removed). */
static double chase_ns(void *p, uint64_t loads)
{
    double hz = mw_bench_tsc_hz(), ovh = mw_bench_timer_overhead();
    uint64_t t0 = mw_tsc_start();
    void *q = mw_chase(p, loads);
    uint64_t t1 = mw_tsc_end();
    struct_sink = q;
    double c = (double)(t1 - t0) - ovh;
    return c > 0 ? c / (double)loads / hz * 1e9 : 0;
}

/* Chase a cycle of n lines: warm it (unless flushed: then once, cold),
 * best of `rep` timings of `loads` loads. */
static double cycle_ns(char *base, size_t *off, size_t n, int cold, unsigned rep, uint64_t loads)
{
    void *p = link_chain(base, off, n);
    double best = INFINITY;
    for (unsigned r = 0; r < rep; r++) {
        if (cold)
            flush_lines(base, off, n);
        else
            mw_chase(p, n * 2);
        double v = chase_ns(p, cold ? n : loads);
        best = v > 0 && v < best ? v : best;
    }
    return isfinite(best) ? best : 0;
}

/* Serialised time stamp for timing one load (lfence orders rdtsc). */
static inline uint64_t tsc_fenced(void)
{
    unsigned lo, hi;
    __asm__ volatile("lfence\n\trdtsc\n\tlfence" : "=a"(lo), "=d"(hi)::"memory");
    return ((uint64_t)hi << 32) | lo;
}

/* ------------------------------------------------------------ prefetch */
#define PF_BYTES ((size_t)128 << 20)
#define PF_CHAIN 8192u /* loads per cold chain */

static int probe_prefetch(const mw_struct_config *c, mw_prefetch_result *r)
{
    char *buf = mw_bench_alloc(PF_BYTES, NULL);
    size_t *off = malloc(sizeof *off * PF_CHAIN * 2);
    if (!buf || !off) {
        mw_bench_free(buf, PF_BYTES);
        free(off);
        return -ENOMEM;
    }
    memset(buf, 1, PF_BYTES);
    uint64_t s = 0x5712de5ull;
    unsigned rep = 2;
    size_t lines = PF_BYTES / MW_LINE, pairs = lines / 2;
    /* random lines */
    for (size_t i = 0; i < PF_CHAIN; i++)
        off[i] = (size_t)(mw_rng_next(&s) % lines) * MW_LINE;
    /* distinct lines: drop repeats by stepping to the next free line would
     * cost a set; at 8192 of 2M lines repeats are rare and harmless */
    r->random_ns = cycle_ns(buf, off, PF_CHAIN, 1, rep, 0);
    /* adjacent line: even then odd line of the same pair, or of another */
    for (int same = 1; same >= 0; same--) {
        for (size_t i = 0; i < PF_CHAIN; i += 2) {
            size_t p = (size_t)(mw_rng_next(&s) % pairs);
            size_t q = same ? p : (size_t)(mw_rng_next(&s) % pairs);
            off[i] = p * 2 * MW_LINE;
            off[i + 1] = (q * 2 + 1) * MW_LINE;
        }
        double v = cycle_ns(buf, off, PF_CHAIN, 1, rep, 0);
        if (same)
            r->pair_same_ns = v;
        else
            r->pair_other_ns = v;
    }
    r->adjacent_line = r->pair_other_ns > 0 && r->pair_same_ns < 0.75 * r->pair_other_ns;
    /* strides: a chain walking up from a random start at each stride */
    size_t grid[MW_CURVE_MAX];
    unsigned ng = mw_struct_stride_grid(64, 8192, c->quick ? 1 : 2, grid, MW_CURVE_MAX);
    for (unsigned g = 0; g < ng; g++) {
        size_t n = PF_CHAIN / 2, span = n * grid[g];
        if (span > PF_BYTES)
            n = PF_BYTES / grid[g];
        for (size_t i = 0; i < n; i++)
            off[i] = i * grid[g];
        r->stride.x[r->stride.n] = (double)grid[g];
        r->stride.ns[r->stride.n++] = cycle_ns(buf, off, n, 1, rep, 0);
    }
    r->stride_covered = 0;
    for (unsigned g = 0; g < r->stride.n; g++)
        if (r->stride.ns[g] < 0.5 * r->random_ns)
            r->stride_covered = (size_t)r->stride.x[g];
    r->stride_prefetch = r->stride_covered > 128;
    /* distance: in random 4 KiB pages, 4 lines loaded in order (a stream),
     * a pause for the prefetches to land, then one timed load d lines on */
    double hz = mw_bench_tsc_hz();
    double ovh = INFINITY;
    for (int i = 0; i < 200; i++) {
        uint64_t a = tsc_fenced(), b = tsc_fenced();
        ovh = fmin(ovh, (double)(b - a));
    }
    unsigned npages = c->quick ? 96 : 192, maxd = 60 - 4;
    double *t = malloc(sizeof *t * npages);
    size_t npg = PF_BYTES / 4096;
    for (unsigned d = 0; t && d <= maxd; d += (d < 16 ? 1 : 4)) {
        for (unsigned k = 0; k < npages; k++) {
            char *pg = buf + (size_t)(mw_rng_next(&s) % npg) * 4096;
            for (int l = 0; l < 64; l++)
                _mm_clflush(pg + l * MW_LINE);
            _mm_mfence();
            volatile uint64_t *v = (volatile uint64_t *)pg;
            uint64_t x = 0;
            for (int l = 0; l < 4; l++) /* the stream, each load after the last */
                x += v[(l * MW_LINE + (x & 0)) / 8];
            uint64_t w = tsc_fenced() + (uint64_t)(2e-6 * hz); /* 2 us: prefetches land */
            while (tsc_fenced() < w)
                ;
            size_t at = (3 + (size_t)d) * MW_LINE + (x & 0);
            uint64_t t0 = tsc_fenced();
            x += *(volatile uint64_t *)(pg + at);
            uint64_t t1 = tsc_fenced();
            struct_sink = (void *)(uintptr_t)x;
            t[k] = ((double)(t1 - t0) - ovh) / hz * 1e9;
        }
        if (r->distance.n < MW_CURVE_MAX) {
            r->distance.x[r->distance.n] = d;
            r->distance.ns[r->distance.n++] = median_d(t, npages);
        }
    }
    free(t);
    /* served: below the midpoint of the stream's own line (d = 0, a hit)
     * and memory */
    r->hit_ns = r->distance.n ? r->distance.ns[0] : 0;
    double mid = 0.5 * (r->hit_ns + r->random_ns);
    r->distance_lines = 0;
    for (unsigned i = 1; i < r->distance.n; i++) {
        if (r->distance.ns[i] >= mid)
            break;
        r->distance_lines = (unsigned)r->distance.x[i];
    }
    free(off);
    mw_bench_free(buf, PF_BYTES);
    return 0;
}

/* ----------------------------------------------------------------- TLB */
static unsigned page_grid(unsigned max, unsigned *out, unsigned cap)
{
    unsigned n = 0;
    for (unsigned p = 8; p <= max && n < cap; p *= 2) {
        out[n++] = p;
        if (p + p / 2 <= max && n < cap)
            out[n++] = p + p / 2;
    }
    return n;
}

static int probe_tlb(const mw_struct_config *c, size_t page, size_t max_bytes, mw_tlb_curve *r)
{
    r->page = page;
    unsigned maxp = (unsigned)(max_bytes / page);
    size_t bytes = (size_t)maxp * page;
    char *buf = mw_bench_alloc(bytes, NULL);
    if (!buf)
        return -ENOMEM;
#ifdef MADV_NOHUGEPAGE
    if (page == 4096)
        madvise(buf, bytes, MADV_NOHUGEPAGE);
#endif
    memset(buf, 1, bytes);
    if (page != 4096) {
        r->huge_fraction = mw_bench_huge_fraction(buf, bytes);
        if (r->huge_fraction >= 0 && r->huge_fraction < 0.9)
            snprintf(r->note, sizeof r->note,
                     "only %.0f %% of the buffer on 2 MiB pages: the curve mixes page sizes",
                     100 * r->huge_fraction);
    }
    size_t *off = malloc(sizeof *off * maxp);
    size_t *idx = malloc(sizeof *idx * maxp);
    if (!off || !idx) {
        free(off);
        free(idx);
        mw_bench_free(buf, bytes);
        return -ENOMEM;
    }
    unsigned grid[MW_CURVE_MAX];
    unsigned ng = page_grid(maxp, grid, MW_CURVE_MAX);
    uint64_t s = 0x71b0ull + page;
    unsigned rep = c->quick ? 2 : 3;
    for (unsigned g = 0; g < ng; g++) {
        unsigned n = grid[g];
        for (unsigned i = 0; i < n; i++)
            idx[i] = i;
        shuffle(idx, n, &s);
        /* one line per page, the line moving with the page so that the lines
         * spread over the cache sets */
        for (unsigned i = 0; i < n; i++)
            off[i] = idx[i] * page + (idx[i] % (page / MW_LINE)) * MW_LINE;
        double a = cycle_ns(buf, off, n, 0, rep, 1u << 15);
        /* the same number of lines, packed: consecutive lines */
        for (unsigned i = 0; i < n; i++)
            off[i] = idx[i] * MW_LINE;
        double b = cycle_ns(buf, off, n, 0, rep, 1u << 15);
        r->pages.x[r->pages.n] = n;
        r->pages.ns[r->pages.n++] = a;
        r->control.x[r->control.n] = n;
        r->control.ns[r->control.n++] = b;
    }
    /* steps of pages over control: the TLB's, not the caches' */
    mw_curve_rise st[MW_TLB_MAX_LEVELS];
    unsigned k = mw_tlb_steps(r->pages.ns, r->control.ns, r->pages.n, st, MW_TLB_MAX_LEVELS);
    for (unsigned i = 0; i < k; i++) {
        mw_tlb_level *lv = &r->level[r->nlevels++];
        lv->entries = (unsigned)r->pages.x[st[i].mid];
        lv->first_miss = (unsigned)r->pages.x[st[i].mid + 1];
        lv->reach = (size_t)lv->entries * page;
        lv->extra_ns = st[i].high_ns;
        lv->rise_from = (unsigned)r->pages.x[st[i].from];
        lv->rise_to = (unsigned)r->pages.x[st[i].to];
    }
    free(off);
    free(idx);
    mw_bench_free(buf, bytes);
    return 0;
}

/* ------------------------------------------------------- associativity */
#define ASSOC_MAX_K 40

static int probe_assoc(const mw_struct_config *c, mw_assoc_result *r)
{
    int huge = 0;
    size_t stride = (size_t)2 << 20;
    size_t bytes = stride * ASSOC_MAX_K;
    char *buf = mw_bench_alloc(bytes, &huge);
    if (!buf)
        return -ENOMEM;
    memset(buf, 1, bytes);
    double hf = mw_bench_huge_fraction(buf, bytes);
    r->huge = huge && hf >= 0.9;
    r->stride = stride;
    size_t off[ASSOC_MAX_K];
    uint64_t s = 0xa550cull;
    unsigned rep = c->quick ? 3 : 5;
    for (unsigned k = 1; k <= ASSOC_MAX_K && r->curve.n < MW_CURVE_MAX; k++) {
        size_t idx[ASSOC_MAX_K];
        for (unsigned i = 0; i < k; i++)
            idx[i] = i;
        shuffle(idx, k, &s);
        for (unsigned i = 0; i < k; i++)
            off[i] = idx[i] * stride;
        r->curve.x[r->curve.n] = k;
        r->curve.ns[r->curve.n++] = cycle_ns(buf, off, k, 0, rep, 1u << 14);
    }
    unsigned at[3];
    r->nsteps = mw_curve_steps(r->curve.ns, r->curve.n, 0.3, at, r->huge ? 3 : 1);
    unsigned from = 0;
    for (unsigned i = 0; i < r->nsteps; i++) {
        r->ways[i] = (unsigned)r->curve.x[at[i] - 1];
        double v[ASSOC_MAX_K];
        unsigned m = 0;
        for (unsigned j = from; j < at[i]; j++)
            v[m++] = r->curve.ns[j];
        r->level_ns[i] = median_d(v, m);
        from = at[i];
    }
    {
        double v[ASSOC_MAX_K];
        unsigned m = 0;
        for (unsigned j = from; j < r->curve.n; j++)
            v[m++] = r->curve.ns[j];
        r->level_ns[r->nsteps] = median_d(v, m);
    }
    mw_bench_free(buf, bytes);
    return 0;
}

MW_API int mw_bench_struct(const mw_struct_config *cfg, mw_struct_result *out)
{
    memset(out, 0, sizeof *out);
    mw_struct_config c = cfg ? *cfg : (mw_struct_config){.cpu = -1};
    if (!c.tlb2m_bytes)
        c.tlb2m_bytes = c.quick ? ((size_t)512 << 20) : ((size_t)2 << 30);
    mw_bench_affinity sv;
    int rc = mw_bench_pin_saved(c.cpu, &sv);
    if (rc < 0)
        return rc;
    rc = probe_prefetch(&c, &out->pf);
    if (rc == 0)
        /* 128 MiB (32768 pages) with --quick too: the development VM's second
         * level ends its rise at 12288 pages and needs two points past it */
        rc = probe_tlb(&c, 4096, (size_t)128 << 20, &out->tlb[0]);
    if (rc == 0)
        rc = probe_tlb(&c, (size_t)2 << 20, c.tlb2m_bytes, &out->tlb[1]);
    if (rc == 0)
        rc = probe_assoc(&c, &out->assoc);
    mw_bench_unpin(&sv);
    return rc;
}

/* ---------------------------------------------------------------- plots */
int mw_struct_plots(const mw_struct_result *s, const char *dir)
{
    char path[4096];
    int rc = 0, e;
    const mw_prefetch_result *p = &s->pf;
    static double rx[2], ry[2];
    if (p->stride.n) {
        rx[0] = p->stride.x[0];
        rx[1] = p->stride.x[p->stride.n - 1];
        ry[0] = ry[1] = p->random_ns;
        mw_plot_series ser[2] = {{"chain at the stride", p->stride.x, p->stride.ns, p->stride.n},
                                 {"random lines", rx, ry, 2}};
        snprintf(path, sizeof path, "%s/prefetch.svg", dir);
        if ((e = mw_plot_lines(path, "Prefetchers: a chain through flushed memory at a stride",
                               "stride (bytes, log scale)", "ns per dependent load", 1, 0, ser, 2,
                               NULL, NULL, 0)) < 0)
            rc = e;
    }
    if (p->distance.n) {
        double hl[2] = {p->hit_ns, p->random_ns};
        const char *hlab[2] = {"stream's own line", "memory"};
        mw_plot_series ser[1] = {{"one load d lines on", p->distance.x, p->distance.ns,
                                  p->distance.n}};
        snprintf(path, sizeof path, "%s/prefetch_distance.svg", dir);
        if ((e = mw_plot_lines(path, "Prefetch distance: 4 lines streamed in a page, then one load",
                               "lines past the stream's last line", "ns (median of pages)", 0, 0,
                               ser, 1, hl, hlab, 2)) < 0)
            rc = e;
    }
    mw_plot_series ts[4 + 2 * MW_TLB_MAX_LEVELS];
    /* each level found: a vertical mark at its entries, spanning its rise */
    double lx[2 * MW_TLB_MAX_LEVELS][2], ly[2 * MW_TLB_MAX_LEVELS][2];
    char ln[2 * MW_TLB_MAX_LEVELS][48];
    unsigned nt = 0, nl = 0;
    for (int t = 0; t < 2; t++) {
        const mw_tlb_curve *c = &s->tlb[t];
        if (!c->pages.n)
            continue;
        ts[nt++] = (mw_plot_series){t ? "2 MiB pages, a line each" : "4 KiB pages, a line each",
                                    c->pages.x, c->pages.ns, c->pages.n};
        ts[nt++] = (mw_plot_series){t ? "same lines packed (2M run)" : "same lines packed (4K run)",
                                    c->control.x, c->control.ns, c->control.n};
    }
    for (int t = 0; t < 2; t++) {
        const mw_tlb_curve *c = &s->tlb[t];
        for (unsigned l = 0; l < c->nlevels && l < MW_TLB_MAX_LEVELS; l++) {
            const mw_tlb_level *lv = &c->level[l];
            double lo = 0, hi = 0;
            for (unsigned i = 0; i < c->pages.n; i++) {
                if (c->pages.x[i] == lv->rise_from)
                    lo = c->pages.ns[i];
                if (c->pages.x[i] == lv->rise_to)
                    hi = c->pages.ns[i];
            }
            if (!(lo > 0 && hi > lo))
                continue;
            lx[nl][0] = lx[nl][1] = lv->entries;
            ly[nl][0] = lo;
            ly[nl][1] = hi;
            snprintf(ln[nl], sizeof ln[nl], "%s level %u: %u entries", t ? "2 MiB" : "4 KiB",
                     l + 1, lv->entries);
            ts[nt++] = (mw_plot_series){ln[nl], lx[nl], ly[nl], 2};
            nl++;
        }
    }
    if (nt) {
        snprintf(path, sizeof path, "%s/tlb.svg", dir);
        if ((e = mw_plot_lines(path, "TLB: one line per page against the same lines packed",
                               "pages touched (log scale)", "ns per dependent load (log scale)", 1,
                               1, ts, nt, NULL, NULL, 0)) < 0)
            rc = e;
    }
    if (s->assoc.curve.n) {
        mw_plot_series ser[1] = {{"k lines, one set", s->assoc.curve.x, s->assoc.curve.ns,
                                  s->assoc.curve.n}};
        snprintf(path, sizeof path, "%s/assoc.svg", dir);
        if ((e = mw_plot_lines(path, "Associativity: k lines 2 MiB apart in a random cycle",
                               "lines k", "ns per dependent load", 0, 0, ser, 1, NULL, NULL, 0)) <
            0)
            rc = e;
    }
    return rc;
}

#else /* not x86-64 */

MW_API int mw_bench_struct(const mw_struct_config *cfg, mw_struct_result *out)
{
    (void)cfg;
    memset(out, 0, sizeof *out);
    mw_log(MW_LOG_ERROR, "structure probes: need x86-64 (cache-line flushes, serialised time "
                         "stamps)");
    return MW_ERR_UNSUPPORTED;
}

int mw_struct_plots(const mw_struct_result *s, const char *dir)
{
    (void)s;
    (void)dir;
    return 0;
}

#endif
