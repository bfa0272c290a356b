/*
 * memwatch calibration microbenchmarks: the ground truth that every
 * measurement method is validated against (implemented in calibrate/bench_*.c).
 *
 *   - timing harness (Fang et al.): serialized TSC reads, TSC frequency
 *     cross-checked against clock_gettime, timer overhead, repeat statistics;
 *   - cache information from sysfs;
 *   - STREAM triad c[i] = b[i] + s*a[i] with exact byte counts
 *     (32 B/iteration with normal stores: 24 explicit + 8 write-allocate;
 *      24 B/iteration with non-temporal stores);
 *   - the delay-regulated read sweep of Helm & Taura (one load per 64-byte
 *     record, K NOPs after every four loads), also available as a background
 *     load generator (mw_read_load_*) so another thread can measure while a
 *     known bandwidth flows;
 *   - the pointer-chase latency ladder with cache-level detection;
 *   - loaded latency (MLC style) and memory-level parallelism.
 *
 * Contract: every function returns 0 or a negative errno / MW_ERR_*; the
 * library prints nothing (mw_log). Benchmarks create and pin their own worker
 * threads (sched_setaffinity) and join them before returning; the calling
 * thread is never re-pinned except by the functions that say so. Functions are
 * not re-entrant with each other in the sense that two benchmarks running at
 * once disturb each other's figures, but they share no global state, so doing
 * so is safe (the validation engine runs a read load while it measures).
 */
#ifndef MEMWATCH_BENCH_H
#define MEMWATCH_BENCH_H

#include <memwatch/memwatch.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ limits */
#define MW_BENCH_MAX_REPEATS 64
#define MW_BENCH_MAX_CPUS 256
#define MW_CACHE_MAX_LEVELS 8
#define MW_SWEEP_MAX_DELAYS 32
#define MW_SWEEP_MAX_THREADS 12
#define MW_LADDER_MAX_POINTS 160
#define MW_LADDER_MAX_LEVELS 6
#define MW_MLP_MAX_CHAINS 64
#define MW_LINE 64 /* bytes per cache line assumed by the record layouts */

/* ------------------------------------------------------------ statistics */
typedef struct mw_stats {
    unsigned n;
    double best;   /* max for rates (higher is better), min for times */
    double median;
    double mean;
    double worst;
    double cv;     /* standard deviation / mean (0 for n < 2) */
} mw_stats;

/* Statistics of v[0..n-1]; higher_is_better picks whether best is the max.
 * v is not modified. n == 0 gives all zeros. */
MW_API void mw_stats_compute(const double *v, unsigned n, int higher_is_better, mw_stats *out);

/* ------------------------------------------------------------- timing */
typedef struct mw_timer_info {
    int have_tsc;            /* 0 where the architecture has none (ns clock used) */
    double tsc_hz;           /* from mw_tsc_hz() */
    char tsc_source[96];     /* where tsc_hz came from */
    double clock_hz;         /* the TSC rate measured against CLOCK_MONOTONIC_RAW */
    double tsc_clock_diff;   /* (clock_hz - tsc_hz) / tsc_hz */
    double overhead_cycles;  /* minimum cost of an empty start/end pair, subtracted */
    char thp[16];            /* transparent huge pages: "always", "madvise", "never", "?" */
    int huge_pages;          /* 1 when MADV_HUGEPAGE can take effect */
    char note[160];          /* e.g. why huge pages are not used */
} mw_timer_info;

/* Calibrates the timer once (cached; thread-safe) and fills *out. */
MW_API int mw_timer_info_get(mw_timer_info *out);

/* --------------------------------------------------------- cache info */
typedef struct mw_cache_level {
    int level;            /* 1, 2, 3 ... */
    char type[16];        /* "Data", "Unified", "Instruction" */
    size_t size;          /* bytes */
    unsigned line;        /* coherency_line_size */
    unsigned ways;        /* 0 if unknown */
    unsigned sharing;     /* CPUs sharing this cache (from shared_cpu_list) */
} mw_cache_level;

typedef struct mw_cache_info {
    unsigned n;                              /* data/unified levels, ascending */
    mw_cache_level level[MW_CACHE_MAX_LEVELS];
    size_t llc_size;                         /* size of the last level (0 if unknown) */
    unsigned line;                           /* line size (64 if unknown) */
} mw_cache_info;

/* Reads <sys_root>/devices/system/cpu/cpu<cpu>/cache/index*. sys_root NULL means
 * "/sys". Instruction caches are skipped. MW_ERR_NODATA when nothing is found. */
MW_API int mw_cache_info_read(const char *sys_root, int cpu, mw_cache_info *out);

/* CPUs this process may run on, ascending; returns the count or -errno. */
MW_API int mw_bench_cpus(int *cpus, int max);

/* ------------------------------------------------------------- triad */
typedef enum mw_triad_store {
    MW_TRIAD_NORMAL = 0, /* ordinary stores: 32 B/iteration reach memory */
    MW_TRIAD_NT = 1,     /* non-temporal stores: 24 B/iteration */
} mw_triad_store;

/* Bytes per iteration that move between the cores and memory (exact):
 * normal 3*8 + 8 (write-allocate read of c) = 32, non-temporal 3*8 = 24.
 * explicit_only = 1 gives STREAM's own convention (24 for both). */
MW_API unsigned mw_triad_bytes_per_iter(mw_triad_store store, int explicit_only);

typedef struct mw_triad_config {
    unsigned threads;      /* 0: every CPU we may run on */
    size_t elems;          /* doubles per array, all threads together; 0: 4x LLC each */
    unsigned repeats;      /* 0: 10; at most MW_BENCH_MAX_REPEATS */
    mw_triad_store store;
    const int *cpus;       /* CPUs to pin thread i to cpus[i % ncpus]; NULL: mw_bench_cpus */
    unsigned ncpus;
    const char *isa;       /* NULL/"auto", or force "scalar", "sse2", "avx2", "avx512" */
    int free_running;      /* 0: a barrier before every repetition (STREAM); 1: threads
                              run their repetitions back to back (as likwid-bench does) */
    /* Barrier mode stops before `repeats` once, after min_repeats (0: 4), the
     * three best repetitions agree within steady (0: 0.01; negative: never):
     * the best-of figure is then confirmed. result.repeats says how many ran. */
    double steady;
    unsigned min_repeats;
} mw_triad_config;

typedef struct mw_triad_result {
    unsigned threads;
    size_t elems;            /* per array */
    size_t array_bytes;      /* per array */
    mw_triad_store store;
    char isa[16];            /* kernel used */
    unsigned bytes_per_iter; /* counted: 32 or 24 */
    double bytes;            /* per repetition, bytes_per_iter * elems */
    unsigned repeats;
    double seconds[MW_BENCH_MAX_REPEATS];
    double bw[MW_BENCH_MAX_REPEATS]; /* bytes/s per repetition */
    mw_stats bw_stats;               /* bytes/s, best = max */
    double explicit_bw_best;         /* best in STREAM's 24 B/iteration convention */
    int huge_pages;                  /* 1 if the arrays were madvise'd huge */
    int verified;                    /* 1 if c[] held the expected values */
    int free_running;                /* as configured */
    double run_seconds;              /* first thread's first start to last thread's last end */
    double run_bw;                   /* repeats * bytes / run_seconds: the whole run */
} mw_triad_result;

MW_API int mw_bench_triad(const mw_triad_config *cfg, mw_triad_result *out);

/* -------------------------------------------------------- read sweep */
/* The delay grid: 0, then powers of two 1, 2, 4, ... up to max_delay (a
 * non-power-of-two max_delay is appended). Returns the count (<= cap). */
MW_API unsigned mw_read_sweep_delay_grid(unsigned max_delay, unsigned *out, unsigned cap);

/* The thread grid: 1, 2, 4, ... up to max_threads, with max_threads appended
 * when it is not a power of two. Returns the count (<= cap). */
MW_API unsigned mw_read_sweep_thread_grid(unsigned max_threads, unsigned *out, unsigned cap);

/* Read/write mixes of the load generator (as the Mess benchmark varies them).
 * The generator works in periods of 12 records (three groups of four, NOPs
 * after each group); mw_mix_store_mask says which records of a period are
 * stored instead of loaded. A normal store reads its line first (the
 * write-allocate, or read-for-ownership) and writes it back later, so:
 *   reads100: 12 loads                   -> 12 lines read, 0 written: 100 % reads
 *   reads75:  8 loads, 4 stores          -> 12 read, 4 written:        75 % reads
 *   reads50:  12 stores                  -> 12 read, 12 written:       50 % reads
 *   nt50:     6 loads, 6 non-temporal    -> 6 read, 6 written:         50 % reads
 *             stores of whole lines (no write-allocate: memcpy's pattern for
 *             large copies)
 * Percentages are of the bytes that move between the cores and memory. */
typedef enum mw_read_mix {
    MW_MIX_R100 = 0,
    MW_MIX_R75 = 1,
    MW_MIX_R50 = 2,
    MW_MIX_NT50 = 3,
} mw_read_mix;
#define MW_MIX_COUNT 4
#define MW_MIX_PERIOD 12 /* records per period of the pattern */

/* "reads100", "reads75", "reads50", "nt50"; NULL for a value out of range. */
MW_API const char *mw_mix_name(mw_read_mix m);
/* Parses a name (also "100", "75", "50", "nt"); 0 or -EINVAL. */
MW_API int mw_mix_parse(const char *s, mw_read_mix *out);
/* Parses a comma-separated list ("all" for every mix) into a bit set
 * (bit m for mix m); 0 or -EINVAL. */
MW_API int mw_mix_parse_list(const char *s, unsigned *mask);
/* Bit i set: record i of a period is stored. 0 for reads100. */
MW_API unsigned mw_mix_store_mask(mw_read_mix m);
/* 1 when the mix's stores are non-temporal. */
MW_API int mw_mix_nontemporal(mw_read_mix m);
/* Exact bytes that `records` records of the mix move (records a multiple of
 * MW_MIX_PERIOD): lines read (loads and write-allocates) and lines written,
 * 64 bytes each. -EINVAL for a bad mix or a partial period. */
MW_API int mw_mix_traffic(mw_read_mix m, uint64_t records, double *read_bytes,
                          double *write_bytes);
/* Share of reads in the traffic, 0..1 (1.0, 0.75, 0.5, 0.5); NAN for a bad mix. */
MW_API double mw_mix_read_share(mw_read_mix m);

typedef struct mw_sweep_point {
    unsigned threads;
    unsigned delay;        /* NOPs after every four loads */
    uint64_t lines;        /* 64-byte records loaded, all threads, exact */
    double seconds;        /* window: first thread's start to last thread's end */
    double bytes;          /* lines * 64 */
    double bw;             /* bytes/s: sum over threads of own lines*64/own time */
    double bw_window;      /* bytes / seconds */
    /* Filled by mw_bench_read_sweep only (0 elsewhere): the point above is
     * the best of `windows` measurement windows; bw_median is their median. */
    unsigned windows;
    double bw_median;
    /* The mix the load ran (0: reads100) and its traffic split; bytes above
     * is read_bytes + write_bytes (lines * 64 for reads100). */
    mw_read_mix mix;
    double read_bytes, write_bytes;
    double bw_cv;           /* mw_bench_read_sweep: CV of the windows' bw */
} mw_sweep_point;

/* A background read load: threads pinned to CPUs, each reading its own array
 * (a share of >= 4x LLC, huge pages where allowed) in the Helm & Taura pattern.
 * create allocates and first-touches; start/stop may be repeated with
 * different delays; destroy joins the threads. One controlling thread. */
typedef struct mw_read_load mw_read_load;

typedef struct mw_read_load_config {
    unsigned threads;       /* 1..; required */
    const int *cpus;        /* thread i runs on cpus[i % ncpus]; NULL: mw_bench_cpus */
    unsigned ncpus;
    size_t bytes_per_thread;/* 0: max(4 x LLC / threads, 8 x L2, 16 MiB) rounded to 2 MiB */
    mw_read_mix mix;        /* 0: reads100 (loads only); MW_ERR_UNSUPPORTED for nt50
                               where the CPU has no non-temporal store */
} mw_read_load_config;

MW_API int mw_read_load_create(const mw_read_load_config *cfg, mw_read_load **out);
/* Threads begin loading with `delay` NOPs after every four loads. Returns once
 * every thread is running. */
MW_API int mw_read_load_start(mw_read_load *l, unsigned delay);
/* Stops the threads (each finishes its current block of 256 records) and
 * reports exactly what was read since start. */
MW_API int mw_read_load_stop(mw_read_load *l, mw_sweep_point *out);
MW_API void mw_read_load_destroy(mw_read_load *l);

/* Convenience: create, run for duration_s (0: 0.25 s), stop, destroy. Threads
 * are pinned to the first `threads` allowed CPUs. */
MW_API int mw_bench_read_sweep_point(unsigned threads, unsigned delay, double duration_s,
                                     mw_sweep_point *out);

typedef struct mw_sweep_config {
    unsigned max_threads;   /* 0: every CPU */
    unsigned max_delay;     /* 0: 4096 */
    double duration_s;      /* per measurement window; 0: 0.25 */
    unsigned windows;       /* most windows per grid point, best kept; 0: 3 */
    /* A point stops after min_windows (0: 2) once the CV of its windows'
     * bandwidths is at most cv_target (0: 0.02; negative: always `windows`). */
    unsigned min_windows;
    double cv_target;
    const int *cpus;
    unsigned ncpus;
    size_t bytes_per_thread;/* 0: default of mw_read_load_config */
    /* 0 or 1: every delay of mw_read_sweep_delay_grid; k >= 2: only 0, the
     * delays 2^(k*i) and the largest (mw_read_sweep_delay_thin) */
    unsigned delay_stride;
    /* Called after each grid point (may be NULL), e.g. for progress output. */
    void (*progress)(void *user, unsigned done, unsigned total);
    void *user;
} mw_sweep_config;

/* Thins a delay grid (0, 1, 2, 4, ..., max) in place to 0, every stride-th
 * power of two and the largest (stride 2: 0 1 4 16 ... max); returns the new
 * count (the grid as it was for stride 0 or 1). */
MW_API unsigned mw_read_sweep_delay_thin(unsigned *d, unsigned n, unsigned stride);

typedef struct mw_sweep_result {
    unsigned nthreads, ndelays;
    unsigned thread_grid[MW_SWEEP_MAX_THREADS];
    unsigned delay_grid[MW_SWEEP_MAX_DELAYS];
    mw_sweep_point point[MW_SWEEP_MAX_THREADS][MW_SWEEP_MAX_DELAYS];
    double peak_bw;         /* highest bw over the grid */
    double min_bw;          /* lowest */
} mw_sweep_result;

MW_API int mw_bench_read_sweep(const mw_sweep_config *cfg, mw_sweep_result *out);

/* ------------------------------------------------------------ ladder */
/* Builds a single random cycle over n elements (Sattolo's algorithm) with a
 * deterministic generator seeded by seed: next[i] is the successor of i. */
MW_API int mw_sattolo_cycle(uint32_t *next, size_t n, uint64_t seed);

/* Lines of one 4 KiB page that the page-local chase visits back to back: the
 * even or the odd lines of the page (one line of every 128-byte pair). */
#define MW_LADDER_PAGE_LINES 64
#define MW_LADDER_GROUP_LINES 32

/* Group of line i in the page-local cycle: 2 x page + (i & 1). */
static inline size_t mw_page_local_group(size_t i)
{
    return (i / MW_LADDER_PAGE_LINES) * 2 + (i & 1);
}

/* Builds one cycle over n lines (next[i]: successor of line i) that visits
 * the lines of each group (mw_page_local_group) back to back in a random
 * order, the groups of even lines in a random order, then those of odd lines
 * in another: a TLB miss once per group, and the other line of a 128-byte
 * pair half a cycle later (not fetched for free by an adjacent-line
 * prefetcher while the group runs). Deterministic in seed. */
MW_API int mw_page_local_cycle(uint32_t *next, size_t n, uint64_t seed);

typedef struct mw_ladder_point {
    size_t bytes;          /* footprint */
    double cycles;         /* TSC cycles per load (best of repeats) */
    double ns;             /* ns per load */
    double cv;             /* over repeats */
    /* The same footprint chased page by page (mw_page_local_cycle): a TLB
     * miss once per group of lines instead of once per load. 0: not run. */
    double local_cycles, local_ns, local_cv;
} mw_ladder_point;

typedef struct mw_ladder_level {
    int level;             /* 1, 2, ... in order found; the last one is memory */
    int is_memory;
    double ns, cycles;     /* latency on the plateau (median of its points) */
    size_t size;           /* detected capacity (0 for memory) */
    size_t plateau_end;    /* largest footprint still on the plateau */
    size_t sysfs_size;     /* the kernel's size for the matching level (0 none) */
    int within_one_step;   /* |log(size/sysfs_size)| <= log(step) */
    size_t plateau_start;  /* smallest footprint on the plateau */
    /* mw_bench_ladder (levels_from_local): ns/cycles above are the
     * full-random chase's median over the plateau's footprints; local_ns the
     * page-local one's (lower: prefetchers). 0 from mw_ladder_detect. */
    double local_ns;
} mw_ladder_level;

typedef struct mw_ladder_config {
    size_t min_bytes;      /* 0: 4 KiB */
    size_t max_bytes;      /* 0: max(llc_times x LLC, 128 MiB) */
    unsigned llc_times;    /* 0: 4 */
    unsigned steps_per_octave; /* 0: 4 */
    unsigned repeats;      /* 0: 3 */
    uint64_t min_loads;    /* timed loads per repeat; 0: 1<<18 */
    int cpu;               /* CPU to pin to; -1: first allowed */
    void (*progress)(void *user, unsigned done, unsigned total);
    void *user;
} mw_ladder_config;

typedef struct mw_ladder_result {
    unsigned npoints;
    mw_ladder_point point[MW_LADDER_MAX_POINTS];
    double step_ratio;     /* footprint ratio between neighbouring points */
    unsigned nlevels;
    mw_ladder_level level[MW_LADDER_MAX_LEVELS];
    double dram_ns, dram_cycles; /* idle memory latency (last plateau) */
    int huge_pages;
    /* mw_bench_ladder runs both chases: levels[] come from the page-local
     * curve, dram_* from the full-random one (1 when so; 0 when levels and
     * dram_* come from one curve, as mw_ladder_detect alone does). */
    int levels_from_local;
    size_t tlb_reach;      /* mw_ladder_tlb_reach (0: no step of its own) */
    double tlb_ratio;      /* full-random / page-local latency at the largest footprint */
    unsigned full_nlevels; /* levels of the full-random curve alone, for comparison */
    mw_ladder_level full_level[MW_LADDER_MAX_LEVELS];
} mw_ladder_result;

MW_API int mw_bench_ladder(const mw_ladder_config *cfg, mw_ladder_result *out);

/* Finds cache levels in a latency curve (pure function; used by
 * mw_bench_ladder and tested on synthetic curves). bytes ascending, ns > 0.
 * Fills out->level[] and out->nlevels, matches them against ci (may be NULL)
 * and sets dram_ns. step_ratio is the footprint ratio between points. */
MW_API int mw_ladder_detect(const size_t *bytes, const double *ns, const double *cycles,
                            unsigned n, double step_ratio, const mw_cache_info *ci,
                            mw_ladder_result *out);

/* The TLB reach seen in a ladder: the first step of the full-random curve
 * (full, from mw_ladder_detect) that the page-local curve (local) lacks,
 * i.e. no local level's size lies within MW_LADDER_TLB_STEPS footprint steps
 * of it; returns that step's plateau_end (the largest footprint the TLB still
 * covered), or 0 when every full-random step is also a page-local one (the
 * TLB runs out beyond the last cache, or together with a cache). Pure.
 * (A ratio of the two curves would not do: prefetchers make the page-local
 * chase faster inside the caches too.) */
#define MW_LADDER_TLB_STEPS 2
MW_API size_t mw_ladder_tlb_reach(const mw_ladder_result *local, const mw_ladder_result *full,
                                  double step_ratio);

/* ------------------------------------------------------ loaded latency */
typedef struct mw_loaded_point {
    unsigned delay;
    double bw;              /* bytes/s of the load threads (exact lines) */
    double ns, cycles;      /* latency seen by the chasing thread (median of repeats) */
} mw_loaded_point;

typedef struct mw_loaded_config {
    unsigned load_threads;  /* 0: every allowed CPU but the chaser's */
    unsigned max_delay;     /* 0: 4096 */
    double duration_s;      /* per point; 0: 0.3 */
    size_t chase_bytes;     /* 0: max(4 x LLC, 128 MiB) */
    void (*progress)(void *user, unsigned done, unsigned total);
    void *user;
    mw_read_mix mix;        /* the load's read/write mix (0: reads100) */
} mw_loaded_config;

typedef struct mw_loaded_result {
    unsigned chase_cpu, load_threads;
    double idle_ns;         /* no load running */
    unsigned npoints;
    mw_loaded_point point[MW_SWEEP_MAX_DELAYS]; /* ascending delay */
} mw_loaded_result;

MW_API int mw_bench_loaded_latency(const mw_loaded_config *cfg, mw_loaded_result *out);

/* ---------------------------------------------------------------- MLP */
typedef struct mw_mlp_config {
    unsigned max_chains;    /* 0: 32; at most MW_MLP_MAX_CHAINS (64) */
    size_t bytes;           /* 0: max(llc_times x LLC, 128 MiB) */
    unsigned llc_times;     /* 0: 4 */
    uint64_t loads;         /* most timed loads per k (each k walks its own
                               lines/max_chains region of the cycle); 0: 1<<19 */
    int cpu;                /* -1: first allowed */
    void (*progress)(void *user, unsigned done, unsigned total);
    void *user;
} mw_mlp_config;

typedef struct mw_mlp_result {
    unsigned n;
    double ns_per_load[MW_MLP_MAX_CHAINS];  /* index k-1: wall ns / total loads */
    double parallelism[MW_MLP_MAX_CHAINS];  /* ns_per_load(1) / ns_per_load(k) */
    double max_parallelism;                 /* highest parallelism reached */
    unsigned saturation_k;  /* smallest k reaching 95 % of max_parallelism */
    double outstanding;     /* sustained outstanding misses per core (max_parallelism) */
    int saturated;          /* 1 if the curve flattened before k = n; 0: outstanding is
                               only a lower bound (still rising at the largest k) */
} mw_mlp_result;

/* Pure: fills parallelism, max_parallelism, saturation_k, outstanding from
 * ns_per_load[0..n-1]. */
MW_API int mw_mlp_analyse(mw_mlp_result *r);

MW_API int mw_bench_mlp(const mw_mlp_config *cfg, mw_mlp_result *out);

/* ------------------------------------------- CPU structure (Fang et al.) */
/* Prefetchers, TLBs and associativity from latency curves (calibrate/
 * bench_struct.c; no MSR access needed). Each curve point is ns per dependent
 * load. x86-64 only (cache-line flushes, serialised time stamps):
 * MW_ERR_UNSUPPORTED elsewhere. */
#define MW_CURVE_MAX 64
typedef struct mw_curve {
    unsigned n;
    double x[MW_CURVE_MAX];
    double ns[MW_CURVE_MAX];
} mw_curve;

typedef struct mw_prefetch_result {
    double random_ns;       /* dependent loads to random flushed lines (memory) */
    /* adjacent line: pairs of 128-byte-aligned lines; per load, the even line
     * of a random pair then its buddy, against the even line then the odd line
     * of another random pair */
    double pair_same_ns, pair_other_ns;
    int adjacent_line;      /* pair_same_ns < 0.75 x pair_other_ns */
    mw_curve stride;        /* x: stride in bytes; a chain walking flushed memory at it */
    size_t stride_covered;  /* largest stride read under half random_ns (0: none) */
    int stride_prefetch;    /* a stride above 128 bytes is covered */
    mw_curve distance;      /* x: lines ahead of a stream of 4 trained lines; ns of one load */
    unsigned distance_lines;/* farthest line ahead served below the hit/miss midpoint */
    double hit_ns;          /* the trained stream's own next line, for reference */
} mw_prefetch_result;

#define MW_TLB_MAX_LEVELS 4
typedef struct mw_tlb_level {
    unsigned entries;       /* pages still covered: the last point below half the step's rise */
    unsigned first_miss;    /* the first point past it */
    size_t reach;           /* entries x page size */
    double extra_ns;        /* latency added past the step (over the packed control; the
                             * median of the plateau after it) */
    unsigned rise_from;     /* the step's rise begins after this many pages */
    unsigned rise_to;       /* and ends (its plateau begins) at this many: a sharp step
                             * has rise_from == entries, rise_to == first_miss */
} mw_tlb_level;

typedef struct mw_tlb_curve {
    size_t page;            /* 4096 or 2 MiB */
    mw_curve pages;         /* x: pages; one line per page, random order */
    mw_curve control;       /* the same number of lines packed into few pages */
    unsigned nlevels;
    mw_tlb_level level[MW_TLB_MAX_LEVELS];
    double huge_fraction;   /* 2 MiB curve: share of the buffer on huge pages */
    char note[160];         /* why a curve is missing or limited */
} mw_tlb_curve;

typedef struct mw_assoc_result {
    size_t stride;          /* bytes between the lines of one set */
    mw_curve curve;         /* x: lines k at that stride, random cycle; ns per load */
    unsigned nsteps;        /* steps found (L1 ways, then L2 ways where seen) */
    unsigned ways[3];       /* lines that still fit before each step */
    double level_ns[4];     /* plateau latency before each step, and after the last */
    int huge;               /* 2 MiB pages: the stride reaches L2 sets too */
} mw_assoc_result;

typedef struct mw_struct_config {
    int cpu;                /* -1: first allowed */
    int quick;              /* fewer points and repeats */
    size_t tlb2m_bytes;     /* most memory for the 2 MiB curve (0: 2 GiB, quick 512 MiB) */
} mw_struct_config;

typedef struct mw_struct_result {
    mw_prefetch_result pf;
    mw_tlb_curve tlb[2];    /* [0] 4 KiB pages, [1] 2 MiB pages */
    mw_assoc_result assoc;
} mw_struct_result;

MW_API int mw_bench_struct(const mw_struct_config *cfg, mw_struct_result *out);

/* Stride grid: min, then per_octave points per doubling (rounded to whole
 * lines, no repeats) up to max. Returns the count (<= cap). Pure. */
MW_API unsigned mw_struct_stride_grid(size_t min, size_t max, unsigned per_octave, size_t *out,
                                      unsigned cap);
/* Steps of a latency curve (pure): walking up the points, a step is a point
 * more than `rise` above the plateau so far (its lowest point) whose next two
 * points (those that exist) are too; the plateau then restarts there. at[k]: index of the
 * first point past step k. Returns the number of steps (<= cap). */
MW_API unsigned mw_curve_steps(const double *y, unsigned n, double rise, unsigned *at,
                               unsigned cap);

/* TLB steps (pure): pages_ns (one line per page) against control_ns (the same
 * lines packed), n points in increasing pages. Works on the excess pages -
 * control, smoothed by a running median of three; a rise is a run of points
 * each more than 10 % of the total latency (and 0.3 ns) above the one before,
 * merged with a larger run that follows within two points; it is a step when
 * the two points after its top exist and stay above half its height, and its
 * height is at least 25 % of the total latency below it (0.3 ns at least) and
 * more than its plateau's spread (calibrate/bench_struct.c). Indices into the
 * curve; excess in ns. Returns the number of steps (<= cap). */
typedef struct mw_curve_rise {
    unsigned from;          /* the last point before the rise */
    unsigned mid;           /* the last point below half the rise */
    unsigned to;            /* the rise's top: its plateau's first point */
    double low_ns, high_ns; /* excess before the rise and on the plateau after it */
} mw_curve_rise;
MW_API unsigned mw_tlb_steps(const double *pages_ns, const double *control_ns, unsigned n,
                             mw_curve_rise *out, unsigned cap);

/* ----------------------------------------------- everything, for the CLI */
enum mw_calib_what {
    MW_CALIB_TRIAD = 1u << 0,
    MW_CALIB_SWEEP = 1u << 1,
    MW_CALIB_LADDER = 1u << 2,
    MW_CALIB_LOADED = 1u << 3,
    MW_CALIB_MLP = 1u << 4,
    MW_CALIB_STRUCT = 1u << 5, /* prefetchers, TLBs, associativity */
    MW_CALIB_ALL = 0x3f,
};

/* What `memwatch calibrate` collected; handed to validation (issue 4) and to
 * the JSON writer. Fields of benchmarks not in `ran` are zero. */
typedef struct mw_calib_results {
    unsigned ran;                     /* MW_CALIB_* bits of benchmarks run */
    unsigned threads;
    mw_timer_info timer;
    mw_cache_info cache;
    mw_triad_result triad[2];         /* [MW_TRIAD_NORMAL], [MW_TRIAD_NT] */
    mw_sweep_result sweep;
    mw_ladder_result ladder;
    mw_loaded_result loaded;
    mw_mlp_result mlp;
    mw_struct_result structure;
    /* 1-minute load average (/proc/loadavg) before and after the benchmarks
     * (-1 if unknown): above the CPU count, other programs shared the CPUs
     * and the figures are disturbed. */
    double loadavg_before, loadavg_after;
    /* Seconds each part took: triad, sweep, ladder, loaded, mlp, then the
     * validation (set by the command after it ran; 0: not run). */
    double part_s[6];
    double struct_s;        /* seconds of the structure probes */
} mw_calib_results;

/* The 1-minute load average from /proc/loadavg, or -1. */
MW_API double mw_bench_loadavg(void);

/* Writes every raw figure as JSON (schema: docs/calibrate-json.md). */
MW_API int mw_calib_results_write_json(const mw_calib_results *r, const char *path);

/* Writes sweep.svg, loaded.svg, mlp.svg, ladder.svg into dir (created). */
MW_API int mw_calib_results_write_plots(const mw_calib_results *r, const char *dir);

#ifdef __cplusplus
}
#endif
#endif
