/*
 * preload/precise_attr.c: the attributes of the profiler's precise load
 * sampler (Intel PEBS load latency, AMD IBS op), built on
 * mw_attr_precise_loads() (sampling/attrs.c), which decides from sysfs
 * whether the hardware has one.
 *
 * Owns: what the profiler adds to the builder's attributes: call chains,
 * frequency mode clamped by the caller to perf_event_max_sample_rate, ring
 * watermarks, the ldlat threshold placed where the PMU's format/ldlat field
 * says (config1:0-15 on current Intel cores), and an enabled group leader
 * (mem-loads-aux on Sapphire Rapids and later). Calls: libc file I/O.
 * Threading: reentrant; not async-signal-safe. Pure apart from sysfs reads,
 * so tests/preload/test_attrs.c compiles it against fixture trees.
 */
#include "precise.h"

#include <memwatch/attrs.h>
#include <memwatch/pmu.h>
#include <memwatch/profile.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Core PMUs where Intel's mem-loads lives, in the builder's order. */
static const char *const pa_intel_pmus[] = {"cpu", "cpu_core"};

/* Parse a format field "configN:lo-hi" (or ":bit"). Returns 0 or -1. */
static int pa_field(const char *s, int *word, unsigned *lo, unsigned *hi)
{
    if (strncmp(s, "config", 6))
        return -1;
    s += 6;
    *word = 0;
    if (*s >= '1' && *s <= '2')
        *word = *s++ - '0';
    if (*s != ':')
        return -1;
    char *end;
    unsigned long a = strtoul(s + 1, &end, 10), b = a;
    if (*end == '-')
        b = strtoul(end + 1, &end, 10);
    if (*end || b < a || b > 63)
        return -1;
    *lo = (unsigned)a;
    *hi = (unsigned)b;
    return 0;
}

unsigned mwp_precise_ldlat(unsigned user, const struct mw_profile *p, const char **src)
{
    double c = MWP_LDLAT_DEFAULT;
    *src = "default";
    if (user) {
        c = user;
        *src = "MEMWATCH_LDLAT";
    } else if (p && p->idle_latency_ns > 0 && p->tsc_hz > 0) {
        c = p->idle_latency_ns * p->tsc_hz / 1e9 + 0.5;
        *src = "machine profile idle latency";
    }
    if (c < 3)
        c = 3;
    if (c > 65535)
        c = 65535;
    return (unsigned)c;
}

int mwp_precise_attrs(const char *sysfs_root, unsigned ldlat, unsigned long freq,
                      unsigned max_stack, struct perf_event_attr *a, size_t *n, char *name,
                      size_t name_len, char *why, size_t why_len)
{
    const char *root = sysfs_root ? sysfs_root : "/sys";
    int rc = mw_attr_precise_loads(root, ldlat, 1, a, n, why, why_len);
    if (rc)
        return rc;
    struct perf_event_attr *m = &a[*n - 1];
    int intel = m->precise_ip > 0;
    snprintf(name, name_len, "%s", intel ? "mem-loads" : "ibs_op");
    if (intel) {
        /* The threshold goes where the PMU's format says; config1 when it
         * has no format/ldlat (the builder's default). */
        char path[600], buf[64];
        for (size_t i = 0; i < sizeof pa_intel_pmus / sizeof pa_intel_pmus[0]; i++) {
            snprintf(path, sizeof path, "%s/bus/event_source/devices/%s/type", root,
                     pa_intel_pmus[i]);
            if (mw_read_small(path, buf, sizeof buf) <= 0 || strtoul(buf, NULL, 0) != m->type)
                continue;
            snprintf(path, sizeof path, "%s/bus/event_source/devices/%s/format/ldlat", root,
                     pa_intel_pmus[i]);
            int word;
            unsigned lo, hi;
            if (mw_read_small(path, buf, sizeof buf) <= 0 || pa_field(buf, &word, &lo, &hi))
                break;
            uint64_t max = hi - lo >= 63 ? UINT64_MAX : (1ull << (hi - lo + 1)) - 1;
            uint64_t v = ldlat > max ? max : ldlat;
            uint64_t mask = max << lo;
            __u64 *w = word == 0 ? &m->config : word == 1 ? &m->config1 : &m->config2;
            m->config1 = 0; /* the builder's placement */
            *w = (*w & ~mask) | (v << lo);
            break;
        }
    }
    m->sample_type = MW_LOAD_SAMPLE_TYPE | PERF_SAMPLE_CALLCHAIN;
    m->exclude_callchain_kernel = 1;
    m->sample_max_stack = (uint16_t)max_stack;
    m->freq = 1;
    m->sample_freq = freq ? freq : 1;
    m->watermark = 1;
    m->wakeup_watermark = 1u << 30;
    m->disabled = 0;
    if (*n == 2)
        a[0].disabled = 0; /* a disabled leader would keep the whole group off */
    return 0;
}
