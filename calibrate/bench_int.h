/*
 * calibrate/bench_int.h: helpers shared by the microbenchmarks in
 * calibrate/bench_*.c (memory, pinning, a spin barrier, cycle conversion,
 * grids).
 * Internal to calibrate/; not exported.
 */
#ifndef MW_CALIBRATE_BENCH_INT_H
#define MW_CALIBRATE_BENCH_INT_H

#include <memwatch/bench.h>

#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define MW_HUGE_ALIGN ((size_t)2 << 20)

/* mmap'ed, 2 MiB aligned memory with MADV_HUGEPAGE where THP allows it.
 * *huge (may be NULL) says whether the advice was accepted. NOT touched. */
void *mw_bench_alloc(size_t bytes, int *huge);
void mw_bench_free(void *p, size_t bytes);

/* Fraction (0..1) of [p, p + bytes) that the kernel backs with transparent
 * huge pages (AnonHugePages of the mappings in /proc/self/smaps), or -1 when
 * smaps cannot be read. MADV_HUGEPAGE is only advice: fragmented memory
 * leaves parts on 4 KiB pages, which streams then pay for in TLB misses. */
double mw_bench_huge_fraction(const void *p, size_t bytes);

/* Pins the calling thread to one CPU; 0 or -errno. */
int mw_bench_pin(int cpu);
/* The calling thread's affinity as it was before mw_bench_pin_saved. */
typedef struct mw_bench_affinity {
    cpu_set_t set;
    int ok; /* it could be read */
} mw_bench_affinity;
/* Saves the calling thread's affinity in sv, then pins it to cpu (< 0: the
 * first of mw_bench_cpus); the CPU, or -errno (-ENODEV: no CPU to run on).
 * mw_bench_unpin puts the saved affinity back. */
int mw_bench_pin_saved(int cpu, mw_bench_affinity *sv);
void mw_bench_unpin(const mw_bench_affinity *sv);

/* A grid out[0..n) (n <= cap) made to end at its largest point top: top
 * appended where the grid ends below it, in place of the last point when
 * the grid is full; returns the count. */
unsigned mw_bench_grid_end(unsigned *out, unsigned n, unsigned cap, unsigned top);

/* Fills cpus from cfg (cpus/ncpus) or mw_bench_cpus; returns the count. */
int mw_bench_cpu_list(const int *cfg_cpus, unsigned ncfg, int *cpus, int max);

/* A sense-reversing spin barrier for n threads (benchmarks spin so that no
 * thread sleeps through the start of a timed region). */
typedef struct mw_spin_barrier {
    _Atomic unsigned count;
    _Atomic unsigned sense;
    unsigned n;
} mw_spin_barrier;
void mw_spin_barrier_init(mw_spin_barrier *b, unsigned n);
void mw_spin_barrier_wait(mw_spin_barrier *b, unsigned *local_sense);

/* Timer overhead in TSC cycles of an empty mw_tsc_start/mw_tsc_end pair. */
double mw_bench_timer_overhead(void);
double mw_bench_tsc_hz(void);

/* Deterministic xorshift generator. */
static inline uint64_t mw_rng_next(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

/* Bytes for the "large" working sets (chasing memory): max(4 x LLC, 128 MiB). */
size_t mw_bench_big_bytes(void);
/* max(k x the last-level cache, 128 MiB), 2 MiB aligned */
size_t mw_bench_llc_times(unsigned k);

/* Chases n dependent loads starting at p; returns the final pointer so the
 * compiler cannot drop the chain. */
void *mw_chase(void *p, uint64_t n);

/* Builds a pointer cycle over `lines` 64-byte lines of buf following a Sattolo
 * permutation; returns the first element or NULL on allocation failure. */
void *mw_chase_build(void *buf, size_t lines, uint64_t seed);

/* An SVG line chart (calibrate/bench_plot.c) for the other parts of
 * calibrate/: up to 16 series, nh horizontal marks coloured as series i. */
typedef struct mw_plot_series {
    const char *name;
    const double *x, *y;
    unsigned n;
} mw_plot_series;
int mw_plot_lines(const char *path, const char *title, const char *xlabel, const char *ylabel,
                  int xlog, int ylog, const mw_plot_series *ser, unsigned n,
                  const double *hlines, const char *const *hlabels, unsigned nh);

/* The kernel's caches as a JSON array of {level, type, size, line, ways,
 * sharing_cpus} added to parent under key (bench_json.c): the one writer for
 * the calibrate JSON and the machine profile (docs/calibrate-json.md,
 * docs/profile-format.md). Returns the array, NULL when out of memory. */
struct cJSON;
struct cJSON *mw_cache_info_json(struct cJSON *parent, const char *key, const mw_cache_info *ci);

/* prefetch.svg, tlb.svg, assoc.svg of the structure probes (bench_struct.c). */
int mw_struct_plots(const mw_struct_result *s, const char *dir);

#endif
