/*
 * calibrate/bench_sweep.c: the delay-regulated read benchmark of Helm & Taura
 * as a reusable background load (mw_read_load_*) and as a sweep over a grid
 * of thread counts x delays. Each thread reads its own `volatile` array of
 * 64-byte records, one 8-byte load per record, with K NOPs after every four
 * loads. For the grid's delays (0 and powers of two) the NOPs are emitted
 * as straight-line `.rept K; nop` blocks; other delays use blocks of 8 NOPs
 * plus a remainder. Lines are counted exactly per block of 256 records.
 * May call: bench_common.c, counters/tsc.h. Threading: one controlling thread
 * per mw_read_load; worker threads sleep on a condition variable between
 * runs so they take no CPU from a measuring thread.
 */
#include "bench_int.h"
#include "tsc.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SWEEP_BLOCK 256 /* records between stop-flag checks */

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

MW_API unsigned mw_read_sweep_thread_grid(unsigned max_threads, unsigned *out, unsigned cap)
{
    unsigned n = 0;
    if (!max_threads)
        return 0;
    for (unsigned t = 1; t <= max_threads && n < cap; t *= 2)
        out[n++] = t;
    if (n && out[n - 1] != max_threads) {
        if (n < cap)
            out[n++] = max_threads;
        else
            out[n - 1] = max_threads;
    }
    return n;
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
        read_fn fn = pick_read(delay);
        uint64_t lines = 0;
        atomic_fetch_add(&l->running, 1);
        uint64_t t0 = mw_tsc_start();
        while (!atomic_load_explicit(&l->stop, memory_order_relaxed)) {
            fn((const volatile char *)t->buf + pos * MW_LINE, SWEEP_BLOCK, delay);
            lines += SWEEP_BLOCK;
            pos += SWEEP_BLOCK;
            if (pos + SWEEP_BLOCK > recs_total)
                pos = 0;
        }
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
    for (unsigned i = 0; i < l->threads; i++) {
        struct load_thread *t = &l->th[i];
        out->lines += t->lines;
        if (t->t0 < t0)
            t0 = t->t0;
        if (t->t1 > t1)
            t1 = t->t1;
        double s = (double)(t->t1 - t->t0) / hz;
        if (s > 0)
            out->bw += (double)t->lines * MW_LINE / s;
    }
    out->seconds = (double)(t1 - t0) / hz;
    out->bytes = (double)out->lines * MW_LINE;
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
    out->nthreads = mw_read_sweep_thread_grid(c.max_threads, out->thread_grid,
                                              MW_SWEEP_MAX_THREADS);
    out->ndelays = mw_read_sweep_delay_grid(c.max_delay, out->delay_grid, MW_SWEEP_MAX_DELAYS);
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
                if (w == 0 || cur.bw > p->bw)
                    *p = cur;
            }
            if (rc < 0)
                break;
            mw_stats st;
            mw_stats_compute(bws, c.windows, 1, &st);
            p->windows = c.windows;
            p->bw_median = st.median;
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
