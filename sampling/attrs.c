/*
 * sampling/attrs.c: perf_event_attr builders (include/memwatch/attrs.h).
 *
 * Owns: the attributes of memwatch's samplers and the sysfs probes that decide
 * whether precise load sampling exists. Calls: counters' mw_read_small for
 * the sysfs and procfs files.
 * Threading: reentrant (mw_attr_max_rate caches its first reading); not
 * async-signal-safe (snprintf in the sysfs probes).
 *
 * Hardware knowledge is kept in the table below: which PMU and event exposes
 * precise load latency, and how the threshold is passed.
 */
#include <memwatch/attrs.h>
#include <memwatch/pmu.h>

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ATTR_NS_PER_S 1000000000ul

/* Read once per process (a start-up cost of every recorded process). */
MW_API unsigned long mw_attr_max_rate(void)
{
    static _Atomic unsigned long cached; /* 0: not read yet */
    unsigned long c = atomic_load_explicit(&cached, memory_order_relaxed);
    if (c)
        return c;
    char b[32];
    if (mw_read_small("/proc/sys/kernel/perf_event_max_sample_rate", b, sizeof b) <= 0)
        return 0;
    char *end;
    unsigned long v = strtoul(b, &end, 10);
    if (end == b)
        return 0;
    atomic_store_explicit(&cached, v, memory_order_relaxed);
    return v;
}

MW_API unsigned long mw_attr_clamp_rate(unsigned long rate, unsigned long max, int *clamped)
{
    unsigned long r = rate;
    if (r < 1)
        r = 1;
    if (max && r > max)
        r = max;
    if (r > ATTR_NS_PER_S)
        r = ATTR_NS_PER_S;
    if (clamped)
        *clamped = r != rate;
    return r;
}

static void attr_common(struct perf_event_attr *a)
{
    memset(a, 0, sizeof *a);
    a->size = sizeof *a;
    a->exclude_kernel = 1; /* user space only: allowed at perf_event_paranoid 2 */
    a->exclude_hv = 1;
    a->use_clockid = 1;
    a->clockid = 1; /* CLOCK_MONOTONIC: the clock of every memwatch time stamp */
    /* No wake-ups: memwatch drains the ring on its own schedule. */
    a->watermark = 1;
    a->wakeup_watermark = 1u << 30;
}

MW_API void mw_attr_cpu_clock(struct perf_event_attr *a, unsigned long rate, unsigned max_stack)
{
    attr_common(a);
    a->type = PERF_TYPE_SOFTWARE;
    a->config = PERF_COUNT_SW_CPU_CLOCK;
    a->sample_period = ATTR_NS_PER_S / (rate ? rate : 1);
    a->sample_type = MW_CPUCLOCK_SAMPLE_TYPE;
    a->exclude_callchain_kernel = 1;
    a->sample_max_stack = (uint16_t)max_stack;
}

MW_API void mw_attr_user_stack(struct perf_event_attr *a, unsigned stack_bytes)
{
    unsigned n = stack_bytes > MW_UNWIND_STACK_MAX ? MW_UNWIND_STACK_MAX : stack_bytes & ~7u;
    a->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
    a->sample_regs_user = MW_UNWIND_REGS_MASK;
    a->sample_stack_user = n;
}

MW_API void mw_attr_user_regs(struct perf_event_attr *a)
{
    a->sample_type |= PERF_SAMPLE_REGS_USER;
    a->sample_regs_user = MW_UNWIND_REGS_MASK;
}

MW_API void mw_attr_page_faults(struct perf_event_attr *a, unsigned long period,
                                unsigned max_stack)
{
    attr_common(a);
    a->type = PERF_TYPE_SOFTWARE;
    a->config = PERF_COUNT_SW_PAGE_FAULTS;
    a->sample_period = period ? period : 1;
    a->sample_type = MW_FAULT_SAMPLE_TYPE;
    a->exclude_callchain_kernel = 1;
    a->sample_max_stack = (uint16_t)max_stack;
}

/* Where precise load latency lives, by PMU. */
static const struct attr_precise {
    const char *pmu;      /* sysfs PMU directory */
    const char *event;    /* events/<name> that must exist ("" for none) */
    const char *aux;      /* events/<name> of a required group leader, or NULL */
    int ldlat_in_config1; /* Intel: threshold in config1; AMD: in config (Zen 5 ldlat cap) */
    const char *what;
} attr_precise_tab[] = {
    {"cpu", "mem-loads", "mem-loads-aux", 1, "Intel PEBS load latency (Sapphire Rapids group)"},
    {"cpu_core", "mem-loads", "mem-loads-aux", 1, "Intel PEBS load latency (hybrid P-core)"},
    {"cpu", "mem-loads", NULL, 1, "Intel PEBS load latency"},
    {"ibs_op", "", NULL, 0, "AMD IBS op sampling"},
};

/* Parse "event=0xcd,umask=0x1,ldlat=3" style terms for event and umask (Intel core
 * layout: config = event | umask << 8). Returns 0 or -1. */
static int attr_parse_terms(const char *s, uint64_t *config)
{
    uint64_t ev = 0, um = 0;
    int have = 0;
    char tmp[256];
    snprintf(tmp, sizeof tmp, "%s", s);
    for (char *save = NULL, *t = strtok_r(tmp, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(t, '=');
        uint64_t v = eq ? strtoull(eq + 1, NULL, 0) : 1;
        if (!strncmp(t, "event=", 6)) {
            ev = v;
            have = 1;
        } else if (!strncmp(t, "umask=", 6)) {
            um = v;
        }
    }
    *config = ev | um << 8;
    return have ? 0 : -1;
}

MW_API int mw_attr_precise_loads(const char *sysfs_root, unsigned ldlat_cycles,
                                 unsigned long period, struct perf_event_attr *a, size_t *n,
                                 char *why, size_t why_len)
{
    const char *root = sysfs_root ? sysfs_root : "/sys";
    char path[512], buf[256];
    size_t cap = *n;
    *n = 0;
    for (size_t i = 0; i < sizeof attr_precise_tab / sizeof attr_precise_tab[0]; i++) {
        const struct attr_precise *p = &attr_precise_tab[i];
        snprintf(path, sizeof path, "%s/bus/event_source/devices/%s/type", root, p->pmu);
        if (mw_read_small(path, buf, sizeof buf) <= 0)
            continue;
        uint32_t type = (uint32_t)strtoul(buf, NULL, 0);
        uint64_t cfg = 0, aux_cfg = 0;
        if (p->event[0]) {
            snprintf(path, sizeof path, "%s/bus/event_source/devices/%s/events/%s", root, p->pmu,
                     p->event);
            if (mw_read_small(path, buf, sizeof buf) <= 0 || attr_parse_terms(buf, &cfg))
                continue;
        }
        if (p->aux) {
            snprintf(path, sizeof path, "%s/bus/event_source/devices/%s/events/%s", root, p->pmu,
                     p->aux);
            if (mw_read_small(path, buf, sizeof buf) <= 0 || attr_parse_terms(buf, &aux_cfg))
                continue;
        }
        size_t need = p->aux ? 2 : 1;
        if (cap < need) {
            snprintf(why, why_len, "%s needs %zu attributes, room for %zu", p->what, need, cap);
            return MW_ERR_TOOBIG;
        }
        size_t k = 0;
        if (p->aux) {
            memset(&a[k], 0, sizeof a[k]);
            a[k].size = sizeof a[k];
            a[k].type = type;
            a[k].config = aux_cfg;
            a[k].exclude_kernel = 1;
            a[k].exclude_hv = 1;
            a[k].disabled = 1;
            k++;
        }
        memset(&a[k], 0, sizeof a[k]);
        a[k].size = sizeof a[k];
        a[k].type = type;
        a[k].config = cfg;
        if (p->ldlat_in_config1)
            a[k].config1 = ldlat_cycles;
        a[k].sample_period = period ? period : 1;
        a[k].sample_type = MW_LOAD_SAMPLE_TYPE;
        a[k].precise_ip = p->ldlat_in_config1 ? 2 : 0;
        a[k].exclude_kernel = 1;
        a[k].exclude_hv = 1;
        a[k].use_clockid = 1;
        a[k].clockid = 1;
        k++;
        *n = k;
        if (why_len)
            snprintf(why, why_len, "%s", p->what);
        return 0;
    }
    snprintf(why, why_len,
             "no precise load sampling: %s/bus/event_source/devices has neither a core PMU with "
             "a mem-loads event (Intel PEBS) nor ibs_op (AMD IBS); virtual machines usually "
             "expose neither",
             root);
    return MW_ERR_NOPMU;
}
