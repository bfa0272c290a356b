/*
 * calibrate/bench_latency.c: the latency benchmarks. The pointer-chase ladder
 * over footprints from 4 KiB to beyond the last-level cache, chased twice per
 * footprint: a page-local cycle (the lines of one page back to back; cache
 * levels are detected on this curve, which TLB misses do not blur) and a
 * full-random Sattolo cycle (idle memory latency and the TLB reach); loaded
 * latency in the manner of Intel MLC (one pinned chasing thread while the
 * other CPUs run the Helm & Taura read load at each delay); memory-level
 * parallelism (k independent chains over one random cycle, k = 1..32).
 * May call: bench_common.c, bench_sweep.c (mw_read_load_*), counters/tsc.h.
 * Threading: the ladder and MLP pin the calling thread to one CPU for their
 * duration and restore its previous affinity; loaded latency does the same
 * for the chasing (calling) thread.
 */
#include "bench_int.h"
#include "tsc.h"

#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Points of one plateau lie less than this fraction above its lowest point. */
#define LADDER_FLAT 0.25
#define LADDER_CHUNK 16384u
#define LADDER_SPIKE 1.3
#define LADDER_MAX_CHUNKS 256
#define LADDER_WARM_MAX ((uint64_t)1 << 16) /* chase loads after the streamed warm-up */
#define LADDER_STEADY 0.02 /* repeats of a point agreeing this closely end it */

static volatile void *chase_sink;

/* Time `loads` dependent loads from *p (advancing *p); returns TSC cycles
 * per load with the timer overhead removed. */
static double chase_time(void **p, uint64_t loads, double ovh)
{
    uint64_t t0 = mw_tsc_start();
    void *q = mw_chase(*p, loads);
    uint64_t t1 = mw_tsc_end();
    *p = q;
    chase_sink = q;
    double c = (double)(t1 - t0) - ovh;
    return c > 0 ? c / (double)loads : 0;
}

/* ------------------------------------------------------------ ladder */
static double median_of(const double *v, unsigned n)
{
    mw_stats s;
    mw_stats_compute(v, n, 0, &s);
    return s.median;
}

/*
 * Level detection. A "flat run" is a maximal sequence of at least
 * LADDER_MIN_RUN points each less than LADDER_FLAT above the lowest point
 * before it in the run; a run shorter than 2 x LADDER_MIN_RUN must also rise
 * less than LADDER_RISE per point (else it is a stretch of a transition).
 * Flat runs whose latencies differ by less than LADDER_GAP
 * belong to one level (a TLB step inside a cache level is not a new cache);
 * the points between runs form the transitions. A level's capacity is the
 * first footprint whose latency is past the geometric midpoint between the
 * level's latency and that of the next level's first flat run: the middle of
 * the step, which noise at either end of a gradual transition (set conflicts
 * of physically indexed caches, page walks) moves least. plateau_end keeps
 * the last footprint still on the plateau. The last level is memory when
 * there is more than one.
 */
#define LADDER_MIN_RUN 3
#define LADDER_GAP 1.5
#define LADDER_RISE 1.06 /* per point, for runs shorter than 2 x LADDER_MIN_RUN */

/* Pairs detected cache levels with the kernel's, in order, minimising the
 * summed |ln(detected / sysfs)|; leaving a level of either side unpaired costs
 * LADDER_SKIP. So a step that is not a cache (a TLB running out of reach on a
 * long plateau) stays unpaired instead of shifting every later pairing. */
#define LADDER_SKIP 2.0794415416798357 /* ln 8: three octaves */
static void ladder_match_sysfs(mw_ladder_result *out, const mw_cache_info *ci, double lstep)
{
    unsigned nd = 0, ns_ = ci->n < MW_CACHE_MAX_LEVELS ? ci->n : MW_CACHE_MAX_LEVELS;
    for (unsigned l = 0; l < out->nlevels; l++)
        if (!out->level[l].is_memory)
            nd++;
    /* cost[i][j]: best pairing of the first i detected and first j sysfs levels */
    double cost[MW_LADDER_MAX_LEVELS + 1][MW_CACHE_MAX_LEVELS + 1];
    unsigned char how[MW_LADDER_MAX_LEVELS + 1][MW_CACHE_MAX_LEVELS + 1];
    for (unsigned i = 0; i <= nd; i++)
        for (unsigned j = 0; j <= ns_; j++) {
            if (!i && !j) {
                cost[0][0] = 0;
                continue;
            }
            double best = INFINITY;
            unsigned char h = 0;
            if (i && cost[i - 1][j] + LADDER_SKIP < best) {
                best = cost[i - 1][j] + LADDER_SKIP;
                h = 1; /* detected level i-1 unpaired */
            }
            if (j && cost[i][j - 1] + LADDER_SKIP < best) {
                best = cost[i][j - 1] + LADDER_SKIP;
                h = 2; /* sysfs level j-1 unpaired */
            }
            if (i && j && ci->level[j - 1].size && out->level[i - 1].size) {
                double c = cost[i - 1][j - 1] + fabs(log((double)out->level[i - 1].size /
                                                          (double)ci->level[j - 1].size));
                if (c < best) {
                    best = c;
                    h = 3;
                }
            }
            cost[i][j] = best;
            how[i][j] = h;
        }
    for (unsigned i = nd, j = ns_; i || j;) {
        if (how[i][j] == 3) {
            mw_ladder_level *o = &out->level[i - 1];
            o->sysfs_size = ci->level[j - 1].size;
            o->within_one_step = fabs(log((double)o->size / (double)o->sysfs_size)) <= lstep;
            i--, j--;
        } else if (how[i][j] == 1) {
            i--;
        } else {
            j--;
        }
    }
}

MW_API int mw_ladder_detect(const size_t *bytes, const double *ns, const double *cycles,
                            unsigned n, double step_ratio, const mw_cache_info *ci,
                            mw_ladder_result *out)
{
    out->nlevels = 0;
    out->dram_ns = out->dram_cycles = 0;
    if (!n || !bytes || !ns || n > MW_LADDER_MAX_POINTS)
        return -EINVAL;
    for (unsigned i = 0; i < n; i++)
        if (!(ns[i] > 0) || (i && bytes[i] <= bytes[i - 1]))
            return -EINVAL;
    /* flat runs */
    struct run {
        unsigned a, b;
    } runs[MW_LADDER_MAX_POINTS];
    unsigned nruns = 0;
    for (unsigned i = 0; i < n;) {
        unsigned j = i;
        double lo = ns[i];
        while (j + 1 < n && ns[j + 1] <= lo * (1 + LADDER_FLAT)) {
            j++;
            lo = fmin(lo, ns[j]);
        }
        unsigned len = j - i + 1;
        /* A short run that keeps rising is part of a transition, not a level */
        int rising = len < 2 * LADDER_MIN_RUN &&
                     pow(ns[j] / ns[i], 1.0 / (double)(len > 1 ? len - 1 : 1)) > LADDER_RISE;
        if ((len >= LADDER_MIN_RUN && !rising) || i == 0)
            runs[nruns++] = (struct run){i, j};
        i = j + 1;
    }
    /* levels: groups of runs */
    struct lvl {
        unsigned first_run, last_run;
    } lv[MW_LADDER_MAX_POINTS];
    unsigned nl = 0;
    double vals[MW_LADDER_MAX_POINTS];
    for (unsigned r = 0; r < nruns; r++) {
        double med = median_of(ns + runs[r].a, runs[r].b - runs[r].a + 1);
        if (nl) {
            struct lvl *cur = &lv[nl - 1];
            unsigned k = 0;
            for (unsigned q = cur->first_run; q <= cur->last_run; q++)
                for (unsigned i = runs[q].a; i <= runs[q].b; i++)
                    vals[k++] = ns[i];
            double curmed = median_of(vals, k);
            if (med < curmed * LADDER_GAP) {
                cur->last_run = r;
                continue;
            }
        }
        lv[nl++] = (struct lvl){r, r};
    }
    if (nl > MW_LADDER_MAX_LEVELS)
        nl = MW_LADDER_MAX_LEVELS;
    double lstep = log(step_ratio > 1 ? step_ratio : 2.0) * 1.01;
    for (unsigned l = 0; l < nl; l++) {
        mw_ladder_level *o = &out->level[out->nlevels++];
        memset(o, 0, sizeof *o);
        unsigned k = 0, kc = 0;
        double cvals[MW_LADDER_MAX_POINTS];
        for (unsigned q = lv[l].first_run; q <= lv[l].last_run; q++)
            for (unsigned i = runs[q].a; i <= runs[q].b; i++) {
                vals[k++] = ns[i];
                if (cycles)
                    cvals[kc++] = cycles[i];
            }
        o->level = (int)l + 1;
        o->ns = median_of(vals, k);
        o->cycles = kc ? median_of(cvals, kc) : 0;
        o->plateau_end = bytes[runs[lv[l].last_run].b];
        o->plateau_start = bytes[runs[lv[l].first_run].a];
        o->is_memory = l == nl - 1 && nl > 1;
        if (!o->is_memory) {
            o->size = o->plateau_end;
            if (l + 1 < nl) {
                /* the first footprint past the geometric midpoint between this
                 * level and the next level's first plateau */
                const struct run *nx = &runs[lv[l + 1].first_run];
                double b = median_of(ns + nx->a, nx->b - nx->a + 1);
                double mid = sqrt(o->ns * b);
                o->size = bytes[nx->a];
                for (unsigned i = runs[lv[l].last_run].b + 1; i <= nx->a; i++)
                    if (ns[i] >= mid) {
                        o->size = bytes[i];
                        break;
                    }
            }
        }
    }
    if (ci)
        ladder_match_sysfs(out, ci, lstep);
    if (out->nlevels > 1) {
        /* idle memory latency: median of the larger half of the memory
         * plateau's footprints (the closest to pure misses; several points
         * so that one disturbed point does not move it) */
        unsigned b = runs[lv[nl - 1].last_run].b, a0 = runs[lv[nl - 1].first_run].a;
        unsigned a = a0 + (b - a0 + 1) / 2;
        if (a > b)
            a = b;
        out->dram_ns = median_of(ns + a, b - a + 1);
        out->dram_cycles = cycles ? median_of(cycles + a, b - a + 1) : 0;
    }
    return 0;
}

/* Visiting order of the page-local cycle (see mw_page_local_cycle). */
static int page_local_order(uint32_t *order, size_t n, uint64_t seed)
{
    size_t pages = (n + MW_LADDER_PAGE_LINES - 1) / MW_LADDER_PAGE_LINES;
    uint32_t *pg = malloc(pages * sizeof *pg);
    if (!pg)
        return -ENOMEM;
    uint64_t s = seed ? seed : 0x9e3779b97f4a7c15ull;
    size_t k = 0;
    for (unsigned par = 0; par < 2; par++) {
        /* the pages in a fresh random order for each parity */
        for (size_t i = 0; i < pages; i++)
            pg[i] = (uint32_t)i;
        for (size_t i = pages - 1; i > 0 && pages > 1; i--) {
            size_t j = (size_t)(mw_rng_next(&s) % (i + 1));
            uint32_t t = pg[i];
            pg[i] = pg[j];
            pg[j] = t;
        }
        for (size_t gi = 0; gi < pages; gi++) {
            size_t first = (size_t)pg[gi] * MW_LADDER_PAGE_LINES + par, k0 = k;
            for (size_t l = first; l < n && l < first + MW_LADDER_PAGE_LINES - par; l += 2)
                order[k++] = (uint32_t)l;
            /* the group's lines in a random order */
            for (size_t i = k - k0; i > 1; i--) {
                size_t j = (size_t)(mw_rng_next(&s) % i);
                uint32_t t = order[k0 + i - 1];
                order[k0 + i - 1] = order[k0 + j];
                order[k0 + j] = t;
            }
        }
    }
    free(pg);
    return k == n ? 0 : -EFAULT;
}

MW_API int mw_page_local_cycle(uint32_t *next, size_t n, uint64_t seed)
{
    if (!next || n == 0 || n > UINT32_MAX)
        return -EINVAL;
    uint32_t *order = malloc(n * sizeof *order);
    if (!order)
        return -ENOMEM;
    int rc = page_local_order(order, n, seed);
    if (rc == 0)
        for (size_t i = 0; i < n; i++)
            next[order[i]] = order[(i + 1) % n];
    free(order);
    return rc;
}

/* Links `lines` lines of buf into the page-local cycle; returns its first
 * line or NULL when memory runs out. */
static void *page_local_build(char *buf, size_t lines, uint64_t seed)
{
    uint32_t *order = malloc(lines * sizeof *order);
    if (!order || page_local_order(order, lines, seed) < 0) {
        free(order);
        return NULL;
    }
    for (size_t i = 0; i < lines; i++)
        *(void **)(buf + (size_t)order[i] * MW_LINE) =
            buf + (size_t)order[(i + 1) % lines] * MW_LINE;
    void *first = buf + (size_t)order[0] * MW_LINE;
    free(order);
    return first;
}

MW_API size_t mw_ladder_tlb_reach(const mw_ladder_result *local, const mw_ladder_result *full,
                                  double step_ratio)
{
    if (!local || !full)
        return 0;
    double tol = MW_LADDER_TLB_STEPS * log(step_ratio > 1 ? step_ratio : 2.0) * 1.01;
    for (unsigned i = 0; i < full->nlevels && i < MW_LADDER_MAX_LEVELS; i++) {
        const mw_ladder_level *f = &full->level[i];
        if (f->is_memory || !f->size)
            continue;
        int matched = 0;
        for (unsigned j = 0; j < local->nlevels && j < MW_LADDER_MAX_LEVELS && !matched; j++) {
            const mw_ladder_level *l = &local->level[j];
            matched = !l->is_memory && l->size &&
                      fabs(log((double)f->size / (double)l->size)) <= tol;
        }
        if (!matched)
            return f->plateau_end;
    }
    return 0;
}

/* One ladder point: a Sattolo cycle (local: the page-local cycle) over
 * `lines` lines of buf, warmed, then
 * c->repeats repeats. Each repeat is timed in chunks of LADDER_CHUNK loads and
 * keeps its fastest chunk: every chunk visits random lines of the same cycle,
 * so they differ only by disturbance (a time slice lost to another process,
 * another tenant's memory traffic), and the idle latency is the undisturbed
 * one. *best is the best repeat in TSC cycles per load, *cv their spread. */
static int ladder_point(char *buf, size_t lines, uint64_t seed, int local,
                        const mw_ladder_config *c, double ovh, double *best, double *cv)
{
    void *p = local ? page_local_build(buf, lines, seed) : mw_chase_build(buf, lines, seed);
    if (!p)
        return -ENOMEM;
    /* warm: the footprint read once in address order (streamed by the
     * prefetchers: a GiB in a tenth of a second where a chase through it
     * takes seconds) leaves in the caches what fits, then a short chase
     * settles the TLB and the caches' order; the timed chunks keep the
     * fastest anyway */
    uint64_t sum = 0;
    for (size_t i = 0; i < lines; i++)
        sum += *(const volatile uint64_t *)(buf + i * MW_LINE);
    chase_sink = (void *)(uintptr_t)sum;
    uint64_t warm = 2 * lines;
    if (warm > LADDER_WARM_MAX)
        warm = LADDER_WARM_MAX;
    p = mw_chase(p, warm);
    uint64_t loads = c->min_loads;
    if (lines * 2 > loads && lines * 2 <= ((uint64_t)1 << 20))
        loads = lines * 2;
    double cyc[MW_BENCH_MAX_REPEATS];
    unsigned nr = 0;
    for (unsigned r = 0; r < c->repeats; r++) {
        double ch[LADDER_MAX_CHUNKS];
        unsigned nch = 0;
        for (uint64_t done = 0; done < loads && nch < LADDER_MAX_CHUNKS; done += LADDER_CHUNK)
            ch[nch++] = chase_time(&p, LADDER_CHUNK, ovh);
        mw_stats cs;
        mw_stats_compute(ch, nch, 0, &cs);
        cyc[nr++] = cs.best;
        /* steady: two repeats agree within LADDER_STEADY, the best is confirmed */
        if (nr >= 2) {
            double lo = INFINITY, lo2 = INFINITY;
            for (unsigned k = 0; k < nr; k++) {
                if (cyc[k] < lo) {
                    lo2 = lo;
                    lo = cyc[k];
                } else if (cyc[k] < lo2) {
                    lo2 = cyc[k];
                }
            }
            if (lo2 <= lo * (1 + LADDER_STEADY))
                break;
        }
    }
    mw_stats st;
    mw_stats_compute(cyc, nr, 0, &st);
    *best = st.best;
    *cv = st.cv;
    return 0;
}

/* mw_bench_ladder's run: the filled-in configuration, the footprints' grid,
 * the buffer the chases run in and the TSC rate and timer overhead. */
typedef struct ladder_run {
    mw_ladder_config c;
    size_t grid[MW_LADDER_MAX_POINTS];
    unsigned np;
    char *buf;
    double hz, ovh;
} ladder_run;

/* Fills in the configuration's defaults and the grid of footprints (bytes,
 * steps_per_octave to the octave); -EINVAL or MW_ERR_TOOBIG when unusable. */
static int ladder_setup(const mw_ladder_config *cfg, ladder_run *lr, mw_ladder_result *out)
{
    mw_ladder_config *c = &lr->c;
    *c = cfg ? *cfg : (mw_ladder_config){.cpu = -1};
    if (!cfg)
        c->cpu = -1;
    if (!c->min_bytes)
        c->min_bytes = 4096;
    if (!c->max_bytes)
        c->max_bytes = mw_bench_llc_times(c->llc_times ? c->llc_times : 4);
    if (!c->steps_per_octave)
        c->steps_per_octave = 4;
    if (!c->repeats)
        c->repeats = 3;
    if (c->repeats > MW_BENCH_MAX_REPEATS)
        return MW_ERR_TOOBIG;
    if (!c->min_loads)
        c->min_loads = (uint64_t)1 << 18;
    if (c->min_bytes < 2 * MW_LINE || c->max_bytes < c->min_bytes)
        return -EINVAL;
    out->step_ratio = pow(2.0, 1.0 / c->steps_per_octave);
    /* grid */
    size_t *grid = lr->grid;
    unsigned np = 0;
    for (unsigned k = 0; np < MW_LADDER_MAX_POINTS; k++) {
        double b = (double)c->min_bytes * pow(2.0, (double)k / c->steps_per_octave);
        size_t bb = ((size_t)(b + 0.5) + MW_LINE - 1) / MW_LINE * MW_LINE;
        if (bb > c->max_bytes)
            break;
        if (np && bb == grid[np - 1])
            continue;
        grid[np++] = bb;
    }
    if (np < 2)
        return -EINVAL;
    lr->np = np;
    return 0;
}

/* A point above both neighbours by LADDER_SPIKE, measured again (both curves). */
static int ladder_spikes(const ladder_run *lr, mw_ladder_result *out)
{
    const mw_ladder_config *c = &lr->c;
    char *buf = lr->buf;
    double hz = lr->hz, ovh = lr->ovh;
    /* A point above both neighbours by LADDER_SPIKE was disturbed as a whole
     * (a cache step never makes a peak): measure it again, up to twice, and
     * keep the lower figure. Both curves. */
    int rc = 0;
    for (unsigned pass = 0; pass < 2 && rc == 0; pass++)
        for (unsigned pi = 1; pi + 1 < out->npoints && rc == 0; pi++)
            for (int local = 0; local < 2 && rc == 0; local++) {
                mw_ladder_point *pt = &out->point[pi];
                double *cyc = local ? &pt->local_cycles : &pt->cycles;
                double nb = local ? fmax(out->point[pi - 1].local_cycles,
                                         out->point[pi + 1].local_cycles)
                                  : fmax(out->point[pi - 1].cycles, out->point[pi + 1].cycles);
                if (!(*cyc > LADDER_SPIKE * nb))
                    continue;
                double best, cv;
                rc = ladder_point(buf, pt->bytes / MW_LINE,
                                  (local ? 0x10ca1000u : 0x5eed1000u) + pi + 64 * pass, local, c,
                                  ovh, &best, &cv);
                if (rc == 0 && best < *cyc) {
                    *cyc = best;
                    if (local) {
                        pt->local_ns = best / hz * 1e9;
                        pt->local_cv = cv;
                    } else {
                        pt->ns = best / hz * 1e9;
                        pt->cv = cv;
                    }
                }
            }
    return rc;
}

/* The levels from both curves: sizes from the page-local one, latencies and
 * the idle memory latency from the full-random one, the TLB's reach. */
static int ladder_levels(mw_ladder_result *out)
{
    int rc;
    size_t bytes[MW_LADDER_MAX_POINTS];
    double ns[MW_LADDER_MAX_POINTS], cy[MW_LADDER_MAX_POINTS];
    double lns[MW_LADDER_MAX_POINTS], lcy[MW_LADDER_MAX_POINTS];
    for (unsigned i = 0; i < out->npoints; i++) {
        bytes[i] = out->point[i].bytes;
        ns[i] = out->point[i].ns;
        cy[i] = out->point[i].cycles;
        lns[i] = out->point[i].local_ns;
        lcy[i] = out->point[i].local_cycles;
    }
    mw_cache_info ci;
    int have_ci = mw_cache_info_read(NULL, 0, &ci) == 0;
    /* Idle memory latency from the full-random curve: every load a miss of
     * the caches and the TLB, as a random access in a large data set pays.
     * The page-local curve reads lower there (one page walk per group, DRAM
     * row hits), so it gives the levels' sizes only. */
    mw_ladder_result *full = malloc(sizeof *full);
    if (!full)
        return -ENOMEM;
    memset(full, 0, sizeof *full);
    rc = mw_ladder_detect(bytes, ns, cy, out->npoints, out->step_ratio, NULL, full);
    if (rc == 0)
        rc = mw_ladder_detect(bytes, lns, lcy, out->npoints, out->step_ratio,
                              have_ci ? &ci : NULL, out);
    if (rc == 0) {
        out->dram_ns = full->dram_ns;
        out->dram_cycles = full->dram_cycles;
        out->levels_from_local = 1;
        /* a level's latency: the full-random chase over the page-local
         * plateau's footprints (the page-local figure is lowered by
         * prefetches; it is kept as local_ns) */
        for (unsigned l = 0; l < out->nlevels; l++) {
            mw_ladder_level *v = &out->level[l];
            double fv[MW_LADDER_MAX_POINTS], fc[MW_LADDER_MAX_POINTS];
            unsigned k = 0;
            for (unsigned i = 0; i < out->npoints; i++)
                if (bytes[i] >= v->plateau_start && bytes[i] <= v->plateau_end) {
                    fv[k] = ns[i];
                    fc[k++] = cy[i];
                }
            v->local_ns = v->ns;
            if (k) {
                v->ns = median_of(fv, k);
                v->cycles = median_of(fc, k);
            }
        }
        out->tlb_reach = mw_ladder_tlb_reach(out, full, out->step_ratio);
        out->full_nlevels = full->nlevels;
        memcpy(out->full_level, full->level, sizeof out->full_level);
        unsigned last = out->npoints - 1;
        out->tlb_ratio = lns[last] > 0 ? ns[last] / lns[last] : 0;
    }
    free(full);
    return rc;
}

MW_API int mw_bench_ladder(const mw_ladder_config *cfg, mw_ladder_result *out)
{
    memset(out, 0, sizeof *out);
    ladder_run lr = {0};
    int rc = ladder_setup(cfg, &lr, out);
    if (rc)
        return rc;
    const mw_ladder_config *c = &lr.c;
    const size_t *grid = lr.grid;
    unsigned np = lr.np;
    size_t maxb = grid[np - 1];
    size_t alloc = (maxb + MW_HUGE_ALIGN - 1) & ~(MW_HUGE_ALIGN - 1);
    int huge = 0;
    char *buf = mw_bench_alloc(alloc, &huge);
    if (!buf)
        return -ENOMEM;
    out->huge_pages = huge;
    mw_bench_affinity sv;
    rc = mw_bench_pin_saved(c->cpu, &sv);
    if (rc < 0) {
        mw_bench_free(buf, alloc);
        return rc;
    }
    rc = 0;
    memset(buf, 0, alloc); /* touch every page before timing */
    double hz = mw_bench_tsc_hz(), ovh = mw_bench_timer_overhead();
    for (unsigned pi = 0; pi < np && rc == 0; pi++) {
        double best, cv, lbest = 0, lcv = 0;
        rc = ladder_point(buf, grid[pi] / MW_LINE, 0x10ca0000u + pi, 1, c, ovh, &lbest, &lcv);
        if (rc == 0)
            rc = ladder_point(buf, grid[pi] / MW_LINE, 0x5eed0000u + pi, 0, c, ovh, &best, &cv);
        mw_ladder_point *pt = &out->point[out->npoints++];
        pt->bytes = grid[pi];
        pt->cycles = best;
        pt->ns = best / hz * 1e9;
        pt->cv = cv;
        pt->local_cycles = lbest;
        pt->local_ns = lbest / hz * 1e9;
        pt->local_cv = lcv;
        if (c->progress)
            c->progress(c->user, pi + 1, np);
    }
    lr.buf = buf;
    lr.hz = hz;
    lr.ovh = ovh;
    if (rc == 0)
        rc = ladder_spikes(&lr, out);
    mw_bench_unpin(&sv);
    mw_bench_free(buf, alloc);
    if (rc < 0)
        return rc;
    return ladder_levels(out);
}

/* ------------------------------------------------------ loaded latency */
#define LOADED_BURST 1024u    /* dependent loads per timed burst */
#define LOADED_MAXB (1u << 14) /* bursts per point at most */
#define LOADED_STEADY 0.01

/* Median over bursts of LOADED_BURST dependent loads for `seconds`; short
 * bursts keep a lost time slice to a few of them. v holds LOADED_MAXB. */
static void median_chase(void **p, double seconds, double ovh, double hz, double *v,
                         double *ns_out, double *cyc_out)
{
    enum { BURST = LOADED_BURST, MAXB = LOADED_MAXB };
    unsigned nb = 0;
    uint64_t start = mw_rdtsc();
    uint64_t end = start + (uint64_t)(seconds * hz);
    /* steady: past a sixth of the time, the medians of the two halves of
     * the bursts so far agree within LOADED_STEADY */
    uint64_t early = start + (uint64_t)(seconds * hz / 6);
    while (nb < MAXB && (nb < 5 || mw_rdtsc() < end)) {
        v[nb++] = chase_time(p, BURST, ovh);
        if (nb % 64 == 0 && nb >= 128 && mw_rdtsc() >= early) {
            double a = median_of(v, nb / 2), b = median_of(v + nb / 2, nb - nb / 2);
            if (fabs(a - b) <= LOADED_STEADY * fmin(a, b))
                break;
        }
    }
    double med = median_of(v, nb);
    *cyc_out = med;
    *ns_out = med / hz * 1e9;
}

MW_API int mw_bench_loaded_latency(const mw_loaded_config *cfg, mw_loaded_result *out)
{
    memset(out, 0, sizeof *out);
    mw_loaded_config c = cfg ? *cfg : (mw_loaded_config){0};
    int cpus[MW_BENCH_MAX_CPUS];
    int ncpus = mw_bench_cpus(cpus, MW_BENCH_MAX_CPUS);
    if (ncpus <= 0)
        return ncpus < 0 ? ncpus : -ENODEV;
    if (ncpus < 2) {
        mw_log(MW_LOG_ERROR, "loaded latency needs at least two CPUs (one chases, the others "
                             "load memory); this process may use one");
        return MW_ERR_UNSUPPORTED;
    }
    if (!c.load_threads || c.load_threads > (unsigned)ncpus - 1)
        c.load_threads = (unsigned)ncpus - 1;
    if (!c.max_delay)
        c.max_delay = 4096;
    if (!(c.duration_s > 0))
        c.duration_s = 0.3;
    if (!c.chase_bytes)
        c.chase_bytes = mw_bench_big_bytes();
    size_t alloc = (c.chase_bytes + MW_HUGE_ALIGN - 1) & ~(MW_HUGE_ALIGN - 1);
    char *buf = mw_bench_alloc(alloc, NULL);
    double *bursts = malloc(LOADED_MAXB * sizeof *bursts);
    if (!buf || !bursts) {
        free(bursts);
        mw_bench_free(buf, alloc);
        return -ENOMEM;
    }
    int rc;
    mw_bench_affinity sv;
    mw_read_load *l = NULL;
    unsigned delays[MW_SWEEP_MAX_DELAYS];
    unsigned nd = mw_read_sweep_delay_grid(c.max_delay, delays, MW_SWEEP_MAX_DELAYS);
    rc = mw_bench_pin_saved(cpus[0], &sv);
    if (rc < 0)
        goto out;
    out->chase_cpu = (unsigned)cpus[0];
    out->load_threads = c.load_threads;
    void *p = mw_chase_build(buf, alloc / MW_LINE, 0x10adedu);
    if (!p) {
        rc = -ENOMEM;
        goto out_unpin;
    }
    mw_read_load_config lc = {.threads = c.load_threads,
                              .cpus = cpus + 1,
                              .ncpus = (unsigned)ncpus - 1,
                              .mix = c.mix};
    rc = mw_read_load_create(&lc, &l);
    if (rc < 0)
        goto out_unpin;
    double hz = mw_bench_tsc_hz(), ovh = mw_bench_timer_overhead();
    double cyc;
    p = mw_chase(p, (uint64_t)1 << 16);
    median_chase(&p, c.duration_s, ovh, hz, bursts, &out->idle_ns, &cyc);
    unsigned total = nd, done = 0;
    for (unsigned di = 0; di < nd; di++) {
        mw_loaded_point *pt = &out->point[out->npoints];
        rc = mw_read_load_start(l, delays[di]);
        if (rc < 0)
            break;
        median_chase(&p, c.duration_s, ovh, hz, bursts, &pt->ns, &pt->cycles);
        mw_sweep_point sp;
        rc = mw_read_load_stop(l, &sp);
        if (rc < 0)
            break;
        pt->delay = delays[di];
        pt->bw = sp.bw;
        out->npoints++;
        if (c.progress)
            c.progress(c.user, ++done, total);
    }
    mw_read_load_destroy(l);
out_unpin:
    mw_bench_unpin(&sv);
out:
    free(bursts);
    mw_bench_free(buf, alloc);
    return rc < 0 ? rc : 0;
}

/* ---------------------------------------------------------------- MLP */
#define MLP_CHUNK 512u
#define MLP_MAX_CHUNKS 4096u

static inline __attribute__((always_inline)) void mlp_run(void **p, unsigned k, uint64_t steps)
{
    void *q[MW_MLP_MAX_CHAINS];
    for (unsigned j = 0; j < k; j++)
        q[j] = p[j];
    for (uint64_t s = 0; s < steps; s++) {
#pragma GCC unroll 64
        for (unsigned j = 0; j < k; j++)
            q[j] = *(void **)q[j];
    }
    for (unsigned j = 0; j < k; j++)
        p[j] = q[j];
}

static void mlp_dispatch(void **p, unsigned k, uint64_t steps)
{
    switch (k) {
#define C(K)                                                                                   \
    case K:                                                                                    \
        mlp_run(p, K, steps);                                                                  \
        break;
        C(1) C(2) C(3) C(4) C(5) C(6) C(7) C(8) C(9) C(10) C(11) C(12) C(13) C(14) C(15) C(16)
        C(17) C(18) C(19) C(20) C(21) C(22) C(23) C(24) C(25) C(26) C(27) C(28) C(29) C(30)
        C(31) C(32) C(33) C(34) C(35) C(36) C(37) C(38) C(39) C(40) C(41) C(42) C(43) C(44)
        C(45) C(46) C(47) C(48) C(49) C(50) C(51) C(52) C(53) C(54) C(55) C(56) C(57) C(58)
        C(59) C(60) C(61) C(62) C(63) C(64)
#undef C
    default:
        break;
    }
}

MW_API int mw_mlp_analyse(mw_mlp_result *r)
{
    if (!r->n || r->n > MW_MLP_MAX_CHAINS || !(r->ns_per_load[0] > 0))
        return -EINVAL;
    r->max_parallelism = 0;
    for (unsigned i = 0; i < r->n; i++) {
        r->parallelism[i] = r->ns_per_load[i] > 0 ? r->ns_per_load[0] / r->ns_per_load[i] : 0;
        if (r->parallelism[i] > r->max_parallelism)
            r->max_parallelism = r->parallelism[i];
    }
    r->saturation_k = r->n;
    for (unsigned i = 0; i < r->n; i++)
        if (r->parallelism[i] >= 0.95 * r->max_parallelism) {
            r->saturation_k = i + 1;
            break;
        }
    r->outstanding = r->max_parallelism;
    /* flattened: the last quarter of k adds less than 5 % */
    unsigned q = (3 * r->n + 3) / 4;
    r->saturated = r->n >= 4 && r->parallelism[r->n - 1] < 1.05 * r->parallelism[q - 1];
    return 0;
}

MW_API int mw_bench_mlp(const mw_mlp_config *cfg, mw_mlp_result *out)
{
    memset(out, 0, sizeof *out);
    mw_mlp_config c = cfg ? *cfg : (mw_mlp_config){.cpu = -1};
    if (!cfg)
        c.cpu = -1;
    if (!c.max_chains)
        c.max_chains = 32;
    if (c.max_chains > MW_MLP_MAX_CHAINS)
        return MW_ERR_TOOBIG;
    if (!c.bytes)
        c.bytes = mw_bench_llc_times(c.llc_times ? c.llc_times : 4);
    if (!c.loads)
        c.loads = (uint64_t)1 << 19;
    size_t alloc = (c.bytes + MW_HUGE_ALIGN - 1) & ~(MW_HUGE_ALIGN - 1);
    size_t lines = alloc / MW_LINE;
    char *buf = mw_bench_alloc(alloc, NULL);
    uint32_t *order = malloc(lines * sizeof *order);
    int rc = 0;
    mw_bench_affinity sv;
    if (!buf || !order) {
        rc = -ENOMEM;
        goto out;
    }
    rc = mw_bench_pin_saved(c.cpu, &sv);
    if (rc < 0)
        goto out;
    rc = 0;
    /* A random cycle whose visiting order is known: shuffle, then link
     * order[i] -> order[i+1]. Chain j of k starts at order[j * lines / k], so
     * chains stay lines/k apart along the cycle and never share lines. */
    for (size_t i = 0; i < lines; i++)
        order[i] = (uint32_t)i;
    uint64_t s = 0x3a11e1u;
    for (size_t i = lines - 1; i > 0; i--) {
        size_t j = (size_t)(mw_rng_next(&s) % (i + 1));
        uint32_t t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    /* Links are written with non-temporal stores where the CPU has them, so
     * building the cycle leaves none of its lines in the caches. */
    for (size_t i = 0; i < lines; i++) {
        void **dst = (void **)(buf + (size_t)order[i] * MW_LINE);
        void *val = buf + (size_t)order[(i + 1) % lines] * MW_LINE;
#if defined(__x86_64__)
        __builtin_ia32_movnti64((long long *)dst, (long long)(intptr_t)val);
#else
        *dst = val;
#endif
    }
#if defined(__x86_64__)
    __builtin_ia32_sfence();
#endif
    double hz = mw_bench_tsc_hz(), ovh = mw_bench_timer_overhead();
    /* Every k walks its own region of the cycle, so no run finds lines that
     * an earlier run left in the caches. The run is timed in chunks of
     * MLP_CHUNK steps of every chain and the median chunk counts, so a time
     * slice lost to another process does not (draining the misses in flight
     * at each chunk's end costs one latency in MLP_CHUNK). */
    uint64_t region = lines / c.max_chains;
    if (region > c.loads)
        region = c.loads;
    for (unsigned k = 1; k <= c.max_chains; k++) {
        void *p[MW_MLP_MAX_CHAINS];
        size_t base = (size_t)(k - 1) * (lines / c.max_chains);
        uint64_t steps = region / k - 1;
        for (unsigned j = 0; j < k; j++)
            p[j] = buf + (size_t)order[base + (size_t)j * (region / k)] * MW_LINE;
        double v[MLP_MAX_CHUNKS];
        unsigned nv = 0;
        for (uint64_t done = 0; done < steps && nv < MLP_MAX_CHUNKS;) {
            uint64_t n = steps - done < MLP_CHUNK ? steps - done : MLP_CHUNK;
            if (nv && n < MLP_CHUNK / 2)
                break; /* a short tail would weigh the drain too much */
            uint64_t t0 = mw_tsc_start();
            mlp_dispatch(p, k, n);
            uint64_t t1 = mw_tsc_end();
            v[nv++] = ((double)(t1 - t0) - ovh) / hz * 1e9 / (double)(n * k);
            done += n;
        }
        chase_sink = p[0];
        double best = median_of(v, nv);
        out->ns_per_load[k - 1] = best;
        out->n = k;
        if (c.progress)
            c.progress(c.user, k, c.max_chains);
    }
    mw_bench_unpin(&sv);
    rc = mw_mlp_analyse(out);
out:
    free(order);
    mw_bench_free(buf, alloc);
    return rc;
}
