/*
 * calibrate/validate_bw.c: measuring the counter methods against ground truth.
 * Counting latency methods (lmrl, l1_miss_lat): see mw_val_lat_counter_method
 * at the end. A bandwidth method (imc_cas, ocr_dram, amd_umc, amd_df): its
 * events counted system-wide while
 * bench.h's read load runs, whose volume is exact (64 bytes per record read),
 * at a few delays, repeated; with prefetchers off and then on where the
 * prefetcher MSR can be switched (msr.h guard: restored on every exit path).
 *
 * Why the read load and not the triad: the triad's benchmark call also
 * allocates and first-touches its arrays, so a counter around the call would
 * see traffic the triad's byte count does not include; the read load's
 * start/stop window holds nothing but the reads.
 *
 * Events are opened, read and turned into bytes or cycles per miss by
 * counters/method_read.c (the same code the profiler runs every interval, so
 * calibrate and record apply one formula): uncore events from the catalogue's
 * sysfs terms on every PMU instance matching its pattern (uncore_imc_0..N),
 * core events from the catalogue's config/config1 on the core PMU, counted
 * here on given CPUs (every task there). Counts are corrected for
 * multiplexing per window and multiplied by the catalogue's scale (64 bytes
 * per CAS); sysfs alias scales (MiB) are not applied.
 * May call: method_read.h, perf.h, pmu.h, probe.h, bench.h, msr.h.
 * Threading: called from mw_validate_run only.
 */
#include <memwatch/bench.h>
#include <memwatch/catalogue.h>
#include <memwatch/method_read.h>
#include <memwatch/msr.h>
#include <memwatch/perf.h>
#include <memwatch/pmu.h>
#include <memwatch/probe.h>
#include <memwatch/validate.h>

#include "validate_int.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BW_MAX_READINGS 24

/* Opens every event of a method (counters/method_read.c); core events
 * counted on core_cpus (NULL: every online CPU), every task there. */
static int bw_open(const mw_method_def *def, const mw_pmu_set *pmus, const int *core_cpus,
                   size_t n_core_cpus, mw_method_reader **c, char *why, size_t wn)
{
    mw_mread_opts o = {.core_target = MW_MREAD_CORE_CPUS, .core_cpus = core_cpus,
                       .n_core_cpus = core_cpus ? n_core_cpus : 0};
    return mw_method_reader_open(def, pmus, &o, c, why, wn);
}

/* One reading: counters around a read-load window of `seconds`. */
static int bw_reading(mw_method_reader *c, mw_read_load *l, unsigned delay, double seconds,
                      mw_bw_reading *r)
{
    int rc;
    if ((rc = mw_method_reader_start(c)) < 0)
        return rc;
    if ((rc = mw_read_load_start(l, delay)) < 0)
        return rc;
    struct timespec ts = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
    nanosleep(&ts, NULL);
    mw_sweep_point sp;
    rc = mw_read_load_stop(l, &sp);
    double bytes = 0;
    int rrc = mw_method_reader_read(c, &bytes, NULL, 0);
    mw_method_reader_stop(c);
    if (rc < 0)
        return rc;
    if (rrc == MW_ERR_NODATA) { /* the counters never ran: no reading, not a zero */
        r->true_bytes = 0;
        return 0;
    }
    if (rrc < 0)
        return rrc;
    r->true_bytes = sp.bytes;
    r->counted_bytes = bytes;
    return 0;
}

static int bw_series(mw_method_reader *c, mw_read_load *l, double seconds, int prefetch,
                     mw_bw_reading *r, size_t *n)
{
    static const unsigned delays[] = {0, 16, 256};
    for (int rep = 0; rep < 3; rep++)
        for (size_t d = 0; d < sizeof delays / sizeof delays[0] && *n < BW_MAX_READINGS; d++) {
            mw_bw_reading *x = &r[*n];
            x->bench = "read_sweep";
            x->prefetch = prefetch;
            int rc = bw_reading(c, l, delays[d], seconds, x);
            if (rc < 0)
                return rc;
            if (x->true_bytes > 0)
                (*n)++;
        }
    return 0;
}

int mw_val_bw_method(const mw_method_def *def, const mw_probe *pr, const mw_validate_config *cfg,
                     const int *cpus, int ncpus, mw_validation *v, mw_val_method *m)
{
    if (!def || !pr || !pr->pmus) {
        snprintf(m->reason, sizeof m->reason, "no catalogue entry or PMU list for %s", m->name);
        return MW_ERR_NODATA;
    }
    char why[256] = "";
    mw_method_reader *c = NULL;
    int rc = bw_open(def, pr->pmus, NULL, 0, &c, why, sizeof why);
    if (rc < 0) {
        snprintf(m->reason, sizeof m->reason, "listed as available, but %s", why);
        return rc;
    }
    unsigned threads = ncpus > 1 ? (unsigned)ncpus - 1 : 1;
    mw_read_load_config lc = {.threads = threads, .cpus = ncpus > 1 ? cpus + 1 : cpus,
                              .ncpus = threads};
    mw_read_load *l = NULL;
    if ((rc = mw_read_load_create(&lc, &l)) < 0) {
        mw_method_reader_close(c);
        snprintf(m->reason, sizeof m->reason, "the read load failed: %s", mw_strerror(rc));
        return rc;
    }
    double seconds = cfg && cfg->point_s > 0 ? cfg->point_s : 0.2;
    mw_bw_reading r[BW_MAX_READINGS];
    size_t n = 0;
    const mw_prefetch_msr *pm = NULL;
    int switched = 0;
    if (pr->msr.reachable && mw_catalogue_prefetch_msr(pr->cpu.uarch, &pm) == 0 && pm) {
        char prefix[PATH_MAX];
        snprintf(prefix, sizeof prefix, "%s/cpu", cfg && cfg->dev_root ? cfg->dev_root : "/dev");
        mw_prefetch_ctl ctl = {.prefix = prefix, .msr = pm->msr, .mask = pm->mask};
        int g = mw_prefetch_guard_begin(&ctl, 1);
        if (g == 0) {
            rc = bw_series(c, l, seconds, 0, r, &n);
            int e = mw_prefetch_guard_end();
            switched = 1;
            snprintf(v->prefetch_note, sizeof v->prefetch_note,
                     "prefetchers switched off for the comparison (MSR 0x%x, bits 0x%llx) and "
                     "restored%s",
                     (unsigned)pm->msr, (unsigned long long)pm->mask,
                     e ? " -- RESTORE FAILED, run `memwatch prefetch --restore`" : "");
        } else {
            snprintf(v->prefetch_note, sizeof v->prefetch_note,
                     "prefetchers left as they are: %s", mw_msr_why());
        }
    }
    if (rc == 0)
        rc = bw_series(c, l, seconds, switched ? 1 : -1, r, &n);
    mw_read_load_destroy(l);
    mw_method_reader_close(c);
    if (rc < 0) {
        snprintf(m->reason, sizeof m->reason, "counting failed during the read load: %s",
                 mw_strerror(rc));
        return rc;
    }
    if ((rc = mw_verdict_bw(r, n, &v->rules, &m->bw)) < 0)
        return rc;
    snprintf(m->reason, sizeof m->reason, "%s", m->bw.reason);
    return 0;
}

/* ------------------------------------------------- counting latency methods */

/* lmrl, l1_miss_lat: pending-miss cycles / misses, counted on the load threads'
 * CPUs over sub-windows of every grid point while the read load runs. Each
 * reading is (delta of the "pending" events) / (delta of all other events)
 * (mw_method_reader_value, the formula the profiler applies),
 * in core cycles per miss. There is no idle point: without a load these
 * methods count nothing. */
int mw_val_lat_counter_method(const mw_method_def *def, const mw_probe *pr,
                              const mw_validate_config *cfg, const int *cpus, int ncpus,
                              mw_validation *v, mw_val_method *m)
{
    enum { SUB = 16 };
    if (!def || !pr || !pr->pmus) {
        snprintf(m->reason, sizeof m->reason, "no catalogue entry or PMU list for %s", m->name);
        return MW_ERR_NODATA;
    }
    const int *lcpus = ncpus > 1 ? cpus + 1 : cpus;
    unsigned nl = ncpus > 1 ? (unsigned)ncpus - 1 : 1;
    char why[256] = "";
    mw_method_reader *c = NULL;
    /* the plan refuses an entry without "pending" numerator and denominator */
    int rc = bw_open(def, pr->pmus, lcpus, nl, &c, why, sizeof why);
    if (rc < 0) {
        snprintf(m->reason, sizeof m->reason, "listed as available, but %s", why);
        return rc;
    }
    unsigned tgrid[MW_SWEEP_MAX_THREADS], dgrid[MW_SWEEP_MAX_DELAYS];
    unsigned nt = mw_read_sweep_thread_grid(v->load_threads_max ? v->load_threads_max : nl, tgrid,
                                            MW_SWEEP_MAX_THREADS);
    unsigned nd = mw_read_sweep_delay_grid(cfg && cfg->max_delay ? cfg->max_delay : 1024, dgrid,
                                           MW_SWEEP_MAX_DELAYS);
    double seconds = cfg && cfg->point_s > 0 ? cfg->point_s : 0.2;
    size_t maxp = (size_t)nt * nd;
    mw_lat_point *pts = calloc(maxp ? maxp : 1, sizeof *pts);
    double *store = calloc((maxp ? maxp : 1) * SUB, sizeof *store);
    size_t np = 0;
    if (!pts || !store)
        rc = -ENOMEM;
    for (unsigned ti = 0; ti < nt && rc == 0; ti++) {
        mw_read_load_config lc = {.threads = tgrid[ti], .cpus = lcpus, .ncpus = nl};
        mw_read_load *l = NULL;
        if ((rc = mw_read_load_create(&lc, &l)) < 0)
            break;
        for (unsigned di = 0; di < nd && rc == 0; di++) {
            mw_lat_point *p = &pts[np];
            double *dst = store + np * SUB;
            p->ns = dst;
            p->n = 0;
            rc = mw_method_reader_start(c);
            if (rc == 0)
                rc = mw_read_load_start(l, dgrid[di]);
            if (rc < 0)
                break;
            for (int k = 1; k <= SUB && rc == 0; k++) {
                double step = seconds / SUB;
                struct timespec ts = {(time_t)step, (long)((step - (double)(time_t)step) * 1e9)};
                nanosleep(&ts, NULL);
                double cyc = 0;
                rc = mw_method_reader_read(c, &cyc, NULL, 0);
                if (rc == 0)
                    dst[p->n++] = cyc;
                else if (rc == MW_ERR_NODATA) /* no misses in this sub-window: no reading */
                    rc = 0;
            }
            mw_sweep_point sp;
            int src = mw_read_load_stop(l, &sp);
            mw_method_reader_stop(c);
            if (rc == 0)
                rc = src;
            p->bw = sp.bw;
            if (rc == 0 && p->n)
                np++;
        }
        mw_read_load_destroy(l);
    }
    mw_method_reader_close(c);
    if (rc == 0)
        rc = mw_verdict_lat(pts, np, &v->rules, &m->lat);
    free(pts);
    free(store);
    if (rc < 0) {
        snprintf(m->reason, sizeof m->reason, "counting failed during the read sweep: %s",
                 mw_strerror(rc));
        return rc;
    }
    snprintf(m->reason, sizeof m->reason, "core cycles per L1 miss: %s", m->lat.reason);
    return 0;
}
