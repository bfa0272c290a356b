/*
 * calibrate/bench_sweep.c: the delay-regulated read benchmark of Helm & Taura
 * as a reusable background load (mw_read_load_*) and as a sweep over a grid
 * of thread counts x delays. Each thread reads its own `volatile` array of
 * 64-byte records, one 8-byte load per record, with K NOPs after every four
 * loads. For the grid's delays (0 and powers of two) the NOPs are emitted
 * as straight-line `.rept K; nop` blocks; other delays use blocks of 8 NOPs
 * plus a remainder. Lines are counted exactly per block of 384 records.
 * Read/write mixes (bench.h, mw_read_mix): the same loop over periods of 12
 * records, some of them stored (normal 8-byte stores, or non-temporal
 * stores of the whole line); the traffic is counted from the mix's exact
 * pattern (mw_mix_traffic).
 * May call: bench_common.c, counters/tsc.h. Threading: one controlling thread
 * per mw_read_load; worker threads sleep on a condition variable between
 * runs so they take no CPU from a measuring thread.
 */
#include "bench_int.h"
#include "tsc.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#define MW_HAVE_NT 1
#else
#define MW_HAVE_NT 0
#endif

#define SWEEP_BLOCK 384 /* records between stop-flag checks (32 mix periods) */

/* ---------------------------------------------------------------- mixes */
static const char *const mix_names[MW_MIX_COUNT] = {"reads100", "reads75", "reads50", "nt50"};
/* records of a period of 12 that are stored: reads75 every third
 * (2, 5, 8, 11), reads50 all, nt50 every second (1, 3, ... 11) */
static const unsigned mix_masks[MW_MIX_COUNT] = {0x000, 0x924, 0xfff, 0xaaa};

MW_API const char *mw_mix_name(mw_read_mix m)
{
    return (unsigned)m < MW_MIX_COUNT ? mix_names[m] : NULL;
}

MW_API int mw_mix_parse(const char *s, mw_read_mix *out)
{
    static const char *const alias[MW_MIX_COUNT] = {"100", "75", "50", "nt"};
    if (!s)
        return -EINVAL;
    for (unsigned m = 0; m < MW_MIX_COUNT; m++)
        if (!strcmp(s, mix_names[m]) || !strcmp(s, alias[m])) {
            *out = (mw_read_mix)m;
            return 0;
        }
    return -EINVAL;
}

MW_API int mw_mix_parse_list(const char *s, unsigned *mask)
{
    unsigned w = 0;
    if (!s || !*s)
        return -EINVAL;
    while (*s) {
        size_t len = strcspn(s, ",");
        char name[16];
        if (!len || len >= sizeof name)
            return -EINVAL;
        memcpy(name, s, len);
        name[len] = 0;
        mw_read_mix m;
        if (!strcmp(name, "all"))
            w |= (1u << MW_MIX_COUNT) - 1;
        else if (mw_mix_parse(name, &m) == 0)
            w |= 1u << m;
        else
            return -EINVAL;
        s += len;
        if (*s == ',' && !*++s)
            return -EINVAL; /* a trailing comma */
    }
    *mask = w;
    return 0;
}

MW_API unsigned mw_mix_store_mask(mw_read_mix m)
{
    return (unsigned)m < MW_MIX_COUNT ? mix_masks[m] : 0;
}

MW_API int mw_mix_nontemporal(mw_read_mix m)
{
    return m == MW_MIX_NT50;
}

MW_API int mw_mix_traffic(mw_read_mix m, uint64_t records, double *read_bytes,
                          double *write_bytes)
{
    if ((unsigned)m >= MW_MIX_COUNT || records % MW_MIX_PERIOD)
        return -EINVAL;
    unsigned stores = (unsigned)__builtin_popcount(mix_masks[m]);
    uint64_t periods = records / MW_MIX_PERIOD;
    /* every record's line is read unless a non-temporal store writes it */
    double rd = (double)(mw_mix_nontemporal(m) ? MW_MIX_PERIOD - stores : MW_MIX_PERIOD);
    if (read_bytes)
        *read_bytes = (double)periods * rd * MW_LINE;
    if (write_bytes)
        *write_bytes = (double)periods * stores * MW_LINE;
    return 0;
}

MW_API double mw_mix_read_share(mw_read_mix m)
{
    double r, w;
    if (mw_mix_traffic(m, MW_MIX_PERIOD, &r, &w) < 0)
        return NAN;
    return r / (r + w);
}

/* traffic bytes per record of a mix */
static double mix_bytes_per_record(mw_read_mix m)
{
    double r = 0, w = 0;
    mw_mix_traffic(m, MW_MIX_PERIOD, &r, &w);
    return (r + w) / MW_MIX_PERIOD;
}

MW_API unsigned mw_read_sweep_delay_grid(unsigned max_delay, unsigned *out, unsigned cap)
{
    unsigned n = 0;
    if (!cap)
        return 0;
    out[n++] = 0;
    unsigned d = 1;
    for (; d <= max_delay && n < cap; d *= 2)
        out[n++] = d;
    if (max_delay && out[n - 1] != max_delay && n < cap)
        out[n++] = max_delay;
    return n;
}

MW_API unsigned mw_read_sweep_delay_thin(unsigned *d, unsigned n, unsigned stride)
{
    if (stride < 2 || n < 3)
        return n;
    unsigned k = 0;
    for (unsigned i = 0; i < n; i++) {
        unsigned v = d[i], lg = 0;
        while (v > 1 && !(v & 1)) {
            v >>= 1;
            lg++;
        }
        int pow2 = d[i] && v == 1;
        if (i == 0 || i + 1 == n || (pow2 && lg % stride == 0))
            d[k++] = d[i];
    }
    return k;
}

MW_API unsigned mw_read_sweep_thread_grid(unsigned max_threads, unsigned *out, unsigned cap)
{
    unsigned n = 0;
    if (!max_threads)
        return 0;
    for (unsigned t = 1; t <= max_threads && n < cap; t *= 2)
        out[n++] = t;
    return mw_bench_grid_end(out, n, cap, max_threads);
}

/* ------------------------------------------------------------ kernels */
typedef void (*read_fn)(const volatile char *p, size_t recs, unsigned delay);

#define LD4(p, i)                                                                              \
    do {                                                                                       \
        (void)*(const volatile uint64_t *)((p) + ((i) + 0) * MW_LINE);                         \
        (void)*(const volatile uint64_t *)((p) + ((i) + 1) * MW_LINE);                         \
        (void)*(const volatile uint64_t *)((p) + ((i) + 2) * MW_LINE);                         \
        (void)*(const volatile uint64_t *)((p) + ((i) + 3) * MW_LINE);                         \
    } while (0)

#define READ_FN(K)                                                                             \
    static void read_k##K(const volatile char *p, size_t recs, unsigned delay)                 \
    {                                                                                          \
        (void)delay;                                                                           \
        for (size_t i = 0; i < recs; i += 4) {                                                 \
            LD4(p, i);                                                                         \
            __asm__ volatile(".rept " #K "\n\tnop\n\t.endr" ::: "memory");                     \
        }                                                                                      \
    }
READ_FN(1)
READ_FN(2)
READ_FN(4)
READ_FN(8)
READ_FN(16)
READ_FN(32)
READ_FN(64)
READ_FN(128)
READ_FN(256)
READ_FN(512)
READ_FN(1024)
READ_FN(2048)
READ_FN(4096)
READ_FN(8192)

static void read_k0(const volatile char *p, size_t recs, unsigned delay)
{
    (void)delay;
    for (size_t i = 0; i < recs; i += 4)
        LD4(p, i);
}

static void read_any(const volatile char *p, size_t recs, unsigned delay)
{
    for (size_t i = 0; i < recs; i += 4) {
        LD4(p, i);
        unsigned k = delay;
        for (; k >= 8; k -= 8)
            __asm__ volatile(".rept 8\n\tnop\n\t.endr");
        for (; k; k--)
            __asm__ volatile("nop");
    }
}

/* Mixed kernels: one record's access, a group of four, a period of 12. */
static inline __attribute__((always_inline)) void mix_rec(volatile char *p, size_t i, int store,
                                                          int nt)
{
    char *q = (char *)p + i * MW_LINE;
    if (!store) {
        (void)*(const volatile uint64_t *)q;
    } else if (nt) {
#if MW_HAVE_NT
        __m128i v = _mm_set1_epi64x((long long)i);
        _mm_stream_si128((__m128i *)q, v);
        _mm_stream_si128((__m128i *)(q + 16), v);
        _mm_stream_si128((__m128i *)(q + 32), v);
        _mm_stream_si128((__m128i *)(q + 48), v);
#endif
    } else {
        *(volatile uint64_t *)q = i;
    }
}

#define MIX_GROUP(p, i, mask, nt)                                                              \
    do {                                                                                       \
        mix_rec(p, (i) + 0, ((mask) >> 0) & 1, nt);                                            \
        mix_rec(p, (i) + 1, ((mask) >> 1) & 1, nt);                                            \
        mix_rec(p, (i) + 2, ((mask) >> 2) & 1, nt);                                            \
        mix_rec(p, (i) + 3, ((mask) >> 3) & 1, nt);                                            \
    } while (0)

typedef void (*mix_fn)(volatile char *p, size_t recs, unsigned delay);

#define MIX_NOPS(K) __asm__ volatile(".rept " #K "\n\tnop\n\t.endr" ::: "memory")

#define MIX_FN(NAME, MASK, NT, K)                                                              \
    static void NAME##_k##K(volatile char *p, size_t recs, unsigned delay)                     \
    {                                                                                          \
        (void)delay;                                                                           \
        for (size_t i = 0; i < recs; i += MW_MIX_PERIOD) {                                     \
            MIX_GROUP(p, i, (MASK), NT);                                                       \
            MIX_NOPS(K);                                                                       \
            MIX_GROUP(p, i + 4, (MASK) >> 4, NT);                                              \
            MIX_NOPS(K);                                                                       \
            MIX_GROUP(p, i + 8, (MASK) >> 8, NT);                                              \
            MIX_NOPS(K);                                                                       \
        }                                                                                      \
    }

#define MIX_ANY(NAME, MASK, NT)                                                                \
    static void NAME##_any(volatile char *p, size_t recs, unsigned delay)                      \
    {                                                                                          \
        for (size_t i = 0; i < recs; i += 4) {                                                 \
            unsigned m = (MASK) >> (i % MW_MIX_PERIOD);                                        \
            mix_rec(p, i + 0, (m >> 0) & 1, NT);                                               \
            mix_rec(p, i + 1, (m >> 1) & 1, NT);                                               \
            mix_rec(p, i + 2, (m >> 2) & 1, NT);                                               \
            mix_rec(p, i + 3, (m >> 3) & 1, NT);                                               \
            unsigned k = delay;                                                                \
            for (; k >= 8; k -= 8)                                                             \
                __asm__ volatile(".rept 8\n\tnop\n\t.endr");                                   \
            for (; k; k--)                                                                     \
                __asm__ volatile("nop");                                                       \
        }                                                                                      \
    }

/* Every power-of-two delay of the grid, and any other, per mix. */
#define MIX_ALL(NAME, MASK, NT)                                                                \
    MIX_FN(NAME, MASK, NT, 0) MIX_FN(NAME, MASK, NT, 1) MIX_FN(NAME, MASK, NT, 2)              \
    MIX_FN(NAME, MASK, NT, 4) MIX_FN(NAME, MASK, NT, 8) MIX_FN(NAME, MASK, NT, 16)             \
    MIX_FN(NAME, MASK, NT, 32) MIX_FN(NAME, MASK, NT, 64) MIX_FN(NAME, MASK, NT, 128)          \
    MIX_FN(NAME, MASK, NT, 256) MIX_FN(NAME, MASK, NT, 512) MIX_FN(NAME, MASK, NT, 1024)       \
    MIX_FN(NAME, MASK, NT, 2048) MIX_FN(NAME, MASK, NT, 4096) MIX_FN(NAME, MASK, NT, 8192)     \
    MIX_ANY(NAME, MASK, NT)                                                                    \
    static const mix_fn NAME##_tab[16] = {                                                     \
        NAME##_k0,   NAME##_k1,    NAME##_k2,    NAME##_k4,    NAME##_k8,   NAME##_k16,        \
        NAME##_k32,  NAME##_k64,   NAME##_k128,  NAME##_k256,  NAME##_k512, NAME##_k1024,      \
        NAME##_k2048, NAME##_k4096, NAME##_k8192, NAME##_any};

MIX_ALL(mix75, 0x924u, 0)
MIX_ALL(mix50, 0xfffu, 0)
MIX_ALL(mixnt, 0xaaau, 1)

/* The kernel of a mix other than reads100 for a delay. */
static mix_fn pick_mix(mw_read_mix m, unsigned delay)
{
    unsigned k = 15; /* any */
    if (delay == 0)
        k = 0;
    else if (!(delay & (delay - 1)) && delay <= 8192)
        k = 1 + (unsigned)__builtin_ctz(delay);
    const mix_fn *tab = m == MW_MIX_R75 ? mix75_tab : m == MW_MIX_R50 ? mix50_tab : mixnt_tab;
    return tab[k];
}

static read_fn pick_read(unsigned delay)
{
    switch (delay) {
    case 0: return read_k0;
    case 1: return read_k1;
    case 2: return read_k2;
    case 4: return read_k4;
    case 8: return read_k8;
    case 16: return read_k16;
    case 32: return read_k32;
    case 64: return read_k64;
    case 128: return read_k128;
    case 256: return read_k256;
    case 512: return read_k512;
    case 1024: return read_k1024;
    case 2048: return read_k2048;
    case 4096: return read_k4096;
    case 8192: return read_k8192;
    default: return read_any;
    }
}

/* ------------------------------------------------------- the load object */
struct load_thread {
    struct mw_read_load *l;
    unsigned id;
    int cpu;
    pthread_t tid;
    char *buf;
    size_t bytes;
    uint64_t lines, t0, t1;
};

struct mw_read_load {
    unsigned threads;
    size_t bytes_per_thread;
    struct load_thread *th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    unsigned gen;          /* incremented per start; workers run when it changes */
    int quit;
    unsigned delay;
    mw_read_mix mix;
    _Atomic int stop;
    _Atomic unsigned running, done, ready;
    int running_now;
};

static void *load_worker(void *p)
{
    struct load_thread *t = p;
    struct mw_read_load *l = t->l;
    if (mw_bench_pin(t->cpu) < 0)
        mw_log(MW_LOG_WARN, "read load: cannot pin thread %u to CPU %d", t->id, t->cpu);
    /* first touch, then record a pointer-sized value per line */
    for (size_t i = 0; i < t->bytes; i += MW_LINE)
        *(uint64_t *)(t->buf + i) = i;
    atomic_fetch_add(&l->ready, 1);
    unsigned seen = 0;
    size_t recs_total = t->bytes / MW_LINE;
    size_t pos = 0;
    for (;;) {
        pthread_mutex_lock(&l->mu);
        while (!l->quit && l->gen == seen)
            pthread_cond_wait(&l->cv, &l->mu);
        if (l->quit) {
            pthread_mutex_unlock(&l->mu);
            break;
        }
        seen = l->gen;
        unsigned delay = l->delay;
        pthread_mutex_unlock(&l->mu);
        read_fn fn = l->mix == MW_MIX_R100 ? pick_read(delay) : NULL;
        mix_fn mfn = l->mix == MW_MIX_R100 ? NULL : pick_mix(l->mix, delay);
        uint64_t lines = 0;
        atomic_fetch_add(&l->running, 1);
        uint64_t t0 = mw_tsc_start();
        while (!atomic_load_explicit(&l->stop, memory_order_relaxed)) {
            if (fn)
                fn((const volatile char *)t->buf + pos * MW_LINE, SWEEP_BLOCK, delay);
            else
                mfn((volatile char *)t->buf + pos * MW_LINE, SWEEP_BLOCK, delay);
            lines += SWEEP_BLOCK;
            pos += SWEEP_BLOCK;
            if (pos + SWEEP_BLOCK > recs_total)
                pos = 0;
        }
#if MW_HAVE_NT
        if (mw_mix_nontemporal(l->mix))
            _mm_sfence(); /* the streamed lines are on their way before the clock stops */
#endif
        uint64_t t1 = mw_tsc_end();
        t->lines = lines;
        t->t0 = t0;
        t->t1 = t1;
        atomic_fetch_add(&l->done, 1);
    }
    return NULL;
}

MW_API int mw_read_load_create(const mw_read_load_config *cfg, mw_read_load **out)
{
    *out = NULL;
    if (!cfg || !cfg->threads)
        return -EINVAL;
    if (cfg->threads > MW_BENCH_MAX_CPUS)
        return MW_ERR_TOOBIG;
    if ((unsigned)cfg->mix >= MW_MIX_COUNT)
        return -EINVAL;
    if (mw_mix_nontemporal(cfg->mix) && !MW_HAVE_NT) {
        mw_log(MW_LOG_ERROR, "read load: this build has no non-temporal store for mix %s",
               mw_mix_name(cfg->mix));
        return MW_ERR_UNSUPPORTED;
    }
    int cpus[MW_BENCH_MAX_CPUS];
    int ncpus = mw_bench_cpu_list(cfg->cpus, cfg->ncpus, cpus, MW_BENCH_MAX_CPUS);
    if (ncpus <= 0)
        return ncpus < 0 ? ncpus : -ENODEV;
    size_t per = cfg->bytes_per_thread;
    if (!per) {
        mw_cache_info ci;
        size_t llc = ((size_t)32 << 20), l2 = (size_t)1 << 20;
        if (mw_cache_info_read(NULL, 0, &ci) == 0) {
            llc = ci.llc_size;
            l2 = ci.n >= 2 ? ci.level[ci.n - 2].size : ci.level[0].size;
        }
        per = 4 * llc / cfg->threads;
        if (per < 8 * l2)
            per = 8 * l2;
        if (per < ((size_t)16 << 20))
            per = (size_t)16 << 20;
    }
    per = (per + MW_HUGE_ALIGN - 1) & ~(MW_HUGE_ALIGN - 1);
    struct mw_read_load *l = calloc(1, sizeof *l);
    if (!l)
        return -ENOMEM;
    l->threads = cfg->threads;
    l->bytes_per_thread = per;
    l->mix = cfg->mix;
    pthread_mutex_init(&l->mu, NULL);
    pthread_cond_init(&l->cv, NULL);
    l->th = calloc(cfg->threads, sizeof *l->th);
    if (!l->th) {
        free(l);
        return -ENOMEM;
    }
    int rc = 0;
    unsigned started = 0;
    for (unsigned i = 0; i < cfg->threads; i++) {
        struct load_thread *t = &l->th[i];
        t->l = l;
        t->id = i;
        t->cpu = cpus[i % (unsigned)ncpus];
        t->bytes = per;
        t->buf = mw_bench_alloc(per, NULL);
        if (!t->buf) {
            rc = -ENOMEM;
            break;
        }
        int e = pthread_create(&t->tid, NULL, load_worker, t);
        if (e) {
            mw_bench_free(t->buf, per);
            t->buf = NULL;
            rc = -e;
            break;
        }
        started++;
    }
    l->threads = started;
    if (rc) {
        mw_read_load_destroy(l);
        return rc;
    }
    while (atomic_load(&l->ready) < started)
        sched_yield();
    *out = l;
    return 0;
}

MW_API int mw_read_load_start(mw_read_load *l, unsigned delay)
{
    if (!l)
        return -EINVAL;
    if (l->running_now)
        return -EBUSY;
    atomic_store(&l->stop, 0);
    atomic_store(&l->running, 0);
    atomic_store(&l->done, 0);
    pthread_mutex_lock(&l->mu);
    l->delay = delay;
    l->gen++;
    pthread_cond_broadcast(&l->cv);
    pthread_mutex_unlock(&l->mu);
    l->running_now = 1;
    while (atomic_load(&l->running) < l->threads)
        sched_yield();
    return 0;
}

MW_API int mw_read_load_stop(mw_read_load *l, mw_sweep_point *out)
{
    if (!l)
        return -EINVAL;
    if (!l->running_now)
        return -EINVAL;
    atomic_store(&l->stop, 1);
    while (atomic_load(&l->done) < l->threads)
        sched_yield();
    l->running_now = 0;
    if (!out)
        return 0;
    memset(out, 0, sizeof *out);
    double hz = mw_bench_tsc_hz();
    uint64_t t0 = UINT64_MAX, t1 = 0;
    out->threads = l->threads;
    out->delay = l->delay;
    out->mix = l->mix;
    double bpr = mix_bytes_per_record(l->mix);
    for (unsigned i = 0; i < l->threads; i++) {
        struct load_thread *t = &l->th[i];
        out->lines += t->lines;
        if (t->t0 < t0)
            t0 = t->t0;
        if (t->t1 > t1)
            t1 = t->t1;
        double s = (double)(t->t1 - t->t0) / hz;
        if (s > 0)
            out->bw += (double)t->lines * bpr / s;
    }
    out->seconds = (double)(t1 - t0) / hz;
    mw_mix_traffic(l->mix, out->lines, &out->read_bytes, &out->write_bytes);
    out->bytes = out->read_bytes + out->write_bytes;
    out->bw_window = out->seconds > 0 ? out->bytes / out->seconds : 0;
    return 0;
}

MW_API void mw_read_load_destroy(mw_read_load *l)
{
    if (!l)
        return;
    if (l->running_now)
        mw_read_load_stop(l, NULL);
    pthread_mutex_lock(&l->mu);
    l->quit = 1;
    pthread_cond_broadcast(&l->cv);
    pthread_mutex_unlock(&l->mu);
    for (unsigned i = 0; i < l->threads; i++)
        pthread_join(l->th[i].tid, NULL);
    for (unsigned i = 0; i < l->threads; i++)
        mw_bench_free(l->th[i].buf, l->th[i].bytes);
    pthread_cond_destroy(&l->cv);
    pthread_mutex_destroy(&l->mu);
    free(l->th);
    free(l);
}

static void sleep_s(double s)
{
    struct timespec ts;
    ts.tv_sec = (time_t)s;
    ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

MW_API int mw_bench_read_sweep_point(unsigned threads, unsigned delay, double duration_s,
                                     mw_sweep_point *out)
{
    mw_read_load_config c = {.threads = threads};
    mw_read_load *l;
    int rc = mw_read_load_create(&c, &l);
    if (rc < 0)
        return rc;
    rc = mw_read_load_start(l, delay);
    if (rc == 0) {
        sleep_s(duration_s > 0 ? duration_s : 0.25);
        rc = mw_read_load_stop(l, out);
    }
    mw_read_load_destroy(l);
    return rc;
}

MW_API int mw_bench_read_sweep(const mw_sweep_config *cfg, mw_sweep_result *out)
{
    memset(out, 0, sizeof *out);
    mw_sweep_config c = cfg ? *cfg : (mw_sweep_config){0};
    int cpus[MW_BENCH_MAX_CPUS];
    int ncpus = mw_bench_cpu_list(c.cpus, c.ncpus, cpus, MW_BENCH_MAX_CPUS);
    if (ncpus <= 0)
        return ncpus < 0 ? ncpus : -ENODEV;
    if (!c.max_threads)
        c.max_threads = (unsigned)ncpus;
    if (!c.max_delay)
        c.max_delay = 4096;
    if (!(c.duration_s > 0))
        c.duration_s = 0.25;
    if (!c.windows)
        c.windows = 3;
    if (c.windows > MW_BENCH_MAX_REPEATS)
        return MW_ERR_TOOBIG;
    if (!c.min_windows)
        c.min_windows = 2;
    if (c.min_windows > c.windows)
        c.min_windows = c.windows;
    if (c.cv_target == 0)
        c.cv_target = 0.02;
    out->nthreads = mw_read_sweep_thread_grid(c.max_threads, out->thread_grid,
                                              MW_SWEEP_MAX_THREADS);
    out->ndelays = mw_read_sweep_delay_grid(c.max_delay, out->delay_grid, MW_SWEEP_MAX_DELAYS);
    out->ndelays = mw_read_sweep_delay_thin(out->delay_grid, out->ndelays, c.delay_stride);
    unsigned total = out->nthreads * out->ndelays, done = 0;
    out->min_bw = 0;
    int rc = 0;
    for (unsigned ti = 0; ti < out->nthreads && !rc; ti++) {
        mw_read_load_config lc = {.threads = out->thread_grid[ti],
                                  .cpus = cpus,
                                  .ncpus = (unsigned)ncpus,
                                  .bytes_per_thread = c.bytes_per_thread};
        mw_read_load *l;
        rc = mw_read_load_create(&lc, &l);
        if (rc < 0)
            break;
        for (unsigned di = 0; di < out->ndelays && !rc; di++) {
            mw_sweep_point *p = &out->point[ti][di];
            double bws[MW_BENCH_MAX_REPEATS];
            unsigned nw = 0;
            mw_stats st;
            memset(&st, 0, sizeof st);
            for (unsigned w = 0; w < c.windows; w++) {
                mw_sweep_point cur;
                rc = mw_read_load_start(l, out->delay_grid[di]);
                if (rc < 0)
                    break;
                sleep_s(c.duration_s);
                rc = mw_read_load_stop(l, &cur);
                if (rc < 0)
                    break;
                bws[w] = cur.bw;
                nw = w + 1;
                if (w == 0 || cur.bw > p->bw)
                    *p = cur;
                /* steady: stop once the windows agree within the CV target */
                mw_stats_compute(bws, nw, 1, &st);
                if (nw >= c.min_windows && c.cv_target > 0 && st.cv <= c.cv_target)
                    break;
            }
            if (rc < 0)
                break;
            p->windows = nw;
            p->bw_median = st.median;
            p->bw_cv = st.cv;
            if (p->bw > out->peak_bw)
                out->peak_bw = p->bw;
            if (out->min_bw == 0 || p->bw < out->min_bw)
                out->min_bw = p->bw;
            if (c.progress)
                c.progress(c.user, ++done, total);
        }
        mw_read_load_destroy(l);
    }
    return rc;
}
