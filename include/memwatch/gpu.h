/*
 * memwatch's GPU part: probes of the GPU memory hierarchy (gpu/probes.cu),
 * CUPTI metric validation against the triad's known volume (gpu/cupti_check.c)
 * and the GPU section of the machine profile (gpu/gpu_profile.c).
 *
 * Used by memwatch-gpu (gpu/main.c) and the tests in tests/gpu/. The probe and
 * CUPTI functions need the CUDA runtime and a device; the profile functions are
 * plain C and run anywhere. Nothing here prints: failures come back as
 * MW_ERR_GPU / MW_ERR_UNSUPPORTED with the reason in the caller's buffer or
 * through mw_log. Not thread-safe: one calibration at a time per process.
 */
#ifndef MEMWATCH_GPU_H
#define MEMWATCH_GPU_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MW_GPU_PROFILE_SCHEMA "memwatch-gpu-profile"
#define MW_GPU_PROFILE_VERSION 1
/* Without a calibrated profile, kernels above this fraction of the computed
 * peak are flagged, and every record says the threshold is uncalibrated. */
#define MW_GPU_DEFAULT_THRESHOLD_FRAC 0.5
/* A calibrated threshold is this fraction of the triad's measured bandwidth. */
#define MW_GPU_THRESHOLD_OF_TRIAD 0.5

typedef struct mw_gpu_device {
    int ordinal;
    char name[128];
    int cc_major, cc_minor;
    int sms;
    double sm_clock_attr_hz;   /* cudaDevAttrClockRate */
    double mem_clock_hz;       /* cudaDevAttrMemoryClockRate */
    int bus_width_bits;        /* cudaDevAttrGlobalMemoryBusWidth */
    size_t l2_bytes;           /* cudaDevAttrL2CacheSize */
    size_t global_bytes;
    size_t smem_per_sm;        /* cudaDevAttrMaxSharedMemoryPerMultiprocessor */
    double peak_bw;            /* bytes/s: mem clock x bus width x 2 (DDR) */
} mw_gpu_device;

/* Number of CUDA devices (>= 0), or MW_ERR_GPU with the runtime's words in
 * reason (e.g. "no CUDA-capable device is detected"). */
int mw_gpu_count(char *reason, size_t n);
int mw_gpu_device_get(int ordinal, mw_gpu_device *out, char *reason, size_t n);

/* One curve point for the plots. */
typedef struct mw_gpu_point { double x, y; } mw_gpu_point;

#define MW_GPU_MAX_POINTS 160

typedef struct mw_gpu_curve {
    char name[48];
    unsigned n;
    mw_gpu_point p[MW_GPU_MAX_POINTS];
} mw_gpu_curve;

typedef struct mw_gpu_latency {
    double sm_hz;              /* clock64 against %globaltimer, measured */
    /* Plain chase (j = A[j] only, averaged): the figures compared with the
     * published ones. */
    double l1_cyc, l2_cyc, dram_cyc, smem_cyc;
    /* Fine-grained chase (every access timed and recorded in shared memory;
     * includes the record's own cost). */
    double l1_fg_cyc, l2_fg_cyc, dram_fg_cyc;
    /* L2 hits of lines another SM brought in: near and far partition modes. */
    double l2_near_cyc, l2_far_cyc;
    double far_fraction;       /* share of those hits in the far mode */
    int far_sm;                /* the warming SM that showed the far mode most */
    mw_gpu_curve far_by_sm;    /* warming SM -> median cycles seen from SM 0 */
    mw_gpu_curve l2_hist;      /* cycles -> count, for the far_sm run */
} mw_gpu_latency;

typedef struct mw_gpu_geometry {
    size_t l1_bytes;           /* largest array the L1 holds without misses */
    size_t l1_fill_bytes;      /* miss period of a cold 4-byte-stride walk */
    size_t l1_line_bytes;      /* 128 on every NVIDIA GPU since Fermi; fill may be a 32-B sector */
    int l1_assoc;              /* from the miss count one line past capacity, 0 if unclear */
    int l1_sets;
    char l1_policy[96];
    size_t l2_bytes;           /* one SM's chase: where latency crosses halfway from a far hit to DRAM */
    size_t l2_near_bytes;      /* ... and halfway from a near hit to a far hit (near partition) */
    size_t l2_attr_bytes;
    size_t l2_chip_bytes;      /* every SM reading its own slice: where bandwidth falls halfway */
    mw_gpu_curve l2_chip_curve;/* footprint MiB -> GB/s, all SMs */
    size_t tlb1_reach, tlb2_reach; /* bytes; 0 when no step was seen */
    double tlb1_penalty_cyc, tlb2_penalty_cyc;
    mw_gpu_curve l1_curve;     /* array KiB -> miss share */
    mw_gpu_curve l2_curve;     /* array MiB -> mean cycles (plain chase, 128-B stride) */
    mw_gpu_curve tlb_curve;    /* pages of 2 MiB -> mean cycles */
    /* Conflict scans (Mei & Chu): n lines `stride` apart chased round and
     * round, L1 (cached loads) and L2 (L1 bypassed); x = stride in KiB, y =
     * the fewest lines whose steady state misses (0: none up to *_scan_max
     * lines). mw_gpu_conflict_analyse turns them into ways and sets. */
    mw_gpu_curve l1_conflict, l2_conflict;
    int l1_scan_max, l2_scan_max;
    int l2_assoc, l2_sets;
    char l1_sets_note[240], l2_sets_note[240];
    /* TLB: 64-bit pointers `span` apart (L1 bypassed: L2 hits, which need a
     * translation), mean cycles against the footprint in GiB, one curve per
     * span; the footprint before each curve's first step (0: none). */
#define MW_GPU_TLB_SPANS 3
    mw_gpu_curve tlb_span[MW_GPU_TLB_SPANS];
    size_t tlb_span_bytes[MW_GPU_TLB_SPANS], tlb_span_step[MW_GPU_TLB_SPANS];
    double tlb_span_penalty[MW_GPU_TLB_SPANS];
    /* Eviction: a 1 GiB ring (2 MiB span) read once after x GiB elsewhere
     * were touched (one load per 64 KiB); y = that pass's median cycles.
     * The largest x that kept its translations and the smallest that did
     * not, in bytes (0: none). */
    mw_gpu_curve tlb_evict;
    size_t tlb_evict_lo, tlb_evict_hi;
    double tlb_evict_base, tlb_evict_cyc;
    char tlb_note[320];
    /* Eviction sets, found by group testing (as for caches whose set index
     * is hashed, where no stride conflicts): for each of MW_GPU_EVSET_TARGETS
     * target lines, the fewest lines of a pool twice the cache's size whose
     * traversal evicts it (0: not found). Where the targets agree on one size
     * under a least-recently-used test, that size is the ways, and sets =
     * capacity / (ways x 128 B) (mw_gpu_evset_geometry). *_mates: the
     * target's miss share against the number of its set-mates traversed
     * (x = lines, y = share of reloads that miss): a step from 0 to 1 at
     * `ways` is what LRU does, a slope what random replacement does. */
#define MW_GPU_EVSET_TARGETS 5
    int l1_evset[MW_GPU_EVSET_TARGETS], l2_evset[MW_GPU_EVSET_TARGETS];
    int l1_ev_tests, l2_ev_tests;   /* eviction tests run for all targets */
    double l1_ev_ms, l2_ev_ms;      /* time they took */
    mw_gpu_curve l1_mates, l2_mates;
    char l1_ev_note[320], l2_ev_note[320];
} mw_gpu_geometry;

/* Ways and sets from a conflict scan (x = stride KiB, y = fewest lines that
 * miss, 0 none): misses that begin at the same count a+1 for the largest
 * strides (two at least) mean a ways of a modulo-indexed cache, and the
 * smallest stride of that run is one way's size (sets = it / line). Writes
 * 0/0 and the reason in why when the scan shows no conflicts (a hashed set
 * index, or more ways than lines scanned), no such run, or ways x sets x line
 * more than twice `capacity` (the size measured otherwise; 0: unknown). Returns 0 when
 * ways and sets were found, 1 otherwise. gpu/gpu_struct.c; pure C. */
int mw_gpu_conflict_analyse(const mw_gpu_curve *c, size_t line, int scan_max, size_t capacity,
                            int *ways, int *sets, char *why, size_t whyn);
/* First step of a latency curve: the first point above the running minimum
 * of the points before it by more than `rise` (a fraction), with the next
 * point above it too (or the last point). Returns the x of the point before
 * the step (0: no step) and the step's height over that minimum. */
double mw_gpu_curve_step(const mw_gpu_curve *c, double rise, double *height);
/* Eviction bounds: with y(0) the reference, the smallest x whose y exceeds
 * it by more than `rise` (*hi) and the largest x before it (*lo); both 0
 * when none does. */
void mw_gpu_evict_bounds(const mw_gpu_curve *c, double rise, double *lo, double *hi);

/* One eviction test: traverse the n lines of set[] (indexes into a pool)
 * after loading the target, then time the target once more; returns how many
 * of `reps` such reloads missed (the caller's reps), or -1 on an error. */
typedef int (*mw_gpu_evtest_fn)(void *user, const uint32_t *set, size_t n);

/* Group-testing reduction of an eviction set: set[0..*n) must evict the
 * target (test returns more than reps/2); splits it into g chunks, drops
 * every chunk without which it still evicts, and doubles g when none could
 * go, until no single line can go. Leaves the minimal set in set[0..*n) (its
 * order kept) and adds the tests it ran to *tests. `scratch` holds *n
 * entries. Returns 0 when a minimal set was found; 1 when the whole set
 * does not evict; 2 when a step lost the eviction it should have kept, or
 * after 5,000 tests (the tests disagree with themselves: noise or a
 * non-deterministic policy); MEMWATCH_GPU_EV_TRACE set prints each sweep;
 * -1 when a test failed. gpu/gpu_struct.c; pure C. */
int mw_gpu_evset_reduce(uint32_t *set, size_t *n, uint32_t *scratch, int reps,
                        mw_gpu_evtest_fn test, void *user, int *tests);

/* More set-mates of the target beyond a minimal eviction set ev[0..m):
 * chunks of the pool (members of ev left out) are tested with ev[1..m) (one
 * line short of evicting), and a chunk that evicts is halved down to its
 * mate. Writes up to `want` mates to mates[], returns how many were found,
 * -1 when a test failed. scratch holds pn entries. gpu/gpu_struct.c. */
int mw_gpu_evset_mates(const uint32_t *ev, size_t m, const uint32_t *pool, size_t pn,
                       uint32_t *mates, int want, uint32_t *scratch, int reps,
                       mw_gpu_evtest_fn test, void *user, int *tests);

/* Ways and sets from the minimal eviction sets of k targets (0: none
 * found): where at least two targets found a set and all found sets have one
 * size, ways = that size and sets = capacity / (ways x line) rounded, and
 * the mates curve (may be NULL) names the replacement policy seen. Writes
 * the reasoning, or why not, into why. Returns 0 when ways and sets were
 * found. gpu/gpu_struct.c; pure C. */
int mw_gpu_evset_geometry(const int *sizes, int k, size_t capacity, size_t line,
                          const mw_gpu_curve *mates, int *ways, int *sets, char *why,
                          size_t whyn);

typedef struct mw_gpu_banks {
    mw_gpu_curve lat4;         /* stride -> cycles, 4-byte words */
    mw_gpu_curve lat8;         /* stride -> cycles, 8-byte words */
    int degree4[MW_GPU_MAX_POINTS], degree8[MW_GPU_MAX_POINTS];
    double corr4, corr8;       /* Spearman correlation of latency with conflict degree */
} mw_gpu_banks;

typedef struct mw_gpu_outstanding {
    mw_gpu_curve lat[4];       /* per loads-per-thread: threads -> mean cycles */
    int repeats;               /* cold repeats per point (median taken) */
    int limit_requests;        /* knee: requests in flight where latency starts to climb */
    int limit_threads, limit_loads;
    double base_cyc, slope_cyc;/* flat latency before the knee, cycles per request after it */
    int spike_requests;        /* Lashgar's estimate: largest 3-point variance (T >= 32) */
    double spike_var;
    mw_gpu_curve combined;     /* requests (threads x loads) -> median latency, all loads */
} mw_gpu_outstanding;

typedef struct mw_gpu_triad {
    size_t n;                  /* doubles per array */
    double bytes;              /* 3 * n * 8: reads of b, c, write of a (no write-allocate) */
    double triad_bw, memcpy_bw;/* best of runs, bytes/s */
    double triad_s, memcpy_s;  /* best times */
    double peak_bw;
    int runs;
    int reps;                  /* launches back to back per timed run (the launch gap shared) */
    char variant[32];          /* the fastest triad kernel shape */
    double variant_bw[3];      /* best bytes/s of each shape */
} mw_gpu_triad;

/* CUPTI verdict for one metric against the known volume. */
typedef struct mw_gpu_metric_check {
    char metric[48];
    double value, expected, ratio;
    char verdict[24];          /* accurate, biased, wrong, unavailable */
    char reason[240];
} mw_gpu_metric_check;

typedef struct mw_gpu_cupti {
    int status;                /* 0 ok, else MW_ERR_* */
    char status_text[320];     /* what went wrong and what to do */
    char chip[32];
    int passes;
    unsigned n;
    mw_gpu_metric_check m[6];
} mw_gpu_cupti;

typedef void (*mw_gpu_progress_fn)(const char *step, void *user);

int mw_gpu_probe_latency(int dev, mw_gpu_latency *out, mw_gpu_progress_fn pf, void *user);
int mw_gpu_probe_geometry(int dev, const mw_gpu_latency *lat, mw_gpu_geometry *out,
                          mw_gpu_progress_fn pf, void *user);
/* Structure scans into geo (its conflict-scan, TLB-span and eviction fields):
 * L1/L2 ways and sets from conflict scans, TLB steps over pointer spans of
 * 2, 32 and 512 MiB, and the eviction test; allocates most of the free
 * memory for a while, so run it after the bandwidth probes. */
int mw_gpu_probe_structure(int dev, const mw_gpu_latency *lat, mw_gpu_geometry *geo,
                           mw_gpu_progress_fn pf, void *user);
int mw_gpu_probe_banks(int dev, mw_gpu_banks *out);
int mw_gpu_probe_outstanding(int dev, mw_gpu_outstanding *out, mw_gpu_progress_fn pf, void *user);
int mw_gpu_probe_triad(int dev, int runs, mw_gpu_triad *out);

/* Device helpers for the CUPTI check (gpu/probes.cu): allocate the triad's
 * arrays, flush the L2 by writing 2x its size, launch one triad. */
typedef struct mw_gpu_triad_bufs {
    double *a, *b, *c;
    size_t n;
    void *flush;
    size_t flush_bytes;
    int variant;               /* 0 one 16-B vector per thread, 1 four, 2 scalar */
    int reps;                  /* triads launched back to back per timing (0 or 1: one);
                                  mw_gpu_triad_launch's seconds are those of one */
} mw_gpu_triad_bufs;
int mw_gpu_triad_alloc(int dev, size_t n, mw_gpu_triad_bufs *t);
int mw_gpu_triad_flush_l2(mw_gpu_triad_bufs *t);
int mw_gpu_triad_launch(mw_gpu_triad_bufs *t, double *seconds);
void mw_gpu_triad_free(mw_gpu_triad_bufs *t);

/* Range Profiler check of dram__bytes_read/write, lts__t_bytes and
 * gpu__time_duration for one triad after an L2 flush (gpu/cupti_check.c). */
int mw_gpu_cupti_check(int dev, size_t n, mw_gpu_cupti *out);

/* Verdict for a measured value against the known one: within 3 % accurate,
 * within 25 % biased (factor in ratio), otherwise wrong. */
const char *mw_gpu_verdict(double value, double expected);

/* GPU profile file: $MEMWATCH_GPU_PROFILE, or gpu-profile.json beside the
 * machine profile ($XDG_DATA_HOME/memwatch/ or ~/.local/share/memwatch/). */
int mw_gpu_profile_path(char *buf, size_t n);

/* Read the flagging threshold (bytes/s) and computed peak from a GPU profile.
 * 0 on success; MW_ERR_NODATA if absent, MW_ERR_CORRUPT if malformed. */
int mw_gpu_profile_threshold(const char *path, double *threshold_bw, double *peak_bw);

/* Find a numeric value "key": <number> in a JSON text (first occurrence, any
 * depth). 0 on success, MW_ERR_NODATA when absent, MW_ERR_PARSE when not a
 * number. Small on purpose: the injected library links no JSON library. */
int mw_gpu_json_number(const char *json, const char *key, double *out);

#ifdef __cplusplus
}
#endif
#endif
