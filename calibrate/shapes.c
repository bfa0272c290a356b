/*
 * calibrate/shapes.c: the load shapes of the validation (docs/saturation.md,
 * "Load shapes"): probe_lat read as the profiler reads it while loads of the
 * shapes programs have run, and the threshold placed on them
 * (mw_threshold_shapes, calibrate/threshold.c).
 *
 * The loads (N = the CPUs calibrate may use):
 *   saturating: read, copy, triad, non-temporal triad on N threads of one
 *               process; read and triad in N processes of one thread;
 *   light:      read, copy, triad and non-temporal triad on max(1, N/5)
 *               threads; read and triad on one thread;
 *               compute (multiply-adds in registers) on N threads, idle.
 * Every worker streams over arrays of its own (64 MiB each, fewer where the
 * memory available would not hold them), unpinned, as programs run; the
 * probe runs on the calling thread, unpinned too, so that it shares the
 * loaded CPUs as the profiler's interval thread does. The workers run in
 * child processes (killed with the caller: PR_SET_PDEATHSIG), count the bytes
 * they move in a shared page, and are killed after the readings. A load's
 * bandwidth counts the write-allocate reads of normal stores (copy 24, triad
 * 32, non-temporal triad 24 bytes per element), the traffic memory sees.
 *
 * May call: probe_lat.h, libc, pthreads. Threading: one calling thread; it
 * forks. Prints nothing.
 */
#include <memwatch/bench.h>
#include <memwatch/probe_lat.h>
#include <memwatch/validate.h>

#include "validate_int.h"

#include <emmintrin.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SH_MAX_WORKERS 512
#define SH_ARRAY_BYTES (64u << 20)
#define SH_CHUNK 16384 /* doubles per counted chunk (128 KiB) */
#define SH_STEP_NS 10000000ull /* one reading per profiler interval */
#define SH_SETTLE_NS 200000000ull

typedef struct sh_shared {
    _Atomic unsigned ready;
    _Atomic unsigned long long bytes[SH_MAX_WORKERS];
} sh_shared;

enum sh_mode { SH_READ, SH_COPY, SH_TRIAD, SH_NT, SH_COMPUTE };

typedef struct sh_worker {
    sh_shared *sh;
    unsigned slot;
    enum sh_mode mode;
    size_t n; /* doubles per array */
} sh_worker;

/* Where the loops' results go, so that no compiler drops a read loop. */
static volatile double sh_sink;

static enum sh_mode sh_mode_of(const char *mode)
{
    static const char *const names[] = {"read", "copy", "triad", "nt", "compute"};
    for (unsigned i = 0; i < sizeof names / sizeof *names; i++)
        if (!strcmp(mode, names[i]))
            return (enum sh_mode)i;
    return SH_COMPUTE;
}

static uint64_t sh_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void sh_sleep(uint64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

/* One chunk of the mode's loop; the bytes memory sees. */
static double sh_chunk(enum sh_mode mode, double *a, double *b, double *c, size_t n,
                       double *sink)
{
    const __m128d k = _mm_set1_pd(3.0);
    switch (mode) {
    case SH_READ: { /* read: four independent vector sums */
        __m128d s0 = _mm_setzero_pd(), s1 = s0, s2 = s0, s3 = s0;
        for (size_t i = 0; i < n; i += 8) {
            s0 = _mm_add_pd(s0, _mm_load_pd(a + i));
            s1 = _mm_add_pd(s1, _mm_load_pd(a + i + 2));
            s2 = _mm_add_pd(s2, _mm_load_pd(a + i + 4));
            s3 = _mm_add_pd(s3, _mm_load_pd(a + i + 6));
        }
        double r[2];
        _mm_storeu_pd(r, _mm_add_pd(_mm_add_pd(s0, s1), _mm_add_pd(s2, s3)));
        *sink += r[0] + r[1];
        return (double)n * 8;
    }
    case SH_COPY: /* copy: b = a */
        for (size_t i = 0; i < n; i += 2)
            _mm_store_pd(b + i, _mm_load_pd(a + i));
        return (double)n * 24;
    case SH_TRIAD: /* triad: a = b + 3c */
        for (size_t i = 0; i < n; i += 2)
            _mm_store_pd(a + i, _mm_add_pd(_mm_load_pd(b + i), _mm_mul_pd(k, _mm_load_pd(c + i))));
        return (double)n * 32;
    case SH_NT: /* the triad with non-temporal stores */
        for (size_t i = 0; i < n; i += 2)
            _mm_stream_pd(a + i, _mm_add_pd(_mm_load_pd(b + i), _mm_mul_pd(k, _mm_load_pd(c + i))));
        _mm_sfence();
        return (double)n * 24;
    case SH_COMPUTE:
    default: { /* compute: a multiply-add chain in registers */
        __m128d x = _mm_set1_pd(1.0000001), y = _mm_set1_pd(0.9999999), z = _mm_set1_pd(1e-9);
        for (size_t i = 0; i < n; i++)
            x = _mm_add_pd(_mm_mul_pd(x, y), z);
        double r[2];
        _mm_storeu_pd(r, x);
        *sink += r[0];
        return 0;
    }
    }
}

static void *sh_work(void *arg)
{
    sh_worker *w = arg;
    int mem = w->mode != SH_COMPUTE;
    size_t bytes = mem ? w->n * sizeof(double) : 64;
    double *a = aligned_alloc(64, bytes), *b = aligned_alloc(64, bytes),
           *c = aligned_alloc(64, bytes);
    if (!a || !b || !c)
        _exit(3);
    for (size_t i = 0; mem && i < w->n; i++)
        a[i] = 1, b[i] = 2, c[i] = 3;
    atomic_fetch_add(&w->sh->ready, 1);
    double sink = 0;
    for (;;)
        for (size_t off = 0; off < (mem ? w->n : SH_CHUNK); off += SH_CHUNK) {
            double moved = sh_chunk(w->mode, a + (mem ? off : 0), b + (mem ? off : 0),
                                    c + (mem ? off : 0), SH_CHUNK, &sink);
            atomic_fetch_add_explicit(&w->sh->bytes[w->slot], (unsigned long long)moved,
                                      memory_order_relaxed);
            sh_sink = sink;
        }
    return NULL;
}

/* A child process of `threads` workers from slot `first`; never returns. */
static void sh_child(sh_shared *sh, enum sh_mode mode, unsigned threads, unsigned first, size_t n)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    sh_worker w[SH_MAX_WORKERS];
    for (unsigned i = 0; i < threads; i++) {
        w[i] = (sh_worker){sh, first + i, mode, n};
        pthread_t t;
        if (i + 1 < threads && pthread_create(&t, NULL, sh_work, &w[i]) != 0)
            _exit(4);
    }
    sh_work(&w[threads - 1]);
    _exit(0);
}

static unsigned long long sh_bytes(sh_shared *sh, unsigned workers)
{
    unsigned long long s = 0;
    for (unsigned i = 0; i < workers; i++)
        s += atomic_load_explicit(&sh->bytes[i], memory_order_relaxed);
    return s;
}

/* Doubles per array: 64 MiB, less where the workers' three arrays would take
 * more than a quarter of the memory available. */
static size_t sh_array_len(unsigned workers)
{
    long pages = sysconf(_SC_AVPHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    double avail = pages > 0 && psz > 0 ? (double)pages * (double)psz : 4e9;
    double per = fmin((double)SH_ARRAY_BYTES, avail / 4 / (3.0 * workers));
    size_t n = (size_t)(per / sizeof(double)) / SH_CHUNK * SH_CHUNK;
    return n < SH_CHUNK ? SH_CHUNK : n;
}

/* Run one shape for `seconds` of readings, appended to s->ns (up to the
 * cap); s->bw gets the load's bandwidth over the readings (pooled over
 * rounds: the mean of the rounds). 0 or a negative code. */
static int sh_run(mw_probe_lat *pl, struct mw_val_shape *s, double seconds, unsigned round)
{
    unsigned workers = s->threads * s->procs;
    if (workers > SH_MAX_WORKERS)
        return -EINVAL;
    sh_shared *sh = NULL;
    pid_t pid[SH_MAX_WORKERS];
    unsigned np = 0;
    int rc = 0;
    if (workers) {
        sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (sh == MAP_FAILED)
            return -errno;
        size_t n = sh_array_len(workers);
        for (unsigned p = 0; p < s->procs; p++) {
            pid_t c = fork();
            if (c < 0) {
                rc = -errno;
                break;
            }
            if (c == 0)
                sh_child(sh, sh_mode_of(s->mode), s->threads, p * s->threads, n);
            pid[np++] = c;
        }
        uint64_t give_up = sh_now() + 60000000000ull;
        while (!rc && atomic_load(&sh->ready) < workers) {
            if (sh_now() > give_up)
                rc = -ETIMEDOUT;
            int st;
            for (unsigned p = 0; p < np && !rc; p++)
                if (waitpid(pid[p], &st, WNOHANG) == pid[p]) {
                    rc = -ECHILD; /* a worker died: no memory for its arrays */
                    pid[p] = -1;
                }
            sh_sleep(1000000);
        }
    }
    if (!rc) {
        sh_sleep(SH_SETTLE_NS);
        mw_probe_lat_reset(pl);
        uint64_t win = mw_probe_lat_window_ns(NULL), t0 = sh_now();
        unsigned pre = (unsigned)(win / SH_STEP_NS), keep = (unsigned)(seconds * 1e9 / SH_STEP_NS);
        unsigned long long b0 = 0;
        uint64_t tb0 = 0;
        for (unsigned i = 0; i < pre + keep && !rc; i++) {
            if (i == pre) {
                b0 = workers ? sh_bytes(sh, workers) : 0;
                tb0 = sh_now();
            }
            mw_probe_lat_result r;
            rc = mw_probe_lat_measure(pl, &r);
            if (!rc && i >= pre && s->n < MW_VAL_SHAPE_SAMPLES)
                s->ns[s->n++] = r.median_ns;
            uint64_t next = t0 + (uint64_t)(i + 1) * SH_STEP_NS, now = sh_now();
            if (next > now)
                sh_sleep(next - now);
        }
        /* a loaded machine may not let a worker finish a chunk within a
         * short window (quick calibrations, tests beside other load): the
         * bandwidth then takes up to 2 s more, until bytes moved */
        while (!rc && workers && sh_bytes(sh, workers) == b0 && sh_now() < tb0 + 2000000000ull)
            sh_sleep(1000000);
        double dt = (double)(sh_now() - tb0) / 1e9;
        double bw = workers && dt > 0 ? (double)(sh_bytes(sh, workers) - b0) / dt : 0;
        s->bw = (s->bw * round + bw) / (round + 1);
    }
    for (unsigned p = 0; p < np; p++)
        if (pid[p] > 0) {
            kill(pid[p], SIGKILL);
            while (waitpid(pid[p], NULL, 0) < 0 && errno == EINTR)
                ;
        }
    if (sh)
        munmap(sh, sizeof *sh);
    return rc;
}

static void sh_add(mw_validation *v, const char *name, const char *mode, int role,
                   unsigned threads, unsigned procs)
{
    if (v->nshapes == MW_SHAPES_MAX)
        return;
    struct mw_val_shape *s = &v->shape[v->nshapes++];
    memset(s, 0, offsetof(struct mw_val_shape, ns));
    snprintf(s->name, sizeof s->name, "%s", name);
    snprintf(s->mode, sizeof s->mode, "%s", mode);
    s->role = role;
    s->threads = threads;
    s->procs = procs;
}

/* The shapes for N CPUs (the header's list). */
static void sh_list(mw_validation *v, unsigned ncpu)
{
    unsigned k = ncpu / 5 ? ncpu / 5 : 1;
    char name[16];
    v->nshapes = 0;
    sh_add(v, "idle", "idle", MW_SHAPE_LIGHT, 0, 0);
    sh_add(v, "read_T", "read", MW_SHAPE_SATURATING, ncpu, 1);
    sh_add(v, "copy_T", "copy", MW_SHAPE_SATURATING, ncpu, 1);
    sh_add(v, "triad_T", "triad", MW_SHAPE_SATURATING, ncpu, 1);
    sh_add(v, "nt_T", "nt", MW_SHAPE_SATURATING, ncpu, 1);
    sh_add(v, "read_P", "read", MW_SHAPE_SATURATING, 1, ncpu);
    sh_add(v, "triad_P", "triad", MW_SHAPE_SATURATING, 1, ncpu);
    static const char *const modes[] = {"read", "copy", "triad", "nt"};
    for (unsigned m = 0; m < 4; m++) {
        snprintf(name, sizeof name, "%s_%u", modes[m], k);
        sh_add(v, name, modes[m], MW_SHAPE_LIGHT, k, 1);
    }
    if (k > 1) {
        sh_add(v, "read_1", "read", MW_SHAPE_LIGHT, 1, 1);
        sh_add(v, "triad_1", "triad", MW_SHAPE_LIGHT, 1, 1);
    }
    sh_add(v, "compute_T", "compute", MW_SHAPE_LIGHT, ncpu, 1);
}

int mw_val_shape_writes(const char *mode)
{
    return !strcmp(mode, "copy") || !strcmp(mode, "triad") || !strcmp(mode, "nt");
}

int mw_val_shape_classes(const mw_validation *v)
{
    return v->shapes.saturated && v->shapes_reads.threshold_ns > 0 &&
           v->shapes_writes.threshold_ns > 0;
}

/* The rule on all the shapes (saturation, rise), and on each class: the
 * loads that write and those that only read, each with the loads that move
 * nothing (idle, compute) among its light ones. A class's threshold is 0
 * where it could not be placed. */
static int sh_rule(mw_validation *v)
{
    mw_shape_obs obs[MW_SHAPES_MAX], wr[MW_SHAPES_MAX], rd[MW_SHAPES_MAX];
    unsigned nw = 0, nr = 0;
    for (unsigned i = 0; i < v->nshapes; i++) {
        obs[i] = (mw_shape_obs){.name = v->shape[i].name, .mode = v->shape[i].mode,
                                .role = v->shape[i].role, .bw = v->shape[i].bw,
                                .n = v->shape[i].n, .ns = v->shape[i].ns};
        int none = !strcmp(v->shape[i].mode, "idle") || !strcmp(v->shape[i].mode, "compute");
        int writes = mw_val_shape_writes(v->shape[i].mode);
        if (writes || none)
            wr[nw++] = obs[i];
        if (!writes || none)
            rd[nr++] = obs[i];
    }
    int rc = mw_threshold_shapes(obs, v->nshapes, &v->rules, &v->shapes);
    memset(&v->shapes_writes, 0, sizeof v->shapes_writes);
    memset(&v->shapes_reads, 0, sizeof v->shapes_reads);
    if (mw_threshold_shapes(wr, nw, &v->rules, &v->shapes_writes) != 0 ||
        !v->shapes_writes.saturated)
        v->shapes_writes.threshold_ns = 0;
    /* read-only loads saturate memory at a smaller rise: judged saturated
     * where all the shapes are */
    mw_verdict_rules r = v->rules;
    r.min_rise = 0;
    if (rc != 0 || !v->shapes.saturated ||
        mw_threshold_shapes(rd, nr, &r, &v->shapes_reads) != 0 || !v->shapes_reads.saturated)
        v->shapes_reads.threshold_ns = 0;
    return rc;
}

int mw_val_shapes(const mw_validate_config *cfg, unsigned ncpu, mw_validation *v,
                  unsigned *done, unsigned total)
{
    mw_probe_lat *pl = NULL;
    mw_probe_lat_config pc = {0};
    int rc = mw_probe_lat_create(&pc, &pl);
    if (rc < 0) {
        snprintf(v->shape_note, sizeof v->shape_note, "the software probe cannot run: %s",
                 mw_strerror(rc));
        return rc;
    }
    if (ncpu > SH_MAX_WORKERS)
        ncpu = SH_MAX_WORKERS;
    sh_list(v, ncpu);
    uint64_t t0 = sh_now();
    unsigned rounds = cfg->shape_rounds ? cfg->shape_rounds : 1;
    for (unsigned r = 0; r < rounds + 1 && !rc; r++) {
        if (r == rounds) { /* one more round only where the shapes overlap */
            if (sh_rule(v) < 0 || !v->shapes.saturated || v->shapes.feasible)
                break;
        }
        for (unsigned i = 0; i < v->nshapes && !rc; i++) {
            rc = sh_run(pl, &v->shape[i], cfg->shapes_s, r);
            if (rc < 0)
                snprintf(v->shape_note, sizeof v->shape_note, "load shape %s failed: %s",
                         v->shape[i].name, mw_strerror(rc));
            if (cfg->progress && r < rounds)
                cfg->progress(cfg->user, ++*done, total);
        }
        v->shape_rounds = r + 1;
    }
    mw_probe_lat_destroy(pl);
    v->shape_s = (double)(sh_now() - t0) / 1e9;
    if (rc < 0)
        return rc;
    rc = sh_rule(v);
    if (rc < 0)
        snprintf(v->shape_note, sizeof v->shape_note, "no threshold from the load shapes: %s",
                 mw_strerror(rc));
    return rc;
}
