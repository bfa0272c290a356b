/*
 * What this machine offers for memory measurement: CPU identity, kernel,
 * privileges, the PMUs found, and for every method of the catalogue for this
 * CPU's microarchitecture whether it can run here, with the precise reason
 * when it cannot. Also whether the prefetcher MSRs are reachable.
 *
 * All inputs are read from roots that tests replace with fixture trees:
 * sysfs (PMUs), procfs (cpuinfo, self/status, perf_event_paranoid) and /dev
 * (cpu/N/msr). Nothing is opened through perf_event_open: the decision is made
 * from what the kernel describes and what the privileges allow.
 *
 * Thread safety: mw_probe_run allocates and reads files; the result is
 * immutable and may be read from any thread.
 */
#ifndef MEMWATCH_PROBE_H
#define MEMWATCH_PROBE_H

#include <memwatch/catalogue.h>
#include <memwatch/memwatch.h>
#include <memwatch/perf.h>
#include <memwatch/pmu.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mw_probe_opts {
    const char *sysfs_root; /* NULL: "/sys" */
    const char *proc_root;  /* NULL: "/proc" */
    const char *dev_root;   /* NULL: "/dev" */
    int pfm_check;          /* 1: core events must encode through this libpfm4;
                               0: only when sysfs_root is NULL (the live system);
                               -1: never */
} mw_probe_opts;

typedef struct mw_method_avail {
    const char *name;          /* "imc_cas" */
    const mw_method_def *def;  /* the catalogue entry */
    int available;             /* 1 or 0 */
    int err;                   /* 0, or why not: MW_ERR_NOPMU, MW_ERR_PARANOID, ... */
    char reason[320];          /* unavailable: why; available: what it will use */
} mw_method_avail;

typedef struct mw_msr_access {
    int reachable;             /* the prefetcher MSR could be read/written here */
    uint32_t msr;              /* the prefetcher control MSR for this uarch (0: none known) */
    char reason[256];          /* why not, or what gives access */
} mw_msr_access;

typedef struct mw_probe {
    mw_cpu_id cpu;             /* cpu.uarch MW_UARCH_UNKNOWN when not recognised */
    int cpu_err;               /* result of mw_cpu_identify */
    int have_clflush, have_tsc; /* from the cpuinfo flags */
    char kernel[128];          /* "Linux 6.1.0-18-amd64" (uname, or <proc>/sys/kernel/osrelease) */
    mw_privs privs;
    int privs_err;
    mw_pmu_set *pmus;          /* owned; NULL when discovery failed */
    int pmus_err;
    int have_hardware;         /* mw_pmus_have_hardware() */
    char summary[320];         /* one plain line: "the kernel exposes no hardware PMU: ..." */
    size_t n_methods;
    mw_method_avail *methods;
    mw_msr_access msr;
} mw_probe;

/* Probe the machine (or fixture trees). Fails only on out-of-memory; every
 * unreadable input is recorded in the result and explains the methods. */
MW_API int mw_probe_run(const mw_probe_opts *opts, mw_probe **out);
MW_API void mw_probe_free(mw_probe *p);

/* The availability entry of a method, or NULL when the catalogue has none for
 * this microarchitecture. */
MW_API const mw_method_avail *mw_probe_method(const mw_probe *p, const char *name);

/* Decide one method given discovered PMUs and privileges (the core of
 * mw_probe_run, exposed for tests). Fills a. */
MW_API void mw_method_check(const mw_method_def *def, const mw_pmu_set *pmus,
                            const mw_privs *privs, int have_clflush, int have_tsc,
                            mw_method_avail *a);

#ifdef __cplusplus
}
#endif
#endif
