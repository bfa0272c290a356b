/*
 * calibrate/bench_common.c: the timing harness and shared pieces of the
 * calibration microbenchmarks: repeat statistics, timer calibration (Fang et
 * al.: serialized TSC reads, overhead subtracted, TSC rate cross-checked
 * against CLOCK_MONOTONIC_RAW), sysfs cache information, CPU lists, pinning,
 * the ends of grids, huge-page memory, a spin barrier, Sattolo cycles and the
 * pointer chase.
 * May call: counters/tsc.h, libc. Threading: everything here is thread-safe;
 * timer calibration runs once (pthread_once).
 */
#include "bench_int.h"
#include "tsc.h"

#include <memwatch/pmu.h>

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* ---------------------------------------------------------- statistics */
static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

MW_API void mw_stats_compute(const double *v, unsigned n, int higher_is_better, mw_stats *out)
{
    memset(out, 0, sizeof *out);
    if (!n)
        return;
    double tmp[MW_BENCH_MAX_REPEATS * 4];
    double *s = n <= sizeof tmp / sizeof tmp[0] ? tmp : malloc(n * sizeof *s);
    if (!s)
        return;
    memcpy(s, v, n * sizeof *s);
    qsort(s, n, sizeof *s, cmp_double);
    double sum = 0, sq = 0;
    for (unsigned i = 0; i < n; i++)
        sum += s[i];
    double mean = sum / n;
    for (unsigned i = 0; i < n; i++)
        sq += (s[i] - mean) * (s[i] - mean);
    out->n = n;
    out->mean = mean;
    out->median = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
    out->best = higher_is_better ? s[n - 1] : s[0];
    out->worst = higher_is_better ? s[0] : s[n - 1];
    out->cv = n > 1 && mean != 0 ? sqrt(sq / (n - 1)) / fabs(mean) : 0;
    if (s != tmp)
        free(s);
}

/* --------------------------------------------------------------- timer */
static mw_timer_info timer_info;
static pthread_once_t timer_once = PTHREAD_ONCE_INIT;

static double measure_overhead(void)
{
    double best = 1e30;
    for (int i = 0; i < 2000; i++) {
        uint64_t a = mw_tsc_start();
        uint64_t b = mw_tsc_end();
        if ((double)(b - a) < best)
            best = (double)(b - a);
    }
    return best;
}

static double measure_clock_hz(void)
{
    /* Best of three 30 ms windows, each bracketed tightly by clock reads. */
    double best = 0, best_err = 1e30;
    for (int i = 0; i < 3; i++) {
        struct timespec a, b, req = {0, 30 * 1000 * 1000};
        uint64_t t0a = mw_rdtsc();
        clock_gettime(CLOCK_MONOTONIC_RAW, &a);
        uint64_t t0b = mw_rdtsc();
        nanosleep(&req, NULL);
        uint64_t t1a = mw_rdtsc();
        clock_gettime(CLOCK_MONOTONIC_RAW, &b);
        uint64_t t1b = mw_rdtsc();
        double ns = (double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec);
        double err = (double)(t0b - t0a) + (double)(t1b - t1a);
        if (ns > 0 && err < best_err) {
            best_err = err;
            best = 0.5 * ((double)(t1a - t0b) + (double)(t1b - t0a)) * 1e9 / ns;
        }
    }
    return best;
}

static void read_thp(char *mode, size_t n)
{
    snprintf(mode, n, "?");
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (!f)
        return;
    char line[128];
    if (fgets(line, sizeof line, f)) {
        char *a = strchr(line, '['), *b = a ? strchr(a, ']') : NULL;
        if (a && b && (size_t)(b - a - 1) < n) {
            memcpy(mode, a + 1, (size_t)(b - a - 1));
            mode[b - a - 1] = 0;
        }
    }
    fclose(f);
}

static void timer_init(void)
{
    mw_timer_info *t = &timer_info;
    const char *src = NULL;
    t->have_tsc = MW_HAVE_CYCLE_COUNTER;
    t->tsc_hz = mw_tsc_hz(&src);
    snprintf(t->tsc_source, sizeof t->tsc_source, "%s", src ? src : "?");
    t->clock_hz = MW_HAVE_CYCLE_COUNTER ? measure_clock_hz() : 1e9;
    t->tsc_clock_diff = t->tsc_hz > 0 ? (t->clock_hz - t->tsc_hz) / t->tsc_hz : 0;
    t->overhead_cycles = measure_overhead();
    read_thp(t->thp, sizeof t->thp);
    t->huge_pages = !strcmp(t->thp, "always") || !strcmp(t->thp, "madvise");
    if (!t->huge_pages)
        snprintf(t->note, sizeof t->note,
                 "transparent huge pages are '%.15s': benchmarks use 4 KiB pages, so large "
                 "footprints also pay TLB misses",
                 t->thp);
    if (t->tsc_hz > 0 && fabs(t->tsc_clock_diff) > 0.01)
        mw_log(MW_LOG_WARN,
               "TSC rate %.0f Hz (%s) differs from CLOCK_MONOTONIC_RAW's %.0f Hz by %.2f %%",
               t->tsc_hz, t->tsc_source, t->clock_hz, 100 * t->tsc_clock_diff);
}

MW_API int mw_timer_info_get(mw_timer_info *out)
{
    pthread_once(&timer_once, timer_init);
    *out = timer_info;
    if (!(timer_info.tsc_hz > 0))
        return MW_ERR_UNSUPPORTED;
    return 0;
}

double mw_bench_timer_overhead(void)
{
    pthread_once(&timer_once, timer_init);
    return timer_info.overhead_cycles;
}

double mw_bench_tsc_hz(void)
{
    pthread_once(&timer_once, timer_init);
    return timer_info.tsc_hz;
}

/* ----------------------------------------------------------- cache info */
/* "32768K", "1M", "48K" or plain bytes. */
static size_t parse_size(const char *s)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end == 'K' || *end == 'k')
        v <<= 10;
    else if (*end == 'M' || *end == 'm')
        v <<= 20;
    else if (*end == 'G' || *end == 'g')
        v <<= 30;
    return (size_t)v;
}

/* Counts CPUs in a list such as "0-3,8,10-11". */
/* CPUs in a list such as "0-3,8" (counters' mw_cpulist_parse); 0 if malformed. */
static unsigned count_cpu_list(const char *s)
{
    enum { MAX_CPUS = 8192 }; /* the kernel's largest NR_CPUS */
    int *cpus = malloc(MAX_CPUS * sizeof *cpus);
    int n = cpus ? mw_cpulist_parse(s, cpus, MAX_CPUS) : 0;
    free(cpus);
    return n > 0 ? (unsigned)n : 0;
}

MW_API int mw_cache_info_read(const char *sys_root, int cpu, mw_cache_info *out)
{
    memset(out, 0, sizeof *out);
    out->line = 64;
    if (!sys_root)
        sys_root = "/sys";
    for (int idx = 0; idx < 16 && out->n < MW_CACHE_MAX_LEVELS; idx++) {
        char dir[512], path[600], buf[256];
        snprintf(dir, sizeof dir, "%s/devices/system/cpu/cpu%d/cache/index%d", sys_root, cpu, idx);
        snprintf(path, sizeof path, "%s/type", dir);
        if (mw_read_small(path, buf, sizeof buf) < 0)
            continue;
        if (!strcmp(buf, "Instruction"))
            continue;
        mw_cache_level lv;
        memset(&lv, 0, sizeof lv);
        snprintf(lv.type, sizeof lv.type, "%.15s", buf);
        snprintf(path, sizeof path, "%s/level", dir);
        if (mw_read_small(path, buf, sizeof buf) < 0)
            continue;
        lv.level = atoi(buf);
        snprintf(path, sizeof path, "%s/size", dir);
        if (mw_read_small(path, buf, sizeof buf) < 0)
            continue;
        lv.size = parse_size(buf);
        snprintf(path, sizeof path, "%s/coherency_line_size", dir);
        lv.line = mw_read_small(path, buf, sizeof buf) >= 0 ? (unsigned)atoi(buf) : 64;
        snprintf(path, sizeof path, "%s/ways_of_associativity", dir);
        lv.ways = mw_read_small(path, buf, sizeof buf) >= 0 ? (unsigned)atoi(buf) : 0;
        snprintf(path, sizeof path, "%s/shared_cpu_list", dir);
        lv.sharing = mw_read_small(path, buf, sizeof buf) >= 0 ? count_cpu_list(buf) : 0;
        if (!lv.size || lv.level <= 0)
            continue;
        /* insertion sort by level */
        unsigned i = out->n++;
        while (i > 0 && out->level[i - 1].level > lv.level) {
            out->level[i] = out->level[i - 1];
            i--;
        }
        out->level[i] = lv;
    }
    if (!out->n)
        return MW_ERR_NODATA;
    out->llc_size = out->level[out->n - 1].size;
    if (out->level[0].line)
        out->line = out->level[0].line;
    return 0;
}

static size_t llc_cached;
static pthread_once_t llc_once = PTHREAD_ONCE_INIT;
static void llc_init(void)
{
    mw_cache_info ci;
    if (mw_cache_info_read(NULL, 0, &ci) == 0)
        llc_cached = ci.llc_size;
    if (!llc_cached) {
        llc_cached = (size_t)32 << 20;
        mw_log(MW_LOG_WARN, "no cache information in sysfs: assuming a 32 MiB last-level cache");
    }
}

size_t mw_bench_big_bytes(void)
{
    return mw_bench_llc_times(4);
}

size_t mw_bench_llc_times(unsigned k)
{
    pthread_once(&llc_once, llc_init);
    size_t b = k * llc_cached;
    if (b < ((size_t)128 << 20))
        b = (size_t)128 << 20;
    return (b + MW_HUGE_ALIGN - 1) & ~(MW_HUGE_ALIGN - 1);
}

MW_API double mw_bench_loadavg(void)
{
    char buf[128];
    if (mw_read_small("/proc/loadavg", buf, sizeof buf) < 0)
        return -1;
    char *end;
    double v = strtod(buf, &end);
    return end == buf ? -1 : v;
}

/* ---------------------------------------------------------------- CPUs */
MW_API int mw_bench_cpus(int *cpus, int max)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) < 0)
        return -errno;
    int n = 0;
    for (int c = 0; c < CPU_SETSIZE && n < max; c++)
        if (CPU_ISSET(c, &set))
            cpus[n++] = c;
    return n;
}

int mw_bench_cpu_list(const int *cfg_cpus, unsigned ncfg, int *cpus, int max)
{
    if (cfg_cpus && ncfg) {
        int n = (int)ncfg < max ? (int)ncfg : max;
        memcpy(cpus, cfg_cpus, (size_t)n * sizeof *cpus);
        return n;
    }
    return mw_bench_cpus(cpus, max);
}

unsigned mw_bench_grid_end(unsigned *out, unsigned n, unsigned cap, unsigned top)
{
    if (n && out[n - 1] != top) {
        if (n < cap)
            out[n++] = top;
        else
            out[n - 1] = top;
    }
    return n;
}

int mw_bench_pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) < 0)
        return -errno;
    return 0;
}

int mw_bench_pin_saved(int cpu, mw_bench_affinity *sv)
{
    sv->ok = sched_getaffinity(0, sizeof sv->set, &sv->set) == 0;
    if (cpu < 0) {
        int cpus[MW_BENCH_MAX_CPUS];
        int n = mw_bench_cpus(cpus, MW_BENCH_MAX_CPUS);
        if (n <= 0)
            return n < 0 ? n : -ENODEV;
        cpu = cpus[0];
    }
    int rc = mw_bench_pin(cpu);
    return rc < 0 ? rc : cpu;
}

void mw_bench_unpin(const mw_bench_affinity *sv)
{
    if (sv->ok)
        sched_setaffinity(0, sizeof sv->set, &sv->set);
}

/* --------------------------------------------------------------- memory */
void *mw_bench_alloc(size_t bytes, int *huge)
{
    if (huge)
        *huge = 0;
    size_t len = bytes + MW_HUGE_ALIGN;
    char *raw = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED)
        return NULL;
    uintptr_t a = ((uintptr_t)raw + MW_HUGE_ALIGN - 1) & ~(uintptr_t)(MW_HUGE_ALIGN - 1);
    size_t head = a - (uintptr_t)raw;
    if (head)
        munmap(raw, head);
    size_t tail = len - head - bytes;
    if (tail)
        munmap((char *)a + bytes, tail);
#ifdef MADV_HUGEPAGE
    if (madvise((void *)a, bytes, MADV_HUGEPAGE) == 0 && huge) {
        mw_timer_info t;
        mw_timer_info_get(&t);
        *huge = t.huge_pages;
    }
#endif
    return (void *)a;
}

double mw_bench_huge_fraction(const void *p, size_t bytes)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f)
        return -1;
    uintptr_t lo = (uintptr_t)p, hi = lo + bytes;
    int inside = 0, seen = 0;
    double huge = 0;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        unsigned long long a, b, kb;
        char c;
        /* a mapping's header: "start-end perms ..."; its fields: "Name: value" */
        if (sscanf(line, "%llx-%llx %c", &a, &b, &c) == 3 && strchr(line, '-') < strchr(line, ' ')) {
            inside = a < hi && b > lo;
            seen |= inside;
        } else if (inside && sscanf(line, "AnonHugePages: %llu kB", &kb) == 1) {
            huge += (double)kb * 1024.0;
        }
    }
    fclose(f);
    if (!seen || !bytes)
        return -1;
    return huge >= (double)bytes ? 1.0 : huge / (double)bytes;
}

void mw_bench_free(void *p, size_t bytes)
{
    if (p)
        munmap(p, bytes);
}

/* -------------------------------------------------------------- barrier */
void mw_spin_barrier_init(mw_spin_barrier *b, unsigned n)
{
    atomic_store(&b->count, 0);
    atomic_store(&b->sense, 0);
    b->n = n;
}

void mw_spin_barrier_wait(mw_spin_barrier *b, unsigned *local_sense)
{
    unsigned s = *local_sense = !*local_sense;
    if (atomic_fetch_add(&b->count, 1) + 1 == b->n) {
        atomic_store(&b->count, 0);
        atomic_store_explicit(&b->sense, s, memory_order_release);
    } else {
        unsigned spins = 0;
        while (atomic_load_explicit(&b->sense, memory_order_acquire) != s) {
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
            /* With more threads than CPUs, give the CPU away now and then. */
            if (++spins % 4096 == 0)
                sched_yield();
        }
    }
}

/* ------------------------------------------------------ Sattolo + chase */
MW_API int mw_sattolo_cycle(uint32_t *next, size_t n, uint64_t seed)
{
    if (!next || n == 0 || n > UINT32_MAX)
        return -EINVAL;
    /* Sattolo: a uniformly random permutation consisting of one n-cycle. */
    uint32_t *perm = malloc(n * sizeof *perm);
    if (!perm)
        return -ENOMEM;
    for (size_t i = 0; i < n; i++)
        perm[i] = (uint32_t)i;
    uint64_t s = seed ? seed : 0x9e3779b97f4a7c15ull;
    for (size_t i = n - 1; i > 0; i--) {
        size_t j = (size_t)(mw_rng_next(&s) % i); /* j < i: never a fixed point */
        uint32_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    /* perm as a cycle: visit order perm[0] -> perm[1] -> ... The Sattolo
     * permutation itself is one cycle: use it directly as successor map. */
    for (size_t i = 0; i < n; i++)
        next[i] = perm[i];
    free(perm);
    return 0;
}

/* Large cycles are built by CHASE_PAR_T threads (the serial Sattolo shuffle
 * of a GiB footprint pays two cache misses per line: seconds). The visit
 * order interleaves CHASE_PAR_T independently shuffled strided sets: visit i
 * is a random line of set i mod T (lines congruent to it modulo T), so
 * consecutive loads still land on random pages anywhere in the footprint and
 * the order is one cycle through every line. Deterministic in seed. */
#define CHASE_PAR_T 8u
#define CHASE_PAR_MIN ((size_t)1 << 20) /* lines (64 MiB) */

struct chase_par {
    char *base;
    uint32_t *ord;
    size_t lines;
    uint64_t seed;
    unsigned t;
    int phase; /* 0: shuffle set t; 1: link visits of share t */
};

static void *chase_par_worker(void *arg)
{
    struct chase_par *w = arg;
    size_t T = CHASE_PAR_T, t = w->t;
    if (w->phase == 0) {
        size_t m = w->lines > t ? (w->lines - t + T - 1) / T : 0;
        for (size_t k = 0; k < m; k++)
            w->ord[k * T + t] = (uint32_t)(t + T * k);
        uint64_t s = (w->seed ^ (0x9e3779b97f4a7c15ull * (t + 1))) | 1;
        for (size_t k = m; k > 1; k--) { /* Fisher-Yates over this set's slots */
            size_t j = (size_t)(mw_rng_next(&s) % k);
            uint32_t a = w->ord[(k - 1) * T + t];
            w->ord[(k - 1) * T + t] = w->ord[j * T + t];
            w->ord[j * T + t] = a;
        }
        return NULL;
    }
    size_t lo = w->lines * t / T, hi = w->lines * (t + 1) / T;
    for (size_t i = lo; i < hi; i++) {
        size_t nx = i + 1 < w->lines ? i + 1 : 0;
        *(void **)(w->base + (size_t)w->ord[i] * MW_LINE) = w->base + (size_t)w->ord[nx] * MW_LINE;
    }
    return NULL;
}

static void *chase_build_par(void *buf, size_t lines, uint64_t seed)
{
    uint32_t *ord = malloc(lines * sizeof *ord);
    if (!ord)
        return NULL;
    /* a pinned caller's threads inherit its one CPU: spread them over all */
    cpu_set_t mine, all;
    int have = sched_getaffinity(0, sizeof mine, &mine) == 0;
    CPU_ZERO(&all);
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    for (long c = 0; c < ncpu && c < CPU_SETSIZE; c++)
        CPU_SET(c, &all);
    sched_setaffinity(0, sizeof all, &all);
    for (int phase = 0; phase < 2; phase++) {
        struct chase_par w[CHASE_PAR_T];
        pthread_t tid[CHASE_PAR_T];
        int ok[CHASE_PAR_T];
        for (unsigned t = 0; t < CHASE_PAR_T; t++) {
            w[t] = (struct chase_par){buf, ord, lines, seed, t, phase};
            ok[t] = t && pthread_create(&tid[t], NULL, chase_par_worker, &w[t]) == 0;
        }
        for (unsigned t = 0; t < CHASE_PAR_T; t++)
            if (!ok[t])
                chase_par_worker(&w[t]); /* this thread's own share, or one not started */
        for (unsigned t = 1; t < CHASE_PAR_T; t++)
            if (ok[t])
                pthread_join(tid[t], NULL);
    }
    if (have)
        sched_setaffinity(0, sizeof mine, &mine);
    void *first = (char *)buf + (size_t)ord[0] * MW_LINE;
    free(ord);
    return first;
}

void *mw_chase_build(void *buf, size_t lines, uint64_t seed)
{
    if (lines >= CHASE_PAR_MIN && lines <= UINT32_MAX)
        return chase_build_par(buf, lines, seed);
    uint32_t *next = malloc(lines * sizeof *next);
    if (!next)
        return NULL;
    if (mw_sattolo_cycle(next, lines, seed) < 0) {
        free(next);
        return NULL;
    }
    char *base = buf;
    for (size_t i = 0; i < lines; i++)
        *(void **)(base + i * MW_LINE) = base + (size_t)next[i] * MW_LINE;
    free(next);
    return base;
}

void *mw_chase(void *p, uint64_t n)
{
    void **q = p;
    uint64_t i = 0;
    for (; i + 16 <= n; i += 16) {
#define MW_HOP q = (void **)*q;
        MW_HOP MW_HOP MW_HOP MW_HOP MW_HOP MW_HOP MW_HOP MW_HOP
        MW_HOP MW_HOP MW_HOP MW_HOP MW_HOP MW_HOP MW_HOP MW_HOP
#undef MW_HOP
    }
    for (; i < n; i++)
        q = (void **)*q;
    return q;
}
