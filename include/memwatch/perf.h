/*
 * perf_event counting groups and the privileges that govern them.
 *
 * A group is n events read together (PERF_FORMAT_GROUP | TOTAL_TIME_ENABLED |
 * TOTAL_TIME_RUNNING | ID), opened on one of three targets:
 *   - a thread (any tid of this process, or another process where allowed),
 *   - one CPU (every task on it; needs perf_event_paranoid <= 0 or CAP_PERFMON),
 *   - system-wide: one group per CPU of a list (an uncore PMU's cpumask, or
 *     every online CPU), read as the sum over those CPUs.
 * Reads scale each value for multiplexing (value * enabled / running) and
 * apply the event's own scale (an IMC's 6.103515625e-5 MiB per count).
 *
 * Failures of perf_event_open come back as a negative code (-errno, or
 * MW_ERR_NOPMU / MW_ERR_PARANOID / MW_ERR_PRIV where that is the cause) and a
 * sentence a person understands (paranoid level with its value and what to
 * set, missing PMU, EMFILE, EBUSY, unsupported bits, CAP_PERFMON), which is
 * logged at MW_LOG_INFO and kept for mw_perf_why() on the calling thread.
 *
 * Thread safety: a group handle belongs to one thread at a time;
 * mw_perf_group_read() only issues read(2) and may be called from a signal
 * handler or a hook (no malloc, no stdio, no locks). Opening and closing
 * allocate and are not async-signal-safe.
 */
#ifndef MEMWATCH_PERF_H
#define MEMWATCH_PERF_H

#include <memwatch/memwatch.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- privileges ---- */

typedef struct mw_privs {
    int is_root;        /* effective uid 0 */
    int cap_perfmon;    /* CAP_PERFMON (38) in CapEff */
    int cap_sys_admin;  /* CAP_SYS_ADMIN (21) in CapEff */
    int paranoid;       /* kernel.perf_event_paranoid; MW_PARANOID_UNKNOWN if unreadable */
    int have_perf;      /* /proc/sys/kernel/perf_event_paranoid exists (kernel has perf events) */
} mw_privs;

#define MW_PARANOID_UNKNOWN (-1000)

/* Read privileges from <proc_root>/self/status (CapEff, Uid) and
 * <proc_root>/sys/kernel/perf_event_paranoid ("/proc" when NULL). is_root
 * comes from the status file's effective Uid so fixtures can describe any
 * user. Returns 0, or -errno when the status file cannot be read. */
MW_API int mw_privs_read(const char *proc_root, mw_privs *out);

/* May this user count per-CPU / system-wide (paranoid <= 0, CAP_PERFMON or
 * CAP_SYS_ADMIN)? */
MW_API int mw_privs_can_cpu_wide(const mw_privs *p);
/* May this user count kernel-mode events of its own threads (paranoid <= 1 or
 * one of those capabilities)? */
MW_API int mw_privs_can_kernel(const mw_privs *p);

/* ---- events and targets ---- */

enum mw_perf_flags {
    MW_PERF_USER_ONLY = 1u << 0, /* exclude_kernel and exclude_hv (allowed at paranoid 2) */
    MW_PERF_PINNED = 1u << 1,    /* leader pinned: never multiplexed; if the kernel cannot keep
                                    it on the PMU, reads return -EIO instead of scaled values */
};

typedef struct mw_perf_event {
    const char *name;  /* label used in reasons ("msr/tsc/", "task-clock"); copied */
    uint32_t type;     /* perf_event_attr.type */
    uint64_t config, config1, config2;
    double scale;      /* multiplier applied by reads; 0 means 1 */
} mw_perf_event;

/* Well-known generic names: the software events (task-clock, cpu-clock,
 * page-faults, context-switches, cpu-migrations, minor-faults, major-faults,
 * alignment-faults, emulation-faults, dummy) and the generic hardware events
 * (cycles, instructions, cache-references, cache-misses, branches,
 * branch-misses, bus-cycles, ref-cycles). Returns 0 or MW_ERR_NOEVENT. */
MW_API int mw_perf_event_generic(const char *name, mw_perf_event *out);

/* Resolve a user's event name: a generic name above, or "pmu/terms/" encoded
 * through sysfs (mw_pmus_encode; the alias's .scale becomes ev.scale). out->name
 * points into spec, which must outlive the event. Returns 0, MW_ERR_NOEVENT,
 * MW_ERR_NOPMU, MW_ERR_PARSE or MW_ERR_TOOBIG with the reason in why. */
struct mw_pmu_set;
MW_API int mw_perf_event_parse(const struct mw_pmu_set *pmus, const char *spec,
                               mw_perf_event *out, char *why, size_t why_len);

typedef enum mw_perf_target_kind {
    MW_PERF_THREAD = 1, /* tid (0 = the calling thread), any CPU */
    MW_PERF_CPU = 2,    /* every task on one CPU */
    MW_PERF_SYSTEM = 3, /* one group on each CPU of cpus[] (all online CPUs when NULL) */
} mw_perf_target_kind;

typedef struct mw_perf_target {
    mw_perf_target_kind kind;
    pid_t tid;         /* MW_PERF_THREAD */
    int cpu;           /* MW_PERF_CPU */
    const int *cpus;   /* MW_PERF_SYSTEM: e.g. mw_pmu.cpus of an uncore PMU */
    size_t n_cpus;
} mw_perf_target;

typedef struct mw_perf_group mw_perf_group;

/* Open n events (1..64) as one group on a target, disabled. On failure nothing
 * stays open and the reason is available from mw_perf_why(). */
MW_API int mw_perf_group_open(const mw_perf_event *ev, size_t n, const mw_perf_target *t,
                              unsigned flags, mw_perf_group **out);
MW_API void mw_perf_group_close(mw_perf_group *g);

MW_API int mw_perf_group_enable(mw_perf_group *g);
MW_API int mw_perf_group_disable(mw_perf_group *g);
MW_API int mw_perf_group_reset(mw_perf_group *g);

typedef struct mw_perf_value {
    uint64_t raw;          /* counts, summed over the group's CPUs */
    uint64_t enabled_ns;   /* time enabled (summed over CPUs) */
    uint64_t running_ns;   /* time actually counting (summed over CPUs) */
    double scaled;         /* raw * enabled / running * event scale (0 when never running) */
} mw_perf_value;

/* The multiplexing-corrected, scaled value: raw * enabled / running * scale
 * (scale 0 means 1); 0 when the event never ran. Async-signal-safe. */
MW_API double mw_perf_scaled(uint64_t raw, uint64_t enabled_ns, uint64_t running_ns, double scale);

/* Read all n values of the group (n must equal the number opened).
 * Async-signal-safe. Returns 0 or -errno. */
MW_API int mw_perf_group_read(mw_perf_group *g, mw_perf_value *vals, size_t n);

/* Number of per-CPU instances (1 for thread and CPU targets), and the file
 * descriptor of event ev of instance i (for mmap/ioctl by sampling code). */
MW_API size_t mw_perf_group_instances(const mw_perf_group *g);
MW_API int mw_perf_group_fd(const mw_perf_group *g, size_t instance, size_t ev);

/* The reason of the last failed open on this thread ("" when none). */
MW_API const char *mw_perf_why(void);

/* Turn an errno of perf_event_open (positive, e.g. EACCES) for event ev on
 * target t into a sentence, given the privileges p and the PMUs found (pmus
 * may be NULL). Returns the memwatch code for it (MW_ERR_PARANOID, MW_ERR_PRIV,
 * MW_ERR_NOPMU, MW_ERR_UNSUPPORTED or -errno). Reads nothing but the number
 * of configured CPUs (sysconf): exposed for tests. */
MW_API int mw_perf_explain(int err, const mw_perf_event *ev, const mw_perf_target *t,
                           unsigned flags, const mw_privs *p, const struct mw_pmu_set *pmus,
                           char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
