/*
 * calibrate/bench_triad.c: STREAM triad c[i] = b[i] + s*a[i] with exact byte
 * counts. Normal stores move 32 B per iteration (read a, read b,
 * write-allocate read of c, write c); non-temporal stores bypass the
 * write-allocate and move 24 B. Kernels for SSE2, AVX2 and AVX-512 are
 * compiled with target attributes and picked at run time
 * (__builtin_cpu_supports). Threads are pinned and first-touch their own
 * chunk of every array; arrays are 2 MiB aligned with MADV_HUGEPAGE. By
 * default a barrier starts every repetition (STREAM's "best of N" needs
 * synchronous windows); free-running mode lets the threads run their
 * repetitions back to back, which is what likwid-bench times, and whose
 * whole-run figure does not pay for a lagging thread at every barrier.
 * Free-running, each thread's repetitions are a queue of 1 MiB blocks; a
 * thread whose queue is empty takes blocks from the end of the fullest queue,
 * so every thread streams until the work is done (on a virtual machine the
 * vCPUs' speeds can differ by half, and a fixed split left the machine
 * with a few threads running alone for a third of the run).
 * May call: bench_common.c, counters/tsc.h. Threading: creates and joins its
 * own worker threads; no global state.
 */
#include "bench_int.h"
#include "tsc.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define MW_X86 1
#else
#define MW_X86 0
#endif

#define TRIAD_SCALAR 3.0
#define TRIAD_ALIGN_ELEMS 64 /* chunk boundaries: 512 bytes */
#define TRIAD_BLOCK_ELEMS ((size_t)1 << 17) /* free-running work unit: 1 MiB per array */

MW_API unsigned mw_triad_bytes_per_iter(mw_triad_store store, int explicit_only)
{
    /* read a, read b, write c: 3 x 8 bytes; a normal store first reads the
     * line of c (write-allocate): 8 more bytes per element. */
    if (explicit_only || store == MW_TRIAD_NT)
        return 24;
    return 32;
}

typedef void (*triad_fn)(double *restrict c, const double *restrict a,
                         const double *restrict b, double s, size_t n);

static void triad_scalar(double *restrict c, const double *restrict a, const double *restrict b,
                         double s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        c[i] = b[i] + s * a[i];
}

#if MW_X86
/* One ISA's kernel: four vectors V of W doubles an iteration, SET(s) the
 * scalar in every lane, FMA(s, x, y) = s * x + y, LOAD and STORE aligned;
 * FENCE after the loop (the non-temporal kernels' sfence). */
#define TRIAD_KERNEL(name, tgt, V, W, SET, FMA, LOAD, STORE, FENCE)                                \
    __attribute__((target(tgt))) static void name(double *restrict c, const double *restrict a,    \
                                                  const double *restrict b, double s, size_t n)    \
    {                                                                                              \
        V vs = SET(s);                                                                             \
        for (size_t i = 0; i < n; i += 4 * (W)) {                                                  \
            V r0 = FMA(vs, LOAD(a + i), LOAD(b + i));                                              \
            V r1 = FMA(vs, LOAD(a + i + (W)), LOAD(b + i + (W)));                                  \
            V r2 = FMA(vs, LOAD(a + i + 2 * (W)), LOAD(b + i + 2 * (W)));                          \
            V r3 = FMA(vs, LOAD(a + i + 3 * (W)), LOAD(b + i + 3 * (W)));                          \
            STORE(c + i, r0);                                                                      \
            STORE(c + i + (W), r1);                                                                \
            STORE(c + i + 2 * (W), r2);                                                            \
            STORE(c + i + 3 * (W), r3);                                                            \
        }                                                                                          \
        FENCE;                                                                                     \
    }
/* triad_<isa> with normal stores, triad_<isa>_nt with non-temporal ones. */
#define TRIAD_KERNELS(isa, tgt, V, W, SET, FMA, LOAD, STORE, STREAM)                               \
    TRIAD_KERNEL(triad_##isa, tgt, V, W, SET, FMA, LOAD, STORE, (void)0)                           \
    TRIAD_KERNEL(triad_##isa##_nt, tgt, V, W, SET, FMA, LOAD, STREAM, _mm_sfence())
/* SSE2 has no FMA: b + s * a as an add of a multiply. */
#define TRIAD_SSE2_MULADD(s, x, y) _mm_add_pd(y, _mm_mul_pd(s, x))

TRIAD_KERNELS(sse2, "sse2", __m128d, 2, _mm_set1_pd, TRIAD_SSE2_MULADD, _mm_load_pd, _mm_store_pd,
              _mm_stream_pd)
TRIAD_KERNELS(avx2, "avx2,fma", __m256d, 4, _mm256_set1_pd, _mm256_fmadd_pd, _mm256_load_pd,
              _mm256_store_pd, _mm256_stream_pd)
TRIAD_KERNELS(avx512, "avx512f", __m512d, 8, _mm512_set1_pd, _mm512_fmadd_pd, _mm512_load_pd,
              _mm512_store_pd, _mm512_stream_pd)
#endif

/* The kernels, best first; `need` is a __builtin_cpu_supports feature. */
static const struct triad_kernel {
    const char *isa;
    const char *need;
    triad_fn normal, nt;
} triad_kernels[] = {
#if MW_X86
    {"avx512", "avx512f", triad_avx512, triad_avx512_nt},
    {"avx2", "avx2", triad_avx2, triad_avx2_nt},
    {"sse2", "sse2", triad_sse2, triad_sse2_nt},
#endif
    {"scalar", NULL, triad_scalar, NULL},
};

static int cpu_has(const char *feat)
{
#if MW_X86
    __builtin_cpu_init();
    if (!strcmp(feat, "avx512f"))
        return __builtin_cpu_supports("avx512f");
    if (!strcmp(feat, "avx2"))
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    if (!strcmp(feat, "sse2"))
        return __builtin_cpu_supports("sse2");
#endif
    (void)feat;
    return 0;
}

static const struct triad_kernel *pick_kernel(const char *isa, mw_triad_store store)
{
    for (size_t i = 0; i < sizeof triad_kernels / sizeof triad_kernels[0]; i++) {
        const struct triad_kernel *k = &triad_kernels[i];
        if (isa && strcmp(isa, "auto") && strcmp(isa, k->isa))
            continue;
        if (k->need && !cpu_has(k->need))
            continue;
        if (store == MW_TRIAD_NT && !k->nt)
            continue;
        return k;
    }
    return NULL;
}

struct triad_shared {
    double *a, *b, *c;
    size_t n;           /* elements per array */
    unsigned threads, repeats;
    int free_running;
    triad_fn fn;
    const int *cpus;
    int ncpus;
    mw_spin_barrier bar;
    /* thread t's repetition r: first start and last end of its blocks (by
     * whichever thread ran them) */
    _Atomic uint64_t start[MW_BENCH_MAX_CPUS][MW_BENCH_MAX_REPEATS];
    _Atomic uint64_t end[MW_BENCH_MAX_CPUS][MW_BENCH_MAX_REPEATS];
    /* free-running: the next unit (repetition x blocks + block) of thread t's
     * queue, one cache line each */
    struct {
        _Alignas(64) _Atomic uint64_t next;
    } q[MW_BENCH_MAX_CPUS];
    uint64_t own_done[MW_BENCH_MAX_CPUS]; /* when thread t's own queue ran dry */
    _Atomic unsigned stolen;              /* blocks run by a thread other than their owner */
    /* free-running: repetitions finished of block k of thread t's share, at
     * [t * maxblocks + k]. A block's next repetition waits for (acquires)
     * the previous one, so two threads never write the same c[] unordered. */
    _Atomic unsigned *done;
    size_t maxblocks;
    uint64_t run_t0, run_t1; /* thread 0's clock: before the start barrier, after the end one */
    int pin_err;
    double steady;        /* barrier mode: stop once the 3 best agree within this (0: off) */
    unsigned min_repeats; /* ... after at least this many */
    unsigned done_reps;   /* repetitions run */
    _Atomic int go; /* 0 wait, 1 run, -1 abort (a thread could not start) */
};

struct triad_arg {
    struct triad_shared *sh;
    unsigned id;
};

static void chunk_of(size_t n, unsigned threads, unsigned id, size_t *lo, size_t *hi)
{
    size_t blocks = n / TRIAD_ALIGN_ELEMS;
    *lo = blocks * id / threads * TRIAD_ALIGN_ELEMS;
    *hi = blocks * (id + 1) / threads * TRIAD_ALIGN_ELEMS;
}

/* Barrier mode: the three fastest of the first r repetitions (each timed
 * from its first start to its last end over all threads) lie within
 * sh->steady of each other: the best-of figure is confirmed. */
static int triad_steady(struct triad_shared *sh, unsigned r)
{
    double top[3] = {0, 0, 0};
    for (unsigned k = 0; k < r; k++) {
        uint64_t t0 = UINT64_MAX, t1 = 0;
        for (unsigned t = 0; t < sh->threads; t++) {
            uint64_t a = atomic_load_explicit(&sh->start[t][k], memory_order_relaxed);
            uint64_t b = atomic_load_explicit(&sh->end[t][k], memory_order_relaxed);
            t0 = a < t0 ? a : t0;
            t1 = b > t1 ? b : t1;
        }
        double rate = t1 > t0 ? 1.0 / (double)(t1 - t0) : 0;
        for (int i = 0; i < 3; i++)
            if (rate > top[i]) {
                for (int j = 2; j > i; j--)
                    top[j] = top[j - 1];
                top[i] = rate;
                break;
            }
    }
    return top[2] > 0 && (top[0] - top[2]) / top[0] <= sh->steady;
}

static size_t blocks_of(size_t lo, size_t hi)
{
    return (hi - lo + TRIAD_BLOCK_ELEMS - 1) / TRIAD_BLOCK_ELEMS;
}

static void atomic_min_u64(_Atomic uint64_t *p, uint64_t v)
{
    uint64_t cur = atomic_load_explicit(p, memory_order_relaxed);
    while (v < cur && !atomic_compare_exchange_weak_explicit(p, &cur, v, memory_order_relaxed,
                                                             memory_order_relaxed))
        ;
}

static void atomic_max_u64(_Atomic uint64_t *p, uint64_t v)
{
    uint64_t cur = atomic_load_explicit(p, memory_order_relaxed);
    while (v > cur && !atomic_compare_exchange_weak_explicit(p, &cur, v, memory_order_relaxed,
                                                             memory_order_relaxed))
        ;
}

/* Takes one unit from thread v's queue and runs it; 0 when the queue is empty. */
static int run_unit(struct triad_shared *sh, unsigned v)
{
    size_t lo, hi;
    chunk_of(sh->n, sh->threads, v, &lo, &hi);
    uint64_t nb = blocks_of(lo, hi);
    uint64_t u = atomic_fetch_add_explicit(&sh->q[v].next, 1, memory_order_relaxed);
    if (u >= nb * sh->repeats)
        return 0;
    unsigned r = (unsigned)(u / nb);
    size_t k = (size_t)(u % nb);
    _Atomic unsigned *done = &sh->done[v * sh->maxblocks + k];
    /* repetition r - 1 of this block was taken earlier; it may still run
     * when its owner was descheduled (rare: it is nb units back) */
    for (unsigned spins = 0; atomic_load_explicit(done, memory_order_acquire) < r;) {
#if MW_X86
        _mm_pause();
#endif
        if (++spins % 4096 == 0)
            sched_yield();
    }
    size_t b0 = lo + k * TRIAD_BLOCK_ELEMS;
    size_t b1 = b0 + TRIAD_BLOCK_ELEMS < hi ? b0 + TRIAD_BLOCK_ELEMS : hi;
    /* plain rdtsc: a block takes a fraction of a millisecond, and cpuid
     * leaves a virtual machine at every call */
    uint64_t t0 = mw_rdtsc();
    sh->fn(sh->c + b0, sh->a + b0, sh->b + b0, TRIAD_SCALAR, b1 - b0);
    uint64_t t1 = mw_rdtsc();
    atomic_min_u64(&sh->start[v][r], t0);
    atomic_max_u64(&sh->end[v][r], t1);
    atomic_store_explicit(done, r + 1, memory_order_release);
    return 1;
}

/* The queue with the most units left, or -1 when all are empty. */
static int fullest_queue(struct triad_shared *sh)
{
    int best = -1;
    uint64_t most = 0;
    for (unsigned v = 0; v < sh->threads; v++) {
        size_t lo, hi;
        chunk_of(sh->n, sh->threads, v, &lo, &hi);
        uint64_t total = blocks_of(lo, hi) * sh->repeats;
        uint64_t next = atomic_load_explicit(&sh->q[v].next, memory_order_relaxed);
        if (next < total && total - next > most) {
            most = total - next;
            best = (int)v;
        }
    }
    return best;
}

static void *triad_worker(void *p)
{
    struct triad_arg *arg = p;
    struct triad_shared *sh = arg->sh;
    unsigned sense = 0;
    int g;
    while ((g = atomic_load(&sh->go)) == 0)
        sched_yield();
    if (g < 0)
        return NULL;
    if (mw_bench_pin(sh->cpus[arg->id % (unsigned)sh->ncpus]) < 0)
        sh->pin_err = 1;
    size_t lo, hi;
    chunk_of(sh->n, sh->threads, arg->id, &lo, &hi);
    /* first touch: this thread's pages land on its node */
    for (size_t i = lo; i < hi; i++) {
        sh->a[i] = 1.0;
        sh->b[i] = 2.0;
        sh->c[i] = 0.0;
    }
    for (unsigned r = 0; r < sh->repeats; r++)
        atomic_store_explicit(&sh->start[arg->id][r], UINT64_MAX, memory_order_relaxed);
    mw_spin_barrier_wait(&sh->bar, &sense);
    /* thread 0 reads the run's start BEFORE the barrier that releases the
     * threads: nobody can start before it, even if thread 0 loses its CPU
     * right after the barrier */
    if (arg->id == 0)
        sh->run_t0 = mw_tsc_start();
    if (sh->free_running) {
        mw_spin_barrier_wait(&sh->bar, &sense);
        while (run_unit(sh, arg->id))
            ;
        sh->own_done[arg->id] = mw_rdtsc();
        unsigned stolen = 0;
        for (int v; (v = fullest_queue(sh)) >= 0;)
            stolen += (unsigned)run_unit(sh, (unsigned)v);
        atomic_fetch_add(&sh->stolen, stolen);
    } else {
        unsigned r = 0;
        while (r < sh->repeats) {
            mw_spin_barrier_wait(&sh->bar, &sense);
            uint64_t t0 = mw_tsc_start();
            sh->fn(sh->c + lo, sh->a + lo, sh->b + lo, TRIAD_SCALAR, hi - lo);
            uint64_t t1 = mw_tsc_end();
            atomic_store_explicit(&sh->start[arg->id][r], t0, memory_order_relaxed);
            atomic_store_explicit(&sh->end[arg->id][r], t1, memory_order_relaxed);
            r++;
            if (sh->steady > 0 && r >= sh->min_repeats && r < sh->repeats) {
                /* every thread reads the same stamps after the barrier and
                 * so takes the same decision */
                mw_spin_barrier_wait(&sh->bar, &sense);
                if (triad_steady(sh, r))
                    break;
            }
        }
        if (arg->id == 0)
            sh->done_reps = r;
    }
    mw_spin_barrier_wait(&sh->bar, &sense);
    if (arg->id == 0)
        sh->run_t1 = mw_tsc_end(); /* every thread has finished its last repetition */
    return NULL;
}

/* mw_bench_triad's run: the filled-in configuration, the kernel, the CPUs, the
 * arrays' region and the state the workers share and stamp. */
typedef struct triad_run {
    mw_triad_config c;
    const struct triad_kernel *k;
    int cpus[MW_BENCH_MAX_CPUS];
    int ncpus;
    char *mem; /* the three arrays' region: total bytes, huge if on huge pages */
    size_t total;
    int huge;
    struct triad_shared *sh;
    double hz, ovh; /* TSC rate; timer overhead in cycles */
} triad_run;

/* Fills in the configuration's defaults (CPUs, threads, repeats, array size)
 * and picks the kernel; 0, or why the run cannot be made. */
static int triad_setup(const mw_triad_config *cfg, triad_run *tr)
{
    mw_triad_config *c = &tr->c;
    *c = cfg ? *cfg : (mw_triad_config){0};
    int ncpus = tr->ncpus = mw_bench_cpu_list(c->cpus, c->ncpus, tr->cpus, MW_BENCH_MAX_CPUS);
    if (ncpus <= 0)
        return ncpus < 0 ? ncpus : -ENODEV;
    if (!c->threads)
        c->threads = (unsigned)ncpus;
    if (c->threads > MW_BENCH_MAX_CPUS)
        return MW_ERR_TOOBIG;
    if (!c->repeats)
        c->repeats = 10;
    if (c->repeats > MW_BENCH_MAX_REPEATS)
        return MW_ERR_TOOBIG;
    const struct triad_kernel *k = tr->k = pick_kernel(c->isa, c->store);
    if (!k) {
        mw_log(MW_LOG_ERROR, "triad: no %s kernel for ISA '%s' on this CPU",
               c->store == MW_TRIAD_NT ? "non-temporal" : "normal", c->isa ? c->isa : "auto");
        return MW_ERR_UNSUPPORTED;
    }
    if (!c->elems) {
        mw_cache_info ci;
        size_t llc = mw_cache_info_read(NULL, 0, &ci) == 0 ? ci.llc_size : ((size_t)32 << 20);
        c->elems = 4 * llc / sizeof(double);
    }
    return 0;
}

/* Each repetition's time and bandwidth: the window of its blocks' stamps. */
static void triad_per_rep(const triad_run *tr, mw_triad_result *out)
{
    const mw_triad_config *c = &tr->c;
    const struct triad_shared *sh = tr->sh;
    double hz = tr->hz, ovh = tr->ovh;
    for (unsigned r = 0; r < c->repeats; r++) {
        /* the window from the first start to the last end of the repetition's
         * blocks. Free-running, other repetitions overlap it, so bytes/window
         * can only understate the rate memory delivered in it (a thread's own
         * time would overstate it once other threads share its blocks). */
        uint64_t t0 = UINT64_MAX, t1 = 0;
        for (unsigned t = 0; t < c->threads; t++) {
            if (sh->start[t][r] < t0)
                t0 = sh->start[t][r];
            if (sh->end[t][r] > t1)
                t1 = sh->end[t][r];
        }
        double cyc = (double)(t1 - t0) - ovh;
        out->seconds[r] = cyc / hz;
        out->bw[r] = out->seconds[r] > 0 ? out->bytes / out->seconds[r] : 0;
    }
}

/* The whole run's figure on thread 0's clock, its cross-checks and logs. */
static void triad_whole_run(const triad_run *tr, mw_triad_result *out)
{
    const mw_triad_config *c = &tr->c;
    const struct triad_shared *sh = tr->sh;
    double hz = tr->hz, ovh = tr->ovh;
    /* The whole run, timed as likwid-bench times its iterations: from just
     * before the barrier that starts the first repetition to just after the
     * barrier that every thread reaches after its last, both read by thread 0
     * on its own CPU.
     * One CPU's clock: no comparison of time stamps taken on different CPUs
     * (a guest's vCPUs need not agree on the TSC), and no thread's work can
     * fall outside the window. The span of the threads' own stamps (first
     * start to last end) is a cross-check (below) and an INFO figure. The first repetition is part of the run (STREAM
     * would drop it as a warm-up; every page is touched before it anyway). */
    uint64_t run0 = UINT64_MAX, run1 = 0, own_min = UINT64_MAX, own_max = 0;
    for (unsigned t = 0; t < c->threads; t++) {
        for (unsigned r = 0; r < c->repeats; r++) {
            if (sh->start[t][r] < run0)
                run0 = sh->start[t][r];
            if (sh->end[t][r] > run1)
                run1 = sh->end[t][r];
        }
        /* free-running: when the thread's own queue ran dry (then it helped) */
        uint64_t own = c->free_running ? sh->own_done[t] - sh->run_t0
                                       : sh->end[t][c->repeats - 1] - sh->start[t][0];
        own_min = own < own_min ? own : own_min;
        own_max = own > own_max ? own : own_max;
    }
    double span = ((double)(run1 - run0) - ovh) / hz;
    out->free_running = c->free_running;
    out->run_seconds = ((double)(sh->run_t1 - sh->run_t0) - ovh) / hz;
    out->run_bw = out->run_seconds > 0 ? out->bytes * c->repeats / out->run_seconds : 0;
    /* Causality puts every thread's stamps inside thread 0's window; stamps
     * outside it mean the CPUs' time-stamp counters disagree. */
    double outside = 0, tol = 2e-6 * hz;
    if ((double)sh->run_t0 - (double)run0 > tol)
        outside += ((double)sh->run_t0 - (double)run0) / hz;
    if ((double)run1 - (double)sh->run_t1 > tol)
        outside += ((double)run1 - (double)sh->run_t1) / hz;
    if (outside > 0)
        mw_log(MW_LOG_WARN,
               "triad: other CPUs' time stamps fall %.6f s outside thread 0's %.6f s window: "
               "the CPUs' time-stamp counters disagree (the run figure uses thread 0's clock "
               "only; per-repetition figures compare CPUs and are off by up to that much)",
               outside, out->run_seconds);
    double hfrac = mw_bench_huge_fraction(tr->mem, tr->total);
    mw_log(MW_LOG_INFO,
           "triad %s: run %.6f s (threads' span %.6f s), own share per thread done after "
           "%.6f..%.6f s, %u blocks run by another thread, %.1f %% of the arrays on huge "
           "pages, TSC %.0f Hz",
           c->store == MW_TRIAD_NT ? "NT" : "normal", out->run_seconds, span,
           (double)own_min / hz, (double)own_max / hz, atomic_load(&sh->stolen),
           hfrac < 0 ? -1.0 : 100 * hfrac, hz);
    if (tr->huge && hfrac >= 0 && hfrac < 0.9)
        mw_log(MW_LOG_WARN,
               "triad: only %.0f %% of the arrays got huge pages (memory fragmented?): the "
               "rest pay TLB misses and the figure varies from run to run",
               100 * hfrac);
}

/* Checks c[] against the expected triad result; MW_ERR_CORRUPT if wrong. */
static int triad_verify(const struct triad_shared *sh, size_t n, mw_triad_result *out)
{
    out->verified = 1;
    double want = 2.0 + TRIAD_SCALAR * 1.0;
    for (size_t i = 0; i < n; i += 4093)
        if (sh->c[i] != want) {
            out->verified = 0;
            break;
        }
    if (sh->c[n - 1] != want)
        out->verified = 0;
    if (!out->verified) {
        mw_log(MW_LOG_ERROR, "triad: wrong results in c[]");
        return MW_ERR_CORRUPT;
    }
    return 0;
}

MW_API int mw_bench_triad(const mw_triad_config *cfg, mw_triad_result *out)
{
    int rc = 0;
    memset(out, 0, sizeof *out);
    triad_run run = {0};
    if ((rc = triad_setup(cfg, &run)))
        return rc;
    mw_triad_config *c = &run.c;
    const struct triad_kernel *k = run.k;
    size_t unit = (size_t)TRIAD_ALIGN_ELEMS * c->threads;
    size_t n = (c->elems + unit - 1) / unit * unit;

    /* One region; arrays offset by different amounts so that the streams do
     * not alias on 4 KiB boundaries. */
    size_t abytes = n * sizeof(double);
    size_t stride = (abytes + 4096 + 4095) & ~(size_t)4095;
    size_t total = 3 * stride + 4096;
    int huge = 0;
    char *mem = mw_bench_alloc(total, &huge);
    if (!mem)
        return -ENOMEM;
    struct triad_shared *sh = calloc(1, sizeof *sh);
    size_t maxblocks = n / c->threads / TRIAD_BLOCK_ELEMS + 2; /* chunks differ by 64 elements */
    _Atomic unsigned *done = calloc((size_t)c->threads * maxblocks, sizeof *done);
    struct triad_arg *args = calloc(c->threads, sizeof *args);
    pthread_t *tids = calloc(c->threads, sizeof *tids);
    if (!sh || !args || !tids || !done) {
        rc = -ENOMEM;
        goto out;
    }
    sh->a = (double *)(mem);
    sh->b = (double *)(mem + stride + 1024);
    sh->c = (double *)(mem + 2 * stride + 2048);
    sh->n = n;
    sh->threads = c->threads;
    sh->repeats = c->repeats;
    sh->free_running = c->free_running;
    sh->done_reps = c->repeats;
    sh->steady = c->free_running ? 0 : c->steady < 0 ? 0 : c->steady > 0 ? c->steady : 0.01;
    sh->min_repeats = c->min_repeats ? c->min_repeats : 4;
    sh->fn = c->store == MW_TRIAD_NT ? k->nt : k->normal;
    sh->done = done;
    sh->maxblocks = maxblocks;
    sh->cpus = run.cpus;
    sh->ncpus = run.ncpus;
    mw_spin_barrier_init(&sh->bar, c->threads);
    unsigned started = 0;
    for (; started < c->threads; started++) {
        args[started] = (struct triad_arg){sh, started};
        int e = pthread_create(&tids[started], NULL, triad_worker, &args[started]);
        if (e) {
            rc = -e;
            break;
        }
    }
    if (rc)
        mw_log(MW_LOG_ERROR, "triad: cannot start thread %u: %s", started, mw_strerror(rc));
    atomic_store(&sh->go, rc ? -1 : 1);
    for (unsigned i = 0; i < started; i++)
        pthread_join(tids[i], NULL);
    if (rc)
        goto out;
    if (sh->pin_err)
        mw_log(MW_LOG_WARN, "triad: could not pin every thread");

    double hz = mw_bench_tsc_hz();
    double ovh = mw_bench_timer_overhead();
    out->threads = c->threads;
    out->elems = n;
    out->array_bytes = abytes;
    out->store = c->store;
    snprintf(out->isa, sizeof out->isa, "%s", k->isa);
    out->bytes_per_iter = mw_triad_bytes_per_iter(c->store, 0);
    out->bytes = (double)out->bytes_per_iter * (double)n;
    c->repeats = sh->done_reps; /* fewer where the figure was steady early */
    out->repeats = c->repeats;
    out->huge_pages = huge;
    run.sh = sh;
    run.hz = hz;
    run.ovh = ovh;
    run.mem = mem;
    run.total = total;
    run.huge = huge;
    triad_per_rep(&run, out);
    triad_whole_run(&run, out);
    mw_stats_compute(out->bw, out->repeats, 1, &out->bw_stats);
    out->explicit_bw_best = out->bw_stats.best * 24.0 / out->bytes_per_iter;
    rc = triad_verify(sh, n, out);
out:
    free(tids);
    free(args);
    free(sh);
    free(done);
    mw_bench_free(mem, total);
    return rc;
}
