/*
 * calibrate/validate.c: the validation run (validate.h, mw_validate_run) and
 * its readable table (mw_validate_write_table).
 *
 * What it does: asks the counters core (probe.h) which methods exist and can
 * run here; measures probe_lat on one CPU while the read load of bench.h runs
 * on the others at every point of the read-sweep grid (plus an idle point);
 * measures every available bandwidth method against the read load's exact
 * volume (calibrate/validate_bw.c), with prefetchers off and on where the
 * prefetcher MSR can be switched (msr.h); computes verdicts and thresholds
 * (verdict.c, threshold.c); fills the profile that profile_write.c writes.
 *
 * May call: bench.h, probe.h, probe_lat.h, msr.h, libc. Threading: run from
 * one thread; it pins the calling thread to the probe's CPU for the duration
 * and restores its affinity; the read load's threads are started and joined
 * by bench.h. Prints nothing except in mw_validate_write_table.
 */
#include <memwatch/bench.h>
#include <memwatch/catalogue.h>
#include <memwatch/probe.h>
#include <memwatch/probe_lat.h>
#include <memwatch/validate.h>

#include "bench_int.h"
#include "validate_int.h"

#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tsc.h"

static void val_sleep_ns(uint64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

/* Take probe readings for `seconds`, spread evenly (like a profiler's interval
 * ticks: calibrate's default point length makes the spacing the profiler's
 * default 10 ms interval), into pt->ns; also collects each measurement's cost.
 * Before the first kept reading the load gets VAL_SETTLE_NS to settle (its
 * first tens of ms run hotter than its steady state), and the probe is read at
 * the same spacing for one window (mw_probe_lat_window_ns), so every
 * kept reading pools only bursts taken at this point, as a profiler's reading
 * does once a phase has lasted a window. */
#define VAL_SETTLE_NS 50000000ull
/* Steady: after min_n readings, the median's standard error (1.25 sd /
 * sqrt(n), as for a normal sample) is at most se of the median. */
static int val_steady(const double *ns, unsigned n, unsigned min_n, double se)
{
    if (se <= 0 || n < min_n || n < 2)
        return 0;
    double mean, sd;
    mw_val_mean_sd(ns, n, &mean, &sd);
    double med = mw_val_median(ns, n);
    return med > 0 && 1.25 * sd / sqrt((double)n) <= se * med;
}

static int val_sample(mw_probe_lat *pl, double seconds, mw_val_point *pt, double *costs,
                      unsigned *ncost, unsigned cost_cap, unsigned *bursts, unsigned *lines,
                      unsigned min_n, double se)
{
    uint64_t span = (uint64_t)(seconds * 1e9);
    uint64_t step = span / MW_VAL_MAX_SAMPLES;
    if (!step)
        step = 1;
    val_sleep_ns(VAL_SETTLE_NS);
    mw_probe_lat_reset(pl);
    uint64_t t0 = mw_now_ns();
    uint64_t win = mw_probe_lat_window_ns(NULL);
    uint64_t pre64 = win / step;
    unsigned pre = pre64 > 4096 ? 4096 : (unsigned)pre64;
    pt->n = 0;
    for (unsigned i = 0; i < pre + MW_VAL_MAX_SAMPLES; i++) {
        mw_probe_lat_result r;
        int rc = mw_probe_lat_measure(pl, &r);
        if (rc < 0)
            return rc;
        if (i >= pre) {
            pt->ns[pt->n++] = r.median_ns;
            if (*ncost < cost_cap)
                costs[(*ncost)++] = (double)r.cost_ns;
            *bursts = r.bursts;
            *lines = r.lines;
            if (val_steady(pt->ns, pt->n, min_n, se))
                break;
        }
        uint64_t next = t0 + (i + 1) * step, now = mw_now_ns();
        if (next > now)
            val_sleep_ns(next - now);
    }
    return 0;
}

/* Copy a string into a field, cut to fit (the compiler cannot prove that
 * snprintf's source and destination, both inside *out, do not overlap). */
static void val_copy(char *dst, size_t n, const char *src)
{
    size_t len = strnlen(src, n - 1);
    memmove(dst, src, len);
    dst[len] = 0;
}

/* The software probe (the catalogue says which method that is). */
static int val_is_probe(const char *name)
{
    return mw_method_is(name, MW_Q_LATENCY, MW_HOW_PROBE);
}

static void val_iso_time(char *buf, size_t n)
{
    time_t t = time(NULL);
    struct tm tm;
    if (gmtime_r(&t, &tm))
        strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
    else
        snprintf(buf, n, "unknown");
}

static mw_val_method *val_method_add(mw_validation *v, const char *name, int latency)
{
    for (unsigned i = 0; i < v->nmethods; i++)
        if (!strcmp(v->method[i].name, name))
            return &v->method[i];
    if (v->nmethods == MW_PROFILE_MAX_METHODS)
        return NULL;
    mw_val_method *m = &v->method[v->nmethods++];
    memset(m, 0, sizeof *m);
    snprintf(m->name, sizeof m->name, "%s", name);
    m->latency = latency;
    return m;
}

/* The probe_lat part's shared state: the probe, its grids, the cost sample,
 * the progress count and the remeasuring tallies. */
enum { VAL_COST_CAP = 4096 };
typedef struct {
    const mw_validate_config *cfg;
    const mw_calib_results *calib;
    mw_validation *v;
    mw_probe_lat *pl;
    double point_s, se;
    unsigned min_n;
    unsigned tgrid[MW_SWEEP_MAX_THREADS], dgrid[MW_SWEEP_MAX_DELAYS], mgrid[MW_SWEEP_MAX_DELAYS];
    unsigned nt, nd, nmd, nmix, mixes;
    const int *lcpus; /* the read load's CPUs */
    unsigned nl;
    double *costs;
    unsigned ncost;
    unsigned used_bursts, used_lines;
    unsigned done, total;
    double idle_spread;
    unsigned remeasured, retries, still;
} val_lat_ctx;

/* Sets the point length, the sample rule and the (threads, delay) and mix grids. */
static void val_lat_grids(val_lat_ctx *c, int ncpus)
{
    const mw_validate_config *cfg = c->cfg;
    c->point_s = cfg->point_s > 0 ? cfg->point_s : 0.48;
    unsigned max_threads = cfg->max_threads;
    if (!max_threads)
        max_threads = ncpus > 1 ? (unsigned)ncpus - 1 : 1;
    c->v->load_threads_max = max_threads;
    c->nt = mw_read_sweep_thread_grid(max_threads, c->tgrid, MW_SWEEP_MAX_THREADS);
    unsigned max_delay = cfg->max_delay ? cfg->max_delay : 1024;
    unsigned gs = cfg->grid_stride > 1 ? cfg->grid_stride : 1;
    c->nd = gs > 1 ? mw_val_mix_delay_grid(max_delay, gs, c->dgrid, MW_SWEEP_MAX_DELAYS)
                   : mw_read_sweep_delay_grid(max_delay, c->dgrid, MW_SWEEP_MAX_DELAYS);
    if (gs > 1)
        c->nt = mw_val_thread_subset(c->tgrid, c->nt);
    c->min_n = cfg->min_samples ? cfg->min_samples : 16;
    c->se = cfg->se_target == 0 ? 0.01 : cfg->se_target;
    c->nmd = 0;
    c->nmix = 0;
    c->mixes = cfg->mixes & ((1u << MW_MIX_COUNT) - 1) & ~1u;
    if (c->mixes) {
        c->nmd = mw_val_mix_delay_grid(max_delay, gs > 1 ? gs + 1 : 2, c->mgrid,
                                       MW_SWEEP_MAX_DELAYS);
        c->nmix = (unsigned)__builtin_popcount(c->mixes);
    }
    c->total = 1 + c->nt * c->nd + c->nmix * c->nmd;
    c->done = 0;
}

/* One point measured while the load l runs at delay: the probe's readings
 * into pt, the load's own counts into sp. 0 or negative. */
static int val_loaded_point(val_lat_ctx *c, mw_read_load *l, unsigned delay, mw_val_point *pt,
                            mw_sweep_point *sp)
{
    int rc = mw_read_load_start(l, delay);
    if (rc < 0)
        return rc;
    rc = val_sample(c->pl, c->point_s, pt, c->costs, &c->ncost, VAL_COST_CAP, &c->used_bursts,
                    &c->used_lines, c->min_n, c->se);
    int src = mw_read_load_stop(l, sp);
    return rc ? rc : src;
}

/* The reads-only sweep: every (threads, delay) point of the grid, a disturbed
 * point measured again. */
static int val_lat_sweep(val_lat_ctx *c)
{
    const mw_validate_config *cfg = c->cfg;
    const mw_calib_results *calib = c->calib;
    mw_validation *v = c->v;
    mw_val_point *pt;
    int rc = 0;
    for (unsigned ti = 0; ti < c->nt && !rc; ti++) {
        mw_read_load_config lc = {.threads = c->tgrid[ti], .cpus = c->lcpus, .ncpus = c->nl};
        mw_read_load *l = NULL;
        rc = mw_read_load_create(&lc, &l);
        if (rc < 0)
            break;
        for (unsigned di = 0; di < c->nd && !rc && v->npoints < MW_VAL_MAX_POINTS; di++) {
            pt = &v->point[v->npoints];
            memset(pt, 0, sizeof *pt);
            pt->threads = c->tgrid[ti];
            pt->delay = c->dgrid[di];
            /* a point whose readings spread far more than the idle point's
             * was disturbed by a load this run did not start: measured again,
             * the last attempt kept (validate_int.h) */
            mw_sweep_point sp;
            for (unsigned att = 0; att <= MW_VAL_RETRIES && !rc; att++) {
                if (att) {
                    pt->n = 0;
                    c->remeasured += att == 1;
                    c->retries++;
                }
                rc = val_loaded_point(c, l, c->dgrid[di], pt, &sp);
                if (rc < 0 || !mw_val_point_disturbed(pt->ns, pt->n, c->idle_spread))
                    break;
                if (att == MW_VAL_RETRIES)
                    c->still++;
            }
            if (rc < 0)
                break;
            pt->bw = sp.bw;
            if (calib && (calib->ran & MW_CALIB_LOADED) &&
                calib->loaded.load_threads == pt->threads)
                for (unsigned k = 0; k < calib->loaded.npoints && k < MW_SWEEP_MAX_DELAYS; k++)
                    if (calib->loaded.point[k].delay == pt->delay)
                        pt->direct_ns = calib->loaded.point[k].ns;
            v->npoints++;
            if (cfg->progress)
                cfg->progress(cfg->user, ++c->done, c->total);
        }
        mw_read_load_destroy(l);
    }
    return rc;
}

/* The read/write mixes: the largest thread count over a coarser delay grid. */
static int val_lat_mixes(val_lat_ctx *c)
{
    const mw_validate_config *cfg = c->cfg;
    mw_validation *v = c->v;
    mw_val_point *pt;
    int rc = 0;
    for (unsigned mx = 1; mx < MW_MIX_COUNT && !rc; mx++) {
        if (!(c->mixes & (1u << mx)))
            continue;
        mw_read_load_config lc = {.threads = c->tgrid[c->nt - 1], .cpus = c->lcpus,
                                  .ncpus = c->nl, .mix = (mw_read_mix)mx};
        mw_read_load *l = NULL;
        int lrc = mw_read_load_create(&lc, &l);
        if (lrc < 0) { /* e.g. no non-temporal store: the other mixes go on */
            c->done += c->nmd;
            continue;
        }
        mw_val_mix *vm = &v->mix[v->nmix];
        vm->mix = (int)mx;
        vm->read_share = mw_mix_read_share((mw_read_mix)mx);
        vm->first = v->npoints;
        for (unsigned di = 0; di < c->nmd && !rc && v->npoints < MW_VAL_MAX_POINTS; di++) {
            pt = &v->point[v->npoints];
            memset(pt, 0, sizeof *pt);
            pt->threads = lc.threads;
            pt->delay = c->mgrid[di];
            pt->mix = (int)mx;
            mw_sweep_point sp;
            if ((rc = val_loaded_point(c, l, c->mgrid[di], pt, &sp)) < 0)
                break;
            pt->bw = sp.bw;
            double win = sp.bytes > 0 ? sp.bw / sp.bytes : 0;
            pt->read_bw = sp.read_bytes * win;
            pt->write_bw = sp.write_bytes * win;
            v->npoints++;
            vm->n++;
            if (cfg->progress)
                cfg->progress(cfg->user, ++c->done, c->total);
        }
        mw_read_load_destroy(l);
        if (vm->n)
            v->nmix++;
    }
    return rc;
}

/* The verdict on the reads-only curve (its first n100 points), each mix's
 * threshold, and the method's reason with the remeasuring tallies. */
static int val_lat_verdicts(val_lat_ctx *c, unsigned n100, mw_val_method *m)
{
    mw_validation *v = c->v;
    int rc;
    mw_lat_point *lp = calloc(v->npoints, sizeof *lp);
    if (!lp)
        return -ENOMEM;
    for (unsigned i = 0; i < v->npoints; i++)
        lp[i] = (mw_lat_point){.bw = v->point[i].bw, .direct_ns = v->point[i].direct_ns,
                               .n = v->point[i].n, .ns = v->point[i].ns};
    rc = mw_verdict_lat(lp, n100, &v->rules, &m->lat);
    /* each mix's curve: the idle point and its own points, the same rule */
    for (unsigned k = 0; k < v->nmix && rc == 0; k++) {
        mw_val_mix *vm = &v->mix[k];
        mw_lat_point *mp = calloc(vm->n + 1, sizeof *mp);
        if (!mp) {
            rc = -ENOMEM;
            break;
        }
        mp[0] = lp[0];
        memcpy(mp + 1, lp + vm->first, vm->n * sizeof *mp);
        rc = mw_threshold_compute(mp, vm->n + 1, &v->rules, &vm->th);
        free(mp);
    }
    free(lp);
    if (rc < 0)
        return rc;
    m->available = 1;
    if (c->remeasured) {
        char buf[1024];
        snprintf(buf, sizeof buf, "%s; %u/%u points measured again (%u tries; %u still "
                                  "disturbed): spread > %.0fx idle's %.0f %%, outside load",
                 m->lat.reason, c->remeasured, v->npoints - 1, c->retries, c->still,
                 MW_VAL_DISTURBED_FACTOR, 100 * c->idle_spread);
        val_copy(m->reason, sizeof m->reason, buf);
    } else {
        val_copy(m->reason, sizeof m->reason, m->lat.reason);
    }
    return 0;
}

/* The probe_lat part: idle point, then every (threads, delay) of the grid. */
static int val_probe_lat(const mw_validate_config *cfg, const mw_calib_results *calib,
                         const int *cpus, int ncpus, mw_validation *v, mw_val_method *m)
{
    val_lat_ctx c = {.cfg = cfg, .calib = calib, .v = v};
    /* Validate the probe exactly as the profiler will run it: created with
     * the defaults, which the same variables fill in both (probe_lat.h:
     * MEMWATCH_PROBE_LINES, _BURSTS, _WINDOW, _LAYOUT). */
    mw_probe_lat_config pc = {0};
    int rc = mw_probe_lat_create(&pc, &c.pl);
    if (rc < 0) {
        m->available = 0;
        snprintf(m->reason, sizeof m->reason, "the software probe cannot run here: %s",
                 rc == MW_ERR_UNSUPPORTED ? "this CPU lacks a cache-line flush or a TSC"
                                          : mw_strerror(rc));
        return 0;
    }
    val_lat_grids(&c, ncpus);
    double t_start = (double)mw_now_ns() / 1e9;
    c.costs = malloc(VAL_COST_CAP * sizeof *c.costs);
    c.ncost = 0;
    if (!c.costs) {
        mw_probe_lat_destroy(c.pl);
        return -ENOMEM;
    }
    /* the load runs on the CPUs after the probe's (all of them when there is one) */
    c.lcpus = ncpus > 1 ? cpus + 1 : cpus;
    c.nl = ncpus > 1 ? (unsigned)ncpus - 1 : 1;

    mw_val_point *pt = &v->point[v->npoints++];
    memset(pt, 0, sizeof *pt);
    c.used_bursts = 0;
    c.used_lines = 0;
    /* the idle point is every mix's reference: all its readings */
    rc = val_sample(c.pl, c.point_s, pt, c.costs, &c.ncost, VAL_COST_CAP, &c.used_bursts,
                    &c.used_lines, 0, -1);
    if (calib && (calib->ran & MW_CALIB_LOADED))
        pt->direct_ns = calib->loaded.idle_ns;
    c.idle_spread = mw_val_rel_spread(pt->ns, pt->n);
    c.remeasured = c.retries = c.still = 0;
    if (cfg->progress)
        cfg->progress(cfg->user, ++c.done, c.total);
    if (!rc)
        rc = val_lat_sweep(&c);
    unsigned n100 = v->npoints;
    double t_mid = (double)mw_now_ns() / 1e9;
    if (!rc)
        rc = val_lat_mixes(&c);
    v->part_s[0] = t_mid - t_start;
    v->part_s[1] = (double)mw_now_ns() / 1e9 - t_mid;
    v->probe_cost_ns = c.ncost ? mw_val_median_inplace(c.costs, c.ncost) : 0;
    free(c.costs);
    v->probe_lines = c.used_lines;
    v->probe_bursts = c.used_bursts;
    mw_probe_lat_destroy(c.pl);
    if (rc < 0) {
        m->available = 0;
        snprintf(m->reason, sizeof m->reason, "the read load failed: %s", mw_strerror(rc));
        return rc;
    }
    return val_lat_verdicts(&c, n100, m);
}

/* The reads100 curve for levels (profile "curve"): point medians ordered by
 * bandwidth, latency made non-decreasing (a running maximum: the profiler
 * reads bandwidth back from latency), thinned evenly to the profile's cap. */
static void val_fill_curve(const mw_validation *v, mw_profile *p)
{
    double bw[MW_VAL_MAX_POINTS], ns[MW_VAL_MAX_POINTS];
    unsigned k = 0;
    for (unsigned i = 0; i < v->npoints; i++) {
        const mw_val_point *pt = &v->point[i];
        if (pt->mix || !pt->n || !isfinite(pt->bw))
            continue;
        double m = mw_val_median(pt->ns, pt->n);
        if (!isfinite(m) || !(m > 0))
            continue;
        unsigned j = k++;
        for (; j > 0 && bw[j - 1] > pt->bw; j--) {
            bw[j] = bw[j - 1];
            ns[j] = ns[j - 1];
        }
        bw[j] = pt->bw;
        ns[j] = m;
    }
    for (unsigned i = 1; i < k; i++)
        ns[i] = fmax(ns[i], ns[i - 1]);
    p->n_curve = 0;
    for (unsigned i = 0; i < k && p->n_curve < MW_PROFILE_MAX_CURVE; i++) {
        /* keep the first and last and evenly spaced ones between */
        unsigned want = k <= MW_PROFILE_MAX_CURVE
                            ? i
                            : (unsigned)((double)p->n_curve * (k - 1) / (MW_PROFILE_MAX_CURVE - 1) + 0.5);
        if (want != i)
            continue;
        p->curve[p->n_curve].bw = bw[i];
        p->curve[p->n_curve++].ns = ns[i];
    }
}

/* Saturable, the band, the threshold's origin and note (docs/saturation.md):
 * the load shapes' threshold for probe_lat where they ran, also where the
 * sweep judged probe_lat noisy (the shapes measure what the profiler
 * meets); the reason wherever the profile ends without a latency method. */
static void val_fill_claims(mw_validation *v, const mw_val_method *lat)
{
    mw_profile *p = &v->profile;
    const mw_val_method *probe = NULL;
    for (unsigned i = 0; i < v->nmethods; i++)
        if (val_is_probe(v->method[i].name) && v->method[i].available)
            probe = &v->method[i];
    val_fill_curve(v, p);
    p->saturable = !lat ? MW_SAT_UNKNOWN : lat->lat.th.saturated ? MW_SAT_YES : MW_SAT_NO;
    const mw_shapes_threshold *sh = &v->shapes;
    int shapes_ok = v->nshapes && sh->idle_ns > 0 && sh->threshold_ns > 0;
    if (probe && shapes_ok && (!lat || lat == probe)) {
        if (!lat) {
            char buf[640];
            snprintf(buf, sizeof buf,
                     "probe_lat judged %s on the read sweep (%.120s); the threshold is placed on "
                     "the load shapes, which measure what the profiler meets",
                     mw_verdict_name(probe->lat.verdict), probe->reason);
            val_copy(p->threshold_note, sizeof p->threshold_note, buf);
            val_copy(p->lat_method, sizeof p->lat_method, probe->name);
        }
        /* with both classes placed: the read-only one for every program,
         * the writes' for one whose sampled loops write (memwatch report) */
        const mw_shapes_threshold *w = &v->shapes_writes, *r = &v->shapes_reads;
        int classes = mw_val_shape_classes(v);
        p->lat_threshold_ns = classes ? r->threshold_ns : sh->threshold_ns;
        p->from_shapes = 1;
        p->saturable = sh->saturated ? MW_SAT_YES : MW_SAT_NO;
        if (sh->saturated) {
            p->band_lo_ns = classes ? r->band_lo : sh->band_lo;
            p->band_hi_ns = classes ? r->band_hi : sh->band_hi;
        }
        if (classes) {
            p->writes_threshold_ns = w->threshold_ns;
            p->writes_band_lo_ns = w->band_lo;
            p->writes_band_hi_ns = w->band_hi;
        }
        if (sh->idle_ns > 0 && !(p->idle_latency_ns > 0))
            p->idle_latency_ns = sh->idle_ns;
        if (v->shape_disturbed && !p->threshold_note[0])
            val_copy(p->threshold_note, sizeof p->threshold_note, v->shape_note);
        return;
    }
    if (lat)
        return;
    char buf[640];
    if (probe)
        snprintf(buf, sizeof buf,
                 "no latency method validated: probe_lat judged %s (%.120s)%s%s",
                 mw_verdict_name(probe->lat.verdict), probe->reason,
                 v->shape_note[0] ? "; " : "", v->shape_note);
    else
        snprintf(buf, sizeof buf, "no latency method could be measured here%s%s",
                 v->shape_note[0] ? ": " : "", v->shape_note);
    val_copy(p->threshold_note, sizeof p->threshold_note, buf);
}

static void val_fill_profile(mw_validation *v, const mw_calib_results *calib)
{
    mw_profile *p = &v->profile;
    memset(p, 0, sizeof *p);
    p->version = MW_PROFILE_VERSION;
    if (mw_machine_identity(NULL, NULL, p->identity, sizeof p->identity) < 0)
        snprintf(p->identity, sizeof p->identity, "unknown");
    val_iso_time(p->created, sizeof p->created);
    p->tsc_hz = mw_tsc_hz(NULL);
    p->bw_factor = 1.0;
    double peak = 0;
    for (unsigned i = 0; i < v->npoints; i++)
        if (!v->point[i].mix)
            peak = fmax(peak, v->point[i].bw);
    if (calib && (calib->ran & MW_CALIB_TRIAD))
        peak = fmax(peak, fmax(calib->triad[MW_TRIAD_NORMAL].bw_stats.best,
                               calib->triad[MW_TRIAD_NT].bw_stats.best));
    if (calib && (calib->ran & MW_CALIB_SWEEP))
        peak = fmax(peak, calib->sweep.peak_bw);
    p->peak_bw = isfinite(peak) ? peak : 0;
    /* the latency method: accurate ones, probe_lat last (hardware first) */
    const mw_val_method *lat = NULL, *bw = NULL;
    for (unsigned i = 0; i < v->nmethods; i++) {
        const mw_val_method *m = &v->method[i];
        if (!m->available)
            continue;
        if (m->latency && m->lat.verdict == MW_VERDICT_ACCURATE &&
            (!lat || val_is_probe(lat->name)))
            lat = m;
        if (!m->latency && (m->bw.verdict == MW_VERDICT_ACCURATE ||
                            m->bw.verdict == MW_VERDICT_BIASED) &&
            (!bw || (bw->bw.verdict == MW_VERDICT_BIASED &&
                     m->bw.verdict == MW_VERDICT_ACCURATE)))
            bw = m;
    }
    if (lat) {
        val_copy(p->lat_method, sizeof p->lat_method, lat->name);
        p->lat_threshold_ns = lat->lat.th.threshold_ns;
    }
    /* idle latency in ns: probe_lat's idle point (counting methods read cycles
     * and have no idle point) */
    for (unsigned i = 0; i < v->nmethods; i++)
        if (val_is_probe(v->method[i].name) && v->method[i].available)
            p->idle_latency_ns = v->method[i].lat.th.idle_ns;
    if (!(p->idle_latency_ns > 0) && calib && (calib->ran & MW_CALIB_LADDER))
        p->idle_latency_ns = calib->ladder.dram_ns;
    if (!isfinite(p->idle_latency_ns) || p->idle_latency_ns < 0)
        p->idle_latency_ns = 0;
    if (bw) {
        val_copy(p->bw_method, sizeof p->bw_method, bw->name);
        p->bw_factor = bw->bw.factor;
    }
    /* the mixes' curves: reads100 from the whole grid, then the others */
    for (unsigned i = 0; i < v->nmethods; i++) {
        const mw_val_method *m = &v->method[i];
        if (!mw_method_is(m->name, MW_Q_LATENCY, MW_HOW_PROBE) || !m->available || !(m->lat.th.threshold_ns > 0))
            continue;
        mw_profile_mix *pm = &p->mixes[p->n_mixes++];
        snprintf(pm->name, sizeof pm->name, "%s", mw_mix_name(MW_MIX_R100));
        pm->read_share = 1;
        pm->threshold_ns = m->lat.th.threshold_ns;
        pm->peak_bw = m->lat.th.peak_bw;
        pm->peak_ns = m->lat.th.peak_ns;
        pm->saturated = m->lat.th.saturated;
        for (unsigned k = 0; k < v->nmix && p->n_mixes < MW_PROFILE_MAX_MIXES; k++) {
            const mw_val_mix *vm = &v->mix[k];
            if (!(vm->th.threshold_ns > 0) || !isfinite(vm->th.threshold_ns))
                continue;
            pm = &p->mixes[p->n_mixes++];
            snprintf(pm->name, sizeof pm->name, "%s", mw_mix_name((mw_read_mix)vm->mix));
            pm->read_share = vm->read_share;
            pm->nontemporal = mw_mix_nontemporal((mw_read_mix)vm->mix);
            pm->threshold_ns = vm->th.threshold_ns;
            pm->peak_bw = isfinite(vm->th.peak_bw) ? vm->th.peak_bw : 0;
            pm->peak_ns = isfinite(vm->th.peak_ns) ? vm->th.peak_ns : 0;
            pm->saturated = vm->th.saturated;
        }
    }
    for (unsigned i = 0; i < v->nmethods && p->n_methods < MW_PROFILE_MAX_METHODS; i++) {
        const mw_val_method *m = &v->method[i];
        mw_profile_method *pm = &p->methods[p->n_methods++];
        val_copy(pm->name, sizeof pm->name, m->name);
        pm->factor = 1.0;
        mw_verdict vd = !m->available ? MW_VERDICT_UNAVAILABLE
                        : m->latency  ? m->lat.verdict
                                      : m->bw.verdict;
        snprintf(pm->verdict, sizeof pm->verdict, "%s", mw_verdict_name(vd));
        pm->vd = vd;
        val_copy(pm->reason, sizeof pm->reason, m->reason);
        if (m->available && m->latency && vd != MW_VERDICT_UNAVAILABLE) {
            pm->cv = m->lat.cv;
            pm->false_pos = m->lat.false_pos;
            pm->false_neg = m->lat.false_neg;
            pm->threshold = m->lat.th.threshold_ns;
        } else if (m->available && vd != MW_VERDICT_UNAVAILABLE) {
            pm->cv = isfinite(m->bw.cv) ? m->bw.cv : 0;
            pm->factor = m->bw.factor;
        }
    }
    val_fill_claims(v, lat);
}

/* The load shapes, measured again once where the probe's idle reading is far
 * above the chase's idle latency (another load on the host: the two agree
 * within 10 % on a quiet machine, docs/saturation.md); a second disturbed
 * measurement is kept with the reason and a recalibration hint. */
#define VAL_IDLE_DISTURBED 1.25
static void val_shapes_checked(const mw_validate_config *cfg, const mw_calib_results *calib,
                               unsigned ncpus, mw_validation *v)
{
    double ref = calib && (calib->ran & MW_CALIB_LADDER) ? calib->ladder.dram_ns : 0;
    for (unsigned attempt = 0; attempt < 2; attempt++) {
        unsigned done = 0, per = 14, rounds = cfg->shape_rounds ? cfg->shape_rounds : 1;
        v->shape_note[0] = 0;
        v->shape_disturbed = 0;
        if (mw_val_shapes(cfg, ncpus, v, &done, per * rounds) < 0) {
            if (!v->shape_note[0])
                snprintf(v->shape_note, sizeof v->shape_note, "the load shapes failed");
            return;
        }
        if (!(ref > 0) || !(v->shapes.idle_ns > VAL_IDLE_DISTURBED * ref))
            return;
        snprintf(v->shape_note, sizeof v->shape_note,
                 "the probe read %.1f ns at idle where the chase read %.1f ns: another load on "
                 "this host disturbed the validation%s; calibrate again when the machine is idle",
                 v->shapes.idle_ns, ref, attempt ? " (measured twice)" : "");
        v->shape_disturbed = 1;
    }
}

MW_API int mw_validate_run(const mw_validate_config *cfg_in, const mw_calib_results *calib,
                           mw_validation *out)
{
    if (!out)
        return -EINVAL;
    mw_validate_config cfg = {0};
    if (cfg_in)
        cfg = *cfg_in;
    memset(out, 0, sizeof *out);
    mw_verdict_rules_default(&out->rules);
    out->probe_cpu = -1;

    /* 1. which methods exist and can run here (counters core) */
    mw_probe_opts po = {.sysfs_root = cfg.sys_root, .proc_root = cfg.proc_root,
                        .dev_root = cfg.dev_root};
    mw_probe *pr = NULL;
    int rc = mw_probe_run(&po, &pr);
    if (rc < 0) {
        snprintf(out->hw_note, sizeof out->hw_note, "the machine could not be probed: %s",
                 mw_strerror(rc));
    } else {
        snprintf(out->hw_note, sizeof out->hw_note, "%s", pr->summary);
        for (size_t i = 0; i < pr->n_methods; i++) {
            const mw_method_avail *a = &pr->methods[i];
            int latency = a->def ? a->def->quantity == MW_Q_LATENCY : 0;
            mw_val_method *m = val_method_add(out, a->name, latency);
            if (!m)
                break;
            m->available = a->available;
            snprintf(m->reason, sizeof m->reason, "%s", a->reason);
        }
        snprintf(out->prefetch_note, sizeof out->prefetch_note,
                 "prefetchers left as they are: %s",
                 pr->msr.reachable ? "no bandwidth counter to compare with them off"
                                   : pr->msr.reason);
    }
    mw_val_method *plm = val_method_add(out, "probe_lat", 1);

    /* 2. CPUs: the probe on the first, the load on the rest */
    int cpus[MW_BENCH_MAX_CPUS];
    int ncpus = mw_bench_cpus(cpus, MW_BENCH_MAX_CPUS);
    if (ncpus <= 0) {
        rc = ncpus < 0 ? ncpus : MW_ERR_NODATA;
        goto out;
    }
    cpu_set_t saved, one;
    int have_saved = sched_getaffinity(0, sizeof saved, &saved) == 0;
    CPU_ZERO(&one);
    CPU_SET(cpus[0], &one);
    if (sched_setaffinity(0, sizeof one, &one) == 0)
        out->probe_cpu = cpus[0];

    /* 3. probe_lat over the read-sweep grid */
    rc = 0;
    if (plm && (!pr || plm->available || !pr->n_methods)) {
        rc = val_probe_lat(&cfg, calib, cpus, ncpus, out, plm);
    } else if (plm && !plm->available && !plm->reason[0]) {
        snprintf(plm->reason, sizeof plm->reason, "not available here");
    }

    /* 4. bandwidth methods the counters core found usable */
    if (rc == 0 && pr) {
        for (unsigned i = 0; i < out->nmethods; i++) {
            mw_val_method *m = &out->method[i];
            if (m->latency || !m->available)
                continue;
            const mw_method_avail *a = mw_probe_method(pr, m->name);
            int brc = mw_val_bw_method(a ? a->def : NULL, pr, &cfg, cpus, ncpus, out, m);
            if (brc < 0)
                m->available = 0;
        }
        for (unsigned i = 0; i < out->nmethods; i++) {
            mw_val_method *m = &out->method[i];
            if (!m->latency || !m->available || val_is_probe(m->name))
                continue;
            const mw_method_avail *a = mw_probe_method(pr, m->name);
            if (a && a->def && !(a->def->needs & (MW_NEED_PRECISE | MW_NEED_IBS))) {
                if (mw_val_lat_counter_method(a->def, pr, &cfg, cpus, ncpus, out, m) < 0)
                    m->available = 0;
                continue;
            }
            m->available = 0;
            snprintf(m->reason, sizeof m->reason,
                     "available here, but not validated: this version does not validate "
                     "sampled latencies (PEBS, IBS), so the profiler will not use it");
        }
    }
    if (have_saved)
        sched_setaffinity(0, sizeof saved, &saved);
    /* 5. the load shapes, the probe unpinned as the profiler's */
    if (rc == 0 && cfg.shapes_s > 0 && plm && plm->available) {
        val_shapes_checked(&cfg, calib, (unsigned)ncpus, out);
    } else if (cfg.shapes_s > 0) {
        snprintf(out->shape_note, sizeof out->shape_note,
                 "load shapes not measured: %s", rc ? "the validation stopped early"
                                                    : "probe_lat is not available");
    }
out:
    val_fill_profile(out, calib);
    mw_probe_free(pr);
    return rc;
}

MW_API unsigned mw_val_thread_subset(unsigned *t, unsigned n)
{
    if (n < 3)
        return n;
    unsigned k = 0;
    for (unsigned i = 0; i + 1 < n; i += 2)
        t[k++] = t[i];
    if (t[k - 1] != t[n - 1])
        t[k++] = t[n - 1];
    return k;
}

MW_API unsigned mw_val_mix_delay_grid(unsigned max_delay, unsigned stride, unsigned *out,
                                      unsigned cap)
{
    unsigned n = 0;
    if (!cap || !stride || stride > 16)
        return 0;
    out[n++] = 0;
    for (uint64_t d = 1; d <= max_delay && n < cap; d <<= stride)
        out[n++] = (unsigned)d;
    return mw_bench_grid_end(out, n, cap, max_delay);
}

MW_API int mw_validate_write_mix_plot(const mw_validation *v, const char *dir)
{
    if (!v || !dir)
        return -EINVAL;
    if (mkdir(dir, 0700) == 0) /* the owner's only, whatever the umask */
        (void)chmod(dir, 0700);
    else if (errno != EEXIST)
        return -errno;
    static double xs[MW_MIX_COUNT][MW_VAL_MAX_POINTS], ys[MW_MIX_COUNT][MW_VAL_MAX_POINTS];
    mw_plot_series ser[MW_MIX_COUNT];
    double hl[MW_MIX_COUNT];
    const char *hlab[MW_MIX_COUNT];
    static char labs[MW_MIX_COUNT][64];
    unsigned ns = 0;
    for (unsigned mx = 0; mx < MW_MIX_COUNT; mx++) {
        unsigned n = 0;
        for (unsigned i = 0; i < v->npoints && n < MW_VAL_MAX_POINTS; i++) {
            const mw_val_point *p = &v->point[i];
            /* reads100: the largest thread count of the grid, as the mixes */
            int take = i == 0 || (p->mix == (int)mx &&
                                  (mx || p->threads == v->load_threads_max));
            if (!take || !p->n)
                continue;
            xs[ns][n] = p->bw / 1e9;
            ys[ns][n++] = mw_val_median(p->ns, p->n);
        }
        for (unsigned a = 1; a < n; a++) /* by bandwidth */
            for (unsigned b = a; b > 0 && xs[ns][b] < xs[ns][b - 1]; b--) {
                double tx_ = xs[ns][b], ty_ = ys[ns][b];
                xs[ns][b] = xs[ns][b - 1];
                ys[ns][b] = ys[ns][b - 1];
                xs[ns][b - 1] = tx_;
                ys[ns][b - 1] = ty_;
            }
        if (n < 2)
            continue;
        double th = 0;
        if (mx == 0) {
            for (unsigned k = 0; k < v->nmethods; k++)
                if (mw_method_is(v->method[k].name, MW_Q_LATENCY, MW_HOW_PROBE))
                    th = v->method[k].lat.th.threshold_ns;
        } else {
            for (unsigned k = 0; k < v->nmix; k++)
                if (v->mix[k].mix == (int)mx)
                    th = v->mix[k].th.threshold_ns;
        }
        ser[ns] = (mw_plot_series){mw_mix_name((mw_read_mix)mx), xs[ns], ys[ns], n};
        snprintf(labs[ns], sizeof labs[ns], "%s %.0f ns", mw_mix_name((mw_read_mix)mx), th);
        hl[ns] = th;
        hlab[ns] = labs[ns];
        ns++;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/mixes.svg", dir);
    return mw_plot_lines(path, "Loaded latency (probe_lat) per read/write mix, thresholds dashed",
                         "traffic of the load threads, reads + writes (GB/s)",
                         "probe_lat reading, median (ns)", 0, 0, ser, ns, hl, hlab, ns);
}

/* ------------------------------------------------------------------ table */

static const char *val_gbs(double bw, char *buf, size_t n)
{
    snprintf(buf, n, "%.1f GB/s", bw / 1e9);
    return buf;
}

/* The load shapes' table (docs/saturation.md, "Load shapes"). */
static void val_write_shapes(const mw_validation *v, FILE *f)
{
    if (!v->nshapes) {
        if (v->shape_note[0])
            fprintf(f, "\n  load shapes: %s\n", v->shape_note);
        return;
    }
    const mw_shapes_threshold *t = &v->shapes;
    char b1[32];
    fprintf(f, "\n  load shapes (probe_lat unpinned beside the load, as memwatch record reads "
               "it; %u round%s, %.1f s)\n",
            v->shape_rounds, v->shape_rounds == 1 ? "" : "s", v->shape_s);
    fprintf(f, "    %-10s %-10s %4s %4s %12s %6s %5s %8s %8s %8s %8s\n", "load", "class",
            "thr", "proc", "bandwidth", "share", "n", "p5 ns", "p50 ns", "p95 ns", "flagged");
    int classes = mw_val_shape_classes(v);
    for (unsigned i = 0; i < v->nshapes; i++) {
        const struct mw_val_shape *s = &v->shape[i];
        const mw_shape_stat *st = &t->stat[i];
        /* flagged: against the threshold of the shape's class */
        double thr = !classes                     ? t->threshold_ns
                     : mw_val_shape_writes(s->mode) ? v->shapes_writes.threshold_ns
                                                    : v->shapes_reads.threshold_ns;
        unsigned above = 0;
        for (unsigned j = 0; j < s->n; j++)
            above += s->ns[j] > thr;
        double flagged = s->n ? (double)above / s->n : 0;
        char share[16] = "-";
        if (isfinite(st->share))
            snprintf(share, sizeof share, "%.0f%%", 100 * st->share);
        fprintf(f, "    %-10s %-10s %4u %4u %12s %6s %5u %8.1f %8.1f %8.1f %7.1f%%\n", s->name,
                st->cls == MW_SHAPE_SATURATING ? "saturating"
                : st->cls == MW_SHAPE_LIGHT    ? "light"
                                               : "neither",
                s->threads, s->procs, val_gbs(s->bw, b1, sizeof b1), share, s->n, st->p5,
                st->p50, st->p95, 100 * flagged);
    }
    fprintf(f, "    idle %.1f ns, saturating loads %.1f ns (x%.2f): %s\n", t->idle_ns, t->sat_ns,
            t->rise, t->saturated ? "memory saturated" : "memory NOT saturated by these loads");
    if (classes) {
        const mw_shapes_threshold *r = &v->shapes_reads, *w = &v->shapes_writes;
        fprintf(f, "    threshold %.1f ns (band %.1f..%.1f ns), placed on the loads that only read "
                   "with idle and compute: %s; worst shape error %.1f %%\n",
                r->threshold_ns, r->band_lo, r->band_hi, r->rule, 100 * r->worst_rate);
        fprintf(f, "    for programs whose loops write: %.1f ns (band %.1f..%.1f ns), placed on "
                   "copy, triad and non-temporal with idle and compute: %s; worst shape error "
                   "%.1f %%\n",
                w->threshold_ns, w->band_lo, w->band_hi, w->rule, 100 * w->worst_rate);
        fprintf(f, "    (one threshold over every shape would be %.1f ns: %s; worst shape error "
                   "%.1f %%)\n",
                t->threshold_ns, t->rule, 100 * t->worst_rate);
    } else if (t->saturated)
        fprintf(f, "    threshold %.1f ns (band %.1f..%.1f ns): %s; worst shape error %.1f %%%s\n",
                t->threshold_ns, t->band_lo, t->band_hi, t->rule, 100 * t->worst_rate,
                t->feasible ? "" : " (over the 5 % goal)");
    else
        fprintf(f, "    threshold %.1f ns: %s\n", t->threshold_ns, t->rule);
    if (v->shape_note[0])
        fprintf(f, "    note: %s\n", v->shape_note);
}

MW_API int mw_validate_write_table(const mw_validation *v, FILE *f)
{
    if (!v || !f)
        return -EINVAL;
    char b1[32];
    fprintf(f, "\nValidation of the measurement methods on this machine\n");
    if (v->hw_note[0])
        fprintf(f, "  hardware: %s\n", v->hw_note);
    if (v->prefetch_note[0])
        fprintf(f, "  %s\n", v->prefetch_note);
    fprintf(f, "\n  %-12s %-16s %7s %7s %7s %10s  %s\n", "method", "verdict", "CV", "FP", "FN",
            "threshold", "reason");
    for (unsigned i = 0; i < v->profile.n_methods; i++) {
        const mw_profile_method *m = &v->profile.methods[i];
        if (m->vd == MW_VERDICT_UNAVAILABLE) {
            fprintf(f, "  %-12s %-16s %7s %7s %7s %10s  %s\n", m->name, m->verdict, "-", "-", "-",
                    "-", m->reason);
            continue;
        }
        const mw_val_method *vm = NULL;
        for (unsigned k = 0; k < v->nmethods; k++)
            if (!strcmp(v->method[k].name, m->name))
                vm = &v->method[k];
        if (vm && vm->latency) /* counting methods read core cycles per miss */
            fprintf(f, "  %-12s %-16s %6.1f%% %6.1f%% %6.1f%% %7.1f %s  %s\n", m->name,
                    m->verdict, 100 * m->cv, 100 * m->false_pos, 100 * m->false_neg,
                    m->threshold, val_is_probe(m->name) ? "ns" : "cy", m->reason);
        else
            fprintf(f, "  %-12s %-16s %6.1f%% %7s %7s %10s  factor %.3f: %s\n", m->name,
                    m->verdict, 100 * m->cv, "-", "-", "-", m->factor, m->reason);
    }
    for (unsigned k = 0; k < v->nmethods; k++) {
        const mw_val_method *vm = &v->method[k];
        if (!val_is_probe(vm->name) || !vm->available)
            continue;
        const mw_lat_verdict *l = &vm->lat;
        fprintf(f, "\n  probe_lat over the read-sweep grid (%u points, %u readings each; probe on "
                   "CPU %d, load on up to %u threads)\n",
                v->npoints, v->npoints ? v->point[0].n : 0, v->probe_cpu, v->load_threads_max);
        fprintf(f, "    %8s %6s %12s %10s %10s %10s  %s\n", "threads", "delay", "bandwidth",
                "median", "min", "max", "mix");
        for (unsigned i = 0; i < v->npoints; i++) {
            const mw_val_point *p = &v->point[i];
            double mn = INFINITY, mx = -INFINITY;
            for (unsigned s = 0; s < p->n; s++) {
                mn = fmin(mn, p->ns[s]);
                mx = fmax(mx, p->ns[s]);
            }
            fprintf(f, "    %8u %6u %12s %7.1f ns %7.1f ns %7.1f ns  %s\n", p->threads,
                    p->delay, val_gbs(p->bw, b1, sizeof b1), mw_val_median(p->ns, p->n), mn, mx,
                    p->mix ? mw_mix_name((mw_read_mix)p->mix) : "");
        }
        uint64_t win = mw_probe_lat_window_ns(NULL);
        fprintf(f, "    cost of one measurement (%u bursts of %u loads): %.1f us (median); ",
                v->probe_bursts, v->probe_lines, v->probe_cost_ns / 1e3);
        if (win)
            fprintf(f, "a reading is the median over the bursts of the measurements of the last "
                       "%.0f ms\n", win / 1e6);
        else
            fprintf(f, "a reading is the median of one measurement's bursts (no window)\n");
        fprintf(f, "    idle %.1f ns, at peak %s %.1f ns (x%.2f): %s\n", l->th.idle_ns,
                val_gbs(l->th.peak_bw, b1, sizeof b1), l->th.peak_ns, l->th.rise,
                l->th.saturated ? "memory saturated" : "memory NOT saturated by this sweep");
        fprintf(f, "    threshold %.1f ns: %s; the curve at %.0f %% of peak: %.1f ns\n",
                l->th.threshold_ns, l->th.rule, 100 * v->rules.knee_frac, l->th.knee_ns);
        fprintf(f, "    false positives %u/%u (%.1f %%, bandwidth < %.0f %% of peak), false "
                   "negatives %u/%u (%.1f %%, >= %.0f %% of peak); out of sample (2 folds)\n",
                l->fp, l->n_low, 100 * l->false_pos, 100 * v->rules.low_frac, l->fn, l->n_high,
                100 * l->false_neg, 100 * v->rules.high_frac);
        fprintf(f, "    separation: idle end (<= %.0f %% of peak) %u readings %.1f..%.1f ns; "
                   "saturated end (>= %.0f %% of peak) %u readings %.1f..%.1f ns: %s\n",
                100 * v->rules.idle_frac, l->n_idle, l->idle_min, l->idle_max,
                100 * v->rules.high_frac, l->n_sat, l->sat_min, l->sat_max,
                l->overlap ? "OVERLAP" : "no overlap");
        if (l->direct_ratio > 0)
            fprintf(f, "    against the loaded-latency benchmark: median ratio %.2f\n",
                    l->direct_ratio);
    }
    if (v->profile.n_mixes) {
        fprintf(f, "\n  read/write mixes (probe_lat; traffic = reads + writes; %.1f s grid, "
                   "%.1f s mixes)\n", v->part_s[0], v->part_s[1]);
        fprintf(f, "    %-9s %6s %12s %10s %10s %s\n", "mix", "reads", "peak", "at peak",
                "threshold", "saturated");
        for (unsigned i = 0; i < v->profile.n_mixes; i++) {
            const mw_profile_mix *m = &v->profile.mixes[i];
            fprintf(f, "    %-9s %5.0f%% %12s %7.1f ns %7.1f ns %s\n", m->name,
                    100 * m->read_share, val_gbs(m->peak_bw, b1, sizeof b1), m->peak_ns,
                    m->threshold_ns, m->saturated ? "yes" : "no");
        }
    }
    val_write_shapes(v, f);
    const mw_profile *p = &v->profile;
    fprintf(f, "\n  profile: latency method %s, threshold %.1f ns, idle %.1f ns, peak %s, "
               "bandwidth method %s (factor %.3f)\n",
            p->lat_method[0] ? p->lat_method : "(none)", p->lat_threshold_ns,
            p->idle_latency_ns, val_gbs(p->peak_bw, b1, sizeof b1),
            p->bw_method[0] ? p->bw_method : "(none)", p->bw_factor);
    if (p->saturable == MW_SAT_NO)
        fprintf(f, "    memory could not be saturated here: memwatch record calls nothing "
                   "bandwidth-bound with this profile and reports load levels instead\n");
    else if (p->band_hi_ns > 0)
        fprintf(f, "    threshold from the %s, uncertainty band %.1f..%.1f ns\n",
                p->from_shapes ? "load shapes" : "read sweep", p->band_lo_ns, p->band_hi_ns);
    if (p->writes_threshold_ns > 0)
        fprintf(f, "    for programs whose loops write: threshold %.1f ns, band %.1f..%.1f ns "
                   "(the copy, triad and non-temporal shapes: %s; worst shape error %.1f %%)\n",
                p->writes_threshold_ns, p->writes_band_lo_ns, p->writes_band_hi_ns,
                v->shapes_writes.rule, 100 * v->shapes_writes.worst_rate);
    if (p->threshold_note[0])
        fprintf(f, "    note: %s\n", p->threshold_note);
    return ferror(f) ? -EIO : 0;
}

/* ------------------------------------------------------- for the command */

struct val_progress {
    FILE *err;
    int on;
};

static void val_progress_cb(void *user, unsigned done, unsigned total)
{
    struct val_progress *p = user;
    if (p->on)
        fprintf(p->err, "\rmemwatch calibrate: validation %u/%u%s", done, total,
                done == total ? "\n" : "");
}

MW_API int mw_validate_calibrate(const struct mw_calib_results *calib, const char *profile_path,
                                 int quick, int progress, FILE *out, FILE *err)
{
    return mw_validate_calibrate_mixes(calib, profile_path, quick, progress, 1, NULL, NULL, out,
                                       err);
}

MW_API int mw_validate_calibrate_mixes(const struct mw_calib_results *calib,
                                       const char *profile_path, int quick, int progress,
                                       unsigned mixes, const char *plot_dir, double *seconds,
                                       FILE *out, FILE *err)
{
    double t0 = (double)mw_now_ns() / 1e9;
    if (!out || !err)
        return -EINVAL;
    char defpath[4096];
    const char *path = profile_path;
    int rc;
    if (!path) {
        if ((rc = mw_profile_default_path(defpath, sizeof defpath)) < 0) {
            fprintf(err, "memwatch calibrate: no place for the machine profile (%s); give "
                         "--profile PATH\n", mw_strerror(rc));
            return rc;
        }
        path = defpath;
    }
    mw_validation *v = calloc(1, sizeof *v);
    if (!v)
        return -ENOMEM;
    struct val_progress pg = {err, progress};
    /* 48 readings 10 ms apart: the profiler's default interval */
    mw_validate_config cfg = {.point_s = quick ? 0.08 : 0.48,
                              .grid_stride = quick ? 2 : 0,
                              .shapes_s = quick ? 0.5 : 1.2,
                              .shape_rounds = 2,
                              .mixes = mixes ? mixes : (1u << MW_MIX_COUNT) - 1,
                              .progress = val_progress_cb,
                              .user = &pg};
    rc = mw_validate_run(&cfg, calib, v);
    if (rc < 0)
        fprintf(err, "memwatch calibrate: validation stopped early: %s\n", mw_strerror(rc));
    mw_validate_write_table(v, out);
    if (plot_dir && v->npoints > 1) {
        int prc = mw_validate_write_mix_plot(v, plot_dir);
        if (prc < 0)
            fprintf(err, "memwatch calibrate: cannot write %s/mixes.svg: %s\n", plot_dir,
                    mw_strerror(prc));
    }
    /* what was there before: read back, or refused with the reason */
    mw_profile old;
    int orc = mw_profile_load(path, 1, &old);
    if (orc == MW_ERR_CORRUPT || orc == MW_ERR_FOREIGN)
        fprintf(out, "\n  the previous profile at %s was refused (%s) and is replaced\n", path,
                mw_strerror(orc));
    int wrc = mw_profile_write(path, &v->profile, v, calib);
    if (wrc < 0) {
        fprintf(err, "memwatch calibrate: cannot write the machine profile %s: %s\n", path,
                mw_strerror(wrc));
        rc = rc < 0 ? rc : wrc;
    } else {
        mw_profile back;
        int brc = mw_profile_load(path, 1, &back);
        fprintf(out, "  machine profile: %s (%s)\n", path,
                brc == 0 ? "read back and matched to this machine" : mw_strerror(brc));
        if (brc < 0 && rc == 0)
            rc = brc;
    }
    free(v);
    if (seconds)
        *seconds = (double)mw_now_ns() / 1e9 - t0;
    return rc;
}
