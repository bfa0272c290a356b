/*
 * sampling/hybrid.c: the hybrid selection of Helm & Taura. Inside intervals
 * flagged bandwidth-bound, precise load samples whose latency is above the
 * threshold name the instructions and data behind the saturation; timer
 * samples in those intervals name the code where no precise sampling exists.
 * All samples stay stored; this only decides the "selected" mark.
 *
 * Owns: the classification of an event into a sample source, the latency
 * threshold choice from the machine profile, the keep predicate and the
 * interval lookup. May call: libc. Threading: pure, reentrant.
 */
#include <memwatch/catalogue.h>
#include <memwatch/decode.h>
#include <memwatch/profile.h>

#include <linux/perf_event.h>
#include <string.h>

int mw_sample_source_of(const mw_sample_fmt *f, const char *name)
{
    if (f->type == PERF_TYPE_SOFTWARE) {
        switch (f->config) {
        case PERF_COUNT_SW_CPU_CLOCK:
        case PERF_COUNT_SW_TASK_CLOCK:
            return MW_SRC_TIMER;
        case PERF_COUNT_SW_PAGE_FAULTS:
        case PERF_COUNT_SW_PAGE_FAULTS_MIN:
        case PERF_COUNT_SW_PAGE_FAULTS_MAJ:
            return MW_SRC_FAULT;
        default:
            return MW_SRC_OTHER;
        }
    }
    if (f->sample_type & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT | PERF_SAMPLE_DATA_SRC))
        return MW_SRC_PRECISE;
    if (name && (strstr(name, "mem-loads") || strstr(name, "ibs")))
        return MW_SRC_PRECISE;
    if (f->type == PERF_TYPE_HARDWARE &&
        (f->config == PERF_COUNT_HW_CPU_CYCLES || f->config == PERF_COUNT_HW_REF_CPU_CYCLES))
        return MW_SRC_TIMER;
    return MW_SRC_OTHER;
}

const char *mw_sample_source_name(int src)
{
    switch (src) {
    case MW_SRC_TIMER: return "timer";
    case MW_SRC_FAULT: return "fault";
    case MW_SRC_PRECISE: return "precise";
    default: return "other";
    }
}

double mw_hybrid_threshold(const struct mw_profile *p, double fallback_ns)
{
    if (!p)
        return fallback_ns;
    for (unsigned i = 0; i < p->n_methods && i < MW_PROFILE_MAX_METHODS; i++) {
        const mw_profile_method *m = &p->methods[i];
        /* the precise-sampling latency methods: their threshold is in the
         * weight's unit (catalogue: MW_HOW_SAMPLE, core cycles) */
        if (mw_method_is(m->name, MW_Q_LATENCY, MW_HOW_SAMPLE) && m->threshold > 0 &&
            m->vd != MW_VERDICT_UNAVAILABLE)
            return m->threshold;
    }
    if (p->idle_latency_ns > 0)
        return p->idle_latency_ns;
    return fallback_ns;
}

int mw_hybrid_keep(int source, int in_flagged, uint64_t weight, double threshold)
{
    if (!in_flagged)
        return 0;
    switch (source) {
    case MW_SRC_PRECISE: return (double)weight >= threshold;
    case MW_SRC_TIMER:
    case MW_SRC_FAULT: return 1;
    default: return 0;
    }
}

long mw_hybrid_find(const mw_hybrid_iv *iv, size_t n, uint64_t t)
{
    size_t lo = 0, hi = n;
    while (lo < hi) { /* first interval with t_start > t */
        size_t mid = lo + (hi - lo) / 2;
        if (iv[mid].t_start <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return -1;
    return t < iv[lo - 1].t_end ? (long)(lo - 1) : -1;
}
