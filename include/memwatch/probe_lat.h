/*
 * probe_lat: memwatch's software latency probe, the method that needs no PMU.
 *
 * A burst of timed dependent loads of cache lines that were flushed first
 * (clflushopt + fence on x86-64), visited in an order prefetchers cannot follow,
 * with the TLB warm; the median over the bursts of the measurements of a short
 * window (default: those that started in the last 80 ms, this one included)
 * estimates the loaded DRAM latency that every core of the machine sees.
 *
 * Implemented in counters/probe_lat.c. The probe owns its memory (mmap'ed, not
 * malloc'ed) so it can run inside a profiled process without touching the
 * application's heap. A handle is used by one thread at a time.
 */
#ifndef MEMWATCH_PROBE_LAT_H
#define MEMWATCH_PROBE_LAT_H

#include <memwatch/memwatch.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mw_probe_lat mw_probe_lat;

typedef struct mw_probe_lat_config {
    unsigned lines;        /* dependent loads per burst (0: default 32) */
    unsigned bursts;       /* bursts per measurement (0: default 5) */
    size_t region_bytes;   /* region the lines are spread over (0: default) */
    unsigned flags;        /* MW_PROBE_LAT_* below (0: defaults) */
    /* Added later (zero keeps the defaults): a reading is the median over the
     * bursts of the measurements that started less than window_ns before this
     * one started, this one included, at most MW_PROBE_LAT_MAX_WINDOW of them
     * (0: default 80 ms; flag MW_PROBE_LAT_NO_WINDOW: this measurement only). */
    uint64_t window_ns;
    /* The environment fills what is left at its default (0), so every probe
     * of a process (profiler, validation) follows it alike: MEMWATCH_PROBE_LINES,
     * MEMWATCH_PROBE_BURSTS (1..1000), MEMWATCH_PROBE_WINDOW (ms, 0: no
     * window), MEMWATCH_PROBE_LAYOUT (small or huge). */
} mw_probe_lat_config;

#define MW_PROBE_LAT_MAX_WINDOW 16u
#define MW_PROBE_LAT_DEFAULT_WINDOW_NS 80000000ull

/* Serialize the timer with cpuid (counters/tsc.h) instead of lfence. Same
 * readings, but cpuid traps to the hypervisor in a VM (about 6 us each on the
 * development VM), so this makes a measurement many times dearer there. */
#define MW_PROBE_LAT_CPUID 1u
/* One transparent huge page for the region (MADV_HUGEPAGE, every page
 * touched): the layout before small pages became the default. Put all lines in
 * one physical 2 MiB block, so the reading depends on where that block sits
 * (docs/probe_lat.md: 125..140 ns or about 230 ns idle on the GPU machine). */
#define MW_PROBE_LAT_HUGE 2u
/* Readings are the median of this measurement's bursts only (no window). */
#define MW_PROBE_LAT_NO_WINDOW 4u
/* The environment has been applied already (mw_probe_lat_config_env): create
 * and window_ns read no MEMWATCH_PROBE_* variable. For threads that must not
 * call getenv (the profiler's interval thread: the application may change its
 * environment at any time). */
#define MW_PROBE_LAT_NO_ENV 8u

typedef struct mw_probe_lat_result {
    double median_cycles;  /* TSC cycles per dependent load, median over the window's bursts */
    double median_ns;      /* the reading */
    double min_ns, max_ns; /* over the window's bursts */
    unsigned bursts;       /* bursts timed by this measurement */
    uint64_t cost_ns;      /* wall time the measurement itself took */
    /* Added later: */
    unsigned window_bursts;   /* bursts the median was taken over */
    unsigned window_measurements; /* measurements they came from, this one included */
    double this_ns;        /* median of this measurement's own bursts */
    unsigned lines;        /* dependent loads per burst */
} mw_probe_lat_result;

/* Create a probe. cfg may be NULL for defaults. Returns MW_ERR_UNSUPPORTED
 * (with the reason logged) where the CPU has no cache-line flush or usable TSC. */
MW_API int mw_probe_lat_create(const mw_probe_lat_config *cfg, mw_probe_lat **out);
MW_API int mw_probe_lat_measure(mw_probe_lat *p, mw_probe_lat_result *out);
/* The window a probe created with cfg (NULL: defaults) would use, in ns, after
 * MEMWATCH_PROBE_WINDOW: 0 when readings are single measurements. */
MW_API uint64_t mw_probe_lat_window_ns(const mw_probe_lat_config *cfg);
/* Apply MEMWATCH_PROBE_LINES, _BURSTS, _WINDOW and _LAYOUT to what cfg leaves
 * at its default (unless MW_PROBE_LAT_NO_ENV is set already), fill in the
 * defaults of lines, bursts and window_ns, and set MW_PROBE_LAT_NO_ENV: the configuration then describes the probe completely
 * and creating it reads the environment no more. */
MW_API void mw_probe_lat_config_env(mw_probe_lat_config *cfg);
/* Forget the window: the next reading uses only its own bursts. */
MW_API void mw_probe_lat_reset(mw_probe_lat *p);
/* The idle baseline the uncalibrated default threshold is relative to: the
 * median of 7 measurements, in ns; 0 when none succeeded. No allocation. */
MW_API double mw_probe_lat_baseline(mw_probe_lat *p);
MW_API void mw_probe_lat_destroy(mw_probe_lat *p);
/* Raw bursts for benchmarks: one untimed warm-up burst, then n timed bursts,
 * ns[i] = nanoseconds per load of burst i. No statistics, no window. */
MW_API int mw_probe_lat_bursts(mw_probe_lat *p, double *ns, unsigned n);

#ifdef __cplusplus
}
#endif
#endif
