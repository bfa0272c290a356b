/*
 * counters/probe_lat.c: memwatch's software latency probe (include/memwatch/probe_lat.h).
 *
 * Owns: one mmap'ed region per probe, a pointer chain through `lines` cache
 * lines placed in distinct, randomly chosen 4 KiB pages of that region, at a
 * random line offset in each page, visited in a random page order; the timing
 * of bursts of dependent loads of those lines after they were flushed; the
 * window of recent measurements' bursts a reading is the median of.
 * Calls: libc (mmap, madvise, clock_gettime, getenv: not with MW_PROBE_LAT_NO_ENV),
 * counters/tsc.h, mw_log.
 * Threading: a handle is used by one thread at a time; distinct handles are
 * independent. Never calls malloc (the probe runs inside profiled programs);
 * not async-signal-safe (mw_log on errors in create).
 *
 * One burst: flush every line of the chain (clflushopt, or clflush where the CPU
 * lacks it), fence (mfence: the flushes and earlier loads are complete), then
 * `lfence; rdtsc; lfence`, `lines` dependent loads p = *p, `rdtscp; lfence`
 * (or counters/tsc.h's cpuid-serialized pair with MW_PROBE_LAT_CPUID). The timer's
 * own cost (measured at creation, median of empty timed regions) is subtracted
 * and the rest divided by the number of loads. Flushing goes through the TLB,
 * so the translations of the chain's pages are warm when the timed loads start.
 * Prefetchers cannot follow the chain: consecutive loads go to different pages
 * in random order, one line per page.
 *
 * Placement: small pages by default (MADV_NOHUGEPAGE; only the chain's pages
 * are touched), so the lines sit in `lines` unrelated physical pages and the
 * reading averages over where memory lives (in a VM: near and far host memory);
 * MW_PROBE_LAT_HUGE puts the region in one transparent huge page instead.
 *
 * Window: every measurement's bursts go into a ring of the last
 * MW_PROBE_LAT_MAX_WINDOW measurements with their start times; the reading is
 * the median over the bursts of those that started less than window_ns before
 * the current one. Consecutive readings 10 ms apart are correlated (the
 * machine's own noise lasts tens of ms), so pooling a few of them steadies the
 * reading far more than more bursts at one instant would (docs/probe_lat.md).
 */
#include <memwatch/probe_lat.h>

#include "envval.h"
#include "tsc.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#define PL_LINE 64u
#define PL_PAGE 4096u
#define PL_DEFAULT_LINES 32u
#define PL_DEFAULT_BURSTS 5u
#define PL_DEFAULT_REGION (2u << 20)
#define PL_MAX_LINES 4096u
#define PL_MAX_BURSTS 4096u
#define PL_HUGE (2u << 20)
#define PL_DEFAULT_WINDOW_NS MW_PROBE_LAT_DEFAULT_WINDOW_NS
#define PL_RING MW_PROBE_LAT_MAX_WINDOW

struct mw_probe_lat {
    unsigned lines, bursts;
    size_t region_bytes;
    void *map;          /* what mmap returned (munmap'ed whole) */
    size_t map_bytes;
    char *region;       /* 2 MiB-aligned start inside map */
    void **start;       /* first line of the chain */
    void **order;       /* the chain's lines, in visiting order (in the map's tail) */
    uint64_t *cycles;   /* per-burst scratch (in the map's tail) */
    uint64_t *ring;     /* PL_RING x bursts cycles: the window (in the map's tail) */
    uint64_t *pool;     /* PL_RING x bursts scratch for the window's median */
    uint64_t ring_t[PL_RING]; /* start time (ns) of each ring slot's measurement */
    unsigned ring_head, ring_used;
    uint64_t window_ns; /* 0: no window */
    uint64_t timer_overhead;
    double tsc_hz;
    int use_clflushopt;
    int use_cpuid;      /* MW_PROBE_LAT_CPUID */
};

#if defined(__x86_64__)

static int pl_cpu_features(int *have_clflush, int *have_clflushopt, int *have_tsc)
{
    unsigned a, b, c, d;
    *have_clflush = *have_clflushopt = *have_tsc = 0;
    if (!__get_cpuid(1, &a, &b, &c, &d))
        return -1;
    *have_tsc = (d >> 4) & 1;
    *have_clflush = (d >> 19) & 1;
    if (__get_cpuid_max(0, NULL) >= 7) {
        __cpuid_count(7, 0, a, b, c, d);
        *have_clflushopt = (b >> 23) & 1;
    }
    return 0;
}

static inline void pl_flush(void *p, int opt)
{
    if (opt)
        __asm__ volatile(".byte 0x66; clflush %0" : "+m"(*(volatile char *)p));
    else
        __asm__ volatile("clflush %0" : "+m"(*(volatile char *)p));
}

static inline void pl_mfence(void)
{
    __asm__ volatile("mfence" ::: "memory");
}

/* lfence-serialized reads: `lfence; rdtsc; lfence` and `rdtscp; lfence`. lfence
 * waits for every earlier instruction to complete locally (Intel; AMD with the
 * LFENCE-serializing bit that Linux sets on every Zen), so nothing leaks across
 * the timer, and unlike cpuid it does not trap to the hypervisor in a VM. */
static inline uint64_t pl_tsc_start_lfence(void)
{
    uint32_t lo, hi;
    __asm__ volatile("lfence\n\trdtsc\n\tlfence" : "=a"(lo), "=d"(hi) : : "memory");
    return ((uint64_t)hi << 32) | lo;
}
static inline uint64_t pl_tsc_end_lfence(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtscp\n\tlfence" : "=a"(lo), "=d"(hi) : : "rcx", "memory");
    return ((uint64_t)hi << 32) | lo;
}

#endif

/* xorshift64*: the chain's layout only needs to defeat prefetchers. */
static uint64_t pl_rand(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1Dull;
}

/* Heapsort: O(n log n) for the window's pool, no recursion, no malloc. */
static void pl_sift(uint64_t *v, unsigned root, unsigned n)
{
    for (;;) {
        unsigned c = 2 * root + 1;
        if (c >= n)
            return;
        if (c + 1 < n && v[c + 1] > v[c])
            c++;
        if (v[root] >= v[c])
            return;
        uint64_t x = v[root];
        v[root] = v[c];
        v[c] = x;
        root = c;
    }
}

static void pl_sort_u64(uint64_t *v, unsigned n)
{
    if (n < 2)
        return;
    for (unsigned i = n / 2; i-- > 0;)
        pl_sift(v, i, n);
    for (unsigned end = n - 1; end > 0; end--) {
        uint64_t x = v[0];
        v[0] = v[end];
        v[end] = x;
        pl_sift(v, 0, end);
    }
}

static uint64_t pl_median_u64(uint64_t *v, unsigned n)
{
    pl_sort_u64(v, n);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#if defined(__x86_64__)
/* Cost of the serialized timer pair around nothing: the median of 31 tries. */
static uint64_t pl_timer_overhead(const mw_probe_lat *p, uint64_t *scratch)
{
    for (unsigned i = 0; i < 31; i++) {
        uint64_t t0 = p->use_cpuid ? mw_tsc_start() : pl_tsc_start_lfence();
        uint64_t t1 = p->use_cpuid ? mw_tsc_end() : pl_tsc_end_lfence();
        scratch[i] = t1 - t0;
    }
    return pl_median_u64(scratch, 31);
}

/* One burst: flush, fence, time the chase. Returns TSC cycles for all loads. */
static uint64_t pl_burst(mw_probe_lat *p)
{
    for (unsigned i = 0; i < p->lines; i++)
        pl_flush(p->order[i], p->use_clflushopt);
    pl_mfence();
    void **q = p->start;
    uint64_t t0, t1;
    if (p->use_cpuid) {
        t0 = mw_tsc_start();
        for (unsigned i = 0; i < p->lines; i++)
            q = (void **)*(void *volatile *)q;
        t1 = mw_tsc_end();
    } else {
        t0 = pl_tsc_start_lfence();
        for (unsigned i = 0; i < p->lines; i++)
            q = (void **)*(void *volatile *)q;
        t1 = pl_tsc_end_lfence();
    }
    /* keep the chase: q is the start again after a full cycle */
    __asm__ volatile("" : : "r"(q) : "memory");
    uint64_t dt = t1 - t0;
    return dt > p->timer_overhead ? dt - p->timer_overhead : 0;
}
#endif

/* MEMWATCH_PROBE_WINDOW (ms, 0: off), MEMWATCH_PROBE_LAYOUT (small, huge),
 * MEMWATCH_PROBE_LINES and MEMWATCH_PROBE_BURSTS (mw_probe_lat_config_env) fill what the
 * caller's configuration left at its default, so the profiler
 * and the validation (which create the probe the same way) follow them alike. */
__attribute__((hot)) static void pl_env_count(const char *name, unsigned *val, unsigned lo, unsigned hi)
{
    const char *v = mw_getenv(name);
    if (!v || !*v || *val)
        return;
    char *end;
    unsigned long n = strtoul(v, &end, 10);
    if (*end || n < lo || n > hi)
        mw_log(MW_LOG_WARN, "probe_lat: %s=%s: expected %u..%u; using the default", name, v, lo,
               hi);
    else
        *val = (unsigned)n;
}

__attribute__((hot)) static void pl_env(unsigned *flags, uint64_t *window_ns)
{
    const char *v = mw_getenv("MEMWATCH_PROBE_WINDOW");
    if (v && *v && !*window_ns && !(*flags & MW_PROBE_LAT_NO_WINDOW)) {
        char *end;
        unsigned long ms = strtoul(v, &end, 10);
        if (*end || ms > 10000)
            mw_log(MW_LOG_WARN, "probe_lat: MEMWATCH_PROBE_WINDOW=%s: expected 0..10000 (ms); "
                                "using the default", v);
        else if (ms == 0)
            *flags |= MW_PROBE_LAT_NO_WINDOW;
        else
            *window_ns = (uint64_t)ms * 1000000u;
    }
    v = mw_getenv("MEMWATCH_PROBE_LAYOUT");
    if (v && *v && !(*flags & MW_PROBE_LAT_HUGE)) {
        if (!strcmp(v, "huge"))
            *flags |= MW_PROBE_LAT_HUGE;
        else if (strcmp(v, "small"))
            mw_log(MW_LOG_WARN, "probe_lat: MEMWATCH_PROBE_LAYOUT=%s: expected small or huge; "
                                "using small", v);
    }
}

uint64_t mw_probe_lat_window_ns(const mw_probe_lat_config *cfg)
{
    mw_probe_lat_config c = cfg ? *cfg : (mw_probe_lat_config){0};
    mw_probe_lat_config_env(&c);
    return (c.flags & MW_PROBE_LAT_NO_WINDOW) ? 0 : c.window_ns;
}

/* The one place the environment and the defaults are applied: create and
 * window_ns work on a copy made complete here. */
__attribute__((hot)) void mw_probe_lat_config_env(mw_probe_lat_config *cfg)
{
    if (!cfg)
        return;
    if (!(cfg->flags & MW_PROBE_LAT_NO_ENV)) {
        pl_env_count("MEMWATCH_PROBE_LINES", &cfg->lines, 2, PL_MAX_LINES);
        pl_env_count("MEMWATCH_PROBE_BURSTS", &cfg->bursts, 1, 1000);
        pl_env(&cfg->flags, &cfg->window_ns);
    }
    if (!cfg->lines)
        cfg->lines = PL_DEFAULT_LINES;
    if (!cfg->bursts)
        cfg->bursts = PL_DEFAULT_BURSTS;
    if (!cfg->window_ns && !(cfg->flags & MW_PROBE_LAT_NO_WINDOW))
        cfg->window_ns = PL_DEFAULT_WINDOW_NS;
    cfg->flags |= MW_PROBE_LAT_NO_ENV;
}

int mw_probe_lat_create(const mw_probe_lat_config *cfg, mw_probe_lat **out)
{
    if (!out)
        return -EINVAL;
    *out = NULL;
#if !defined(__x86_64__)
    (void)cfg;
    mw_log(MW_LOG_WARN, "probe_lat: needs x86-64 (cache-line flush and a TSC); this build "
                        "targets another architecture");
    return MW_ERR_UNSUPPORTED;
#else
    int have_clflush, have_opt, have_tsc;
    if (pl_cpu_features(&have_clflush, &have_opt, &have_tsc) < 0 || !have_tsc) {
        mw_log(MW_LOG_WARN, "probe_lat: the CPU reports no time-stamp counter (cpuid.1:edx.4)");
        return MW_ERR_UNSUPPORTED;
    }
    if (!have_clflush) {
        mw_log(MW_LOG_WARN, "probe_lat: the CPU reports neither clflushopt nor clflush");
        return MW_ERR_UNSUPPORTED;
    }
    mw_probe_lat_config c = cfg ? *cfg : (mw_probe_lat_config){0};
    mw_probe_lat_config_env(&c);
    unsigned lines = c.lines, bursts = c.bursts, flags = c.flags;
    size_t region = c.region_bytes ? c.region_bytes : PL_DEFAULT_REGION;
    region = (region + PL_PAGE - 1) / PL_PAGE * PL_PAGE;
    if (lines < 2 || lines > PL_MAX_LINES || bursts > PL_MAX_BURSTS) {
        mw_log(MW_LOG_ERROR, "probe_lat: lines must lie in 2..%u and bursts in 1..%u", PL_MAX_LINES,
               PL_MAX_BURSTS);
        return -EINVAL;
    }
    size_t pages = region / PL_PAGE;
    if (pages < lines) {
        mw_log(MW_LOG_ERROR, "probe_lat: a region of %zu bytes has fewer 4 KiB pages than the "
                             "%u lines that must each get their own page", region, lines);
        return -EINVAL;
    }
    /* Tail after the region: the handle, the visiting order, per-burst scratch,
     * and a page-index table used while building the chain. */
    size_t tail = sizeof(mw_probe_lat) + lines * sizeof(void *) +
                  (bursts > 31 ? bursts : 31) * sizeof(uint64_t) +
                  2 * (size_t)PL_RING * bursts * sizeof(uint64_t) + pages * sizeof(uint32_t) + 64;
    tail = (tail + PL_PAGE - 1) / PL_PAGE * PL_PAGE;
    size_t map_bytes = region + PL_HUGE + tail;
    void *map = mmap(NULL, map_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED) {
        int e = errno;
        mw_log(MW_LOG_ERROR, "probe_lat: mmap of %zu bytes failed: %s", map_bytes, strerror(e));
        return -e;
    }
    char *reg = (char *)(((uintptr_t)map + PL_HUGE - 1) & ~(uintptr_t)(PL_HUGE - 1));
    int small = !(flags & MW_PROBE_LAT_HUGE);
    if (small)
        (void)madvise(reg, region, MADV_NOHUGEPAGE); /* best effort */
    else if (region >= PL_HUGE)
        (void)madvise(reg, region, MADV_HUGEPAGE); /* best effort: THP may be off */
    char *t = reg + region;
    mw_probe_lat *p = (mw_probe_lat *)t;
    t += (sizeof *p + 63) & ~(size_t)63;
    memset(p, 0, sizeof *p);
    p->order = (void **)t;
    t += lines * sizeof(void *);
    p->cycles = (uint64_t *)t;
    t += (bursts > 31 ? bursts : 31) * sizeof(uint64_t);
    p->ring = (uint64_t *)t;
    t += (size_t)PL_RING * bursts * sizeof(uint64_t);
    p->pool = (uint64_t *)t;
    t += (size_t)PL_RING * bursts * sizeof(uint64_t);
    uint32_t *perm = (uint32_t *)t;
    p->lines = lines;
    p->bursts = bursts;
    p->region_bytes = region;
    p->map = map;
    p->map_bytes = map_bytes;
    p->region = reg;
    p->use_clflushopt = have_opt;

    /* Touch every page once, before the chain is written: no timed load faults
     * (with small pages only the chain's pages are touched, below). */
    if (!small)
        for (size_t off = 0; off < region; off += PL_PAGE)
            ((volatile char *)reg)[off + PL_LINE * 63] = 0;
    /* Random distinct pages (partial Fisher-Yates), random line in each. */
    uint64_t seed = mw_rdtsc() | 1;
    for (size_t i = 0; i < pages; i++)
        perm[i] = (uint32_t)i;
    for (unsigned i = 0; i < lines; i++) {
        size_t j = i + (size_t)(pl_rand(&seed) % (pages - i));
        uint32_t x = perm[i];
        perm[i] = perm[j];
        perm[j] = x;
        unsigned line = (unsigned)(pl_rand(&seed) % (PL_PAGE / PL_LINE));
        p->order[i] = reg + (size_t)perm[i] * PL_PAGE + (size_t)line * PL_LINE;
    }
    for (unsigned i = 0; i < lines; i++)
        *(void **)p->order[i] = p->order[(i + 1) % lines];
    p->start = (void **)p->order[0];
    p->use_cpuid = (flags & MW_PROBE_LAT_CPUID) != 0;
    p->window_ns = (flags & MW_PROBE_LAT_NO_WINDOW) ? 0 : c.window_ns;
    if (p->window_ns > 3600000000000ull)
        p->window_ns = 3600000000000ull;
    p->timer_overhead = pl_timer_overhead(p, p->cycles);
    p->tsc_hz = mw_tsc_hz(NULL);
    if (!(p->tsc_hz > 0)) {
        mw_log(MW_LOG_WARN, "probe_lat: the TSC frequency is unknown, so cycles cannot become ns");
        munmap(map, map_bytes);
        return MW_ERR_UNSUPPORTED;
    }
    *out = p;
    return 0;
#endif
}

static double pl_median_sorted(const uint64_t *v, unsigned n)
{
    return n % 2 ? (double)v[n / 2] : ((double)v[n / 2 - 1] + (double)v[n / 2]) / 2.0;
}

int mw_probe_lat_measure(mw_probe_lat *p, mw_probe_lat_result *out)
{
    if (!p || !out)
        return -EINVAL;
#if !defined(__x86_64__)
    return MW_ERR_UNSUPPORTED;
#else
    uint64_t c0 = mw_now_ns();
    (void)pl_burst(p); /* warm-up: code and the chain's translations */
    for (unsigned b = 0; b < p->bursts; b++)
        p->cycles[b] = pl_burst(p);
    unsigned n = p->bursts;
    /* into the ring (the oldest slot goes) */
    unsigned slot = p->ring_head;
    for (unsigned b = 0; b < n; b++) /* loops, not memcpy: measure stays libc-free */
        p->ring[(size_t)slot * n + b] = p->cycles[b];
    p->ring_t[slot] = c0;
    p->ring_head = (slot + 1) % PL_RING;
    if (p->ring_used < PL_RING)
        p->ring_used++;
    /* the window: this measurement and the recent ones (a clock that went
     * backwards, or a slot from the future, counts as stale) */
    unsigned m = 0, k = 0;
    for (unsigned i = 0; i < p->ring_used; i++) {
        unsigned s = (slot + PL_RING - i) % PL_RING;
        if (i > 0 && (!p->window_ns || p->ring_t[s] > c0 || c0 - p->ring_t[s] >= p->window_ns))
            break;
        for (unsigned b = 0; b < n; b++)
            p->pool[k++] = p->ring[(size_t)s * n + b];
        m++;
    }
    pl_sort_u64(p->cycles, n);
    pl_sort_u64(p->pool, k);
    double med = pl_median_sorted(p->pool, k);
    double per = 1e9 / p->tsc_hz / (double)p->lines;
    out->median_cycles = med / (double)p->lines;
    out->median_ns = med * per;
    out->min_ns = (double)p->pool[0] * per;
    out->max_ns = (double)p->pool[k - 1] * per;
    out->bursts = n;
    out->lines = p->lines;
    out->window_bursts = k;
    out->window_measurements = m;
    out->this_ns = pl_median_sorted(p->cycles, n) * per;
    out->cost_ns = mw_now_ns() - c0;
    return 0;
#endif
}

void mw_probe_lat_reset(mw_probe_lat *p)
{
    if (p)
        p->ring_used = 0;
}

double mw_probe_lat_baseline(mw_probe_lat *p)
{
    double v[7];
    int k = 0;
    for (int i = 0; i < 7; i++) {
        mw_probe_lat_result r;
        if (mw_probe_lat_measure(p, &r) == 0 && r.median_ns > 0)
            v[k++] = r.median_ns;
    }
    for (int i = 1; i < k; i++)
        for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
            double t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    return k ? v[k / 2] : 0;
}

int mw_probe_lat_bursts(mw_probe_lat *p, double *ns, unsigned n)
{
    if (!p || (!ns && n))
        return -EINVAL;
#if !defined(__x86_64__)
    return MW_ERR_UNSUPPORTED;
#else
    double per = 1e9 / p->tsc_hz / (double)p->lines;
    (void)pl_burst(p);
    for (unsigned b = 0; b < n; b++)
        ns[b] = (double)pl_burst(p) * per;
    return 0;
#endif
}

void mw_probe_lat_destroy(mw_probe_lat *p)
{
    if (p)
        munmap(p->map, p->map_bytes);
}
