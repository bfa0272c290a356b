/*
 * preload/env.h: the environment variables libmemwatch.so's constructor
 * reads, found in one pass over environ. Owner: env.c.
 */
#ifndef MW_PRELOAD_ENV_H
#define MW_PRELOAD_ENV_H

/* Every variable the library reads (MEMWATCH_* first), one row each:
 * X(ID, "NAME"); the value is mwp_env.val[MWP_ENV_ID].
 * tests/suite/test_config_doc.sh checks the MEMWATCH_* rows against
 * docs/config.md. */
#define MWP_ENV_LIST(X)                                                                            \
    X(VERBOSE, "MEMWATCH_VERBOSE")                                                                 \
    X(ENABLE, "MEMWATCH_ENABLE")                                                                   \
    X(DIR, "MEMWATCH_DIR")                                                                         \
    X(DIR_OK, "MEMWATCH_DIR_OK")                                                                   \
    X(INTERVAL, "MEMWATCH_INTERVAL")                                                               \
    X(METHOD, "MEMWATCH_METHOD")                                                                   \
    X(RATE, "MEMWATCH_RATE")                                                                       \
    X(FAULT_PERIOD, "MEMWATCH_FAULT_PERIOD")                                                       \
    X(ALLOC_THRESHOLD, "MEMWATCH_ALLOC_THRESHOLD")                                                 \
    X(ALLOC_FRAMES, "MEMWATCH_ALLOC_FRAMES")                                                       \
    X(STACK_DEPTH, "MEMWATCH_STACK_DEPTH")                                                         \
    X(UNWIND, "MEMWATCH_UNWIND")                                                                   \
    X(UNWIND_STACK, "MEMWATCH_UNWIND_STACK")                                                       \
    X(RING_PAGES, "MEMWATCH_RING_PAGES")                                                           \
    X(INHERIT, "MEMWATCH_INHERIT")                                                                 \
    X(PROBE_SHARE, "MEMWATCH_PROBE_SHARE")                                                         \
    X(INLINE, "MEMWATCH_INLINE")                                                                   \
    X(LAZY, "MEMWATCH_LAZY")                                                                       \
    X(FOLLOW, "MEMWATCH_FOLLOW")                                                                   \
    X(PROFILE, "MEMWATCH_PROFILE")                                                                 \
    X(PROFILE_SNAPSHOT, "MEMWATCH_PROFILE_SNAPSHOT")                                               \
    X(THRESHOLD_NS, "MEMWATCH_THRESHOLD_NS")                                                       \
    X(THRESHOLD_FACTOR, "MEMWATCH_THRESHOLD_FACTOR")                                               \
    X(MIX, "MEMWATCH_MIX")                                                                         \
    X(BASELINE_NS, "MEMWATCH_BASELINE_NS")                                                         \
    X(TSC, "MEMWATCH_TSC")                                                                         \
    X(PRECISE, "MEMWATCH_PRECISE")                                                                 \
    X(SYSFS, "MEMWATCH_SYSFS")                                                                     \
    X(PROC, "MEMWATCH_PROC")                                                                       \
    X(LDLAT, "MEMWATCH_LDLAT")                                                                     \
    X(GPU, "MEMWATCH_GPU")                                                                         \
    X(RUN_ID, "MEMWATCH_RUN_ID")                                                                   \
    X(GROUP_READABLE, "MEMWATCH_GROUP_READABLE")                                                   \
    X(STATUS, "MEMWATCH_STATUS")                                                                   \
    X(FORKED, "MEMWATCH_FORKED")                                                                   \
    X(MACHINE, "MEMWATCH_MACHINE")                                                                 \
    X(HANDED, "MEMWATCH_HANDED")                                                                   \
    X(PROBE_LINES, "MEMWATCH_PROBE_LINES")                                                         \
    X(PROBE_BURSTS, "MEMWATCH_PROBE_BURSTS")                                                       \
    X(PROBE_WINDOW, "MEMWATCH_PROBE_WINDOW")                                                       \
    X(PROBE_LAYOUT, "MEMWATCH_PROBE_LAYOUT")                                                       \
    X(OMPI_RANK, "OMPI_COMM_WORLD_RANK")                                                           \
    X(PMIX_RANK, "PMIX_RANK")                                                                      \
    X(PMI_RANK, "PMI_RANK")                                                                        \
    X(SLURM_PROCID, "SLURM_PROCID")                                                                \
    X(CUDA_INJECTION, "CUDA_INJECTION64_PATH")                                                     \
    X(XDG_DATA_HOME, "XDG_DATA_HOME")                                                              \
    X(HOME, "HOME")
#define MWP_ENV_ENUM(id, name) MWP_ENV_##id,
enum { MWP_ENV_LIST(MWP_ENV_ENUM) MWP_ENV_COUNT };
#define MWP_ENV_FIRST_OTHER MWP_ENV_OMPI_RANK /* the MEMWATCH_ names come before */
/* getenv's answers for the names above at the scan: mwp_env.val[MWP_ENV_x]
 * (NULL: not set). Owner: env.c. Written by mwp_env_scan and mwp_env_drop,
 * in the constructor only; read by the constructor's steps (config.c,
 * process.c). */
struct mwp_env_table {
    const char *val[MWP_ENV_COUNT];
};
extern struct mwp_env_table mwp_env;
/* One pass over environ; the constructor's first step. [not AS-safe]
 * (constructor only). */
void mwp_env_scan(void);
/* The constructor unset name: forget its value (the constructor's own
 * setenv calls are not reflected; nothing reads those variables after).
 * [not AS-safe] (constructor only). */
void mwp_env_drop(const char *name);
/* The counters library's getenv (mw_getenv) answered from the table: on
 * while the constructor runs, off after. mwp_env_answer: 1 with *value set
 * for a variable of the table, 0 (getenv's turn) otherwise. [not AS-safe]
 * (constructor only). */
void mwp_env_lookup_on(int on);
int mwp_env_answer(const char *name, const char **value);

#endif
