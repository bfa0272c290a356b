/*
 * Reading a counter method of the catalogue (counters/method_read.c): the one
 * place where a method's events are opened, read and turned into its quantity,
 * so that `memwatch calibrate` (which judges a method) and the profiler (which
 * uses it) cannot disagree on the formula.
 *
 * Three layers, each usable alone:
 *   - the plan: which perf_event_attr type/config each event of a method gets
 *     on each PMU instance (pure; tests check it against fixture sysfs trees);
 *   - the arithmetic: counts with their enabled/running times -> the value
 *     (pure; DRAM bytes = sum of scaled counts x the catalogue's scale, 64 per
 *     CAS; latency = pending-miss cycles / misses, in core cycles per miss,
 *     the unit calibrate validates and writes thresholds in);
 *   - the reader: opens the plan, reads deltas between calls.
 *
 * Targets. Uncore events (imc_cas, amd_umc, amd_df) are counted system-wide on
 * their PMU's cpumask (one CPU per PMU instance and socket): every process and
 * the kernel, so they need perf_event_paranoid <= 0 or CAP_PERFMON. Core
 * events (lmrl, l1_miss_lat, ocr_dram) are counted either on given CPUs
 * (calibrate: every task there) or on the calling process (the profiler): one
 * group per thread that exists at open time, user mode only, with
 * inherit = 1 (and inherit_thread where the kernel has it, so fork children
 * are not counted), so threads created later by a counted thread are counted.
 * A read of an inherited group gives the counts of the thread and of all its
 * descendants, the live ones and, added by the kernel when they exit, the
 * ended ones; so the delta between two reads is what the whole process did
 * in between. A thread created by another thread during the open itself (a
 * window of microseconds) may be missed.
 *
 * Errors: 0 or a negative code; open failures fill `why` with a sentence
 * ("cannot open uncore_imc_0/event=0x04,umask=0x03/: ..."), from mw_perf_why
 * or mw_perf_explain. MW_ERR_NODATA from a read means the window holds no
 * value (no L1-missing loads, or an event never got on the PMU): there is no
 * reading, never a guessed one.
 *
 * Descriptors: every read first checks (PERF_EVENT_IOC_ID) that each
 * descriptor still holds its event. A program that closed them (closefrom)
 * and got the numbers back for its own files is never read from or closed
 * under: the reader is broken for good (-EBADF), and close leaves those
 * numbers alone.
 *
 * Threading: a reader belongs to one thread at a time. Open and close
 * allocate; read issues only ioctl(2) and read(2) and does not allocate.
 */
#ifndef MEMWATCH_METHOD_READ_H
#define MEMWATCH_METHOD_READ_H

#include <memwatch/catalogue.h>
#include <memwatch/memwatch.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct mw_pmu_set;

#define MW_MREAD_MAX_EVENTS 64

/* One event of a method on one PMU instance. */
typedef struct mw_mread_event {
    char name[112];   /* "uncore_imc_0/event=0x04,umask=0x03/", "cpu/pending (config 0x148)" */
    const char *role; /* the catalogue's role: "rd", "wr", "pending", "l1_miss", ... */
    uint32_t type;    /* perf_event_attr.type */
    uint64_t config, config1, config2;
    double scale;    /* the catalogue's scale (64 bytes per CAS; 1 for latency events) */
    int numerator;   /* latency methods: 1 for the "pending" event */
    int core;        /* 1: a core event (per task or per given CPU); 0: system-wide */
    const int *cpus; /* system-wide events: the PMU's cpumask (NULL: every online CPU) */
    size_t n_cpus;
} mw_mread_event;

typedef struct mw_mread_plan {
    const mw_method_def *def;
    size_t n;
    mw_mread_event ev[MW_MREAD_MAX_EVENTS];
} mw_mread_plan;

/* Build the plan of a counting method (bytes or a pending/misses latency
 * method) against the discovered PMUs: core events on the core PMU with the
 * catalogue's config/config1, other events encoded from their sysfs terms on
 * every PMU instance matching the spec's pattern. Pointers in the plan refer
 * to def and pmus, which must outlive it. Errors: MW_ERR_UNSUPPORTED (a
 * sampling method or probe_lat: nothing to count), MW_ERR_NOPMU (no core PMU,
 * no PMU matches), MW_ERR_TOOBIG, MW_ERR_NOEVENT (a latency method without
 * "pending" numerator and denominator), or the encoder's code; why says which. */
MW_API int mw_method_reader_plan(const mw_method_def *def, const struct mw_pmu_set *pmus,
                                 mw_mread_plan *out, char *why, size_t why_len);

/* ---- the arithmetic (pure, async-signal-safe) ---- */

/* The counts of one event on one counting unit over one window. */
typedef struct mw_mread_count {
    uint64_t raw;        /* counts in the window */
    uint64_t enabled_ns; /* time enabled in the window */
    uint64_t running_ns; /* time actually counting in the window (< enabled: multiplexed) */
    double scale;        /* the catalogue's scale (0 means 1) */
    int numerator;       /* latency: 1 for pending-miss cycles, 0 for misses */
} mw_mread_count;

/* The value of a window. Each count is corrected for multiplexing
 * (mw_perf_scaled: raw x enabled / running x scale). MW_Q_DRAM_BYTES: the sum.
 * MW_Q_LATENCY: sum of numerators / sum of the others, core cycles per miss.
 * A count never enabled (a per-thread counter of a thread that did not run in
 * the window) contributes 0: the counter was there and counted nothing.
 * MW_ERR_NODATA (why says which) when a count was enabled but never running,
 * when there are no counts, or when the latency's denominator is zero;
 * MW_ERR_NOEVENT when a latency window lacks a numerator or a denominator. */
MW_API int mw_method_reader_value(mw_quantity q, const mw_mread_count *c, size_t n, double *value,
                                  char *why, size_t why_len);

/* ---- the reader ---- */

enum mw_mread_core_target {
    MW_MREAD_CORE_PROCESS = 0, /* this process's threads (inherit), user mode only */
    MW_MREAD_CORE_CPUS = 1,    /* every task on core_cpus (system-wide, privileged) */
};

typedef struct mw_mread_opts {
    int core_target;      /* enum mw_mread_core_target */
    const int *core_cpus; /* MW_MREAD_CORE_CPUS: NULL = every online CPU */
    size_t n_core_cpus;
    pid_t skip_tid; /* MW_MREAD_CORE_PROCESS: a thread not to count (memwatch's own) */
} mw_mread_opts;

typedef struct mw_method_reader mw_method_reader;

/* Open a method's events (mw_method_reader_plan, then mw_method_reader_open_plan).
 * Opens nothing on failure. opts NULL: MW_MREAD_CORE_PROCESS. */
MW_API int mw_method_reader_open(const mw_method_def *def, const struct mw_pmu_set *pmus,
                                 const mw_mread_opts *opts, mw_method_reader **out, char *why,
                                 size_t why_len);
/* Open a plan (tests build plans of software events). Counting starts at once
 * for per-thread groups; system-wide groups start at mw_method_reader_start. */
MW_API int mw_method_reader_open_plan(const mw_mread_plan *plan, mw_quantity q,
                                      const mw_mread_opts *opts, mw_method_reader **out, char *why,
                                      size_t why_len);
/* Reset and enable every group and take the baseline of the first window. */
MW_API int mw_method_reader_start(mw_method_reader *r);
/* The value of the window since the last start or read (mw_method_reader_value),
 * and the start of the next window. Returns 0, MW_ERR_NODATA (no value in
 * this window, why says which; the next window starts anyway), -EBADF (a
 * descriptor was closed or replaced under the reader: broken for good) or
 * another -errno. */
MW_API int mw_method_reader_read(mw_method_reader *r, double *value, char *why, size_t why_len);
/* Disable the system-wide groups (per-thread groups keep counting). */
MW_API int mw_method_reader_stop(mw_method_reader *r);
MW_API void mw_method_reader_close(mw_method_reader *r);
/* Per-thread groups opened (0 when core events are counted per CPU). */
MW_API size_t mw_method_reader_threads(const mw_method_reader *r);

#ifdef __cplusplus
}
#endif
#endif
