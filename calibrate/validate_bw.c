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
 * Event encoding: uncore events from the catalogue's sysfs terms against every
 * PMU instance matching its pattern (uncore_imc_0..N), core events from the
 * catalogue's expected config/config1 on the core PMU. Counts are summed and
 * multiplied by the catalogue's scale (64 bytes per CAS); sysfs alias scales
 * (MiB) are not applied. May call: perf.h, pmu.h, probe.h, bench.h, msr.h.
 * Threading: called from mw_validate_run only.
 */
#include <memwatch/bench.h>
#include <memwatch/catalogue.h>
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

#define BW_MAX_GROUPS 64
#define BW_MAX_READINGS 24

typedef struct bw_counter {
    size_t n;
    mw_perf_group *g[BW_MAX_GROUPS];
    double scale[BW_MAX_GROUPS];
    const char *role[BW_MAX_GROUPS]; /* the catalogue's role of each group's event */
} bw_counter;

static void bw_close(bw_counter *c)
{
    for (size_t i = 0; i < c->n; i++)
        mw_perf_group_close(c->g[i]);
    c->n = 0;
}

static int bw_add(bw_counter *c, const mw_perf_event *ev, const mw_perf_target *t, double scale,
                  const char *role, char *why, size_t wn)
{
    if (c->n == BW_MAX_GROUPS) {
        snprintf(why, wn, "more than %d counters needed", BW_MAX_GROUPS);
        return MW_ERR_TOOBIG;
    }
    int rc = mw_perf_group_open(ev, 1, t, 0, &c->g[c->n]);
    if (rc < 0) {
        const char *pw = mw_perf_why();
        if (pw[0] && !strncmp(pw, ev->name, strlen(ev->name)))
            snprintf(why, wn, "cannot open %s", pw); /* the reason names the event */
        else
            snprintf(why, wn, "cannot open %s: %s", ev->name, pw[0] ? pw : mw_strerror(rc));
        return rc;
    }
    c->role[c->n] = role ? role : "";
    c->scale[c->n++] = scale > 0 ? scale : 1;
    return 0;
}

/* Opens every event of a method, counting system-wide; core events on
 * core_cpus (NULL: every online CPU). */
static int bw_open(const mw_method_def *def, const mw_pmu_set *pmus, const int *core_cpus,
                   size_t n_core_cpus, bw_counter *c, char *why, size_t wn)
{
    memset(c, 0, sizeof *c);
    for (size_t e = 0; e < def->n_events; e++) {
        const mw_event_spec *s = &def->events[e];
        int rc = 0;
        if (!s->pmu || !strcmp(s->pmu, "cpu")) {
            const mw_pmu *core = mw_pmus_core(pmus);
            if (!core) {
                snprintf(why, wn, "no core PMU for %s", s->role ? s->role : "event");
                rc = MW_ERR_NOPMU;
            } else {
                char name[64];
                snprintf(name, sizeof name, "%s/%s (config 0x%llx)", core->name,
                         s->role ? s->role : "event", (unsigned long long)s->config);
                mw_perf_event ev = {.name = name, .type = core->type, .config = s->config,
                                    .config1 = s->config1};
                mw_perf_target t = {.kind = MW_PERF_SYSTEM, .cpus = core_cpus,
                                    .n_cpus = core_cpus ? n_core_cpus : 0};
                rc = bw_add(c, &ev, &t, s->scale, s->role, why, wn);
            }
        } else {
            const mw_pmu *list[BW_MAX_GROUPS];
            size_t k = mw_pmus_match(pmus, s->pmu, list, BW_MAX_GROUPS);
            if (k > BW_MAX_GROUPS)
                k = BW_MAX_GROUPS;
            if (!k) {
                snprintf(why, wn, "no PMU matches %s", s->pmu);
                rc = MW_ERR_NOPMU;
            }
            for (size_t j = 0; j < k && !rc; j++) {
                mw_pmu_encoding enc;
                char ewhy[200];
                rc = mw_pmu_encode(list[j], s->sysfs ? s->sysfs : "", &enc, ewhy, sizeof ewhy);
                if (rc < 0) {
                    snprintf(why, wn, "%s: %s", list[j]->name, ewhy);
                    break;
                }
                mw_perf_event ev = {.name = list[j]->name, .type = enc.type,
                                    .config = enc.config[0], .config1 = enc.config[1],
                                    .config2 = enc.config[2]};
                mw_perf_target t = {.kind = MW_PERF_SYSTEM, .cpus = list[j]->cpus,
                                    .n_cpus = list[j]->n_cpus};
                rc = bw_add(c, &ev, &t, s->scale, s->role, why, wn);
            }
        }
        if (rc < 0) {
            bw_close(c);
            return rc;
        }
    }
    return c->n ? 0 : MW_ERR_NODATA;
}

/* One reading: counters around a read-load window of `seconds`. */
static int bw_reading(bw_counter *c, mw_read_load *l, unsigned delay, double seconds,
                      mw_bw_reading *r)
{
    int rc;
    for (size_t i = 0; i < c->n; i++)
        if ((rc = mw_perf_group_reset(c->g[i])) < 0 || (rc = mw_perf_group_enable(c->g[i])) < 0)
            return rc;
    if ((rc = mw_read_load_start(l, delay)) < 0)
        return rc;
    struct timespec ts = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
    nanosleep(&ts, NULL);
    mw_sweep_point sp;
    rc = mw_read_load_stop(l, &sp);
    for (size_t i = 0; i < c->n; i++)
        mw_perf_group_disable(c->g[i]);
    if (rc < 0)
        return rc;
    double bytes = 0;
    for (size_t i = 0; i < c->n; i++) {
        mw_perf_value v;
        if ((rc = mw_perf_group_read(c->g[i], &v, 1)) < 0)
            return rc;
        bytes += v.scaled * c->scale[i];
    }
    r->true_bytes = sp.bytes;
    r->counted_bytes = bytes;
    return 0;
}

static int bw_series(bw_counter *c, mw_read_load *l, double seconds, int prefetch,
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
    bw_counter c;
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
        bw_close(&c);
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
            rc = bw_series(&c, l, seconds, 0, r, &n);
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
        rc = bw_series(&c, l, seconds, switched ? 1 : -1, r, &n);
    mw_read_load_destroy(l);
    bw_close(&c);
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
 * reading is (delta of the "pending" events) / (delta of all other events),
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
    bw_counter c;
    int rc = bw_open(def, pr->pmus, lcpus, nl, &c, why, sizeof why);
    if (rc < 0) {
        snprintf(m->reason, sizeof m->reason, "listed as available, but %s", why);
        return rc;
    }
    int have_num = 0, have_den = 0;
    for (size_t i = 0; i < c.n; i++) {
        int num = !strcmp(c.role[i], "pending");
        have_num |= num;
        have_den |= !num;
    }
    if (!have_num || !have_den) {
        bw_close(&c);
        snprintf(m->reason, sizeof m->reason,
                 "its catalogue entry has no \"pending\" numerator and denominator events");
        return MW_ERR_NODATA;
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
    double prev[BW_MAX_GROUPS];
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
            for (size_t i = 0; i < c.n && rc == 0; i++)
                if ((rc = mw_perf_group_reset(c.g[i])) == 0)
                    rc = mw_perf_group_enable(c.g[i]);
            if (rc == 0)
                rc = mw_read_load_start(l, dgrid[di]);
            if (rc < 0)
                break;
            memset(prev, 0, sizeof prev);
            for (int k = 0; k <= SUB && rc == 0; k++) {
                if (k) {
                    double step = seconds / SUB;
                    struct timespec ts = {(time_t)step, (long)((step - (double)(time_t)step) * 1e9)};
                    nanosleep(&ts, NULL);
                }
                double num = 0, den = 0;
                for (size_t i = 0; i < c.n && rc == 0; i++) {
                    mw_perf_value val;
                    if ((rc = mw_perf_group_read(c.g[i], &val, 1)) < 0)
                        break;
                    double d = val.scaled - prev[i];
                    prev[i] = val.scaled;
                    if (!strcmp(c.role[i], "pending"))
                        num += d;
                    else
                        den += d;
                }
                if (k && rc == 0 && den > 0 && num >= 0)
                    dst[p->n++] = num / den;
            }
            mw_sweep_point sp;
            int src = mw_read_load_stop(l, &sp);
            for (size_t i = 0; i < c.n; i++)
                mw_perf_group_disable(c.g[i]);
            if (rc == 0)
                rc = src;
            p->bw = sp.bw;
            if (rc == 0 && p->n)
                np++;
        }
        mw_read_load_destroy(l);
    }
    bw_close(&c);
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
