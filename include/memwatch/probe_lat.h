/*
 * probe_lat: memwatch's software latency probe, the method that needs no PMU.
 *
 * A burst of timed dependent loads of cache lines that were flushed first
 * (clflushopt + fence on x86-64), visited in an order prefetchers cannot follow,
 * with the TLB warm; the median over the bursts of one measurement estimates the
 * loaded DRAM latency that every core of the machine sees at that moment.
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
    unsigned bursts;       /* bursts per measurement; the median is kept (0: default) */
    size_t region_bytes;   /* region the lines are spread over (0: default) */
    unsigned flags;        /* MW_PROBE_LAT_* below (0: defaults) */
} mw_probe_lat_config;

/* Serialize the timer with cpuid (counters/tsc.h) instead of lfence. Same
 * readings, but cpuid traps to the hypervisor in a VM (about 6 us each on the
 * development VM), so this makes a measurement many times dearer there. */
#define MW_PROBE_LAT_CPUID 1u

typedef struct mw_probe_lat_result {
    double median_cycles;  /* TSC cycles per dependent load, median over bursts */
    double median_ns;
    double min_ns, max_ns;
    unsigned bursts;
    uint64_t cost_ns;      /* wall time the measurement itself took */
} mw_probe_lat_result;

/* Create a probe. cfg may be NULL for defaults. Returns MW_ERR_UNSUPPORTED
 * (with the reason logged) where the CPU has no cache-line flush or usable TSC. */
MW_API int mw_probe_lat_create(const mw_probe_lat_config *cfg, mw_probe_lat **out);
MW_API int mw_probe_lat_measure(mw_probe_lat *p, mw_probe_lat_result *out);
MW_API void mw_probe_lat_destroy(mw_probe_lat *p);

#ifdef __cplusplus
}
#endif
#endif
