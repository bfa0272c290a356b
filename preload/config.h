/*
 * preload/config.h: libmemwatch.so's settings, read once from the MEMWATCH_*
 * variables (docs/config.md). Owner: config.c.
 */
#ifndef MW_PRELOAD_CONFIG_H
#define MW_PRELOAD_CONFIG_H

#include <memwatch/probe_lat.h>

#include <limits.h>
#include <stdint.h>

struct mwp_config {
    int enabled;               /* MEMWATCH_ENABLE (default 1) */
    uint64_t interval_ns;      /* MEMWATCH_INTERVAL */
    char method[24];           /* MEMWATCH_METHOD: auto, probe_lat, none, or a counter method */
    int method_choice;         /* what method asks for: MW_ENV_METHOD_AUTO, _NONE or _NAMED
                                  (counters/envval.h) */
    unsigned long rate;        /* MEMWATCH_RATE, samples/s per thread (0: off) */
    int rate_clamped;
    unsigned long fault_period;/* MEMWATCH_FAULT_PERIOD (0: off) */
    uint64_t alloc_threshold;  /* MEMWATCH_ALLOC_THRESHOLD (bytes; UINT64_MAX: off) */
    unsigned alloc_frames;     /* MEMWATCH_ALLOC_FRAMES */
    unsigned stack_depth;      /* MEMWATCH_STACK_DEPTH (cpu-clock call chains) */
    int unwind;                /* MEMWATCH_UNWIND: MWP_UNWIND_AUTO, _FP or _DWARF; after
                                  mwp_config_load never AUTO */
    unsigned unwind_stack;     /* MEMWATCH_UNWIND_STACK: bytes of user stack per sample */
    char unwind_note[160];     /* META unwind: the choice and why */
    unsigned ring_pages;       /* MEMWATCH_RING_PAGES (cpu-clock; page faults get a quarter) */
    int follow;                /* MEMWATCH_FOLLOW */
    int verbose;               /* MEMWATCH_VERBOSE 0..3 */
    int profile_set;           /* MEMWATCH_PROFILE was given: say why it cannot be used */
    double threshold_ns;       /* MEMWATCH_THRESHOLD_NS (0: not set) */
    double threshold_factor;   /* MEMWATCH_THRESHOLD_FACTOR (uncalibrated default) */
    char mix[16];              /* MEMWATCH_MIX: the profile's read/write curve ("" default) */
    double baseline_ns;        /* MEMWATCH_BASELINE_NS (set by memwatch record; 0: measure) */
    double tsc_hz;             /* MEMWATCH_TSC's frequency (0: not given; determine it) */
    char tsc_src[160];         /* and how the process that determined it did so */
    int gpu;                   /* MEMWATCH_GPU */
    int precise;               /* MEMWATCH_PRECISE: 1 auto (default), 0 off */
    unsigned ldlat;            /* MEMWATCH_LDLAT, cycles (0: machine profile, else default) */
    int inherit;               /* MEMWATCH_INHERIT: 1 (default) per-CPU events inherited by
                                  threads once a process starts its second thread */
    int inline_iv;             /* MEMWATCH_INLINE: 1 (default) a single-threaded process's
                                  intervals run on its own thread, without an interval thread */
    uint64_t inline_cpu_ns;    /* ... for this much of its CPU time (0: for good; default 2 s) */
    int lazy_tick;             /* MEMWATCH_LAZY: 0 (timer, default) the lazy start's timer
                                  alone; 1 (tick) a task-clock event beside it from the start */
    int probe_share;           /* MEMWATCH_PROBE_SHARE: 1 (default) one probe measurement per
                                  interval for the machine; 0 off */
    char run_id[64];           /* MEMWATCH_RUN_ID: the run this process belongs to (set by
                                  memwatch record, else made by the tree's first process) */
    int group_readable;        /* MEMWATCH_GROUP_READABLE: raw files 0640 instead of 0600 */
    /* The latency probe's settings, environment applied (MW_PROBE_LAT_NO_ENV):
     * the interval thread creates the probe without calling getenv. Set,
     * with profile's default, when the process begins (late_loaded). */
    mw_probe_lat_config probe;
    int probe_loaded; /* probe read (the constructor where a variable set it) */
    int late_loaded;
    /* MEMWATCH_STATUS: memwatch record's status file (NULL none): the
     * environment's own string, not a copy that every process of a recorded
     * tree would write into a page of its own */
    const char *status;
    /* MEMWATCH_PROFILE_SNAPSHOT: the loaded profile memwatch record hands
     * down (NULL none; mwp_profile_read), the environment's own string, set
     * when the process begins (late_loaded) */
    const char *profile_snapshot;
    /* The long paths last: a process writes the first bytes of dir and
     * profile, the small fields above share their page (fewer pages of
     * .data copied on write in every process; docs/overhead.md). */
    char dir[PATH_MAX];        /* MEMWATCH_DIR */
    char profile[PATH_MAX];    /* MEMWATCH_PROFILE, else the default path ("" none known), "none" */
    char sysfs[256];           /* MEMWATCH_SYSFS: PMU descriptions ("" = /sys; tests) */
    char proc[256];            /* MEMWATCH_PROC: the CPU's cpuinfo ("" = /proc; tests) */
    char probe_share_dir[256]; /* MEMWATCH_PROBE_SHARE given as a directory ("" = /dev/shm) */
};
/* Owner: config.c. Written by the constructor (mwp_config_load, then
 * process.c's constructor steps: the directory made absolute, MEMWATCH_RATE
 * clamped to the kernel's maximum) and, for the clamp only, by the lazy
 * start's begin on the program's one thread before any other memwatch thread
 * exists (lazy.h); read-only for every part after that. */
extern struct mwp_config mwp_cfg;
enum { MWP_UNWIND_AUTO = -1, MWP_UNWIND_FP = 0, MWP_UNWIND_DWARF = 1 };
#define MWP_UNWIND_MAX_RATE 4000ul /* cpu-clock samples/s with DWARF stacks at most */
/* Reads every MEMWATCH_* variable; invalid values give one stderr line and
 * the default. [not AS-safe] (constructor only). Everything the interval
 * thread needs from the environment is read here or in
 * mwp_config_load_late: that thread never calls getenv, because the
 * application may change its environment at any moment (setenv, putenv,
 * setproctitle). */
void mwp_config_load(struct mwp_config *c);
/* The default profile path and the probe's settings (profile, probe), from
 * the constructor's view of the environment (env.h). [not AS-safe] Called
 * when the process begins (lazy.c, before any sampler or the engine);
 * once per image. */
void mwp_config_load_late(struct mwp_config *c);
/* The machine profile at path (mwp_cfg.profile) into *out: the snapshot
 * memwatch record handed down (mwp_cfg.profile_snapshot) where it is that
 * profile's and this build's, else the file itself (mw_profile_load, which
 * says why it refuses one). 0, or the loader's error. [not AS-safe] (after
 * mwp_config_load_late) */
struct mw_profile;
int mwp_profile_read(const char *path, struct mw_profile *out);

#endif
