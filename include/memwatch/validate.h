/*
 * Counter validation: memwatch measures each method against ground truth (the
 * calibration benchmarks of bench.h), gives it a verdict with its numbers,
 * derives the saturation threshold and writes the machine profile (profile.h).
 *
 *   - verdicts (calibrate/verdict.c): pure functions on recorded readings;
 *   - threshold (calibrate/threshold.c): pure, from a latency-vs-bandwidth curve;
 *   - the validation run (calibrate/validate.c): probe_lat measured while the
 *     read sweep's load runs at each grid point, every other method reported with
 *     the counters-core availability (probe.h);
 *   - the profile writer (calibrate/profile_write.c), schema docs/profile-format.md.
 *
 * Contract: 0 or a negative errno / MW_ERR_*; nothing prints except
 * mw_validate_write_table, which writes to the stream it is given. The pure
 * functions are thread-safe; mw_validate_run starts and joins its own threads
 * and must not run beside another benchmark.
 */
#ifndef MEMWATCH_VALIDATE_H
#define MEMWATCH_VALIDATE_H

#include <stdio.h>

#include <memwatch/memwatch.h>
#include <memwatch/profile.h>

#ifdef __cplusplus
extern "C" {
#endif

struct mw_calib_results; /* bench.h */

/* Median of v[0..n-1]; sorts v in place. NAN for n == 0. The verdicts' and
 * thresholds' statistic, also memwatch fleet's (calibrate/verdict.c). */
MW_API double mw_val_median_inplace(double *v, size_t n);

/* mw_verdict: include/memwatch/profile.h (a loaded profile carries it). */

/* The profile's verdict strings: "unavailable", "accurate", "biased",
 * "misses_prefetch", "noisy". */
MW_API const char *mw_verdict_name(mw_verdict v);

/* The rules a verdict applies; mw_verdict_rules_default fills the values that
 * docs/saturation.md and docs/profile-format.md justify. */
typedef struct mw_verdict_rules {
    double bw_tol;       /* |ratio - 1| always accepted as accurate (0.05) */
    double bw_stable_cv; /* CV of the ratio up to which a bias is stable (0.05) */
    double bw_noisy_cv;  /* CV of the ratio above which a method is noisy (0.15) */
    double pf_miss_min;  /* share of traffic missed with prefetchers on to say so (0.10) */
    double lat_noisy_cv; /* median per-point CV above which a latency method is noisy (0.10) */
    double lat_max_rate; /* false-positive / false-negative rate still accurate (0.05) */
    double low_frac;     /* "far from the peak": bandwidth < low_frac x peak (0.5) */
    double high_frac;    /* "near the peak": bandwidth >= high_frac x peak (0.9) */
    double idle_frac;    /* "idle end" of the sweep for the separation check (0.25) */
    double knee_frac;    /* the curve's latency reported at knee_frac x peak (0.8) */
    double min_rise;     /* threshold >= idle x (1 + min_rise); saturated if the
                            latency at the peak rose at least this much (0.25) */
} mw_verdict_rules;

MW_API void mw_verdict_rules_default(mw_verdict_rules *r);

/* ------------------------------------------------------------ bandwidth */
typedef struct mw_bw_reading {
    const char *bench;    /* "triad", "read_sweep" (for the reason text) */
    int prefetch;         /* 1 prefetchers on, 0 off, -1 as they were (not switched) */
    double true_bytes;    /* the benchmark's exact volume */
    double counted_bytes; /* what the method counted over the same run */
} mw_bw_reading;

typedef struct mw_bw_verdict {
    mw_verdict verdict;
    unsigned n;
    double ratio;          /* median counted/true over all readings */
    double ratio_on, ratio_off; /* medians by prefetcher state (NAN: none) */
    double cv;             /* of the ratio, all readings */
    double lo, hi;         /* smallest and largest ratio */
    double missed;         /* misses_prefetch: share missed with prefetchers on */
    double factor;         /* divide counts by it (1 unless biased) */
    char reason[200];
} mw_bw_verdict;

MW_API int mw_verdict_bw(const mw_bw_reading *r, size_t n, const mw_verdict_rules *rules,
                         mw_bw_verdict *out);

/* -------------------------------------------------------------- latency */
typedef struct mw_lat_point {
    double bw;            /* bytes/s the read load reached at this grid point */
    double direct_ns;     /* loaded latency measured directly by a benchmark (0: none) */
    unsigned n;           /* readings of the method at this point */
    const double *ns;     /* the readings, ns */
} mw_lat_point;

typedef struct mw_threshold {
    double peak_bw;       /* highest point bandwidth */
    double idle_ns;       /* median reading at the lowest-bandwidth point */
    double knee_ns;       /* point medians interpolated at knee_frac x peak (reported) */
    double sep_ns;        /* best separation of readings far from / near the peak (NAN: none) */
    double peak_ns;       /* median reading at the highest-bandwidth point */
    double rise;          /* peak_ns / idle_ns */
    int saturated;        /* rise >= 1 + min_rise: the sweep saturated memory */
    double threshold_ns;  /* max(sep_ns, idle_ns x (1 + min_rise)) */
    char rule[160];       /* which term set the threshold */
} mw_threshold;

MW_API int mw_threshold_compute(const mw_lat_point *pts, size_t n, const mw_verdict_rules *rules,
                                mw_threshold *out);

typedef struct mw_lat_verdict {
    mw_verdict verdict;
    mw_threshold th;
    double cv, cv_max;       /* median and largest per-point CV */
    unsigned n_low, fp;      /* readings far from the peak, of which above threshold */
    unsigned n_high, fn;     /* readings near the peak, of which not above threshold */
    double false_pos, false_neg; /* fp / n_low, fn / n_high (0 when no readings) */
    /* separation: readings at the idle end (bw <= idle_frac x peak) against the
     * saturated end (bw >= high_frac x peak) */
    unsigned n_idle, n_sat;
    double idle_min, idle_max, sat_min, sat_max;
    int overlap;             /* idle_max >= sat_min */
    double direct_ratio;     /* median method / direct latency where known (0: none) */
    char reason[240];
} mw_lat_verdict;

MW_API int mw_verdict_lat(const mw_lat_point *pts, size_t n, const mw_verdict_rules *rules,
                          mw_lat_verdict *out);

/* --------------------------------------------------------- load shapes */
/* The loads programs make (docs/saturation.md, "Load shapes"): whether the
 * threshold transfers to them is measured, and the threshold is placed on
 * them (mw_threshold_shapes). */
typedef enum mw_shape_role {
    MW_SHAPE_SATURATING = 1, /* every CPU streaming: memory saturates if it can */
    MW_SHAPE_LIGHT = 2,      /* a few threads, compute or idle: far from the peak when
                                its bandwidth is at most low_frac of its mode's saturating
                                load's (else it counts in neither class) */
} mw_shape_role;

typedef struct mw_shape_obs {
    const char *name;     /* "read_T", "triad_P", "read_3", "compute_T", "idle" */
    const char *mode;     /* "read", "copy", "triad", "nt", "compute", "idle" */
    int role;             /* mw_shape_role */
    double bw;            /* bytes/s the load moved (write-allocate reads counted) */
    unsigned n;           /* probe readings taken while it ran */
    const double *ns;
} mw_shape_obs;

typedef struct mw_shape_stat {
    int cls;              /* MW_SHAPE_SATURATING, MW_SHAPE_LIGHT, or 0: neither */
    double share;         /* bw / its mode's saturating load's bw (NAN: none) */
    double p5, p50, p95;  /* readings' percentiles, ns */
    double flagged;       /* share of its readings above the threshold */
} mw_shape_stat;

#define MW_SHAPES_MAX 16
typedef struct mw_shapes_threshold {
    double idle_ns;       /* median of the idle shape's readings */
    double sat_ns;        /* median of the saturating shapes' readings, pooled */
    double rise;          /* sat_ns / idle_ns */
    int saturated;        /* rise >= 1 + min_rise: memory saturated under these loads */
    double threshold_ns;
    double band_lo, band_hi; /* the threshold's uncertainty band, ns */
    double worst_rate;    /* the largest per-shape error rate at the threshold */
    int feasible;         /* every shape's error rate <= lat_max_rate at the threshold */
    char rule[200];
    mw_shape_stat stat[MW_SHAPES_MAX];
} mw_shapes_threshold;

/* The threshold placed on the load shapes (docs/saturation.md, "The rule on
 * load shapes"): half-way between the highest light shape's median and the
 * lowest rules->lat_max_rate quantile of a saturating shape (the lowest
 * latency at which saturated loads read); where that quantile lies below a
 * light median, the t with the smallest worst per-shape error rate (saturating:
 * share not above t; light: share above t) between them. The band spans the
 * threshold, the saturating shapes' low quantile and the light shapes' high
 * one. Not saturated: the guard idle x (1 + min_rise), no band (lo = hi =
 * threshold). Pure. 0, -EINVAL, MW_ERR_NODATA (no idle or no saturating shape
 * with readings). */
MW_API int mw_threshold_shapes(const mw_shape_obs *s, size_t n, const mw_verdict_rules *rules,
                               mw_shapes_threshold *out);

/* ------------------------------------------------------- validation run */
#define MW_VAL_MAX_POINTS 160
#define MW_VAL_MAX_SAMPLES 48
#define MW_VAL_SHAPE_SAMPLES 512

typedef struct mw_val_point {
    unsigned threads, delay; /* read-load threads (0: idle) and NOPs per four loads */
    double bw;               /* bytes/s, exact lines read (a mix: lines read + written) */
    int mix;                 /* mw_read_mix of the load (0: reads100) */
    double read_bw, write_bw;/* bw split into the lines read and written */
    double direct_ns;        /* the loaded-latency benchmark at this load (0: none) */
    unsigned n;
    double ns[MW_VAL_MAX_SAMPLES]; /* probe_lat readings (median of bursts each) */
} mw_val_point;

typedef struct mw_val_method {
    char name[24];
    int latency;             /* 1 latency method, 0 bandwidth method */
    int available;
    char reason[320];        /* unavailable: why (counters core); else what was done */
    mw_lat_verdict lat;      /* latency methods that were measured */
    mw_bw_verdict bw;        /* bandwidth methods that were measured */
} mw_val_method;

typedef struct mw_validate_config {
    double point_s;          /* seconds per grid point (0: 0.2) */
    unsigned max_threads;    /* read-load threads (0: allowed CPUs - 1, at least 1) */
    unsigned max_delay;      /* 0: 1024 */
    const char *proc_root, *sys_root, *dev_root; /* NULL: /proc, /sys, /dev */
    /* A grid point's readings stop after min_samples (0: 16) once the median's
     * standard error (1.25 sd / sqrt(n)) is at most se_target of it (0: 0.01;
     * negative: always MW_VAL_MAX_SAMPLES readings). */
    unsigned min_samples;
    double se_target;
    /* Read/write mixes (bit m: mw_read_mix m) whose curves are measured after
     * the reads100 grid, on the largest thread count over the delays
     * mw_val_mix_delay_grid gives; 0: reads100 only. */
    unsigned mixes;
    /* 0 or 1: the read sweep's grid (every thread count of
     * mw_read_sweep_thread_grid, delays doubling); k >= 2 (--quick: 2): a
     * coarser one: delays every 2^k-fold, every second thread count and the
     * largest (mw_val_thread_subset), the mixes' delays every 2^(k+1)-fold */
    unsigned grid_stride;
    /* Seconds of probe readings per load shape and round (0: shapes are not
     * measured); readings every 10 ms, the profiler's interval. */
    double shapes_s;
    unsigned shape_rounds;   /* rounds (0: 1); one more where shapes overlap */
    void (*progress)(void *user, unsigned done, unsigned total);
    void *user;
} mw_validate_config;

/* One read/write mix's curve: the idle point and the mix's points
 * (point[first .. first + n - 1]), with the threshold rule applied to them. */
typedef struct mw_val_mix {
    int mix;                 /* mw_read_mix */
    double read_share;       /* reads / all traffic, 0..1 */
    unsigned first, n;
    mw_threshold th;         /* threshold, idle, peak bandwidth and latency */
} mw_val_mix;

/* Keeps every second entry of a thread grid and its last (1 2 4 8 15 ->
 * 1 4 15), in place; returns the new count. */
MW_API unsigned mw_val_thread_subset(unsigned *t, unsigned n);

/* The delays of a mix curve: 0, then every `stride`-th power of two up to
 * max_delay (1, 4, 16, ... for stride 2), max_delay last. Returns the count. */
MW_API unsigned mw_val_mix_delay_grid(unsigned max_delay, unsigned stride, unsigned *out,
                                      unsigned cap);

typedef struct mw_validation {
    mw_verdict_rules rules;
    unsigned nmix;
    mw_val_mix mix[4];
    double part_s[2];        /* seconds: the reads100 grid, the mix curves */
    int probe_cpu;           /* CPU the probe ran on */
    unsigned load_threads_max;
    unsigned npoints;
    mw_val_point point[MW_VAL_MAX_POINTS];
    double probe_cost_ns;    /* median wall time of one probe_lat measurement */
    unsigned probe_lines, probe_bursts;
    unsigned nmethods;
    mw_val_method method[MW_PROFILE_MAX_METHODS];
    char prefetch_note[384]; /* prefetchers: switched or why not */
    char hw_note[320];       /* the counters core's one-line summary */
    /* the load shapes (calibrate/shapes.c): measured after the sweep when
     * shapes_s > 0 in the config */
    unsigned nshapes;
    struct mw_val_shape {
        char name[16], mode[8];
        int role;
        unsigned threads, procs;
        double bw;
        unsigned n;
        double ns[MW_VAL_SHAPE_SAMPLES];
    } shape[MW_SHAPES_MAX];
    unsigned shape_rounds;   /* rounds of every shape that were pooled */
    double shape_s;          /* seconds the shapes took */
    char shape_note[240];    /* why shapes were not measured, or what went wrong */
    int shape_disturbed;     /* the probe's idle reading was far above the chase's */
    mw_shapes_threshold shapes;
    /* the rule on the shapes that write (copy, triad, non-temporal triad)
     * with idle and compute: the threshold for a program whose own loops
     * write (docs/saturation.md, "Loads that write"); threshold_ns 0 where
     * it could not be placed */
    mw_shapes_threshold shapes_writes;
    /* the rule on the shapes that only read, with idle and compute, judged
     * saturated where all the shapes are (a read-only load raises the
     * latency least): the threshold of every other program (its light set
     * without the light loads that write, which pushed it up) */
    mw_shapes_threshold shapes_reads;
    mw_profile profile;      /* what the run derived; written by mw_profile_write */
} mw_validation;

/* Run the validation. calib (may be NULL) supplies the triad, the sweep's peak
 * and the loaded-latency benchmark for the comparison and the hierarchy. out is
 * large: allocate it (calloc). */
MW_API int mw_validate_run(const mw_validate_config *cfg, const struct mw_calib_results *calib,
                           mw_validation *out);

/* The readable validation table (one line per method, then the probe's
 * separation and the threshold). Writes to f; returns 0 or -errno. */
MW_API int mw_validate_write_table(const mw_validation *v, FILE *f);

/* What `memwatch calibrate` does after its benchmarks: runs the validation
 * (quick: shorter grid points), writes the table to out, writes the profile to
 * profile_path (NULL: mw_profile_default_path) and reads it back. Progress
 * (when progress is non-zero) and failures go to err. 0 or a negative code. */
MW_API int mw_validate_calibrate(const struct mw_calib_results *calib, const char *profile_path,
                                 int quick, int progress, FILE *out, FILE *err);

/* As mw_validate_calibrate, with the mixes to measure (0: all) and a
 * directory for mixes.svg (NULL: none); *seconds (may be NULL) gets the
 * validation's time. */
MW_API int mw_validate_calibrate_mixes(const struct mw_calib_results *calib,
                                       const char *profile_path, int quick, int progress,
                                       unsigned mixes, const char *plot_dir, double *seconds,
                                       FILE *out, FILE *err);

/* mixes.svg: every mix's curve (median reading against bandwidth) with its
 * threshold, into dir (created). */
MW_API int mw_validate_write_mix_plot(const mw_validation *v, const char *dir);

/* ---------------------------------------------------------------- profile */
/* Write a profile atomically (temporary file + rename; directories created).
 * v and calib may be NULL; when given, their raw evidence and the hierarchy
 * go in too. */
MW_API int mw_profile_write(const char *path, const mw_profile *p, const mw_validation *v,
                            const struct mw_calib_results *calib);

#ifdef __cplusplus
}
#endif
#endif
